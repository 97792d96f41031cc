//! The reference dataset parses with our schema and keeps every field on a round trip.

mod common;
use common::*;
use ngcc_perf::dataset::schema::{BuildFile, Campaign, Profile, Record};
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
