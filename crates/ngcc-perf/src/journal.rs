//! Tamper evidence. The orchestrator appends the sha256 of every file it writes in a run
//! directory (build.json, campaign.json, KAT logs and text, calibrations, setups, records,
//! profiles…) to `RUN/journal.txt`, which no jail can see. `publish` refuses files that
//! changed since they were journaled and carries a dataset journal (the hash of each
//! published file, and of the run file it came from); `validate` names every dataset file
//! that differs from it.
//!
//! Each run line is chained: `<sha256> <bytes> <path> <chain>`, where `chain` is the sha256
//! of the previous line's chain and this line's first three fields, so an edited or dropped
//! line breaks every chain after it. Nothing here stops someone who rewrites the files and
//! the whole journal consistently: that needs a key the machine does not hold.

use crate::util::sha256_hex;
use anyhow::{Context, Result, bail};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The run's journal, at the top of the run directory.
pub const RUN_JOURNAL: &str = "journal.txt";
/// The dataset's journal.
pub const DATASET_JOURNAL: &str = "journal.txt";
const HEADER: &str = "ngcc-perf journal 1";
const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

struct Open {
    root: PathBuf,
    chain: String,
}

/// The run journal this process has open. Process state, not a setting: it stands for the
/// run directory this process has locked (one per process) and carries the chain each write
/// advances, and it is reached from `util::atomic_write`, which no caller passes anything.
static OPEN: Mutex<Option<Open>> = Mutex::new(None);

/// Starts journaling writes under `root` (the run directory, already locked by us).
pub fn open(root: &Path) -> Result<()> {
    let path = root.join(RUN_JOURNAL);
    let chain = match std::fs::read_to_string(&path) {
        Ok(text) => {
            let lines = parse_run(&text).with_context(|| format!("{}", path.display()))?;
            lines
                .last()
                .map_or(GENESIS.to_string(), |l| l.chain.clone())
        }
        Err(_) => {
            std::fs::write(&path, format!("{HEADER}\n"))
                .with_context(|| format!("creating {}", path.display()))?;
            GENESIS.to_string()
        }
    };
    *OPEN.lock().unwrap_or_else(|e| e.into_inner()) = Some(Open {
        root: root.to_path_buf(),
        chain,
    });
    crate::util::fsx::set_write_hook(on_write);
    Ok(())
}

fn chain_of(prev: &str, sha: &str, bytes: u64, rel: &str) -> String {
    sha256_hex(format!("{prev} {sha} {bytes} {rel}").as_bytes())
}

