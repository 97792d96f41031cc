//! `ngcc-perf validate`: recompute every figure of a dataset from raw evidence
//! (reference-harness.md §8.7 items 3–6): record statistics from their trials, profile shares
//! from their calls, KAT logs against build.json, no absolute home/tmp paths, the system in
//! systems.csv, and (with `--pages`) the pages byte for byte. Every problem is one line that
//! names the file and the field.

use crate::dataset::catalog::{self, Catalogs};
use crate::dataset::load::{self, Dataset, LoadedProfile, LoadedRecord};
use crate::dataset::schema::{KatStatus, ProcessStatus, RecordStatus};
use crate::measure::{crosscheck, stats};
use crate::report;
use anyhow::Result;
use clap::Args;
use regex_lite::Regex;
use serde_json::Value;
use std::fmt::Debug;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct ValidateArgs {
    /// Published dataset folder.
    pub dataset: PathBuf,
    /// Catalog folder (systems.csv, downloads.csv, …).
    #[arg(long)]
    pub catalog: PathBuf,
    /// Folder of rendered pages to compare byte for byte with regenerated ones.
    #[arg(long)]
    pub pages: Option<PathBuf>,
}

/// Relative tolerance of recomputed floating-point figures (Python `math.isclose`).
const REL_TOL: f64 = 1e-9;

#[derive(Debug, Default)]
pub struct Outcome {
    pub system: String,
    pub problems: Vec<String>,
    pub records: usize,
    pub profiles: usize,
    pub kat_logs: usize,
    /// `report check: …` when pages were compared.
    pub report_line: Option<String>,
    /// `baseline: …` when the dataset times the ICCS helpers (records under `iccs/`).
    pub baseline_line: Option<String>,
    /// `memory: …` when the dataset has memory records (`memory/`).
    pub memory_line: Option<String>,
    /// `ct: …` when the dataset has constant-time evidence (`ct/`).
    pub ct_line: Option<String>,
    /// `count: …` when the dataset has instruction counts (`count/`).
    pub count_line: Option<String>,
    /// `security targets: …` when the catalog has security_targets.csv.
    pub groups_line: Option<String>,
}

impl Outcome {
    pub fn summary_line(&self) -> String {
        let tail = self
            .report_line
            .clone()
            .unwrap_or_else(|| "pages not checked (no --pages)".into());
        format!(
            "performance data {}: {} timing record(s), {} profile(s), {} KAT log(s), {} problem(s); {tail}",
            self.system,
            self.records,
            self.profiles,
            self.kat_logs,
            self.problems.len()
        )
    }
}

pub fn run(args: ValidateArgs) -> Result<ExitCode> {
    let outcome = validate(&args.dataset, &args.catalog, args.pages.as_deref())?;
    for p in &outcome.problems {
        crate::util::out!("{p}");
    }
    if let Some(line) = &outcome.baseline_line {
        crate::util::out!("{line}");
    }
    if let Some(line) = &outcome.ct_line {
        crate::util::out!("{line}");
    }
    if let Some(line) = &outcome.memory_line {
        crate::util::out!("{line}");
    }
    if let Some(line) = &outcome.count_line {
        crate::util::out!("{line}");
    }
    if let Some(line) = &outcome.groups_line {
        crate::util::out!("{line}");
    }
    crate::util::out!("{}", outcome.summary_line());
    Ok(crate::util::Exit::check(outcome.problems.is_empty()))
}

pub fn validate(dataset: &Path, catalog: &Path, pages: Option<&Path>) -> Result<Outcome> {
    let (ds, load_problems) = load::load_lenient(dataset)?;
    let mut out = Outcome {
        system: ds.campaign.system_id.clone().unwrap_or_else(|| "?".into()),
        records: ds.records.len(),
        profiles: ds.profiles.len(),
        ..Default::default()
    };
    out.problems
        .extend(load_problems.iter().map(ToString::to_string));
    let catalogs = match Catalogs::load(catalog) {
        Ok(c) => Some(c),
        Err(e) => {
            out.problems.push(format!("catalog: {e:#}"));
            None
        }
    };
    if let Some(cat) = &catalogs {
        check_system(&ds, cat, &mut out.problems);
        check_groups(&ds, cat, &mut out);
    }
    check_paths(&ds.root, &mut out.problems);
    check_journal(&ds.root, &mut out.problems);
    out.kat_logs = check_build(&ds, &mut out.problems);
    for r in &ds.records {
        check_record(&ds, r, &mut out.problems);
    }
    for p in &ds.profiles {
        check_profile(p, &mut out.problems);
    }
    out.baseline_line = check_baseline(&ds, &mut out.problems);
    check_noise(&ds, &mut out.problems);
    out.ct_line = check_ct(&ds, &mut out.problems);
    out.memory_line = check_memory(&ds, &mut out.problems);
    out.count_line = check_count(&ds, &mut out.problems);
    if let Some(pages_dir) = pages {
        match (&catalogs, load_problems.is_empty()) {
            (Some(cat), true) => check_pages(&ds, cat, pages_dir, &mut out),
            _ => out.problems.push(format!(
                "{}: pages not regenerated: the dataset or catalogs could not be read",
                pages_dir.display()
            )),
        }
    }
    Ok(out)
}

