//! The official ICCS KAT drivers replayed (iccs-api.md §4): KEM, SIG and KEX files of
//! `count` records, each record re-seeding the library's own algorithm DRNG (`ngcc_seed`)
//! with a seed from the "seed"×16 driver DRNG; the four CryptHash files. Driver-side DRNGs
//! are the Rust model, so a candidate's helpers cannot influence its own seeds or messages.
//!
//! Every buffer is `Guarded` and sized by the getters; a write outside it, or a returned
//! length above the declared one, ends the run with OVERFLOW. After the flow, record 0 is
//! replayed up to its first operation: a different result is a nondeterministic candidate.

use super::guard::Guarded;
use super::kat_common::{Fail, Timer, check_all, fail, load, rc_ok, size};
use super::library::*;
use super::protocol::{KatEnd, KatJob, KatOutput, VectorsJob, VectorsOutput};
use super::rng;
use crate::candidate::{Api, Kind};
use crate::dataset::schema::KatStatus;
use ngcc_iccs::hash_drbg::{self, HashDrbg};
use std::ffi::c_int;
use std::fmt::Write as _;

/// The most KEX passes followed (the harness's limit).
pub const MAX_PASSES: u64 = 16;
/// `ngcc_kex_pass` for a pass the library does not have.
const NO_PASS: c_int = -100;
/// Iterations of the KAT_Loop file.
pub const LOOP_ITERATIONS: u32 = 1_000_000;

/// KEX calls return 0, or 1 from the pass that ends the exchange: a negative code fails.
fn kex_rc_ok(op: &str, rc: c_int) -> Result<(), Fail> {
    if rc < 0 { rc_ok(op, rc) } else { Ok(()) }
}

/// A length the callee wrote, checked against the getter's value.
fn returned(op: &str, what: &str, got: u64, declared: usize) -> Result<usize, Fail> {
    if got > declared as u64 {
        return Err(fail(
            KatStatus::Overflow,
            format!("{op} returned {what} = {got}, more than the declared {declared}"),
        ));
    }
    Ok(got as usize)
}

fn reseed(f: SeedFn, seed: &[u8]) -> Result<(), Fail> {
    super::crash::stage("init_random_number");
    // SAFETY: the shim reads `len` bytes of seed.
    let rc = unsafe { f(seed.as_ptr(), seed.len() as u64) };
    rc_ok("init_random_number", rc)
}

/// KAT text in the official layout: `Key = value`, uppercase hex, a blank line per record.
#[derive(Default)]
struct Text(String);

impl Text {
    fn num(&mut self, key: &str, v: impl std::fmt::Display) {
        let _ = writeln!(self.0, "{key} = {v}");
    }
    fn hex(&mut self, key: &str, bytes: &[u8]) {
        let _ = writeln!(self.0, "{key} = {}", hex::encode_upper(bytes));
    }
    fn header(i: u32, seed: &[u8]) -> Text {
        let mut t = Text::default();
        t.num("Count", i);
        t.num("Seed_Len", seed.len());
        t.hex("Seed", seed);
        t
    }
    fn end(mut self) -> String {
        self.0.push('\n');
        self.0
    }
}

fn write_file(job: &KatJob, out: &mut KatOutput, name: &str, text: &str) -> Result<(), Fail> {
    std::fs::write(job.out_dir.join(name), text)
        .map_err(|e| fail(KatStatus::Crash, format!("writing {name}: {e}")))?;
    out.files.push(name.to_string());
    Ok(())
}

/// `ALGORITHM_INSTANCE` names the files; the official drivers accept only this alphabet.
fn instance_name(lib: &Lib) -> Result<String, Fail> {
    let name = &lib.meta.instance;
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if !ok {
        return Err(fail(
            KatStatus::LoadFail,
            format!("ALGORITHM_INSTANCE {name:?} is not 1-64 characters of [A-Za-z0-9_-]"),
        ));
    }
    Ok(name.clone())
}

