//! Checks only the C helpers need: return codes, the -4 stderr message, output bounds, and
//! agreement with the model on generated inputs.

use super::{Check, Side};
use crate::iccs::ffi::{self, CDrng};
use ngcc_iccs::hash_drbg::HashDrbg;

/// The official message of the -4 path (iccs-api.md §1.6).
const BAD_WIDTH_MESSAGE: &str = "ERROR: Digestbitlen not in the limitation. ";
/// Runs `f` with fd 2 redirected into a pipe and returns what it wrote there (a few bytes:
/// the pipe buffer is far larger).
fn capture_stderr<R>(f: impl FnOnce() -> R) -> Result<(R, String), String> {
    use std::io::Read;
    use std::os::fd::FromRawFd;
    let mut fds = [0; 2];
    // SAFETY: plain POSIX calls on descriptors this function owns; fd 2 is restored before
    // returning.
    unsafe {
        if libc::pipe(fds.as_mut_ptr()) != 0 {
            return Err("pipe() failed".into());
        }
        let saved = libc::dup(2);
        if saved < 0 || libc::dup2(fds[1], 2) < 0 {
            libc::close(fds[0]);
            libc::close(fds[1]);
            return Err("cannot redirect stderr".into());
        }
        let r = f();
        libc::dup2(saved, 2);
        libc::close(saved);
        libc::close(fds[1]);
        let mut text = String::new();
        std::fs::File::from_raw_fd(fds[0])
            .read_to_string(&mut text)
            .map_err(|e| e.to_string())?;
        Ok((r, text))
    }
}

pub fn c_sm3hash_rejects() -> Check {
    for d in [0, 128, 255, 384, 512, -256] {
        let ((rc, out), text) = capture_stderr(|| ffi::c_sm3hash_raw(d, b"abc", 24, 0xA5))?;
        if rc != -4 {
            return Err(format!("sm3hash({d}) returned {rc}, want -4"));
        }
        if out.iter().any(|&b| b != 0xA5) {
            return Err(format!("sm3hash({d}) wrote to the digest"));
        }
        if !text.contains(BAD_WIDTH_MESSAGE) {
            return Err(format!("sm3hash({d}) printed {text:?} to stderr"));
        }
    }
    Ok(())
}

pub fn c_pseudohash_rejects() -> Check {
    for d in [0, 256, 384, 513, 2048, -512] {
        let ((rc, out), text) = capture_stderr(|| ffi::c_pseudohash_raw(d, b"abc", 24, 0xA5))?;
        if rc != -4 {
            return Err(format!("pseudohash({d}) returned {rc}, want -4"));
        }
        if out.iter().any(|&b| b != 0xA5) {
            return Err(format!("pseudohash({d}) wrote to the digest"));
        }
        if !text.contains(BAD_WIDTH_MESSAGE) {
            return Err(format!("pseudohash({d}) printed {text:?} to stderr"));
        }
    }
    Ok(())
}

/// Every helper writes exactly its output length: guard bytes after it stay intact.
pub fn c_writes_exactly() -> Check {
    const GUARD: u8 = 0xA5;
    let untouched = |buf: &[u8], from: usize| buf[from..].iter().all(|&b| b == GUARD);
    for d in [512, 768, 1024] {
        let (rc, out) = ffi::c_pseudohash_raw(d, b"abc", 24, GUARD);
        if rc != 0 || !untouched(&out, d as usize / 8) {
            return Err(format!(
                "pseudohash({d}) wrote past {} bytes (rc {rc})",
                d / 8
            ));
        }
    }
    let mut drng = CDrng::new(b"guard");
    for n in [0u64, 1, 7, 8, 13, 255, 256, 257, 300, 800] {
        let len = n.div_ceil(8) as usize;
        let mut buf = vec![GUARD; len + 40];
        ffi::c_xof_into(n, b"abc", 24, &mut buf);
        if !untouched(&buf, len) {
            return Err(format!("pseudoXOF({n}) wrote past {len} bytes"));
        }
        let mut buf = vec![GUARD; len + 40];
        drng.get_into(&mut buf, n);
        if !untouched(&buf, len) {
            return Err(format!("get_random_number({n}) wrote past {len} bytes"));
        }
    }
    Ok(())
}

/// Deterministic pseudo-random inputs (from the model DRNG) through both sides.
pub fn c_vs_model_random() -> Check {
    let mut rng = HashDrbg::new(b"ngcc-perf iccs selftest");
    let mut next = |bound: u64| {
        let b: [u8; 8] = rng.generate(64).try_into().expect("8 bytes");
        u64::from_be_bytes(b) % bound
    };
    let differ = |what: String, c: &[u8], m: &[u8]| {
        if c == m {
            Ok(())
        } else {
            Err(format!(
                "{what}: C {} model {}",
                crate::iccs::abbrev(c),
                crate::iccs::abbrev(m)
            ))
        }
    };
    // Every length across the first two block boundaries (padding edge cases) ...
    let long = HashDrbg::new(b"boundaries").generate(8 * 140);
    for bits in 0..=1100 {
        differ(
            format!("sm3(L = {bits})"),
            &Side::C.sm3(&long, bits),
            &Side::Model.sm3(&long, bits),
        )?;
        differ(
            format!("pseudoXOF(300, L = {bits})"),
            &Side::C.xof(300, &long, bits),
            &Side::Model.xof(300, &long, bits),
        )?;
        let c = Side::C
            .pseudohash(512, &long, bits)
            .map_err(|rc| format!("rc {rc}"))?;
        let m = Side::Model
            .pseudohash(512, &long, bits)
            .map_err(|rc| format!("rc {rc}"))?;
        differ(format!("pseudohash(512, L = {bits})"), &c, &m)?;
    }
    // ... then random lengths, widths and draw sequences.
    for case in 0u32..48 {
        let bits = next(4097);
        // Random bytes, including garbage past L in the last byte.
        let mut msg = HashDrbg::new(&case.to_be_bytes()).generate(bits.div_ceil(8) * 8);
        msg.push(0xFF);
        differ(
            format!("sm3(L = {bits})"),
            &Side::C.sm3(&msg, bits),
            &Side::Model.sm3(&msg, bits),
        )?;
        for d in [512, 768, 1024] {
            let c = Side::C
                .pseudohash(d, &msg, bits)
                .map_err(|rc| format!("rc {rc}"))?;
            let m = Side::Model
                .pseudohash(d, &msg, bits)
                .map_err(|rc| format!("rc {rc}"))?;
            differ(format!("pseudohash({d}, L = {bits})"), &c, &m)?;
        }
        let n = next(2049);
        differ(
            format!("pseudoXOF({n}, L = {bits})"),
            &Side::C.xof(n, &msg, bits),
            &Side::Model.xof(n, &msg, bits),
        )?;
        let seed = &msg[..(next(100) as usize).min(msg.len())];
        let (mut c, mut m) = (Side::C.drng(seed), Side::Model.drng(seed));
        for _ in 0..1 + next(5) {
            let b = next(1500);
            differ(format!("DRNG get({b})"), &c.get(b), &m.get(b))?;
        }
        if c.state() != m.state() {
            return Err(format!("DRNG state after case {case} differs"));
        }
    }
    Ok(())
}