/// The run-level noise figure recomputes from its samples.
fn check_noise(ds: &Dataset, problems: &mut Vec<String>) {
    let Some(n) = &ds.campaign.noise else {
        return;
    };
    if n.samples
        .iter()
        .any(|s| s.seconds.is_nan() || s.seconds <= 0.0)
    {
        problems
            .push("campaign.json: noise: a reference-loop sample is not a positive time".into());
    }
    let (spread, cv) = crate::measure::noise::figure(&n.samples);
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1e-12);
    if !close(spread, n.spread) || !close(cv, n.cv) {
        problems.push(format!(
            "campaign.json: noise: spread {} / CV {} do not recompute from the samples ({spread} / {cv})",
            n.spread, n.cv
        ));
    }
}

fn check_system(ds: &Dataset, cat: &Catalogs, problems: &mut Vec<String>) {
    let Some(sid) = ds.campaign.system_id.as_deref() else {
        problems.push("campaign.json: system_id is missing".into());
        return;
    };
    match cat.systems() {
        Err(e) => problems.push(format!("campaign.json: system_id `{sid}`: {e}")),
        Ok(systems) if !systems.iter().any(|s| s.id == sid) => problems.push(format!(
            "campaign.json: system_id `{sid}` is not registered in {}",
            cat.dir.join(catalog::SYSTEMS).display()
        )),
        Ok(_) => {}
    }
}

/// Position of the first `/home/`, `/tmp/`, `/root/` or `/Users/` not preceded by a word
/// character or a dot: the reference's `(?<![\w.])/(home|tmp|root|Users)/`.
pub fn find_absolute_path(text: &str) -> Option<(usize, &str)> {
    const DIRS: [&str; 4] = ["/home/", "/tmp/", "/root/", "/Users/"];
    for (i, _) in text.match_indices('/') {
        let Some(dir) = DIRS.iter().find(|d| text[i..].starts_with(**d)) else {
            continue;
        };
        let prev = text[..i].chars().next_back();
        if prev.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '.') {
            continue;
        }
        return Some((i, dir));
    }
    None
}

fn check_paths(root: &Path, problems: &mut Vec<String>) {
    for rel in load::files_under(root, ".") {
        let rel = rel.strip_prefix("./").unwrap_or(&rel).to_string();
        let Ok(bytes) = std::fs::read(root.join(&rel)) else {
            problems.push(format!("{rel}: cannot read"));
            continue;
        };
        let text = String::from_utf8_lossy(&bytes);
        if let Some((at, _)) = find_absolute_path(&text) {
            let line = text[..at].matches('\n').count() + 1;
            let snippet: String = text[at..]
                .chars()
                .take_while(|c| !c.is_whitespace() && *c != '"')
                .take(60)
                .collect();
            problems.push(format!("{rel}: absolute path `{snippet}` (line {line})"));
        }
    }
}

