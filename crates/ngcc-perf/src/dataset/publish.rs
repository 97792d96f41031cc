//! `ngcc-perf publish`: a run's evidence, with relative paths, as a dataset
//! (reference-harness.md §1.16, improved): everything is staged and checked before anything is
//! written, the dataset is built in a temporary sibling folder and renamed into place, and a
//! destination is only ever replaced if it is empty or a dataset this command wrote.

use super::quarantine;
use crate::journal;
use crate::util::Failure;
use crate::util::fsx::to_json_bytes;
use anyhow::{Context, Result};
use clap::Args;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct PublishArgs {
    /// Run directory written by `ngcc-perf campaign`.
    #[arg(long)]
    pub run: PathBuf,
    /// System id recorded in the dataset (must match campaign.json's system_id if it has one).
    #[arg(long)]
    pub system: String,
    /// Dataset folder to create or replace.
    #[arg(long)]
    pub out: PathBuf,
}

/// Marks a folder as a dataset written by `publish`, which may therefore replace it.
pub const MARKER: &str = ".ngcc-perf-dataset";
const MARKER_TEXT: &str =
    "ngcc-perf dataset: written by `ngcc-perf publish`, which replaces this folder as a whole.\n";
/// Substrings that must not survive in a published file (in a candidate's own text they are
/// withheld, `dataset::quarantine`; anywhere else publish refuses).
const FORBIDDEN: [&str; 4] = ["/home/", "/tmp/", "/root/", "/Users/"];

pub fn run(args: PublishArgs) -> Result<ExitCode> {
    let n = publish(&args.run, &args.system, &args.out)?;
    let journal = if args.run.join(journal::RUN_JOURNAL).is_file() {
        ""
    } else {
        " (the run has no journal: neither has the dataset)"
    };
    crate::util::out!(
        "publish: {n} files for system {} -> {}{journal}",
        args.system,
        args.out.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// The files of a run that belong in a dataset, as sorted relative paths.
fn evidence_files(run: &Path) -> Vec<String> {
    let mut files = Vec::new();
    for top in ["campaign.json", "build.json"] {
        if run.join(top).is_file() {
            files.push(top.to_string());
        }
    }
    let name = |p: &str| p.rsplit('/').next().unwrap_or_default().to_string();
    files.extend(
        super::load::files_under(run, "records")
            .into_iter()
            .filter(|p| p.ends_with(".json")),
    );
    files.extend(
        super::load::files_under(run, "profile")
            .into_iter()
            .filter(|p| {
                let n = name(p);
                p.ends_with(".json") && n.contains("__") && !n.contains("RELINK")
            }),
    );
    files.extend(
        super::load::files_under(run, "memory")
            .into_iter()
            .filter(|p| p.ends_with(".json")),
    );
    files.extend(
        super::load::files_under(run, "ct")
            .into_iter()
            .filter(|p| p.ends_with(".json") && name(p).contains("__")),
    );
    // Count records and the callgrind text each was read from.
    files.extend(
        super::load::files_under(run, super::count::COUNT_DIR)
            .into_iter()
            .filter(|p| {
                let raw = format!(".{}", super::count::RAW_EXT);
                (p.ends_with(".json") || p.ends_with(&raw)) && name(p).contains("__")
            }),
    );
    files.extend(
        super::load::files_under(run, "kat")
            .into_iter()
            .filter(|p| p.ends_with(".log")),
    );
    // katcheck: top level only.
    files.extend(
        super::load::files_under(run, "katcheck")
            .into_iter()
            .filter(|p| p.ends_with(".log") && p.matches('/').count() == 1),
    );
    files
}

fn is_path_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '/')
}

