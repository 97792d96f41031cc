//! Running candidate code: the same binary re-executed as `__child` (the jail's keeper,
//! [`jail`]), with a timeout, the order on its fd 0, a result pipe on fd 3 (data from
//! the jail, checked by `jail::channel`), the keeper's trusted report on fd 4, captured
//! (capped) stdout/stderr, and wait4 for the CPU time of the whole tree.
//!
//! The result pipe carries `#crash`/`#exit` note lines (the stage and memory peak of a
//! fatal signal, an unexpected exit) and one JSON line with the job's nonce: the result.
//! The sandbox runs any [`Job`]; what a job is (`child::protocol::Request`) sits above it.

pub mod jail;
pub mod tool;

use crate::dataset::schema::WaitStatus;
use anyhow::{Context, Result};
use serde::Serialize;
use serde_json::Value;
use std::io::Read;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

/// After the child is gone, how long its output pipes may stay open (a grandchild that left
/// the process group) before we stop reading them.
const DRAIN_S: u64 = 2;
/// Seconds a keeper has, after a stop request, to kill and reap its jail.
const STOP_GRACE_S: u64 = 2;

/// Default RLIMIT_AS of candidate children, MiB.
pub const DEFAULT_MEM_LIMIT_MIB: u64 = 16 << 10;

/// Bytes of stdout/stderr kept per child; the rest is counted and dropped.
pub const OUTPUT_CAP: usize = 64 * 1024;

#[derive(Debug, Clone)]
pub struct Spec {
    /// Scratch folder: the child's working directory; the request is written there.
    pub workdir: PathBuf,
    pub timeout: Duration,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Exit {
    Code(i32),
    Signal(i32),
    Timeout,
}

#[derive(Debug)]
pub struct Outcome {
    pub exit: Exit,
    pub stdout: String,
    pub stderr: String,
    /// The JSON result line the child wrote to fd 3, if any.
    pub result: Vec<u8>,
    /// The limits and containment that took effect, as the keeper reported them (known
    /// even when the worker crashed).
    pub sandbox: Option<String>,
    /// `#crash` or `#exit` note of a child that died in candidate code.
    pub crash: Option<CrashNote>,
    /// The result channel held something else than one well-formed result: why.
    pub unexpected: Option<String>,
    /// The jail could not be built (no candidate code ran).
    pub jail_error: Option<String>,
    /// `jail_error` says the program could not be exec'd (the jail itself stood).
    pub exec_failed: bool,
    /// What the orchestrator saw from outside: exit, CPU time, wall time, containment.
    pub observed: crate::dataset::schema::Observed,
    pub wall_s: f64,
    pub command: Vec<String>,
    /// A whole-job bound (memory or pids control group) the job ran into, in one line.
    pub bound_hit: Option<String>,
    /// The job filled its tmpfs scratch or left entries that were not copied, in one line.
    pub scratch_note: Option<String>,
}

/// What a dying child said about itself (see `child::crash`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CrashNote {
    pub stage: String,
    pub peak_as_kib: Option<u64>,
    pub as_limit_kib: Option<u64>,
}

impl CrashNote {
    pub fn parse(text: &str) -> CrashNote {
        let mut n = CrashNote::default();
        for kv in text.split(' ') {
            match kv.split_once('=') {
                Some(("stage", v)) => n.stage = v.replace('_', " "),
                Some(("peak_as_kib", v)) => n.peak_as_kib = v.parse().ok(),
                Some(("as_limit_kib", v)) => n.as_limit_kib = v.parse().ok(),
                _ => {}
            }
        }
        n
    }

    /// ` in keygen`, plus the memory limit when the peak came within a quarter of it.
    fn suffix(&self) -> String {
        let mut s = String::new();
        if !self.stage.is_empty() {
            s.push_str(&format!(" in {}", self.stage));
        }
        if let (Some(peak), Some(limit)) = (self.peak_as_kib, self.as_limit_kib)
            && limit > 0
            && peak * 4 >= limit * 3
        {
            s.push_str(&format!(
                "; address-space limit of {} MiB reached (peak {} MiB)",
                limit / 1024,
                peak / 1024
            ));
        }
        s
    }
}

