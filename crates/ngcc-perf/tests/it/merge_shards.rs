//! `ngcc-perf merge`: shards of the reference dataset merge back into pages identical to the
//! whole dataset's, with the files `publish` writes; and every refusal is one line that names
//! the field and both values (hosts, campaigns, builds) or both paths (duplicates).

use crate::common;
use common::*;
use ngcc_perf::campaign::shard::in_shard;
use ngcc_perf::dataset::schema::{
    BuildEntry, BuildFile, Campaign, CounterKind, EnvField, FlagSetName, HostCheck, HostEnv,
    KatStatus, Op, Planning, Record, RecordStatus,
};
use ngcc_perf::util::write_json;
use serde_json::Value;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Output;

fn merge(inputs: &[&Path], out: &Path, system: Option<&str>) -> Output {
    let mut args: Vec<&OsStr> = vec!["merge".as_ref()];
    args.extend(inputs.iter().map(|p| p.as_os_str()));
    args.extend(["--out".as_ref(), out.as_os_str()]);
    if let Some(s) = system {
        args.extend([OsStr::new("--system"), OsStr::new(s)]);
    }
    ngcc(&args)
}

/// The one error line of a refused merge (exit 2, nothing written).
fn refusal(o: &Output, out: &Path) -> String {
    assert_eq!(o.status.code(), Some(2), "expected a refusal:\n{}", text(o));
    assert!(!out.exists(), "a refused merge must write nothing");
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(err.lines().count(), 1, "one line, not:\n{err}");
    err
}

fn files(dir: &Path) -> Vec<String> {
    let mut out: Vec<String> = ngcc_perf::dataset::load::files_under(dir, ".")
        .into_iter()
        .map(|p| p.trim_start_matches("./").to_string())
        .collect();
    out.sort();
    out
}

// ------------------------------------------------------------------ the reference, sharded

/// A copy of the fixture's evidence holding only the records and profiles of shard K/N (and,
/// like every shard, the whole build.json and every KAT log).
fn fixture_shard(fixture: &Path, dir: &Path, k: u32, n: u32) {
    copy_tree(fixture, dir);
    for sub in ["records", "profile"] {
        for rel in ngcc_perf::dataset::load::files_under(dir, sub) {
            let mut parts = rel.split('/');
            let (_, cand, file) = (parts.next(), parts.next().unwrap(), parts.next().unwrap());
            let label = file.split("__").next().unwrap();
            if !in_shard(&format!("{cand}/{label}"), Some((k, n))) {
                std::fs::remove_file(dir.join(&rel)).unwrap();
            }
        }
    }
}

