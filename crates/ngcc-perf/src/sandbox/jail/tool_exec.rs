//! A tool run inside the jail (`sandbox::tool`): the proxy forks the tool's first process,
//! which applies the run's limits, Landlock and seccomp to itself and then execs the tool;
//! the proxy reaps, and (for a traced run) follows every fork and exec of the tree with
//! ptrace. Tracing is done here, from the proxy (our code, outside the tool's Landlock and
//! seccomp), because only the kernel sees every exec: a recorder put first on PATH misses a
//! compiler called by absolute path, by `execve` from a build script, or through
//! `/etc/alternatives`.

use super::{Applied, ExecRecord, Msg, ToolLimits, ToolRun};
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// Landlock rules of a tool run, as paths inside the jail.
#[derive(Debug, Default)]
pub struct Rules {
    /// Readable and executable (system folders).
    pub read_exec: Vec<PathBuf>,
    /// Readable and executable inputs (a candidate's build scripts run from here).
    pub read_only: Vec<PathBuf>,
    /// Device nodes: read and write (`>/dev/null`).
    pub devices: Vec<PathBuf>,
    /// The scratch folder: everything, executing what the tool built included.
    pub read_write: Vec<PathBuf>,
}

/// Everything the tool's first process needs, built before any fork.
#[derive(Debug)]
pub struct ToolRunExec {
    program: CString,
    argv: Vec<CString>,
    envp: Vec<CString>,
    cwd: CString,
    limits: ToolLimits,
    trace: bool,
    rules: Rules,
    landlock: bool,
    seccomp: bool,
}

/// At most this many execs are recorded (a runaway loop still ends at the wall bound).
const MAX_EXECS: usize = 100_000;
/// At most this many bytes of one exec's argv are kept.
const MAX_ARGV_BYTES: usize = 256 * 1024;

fn cstring(b: &[u8], what: &str) -> anyhow::Result<CString> {
    CString::new(b).map_err(|_| anyhow::anyhow!("{what} holds a NUL byte"))
}

impl ToolRunExec {
    pub fn new(
        run: &ToolRun,
        rules: Rules,
        landlock: bool,
        seccomp: bool,
    ) -> anyhow::Result<ToolRunExec> {
        let mut argv = vec![cstring(run.program.as_os_str().as_bytes(), "program")?];
        for a in &run.args {
            argv.push(cstring(a.as_bytes(), "argument")?);
        }
        let envp = run
            .env
            .iter()
            .map(|(k, v)| cstring(format!("{k}={v}").as_bytes(), "environment"))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(ToolRunExec {
            program: cstring(run.program.as_os_str().as_bytes(), "program")?,
            argv,
            envp,
            cwd: cstring(run.cwd.as_os_str().as_bytes(), "working directory")?,
            limits: run.limits,
            trace: run.trace,
            rules,
            landlock,
            seccomp,
        })
    }
}

fn set_limit(resource: libc::__rlimit_resource_t, value: u64) -> bool {
    let lim = libc::rlimit {
        rlim_cur: value,
        rlim_max: value,
    };
    // SAFETY: setrlimit on our own process.
    unsafe { libc::setrlimit(resource, &lim) == 0 }
}