impl Outcome {
    /// A short human explanation of a child that did not finish normally.
    pub fn failure_text(&self) -> Option<String> {
        if let Some(e) = &self.jail_error {
            return Some(format!("the jail could not be set up: {e}"));
        }
        if let Some(u) = &self.unexpected {
            return Some(u.clone());
        }
        let at = self
            .crash
            .as_ref()
            .map(CrashNote::suffix)
            .unwrap_or_default();
        match &self.exit {
            Exit::Code(c) if self.result.is_empty() => Some(format!(
                "exited with status {c}{at} without a result (did the library call exit()?)"
            )),
            Exit::Code(0) => None,
            Exit::Code(c) => Some(format!("exited with status {c}{at}")),
            Exit::Signal(s) => match &self.bound_hit {
                Some(b) => Some(format!(
                    "killed by signal {s} ({}){at}: {b}",
                    signal_name(*s)
                )),
                None => Some(format!("killed by signal {s} ({}){at}", signal_name(*s))),
            },
            Exit::Timeout => Some("timed out and was killed".into()),
        }
    }
}

pub fn signal_name(sig: i32) -> &'static str {
    match sig {
        libc::SIGSEGV => "SIGSEGV, invalid memory access",
        libc::SIGABRT => "SIGABRT, abort",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE, arithmetic error",
        libc::SIGILL => "SIGILL, illegal instruction",
        libc::SIGKILL => "SIGKILL",
        libc::SIGXCPU => "SIGXCPU, CPU time limit",
        libc::SIGXFSZ => "SIGXFSZ, file size limit",
        libc::SIGTERM => "SIGTERM",
        _ => "signal",
    }
}

static EXE: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();

/// The ngcc-perf binary the jail runs, when this process is not it (integration tests).
pub fn set_exe(path: PathBuf) {
    let _ = EXE.set(path);
}

/// A job the jail can run: the files it maps in, and which results its worker may send.
pub trait Job: Serialize {
    /// The job's files, as the orchestrator's paths.
    fn files(&self) -> jail::JobFiles;
    /// The request as the worker receives it. A job whose worker takes its paths from
    /// [`Job::files`] alone leaves them out here: the worker's memory (its request text and
    /// the values parsed from it) then does not depend on where the orchestrator's run
    /// directory is, so neither does the heap layout the library's own allocations meet.
    fn request_value(&self) -> serde_json::Result<Value> {
        serde_json::to_value(self)
    }
    /// Whether the worker may report `result` (its JSON object) for this job: a failure it
    /// admits, or a plain "done, now judge my files and trials" — never a verdict.
    fn admits(&self, result: &Value) -> bool;
    /// A program the worker runs under (valgrind for the ct phase's taint job).
    fn tool(&self) -> Option<jail::Tool> {
        None
    }
    /// Whole-job bounds: scratch tmpfs size and entries, memory and processes of the job.
    fn bounds(&self) -> jail::JobBounds {
        jail::JobBounds::default()
    }
}

/// Runs one job in its jail (see [`jail`]) and waits at most `spec.timeout`; the jail is
/// built as `options` says (the operator's choice, read once by the command).
pub fn run<J: Job>(spec: &Spec, options: &jail::JailOptions, request: &J) -> Result<Outcome> {
    let job = jail::JobSpec {
        request: request.request_value()?,
        files: request.files(),
    };
    run_order(
        spec,
        options,
        Some(job),
        request.tool(),
        request.bounds(),
        &|r| request.admits(r),
    )
}

/// A probe: builds the jail as `options` says, reports its layers and runs no candidate code.
pub fn run_probe(spec: &Spec, options: &jail::JailOptions) -> Result<Outcome> {
    run_order(
        spec,
        options,
        None,
        None,
        jail::JobBounds::default(),
        &|_| false,
    )
}