/// Every file of a dataset `publish` wrote must match the dataset journal it carries.
fn check_journal(root: &Path, problems: &mut Vec<String>) {
    let jpath = root.join(crate::journal::DATASET_JOURNAL);
    let text = match std::fs::read_to_string(&jpath) {
        Ok(t) => t,
        Err(_) => {
            if root.join(crate::dataset::publish::MARKER).is_file()
                && root.join("campaign.json").is_file()
            {
                let c: Option<crate::dataset::schema::Campaign> =
                    crate::util::read_json(&root.join("campaign.json")).ok();
                if c.is_some_and(|c| c.containment.is_some()) {
                    problems.push(format!(
                        "{}: missing (this dataset was published with one)",
                        crate::journal::DATASET_JOURNAL
                    ));
                }
            }
            return;
        }
    };
    let listed = match crate::journal::parse_dataset(&text) {
        Ok(l) => l,
        Err(e) => {
            problems.push(format!("{}: {e:#}", crate::journal::DATASET_JOURNAL));
            return;
        }
    };
    for (rel, line) in &listed {
        let want = &line.sha256;
        match std::fs::read(root.join(rel)) {
            Err(_) => problems.push(format!("{rel}: listed in the journal but missing")),
            Ok(b) if crate::util::sha256_hex(&b) != *want => problems.push(format!(
                "{rel}: changed after it was published (sha256 {} != journal {})",
                &crate::util::sha256_hex(&b)[..16],
                &want[..16]
            )),
            Ok(_) => {}
        }
    }
    for rel in load::files_under(root, ".") {
        let rel = rel.strip_prefix("./").unwrap_or(&rel).to_string();
        let evidence = ["campaign.json", "build.json"].contains(&rel.as_str())
            || ["records/", "profile/", "kat/", "katcheck/"]
                .iter()
                .any(|d| rel.starts_with(d));
        if evidence && !listed.contains_key(&rel) {
            problems.push(format!(
                "{rel}: not in the journal (added after publishing)"
            ));
        }
    }
}

/// Checks every KAT log named by build.json; returns how many logs were checked.
fn check_build(ds: &Dataset, problems: &mut Vec<String>) -> usize {
    let result_re = Regex::new(r"RESULT \S+ \S+ (\S+)").expect("static regex");
    let mut logs = 0;
    for (key, value) in &ds.build.instances {
        let entry: crate::dataset::schema::BuildEntry = match serde_json::from_value(value.clone())
        {
            Ok(e) => e,
            Err(e) => {
                problems.push(format!(
                    "build.json: instances.{key}: not a build entry: {e}"
                ));
                continue;
            }
        };
        let Some(log) = entry.kat_log.as_deref() else {
            continue;
        };
        logs += 1;
        let bytes = match std::fs::read(ds.root.join(log)) {
            Ok(b) => b,
            Err(_) => {
                problems.push(format!(
                    "build.json: instances.{key}.kat_log `{log}` does not exist"
                ));
                continue;
            }
        };
        let digest = crate::util::sha256_hex(&bytes);
        if entry.kat_log_sha256.as_deref() != Some(digest.as_str()) {
            problems.push(format!(
                "{log}: sha256 {digest} != build.json instances.{key}.kat_log_sha256 {}",
                entry.kat_log_sha256.as_deref().unwrap_or("(missing)")
            ));
        }
        let text = String::from_utf8_lossy(&bytes);
        let status = result_re
            .captures_iter(&text)
            .last()
            .map(|c| KatStatus::from(&c[1]));
        match status {
            None => problems.push(format!("{log}: no `RESULT <id> <label> <status>` line")),
            Some(s) if s != entry.kat => problems.push(format!(
                "{log}: last RESULT status {s} != build.json instances.{key}.kat {}",
                entry.kat
            )),
            Some(_) => {}
        }
    }
    logs
}

fn close(a: f64, b: f64) -> bool {
    a == b || (a - b).abs() <= REL_TOL * a.abs().max(b.abs())
}

fn close_opt(a: Option<f64>, b: Option<f64>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => close(a, b),
        (None, None) => true,
        _ => false,
    }
}

fn show<T: Debug>(v: &Option<T>) -> String {
    match v {
        Some(x) => format!("{x:?}"),
        None => "null".into(),
    }
}

