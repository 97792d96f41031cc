//! Phase `profile` through the binary: ML-KEM-768 clean (real PQClean code), the ICCS toy
//! KEM, and instances that cannot be relinked. Every stored share is recomputed here from
//! its call table, independently of the code that wrote it.

use crate::common;
use common::*;
use ngcc_perf::dataset::schema::{BuildEntry, Profile};
use std::path::Path;

fn profile(run: &Path, cand: &str, label: &str, op: &str) -> Profile {
    let path = run
        .join("profile")
        .join(cand)
        .join(format!("{label}__{op}.json"));
    ngcc_perf::util::read_json(&path).unwrap_or_else(|e| panic!("{}: {e:#}", path.display()))
}

fn close(a: f64, b: f64) -> bool {
    a == b || (a - b).abs() <= 1e-9 * a.abs().max(b.abs())
}

/// Σ share of the `fn`s matching `pick`.
fn share_where(p: &Profile, pick: impl Fn(&str) -> bool) -> f64 {
    p.share
        .as_ref()
        .unwrap()
        .iter()
        .filter(|(f, _)| pick(f))
        .map(|(_, v)| v.as_f64().unwrap())
        .sum()
}

fn calls_per_op(p: &Profile, pick: impl Fn(&str) -> bool) -> f64 {
    let ops = p.total.as_ref().unwrap().operations as f64;
    p.calls
        .iter()
        .filter(|c| pick(&c.func))
        .map(|c| c.calls as f64)
        .sum::<f64>()
        / ops
}

/// The stored shares, hash share and corrected shares against a recomputation from calls.
fn check_recomputed(p: &Profile, build: &BuildEntry, run: &Path) {
    assert_eq!(p.schema, 2);
    assert_eq!(p.status.as_str(), "complete", "{}", p.stderr);
    let total = p.total.as_ref().expect("total");
    assert!(total.operations >= 3 && total.operations <= 1000);
    assert!(total.ticks > 0);
    for k in [
        "id",
        "instance",
        "operation",
        "tick_source",
        "tick_hz",
        "warmups",
        "overflow_calls",
    ] {
        assert!(p.meta.get(k).is_some_and(|v| v.is_string()), "meta.{k}");
    }
    assert_eq!(p.meta["overflow_calls"], "0");
    let mut want: Vec<(String, u64)> = Vec::new();
    for c in &p.calls {
        match want.iter_mut().find(|(f, _)| *f == c.func) {
            Some((_, t)) => *t += c.ticks,
            None => want.push((c.func.clone(), c.ticks)),
        }
    }
    let share = p.share.as_ref().expect("share");
    assert_eq!(share.len(), want.len(), "one share per fn with calls");
    for (f, t) in &want {
        let got = share[f.as_str()].as_f64().unwrap();
        assert!(
            close(got, *t as f64 / total.ticks as f64),
            "share.{f} {got} != {t}/{}",
            total.ticks
        );
    }
    let x = p.ngcc.as_ref().expect("ngcc block");
    let hash: f64 = want
        .iter()
        .filter(|(f, _)| x.hash_fns.contains(f))
        .map(|(_, t)| *t as f64 / total.ticks as f64)
        .sum();
    assert!(close(p.hash_share.unwrap(), hash), "hash_share");
    // hash and RNG functions are disjoint, and every fn in the table is one of them.
    for (f, _) in &want {
        assert!(
            x.hash_fns.contains(f) != x.rng_fns.contains(f),
            "{f} must be exactly one of hash/rng"
        );
    }
    // Corrected shares from the recorded overhead.
    let n_calls: u64 = p.calls.iter().map(|c| c.calls).sum();
    let den = total.ticks as f64 - n_calls as f64 * x.wrapper_ticks_per_call;
    for (f, t) in &want {
        let n: u64 = p
            .calls
            .iter()
            .filter(|c| c.func == *f)
            .map(|c| c.calls)
            .sum();
        let num = (*t as f64 - n as f64 * x.wrapper_inside_ticks_per_call).max(0.0);
        assert!(
            close(x.share_corrected[f], num / den),
            "share_corrected.{f}"
        );
    }
    assert!(x.wrapper_ticks_per_call > 0.0);
    assert!(x.wrapper_inside_ticks_per_call <= x.wrapper_ticks_per_call);
    // The libraries: the timed one from build.json, the relinked one as on disk.
    assert_eq!(x.timed_library_sha256, build.library_sha256);
    let relinked = run
        .join("profile-lib")
        .join(&p.candidate)
        .join(format!("lib{}.so", p.label));
    assert_eq!(
        x.relinked_library_sha256,
        ngcc_perf::util::sha256_file(&relinked).unwrap()
    );
    assert_ne!(
        Some(&x.relinked_library_sha256),
        build.library_sha256.as_ref()
    );
}