fn run_order(
    spec: &Spec,
    options: &jail::JailOptions,
    job: Option<jail::JobSpec>,
    tool: Option<jail::Tool>,
    bounds: jail::JobBounds,
    admits: &dyn Fn(&Value) -> bool,
) -> Result<Outcome> {
    jail::prepare_scratch(&spec.workdir, job.as_ref().map(|j| &j.files))?;
    let order = jail::Order {
        nonce: jail::nonce(),
        job,
        scratch: spec.workdir.clone(),
        off: options.off.clone(),
        tool,
        tool_run: None,
        bounds,
    };
    launch(spec, &order, admits, OUTPUT_CAP).map(|(o, _)| o)
}

/// Starts the keeper with `order`, waits for it (at most `spec.timeout`) and reads what it
/// and the jail said; also returns the execs a traced tool run recorded.
pub(crate) fn launch(
    spec: &Spec,
    order: &jail::Order,
    admits: &dyn Fn(&Value) -> bool,
    output_cap: usize,
) -> Result<(Outcome, Vec<jail::ExecRecord>)> {
    let started = start_keeper(order, output_cap)?;
    let waited = wait_or_stop(started.pid, spec.timeout);
    // Anything left in the group (the jail's proxy and worker) goes now.
    // SAFETY: a signal to our own child's process group.
    unsafe { libc::kill(-started.pid, libc::SIGKILL) };
    let wall_s = started.start.elapsed().as_secs_f64();
    let said = drain(started.pipes);
    judge(
        order,
        admits,
        started.pid,
        started.command,
        waited,
        wall_s,
        said,
    )
}

/// The keeper, running, and the pipes being read from it.
struct Started {
    pid: libc::pid_t,
    start: Instant,
    /// The command line, as records show it.
    command: Vec<String>,
    pipes: Pipes,
}

/// The keeper's four outputs, each read by a thread of its own into a capped buffer.
struct Pipes {
    stdout: Captured,
    stderr: Captured,
    /// fd 3: the worker's result (data from the jail).
    result: Captured,
    /// fd 4: the keeper's reports (trusted).
    trusted: Captured,
}

/// Spawns `ngcc-perf __child` in a process group of its own (dies with us), with the
/// order on its stdin, the result channel at fd 3 and the keeper's reports at fd 4, and
/// starts reading them.
fn start_keeper(order: &jail::Order, output_cap: usize) -> Result<Started> {
    let exe = match EXE.get() {
        Some(p) => p.clone(),
        // The running image, not the path it was started from: a rebuild that replaces the
        // file during a campaign (cargo does) would otherwise start jobs of another build, or
        // none while the new file is being written ("No such file or directory").
        None => PathBuf::from("/proc/self/exe"),
    };
    let (order_r, order_w) = pipe()?;
    let (read_end, write_end) = pipe()?;
    let (trusted_r, trusted_w) = pipe()?;
    let mut cmd = Command::new(&exe);
    cmd.arg("__child")
        .current_dir("/")
        .stdin(Stdio::from(order_r))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let (write_fd, trusted_fd) = (write_end.as_raw_fd(), trusted_w.as_raw_fd());
    let parent = std::process::id() as libc::pid_t;
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            // Out of the way first, so neither dup2 can clobber the other's source.
            let res = libc::fcntl(write_fd, libc::F_DUPFD, 10);
            let tru = libc::fcntl(trusted_fd, libc::F_DUPFD, 10);
            if res < 0 || tru < 0 || libc::dup2(res, 3) < 0 || libc::dup2(tru, 4) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            // Nothing else crosses exec: fds our own parent leaked to us (not O_CLOEXEC)
            // would otherwise reach the jail.
            cloexec_from(5);
            libc::setpgid(0, 0);
            // SIGTERM, not SIGKILL: the keeper handles it by killing its job and its whole
            // process group (`jail::keeper`), which a SIGKILL would leave running where the
            // jail has no PID namespace of its own. Whatever our own parent made of SIGTERM
            // (ignored, blocked) must not cross the exec.
            let mut term: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut term);
            libc::sigaddset(&mut term, libc::SIGTERM);
            libc::sigprocmask(libc::SIG_UNBLOCK, &term, std::ptr::null_mut());
            libc::signal(libc::SIGTERM, libc::SIG_DFL);
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
            // The orchestrator died before prctl took effect: nobody would ever kill us.
            if libc::getppid() != parent {
                libc::_exit(1);
            }
            Ok(())
        });
    }
    let command = vec![exe.display().to_string(), "__child".into()];
    let start = Instant::now();
    let mut child = cmd.spawn().context("starting the child process")?;
    drop((write_end, trusted_w));
    let order_text = serde_json::to_vec(order)?;
    std::thread::spawn(move || {
        let _ = std::io::Write::write_all(&mut std::fs::File::from(order_w), &order_text);
    });
    let pid = child.id() as i32;
    let pipes = Pipes {
        stdout: capture(child.stdout.take(), output_cap, true),
        stderr: capture(child.stderr.take(), output_cap, true),
        // The result is data from the jail, which could flood it: cap it too (generously).
        result: capture(Some(std::fs::File::from(read_end)), 256 << 20, false),
        // The keeper's reports (a traced tool run's carry every exec).
        trusted: capture(Some(std::fs::File::from(trusted_r)), 64 << 20, false),
    };
    Ok(Started {
        pid,
        start,
        command,
        pipes,
    })
}