fn check_record(ds: &Dataset, lr: &LoadedRecord, problems: &mut Vec<String>) {
    let path = &lr.path;
    let r = &lr.record;
    let mut problem = |field: &str, text: String| problems.push(format!("{path}: {field} {text}"));
    let key = format!("{}/{}", r.candidate, r.label);
    match ds.build.entry(&key) {
        None => problem("instance", format!("{key} is not in build.json")),
        Some(e) => {
            if r.library != e.library {
                problem(
                    "library",
                    format!("{} != build.json {}", show(&r.library), show(&e.library)),
                );
            }
            if r.kat_log != e.kat_log {
                problem(
                    "kat_log",
                    format!("{} != build.json {}", show(&r.kat_log), show(&e.kat_log)),
                );
            }
        }
    }
    if r.environment.is_empty() {
        problem("environment", "is missing".into());
    }
    if r.status == RecordStatus::Inconsistent
        && r.ngcc
            .as_ref()
            .and_then(|x| x.inconsistent_reason.as_ref())
            .is_none()
    {
        problem(
            "ngcc.inconsistent_reason",
            "is missing from an inconsistent record".into(),
        );
    }
    if r.status != RecordStatus::Complete {
        return;
    }
    // A shown record must pass the cross-checks again, from its stored evidence (records
    // written before the checks, and the reference's, carry none).
    if let Some(ev) = crosscheck::Evidence::of(r) {
        let stored = r.ngcc.as_ref().and_then(|x| x.checks.as_ref());
        let last = stored.map(|c| c.last_outputs.clone()).unwrap_or_default();
        if let Some(why) = crosscheck::check(&r.processes, &ev, last).failure {
            problem(
                "status",
                format!("complete, but a cross-check fails: {why}"),
            );
        }
    }
    let Some(stored) = r.stats.as_ref() else {
        problem("statistics", "are missing from a complete record".into());
        return;
    };
    let Some(fresh) = stats::record_stats(&r.processes, r.input_bytes) else {
        problem("processes", "hold no trials in a complete record".into());
        return;
    };
    if fresh.trials.len() as u64 != r.plan.trials {
        problem(
            "trials",
            format!(
                "count {} != plan.trials {}",
                fresh.trials.len(),
                r.plan.trials
            ),
        );
    }
    // The whole stored structure against the recomputed one, field by field as serialised:
    // a field added to the statistics is validated without being listed here.
    let mut diffs = Vec::new();
    json_differences("", &to_value(stored), &to_value(&fresh), &mut diffs);
    for (field, text) in diffs {
        problem(&field, text);
    }
    if let Some(extra) = &r.ngcc {
        let per_trial: Vec<f64> = fresh
            .trials
            .iter()
            .map(|t| t.seconds / t.measurements as f64)
            .collect();
        let mut diffs = Vec::new();
        json_differences(
            "ngcc.spread",
            &to_value(&extra.spread),
            &to_value(&stats::spread(&per_trial)),
            &mut diffs,
        );
        for (field, text) in diffs {
            problem(&field, text);
        }
    }
}

fn to_value<T: serde::Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

/// Every leaf where `stored` and `recomputed` differ, as (path, "stored != recomputed"):
/// numbers within [`REL_TOL`] are equal (a float's last bits may differ after a round trip),
/// arrays report their first differing element (or their lengths), objects every key.
fn json_differences(path: &str, stored: &Value, fresh: &Value, out: &mut Vec<(String, String)>) {
    let at = |key: &str| {
        if path.is_empty() {
            key.to_string()
        } else {
            format!("{path}.{key}")
        }
    };
    match (stored, fresh) {
        (Value::Number(a), Value::Number(b))
            if a != b
                && !close(
                    a.as_f64().unwrap_or(f64::NAN),
                    b.as_f64().unwrap_or(f64::NAN),
                ) =>
        {
            out.push((path.to_string(), format!("{a} != recomputed {b}")));
        }
        (Value::Number(_), Value::Number(_)) => {}
        (Value::Object(a), Value::Object(b)) => {
            for (key, va) in a {
                json_differences(&at(key), va, b.get(key).unwrap_or(&Value::Null), out);
            }
            for (key, vb) in b {
                if !a.contains_key(key) {
                    out.push((at(key), format!("is missing (recomputed {vb})")));
                }
            }
        }
        (Value::Array(a), Value::Array(b)) => {
            if a.len() != b.len() {
                out.push((
                    path.to_string(),
                    format!("has {} entries != recomputed {}", a.len(), b.len()),
                ));
                return;
            }
            for (i, (va, vb)) in a.iter().zip(b).enumerate() {
                let before = out.len();
                json_differences(&format!("{path}[{i}]"), va, vb, out);
                if out.len() > before {
                    return;
                }
            }
        }
        (a, b) if a != b => out.push((path.to_string(), format!("{a} != recomputed {b}"))),
        _ => {}
    }
}

