//! `ngcc-perf publish`: relative paths, refusal of absolute ones, never clobbering a folder it
//! did not write. Uses a small synthetic run directory (absolute paths point into it).

use crate::common;
use common::*;
use std::path::Path;
use std::process::Output;

/// A run directory whose files mention its own absolute path.
fn make_run(run: &Path, system_id: Option<&str>) {
    let root = run.canonicalize().unwrap_or_else(|_| run.to_path_buf());
    let root = root.display();
    let sid = system_id
        .map(|s| format!(" \"system_id\": \"{s}\",\n"))
        .unwrap_or_default();
    write(
        &run.join("campaign.json"),
        &format!("{{\n{sid} \"started_utc\": \"2026-01-01T00:00:00+00:00\"\n}}\n"),
    );
    write(
        &run.join("build.json"),
        &format!(
            "{{\n \"instances\": {{\n  \"kem-1/A\": {{\n   \"candidate\": \"kem-1\",\n   \"library\": \"{root}/lib/libA.so\",\n   \"kat_log\": \"kat/kem-1/A.log\"\n  }}\n }}\n}}\n"
        ),
    );
    write(
        &run.join("records/kem-1/A__keygen.json"),
        &format!("{{\"command\": [\"{root}/bin/child\", \"{root}\"]}}\n"),
    );
    write(
        &run.join("profile/kem-1/A__keygen.json"),
        "{\"operation\": \"keygen\"}\n",
    );
    write(
        &run.join("profile/kem-1/A__RELINK_FAILED.json"),
        "{\"stderr\": \"x\"}\n",
    );
    write(&run.join("kat/kem-1/A.log"), "RESULT kem-1 A PASS\n");
    write(&run.join("katcheck/one.log"), "RESULT kem-1 A PASS\n");
    write(&run.join("katcheck/nested/skip.log"), "x\n");
    write(&run.join("campaign.log"), "not published\n");
    write(&run.join("calibrate/kem-1/A__keygen.json"), "{}\n");
}

fn publish(run: &Path, system: &str, out: &Path) -> Output {
    ngcc(&[
        "publish".as_ref(),
        "--run".as_ref(),
        run.as_os_str(),
        "--system".as_ref(),
        system.as_ref(),
        "--out".as_ref(),
        out.as_os_str(),
    ])
}

fn listing(dir: &Path) -> Vec<String> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                out.push(
                    p.strip_prefix(root)
                        .unwrap()
                        .to_string_lossy()
                        .replace('\\', "/"),
                );
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

#[test]
fn publishes_evidence_with_relative_paths() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    make_run(&run, None);
    let out = tmp.path().join("data/my_1");
    let o = publish(&run, "my_1", &out);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("publish: 6 files for system my_1 ->"),
        "{}",
        text(&o)
    );
    assert_eq!(
        listing(&out),
        [
            ".ngcc-perf-dataset",
            "build.json",
            "campaign.json",
            "kat/kem-1/A.log",
            "katcheck/one.log",
            "profile/kem-1/A__keygen.json",
            "records/kem-1/A__keygen.json",
        ]
    );
    let build = std::fs::read_to_string(out.join("build.json")).unwrap();
    assert!(build.contains("\"library\": \"lib/libA.so\""), "{build}");
    let rec = std::fs::read_to_string(out.join("records/kem-1/A__keygen.json")).unwrap();
    assert_eq!(rec, "{\"command\": [\"bin/child\", \".\"]}\n");
    let campaign = std::fs::read_to_string(out.join("campaign.json")).unwrap();
    assert!(
        campaign.starts_with("{\n \"system_id\": \"my_1\",\n \"started_utc\""),
        "{campaign}"
    );
    // No temporary folders are left next to the dataset.
    assert_eq!(listing(&tmp.path().join("data")).len(), listing(&out).len());

    // Publishing again replaces our own dataset.
    std::fs::remove_file(run.join("katcheck/one.log")).unwrap();
    let o = publish(&run, "my_1", &out);
    assert!(o.status.success(), "{}", text(&o));
    assert!(!out.join("katcheck/one.log").exists());
}

#[test]
fn refuses_absolute_paths_and_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    make_run(&run, Some("my_1"));
    // A field the orchestrator writes (a candidate's own text is quarantined instead, below).
    write(
        &run.join("records/kem-1/B__enc.json"),
        "{\"library\": \"/home/ann/.cache/x\"}\n",
    );
    let out = tmp.path().join("data/my_1");
    let o = publish(&run, "my_1", &out);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("records/kem-1/B__enc.json") && err.contains("/home/"),
        "{err}"
    );
    assert!(!out.exists(), "nothing may be written");
    assert!(!tmp.path().join("data").exists() || listing(&tmp.path().join("data")).is_empty());
}

#[test]
fn withholds_host_paths_in_a_candidates_own_text_and_publishes() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    make_run(&run, Some("my_1"));
    write(
        &run.join("records/kem-1/B__enc.json"),
        "{\"processes\": [{\"stderr\": \"cannot open /home/ann/.cache/x\"}]}\n",
    );
    let out = tmp.path().join("data/my_1");
    let o = publish(&run, "my_1", &out);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("publish: records/kem-1/B__enc.json: a host path in the candidate's own text withheld (processes/0/stderr)"),
        "{}",
        text(&o)
    );
    let rec = std::fs::read_to_string(out.join("records/kem-1/B__enc.json")).unwrap();
    assert!(
        rec.contains("cannot open [path withheld]") && !rec.contains("/home/"),
        "{rec}"
    );
}

#[test]
fn refuses_to_replace_a_folder_it_did_not_write() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    make_run(&run, Some("my_1"));
    let out = tmp.path().join("precious");
    write(&out.join("notes.txt"), "keep me\n");
    let o = publish(&run, "my_1", &out);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains(".ngcc-perf-dataset"), "{}", text(&o));
    assert_eq!(listing(&out), ["notes.txt"]);

    // An empty folder is fine.
    let empty = tmp.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    assert!(publish(&run, "my_1", &empty).status.success());
    assert!(empty.join("campaign.json").is_file());
}

#[test]
fn refuses_a_conflicting_system_id() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    make_run(&run, Some("my_1"));
    let out = tmp.path().join("data");
    let o = publish(&run, "other_2", &out);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("my_1") && text(&o).contains("other_2"),
        "{}",
        text(&o)
    );
    assert!(!out.exists());
}