/// Runs the flow of `job.kind`; `Err((status, detail))` ends the KAT with that status.
pub fn run(job: &KatJob, lib: &Lib, out: &mut KatOutput) -> Result<(), Fail> {
    let inst = instance_name(lib)?;
    let seed: SeedFn = load(lib, "ngcc_seed")?;
    match job.kind {
        Kind::Kem => {
            let kem = Kem {
                keygen: load(lib, "ngcc_kem_keygen")?,
                enc: load(lib, "ngcc_kem_enc")?,
                dec: load(lib, "ngcc_kem_dec")?,
                seed,
                pk: size(lib, 0)?,
                sk: size(lib, 1)?,
                ct: size(lib, 2)?,
                ss: size(lib, 3)?,
            };
            pkc(
                job,
                out,
                &format!("KAT_KEM_{inst}.txt"),
                false,
                &|i, s, _, first, t| kem.record(i, s, first, t),
            )
        }
        Kind::Sig => {
            let sig = Sig {
                keygen: load(lib, "ngcc_sig_keygen")?,
                sign: load(lib, "ngcc_sig_sign")?,
                verify: load(lib, "ngcc_sig_verify")?,
                seed,
                pk: size(lib, 0)?,
                sk: size(lib, 1)?,
                sn: size(lib, 2)?,
            };
            pkc(
                job,
                out,
                &format!("KAT_SIG_{inst}.txt"),
                true,
                &|i, s, m, first, t| sig.record(i, s, m, first, t),
            )
        }
        Kind::Kex => {
            let passes = lib.meta.sizes.first().copied().unwrap_or(0);
            if passes == 0 || passes > MAX_PASSES {
                return Err(fail(
                    KatStatus::CryptoFail,
                    format!("kex_get_passes_num() = {passes} is outside 1..{MAX_PASSES}"),
                ));
            }
            let kex = Kex {
                init_a: load(lib, "ngcc_kex_init_a")?,
                init_b: load(lib, "ngcc_kex_init_b")?,
                pass: load(lib, "ngcc_kex_pass")?,
                has_pass: load(lib, "ngcc_kex_has_pass")?,
                derive_a: load(lib, "ngcc_kex_derive_a")?,
                derive_b: load(lib, "ngcc_kex_derive_b")?,
                seed,
                passes,
                pk: size(lib, 1)?,
                sk: size(lib, 2)?,
                sta: size(lib, 3)?,
                stb: size(lib, 4)?,
                ss: size(lib, 5)?,
                msg: size(lib, 6)?,
            };
            pkc(
                job,
                out,
                &format!("KAT_KEX_{inst}.txt"),
                false,
                &|i, s, _, first, t| kex.record(i, s, first, t),
            )
        }
        Kind::Hash => {
            let bits = lib.meta.sizes.first().copied().unwrap_or(0);
            let len = size(lib, 1)?;
            if bits == 0 || bits > 8 * 1024 || len == 0 {
                return Err(fail(
                    KatStatus::LoadFail,
                    format!("digest of {bits} bits ({len} bytes) is not usable"),
                ));
            }
            let hash = Hash {
                f: load(lib, "ngcc_hash")?,
                bits: bits as u32,
                len,
            };
            hash.run(job, out, &inst)
        }
    }
}

/// One record: (index, seed, SIG message, stop after the first operation, timer) → text.
type RecordFn<'a> = dyn Fn(u32, &[u8], &[u8], bool, &mut Timer) -> Result<String, Fail> + 'a;

/// The PKC driver loop shared by KEM, SIG and KEX (§3.4): seeds from "seed"×16, SIG messages
/// of 56 + 8i bytes from "msg…m", then the record-0 replay.
fn pkc(
    job: &KatJob,
    out: &mut KatOutput,
    file: &str,
    sig_messages: bool,
    record: &RecordFn,
) -> Result<(), Fail> {
    let mut seeds = HashDrbg::new(&hash_drbg::pkc_seed_nonce());
    let mut msgs = sig_messages.then(|| HashDrbg::new(&hash_drbg::sig_msg_nonce()));
    let mut timer = Timer::default();
    let mut text = String::new();
    let mut first: Option<(Vec<u8>, Vec<u8>, String)> = None;
    for i in 0..job.count {
        let seed = seeds.generate(512);
        let msg = match msgs.as_mut() {
            Some(d) => d.generate(8 * (56 + 8 * u64::from(i))),
            None => Vec::new(),
        };
        let rec = record(i, &seed, &msg, false, &mut timer)
            .map_err(|(s, d)| (s, format!("count {i}: {d}")))?;
        text.push_str(&rec);
        if i == 0 {
            first = Some((seed, msg, rec));
        }
    }
    write_file(job, out, file, &text)?;
    out.timing = timer.averages();
    out.records = job.count;
    if let Some((seed, msg, rec)) = first {
        let again = record(0, &seed, &msg, true, &mut Timer::default())
            .map_err(|(s, d)| (s, format!("replay of count 0: {d}")))?;
        if let Some(key) = first_difference(&rec, &again) {
            return Err(fail(
                KatStatus::Mismatch,
                format!(
                    "nondeterministic: count 0 replayed with the same seed gave a different {key}"
                ),
            ));
        }
    }
    Ok(())
}

