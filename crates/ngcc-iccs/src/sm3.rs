//! SM3 (GB/T 32905-2016) over bit strings, as the ICCS `sm3_bit` computes it (iccs-api.md §2.2).
//!
//! Identical to standard SM3 for messages shorter than 2^32 bits. For longer ones the official
//! code writes a non-standard 64-bit length field, reproduced by [`length_field`].

use crate::IccsError;
use crate::bits::{byte_len, top_mask};

/// The SM3 initial value.
pub const IV: [u32; 8] = [
    0x7380166F, 0x4914B2B9, 0x172442D7, 0xDA8A0600, 0xA96F30BC, 0x163138AA, 0xE38DEE4D, 0xB0FB0E4E,
];

const T_LOW: u32 = 0x79CC4519;
const T_HIGH: u32 = 0x7A879D8A;

#[inline(always)]
fn p0(x: u32) -> u32 {
    x ^ x.rotate_left(9) ^ x.rotate_left(17)
}

#[inline(always)]
fn p1(x: u32) -> u32 {
    x ^ x.rotate_left(15) ^ x.rotate_left(23)
}

/// One SM3 compression of a 64-byte block into `state`.
pub fn compress(state: &mut [u32; 8], block: &[u8; 64]) {
    let mut w = [0u32; 68];
    for (wi, chunk) in w.iter_mut().zip(block.chunks_exact(4)) {
        *wi = u32::from_be_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
    }
    for j in 16..68 {
        w[j] = p1(w[j - 16] ^ w[j - 9] ^ w[j - 3].rotate_left(15))
            ^ w[j - 13].rotate_left(7)
            ^ w[j - 6];
    }
    let [mut a, mut b, mut c, mut d, mut e, mut f, mut g, mut h] = *state;
    // The two round ranges differ only in T, FF and GG; separate loops keep them branch-free.
    macro_rules! round {
        ($j:expr, $t:expr, $ff:ident, $gg:ident) => {{
            let j = $j;
            let a12 = a.rotate_left(12);
            let ss1 = a12
                .wrapping_add(e)
                .wrapping_add($t.rotate_left(j as u32 % 32))
                .rotate_left(7);
            let ss2 = ss1 ^ a12;
            let tt1 = $ff(a, b, c)
                .wrapping_add(d)
                .wrapping_add(ss2)
                .wrapping_add(w[j] ^ w[j + 4]);
            let tt2 = $gg(e, f, g)
                .wrapping_add(h)
                .wrapping_add(ss1)
                .wrapping_add(w[j]);
            d = c;
            c = b.rotate_left(9);
            b = a;
            a = tt1;
            h = g;
            g = f.rotate_left(19);
            f = e;
            e = p0(tt2);
        }};
    }
    let xor3 = |x: u32, y: u32, z: u32| x ^ y ^ z;
    let maj = |x: u32, y: u32, z: u32| (x & y) | (x & z) | (y & z);
    let choose = |x: u32, y: u32, z: u32| (x & y) | (!x & z);
    for j in 0..16 {
        round!(j, T_LOW, xor3, xor3);
    }
    for j in 16..64 {
        round!(j, T_HIGH, maj, choose);
    }
    for (s, v) in state.iter_mut().zip([a, b, c, d, e, f, g, h]) {
        *s ^= v;
    }
}

/// The 64-bit length field the official code writes for an `bits`-bit message: high word
/// `((L/512) >> 32) << 9` truncated to 32 bits (0 for any L < 2^41), low word `L mod 2^32`.
/// Standard SM3 would write `L` itself.
pub fn length_field(bits: u64) -> [u8; 8] {
    let high = (((bits / 512) >> 32) << 9) as u32;
    let low = bits as u32;
    let mut out = [0u8; 8];
    out[..4].copy_from_slice(&high.to_be_bytes());
    out[4..].copy_from_slice(&low.to_be_bytes());
    out
}

/// Incremental SM3 over a bit string. Input may arrive at any bit position; whole bytes at a
/// byte-aligned position take the fast path.
#[derive(Clone, Debug)]
pub struct Sm3Bits {
    state: [u32; 8],
    // Invariant: bits of `buf` at or after `nbits` are zero; `nbits < 512`.
    buf: [u8; 64],
    nbits: usize,
    total: u64,
}

impl Default for Sm3Bits {
    fn default() -> Self {
        Self::new()
    }
}

