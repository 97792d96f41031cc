//! The jail around every child that runs candidate code (issue 12).
//!
//! Process tree of one job:
//! ```text
//! orchestrator ─▶ keeper (`ngcc-perf __child`, our code only, parent namespaces)
//!                   └─▶ proxy (pid 1 of a new PID namespace: reaps and waits, nothing else)
//!                         └─▶ worker (`ngcc-perf __jailed`: limits, Landlock, seccomp, then
//!                                     dlopen of the candidate library)
//! ```
//! The keeper reads its [`Order`] on fd 0 and answers on fd 4 with a [`Report`]: the layers
//! that took effect and how the worker really ended (its proxy saw it with wait4). Candidate
//! code never holds fd 4; fd 3 (the worker's JSON result) stays untrusted data, checked by
//! [`channel`]. Where a layer is not available the keeper falls back (no user namespace:
//! the worker is forked directly and only Landlock, seccomp and, as root, a uid drop and a
//! network namespace remain) and says which layers were active.

pub mod cgroup;
pub mod channel;
pub mod ingest;
pub mod keeper;
pub mod landlock;
pub mod namespaces;
pub mod probe;
pub mod scratchfs;
pub mod seccomp;
pub mod tool_exec;
pub mod worker;

use crate::dataset::schema::{Containment, Layer, Usage, WaitStatus};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Paths every job sees inside the mount namespace (the same for every job, so nothing in
/// them tells a trial from a calibration).
pub const JOB_LIBRARY: &str = "/job/lib.so";
pub const JOB_SETUP: &str = "/job/setup";
pub const JOB_SCRATCH: &str = "/job/scratch";
/// The ngcc-perf binary, bound read-only only for jobs that run under a [`Tool`] (the tool
/// must exec it by path; other jobs exec it through a descriptor and never see it).
pub const JOB_EXE: &str = "/job/ngcc-perf";
/// uid and gid of candidate code inside the user namespace.
pub const INNER_ID: u32 = 1000;
/// The unprivileged uid and gid candidate code gets outside when ngcc-perf runs as root.
pub const NOBODY: u32 = 65534;
/// RLIMIT_NPROC of the worker: processes and threads of the jail's uid (the proxy is one).
pub const NPROC: u64 = 16;
/// Layers switched off by the operator (comma list of layer names), to test the fallbacks.
pub const OFF_ENV: &str = "NGCC_PERF_JAIL_OFF";

/// The files of a job that the jail maps in, as paths. The keeper rewrites them to the
/// paths the worker sees; the worker puts them back into its request (`child`). The jail
/// reads nothing else of the request, which it passes on as it came.
#[derive(Serialize, Deserialize, Debug, Clone, Default)]
pub struct JobFiles {
    /// The candidate library: read-only at [`JOB_LIBRARY`].
    pub library: PathBuf,
    /// Where a KAT job writes its files: must lie in the scratch folder.
    #[serde(default)]
    pub kat_dir: Option<PathBuf>,
    /// An operation job's setup: in the scratch folder (a calibration writes it there), else
    /// bound read-only at [`JOB_SETUP`].
    #[serde(default)]
    pub setup_dir: Option<PathBuf>,
}

/// One job for the worker: the request (opaque to the jail) and its files.
#[derive(Serialize, Deserialize, Debug, Clone)]
pub struct JobSpec {
    pub request: serde_json::Value,
    pub files: JobFiles,
}

/// What the orchestrator asks the keeper to do (JSON on the keeper's fd 0).
#[derive(Serialize, Deserialize, Debug, Clone)]
pub struct Order {
    /// Per-job nonce: the worker's result line must carry it.
    pub nonce: String,
    /// `None`: a probe (build the jail, report the layers, run no candidate code).
    pub job: Option<JobSpec>,
    /// The job's scratch folder (host path): its only writable place.
    pub scratch: PathBuf,
    /// Layers not to use (from `NGCC_PERF_JAIL_OFF`).
    #[serde(default)]
    pub off: Vec<Layer>,
    /// A program the worker runs under (the ct phase's memcheck); `None` for every other job.
    #[serde(default)]
    pub tool: Option<Tool>,
    /// A host program run over candidate input instead of a worker (`sandbox::tool`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_run: Option<ToolRun>,
    /// Whole-job bounds (scratch tmpfs, memory and pids control groups).
    #[serde(default)]
    pub bounds: JobBounds,
}

/// Bounds of the whole job, whatever its processes do: its scratch folder (a tmpfs of that
/// size and inode count) and, where control groups can be made, its memory (every process
/// and the scratch pages together) and its processes and threads.
#[derive(Serialize, Deserialize, Debug, Clone, Copy, PartialEq)]
pub struct JobBounds {
    pub scratch: scratchfs::ScratchBounds,
    pub memory_bytes: u64,
    pub pids: u64,
}

impl JobBounds {
    /// A job whose every process may map `address_space` bytes: the whole job may hold as
    /// much plus a full scratch (forked children share the one bound).
    pub fn new(address_space: Option<u64>, scratch_bytes: u64, scratch_inodes: u64) -> Self {
        let scratch = scratchfs::ScratchBounds {
            bytes: scratch_bytes,
            inodes: scratch_inodes,
        };
        let as_bytes = address_space.unwrap_or(crate::sandbox::DEFAULT_MEM_LIMIT_MIB << 20);
        JobBounds {
            scratch,
            memory_bytes: as_bytes.saturating_add(scratch_bytes),
            pids: 64,
        }
    }
}

impl Default for JobBounds {
    /// A job that writes little (a trial's outputs, a probe).
    fn default() -> Self {
        JobBounds::new(None, 256 << 20, 1024)
    }
}

/// A tool run (`sandbox::tool::run_tool`) as the keeper needs it. Every path is a host path
/// and is seen at the same path inside the jail, so a caller's command lines need no
/// rewriting: the scratch folder (read-write, the only writable place), the `read_only`
/// inputs, and the system folders.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct ToolRun {
    pub program: PathBuf,
    pub args: Vec<String>,
    /// The whole environment of the tool.
    pub env: Vec<(String, String)>,
    /// Working directory (inside the scratch folder).
    pub cwd: PathBuf,
    pub read_only: Vec<PathBuf>,
    pub limits: ToolLimits,
    /// Record every exec of the tool's process tree (ptrace from the proxy).
    pub trace: bool,
}

