//! One operation of one library, prepared deterministically (reference-harness.md §2.3–§2.4)
//! and callable in a loop. Setup that is expensive (key pairs, ciphertexts, signatures) is
//! done once per instance and operation and saved, so every trial process loads it.

use super::guard::Guarded;
use super::library::*;
use super::protocol::{BenchRng, Expect, VerifyValue};
use super::rng;
use crate::candidate::{Api, Kind};
use crate::dataset::schema::{CounterKind, KatRng, META_SIGN_FAILURES_RETRIED, Op, TimingScope};
use crate::measure::counter::{Counter, monotonic_raw_ns};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::ffi::c_int;
use std::path::Path;

/// The performance seed of the reference driver: bytes 00..2F (the last byte XOR a tweak,
/// so trial processes can draw different, recorded streams).
pub fn perf_seed(tweak: u8) -> [u8; 48] {
    let mut s: [u8; 48] = std::array::from_fn(|i| i as u8);
    s[47] ^= tweak;
    s
}

/// SIG message of the reference driver: 64 bytes, byte i = (131·i + 64) mod 256.
pub fn sig_message() -> Vec<u8> {
    (0..64u32).map(|i| ((131 * i + 64) % 256) as u8).collect()
}

/// Hash message of the reference driver: byte i = (131·i + len) mod 256.
pub fn hash_message(len: u64) -> Vec<u8> {
    (0..len).map(|i| ((131 * i + len) % 256) as u8).collect()
}

/// Why an operation could not be prepared, run or checked. The kind decides what follows
/// (a broken length is not retried with another message, a missing symbol is the library's
/// fault, not the call's); the text goes into the process record.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum OpError {
    /// A returned length beyond its declared capacity, or a write outside a buffer: the
    /// reference's OVERFLOW.
    #[error("OVERFLOW: {0}")]
    Overflow(String),
    /// The library refused the call (a return code, no signature after the retries) or its
    /// results do not agree with each other.
    #[error("{0}")]
    Refused(String),
    /// The library lacks a function or declares what cannot be run.
    #[error("{0}")]
    Library(String),
    /// The saved setup could not be read or written.
    #[error("{0}")]
    Setup(String),
}

/// A function of the library by name (see `Lib::func`).
fn sym<T: Copy>(lib: &Lib, name: &str) -> Result<T, OpError> {
    Ok(lib.func(name)?)
}

/// A library that cannot be used is the library's fault.
impl From<super::library::LibError> for OpError {
    fn from(e: super::library::LibError) -> OpError {
        OpError::Library(e.to_string())
    }
}

/// A write outside a buffer is an OVERFLOW.
impl From<super::guard::Overrun> for OpError {
    fn from(e: super::guard::Overrun) -> OpError {
        OpError::Overflow(e.to_string())
    }
}

/// Callers that report an error as text keep using `?`.
impl From<OpError> for String {
    fn from(e: OpError) -> String {
        e.to_string()
    }
}

/// A length the candidate returned must fit the buffer it declared (reference §6.1:
/// "returned length > claimed" is an OVERFLOW).
fn fits(op: &str, what: &str, got: u64, declared: usize) -> Result<(), OpError> {
    if got > declared as u64 {
        return Err(OpError::Overflow(format!(
            "{op} returned {what} length {got} > declared {declared}"
        )));
    }
    Ok(())
}

/// A KEX init's return code, then its pk, sk and state lengths against their capacities.
fn kex_init_ok(op: &str, rc: i32, lens: &[u64], caps: [u64; 3]) -> Result<(), OpError> {
    if rc < 0 {
        return Err(OpError::Refused(format!("{op} returned {rc}")));
    }
    for ((what, &got), cap) in ["pk", "sk", "state"].into_iter().zip(lens).zip(caps) {
        fits(op, what, got, cap as usize)?;
    }
    Ok(())
}

/// Facts about the setup, saved next to its buffers and reported in META.
#[derive(Serialize, Deserialize, Debug, Clone, Default)]
pub struct SetupFacts {
    pub prepare_s: f64,
    pub message_tweaks: u64,
    pub sign_failures_retried: u64,
    pub setup_verify_failed: u64,
    pub signature_length_excess: u64,
    /// KEX: pass count executed and the message lengths of the honest run.
    pub kex_passes_run: u64,
    pub kex_msg_lens: Vec<u64>,
    pub kex_ss_len: u64,
    /// SIG: length of the honest signature verify uses.
    pub signature_len: u64,
}

#[derive(Clone, Copy)]
struct KexFns {
    init_a: KexInitFn,
    init_b: KexInitFn,
    pass: KexPassFn,
    has_pass: KexHasPassFn,
    derive_a: KexDeriveFn,
    derive_b: KexDeriveFn,
}

/// A KEX protocol step that can be timed alone.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum KexStep {
    Whole,
    InitA,
    InitB,
    Pass(u32),
    DeriveA,
    DeriveB,
}

impl KexStep {
    pub fn of(op: &Op) -> Option<KexStep> {
        Some(match op {
            Op::Exchange => KexStep::Whole,
            Op::InitA => KexStep::InitA,
            Op::InitB => KexStep::InitB,
            Op::DeriveA => KexStep::DeriveA,
            Op::DeriveB => KexStep::DeriveB,
            Op::Pass(k) if (1..=16).contains(k) => KexStep::Pass(*k),
            _ => return None,
        })
    }
}

/// Seeds the library's randomness: ICCS `ngcc_seed`, NIST a CTR_DRBG behind randombytes.
pub fn seed_library(
    lib: &Lib,
    api: Api,
    tweak: u8,
    rng_kind: Option<BenchRng>,
) -> Result<(), OpError> {
    let seed = perf_seed(tweak);
    match api {
        Api::Iccs => {
            let f: SeedFn = sym(lib, "ngcc_seed")?;
            // SAFETY: the shim's ngcc_seed reads `len` bytes.
            let rc = unsafe { f(seed.as_ptr(), seed.len() as u64) };
            if rc != 0 {
                return Err(OpError::Refused(format!("ngcc_seed returned {rc}")));
            }
        }
        Api::Nist => {
            let set: SetRandombytesFn = sym(lib, "ngcc_set_randombytes")?;
            // SAFETY: host_randombytes matches the callback type.
            unsafe { set(rng::host_randombytes) };
            match rng_kind {
                Some(BenchRng::Counter) => rng::install(Box::new(rng::CounterBytes(0))),
                None => rng::install(rng::seeded(&KatRng::Nist, &seed)),
            }
        }
    }
    Ok(())
}

