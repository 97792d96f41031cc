//! HMAC-SM3 over bit strings (GB/T 15852.2-2024 §7, iccs-api.md §2.3) and the fixed
//! pseudohash key.

use crate::sm3::{Sm3Bits, sm3};

/// SM3("3.14159265358979") || SM3("2.71828182845904"): the key of every pseudohash HMAC.
pub const PSEUDO_KEY: [u8; 64] = [
    0x53, 0x07, 0xF6, 0xD5, 0xEB, 0x6A, 0x3C, 0xED, 0x3D, 0x24, 0xC5, 0x3C, 0xC9, 0xC8, 0x2C, 0xCE,
    0x2F, 0x89, 0x36, 0x39, 0x70, 0x23, 0xF0, 0x69, 0x5C, 0x26, 0xC8, 0x0C, 0x1A, 0xB1, 0x82, 0xA7,
    0x1D, 0xB0, 0x2B, 0xA9, 0x2F, 0x54, 0x40, 0x18, 0x11, 0x5A, 0x96, 0xE7, 0x19, 0x66, 0x2C, 0xA3,
    0x2B, 0x7C, 0x7E, 0xFC, 0x0A, 0x6D, 0x24, 0x82, 0x15, 0x07, 0x66, 0xBA, 0x6F, 0x65, 0x5B, 0x8E,
];

/// Incremental HMAC-SM3: SM3(K2 || SM3(K1 || msg)) with K = key zero-padded to 64 bytes,
/// K1 = K ^ 0x36.., K2 = K ^ 0x5C... The message is a bit string appended after K1.
#[derive(Clone, Debug)]
pub struct HmacSm3 {
    inner: Sm3Bits,
    outer_key: [u8; 64],
}

impl HmacSm3 {
    /// A key longer than 64 bytes is replaced by its SM3 digest, as in standard HMAC (the ICCS
    /// helpers only ever use the 64-byte [`PSEUDO_KEY`]).
    pub fn new(key: &[u8]) -> Self {
        let mut k = [0u8; 64];
        if key.len() > 64 {
            k[..32].copy_from_slice(&sm3(key));
        } else {
            k[..key.len()].copy_from_slice(key);
        }
        let mut inner = Sm3Bits::new();
        inner.update_bytes(&k.map(|b| b ^ 0x36));
        HmacSm3 {
            inner,
            outer_key: k.map(|b| b ^ 0x5C),
        }
    }

    /// Appends the first `bits` bits of `data`.
    pub fn update_bits(&mut self, data: &[u8], bits: u64) {
        self.inner.update_bits(data, bits);
    }

    pub fn update_bytes(&mut self, data: &[u8]) {
        self.inner.update_bytes(data);
    }

    pub fn finish(self) -> [u8; 32] {
        let inner = self.inner.finish();
        let mut outer = Sm3Bits::new();
        outer.update_bytes(&self.outer_key);
        outer.update_bytes(&inner);
        outer.finish()
    }
}

/// HMAC-SM3 of the first `bits` bits of `msg`.
pub fn hmac_sm3_bits(key: &[u8], msg: &[u8], bits: u64) -> [u8; 32] {
    let mut h = HmacSm3::new(key);
    h.update_bits(msg, bits);
    h.finish()
}
