//! Datasets written by ngcc-perf carry an `ngcc` object per record: an unfixed host and a
//! counter other than core cycles must be said plainly on every page, and the spread (CV)
//! column appears; the same dataset still validates (spread recomputed from the trials).

use crate::common;
use common::*;
use ngcc_perf::dataset::schema::Record;
use ngcc_perf::util::{read_json, write_json};

#[test]
fn unfixed_host_and_tsc_counter_are_labelled() {
    let Some(fixture) = fixture_dir() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    copy_tree(&fixture, &data);
    // Every kem-38 record ours: TSC counter, host not fixed.
    make_tsc(&data, &["kem-38"], &["governor powersave", "turbo enabled"]);
    let catalog = data.join("catalog");
    let pages = tmp.path().join("pages");
    let o = report(&data, &pages, &[]);
    assert!(o.status.success(), "{}", text(&o));

    let page = std::fs::read_to_string(pages.join("kem-38/perf_arm_1.md")).unwrap();
    for want in [
        "| host state | not fixed: governor powersave; turbo enabled; figures are indicative, not publishable |",
        "| counter | TSC reference cycles at 2.45 GHz (not core cycles) |",
        "| n (trials × iters) | spread (CV) |",
        // CV from the trials (Python: statistics.stdev / mean): 0.5 % for UVW-KEM-256 enc.
        "| `UVW-KEM-256` | enc | 1.27 M | 471 µs | 2.12e+03 | 470 µs | 6640 (5 × 1328) | 0.5% |",
        "| `UVW-KEM-512` | dec | 66.64 G | 24.7 s | 0.0404 | 24.7 s | 15 (5 × 3) | 0.2% |",
        "Produced by ngcc-perf 0.1.0",
    ] {
        assert!(page.contains(want), "{page}");
    }

    // kem-31 has no ngcc records, but the campaign says the host was not fixed.
    let other = std::fs::read_to_string(pages.join("kem-31/perf_arm_1.md")).unwrap();
    for want in [
        "| host state | not fixed; figures are indicative, not publishable |",
        "| counter | TSC reference cycles (not core cycles) |",
    ] {
        assert!(other.contains(want), "{other}");
    }
    assert!(!other.contains("spread (CV)"), "{other}");

    let summary = std::fs::read_to_string(pages.join("performance/summary_arm_1.md")).unwrap();
    for want in [
        "Host state: not fixed: governor powersave; turbo enabled; figures are indicative, not publishable.",
        "Cycle counter: TSC reference cycles at 2.45 GHz (not core cycles).",
    ] {
        assert!(summary.contains(want), "{summary}");
    }
    let method = std::fs::read_to_string(pages.join("performance/method_arm_1.md")).unwrap();
    for want in [
        "Cycle figures come from TSC reference cycles at 2.45 GHz (not core cycles)",
        "Host state: not fixed",
    ] {
        assert!(method.contains(want), "{method}");
    }

    // Still valid: every figure, including the spread, recomputes from the trials.
    let o = validate(&data, &catalog, Some(&pages));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));

    // A tampered spread is caught.
    let path = data.join("records/kem-38/UVW-KEM-128__keygen.json");
    let mut rec: Record = read_json(&path).unwrap();
    rec.ngcc.as_mut().unwrap().spread.cv *= 2.0;
    write_json(&path, &rec).unwrap();
    let o = validate(&data, &catalog, None);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains("records/kem-38/UVW-KEM-128__keygen.json: ngcc.spread.cv"),
        "{}",
        text(&o)
    );
}