impl Sm3Bits {
    pub fn new() -> Self {
        Sm3Bits {
            state: IV,
            buf: [0; 64],
            nbits: 0,
            total: 0,
        }
    }

    /// Message bits absorbed so far (mod 2^64).
    pub fn bit_len(&self) -> u64 {
        self.total
    }

    /// Appends whole bytes.
    pub fn update_bytes(&mut self, data: &[u8]) {
        self.total = self.total.wrapping_add(8 * data.len() as u64);
        if self.nbits.is_multiple_of(8) {
            self.absorb_aligned(data);
        } else {
            for &b in data {
                self.push_partial(b, 8);
            }
        }
    }

    /// Appends the first `bits` bits of `data`; the rest of `data` is ignored.
    ///
    /// # Panics
    /// If `data` is shorter than `ceil(bits/8)` bytes.
    pub fn update_bits(&mut self, data: &[u8], bits: u64) {
        let data = &data[..byte_len(bits)];
        let full = (bits / 8) as usize;
        let rem = (bits % 8) as u32;
        self.update_bytes(&data[..full]);
        if rem != 0 {
            self.total = self.total.wrapping_add(u64::from(rem));
            self.push_partial(data[full] & top_mask(rem), rem);
        }
    }

    /// Appends the first `bits` bits of `tail`, then pads and returns the digest.
    pub fn finish_bits(mut self, tail: &[u8], bits: u64) -> [u8; 32] {
        self.update_bits(tail, bits);
        self.finish()
    }

    /// Pads (with the official length field) and returns the digest.
    pub fn finish(mut self) -> [u8; 32] {
        let len = self.total;
        self.push_partial(0x80, 1);
        if self.nbits > 448 {
            self.flush();
        }
        self.buf[56..].copy_from_slice(&length_field(len));
        compress(&mut self.state, &self.buf);
        let mut out = [0u8; 32];
        for (o, s) in out.chunks_exact_mut(4).zip(self.state) {
            o.copy_from_slice(&s.to_be_bytes());
        }
        out
    }

    fn flush(&mut self) {
        compress(&mut self.state, &self.buf);
        self.buf = [0; 64];
        self.nbits = 0;
    }

    fn absorb_aligned(&mut self, mut data: &[u8]) {
        let pos = self.nbits / 8;
        if pos > 0 {
            let take = (64 - pos).min(data.len());
            self.buf[pos..pos + take].copy_from_slice(&data[..take]);
            self.nbits += 8 * take;
            data = &data[take..];
            if self.nbits < 512 {
                return;
            }
            self.flush();
        }
        let mut blocks = data.chunks_exact(64);
        for block in &mut blocks {
            compress(&mut self.state, block.try_into().expect("64-byte chunk"));
        }
        let rest = blocks.remainder();
        self.buf[..rest.len()].copy_from_slice(rest);
        self.nbits = 8 * rest.len();
    }

    /// Appends the top `n` bits of `b` (1..=8); the other bits of `b` must be zero.
    fn push_partial(&mut self, b: u8, n: u32) {
        let off = self.nbits % 8;
        self.buf[self.nbits / 8] |= b >> off;
        let taken = (8 - off as u32).min(n);
        self.nbits += taken as usize;
        if self.nbits == 512 {
            self.flush();
        }
        if n > taken {
            // The open byte is full, so the rest starts byte-aligned.
            self.buf[self.nbits / 8] |= b << taken;
            self.nbits += (n - taken) as usize;
        }
    }
}

/// SM3 of the first `bits` bits of `msg`.
///
/// # Panics
/// If `msg` is shorter than `ceil(bits/8)` bytes.
pub fn sm3_bits(msg: &[u8], bits: u64) -> [u8; 32] {
    Sm3Bits::new().finish_bits(msg, bits)
}

/// SM3 of whole bytes.
pub fn sm3(msg: &[u8]) -> [u8; 32] {
    sm3_bits(msg, 8 * msg.len() as u64)
}

/// The ICCS `sm3hash`: only a 256-bit digest exists.
pub fn sm3hash(digest_bits: u32, msg: &[u8], bits: u64) -> Result<[u8; 32], IccsError> {
    if digest_bits != 256 {
        return Err(IccsError::InvalidDigestBitLen);
    }
    Ok(sm3_bits(msg, bits))
}