/// The ICCS baseline (records under `iccs/`, campaign phase `baseline`): every helper timed at
/// all eight guide lengths; every hash record with a `pseudoXOF` of its width and length, and
/// the summary's ratio (candidate mean cycles / pseudoXOF mean cycles) recomputed from both
/// records' raw trials. `None` when the dataset has no baseline.
fn check_baseline(ds: &Dataset, problems: &mut Vec<String>) -> Option<String> {
    use crate::dataset::guide::HASH_SIZES as SIZES;
    use crate::dataset::schema::baseline::CANDIDATE;
    let iccs: Vec<&LoadedRecord> = ds
        .records
        .iter()
        .filter(|r| r.record.candidate == CANDIDATE)
        .collect();
    if iccs.is_empty() {
        return None;
    }
    let find = |label: &str, size: u64| {
        iccs.iter().find(|r| {
            r.record.label == label
                && r.record.input_bytes == size
                && r.record.operation.name() == "hash"
        })
    };
    let labels: std::collections::BTreeSet<&str> =
        iccs.iter().map(|r| r.record.label.as_str()).collect();
    for label in &labels {
        for size in SIZES {
            if find(label, size).is_none() {
                problems.push(format!(
                    "records/{CANDIDATE}/{label}__hash_{size}.json: missing (the baseline times every helper at S1–S8)"
                ));
            }
        }
    }
    let fresh_cycles = |r: &LoadedRecord| {
        (r.record.status == RecordStatus::Complete)
            .then(|| stats::record_stats(&r.record.processes, r.record.input_bytes))
            .flatten()
            .and_then(|s| s.mean_cycles)
    };
    let mut ratios = 0;
    let mut missing_width = std::collections::BTreeSet::new();
    for r in ds.records.iter().filter(|r| {
        r.record.candidate != CANDIDATE
            && r.record.operation.name() == "hash"
            && r.record.status == RecordStatus::Complete
    }) {
        let Some(bits) = r
            .record
            .stats
            .as_ref()
            .and_then(|s| s.sizes.get("digest_bytes"))
            .and_then(Value::as_u64)
            .map(|b| 8 * b)
        else {
            continue;
        };
        let label = format!("pseudoXOF-{bits}");
        let Some(base) = find(&label, r.record.input_bytes) else {
            if labels.contains(label.as_str())
                || missing_width.insert((r.record.candidate.clone(), r.record.label.clone()))
            {
                problems.push(format!(
                    "{}: no {CANDIDATE}/{label} record at {} bytes: the summary shows no ratio",
                    r.path, r.record.input_bytes
                ));
            }
            continue;
        };
        let stored = |x: &LoadedRecord| x.record.stats.as_ref().and_then(|s| s.mean_cycles);
        let (Some(c), Some(b)) = (fresh_cycles(r), fresh_cycles(base)) else {
            continue;
        };
        ratios += 1;
        let fresh = c / b;
        let shown = match (stored(r), stored(base)) {
            (Some(c), Some(b)) if b > 0.0 => Some(c / b),
            _ => None,
        };
        if !close_opt(shown, Some(fresh)) {
            problems.push(format!(
                "{}: ratio to {CANDIDATE}/{label} {} != recomputed from trials {fresh:?}",
                r.path,
                show(&shown)
            ));
        }
    }
    Some(format!(
        "baseline: {} ICCS helper(s), {} record(s); {ratios} pseudoXOF ratio(s) recomputed from trials",
        labels.len(),
        iccs.len()
    ))
}

/// Every dudect t recomputed from its classes' stored statistics, max |t| and the verdict
/// from the tests, and each taint site's kind and place well-formed.
fn check_ct(ds: &Dataset, problems: &mut Vec<String>) -> Option<String> {
    use crate::measure::dudect;
    if ds.ct.is_empty() {
        return None;
    }
    let (mut tests, mut sites) = (0usize, 0usize);
    for lc in &ds.ct {
        let (c, path) = (&lc.ct, &lc.path);
        let want = format!(
            "ct/{}/{}__{}.json",
            c.candidate,
            c.label,
            c.operation.name()
        );
        if *path != want {
            problems.push(format!("{path}: names {want}"));
        }
        if let Some(t) = &c.taint {
            for s in &t.sites {
                sites += 1;
                if s.file.is_empty() || s.line == 0 || s.count == 0 {
                    problems.push(format!(
                        "{path}: site {}:{} without place or count",
                        s.file, s.line
                    ));
                }
                if matches!(s.kind, crate::dataset::schema::CtSiteKind::Other(_)) {
                    problems.push(format!(
                        "{path}: site {}:{} of unknown kind {}",
                        s.file, s.line, s.kind
                    ));
                }
            }
        }
        let Some(d) = c
            .dudect
            .as_ref()
            .filter(|d| d.status == ProcessStatus::Complete)
        else {
            continue;
        };
        for t in &d.tests {
            tests += 1;
            let again = dudect::welch_t(&t.fixed, &t.random);
            if !close(again, t.t) && (again - t.t).abs() > 1e-12 {
                problems.push(format!(
                    "{path}: dudect test {} t {} but its class statistics give {again}",
                    t.name, t.t
                ));
            }
        }
        let max = dudect::max_abs_t(&d.tests);
        if !close(max, d.max_abs_t) {
            problems.push(format!(
                "{path}: max |t| {} but the tests give {max}",
                d.max_abs_t
            ));
        }
        let verdict = dudect::verdict(&d.tests, &c.operation);
        if d.verdict != verdict {
            problems.push(format!(
                "{path}: verdict {} but its tests give {verdict}",
                d.verdict
            ));
        }
        if let Some(raw) = d.tests.first()
            && raw.fixed.n + raw.random.n != d.measurements
        {
            problems.push(format!(
                "{path}: {} measurements but the raw test counts {}",
                d.measurements,
                raw.fixed.n + raw.random.n
            ));
        }
    }
    Some(format!(
        "ct: {} result(s), {tests} dudect test(s) recomputed, {sites} taint site(s)",
        ds.ct.len()
    ))
}

