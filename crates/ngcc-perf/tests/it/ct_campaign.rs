//! Phase `ct` through the binary: the ct zoo (a constant-time toy KEM, one with a secret
//! branch in dec, one with a secret-indexed table in dec) and PQClean's ML-KEM-768 clean.
//! valgrind must be installed (CI installs it): these tests fail without it, never skip.

use crate::common;
use common::*;
use ngcc_perf::dataset::schema::{CtResult, CtSiteKind, CtVerdict, ProcessStatus};
use ngcc_perf::measure::dudect;
use std::path::Path;

fn ct(run: &Path, cand: &str, label: &str, op: &str) -> CtResult {
    let path = run
        .join("ct")
        .join(cand)
        .join(format!("{label}__{op}.json"));
    ngcc_perf::util::read_json(&path).unwrap_or_else(|e| panic!("{}: {e:#}", path.display()))
}

/// The verdicts of classes that vary the seed (keygen, enc, exchange).
const SEED_WORDS: [CtVerdict; 3] = [
    CtVerdict::NoSeedDependenceFound,
    CtVerdict::MaybeSeedDependent,
    CtVerdict::SeedDependent,
];

fn require_valgrind() {
    assert!(
        Path::new("/usr/bin/valgrind").is_file(),
        "valgrind is not installed (apt-get install -y valgrind): the ct tests need it"
    );
}

/// The line of `file` that carries `marker`.
fn marked_line(file: &Path, marker: &str) -> u64 {
    let text = std::fs::read_to_string(file).unwrap();
    let lines: Vec<usize> = text
        .lines()
        .enumerate()
        .filter(|(_, l)| l.contains(marker) && !l.trim_start().starts_with('*'))
        .map(|(i, _)| i + 1)
        .collect();
    assert_eq!(lines.len(), 1, "{marker} in {}", file.display());
    lines[0] as u64
}

/// Every stored t recomputed from the stored class statistics, and max |t| from the tests.
fn check_dudect(r: &CtResult) -> f64 {
    let d = r.dudect.as_ref().expect("dudect");
    assert_eq!(d.status, ProcessStatus::Complete, "{:?}", d.error);
    assert_eq!(d.tests.len(), dudect::CROPS + 2);
    for t in &d.tests {
        let again = dudect::welch_t(&t.fixed, &t.random);
        assert!(
            (again - t.t).abs() <= 1e-9 * t.t.abs().max(1.0),
            "{}",
            t.name
        );
    }
    assert_eq!(d.tests[0].fixed.n + d.tests[0].random.n, d.measurements);
    assert_eq!(dudect::max_abs_t(&d.tests), d.max_abs_t);
    d.max_abs_t
}

#[test]
fn the_ct_zoo_is_flagged_at_the_right_lines() {
    require_valgrind();
    let zoo = manifest_dir().join("tests/zoo/ct-kem");
    let dir = scratch("ct_zoo");
    let run = dir.join("r");
    let args = ["--ct-budget", "90", "--ct-measurements", "5000"];
    let stderr = campaign_ok("build,kat,ct", &zoo, &run, &args);
    let src = zoo.join("ct_toy.c");
    for label in ["ct-honest", "ct-branch", "ct-table"] {
        for op in ["keygen", "enc", "dec"] {
            let r = ct(&run, "zoo-ct", label, op);
            let t = r.taint.as_ref().expect("taint");
            assert_eq!(
                t.status,
                ProcessStatus::Complete,
                "{label} {op}: {:?}",
                t.error
            );
            assert!(t.tool.starts_with("valgrind-3."), "{}", t.tool);
            assert!(!r.ct_cflags.is_empty() && r.ct_cflags.ends_with("-g"));
            check_dudect(&r);
            let want: Vec<(String, u64, CtSiteKind)> = match (label, op) {
                ("ct-branch", "dec") => vec![(
                    "ct_toy.c".into(),
                    marked_line(&src, "CT-BRANCH"),
                    CtSiteKind::Branch,
                )],
                ("ct-table", "dec") => vec![(
                    "ct_toy.c".into(),
                    marked_line(&src, "CT-TABLE"),
                    CtSiteKind::Index,
                )],
                _ => vec![],
            };
            let got: Vec<(String, u64, CtSiteKind)> = t
                .sites
                .iter()
                .map(|s| (s.file.clone(), s.line, s.kind.clone()))
                .collect();
            assert_eq!(got, want, "{label} {op}");
            assert!(t.sites.iter().all(|s| s.count >= 1 && !s.public_sk_data));
        }
    }
    // The branch does 64 volatile stores for about half the secret bytes: dudect sees it.
    let branch = ct(&run, "zoo-ct", "ct-branch", "dec");
    assert!(check_dudect(&branch) > 10.0, "{stderr}");
    assert_eq!(branch.dudect.as_ref().unwrap().verdict, CtVerdict::Leak);
    // keygen and enc vary the seed: their words say so, whatever t they reached.
    for label in ["ct-honest", "ct-branch", "ct-table"] {
        for op in ["keygen", "enc"] {
            let v = ct(&run, "zoo-ct", label, op).dudect.unwrap().verdict;
            assert!(SEED_WORDS.contains(&v), "{label} {op}: {v}");
        }
    }
    assert!(stderr.contains("ct zoo-ct/ct-branch dec: 1 sites, first ct_toy.c:"));
    // Resumable: nothing left to do.
    let again = campaign_ok("ct", &zoo, &run, &args);
    assert!(again.contains("ct: 0 to do"), "{again}");
    // Published and validated: every t recomputed; an edited t is named.
    let data = dir.join("d");
    let cat = dir.join("cat");
    publish_ok(&run, "ct-test", &data);
    catalog_ok(&data, &cat);
    let ok = validate(&data, &cat, None);
    assert!(ok.status.success(), "{}", text(&ok));
    assert!(
        text(&ok).contains("ct: 9 result(s), 918 dudect test(s) recomputed, 2 taint site(s)"),
        "{}",
        text(&ok)
    );
    let file = data.join("ct/zoo-ct/ct-branch__dec.json");
    let mut r: CtResult = ngcc_perf::util::read_json(&file).unwrap();
    r.dudect.as_mut().unwrap().tests[0].t += 1.0;
    std::fs::write(&file, serde_json::to_vec_pretty(&r).unwrap()).unwrap();
    let bad = validate(&data, &cat, None);
    assert_eq!(bad.status.code(), Some(1));
    assert!(
        text(&bad).contains("ct/zoo-ct/ct-branch__dec.json: dudect test raw t"),
        "{}",
        text(&bad)
    );
}

