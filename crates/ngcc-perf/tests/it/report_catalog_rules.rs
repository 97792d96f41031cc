//! Catalog-driven display rules on the reference dataset: kat_issues footnotes (numbered in
//! first-use order, `KAT TIMEOUT` causes ignored where the KAT passed, `(not timed)` for
//! exclusions), ⚠ marks from build.json, and summary notes.

use crate::common;
use common::*;

#[test]
fn kat_footnotes_warning_marks_and_notes() {
    let Some(fixture) = fixture_dir() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    copy_tree(&fixture, &data);
    let catalog = data.join("catalog");
    let mut issues = std::fs::read_to_string(catalog.join("kat_issues.csv")).unwrap();
    issues.push_str("kem-31;NGCC-[23];measure;KAT MISMATCH: wrong seed; see katcheck/a.log\n");
    issues.push_str("kem-38;UVW-KEM-512;measure;KAT TIMEOUT on x86_1 only\n");
    issues.push_str("kem-38;UVW-KEM-256;exclude;not the algorithm named\n");
    std::fs::write(catalog.join("kat_issues.csv"), issues).unwrap();
    std::fs::write(
        catalog.join("summary_notes.csv"),
        "# notes\nID;Label;Note\nkem-38;128$;secret-indexed table\nkem-38;128$;secret-indexed table\n",
    )
    .unwrap();
    let build = std::fs::read_to_string(data.join("build.json")).unwrap();
    let at = build.find("\"kem-31/NGCC-2\"").unwrap();
    let (head, tail) = build.split_at(at);
    let tail = tail.replacen("\"kat\": \"PASS\"", "\"kat\": \"MISMATCH\"", 1);
    std::fs::write(data.join("build.json"), format!("{head}{tail}")).unwrap();

    let pages = tmp.path().join("pages");
    let o = report(&data, &pages, &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));

    let kem31 = std::fs::read_to_string(pages.join("kem-31/perf_arm_1.md")).unwrap();
    let want = "| `NGCC-1` | harness-default | PASS |\n\
                | `NGCC-2` | harness-default | MISMATCH [1] |\n\
                | `NGCC-3` | harness-default | PASS [1] |\n\
                \n\
                [1] KAT MISMATCH: wrong seed; see katcheck/a.log These instances are timed anyway; their output is not validated.\n\
                \n\
                ## 4. Performance\n";
    assert!(kem31.contains(want), "{kem31}");

    let kem38 = std::fs::read_to_string(pages.join("kem-38/perf_arm_1.md")).unwrap();
    let want = "| `UVW-KEM-128` | guide | PASS |\n\
                | `UVW-KEM-256` | guide | PASS [1] (not timed) |\n\
                | `UVW-KEM-512` | guide | PASS |\n\
                \n\
                [1] not the algorithm named\n\
                \n\
                ## 4. Performance\n";
    assert!(kem38.contains(want), "{kem38}");

    let summary = std::fs::read_to_string(pages.join("performance/summary_arm_1.md")).unwrap();
    assert!(
        summary.contains("| `NGCC-2` ⚠ KAT MISMATCH | 1.13 G (??%) | 354.46 M (??%) | 551.85 M (??%) | 592 | 882 | own symmetric primitives; placeholder share unavailable; KAT/output caveat; see candidate page |"),
        "{summary}"
    );
    assert!(
        summary.contains("| `UVW-KEM-128` | 677.81 M (0.0%) | 534.0 k (25%) | 1.47 G (0.0%) | 208013 | 1032 | secret-indexed table |"),
        "{summary}"
    );
    assert!(
        summary.contains(
            "| `UVW-KEM-256` | 5.22 G (0.0%) | 1.27 M (19%) | 9.49 G (0.0%) | 911645 | 2199 | – |"
        ),
        "{summary}"
    );
}
