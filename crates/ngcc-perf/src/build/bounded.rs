//! Every compiler and linker call, bounded: a wall-clock timeout after which its whole
//! process group is killed, an address-space limit per process (driver, cc1, as, ld), a CPU
//! and a file-size limit, no core dumps, no stdin, and at most 1 MiB kept of each output
//! stream, and a temporary folder of its own (TMPDIR). `-include /dev/zero` or a macro bomb then
//! ends as a BUILDFAIL of one instance.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::time::Duration;

pub const DEFAULT_TIMEOUT_S: u64 = 600;
/// RLIMIT_AS of each compiler process, by default (`campaign --build-mem-limit`).
pub const DEFAULT_AS_LIMIT_MIB: u64 = 2048;
/// RLIMIT_FSIZE: no object or library is larger.
pub const FILE_LIMIT: u64 = 2 << 30;
/// Bytes kept of stdout and of stderr.
pub const OUTPUT_CAP: usize = 1 << 20;

static TIMEOUT_S: AtomicU64 = AtomicU64::new(DEFAULT_TIMEOUT_S);
static AS_LIMIT_MIB: AtomicU64 = AtomicU64::new(DEFAULT_AS_LIMIT_MIB);

/// The address-space limit of every later compiler process (`campaign --build-mem-limit`).
pub fn set_as_limit_mib(mib: u64) {
    AS_LIMIT_MIB.store(mib.max(64), Ordering::Relaxed);
}

fn as_limit_mib() -> u64 {
    AS_LIMIT_MIB.load(Ordering::Relaxed)
}

/// The wall-clock limit of every later call (`campaign --build-timeout`).
pub fn set_timeout(seconds: u64) {
    TIMEOUT_S.store(seconds.max(1), Ordering::Relaxed);
}

pub fn timeout_s() -> u64 {
    TIMEOUT_S.load(Ordering::Relaxed)
}

#[derive(Debug)]
pub struct Bounded {
    /// `None`: killed at the timeout.
    pub status: Option<ExitStatus>,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

impl Bounded {
    pub fn success(&self) -> bool {
        self.status.is_some_and(|s| s.success())
    }

    /// Why the call failed when it was the bounds that stopped it, in one line.
    pub fn bound_hit(&self, program: &str) -> Option<String> {
        use std::os::unix::process::ExitStatusExt;
        let Some(status) = self.status else {
            return Some(format!(
                "{program} killed after {} s (build timeout)",
                timeout_s()
            ));
        };
        let err = String::from_utf8_lossy(&self.stderr);
        if err.contains("out of memory") || err.contains("memory exhausted") {
            return Some(format!(
                "{program} ran out of memory (address-space limit of {} MiB per compiler process)",
                as_limit_mib()
            ));
        }
        if err.contains("File size limit exceeded") {
            return Some(format!(
                "{program} wrote a file larger than {} MiB",
                FILE_LIMIT >> 20
            ));
        }
        status.signal().map(|s| {
            format!(
                "{program} killed by signal {s} ({})",
                crate::sandbox::signal_name(s)
            )
        })
    }
}

fn reader<R: Read + Send + 'static>(stream: Option<R>) -> mpsc::Receiver<Vec<u8>> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut kept = Vec::new();
        let mut dropped = 0usize;
        if let Some(mut s) = stream {
            let mut buf = [0u8; 8192];
            while let Ok(n) = s.read(&mut buf) {
                if n == 0 {
                    break;
                }
                let room = OUTPUT_CAP.saturating_sub(kept.len());
                kept.extend_from_slice(&buf[..n.min(room)]);
                dropped += n.saturating_sub(room);
            }
        }
        if dropped > 0 {
            kept.extend_from_slice(
                format!("\n[{dropped} more bytes of output dropped]\n").as_bytes(),
            );
        }
        let _ = tx.send(kept);
    });
    rx
}

/// Runs `cmd` within the bounds and collects its (capped) output.
pub fn output(cmd: &mut Command) -> std::io::Result<Bounded> {
    let timeout = timeout_s();
    let as_limit = as_limit_mib();
    // The compiler's temporary files (cc*.s, cc*.o) go with this folder, also when the call
    // is killed before it could remove them.
    let tmp = tempfile::Builder::new().prefix("ngcc-cc").tempdir()?;
    cmd.env("TMPDIR", tmp.path());
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            let set = |r, v: u64| {
                let lim = libc::rlimit {
                    rlim_cur: v,
                    rlim_max: v,
                };
                libc::setrlimit(r, &lim);
            };
            set(libc::RLIMIT_AS, as_limit << 20);
            set(libc::RLIMIT_CPU, timeout + 5);
            set(libc::RLIMIT_FSIZE, FILE_LIMIT);
            set(libc::RLIMIT_CORE, 0);
            libc::setpgid(0, 0);
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            Ok(())
        });
    }
    let mut child = cmd.spawn()?;
    let pid = child.id() as i32;
    let out = reader(child.stdout.take());
    let err = reader(child.stderr.take());
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait());
    });
    let status = match rx.recv_timeout(Duration::from_secs(timeout)) {
        Ok(s) => Some(s?),
        Err(_) => None,
    };
    // SAFETY: the call's whole process group (cc1, as, ld…) goes, also after a timeout.
    unsafe { libc::kill(-pid, libc::SIGKILL) };
    if status.is_none() {
        let _ = rx.recv();
    }
    let grace = Duration::from_secs(2);
    drop(tmp);
    Ok(Bounded {
        status,
        stdout: out.recv_timeout(grace).unwrap_or_default(),
        stderr: err.recv_timeout(grace).unwrap_or_default(),
    })
}