/// Memory records (issue 36): names, status, static sums by origin, heap invariants, and
/// the timed library they were relinked from (`dataset::memory::problems`).
fn check_memory(ds: &Dataset, problems: &mut Vec<String>) -> Option<String> {
    if ds.memory.is_empty() {
        return None;
    }
    let before = problems.len();
    for lm in &ds.memory {
        let m = &lm.memory;
        let entry = ds.build.entry(&format!("{}/{}", m.candidate, m.label));
        let sha = entry.as_ref().and_then(|e| e.library_sha256.as_deref());
        problems.extend(crate::dataset::memory::problems(&lm.path, m, sha));
    }
    let ops: usize = ds.memory.iter().map(|m| m.memory.operations.len()).sum();
    Some(format!(
        "memory: {} record(s), {ops} operation(s) checked, {} problem(s)",
        ds.memory.len(),
        problems.len() - before
    ))
}

/// Every count record's calls read again from its callgrind text (whose sha256 must match),
/// its summary recomputed from the calls, its library the one build.json names, and the
/// valgrind client-request mark (ct taint results too) consistent with its scan.
fn check_count(ds: &Dataset, problems: &mut Vec<String>) -> Option<String> {
    use crate::dataset::count::{self as dc, summarize};
    for lc in &ds.ct {
        if let Some(t) = &lc.ct.taint {
            let found = t.client_requests.as_ref().is_some_and(|c| c.found > 0);
            if t.forged != found {
                problems.push(format!(
                    "{}: taint forged {} but its client-request scan found {}",
                    lc.path,
                    t.forged,
                    t.client_requests.as_ref().map_or(0, |c| c.found)
                ));
            }
            if let Some(c) = &t.client_requests
                && c.library_sha256 != lc.ct.ct_library_sha256
            {
                problems.push(format!(
                    "{}: the client-request scan is of another library ({})",
                    lc.path, c.library_sha256
                ));
            }
        }
    }
    if ds.count.is_empty() {
        return None;
    }
    let mut calls = 0usize;
    for lc in &ds.count {
        let (c, path) = (&lc.count, &lc.path);
        let want = format!(
            "{}/{}/{}.json",
            dc::COUNT_DIR,
            c.candidate,
            dc::stem(&c.label, &c.operation, c.input_bytes)
        );
        if *path != want {
            problems.push(format!("{path}: names {want}"));
        }
        let key = format!("{}/{}", c.candidate, c.label);
        match ds.build.entry(&key) {
            Some(e) if e.library_sha256.as_deref() == Some(c.library_sha256.as_str()) => {}
            Some(_) => problems.push(format!(
                "{path}: library_sha256 is not the library build.json names for {key}"
            )),
            None => problems.push(format!("{path}: {key} is not in build.json")),
        }
        if let Some(cr) = &c.client_requests
            && cr.library_sha256 != c.library_sha256
        {
            problems.push(format!(
                "{path}: the client-request scan is of another library ({})",
                cr.library_sha256
            ));
        }
        if c.status != ProcessStatus::Complete {
            continue;
        }
        let Some(raw) = &c.raw else {
            problems.push(format!("{path}: complete but without its callgrind text"));
            continue;
        };
        let text = match std::fs::read(ds.root.join(&raw.path)) {
            Ok(b) => {
                let sha = crate::util::sha256_hex(&b);
                if sha != raw.sha256 {
                    problems.push(format!(
                        "{path}: {} has sha256 {sha}, the record says {}",
                        raw.path, raw.sha256
                    ));
                }
                String::from_utf8_lossy(&b).into_owned()
            }
            Err(e) => {
                problems.push(format!("{path}: {}: {e}", raw.path));
                continue;
            }
        };
        match crate::measure::callgrind::calls_from_raw(&text, &c.helper_fns, &c.entry_fns()) {
            Ok(again) if again == c.calls => calls += again.len(),
            Ok(again) => {
                let first = again
                    .iter()
                    .zip(&c.calls)
                    .position(|(a, b)| a != b)
                    .unwrap_or(again.len().min(c.calls.len()));
                problems.push(format!(
                    "{path}: call {} does not recompute from {} ({} calls there, {} recorded)",
                    first + 1,
                    raw.path,
                    again.len(),
                    c.calls.len()
                ));
            }
            Err(e) => problems.push(format!("{path}: {}: {e}", raw.path)),
        }
        let again = summarize(&c.calls, &c.estimate_weights, &c.rng_fns);
        let same = match (&again, &c.summary) {
            (Some(a), Some(b)) => {
                a.calls == b.calls
                    && a.ir_min == b.ir_min
                    && a.ir_max == b.ir_max
                    && a.estimated_cycles_min == b.estimated_cycles_min
                    && a.estimated_cycles_max == b.estimated_cycles_max
                    && a.constant_ir == b.constant_ir
                    && [
                        (a.ir_mean, b.ir_mean),
                        (a.estimated_cycles_mean, b.estimated_cycles_mean),
                        (a.dr_mean, b.dr_mean),
                        (a.dw_mean, b.dw_mean),
                        (a.l1_misses_mean, b.l1_misses_mean),
                        (a.ll_misses_mean, b.ll_misses_mean),
                        (a.helper_share, b.helper_share),
                        (a.hash_share, b.hash_share),
                        (a.rng_share, b.rng_share),
                    ]
                    .iter()
                    .all(|&(x, y)| close(x, y) || (x - y).abs() <= 1e-12)
            }
            (None, None) => true,
            _ => false,
        };
        if !same {
            problems.push(format!(
                "{path}: summary does not recompute from the calls ({again:?})"
            ));
        }
    }
    let fixed = ds
        .count
        .iter()
        .filter(|lc| lc.count.address_space == dc::AddressSpace::Fixed)
        .count();
    Some(format!(
        "count: {} record(s), {calls} call(s) recomputed from their callgrind text; {fixed} \
         counted with address-space randomisation off",
        ds.count.len()
    ))
}