/// In the tool's first process (a fresh fork of the proxy): limits, Landlock, seccomp, a
/// report of them, then exec. Never returns.
fn start(run: &ToolRunExec, report: libc::c_int) -> ! {
    let send = |m: &Msg| super::worker::send(report, m);
    // SAFETY: plain syscalls in a single-threaded fresh fork.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDONLY);
        if null < 0 || libc::dup2(null, 0) < 0 {
            libc::_exit(126);
        }
        libc::close(null);
        // Only stdin, stdout and stderr cross the exec.
        libc::syscall(
            libc::SYS_close_range,
            3u32,
            u32::MAX,
            4u32, /* CLOEXEC */
        );
        if libc::chdir(run.cwd.as_ptr()) != 0 {
            send(&Msg::ExecError(format!(
                "working directory {}: {}",
                run.cwd.to_string_lossy(),
                std::io::Error::last_os_error()
            )));
            libc::_exit(126);
        }
    }
    let l = run.limits;
    let mib = 1u64 << 20;
    let mut ok = set_limit(libc::RLIMIT_AS, l.as_mib.saturating_mul(mib))
        && set_limit(libc::RLIMIT_CPU, l.cpu_s)
        && set_limit(libc::RLIMIT_FSIZE, l.fsize_mib.saturating_mul(mib))
        && set_limit(libc::RLIMIT_NOFILE, l.nofile)
        && set_limit(libc::RLIMIT_CORE, 0);
    let nproc = set_limit(libc::RLIMIT_NPROC, l.nproc);
    ok &= nproc;
    if !ok {
        send(&Msg::ExecError(format!(
            "setting the tool's limits: {}",
            std::io::Error::last_os_error()
        )));
        // SAFETY: ending this process.
        unsafe { libc::_exit(126) };
    }
    let mut applied = Applied {
        limits: format!(
            "tool limits: address space {} MiB, CPU {} s, file size {} MiB, {} processes, {} open files",
            l.as_mib, l.cpu_s, l.fsize_mib, l.nproc, l.nofile
        ),
        nproc,
        ..Applied::default()
    };
    // SAFETY: asking to be traced by our parent, the proxy, before any filter is in place
    // (seccomp denies ptrace to the tool itself).
    if run.trace && unsafe { libc::ptrace(libc::PTRACE_TRACEME, 0, 0, 0) } != 0 {
        send(&Msg::ExecError(format!(
            "PTRACE_TRACEME: {}",
            std::io::Error::last_os_error()
        )));
        unsafe { libc::_exit(126) };
    }
    if run.landlock {
        match super::landlock::restrict_tool(&run.rules) {
            Ok(abi) => applied.landlock_abi = Some(abi),
            Err(e) => applied.landlock_missing = Some(format!("{e:#}")),
        }
    } else {
        applied.landlock_missing = Some("switched off".into());
    }
    if run.seccomp {
        match super::seccomp::install_tool() {
            Ok(()) => applied.seccomp = true,
            Err(e) => applied.seccomp_missing = Some(format!("{e:#}")),
        }
    } else {
        applied.seccomp_missing = Some("switched off".into());
    }
    send(&Msg::Applied(applied));
    let mut argv: Vec<*const libc::c_char> = run.argv.iter().map(|a| a.as_ptr()).collect();
    argv.push(std::ptr::null());
    let mut envp: Vec<*const libc::c_char> = run.envp.iter().map(|a| a.as_ptr()).collect();
    envp.push(std::ptr::null());
    // SAFETY: stop until the proxy has set its trace options; then exec with arrays that
    // live until the call.
    unsafe {
        if run.trace {
            libc::raise(libc::SIGSTOP);
        }
        libc::execve(run.program.as_ptr(), argv.as_ptr(), envp.as_ptr());
    }
    let e = std::io::Error::last_os_error();
    send(&Msg::ExecError(format!(
        "exec of {}: {e}",
        run.program.to_string_lossy()
    )));
    // SAFETY: ending this process.
    unsafe { libc::_exit(127) }
}

/// What `/proc/<pid>` says about a process that has just exec'd.
fn exec_record(seq: usize, pid: libc::pid_t) -> ExecRecord {
    let proc_ = PathBuf::from(format!("/proc/{pid}"));
    let link = |name: &str| std::fs::read_link(proc_.join(name)).unwrap_or_default();
    let mut cmdline = Vec::new();
    if let Ok(f) = std::fs::File::open(proc_.join("cmdline")) {
        use std::io::Read;
        let _ = f.take(MAX_ARGV_BYTES as u64).read_to_end(&mut cmdline);
    }
    if cmdline.last() == Some(&0) {
        cmdline.pop();
    }
    let argv = if cmdline.is_empty() {
        Vec::new()
    } else {
        cmdline
            .split(|b| *b == 0)
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect()
    };
    ExecRecord {
        seq,
        pid,
        program: link("exe"),
        argv,
        cwd: link("cwd"),
    }
}

