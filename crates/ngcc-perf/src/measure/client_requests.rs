//! Finds valgrind client requests in a library's bytes. A client request is a fixed
//! instruction sequence (valgrind.h): a preamble that rotates a register by amounts summing
//! to a multiple of its width (a no-op on hardware, which valgrind recognises), followed by
//! a marker instruction that says which request it is. Code containing one can ask whether
//! it runs under valgrind, or tell memcheck that memory is defined (forging the ct phase's
//! taint evidence). The search is for the byte patterns in the whole file: a compiler does
//! not produce the preamble by chance, and data holding it is still a sign worth showing.

use crate::dataset::count::{ClientRequestSite, ClientRequests};

/// x86-64: `rolq $3,%rdi; rolq $13,%rdi; rolq $61,%rdi; rolq $51,%rdi`.
const X86_64_PREAMBLE: [u8; 16] = [
    0x48, 0xc1, 0xc7, 0x03, 0x48, 0xc1, 0xc7, 0x0d, 0x48, 0xc1, 0xc7, 0x3d, 0x48, 0xc1, 0xc7, 0x33,
];
/// x86-64 markers: `xchgq %rbx,%rbx` (a request), `%rcx` (get NRADDR), `%rdx` (call without
/// redirection), `%rdi` (IR injection).
const X86_64_MARKERS: [([u8; 3], &str); 4] = [
    ([0x48, 0x87, 0xdb], "client request"),
    ([0x48, 0x87, 0xc9], "get nraddr"),
    ([0x48, 0x87, 0xd2], "call noredir"),
    ([0x48, 0x87, 0xff], "vex ir injection"),
];

/// `ror x12, x12, #n` (EXTR x12, x12, x12, #n), little-endian.
const fn ror_x12(n: u32) -> [u8; 4] {
    (0x93c0_0000u32 | (12 << 16) | (n << 10) | (12 << 5) | 12).to_le_bytes()
}

/// `orr xN, xN, xN` (ORR shifted register, 64-bit), little-endian.
const fn orr_same(n: u32) -> [u8; 4] {
    (0xaa00_0000u32 | (n << 16) | (n << 5) | n).to_le_bytes()
}

fn aarch64_preamble() -> Vec<u8> {
    [3, 13, 51, 61].into_iter().flat_map(ror_x12).collect()
}

/// AArch64 markers after the preamble: `orr x10,x10,x10` (a request), `x11` (get NRADDR),
/// `x12` (call without redirection), `x9` (IR injection).
fn aarch64_markers() -> [([u8; 4], &'static str); 4] {
    [
        (orr_same(10), "client request"),
        (orr_same(11), "get nraddr"),
        (orr_same(12), "call noredir"),
        (orr_same(9), "vex ir injection"),
    ]
}

/// Most sites listed per library.
const MAX_SITES: usize = 16;

/// Every preamble in `bytes`, with the marker that follows it (`unknown` when none of the
/// known ones does: still valgrind's sequence).
pub fn scan(bytes: &[u8], library_sha256: &str) -> ClientRequests {
    let mut out = ClientRequests {
        library_sha256: library_sha256.to_string(),
        ..ClientRequests::default()
    };
    let arm = aarch64_preamble();
    let mut push = |arch: &str, offset: usize, request: &str| {
        out.found += 1;
        if out.sites.len() < MAX_SITES {
            out.sites.push(ClientRequestSite {
                arch: arch.into(),
                offset: offset as u64,
                request: request.into(),
            });
        }
    };
    for (i, w) in bytes.windows(X86_64_PREAMBLE.len()).enumerate() {
        if w == X86_64_PREAMBLE {
            let next = &bytes[i + 16..];
            let what = X86_64_MARKERS
                .iter()
                .find(|(m, _)| next.starts_with(m))
                .map_or("unknown", |(_, w)| w);
            push("x86-64", i, what);
        } else if w == arm.as_slice() {
            let next = &bytes[i + 16..];
            let what = aarch64_markers()
                .iter()
                .find(|(m, _)| next.starts_with(m))
                .map_or("unknown", |(_, w)| *w);
            push("aarch64", i, what);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_both_architectures_and_names_the_request() {
        let mut b = vec![0u8; 10];
        b.extend_from_slice(&X86_64_PREAMBLE);
        b.extend_from_slice(&[0x48, 0x87, 0xdb]);
        b.extend_from_slice(&[1, 2, 3]);
        b.extend(aarch64_preamble());
        b.extend_from_slice(&orr_same(10));
        let r = scan(&b, "x");
        assert_eq!(r.found, 2);
        assert_eq!(r.sites[0].arch, "x86-64");
        assert_eq!(r.sites[0].offset, 10);
        assert_eq!(r.sites[0].request, "client request");
        assert_eq!(r.sites[1].arch, "aarch64");
        assert_eq!(r.sites[1].request, "client request");
        assert_eq!(scan(&[0u8; 64], "x").found, 0);
    }

    #[test]
    fn aarch64_encodings_are_the_documented_instructions() {
        // ror x12, x12, #3 is 0x93cc0d8c; orr x10, x10, x10 is 0xaa0a014a.
        assert_eq!(ror_x12(3), 0x93cc_0d8cu32.to_le_bytes());
        assert_eq!(orr_same(10), 0xaa0a_014au32.to_le_bytes());
    }
}