/// The key of the first line of `partial` that differs from `full` (None: a prefix; the
/// blank line that ends a partial record is not compared).
fn first_difference(full: &str, partial: &str) -> Option<String> {
    let mut lines = full.lines();
    for l in partial.lines().filter(|l| !l.is_empty()) {
        if lines.next() != Some(l) {
            return Some(l.split(" =").next().unwrap_or(l).to_string());
        }
    }
    None
}

/// A key pair and the lengths keygen returned.
struct Keys {
    pk: Guarded,
    pkl: usize,
    sk: Guarded,
    skl: usize,
}

/// The keygen of a KEM or SIG record (`op` names it): checked, and written to the text.
fn keygen(
    f: KeypairFn,
    op: &str,
    (pk_n, sk_n): (usize, usize),
    t: &mut Text,
    tm: &mut Timer,
) -> Result<Keys, Fail> {
    let (mut pk, mut sk) = (Guarded::new("pk", pk_n), Guarded::new("sk", sk_n));
    let (mut pkl, mut skl) = (pk_n as u64, sk_n as u64);
    // SAFETY: buffers have the getters' sizes (plus guards); lengths are out-params.
    let rc = tm.time("keygen", || unsafe {
        f(pk.ptr(), &mut pkl, sk.ptr(), &mut skl)
    });
    check_all(&[&pk, &sk], op)?;
    rc_ok(op, rc)?;
    let pkl = returned(op, "PK_Len", pkl, pk_n)?;
    let skl = returned(op, "SK_Len", skl, sk_n)?;
    t.num("PK_Len", pkl);
    t.hex("PK", &pk.as_slice()[..pkl]);
    t.num("SK_Len", skl);
    t.hex("SK", &sk.as_slice()[..skl]);
    Ok(Keys { pk, pkl, sk, skl })
}

struct Kem {
    keygen: KeypairFn,
    enc: KemOpFn,
    dec: KemDecFn,
    seed: SeedFn,
    pk: usize,
    sk: usize,
    ct: usize,
    ss: usize,
}

impl Kem {
    fn record(&self, i: u32, seed: &[u8], first: bool, tm: &mut Timer) -> Result<String, Fail> {
        let mut t = Text::header(i, seed);
        reseed(self.seed, seed)?;
        let Keys {
            mut pk,
            pkl,
            mut sk,
            skl,
        } = keygen(self.keygen, "kem_keygen", (self.pk, self.sk), &mut t, tm)?;
        if first {
            return Ok(t.end());
        }
        let (mut ct, mut ss) = (Guarded::new("ct", self.ct), Guarded::new("ss", self.ss));
        let (mut ctl, mut ssl) = (self.ct as u64, self.ss as u64);
        // SAFETY: as above; the shared secret comes before the ciphertext (§1.2).
        let rc = tm.time("enc", || unsafe {
            (self.enc)(pk.ptr(), pkl as u64, ss.ptr(), &mut ssl, ct.ptr(), &mut ctl)
        });
        check_all(&[&pk, &ss, &ct], "kem_enc")?;
        rc_ok("kem_enc", rc)?;
        let ctl = returned("kem_enc", "CT_Len", ctl, self.ct)?;
        let ssl = returned("kem_enc", "SS_Len", ssl, self.ss)?;
        t.num("CT_Len", ctl);
        t.hex("CT", &ct.as_slice()[..ctl]);
        t.num("SS_Len", ssl);
        t.hex("SS", &ss.as_slice()[..ssl]);
        // The official driver passes the length enc wrote as dec's in/out ss length.
        let mut ss2 = Guarded::new("ss", self.ss);
        let mut ss2l = ssl as u64;
        // SAFETY: as above.
        let rc = tm.time("dec", || unsafe {
            (self.dec)(
                sk.ptr(),
                skl as u64,
                ct.ptr(),
                ctl as u64,
                ss2.ptr(),
                &mut ss2l,
            )
        });
        check_all(&[&sk, &ct, &ss2], "kem_dec")?;
        rc_ok("kem_dec", rc)?;
        let ss2l = returned("kem_dec", "SS_Len", ss2l, self.ss)?;
        if ss2.as_slice()[..ss2l] != ss.as_slice()[..ssl] {
            return Err(fail(
                KatStatus::CryptoFail,
                "kem_dec gave a different shared secret than kem_enc",
            ));
        }
        Ok(t.end())
    }
}

struct Sig {
    keygen: KeypairFn,
    sign: SignFn,
    verify: VerifyFn,
    seed: SeedFn,
    pk: usize,
    sk: usize,
    sn: usize,
}

