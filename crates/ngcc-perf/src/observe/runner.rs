//! The one thing build observation needs from the jail: run a host program over a copy of
//! package files and say what it did. A trait, so the observation logic (trace and codemodel
//! reading) is tested on recorded runs and the jail stays the only way anything runs.

use crate::sandbox::tool::ToolError;
use std::path::{Path, PathBuf};

/// One run of a build tool over a copy of package files.
#[derive(Clone, Debug, Default)]
pub struct RunJob {
    pub label: String,
    /// Absolute (`/usr/bin/make`).
    pub program: PathBuf,
    pub args: Vec<String>,
    /// Working folder relative to the scratch root.
    pub cwd: PathBuf,
    /// (host folder, destination relative to scratch): a writable copy; the original is
    /// never written.
    pub copy_in: Vec<(PathBuf, PathBuf)>,
    /// Record every exec of the tree (compiler and linker calls).
    pub trace: bool,
    /// Wall-time bound of the whole run.
    pub wall_s: f64,
}

/// One recorded exec: the program the kernel loaded, its argv, its working folder.
#[derive(Clone, Debug)]
pub struct Exec {
    pub program: PathBuf,
    pub argv: Vec<String>,
    pub cwd: PathBuf,
}

/// What a run did. The scratch folder lives as long as this value.
pub struct RunOutcome {
    /// None: exit 0; else how it ended (`exited with status 2`, `killed at the wall-time bound`).
    pub failure: Option<String>,
    pub stdout: String,
    pub stderr: String,
    pub execs: Vec<Exec>,
    /// The scratch root (canonical): copies sit at `scratch/<destination>`.
    pub scratch: PathBuf,
    pub wall_s: f64,
    /// Keeps the scratch folder until the outcome is dropped.
    pub _guard: Box<dyn std::any::Any + Send>,
}

impl RunOutcome {
    /// The last `n` lines of stderr (then stdout), for a problem line.
    pub fn tail(&self, n: usize) -> String {
        let text = if self.stderr.trim().is_empty() {
            &self.stdout
        } else {
            &self.stderr
        };
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        let start = lines.len().saturating_sub(n);
        let tail = lines[start..].join(" | ");
        clip(&tail, 400)
    }
}

/// At most `n` characters of `s` (its end, where a build log says why it failed).
pub fn clip(s: &str, n: usize) -> String {
    let count = s.chars().count();
    if count <= n {
        return s.to_string();
    }
    let tail: String = s.chars().skip(count - n).collect();
    format!("…{tail}")
}

/// Runs build tools; the product's only implementation is [`Jailed`]. The error is the
/// jail's own typed one: the observer records it as the build's failure with Display.
pub trait ToolRunner: Sync {
    fn run(&self, job: &RunJob) -> Result<RunOutcome, ToolError>;
}

/// `program` found on the host's /usr/bin or /bin (what the jail shows), if installed.
pub fn host_program(name: &str) -> Option<PathBuf> {
    ["/usr/bin", "/bin"]
        .iter()
        .map(|d| Path::new(d).join(name))
        .find(|p| p.is_file())
}

/// The product's runner: `sandbox::tool::run_tool`, the jail candidate code runs in
/// (namespaces, Landlock, seccomp without network, rlimits, a wall bound, bounded scratch).
pub struct Jailed {
    /// Parent of every run's scratch folder (None: the system temp folder).
    pub scratch_in: Option<PathBuf>,
    /// How each run's jail is built (the operator's choice, read by the command).
    pub jail: crate::sandbox::jail::JailOptions,
}

impl ToolRunner for Jailed {
    fn run(&self, job: &RunJob) -> Result<RunOutcome, ToolError> {
        use crate::sandbox::tool::{ToolBounds, ToolJob, run_tool};
        let tj = ToolJob {
            label: job.label.clone(),
            program: job.program.clone(),
            args: job.args.iter().map(Into::into).collect(),
            cwd: job.cwd.clone(),
            copy_in: job.copy_in.clone(),
            bounds: ToolBounds {
                wall_s: job.wall_s,
                // A package build: a few hundred files, objects and programs at most.
                scratch_bytes: 512 << 20,
                scratch_inodes: 20_000,
                ..ToolBounds::default()
            },
            trace_exec: job.trace,
            scratch_in: self.scratch_in.clone(),
            jail: self.jail.clone(),
            ..ToolJob::default()
        };
        let out = run_tool(&tj)?;
        let scratch = out.scratch.path().to_path_buf();
        Ok(RunOutcome {
            failure: out.failure_text(),
            stdout: out.stdout,
            stderr: out.stderr,
            execs: out
                .execs
                .into_iter()
                .map(|e| Exec {
                    program: e.program,
                    argv: e.argv,
                    cwd: e.cwd,
                })
                .collect(),
            scratch,
            wall_s: out.wall_s,
            _guard: Box::new(out.scratch),
        })
    }
}
