//! The campaign phase `baseline` (reference §1.13) end to end: the ICCS helpers built as hash
//! instances of the pseudo-candidate `iccs`, self-tested against the Rust model (their logs
//! equal the reference's published self-test logs line for line, apart from the paths and the
//! model named), timed at S1–S8 (`records/iccs/<label>__hash_<n>.json`); with them the
//! summary's hash rows show ratios to `pseudoXOF`, the "ICCS hash helpers" section renders,
//! and `validate` recomputes the ratios from the raw trials.

use crate::common;
use common::*;
use ngcc_perf::dataset::schema::{BuildFile, Record};
use std::path::{Path, PathBuf};

const SIZES: [u64; 8] = [32, 128, 512, 1024, 4096, 8192, 16384, 65536];
const LABELS: [&str; 12] = [
    "sm3hash-256",
    "pseudohash-512",
    "pseudohash-768",
    "pseudohash-1024",
    "pseudoXOF-256",
    "pseudoXOF-384",
    "pseudoXOF-512",
    "pseudoXOF-768",
    "pseudoXOF-1024",
    "pseudoXOF-1152",
    "pseudoXOF-1280",
    "pseudoXOF-2048",
];
/// Short trials: this checks the pipeline, not the figures. The sample's full hash KAT set
/// (a 2^33-bit message, a million iterations: 33 CPU-s) is not what this checks; .ci/run
/// runs the full set on the corpus.
const FAST: [&str; 6] = [
    "--quick",
    "--allow-unfixed-host",
    "--trial-target",
    "0.002",
    "--op-budget",
    "0.05",
];

fn hash_sample() -> PathBuf {
    manifest_dir().join("../../samples/iccs/hash-s1")
}

/// The self-test log lines that do not name paths or the model.
fn judged_lines(text: &str) -> Vec<&str> {
    text.lines()
        .filter(|l| {
            !["library = ", "model = ", "helpers = "]
                .iter()
                .any(|p| l.starts_with(p))
        })
        .collect()
}

fn check_selftest_logs(run: &Path) {
    let reference = reference::data_dir().join("kat/iccs");
    let mut compared = 0;
    for entry in std::fs::read_dir(&reference).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let ours = std::fs::read_to_string(run.join("kat/iccs").join(&name))
            .unwrap_or_else(|e| panic!("kat/iccs/{name}: {e}"));
        let theirs = std::fs::read_to_string(&path).unwrap();
        assert_eq!(
            judged_lines(&ours),
            judged_lines(&theirs),
            "kat/iccs/{name} differs from the reference's"
        );
        compared += 1;
    }
    assert!(compared >= 7, "{compared} reference logs");
}

#[test]
fn baseline_times_the_helpers_and_the_summary_shows_ratios() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    let stderr = campaign_ok(
        "build,kat,baseline,calibrate,measure",
        &hash_sample(),
        &run,
        &FAST,
    );
    assert!(
        stderr.contains("baseline build: 12/12 built (ICCS helpers: ngcc-perf csrc/iccs/auxfunc.c), 12/12 self-tests PASS"),
        "{stderr}"
    );
    let build: BuildFile = ngcc_perf::util::read_json(&run.join("build.json")).unwrap();
    for label in LABELS {
        let e = build.entry(&format!("iccs/{label}")).unwrap();
        assert_eq!(e.variant, "iccs-baseline");
        assert_eq!(e.kat.to_string(), "PASS", "{label}");
        assert_eq!(
            e.kat_log.as_deref(),
            Some(&*format!("kat/iccs/{label}.log"))
        );
        let log = std::fs::read_to_string(run.join(e.kat_log.unwrap())).unwrap();
        let total = if label == "sm3hash-256" { 20 } else { 18 };
        assert!(
            log.ends_with(&format!("RESULT iccs {label} PASS ({total}/{total})\n")),
            "{log}"
        );
        for size in SIZES {
            let path = run.join(format!("records/iccs/{label}__hash_{size}.json"));
            let rec: Record = ngcc_perf::util::read_json(&path)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert_eq!(rec.status.as_str(), "complete", "{label} {size}");
        }
    }
    check_selftest_logs(&run);

    // Resume: nothing is rebuilt, re-tested or re-timed.
    let again = campaign_ok("baseline", &hash_sample(), &run, &FAST);
    assert!(again.contains("12/12 self-tests PASS"), "{again}");
    assert!(again.contains("0 operations planned"), "{again}");
    // Never sharded.
    let out = campaign("baseline", &hash_sample(), &run, &["--shard", "1/2"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));

    let ds = dir.path().join("ds");
    let cat = dir.path().join("cat");
    let pages = dir.path().join("pages");
    publish_ok(&run, "test_1", &ds);
    catalog_ok(&ds, &cat);
    run_ok(&[
        "report",
        ds.to_str().unwrap(),
        "--catalog",
        cat.to_str().unwrap(),
        "--out",
        pages.to_str().unwrap(),
    ]);
    let summary = std::fs::read_to_string(pages.join("performance/summary_test_1.md")).unwrap();
    assert!(summary.contains("\n## ICCS hash helpers\n"), "{summary}");
    assert!(
        summary.contains("as ngcc-perf implements them (`csrc/iccs/auxfunc.c`; the official `api/auxfunc.c` was not given"),
        "{summary}"
    );
    for label in LABELS {
        let (func, bits) = label.split_once('-').unwrap();
        assert!(
            summary.contains(&format!("| `{func}` | {bits} | ")),
            "{label} row: {summary}"
        );
    }
    let row = summary
        .lines()
        .find(|l| l.starts_with("| [hash-s1]"))
        .expect("the hash row");
    assert_eq!(row.matches("×)").count(), 3, "{row}");
    let method = std::fs::read_to_string(pages.join("performance/method_test_1.md")).unwrap();
    assert!(
        method.contains("checked against the Rust model `ngcc-iccs` at 18 message lengths"),
        "{method}"
    );

    let out = validate(&ds, &cat, Some(&pages));
    assert!(out.status.success(), "{}", text(&out));
    // One ratio per complete SM3-256 record (8 sizes). A loaded host can leave one of them
    // `inconsistent` (its cross-checks are held), which validate then does not divide.
    let mut complete = 0;
    for size in SIZES {
        let path = run.join(format!("records/hash-s1/SM3-256__hash_{size}.json"));
        let rec: Record = ngcc_perf::util::read_json(&path).unwrap();
        match rec.status.as_str() {
            "complete" => complete += 1,
            other => assert_eq!(other, "inconsistent", "SM3-256 hash_{size}"),
        }
    }
    assert!(complete > 0);
    assert!(
        text(&out).contains(&format!(
            "baseline: 12 ICCS helper(s), 96 record(s); {complete} pseudoXOF ratio(s) recomputed from trials"
        )),
        "{}",
        text(&out)
    );
    // A helper record gone: validate says which, and the ratio it carried.
    std::fs::remove_file(ds.join("records/iccs/pseudoXOF-256__hash_1024.json")).unwrap();
    let out = validate(&ds, &cat, None);
    assert_eq!(out.status.code(), Some(1));
    let t = text(&out);
    assert!(
        t.contains("records/iccs/pseudoXOF-256__hash_1024.json: missing"),
        "{t}"
    );
    assert!(
        t.contains(
            "records/hash-s1/SM3-256__hash_1024.json: no iccs/pseudoXOF-256 record at 1024 bytes"
        ),
        "{t}"
    );
}