// Each kind's layout, by name: where its buffers sit in `Core::bufs`, and which of the
// library's declared sizes (META order) is which — index 0 is a KEM's pk but a hash's digest
// bits. A buffer's index is also its file in a saved setup and in a trial's last outputs
// (`buf<i>.bin`), so the numbers are fixed. Constants, not a struct of references: the timed
// loops index `bufs` exactly as before (our crate is built at opt-level 0, where a view
// would be real work between the counter reads).

/// KEM and SIG keygen alike: the key pair's buffers and declared sizes.
mod keypair {
    pub const PK: usize = 0;
    pub const SK: usize = 1;
    pub mod size {
        pub const PK: usize = 0;
        pub const SK: usize = 1;
    }
}

mod kem {
    pub const PK: usize = super::keypair::PK;
    pub const SK: usize = super::keypair::SK;
    pub const CT: usize = 2;
    /// The secret `enc` returns.
    pub const SS: usize = 3;
    /// The secret `dec` returns, compared with [`SS`].
    pub const SS2: usize = 4;
    pub mod size {
        pub const PK: usize = super::super::keypair::size::PK;
        pub const SK: usize = super::super::keypair::size::SK;
        pub const CT: usize = 2;
        pub const SS: usize = 3;
    }
}

mod sig {
    pub const PK: usize = super::keypair::PK;
    pub const SK: usize = super::keypair::SK;
    /// The message (the reference driver's, see `sig_message`).
    pub const MSG: usize = 2;
    pub const SIG: usize = 3;
    pub mod size {
        pub const PK: usize = super::super::keypair::size::PK;
        pub const SK: usize = super::super::keypair::size::SK;
        pub const SIG: usize = 2;
    }
}

mod hash {
    pub const MSG: usize = 0;
    pub const DIGEST: usize = 1;
    pub mod size {
        /// The digest length in bits, passed to `CryptHash`.
        pub const DIGEST_BITS: usize = 0;
        pub const DIGEST: usize = 1;
    }
}

/// KEX buffers are per party (`KEX_A`, `KEX_B`, `KEX_MSG0`); these are its declared sizes.
mod kex {
    pub mod size {
        pub const PASSES: usize = 0;
        pub const PK: usize = 1;
        pub const SK: usize = 2;
        pub const STA: usize = 3;
        pub const STB: usize = 4;
        pub const SS: usize = 5;
        pub const MSG: usize = 6;
    }
}

/// The file a buffer is saved in (a setup, a trial's last outputs).
fn buffer_file(slot: usize) -> Expect {
    Expect::File(format!("buf{slot}.bin"))
}

/// What every kind's operation works on: the library's sizes, the guarded buffers, the
/// setup facts. Each kind's buffers and sizes are named in its layout module above (`kem`,
/// `sig`, `hash`, `kex`).
pub struct Core {
    pub op: Op,
    pub input_bytes: u64,
    pub facts: SetupFacts,
    bufs: Vec<Guarded>,
    sizes: Vec<usize>,
}

impl Core {
    fn size(&self, i: usize) -> usize {
        self.sizes.get(i).copied().unwrap_or(0)
    }
}

/// One kind's operations (KEM, SIG, hash, KEX): the setup and the call the timing loop runs.
trait Operation {
    /// Picks the operation `call` runs; false when the kind has no such operation.
    fn select(&mut self, op: &Op) -> bool;
    /// Fresh buffers in this kind's layout.
    fn buffers(&self, c: &Core) -> Vec<Guarded>;
    /// Builds the expensive setup of the selected operation in fresh buffers.
    fn build_setup(&mut self, c: &mut Core) -> Result<(), OpError>;
    /// One operation, as the timing loop runs it.
    fn call(&mut self, c: &mut Core) -> Result<(), OpError>;
    /// `iters` operations back to back, stopping at the first failure: the timed loop. KEM,
    /// SIG and hash override it with a loop around the library call alone (arguments
    /// prepared once, a `#[cold]` error path), so that what the loop adds to a call does not
    /// depend on how this crate is optimised.
    fn call_n(&mut self, c: &mut Core, iters: u64) -> Result<(), OpError> {
        let mut i = 0;
        while i < iters {
            self.call(c)?;
            i += 1;
        }
        Ok(())
    }
    /// One call timing only its measured part: (ns, ticks). Only KEX steps time less than
    /// the whole call.
    fn call_step(&mut self, c: &mut Core, counter: &mut Counter) -> Result<(u64, u64), OpError> {
        let t0 = monotonic_raw_ns();
        counter.start();
        self.call(c)?;
        let ticks = counter.stop();
        Ok((monotonic_raw_ns() - t0, ticks))
    }
    fn timing_scope(&self) -> TimingScope {
        TimingScope::Loop
    }
    /// META pk, sk, ct, ss, signature and digest bytes.
    fn meta_sizes(&self, c: &Core) -> [usize; 6];
    /// META keys after the sizes (KEX protocol facts).
    fn meta_protocol(&self, _c: &Core) -> Vec<(String, String)> {
        Vec::new()
    }
    /// META keys after `warmups` (SIG retry and rejection counts).
    fn meta_counts(&self, _c: &Core) -> Vec<(String, String)> {
        Vec::new()
    }
    /// From buffers loaded from a trial's last outputs: what they must satisfy, recomputed
    /// (empty: this kind's outputs are not verified).
    fn verify(&mut self, _c: &mut Core) -> Result<Vec<VerifyValue>, OpError> {
        Ok(Vec::new())
    }
}

fn hex_of(b: &Guarded) -> String {
    hex::encode_upper(b.as_slice())
}

fn value(what: &str, got: String, expect: Expect) -> VerifyValue {
    VerifyValue {
        what: what.into(),
        got,
        expect,
    }
}

/// KEM and SIG keygen alike (the same `keypair` layout).
fn keygen(c: &mut Core, keygen: KeypairFn) -> Result<(), OpError> {
    keygen_n(c, keygen, 1)
}

fn keygen_n(c: &mut Core, keygen: KeypairFn, iters: u64) -> Result<(), OpError> {
    let (pk_cap, sk_cap) = (
        c.size(keypair::size::PK) as u64,
        c.size(keypair::size::SK) as u64,
    );
    let (pk, sk) = (c.bufs[keypair::PK].ptr(), c.bufs[keypair::SK].ptr());
    let mut i = 0;
    while i < iters {
        let (mut l1, mut l2) = (0u64, 0u64);
        // SAFETY: buffers have the declared sizes plus canaries.
        let rc = unsafe { keygen(pk, &mut l1, sk, &mut l2) };
        if rc != 0 || l1 > pk_cap || l2 > sk_cap {
            return failed("keygen", rc, &[("pk", l1, pk_cap), ("sk", l2, sk_cap)]);
        }
        i += 1;
    }
    Ok(())
}

