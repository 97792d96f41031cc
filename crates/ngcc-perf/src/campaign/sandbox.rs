//! Running candidate code: the same binary re-executed as `__child`, with a timeout, a
//! result pipe on fd 3, captured (capped) stdout/stderr, and limits the child applies to
//! itself before loading the library (see `child::limits`).

use anyhow::{Context, Result};
use serde::Serialize;
use std::io::Read;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

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
    /// What the child wrote to fd 3 (its JSON result), if anything.
    pub result: Vec<u8>,
    pub wall_s: f64,
    pub command: Vec<String>,
}

impl Outcome {
    /// A short human explanation of a child that did not finish normally.
    pub fn failure_text(&self) -> Option<String> {
        match &self.exit {
            Exit::Code(0) => None,
            Exit::Code(c) => Some(format!("exited with status {c}")),
            Exit::Signal(s) => Some(format!("killed by signal {s} ({})", signal_name(*s))),
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
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            if libc::dup2(write_fd, 3) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            libc::setpgid(0, 0);
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
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
    let out_reader = capture(child.stdout.take());
    let err_reader = capture(child.stderr.take());
    let result_reader = std::thread::spawn(move || {
        let mut f = std::fs::File::from(read_end);
        let mut buf = Vec::new();
        let _ = f.read_to_end(&mut buf);
        buf
    });
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
    Ok(Outcome {
        exit,
        stdout: out_reader.join().unwrap_or_default(),
        stderr: err_reader.join().unwrap_or_default(),
        result: result_reader.join().unwrap_or_default(),
        wall_s,
        command,
    })
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

fn capture<R: Read + Send + 'static>(stream: Option<R>) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let Some(mut s) = stream else {
            return String::new();
        };
        let mut kept = Vec::new();
        let mut dropped = 0usize;
        let mut buf = [0u8; 8192];
        while let Ok(n) = s.read(&mut buf) {
            if n == 0 {
                break;
            }
            let room = OUTPUT_CAP.saturating_sub(kept.len());
            kept.extend_from_slice(&buf[..n.min(room)]);
            dropped += n.saturating_sub(room);
        }
        let mut text = String::from_utf8_lossy(&kept).to_string();
        if dropped > 0 {
            text.push_str(&format!("\n[{dropped} more bytes of output dropped]\n"));
        }
        text
    })
}

/// Parses the child's JSON result; a missing or broken one is an error with context.
pub fn parse_result<T: serde::de::DeserializeOwned>(outcome: &Outcome) -> Result<T> {
    serde_json::from_slice(&outcome.result).context("child sent no valid result")
}

pub fn scratch_for(run_root: &Path, what: &str) -> PathBuf {
    run_root.join("scratch").join(what)
}
