//! Datasets written by ngcc-perf carry an `ngcc` object per record: an unfixed host and a
//! counter other than core cycles must be said plainly on every page, and the spread (CV)
//! column appears; the same dataset still validates (spread recomputed from the trials).

use ngcc_perf::dataset::schema::{Campaign, Record, RecordExtra};
use ngcc_perf::measure::stats;
use ngcc_perf::util::{read_json, write_json};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn fixture_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("NGCC_ANCHOR_FIXTURES")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../../shared/fixtures/anchor-arm_1"
            ))
        });
    if dir.join("campaign.json").is_file() {
        Some(dir)
    } else {
        eprintln!(
            "SKIPPED: reference fixture not found at {} (set NGCC_ANCHOR_FIXTURES)",
            dir.display()
        );
        None
    }
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &target);
        } else {
            std::fs::write(&target, std::fs::read(e.path()).unwrap()).unwrap();
        }
    }
}

fn ngcc(args: &[&std::ffi::OsStr]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ngcc-perf"))
        .args(args)
        .output()
        .expect("running ngcc-perf")
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Turns every kem-38 record into one of ours: TSC counter, host not fixed.
fn make_ours(data: &Path) {
    let campaign_path = data.join("campaign.json");
    let mut campaign: Campaign = read_json(&campaign_path).unwrap();
    campaign.tool = Some("ngcc-perf 0.1.0".into());
    campaign.allow_unfixed_host = true;
    campaign.counter = Some("tsc".into());
    write_json(&campaign_path, &campaign).unwrap();
    for e in std::fs::read_dir(data.join("records/kem-38")).unwrap() {
        let path = e.unwrap().path();
        let mut rec: Record = read_json(&path).unwrap();
        let per_trial: Vec<f64> = rec
            .processes
            .iter()
            .flat_map(|p| &p.trials)
            .map(|t| t.seconds / t.measurements as f64)
            .collect();
        rec.ngcc = Some(RecordExtra {
            counter: "tsc".into(),
            counter_hz: Some(2.45e9),
            host_fixed: false,
            host_problems: vec!["governor powersave".into(), "turbo enabled".into()],
            allow_unfixed_host: true,
            spread: stats::spread(&per_trial),
            ..Default::default()
        });
        write_json(&path, &rec).unwrap();
    }
}

#[test]
fn unfixed_host_and_tsc_counter_are_labelled() {
    let Some(fixture) = fixture_dir() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    copy_tree(&fixture, &data);
    make_ours(&data);
    let catalog = data.join("catalog");
    let pages = tmp.path().join("pages");
    let o = ngcc(&[
        "report".as_ref(),
        data.as_os_str(),
        "--catalog".as_ref(),
        catalog.as_os_str(),
        "--out".as_ref(),
        pages.as_os_str(),
    ]);
    assert!(o.status.success(), "{}", text(&o));

    let page = std::fs::read_to_string(pages.join("kem-38/perf_arm_1.md")).unwrap();
    assert!(
        page.contains("| host state | not fixed: governor powersave; turbo enabled; figures are indicative, not publishable |"),
        "{page}"
    );
    assert!(
        page.contains("| counter | TSC reference cycles at 2.45 GHz (not core cycles) |"),
        "{page}"
    );
    assert!(
        page.contains("| n (trials × iters) | spread (CV) |"),
        "{page}"
    );
    // CV from the trials (Python: statistics.stdev / mean): 0.5 % for UVW-KEM-256 enc.
    assert!(
        page.contains(
            "| `UVW-KEM-256` | enc | 1.27 M | 471 µs | 2.12e+03 | 470 µs | 6640 (5 × 1328) | 0.5% |"
        ),
        "{page}"
    );
    assert!(
        page.contains(
            "| `UVW-KEM-512` | dec | 66.64 G | 24.7 s | 0.0404 | 24.7 s | 15 (5 × 3) | 0.2% |"
        ),
        "{page}"
    );
    assert!(page.contains("Produced by ngcc-perf 0.1.0"), "{page}");

    // kem-31 has no ngcc records, but the campaign says the host was not fixed.
    let other = std::fs::read_to_string(pages.join("kem-31/perf_arm_1.md")).unwrap();
    assert!(
        other.contains("| host state | not fixed; figures are indicative, not publishable |"),
        "{other}"
    );
    assert!(
        other.contains("| counter | TSC reference cycles (not core cycles) |"),
        "{other}"
    );
    assert!(!other.contains("spread (CV)"), "{other}");

    let summary = std::fs::read_to_string(pages.join("performance/summary_arm_1.md")).unwrap();
    assert!(summary.contains("Host state: not fixed: governor powersave; turbo enabled; figures are indicative, not publishable."), "{summary}");
    assert!(
        summary.contains("Cycle counter: TSC reference cycles at 2.45 GHz (not core cycles)."),
        "{summary}"
    );
    let method = std::fs::read_to_string(pages.join("performance/method_arm_1.md")).unwrap();
    assert!(
        method
            .contains("Cycle figures come from TSC reference cycles at 2.45 GHz (not core cycles)"),
        "{method}"
    );
    assert!(method.contains("Host state: not fixed"), "{method}");

    // Still valid: every figure, including the spread, recomputes from the trials.
    let o = ngcc(&[
        "validate".as_ref(),
        data.as_os_str(),
        "--catalog".as_ref(),
        catalog.as_os_str(),
        "--pages".as_ref(),
        pages.as_os_str(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));

    // A tampered spread is caught.
    let path = data.join("records/kem-38/UVW-KEM-128__keygen.json");
    let mut rec: Record = read_json(&path).unwrap();
    rec.ngcc.as_mut().unwrap().spread.cv *= 2.0;
    write_json(&path, &rec).unwrap();
    let o = ngcc(&[
        "validate".as_ref(),
        data.as_os_str(),
        "--catalog".as_ref(),
        catalog.as_os_str(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains("records/kem-38/UVW-KEM-128__keygen.json: ngcc.spread.cv"),
        "{}",
        text(&o)
    );
}
