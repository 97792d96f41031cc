//! The summary, method and survey pages of the reference's own published data against the
//! reference's newest lines (`tests/data/reference-arm_1/`, see its README): the shared
//! fixture alone (kem-31, kem-38) and the fixture plus hash-03, hash-07, sign-18, kex-06 and
//! the ICCS baseline. Every line that does not depend on candidates outside the dataset must
//! equal the reference line; the lines that count or list the whole campaign (record count,
//! cores, survey totals, the survey's system) are checked against the same sentence filled in
//! from this dataset.

use crate::common;
use common::*;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

fn reference(name: &str) -> String {
    std::fs::read_to_string(reference::data_dir().join(name)).unwrap()
}

/// The first differing line, for a readable failure.
fn assert_same_lines(what: &str, want: &str, got: &str) {
    for (i, (w, g)) in want.split('\n').zip(got.split('\n')).enumerate() {
        assert_eq!(w, g, "{what}: line {} differs\n{got}", i + 1);
    }
    assert_eq!(
        want.split('\n').count(),
        got.split('\n').count(),
        "{what}: line count differs\n{got}"
    );
    assert_eq!(want, got, "{what}");
}

fn render(data: &Path, out: &Path) {
    let o = report(data, out, &[]);
    assert!(o.status.success(), "{}", text(&o));
}

fn json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Every `*.json` under `dir`, sorted by relative path (the order the reference reads them).
fn json_files(dir: &Path) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "json") {
                let rel = p.strip_prefix(dir).unwrap().to_string_lossy().into_owned();
                out.push((rel, json(&p)));
            }
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// The reference's `pct`.
fn pct(x: f64) -> String {
    if x >= 0.095 {
        format!("{:.0}%", 100.0 * x)
    } else {
        format!("{:.1}%", 100.0 * x)
    }
}

/// The newest reference's summary bullet for a run without a baseline (report.py at
/// `cdbc80ed…`; its published pages all have a baseline).
const NO_BASELINE_HASH_BULLET: &str = "- **Hash rows** give three message sizes; the parenthesized 32-byte value is relative to an exact-shape measured `pseudoXOF` call, not an estimate of a production replacement.";
/// The newest reference's method paragraph for a run without a baseline (report.py at
/// `cdbc80ed…`).
const NO_BASELINE_METHOD: &str = "The summary compares each hash candidate's 32-byte timing with the median measured `pseudoXOF` call having exactly the same input and output widths in the published profiles. Profile TSC ticks are converted to fixed-frequency core cycles using each profile's recorded tick calibration and the campaign's fixed CPU frequency. This is a direct, self-contained relative measurement, not an estimate of substituting that hash into a public-key scheme. Several hash submissions are not yet constant-time (e.g. table-based S-boxes), so their current timings are not production figures; the summary flags known cases.";

/// The reference summary reduced to what a dataset has: rows of its candidates, the ICCS
/// helpers it timed, sections with rows.
fn expected_summary(data: &Path) -> String {
    let want = reference("summary_arm_1.md");
    let records = json_files(&data.join("records"));
    let has = |prefix: &str| records.iter().any(|(p, _)| p.starts_with(prefix));
    let helpers: BTreeSet<String> = records
        .iter()
        .filter(|(p, _)| p.starts_with("iccs/"))
        .map(|(p, _)| p[5..p.find("__").unwrap()].to_string())
        .collect();
    let baseline = !helpers.is_empty();
    // Split into blank-line separated blocks; drop rows and whole sections the dataset lacks.
    let mut out: Vec<String> = Vec::new();
    let mut skip_section = false;
    for line in want.split('\n') {
        if let Some(title) = line.strip_prefix("## ") {
            let prefix = match title {
                "Digital signatures" => "sign-",
                "Key encapsulation" => "kem-",
                "Key exchange" => "kex-",
                "ICCS hash helpers" => "iccs/",
                _ => "hash-",
            };
            skip_section = !has(prefix) || (prefix == "iccs/" && !has("hash-"));
        }
        if skip_section {
            continue;
        }
        if let Some(rest) = line.strip_prefix("| [") {
            let cand = &rest[..rest.find(']').unwrap()];
            if !has(&format!("{cand}/")) {
                continue;
            }
        }
        if let Some(rest) = line.strip_prefix("| `") {
            let func = &rest[..rest.find('`').unwrap()];
            let bits = rest.split(" | ").nth(1).unwrap();
            if !helpers.contains(&format!("{func}-{bits}")) {
                continue;
            }
        }
        if line.starts_with("- **Hash rows**") && !baseline {
            out.push(NO_BASELINE_HASH_BULLET.into());
            continue;
        }
        out.push(line.to_string());
    }
    // Sections dropped above leave their separating blank line behind.
    let mut text = out.join("\n");
    while text.contains("\n\n\n") {
        text = text.replace("\n\n\n", "\n\n");
    }
    // Like every section, the last one ends with an empty line.
    format!("{}\n\n", text.trim_end_matches('\n'))
}