/// The official ICCS API folder of the NGCC Round-1 corpus (`NGCC_R1_CORPUS`, else
/// `shared/ngcc-r1` beside the checkout); missing, see `common::not_available`.
fn official_api() -> Option<PathBuf> {
    let corpus = std::env::var_os("NGCC_R1_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| manifest_dir().join("../../../shared/ngcc-r1"));
    let api = corpus.join("iccs-api");
    if api.join("auxfunc.c").is_file() {
        Some(api)
    } else {
        not_available(
            "NGCC_REQUIRE_CORPUS",
            &format!("no official ICCS API at {}", api.display()),
        );
        None
    }
}

#[test]
fn baseline_builds_the_official_helpers_when_given() {
    let Some(api) = official_api() else { return };
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    let mut args: Vec<&str> = FAST.to_vec();
    // All twelve built and self-tested; one timed (an `--only` glob naming a helper).
    args.extend([
        "--iccs-helpers",
        api.to_str().unwrap(),
        "--only",
        "hash-s1/*,iccs/sm3hash-256",
    ]);
    let stderr = campaign_ok("baseline", &hash_sample(), &run, &args);
    assert!(
        stderr
            .contains("12/12 built (ICCS helpers: official api/auxfunc.c), 12/12 self-tests PASS"),
        "{stderr}"
    );
    let build: BuildFile = ngcc_perf::util::read_json(&run.join("build.json")).unwrap();
    let e = build.entry("iccs/pseudoXOF-1280").unwrap();
    assert_eq!(
        e.algorithm.as_deref(),
        Some("ICCS helpers: official api/auxfunc.c")
    );
    let official = ngcc_perf::util::sha256_file(&api.join("auxfunc.c")).unwrap();
    assert!(
        e.sources.iter().any(|s| s.sha256 == official),
        "the official auxfunc.c is built: {:?}",
        e.sources
    );
    let log = std::fs::read_to_string(run.join("kat/iccs/pseudoXOF-1280.log")).unwrap();
    assert!(
        log.contains(&format!(
            "helpers = official ICCS API auxfunc.c (sha256 {official})"
        )),
        "{log}"
    );
    check_selftest_logs(&run);
    for size in SIZES {
        assert!(
            run.join(format!("records/iccs/sm3hash-256__hash_{size}.json"))
                .is_file()
        );
        assert!(
            !run.join(format!("records/iccs/pseudoXOF-256__hash_{size}.json"))
                .exists(),
            "only the helper --only names is timed"
        );
    }
    // No absolute path of the helper folder leaks into the evidence.
    let text = std::fs::read_to_string(run.join("build.json")).unwrap();
    assert!(!text.contains(api.to_str().unwrap()));
}