fn is_keccak(f: &str) -> bool {
    f.starts_with("shake") || f.starts_with("sha3_")
}

#[test]
fn ml_kem_768_clean_keccak_and_randombytes_shares() {
    let Some(_) = pqclean() else { return };
    let dir = tempfile::tempdir().unwrap();
    let cands = dir.path().join("c");
    let run = dir.path().join("r");
    run_ok(&[
        "import",
        "pqclean",
        "--out",
        cands.to_str().unwrap(),
        "--family",
        "ml-kem",
    ]);
    let args = ["--only", "ml-kem-768-clean", "--allow-unfixed-host"];
    let stderr = campaign_ok("build,kat,calibrate,profile", &cands, &run, &args);
    let build = build_entry(&run, "ml-kem/ml-kem-768-clean");
    for op in ["keygen", "enc", "dec"] {
        let p = profile(&run, "ml-kem", "ml-kem-768-clean", op);
        check_recomputed(&p, &build, &run);
        let keccak = share_where(&p, is_keccak);
        assert!(
            keccak > 0.02 && keccak < 0.95,
            "{op}: Keccak share {keccak}"
        );
        assert!(calls_per_op(&p, is_keccak) >= 10.0, "{op}: Keccak calls/op");
        // ML-KEM absorbs the matrix seed 9 times (k² = 9 SHAKE128 instances) per operation.
        assert_eq!(calls_per_op(&p, |f| f == "shake128_absorb"), 9.0, "{op}");
        let rb = calls_per_op(&p, |f| f == "randombytes");
        assert_eq!(
            rb,
            if op == "dec" { 0.0 } else { 1.0 },
            "{op}: randombytes/op"
        );
        let x = p.ngcc.as_ref().unwrap();
        assert_eq!(x.rng_fns, ["randombytes"]);
        assert!(x.hash_fns.iter().all(|f| is_keccak(f)), "{:?}", x.hash_fns);
        assert!(x.wrapped_symbols.contains(&"sha3_512".to_string()));
        assert_eq!(x.relinked_kat_identical, Some(true));
        assert!(x.bytes_hashed_per_op > 0.0);
        assert!(
            stderr.contains(&format!(
                "profile ml-kem ml-kem-768-clean {op}: complete hash="
            )),
            "{stderr}"
        );
    }
    // Resumable: a second run profiles nothing.
    let again = campaign_ok("profile", &cands, &run, &args);
    assert!(again.contains("profile: 0 to do"));
}