/// Per-process resource limits of a tool run (the tool applies them before exec).
#[derive(Serialize, Deserialize, Debug, Clone, Copy, PartialEq)]
pub struct ToolLimits {
    pub as_mib: u64,
    pub cpu_s: u64,
    pub fsize_mib: u64,
    pub nproc: u64,
    pub nofile: u64,
}

/// One exec seen in a traced tool run, in the order the proxy saw them.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct ExecRecord {
    pub seq: usize,
    /// Pid inside the jail's PID namespace.
    pub pid: i32,
    /// The program the kernel loaded (`/proc/<pid>/exe`: links resolved, so `cc` shows as
    /// the real compiler whatever path or name called it).
    pub program: PathBuf,
    pub argv: Vec<String>,
    pub cwd: PathBuf,
}

/// A program started in the worker's place that then runs the worker (`program args…
/// <ngcc-perf> __jailed`), e.g. valgrind. It must lie under `/usr` (visible read-only in
/// every jail); it runs with the worker's limits, and the worker still applies Landlock
/// and seccomp to itself before it loads candidate code, so the tool's own later system
/// calls are filtered too.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Tool {
    pub program: PathBuf,
    pub args: Vec<String>,
    /// Exec the tool with address-space randomisation off (`personality(ADDR_NO_RANDOMIZE)`):
    /// the count job's instruction counts must not depend on where the stack, heap and
    /// mappings land (glibc's copy and allocation paths branch on alignment and layout).
    #[serde(default)]
    pub fixed_addresses: bool,
}

/// A [`Tool`] as exec arguments, built before the fork that runs it.
#[derive(Debug)]
pub struct ToolExec {
    pub program: std::ffi::CString,
    pub argv: Vec<std::ffi::CString>,
    /// Only `TMPDIR`: the scratch folder (valgrind writes its /proc emulation files there;
    /// a jail has no /tmp).
    pub envp: Vec<std::ffi::CString>,
    /// Landlock and seccomp applied before the tool is exec'd (a tool may not pass the
    /// worker's own calls to the kernel: valgrind 3.19 does not), as the worker would:
    /// readable and writable paths as the worker sees them.
    pub lock: Option<PreExec>,
    /// See [`Tool::fixed_addresses`].
    pub fixed_addresses: bool,
}

/// The layers a job's tool gets before exec.
#[derive(Debug, Clone, Default)]
pub struct PreExec {
    pub read_only: Vec<PathBuf>,
    pub read_write: Vec<PathBuf>,
    pub landlock: bool,
    pub seccomp: bool,
}

