//! One operation of one library, prepared deterministically (reference-harness.md §2.3–§2.4)
//! and callable in a loop. Setup that is expensive (key pairs, ciphertexts, signatures) is
//! done once per instance and operation and saved, so every trial process loads it.

use super::guard::Guarded;
use super::library::*;
use super::rng;
use crate::candidate::{Api, Kind};
use crate::measure::counter::{Counter, monotonic_raw_ns};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
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

/// A length the candidate returned must fit the buffer it declared (reference §6.1:
/// "returned length > claimed" is an OVERFLOW).
fn fits(op: &str, what: &str, got: u64, declared: usize) -> Result<(), String> {
    if got > declared as u64 {
        return Err(format!(
            "OVERFLOW: {op} returned {what} length {got} > declared {declared}"
        ));
    }
    Ok(())
}

/// A KEX init's return code, then its pk, sk and state lengths against their capacities.
fn kex_init_ok(op: &str, rc: i32, lens: &[u64], caps: [u64; 3]) -> Result<(), String> {
    if rc < 0 {
        return Err(format!("{op} returned {rc}"));
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

enum Fns {
    Kem {
        keygen: KeypairFn,
        enc: KemOpFn,
        dec: KemDecFn,
    },
    Sig {
        keygen: KeypairFn,
        sign: SignFn,
        verify: VerifyFn,
    },
    Kex(KexFns),
    Hash(HashFn),
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
    pub fn parse(op: &str) -> Option<KexStep> {
        Some(match op {
            "exchange" => KexStep::Whole,
            "init_a" => KexStep::InitA,
            "init_b" => KexStep::InitB,
            "derive_a" => KexStep::DeriveA,
            "derive_b" => KexStep::DeriveB,
            p => KexStep::Pass(
                p.strip_prefix("pass")?
                    .parse()
                    .ok()
                    .filter(|k| (1..=16).contains(k))?,
            ),
        })
    }
}

/// The operation `call()` runs, resolved from (kind, op name) when the runner is prepared.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Call {
    Keygen,
    Enc,
    Dec,
    Sign,
    Verify,
    Hash,
    Exchange,
}

impl Call {
    fn of(kind: Kind, op: &str) -> Call {
        match (kind, op) {
            (Kind::Kem | Kind::Sig, "keygen") => Call::Keygen,
            (Kind::Kem, "enc") => Call::Enc,
            (Kind::Kem, _) => Call::Dec,
            (Kind::Sig, "sign") => Call::Sign,
            (Kind::Sig, _) => Call::Verify,
            (Kind::Hash, _) => Call::Hash,
            (Kind::Kex, _) => Call::Exchange,
        }
    }
}

pub struct Runner<'l> {
    call: Call,
    lib: &'l Lib,
    fns: Fns,
    pub kind: Kind,
    pub op: String,
    pub input_bytes: u64,
    pub facts: SetupFacts,
    pub kex_step: Option<KexStep>,
    bufs: Vec<Guarded>,
    sizes: Vec<usize>,
    /// Counters reported in META (reference §2.5).
    pub sign_failures_retried: u64,
    pub verify_rejections: u64,
    pub kex_passes_run: u64,
}

/// Seeds the library's randomness: ICCS `ngcc_seed`, NIST a CTR_DRBG behind randombytes.
pub fn seed_library(lib: &Lib, api: Api, tweak: u8, rng_kind: Option<&str>) -> Result<(), String> {
    let seed = perf_seed(tweak);
    match api {
        Api::Iccs => {
            let f: SeedFn = lib.func("ngcc_seed")?;
            // SAFETY: the shim's ngcc_seed reads `len` bytes.
            let rc = unsafe { f(seed.as_ptr(), seed.len() as u64) };
            if rc != 0 {
                return Err(format!("ngcc_seed returned {rc}"));
            }
        }
        Api::Nist => {
            let set: SetRandombytesFn = lib.func("ngcc_set_randombytes")?;
            // SAFETY: host_randombytes matches the callback type.
            unsafe { set(rng::host_randombytes) };
            match rng_kind {
                Some("counter") => rng::install(Box::new(rng::CounterBytes(0))),
                _ => rng::install(rng::seeded("nist", &seed)),
            }
        }
    }
    Ok(())
}

