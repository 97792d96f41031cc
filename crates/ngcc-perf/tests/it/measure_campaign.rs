//! The measurement engine end to end on a fast toy KEM: records complete with n ≥ 100,
//! statistics that recompute from raw trials, resumable phases, a dataset that validates,
//! and refusal on an unfixed host without --allow-unfixed-host.

use crate::common;
use common::*;
use ngcc_perf::dataset::schema::Record;

/// `campaign PHASES` on the toy KEM `toy-ok` with a short trial target.
fn toy_campaign(run: &std::path::Path, phases: &str, extra: &[&str]) -> std::process::Output {
    let cands = manifest_dir().join("tests/zoo/nist-toy");
    let zoo = manifest_dir().join("tests/zoo");
    let mut args = vec![
        "--allow-source-root",
        zoo.to_str().unwrap(),
        "--only",
        "toy-ok",
        "--trial-target",
        "0.02",
        // Room for the timed-share rule's longer trials even when a loaded host makes the
        // fixed cost large (else the plan puts the five trials in one process).
        "--op-budget",
        "60",
    ];
    args.extend_from_slice(extra);
    campaign(phases, &cands, run, &args)
}

#[test]
fn toy_kem_is_measured_and_every_figure_recomputes() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    let out = toy_campaign(&run, "all", &["--allow-unfixed-host"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for op in ["keygen", "enc", "dec"] {
        let path = run.join(format!("records/zoo-nist/toy-ok__{op}.json"));
        let rec: Record = ngcc_perf::util::read_json(&path).unwrap();
        assert_eq!(
            rec.status.as_str(),
            "complete",
            "{op}: {:?}",
            rec.processes.iter().map(|p| &p.stderr).collect::<Vec<_>>()
        );
        let st = rec.stats.as_ref().unwrap();
        assert!(st.measurements >= 100, "{op}: n = {}", st.measurements);
        assert_eq!(
            rec.processes.len(),
            5,
            "five trials, each in a fresh process"
        );
        assert!(rec.processes.iter().all(|p| p.trials.len() == 1));
        // Separate trial processes were planned from three measured dry trials.
        let cal: ngcc_perf::dataset::schema::Calibration =
            ngcc_perf::util::read_json(&run.join(format!("calibrate/zoo-nist/toy-ok__{op}.json")))
                .unwrap();
        assert_eq!(cal.dry_fixed_s.len(), 3, "{op}");
        let again =
            ngcc_perf::measure::stats::record_stats(&rec.processes, rec.input_bytes).unwrap();
        assert_eq!(again.mean_seconds, st.mean_seconds);
        assert_eq!(again.median_trial_seconds, st.median_trial_seconds);
        assert_eq!(again.operations_per_second, st.operations_per_second);
        assert_eq!(again.mean_cycles, st.mean_cycles);
        let x = rec.ngcc.as_ref().unwrap();
        assert!(["perf_cycles", "tsc", "cntvct", "none"].contains(&x.counter.as_str()));
        assert!(x.timed_fraction > 0.0 && x.timed_fraction <= 1.0);
        assert!(x.spread.ci95_low <= st.mean_seconds && st.mean_seconds <= x.spread.ci95_high);
        assert!(!rec.environment.cpu_model.is_absent());
        assert_eq!(x.host_fixed, x.host_problems.is_empty());
    }
    assert!(
        run.join("setup/zoo-nist/toy-ok__dec/setup.json").is_file(),
        "dec setup is saved once"
    );
    // Resume: nothing left to do, records untouched.
    let before = std::fs::read(run.join("records/zoo-nist/toy-ok__enc.json")).unwrap();
    let out = toy_campaign(&run, "calibrate,measure", &["--allow-unfixed-host"]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("0 operations planned"));
    assert_eq!(
        before,
        std::fs::read(run.join("records/zoo-nist/toy-ok__enc.json")).unwrap()
    );
    // Publish, catalog, validate.
    let ds = dir.path().join("ds");
    let cat = dir.path().join("cat");
    publish_ok(&run, "test_1", &ds);
    catalog_ok(&ds, &cat);
    let out = validate(&ds, &cat, None);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        ds.join("journal.txt").is_file(),
        "publish carries the journal"
    );
    // Tamper evidence: an edit after publishing is named by validate…
    let rec_rel = "records/zoo-nist/toy-ok__enc.json";
    let body = std::fs::read_to_string(ds.join(rec_rel)).unwrap();
    std::fs::write(ds.join(rec_rel), body.replacen("\n", " \n", 1)).unwrap();
    let out = validate(&ds, &cat, None);
    assert!(!out.status.success());
    assert!(
        text(&out).contains(&format!("{rec_rel}: changed after it was published")),
        "{}",
        text(&out)
    );
    // A shown record whose trials no longer fit the wall time observed around its jail.
    let mut v: serde_json::Value = serde_json::from_str(&body).unwrap();
    v["processes"][0]["observed"]["wall_s"] = serde_json::Value::from(1e-6);
    std::fs::write(ds.join(rec_rel), serde_json::to_vec_pretty(&v).unwrap()).unwrap();
    let out = validate(&ds, &cat, None);
    assert!(!out.status.success());
    let want = format!(
        "{rec_rel}: status complete, but a cross-check fails: process 0: its trials claim "
    );
    assert!(text(&out).contains(&want), "{}", text(&out));
    assert!(text(&out).contains("its jail ran 0.000001 s (wall, observed)"));
    std::fs::write(ds.join(rec_rel), body).unwrap();
    // …and publish refuses a run file edited after ngcc-perf wrote it.
    let log = run.join("kat/zoo-nist/toy-ok.log");
    let mut edited = std::fs::read_to_string(&log).unwrap();
    edited.push_str("edited\n");
    std::fs::write(&log, edited).unwrap();
    let refused = ngcc(&[
        "publish".as_ref(),
        "--run".as_ref(),
        run.as_os_str(),
        "--system".as_ref(),
        "test_1".as_ref(),
        "--out".as_ref(),
        dir.path().join("ds2").as_os_str(),
    ]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        text(&refused).contains("kat/zoo-nist/toy-ok.log was changed after ngcc-perf wrote it"),
        "{}",
        text(&refused)
    );
    // Our candidate ids carry no `kem-` prefix: pages and site take the kind from build.json.
    let site = dir.path().join("site");
    run_ok(&[
        "site",
        ds.to_str().unwrap(),
        "--catalog",
        cat.to_str().unwrap(),
        "--out",
        site.to_str().unwrap(),
    ]);
    // Every banner is one sentence on one subject; our run says how its code was contained.
    let subjects = crate::site_banners::check_site(&site);
    assert!(subjects.contains(&"candidate code"), "{subjects:?}");
    let summary = std::fs::read_to_string(site.join("test_1/summary.html")).unwrap();
    assert!(
        summary.contains("Key encapsulation"),
        "the toy KEM is listed as a KEM"
    );
    assert!(
        !summary.contains("No completed keygen record"),
        "keygen is ranked"
    );
}

#[test]
fn on_an_unfixed_host_only_measuring_is_refused_unless_allowed() {
    let check = bin().args(["check"]).output().unwrap();
    if check.status.success() {
        eprintln!("SKIPPED: this host is fixed; the test is about unfixed hosts (see its name)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    assert!(
        toy_campaign(&run, "build,kat", &[]).status.success(),
        "build and kat are never refused"
    );
    let out = toy_campaign(&run, "calibrate", &[]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("refusing to measure on an unfixed host"),
        "{err}"
    );
    assert!(err.contains("HOST: "), "{err}");
}
