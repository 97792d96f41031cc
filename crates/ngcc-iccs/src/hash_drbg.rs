//! The ICCS DRNG: NIST SP 800-90A Hash_DRBG with SM3, seedlen 440 bits, no reseed, no
//! personalization, no additional input (iccs-api.md §3). Integers are big-endian and all
//! additions are mod 2^440.

use crate::bits::{byte_len, mask_tail};
use crate::sm3::Sm3Bits;

/// Bytes in V, C and the reseed counter.
pub const SEEDLEN: usize = 55;
const SEEDLEN_BITS: u32 = 8 * SEEDLEN as u32;

/// Hash_df(input, out_bits): SM3(counter || BE32(out_bits) || input) for counter = 1, 2, …,
/// concatenated and cut to `out_bits` (`ceil(out_bits/8)` bytes, tail masked).
///
/// # Panics
/// If `out_bits > 255 * 256` (the one-byte counter of SP 800-90A would overflow).
pub fn hash_df(input: &[u8], out_bits: u32) -> Vec<u8> {
    assert!(out_bits <= 255 * 256, "Hash_df output too long");
    let blocks = out_bits.div_ceil(256) as u8;
    let mut out = Vec::with_capacity(32 * usize::from(blocks));
    for counter in 1..=blocks {
        let mut h = Sm3Bits::new();
        h.update_bytes(&[counter]);
        h.update_bytes(&out_bits.to_be_bytes());
        h.update_bytes(input);
        out.extend_from_slice(&h.finish());
    }
    out.truncate(byte_len(u64::from(out_bits)));
    mask_tail(&mut out, u64::from(out_bits));
    out
}

fn seedlen_df(input: &[u8]) -> [u8; SEEDLEN] {
    hash_df(input, SEEDLEN_BITS)
        .try_into()
        .expect("Hash_df returns seedlen bytes")
}

/// `acc += addend` (addend right-aligned), mod 2^440.
fn add_into(acc: &mut [u8; SEEDLEN], addend: &[u8]) {
    let mut carry = 0u16;
    let mut rhs = addend.iter().rev();
    for a in acc.iter_mut().rev() {
        let sum = u16::from(*a) + u16::from(rhs.next().copied().unwrap_or(0)) + carry;
        *a = sum as u8;
        carry = sum >> 8;
    }
}

fn increment(acc: &mut [u8; SEEDLEN]) {
    add_into(acc, &[1]);
}

/// One DRNG instance (the C `DRNG_ctx`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HashDrbg {
    v: [u8; SEEDLEN],
    c: [u8; SEEDLEN],
    reseed_counter: [u8; SEEDLEN],
}

impl HashDrbg {
    /// `init_random_number`: V = Hash_df(seed), C = Hash_df(0x00 || V), counter = 1. Any seed
    /// length works, including 0.
    pub fn new(seed: &[u8]) -> Self {
        let v = seedlen_df(seed);
        let mut prefixed = [0u8; SEEDLEN + 1];
        prefixed[1..].copy_from_slice(&v);
        let c = seedlen_df(&prefixed);
        let mut reseed_counter = [0u8; SEEDLEN];
        reseed_counter[SEEDLEN - 1] = 1;
        HashDrbg {
            v,
            c,
            reseed_counter,
        }
    }

    /// `get_random_number`: `ceil(nbits/8)` bytes, tail masked. One Generate; the state moves
    /// on even for 0 bits.
    pub fn generate(&mut self, nbits: u64) -> Vec<u8> {
        let mut out = vec![0u8; byte_len(nbits)];
        self.fill(&mut out, nbits);
        out
    }

    /// Like [`HashDrbg::generate`] into `out`, writing only its first `ceil(nbits/8)` bytes.
    ///
    /// # Panics
    /// If `out` is shorter than that.
    pub fn fill(&mut self, out: &mut [u8], nbits: u64) {
        let out = &mut out[..byte_len(nbits)];
        let mut data = self.v;
        for chunk in out.chunks_mut(32) {
            let mut h = Sm3Bits::new();
            h.update_bytes(&data);
            chunk.copy_from_slice(&h.finish()[..chunk.len()]);
            increment(&mut data);
        }
        mask_tail(out, nbits);
        self.update();
    }

    // V = V + SM3(0x03 || V) + C + reseed_counter; reseed_counter += 1.
    fn update(&mut self) {
        let mut h = Sm3Bits::new();
        h.update_bytes(&[0x03]);
        h.update_bytes(&self.v);
        let h = h.finish();
        add_into(&mut self.v, &h);
        add_into(&mut self.v, &self.c);
        add_into(&mut self.v, &self.reseed_counter);
        increment(&mut self.reseed_counter);
    }

    pub fn v(&self) -> &[u8; SEEDLEN] {
        &self.v
    }

    pub fn c(&self) -> &[u8; SEEDLEN] {
        &self.c
    }

    /// The reseed counter as a 55-byte big-endian integer (1 + the number of Generate calls).
    pub fn reseed_counter(&self) -> &[u8; SEEDLEN] {
        &self.reseed_counter
    }
}

/// The nonce of the PKC KAT seed DRNG: "seed" ×16 (iccs-api.md §3.4).
pub fn pkc_seed_nonce() -> [u8; 64] {
    repeat_nonce(b"seed")
}

/// The nonce of the SIG KAT message DRNG: "msg" ×21 then "m".
pub fn sig_msg_nonce() -> [u8; 64] {
    repeat_nonce(b"msg")
}

/// The nonce of a hash KAT file's DRNG: the first 8 characters of its name ×8, e.g.
/// `b"KAT_2_12"`.
pub fn hash_kat_nonce(name8: &[u8; 8]) -> [u8; 64] {
    repeat_nonce(name8)
}

fn repeat_nonce(unit: &[u8]) -> [u8; 64] {
    let mut out = [0u8; 64];
    for (o, u) in out.iter_mut().zip(unit.iter().cycle()) {
        *o = *u;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn add_wraps_mod_2_440() {
        let mut a = [0xFF; SEEDLEN];
        increment(&mut a);
        assert_eq!(a, [0; SEEDLEN]);
        let mut a = [0u8; SEEDLEN];
        a[SEEDLEN - 1] = 0xFF;
        add_into(&mut a, &[0x01, 0x01]);
        assert_eq!(&a[SEEDLEN - 2..], &[0x02, 0x00]);
    }
}
