//! The host side of `randombytes` for NIST-API libraries: a process-wide generator chosen by
//! the job (NIST AES-256 CTR_DRBG or HQC's SHAKE-256 PRNG), called through a C callback.

use crate::dataset::schema::KatRng;
use std::ffi::c_int;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

/// Set by the ct taint job: every byte `randombytes` hands out is marked secret (undefined).
static MARK_SECRET: AtomicBool = AtomicBool::new(false);

pub fn mark_output_secret(on: bool) {
    MARK_SECRET.store(on, Ordering::SeqCst);
}

pub trait ByteSource: Send {
    fn fill(&mut self, out: &mut [u8]);
}

static SOURCE: Mutex<Option<Box<dyn ByteSource>>> = Mutex::new(None);

pub fn install(source: Box<dyn ByteSource>) {
    *SOURCE.lock().unwrap_or_else(|e| e.into_inner()) = Some(source);
}

/// Draws from the installed generator (the KAT driver also draws seeds and messages).
pub fn draw(n: usize) -> Vec<u8> {
    let mut out = vec![0u8; n];
    if let Some(src) = SOURCE.lock().unwrap_or_else(|e| e.into_inner()).as_mut() {
        src.fill(&mut out);
    }
    out
}

/// The callback handed to `ngcc_set_randombytes`.
///
/// # Safety
/// `out` must point to at least `n` writable bytes (the library's contract).
pub unsafe extern "C" fn host_randombytes(out: *mut u8, n: usize) -> c_int {
    let mut guard = SOURCE.lock().unwrap_or_else(|e| e.into_inner());
    let Some(src) = guard.as_mut() else { return -1 };
    if n > 0 {
        // SAFETY: the library passes a buffer of at least n bytes.
        let buf = unsafe { std::slice::from_raw_parts_mut(out, n) };
        src.fill(buf);
        if MARK_SECRET.load(Ordering::SeqCst) {
            super::ct::client::undefined(buf);
        }
    }
    0
}

/// NIST AES-256 CTR_DRBG (the PQClean/NIST KAT generator).
pub struct NistDrbg(pub ngcc_iccs::ctr_drbg::NistCtrDrbg);

impl ByteSource for NistDrbg {
    fn fill(&mut self, out: &mut [u8]) {
        self.0.randombytes(out);
    }
}

/// HQC's SHAKE-256 KAT PRNG.
pub struct HqcPrng(pub ngcc_iccs::hqc_prng::HqcKatRng);

impl ByteSource for HqcPrng {
    fn fill(&mut self, out: &mut [u8]) {
        self.0.randombytes(out);
    }
}

/// A fresh generator of the named kind seeded with 48 bytes of entropy.
pub fn seeded(kind: &KatRng, entropy: &[u8; 48]) -> Box<dyn ByteSource> {
    if *kind == KatRng::Hqc {
        Box::new(HqcPrng(ngcc_iccs::hqc_prng::HqcKatRng::new(entropy, None)))
    } else {
        Box::new(NistDrbg(ngcc_iccs::ctr_drbg::NistCtrDrbg::new(
            entropy, None,
        )))
    }
}

/// Byte i of the stream is i mod 256: nearly free, for benchmarking the harness itself.
pub struct CounterBytes(pub u64);

impl ByteSource for CounterBytes {
    fn fill(&mut self, out: &mut [u8]) {
        for b in out {
            *b = self.0 as u8;
            self.0 += 1;
        }
    }
}
