//! `ngcc-perf iccs selftest`: the C helpers against the published vectors and the Rust model.

use super::ffi::{self, CDrng};
use crate::util::hexs;
use ngcc_iccs::ctr_drbg::NistCtrDrbg;
use ngcc_iccs::hash_drbg::{
    HashDrbg, SEEDLEN, hash_df, hash_kat_nonce, pkc_seed_nonce, sig_msg_nonce,
};
use ngcc_iccs::hmac::{PSEUDO_KEY, hmac_sm3_bits};
use ngcc_iccs::hqc_prng::HqcKatRng;
use ngcc_iccs::{pseudo, sm3, vectors as vx};
use std::process::ExitCode;

type Check = Result<(), String>;

/// The official message of the -4 path (iccs-api.md §1.6).
const BAD_WIDTH_MESSAGE: &str = "ERROR: Digestbitlen not in the limitation. ";

/// Runs every check, prints `PASS name` / `FAIL name: why`, exit 0 only if all pass.
pub fn selftest() -> anyhow::Result<ExitCode> {
    let mut failed = 0usize;
    let mut report = |name: &str, result: Check| match result {
        Ok(()) => println!("PASS {name}"),
        Err(why) => {
            failed += 1;
            println!("FAIL {name}: {why}");
        }
    };
    for side in [Side::Model, Side::C] {
        let t = side.tag();
        report(&format!("{t}/sm3-vectors"), sm3_vectors(side));
        report(&format!("{t}/pseudohash-vectors"), pseudohash_vectors(side));
        report(&format!("{t}/xof-vectors"), xof_vectors(side));
        report(&format!("{t}/drng-kat-seeds"), drng_kat_seeds(side));
        report(&format!("{t}/drng-call-count"), drng_call_count(side));
        report(&format!("{t}/drng-sig-messages"), drng_sig_messages(side));
        report(&format!("{t}/drng-perf-seed"), drng_perf_seed(side));
        report(&format!("{t}/drng-empty-seed"), drng_empty_seed(side));
        report(&format!("{t}/drng-hash-df"), drng_hash_df(side));
        report(&format!("{t}/drng-kat-2-12"), drng_kat_2_12(side));
        report(&format!("{t}/drng-kat-loop-m0"), drng_kat_loop(side));
    }
    report("model/hmac-key", hmac_key());
    report("model/nist-ctr-drbg", nist_ctr_drbg());
    report("model/hqc-prng", hqc_prng());
    report("c/sm3hash-rejects-width", c_sm3hash_rejects());
    report("c/pseudohash-rejects-width", c_pseudohash_rejects());
    report("c/writes-exactly", c_writes_exactly());
    report("c-vs-model/random-inputs", c_vs_model_random());
    if failed == 0 {
        Ok(ExitCode::SUCCESS)
    } else {
        println!("{failed} check(s) failed");
        Ok(ExitCode::from(1))
    }
}

#[derive(Clone, Copy)]
enum Side {
    C,
    Model,
}

enum Drng {
    C(CDrng),
    Model(HashDrbg),
}

impl Side {
    fn tag(self) -> &'static str {
        match self {
            Side::C => "c",
            Side::Model => "model",
        }
    }

    fn sm3(self, msg: &[u8], bits: u64) -> [u8; 32] {
        match self {
            Side::C => ffi::c_sm3(msg, bits),
            Side::Model => sm3::sm3_bits(msg, bits),
        }
    }

    fn pseudohash(self, d: u32, msg: &[u8], bits: u64) -> Result<Vec<u8>, i32> {
        match self {
            Side::C => ffi::c_pseudohash(d as i32, msg, bits),
            Side::Model => pseudo::pseudohash(d, msg, bits).map_err(|e| e.code()),
        }
    }

    fn xof(self, n: u64, msg: &[u8], bits: u64) -> Vec<u8> {
        match self {
            Side::C => ffi::c_xof(n, msg, bits),
            Side::Model => pseudo::pseudo_xof(n, msg, bits),
        }
    }

    fn drng(self, seed: &[u8]) -> Drng {
        match self {
            Side::C => Drng::C(CDrng::new(seed)),
            Side::Model => Drng::Model(HashDrbg::new(seed)),
        }
    }
}

impl Drng {
    fn get(&mut self, bits: u64) -> Vec<u8> {
        match self {
            Drng::C(d) => d.get(bits),
            Drng::Model(d) => d.generate(bits),
        }
    }

    /// A draw into a buffer pre-filled with `fill`, as the KAT drivers do.
    fn get_into(&mut self, buf: &mut [u8], bits: u64) {
        match self {
            Drng::C(d) => d.get_into(buf, bits),
            Drng::Model(d) => d.fill(buf, bits),
        }
    }