#[test]
fn shards_of_the_reference_merge_into_its_own_pages() {
    let Some(fixture) = fixture_dir() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("shard-1"), tmp.path().join("shard-2"));
    fixture_shard(&fixture, &a, 1, 2);
    fixture_shard(&fixture, &b, 2, 2);
    let count = |d: &Path| ngcc_perf::dataset::load::files_under(d, "records").len();
    assert!(count(&a) > 0 && count(&b) > 0, "both halves hold records");
    assert_eq!(count(&a) + count(&b), count(&fixture));

    let merged = tmp.path().join("merged");
    // Input order does not matter.
    let o = merge(&[&b, &a], &merged, None);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("merge: 2 input(s) (shards 1/3, 2/3, 3/3), 18 record(s), 18 profile(s), 6 KAT log(s) for system arm_1"),
        "{}",
        text(&o)
    );
    // The same files, byte for byte, as publish writes from the whole dataset; campaign.json
    // differs only by the merge's own account of its inputs.
    let published = tmp.path().join("published");
    let o = ngcc(&[
        "publish".as_ref(),
        "--run".as_ref(),
        fixture.as_os_str(),
        "--system".as_ref(),
        "arm_1".as_ref(),
        "--out".as_ref(),
        published.as_os_str(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(files(&merged), files(&published));
    for rel in files(&published) {
        if rel != "campaign.json" {
            assert!(
                std::fs::read(merged.join(&rel)).unwrap()
                    == std::fs::read(published.join(&rel)).unwrap(),
                "{rel} differs from publish's"
            );
        }
    }
    let whole: Value =
        serde_json::from_slice(&std::fs::read(published.join("campaign.json")).unwrap()).unwrap();
    let mut mine: Value =
        serde_json::from_slice(&std::fs::read(merged.join("campaign.json")).unwrap()).unwrap();
    let parts = mine.as_object_mut().unwrap().remove("merged_from").unwrap();
    assert_eq!(parts.as_array().unwrap().len(), 2);
    assert_eq!(parts[0]["source"], "shard-1");
    assert_eq!(
        parts[0]["records"].as_u64().unwrap() + parts[1]["records"].as_u64().unwrap(),
        18
    );
    // Same facts, and the same (de-duplicated) host checks in time order.
    let as_campaign = |v: &Value| {
        serde_json::to_string(&serde_json::from_value::<Campaign>(v.clone()).unwrap()).unwrap()
    };
    assert_eq!(as_campaign(&mine), as_campaign(&whole));

    // Pages: byte-identical to those of the whole dataset; validation recomputes everything.
    let catalog = fixture.join("catalog");
    let (want, got) = (
        tmp.path().join("pages-whole"),
        tmp.path().join("pages-merged"),
    );
    for (data, pages) in [(&fixture, &want), (&merged, &got)] {
        let o = ngcc(&[
            "report".as_ref(),
            data.as_os_str(),
            "--catalog".as_ref(),
            catalog.as_os_str(),
            "--out".as_ref(),
            pages.as_os_str(),
        ]);
        assert!(o.status.success(), "{}", text(&o));
    }
    assert_eq!(files(&want), files(&got));
    assert!(files(&got).len() > 3);
    for rel in files(&want) {
        assert!(
            std::fs::read(want.join(&rel)).unwrap() == std::fs::read(got.join(&rel)).unwrap(),
            "page {rel} differs"
        );
    }
    let o = validate(&merged, &catalog, Some(&want));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        text(&o).contains("0 problem(s); report check: system arm_1"),
        "{}",
        text(&o)
    );
}

// ------------------------------------------------------------------ small synthetic shards

const SHA_A: &str = "aaaa000000000000000000000000000000000000000000000000000000000000";
const SHA_B: &str = "bbbb000000000000000000000000000000000000000000000000000000000000";

fn env(kernel: &str) -> HostEnv {
    let s = |v: &str| EnvField::Value(v.to_string());
    HostEnv {
        hostname: s("node1"),
        architecture: s("x86_64"),
        cpu_model: s("Example CPU"),
        kernel: s(kernel),
        compiler: s("gcc 12"),
        counter: EnvField::Value(CounterKind::Tsc),
        counter_hz: EnvField::Value(2_400_000_000),
        ..HostEnv::default()
    }
}

fn planning(trial_target_s: f64) -> Planning {
    Planning {
        trials: 5,
        trial_target_s,
        min_total: 100,
        max_iters_per_trial: 20000,
        op_budget_s: 5.0,
        separate_process_setup_s: 60.0,
        min_timed_share: None,
    }
}

struct Shard {
    k: u32,
    n: u32,
    /// (label, op) records this shard measured.
    records: Vec<(&'static str, &'static str)>,
    kernel: &'static str,
    trial_target_s: f64,
    sha_a: &'static str,
    finished: bool,
}

impl Shard {
    fn new(k: u32, records: &[(&'static str, &'static str)]) -> Shard {
        Shard {
            k,
            n: 2,
            records: records.to_vec(),
            kernel: "6.1.0-18-amd64",
            trial_target_s: 0.05,
            sha_a: SHA_A,
            finished: true,
        }
    }

    /// A run directory like one `campaign --shard K/N --build-from` leaves.
    fn write(&self, dir: &Path) -> PathBuf {
        let mut build = BuildFile::default();
        for (label, sha) in [("A", self.sha_a), ("B", SHA_B)] {
            build.set(&BuildEntry {
                candidate: "kem-1".into(),
                label: label.into(),
                instance: label.into(),
                variant: "reference".into(),
                flags: FlagSetName::Guide,
                kat: KatStatus::Pass,
                library: Some(format!("lib/kem-1/lib{label}.so")),
                library_sha256: Some(sha.into()),
                kat_log: Some(format!("kat/kem-1/{label}.log")),
                ..BuildEntry::default()
            });
            write(
                &dir.join(format!("kat/kem-1/{label}.log")),
                &format!("RESULT kem-1 {label} PASS\n"),
            );
        }
        write_json(&dir.join("build.json"), &build).unwrap();
        let campaign = Campaign {
            started_utc: Some("2026-01-01T00:00:00+00:00".into()),
            host_checks: vec![HostCheck {
                phase: "measure".into(),
                cpu: 1,
                utc: format!("2026-01-01T0{}:00:00+00:00", self.k),
                problems: vec![],
                shard: Some(format!("{}/{}", self.k, self.n)),
                host: Some(format!("node{}", self.k)),
            }],
            planning: Some(planning(self.trial_target_s)),
            tool: Some("ngcc-perf 0.1.0".into()),
            counter: Some(CounterKind::Tsc),
            ended_utc: self
                .finished
                .then(|| format!("2026-01-01T0{}:30:00+00:00", self.k)),
            ..Campaign::default()
        };
        write_json(&dir.join("campaign.json"), &campaign).unwrap();
        for (label, op) in &self.records {
            let rec = Record {
                schema: 2,
                status: RecordStatus::Complete,
                candidate: "kem-1".into(),
                label: label.to_string(),
                operation: Op::from(*op),
                library: Some(format!("lib/kem-1/lib{label}.so")),
                library_sha256: Some(if *label == "A" { self.sha_a } else { SHA_B }.into()),
                kat_log: Some(format!("kat/kem-1/{label}.log")),
                environment: env(self.kernel),
                ..Record::default()
            };
            write_json(&dir.join(format!("records/kem-1/{label}__{op}.json")), &rec).unwrap();
        }
        dir.to_path_buf()
    }
}

#[test]
fn disjoint_shards_merge_and_keep_every_host_check() {
    let tmp = tempfile::tempdir().unwrap();
    let a = Shard::new(1, &[("A", "keygen"), ("A", "enc")]).write(&tmp.path().join("shard-1"));
    let b = Shard::new(2, &[("B", "keygen")]).write(&tmp.path().join("shard-2"));
    let out = tmp.path().join("data");
    let o = merge(&[&a, &b], &out, Some("syn_1"));
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(
        files(&out),
        [
            ".ngcc-perf-dataset",
            "build.json",
            "campaign.json",
            "kat/kem-1/A.log",
            "kat/kem-1/B.log",
            "records/kem-1/A__enc.json",
            "records/kem-1/A__keygen.json",
            "records/kem-1/B__keygen.json",
        ]
    );
    let c: Campaign = ngcc_perf::util::read_json(&out.join("campaign.json")).unwrap();
    assert_eq!(c.system_id.as_deref(), Some("syn_1"));
    let shards: Vec<_> = c
        .host_checks
        .iter()
        .map(|h| (h.shard.clone().unwrap(), h.host.clone().unwrap()))
        .collect();
    assert_eq!(
        shards,
        [
            ("1/2".to_string(), "node1".to_string()),
            ("2/2".into(), "node2".into())
        ]
    );
    assert_eq!(c.started_utc.as_deref(), Some("2026-01-01T00:00:00+00:00"));
    assert_eq!(c.ended_utc.as_deref(), Some("2026-01-01T02:30:00+00:00"));
    let parts: Vec<_> = c
        .merged_from
        .iter()
        .map(|p| (p.source.as_str(), p.records, p.ended_utc.clone().unwrap()))
        .collect();
    assert_eq!(
        parts,
        [
            ("shard-1", 2, "2026-01-01T01:30:00+00:00".to_string()),
            ("shard-2", 1, "2026-01-01T02:30:00+00:00".to_string())
        ]
    );
    // build.json is the shards' own, byte for byte.
    assert_eq!(
        std::fs::read(out.join("build.json")).unwrap(),
        std::fs::read(a.join("build.json")).unwrap()
    );
    // A second merge replaces the dataset it wrote.
    assert!(merge(&[&a, &b], &out, Some("syn_1")).status.success());
}

#[test]
fn hosts_that_differ_are_refused_naming_the_field_and_both_values() {
    let tmp = tempfile::tempdir().unwrap();
    let a = Shard::new(1, &[("A", "keygen")]).write(&tmp.path().join("shard-1"));
    let b = Shard {
        kernel: "6.1.0-21-amd64",
        ..Shard::new(2, &[("B", "keygen")])
    }
    .write(&tmp.path().join("shard-2"));
    let out = tmp.path().join("data");
    let err = refusal(&merge(&[&a, &b], &out, Some("syn_1")), &out);
    for needle in [
        "hosts differ in kernel",
        "\"6.1.0-18-amd64\"",
        "\"6.1.0-21-amd64\"",
        "shard-1/records/kem-1/A__keygen.json",
        "shard-2/records/kem-1/B__keygen.json",
        "not comparable",
    ] {
        assert!(err.contains(needle), "no `{needle}` in: {err}");
    }

    // The CPU model and the counter rate likewise (a rate within 1 % is the same machine).
    let mut rec: Record =
        ngcc_perf::util::read_json(&b.join("records/kem-1/B__keygen.json")).unwrap();
    rec.environment = env("6.1.0-18-amd64");
    rec.environment.counter_hz = EnvField::Value(2_410_000_000);
    write_json(&b.join("records/kem-1/B__keygen.json"), &rec).unwrap();
    assert!(merge(&[&a, &b], &out, Some("syn_1")).status.success());
    std::fs::remove_dir_all(&out).unwrap();
    rec.environment.counter_hz = EnvField::Value(3_000_000_000);
    write_json(&b.join("records/kem-1/B__keygen.json"), &rec).unwrap();
    let err = refusal(&merge(&[&a, &b], &out, Some("syn_1")), &out);
    assert!(
        err.contains("hosts differ in counter_hz: 2400000000.0") && err.contains("3000000000.0"),
        "{err}"
    );
    rec.environment = env("6.1.0-18-amd64");
    rec.environment.cpu_model = EnvField::Value("Other CPU".into());
    write_json(&b.join("records/kem-1/B__keygen.json"), &rec).unwrap();
    let err = refusal(&merge(&[&a, &b], &out, Some("syn_1")), &out);
    assert!(
        err.contains("hosts differ in cpu_model: \"Example CPU\"") && err.contains("\"Other CPU\""),
        "{err}"
    );
}

#[test]
fn campaigns_with_other_planning_or_another_build_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let a = Shard::new(1, &[("A", "keygen")]).write(&tmp.path().join("shard-1"));
    let b = Shard {
        trial_target_s: 1.0,
        ..Shard::new(2, &[("B", "keygen")])
    }
    .write(&tmp.path().join("shard-2"));
    let out = tmp.path().join("data");
    let err = refusal(&merge(&[&a, &b], &out, Some("syn_1")), &out);
    assert!(
        err.contains("campaigns differ in planning.trial_target_s: 0.05 in")
            && err.contains("shard-1/campaign.json vs 1.0 in")
            && err.contains("shard-2/campaign.json"),
        "{err}"
    );

    let c = Shard {
        sha_a: "cccc000000000000000000000000000000000000000000000000000000000000",
        ..Shard::new(2, &[("B", "keygen")])
    }
    .write(&tmp.path().join("shard-2c"));
    let err = refusal(&merge(&[&a, &c], &out, Some("syn_1")), &out);
    assert!(
        err.contains("build.json differs for kem-1/A in library_sha256: \"aaaa")
            && err.contains("\"cccc")
            && err.contains("shard-1/build.json")
            && err.contains("shard-2c/build.json"),
        "{err}"
    );
}

