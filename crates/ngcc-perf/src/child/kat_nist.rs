//! The NIST KAT flows PQClean's `nistkat-sha256` digests cover (pqclean-samples.md §4c):
//! one record, AES-256 CTR_DRBG seeded with bytes 00..2F (HQC: its SHAKE-256 PRNG).

use super::guard::Guarded;
use super::library::*;
use super::protocol::{KatJob, KatOutput};
use super::rng;
use crate::candidate::Kind;
use std::fmt::Write as _;
use std::time::Instant;

pub const FILE_NAME: &str = "nistkat.rsp";

fn line(out: &mut String, name: &str, bytes: &[u8]) {
    // PQClean prints "00" for an empty value.
    let hex = if bytes.is_empty() {
        "00".to_string()
    } else {
        hex::encode_upper(bytes)
    };
    let _ = writeln!(out, "{name} = {hex}");
}

/// Runs the flow; `Err((status, detail))` ends the KAT with that status.
pub fn run(job: &KatJob, lib: &Lib, out: &mut KatOutput) -> Result<(), (String, String)> {
    let fail = |d: String| ("CRYPTOFAIL".to_string(), d);
    let set: SetRandombytesFn = lib
        .func("ngcc_set_randombytes")
        .map_err(|e| ("LOADFAIL".into(), e))?;
    // SAFETY: the shim stores the callback; host_randombytes matches its type.
    unsafe { set(rng::host_randombytes) };
    let entropy: [u8; 48] = std::array::from_fn(|i| i as u8);
    rng::install(rng::seeded(&job.rng, &entropy));
    let mut text = String::from("count = 0\n");
    let seed: [u8; 48] = rng::draw(48).try_into().expect("48 bytes");
    line(&mut text, "seed", &seed);
    let mut timing = Vec::new();
    match job.kind {
        Kind::Kem => {
            rng::install(rng::seeded(&job.rng, &seed));
            let size = |i| lib.size(i).map_err(|e| ("LOADFAIL".to_string(), e));
            let (pk_n, sk_n, ct_n, ss_n) = (size(0)?, size(1)?, size(2)?, size(3)?);
            let keypair: KeypairFn = lib
                .func("ngcc_kem_keygen")
                .map_err(|e| ("LOADFAIL".into(), e))?;
            let enc: KemOpFn = lib
                .func("ngcc_kem_enc")
                .map_err(|e| ("LOADFAIL".into(), e))?;
            let dec: KemDecFn = lib
                .func("ngcc_kem_dec")
                .map_err(|e| ("LOADFAIL".into(), e))?;
            let (mut pk, mut sk) = (Guarded::new("pk", pk_n), Guarded::new("sk", sk_n));
            let (mut ct, mut ss, mut ss2) = (
                Guarded::new("ct", ct_n),
                Guarded::new("ss", ss_n),
                Guarded::new("ss", ss_n),
            );
            let (mut l1, mut l2, mut l3) = (0u64, 0u64, 0u64);
            let t = Instant::now();
            super::crash::stage("keygen");
            // SAFETY: buffers have the declared sizes (plus guards).
            let rc = unsafe { keypair(pk.ptr(), &mut l1, sk.ptr(), &mut l2) };
            timing.push(("keygen".to_string(), t.elapsed().as_secs_f64() * 1e3));
            check_all(&[&pk, &sk], "keygen")?;
            if rc != 0 {
                return Err(fail(format!("crypto_kem_keypair returned {rc}")));
            }
            line(&mut text, "pk", pk.as_slice());
            line(&mut text, "sk", sk.as_slice());
            let t = Instant::now();
            super::crash::stage("enc");
            // SAFETY: as above.
            let rc = unsafe { enc(pk.ptr(), pk_n as u64, ss.ptr(), &mut l1, ct.ptr(), &mut l2) };
            timing.push(("enc".to_string(), t.elapsed().as_secs_f64() * 1e3));
            check_all(&[&pk, &ss, &ct], "enc")?;
            if rc != 0 {
                return Err(fail(format!("crypto_kem_enc returned {rc}")));
            }
            line(&mut text, "ct", ct.as_slice());
            line(&mut text, "ss", ss.as_slice());
            let t = Instant::now();
            super::crash::stage("dec");
            // SAFETY: as above.
            let rc = unsafe {
                dec(
                    sk.ptr(),
                    sk_n as u64,
                    ct.ptr(),
                    ct_n as u64,
                    ss2.ptr(),
                    &mut l3,
                )
            };
            timing.push(("dec".to_string(), t.elapsed().as_secs_f64() * 1e3));
            check_all(&[&sk, &ct, &ss2], "dec")?;
            if rc != 0 {
                return Err(fail(format!("crypto_kem_dec returned {rc}")));
            }
            if ss.as_slice() != ss2.as_slice() {
                return Err(fail("decapsulation gave a different shared secret".into()));
            }
        }
        Kind::Sig => {
            const MLEN: usize = 33;
            let _ = writeln!(text, "mlen = {MLEN}");
            let msg = rng::draw(MLEN);
            line(&mut text, "msg", &msg);
            rng::install(rng::seeded(&job.rng, &seed));
            let size = |i| lib.size(i).map_err(|e| ("LOADFAIL".to_string(), e));
            let (pk_n, sk_n, sig_n) = (size(0)?, size(1)?, size(2)?);
            let keypair: KeypairFn = lib
                .func("ngcc_sig_keygen")
                .map_err(|e| ("LOADFAIL".into(), e))?;
            let sign: NistSignFn = lib
                .func("ngcc_nist_sign")
                .map_err(|e| ("LOADFAIL".into(), e))?;
            let open: NistSignFn = lib
                .func("ngcc_nist_open")
                .map_err(|e| ("LOADFAIL".into(), e))?;
            let verify: VerifyFn = lib
                .func("ngcc_sig_verify")
                .map_err(|e| ("LOADFAIL".into(), e))?;
            let detached: SignFn = lib
                .func("ngcc_sig_sign")
                .map_err(|e| ("LOADFAIL".into(), e))?;
            let (mut pk, mut sk) = (Guarded::new("pk", pk_n), Guarded::new("sk", sk_n));
            let (mut l1, mut l2) = (0u64, 0u64);
            let t = Instant::now();
            super::crash::stage("keygen");
            // SAFETY: buffers have the declared sizes (plus guards).
            let rc = unsafe { keypair(pk.ptr(), &mut l1, sk.ptr(), &mut l2) };
            timing.push(("keygen".to_string(), t.elapsed().as_secs_f64() * 1e3));
            check_all(&[&pk, &sk], "keygen")?;
            if rc != 0 {
                return Err(fail(format!("crypto_sign_keypair returned {rc}")));
            }
            line(&mut text, "pk", pk.as_slice());
            line(&mut text, "sk", sk.as_slice());
            let mut sm = Guarded::new("sm", MLEN + sig_n);
            let mut m = Guarded::with("m", &msg);
            let mut smlen = 0u64;
            let t = Instant::now();
            super::crash::stage("sign");
            // SAFETY: as above.
            let rc = unsafe { sign(sm.ptr(), &mut smlen, m.ptr(), MLEN as u64, sk.ptr()) };
            timing.push(("sign".to_string(), t.elapsed().as_secs_f64() * 1e3));
            check_all(&[&sm, &m, &sk], "sign")?;
            if rc != 0 {
                return Err(fail(format!("crypto_sign returned {rc}")));
            }
            if smlen as usize > sm.len() {
                return Err((
                    "OVERFLOW".into(),
                    format!("crypto_sign returned length {smlen} > {}", sm.len()),
                ));
            }
            let _ = writeln!(text, "smlen = {smlen}");
            line(&mut text, "sm", &sm.as_slice()[..smlen as usize]);
            let mut opened = Guarded::new("m", MLEN + sig_n);
            let mut mlen1 = 0u64;
            let t = Instant::now();
            super::crash::stage("open");
            // SAFETY: as above.
            let rc = unsafe { open(opened.ptr(), &mut mlen1, sm.ptr(), smlen, pk.ptr()) };
            timing.push(("open".to_string(), t.elapsed().as_secs_f64() * 1e3));
            check_all(&[&opened, &sm, &pk], "open")?;
            if rc != 0 {
                return Err(fail(format!("crypto_sign_open returned {rc}")));
            }
            if mlen1 as usize != MLEN || opened.as_slice()[..MLEN] != msg[..] {
                return Err(fail("crypto_sign_open did not return the message".into()));
            }
            // Beyond the NIST flow: a detached signature must verify, and fail on a flipped bit.
            let mut sig = Guarded::new("sig", sig_n);
            let mut siglen = 0u64;
            super::crash::stage("sign (detached)");
            // SAFETY: as above.
            let rc = unsafe {
                detached(
                    sk.ptr(),
                    sk_n as u64,
                    m.ptr(),
                    MLEN as u64,
                    sig.ptr(),
                    &mut siglen,
                )
            };
            check_all(&[&sig, &m], "sign")?;
            if siglen as usize > sig_n {
                return Err((
                    "OVERFLOW".into(),
                    format!("crypto_sign_signature returned length {siglen} > {sig_n}"),
                ));
            }
            if rc != 0 {
                return Err(fail(format!(
                    "detached signing failed (rc {rc}, length {siglen})"
                )));
            }
            super::crash::stage("verify");
            // SAFETY: as above.
            let ok = unsafe {
                verify(
                    pk.ptr(),
                    pk_n as u64,
                    sig.ptr(),
                    siglen,
                    m.ptr(),
                    MLEN as u64,
                )
            };
            m.as_mut_slice()[0] ^= 0x80;
            // SAFETY: as above.
            let forged = unsafe {
                verify(
                    pk.ptr(),
                    pk_n as u64,
                    sig.ptr(),
                    siglen,
                    m.ptr(),
                    MLEN as u64,
                )
            };
            if ok != 0 {
                return Err(fail(format!(
                    "verify rejected an honest signature (rc {ok})"
                )));
            }
            if forged == 0 {
                return Err(fail("verify accepted a modified message".into()));
            }
        }
        Kind::Kex | Kind::Hash => {
            return Err(("LOADFAIL".into(), "the NIST API has no kex or hash".into()));
        }
    }
    std::fs::write(job.out_dir.join(FILE_NAME), &text)
        .map_err(|e| ("CRASH".to_string(), format!("writing KAT: {e}")))?;
    out.files.push(FILE_NAME.to_string());
    out.timing = timing;
    out.records = 1;
    Ok(())
}

pub fn check_all(bufs: &[&Guarded], op: &str) -> Result<(), (String, String)> {
    for b in bufs {
        b.check(op).map_err(|d| ("OVERFLOW".to_string(), d))?;
    }
    Ok(())
}