    fn state(&self) -> [[u8; SEEDLEN]; 3] {
        match self {
            Drng::C(d) => [*d.v(), *d.c(), *d.reseed_counter()],
            Drng::Model(d) => [*d.v(), *d.c(), *d.reseed_counter()],
        }
    }
}

fn eq(what: &str, got: &[u8], want_hex: &str) -> Check {
    let got = hexs::upper(got);
    if got == want_hex {
        Ok(())
    } else {
        Err(format!("{what}: got {got}, want {want_hex}"))
    }
}

fn unhex(s: &str) -> Vec<u8> {
    hexs::parse(s).expect("built-in vectors are hex")
}

fn counter_hex(n: u8) -> String {
    let mut c = [0u8; SEEDLEN];
    c[SEEDLEN - 1] = n;
    hexs::upper(&c)
}

fn sm3_vectors(side: Side) -> Check {
    for &(msg, bits, want) in vx::SM3_ROWS {
        eq(
            &format!("sm3({msg:.16}…, {bits})"),
            &side.sm3(&unhex(msg), bits),
            want,
        )?;
    }
    Ok(())
}

fn pseudohash_vectors(side: Side) -> Check {
    for &(d, msg, bits, want) in vx::PSEUDOHASH_ROWS {
        let got = side
            .pseudohash(d, &unhex(msg), bits)
            .map_err(|rc| format!("pseudohash({d}) returned {rc}"))?;
        eq(&format!("pseudohash({d}, {msg}, {bits})"), &got, want)?;
    }
    Ok(())
}

fn xof_vectors(side: Side) -> Check {
    for &(n, msg, bits, want) in vx::XOF_ROWS {
        eq(
            &format!("pseudoXOF({n}, {msg:.16}, {bits})"),
            &side.xof(n, &unhex(msg), bits),
            want,
        )?;
    }
    Ok(())
}

fn drng_kat_seeds(side: Side) -> Check {
    let mut d = side.drng(&pkc_seed_nonce());
    let [v, c, _] = d.state();
    eq("V0", &v, vx::KAT_SEED_V0)?;
    eq("C0", &c, vx::KAT_SEED_C0)?;
    for (i, want) in vx::KAT_SEEDS.iter().enumerate() {
        eq(&format!("Seed of record {i}"), &d.get(512), want)?;
    }
    let [v, _, rc] = d.state();
    eq("V after 10 draws", &v, vx::KAT_SEED_V_AFTER_10)?;
    eq("reseed_counter after 10 draws", &rc, &counter_hex(11))
}

fn drng_call_count(side: Side) -> Check {
    let mut d = side.drng(&pkc_seed_nonce());
    for (bits, want) in vx::CALL_COUNT_DRAWS {
        eq(&format!("get({bits})"), &d.get(bits), want)?;
    }
    eq("reseed_counter", &d.state()[2], &counter_hex(4))
}

fn drng_sig_messages(side: Side) -> Check {
    let mut d = side.drng(&sig_msg_nonce());
    for (i, want) in vx::SIG_MESSAGES.iter().enumerate() {
        eq(
            &format!("M of record {i}"),
            &d.get(8 * (56 + 8 * i as u64)),
            want,
        )?;
    }
    Ok(())
}

fn drng_perf_seed(side: Side) -> Check {
    let seed: Vec<u8> = (0..48).collect();
    let mut d = side.drng(&seed);
    let [v, c, _] = d.state();
    eq("V0", &v, vx::PERF_SEED_V0)?;
    eq("C0", &c, vx::PERF_SEED_C0)?;
    eq("first get(256)", &d.get(256), vx::PERF_SEED_GET256[0])?;
    eq("second get(256)", &d.get(256), vx::PERF_SEED_GET256[1])?;
    eq(
        "fresh get(512)",
        &side.drng(&seed).get(512),
        vx::PERF_SEED_GET512,
    )
}

fn drng_empty_seed(side: Side) -> Check {
    let mut d = side.drng(&[]);
    eq("V0", &d.state()[0], vx::EMPTY_SEED_V0)?;
    eq("first get(256)", &d.get(256), vx::EMPTY_SEED_GET256)
}

fn drng_hash_df(side: Side) -> Check {
    // Instantiate sets V = Hash_df(seed).
    eq(
        "V0 of seed \"abc\"",
        &side.drng(b"abc").state()[0],
        vx::HASH_DF_ABC,
    )?;
    if let Side::Model = side {
        eq(
            "Hash_df(\"abc\", 440)",
            &hash_df(b"abc", 440),
            vx::HASH_DF_ABC,
        )?;
    }
    Ok(())
}