#[test]
fn iccs_toy_helpers_and_drng_are_profiled() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("r");
    let cands = manifest_dir().join("tests/toys/iccs-prof");
    let zoo = manifest_dir().join("tests/zoo");
    campaign_ok(
        "build,kat,calibrate,profile",
        &cands,
        &run,
        &[
            "--allow-unfixed-host",
            "--allow-source-root",
            zoo.to_str().unwrap(),
        ],
    );
    let build = build_entry(&run, "zoo-iccs-prof/toy-iccs-prof");
    let enc = profile(&run, "zoo-iccs-prof", "toy-iccs-prof", "enc");
    check_recomputed(&enc, &build, &run);
    for f in ["pseudoXOF", "pseudohash", "sm3hash", "drng"] {
        assert!(share_where(&enc, |g| g == f) > 0.0, "enc: share of {f}");
        assert_eq!(calls_per_op(&enc, |g| g == f), 1.0, "enc: {f} calls/op");
    }
    let x = enc.ngcc.as_ref().unwrap();
    assert_eq!(x.hash_fns, ["pseudoXOF", "pseudohash", "sm3hash"]);
    assert_eq!(x.rng_fns, ["drng"]);
    // The DRNG is not hashing: hash_share leaves it out.
    let all = share_where(&enc, |_| true);
    let drng = share_where(&enc, |f| f == "drng");
    assert!(close(enc.hash_share.unwrap(), all - drng));
    assert_eq!(
        x.relinked_kat_identical,
        Some(true),
        "the relinked toy writes the same KAT text"
    );
    // Call shapes as the wrappers read them: sm3hash of m (256 bits) to 256 bits.
    assert!(
        enc.calls
            .iter()
            .any(|c| c.func == "sm3hash" && c.in_bits == 256 && c.out_bits == 256)
    );
    assert!(
        enc.calls
            .iter()
            .any(|c| c.func == "drng" && c.in_bits == 0 && c.out_bits == 256)
    );
    let keygen = profile(&run, "zoo-iccs-prof", "toy-iccs-prof", "keygen");
    check_recomputed(&keygen, &build, &run);
    assert_eq!(calls_per_op(&keygen, |f| f == "sm3hash"), 0.0);
    let dec = profile(&run, "zoo-iccs-prof", "toy-iccs-prof", "dec");
    check_recomputed(&dec, &build, &run);
    assert_eq!(share_where(&dec, |f| f == "drng"), 0.0);
}

#[test]
fn an_instance_that_cannot_be_relinked_is_recorded_and_the_phase_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("r");
    let cands = manifest_dir().join("tests/zoo/nist-toy");
    let zoo = manifest_dir().join("tests/zoo");
    let args = [
        "--allow-source-root",
        zoo.to_str().unwrap(),
        "--only",
        "toy-ok,toy-mismatch,toy-crash-keygen",
        "--allow-unfixed-host",
    ];
    campaign_ok("build,kat,calibrate", &cands, &run, &args);
    // toy-mismatch: its object replaced by another (valid) object, so the objects no longer
    // link into the timed library.
    let obj = |label: &str, flags: &str| {
        run.join("build")
            .join("zoo-nist")
            .join(label)
            .join(format!("obj-{flags}"))
            .join("000_toy.o")
    };
    let mm = build_entry(&run, "zoo-nist/toy-mismatch");
    std::fs::copy(
        obj("toy-ok", "guide"),
        obj("toy-mismatch", mm.flags.as_str()),
    )
    .unwrap();
    // toy-crash-keygen is never measurable (KAT CRASH); toy-ok is profiled normally.
    let stderr = campaign_ok("profile", &cands, &run, &args);
    let relink_failed = || -> serde_json::Value {
        ngcc_perf::util::read_json(&run.join("profile/zoo-nist/toy-mismatch__RELINK_FAILED.json"))
            .unwrap()
    };
    let failed = relink_failed();
    let reason = failed["reason"].as_str().unwrap();
    assert!(
        reason.contains("do not reproduce the timed library"),
        "{reason}"
    );
    assert!(stderr.contains("profile zoo-nist toy-mismatch keygen: relink_failed"));
    assert!(
        !run.join("profile/zoo-nist/toy-mismatch__keygen.json")
            .exists()
    );
    let ok = build_entry(&run, "zoo-nist/toy-ok");
    for op in ["keygen", "enc", "dec"] {
        let p = profile(&run, "zoo-nist", "toy-ok", op);
        check_recomputed(&p, &ok, &run);
    }
    let enc = profile(&run, "zoo-nist", "toy-ok", "enc");
    assert!(share_where(&enc, |f| f == "randombytes") > 0.0);
    assert_eq!(enc.hash_share, Some(0.0), "the toy hashes nothing");

    // A missing object: the same outcome with its own reason; the failure file is
    // rewritten, nothing else changes.
    std::fs::remove_file(obj("toy-mismatch", mm.flags.as_str())).unwrap();
    assert!(campaign_ok("profile", &cands, &run, &args).contains("relink_failed"));
    let failed = relink_failed();
    assert!(
        failed["reason"].as_str().unwrap().contains("is missing"),
        "{failed}"
    );
}