/// Why a call in a timed loop failed: its return code, else the first length over its
/// capacity (`(what, got, capacity)`).
#[cold]
#[inline(never)]
fn failed(op: &str, rc: c_int, lens: &[(&str, u64, u64)]) -> Result<(), OpError> {
    if rc != 0 {
        return Err(OpError::Refused(format!("{op} returned {rc}")));
    }
    for &(what, got, cap) in lens {
        fits(op, what, got, cap as usize)?;
    }
    Ok(())
}

#[derive(Clone, Copy, PartialEq)]
enum KemCall {
    Keygen,
    Enc,
    Dec,
}

struct Kem {
    keygen: KeypairFn,
    enc: KemOpFn,
    dec: KemDecFn,
    call: KemCall,
}

impl Kem {
    fn load(lib: &Lib) -> Result<Kem, OpError> {
        Ok(Kem {
            keygen: sym(lib, "ngcc_kem_keygen")?,
            enc: sym(lib, "ngcc_kem_enc")?,
            dec: sym(lib, "ngcc_kem_dec")?,
            call: KemCall::Keygen,
        })
    }

    fn enc(&self, c: &mut Core) -> Result<(), OpError> {
        self.enc_n(c, 1)
    }

    fn enc_n(&self, c: &mut Core, iters: u64) -> Result<(), OpError> {
        let (pk_len, ss_cap, ct_cap) = (
            c.size(kem::size::PK) as u64,
            c.size(kem::size::SS) as u64,
            c.size(kem::size::CT) as u64,
        );
        let (pk, ss, ct) = (
            c.bufs[kem::PK].ptr(),
            c.bufs[kem::SS].ptr(),
            c.bufs[kem::CT].ptr(),
        );
        let mut i = 0;
        while i < iters {
            let (mut l1, mut l2) = (0u64, 0u64);
            // SAFETY: buffers have the declared sizes plus canaries.
            let rc = unsafe { (self.enc)(pk, pk_len, ss, &mut l1, ct, &mut l2) };
            if rc != 0 || l1 > ss_cap || l2 > ct_cap {
                return failed("enc", rc, &[("ss", l1, ss_cap), ("ct", l2, ct_cap)]);
            }
            i += 1;
        }
        Ok(())
    }

    fn dec(&self, c: &mut Core) -> Result<(), OpError> {
        self.dec_n(c, 1)
    }

    fn dec_n(&self, c: &mut Core, iters: u64) -> Result<(), OpError> {
        let (sk_len, ct_len, ss_len) = (
            c.size(kem::size::SK) as u64,
            c.size(kem::size::CT) as u64,
            c.size(kem::size::SS) as u64,
        );
        let (sk, ct, ss) = (
            c.bufs[kem::SK].ptr(),
            c.bufs[kem::CT].ptr(),
            c.bufs[kem::SS2].ptr(),
        );
        let mut i = 0;
        while i < iters {
            let mut l = 0u64;
            // SAFETY: as above.
            let rc = unsafe { (self.dec)(sk, sk_len, ct, ct_len, ss, &mut l) };
            if rc != 0 || l != ss_len {
                failed("dec", rc, &[("ss", l, ss_len)])?;
                return Err(OpError::Refused(format!(
                    "dec returned shared secret length {l}, declared {ss_len}"
                )));
            }
            i += 1;
        }
        Ok(())
    }
}

impl Operation for Kem {
    fn select(&mut self, op: &Op) -> bool {
        self.call = match op {
            Op::Keygen => KemCall::Keygen,
            Op::Enc => KemCall::Enc,
            Op::Dec => KemCall::Dec,
            _ => return false,
        };
        true
    }

    fn buffers(&self, c: &Core) -> Vec<Guarded> {
        // In slot order: PK, SK, CT, SS, SS2 (both secrets are "ss" in messages).
        vec![
            Guarded::new("pk", c.size(kem::size::PK)),
            Guarded::new("sk", c.size(kem::size::SK)),
            Guarded::new("ct", c.size(kem::size::CT)),
            Guarded::new("ss", c.size(kem::size::SS)),
            Guarded::new("ss", c.size(kem::size::SS)),
        ]
    }

    fn build_setup(&mut self, c: &mut Core) -> Result<(), OpError> {
        match self.call {
            KemCall::Keygen => Ok(()),
            KemCall::Enc => keygen(c, self.keygen),
            KemCall::Dec => {
                keygen(c, self.keygen)?;
                self.enc(c)?;
                self.dec(c)?;
                if c.bufs[kem::SS].as_slice() != c.bufs[kem::SS2].as_slice() {
                    return Err(OpError::Refused(
                        "honest decapsulation mismatch; refusing timing".into(),
                    ));
                }
                Ok(())
            }
        }
    }

    fn call(&mut self, c: &mut Core) -> Result<(), OpError> {
        self.call_n(c, 1)
    }

    fn call_n(&mut self, c: &mut Core, iters: u64) -> Result<(), OpError> {
        match self.call {
            KemCall::Keygen => keygen_n(c, self.keygen, iters),
            KemCall::Enc => self.enc_n(c, iters),
            KemCall::Dec => self.dec_n(c, iters),
        }
    }

    fn meta_sizes(&self, c: &Core) -> [usize; 6] {
        [
            c.size(kem::size::PK),
            c.size(kem::size::SK),
            c.size(kem::size::CT),
            c.size(kem::size::SS),
            0,
            0,
        ]
    }

    fn verify(&mut self, c: &mut Core) -> Result<Vec<VerifyValue>, OpError> {
        Ok(match self.call {
            KemCall::Keygen => {
                self.enc(c)?;
                self.dec(c)?;
                vec![value(
                    "the shared secret decapsulated with the last sk from an encapsulation to the last pk",
                    hex_of(&c.bufs[kem::SS2]),
                    Expect::Equal(hex_of(&c.bufs[kem::SS])),
                )]
            }
            KemCall::Enc => {
                self.dec(c)?;
                vec![value(
                    "the shared secret decapsulated from the last ct",
                    hex_of(&c.bufs[kem::SS2]),
                    buffer_file(kem::SS),
                )]
            }
            KemCall::Dec => {
                self.dec(c)?;
                let got = hex_of(&c.bufs[kem::SS2]);
                vec![
                    value(
                        "a fresh decapsulation of the ct",
                        got.clone(),
                        buffer_file(kem::SS2),
                    ),
                    value(
                        "the shared secret the ct was encapsulated with",
                        got,
                        buffer_file(kem::SS),
                    ),
                ]
            }
        })
    }
}