fn drng_kat_2_12(side: Side) -> Check {
    let mut d = side.drng(&hash_kat_nonce(b"KAT_2_12"));
    let mut digests = Vec::new();
    for (len, want) in vx::KAT_2_12_MSGS.iter().enumerate() {
        let mut buf = [0u8; 512];
        d.get_into(&mut buf, len as u64);
        let n = len.div_ceil(8);
        eq(&format!("Msg of L = {len}"), &buf[..n], want)?;
        if buf[n..].iter().any(|&b| b != 0) {
            return Err(format!("L = {len}: wrote past byte {n}"));
        }
        digests.push(side.sm3(&buf, len as u64));
    }
    for (len, want) in vx::KAT_2_12_SM3_DSTS {
        eq(
            &format!("SM3 Dst of L = {len}"),
            &digests[len as usize],
            want,
        )?;
    }
    Ok(())
}

fn drng_kat_loop(side: Side) -> Check {
    let m0 = hexs::upper(&side.drng(&hash_kat_nonce(b"KAT_Loop")).get(8192));
    if m0.starts_with(vx::KAT_LOOP_M0_PREFIX) && m0.ends_with(vx::KAT_LOOP_M0_SUFFIX) {
        Ok(())
    } else {
        Err(format!("m0 = {}…{}", &m0[..32], &m0[m0.len() - 16..]))
    }
}

fn hmac_key() -> Check {
    let key = [sm3::sm3(b"3.14159265358979"), sm3::sm3(b"2.71828182845904")].concat();
    eq("KEY", &key, &hexs::upper(&PSEUDO_KEY))?;
    eq(
        "HMAC(KEY, \"abc\")",
        &hmac_sm3_bits(&PSEUDO_KEY, b"abc", 24),
        vx::HMAC_KEY_ABC,
    )
}

fn nist_ctr_drbg() -> Check {
    let entropy: [u8; 48] = std::array::from_fn(|i| i as u8);
    let perso: [u8; 48] = std::array::from_fn(|i| 0xA0 + i as u8);
    let mut d = NistCtrDrbg::new(&entropy, None);
    for (len, want) in vx::NIST_DRAWS {
        eq(&format!("randombytes({len})"), &d.generate(len), want)?;
    }
    eq(
        "with personalization",
        &NistCtrDrbg::new(&entropy, Some(&perso)).generate(64),
        vx::NIST_PERSO_DRAW64,
    )
}

fn hqc_prng() -> Check {
    let entropy: [u8; 48] = std::array::from_fn(|i| i as u8);
    let perso: [u8; 48] = std::array::from_fn(|i| 0xA0 + i as u8);
    let mut r = HqcKatRng::new(&entropy, None);
    for (len, want) in vx::HQC_DRAWS {
        eq(&format!("randombytes({len})"), &r.generate(len), want)?;
    }
    r.release();
    eq(
        "with personalization",
        &HqcKatRng::new(&entropy, Some(&perso)).generate(64),
        vx::HQC_PERSO_DRAW64,
    )
}

/// Runs `f` with fd 2 redirected into a pipe and returns what it wrote there (a few bytes:
/// the pipe buffer is far larger).
fn capture_stderr<R>(f: impl FnOnce() -> R) -> Result<(R, String), String> {
    use std::io::Read;
    use std::os::fd::FromRawFd;
    let mut fds = [0; 2];
    // SAFETY: plain POSIX calls on descriptors this function owns; fd 2 is restored before
    // returning.
    unsafe {
        if libc::pipe(fds.as_mut_ptr()) != 0 {
            return Err("pipe() failed".into());
        }
        let saved = libc::dup(2);
        if saved < 0 || libc::dup2(fds[1], 2) < 0 {
            libc::close(fds[0]);
            libc::close(fds[1]);
            return Err("cannot redirect stderr".into());
        }
        let r = f();
        libc::dup2(saved, 2);
        libc::close(saved);
        libc::close(fds[1]);
        let mut text = String::new();
        std::fs::File::from_raw_fd(fds[0])
            .read_to_string(&mut text)
            .map_err(|e| e.to_string())?;
        Ok((r, text))
    }
}

fn c_sm3hash_rejects() -> Check {
    for d in [0, 128, 255, 384, 512, -256] {
        let ((rc, out), text) = capture_stderr(|| ffi::c_sm3hash_raw(d, b"abc", 24, 0xA5))?;
        if rc != -4 {
            return Err(format!("sm3hash({d}) returned {rc}, want -4"));
        }
        if out.iter().any(|&b| b != 0xA5) {
            return Err(format!("sm3hash({d}) wrote to the digest"));
        }
        if !text.contains(BAD_WIDTH_MESSAGE) {
            return Err(format!("sm3hash({d}) printed {text:?} to stderr"));
        }
    }
    Ok(())
}

