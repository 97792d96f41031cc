//! `pseudohash` (SM3/HMAC-SM3 cascade) and `pseudoXOF` (SM2 KDF), iccs-api.md §2.4–2.5.

use crate::IccsError;
use crate::bits::{byte_len, mask_tail};
use crate::hmac::{HmacSm3, PSEUDO_KEY, hmac_sm3_bits};
use crate::sm3::Sm3Bits;

fn sm3_concat(parts: &[&[u8]]) -> [u8; 32] {
    let mut h = Sm3Bits::new();
    for p in parts {
        h.update_bytes(p);
    }
    h.finish()
}

fn hmac(msg: &[u8; 32]) -> [u8; 32] {
    hmac_sm3_bits(&PSEUDO_KEY, msg, 256)
}

/// `pseudohash(d, m, L)` for d = 512, 768 or 1024: `d/8` bytes.
///
/// # Panics
/// If `msg` is shorter than `ceil(bits/8)` bytes.
pub fn pseudohash(digest_bits: u32, msg: &[u8], bits: u64) -> Result<Vec<u8>, IccsError> {
    let tag: [u8; 2] = match digest_bits {
        512 => [0x02, 0x00],
        768 => [0x03, 0x00],
        1024 => [0x04, 0x00],
        _ => return Err(IccsError::InvalidDigestBitLen),
    };
    // k1 = HMAC(KEY, T || m); h1 = SM3(m || T); h2 = SM3(k1 || h1).
    let mut k1 = HmacSm3::new(&PSEUDO_KEY);
    k1.update_bytes(&tag);
    k1.update_bits(msg, bits);
    let k1 = k1.finish();
    let mut h1 = Sm3Bits::new();
    h1.update_bits(msg, bits);
    h1.update_bytes(&tag);
    let h1 = h1.finish();
    let h2 = sm3_concat(&[&k1, &h1]);

    let mut out = Vec::with_capacity(digest_bits as usize / 8);
    out.extend_from_slice(&h1);
    out.extend_from_slice(&h2);
    if digest_bits >= 768 {
        let k2 = hmac(&h1);
        let h3 = sm3_concat(&[&h2, &k2]);
        out.extend_from_slice(&h3);
        if digest_bits == 1024 {
            let k3 = hmac(&h2);
            let k4 = hmac(&h3);
            out.extend_from_slice(&sm3_concat(&[&k3, &h3, &k4]));
        }
    }
    Ok(out)
}

/// Squeezes `pseudoXOF` output block by block: block i (from 1) = SM3(m || BE32(i)).
#[derive(Clone, Debug)]
pub struct PseudoXof {
    base: Sm3Bits,
    counter: u32,
}

impl PseudoXof {
    pub fn new(msg: &[u8], bits: u64) -> Self {
        let mut base = Sm3Bits::new();
        base.update_bits(msg, bits);
        PseudoXof { base, counter: 0 }
    }

    /// The next 32-byte block (the 32-bit counter wraps like the C one).
    pub fn next_block(&mut self) -> [u8; 32] {
        self.counter = self.counter.wrapping_add(1);
        let mut h = self.base.clone();
        h.update_bytes(&self.counter.to_be_bytes());
        h.finish()
    }
}

/// `pseudoXOF(N, m, L)`: `ceil(N/8)` bytes, the low `8 - N mod 8` bits of the last one zero.
///
/// # Panics
/// If `msg` is shorter than `ceil(bits/8)` bytes.
pub fn pseudo_xof(out_bits: u64, msg: &[u8], bits: u64) -> Vec<u8> {
    let mut out = vec![0u8; byte_len(out_bits)];
    let mut xof = PseudoXof::new(msg, bits);
    for chunk in out.chunks_mut(32) {
        chunk.copy_from_slice(&xof.next_block()[..chunk.len()]);
    }
    mask_tail(&mut out, out_bits);
    out
}
