//! Bit strings, MSB-first (iccs-api.md §2.1): bit `i` of a string is bit `7 - i % 8` of byte
//! `i / 8`. An `L`-bit string occupies `ceil(L/8)` bytes; bits past `L` are ignored on input
//! and zero on output.

/// Bytes that hold `bits` bits: `ceil(bits / 8)`.
///
/// # Panics
/// If that count does not fit in `usize` (impossible on 64-bit targets).
pub fn byte_len(bits: u64) -> usize {
    usize::try_from(bits.div_ceil(8)).expect("bit length exceeds the address space")
}

/// The byte mask that keeps the top `n` bits (`n` in `0..=8`).
pub fn top_mask(n: u32) -> u8 {
    debug_assert!(n <= 8);
    if n == 0 { 0 } else { 0xFF << (8 - n) }
}

/// Clears every bit of `buf` at position `bits` or later (the partial last byte's low bits and
/// every byte after it).
pub fn mask_tail(buf: &mut [u8], bits: u64) {
    let full = bits / 8;
    if full >= buf.len() as u64 {
        return;
    }
    let i = full as usize;
    buf[i] &= top_mask((bits % 8) as u32);
    buf[i + 1..].fill(0);
}

/// The first `bits` bits of `src` as `ceil(bits/8)` bytes with the tail cleared.
///
/// # Panics
/// If `src` is shorter than `ceil(bits/8)` bytes.
pub fn truncate(src: &[u8], bits: u64) -> Vec<u8> {
    let mut out = src[..byte_len(bits)].to_vec();
    mask_tail(&mut out, bits);
    out
}

/// A growable bit string; concatenation works at any bit position.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BitString {
    // Invariant: bytes.len() == ceil(bits/8) and bits past `bits` are zero.
    bytes: Vec<u8>,
    bits: u64,
}

impl BitString {
    pub fn new() -> Self {
        Self::default()
    }

    /// The first `bits` bits of `src`.
    pub fn from_bits(src: &[u8], bits: u64) -> Self {
        let mut s = Self::new();
        s.push_bits(src, bits);
        s
    }

    /// Appends the first `bits` bits of `src` (MSB-first); later bits of `src` are ignored.
    ///
    /// # Panics
    /// If `src` is shorter than `ceil(bits/8)` bytes.
    pub fn push_bits(&mut self, src: &[u8], bits: u64) {
        let src = &src[..byte_len(bits)];
        let shift = (self.bits % 8) as u32;
        if shift == 0 {
            self.bytes.extend_from_slice(src);
        } else {
            self.bytes.reserve(src.len());
            for &b in src {
                // Unaligned: the top of `b` fills the open byte, the rest opens a new one.
                if let Some(last) = self.bytes.last_mut() {
                    *last |= b >> shift;
                }
                self.bytes.push(b << (8 - shift));
            }
        }
        self.bits += bits;
        self.bytes.truncate(byte_len(self.bits));
        mask_tail(&mut self.bytes, self.bits);
    }

    /// Appends whole bytes.
    pub fn push_bytes(&mut self, src: &[u8]) {
        self.push_bits(src, 8 * src.len() as u64);
    }

    /// Bit `i` (MSB-first), `None` past the end.
    pub fn bit(&self, i: u64) -> Option<bool> {
        (i < self.bits).then(|| self.bytes[(i / 8) as usize] & (0x80 >> (i % 8)) != 0)
    }

    pub fn bit_len(&self) -> u64 {
        self.bits
    }

    /// `ceil(bit_len/8)` bytes, unused low bits of the last byte zero.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    pub fn into_bytes(self) -> Vec<u8> {
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mask_tail_clears_partial_byte_and_rest() {
        let mut b = [0xFF; 4];
        mask_tail(&mut b, 11);
        assert_eq!(b, [0xFF, 0xE0, 0, 0]);
        let mut b = [0xFF; 2];
        mask_tail(&mut b, 16);
        assert_eq!(b, [0xFF, 0xFF]);
        mask_tail(&mut b, 0);
        assert_eq!(b, [0, 0]);
    }

    #[test]
    fn unaligned_concatenation() {
        // 101 || 111100001 || (nothing) || 0x0200 = 10111110 00010000 00100000 0000
        let mut s = BitString::from_bits(&[0xBF], 3);
        s.push_bits(&[0xF0, 0xFF], 9);
        s.push_bits(&[0xFF], 0);
        s.push_bytes(&[0x02, 0x00]);
        assert_eq!(s.bit_len(), 28);
        assert_eq!(s.as_bytes(), &[0xBE, 0x10, 0x20, 0x00]);
        assert_eq!(s.bit(0), Some(true));
        assert_eq!(s.bit(1), Some(false));
        assert_eq!(s.bit(28), None);
    }

    #[test]
    fn byte_len_rounds_up() {
        assert_eq!(byte_len(0), 0);
        assert_eq!(byte_len(1), 1);
        assert_eq!(byte_len(8), 1);
        assert_eq!(byte_len(9), 2);
    }
}