impl ToolExec {
    /// `tool.program tool.args… exe __jailed`, with `TMPDIR=<tmp>`.
    pub fn new(tool: &Tool, exe: &Path, tmp: &Path) -> anyhow::Result<ToolExec> {
        use anyhow::Context;
        let c = |s: &[u8]| std::ffi::CString::new(s).context("tool argument");
        if !tool.program.starts_with("/usr") {
            anyhow::bail!("tool {} is not under /usr", tool.program.display());
        }
        let mut argv = vec![c(tool.program.as_os_str().as_encoded_bytes())?];
        // valgrind's gdbserver talks through FIFOs in TMPDIR: a channel out of the job that
        // the jail's Landlock (no FIFO may be made) refuses, and valgrind would stop.
        let valgrind = tool
            .program
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("valgrind"));
        if valgrind && !tool.args.iter().any(|a| a.starts_with("--vgdb=")) {
            argv.push(c(b"--vgdb=no")?);
        }
        for a in &tool.args {
            argv.push(c(a.as_bytes())?);
        }
        argv.push(c(exe.as_os_str().as_encoded_bytes())?);
        argv.push(c(b"__jailed")?);
        let mut env = b"TMPDIR=".to_vec();
        env.extend_from_slice(tmp.as_os_str().as_encoded_bytes());
        Ok(ToolExec {
            program: c(tool.program.as_os_str().as_encoded_bytes())?,
            argv,
            envp: vec![c(&env)?],
            lock: None,
            fixed_addresses: tool.fixed_addresses,
        })
    }
}

/// What the keeper tells the orchestrator (one JSON line on fd 4).
#[derive(Serialize, Deserialize, Debug, Clone, Default)]
pub struct Report {
    pub containment: Containment,
    /// The worker's resource limits as it applied them (before any candidate code).
    #[serde(default)]
    pub limits: String,
    /// How the worker ended; `None` if it never started.
    #[serde(default)]
    pub worker_exit: Option<WaitStatus>,
    #[serde(default)]
    pub worker_usage: Option<Usage>,
    /// The jail could not be built or the worker not started: no candidate code ran.
    #[serde(default)]
    pub error: Option<String>,
    /// `error` is the exec of the worker or the tool failing (a missing program, a bad
    /// working directory), not the jail: the caller's request was wrong, the host is fine.
    #[serde(default)]
    pub exec_failed: bool,
    /// Seconds from the keeper's start until the worker was started.
    #[serde(default)]
    pub setup_s: f64,
    /// A traced tool run's execs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub execs: Vec<ExecRecord>,
    /// What the job did with its tmpfs scratch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scratch: Option<scratchfs::ScratchUse>,
    /// A whole-job bound the job ran into, in one line (the kernel's OOM kill in the job's
    /// memory group, forks refused at its pids bound).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bound_hit: Option<String>,
}

/// What the keeper hands the worker (JSON on the worker's fd 0): the job with the paths the
/// worker sees, and what it must apply to itself before loading the library.
#[derive(Serialize, Deserialize, Debug, Clone)]
pub struct Inner {
    pub nonce: String,
    pub job: Option<JobSpec>,
    /// Landlock: folders and files readable, and the one writable folder.
    pub read_only: Vec<PathBuf>,
    pub read_write: Vec<PathBuf>,
    pub landlock: bool,
    pub seccomp: bool,
    pub nproc: Option<u64>,
}

/// Messages on the jail-internal report pipe (proxy and worker → keeper), one JSON per line.
#[derive(Serialize, Deserialize, Debug, Clone)]
#[serde(rename_all = "snake_case")]
pub enum Msg {
    /// The proxy built the namespaces and mounts.
    Ready,
    /// The proxy could not build the jail (nothing ran).
    SetupError(String),
    /// The worker applied its own layers; written before the library is loaded, then the
    /// worker closes the pipe.
    Applied(Applied),
    /// The layers applied before a job's tool was exec'd (they hold for the tool and the
    /// worker inside it).
    PreExec(Applied),
    /// The worker could not be started.
    ExecError(String),
    /// Without namespaces: whether the worker got its own network, IPC and UTS namespace.
    Isolated { net: bool },
    /// The proxy's wait4 on the worker.
    Exit { status: WaitStatus, usage: Usage },
    /// A traced tool run executed a program.
    Exec(ExecRecord),
    /// The proxy copied the tmpfs scratch back after the job.
    Scratch(scratchfs::ScratchUse),
}

