//! The worker: `ngcc-perf __jailed`, started the same way in every job (same argv, no
//! environment, the request on fd 0), so nothing it can read says which job it is. It applies
//! its own limits, RLIMIT_NPROC, Landlock and seccomp, reports them on the jail's report pipe
//! (fd 5) and closes it, and only then loads candidate code (`child`, which owns the
//! entry point and calls [`receive`] and [`lock_down`]).

use super::{Applied, Inner, JobSpec, Msg};
use anyhow::{Context, Result};
use std::io::Read;
use std::os::fd::{FromRawFd, RawFd};
use std::sync::OnceLock;

/// The worker's end of the report pipe.
pub const REPORT_FD: RawFd = 5;

static INNER: OnceLock<Inner> = OnceLock::new();

/// Writes one message line to `fd` (one write: lines stay whole on a shared pipe).
pub fn send(fd: RawFd, msg: &Msg) {
    let mut line = serde_json::to_vec(msg).unwrap_or_default();
    line.push(b'\n');
    // SAFETY: write(2) from a buffer we own; a failed report is the keeper's to notice.
    unsafe { libc::write(fd, line.as_ptr().cast(), line.len()) };
}

/// Between fork and exec: the request on fd 0, the report pipe on fd 5, then exec this
/// binary as `__jailed` through `exe` (an fd: the path need not exist in the jail), or the
/// job's tool, which runs this binary by path.
pub fn exec(exe: RawFd, request: RawFd, report: RawFd, tool: Option<&super::ToolExec>) -> ! {
    // SAFETY: plain syscalls in a freshly forked, single-threaded process.
    unsafe {
        // Out of the way first: no dup2 below may clobber another source.
        let high = |fd| libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 100);
        let (exe, request, report) = (high(exe), high(request), high(report));
        if exe < 0 || request < 0 || libc::dup2(request, 0) < 0 || libc::dup2(report, REPORT_FD) < 0
        {
            libc::_exit(126);
        }
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
        libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
        let argv = [
            c"ngcc-perf".as_ptr(),
            c"__jailed".as_ptr(),
            std::ptr::null(),
        ];
        let envp: [*const libc::c_char; 1] = [std::ptr::null()];
        if let Some(t) = tool {
            // Before seccomp, which need not admit personality(2). A failure is not fatal:
            // the job itself reads the persona it runs with and its record says so.
            if t.fixed_addresses {
                let current = libc::personality(0xffff_ffff);
                if current >= 0 {
                    libc::personality((current | libc::ADDR_NO_RANDOMIZE) as libc::c_ulong);
                }
            }
            if let Some(lock) = &t.lock {
                send(REPORT_FD, &Msg::PreExec(lock_before_tool(lock)));
            }
            let mut argv: Vec<*const libc::c_char> = t.argv.iter().map(|a| a.as_ptr()).collect();
            argv.push(std::ptr::null());
            let mut env: Vec<*const libc::c_char> = t.envp.iter().map(|a| a.as_ptr()).collect();
            env.push(std::ptr::null());
            libc::execve(t.program.as_ptr(), argv.as_ptr(), env.as_ptr());
            let e = std::io::Error::last_os_error();
            send(REPORT_FD, &Msg::ExecError(format!("exec of the tool: {e}")));
            libc::_exit(127);
        }
        libc::syscall(
            libc::SYS_execveat,
            exe,
            c"".as_ptr(),
            argv.as_ptr(),
            envp.as_ptr(),
            libc::AT_EMPTY_PATH,
        );
        let e = std::io::Error::last_os_error();
        send(
            REPORT_FD,
            &Msg::ExecError(format!("exec of the worker: {e}")),
        );
        libc::_exit(127);
    }
}

/// Landlock and seccomp for a job's tool, applied in the process that is about to exec it.
fn lock_before_tool(lock: &super::PreExec) -> Applied {
    let mut applied = Applied::default();
    if lock.landlock {
        match super::landlock::restrict_before_tool(&lock.read_only, &lock.read_write) {
            Ok(abi) => applied.landlock_abi = Some(abi),
            Err(e) => applied.landlock_missing = Some(format!("{e:#}")),
        }
    }
    if lock.seccomp {
        match super::seccomp::install_before_tool() {
            Ok(()) => applied.seccomp = true,
            Err(e) => applied.seccomp_missing = Some(format!("{e:#}")),
        }
    }
    applied
}

/// The worker's start (`ngcc-perf __jailed`, see `child::jailed`): reads its [`Inner`]
/// from fd 0 and keeps it for [`lock_down`]. Returns the nonce and the job (with the paths
/// this worker sees); `None` is a probe, which runs no candidate code.
pub fn receive() -> Result<(String, Option<JobSpec>)> {
    let mut text = Vec::new();
    // SAFETY: fd 0 is the request pipe the keeper set up; the File takes it over.
    let mut stdin = unsafe { std::fs::File::from_raw_fd(0) };
    stdin.read_to_end(&mut text).context("reading the job")?;
    let inner: Inner = serde_json::from_slice(&text).context("the job is not valid JSON")?;
    // SAFETY: /dev/null replaces the request pipe on fd 0 (the File above closes nothing
    // more: it is forgotten, dup2 closes the pipe).
    unsafe {
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
        if null > 0 {
            libc::dup2(null, 0);
            libc::close(null);
        }
    }
    std::mem::forget(stdin);
    let job = inner.job.clone();
    let nonce = inner.nonce.clone();
    let _ = INNER.set(inner);
    Ok((nonce, job))
}

/// Applies RLIMIT_NPROC, Landlock and seccomp to this process, reports them (with the
/// resource limits already applied, `limits`) and closes the report pipe. Called once, right
/// before the library is loaded; outside a worker it does nothing.
pub fn lock_down(limits: &str) {
    let Some(inner) = INNER.get() else {
        return;
    };
    let mut applied = Applied {
        limits: limits.to_string(),
        ..Applied::default()
    };
    if let Some(n) = inner.nproc {
        let lim = libc::rlimit {
            rlim_cur: n,
            rlim_max: n,
        };
        // SAFETY: setrlimit on our own process.
        applied.nproc = unsafe { libc::setrlimit(libc::RLIMIT_NPROC, &lim) } == 0;
    }
    if inner.landlock {
        match super::landlock::restrict(&inner.read_only, &inner.read_write) {
            Ok(abi) => applied.landlock_abi = Some(abi),
            Err(e) => applied.landlock_missing = Some(format!("{e:#}")),
        }
    } else {
        applied.landlock_missing = Some("switched off".into());
    }
    if inner.seccomp {
        match super::seccomp::install() {
            Ok(()) => applied.seccomp = true,
            Err(e) => applied.seccomp_missing = Some(format!("{e:#}")),
        }
    } else {
        applied.seccomp_missing = Some("switched off".into());
    }
    send(REPORT_FD, &Msg::Applied(applied));
    // SAFETY: closing our end of the report pipe: candidate code never holds it.
    unsafe { libc::close(REPORT_FD) };
}