/// The reference method page with the campaign-wide facts of this dataset: its number of
/// complete records and the cores it ran on.
fn expected_method(data: &Path) -> String {
    let records = json_files(&data.join("records"));
    let complete: Vec<&Value> = records
        .iter()
        .map(|(_, r)| r)
        .filter(|r| r["status"] == "complete")
        .collect();
    let cpus: BTreeSet<i64> = complete
        .iter()
        .map(|r| r["environment"]["cpu_number"].as_i64().unwrap())
        .collect();
    let campaign = json(&data.join("campaign.json"));
    let shard_cpus: BTreeSet<i64> = campaign["shard_cpus"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_i64().unwrap())
        .collect();
    let slow: BTreeSet<(String, String)> = complete
        .iter()
        .filter(|r| !shard_cpus.contains(&r["environment"]["cpu_number"].as_i64().unwrap()))
        .map(|r| {
            (
                r["candidate"].as_str().unwrap().to_string(),
                r["label"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let list = |v: &BTreeSet<i64>| {
        v.iter()
            .map(|c| c.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let baseline = records.iter().any(|(p, _)| p.starts_with("iccs/"));
    let mut out = Vec::new();
    for line in reference("method_arm_1.md").split('\n') {
        let line = if line.starts_with("- One Qualcomm Oryon core") {
            line.replace(
                "All 2746 timing records",
                &format!("All {} timing records", complete.len()),
            )
        } else if line.starts_with("- Timing ran in parallel on cores 2, 3, 6, 7.") {
            let slow_text = if slow.is_empty() {
                String::new()
            } else {
                let names: Vec<String> = slow.iter().map(|(c, l)| format!("{c} {l}")).collect();
                format!(
                    "; the slowest instances ({}) ran on a further core",
                    names.join(", ")
                )
            };
            line.replace("cores 2, 3, 6, 7.", &format!("cores {}.", list(&cpus)))
                .replace(
                    "; the slowest instances (sign-30 TRINE-512-Balanced, sign-30 TRINE-512-ShortSig, sign-32 UVW-512) ran on a further core",
                    &slow_text,
                )
                .replace("among cores 2, 3, 7 ", &format!("among cores {} ", list(&shard_cpus)))
        } else if line.starts_with("The ICCS helpers `sm3hash`") && !baseline {
            NO_BASELINE_METHOD.to_string()
        } else {
            line.to_string()
        };
        out.push(line);
    }
    out.join("\n")
}

/// The reference survey for system arm_1 and this catalog: fixed prose verbatim, the totals,
/// system and share column filled in from the dataset (the published page is x86_1's).
fn expected_survey(data: &Path, catalog: &Path) -> String {
    let systems = std::fs::read_to_string(catalog.join("systems.csv")).unwrap();
    let desc = |sys: &str| {
        systems
            .lines()
            .find(|l| l.starts_with(&format!("{sys};")))
            .unwrap()
            .splitn(4, ';')
            .nth(3)
            .unwrap()
            .to_string()
    };
    let survey = std::fs::read_to_string(catalog.join("symmetric_survey.csv")).unwrap();
    let mut totals: Vec<(String, usize)> = Vec::new();
    for l in survey
        .lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with("ID;"))
    {
        let verdict = l.split(';').nth(1).unwrap().to_string();
        match totals.iter_mut().find(|(v, _)| *v == verdict) {
            Some((_, n)) => *n += 1,
            None => totals.push((verdict, 1)),
        }
    }
    totals.sort_by_key(|t| std::cmp::Reverse(t.1));
    let totals: Vec<String> = totals.iter().map(|(v, n)| format!("{n} {v}")).collect();
    // Largest share per candidate: the first profile in path order with the maximum.
    let mut best: BTreeMap<String, (f64, String)> = BTreeMap::new();
    for (_, p) in json_files(&data.join("profile")) {
        let Some(share) = p["hash_share"].as_f64() else {
            continue;
        };
        let cand = p["candidate"].as_str().unwrap().to_string();
        let what = format!(
            "{} {}",
            p["label"].as_str().unwrap(),
            p["operation"].as_str().unwrap()
        );
        if best.get(&cand).is_none_or(|(b, _)| share > *b) {
            best.insert(cand, (share, what));
        }
    }
    let with_page: BTreeSet<String> = json_files(&data.join("records"))
        .iter()
        .map(|(p, _)| p[..p.find('/').unwrap()].to_string())
        .collect();
    let mut out = Vec::new();
    for line in reference("symmetric-survey.md").split('\n') {
        let line = if line.starts_with("Totals: ") {
            format!("Totals: {}.", totals.join(", "))
        } else if line.starts_with("The last column is measured on system") {
            line.replace(&desc("x86_1"), &desc("arm_1"))
                .replace("x86_1", "arm_1")
        } else if line.starts_with("| id |") {
            line.replace("x86_1", "arm_1")
        } else if line.starts_with("| [") {
            let cand = &line[3..line.find(']').unwrap()];
            let mut cells: Vec<String> = line.split(" | ").map(str::to_string).collect();
            if !with_page.contains(cand) {
                cells[0] = format!("| {cand}");
            } else {
                cells[0] = cells[0].replace("x86_1", "arm_1");
            }
            let last = cells.len() - 1;
            cells[last] = match best.get(cand) {
                Some((s, what)) => format!("{} ({what}) |", pct(*s)),
                None => "– |".into(),
            };
            cells.join(" | ")
        } else {
            line.to_string()
        };
        out.push(line);
    }
    out.join("\n")
}

fn check_pages(data: &Path, catalog: &Path) {
    let out = tempfile::tempdir().unwrap();
    render(data, out.path());
    let page = |p: &str| std::fs::read_to_string(out.path().join(p)).unwrap();
    assert_same_lines(
        "summary",
        &expected_summary(data),
        &page("performance/summary_arm_1.md"),
    );
    assert_same_lines(
        "method",
        &expected_method(data),
        &page("performance/method_arm_1.md"),
    );
    assert_same_lines(
        "survey",
        &expected_survey(data, catalog),
        &page("performance/symmetric-survey.md"),
    );
}

#[test]
fn pages_of_the_shared_fixture_equal_the_newest_reference_lines() {
    let Some(fixture) = fixture_dir() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("fixture");
    copy_tree(&fixture, &data);
    // The reference catalog rows (the fixture's own catalog has no survey row for kem-01).
    let catalog = data.join("catalog");
    copy_tree(&reference::data_dir().join("catalog"), &catalog);
    check_pages(&data, &catalog);
}

#[test]
fn pages_of_seven_published_candidates_and_the_baseline_equal_the_newest_reference_lines() {
    let Some(fixture) = fixture_dir() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("reference");
    let catalog = reference::assemble(&fixture, &data);
    check_pages(&data, &catalog);
    // The ratios come from the baseline records: 3862.38551 / 2809.72195 cycles at 32 B.
    let out = tempfile::tempdir().unwrap();
    render(&data, out.path());
    let summary = std::fs::read_to_string(out.path().join("performance/summary_arm_1.md")).unwrap();
    assert!(
        summary.contains("| `Dragon-512` | 3862 (1.37×) |"),
        "{summary}"
    );
    assert!(summary.contains("## ICCS hash helpers"));
}