#[derive(Clone, Copy, PartialEq)]
enum SigCall {
    Keygen,
    Sign,
    Verify,
}

struct Sig {
    keygen: KeypairFn,
    sign: SignFn,
    verify: VerifyFn,
    call: SigCall,
    /// Counters reported in META (reference §2.5).
    sign_failures_retried: u64,
    verify_rejections: u64,
}

impl Sig {
    fn load(lib: &Lib) -> Result<Sig, OpError> {
        Ok(Sig {
            keygen: sym(lib, "ngcc_sig_keygen")?,
            sign: sym(lib, "ngcc_sig_sign")?,
            verify: sym(lib, "ngcc_sig_verify")?,
            call: SigCall::Keygen,
            sign_failures_retried: 0,
            verify_rejections: 0,
        })
    }

    /// Signs the message, retrying API failures (up to 64 attempts, each counted).
    fn sign(&mut self, c: &mut Core) -> Result<u64, OpError> {
        let sk_len = c.size(sig::size::SK) as u64;
        let m_len = c.bufs[sig::MSG].len() as u64;
        for _ in 0..64 {
            let mut len = 0u64;
            let (sk, m, sn) = (
                c.bufs[sig::SK].ptr(),
                c.bufs[sig::MSG].ptr(),
                c.bufs[sig::SIG].ptr(),
            );
            // SAFETY: buffers have the declared sizes plus canaries.
            let rc = unsafe { (self.sign)(sk, sk_len, m, m_len, sn, &mut len) };
            if rc == 0 {
                fits("sign", "signature", len, c.size(sig::size::SIG))?;
                return Ok(len);
            }
            self.sign_failures_retried += 1;
        }
        Err(OpError::Refused("sign failed 64 times in a row".into()))
    }

    /// Setup for verify: an honest signature that verifies (up to 16 message tweaks × 16 attempts).
    fn honest_signature(&mut self, c: &mut Core) -> Result<(), OpError> {
        for _ in 0..16 {
            let signed = self.sign(c);
            // A broken length is not bad luck with one message: no point in tweaking it.
            if let Err(e @ OpError::Overflow(_)) = signed {
                return Err(e);
            }
            if let Ok(len) = signed {
                c.facts.sign_failures_retried = self.sign_failures_retried;
                c.facts.signature_len = len;
                self.verify(c)?;
                if self.verify_rejections > 0 {
                    c.facts.setup_verify_failed = 1;
                    return Err(OpError::Refused(
                        "an honest signature did not verify; refusing timing".into(),
                    ));
                }
                return Ok(());
            }
            c.facts.message_tweaks += 1;
            let m = &mut c.bufs[sig::MSG];
            let last = m.len() - 1;
            m.as_mut_slice()[last] = m.as_slice()[last].wrapping_add(1);
        }
        Err(OpError::Refused(
            "no honest signature after 16 message tweaks".into(),
        ))
    }

    fn verify(&mut self, c: &mut Core) -> Result<(), OpError> {
        self.verify_n(c, 1)
    }

    /// A rejection is counted, not an error.
    fn verify_n(&mut self, c: &mut Core, iters: u64) -> Result<(), OpError> {
        let pk_len = c.size(sig::size::PK) as u64;
        let sig_len = c.facts.signature_len;
        let m_len = c.bufs[sig::MSG].len() as u64;
        let (pk, sn, m) = (
            c.bufs[sig::PK].ptr(),
            c.bufs[sig::SIG].ptr(),
            c.bufs[sig::MSG].ptr(),
        );
        let (mut i, mut rejected) = (0, 0);
        while i < iters {
            // SAFETY: as above.
            let rc = unsafe { (self.verify)(pk, pk_len, sn, sig_len, m, m_len) };
            rejected += u64::from(rc != 0);
            i += 1;
        }
        self.verify_rejections += rejected;
        Ok(())
    }
}

impl Operation for Sig {
    fn select(&mut self, op: &Op) -> bool {
        self.call = match op {
            Op::Keygen => SigCall::Keygen,
            Op::Sign => SigCall::Sign,
            Op::Verify => SigCall::Verify,
            _ => return false,
        };
        true
    }

    fn buffers(&self, c: &Core) -> Vec<Guarded> {
        // In slot order: PK, SK, MSG, SIG.
        vec![
            Guarded::new("pk", c.size(sig::size::PK)),
            Guarded::new("sk", c.size(sig::size::SK)),
            Guarded::with("m", &sig_message()),
            Guarded::new("sn", c.size(sig::size::SIG)),
        ]
    }

    fn build_setup(&mut self, c: &mut Core) -> Result<(), OpError> {
        match self.call {
            SigCall::Keygen => Ok(()),
            SigCall::Sign => keygen(c, self.keygen),
            SigCall::Verify => {
                keygen(c, self.keygen)?;
                self.honest_signature(c)
            }
        }
    }

    fn call(&mut self, c: &mut Core) -> Result<(), OpError> {
        self.call_n(c, 1)
    }

    fn call_n(&mut self, c: &mut Core, iters: u64) -> Result<(), OpError> {
        match self.call {
            SigCall::Keygen => keygen_n(c, self.keygen, iters),
            SigCall::Sign => {
                // Signing retries failures (counted); its calls are far longer than the loop.
                let mut i = 0;
                while i < iters {
                    // Kept with the last outputs, so the last signature can be verified.
                    c.facts.signature_len = self.sign(c)?;
                    i += 1;
                }
                Ok(())
            }
            SigCall::Verify => self.verify_n(c, iters),
        }
    }

    fn meta_sizes(&self, c: &Core) -> [usize; 6] {
        [
            c.size(sig::size::PK),
            c.size(sig::size::SK),
            0,
            0,
            c.size(sig::size::SIG),
            0,
        ]
    }

