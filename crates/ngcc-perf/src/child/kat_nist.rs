//! The NIST KAT flows PQClean's `nistkat-sha256` digests cover (pqclean-samples.md §4c):
//! one record, AES-256 CTR_DRBG seeded with bytes 00..2F (HQC: its SHAKE-256 PRNG).

use super::guard::Guarded;
use super::kat_common::{Fail, Timer, check_all, fail, load, rc_ok, size};
use super::library::*;
use super::protocol::{KatJob, KatOutput};
use super::rng;
use crate::candidate::Kind;
use crate::dataset::schema::KatStatus;
use std::fmt::Write as _;

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

/// Runs one operation under its crash stage, timed.
fn timed<R>(timer: &mut Timer, op: &str, f: impl FnOnce() -> R) -> R {
    super::crash::stage(op);
    timer.time(op, f)
}

/// The key pair of both flows: `keygen` (timed) and its checks, then the pk and sk lines.
fn keygen(
    f: KeypairFn,
    name: &str,
    (pk_n, sk_n): (usize, usize),
    text: &mut String,
    timer: &mut Timer,
) -> Result<(Guarded, Guarded), Fail> {
    let (mut pk, mut sk) = (Guarded::new("pk", pk_n), Guarded::new("sk", sk_n));
    let (mut l1, mut l2) = (0u64, 0u64);
    // SAFETY: buffers have the declared sizes (plus guards).
    let rc = timed(timer, "keygen", || unsafe {
        f(pk.ptr(), &mut l1, sk.ptr(), &mut l2)
    });
    check_all(&[&pk, &sk], "keygen")?;
    rc_ok(name, rc)?;
    line(text, "pk", pk.as_slice());
    line(text, "sk", sk.as_slice());
    Ok((pk, sk))
}

