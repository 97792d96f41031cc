//! Running candidate code: the same binary re-executed as `__child`, with a timeout, a
//! result pipe on fd 3, captured (capped) stdout/stderr, and limits the child applies to
//! itself before loading the library (see `child::limits`).
//!
//! The result pipe carries `#<tag> <text>` note lines (the sandbox the child got, the stage
//! and memory peak of a fatal signal, an unexpected exit) and one JSON line: the result.

use anyhow::{Context, Result};
use serde::Serialize;
use std::io::Read;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

/// After the child is gone, how long its output pipes may stay open (a grandchild that left
/// the process group) before we stop reading them.
const DRAIN_S: u64 = 2;

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
    /// `#sandbox` note: the limits and isolation that took effect (written before the
    /// library was loaded, so it survives a crash).
    pub sandbox: Option<String>,
    /// `#crash` or `#exit` note of a child that died in candidate code.
    pub crash: Option<CrashNote>,
    pub wall_s: f64,
    pub command: Vec<String>,
}

/// What a dying child said about itself (see `child::crash`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CrashNote {
    pub stage: String,
    pub peak_as_kib: Option<u64>,
    pub as_limit_kib: Option<u64>,
}

impl CrashNote {
    fn parse(text: &str) -> CrashNote {
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
            Exit::Signal(s) => Some(format!("killed by signal {s} ({}){at}", signal_name(*s))),
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
        libc::SIGTERM => "SIGTERM",
        _ => "signal",
    }
}

/// Runs `__child <request.json>` and waits at most `spec.timeout`.
pub fn run<T: Serialize>(spec: &Spec, request: &T) -> Result<Outcome> {
    std::fs::create_dir_all(&spec.workdir)?;
    let req_path = spec.workdir.join("request.json");
    crate::util::write_json(&req_path, request)?;
    let exe = std::env::current_exe().context("locating the ngcc-perf executable")?;
    let (read_end, write_end) = pipe()?;
    let mut cmd = Command::new(&exe);
    cmd.arg("__child")
        .arg(&req_path)
        .current_dir(&spec.workdir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let write_fd = write_end.as_raw_fd();
    let parent = std::process::id() as libc::pid_t;
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            // dup2 onto itself keeps O_CLOEXEC, so clear it by hand in that case.
            let rc = if write_fd == 3 {
                libc::fcntl(3, libc::F_SETFD, 0)
            } else {
                libc::dup2(write_fd, 3)
            };
            if rc < 0 {
                return Err(std::io::Error::last_os_error());
            }
            // Nothing else crosses exec: fds our own parent leaked to us (not O_CLOEXEC)
            // would otherwise reach candidate code.
            cloexec_from(4);
            libc::setpgid(0, 0);
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            // The orchestrator died before prctl took effect: nobody would ever kill us.
            if libc::getppid() != parent {
                libc::_exit(1);
            }
            Ok(())
        });
    }
    let command = vec![
        exe.display().to_string(),
        "__child".into(),
        req_path.display().to_string(),
    ];
    let start = Instant::now();
    let mut child = cmd.spawn().context("starting the child process")?;
    drop(write_end);
    let pid = child.id() as i32;
    let out_buf = capture(child.stdout.take(), OUTPUT_CAP);
    let err_buf = capture(child.stderr.take(), OUTPUT_CAP);
    // The result is ours, but a hostile child could flood it: cap it too (generously).
    let res_buf = capture(Some(std::fs::File::from(read_end)), 256 << 20);
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait());
    });
    let exit = match rx.recv_timeout(spec.timeout) {
        Ok(status) => {
            let status = status?;
            match (status.code(), status.signal()) {
                (Some(c), _) => Exit::Code(c),
                (None, Some(s)) => Exit::Signal(s),
                _ => Exit::Code(-1),
            }
        }
        Err(_) => {
            // SAFETY: kill the child's whole process group (it may have forked).
            unsafe { libc::kill(-pid, libc::SIGKILL) };
            let _ = rx.recv();
            Exit::Timeout
        }
    };
    // Grandchildren may still hold the pipes: kill the group before collecting output.
    unsafe { libc::kill(-pid, libc::SIGKILL) };
    let wall_s = start.elapsed().as_secs_f64();
    // A process that left the group (setsid) could hold a pipe forever: read for a bounded
    // time only, then keep what arrived.
    let deadline = Instant::now() + Duration::from_secs(DRAIN_S);
    let (stdout, held1) = out_buf.finish(deadline);
    let (mut stderr, held2) = err_buf.finish(deadline);
    let (raw, held3) = res_buf.finish(deadline);
    if held1 || held2 || held3 {
        stderr.push_str(
            "\n[ngcc-perf: output pipes still open after the child ended: a process escaped \
             the process group and was not killed]\n",
        );
    }
    let (result, sandbox, crash) = split_result(&raw);
    Ok(Outcome {
        exit,
        stdout,
        stderr,
        result,
        sandbox,
        crash,
        wall_s,
        command,
    })
}

/// Splits fd 3 output into the JSON line and the `#sandbox` / `#crash` / `#exit` notes.
fn split_result(text: &str) -> (Vec<u8>, Option<String>, Option<CrashNote>) {
    let (mut json, mut sandbox, mut crash) = (Vec::new(), None, None);
    for line in text.split('\n') {
        if let Some(rest) = line.strip_prefix("#sandbox ") {
            sandbox = Some(rest.to_string());
        } else if let Some(rest) = line
            .strip_prefix("#crash ")
            .or_else(|| line.strip_prefix("#exit "))
        {
            crash.get_or_insert_with(|| CrashNote::parse(rest));
        } else if json.is_empty() && line.starts_with('{') {
            json = line.as_bytes().to_vec();
        }
    }
    (json, sandbox, crash)
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
    cap: usize,
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
        if dropped > 0 && self.cap == OUTPUT_CAP {
            text.push_str(&format!("\n[{dropped} more bytes of output dropped]\n"));
        }
        (text, held)
    }
}

/// Reads a stream on its own thread, keeping at most `cap` bytes and counting the rest.
fn capture<R: Read + Send + 'static>(stream: Option<R>, cap: usize) -> Captured {
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
    Captured { data, done, cap }
}

/// Parses the child's JSON result; a missing or broken one is an error with context.
pub fn parse_result<T: serde::de::DeserializeOwned>(outcome: &Outcome) -> Result<T> {
    serde_json::from_slice(&outcome.result).context("child sent no valid result")
}