#[derive(Serialize, Deserialize, Debug, Clone, Default)]
pub struct Applied {
    pub limits: String,
    #[serde(default)]
    pub landlock_abi: Option<u32>,
    #[serde(default)]
    pub landlock_missing: Option<String>,
    pub seccomp: bool,
    #[serde(default)]
    pub seccomp_missing: Option<String>,
    #[serde(default)]
    pub nproc: bool,
}

/// How the jails of some jobs are built: the layers left out. A value read once at the top
/// of a command (`Settings`, `import ngcc`) and handed down to the code that builds each
/// jail (`bench jail` times its variants side by side with it), never process state and
/// never read from the environment where a jail is built.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JailOptions {
    pub off: Vec<Layer>,
}

impl JailOptions {
    /// Every layer (the jail of a campaign unless the operator says otherwise).
    pub fn full() -> JailOptions {
        JailOptions::default()
    }

    /// The operator's choice: `NGCC_PERF_JAIL_OFF` (`all`, or names like `user_ns,seccomp`),
    /// to test the fallbacks. Called once per command, where its settings are made.
    pub fn from_env() -> JailOptions {
        JailOptions::parse(std::env::var(OFF_ENV).ok().as_deref())
    }

    /// [`JailOptions::from_env`] on the variable's value: unset or unknown names leave
    /// every layer on.
    pub fn parse(value: Option<&str>) -> JailOptions {
        let off = match value {
            None => Vec::new(),
            Some(text) if text.trim() == "all" => Layer::ALL.to_vec(),
            Some(text) => text
                .split(',')
                .filter_map(|n| Layer::from_name(n.trim()))
                .collect(),
        };
        JailOptions { off }
    }
}

/// A fresh 128-bit nonce in hex (getrandom; the clock only if that fails).
pub fn nonce() -> String {
    let mut b = [0u8; 16];
    // SAFETY: getrandom fills the buffer we own.
    let n = unsafe { libc::getrandom(b.as_mut_ptr().cast(), b.len(), 0) };
    if n != b.len() as isize {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64)
            ^ u64::from(std::process::id());
        b[..8].copy_from_slice(&t.to_le_bytes());
    }
    hex::encode(b)
}

/// A host path naming this process's executable image, for a tool job to exec. Normally the
/// file it was started from; when a rebuild has replaced or deleted that file during a
/// campaign (cargo does), a copy of the running image, made once per image beside the job's
/// scratch folder: the path of the running file then names another build, or nothing, and
/// the image itself cannot be bound into another mount namespace.
pub fn running_exe(scratch: &Path) -> anyhow::Result<PathBuf> {
    use anyhow::Context;
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let mut image = std::fs::File::open("/proc/self/exe").context("opening /proc/self/exe")?;
    let running = image.metadata()?;
    let same = |p: &Path| {
        std::fs::metadata(p).is_ok_and(|m| m.dev() == running.dev() && m.ino() == running.ino())
    };
    if let Ok(path) = std::fs::read_link("/proc/self/exe")
        && same(&path)
    {
        return Ok(path);
    }
    let dir = scratch.parent().unwrap_or(scratch);
    let copy = dir.join(format!(
        "ngcc-perf-image-{}-{}",
        running.dev(),
        running.ino()
    ));
    if !copy.is_file() {
        let tmp = dir.join(format!(".ngcc-perf-image-{}", std::process::id()));
        let mut out = std::fs::File::create(&tmp)
            .with_context(|| format!("copying the running image to {}", tmp.display()))?;
        std::io::copy(&mut image, &mut out)?;
        out.sync_all()?;
        std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o755))?;
        std::fs::rename(&tmp, &copy)?;
    }
    Ok(copy)
}

/// A fresh scratch folder for one job, with the job's output folders in it (the KAT folder,
/// a calibration's setup folder) already created.
pub fn prepare_scratch(scratch: &Path, files: Option<&JobFiles>) -> anyhow::Result<()> {
    let _ = std::fs::remove_dir_all(scratch);
    std::fs::create_dir_all(scratch)?;
    let outputs = files
        .into_iter()
        .flat_map(|f| [&f.kat_dir, &f.setup_dir])
        .flatten()
        .filter(|p| p.starts_with(scratch));
    for dir in outputs {
        std::fs::create_dir_all(dir)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_operators_jail_off_names_layers_or_all() {
        assert_eq!(JailOptions::parse(None), JailOptions::full());
        assert_eq!(JailOptions::parse(Some(" all ")).off, Layer::ALL.to_vec());
        assert_eq!(
            JailOptions::parse(Some("seccomp, user_ns,nonsense")).off,
            [Layer::Seccomp, Layer::UserNs]
        );
    }
}