impl Sig {
    fn record(
        &self,
        i: u32,
        seed: &[u8],
        msg: &[u8],
        first: bool,
        tm: &mut Timer,
    ) -> Result<String, Fail> {
        let mut t = Text::header(i, seed);
        reseed(self.seed, seed)?;
        let Keys {
            mut pk,
            pkl,
            mut sk,
            skl,
        } = keygen(self.keygen, "sig_keygen", (self.pk, self.sk), &mut t, tm)?;
        if first {
            return Ok(t.end());
        }
        t.num("M_Len", msg.len());
        t.hex("M", msg);
        let mut m = Guarded::with("m", msg);
        let mut sn = Guarded::new("sn", self.sn);
        let mut snl = self.sn as u64;
        let mlen = msg.len() as u64;
        // SAFETY: as above.
        let rc = tm.time("sign", || unsafe {
            (self.sign)(sk.ptr(), skl as u64, m.ptr(), mlen, sn.ptr(), &mut snl)
        });
        check_all(&[&sk, &m, &sn], "sig_sign")?;
        rc_ok("sig_sign", rc)?;
        let snl = returned("sig_sign", "Sn_Len", snl, self.sn)?;
        t.num("Sn_Len", snl);
        t.hex("Sn", &sn.as_slice()[..snl]);
        // SAFETY: as above.
        let rc = tm.time("verify", || unsafe {
            (self.verify)(pk.ptr(), pkl as u64, sn.ptr(), snl as u64, m.ptr(), mlen)
        });
        check_all(&[&pk, &sn, &m], "sig_verify")?;
        if rc != 0 {
            return Err(fail(
                KatStatus::CryptoFail,
                format!("sig_verify rejected the signature just made (returned {rc})"),
            ));
        }
        m.as_mut_slice()[0] ^= 0x80;
        super::crash::stage("verify (modified message)");
        // SAFETY: as above.
        let rc =
            unsafe { (self.verify)(pk.ptr(), pkl as u64, sn.ptr(), snl as u64, m.ptr(), mlen) };
        check_all(&[&pk, &sn, &m], "sig_verify")?;
        if rc == 0 {
            return Err(fail(
                KatStatus::CryptoFail,
                "sig_verify accepted a modified message (m[0] ^= 0x80)",
            ));
        }
        Ok(t.end())
    }
}

struct Kex {
    init_a: KexInitFn,
    init_b: KexInitFn,
    pass: KexPassFn,
    has_pass: KexHasPassFn,
    derive_a: KexDeriveFn,
    derive_b: KexDeriveFn,
    seed: SeedFn,
    passes: u64,
    pk: usize,
    sk: usize,
    sta: usize,
    stb: usize,
    ss: usize,
    msg: usize,
}

/// One party: long-term keys and the state buffer with its current length.
struct Party {
    pk: Guarded,
    pkl: usize,
    sk: Guarded,
    skl: usize,
    st: Guarded,
    stl: usize,
}

/// A message as input: a guarded copy and the pointer to pass (its bytes live on the heap,
/// so the pointer stays valid while the copy does), or an empty copy and NULL.
fn input(msg: Option<&[u8]>) -> (Guarded, *mut u8) {
    match msg {
        Some(m) => {
            let mut copy = Guarded::with("message", m);
            let ptr = copy.ptr();
            (copy, ptr)
        }
        None => (Guarded::new("message", 0), std::ptr::null_mut()),
    }
}

impl Kex {
    fn init(
        &self,
        f: KexInitFn,
        side: char,
        st_cap: usize,
        t: &mut Text,
        tm: &mut Timer,
    ) -> Result<Party, Fail> {
        let op = format!("kex_init_{side}");
        let (mut pk, mut sk, mut st) = (
            Guarded::new("pk", self.pk),
            Guarded::new("sk", self.sk),
            Guarded::new("state", st_cap),
        );
        let (mut pkl, mut skl, mut stl) = (self.pk as u64, self.sk as u64, st_cap as u64);
        // SAFETY: buffers have the getters' sizes (plus guards).
        let rc = tm.time(&op, || unsafe {
            f(pk.ptr(), &mut pkl, sk.ptr(), &mut skl, st.ptr(), &mut stl)
        });
        check_all(&[&pk, &sk, &st], &op)?;
        kex_rc_ok(&op, rc)?;
        let pkl = returned(&op, &format!("PK{side}_Len"), pkl, self.pk)?;
        let skl = returned(&op, &format!("SK{side}_Len"), skl, self.sk)?;
        let stl = returned(&op, &format!("Init_St{side}_Len"), stl, st_cap)?;
        t.num(&format!("PK{side}_Len"), pkl);
        t.hex(&format!("PK{side}"), &pk.as_slice()[..pkl]);
        t.num(&format!("SK{side}_Len"), skl);
        t.hex(&format!("SK{side}"), &sk.as_slice()[..skl]);
        t.num(&format!("Init_St{side}_Len"), stl);
        t.hex(&format!("Init_St{side}"), &st.as_slice()[..stl]);
        Ok(Party {
            pk,
            pkl,
            sk,
            skl,
            st,
            stl,
        })
    }

