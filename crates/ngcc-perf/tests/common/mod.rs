//! Helpers shared by the integration tests: run the binary, read a run's build.json.
#![allow(dead_code)]

use ngcc_perf::dataset::schema::{BuildEntry, BuildFile};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_ngcc-perf"))
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

/// The fetched PQClean tree, or None (and a SKIPPED line) when cargo cannot fetch it.
pub fn pqclean() -> Option<PathBuf> {
    let out = bin().args(["samples", "pqclean"]).output().ok()?;
    if !out.status.success() {
        eprintln!(
            "SKIPPED: PQClean sources unavailable: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
        return None;
    }
    Some(PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
}

pub fn build_entry(run: &Path, key: &str) -> BuildEntry {
    let b: BuildFile = ngcc_perf::util::read_json(&run.join("build.json")).expect("build.json");
    b.entry(key)
        .unwrap_or_else(|| panic!("no build.json entry {key}"))
}

pub fn last_line(path: &Path) -> String {
    std::fs::read_to_string(path)
        .expect("log")
        .lines()
        .last()
        .unwrap_or("")
        .to_string()
}

pub fn manifest_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}
