//! HQC's SHAKE-256 KAT PRNG (PQClean's `test/common/hqckatrng.c`): init absorbs the 48-byte
//! entropy, the optional 48-byte personalization and the domain byte 1; `randombytes`
//! squeezes the same stream on across calls, so draws of 16 + 16 bytes equal one of 32.

use sha3::Shake256;
use sha3::digest::{ExtendableOutput, Update, XofReader};

const PRNG_DOMAIN: u8 = 1;

/// The PRNG between `hqc_kat_init` and `hqc_kat_release`.
pub struct HqcKatRng {
    reader: <Shake256 as ExtendableOutput>::Reader,
}

impl HqcKatRng {
    /// `hqc_kat_init(entropy, perso, 256)`.
    pub fn new(entropy: &[u8; 48], personalization: Option<&[u8; 48]>) -> Self {
        let mut shake = Shake256::default();
        shake.update(entropy);
        if let Some(p) = personalization {
            shake.update(p);
        }
        shake.update(&[PRNG_DOMAIN]);
        HqcKatRng {
            reader: shake.finalize_xof(),
        }
    }

    /// `randombytes(out, len)`: the next `len` bytes of the stream.
    pub fn randombytes(&mut self, out: &mut [u8]) {
        self.reader.read(out);
    }

    pub fn generate(&mut self, len: usize) -> Vec<u8> {
        let mut out = vec![0u8; len];
        self.randombytes(&mut out);
        out
    }

    /// `hqc_kat_release`: ends this stream. The C code frees the state, so drawing again needs
    /// a new `hqc_kat_init`; here the value is consumed, which makes that a compile error.
    pub fn release(self) {}
}