impl<'l> Runner<'l> {
    /// Prepares `op`: loads the saved setup from `setup_dir` when present, else builds it
    /// (and saves it when `save` is true).
    pub fn prepare(
        lib: &'l Lib,
        kind: Kind,
        op: &str,
        input_bytes: u64,
        setup_dir: &Path,
        save: bool,
    ) -> Result<Runner<'l>, String> {
        let fns = match kind {
            Kind::Kem => Fns::Kem {
                keygen: lib.func("ngcc_kem_keygen")?,
                enc: lib.func("ngcc_kem_enc")?,
                dec: lib.func("ngcc_kem_dec")?,
            },
            Kind::Sig => Fns::Sig {
                keygen: lib.func("ngcc_sig_keygen")?,
                sign: lib.func("ngcc_sig_sign")?,
                verify: lib.func("ngcc_sig_verify")?,
            },
            Kind::Kex => Fns::Kex(KexFns {
                init_a: lib.func("ngcc_kex_init_a")?,
                init_b: lib.func("ngcc_kex_init_b")?,
                pass: lib.func("ngcc_kex_pass")?,
                has_pass: lib.func("ngcc_kex_has_pass")?,
                derive_a: lib.func("ngcc_kex_derive_a")?,
                derive_b: lib.func("ngcc_kex_derive_b")?,
            }),
            Kind::Hash => Fns::Hash(lib.func("ngcc_hash")?),
        };
        let n = lib.meta.sizes.len();
        let sizes = (0..n).map(|i| lib.size(i)).collect::<Result<Vec<_>, _>>()?;
        let valid = match kind {
            Kind::Kem => ["keygen", "enc", "dec"].contains(&op),
            Kind::Sig => ["keygen", "sign", "verify"].contains(&op),
            Kind::Kex => KexStep::parse(op).is_some(),
            Kind::Hash => op == "hash",
        };
        if !valid {
            return Err(format!(
                "operation {op:?} does not exist for a {}",
                kind.as_str()
            ));
        }
        let mut r = Runner {
            lib,
            fns,
            kind,
            call: Call::of(kind, op),
            op: op.to_string(),
            input_bytes,
            facts: SetupFacts::default(),
            kex_step: KexStep::parse(op).filter(|_| kind == Kind::Kex),
            bufs: Vec::new(),
            sizes,
            sign_failures_retried: 0,
            verify_rejections: 0,
            kex_passes_run: 0,
        };
        let facts_path = setup_dir.join("setup.json");
        if facts_path.is_file() {
            r.facts = crate::util::read_json(&facts_path).map_err(|e| format!("{e:#}"))?;
            r.load_buffers(setup_dir)?;
        } else {
            let t = monotonic_raw_ns();
            r.build_setup()?;
            r.facts.prepare_s = (monotonic_raw_ns() - t) as f64 / 1e9;
            // Name the setup, not the timed op, when setup calls wrote out of bounds.
            for b in &r.bufs {
                b.check(&format!("setup for {op}"))
                    .map_err(|e| format!("OVERFLOW: {e}"))?;
            }
            if save {
                r.save(setup_dir)?;
            }
        }
        Ok(r)
    }

    fn size(&self, i: usize) -> usize {
        self.sizes.get(i).copied().unwrap_or(0)
    }

    /// Buffer layout per kind (index into `bufs`):
    /// kem: 0 pk, 1 sk, 2 ct, 3 ss, 4 ss2; sig: 0 pk, 1 sk, 2 msg, 3 sig;
    /// hash: 0 msg, 1 digest; kex: see `kex_buffers`.
    fn fresh_buffers(&mut self) {
        self.bufs = match self.kind {
            Kind::Kem => vec![
                Guarded::new("pk", self.size(0)),
                Guarded::new("sk", self.size(1)),
                Guarded::new("ct", self.size(2)),
                Guarded::new("ss", self.size(3)),
                Guarded::new("ss", self.size(3)),
            ],
            Kind::Sig => vec![
                Guarded::new("pk", self.size(0)),
                Guarded::new("sk", self.size(1)),
                Guarded::with("m", &sig_message()),
                Guarded::new("sn", self.size(2)),
            ],
            Kind::Hash => vec![
                Guarded::with("msg", &hash_message(self.input_bytes)),
                Guarded::new("digest", self.size(1)),
            ],
            Kind::Kex => self.kex_buffers(),
        };
    }

    /// kex: 0 pkA, 1 skA, 2 stA, 3 pkB, 4 skB, 5 stB, 6 ssA, 7 ssB, 8.. 16 message buffers.
    fn kex_buffers(&self) -> Vec<Guarded> {
        let (pk, sk, sta, stb, ss, msg) = (
            self.size(1),
            self.size(2),
            self.size(3),
            self.size(4),
            self.size(5),
            self.size(6),
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

    fn build_setup(&mut self) -> Result<(), String> {
        self.fresh_buffers();
        match (self.kind, self.op.as_str()) {
            (Kind::Kem, "enc") => self.keygen(),
            (Kind::Kem, "dec") => {
                self.keygen()?;
                self.kem_enc()?;
                self.kem_dec()?;
                if self.bufs[3].as_slice() != self.bufs[4].as_slice() {
                    return Err("honest decapsulation mismatch; refusing timing".into());
                }
                Ok(())
            }
            (Kind::Sig, "sign") => self.keygen(),
            (Kind::Sig, "verify") => {
                self.keygen()?;
                self.honest_signature()
            }
            (Kind::Kex, _) => {
                let facts = self.kex_run(None, None)?;
                self.facts.kex_passes_run = facts.0;
                self.facts.kex_msg_lens = facts.1;
                self.facts.kex_ss_len = facts.2;
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// Writes every buffer and the setup facts into `dir` (the setup layout).
    pub fn save(&self, dir: &Path) -> Result<(), String> {
        let io = |e: anyhow::Error| format!("saving setup: {e:#}");
        for (i, b) in self.bufs.iter().enumerate() {
            crate::util::atomic_write(&dir.join(format!("buf{i}.bin")), b.as_slice())
                .map_err(io)?;
        }
        crate::util::write_json(&dir.join("setup.json"), &self.facts).map_err(io)
    }

    fn load_buffers(&mut self, dir: &Path) -> Result<(), String> {
        self.fresh_buffers();
        for (i, b) in self.bufs.iter_mut().enumerate() {
            let path = dir.join(format!("buf{i}.bin"));
            let data = std::fs::read(&path)
                .map_err(|e| format!("loading setup {}: {e}", path.display()))?;
            if data.len() != b.len() {
                return Err(format!(
                    "setup {} has {} bytes, the library declares {}",
                    path.display(),
                    data.len(),
                    b.len()
                ));
            }
            b.as_mut_slice().copy_from_slice(&data);
        }
        Ok(())
    }

    /// Canary check over every buffer (after a trial).
    pub fn check_guards(&self) -> Result<(), String> {
        for b in &self.bufs {
            b.check(&self.op)?;
        }
        Ok(())
    }

    /// One operation, as the timing loop runs it.
    #[inline]
    pub fn call(&mut self) -> Result<(), String> {
        // Resolved once in `prepare`: no string comparison inside the timing loop.
        match self.call {
            Call::Keygen => self.keygen(),
            Call::Enc => self.kem_enc(),
            Call::Dec => self.kem_dec(),
            Call::Sign => self.sig_sign().map(|_| ()),
            Call::Verify => self.sig_verify(),
            Call::Hash => self.hash(),
            Call::Exchange => self.kex_run(None, None).map(|_| ()),
        }
    }

    /// One protocol run timing only the selected step: returns (ns, ticks) of that step.
    pub fn call_step(&mut self, counter: &mut Counter) -> Result<(u64, u64), String> {
        let mut acc = (0u64, 0u64);
        let step = self.kex_step.unwrap_or(KexStep::Whole);
        self.kex_run(Some((step, counter)), Some(&mut acc))?;
        Ok(acc)
    }

    pub fn timing_scope(&self) -> &'static str {
        match self.kex_step {
            Some(KexStep::Whole) | None => "loop",
            Some(_) => "per_call_step",
        }
    }

    /// KEM and SIG keygen alike: pk and sk are buffers 0 and 1.
    fn keygen(&mut self) -> Result<(), String> {
        let (Fns::Kem { keygen, .. } | Fns::Sig { keygen, .. }) = self.fns else {
            unreachable!()
        };
        let (mut l1, mut l2) = (0u64, 0u64);
        let (pk, sk) = (self.bufs[0].ptr(), self.bufs[1].ptr());
        // SAFETY: buffers have the declared sizes plus canaries.
        let rc = unsafe { keygen(pk, &mut l1, sk, &mut l2) };
        if rc != 0 {
            return Err(format!("keygen returned {rc}"));
        }
        fits("keygen", "pk", l1, self.size(0))?;
        fits("keygen", "sk", l2, self.size(1))
    }

    fn kem_enc(&mut self) -> Result<(), String> {
        let Fns::Kem { enc, .. } = self.fns else {
            unreachable!()
        };
        let (mut l1, mut l2) = (0u64, 0u64);
        let pk_len = self.size(0) as u64;
        let (pk, ss, ct) = (self.bufs[0].ptr(), self.bufs[3].ptr(), self.bufs[2].ptr());
        // SAFETY: as above.
        let rc = unsafe { enc(pk, pk_len, ss, &mut l1, ct, &mut l2) };
        if rc != 0 {
            return Err(format!("enc returned {rc}"));
        }
        fits("enc", "ss", l1, self.size(3))?;
        fits("enc", "ct", l2, self.size(2))
    }

    fn kem_dec(&mut self) -> Result<(), String> {
        let Fns::Kem { dec, .. } = self.fns else {
            unreachable!()
        };
        let mut l = 0u64;
        let (sk_len, ct_len) = (self.size(1) as u64, self.size(2) as u64);
        let (sk, ct, ss) = (self.bufs[1].ptr(), self.bufs[2].ptr(), self.bufs[4].ptr());
        // SAFETY: as above.
        let rc = unsafe { dec(sk, sk_len, ct, ct_len, ss, &mut l) };
        if rc != 0 {
            return Err(format!("dec returned {rc}"));
        }
        fits("dec", "ss", l, self.size(3))?;
        if l as usize != self.size(3) {
            return Err(format!(
                "dec returned shared secret length {l}, declared {}",
                self.size(3)
            ));
        }
        Ok(())
    }

    /// Signs the message, retrying API failures (up to 64 attempts, each counted).
    fn sig_sign(&mut self) -> Result<u64, String> {
        let Fns::Sig { sign, .. } = self.fns else {
            unreachable!()
        };
        let sk_len = self.size(1) as u64;
        let m_len = self.bufs[2].len() as u64;
        for _ in 0..64 {
            let mut len = 0u64;
            let (sk, m, sn) = (self.bufs[1].ptr(), self.bufs[2].ptr(), self.bufs[3].ptr());
            // SAFETY: as above.
            let rc = unsafe { sign(sk, sk_len, m, m_len, sn, &mut len) };
            if rc == 0 {
                fits("sign", "signature", len, self.size(2))?;
                return Ok(len);
            }
            self.sign_failures_retried += 1;
        }
        Err("sign failed 64 times in a row".into())
    }

    /// Setup for verify: an honest signature that verifies (up to 16 message tweaks × 16 attempts).
    fn honest_signature(&mut self) -> Result<(), String> {
        for _ in 0..16 {
            let signed = self.sig_sign();
            // A broken length is not bad luck with one message: no point in tweaking it.
            if let Err(e) = &signed
                && e.starts_with("OVERFLOW")
            {
                return Err(e.clone());
            }
            if let Ok(len) = signed {
                self.facts.sign_failures_retried = self.sign_failures_retried;
                self.facts.signature_len = len;
                self.sig_verify()?;
                if self.verify_rejections > 0 {
                    self.facts.setup_verify_failed = 1;
                    return Err("an honest signature did not verify; refusing timing".into());
                }
                return Ok(());
            }
            self.facts.message_tweaks += 1;
            let last = self.bufs[2].len() - 1;
            self.bufs[2].as_mut_slice()[last] = self.bufs[2].as_slice()[last].wrapping_add(1);
        }
        Err("no honest signature after 16 message tweaks".into())
    }

    fn sig_verify(&mut self) -> Result<(), String> {
        let Fns::Sig { verify, .. } = self.fns else {
            unreachable!()
        };
        let pk_len = self.size(0) as u64;
        let sig_len = self.facts.signature_len;
        let m_len = self.bufs[2].len() as u64;
        let (pk, sn, m) = (self.bufs[0].ptr(), self.bufs[3].ptr(), self.bufs[2].ptr());
        // SAFETY: as above.
        let rc = unsafe { verify(pk, pk_len, sn, sig_len, m, m_len) };
        if rc != 0 {
            self.verify_rejections += 1;
        }
        Ok(())
    }

    fn hash(&mut self) -> Result<(), String> {
        let Fns::Hash(hash) = self.fns else {
            unreachable!()
        };
        let bits = self.input_bytes * 8;
        let digest_bits = self.size(0) as i32;
        let (msg, digest) = (self.bufs[0].ptr(), self.bufs[1].ptr());
        // SAFETY: as above.
        let rc = unsafe { hash(digest_bits, msg, bits, digest) };
        if rc != 0 {
            return Err(format!("CryptHash returned {rc}"));
        }
        Ok(())
    }

    /// One complete protocol run (reference §2.4); with `timed`, only that step is
    /// bracketed by the counter and the clock. Returns (passes run, message lengths, ss len).
    fn kex_run(
        &mut self,
        mut timed: Option<(KexStep, &mut Counter)>,
        mut acc: Option<&mut (u64, u64)>,
    ) -> Result<(u64, Vec<u64>, u64), String> {
        let Fns::Kex(f) = self.fns else {
            unreachable!()
        };
        let declared = self.size(0) as u32;
        if declared > 16 {
            return Err(format!("kex declares {declared} passes (at most 16)"));
        }
        let cap = self.size(6) as u64;
        let ss_cap = self.size(5) as u64;
        let (pk_cap, sk_cap, sta_cap, stb_cap) = (
            self.size(1) as u64,
            self.size(2) as u64,
            self.size(3) as u64,
            self.size(4) as u64,
        );
        let mut lens = [0u64; 8];
        let mut time = |step: KexStep,
                        timed: &mut Option<(KexStep, &mut Counter)>,
                        f: &mut dyn FnMut() -> i32|
         -> i32 {
            match timed {
                Some((want, counter)) if *want == step => {
                    // The counter brackets the step tightly; the clock reads sit outside it
                    // (for a step of a few hundred cycles they would dominate).
                    let t0 = monotonic_raw_ns();
                    counter.start();
                    let rc = f();
                    let c = counter.stop();
                    let t1 = monotonic_raw_ns();
                    if let Some(a) = acc.as_deref_mut() {
                        a.0 += t1 - t0;
                        a.1 += c;
                    }
                    rc
                }
                _ => f(),
            }
        };
        let b = &mut self.bufs;
        let p: Vec<*mut u8> = b.iter_mut().map(|g| g.ptr()).collect();
        // lens: 0 pka, 1 ska, 2 sta, 3 pkb, 4 skb, 5 stb, 6 ssa, 7 ssb
        lens[2] = sta_cap;
        lens[5] = stb_cap;
        lens[0] = pk_cap;
        lens[1] = sk_cap;
        lens[3] = pk_cap;
        lens[4] = sk_cap;
        // SAFETY (all calls below): buffers have the declared capacities plus canaries.
        let rc = time(KexStep::InitA, &mut timed, &mut || unsafe {
            (f.init_a)(p[0], &mut lens[0], p[1], &mut lens[1], p[2], &mut lens[2])
        });
        kex_init_ok("kex_init_a", rc, &lens[0..3], [pk_cap, sk_cap, sta_cap])?;
        let rc = time(KexStep::InitB, &mut timed, &mut || unsafe {
            (f.init_b)(p[3], &mut lens[3], p[4], &mut lens[4], p[5], &mut lens[5])
        });
        kex_init_ok("kex_init_b", rc, &lens[3..6], [pk_cap, sk_cap, stb_cap])?;
        let mut msg_lens: Vec<u64> = Vec::new();
        let (mut last_a, mut last_b): (Option<usize>, Option<usize>) = (None, None);
        let mut passes_run = 0u64;
        for k in 1..=declared.max(3) {
            // SAFETY: plain query.
            if unsafe { (f.has_pass)(k as i32) } == 0 {
                if k <= declared {
                    return Err(format!(
                        "kex declares {declared} passes but pass {k} is missing"
                    ));
                }
                break;
            }
            let a_side = k % 2 == 1;
            let out = 8 + (k as usize - 1);
            let prev = if k > 1 {
                Some(8 + (k as usize - 2))
            } else {
                None
            };
            let (sk, sk_len, peer, st, st_i) = if a_side {
                (p[1], lens[1], p[3], p[2], 2)
            } else {
                (p[4], lens[4], p[0], p[5], 5)
            };
            let peer_len = if a_side { lens[3] } else { lens[0] };
            let (inp, inp_len) = match prev {
                Some(i) => (p[i], msg_lens[i - 8]),
                None => (std::ptr::null_mut(), 0),
            };
            let mut out_len = 0u64;
            let mut st_len = lens[st_i];
            let rc = time(KexStep::Pass(k), &mut timed, &mut || unsafe {
                (f.pass)(
                    k as i32,
                    sk,
                    sk_len,
                    peer,
                    peer_len,
                    inp,
                    inp_len,
                    st,
                    &mut st_len,
                    p[out],
                    &mut out_len,
                )
            });
            lens[st_i] = st_len;
            if rc < 0 {
                return Err(format!("pass {k} returned {rc}"));
            }
            if out_len > cap {
                return Err(format!(
                    "OVERFLOW: pass {k} returned message length {out_len} > capacity {cap}"
                ));
            }
            fits(
                &format!("pass {k}"),
                "state",
                st_len,
                (if a_side { sta_cap } else { stb_cap }) as usize,
            )?;
            msg_lens.push(out_len);
            passes_run = k as u64;
            if a_side {
                last_a = Some(out);
            } else {
                last_b = Some(out);
            }
            if rc == 1 {
                if k != declared {
                    return Err(format!("kex finished at pass {k} but declares {declared}"));
                }
                break;
            }
            if k >= declared {
                break;
            }
        }
        let (mb, mb_len) = last_b.map_or((std::ptr::null_mut(), 0), |i| (p[i], msg_lens[i - 8]));
        let (ma, ma_len) = last_a.map_or((std::ptr::null_mut(), 0), |i| (p[i], msg_lens[i - 8]));
        let (mut ssa_len, mut ssb_len) = (0u64, 0u64);
        let (sta_len, stb_len) = (lens[2], lens[5]);
        let rc = time(KexStep::DeriveA, &mut timed, &mut || unsafe {
            (f.derive_a)(
                p[1],
                lens[1],
                p[3],
                lens[3],
                mb,
                mb_len,
                p[2],
                sta_len,
                p[6],
                &mut ssa_len,
            )
        });
        if rc < 0 {
            return Err(format!("kex_derive_ss_a returned {rc}"));
        }
        let rc = time(KexStep::DeriveB, &mut timed, &mut || unsafe {
            (f.derive_b)(
                p[4],
                lens[4],
                p[0],
                lens[0],
                ma,
                ma_len,
                p[5],
                stb_len,
                p[7],
                &mut ssb_len,
            )
        });
        if rc < 0 {
            return Err(format!("kex_derive_ss_b returned {rc}"));
        }
        if ssa_len != ssb_len
            || ssa_len > ss_cap
            || b[6].as_slice()[..ssa_len as usize] != b[7].as_slice()[..ssb_len as usize]
        {
            return Err("the two parties derived different shared secrets".into());
        }
        self.kex_passes_run = passes_run;
        Ok((passes_run, msg_lens, ssa_len))
    }

    /// META of the reference driver (§2.5), values as strings, in its order.
    pub fn meta(
        &self,
        counter: &str,
        warmups: u64,
        baseline_rss: u64,
        peak_rss: u64,
        count: u64,
    ) -> Map<String, Value> {
        let m = &self.lib.meta;
        let mut out = Map::new();
        let mut put = |k: &str, v: String| {
            out.insert(k.to_string(), Value::String(v));
        };
        put("id", m.id.clone());
        put("instance", m.instance.clone());
        put("variant", m.variant.clone());
        put("operation", self.op.clone());
        put("input_bytes", self.input_bytes.to_string());
        put("build_flags", m.build_flags.clone());
        put("baseline_rss_bytes", baseline_rss.to_string());
        let s = |i: usize| self.size(i).to_string();
        let (pk, sk, ct, ss, sig, dg) = match self.kind {
            Kind::Kem => (s(0), s(1), s(2), s(3), "0".into(), "0".into()),
            Kind::Sig => (s(0), s(1), "0".into(), "0".into(), s(2), "0".into()),
            Kind::Kex => (s(1), s(2), "0".into(), s(5), "0".into(), "0".into()),
            Kind::Hash => (
                "0".into(),
                "0".into(),
                "0".into(),
                "0".into(),
                "0".into(),
                s(1),
            ),
        };
        put("pk_bytes", pk);
        put("sk_bytes", sk);
        put("ct_bytes", ct);
        put("ss_bytes", ss);
        put("signature_bytes", sig);
        put("digest_bytes", dg);
        if self.kind == Kind::Kex {
            put("kex_passes", s(0));
            put("kex_passes_run", self.facts.kex_passes_run.to_string());
            put("sta_bytes", s(3));
            put("stb_bytes", s(4));
            for (k, len) in self.facts.kex_msg_lens.iter().enumerate() {
                put(&format!("msg{}_bytes", k + 1), len.to_string());
            }
            put(
                "total_msg_bytes",
                self.facts.kex_msg_lens.iter().sum::<u64>().to_string(),
            );
            put("ss_actual_bytes", self.facts.kex_ss_len.to_string());
        }
        put("mode", "fixed_iterations".into());
        put(
            "cpu_cycles_available",
            if counter == "perf_cycles" {
                "yes"
            } else {
                "no"
            }
            .into(),
        );
        put("timing_scope", self.timing_scope().into());
        put("warmups", warmups.to_string());
        if self.kind == Kind::Sig {
            put(
                "sign_failures_retried",
                self.sign_failures_retried.to_string(),
            );
            put("message_tweaks", self.facts.message_tweaks.to_string());
            put(
                "setup_verify_failed",
                self.facts.setup_verify_failed.to_string(),
            );
            put(
                "signature_length_excess",
                self.facts.signature_length_excess.to_string(),
            );
            put("verify_rejections", self.verify_rejections.to_string());
        }
        put("peak_rss_bytes", peak_rss.to_string());
        put("measurement_count", count.to_string());
        put(
            "guide_100_measurements",
            if count >= 100 { "met" } else { "not_met" }.into(),
        );
        put("counter", counter.into());
        out
    }
}