    fn record(&self, i: u32, seed: &[u8], first: bool, tm: &mut Timer) -> Result<String, Fail> {
        let mut t = Text::header(i, seed);
        reseed(self.seed, seed)?;
        t.num("Pass_Num", self.passes);
        let mut a = self.init(self.init_a, 'a', self.sta, &mut t, tm)?;
        let mut b = self.init(self.init_b, 'b', self.stb, &mut t, tm)?;
        let (mut last_a, mut last_b): (Option<Vec<u8>>, Option<Vec<u8>>) = (None, None);
        for k in 1..=self.passes {
            let a_side = k % 2 == 1;
            let side = if a_side { 'a' } else { 'b' };
            let op = format!("kex_generate_pass{k}_msg_{side}");
            // SAFETY: plain query of the shim's pass table.
            if unsafe { (self.has_pass)(k as c_int) } == 0 {
                return Err(fail(
                    KatStatus::CryptoFail,
                    format!(
                        "{op} is missing, but kex_get_passes_num() = {}",
                        self.passes
                    ),
                ));
            }
            let (me, peer, prev) = if a_side {
                (&mut a, &mut b, last_b.as_deref())
            } else {
                (&mut b, &mut a, last_a.as_deref())
            };
            let (inbuf, in_ptr) = input(if k == 1 { None } else { prev });
            let cap = me.st.len();
            let mut stl = me.stl as u64;
            let mut m = Guarded::new("message", self.msg);
            let mut ml = self.msg as u64;
            // SAFETY: buffers have the getters' sizes (plus guards); the state is in/out.
            let rc = tm.time(&format!("pass{k}"), || unsafe {
                (self.pass)(
                    k as c_int,
                    me.sk.ptr(),
                    me.skl as u64,
                    peer.pk.ptr(),
                    peer.pkl as u64,
                    in_ptr,
                    inbuf.len() as u64,
                    me.st.ptr(),
                    &mut stl,
                    m.ptr(),
                    &mut ml,
                )
            });
            check_all(&[&me.sk, &peer.pk, &inbuf, &me.st, &m], &op)?;
            if rc == NO_PASS {
                return Err(fail(KatStatus::CryptoFail, format!("{op} is missing")));
            }
            kex_rc_ok(&op, rc)?;
            let st_key = format!("Pass{k}_St{side}");
            me.stl = returned(&op, &format!("{st_key}_Len"), stl, cap)?;
            let ml = returned(&op, &format!("M{k}_Len"), ml, self.msg)?;
            t.num(&format!("{st_key}_Len"), me.stl);
            t.hex(&st_key, &me.st.as_slice()[..me.stl]);
            t.num(&format!("M{k}_Len"), ml);
            t.hex(&format!("M{k}"), &m.as_slice()[..ml]);
            let sent = m.as_slice()[..ml].to_vec();
            if a_side {
                last_a = Some(sent);
            } else {
                last_b = Some(sent);
            }
            if first {
                return Ok(t.end());
            }
            if rc == 1 {
                if k != self.passes {
                    return Err(fail(
                        KatStatus::CryptoFail,
                        format!(
                            "{op} finished the exchange, but kex_get_passes_num() = {}",
                            self.passes
                        ),
                    ));
                }
                break;
            }
        }
        let ssa = self.derive(self.derive_a, 'a', &mut a, &mut b, last_b.as_deref(), tm)?;
        let ssb = self.derive(self.derive_b, 'b', &mut b, &mut a, last_a.as_deref(), tm)?;
        if ssa != ssb {
            return Err(fail(
                KatStatus::CryptoFail,
                "kex_derive_ss_a and kex_derive_ss_b gave different shared secrets",
            ));
        }
        t.num("SS_Len", ssa.len());
        t.hex("SS", &ssa);
        Ok(t.end())
    }

