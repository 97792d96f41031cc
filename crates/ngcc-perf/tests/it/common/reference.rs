//! The larger reference dataset: the shared fixture (kem-31, kem-38) plus the published arm_1
//! facts of `tests/data/reference-arm_1/` (see its README): hash-03, hash-07, sign-18, kex-06
//! and the ICCS baseline. Records are written back in the reference layout from the stored
//! values; what the stored form leaves out is filled from a fixture record.

use super::{copy_tree, manifest_dir, write};
use serde_json::{Map, Value, json};
use std::path::{Path, PathBuf};

pub fn data_dir() -> PathBuf {
    manifest_dir().join("tests/data/reference-arm_1")
}

fn read_value(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn write_value(path: &Path, v: &Value) {
    let mut text = serde_json::to_string_pretty(v).unwrap();
    text.push('\n');
    write(path, &text);
}

/// `hash_1024` style key of a stored path `cand/label__op`.
fn split_path(path: &str) -> (&str, &str, &str) {
    let (cand, rest) = path.split_once('/').unwrap();
    let (label, op) = rest.split_once("__").unwrap();
    (cand, label, op)
}

fn sizes_of(input_bytes: u64, stored: &Value) -> Value {
    let mut m = Map::new();
    if let Some(digest) = stored.as_u64() {
        for (k, v) in [
            ("input_bytes", input_bytes),
            ("pk_bytes", 0),
            ("sk_bytes", 0),
            ("ct_bytes", 0),
            ("ss_bytes", 0),
            ("signature_bytes", 0),
            ("digest_bytes", digest),
        ] {
            m.insert(k.into(), json!(v));
        }
        return Value::Object(m);
    }
    if let Some(pk) = stored.get("pk") {
        for (k, v) in [
            ("input_bytes", json!(0)),
            ("pk_bytes", pk.clone()),
            ("sk_bytes", stored["sk"].clone()),
            ("ct_bytes", json!(0)),
            ("ss_bytes", json!(0)),
            ("signature_bytes", stored["sig"].clone()),
            ("digest_bytes", json!(0)),
        ] {
            m.insert(k.into(), v);
        }
        return Value::Object(m);
    }
    stored.clone()
}

/// Writes the fixture plus the stored reference data into `dir` (its `catalog/` holds the
/// reference catalog rows of all eight candidates); returns the catalog folder.
pub fn assemble(fixture: &Path, dir: &Path) -> PathBuf {
    let data = data_dir();
    copy_tree(fixture, dir);
    copy_tree(&data.join("catalog"), &dir.join("catalog"));
    let template = read_value(&fixture.join("records/kem-38/UVW-KEM-128__enc.json"));
    let fixture_build = read_value(&fixture.join("build.json"));
    let extra_build = read_value(&data.join("build.json"));
    let mut build = fixture_build.clone();
    let instances = build["instances"].as_object_mut().unwrap();
    for (k, v) in extra_build["instances"].as_object().unwrap() {
        instances.insert(k.clone(), v.clone());
    }
    write_value(&dir.join("build.json"), &build);

    for line in std::fs::read_to_string(data.join("records.jsonl"))
        .unwrap()
        .lines()
    {
        let r: Vec<Value> = serde_json::from_str(line).unwrap();
        let path = r[0].as_str().unwrap();
        let (cand, label, op) = split_path(path);
        let entry = &build["instances"][format!("{cand}/{label}")];
        let (operation, input_bytes) = match op.split_once('_') {
            Some((o, b)) => (o, b.parse::<u64>().unwrap()),
            None => (op, 0),
        };
        let trials: Vec<Value> = r[2]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| json!({"measurements": t[0], "seconds": t[1], "cycles": t[2]}))
            .collect();
        let measurements: u64 = trials
            .iter()
            .map(|t| t["measurements"].as_u64().unwrap())
            .sum();
        let mut env = template["environment"].clone();
        env["cpu_number"] = r[1].clone();
        let mut rec = Map::new();
        let t = &template;
        for (k, v) in [
            ("schema", json!(2)),
            ("status", json!("complete")),
            ("candidate", json!(cand)),
            ("label", json!(label)),
            ("instance", entry["instance"].clone()),
            ("variant", entry["variant"].clone()),
            ("flags", entry["flags"].clone()),
            ("operation", json!(operation)),
            ("input_bytes", json!(input_bytes)),
            (
                "plan",
                json!({
                    "iterations_per_trial": trials[0]["measurements"],
                    "warmups": 3,
                    "trials": trials.len(),
                    "separate_processes": true,
                    "estimated_s": 0.0,
                    "timeout_per_process_s": 0.0
                }),
            ),
            ("kat", entry["kat"].clone()),
            ("kat_not_passed", json!(false)),
            ("disturbed_retries", json!(0)),
            ("library", entry["library"].clone()),
            (
                "library_sha256",
                entry.get("library_sha256").cloned().unwrap_or(Value::Null),
            ),
            ("kat_log", entry["kat_log"].clone()),
            ("kat_log_sha256", entry["kat_log_sha256"].clone()),
            ("started_utc", t["started_utc"].clone()),
            ("ended_utc", t["ended_utc"].clone()),
            ("load_average_start", t["load_average_start"].clone()),
            ("load_average_end", t["load_average_end"].clone()),
            ("environment", env),
            ("processes", json!([])),
            ("trials", Value::Array(trials)),
            ("measurements", json!(measurements)),
            ("guide_100_measurements_met", json!(measurements >= 100)),
            ("mean_seconds", r[3].clone()),
            ("median_trial_seconds", r[4].clone()),
            ("min_trial_seconds", r[5].clone()),
            ("max_trial_seconds", r[6].clone()),
            ("mean_cycles", r[7].clone()),
            ("median_trial_cycles", r[8].clone()),
            ("operations_per_second", r[9].clone()),
            ("throughput_MB_per_second", r[10].clone()),
            ("sizes", sizes_of(input_bytes, &r[11])),
            ("kex", r.get(14).cloned().unwrap_or(json!({}))),
            ("build_flags", t["build_flags"].clone()),
            ("baseline_rss_bytes", r[12].clone()),
            ("peak_rss_bytes", r[13].clone()),
            ("timing_scope", json!("loop")),
        ] {
            rec.insert(k.into(), v);
        }
        write_value(
            &dir.join("records").join(format!("{path}.json")),
            &Value::Object(rec),
        );
    }

    copy_tree(&data.join("profile"), &dir.join("profile"));
    for line in std::fs::read_to_string(data.join("profiles.jsonl"))
        .unwrap()
        .lines()
    {
        let r: Vec<Value> = serde_json::from_str(line).unwrap();
        let path = r[0].as_str().unwrap();
        let (cand, label, op) = split_path(path);
        let prof = json!({
            "schema": 2,
            "candidate": cand,
            "label": label,
            "operation": op,
            "input_bytes": 0,
            "status": "complete",
            "command": ["taskset", "-c", r[1].to_string(), "performance/hashprof/hashprof",
                format!("performance/hashprof/lib/{cand}/lib{label}.so"), op, "0", "1000", "1"],
            "stderr": "",
            "meta": {"id": cand, "instance": label, "operation": op,
                "tick_source": "cntvct_el0", "tick_hz": "19200000", "warmups": "1",
                "overflow_calls": "0"},
            "calls": [],
            "share": r[2],
            "hash_share": r[3]
        });
        write_value(&dir.join("profile").join(format!("{path}.json")), &prof);
    }
    dir.join("catalog")
}