/// Rewrites `prefix/…` to `…` and a bare `prefix` to `.`, but only where `prefix` is a whole
/// path (not part of a longer one), unlike the reference's plain substring replace.
pub fn relativize(text: &str, prefix: &str) -> String {
    let prefix = prefix.trim_end_matches('/');
    if prefix.is_empty() {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find(prefix) {
        let before = match rest[..i].chars().next_back() {
            Some(c) => Some(c),
            None => out.chars().next_back(),
        };
        let after_idx = i + prefix.len();
        let after = rest[after_idx..].chars().next();
        out.push_str(&rest[..i]);
        let starts_path = before.is_none_or(|c| !is_path_char(c));
        match after {
            Some('/') if starts_path => {
                rest = &rest[after_idx + 1..];
            }
            a if starts_path && a.is_none_or(|c| !is_path_char(c)) => {
                out.push('.');
                rest = &rest[after_idx..];
            }
            _ => {
                out.push_str(prefix);
                rest = &rest[after_idx..];
            }
        }
    }
    out.push_str(rest);
    out
}

fn absolute(p: &Path) -> Result<PathBuf> {
    std::fs::canonicalize(p).with_context(|| format!("resolving {}", p.display()))
}

/// Stages every file in memory, refuses on any remaining absolute path, then writes the
/// dataset atomically, with its journal when the run has one. Returns the number of files
/// written.
pub fn publish(run: &Path, system: &str, out: &Path) -> Result<usize> {
    let Staged {
        mut files,
        run_sha256,
    } = stage(run)?;
    for (rel, bytes) in &mut files {
        if rel == "campaign.json" {
            *bytes = with_system_id(&String::from_utf8_lossy(bytes), system)?.into_bytes();
        }
    }
    for line in quarantine_staged(&mut files) {
        crate::util::say!("publish: {line}");
    }
    refuse_absolute(&files)?;
    if let Some(run_sha) = &run_sha256 {
        let text = journal::dataset_text(&files, &|rel| run_sha[rel].clone());
        files.push((journal::DATASET_JOURNAL.to_string(), text.into_bytes()));
    }
    write_dataset(out, &files)?;
    Ok(files.len())
}

/// A run's (or a dataset's) evidence in memory, as `publish` and `merge` write it.
pub(crate) struct Staged {
    /// Relative path and bytes, every path of this machine rewritten relative to the run.
    pub files: Vec<(String, Vec<u8>)>,
    /// Relative path → sha256 of the run file it came from, checked against the input's
    /// journal; `None` when the input has no journal.
    pub run_sha256: Option<BTreeMap<String, String>>,
}

/// The input's journal as (sha256 its file must have now, sha256 of the run file): a run's
/// journal for a run directory, the dataset journal for a dataset (`merge` takes both).
fn input_journal(input: &Path) -> Result<Option<BTreeMap<String, (String, String)>>> {
    let what = |e: anyhow::Error, which: &str| {
        Failure::usage(format!(
            "refusing to publish: the {which} journal is damaged: {e:#}"
        ))
    };
    if input.join(MARKER).is_file() {
        let lines = journal::dataset_hashes(input).map_err(|e| what(e, "dataset"))?;
        return Ok(lines.map(|m| {
            m.into_iter()
                .map(|(rel, l)| (rel, (l.sha256, l.run)))
                .collect()
        }));
    }
    let hashes = journal::run_hashes(input).map_err(|e| what(e, "run"))?;
    Ok(hashes.map(|m| {
        m.into_iter()
            .map(|(rel, sha)| (rel, (sha.clone(), sha)))
            .collect()
    }))
}

/// Every evidence file of `run`, checked against its journal (if any) and rewritten.
pub(crate) fn stage(run: &Path) -> Result<Staged> {
    if !run.join("campaign.json").is_file() {
        return Err(Failure::usage(format!(
            "{} has no campaign.json: not a run directory",
            run.display()
        )));
    }
    let run_abs = absolute(run)?;
    let cwd = std::env::current_dir().ok();
    let mut prefixes: Vec<String> = vec![run_abs.to_string_lossy().into_owned()];
    if run.is_absolute() && run != run_abs {
        prefixes.push(run.to_string_lossy().into_owned());
    }
    if let Some(cwd) = &cwd {
        prefixes.push(cwd.to_string_lossy().into_owned());
    }
    // Records name the harness binary that ran each child (`command`): its folder is this
    // machine's build directory, not evidence (and may well be under /tmp or /root).
    if let Some(dir) = std::env::current_exe()
        .ok()
        .and_then(|e| e.parent().map(Path::to_path_buf))
    {
        prefixes.push(dir.to_string_lossy().into_owned());
    }
    // Longest first, so a run inside the current folder loses its whole prefix.
    prefixes.sort_by_key(|p| std::cmp::Reverse(p.len()));

    let journal = input_journal(run)?;
    let mut files: Vec<(String, Vec<u8>)> = Vec::new();
    let mut run_sha256 = journal.as_ref().map(|_| BTreeMap::new());
    for rel in evidence_files(run) {
        let bytes = std::fs::read(run.join(&rel)).with_context(|| format!("reading {rel}"))?;
        if let Some(j) = &journal {
            let sha = crate::util::sha256_hex(&bytes);
            match j.get(&rel) {
                None => {
                    return Err(Failure::usage(format!(
                        "refusing to publish: {rel} is not in the journal of {} (ngcc-perf did not write it); nothing was written",
                        run.display()
                    )));
                }
                Some((want, _)) if *want != sha => {
                    return Err(Failure::usage(format!(
                        "refusing to publish: {rel} was changed after ngcc-perf wrote it (sha256 {} != journal {}); nothing was written",
                        &sha[..16],
                        &want[..16]
                    )));
                }
                Some((_, from_run)) => {
                    if let Some(m) = run_sha256.as_mut() {
                        m.insert(rel.clone(), from_run.clone());
                    }
                }
            }
        }
        let mut text = String::from_utf8_lossy(&bytes).into_owned();
        for p in &prefixes {
            text = relativize(&text, p);
        }
        files.push((rel, text.into_bytes()));
    }
    Ok(Staged { files, run_sha256 })
}

/// Quarantines host paths in the candidates' own text of every staged file
/// (`dataset::quarantine`): one line per file touched, naming the fields.
pub(crate) fn quarantine_staged(staged: &mut [(String, Vec<u8>)]) -> Vec<String> {
    let mut said = Vec::new();
    // (old, new) sha256 of every file changed: build.json and the records name KAT logs by
    // their hash, which must name the published bytes.
    let mut renamed: Vec<(String, String)> = Vec::new();
    for (rel, bytes) in staged.iter_mut() {
        let done = if rel.ends_with(".json") {
            quarantine::json(bytes, &FORBIDDEN)
        } else if rel.starts_with("kat/") && rel.ends_with(".log") {
            quarantine::kat_log(&String::from_utf8_lossy(bytes), &FORBIDDEN)
                .map(|(t, f)| (t.into_bytes(), f))
        } else {
            None
        };
        if let Some((clean, fields)) = done {
            renamed.push((
                crate::util::sha256_hex(bytes),
                crate::util::sha256_hex(&clean),
            ));
            *bytes = clean;
            said.push(format!(
                "{rel}: a host path in the candidate's own text withheld ({})",
                fields.join("; ")
            ));
        }
    }
    if !renamed.is_empty() {
        for (rel, bytes) in staged.iter_mut().filter(|(r, _)| r.ends_with(".json")) {
            let text = String::from_utf8_lossy(bytes);
            let mut new = text.to_string();
            for (old, sha) in &renamed {
                new = new.replace(old.as_str(), sha);
            }
            if new != text {
                *bytes = new.into_bytes();
                said.push(format!("{rel}: the sha256 of a quarantined file updated"));
            }
        }
    }
    said
}

/// Refuses (nothing written) when a staged file still holds a `/home/`, `/tmp/`, `/root/` or
/// `/Users/` path.
pub(crate) fn refuse_absolute(staged: &[(String, Vec<u8>)]) -> Result<()> {
    for (rel, bytes) in staged {
        let text = String::from_utf8_lossy(bytes);
        if let Some(bad) = FORBIDDEN.iter().find(|f| text.contains(**f)) {
            return Err(Failure::usage(format!(
                "refusing to publish: {rel} still contains an absolute `{bad}` path after rewriting; nothing was written"
            )));
        }
    }
    Ok(())
}

/// campaign.json with `system_id`: kept if it matches, added (first) if absent.
pub(crate) fn with_system_id(text: &str, system: &str) -> Result<String> {
    let value: Value = serde_json::from_str(text)
        .map_err(|e| Failure::usage(format!("campaign.json is not valid JSON: {e}")))?;
    let Value::Object(map) = value else {
        return Err(Failure::usage("campaign.json is not a JSON object"));
    };
    match map.get("system_id").and_then(Value::as_str) {
        Some(id) if id == system => Ok(text.to_string()),
        Some(id) => Err(Failure::usage(format!(
            "campaign.json has system_id `{id}` but --system is `{system}`"
        ))),
        None => {
            let mut with = Map::new();
            with.insert("system_id".into(), Value::from(system));
            with.extend(map.into_iter().filter(|(k, _)| k != "system_id"));
            Ok(String::from_utf8(to_json_bytes(&Value::Object(with))?)?)
        }
    }
}

fn is_empty_dir(p: &Path) -> bool {
    std::fs::read_dir(p).is_ok_and(|mut d| d.next().is_none())
}

/// Writes a dataset folder atomically (built beside it, then renamed), replacing only an empty
/// folder or a dataset ngcc-perf wrote.
pub(crate) fn write_dataset(out: &Path, files: &[(String, Vec<u8>)]) -> Result<()> {
    if out.exists() {
        if !out.is_dir() {
            return Err(Failure::usage(format!(
                "{} exists and is not a folder; nothing was written",
                out.display()
            )));
        }
        if !is_empty_dir(out) && !out.join(MARKER).is_file() {
            return Err(Failure::usage(format!(
                "refusing to replace {}: it is not empty and is not a dataset written by ngcc-perf publish (no {MARKER}); nothing was written",
                out.display()
            )));
        }
    }
    let parent = out
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
    let name = out
        .file_name()
        .context("--out has no folder name")?
        .to_string_lossy()
        .into_owned();
    let pid = std::process::id();
    let tmp = parent.join(format!(".{name}.publish-{pid}.tmp"));
    let old = parent.join(format!(".{name}.replaced-{pid}.tmp"));
    if tmp.exists() {
        std::fs::remove_dir_all(&tmp).with_context(|| format!("clearing {}", tmp.display()))?;
    }
    let staged = (|| -> Result<()> {
        for (rel, bytes) in files {
            let path = tmp.join(rel);
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir)
                    .with_context(|| format!("creating {}", dir.display()))?;
            }
            std::fs::write(&path, bytes).with_context(|| format!("writing {}", path.display()))?;
        }
        std::fs::write(tmp.join(MARKER), MARKER_TEXT)?;
        Ok(())
    })();
    if let Err(e) = staged {
        let _ = std::fs::remove_dir_all(&tmp);
        return Err(e);
    }
    if out.exists() {
        std::fs::rename(out, &old)
            .with_context(|| format!("moving the previous {} aside", out.display()))?;
    }
    if let Err(e) = std::fs::rename(&tmp, out) {
        // Put the previous dataset back so a failure leaves things as they were.
        if old.exists() {
            let _ = std::fs::rename(&old, out);
        }
        let _ = std::fs::remove_dir_all(&tmp);
        return Err(e).with_context(|| format!("renaming the new dataset onto {}", out.display()));
    }
    if old.exists() {
        // Only an empty folder or our own dataset ever gets here (checked above).
        std::fs::remove_dir_all(&old)
            .with_context(|| format!("removing the previous dataset {}", old.display()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relativize_only_whole_paths() {
        let p = "/work/run";
        assert_eq!(relativize("\"/work/run/kem/lib.so\"", p), "\"kem/lib.so\"");
        assert_eq!(relativize("cd /work/run && x", p), "cd . && x");
        assert_eq!(relativize("\"/work/run\"", p), "\".\"");
        assert_eq!(relativize("/work/runner/x", p), "/work/runner/x");
        assert_eq!(relativize("/x/work/run/y", p), "/x/work/run/y");
        assert_eq!(relativize("a /work/run/b /work/run/c", p), "a b c");
        assert_eq!(relativize("no path here", p), "no path here");
    }

    #[test]
    fn system_id_is_added_or_checked() {
        let t = with_system_id("{\n \"started_utc\": \"x\"\n}\n", "my_1").unwrap();
        assert!(
            t.starts_with("{\n \"system_id\": \"my_1\",\n \"started_utc\""),
            "{t}"
        );
        let same = "{\"system_id\": \"my_1\"}";
        assert_eq!(with_system_id(same, "my_1").unwrap(), same);
        let err = with_system_id(same, "other").unwrap_err().to_string();
        assert!(err.contains("my_1") && err.contains("other"), "{err}");
    }
}
