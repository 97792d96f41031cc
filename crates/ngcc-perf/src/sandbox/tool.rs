//! Jailed tool runs: a host program (gcc, make, cmake, sh, valgrind…) run over candidate
//! input in the same jail as candidate code (`jail`: user, PID, mount, network, IPC and UTS
//! namespaces, Landlock, seccomp, rlimits, the keeper's report), with a cleared environment,
//! a fresh scratch folder as the only writable place, and bounds on wall time, CPU, memory,
//! processes, output and scratch use. Anything that reads candidate files (a Makefile, a
//! `.S` with `.incbin`, a `#include`) must go through here: outside the jail it would read
//! with the orchestrator's rights.
//!
//! Every path keeps its host name inside the jail (the scratch folder, the `read_only`
//! inputs, `/usr`), so a caller builds its command lines as it would outside.
//!
//! `trace_exec` records every exec of the tool's tree from the jail's proxy with ptrace
//! (`jail::tool_exec`): a PATH recorder would miss a compiler called by absolute path.

use super::jail::{self, ToolLimits, ToolRun};
use super::{Exit, Spec};
use crate::dataset::schema::{Containment, Layer};
use std::ffi::OsString;
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};
use std::time::Duration;

pub use super::jail::ExecRecord;

/// Bounds of one tool run. Per-process limits are rlimits of every process of the tree;
/// `wall_s` and the scratch bounds hold for the whole run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ToolBounds {
    pub wall_s: f64,
    pub cpu_s: u64,
    pub address_space_mib: u64,
    pub nproc: u64,
    pub file_size_mib: u64,
    /// Bytes of stdout and of stderr kept each.
    pub output_cap: usize,
    /// Bytes and entries the scratch folder may hold, copy-ins included: the size and
    /// inode bound of its tmpfs.
    pub scratch_bytes: u64,
    pub scratch_inodes: u64,
    /// Memory of the whole run: every process and the scratch's pages together (a memory
    /// control group where one can be made; see `layers`).
    pub memory_mib: u64,
}

impl Default for ToolBounds {
    /// Generous for one compile or one `make` of a submission; tight enough that a runaway
    /// tool cannot fill the disk or the memory.
    fn default() -> Self {
        ToolBounds {
            wall_s: 600.0,
            cpu_s: 600,
            address_space_mib: 4096,
            nproc: 64,
            file_size_mib: 512,
            output_cap: 1 << 20,
            scratch_bytes: 2 << 30,
            scratch_inodes: 100_000,
            memory_mib: 8192,
        }
    }
}

#[derive(Debug, Clone, Default)]
pub struct ToolJob {
    /// For logs and problems.
    pub label: String,
    /// Absolute, resolved by the caller (e.g. /usr/bin/cmake).
    pub program: PathBuf,
    pub args: Vec<OsString>,
    /// Added to the cleared environment (PATH=/usr/bin:/bin, HOME=<scratch>, LANG=C,
    /// TMPDIR=<scratch>/tmp); a name given here replaces the default.
    pub env: Vec<(String, String)>,
    /// Working directory, relative to the scratch root (created if missing).
    pub cwd: PathBuf,
    /// Extra visible paths, read-only (and executable), at their host paths.
    pub read_only: Vec<PathBuf>,
    /// (host source, destination relative to scratch): regular files and folders copied in
    /// before the run; symlinks and special files are skipped, never followed.
    pub copy_in: Vec<(PathBuf, PathBuf)>,
    pub bounds: ToolBounds,
    /// Record every execve of the process tree.
    pub trace_exec: bool,
    /// Folder the scratch folder is created in (default: the system temp folder). Put it on
    /// the file system the outputs go to, so they can be renamed there.
    pub scratch_in: Option<PathBuf>,
    /// How its jail is built (the operator's choice, or `bench jail`'s variant).
    pub jail: jail::JailOptions,
}

/// A run's scratch folder (canonical path); removed on drop unless [`Scratch::keep`] was called.
#[derive(Debug)]
pub struct Scratch {
    dir: Option<tempfile::TempDir>,
    path: PathBuf,
}

impl Scratch {
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Leaves the folder on disk and returns its path.
    pub fn keep(mut self) -> PathBuf {
        if let Some(d) = self.dir.take() {
            let _ = d.keep();
        }
        self.path.clone()
    }
}

#[derive(Debug)]
pub struct ToolOutcome {
    pub exit: Exit,
    /// Capped at `bounds.output_cap` (a note says how much was dropped).
    pub stdout: String,
    pub stderr: String,
    /// Empty unless `trace_exec`.
    pub execs: Vec<ExecRecord>,
    pub scratch: Scratch,
    /// The layers that were in force (the same record candidate jobs get).
    pub layers: Containment,
    /// The per-process limits as the tool applied them.
    pub limits: String,
    pub wall_s: f64,
    /// CPU time of the whole tree (the keeper's wait4).
    pub cpu_s: f64,
    /// The run filled its scratch (writes failed) or left entries that were not copied back.
    pub scratch_note: Option<String>,
    /// A whole-run bound (memory, processes) the run ran into.
    pub bound_hit: Option<String>,
}