fn c_pseudohash_rejects() -> Check {
    for d in [0, 256, 384, 513, 2048, -512] {
        let ((rc, out), text) = capture_stderr(|| ffi::c_pseudohash_raw(d, b"abc", 24, 0xA5))?;
        if rc != -4 {
            return Err(format!("pseudohash({d}) returned {rc}, want -4"));
        }
        if out.iter().any(|&b| b != 0xA5) {
            return Err(format!("pseudohash({d}) wrote to the digest"));
        }
        if !text.contains(BAD_WIDTH_MESSAGE) {
            return Err(format!("pseudohash({d}) printed {text:?} to stderr"));
        }
    }
    Ok(())
}

/// Every helper writes exactly its output length: guard bytes after it stay intact.
fn c_writes_exactly() -> Check {
    const GUARD: u8 = 0xA5;
    let untouched = |buf: &[u8], from: usize| buf[from..].iter().all(|&b| b == GUARD);
    for d in [512, 768, 1024] {
        let (rc, out) = ffi::c_pseudohash_raw(d, b"abc", 24, GUARD);
        if rc != 0 || !untouched(&out, d as usize / 8) {
            return Err(format!(
                "pseudohash({d}) wrote past {} bytes (rc {rc})",
                d / 8
            ));
        }
    }
    let mut drng = CDrng::new(b"guard");
    for n in [0u64, 1, 7, 8, 13, 255, 256, 257, 300, 800] {
        let len = n.div_ceil(8) as usize;
        let mut buf = vec![GUARD; len + 40];
        ffi::c_xof_into(n, b"abc", 24, &mut buf);
        if !untouched(&buf, len) {
            return Err(format!("pseudoXOF({n}) wrote past {len} bytes"));
        }
        let mut buf = vec![GUARD; len + 40];
        drng.get_into(&mut buf, n);
        if !untouched(&buf, len) {
            return Err(format!("get_random_number({n}) wrote past {len} bytes"));
        }
    }
    Ok(())
}

/// Deterministic pseudo-random inputs (from the model DRNG) through both sides.
fn c_vs_model_random() -> Check {
    let mut rng = HashDrbg::new(b"ngcc-perf iccs selftest");
    let mut next = |bound: u64| {
        let b: [u8; 8] = rng.generate(64).try_into().expect("8 bytes");
        u64::from_be_bytes(b) % bound
    };
    let differ = |what: String, c: &[u8], m: &[u8]| {
        if c == m {
            Ok(())
        } else {
            Err(format!(
                "{what}: C {} model {}",
                super::abbrev(c),
                super::abbrev(m)
            ))
        }
    };
    // Every length across the first two block boundaries (padding edge cases) ...
    let long = HashDrbg::new(b"boundaries").generate(8 * 140);
    for bits in 0..=1100 {
        differ(
            format!("sm3(L = {bits})"),
            &Side::C.sm3(&long, bits),
            &Side::Model.sm3(&long, bits),
        )?;
        differ(
            format!("pseudoXOF(300, L = {bits})"),
            &Side::C.xof(300, &long, bits),
            &Side::Model.xof(300, &long, bits),
        )?;
        let c = Side::C
            .pseudohash(512, &long, bits)
            .map_err(|rc| format!("rc {rc}"))?;
        let m = Side::Model
            .pseudohash(512, &long, bits)
            .map_err(|rc| format!("rc {rc}"))?;
        differ(format!("pseudohash(512, L = {bits})"), &c, &m)?;
    }
    // ... then random lengths, widths and draw sequences.
    for case in 0u32..48 {
        let bits = next(4097);
        // Random bytes, including garbage past L in the last byte.
        let mut msg = HashDrbg::new(&case.to_be_bytes()).generate(bits.div_ceil(8) * 8);
        msg.push(0xFF);
        differ(
            format!("sm3(L = {bits})"),
            &Side::C.sm3(&msg, bits),
            &Side::Model.sm3(&msg, bits),
        )?;
        for d in [512, 768, 1024] {
            let c = Side::C
                .pseudohash(d, &msg, bits)
                .map_err(|rc| format!("rc {rc}"))?;
            let m = Side::Model
                .pseudohash(d, &msg, bits)
                .map_err(|rc| format!("rc {rc}"))?;
            differ(format!("pseudohash({d}, L = {bits})"), &c, &m)?;
        }
        let n = next(2049);
        differ(
            format!("pseudoXOF({n}, L = {bits})"),
            &Side::C.xof(n, &msg, bits),
            &Side::Model.xof(n, &msg, bits),
        )?;
        let seed = &msg[..(next(100) as usize).min(msg.len())];
        let (mut c, mut m) = (Side::C.drng(seed), Side::Model.drng(seed));
        for _ in 0..1 + next(5) {
            let b = next(1500);
            differ(format!("DRNG get({b})"), &c.get(b), &m.get(b))?;
        }
        if c.state() != m.state() {
            return Err(format!("DRNG state after case {case} differs"));
        }
    }
    Ok(())
}
