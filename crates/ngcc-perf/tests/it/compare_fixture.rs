//! `ngcc-perf compare A B` on the reference dataset: a run against itself changes nothing, a
//! slowed-down copy is flagged, different counters are refused unless `--time`, and bad input
//! is one line with exit 2.

use crate::common;
use common::*;
use ngcc_perf::dataset::schema::Record;
use ngcc_perf::measure::stats;
use ngcc_perf::util::{read_json, write_json};
use std::path::Path;
use std::process::Output;

fn compare(a: &Path, b: &Path, extra: &[&str]) -> Output {
    let mut cmd = bin();
    cmd.arg("compare").arg(a).arg(b).args(extra);
    cmd.output().expect("running ngcc-perf")
}

/// Scales every trial's cycles and seconds of one record and recomputes its statistics.
fn slow_down(path: &Path, factor: f64) {
    let mut rec: Record = read_json(path).unwrap();
    for p in &mut rec.processes {
        for t in &mut p.trials {
            t.cycles = (t.cycles as f64 * factor) as u64;
            t.seconds *= factor;
        }
    }
    rec.stats = stats::record_stats(&rec.processes, rec.input_bytes);
    write_json(path, &rec).unwrap();
}

fn row<'a>(out: &'a str, label: &str, op: &str) -> &'a str {
    out.lines()
        .find(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            f.get(1) == Some(&label) && f.get(2) == Some(&op)
        })
        .unwrap_or_else(|| panic!("no row {label} {op} in\n{out}"))
}

#[test]
fn a_run_against_itself_and_against_a_slower_copy() {
    let Some(fixture) = fixture_dir() else { return };
    let o = compare(&fixture, &fixture, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("metric: mean cycles per operation (`perf_cycles`: user-mode core cycles)"),
        "{out}"
    );
    assert!(
        out.contains("compare: 18 pair(s), 0 changed; 0 only in A, 0 only in B, 0 not comparable"),
        "{out}"
    );
    let r = row(&out, "UVW-KEM-128", "enc");
    assert!(r.contains("534.0 k") && r.contains("1.00×"), "{r}");

    let tmp = tempfile::tempdir().unwrap();
    let b = tmp.path().join("b");
    copy_tree(&fixture, &b);
    slow_down(&b.join("records/kem-38/UVW-KEM-128__enc.json"), 1.25);
    slow_down(&b.join("records/kem-38/UVW-KEM-256__enc.json"), 1.001);
    std::fs::remove_file(b.join("records/kem-31/NGCC-3__dec.json")).unwrap();
    let page = tmp.path().join("cmp.html");
    let o = compare(&fixture, &b, &["--out", page.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    let slow = row(&out, "UVW-KEM-128", "enc");
    assert!(
        slow.contains("1.25×") && slow.contains("changed (B slower)"),
        "{slow}"
    );
    let tiny = row(&out, "UVW-KEM-256", "enc");
    assert!(
        tiny.contains("1.00×") && !tiny.contains("changed"),
        "{tiny}"
    );
    assert!(out.contains("only in A: kem-31 NGCC-3 dec"), "{out}");
    assert!(
        out.contains("compare: 17 pair(s), 1 changed; 1 only in A, 0 only in B"),
        "{out}"
    );
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("<span class=\"changed\">changed (B slower)</span>"));
    assert!(html.contains("<svg class=\"chart\"") && html.contains("<circle"));
    assert!(html.contains("<style>") && !html.contains("href=\"assets/"));
}

#[test]
fn different_counters_are_refused_unless_time() {
    let Some(fixture) = fixture_dir() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let b = tmp.path().join("b");
    copy_tree(&fixture, &b);
    // Every record ours, with the TSC counter, on a fixed host.
    make_tsc(&b, &["kem-31", "kem-38"], &[]);
    let o = compare(&fixture, &b, &[]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("A counts `perf_cycles` (user-mode core cycles) but B counts `tsc` (TSC reference cycles, not core cycles)"),
        "{err}"
    );
    assert!(err.contains("--time"), "{err}");
    assert!(o.stdout.is_empty(), "nothing is printed before refusing");

    let o = compare(&fixture, &b, &["--time"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("metric: mean wall-clock seconds per operation"),
        "{out}"
    );
    let r = row(&out, "UVW-KEM-128", "enc");
    assert!(r.contains("198 µs") && r.contains("1.00×"), "{r}");
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let Some(fixture) = fixture_dir() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let o = compare(&fixture, &tmp.path().join("missing"), &[]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("ngcc-perf: error:"), "{err}");

    let bad = tmp.path().join("bad");
    copy_tree(&fixture, &bad);
    std::fs::write(bad.join("records/kem-38/UVW-KEM-128__enc.json"), "{").unwrap();
    let o = compare(&fixture, &bad, &[]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("records/kem-38/UVW-KEM-128__enc.json"),
        "{}",
        text(&o)
    );
}