fn check_profile(lp: &LoadedProfile, problems: &mut Vec<String>) {
    let p = &lp.profile;
    let path = &lp.path;
    if p.status != ProcessStatus::Complete {
        return;
    }
    let Some(total) = p.total.as_ref().filter(|t| t.ticks > 0) else {
        return;
    };
    // Σ ticks per function, in order of first appearance (like the reference's dict).
    let mut ticks: Vec<(&str, u64)> = Vec::new();
    for c in &p.calls {
        match ticks.iter_mut().find(|(f, _)| *f == c.func) {
            Some((_, t)) => *t += c.ticks,
            None => ticks.push((&c.func, c.ticks)),
        }
    }
    let share: Vec<(&str, f64)> = ticks
        .iter()
        .map(|(f, t)| (*f, stats::int_div(*t as u128, total.ticks as u128)))
        .collect();
    let stored = p.share.clone().unwrap_or_default();
    for (f, want) in &share {
        match stored.get(*f).and_then(Value::as_f64) {
            Some(got) if close(got, *want) => {}
            Some(got) => problems.push(format!("{path}: share.{f} {got:?} != recomputed {want:?}")),
            None => problems.push(format!(
                "{path}: share.{f} is missing (recomputed {want:?})"
            )),
        }
    }
    for f in stored.keys() {
        if !share.iter().any(|(g, _)| g == f) {
            problems.push(format!("{path}: share.{f} has no calls behind it"));
        }
    }
    // ngcc-perf profiles name their hash functions (NIST profiles also have `randombytes`);
    // reference profiles count everything but `drng`.
    let is_hash = |f: &str| match p
        .ngcc
        .as_ref()
        .filter(|x| !x.hash_fns.is_empty() || !x.rng_fns.is_empty())
    {
        Some(x) => x.hash_fns.iter().any(|h| h == f),
        None => f != "drng",
    };
    let hash_share = stats::py_sum(share.iter().filter(|(f, _)| is_hash(f)).map(|(_, s)| *s));
    if !close_opt(p.hash_share, Some(hash_share)) {
        problems.push(format!(
            "{path}: hash_share {} != recomputed {hash_share:?}",
            show(&p.hash_share)
        ));
    }
}

