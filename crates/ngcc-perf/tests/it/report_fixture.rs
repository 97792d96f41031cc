//! `ngcc-perf report` on the reference dataset renders the reference's candidate pages byte
//! for byte, and `--check` names a page that differs.

use crate::common;
use common::*;

/// The first differing line of two texts, for a readable failure.
fn first_difference(want: &[u8], got: &[u8]) -> String {
    let (w, g) = (String::from_utf8_lossy(want), String::from_utf8_lossy(got));
    for (i, (a, b)) in w.split('\n').zip(g.split('\n')).enumerate() {
        if a != b {
            return format!("line {}:\n  want: {a}\n  got:  {b}", i + 1);
        }
    }
    format!(
        "same lines, lengths differ: want {} bytes, got {} bytes",
        want.len(),
        got.len()
    )
}

#[test]
fn candidate_pages_are_byte_identical_to_the_reference() {
    let Some(fixture) = fixture_dir() else { return };
    let out = tempfile::tempdir().unwrap();
    let o = report(&fixture, out.path(), &[]);
    assert!(o.status.success(), "report failed: {}", text(&o));
    assert!(
        text(&o).contains(&format!("report: system arm_1 in {}", out.path().display())),
        "{}",
        text(&o)
    );
    for cand in ["kem-31", "kem-38"] {
        let want = std::fs::read(fixture.join(format!("pages/{cand}/perf_arm_1.md"))).unwrap();
        let got = std::fs::read(out.path().join(format!("{cand}/perf_arm_1.md"))).unwrap();
        assert!(
            want == got,
            "{cand}/perf_arm_1.md differs from the reference page; {}",
            first_difference(&want, &got)
        );
    }
    // The summary has no fixture page, but the reference's published summary_arm_1.md
    // (same dataset commit) has these kem-38 rows; kem-31 measured no ICCS share at all.
    let summary = std::fs::read_to_string(out.path().join("performance/summary_arm_1.md")).unwrap();
    for row in [
        "| [kem-38](../kem-38/perf_arm_1.md) | UVW Key Encapsulation Mechanism [PDF](https://github.com/ngcc-dev/ngcc-harness/blob/main/kem-38/kem-38-spec.pdf) | `UVW-KEM-128` | 677.81 M (0.0%) | 534.0 k (25%) | 1.47 G (0.0%) | 208013 | 1032 | – |",
        "| [kem-38](../kem-38/perf_arm_1.md) | UVW Key Encapsulation Mechanism [PDF](https://github.com/ngcc-dev/ngcc-harness/blob/main/kem-38/kem-38-spec.pdf) | `UVW-KEM-256` | 5.22 G (0.0%) | 1.27 M (19%) | 9.49 G (0.0%) | 911645 | 2199 | – |",
        "| [kem-38](../kem-38/perf_arm_1.md) | UVW Key Encapsulation Mechanism [PDF](https://github.com/ngcc-dev/ngcc-harness/blob/main/kem-38/kem-38-spec.pdf) | `UVW-KEM-512` | 41.20 G (0.0%, n=20) | 19.79 M (3.5%) | 66.64 G (0.0%, n=15) | 4001850 | 4820 | – |",
        "| `NGCC-1` | 348.67 M (??%) | 112.40 M (??%) | 173.12 M (??%) | 389 | 602 | own symmetric primitives; placeholder share unavailable |",
        "# Performance — AArch64, system arm_1",
        "## Key encapsulation",
    ] {
        assert!(
            summary.lines().any(|l| l.ends_with(row)),
            "missing `{row}` in\n{summary}"
        );
    }
    assert!(!summary.contains("## Digital signatures"), "{summary}");
    assert!(summary.ends_with("| – |\n\n"), "{summary}");
    let method = std::fs::read_to_string(out.path().join("performance/method_arm_1.md")).unwrap();
    assert!(method.starts_with("# Performance method and limitations — system arm_1\n\nSystem arm_1: Qualcomm Snapdragon X Elite X1E-78-100 (Oryon), one core, clock pinned at 2.71 GHz (cpufreq performance, min = max), no SMT. [Summary](summary_arm_1.md).\n"), "{method}");
    assert!(
        method.contains("All 18 timing records were taken in this state"),
        "{method}"
    );
    assert!(
        method.contains(
            "targeting 0.5 s and at least 100 calls in total; if that would exceed 5 minutes"
        ),
        "{method}"
    );
    assert!(
        method.contains(
            "`cntvct_el0` at 19.2 MHz, so a single short call is resolved only to about 52 ns"
        ),
        "{method}"
    );
    // The survey is written for the dataset's own system and says so (the reference writes it
    // only for the first system of systems.csv, x86_1).
    let survey =
        std::fs::read_to_string(out.path().join("performance/symmetric-survey.md")).unwrap();
    assert!(
        survey.contains("| id | algorithm | verdict | notes | largest hash share on arm_1 (op) |"),
        "{survey}"
    );
    assert!(
        survey.contains("| [kem-38](../kem-38/perf_arm_1.md) | UVW Key Encapsulation Mechanism | ICCS-only |  | 25% (UVW-KEM-128 enc) |"),
        "{survey}"
    );
}