impl ToolOutcome {
    pub fn success(&self) -> bool {
        self.exit == Exit::Code(0)
    }

    /// One line for a failed run: how it ended.
    pub fn failure_text(&self) -> Option<String> {
        match &self.exit {
            Exit::Code(0) => None,
            Exit::Code(c) => Some(format!("exited with status {c}")),
            Exit::Signal(s) => Some(match &self.bound_hit {
                Some(b) => format!("killed by signal {s} ({}): {b}", super::signal_name(*s)),
                None => format!("killed by signal {s} ({})", super::signal_name(*s)),
            }),
            Exit::Timeout => Some("exceeded its wall-time bound and was killed".into()),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    /// The jail could not be built; nothing ran.
    #[error("{label}: the jail could not be set up: {why}")]
    JailUnavailable { label: String, why: String },
    /// The jail was built but the tool could not be started.
    #[error("{label}: the tool could not be started: {why}")]
    Start { label: String, why: String },
    #[error("{label}: setting up the scratch folder: {source}")]
    Setup {
        label: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{label}: copying {path} in: {why:#}")]
    CopyIn {
        label: String,
        path: PathBuf,
        why: anyhow::Error,
    },
    /// The run left more in its scratch folder than its bounds allow.
    #[error("{label}: {why}")]
    Bounds { label: String, why: String },
    #[error("{label}: {why}")]
    Invalid { label: String, why: String },
}

/// What a folder holds: allocated bytes (a sparse file counts what it really uses) and
/// entries. Links are counted, never followed; the walk stops past `limit` entries.
fn usage(dir: &Path, limit: u64) -> (u64, u64) {
    let (mut bytes, mut inodes) = (0u64, 0u64);
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            inodes += 1;
            if inodes > limit {
                return (bytes, inodes);
            }
            if let Ok(m) = e.path().symlink_metadata() {
                bytes += m.blocks() * 512;
                if m.is_dir() {
                    stack.push(e.path());
                }
            }
        }
    }
    (bytes, inodes)
}

/// Copies `src` to `dst` without following links, counting into `budget` (bytes, entries).
fn copy_tree(src: &Path, dst: &Path, budget: &mut (u64, u64)) -> anyhow::Result<()> {
    use anyhow::Context;
    let meta = src
        .symlink_metadata()
        .with_context(|| src.display().to_string())?;
    let take = |budget: &mut (u64, u64), bytes: u64| -> anyhow::Result<()> {
        if budget.1 == 0 || budget.0 < bytes {
            anyhow::bail!("more than the scratch folder may hold");
        }
        budget.0 -= bytes;
        budget.1 -= 1;
        Ok(())
    };
    if meta.is_dir() {
        take(budget, 0)?;
        std::fs::create_dir_all(dst).with_context(|| dst.display().to_string())?;
        let mut names: Vec<_> = std::fs::read_dir(src)
            .with_context(|| src.display().to_string())?
            .flatten()
            .map(|e| e.file_name())
            .collect();
        names.sort();
        for n in names {
            copy_tree(&src.join(&n), &dst.join(&n), budget)?;
        }
    } else if meta.is_file() {
        take(budget, meta.len())?;
        use std::os::unix::fs::OpenOptionsExt;
        let mut from = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
            .open(src)
            .with_context(|| src.display().to_string())?;
        if let Some(parent) = dst.parent() {
            std::fs::create_dir_all(parent).with_context(|| dst.display().to_string())?;
        }
        let mut to = std::fs::File::create(dst).with_context(|| dst.display().to_string())?;
        // At most the size lstat saw: a file growing meanwhile is cut there.
        std::io::copy(&mut std::io::Read::take(&mut from, meta.len()), &mut to)
            .with_context(|| src.display().to_string())?;
        let mode = meta.mode() & 0o755;
        let _ = std::fs::set_permissions(dst, std::os::unix::fs::PermissionsExt::from_mode(mode));
    }
    // Symlinks, devices, sockets, FIFOs: never followed, never copied.
    Ok(())
}

/// A relative path with no `..`, or why not.
fn plain_relative(p: &Path) -> bool {
    p.components()
        .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
}

/// Runs `job.program` in a jail over a fresh scratch folder and waits for it.
pub fn run_tool(job: &ToolJob) -> Result<ToolOutcome, ToolError> {
    let label = job.label.clone();
    let invalid = |why: String| ToolError::Invalid {
        label: label.clone(),
        why,
    };
    if !job.program.is_absolute() {
        return Err(invalid(format!(
            "program {} is not an absolute path",
            job.program.display()
        )));
    }
    if !plain_relative(&job.cwd) {
        return Err(invalid(format!(
            "working directory {} is not inside the scratch folder",
            job.cwd.display()
        )));
    }
    let setup = |source: std::io::Error| ToolError::Setup {
        label: label.clone(),
        source,
    };
    let parent = job.scratch_in.clone().unwrap_or_else(std::env::temp_dir);
    std::fs::create_dir_all(&parent).map_err(setup)?;
    let dir = tempfile::Builder::new()
        .prefix("ngcc-tool-")
        .tempdir_in(&parent)
        .map_err(setup)?;
    let path = std::fs::canonicalize(dir.path()).map_err(setup)?;
    let scratch = Scratch {
        dir: Some(dir),
        path: path.clone(),
    };
    std::fs::create_dir_all(path.join("tmp")).map_err(setup)?;
    let cwd = path.join(&job.cwd);
    std::fs::create_dir_all(&cwd).map_err(setup)?;
    let b = job.bounds;
    let mut budget = (b.scratch_bytes, b.scratch_inodes.saturating_sub(2));
    for (src, dst) in &job.copy_in {
        if !plain_relative(dst) {
            return Err(invalid(format!(
                "copy-in destination {} is not inside the scratch folder",
                dst.display()
            )));
        }
        copy_tree(src, &path.join(dst), &mut budget).map_err(|why| ToolError::CopyIn {
            label: label.clone(),
            path: src.clone(),
            why,
        })?;
    }
    let mut env = jail::tool_exec::base_env(&path);
    for (k, v) in &job.env {
        env.retain(|(name, _)| name != k);
        env.push((k.clone(), v.clone()));
    }
    let args = job
        .args
        .iter()
        .map(|a| {
            a.to_str()
                .map(str::to_string)
                .ok_or_else(|| invalid(format!("argument {a:?} is not UTF-8")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let run = ToolRun {
        program: job.program.clone(),
        args,
        env,
        cwd,
        read_only: job.read_only.clone(),
        limits: ToolLimits {
            as_mib: b.address_space_mib,
            cpu_s: b.cpu_s,
            fsize_mib: b.file_size_mib,
            nproc: b.nproc,
            nofile: 1024,
        },
        trace: job.trace_exec,
    };
    let order = jail::Order {
        nonce: jail::nonce(),
        job: None,
        scratch: path.clone(),
        off: job.jail.off.clone(),
        tool: None,
        tool_run: Some(run),
        bounds: jail::JobBounds {
            scratch: jail::scratchfs::ScratchBounds {
                bytes: b.scratch_bytes,
                inodes: b.scratch_inodes,
            },
            memory_bytes: b.memory_mib << 20,
            pids: b.nproc,
        },
    };
    let spec = Spec {
        workdir: path.clone(),
        timeout: Duration::from_secs_f64(b.wall_s.max(0.001)),
    };
    let (outcome, execs) = super::launch(&spec, &order, &|_| false, b.output_cap).map_err(|e| {
        ToolError::JailUnavailable {
            label: label.clone(),
            why: format!("{e:#}"),
        }
    })?;
    if let Some(why) = outcome.jail_error.clone() {
        let started = outcome.observed.worker_exit.is_some();
        return Err(if outcome.exec_failed || started {
            ToolError::Start { label, why }
        } else {
            ToolError::JailUnavailable { label, why }
        });
    }
    // Without a tmpfs (no mount namespace) the bound is checked after the run.
    let tmpfs = outcome.observed.containment.has(Layer::ScratchTmpfs);
    let (bytes, inodes) = if tmpfs {
        (0, 0)
    } else {
        usage(&path, b.scratch_inodes)
    };
    if inodes > b.scratch_inodes || bytes > b.scratch_bytes {
        return Err(ToolError::Bounds {
            label,
            why: format!(
                "the scratch folder holds more than its bound ({} MiB, {} entries)",
                b.scratch_bytes >> 20,
                b.scratch_inodes
            ),
        });
    }
    let limits = outcome
        .sandbox
        .as_deref()
        .and_then(|s| s.split("; jail: ").next())
        .unwrap_or_default()
        .to_string();
    Ok(ToolOutcome {
        exit: outcome.exit,
        stdout: outcome.stdout,
        stderr: outcome.stderr,
        execs,
        layers: outcome.observed.containment.clone(),
        limits,
        wall_s: outcome.wall_s,
        cpu_s: outcome.observed.tree_usage.cpu_s(),
        scratch_note: outcome.scratch_note,
        bound_hit: outcome.bound_hit,
        scratch,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The copy-in errors read as they did when they were strings: the path, then the
    /// system's error; a full scratch says so.
    #[test]
    fn a_failed_copy_in_names_its_path_and_cause() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing");
        let e = ToolError::CopyIn {
            label: "cc".into(),
            path: missing.clone(),
            why: copy_tree(&missing, &dir.path().join("to"), &mut (1 << 20, 10)).unwrap_err(),
        };
        let m = missing.display();
        assert_eq!(
            e.to_string(),
            format!("cc: copying {m} in: {m}: No such file or directory (os error 2)")
        );
        std::fs::write(dir.path().join("big"), [0u8; 100]).unwrap();
        let full = copy_tree(
            &dir.path().join("big"),
            &dir.path().join("to"),
            &mut (10, 10),
        );
        assert_eq!(
            format!("{:#}", full.unwrap_err()),
            "more than the scratch folder may hold"
        );
    }
}
