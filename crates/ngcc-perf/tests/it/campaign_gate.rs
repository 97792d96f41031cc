//! The build and KAT gate: real PQClean code against official digests, and the statuses a
//! broken source, a missing symbol, a KAT mismatch and a crashing KAT must produce.

use crate::common;
use common::*;

#[test]
fn toy_candidates_get_precise_statuses_and_the_campaign_goes_on() {
    let run = tempfile::tempdir().unwrap();
    let cands = manifest_dir().join("tests/zoo/nist-toy");
    let zoo = manifest_dir().join("tests/zoo");
    let zoo = zoo.to_str().unwrap();
    campaign_ok(
        "build,kat",
        &cands,
        run.path(),
        &["--allow-source-root", zoo],
    );
    let ok = build_entry(run.path(), "zoo-nist/toy-ok");
    assert_eq!((ok.kat.as_str(), ok.flags.as_str()), ("PASS", "guide"));
    assert!(ok.elf_load_bytes.unwrap() > 0 && ok.library_sha256.is_some());
    assert!(
        ok.sources
            .iter()
            .any(|s| s.path.ends_with("toy.c") && s.sha256.len() == 64)
    );

    let mm = build_entry(run.path(), "zoo-nist/toy-mismatch");
    assert_eq!(mm.kat.as_str(), "MISMATCH");
    assert_eq!(
        mm.flags.as_str(),
        "harness-default",
        "a KAT failure falls back to the harness defaults"
    );
    assert_eq!(
        mm.guide_result.as_ref().map(|s| s.as_str()),
        Some("MISMATCH")
    );

    let broken = build_entry(run.path(), "zoo-nist/toy-broken-source");
    assert_eq!(broken.kat.as_str(), "BUILDFAIL");
    assert!(
        broken.build_error.as_deref().unwrap().contains("error"),
        "{:?}",
        broken.build_error
    );
    assert!(run.path().join(broken.build_log.unwrap()).is_file());

    let missing = build_entry(run.path(), "zoo-nist/toy-missing-symbol");
    assert_eq!(missing.kat.as_str(), "BUILDFAIL");
    assert!(
        missing
            .build_error
            .as_deref()
            .unwrap()
            .contains("undefined symbols: toy_never_defined"),
        "{:?}",
        missing.build_error
    );

    let crash = build_entry(run.path(), "zoo-nist/toy-crash-keygen");
    assert_eq!(crash.kat.as_str(), "CRASH");
    assert!(crash.kat_detail.as_deref().unwrap().contains("SIGSEGV"));
    let log = run.path().join("kat/zoo-nist/toy-crash-keygen.log");
    assert!(
        last_line(&log).starts_with("RESULT zoo-nist toy-crash-keygen CRASH"),
        "{}",
        last_line(&log)
    );
    let log = run.path().join("kat/zoo-nist/toy-ok.log");
    assert_eq!(last_line(&log).trim_end(), "RESULT zoo-nist toy-ok PASS");
}

#[test]
fn pqclean_kem_signature_and_hqc_reproduce_official_digests() {
    let Some(_) = pqclean() else { return };
    let cands = tempfile::tempdir().unwrap();
    let run = tempfile::tempdir().unwrap();
    run_ok(&["import", "pqclean", "--out", cands.path().to_str().unwrap()]);
    let only = ["--only", "ml-kem-512-clean,ml-dsa-44-clean,hqc-128-clean"];
    campaign_ok("build,kat", cands.path(), run.path(), &only);
    for key in [
        "ml-kem/ml-kem-512-clean",
        "ml-dsa/ml-dsa-44-clean",
        "hqc/hqc-128-clean",
    ] {
        let e = build_entry(run.path(), key);
        assert_eq!(e.kat.as_str(), "PASS", "{key}: {:?}", e.kat_detail);
        assert_eq!(e.flags.as_str(), "guide");
    }
    // A second run changes nothing: every library comes from the cache.
    let err = campaign_ok("build,kat", cands.path(), run.path(), &only);
    assert!(err.contains("0 compiled, 3 cached"), "{err}");
}