/// How the wait for the keeper ended.
struct Waited {
    /// wait4's return value, the wait status and the tree's rusage (`None`: never reaped).
    wait4: Option<(libc::pid_t, i32, libc::rusage)>,
    /// The job ran into its timeout and was stopped.
    timed_out: bool,
}

/// Waits for the keeper at most `timeout`; then asks it to stop the job, and kills its
/// whole process group if it has not ended [`STOP_GRACE_S`] later.
fn wait_or_stop(pid: libc::pid_t, timeout: Duration) -> Waited {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut status = 0;
        // SAFETY: wait4 on our own child into structs we own (std's Child is never waited).
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        let rc = unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
        let _ = tx.send((rc, status, ru));
    });
    let (wait4, timed_out) = match rx.recv_timeout(timeout) {
        Ok(w) => (Some(w), false),
        Err(_) => {
            // The keeper kills and reaps the jail, so its CPU time is in our wait4; if the
            // keeper does not end soon, the whole process group goes.
            // SAFETY: signals to our own child and its process group.
            unsafe { libc::kill(pid, jail::keeper::STOP_SIGNAL) };
            match rx.recv_timeout(Duration::from_secs(STOP_GRACE_S)) {
                Ok(w) => (Some(w), true),
                Err(_) => {
                    unsafe { libc::kill(-pid, libc::SIGKILL) };
                    (rx.recv().ok(), true)
                }
            }
        }
    };
    Waited { wait4, timed_out }
}

/// What the keeper's pipes held once it ended.
struct Said {
    /// Candidate output, terminal controls written out; stderr ends with a note when a
    /// pipe was still held open.
    stdout: String,
    stderr: String,
    /// The result channel's raw bytes (judged by `jail::channel::parse`).
    result: String,
    /// The keeper's report lines.
    trusted: String,
}

fn drain(pipes: Pipes) -> Said {
    // A process that left the group could hold a pipe forever: read for a bounded time
    // only, then keep what arrived.
    let deadline = Instant::now() + Duration::from_secs(DRAIN_S);
    let (stdout, held1) = pipes.stdout.finish(deadline);
    let (stderr, held2) = pipes.stderr.finish(deadline);
    // Candidate output is evidence only: kept with terminal controls written out, so no
    // log, record or console that shows it can be steered by ESC/OSC bytes.
    let stdout = crate::util::text::terminal(&stdout);
    let mut stderr = crate::util::text::terminal(&stderr);
    let (result, held3) = pipes.result.finish(deadline);
    let (trusted, _) = pipes.trusted.finish(deadline);
    if held1 || held2 || held3 {
        stderr.push_str(
            "\n[ngcc-perf: output pipes still open after the child ended: a process escaped \
             the process group and was not killed]\n",
        );
    }
    Said {
        stdout,
        stderr,
        result,
        trusted,
    }
}