/// Called by `util::atomic_write` after every successful write.
fn on_write(path: &Path, bytes: &[u8]) {
    let mut guard = OPEN.lock().unwrap_or_else(|e| e.into_inner());
    let Some(open) = guard.as_mut() else {
        return;
    };
    let Ok(rel) = path.strip_prefix(&open.root) else {
        return;
    };
    let rel = rel.to_string_lossy().replace(' ', "%20");
    // Children's scratch folders are theirs, not evidence.
    if rel.starts_with("scratch/") || rel == RUN_JOURNAL {
        return;
    }
    let sha = sha256_hex(bytes);
    let chain = chain_of(&open.chain, &sha, bytes.len() as u64, &rel);
    let line = format!("{sha} {} {rel} {chain}\n", bytes.len());
    let appended = std::fs::OpenOptions::new()
        .append(true)
        .open(open.root.join(RUN_JOURNAL))
        .and_then(|mut f| f.write_all(line.as_bytes()));
    if appended.is_ok() {
        open.chain = chain;
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct RunLine {
    pub sha256: String,
    pub bytes: u64,
    pub path: String,
    pub chain: String,
}

/// Parses and checks a run journal (header, field count, every chain link).
pub fn parse_run(text: &str) -> Result<Vec<RunLine>> {
    let mut lines = text.lines();
    if lines.next() != Some(HEADER) {
        bail!("not an ngcc-perf journal");
    }
    let mut prev = GENESIS.to_string();
    let mut out = Vec::new();
    for (n, l) in lines.enumerate() {
        let f: Vec<&str> = l.split(' ').collect();
        let [sha, bytes, path, chain] = f[..] else {
            bail!("line {}: expected `<sha256> <bytes> <path> <chain>`", n + 2);
        };
        let bytes: u64 = bytes
            .parse()
            .with_context(|| format!("line {}: bad byte count", n + 2))?;
        if chain_of(&prev, sha, bytes, path) != chain {
            bail!(
                "line {} ({path}): the chain is broken (a line was edited, added or removed)",
                n + 2
            );
        }
        prev = chain.to_string();
        out.push(RunLine {
            sha256: sha.into(),
            bytes,
            path: path.replace("%20", " "),
            chain: chain.into(),
        });
    }
    Ok(out)
}

/// The newest sha256 journaled per path.
pub fn latest(lines: &[RunLine]) -> BTreeMap<String, String> {
    lines
        .iter()
        .map(|l| (l.path.clone(), l.sha256.clone()))
        .collect()
}

/// The run journal of `run`, if it has one: path → newest sha256.
pub fn run_hashes(run: &Path) -> Result<Option<BTreeMap<String, String>>> {
    let path = run.join(RUN_JOURNAL);
    match std::fs::read_to_string(&path) {
        Ok(text) => Ok(Some(latest(
            &parse_run(&text).with_context(|| path.display().to_string())?,
        ))),
        Err(_) => Ok(None),
    }
}

/// One line of a dataset journal: the published file's sha256 and the sha256 of the run
/// file it came from (`merged:<a>+<b>…` for a file `merge` made from several inputs' files).
#[derive(Debug, Clone, PartialEq)]
pub struct DatasetLine {
    pub sha256: String,
    pub run: String,
}

/// The dataset journal of `files` (relative path, published bytes); `run_of` gives each
/// file's run hash.
pub fn dataset_text(files: &[(String, Vec<u8>)], run_of: &dyn Fn(&str) -> String) -> String {
    let mut text = format!("{HEADER} (dataset)\n");
    for (rel, bytes) in files {
        text.push_str(&format!(
            "{} {} run={}\n",
            sha256_hex(bytes),
            rel.replace(' ', "%20"),
            run_of(rel)
        ));
    }
    text
}

/// Parses a dataset journal: path → its line.
pub fn parse_dataset(text: &str) -> Result<BTreeMap<String, DatasetLine>> {
    let mut lines = text.lines();
    if lines.next() != Some(&format!("{HEADER} (dataset)")[..]) {
        bail!("not an ngcc-perf dataset journal");
    }
    let mut out = BTreeMap::new();
    for (n, l) in lines.enumerate() {
        let f: Vec<&str> = l.split(' ').collect();
        let [sha, path, run] = f[..] else {
            bail!("line {}: expected `<sha256> <path> run=<sha256>`", n + 2);
        };
        let Some(run) = run.strip_prefix("run=").filter(|_| sha.len() == 64) else {
            bail!("line {}: malformed", n + 2);
        };
        out.insert(
            path.replace("%20", " "),
            DatasetLine {
                sha256: sha.to_string(),
                run: run.to_string(),
            },
        );
    }
    Ok(out)
}

/// The dataset journal of the dataset `root`, if it has one.
pub fn dataset_hashes(root: &Path) -> Result<Option<BTreeMap<String, DatasetLine>>> {
    let path = root.join(DATASET_JOURNAL);
    match std::fs::read_to_string(&path) {
        Ok(text) => Ok(Some(
            parse_dataset(&text).with_context(|| path.display().to_string())?,
        )),
        Err(_) => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_edited_line_breaks_the_chain() {
        let mut text = format!("{HEADER}\n");
        let mut prev = GENESIS.to_string();
        for (sha, rel) in [
            ("a".repeat(64), "build.json"),
            ("b".repeat(64), "kat/x.log"),
        ] {
            let chain = chain_of(&prev, &sha, 10, rel);
            text.push_str(&format!("{sha} 10 {rel} {chain}\n"));
            prev = chain;
        }
        let lines = parse_run(&text).unwrap();
        assert_eq!(latest(&lines)["kat/x.log"], "b".repeat(64));
        let forged = text.replace(&"a".repeat(64), &"c".repeat(64));
        let e = parse_run(&forged).unwrap_err().to_string();
        assert!(
            e.contains("line 2 (build.json): the chain is broken"),
            "{e}"
        );
    }
}