/// Every instance has a security_targets.csv row (when the catalog has the file).
fn check_groups(ds: &Dataset, cat: &Catalogs, out: &mut Outcome) {
    let Ok(sys) = report::system_of(ds, None) else {
        return;
    };
    match report::groups::check_catalog(ds, cat, &sys) {
        Ok(Some((problems, line))) => {
            out.problems.extend(problems);
            out.groups_line = Some(line);
        }
        Ok(None) => {}
        // Only an unknown system fails here, and check_system names it.
        Err(_) => {}
    }
}

fn check_pages(ds: &Dataset, cat: &Catalogs, pages_dir: &Path, out: &mut Outcome) {
    let sys = match report::system_of(ds, None) {
        Ok(s) => s,
        Err(e) => {
            out.problems.push(format!("pages: {e:#}"));
            return;
        }
    };
    match report::render_all(ds, cat, &sys) {
        Ok(pages) => {
            let differ = report::differing_pages(&pages, pages_dir);
            for p in &differ {
                out.problems.push(format!(
                    "{}: differs from regenerated output",
                    pages_dir.join(&p.path).display()
                ));
            }
            // Groups, representatives and ranks recomputed: name each rank that differs.
            out.problems
                .extend(report::ordered_page::rank_differences(&pages, pages_dir));
            out.report_line = Some(format!(
                "report check: system {sys}: {} pages, {} differ",
                pages.len(),
                differ.len()
            ));
        }
        Err(e) => out
            .problems
            .push(format!("pages: cannot regenerate: {e:#}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_serialised_field_is_compared_with_a_float_tolerance() {
        let stored = serde_json::json!({
            "mean_seconds": 1.0, "timing_scope": "loop", "added_later": 3,
            "trials": [{"seconds": 1.0}, {"seconds": 2.0}, {"seconds": 9.0}],
            "sizes": {"pk_bytes": 800}
        });
        let fresh = serde_json::json!({
            "mean_seconds": 1.0 + 1e-12, "timing_scope": "per_call_step", "added_later": 4,
            "trials": [{"seconds": 1.0}, {"seconds": 2.5}, {"seconds": 9.5}],
            "sizes": {"pk_bytes": 800, "ct_bytes": 768}
        });
        let mut out = Vec::new();
        json_differences("", &stored, &fresh, &mut out);
        let fields: Vec<&str> = out.iter().map(|(f, _)| f.as_str()).collect();
        assert_eq!(
            fields,
            [
                "timing_scope",
                "added_later",
                "trials[1].seconds",
                "sizes.ct_bytes"
            ]
        );
        assert_eq!(out[1].1, "3 != recomputed 4");
        let mut none = Vec::new();
        json_differences("", &stored, &stored, &mut none);
        assert!(none.is_empty());
    }

    #[test]
    fn absolute_paths_like_the_reference_regex() {
        assert!(find_absolute_path("lib at /home/ann/x.so").is_some());
        assert!(find_absolute_path("\"/tmp/run\"").is_some());
        assert!(find_absolute_path("/Users/x").is_some());
        assert!(find_absolute_path("./tmp/x").is_none());
        assert!(find_absolute_path("a/tmp/x").is_none());
        assert!(find_absolute_path("_/root/x").is_none());
        assert!(find_absolute_path("/homes/x /tmpfile").is_none());
        assert!(find_absolute_path("x/home/ then /root/").is_some());
        assert!(find_absolute_path("é/tmp/").is_none());
    }

    #[test]
    fn isclose_semantics() {
        assert!(close(1.0, 1.0 + 1e-10));
        assert!(!close(1.0, 1.0 + 1e-8));
        assert!(close(0.0, 0.0));
        assert!(!close(0.0, 1e-300));
        assert!(close_opt(None, None));
        assert!(!close_opt(Some(1.0), None));
    }
}
