//! The NIST AES-256 CTR_DRBG of the NIST KAT programs (`rng.c`, PQClean's
//! `test/common/nistkatrng.c`): no derivation function, security strength 256, no reseed.

use aes::Aes256;
use aes::cipher::{BlockEncrypt, KeyInit, generic_array::GenericArray};

/// The state of `randombytes_init(entropy, perso, 256)` / `randombytes(out)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NistCtrDrbg {
    key: [u8; 32],
    v: [u8; 16],
    reseed_counter: u64,
}

fn increment(v: &mut [u8; 16]) {
    *v = u128::from_be_bytes(*v).wrapping_add(1).to_be_bytes();
}

impl NistCtrDrbg {
    /// `randombytes_init(entropy, perso, 256)`: seed material = entropy ^ perso, then Update
    /// from an all-zero Key and V.
    pub fn new(entropy: &[u8; 48], personalization: Option<&[u8; 48]>) -> Self {
        let mut seed = *entropy;
        if let Some(p) = personalization {
            for (s, p) in seed.iter_mut().zip(p) {
                *s ^= p;
            }
        }
        let mut drbg = NistCtrDrbg {
            key: [0; 32],
            v: [0; 16],
            reseed_counter: 1,
        };
        drbg.update(Some(&seed));
        drbg
    }

    /// `randombytes(out, len)`: V+1 then AES(Key, V) per 16-byte block, then Update. Every
    /// call is one Generate, so two draws of 16 differ from one draw of 32.
    pub fn randombytes(&mut self, out: &mut [u8]) {
        let cipher = Aes256::new(GenericArray::from_slice(&self.key));
        for chunk in out.chunks_mut(16) {
            increment(&mut self.v);
            let mut block = GenericArray::from(self.v);
            cipher.encrypt_block(&mut block);
            chunk.copy_from_slice(&block[..chunk.len()]);
        }
        self.update(None);
        self.reseed_counter += 1;
    }

    /// A convenience for `randombytes` into a new vector.
    pub fn generate(&mut self, len: usize) -> Vec<u8> {
        let mut out = vec![0u8; len];
        self.randombytes(&mut out);
        out
    }

    // CTR_DRBG_Update: three blocks AES(Key, ++V), xor provided data, split into Key || V.
    fn update(&mut self, provided: Option<&[u8; 48]>) {
        let cipher = Aes256::new(GenericArray::from_slice(&self.key));
        let mut temp = [0u8; 48];
        for chunk in temp.chunks_exact_mut(16) {
            increment(&mut self.v);
            let mut block = GenericArray::from(self.v);
            cipher.encrypt_block(&mut block);
            chunk.copy_from_slice(&block);
        }
        if let Some(p) = provided {
            for (t, p) in temp.iter_mut().zip(p) {
                *t ^= p;
            }
        }
        self.key.copy_from_slice(&temp[..32]);
        self.v.copy_from_slice(&temp[32..]);
    }

    pub fn key(&self) -> &[u8; 32] {
        &self.key
    }

    pub fn v(&self) -> &[u8; 16] {
        &self.v
    }

    pub fn reseed_counter(&self) -> u64 {
        self.reseed_counter
    }
}