#[test]
fn a_duplicate_record_is_refused_with_both_paths() {
    let tmp = tempfile::tempdir().unwrap();
    let a = Shard::new(1, &[("A", "keygen")]).write(&tmp.path().join("shard-1"));
    let b = Shard::new(2, &[("B", "keygen"), ("A", "keygen")]).write(&tmp.path().join("shard-2"));
    let out = tmp.path().join("data");
    let err = refusal(&merge(&[&a, &b], &out, Some("syn_1")), &out);
    let (pa, pb) = (
        a.join("records/kem-1/A__keygen.json"),
        b.join("records/kem-1/A__keygen.json"),
    );
    assert!(
        err.contains("duplicate record records/kem-1/A__keygen.json")
            && err.contains(&pa.display().to_string())
            && err.contains(&pb.display().to_string()),
        "{err}"
    );
    // The same folder twice is named as such.
    let err = refusal(&merge(&[&a, &a], &out, Some("syn_1")), &out);
    assert!(err.contains("is given twice"), "{err}");
}

#[test]
fn missing_unfinished_and_running_shards_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let a = Shard::new(1, &[("A", "keygen")]).write(&tmp.path().join("shard-1"));
    let out = tmp.path().join("data");
    let err = refusal(&merge(&[&a], &out, Some("syn_1")), &out);
    assert!(
        err.contains("shard(s) 2/2 missing: the inputs hold 1/2"),
        "{err}"
    );

    let b = Shard {
        finished: false,
        ..Shard::new(2, &[("B", "keygen")])
    }
    .write(&tmp.path().join("shard-2"));
    let err = refusal(&merge(&[&a, &b], &out, Some("syn_1")), &out);
    assert!(
        err.contains("shard-2 never finished") && err.contains("resubmit"),
        "{err}"
    );

    let three = Shard {
        n: 3,
        ..Shard::new(2, &[("B", "keygen")])
    }
    .write(&tmp.path().join("shard-2-of-3"));
    let err = refusal(&merge(&[&a, &three], &out, Some("syn_1")), &out);
    assert!(
        err.contains("sharded differently") && err.contains("1/2") && err.contains("2/3"),
        "{err}"
    );

    let b = Shard::new(2, &[("B", "keygen")]).write(&tmp.path().join("shard-2"));
    let lock = ngcc_perf::rundir::RunDir::open(&b).unwrap();
    let err = refusal(&merge(&[&a, &b], &out, Some("syn_1")), &out);
    assert!(err.contains("a campaign is still running there"), "{err}");
    drop(lock);
    // Opening it started a journal the synthetic files are not in (the others have none).
    std::fs::remove_file(b.join("journal.txt")).unwrap();
    assert!(merge(&[&a, &b], &out, Some("syn_1")).status.success());

    // Shard run directories carry no system id.
    std::fs::remove_dir_all(&out).unwrap();
    let err = refusal(&merge(&[&a, &b], &out, None), &out);
    assert!(err.contains("pass --system"), "{err}");
}