    fn verify(&mut self, c: &mut Core) -> Result<Vec<VerifyValue>, OpError> {
        let what = match self.call {
            SigCall::Keygen => {
                c.facts.signature_len = self.sign(c)?;
                "a fresh signature under the last key pair"
            }
            SigCall::Sign => "the last signature",
            SigCall::Verify => "the verified signature",
        };
        let before = self.verify_rejections;
        self.verify(c)?;
        let got = if self.verify_rejections == before {
            "accepted"
        } else {
            "rejected"
        };
        Ok(vec![value(
            what,
            got.into(),
            Expect::Equal("accepted".into()),
        )])
    }

    fn meta_counts(&self, c: &Core) -> Vec<(String, String)> {
        [
            (META_SIGN_FAILURES_RETRIED, self.sign_failures_retried),
            ("message_tweaks", c.facts.message_tweaks),
            ("setup_verify_failed", c.facts.setup_verify_failed),
            ("signature_length_excess", c.facts.signature_length_excess),
            ("verify_rejections", self.verify_rejections),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
    }
}

struct Hash {
    hash: HashFn,
}

impl Operation for Hash {
    fn select(&mut self, op: &Op) -> bool {
        *op == Op::Hash
    }

    fn buffers(&self, c: &Core) -> Vec<Guarded> {
        // In slot order: MSG, DIGEST.
        vec![
            Guarded::with("msg", &hash_message(c.input_bytes)),
            Guarded::new("digest", c.size(hash::size::DIGEST)),
        ]
    }

    fn build_setup(&mut self, _c: &mut Core) -> Result<(), OpError> {
        Ok(())
    }

    fn call(&mut self, c: &mut Core) -> Result<(), OpError> {
        self.call_n(c, 1)
    }

    fn call_n(&mut self, c: &mut Core, iters: u64) -> Result<(), OpError> {
        let bits = c.input_bytes * 8;
        let digest_bits = c.size(hash::size::DIGEST_BITS) as i32;
        let (msg, digest) = (c.bufs[hash::MSG].ptr(), c.bufs[hash::DIGEST].ptr());
        let mut i = 0;
        while i < iters {
            // SAFETY: buffers have the declared sizes plus canaries.
            let rc = unsafe { (self.hash)(digest_bits, msg, bits, digest) };
            if rc != 0 {
                return failed("CryptHash", rc, &[]);
            }
            i += 1;
        }
        Ok(())
    }

    fn meta_sizes(&self, c: &Core) -> [usize; 6] {
        [0, 0, 0, 0, 0, c.size(hash::size::DIGEST)]
    }

    fn verify(&mut self, c: &mut Core) -> Result<Vec<VerifyValue>, OpError> {
        self.call(c)?;
        Ok(vec![value(
            "a fresh digest of the message",
            hex_of(&c.bufs[hash::DIGEST]),
            buffer_file(hash::DIGEST),
        )])
    }
}

struct Kex {
    f: KexFns,
    /// The step timed alone (`Whole`: the whole exchange).
    step: KexStep,
}

impl Kex {
    fn load(lib: &Lib) -> Result<Kex, OpError> {
        Ok(Kex {
            f: KexFns {
                init_a: sym(lib, "ngcc_kex_init_a")?,
                init_b: sym(lib, "ngcc_kex_init_b")?,
                pass: sym(lib, "ngcc_kex_pass")?,
                has_pass: sym(lib, "ngcc_kex_has_pass")?,
                derive_a: sym(lib, "ngcc_kex_derive_a")?,
                derive_b: sym(lib, "ngcc_kex_derive_b")?,
            },
            step: KexStep::Whole,
        })
    }

    /// One complete protocol run (reference §2.4); with `timed`, only that step is
    /// bracketed by the counter and the clock. Returns (passes run, message lengths, ss len).
    fn run(
        &self,
        c: &mut Core,
        timed: Option<(KexStep, &mut Counter)>,
        acc: Option<&mut (u64, u64)>,
    ) -> Result<(u64, Vec<u64>, u64), OpError> {
        let caps = KexCaps::of(c)?;
        let mut clock = StepClock { timed, acc };
        let (mut a, mut b) = Party::both(c, &caps);
        self.init(&mut clock, &caps, &mut a, &mut b)?;
        let msgs = self.passes(&mut clock, &caps, &mut a, &mut b, kex_messages(c))?;
        let ss_len = self.derive(&mut clock, &caps, &a, &b, &msgs)?;
        if c.bufs[KEX_SSA].as_slice()[..ss_len as usize]
            != c.bufs[KEX_SSB].as_slice()[..ss_len as usize]
        {
            return Err(OpError::Refused(
                "the two parties derived different shared secrets".into(),
            ));
        }
        Ok((msgs.passes_run, msgs.lens, ss_len))
    }

    /// Both parties' key pairs and states (`kex_init_a`, `kex_init_b`).
    fn init(
        &self,
        clock: &mut StepClock,
        caps: &KexCaps,
        a: &mut Party,
        b: &mut Party,
    ) -> Result<(), OpError> {
        let f = self.f;
        let want = [caps.pk, caps.sk, caps.sta];
        // SAFETY (all calls below): buffers have the declared capacities plus canaries.
        let rc = clock.time(KexStep::InitA, &mut || unsafe {
            (f.init_a)(
                a.pk,
                &mut a.pk_len,
                a.sk,
                &mut a.sk_len,
                a.st,
                &mut a.st_len,
            )
        });
        kex_init_ok("kex_init_a", rc, &[a.pk_len, a.sk_len, a.st_len], want)?;
        let rc = clock.time(KexStep::InitB, &mut || unsafe {
            (f.init_b)(
                b.pk,
                &mut b.pk_len,
                b.sk,
                &mut b.sk_len,
                b.st,
                &mut b.st_len,
            )
        });
        kex_init_ok(
            "kex_init_b",
            rc,
            &[b.pk_len, b.sk_len, b.st_len],
            [caps.pk, caps.sk, caps.stb],
        )
    }