    /// derive_ss with the peer's last message (NULL/0 if the peer sent none).
    fn derive(
        &self,
        f: KexDeriveFn,
        side: char,
        me: &mut Party,
        peer: &mut Party,
        last: Option<&[u8]>,
        tm: &mut Timer,
    ) -> Result<Vec<u8>, Fail> {
        let op = format!("kex_derive_ss_{side}");
        let (inbuf, in_ptr) = input(last);
        let mut ss = Guarded::new("ss", self.ss);
        let mut ssl = self.ss as u64;
        // SAFETY: as in the passes.
        let rc = tm.time(&format!("derive_{side}"), || unsafe {
            f(
                me.sk.ptr(),
                me.skl as u64,
                peer.pk.ptr(),
                peer.pkl as u64,
                in_ptr,
                inbuf.len() as u64,
                me.st.ptr(),
                me.stl as u64,
                ss.ptr(),
                &mut ssl,
            )
        });
        check_all(&[&me.sk, &peer.pk, &inbuf, &me.st, &ss], &op)?;
        kex_rc_ok(&op, rc)?;
        let ssl = returned(&op, "SS_Len", ssl, self.ss)?;
        Ok(ss.as_slice()[..ssl].to_vec())
    }
}

struct Hash {
    f: HashFn,
    bits: u32,
    len: usize,
}

impl Hash {
    fn call(&self, msg: &mut Guarded, bits: u64, digest: &mut Guarded) -> Result<(), Fail> {
        // SAFETY: msg holds ceil(bits/8) bytes, digest the declared digest length.
        let rc = unsafe { (self.f)(self.bits as c_int, msg.ptr(), bits, digest.ptr()) };
        check_all(&[msg, digest], "CryptHash")?;
        if rc != 0 {
            return Err(fail(
                KatStatus::CryptoFail,
                format!("CryptHash returned {rc} for a {bits}-bit message"),
            ));
        }
        Ok(())
    }

    /// The four files of KAT_CryptHash.c; `quick` skips the 2^33-bit and the loop file.
    fn run(&self, job: &KatJob, out: &mut KatOutput, inst: &str) -> Result<(), Fail> {
        let name = |prefix: &str| format!("{prefix}_{inst}.txt");
        let mut timer = Timer::default();
        // Makes one file (timed) and writes it.
        let mut file = |prefix: &str, make: &dyn Fn() -> Result<String, Fail>| {
            let text = timer.time(prefix, || {
                super::crash::stage(&format!("CryptHash for {prefix}"));
                make()
            })?;
            write_file(job, out, &name(prefix), &text)
        };
        file("KAT_2_12", &|| self.kat_2_12())?;
        file("KAT_2_23", &|| self.big(b"KAT_2_23", 23))?;
        if job.quick {
            out.skipped.push(name("KAT_2_33"));
            out.skipped.push(name("KAT_Loop"));
        } else {
            file("KAT_2_33", &|| self.big(b"KAT_2_33", 33))?;
            file("KAT_Loop", &|| self.kat_loop())?;
        }
        out.timing = timer.averages();
        out.records = 1;
        Ok(())
    }

    /// L = 0..4096 bits; one DRNG call per length into a zeroed 512-byte buffer.
    fn kat_2_12(&self) -> Result<String, Fail> {
        let mut d = HashDrbg::new(&hash_drbg::hash_kat_nonce(b"KAT_2_12"));
        let mut buf = [0u8; 512];
        let mut digest = Guarded::new("digest", self.len);
        let mut text = String::new();
        let mut last = (Vec::new(), Vec::new());
        for bits in 0..=4096u64 {
            buf.fill(0);
            d.fill(&mut buf, bits);
            let n = bits.div_ceil(8) as usize;
            let mut m = Guarded::with("msg", &buf[..n]);
            self.call(&mut m, bits, &mut digest)
                .map_err(|(s, e)| (s, format!("KAT_2_12: {e}")))?;
            let mut t = Text::default();
            t.num("Msg_Len", bits);
            t.hex("Msg", &buf[..n]);
            t.num("Dst_Len", self.bits);
            t.hex("Dst", digest.as_slice());
            text.push_str(&t.end());
            last = (buf[..n].to_vec(), digest.as_slice().to_vec());
        }
        // Nondeterminism: the same message must hash to the same digest again.
        let mut m = Guarded::with("msg", &last.0);
        self.call(&mut m, 4096, &mut digest)?;
        if digest.as_slice() != last.1 {
            return Err(fail(
                KatStatus::Mismatch,
                "nondeterministic: CryptHash gave a different digest for the same 4096-bit message",
            ));
        }
        Ok(text)
    }

