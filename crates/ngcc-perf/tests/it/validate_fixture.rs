//! `ngcc-perf validate` accepts the reference dataset and names the file and field of every
//! tampering: a trial's cycles, a KAT log byte, a page byte, a truncated record.

use crate::common;
use common::*;
use std::path::PathBuf;
use std::process::Output;

struct Copy {
    _tmp: tempfile::TempDir,
    data: PathBuf,
    catalog: PathBuf,
    pages: PathBuf,
}

/// The fixture in a temporary folder, with every page rendered into `pages/` and the
/// reference's own candidate pages on top; without the fixture, see `common::not_available`.
fn fixture_copy() -> Option<Copy> {
    let fixture = fixture_dir()?;
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    copy_tree(&fixture, &data);
    let catalog = data.join("catalog");
    let pages = tmp.path().join("pages");
    let o = report(&data, &pages, &[]);
    assert!(o.status.success(), "{}", text(&o));
    copy_tree(&fixture.join("pages"), &pages);
    Some(Copy {
        _tmp: tmp,
        data,
        catalog,
        pages,
    })
}

fn check(c: &Copy, with_pages: bool) -> Output {
    validate(&c.data, &c.catalog, with_pages.then_some(c.pages.as_path()))
}

fn assert_fails_with(o: &Output, needles: &[&str]) {
    let t = text(o);
    assert_eq!(o.status.code(), Some(1), "expected exit 1:\n{t}");
    for n in needles {
        assert!(
            t.lines().any(|l| l.contains(n)),
            "no line contains `{n}`:\n{t}"
        );
    }
}

#[test]
fn the_reference_dataset_validates() {
    let Some(c) = fixture_copy() else { return };
    for with_pages in [false, true] {
        let o = check(&c, with_pages);
        let t = text(&o);
        assert_eq!(o.status.code(), Some(0), "{t}");
        assert!(
            t.contains(
                "performance data arm_1: 18 timing record(s), 18 profile(s), 6 KAT log(s), 0 problem(s)"
            ),
            "{t}"
        );
        if with_pages {
            assert!(
                t.contains("report check: system arm_1: 5 pages, 0 differ"),
                "{t}"
            );
        }
    }
}

#[test]
fn a_changed_trial_names_the_record_and_the_field() {
    let Some(c) = fixture_copy() else { return };
    let rel = "records/kem-38/UVW-KEM-128__enc.json";
    let path = c.data.join(rel);
    let mut v: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let cycles = &mut v["processes"][2]["trials"][0]["cycles"];
    *cycles = serde_json::Value::from(cycles.as_u64().unwrap() + 1_000_000);
    std::fs::write(&path, serde_json::to_vec_pretty(&v).unwrap()).unwrap();
    let o = check(&c, false);
    assert_fails_with(
        &o,
        &[
            &format!("{rel}: mean_cycles 533996.8932088831 != recomputed 534061.2639845511"),
            &format!("{rel}: median_trial_cycles 534078.0012874155 != recomputed"),
            &format!("{rel}: trials[2].cycles 1659380350 != recomputed"),
        ],
    );
    // Nothing else is blamed.
    assert!(text(&o).contains(", 3 problem(s);"), "{}", text(&o));
}

#[test]
fn a_changed_kat_log_byte_is_named() {
    let Some(c) = fixture_copy() else { return };
    let log = c.data.join("kat/kem-31/NGCC-2.log");
    let mut bytes = std::fs::read(&log).unwrap();
    bytes[0] ^= 0x20;
    std::fs::write(&log, bytes).unwrap();
    assert_fails_with(
        &check(&c, false),
        &[
            "kat/kem-31/NGCC-2.log: sha256",
            "kat_log_sha256 05901ebe10c6",
        ],
    );
}

#[test]
fn a_changed_kat_status_is_named() {
    let Some(c) = fixture_copy() else { return };
    let build = c.data.join("build.json");
    let text_in = std::fs::read_to_string(&build).unwrap();
    let changed = text_in.replacen("\"kat\": \"PASS\"", "\"kat\": \"MISMATCH\"", 1);
    assert_ne!(text_in, changed);
    std::fs::write(&build, changed).unwrap();
    assert_fails_with(
        &check(&c, false),
        &[
            "kat/kem-31/NGCC-1.log: last RESULT status PASS != build.json instances.kem-31/NGCC-1.kat MISMATCH",
        ],
    );
}

#[test]
fn a_changed_page_byte_is_named() {
    let Some(c) = fixture_copy() else { return };
    let page = c.pages.join("kem-31/perf_arm_1.md");
    let mut bytes = std::fs::read(&page).unwrap();
    let last = bytes.len() - 3;
    bytes[last] = b'!';
    std::fs::write(&page, bytes).unwrap();
    assert_eq!(check(&c, false).status.code(), Some(0));
    let o = check(&c, true);
    assert_fails_with(
        &o,
        &[
            &format!("{}: differs from regenerated output", page.display()),
            "report check: system arm_1: 5 pages, 1 differ",
        ],
    );
}

#[test]
fn a_truncated_record_is_a_problem_not_a_crash() {
    let Some(c) = fixture_copy() else { return };
    let rel = "records/kem-31/NGCC-3__dec.json";
    let path = c.data.join(rel);
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
    let o = check(&c, true);
    assert_fails_with(&o, &[&format!("{rel}: not valid JSON")]);
    assert!(text(&o).contains("17 timing record(s)"), "{}", text(&o));
}

#[test]
fn a_changed_profile_share_and_an_absolute_path_are_named() {
    let Some(c) = fixture_copy() else { return };
    let rel = "profile/kem-38/UVW-KEM-256__enc.json";
    let path = c.data.join(rel);
    let body = std::fs::read_to_string(&path).unwrap();
    let body = body
        .replace("\"hash_share\": 0.19372346335878587", "\"hash_share\": 0.2")
        .replace("performance/hashprof/hashprof", "/home/ann/hashprof");
    std::fs::write(&path, body).unwrap();
    assert_fails_with(
        &check(&c, false),
        &[
            &format!("{rel}: hash_share 0.2 != recomputed 0.19372346335878587"),
            &format!("{rel}: absolute path `/home/ann/hashprof`"),
        ],
    );
}

#[test]
fn an_unregistered_system_is_named() {
    let Some(c) = fixture_copy() else { return };
    let systems = c.catalog.join("systems.csv");
    let body: String = std::fs::read_to_string(&systems)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with("arm_1;"))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(&systems, body).unwrap();
    assert_fails_with(
        &check(&c, false),
        &["campaign.json: system_id `arm_1` is not registered"],
    );
}