#[test]
fn ml_kem_768_clean_has_no_secret_site_and_no_dudect_leak_in_dec() {
    require_valgrind();
    let tree = pqclean().expect("the PQClean tree (cargo-fetched) is needed by this test");
    assert!(tree.is_dir());
    let dir = scratch("ct_mlkem");
    let cands = dir.join("c");
    let run = dir.join("r");
    run_ok(&[
        "import",
        "pqclean",
        "--out",
        cands.to_str().unwrap(),
        "--family",
        "ml-kem",
    ]);
    // sk = s (1152) || pk (1184) || H(pk) (32) || z (32): declare pk and H(pk) public.
    let manifest = cands.join("ml-kem/candidate.toml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    let text = text.replace(
        "namespace = \"PQCLEAN_MLKEM768_CLEAN\"\n",
        "namespace = \"PQCLEAN_MLKEM768_CLEAN\"\nct_sk_public = [[1152, 2368]]\n",
    );
    std::fs::write(&manifest, text).unwrap();
    let args = [
        "--only",
        "ml-kem-768-clean",
        "--ct-budget",
        "150",
        "--ct-measurements",
        "10000",
    ];
    campaign_ok("build,kat,ct", &cands, &run, &args);
    let enc = ct(&run, "ml-kem", "ml-kem-768-clean", "enc");
    let t = enc.taint.as_ref().unwrap();
    assert_eq!(t.status, ProcessStatus::Complete, "{:?}", t.error);
    assert!(t.sites.is_empty(), "enc: {:?}", t.sites);
    let dec = ct(&run, "ml-kem", "ml-kem-768-clean", "dec");
    let t = dec.taint.as_ref().unwrap();
    assert_eq!(t.status, ProcessStatus::Complete, "{:?}", t.error);
    assert_eq!(t.stages, ["secret", "whole-sk"]);
    // Only the matrix expansion from the pk inside sk: rejection sampling in indcpa.c.
    assert!(!t.sites.is_empty());
    for s in &t.sites {
        assert!(s.public_sk_data, "a secret site in dec: {s:?}");
        assert_eq!(
            (s.file.as_str(), s.function.as_str()),
            ("indcpa.c", "rej_uniform")
        );
    }
    let max_t = check_dudect(&dec);
    assert!(max_t < 4.5, "dec dudect max |t| {max_t}");
    assert_eq!(dec.dudect.as_ref().unwrap().verdict, CtVerdict::NoLeakFound);
    // keygen's timing depends on its seed (rejection sampling of the public matrix; max |t|
    // in the hundreds): that is never called a leak, nor is enc's.
    for op in ["keygen", "enc"] {
        let r = ct(&run, "ml-kem", "ml-kem-768-clean", op);
        check_dudect(&r);
        let v = r.dudect.unwrap().verdict;
        assert!(SEED_WORDS.contains(&v), "{op}: {v}");
    }
    assert_eq!(dec.dudect.as_ref().unwrap().measurements, 10000);
}
