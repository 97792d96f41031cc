//! The run directory: where every phase reads and writes, with one lock per run.

use crate::dataset::schema::{BuildEntry, BuildFile, Campaign};
use crate::util::{read_json, write_json};
use anyhow::{Context, Result, bail};
use std::fs::File;
use std::path::{Path, PathBuf};

pub struct RunDir {
    pub root: PathBuf,
    /// `None` for a read-only view (reports over a run, possibly one still running).
    _lock: Option<File>,
}

impl RunDir {
    /// Creates (or reopens) a run directory and takes its exclusive lock.
    pub fn open(root: &Path) -> Result<RunDir> {
        std::fs::create_dir_all(root)
            .with_context(|| format!("creating run directory {}", root.display()))?;
        let root = std::path::absolute(root)?;
        let lock_path = root.join(".ngcc-perf.lock");
        let lock = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .with_context(|| format!("{}: run directory is not writable", root.display()))?;
        // SAFETY: flock on an fd we own; released when the file is closed.
        let rc = unsafe {
            libc::flock(
                std::os::fd::AsRawFd::as_raw_fd(&lock),
                libc::LOCK_EX | libc::LOCK_NB,
            )
        };
        if rc != 0 {
            bail!(
                "{}: another ngcc-perf campaign is using this run directory",
                root.display()
            );
        }
        // We hold the lock, so any temporary file is left over from a killed campaign.
        let stale = sweep_tmp(&root);
        if stale > 0 {
            crate::util::say!(
                "run: removed {stale} temporary file(s) left by an interrupted campaign"
            );
        }
        crate::journal::open(&root)?;
        Ok(RunDir {
            root,
            _lock: Some(lock),
        })
    }