    /// Three 2^log2-bit messages: all zero, all ones, one DRNG draw from the file's nonce.
    fn big(&self, name8: &[u8; 8], log2: u32) -> Result<String, Fail> {
        let bits = 1u64 << log2;
        let nonce = hash_drbg::hash_kat_nonce(name8);
        let mut m = Guarded::new("msg", (bits / 8) as usize);
        let mut digest = Guarded::new("digest", self.len);
        let mut text = String::new();
        for rec in 0..3 {
            match rec {
                0 => m.as_mut_slice().fill(0),
                1 => m.as_mut_slice().fill(0xFF),
                _ => HashDrbg::new(&nonce).fill(m.as_mut_slice(), bits),
            }
            self.call(&mut m, bits, &mut digest)
                .map_err(|(s, e)| (s, format!("{}: {e}", String::from_utf8_lossy(name8))))?;
            let s = m.as_slice();
            let mut t = Text::default();
            t.num("Msg_Len", bits);
            if rec == 2 {
                t.hex("Msg_Seed", &nonce);
            } else {
                t.num("Msg_Seed", "");
            }
            let _ = writeln!(
                t.0,
                "Msg_Exp = {} .... {}",
                hex::encode_upper(&s[..8]),
                hex::encode_upper(&s[s.len() - 8..])
            );
            t.num("Dst_Len", self.bits);
            t.hex("Dst", digest.as_slice());
            text.push_str(&t.end());
        }
        Ok(text)
    }

    /// m0 = one 8192-bit draw; then a million rounds of rotate, XOR the digest in, rehash.
    fn kat_loop(&self) -> Result<String, Fail> {
        let m0 = HashDrbg::new(&hash_drbg::hash_kat_nonce(b"KAT_Loop")).generate(8192);
        let mut m = Guarded::with("msg", &m0);
        let mut h = Guarded::new("digest", self.len);
        let wrap = |(s, e): Fail| (s, format!("KAT_Loop: {e}"));
        self.call(&mut m, 8192, &mut h).map_err(wrap)?;
        let step = self.len.min(m0.len());
        for _ in 0..LOOP_ITERATIONS {
            let msg = m.as_mut_slice();
            msg.rotate_left(step);
            for (x, y) in msg.iter_mut().zip(h.as_slice()) {
                *x ^= y;
            }
            self.call(&mut m, 8192, &mut h).map_err(wrap)?;
        }
        let mut t = Text::default();
        t.num("Msg_Len", 8192);
        t.hex("Msg", &m0);
        t.num("Dst_Len", self.bits);
        t.hex("Dst", h.as_slice());
        Ok(t.end())
    }
}

/// The NIST side of the byte-identity check: one model Generate per `randombytes` call,
/// exactly what the ICCS samples' randombytes does with the library's DRNG.
struct ModelStream(HashDrbg);

impl rng::ByteSource for ModelStream {
    fn fill(&mut self, out: &mut [u8]) {
        let bits = 8 * out.len() as u64;
        self.0.fill(out, bits);
    }
}

/// Runs a [`VectorsJob`] (see there).
pub fn vectors(job: &VectorsJob) -> VectorsOutput {
    super::sandbox(&job.limits);
    match vectors_inner(job) {
        Ok(values) => VectorsOutput {
            status: KatEnd::Ok,
            detail: None,
            values,
        },
        Err((status, detail)) => VectorsOutput {
            status: KatEnd::Failed(status),
            detail: Some(detail),
            values: Vec::new(),
        },
    }
}