    /// The passes, A on odd ones and B on even ones, each reading the message before it,
    /// until one says it is the last (1) or the declared count is reached.
    fn passes(
        &self,
        clock: &mut StepClock,
        caps: &KexCaps,
        a: &mut Party,
        b: &mut Party,
        bufs: [*mut u8; 16],
    ) -> Result<Messages, OpError> {
        let f = self.f;
        let declared = caps.passes;
        let mut m = Messages {
            bufs,
            lens: Vec::new(),
            last_a: None,
            last_b: None,
            passes_run: 0,
        };
        for k in 1..=declared.max(3) {
            // SAFETY: plain query.
            if unsafe { (f.has_pass)(k as i32) } == 0 {
                if k <= declared {
                    return Err(OpError::Library(format!(
                        "kex declares {declared} passes but pass {k} is missing"
                    )));
                }
                break;
            }
            let a_side = k % 2 == 1;
            let out = k as usize - 1;
            let (me, peer, st_cap) = if a_side {
                (&mut *a, &*b, caps.sta)
            } else {
                (&mut *b, &*a, caps.stb)
            };
            let (sk, sk_len, peer_pk, peer_len, st) =
                (me.sk, me.sk_len, peer.pk, peer.pk_len, me.st);
            let (inp, inp_len) = match out.checked_sub(1) {
                Some(i) => (m.bufs[i], m.lens[i]),
                None => (std::ptr::null_mut(), 0),
            };
            let mut out_len = 0u64;
            let mut st_len = me.st_len;
            let out_buf = m.bufs[out];
            // SAFETY: buffers have the declared capacities plus canaries.
            let rc = clock.time(KexStep::Pass(k), &mut || unsafe {
                (f.pass)(
                    k as i32,
                    sk,
                    sk_len,
                    peer_pk,
                    peer_len,
                    inp,
                    inp_len,
                    st,
                    &mut st_len,
                    out_buf,
                    &mut out_len,
                )
            });
            me.st_len = st_len;
            if rc < 0 {
                return Err(OpError::Refused(format!("pass {k} returned {rc}")));
            }
            if out_len > caps.msg {
                return Err(OpError::Overflow(format!(
                    "pass {k} returned message length {out_len} > capacity {}",
                    caps.msg
                )));
            }
            fits(&format!("pass {k}"), "state", st_len, st_cap as usize)?;
            m.lens.push(out_len);
            m.passes_run = k as u64;
            if a_side {
                m.last_a = Some(out);
            } else {
                m.last_b = Some(out);
            }
            if rc == 1 {
                if k != declared {
                    return Err(OpError::Refused(format!(
                        "kex finished at pass {k} but declares {declared}"
                    )));
                }
                break;
            }
            if k >= declared {
                break;
            }
        }
        Ok(m)
    }

    /// Each party's shared secret from its keys, the other's public key, the last message
    /// the other sent and its own state; returns A's length (B's must equal it).
    fn derive(
        &self,
        clock: &mut StepClock,
        caps: &KexCaps,
        a: &Party,
        b: &Party,
        m: &Messages,
    ) -> Result<u64, OpError> {
        let f = self.f;
        let last =
            |i: Option<usize>| i.map_or((std::ptr::null_mut(), 0), |i| (m.bufs[i], m.lens[i]));
        let (mb, mb_len) = last(m.last_b);
        let (ma, ma_len) = last(m.last_a);
        let (mut ssa_len, mut ssb_len) = (0u64, 0u64);
        // SAFETY (both calls): buffers have the declared capacities plus canaries.
        let rc = clock.time(KexStep::DeriveA, &mut || unsafe {
            (f.derive_a)(
                a.sk,
                a.sk_len,
                b.pk,
                b.pk_len,
                mb,
                mb_len,
                a.st,
                a.st_len,
                a.ss,
                &mut ssa_len,
            )
        });
        if rc < 0 {
            return Err(OpError::Refused(format!("kex_derive_ss_a returned {rc}")));
        }
        let rc = clock.time(KexStep::DeriveB, &mut || unsafe {
            (f.derive_b)(
                b.sk,
                b.sk_len,
                a.pk,
                a.pk_len,
                ma,
                ma_len,
                b.st,
                b.st_len,
                b.ss,
                &mut ssb_len,
            )
        });
        if rc < 0 {
            return Err(OpError::Refused(format!("kex_derive_ss_b returned {rc}")));
        }
        if ssa_len != ssb_len || ssa_len > caps.ss {
            return Err(OpError::Refused(
                "the two parties derived different shared secrets".into(),
            ));
        }
        Ok(ssa_len)
    }
}

/// KEX buffer layout (`Kex::buffers`): 0 pkA, 1 skA, 2 stA, 3 pkB, 4 skB, 5 stB, 6 ssA,
/// 7 ssB, then the 16 message buffers.
const KEX_A: [usize; 4] = [0, 1, 2, 6];
const KEX_B: [usize; 4] = [3, 4, 5, 7];
const KEX_SSA: usize = KEX_A[3];
const KEX_SSB: usize = KEX_B[3];
const KEX_MSG0: usize = 8;

/// The message buffers of a run, pass k's at k - 1.
fn kex_messages(c: &mut Core) -> [*mut u8; 16] {
    std::array::from_fn(|i| c.bufs[KEX_MSG0 + i].ptr())
}

/// What a KEX library declares (meta sizes 0-6): passes, then capacities in bytes.
struct KexCaps {
    passes: u32,
    pk: u64,
    sk: u64,
    sta: u64,
    stb: u64,
    ss: u64,
    msg: u64,
}

impl KexCaps {
    fn of(c: &Core) -> Result<KexCaps, OpError> {
        let passes = c.size(kex::size::PASSES) as u32;
        if passes > 16 {
            return Err(OpError::Library(format!(
                "kex declares {passes} passes (at most 16)"
            )));
        }
        Ok(KexCaps {
            passes,
            pk: c.size(kex::size::PK) as u64,
            sk: c.size(kex::size::SK) as u64,
            sta: c.size(kex::size::STA) as u64,
            stb: c.size(kex::size::STB) as u64,
            ss: c.size(kex::size::SS) as u64,
            msg: c.size(kex::size::MSG) as u64,
        })
    }
}

/// One party's buffers, and the lengths its calls wrote (capacities before the init).
struct Party {
    pk: *mut u8,
    sk: *mut u8,
    st: *mut u8,
    ss: *mut u8,
    pk_len: u64,
    sk_len: u64,
    st_len: u64,
}

impl Party {
    fn both(c: &mut Core, caps: &KexCaps) -> (Party, Party) {
        let mut party = |[pk, sk, st, ss]: [usize; 4], st_len: u64| Party {
            pk: c.bufs[pk].ptr(),
            sk: c.bufs[sk].ptr(),
            st: c.bufs[st].ptr(),
            ss: c.bufs[ss].ptr(),
            pk_len: caps.pk,
            sk_len: caps.sk,
            st_len,
        };
        (party(KEX_A, caps.sta), party(KEX_B, caps.stb))
    }
}

/// The messages of a run: buffers, the length of each pass's, the last each side sent.
struct Messages {
    bufs: [*mut u8; 16],
    lens: Vec<u64>,
    last_a: Option<usize>,
    last_b: Option<usize>,
    passes_run: u64,
}

/// Brackets the selected step of a run with the counter and the clock, and adds its
/// (ns, ticks) to `acc`; every other step runs bare.
struct StepClock<'a> {
    timed: Option<(KexStep, &'a mut Counter)>,
    acc: Option<&'a mut (u64, u64)>,
}

impl StepClock<'_> {
    #[inline]
    fn time(&mut self, step: KexStep, f: &mut dyn FnMut() -> i32) -> i32 {
        match &mut self.timed {
            Some((want, counter)) if *want == step => {
                // The counter brackets the step tightly; the clock reads sit outside it
                // (for a step of a few hundred cycles they would dominate). One bracket
                // around nothing first: the rest of the protocol run has evicted the
                // clock's and counter's code and data, and a cold clock read would add
                // tens of ns to the seconds only (the empty brackets subtracted are warm).
                std::hint::black_box(monotonic_raw_ns());
                counter.start();
                std::hint::black_box(counter.stop());
                let t0 = monotonic_raw_ns();
                counter.start();
                let rc = f();
                let c = counter.stop();
                let t1 = monotonic_raw_ns();
                if let Some(a) = self.acc.as_deref_mut() {
                    a.0 += t1 - t0;
                    a.1 += c;
                }
                rc
            }
            _ => f(),
        }
    }
}