    /// An existing run directory, read without its lock (a campaign may be writing it).
    pub fn read_only(root: &Path) -> Result<RunDir> {
        if !root.is_dir() {
            bail!("{}: no such run directory", root.display());
        }
        Ok(RunDir {
            root: std::path::absolute(root)?,
            _lock: None,
        })
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    pub fn build_json(&self) -> PathBuf {
        self.root.join("build.json")
    }

    pub fn load_build(&self) -> Result<BuildFile> {
        let path = self.build_json();
        if path.exists() {
            read_json(&path)
        } else {
            Ok(BuildFile::default())
        }
    }

    pub fn load_campaign(&self) -> Result<Campaign> {
        let path = self.root.join("campaign.json");
        if path.exists() {
            read_json(&path)
        } else {
            Ok(Campaign::default())
        }
    }

    pub fn save_campaign(&self, c: &Campaign) -> Result<()> {
        write_json(&self.root.join("campaign.json"), c)
    }

    /// `kat/<cand>/<label>.log`
    pub fn kat_log(&self, cand: &str, label: &str) -> PathBuf {
        self.root
            .join("kat")
            .join(cand)
            .join(format!("{label}.log"))
    }

    /// `katgen/<cand>/<label>/`
    pub fn katgen_dir(&self, cand: &str, label: &str) -> PathBuf {
        self.root.join("katgen").join(cand).join(label)
    }

    /// `calibrate/<cand>/<label>__<op_key>.json`
    pub fn calibration_path(&self, cand: &str, label: &str, op_key: &str) -> PathBuf {
        self.root
            .join("calibrate")
            .join(cand)
            .join(format!("{label}__{op_key}.json"))
    }

    /// `records/<cand>/<label>__<op_key>.json`
    pub fn record_path(&self, cand: &str, label: &str, op_key: &str) -> PathBuf {
        self.root
            .join("records")
            .join(cand)
            .join(format!("{label}__{op_key}.json"))
    }

    /// `setup/<cand>/<label>__<op_key>/`: the saved setup every trial process loads.
    pub fn setup_dir(&self, cand: &str, label: &str, op_key: &str) -> PathBuf {
        self.root
            .join("setup")
            .join(cand)
            .join(format!("{label}__{op_key}"))
    }

    /// `profile/<cand>/<label>__<op_key>.json`
    pub fn profile_path(&self, cand: &str, label: &str, op_key: &str) -> PathBuf {
        self.root
            .join("profile")
            .join(cand)
            .join(format!("{label}__{op_key}.json"))
    }

    /// `memory/<cand>/<label>.json`: the memory phase's record of one instance.
    pub fn memory_path(&self, cand: &str, label: &str) -> PathBuf {
        self.root
            .join("memory")
            .join(cand)
            .join(format!("{label}.json"))
    }

    /// `ct/<cand>/<label>__<op>.json`: constant-time evidence of one operation.
    pub fn ct_path(&self, cand: &str, label: &str, op_key: &str) -> PathBuf {
        self.root
            .join("ct")
            .join(cand)
            .join(format!("{label}__{op_key}.json"))
    }

    /// `count/<cand>/<label>__<op>.json`: instruction counts of one operation; the raw
    /// callgrind text beside it has the extension `callgrind`.
    pub fn count_path(&self, cand: &str, label: &str, op_key: &str, ext: &str) -> PathBuf {
        self.root
            .join(crate::dataset::count::COUNT_DIR)
            .join(cand)
            .join(format!("{label}__{op_key}.{ext}"))
    }

    /// `ct-build/<cand>/<label>/`: the `-g` build of the taint run (run-internal).
    pub fn ct_build_dir(&self, cand: &str, label: &str) -> PathBuf {
        self.root.join("ct-build").join(cand).join(label)
    }

    /// `profile/<cand>/<label>__RELINK_FAILED.json` (run-internal, never published).
    pub fn relink_failed_path(&self, cand: &str, label: &str) -> PathBuf {
        self.profile_path(cand, label, "RELINK_FAILED")
    }

    /// Scratch folder for one child process.
    pub fn scratch(&self, name: &str) -> Result<PathBuf> {
        let dir = self.root.join("scratch").join(name);
        std::fs::create_dir_all(&dir)?;
        Ok(dir)
    }

    /// `RUN/last/<trial>/`: a trial's buffers after its last timed iteration.
    pub fn last_outputs_dir(&self, trial: &str) -> PathBuf {
        self.root.join("last").join(trial)
    }

    /// Path relative to the run directory, as recorded in JSON.
    pub fn rel(&self, path: &Path) -> String {
        path.strip_prefix(&self.root)
            .unwrap_or(path)
            .to_string_lossy()
            .to_string()
    }
}

/// Whether a file name is a write a killed process left unfinished: `.<name>.<…>.tmp`
/// (atomic writes) or `lib*.so.<pid>.tmp` (links). A resumed run removes them.
pub fn is_unfinished_write(name: &str) -> bool {
    name.ends_with(".tmp") && (name.starts_with('.') || name.contains(".so."))
}

/// Removes unfinished writes ([`is_unfinished_write`]) below `dir`, except in children's
/// scratch folders; returns how many.
fn sweep_tmp(dir: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    let mut n = 0;
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        match e.file_type() {
            Ok(t) if t.is_dir() && name != "scratch" => n += sweep_tmp(&e.path()),
            Ok(t)
                if t.is_file()
                    && is_unfinished_write(&name)
                    && std::fs::remove_file(e.path()).is_ok() =>
            {
                n += 1
            }
            _ => {}
        }
    }
    n
}

/// Updates one build.json entry under the run's in-process lock and saves atomically.
pub struct BuildState {
    file: std::sync::Mutex<BuildFile>,
    path: PathBuf,
}

impl BuildState {
    pub fn load(run: &RunDir) -> Result<BuildState> {
        Ok(BuildState {
            file: std::sync::Mutex::new(run.load_build()?),
            path: run.build_json(),
        })
    }

    pub fn get(&self, key: &str) -> Option<BuildEntry> {
        self.file.lock().expect("build state lock").entry(key)
    }

    pub fn put(&self, entry: &BuildEntry) -> Result<()> {
        let mut f = self.file.lock().expect("build state lock");
        f.set(entry);
        write_json(&self.path, &*f)
    }

    pub fn snapshot(&self) -> BuildFile {
        self.file.lock().expect("build state lock").clone()
    }
}

#[cfg(test)]
mod tests {
    use super::is_unfinished_write;

    #[test]
    fn unfinished_writes_are_the_temporary_names_only() {
        // The names atomic_write and the linker step use, as a killed process leaves them.
        assert!(is_unfinished_write(".SM3-256__hash_8192.json.NUNXg4.tmp"));
        assert!(is_unfinished_write("libML-KEM-512.so.4242.tmp"));
        assert!(!is_unfinished_write("SM3-256__hash_8192.json"));
        assert!(!is_unfinished_write("notes.tmp"));
        assert!(!is_unfinished_write(".hidden.json"));
    }
}