fn vectors_inner(job: &VectorsJob) -> Result<Vec<(String, String)>, Fail> {
    let lib = Lib::open(&job.library).map_err(|e| fail(KatStatus::LoadFail, e))?;
    let seed =
        hex::decode(&job.seed).map_err(|e| fail(KatStatus::LoadFail, format!("seed: {e}")))?;
    let msg = hex::decode(&job.message)
        .map_err(|e| fail(KatStatus::LoadFail, format!("message: {e}")))?;
    if job.kind == Kind::Hash {
        return hash_vectors(&lib, &msg, &job.lengths);
    }
    match job.api {
        Api::Nist => {
            let set: SetRandombytesFn = load(&lib, "ngcc_set_randombytes")?;
            // SAFETY: the shim stores the callback; host_randombytes matches its type.
            unsafe { set(rng::host_randombytes) };
            rng::install(Box::new(ModelStream(HashDrbg::new(&seed))));
        }
        Api::Iccs => reseed(load(&lib, "ngcc_seed")?, &seed)?,
    }
    let hx = |name: &str, b: &[u8]| (name.to_string(), hex::encode_upper(b));
    match job.kind {
        Kind::Kem => {
            let keygen: KeypairFn = load(&lib, "ngcc_kem_keygen")?;
            let enc: KemOpFn = load(&lib, "ngcc_kem_enc")?;
            let dec: KemDecFn = load(&lib, "ngcc_kem_dec")?;
            let (pkn, skn, ctn, ssn) = (
                size(&lib, 0)?,
                size(&lib, 1)?,
                size(&lib, 2)?,
                size(&lib, 3)?,
            );
            let (mut pk, mut sk) = (Guarded::new("pk", pkn), Guarded::new("sk", skn));
            let (mut ct, mut ss) = (Guarded::new("ct", ctn), Guarded::new("ss", ssn));
            let mut ss2 = Guarded::new("ss", ssn);
            let (mut a, mut b) = (0u64, 0u64);
            // SAFETY: buffers have the declared sizes (plus guards).
            unsafe {
                rc_ok("keygen", keygen(pk.ptr(), &mut a, sk.ptr(), &mut b))?;
                rc_ok(
                    "enc",
                    enc(pk.ptr(), pkn as u64, ss.ptr(), &mut a, ct.ptr(), &mut b),
                )?;
                a = ssn as u64;
                rc_ok(
                    "dec",
                    dec(
                        sk.ptr(),
                        skn as u64,
                        ct.ptr(),
                        ctn as u64,
                        ss2.ptr(),
                        &mut a,
                    ),
                )?;
            }
            check_all(&[&pk, &sk, &ct, &ss, &ss2], "vectors")?;
            Ok(vec![
                hx("pk", pk.as_slice()),
                hx("sk", sk.as_slice()),
                hx("ct", ct.as_slice()),
                hx("ss", ss.as_slice()),
                hx("ss_dec", ss2.as_slice()),
            ])
        }
        Kind::Sig => {
            let keygen: KeypairFn = load(&lib, "ngcc_sig_keygen")?;
            let sign: SignFn = load(&lib, "ngcc_sig_sign")?;
            let verify: VerifyFn = load(&lib, "ngcc_sig_verify")?;
            let (pkn, skn, snn) = (size(&lib, 0)?, size(&lib, 1)?, size(&lib, 2)?);
            let (mut pk, mut sk, mut sn) = (
                Guarded::new("pk", pkn),
                Guarded::new("sk", skn),
                Guarded::new("sn", snn),
            );
            let mut m = Guarded::with("m", &msg);
            let (mut a, mut b, mut snl) = (0u64, 0u64, 0u64);
            // SAFETY: as above.
            unsafe {
                rc_ok("keygen", keygen(pk.ptr(), &mut a, sk.ptr(), &mut b))?;
                rc_ok(
                    "sign",
                    sign(
                        sk.ptr(),
                        skn as u64,
                        m.ptr(),
                        msg.len() as u64,
                        sn.ptr(),
                        &mut snl,
                    ),
                )?;
            }
            let snl = returned("sign", "signature length", snl, snn)?;
            // SAFETY: as above.
            let rc = unsafe {
                verify(
                    pk.ptr(),
                    pkn as u64,
                    sn.ptr(),
                    snl as u64,
                    m.ptr(),
                    msg.len() as u64,
                )
            };
            rc_ok("verify", rc)?;
            check_all(&[&pk, &sk, &sn, &m], "vectors")?;
            Ok(vec![
                hx("pk", pk.as_slice()),
                hx("sk", sk.as_slice()),
                hx("sig", &sn.as_slice()[..snl]),
            ])
        }
        Kind::Kex | Kind::Hash => Err(fail(KatStatus::LoadFail, "vectors: only kem, sig and hash")),
    }
}

/// The digest of the first `n` bytes of `msg` for every `n` (the baseline phase's self-test
/// of the ICCS helpers, judged by the orchestrator against the Rust model).
fn hash_vectors(lib: &Lib, msg: &[u8], lengths: &[u64]) -> Result<Vec<(String, String)>, Fail> {
    let f: HashFn = load(lib, "ngcc_hash")?;
    let (bits, len) = (size(lib, 0)?, size(lib, 1)?);
    let mut out = Vec::new();
    for &n in lengths {
        let n = usize::try_from(n)
            .ok()
            .filter(|n| *n <= msg.len())
            .ok_or_else(|| {
                fail(
                    KatStatus::LoadFail,
                    format!("length {n} beyond the message"),
                )
            })?;
        let mut m = Guarded::with("msg", &msg[..n]);
        let mut d = Guarded::new("digest", len);
        // SAFETY: m holds n bytes (8n bits), d the declared digest length (plus guards).
        let rc = unsafe { f(bits as c_int, m.ptr(), 8 * n as u64, d.ptr()) };
        rc_ok("hash", rc)?;
        check_all(&[&m, &d], "hash")?;
        out.push((format!("len={n}"), hex::encode_upper(d.as_slice())));
    }
    Ok(out)
}