/// The tmpfs scratch of a namespaced run, to copy back when the tool has ended.
pub struct ScratchOut<'a> {
    pub inside: &'a Path,
    pub host: Option<&'a std::os::fd::OwnedFd>,
    pub bounds: Option<super::scratchfs::ScratchBounds>,
}

/// The proxy's part of a tool run: start the tool, reap (and, traced, follow) its tree,
/// report how the tool ended, and exit, which ends every process left in the namespace.
/// `scratch`: in a PID namespace of our own, kill the rest of the tree and copy the scratch
/// back first.
pub fn run_tree(run: &ToolRunExec, report: libc::c_int, scratch: Option<&ScratchOut>) -> ! {
    let send = |m: &Msg| super::worker::send(report, m);
    // SAFETY: fork of the single-threaded proxy; the child never returns from `start`.
    let tool = unsafe { libc::fork() };
    if tool == 0 {
        start(run, report);
    }
    if tool < 0 {
        send(&Msg::ExecError(format!(
            "fork of the tool: {}",
            std::io::Error::last_os_error()
        )));
        // SAFETY: ending the proxy.
        unsafe { libc::_exit(1) };
    }
    super::keeper::stop_goes_to(tool, libc::SIGKILL);
    let mut seq = 0usize;
    let mut options_set = false;
    loop {
        let mut status = 0;
        // SAFETY: wait4 into structs we own.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        let pid = unsafe { libc::wait4(-1, &mut status, libc::__WALL, &mut ru) };
        if pid < 0 {
            if std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            // SAFETY: ending the proxy (no child left).
            unsafe { libc::_exit(1) };
        }
        if libc::WIFSTOPPED(status) {
            let sig = libc::WSTOPSIG(status);
            let event = (status >> 16) & 0xff;
            let mut inject = 0;
            if pid == tool && !options_set {
                let opts = libc::PTRACE_O_TRACEEXEC
                    | libc::PTRACE_O_TRACEFORK
                    | libc::PTRACE_O_TRACEVFORK
                    | libc::PTRACE_O_TRACECLONE
                    | libc::PTRACE_O_EXITKILL;
                // SAFETY: our tracee, stopped.
                unsafe { libc::ptrace(libc::PTRACE_SETOPTIONS, pid, 0, opts) };
                options_set = true;
            } else if event == libc::PTRACE_EVENT_EXEC {
                if seq < MAX_EXECS {
                    send(&Msg::Exec(exec_record(seq, pid)));
                }
                seq += 1;
            } else if event == 0 && sig != libc::SIGSTOP && sig != libc::SIGTRAP {
                // A real signal for the tracee: deliver it. (SIGSTOP is the start of a new
                // traced process, SIGTRAP our own events.)
                inject = sig;
            }
            // SAFETY: resuming our stopped tracee.
            unsafe { libc::ptrace(libc::PTRACE_CONT, pid, 0, inject) };
            continue;
        }
        if pid == tool {
            if let Some(s) = scratch {
                super::namespaces::collect_scratch(s, report);
            }
            send(&Msg::Exit {
                status: crate::dataset::schema::WaitStatus::from_raw(status),
                usage: crate::dataset::schema::Usage::from_rusage(&ru),
            });
            // SAFETY: ending the proxy; the kernel kills the rest of the namespace.
            unsafe { libc::_exit(0) };
        }
    }
}

/// The environment a tool gets: nothing of ours, only these and the caller's additions.
pub fn base_env(scratch: &Path) -> Vec<(String, String)> {
    let s = scratch.to_string_lossy();
    vec![
        ("PATH".into(), "/usr/bin:/bin".into()),
        ("HOME".into(), s.to_string()),
        ("LANG".into(), "C".into()),
        ("TMPDIR".into(), format!("{s}/tmp")),
    ]
}
