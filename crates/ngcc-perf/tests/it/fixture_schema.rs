//! The reference dataset parses with our schema and keeps every field on a round trip.

use crate::common;
use common::*;
use ngcc_perf::dataset::schema::{BuildEntry, BuildFile, Campaign, Profile, Record};
use std::path::PathBuf;

/// JSON equality where 0 and 0.0 are the same number.
fn same(a: &serde_json::Value, b: &serde_json::Value) -> bool {
    use serde_json::Value::*;
    match (a, b) {
        (Number(x), Number(y)) => x.as_f64() == y.as_f64(),
        (Array(x), Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q)),
        (Object(x), Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y)
                    .all(|((k1, v1), (k2, v2))| k1 == k2 && same(v1, v2))
        }
        _ => a == b,
    }
}

fn json_files(dir: &std::path::Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for cand in std::fs::read_dir(dir).unwrap() {
        let cand = cand.unwrap().path();
        for f in std::fs::read_dir(&cand).unwrap() {
            out.push(f.unwrap().path());
        }
    }
    out.sort();
    out
}

/// Parses `path` as `T` and writes it back: the same keys in the same order with the same
/// values (numbers compared as numbers), or the test names the file.
fn round_trips<T: serde::de::DeserializeOwned + serde::Serialize>(path: &std::path::Path) {
    let text = std::fs::read(path).unwrap();
    let raw: serde_json::Value = serde_json::from_slice(&text).unwrap();
    let typed: T = serde_json::from_slice(&text)
        .unwrap_or_else(|e| panic!("{} does not parse: {e}", path.display()));
    let back = serde_json::to_value(&typed).unwrap();
    assert!(
        same(&back, &raw),
        "{} does not round-trip:\n  file: {raw}\n  ours: {back}",
        path.display()
    );
}

/// Every JSON file of the reference dataset, each with the type that reads it.
#[test]
fn every_fixture_json_file_round_trips() {
    let Some(dir) = fixture_dir() else { return };
    round_trips::<Campaign>(&dir.join("campaign.json"));
    round_trips::<BuildFile>(&dir.join("build.json"));
    let build: BuildFile = ngcc_perf::util::read_json(&dir.join("build.json")).unwrap();
    for (key, value) in &build.instances {
        let entry: BuildEntry = serde_json::from_value(value.clone()).unwrap();
        assert!(
            same(&serde_json::to_value(&entry).unwrap(), value),
            "build.json instances.{key} does not round-trip"
        );
    }
    let (mut records, mut profiles) = (0, 0);
    for path in json_files(&dir.join("records")) {
        round_trips::<Record>(&path);
        records += 1;
    }
    for path in json_files(&dir.join("profile")) {
        round_trips::<Profile>(&path);
        profiles += 1;
    }
    assert_eq!((records, profiles), (18, 18));
    let mut all = Vec::new();
    for e in walk(&dir) {
        if e.extension().is_some_and(|x| x == "json") {
            all.push(e);
        }
    }
    assert_eq!(
        all.len(),
        2 + records + profiles,
        "a fixture JSON file is not covered"
    );
}

fn walk(dir: &std::path::Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn reference_dataset_round_trips() {
    let Some(dir) = fixture_dir() else { return };
    let c: Campaign = ngcc_perf::util::read_json(&dir.join("campaign.json")).unwrap();
    assert_eq!(c.system_id.as_deref(), Some("arm_1"));
    let b: BuildFile = ngcc_perf::util::read_json(&dir.join("build.json")).unwrap();
    assert_eq!(b.entries().len(), 6);
    let mut n = 0;
    for path in json_files(&dir.join("records")) {
        let text = std::fs::read(&path).unwrap();
        let raw: serde_json::Value = serde_json::from_slice(&text).unwrap();
        let rec: Record = serde_json::from_slice(&text).unwrap();
        assert!(
            rec.stats.is_some(),
            "{} lost its statistics",
            path.display()
        );
        assert!(
            same(&serde_json::to_value(&rec).unwrap(), &raw),
            "{} does not round-trip",
            path.display()
        );
        n += 1;
    }
    assert_eq!(n, 18);
    for path in json_files(&dir.join("profile")) {
        let text = std::fs::read(&path).unwrap();
        let raw: serde_json::Value = serde_json::from_slice(&text).unwrap();
        let p: Profile = serde_json::from_slice(&text).unwrap();
        assert!(
            same(&serde_json::to_value(&p).unwrap(), &raw),
            "{} does not round-trip",
            path.display()
        );
    }
}