/// Runs the flow; `Err((status, detail))` ends the KAT with that status.
pub fn run(job: &KatJob, lib: &Lib, out: &mut KatOutput) -> Result<(), Fail> {
    let set: SetRandombytesFn = load(lib, "ngcc_set_randombytes")?;
    // SAFETY: the shim stores the callback; host_randombytes matches its type.
    unsafe { set(rng::host_randombytes) };
    let entropy: [u8; 48] = std::array::from_fn(|i| i as u8);
    rng::install(rng::seeded(&job.rng, &entropy));
    let mut text = String::from("count = 0\n");
    let seed: [u8; 48] = rng::draw(48).try_into().expect("48 bytes");
    line(&mut text, "seed", &seed);
    let mut timer = Timer::default();
    match job.kind {
        Kind::Kem => {
            rng::install(rng::seeded(&job.rng, &seed));
            let (pk_n, sk_n, ct_n, ss_n) =
                (size(lib, 0)?, size(lib, 1)?, size(lib, 2)?, size(lib, 3)?);
            let keypair: KeypairFn = load(lib, "ngcc_kem_keygen")?;
            let enc: KemOpFn = load(lib, "ngcc_kem_enc")?;
            let dec: KemDecFn = load(lib, "ngcc_kem_dec")?;
            let (mut pk, mut sk) = keygen(
                keypair,
                "crypto_kem_keypair",
                (pk_n, sk_n),
                &mut text,
                &mut timer,
            )?;
            let (mut ct, mut ss, mut ss2) = (
                Guarded::new("ct", ct_n),
                Guarded::new("ss", ss_n),
                Guarded::new("ss", ss_n),
            );
            let (mut l1, mut l2, mut l3) = (0u64, 0u64, 0u64);
            // SAFETY: as in keygen.
            let rc = timed(&mut timer, "enc", || unsafe {
                enc(pk.ptr(), pk_n as u64, ss.ptr(), &mut l1, ct.ptr(), &mut l2)
            });
            check_all(&[&pk, &ss, &ct], "enc")?;
            rc_ok("crypto_kem_enc", rc)?;
            line(&mut text, "ct", ct.as_slice());
            line(&mut text, "ss", ss.as_slice());
            // SAFETY: as in keygen.
            let rc = timed(&mut timer, "dec", || unsafe {
                dec(
                    sk.ptr(),
                    sk_n as u64,
                    ct.ptr(),
                    ct_n as u64,
                    ss2.ptr(),
                    &mut l3,
                )
            });
            check_all(&[&sk, &ct, &ss2], "dec")?;
            rc_ok("crypto_kem_dec", rc)?;
            if ss.as_slice() != ss2.as_slice() {
                return Err(fail(
                    KatStatus::CryptoFail,
                    "decapsulation gave a different shared secret",
                ));
            }
        }
        Kind::Sig => {
            const MLEN: usize = 33;
            let _ = writeln!(text, "mlen = {MLEN}");
            let msg = rng::draw(MLEN);
            line(&mut text, "msg", &msg);
            rng::install(rng::seeded(&job.rng, &seed));
            let (pk_n, sk_n, sig_n) = (size(lib, 0)?, size(lib, 1)?, size(lib, 2)?);
            let keypair: KeypairFn = load(lib, "ngcc_sig_keygen")?;
            let sign: NistSignFn = load(lib, "ngcc_nist_sign")?;
            let open: NistSignFn = load(lib, "ngcc_nist_open")?;
            let verify: VerifyFn = load(lib, "ngcc_sig_verify")?;
            let detached: SignFn = load(lib, "ngcc_sig_sign")?;
            let (mut pk, mut sk) = keygen(
                keypair,
                "crypto_sign_keypair",
                (pk_n, sk_n),
                &mut text,
                &mut timer,
            )?;
            let mut sm = Guarded::new("sm", MLEN + sig_n);
            let mut m = Guarded::with("m", &msg);
            let mut smlen = 0u64;
            // SAFETY: as in keygen.
            let rc = timed(&mut timer, "sign", || unsafe {
                sign(sm.ptr(), &mut smlen, m.ptr(), MLEN as u64, sk.ptr())
            });
            check_all(&[&sm, &m, &sk], "sign")?;
            rc_ok("crypto_sign", rc)?;
            if smlen as usize > sm.len() {
                return Err(fail(
                    KatStatus::Overflow,
                    format!("crypto_sign returned length {smlen} > {}", sm.len()),
                ));
            }
            let _ = writeln!(text, "smlen = {smlen}");
            line(&mut text, "sm", &sm.as_slice()[..smlen as usize]);
            let mut opened = Guarded::new("m", MLEN + sig_n);
            let mut mlen1 = 0u64;
            // SAFETY: as in keygen.
            let rc = timed(&mut timer, "open", || unsafe {
                open(opened.ptr(), &mut mlen1, sm.ptr(), smlen, pk.ptr())
            });
            check_all(&[&opened, &sm, &pk], "open")?;
            rc_ok("crypto_sign_open", rc)?;
            if mlen1 as usize != MLEN || opened.as_slice()[..MLEN] != msg[..] {
                return Err(fail(
                    KatStatus::CryptoFail,
                    "crypto_sign_open did not return the message",
                ));
            }
            // Beyond the NIST flow: a detached signature must verify, and fail on a flipped bit.
            let mut sig = Guarded::new("sig", sig_n);
            let mut siglen = 0u64;
            super::crash::stage("sign (detached)");
            // SAFETY: as in keygen.
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
                return Err(fail(
                    KatStatus::Overflow,
                    format!("crypto_sign_signature returned length {siglen} > {sig_n}"),
                ));
            }
            if rc != 0 {
                return Err(fail(
                    KatStatus::CryptoFail,
                    format!("detached signing failed (rc {rc}, length {siglen})"),
                ));
            }
            super::crash::stage("verify");
            let mut verify_m = |m: &mut Guarded| {
                // SAFETY: as in keygen.
                unsafe {
                    verify(
                        pk.ptr(),
                        pk_n as u64,
                        sig.ptr(),
                        siglen,
                        m.ptr(),
                        MLEN as u64,
                    )
                }
            };
            let ok = verify_m(&mut m);
            m.as_mut_slice()[0] ^= 0x80;
            let forged = verify_m(&mut m);
            if ok != 0 {
                return Err(fail(
                    KatStatus::CryptoFail,
                    format!("verify rejected an honest signature (rc {ok})"),
                ));
            }
            if forged == 0 {
                return Err(fail(
                    KatStatus::CryptoFail,
                    "verify accepted a modified message",
                ));
            }
        }
        Kind::Kex | Kind::Hash => {
            return Err(fail(KatStatus::LoadFail, "the NIST API has no kex or hash"));
        }
    }
    std::fs::write(job.out_dir.join(FILE_NAME), &text)
        .map_err(|e| fail(KatStatus::Crash, format!("writing KAT: {e}")))?;
    out.files.push(FILE_NAME.to_string());
    out.timing = timer.averages();
    out.records = 1;
    Ok(())
}
