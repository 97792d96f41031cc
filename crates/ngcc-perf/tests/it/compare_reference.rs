//! `compare --reference-page`: the reference harness's published page against a dataset.
//! The reference dataset against the pages rendered from it gives 1.00× and 0.0 pt up to
//! the pages' rounding; the corpus pages (x86_1 and arm_1, public-key and hash tables) parse
//! completely.

use crate::common;
use common::*;
use ngcc_perf::report::compare_reference::{compare, summary_line};
use ngcc_perf::report::reference_page::parse;

#[test]
fn the_reference_dataset_matches_its_own_pages() {
    let Some(fixture) = fixture_dir() else { return };
    let ds = ngcc_perf::dataset::load::load(&fixture).unwrap();
    for cand in ["kem-31", "kem-38"] {
        let page_path = fixture.join(format!("pages/{cand}/perf_arm_1.md"));
        let page = parse(&std::fs::read_to_string(&page_path).unwrap()).unwrap();
        assert_eq!(page.candidate, cand);
        assert_eq!(page.system, "arm_1");
        let c = compare(&ds, &page, false);
        assert!(!c.rows.is_empty());
        for r in &c.rows {
            // Cycles are printed with 3-4 significant digits, shares in whole percent.
            let ratio = r.ratio.unwrap();
            assert!((ratio - 1.0).abs() < 0.005, "{cand} {r:?}");
            for d in [r.hash_delta(), r.drng_delta()].into_iter().flatten() {
                assert!(d.abs() <= 0.005 + 1e-9, "{cand} {r:?}");
            }
        }
        let line = summary_line(&c);
        assert!(line.contains("median 1.00× (range 1.00×–1.00×)"), "{line}");
        // Seconds, too.
        let t = compare(&ds, &page, true);
        assert!(
            t.rows.iter().all(|r| (r.ratio.unwrap() - 1.0).abs() < 0.01),
            "{:?}",
            t.rows
        );
    }
    // The command line.
    let page = fixture.join("pages/kem-31/perf_arm_1.md");
    let o = run_ok(&[
        "compare",
        "--reference-page",
        page.to_str().unwrap(),
        fixture.to_str().unwrap(),
    ]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("instance  operation  ours"), "{out}");
    assert!(
        out.lines()
            .last()
            .unwrap()
            .starts_with("compare: 9 operation(s); ours/theirs (cycles) median 1.00×"),
        "{out}"
    );
}

#[test]
fn corpus_pages_parse_completely() {
    let Some(corpus) = corpus_dir() else { return };
    for (page, ops, shared) in [
        ("kem-19/perf_x86_1.md", 24, 24),
        ("kem-23/perf_x86_1.md", 27, 27),
        ("sign-18/perf_x86_1.md", 12, 12),
        ("kex-06/perf_x86_1.md", 30, 5),
        ("hash-07/perf_arm_1.md", 48, 0),
    ] {
        let p =
            parse(&std::fs::read_to_string(corpus.join("harness").join(page)).unwrap()).unwrap();
        assert_eq!(p.ops.len(), ops, "{page}");
        assert!(
            p.ops
                .iter()
                .all(|o| o.mean_cycles.is_some() && o.mean_seconds.is_some()),
            "{page}"
        );
        assert_eq!(
            p.ops.iter().filter(|o| o.hash_share.is_some()).count(),
            shared,
            "{page}"
        );
    }
    let lore =
        parse(&std::fs::read_to_string(corpus.join("harness/kem-19/perf_x86_1.md")).unwrap())
            .unwrap();
    let op = lore
        .ops
        .iter()
        .find(|o| o.label == "Lore-SM3-L1" && o.op_key == "keygen")
        .unwrap();
    assert_eq!(op.mean_cycles, Some(240_300.0));
    assert!((op.hash_share.unwrap() - 0.73).abs() < 1e-12);
    assert!((op.drng_share.unwrap() - 0.026).abs() < 1e-12);
    let dragon =
        parse(&std::fs::read_to_string(corpus.join("harness/hash-07/perf_arm_1.md")).unwrap())
            .unwrap();
    assert!(
        dragon
            .ops
            .iter()
            .any(|o| o.label == "Dragon-512" && o.op_key == "hash_65536")
    );
}

#[test]
fn a_page_without_a_performance_table_is_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("p.md");
    write(
        &page,
        "# kem-1 X — performance on x86-64 (system x)\n\nnothing\n",
    );
    let Some(fixture) = fixture_dir() else { return };
    let o = bin()
        .args([
            "compare",
            "--reference-page",
            page.to_str().unwrap(),
            fixture.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no performance table"));
}