/// How a job ended: its timeout first, then the worker's status as the keeper saw it,
/// then the keeper's own (a keeper that ended 0 without a worker status is no answer).
fn exit_of(timed_out: bool, worker: Option<WaitStatus>, keeper: Option<WaitStatus>) -> Exit {
    use WaitStatus as W;
    match (timed_out, worker, keeper) {
        (true, _, _) => Exit::Timeout,
        (false, Some(W::Code(c)), _) => Exit::Code(c),
        (false, Some(W::Signal(s)), _) => Exit::Signal(s),
        (false, None, Some(W::Signal(s))) => Exit::Signal(s),
        (false, None, Some(W::Code(c))) if c != 0 => Exit::Code(c),
        _ => Exit::Code(-1),
    }
}

/// The job's outcome from what was observed of it: the keeper's last report, the wait,
/// and the result channel read against the order's nonce and what the job admits.
fn judge(
    order: &jail::Order,
    admits: &dyn Fn(&Value) -> bool,
    pid: libc::pid_t,
    command: Vec<String>,
    waited: Waited,
    wall_s: f64,
    said: Said,
) -> Result<(Outcome, Vec<jail::ExecRecord>)> {
    use crate::dataset::schema::{Observed, Usage};
    let Waited { wait4, timed_out } = waited;
    // The keeper's last report counts (an early one says what a killed job had).
    let mut report: Option<jail::Report> = said
        .trusted
        .lines()
        .rev()
        .find_map(|l| serde_json::from_str(l).ok());
    let keeper_exit = match wait4 {
        Some((rc, status, _)) if rc == pid => Some(WaitStatus::from_raw(status)),
        _ => None,
    };
    let tree_usage = wait4
        .map(|(_, _, ru)| Usage::from_rusage(&ru))
        .unwrap_or_default();
    let worker_exit = report.as_ref().and_then(|r| r.worker_exit);
    let exit = exit_of(timed_out, worker_exit, keeper_exit);
    let jail_error = match &report {
        None if !timed_out => Some("the jail's keeper sent no report".to_string()),
        Some(r) if !timed_out => r.error.clone(),
        _ => None,
    };
    let containment = report
        .as_ref()
        .map(|r| r.containment.clone())
        .unwrap_or_default();
    let sandbox = report.as_ref().map(|r| {
        if r.limits.is_empty() {
            format!("jail: {}", containment.text())
        } else {
            format!("{}; jail: {}", r.limits, containment.text())
        }
    });
    let parsed = jail::channel::parse(said.result.as_bytes(), &order.nonce, admits);
    let result = match parsed.result {
        Some(mut obj) => {
            // What the worker says about its sandbox is replaced by what the keeper saw.
            if obj.contains_key(jail::channel::SANDBOX_FIELD) {
                obj.insert(
                    jail::channel::SANDBOX_FIELD.into(),
                    serde_json::Value::String(sandbox.clone().unwrap_or_default()),
                );
            }
            serde_json::to_vec(&obj)?
        }
        None => Vec::new(),
    };
    let observed = Observed {
        worker_exit,
        worker_usage: report.as_ref().and_then(|r| r.worker_usage),
        tree_usage,
        wall_s,
        jail_setup_s: report.as_ref().map_or(0.0, |r| r.setup_s),
        containment,
        ..Default::default()
    };
    let execs = report
        .as_mut()
        .map(|r| std::mem::take(&mut r.execs))
        .unwrap_or_default();
    let outcome = Outcome {
        exit,
        stdout: said.stdout,
        stderr: said.stderr,
        result,
        sandbox,
        crash: parsed.crash.as_deref().map(CrashNote::parse),
        unexpected: parsed.unexpected,
        jail_error,
        exec_failed: report.as_ref().is_some_and(|r| r.exec_failed),
        observed,
        wall_s,
        command,
        bound_hit: report.as_ref().and_then(|r| r.bound_hit.clone()),
        scratch_note: report
            .as_ref()
            .and_then(|r| r.scratch.as_ref())
            .and_then(|u| u.note()),
    };
    Ok((outcome, execs))
}