impl Operation for Kex {
    fn select(&mut self, op: &Op) -> bool {
        match KexStep::of(op) {
            Some(step) => {
                self.step = step;
                true
            }
            None => false,
        }
    }

    /// 0 pkA, 1 skA, 2 stA, 3 pkB, 4 skB, 5 stB, 6 ssA, 7 ssB, 8.. 16 message buffers.
    fn buffers(&self, c: &Core) -> Vec<Guarded> {
        let (pk, sk, sta, stb, ss, msg) = (
            c.size(kex::size::PK),
            c.size(kex::size::SK),
            c.size(kex::size::STA),
            c.size(kex::size::STB),
            c.size(kex::size::SS),
            c.size(kex::size::MSG),
        );
        let mut v = vec![
            Guarded::new("pka", pk),
            Guarded::new("ska", sk),
            Guarded::new("sta", sta),
            Guarded::new("pkb", pk),
            Guarded::new("skb", sk),
            Guarded::new("stb", stb),
            Guarded::new("ssa", ss),
            Guarded::new("ssb", ss),
        ];
        for _ in 0..16 {
            v.push(Guarded::new("msg", msg));
        }
        v
    }

    fn build_setup(&mut self, c: &mut Core) -> Result<(), OpError> {
        let facts = self.run(c, None, None)?;
        c.facts.kex_passes_run = facts.0;
        c.facts.kex_msg_lens = facts.1;
        c.facts.kex_ss_len = facts.2;
        Ok(())
    }

    /// The whole exchange, whichever step is timed.
    #[inline]
    fn call(&mut self, c: &mut Core) -> Result<(), OpError> {
        self.run(c, None, None).map(|_| ())
    }

    /// One protocol run timing only the selected step: (ns, ticks) of that step.
    fn call_step(&mut self, c: &mut Core, counter: &mut Counter) -> Result<(u64, u64), OpError> {
        let mut acc = (0u64, 0u64);
        self.run(c, Some((self.step, counter)), Some(&mut acc))?;
        Ok(acc)
    }

    fn timing_scope(&self) -> TimingScope {
        match self.step {
            KexStep::Whole => TimingScope::Loop,
            _ => TimingScope::PerCallStep,
        }
    }

    fn meta_sizes(&self, c: &Core) -> [usize; 6] {
        [
            c.size(kex::size::PK),
            c.size(kex::size::SK),
            0,
            c.size(kex::size::SS),
            0,
            0,
        ]
    }

    fn meta_protocol(&self, c: &Core) -> Vec<(String, String)> {
        let mut out = vec![
            (
                "kex_passes".to_string(),
                c.size(kex::size::PASSES).to_string(),
            ),
            (
                "kex_passes_run".to_string(),
                c.facts.kex_passes_run.to_string(),
            ),
            ("sta_bytes".to_string(), c.size(kex::size::STA).to_string()),
            ("stb_bytes".to_string(), c.size(kex::size::STB).to_string()),
        ];
        for (k, len) in c.facts.kex_msg_lens.iter().enumerate() {
            out.push((format!("msg{}_bytes", k + 1), len.to_string()));
        }
        out.push((
            "total_msg_bytes".to_string(),
            c.facts.kex_msg_lens.iter().sum::<u64>().to_string(),
        ));
        out.push((
            "ss_actual_bytes".to_string(),
            c.facts.kex_ss_len.to_string(),
        ));
        out
    }
}

/// One prepared operation of one library: its kind's calls over its buffers.
pub struct Runner<'l> {
    lib: &'l Lib,
    core: Core,
    kind: Box<dyn Operation>,
}

