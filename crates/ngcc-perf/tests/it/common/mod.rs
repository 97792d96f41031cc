//! Helpers shared by the integration tests: run the binary, find and copy the reference
//! dataset, read a run's build.json, write scratch files.
#![allow(dead_code)]

pub mod reference;

use ngcc_perf::dataset::schema::{BuildEntry, BuildFile, Campaign, Record, RecordExtra};
use ngcc_perf::util::{read_json, write_json};
use std::cell::Cell;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Mutex, MutexGuard, OnceLock};

// ------------------------------------------------------------------ running the binary

/// The binary, with the object cache under this build's target folder: tests never read or
/// fill the user's `~/.cache/ngcc-perf/objects` (a test may still set its own).
pub fn bin() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ngcc-perf"));
    cmd.env(
        "NGCC_OBJECT_CACHE",
        Path::new(env!("CARGO_TARGET_TMPDIR")).join("object-cache"),
    );
    cmd
}

pub fn ngcc(args: &[&OsStr]) -> Output {
    bin().args(args).output().expect("running ngcc-perf")
}

pub fn run_ok(args: &[&str]) -> Output {
    let out = bin().args(args).output().expect("run ngcc-perf");
    assert!(
        out.status.success(),
        "ngcc-perf {} failed: {}\n{}",
        args.join(" "),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// stdout then stderr, for failure messages and searches in both.
pub fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// `ngcc-perf campaign PHASES --candidates CANDS --run RUN EXTRA…`, not started yet.
pub fn campaign_cmd(phases: &str, cands: &Path, run: &Path, extra: &[&str]) -> Command {
    let mut cmd = bin();
    cmd.args(["campaign", phases, "--candidates"])
        .arg(cands)
        .arg("--run")
        .arg(run)
        .args(extra);
    cmd
}

// ------------------------------------------------------------------ one timed test at a time

static MEASURING: Mutex<()> = Mutex::new(());

thread_local! {
    static HOLDS_MEASURING: Cell<bool> = const { Cell::new(false) };
}

/// Held while a test's children are timed. Campaigns pin their children to one CPU (the
/// last allowed), and libtest runs tests two at a time: two timing tests at once would put
/// their trials on the same core and judge records of a contention the test made itself.
/// Re-entrant within a test's thread, so a test can hold it across several campaigns.
pub struct Measuring(Option<MutexGuard<'static, ()>>);

pub fn measuring() -> Measuring {
    if HOLDS_MEASURING.with(Cell::get) {
        return Measuring(None);
    }
    // A test that panicked while holding it leaves nothing inconsistent behind.
    let guard = MEASURING.lock().unwrap_or_else(|e| e.into_inner());
    HOLDS_MEASURING.with(|h| h.set(true));
    Measuring(Some(guard))
}

impl Drop for Measuring {
    fn drop(&mut self) {
        if self.0.is_some() {
            HOLDS_MEASURING.with(|h| h.set(false));
        }
    }
}

/// Phases whose children are timed (or whose figures depend on the time they get).
fn times_children(phases: &str) -> bool {
    phases.split(',').any(|p| {
        matches!(
            p,
            "all" | "calibrate" | "measure" | "profile" | "ct" | "baseline" | "memory" | "count"
        )
    })
}

pub fn campaign(phases: &str, cands: &Path, run: &Path, extra: &[&str]) -> Output {
    let _timed = times_children(phases).then(measuring);
    campaign_cmd(phases, cands, run, extra)
        .output()
        .expect("running ngcc-perf")
}

/// A campaign that must succeed; its stderr (the progress lines).
pub fn campaign_ok(phases: &str, cands: &Path, run: &Path, extra: &[&str]) -> String {
    let out = campaign(phases, cands, run, extra);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "campaign failed: {stderr}");
    stderr
}

/// `ngcc-perf publish --run RUN --system SYSTEM --out OUT`, which must succeed.
pub fn publish_ok(run: &Path, system: &str, out: &Path) -> Output {
    let path = |p: &Path| p.to_str().expect("a UTF-8 path").to_string();
    run_ok(&[
        "publish",
        "--run",
        &path(run),
        "--system",
        system,
        "--out",
        &path(out),
    ])
}

/// `ngcc-perf catalog DATA --out OUT`, which must succeed.
pub fn catalog_ok(data: &Path, out: &Path) -> Output {
    let path = |p: &Path| p.to_str().expect("a UTF-8 path").to_string();
    run_ok(&["catalog", &path(data), "--out", &path(out)])
}

/// `ngcc-perf report DATA --catalog DATA/catalog --out OUT EXTRA…`.
pub fn report(data: &Path, out: &Path, extra: &[&str]) -> Output {
    let catalog = data.join("catalog");
    let mut args: Vec<&OsStr> = vec![
        "report".as_ref(),
        data.as_os_str(),
        "--catalog".as_ref(),
        catalog.as_os_str(),
        "--out".as_ref(),
        out.as_os_str(),
    ];
    args.extend(extra.iter().map(OsStr::new));
    ngcc(&args)
}

/// `ngcc-perf validate DATA --catalog CATALOG [--pages PAGES]`.
pub fn validate(data: &Path, catalog: &Path, pages: Option<&Path>) -> Output {
    let mut args: Vec<&OsStr> = vec![
        "validate".as_ref(),
        data.as_os_str(),
        "--catalog".as_ref(),
        catalog.as_os_str(),
    ];
    if let Some(pages) = pages {
        args.extend(["--pages".as_ref(), pages.as_os_str()]);
    }
    ngcc(&args)
}

/// `ngcc-perf site DATASETS… --catalog CATALOG --out OUT`.
pub fn site(datasets: &[&Path], catalog: &Path, out: &Path) -> Output {
    let mut args: Vec<&OsStr> = vec!["site".as_ref()];
    args.extend(datasets.iter().map(|d| d.as_os_str()));
    args.extend([
        "--catalog".as_ref(),
        catalog.as_os_str(),
        "--out".as_ref(),
        out.as_os_str(),
    ]);
    ngcc(&args)
}

// ------------------------------------------------------------------ inputs

pub fn manifest_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Where the reference dataset (anchor-arm_1) is: `NGCC_ANCHOR_FIXTURES`, else
/// `shared/fixtures/anchor-arm_1` beside the checkout (where CI has it).
pub fn fixture_path() -> PathBuf {
    std::env::var_os("NGCC_ANCHOR_FIXTURES")
        .map(PathBuf::from)
        .unwrap_or_else(|| manifest_dir().join("../../../shared/fixtures/anchor-arm_1"))
}

/// A test's missing prerequisite: fails the test unless `var=0` says the prerequisite is not
/// required on this machine; then a `SKIPPED` line names what did not run and why, and the
/// caller returns. A test never prints ok for work it did not do unless told so explicitly.
/// CI sets every `NGCC_REQUIRE_*` to 1.
pub fn not_available(var: &str, what: &str) {
    let optional = std::env::var(var).is_ok_and(|v| v == "0");
    assert!(
        optional,
        "{what} (this test needs it; set {var}=0 to let it skip where it is not required)"
    );
    eprintln!("SKIPPED ({var}=0): {what}");
}

/// The reference dataset; missing, see [`not_available`] (`NGCC_REQUIRE_FIXTURE`).
pub fn fixture_dir() -> Option<PathBuf> {
    let dir = fixture_path();
    if dir.join("campaign.json").is_file() {
        return Some(dir);
    }
    not_available(
        "NGCC_REQUIRE_FIXTURE",
        &format!(
            "the reference fixture is not at {} (set NGCC_ANCHOR_FIXTURES)",
            dir.display()
        ),
    );
    None
}

/// The NGCC Round-1 corpus (`NGCC_R1_CORPUS`, else `shared/ngcc-r1` beside the checkout);
/// missing, see [`not_available`] (`NGCC_REQUIRE_CORPUS`).
pub fn corpus_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("NGCC_R1_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| manifest_dir().join("../../../shared/ngcc-r1"));
    if dir.join("packages").is_dir() && dir.join("harness").is_dir() {
        return Some(dir);
    }
    not_available(
        "NGCC_REQUIRE_CORPUS",
        &format!(
            "the NGCC corpus is not at {} (set NGCC_R1_CORPUS)",
            dir.display()
        ),
    );
    None
}

/// The five corpus candidates: (id, package folder, instances).
pub const CORPUS: &[(&str, &str, usize)] = &[
    ("kem-19", "Lore", 8),
    ("kem-23", "Mito", 9),
    ("kex-06", "MAMBA-NIKE", 5),
    ("hash-07", "Dragon", 6),
    ("sign-18", "Origami", 4),
];

/// The fetched PQClean tree; when cargo cannot fetch it, see [`not_available`]
/// (`NGCC_REQUIRE_PQCLEAN`).
pub fn pqclean() -> Option<PathBuf> {
    static TREE: OnceLock<Option<PathBuf>> = OnceLock::new();
    TREE.get_or_init(|| {
        let out = bin().args(["samples", "pqclean"]).output().ok()?;
        if !out.status.success() {
            not_available(
                "NGCC_REQUIRE_PQCLEAN",
                &format!(
                    "PQClean sources unavailable: {}",
                    String::from_utf8_lossy(&out.stderr).trim()
                ),
            );
            return None;
        }
        Some(PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
    })
    .clone()
}

// ------------------------------------------------------------------ files

/// Copies a folder tree; the copies are writable even where the source (the fixture) is
/// read-only.
pub fn copy_tree(from: &Path, to: &Path) {
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

/// Writes a file, creating its folder.
pub fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A folder under target/ (CARGO_TARGET_TMPDIR), emptied first.
pub fn scratch(rel: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(rel);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

pub fn last_line(path: &Path) -> String {
    std::fs::read_to_string(path)
        .expect("log")
        .lines()
        .last()
        .unwrap_or("")
        .to_string()
}

/// Every `Key = value` line with this key, in order (`Key =` alone is an empty value).
pub fn values<'a>(text: &'a str, key: &str) -> Vec<&'a str> {
    let prefix = format!("{key} = ");
    text.lines()
        .filter_map(|l| {
            l.strip_prefix(&prefix)
                .or((l == prefix.trim_end()).then_some(""))
        })
        .collect()
}

// ------------------------------------------------------------------ datasets and runs

pub fn build_file(run: &Path) -> BuildFile {
    read_json(&run.join("build.json")).expect("build.json")
}

pub fn build_entry(run: &Path, key: &str) -> BuildEntry {
    build_file(run)
        .entry(key)
        .unwrap_or_else(|| panic!("no build.json entry {key}"))
}

/// Reads, changes and rewrites a dataset's campaign.json.
pub fn edit_campaign(data: &Path, edit: impl FnOnce(&mut Campaign)) {
    let path = data.join("campaign.json");
    let mut campaign: Campaign = read_json(&path).unwrap();
    edit(&mut campaign);
    write_json(&path, &campaign).unwrap();
}

/// Turns the records of `cands` in a copy of the reference dataset into ours, measured with
/// the TSC at 2.45 GHz: each gets an `ngcc` block with the spread of its trials. With
/// `host_problems` the host was not fixed (and measuring it was allowed); without, it was.
pub fn make_tsc(data: &Path, cands: &[&str], host_problems: &[&str]) {
    let unfixed = !host_problems.is_empty();
    edit_campaign(data, |c| {
        c.tool = Some("ngcc-perf 0.1.0".into());
        c.allow_unfixed_host = unfixed;
        c.counter = Some("tsc".into());
    });
    for cand in cands {
        for e in std::fs::read_dir(data.join("records").join(cand)).unwrap() {
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
                host_fixed: !unfixed,
                host_problems: host_problems.iter().map(|p| p.to_string()).collect(),
                allow_unfixed_host: unfixed,
                spread: ngcc_perf::measure::stats::spread(&per_trial),
                ..Default::default()
            });
            write_json(&path, &rec).unwrap();
        }
    }
}