#[test]
fn check_passes_on_regenerated_pages_and_names_a_changed_one() {
    let Some(fixture) = fixture_dir() else { return };
    let out = tempfile::tempdir().unwrap();
    assert!(report(&fixture, out.path(), &[]).status.success());
    let o = report(&fixture, out.path(), &["--check"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        text(&o).contains("report check: system arm_1: 5 pages, 0 differ"),
        "{}",
        text(&o)
    );

    let page = out.path().join("kem-38/perf_arm_1.md");
    let mut bytes = std::fs::read(&page).unwrap();
    let at = bytes.len() / 2;
    bytes[at] = if bytes[at] == b'x' { b'y' } else { b'x' };
    std::fs::write(&page, bytes).unwrap();
    let o = report(&fixture, out.path(), &["--check"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let t = text(&o);
    assert!(
        t.contains(&format!(
            "differs from regenerated output: {}",
            page.display()
        )),
        "{t}"
    );
    assert!(
        t.contains("report check: system arm_1: 5 pages, 1 differ"),
        "{t}"
    );
    // --check never writes.
    assert_ne!(
        std::fs::read(&page).unwrap(),
        std::fs::read(fixture.join("pages/kem-38/perf_arm_1.md")).unwrap()
    );
}

#[test]
fn explicit_system_and_missing_catalog_rows() {
    let Some(fixture) = fixture_dir() else { return };
    let out = tempfile::tempdir().unwrap();
    // x86_1 is registered: every page, the survey too, is written for it.
    let o = report(&fixture, out.path(), &["--system", "x86_1"]);
    assert!(o.status.success(), "{}", text(&o));
    let survey =
        std::fs::read_to_string(out.path().join("performance/symmetric-survey.md")).unwrap();
    assert!(
        survey.contains("Totals: 1 bypass, 1 ICCS-only."),
        "{survey}"
    );
    assert!(
        survey.contains("| [kem-38](../kem-38/perf_x86_1.md) | UVW Key Encapsulation Mechanism | ICCS-only |  | 25% (UVW-KEM-128 enc) |"),
        "{survey}"
    );

    let o = report(&fixture, out.path(), &["--system", "nope_9"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("nope_9"), "{}", text(&o));

    // A catalog without the downloads row of a candidate: a one-line error naming both.
    let cat = tempfile::tempdir().unwrap();
    for f in std::fs::read_dir(fixture.join("catalog")).unwrap() {
        let f = f.unwrap().path();
        let name = f.file_name().unwrap();
        let mut body = std::fs::read_to_string(&f).unwrap();
        if name == "downloads.csv" {
            body = body
                .lines()
                .filter(|l| !l.starts_with("kem-38;"))
                .map(|l| format!("{l}\n"))
                .collect();
        }
        std::fs::write(cat.path().join(name), body).unwrap();
    }
    let o = ngcc(&[
        "report".as_ref(),
        fixture.as_os_str(),
        "--catalog".as_ref(),
        cat.path().as_os_str(),
        "--out".as_ref(),
        out.path().as_os_str(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("downloads.csv") && err.contains("kem-38") && err.lines().count() == 1,
        "{err}"
    );
}
