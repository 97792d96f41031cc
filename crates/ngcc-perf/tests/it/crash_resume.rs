//! Crash safety of our own state: `campaign all` on three fast toy instances, killed with
//! SIGKILL at random points and resumed each time; in the end no record is missing,
//! duplicated, truncated or corrupt, no temporary file is left, and the published dataset
//! validates. Then `validate` must catch a truncated and a hand-edited record.

use crate::common;
use common::*;
use ngcc_perf::dataset::schema::Record;
use std::path::Path;
use std::time::{Duration, Instant};

const ONLY: &str = "zoo-nist/toy-ok,zoo-nist-sig/sig-ok,zoo-iccs-kem/iccs-ok";
const KILLS: usize = 8;

/// The resumable campaign on the three fast instances, not started yet.
fn campaign_all(run: &Path) -> std::process::Command {
    let zoo = manifest_dir().join("tests/zoo");
    campaign_cmd(
        "all",
        &zoo,
        run,
        &[
            "--only",
            ONLY,
            "--allow-unfixed-host",
            "--trial-target",
            "0.002",
            "--op-budget",
            "0.05",
        ],
    )
}

/// xorshift64*: random kill delays from a seed printed with the results (reproducible).
fn next(state: &mut u64) -> u64 {
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    state.wrapping_mul(0x2545_F491_4F6C_DD1D)
}

fn expected_records() -> Vec<String> {
    let mut v = Vec::new();
    for (key, ops) in [
        ("zoo-nist/toy-ok", ["keygen", "enc", "dec"]),
        ("zoo-nist-sig/sig-ok", ["keygen", "sign", "verify"]),
        ("zoo-iccs-kem/iccs-ok", ["keygen", "enc", "dec"]),
    ] {
        let (cand, label) = key.split_once('/').unwrap();
        for op in ops {
            v.push(format!("records/{cand}/{label}__{op}.json"));
        }
    }
    v.sort();
    v
}

fn files_below(root: &Path, rel: &str, out: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(root.join(rel)) else {
        return;
    };
    for e in entries.flatten() {
        let name = format!("{rel}/{}", e.file_name().to_string_lossy());
        if e.path().is_dir() {
            files_below(root, &name, out);
        } else {
            out.push(name);
        }
    }
}

#[test]
fn killed_campaigns_resume_without_losing_or_corrupting_anything() {
    let _timed = common::measuring();
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    // A fixed seed (ZOO_CRASH_SEED picks another): the kill points are reproducible.
    let seed = std::env::var("ZOO_CRASH_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x9E37_79B9_7F4A_7C15u64);
    let mut rng = seed;
    let mut kills = Vec::new();
    let journal = run.join(ngcc_perf::journal::RUN_JOURNAL);
    let writes = || {
        std::fs::read_to_string(&journal)
            .map(|t| t.lines().count())
            .unwrap_or(0)
    };
    for _ in 0..KILLS {
        // Each (re)start is killed once it has journaled 1..3 more files, a few ms later:
        // kills follow the campaign's progress, not the clock, so a loaded or a fast host
        // interrupts the same stretch of work (resumes skip finished work, so successive
        // kills land in later phases).
        let wanted = writes() + 1 + (next(&mut rng) % 3) as usize;
        let jitter = Duration::from_millis(next(&mut rng) % 40);
        let mut child = campaign_all(&run)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let t = Instant::now();
        let mut finished = false;
        while writes() < wanted {
            if child.try_wait().unwrap().is_some() {
                finished = true;
                break;
            }
            assert!(
                t.elapsed() < Duration::from_secs(300),
                "seed {seed}: no progress in 300 s"
            );
            std::thread::sleep(Duration::from_millis(2));
        }
        if !finished {
            std::thread::sleep(jitter);
            finished = child.try_wait().unwrap().is_some();
            if !finished {
                child.kill().unwrap(); // SIGKILL
            }
        }
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        let phase = err
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("")
            .chars()
            .take(60)
            .collect::<String>();
        kills.push(format!(
            "after journal line {wanted} +{} ms{} ({phase})",
            jitter.as_millis(),
            if finished { " finished first" } else { "" }
        ));
        assert!(!err.contains("panicked"), "{err}");
    }
    let interrupted = kills
        .iter()
        .filter(|k| !k.contains("finished first"))
        .count();
    assert!(
        interrupted >= 3,
        "seed {seed}: only {interrupted} kills hit a running campaign"
    );
    // The last resume runs to completion.
    let out = campaign_all(&run).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "seed {seed}: {err}");
    eprintln!("crash test seed {seed}; kills at: {}", kills.join("; "));

    // Exactly the expected records, each complete and parseable; build.json intact.
    let mut records = Vec::new();
    files_below(&run, "records", &mut records);
    records.sort();
    assert_eq!(records, expected_records(), "seed {seed}");
    for rel in &records {
        let r: Record = ngcc_perf::util::read_json(&run.join(rel))
            .unwrap_or_else(|e| panic!("seed {seed}: {e:#}"));
        assert_eq!(r.status.as_str(), "complete", "seed {seed}: {rel}");
    }
    let build = build_file(&run);
    assert_eq!(build.entries().len(), 3, "seed {seed}");
    for (key, e) in build.entries() {
        assert!(
            e.kat.as_str() == "PASS" || e.kat.as_str() == "NOKAT",
            "seed {seed}: {key} {}",
            e.kat
        );
    }
    let mut all = Vec::new();
    files_below(&run, ".", &mut all);
    let tmp: Vec<&String> = all
        .iter()
        .filter(|p| p.ends_with(".tmp") && !p.starts_with("./scratch"))
        .collect();
    assert!(tmp.is_empty(), "seed {seed}: {tmp:?}");

    // Published, catalogued and validated.
    let ds = dir.path().join("dataset");
    let cat = dir.path().join("catalog");
    let (ds_s, cat_s) = (ds.to_str().unwrap(), cat.to_str().unwrap());
    publish_ok(&run, "zoo_1", &ds);
    run_ok(&["catalog", ds_s, "--out", cat_s, "--system", "zoo_1"]);
    let ok = run_ok(&["validate", ds_s, "--catalog", cat_s]);
    let text = String::from_utf8_lossy(&ok.stdout);
    assert!(
        text.contains("9 timing record(s)") && text.contains(" 0 problem(s)"),
        "{text}"
    );

    // validate names a truncated record…
    let victim = "records/zoo-nist/toy-ok__enc.json";
    let path = ds.join(victim);
    let original = std::fs::read(&path).unwrap();
    std::fs::write(&path, &original[..original.len() / 2]).unwrap();
    let out = validate(&ds, &cat, None);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains(victim), "{text}");

    // …and a hand-edited one (a trial made 10 % faster).
    let mut v: serde_json::Value = serde_json::from_slice(&original).unwrap();
    let s = &mut v["processes"][0]["trials"][0]["seconds"];
    *s = serde_json::json!(s.as_f64().unwrap() * 0.9);
    std::fs::write(&path, ngcc_perf::util::fsx::to_json_bytes(&v).unwrap()).unwrap();
    let out = validate(&ds, &cat, None);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.lines()
            .any(|l| l.contains(victim) && l.contains("mean_seconds")),
        "{text}"
    );
}