impl<'l> Runner<'l> {
    /// Prepares `op`: loads the saved setup from `setup_dir` when present, else builds it
    /// (and saves it when `save` is true).
    pub fn prepare(
        lib: &'l Lib,
        kind: Kind,
        op: &Op,
        input_bytes: u64,
        setup_dir: &Path,
        save: bool,
    ) -> Result<Runner<'l>, OpError> {
        let mut ops: Box<dyn Operation> = match kind {
            Kind::Kem => Box::new(Kem::load(lib)?),
            Kind::Sig => Box::new(Sig::load(lib)?),
            Kind::Kex => Box::new(Kex::load(lib)?),
            Kind::Hash => Box::new(Hash {
                hash: sym(lib, "ngcc_hash")?,
            }),
        };
        let n = lib.meta.sizes.len();
        let sizes = (0..n).map(|i| lib.size(i)).collect::<Result<Vec<_>, _>>()?;
        if !ops.select(op) {
            return Err(OpError::Library(format!(
                "operation {:?} does not exist for a {}",
                op.name(),
                kind.as_str()
            )));
        }
        let mut r = Runner {
            lib,
            core: Core {
                op: op.clone(),
                input_bytes,
                facts: SetupFacts::default(),
                bufs: Vec::new(),
                sizes,
            },
            kind: ops,
        };
        let facts_path = setup_dir.join("setup.json");
        if facts_path.is_file() {
            r.core.facts = crate::util::read_json(&facts_path)
                .map_err(|e| OpError::Setup(format!("{e:#}")))?;
            r.load_buffers(setup_dir)?;
        } else {
            let t = monotonic_raw_ns();
            r.core.bufs = r.kind.buffers(&r.core);
            r.kind.build_setup(&mut r.core)?;
            r.core.facts.prepare_s = (monotonic_raw_ns() - t) as f64 / 1e9;
            // Name the setup, not the timed op, when setup calls wrote out of bounds.
            for b in &r.core.bufs {
                b.check(&format!("setup for {}", op.name()))?;
            }
            if save {
                r.save(setup_dir)?;
            }
        }
        Ok(r)
    }

    pub fn facts(&self) -> &SetupFacts {
        &self.core.facts
    }

    /// Writes every buffer and the setup facts into `dir` (the setup layout).
    pub fn save(&self, dir: &Path) -> Result<(), OpError> {
        let io = |e: anyhow::Error| OpError::Setup(format!("saving setup: {e:#}"));
        for (i, b) in self.core.bufs.iter().enumerate() {
            crate::util::atomic_write(&dir.join(format!("buf{i}.bin")), b.as_slice())
                .map_err(io)?;
        }
        crate::util::write_json(&dir.join("setup.json"), &self.core.facts).map_err(io)
    }

    fn load_buffers(&mut self, dir: &Path) -> Result<(), OpError> {
        self.core.bufs = self.kind.buffers(&self.core);
        for (i, b) in self.core.bufs.iter_mut().enumerate() {
            let path = dir.join(format!("buf{i}.bin"));
            let data = std::fs::read(&path)
                .map_err(|e| OpError::Setup(format!("loading setup {}: {e}", path.display())))?;
            if data.len() != b.len() {
                return Err(OpError::Setup(format!(
                    "setup {} has {} bytes, the library declares {}",
                    path.display(),
                    data.len(),
                    b.len()
                )));
            }
            b.as_mut_slice().copy_from_slice(&data);
        }
        Ok(())
    }

    /// The buffers, in the kind's layout (ct jobs mark secrets and replace inputs).
    pub fn buffers_mut(&mut self) -> &mut [Guarded] {
        &mut self.core.bufs
    }

    /// What the loaded outputs must satisfy, recomputed (`Operation::verify`).
    pub fn verify(&mut self) -> Result<Vec<VerifyValue>, OpError> {
        self.kind.verify(&mut self.core)
    }

    /// Canary check over every buffer (after a trial).
    pub fn check_guards(&self) -> Result<(), OpError> {
        for b in &self.core.bufs {
            b.check(&self.core.op.name())?;
        }
        Ok(())
    }

    /// One operation, as the timing loop runs it.
    #[inline]
    pub fn call(&mut self) -> Result<(), OpError> {
        self.kind.call(&mut self.core)
    }

    /// `iters` operations back to back: the timed loop (`Operation::call_n`).
    pub fn call_n(&mut self, iters: u64) -> Result<(), OpError> {
        self.kind.call_n(&mut self.core, iters)
    }

    /// One call timing only its measured part (KEX: the selected step): (ns, ticks).
    pub fn call_step(&mut self, counter: &mut Counter) -> Result<(u64, u64), OpError> {
        self.kind.call_step(&mut self.core, counter)
    }

    pub fn timing_scope(&self) -> TimingScope {
        self.kind.timing_scope()
    }

    /// META of the reference driver (§2.5), values as strings, in its order.
    pub fn meta(
        &self,
        counter: &CounterKind,
        warmups: u64,
        baseline_rss: u64,
        peak_rss: u64,
        count: u64,
    ) -> Map<String, Value> {
        let m = &self.lib.meta;
        let c = &self.core;
        let mut out = Map::new();
        let mut put = |k: &str, v: String| {
            out.insert(k.to_string(), Value::String(v));
        };
        put("id", m.id.clone());
        put("instance", m.instance.clone());
        put("variant", m.variant.clone());
        put("operation", c.op.name());
        put("input_bytes", c.input_bytes.to_string());
        put("build_flags", m.build_flags.clone());
        put("baseline_rss_bytes", baseline_rss.to_string());
        let sizes = self.kind.meta_sizes(c);
        for (k, v) in [
            "pk_bytes",
            "sk_bytes",
            "ct_bytes",
            "ss_bytes",
            "signature_bytes",
            "digest_bytes",
        ]
        .into_iter()
        .zip(sizes)
        {
            put(k, v.to_string());
        }
        for (k, v) in self.kind.meta_protocol(c) {
            put(&k, v);
        }
        put("mode", "fixed_iterations".into());
        put(
            "cpu_cycles_available",
            if counter.counts_core_cycles() {
                "yes"
            } else {
                "no"
            }
            .into(),
        );
        put("timing_scope", self.timing_scope().to_string());
        put("warmups", warmups.to_string());
        for (k, v) in self.kind.meta_counts(c) {
            put(&k, v);
        }
        put("peak_rss_bytes", peak_rss.to_string());
        put("measurement_count", count.to_string());
        put(
            "guide_100_measurements",
            if count >= 100 { "met" } else { "not_met" }.into(),
        );
        put("counter", counter.to_string());
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_length_over_its_capacity_is_an_overflow_in_the_reference_words() {
        assert_eq!(fits("enc", "ct", 4, 4), Ok(()));
        let e = fits("enc", "ct", 5, 4).unwrap_err();
        assert!(matches!(e, OpError::Overflow(_)));
        assert_eq!(
            e.to_string(),
            "OVERFLOW: enc returned ct length 5 > declared 4"
        );
    }

    #[test]
    fn a_return_code_is_a_refusal_and_wins_over_the_lengths() {
        let e = failed("dec", -1, &[("ss", 99, 32)]).unwrap_err();
        assert_eq!(e, OpError::Refused("dec returned -1".into()));
        let e = failed("dec", 0, &[("ss", 99, 32)]).unwrap_err();
        assert!(matches!(e, OpError::Overflow(_)), "{e:?}");
        assert_eq!(failed("dec", 0, &[("ss", 32, 32)]), Ok(()));
    }

    #[test]
    fn kex_init_checks_code_then_every_length() {
        assert!(matches!(
            kex_init_ok("init_a", -2, &[1, 1, 1], [1, 1, 1]),
            Err(OpError::Refused(_))
        ));
        let e = kex_init_ok("init_a", 0, &[1, 1, 9], [1, 1, 8]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "OVERFLOW: init_a returned state length 9 > declared 8"
        );
    }
}