/// Marks every fd >= `first` close-on-exec (between fork and exec: syscalls only).
fn cloexec_from(first: u32) {
    const CLOSE_RANGE_CLOEXEC: libc::c_uint = 1 << 2;
    // SAFETY: close_range/fcntl on our own descriptor table.
    unsafe {
        if libc::syscall(libc::SYS_close_range, first, u32::MAX, CLOSE_RANGE_CLOEXEC) == 0 {
            return;
        }
        // Kernels before 5.11: one fcntl per possible descriptor.
        let mut rl = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        libc::getrlimit(libc::RLIMIT_NOFILE, &mut rl);
        for fd in first as libc::c_int..rl.rlim_cur.min(1 << 16) as libc::c_int {
            libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
        }
    }
}

fn pipe() -> Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: pipe2 fills two fds we then own.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error().into());
    }
    // SAFETY: both fds are fresh and owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// Output read so far by a capture thread, shared so a stuck reader can be abandoned.
struct Captured {
    data: Arc<Mutex<(Vec<u8>, usize)>>,
    done: mpsc::Receiver<()>,
    /// Say how much was dropped (candidate output; not the channels we parse).
    tell: bool,
}

impl Captured {
    /// Waits until the stream ends or `deadline`; returns the text and whether it was still
    /// open at the deadline.
    fn finish(self, deadline: Instant) -> (String, bool) {
        let wait = deadline.saturating_duration_since(Instant::now());
        let held = matches!(
            self.done.recv_timeout(wait),
            Err(mpsc::RecvTimeoutError::Timeout)
        );
        let guard = self.data.lock().unwrap_or_else(|e| e.into_inner());
        let (kept, dropped) = (&guard.0, guard.1);
        let mut text = String::from_utf8_lossy(kept).to_string();
        if dropped > 0 && self.tell {
            text.push_str(&format!("\n[{dropped} more bytes of output dropped]\n"));
        }
        (text, held)
    }
}

/// Reads a stream on its own thread, keeping at most `cap` bytes and counting the rest.
fn capture<R: Read + Send + 'static>(stream: Option<R>, cap: usize, tell: bool) -> Captured {
    let data = Arc::new(Mutex::new((Vec::new(), 0usize)));
    let (tx, done) = mpsc::channel();
    let shared = data.clone();
    std::thread::spawn(move || {
        if let Some(mut s) = stream {
            let mut buf = [0u8; 8192];
            while let Ok(n) = s.read(&mut buf) {
                if n == 0 {
                    break;
                }
                let mut g = shared.lock().unwrap_or_else(|e| e.into_inner());
                let room = cap.saturating_sub(g.0.len());
                g.0.extend_from_slice(&buf[..n.min(room)]);
                g.1 += n.saturating_sub(room);
            }
        }
        let _ = tx.send(());
    });
    Captured { data, done, tell }
}

/// Parses the child's JSON result; a missing or broken one is an error with context.
pub fn parse_result<T: serde::de::DeserializeOwned>(outcome: &Outcome) -> Result<T> {
    serde_json::from_slice(&outcome.result).context("child sent no valid result")
}

#[cfg(test)]
mod tests {
    use super::*;
    use WaitStatus as W;

    #[test]
    fn a_timeout_wins_then_the_workers_status_then_a_failing_keepers() {
        let seg = Some(W::Signal(libc::SIGSEGV));
        assert_eq!(exit_of(true, Some(W::Code(0)), None), Exit::Timeout);
        assert_eq!(exit_of(false, Some(W::Code(3)), seg), Exit::Code(3));
        assert_eq!(
            exit_of(false, seg, Some(W::Code(0))),
            Exit::Signal(libc::SIGSEGV)
        );
        assert_eq!(exit_of(false, None, seg), Exit::Signal(libc::SIGSEGV));
        assert_eq!(exit_of(false, None, Some(W::Code(2))), Exit::Code(2));
        // A keeper that ended well without a worker status, or was never reaped: no answer.
        assert_eq!(exit_of(false, None, Some(W::Code(0))), Exit::Code(-1));
        assert_eq!(exit_of(false, None, None), Exit::Code(-1));
    }
}
