//! The keeper: `ngcc-perf __child`. Our code only, in the orchestrator's namespaces. It
//! builds the job's jail (namespaced if the kernel lets it, else a directly forked worker
//! with what remains), waits for the end, and reports the layers and the worker's real wait
//! status on fd 4, which no process of the jail holds.

use super::namespaces::{self, Plan, ProxyFds};
use super::{Applied, INNER_ID, Inner, Msg, NOBODY, Order, Report};
use crate::dataset::schema::{Containment, Layer, Usage, WaitStatus};
use anyhow::{Context, Result, anyhow, bail};
use std::io::{BufRead, BufReader, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::Instant;

/// The trusted channel to the orchestrator.
pub const TRUSTED_FD: RawFd = 4;

/// Sent by the orchestrator at a job's timeout. The keeper passes it to the proxy, which
/// kills the worker and reaps it as usual; the CPU time of both then reaches the keeper's
/// rusage. (A SIGKILL to the keeper would leave the jail to be reaped by someone else, and
/// a killed pid-namespace init auto-reaps its children: either way their CPU time is lost.)
pub const STOP_SIGNAL: libc::c_int = libc::SIGUSR1;

/// What a stop request does in this process: send `JOB_SIGNAL` to `JOB_PID`, or end the
/// process when it has started nobody yet.
static JOB_PID: AtomicI32 = AtomicI32::new(0);
static JOB_SIGNAL: AtomicI32 = AtomicI32::new(libc::SIGKILL);

extern "C" fn on_stop(_: libc::c_int) {
    let pid = JOB_PID.load(Ordering::SeqCst);
    // SAFETY: kill(2) and _exit(2) are async-signal-safe.
    unsafe {
        if pid > 0 {
            libc::kill(pid, JOB_SIGNAL.load(Ordering::SeqCst));
        } else {
            libc::_exit(1);
        }
    }
}

/// Signals that ask a process to end: an operator's `kill`, Ctrl-C, a closed terminal.
const END_SIGNALS: [libc::c_int; 3] = [libc::SIGTERM, libc::SIGINT, libc::SIGHUP];

/// An end request: the job goes first, then the keeper's whole process group (the
/// orchestrator made it the leader of its own; a job that is no namespace's init is in it),
/// then this process. By default these signals ended the keeper alone and left its job
/// running. In the proxy (pid 1 of the jail's PID namespace, which receives only signals it
/// handles) it ends the worker and the proxy, and with it the namespace.
extern "C" fn on_end(sig: libc::c_int) {
    let pid = JOB_PID.load(Ordering::SeqCst);
    // SAFETY: kill(2), getpid, getpgrp and _exit(2) are async-signal-safe.
    unsafe {
        if pid > 0 {
            libc::kill(pid, libc::SIGKILL);
        }
        if libc::getpgrp() == libc::getpid() {
            libc::kill(0, libc::SIGKILL);
        }
        libc::_exit(128 + sig);
    }
}

fn catch_stop() {
    // SAFETY: installs a handler that makes only async-signal-safe calls; SA_RESTART keeps
    // the keeper's reads and waits going until the stopped jail closes its pipes. The proxy
    // inherits it (as pid 1 of its namespace, only signals it handles reach it).
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_stop as *const () as libc::sighandler_t;
        sa.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&mut sa.sa_mask);
        libc::sigaction(STOP_SIGNAL, &sa, std::ptr::null_mut());
        let mut end: libc::sigaction = std::mem::zeroed();
        end.sa_sigaction = on_end as *const () as libc::sighandler_t;
        libc::sigfillset(&mut end.sa_mask);
        for sig in END_SIGNALS {
            libc::sigaction(sig, &end, std::ptr::null_mut());
        }
    }
}

/// From now on a stop request sends `signal` to `pid` (this process's child).
pub(super) fn stop_goes_to(pid: libc::pid_t, signal: libc::c_int) {
    JOB_SIGNAL.store(signal, Ordering::SeqCst);
    JOB_PID.store(pid, Ordering::SeqCst);
}

pub fn main() -> Result<ExitCode> {
    let started = Instant::now();
    catch_stop();
    let mut text = Vec::new();
    // SAFETY: fd 0 is the order pipe the orchestrator set up; it stays open (as fd 0) so
    // no later descriptor takes number 0.
    let mut stdin = std::mem::ManuallyDrop::new(unsafe { std::fs::File::from_raw_fd(0) });
    stdin.read_to_end(&mut text).context("reading the order")?;
    let order: Order = serde_json::from_slice(&text).context("the order is not valid JSON")?;
    // SAFETY: our own descriptor table: nothing but what we pass on crosses an exec.
    unsafe {
        libc::fcntl(TRUSTED_FD, libc::F_SETFD, libc::FD_CLOEXEC);
        libc::syscall(
            libc::SYS_close_range,
            5u32,
            u32::MAX,
            4u32, /* CLOEXEC */
        );
    }
    let report = keep(&order, started);
    send_report(&report);
    Ok(ExitCode::SUCCESS)
}

fn pipe() -> anyhow::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: pipe2 fills two fds we then own.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error()).context("pipe");
    }
    // SAFETY: both fds are fresh.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// Lets the unprivileged outside uid write the scratch folder (we are root).
fn hand_over(dir: &Path, id: u32) {
    let c = |p: &Path| std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap_or_default();
    // SAFETY: lchown on paths we created; symlinks are not followed.
    unsafe { libc::lchown(c(dir).as_ptr(), id, id) };
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            let p = e.path();
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                hand_over(&p, id);
            } else {
                unsafe { libc::lchown(c(&p).as_ptr(), id, id) };
            }
        }
    }
}

/// The request for the worker, written into a pipe it will read as fd 0.
fn request_pipe(inner: &Inner) -> anyhow::Result<OwnedFd> {
    let text = serde_json::to_vec(inner)?;
    let (r, w) = pipe()?;
    // The whole job must fit before the worker runs: a pipe holds 64 KiB unless grown (a
    // job is a few hundred bytes; a hash self-test's message up to 128 KiB of hex).
    if text.len() > 60_000 {
        let want = libc::c_int::try_from(text.len()).unwrap_or(libc::c_int::MAX);
        // SAFETY: fcntl on a pipe we own.
        let got = unsafe { libc::fcntl(w.as_raw_fd(), libc::F_SETPIPE_SZ, want) };
        if got < want {
            bail!("job of {} bytes too large for the request pipe", text.len());
        }
    }
    std::fs::File::from(w)
        .write_all(&text)
        .context("writing the job")?;
    Ok(r)
}

/// What the report pipe said, line by line, until every writer closed it. As soon as the
/// worker reports its layers, an early report goes to the orchestrator: a worker killed at
/// its timeout (and its keeper with it) still has its containment on record.
fn read_messages(r: OwnedFd, early: &Report, started: Instant) -> (Vec<Msg>, f64) {
    let mut msgs = Vec::new();
    let mut ready_s = 0.0;
    for line in BufReader::new(std::fs::File::from(r))
        .lines()
        .map_while(Result::ok)
    {
        let Ok(m) = serde_json::from_str::<Msg>(&line) else {
            continue;
        };
        if let Msg::Applied(a) = &m {
            ready_s = started.elapsed().as_secs_f64();
            let mut r = early.clone();
            r.setup_s = ready_s;
            let mut missing = Vec::new();
            with_applied(&mut r.containment, &mut r.limits, a, &mut missing);
            r.containment
                .missing
                .extend(missing.into_iter().map(|(_, m)| m));
            r.containment.layers.sort();
            send_report(&r);
        }
        msgs.push(m);
    }
    (msgs, ready_s)
}

/// One report line on the trusted channel (the last one counts).
fn send_report(r: &Report) {
    if let Ok(mut line) = serde_json::to_vec(r) {
        line.push(b'\n');
        // SAFETY: write(2) to our trusted pipe; a closed pipe is the orchestrator's business.
        unsafe { libc::write(TRUSTED_FD, line.as_ptr().cast(), line.len()) };
    }
}

fn keep(order: &Order, started: Instant) -> Report {
    // SAFETY: plain id queries.
    let (euid, egid) = unsafe { (libc::geteuid(), libc::getegid()) };
    let root = euid == 0;
    let off = |l: Layer| order.off.contains(&l);
    let scratch = match std::fs::canonicalize(&order.scratch) {
        Ok(s) => s,
        Err(e) => return failed(format!("scratch folder {}: {e}", order.scratch.display())),
    };
    let drop_uid = root && !off(Layer::Unprivileged);
    if drop_uid {
        hand_over(&scratch, NOBODY);
    }
    // SAFETY: O_PATH open of our own executable.
    let exe = unsafe { libc::open(c"/proc/self/exe".as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
    if exe < 0 {
        return failed(format!(
            "opening /proc/self/exe: {}",
            std::io::Error::last_os_error()
        ));
    }
    // SAFETY: exe is a fresh fd we own.
    let exe = unsafe { OwnedFd::from_raw_fd(exe) };
    let mut missing = Vec::new();
    if off(Layer::UserNs) {
        missing.push("namespaces: switched off".to_string());
    } else {
        let (ll, sc) = (!off(Layer::Landlock), !off(Layer::Seccomp));
        let plan = match &order.tool_run {
            Some(run) => Plan::for_tool(order, run, &scratch, ll, sc),
            None => Plan::new(order, &scratch, ll, sc),
        };
        match plan {
            Ok(plan) => {
                let outside = if drop_uid {
                    (NOBODY, NOBODY)
                } else {
                    (euid, egid)
                };
                match namespaced(order, &plan, exe.as_raw_fd(), outside, root, started) {
                    Ok(mut r) => {
                        r.containment.missing.splice(0..0, missing);
                        return r;
                    }
                    Err(e) => missing.push(format!("namespaces: {e:#}")),
                }
            }
            Err(e) => missing.push(format!("namespaces: {e:#}")),
        }
    }
    let mut r = if let Some(run) = &order.tool_run {
        direct_tool(order, run, &scratch, root, drop_uid, started)
    } else {
        direct(order, &scratch, exe.as_raw_fd(), root, drop_uid, started)
    };
    r.containment.missing.splice(0..0, missing);
    r
}

/// A tool run without namespaces: a forked stand-in for the proxy (as root: own network,
/// IPC and UTS namespace and the unprivileged uid) starts and follows the tool; Landlock
/// and seccomp still apply to the tool, every path being its host path anyway.
fn direct_tool(
    order: &Order,
    run: &super::ToolRun,
    scratch: &Path,
    root: bool,
    drop_uid: bool,
    started: Instant,
) -> Report {
    let off = |l: Layer| order.off.contains(&l);
    let plan = match Plan::for_tool(
        order,
        run,
        scratch,
        !off(Layer::Landlock),
        !off(Layer::Seccomp),
    ) {
        Ok(p) => p,
        Err(e) => return failed(format!("{e:#}")),
    };
    let Some(exec) = plan.tool_run.as_ref() else {
        return failed("no tool in the plan".into());
    };
    let (rep_r, rep_w) = match pipe() {
        Ok(p) => p,
        Err(e) => return failed(format!("{e:#}")),
    };
    let net = root && !off(Layer::NetNs);
    // SAFETY: a plain id query.
    let keeper = unsafe { libc::getpid() };
    // SAFETY: fork of this single-threaded process; the child never returns.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        // SAFETY: as above, in the child.
        unsafe {
            libc::close(TRUSTED_FD);
            if net {
                let ok =
                    libc::unshare(libc::CLONE_NEWNET | libc::CLONE_NEWIPC | libc::CLONE_NEWUTS)
                        == 0;
                super::worker::send(rep_w.as_raw_fd(), &Msg::Isolated { net: ok });
            }
            if drop_uid
                && (libc::setgroups(0, std::ptr::null()) != 0
                    || libc::setresgid(NOBODY, NOBODY, NOBODY) != 0
                    || libc::setresuid(NOBODY, NOBODY, NOBODY) != 0)
            {
                libc::_exit(125);
            }
            // After the uid change, which would clear it (prctl(2)); a keeper that died
            // before this took effect has left us with another parent.
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            if libc::getppid() != keeper {
                libc::_exit(1);
            }
        }
        super::tool_exec::run_tree(exec, rep_w.as_raw_fd(), None);
    }
    if pid < 0 {
        return failed(format!("fork: {}", std::io::Error::last_os_error()));
    }
    stop_goes_to(pid, STOP_SIGNAL);
    drop(rep_w);
    let mut early = Report::default();
    if drop_uid || !root {
        early.containment.layers.push(Layer::Unprivileged);
    }
    let (msgs, setup_s) = read_messages(rep_r, &early, started);
    let mut status = 0;
    // SAFETY: reaping our child.
    unsafe { libc::waitpid(pid, &mut status, 0) };
    let mut report = Report { setup_s, ..early };
    if msgs
        .iter()
        .any(|m| matches!(m, Msg::Isolated { net: true }))
    {
        report
            .containment
            .layers
            .extend([Layer::NetNs, Layer::IpcNs, Layer::UtsNs]);
    }
    finish(report, msgs, None)
}

fn failed(error: String) -> Report {
    Report {
        error: Some(error),
        ..Report::default()
    }
}

/// Folds the worker's own layers into the report; the layers it could not apply go to
/// `missing` with their layer, so the caller can decide on the layer, never on the line.
fn with_applied(
    c: &mut Containment,
    limits: &mut String,
    a: &Applied,
    missing: &mut Vec<(Layer, String)>,
) {
    *limits = a.limits.clone();
    if let Some(abi) = a.landlock_abi {
        c.layers.push(Layer::Landlock);
        c.landlock_abi = Some(abi);
    }
    if let Some(m) = &a.landlock_missing {
        missing.push((Layer::Landlock, format!("landlock: {m}")));
    }
    if a.seccomp {
        c.layers.push(Layer::Seccomp);
    }
    if let Some(m) = &a.seccomp_missing {
        missing.push((Layer::Seccomp, format!("seccomp: {m}")));
    }
    if a.nproc {
        c.layers.push(Layer::Nproc);
    }
}

fn finish(mut report: Report, msgs: Vec<Msg>, waited: Option<(WaitStatus, Usage)>) -> Report {
    let mut started_worker = false;
    let mut missing = Vec::new();
    for m in msgs {
        match m {
            Msg::Applied(a) => {
                started_worker = true;
                with_applied(
                    &mut report.containment,
                    &mut report.limits,
                    &a,
                    &mut missing,
                );
            }
            Msg::Exit { status, usage } => {
                report.worker_exit = Some(status);
                report.worker_usage = Some(usage);
            }
            Msg::ExecError(e) => {
                if report.error.is_none() {
                    report.error = Some(e);
                    report.exec_failed = true;
                }
            }
            Msg::SetupError(e) => {
                report.error.get_or_insert(e);
            }
            Msg::Exec(e) => report.execs.push(e),
            Msg::Scratch(u) => {
                report.containment.layers.push(Layer::ScratchTmpfs);
                report.scratch = Some(u);
            }
            Msg::PreExec(a) => {
                let kept = std::mem::take(&mut report.limits);
                with_applied(
                    &mut report.containment,
                    &mut report.limits,
                    &a,
                    &mut missing,
                );
                report.limits = kept;
            }
            Msg::Ready | Msg::Isolated { .. } => {}
        }
    }
    if let Some((status, usage)) = waited {
        report.worker_exit = Some(status);
        report.worker_usage = Some(usage);
    }
    if report.worker_exit.is_none() && report.error.is_none() {
        report.error = Some(if started_worker {
            "the jail's proxy ended without reporting the worker".into()
        } else {
            "the worker never started".into()
        });
    }
    report.containment.layers.sort();
    report.containment.layers.dedup();
    // A layer applied before a tool's exec is in force even where the worker inside the tool
    // could not apply it again: its "missing" line goes.
    let c = &mut report.containment;
    for (layer, line) in missing {
        if !c.has(layer) {
            c.missing.push(line);
        }
    }
    report
}

fn write_file(path: &str, text: &str) -> anyhow::Result<()> {
    std::fs::write(path, text).with_context(|| path.to_string())
}

fn namespaced(
    order: &Order,
    plan: &Plan,
    exe: RawFd,
    outside: (u32, u32),
    root: bool,
    started: Instant,
) -> anyhow::Result<Report> {
    let request = request_pipe(&plan.inner)?;
    let (rep_r, rep_w) = pipe()?;
    let (go_r, go_w) = pipe()?;
    let fds = ProxyFds {
        exe,
        request: request.as_raw_fd(),
        report: rep_w.as_raw_fd(),
        go: go_r.as_raw_fd(),
        go_keeper: go_w.as_raw_fd(),
    };
    let flags = libc::CLONE_NEWUSER
        | libc::CLONE_NEWPID
        | libc::CLONE_NEWNS
        | libc::CLONE_NEWNET
        | libc::CLONE_NEWIPC
        | libc::CLONE_NEWUTS;
    // SAFETY: a fork-like clone (no new stack) of this single-threaded process; the child
    // never returns from `proxy`.
    let pid = unsafe {
        libc::syscall(
            libc::SYS_clone,
            (flags | libc::SIGCHLD) as libc::c_ulong,
            0usize,
            0usize,
            0usize,
            0usize,
        )
    };
    if pid == 0 {
        namespaces::proxy(plan, &fds, root);
    }
    if pid < 0 {
        return Err(std::io::Error::last_os_error()).context("clone");
    }
    let pid = pid as libc::pid_t;
    stop_goes_to(pid, STOP_SIGNAL);
    drop((request, rep_w, go_r));
    let maps = || -> anyhow::Result<()> {
        if !root {
            write_file(&format!("/proc/{pid}/setgroups"), "deny")?;
        }
        write_file(
            &format!("/proc/{pid}/uid_map"),
            &format!("{INNER_ID} {} 1\n", outside.0),
        )?;
        write_file(
            &format!("/proc/{pid}/gid_map"),
            &format!("{INNER_ID} {} 1\n", outside.1),
        )
    };
    if let Err(e) = maps() {
        // SAFETY: killing and reaping the proxy we just made.
        unsafe {
            libc::kill(pid, libc::SIGKILL);
            libc::waitpid(pid, std::ptr::null_mut(), 0);
        }
        return Err(e);
    }
    // The job's control groups, entered by the proxy before it starts anything.
    let (groups, group_missing) = job_groups(order, pid);
    // The write end stays open until the proxy is reaped: its end of file tells the proxy
    // that this keeper died (see `namespaces::die_with_keeper`).
    let mut go_w = std::fs::File::from(go_w);
    go_w.write_all(b"g").context("starting the proxy")?;
    let mut report = Report::default();
    report.containment.missing.extend(group_missing);
    report.containment.layers = vec![
        Layer::UserNs,
        Layer::PidNs,
        Layer::MountNs,
        Layer::NetNs,
        Layer::IpcNs,
        Layer::UtsNs,
    ];
    if outside.0 != 0 {
        report.containment.layers.push(Layer::Unprivileged);
    }
    if let Some(g) = &groups {
        report
            .containment
            .layers
            .extend([Layer::MemoryCgroup, Layer::PidsCgroup]);
        report.containment.cgroup = Some(g.version().into());
    }
    let (msgs, ready_s) = read_messages(rep_r, &report, started);
    let mut status = 0;
    // SAFETY: reaping our child.
    unsafe { libc::waitpid(pid, &mut status, 0) };
    drop(go_w);
    if let Some(Msg::SetupError(e)) = msgs.iter().find(|m| matches!(m, Msg::SetupError(_))) {
        return Err(anyhow!(e.clone()));
    }
    report.setup_s = ready_s;
    if let Some(g) = groups {
        report.bound_hit = group_hit(&g.usage(), &order.bounds);
    }
    Ok(finish(report, msgs, None))
}

/// Makes the job's memory and pids groups and moves the (waiting) proxy into them; or says
/// why there are none (the job keeps its rlimits).
fn job_groups(
    order: &Order,
    proxy: libc::pid_t,
) -> (Option<super::cgroup::JobGroups>, Vec<String>) {
    let off = |l: Layer| order.off.contains(&l);
    if off(Layer::MemoryCgroup) || off(Layer::PidsCgroup) {
        return (None, vec!["cgroup: switched off".into()]);
    }
    let name = format!("ngcc-job-{}", &order.nonce[..order.nonce.len().min(16)]);
    let b = &order.bounds;
    match super::cgroup::JobGroups::create(&name, b.memory_bytes, b.pids) {
        Ok(g) => match g.enter(proxy) {
            Ok(()) => (Some(g), Vec::new()),
            Err(e) => (None, vec![format!("cgroup: {e:#} (rlimits only)")]),
        },
        Err(e) => (None, vec![format!("cgroup: {e:#} (rlimits only)")]),
    }
}

/// The whole-job bound the job ran into, in one line.
fn group_hit(u: &super::cgroup::Usage, b: &super::JobBounds) -> Option<String> {
    let mut parts = Vec::new();
    if u.oom_kills > 0 {
        parts.push(format!(
            "the job's memory bound ({} MiB for all its processes and its scratch together) was reached: the kernel killed {} of its processes",
            b.memory_bytes >> 20,
            u.oom_kills
        ));
    }
    if u.pids_refused > 0 {
        parts.push(format!(
            "{} new processes or threads were refused at the job's bound of {}",
            u.pids_refused, b.pids
        ));
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// Without namespaces: the worker is our own child; as root it still gets a network, IPC
/// and UTS namespace of its own and drops to the unprivileged uid.
fn direct(
    order: &Order,
    scratch: &Path,
    exe: RawFd,
    root: bool,
    drop_uid: bool,
    started: Instant,
) -> Report {
    let off = |l: Layer| order.off.contains(&l);
    let mut read_only = namespaces::system_paths();
    let job = order.job.clone();
    if let Some(f) = job.as_ref().map(|j| &j.files) {
        read_only.push(f.library.clone());
        read_only.extend(f.setup_dir.iter().cloned());
    }
    let inner = Inner {
        nonce: order.nonce.clone(),
        job,
        read_only,
        read_write: vec![scratch.to_path_buf()],
        landlock: !off(Layer::Landlock),
        seccomp: !off(Layer::Seccomp),
        nproc: None,
    };
    let tool = match &order.tool {
        Some(t) => match super::running_exe(scratch)
            .context("locating the ngcc-perf executable")
            .and_then(|exe| Ok((super::ToolExec::new(t, &exe, scratch)?, exe)))
        {
            Ok((mut t, exe)) => {
                let mut read_only = inner.read_only.clone();
                read_only.push(exe);
                t.lock = Some(super::PreExec {
                    read_only,
                    read_write: inner.read_write.clone(),
                    landlock: inner.landlock,
                    seccomp: inner.seccomp,
                });
                Some(t)
            }
            Err(e) => return failed(format!("{e:#}")),
        },
        None => None,
    };
    let pipes = request_pipe(&inner).and_then(|r| Ok((r, pipe()?)));
    let (request, (rep_r, rep_w)) = match pipes {
        Ok(p) => p,
        Err(e) => return failed(format!("{e:#}")),
    };
    let net = root && !off(Layer::NetNs);
    let scratch_c =
        std::ffi::CString::new(scratch.as_os_str().as_encoded_bytes()).unwrap_or_default();
    // SAFETY: fork of this single-threaded process; the child only makes syscalls and execs.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        // SAFETY: as above, in the child.
        unsafe {
            libc::close(TRUSTED_FD);
            if net {
                let ok =
                    libc::unshare(libc::CLONE_NEWNET | libc::CLONE_NEWIPC | libc::CLONE_NEWUTS)
                        == 0;
                super::worker::send(rep_w.as_raw_fd(), &Msg::Isolated { net: ok });
            }
            if drop_uid
                && (libc::setgroups(0, std::ptr::null()) != 0
                    || libc::setresgid(NOBODY, NOBODY, NOBODY) != 0
                    || libc::setresuid(NOBODY, NOBODY, NOBODY) != 0)
            {
                libc::_exit(125);
            }
            if libc::chdir(scratch_c.as_ptr()) != 0 {
                libc::_exit(125);
            }
            super::worker::exec(exe, request.as_raw_fd(), rep_w.as_raw_fd(), tool.as_ref());
        }
    }
    if pid < 0 {
        return failed(format!("fork: {}", std::io::Error::last_os_error()));
    }
    stop_goes_to(pid, libc::SIGKILL);
    drop((request, rep_w));
    let mut early = Report::default();
    if drop_uid || !root {
        early.containment.layers.push(Layer::Unprivileged);
    }
    let (msgs, setup_s) = read_messages(rep_r, &early, started);
    let mut status = 0;
    // SAFETY: wait4 on our own child into structs we own.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
    let mut report = Report {
        setup_s,
        ..Report::default()
    };
    if msgs
        .iter()
        .any(|m| matches!(m, Msg::Isolated { net: true }))
    {
        report
            .containment
            .layers
            .extend([Layer::NetNs, Layer::IpcNs, Layer::UtsNs]);
    }
    if drop_uid || !root {
        report.containment.layers.push(Layer::Unprivileged);
    }
    let waited = Some((WaitStatus::from_raw(status), Usage::from_rusage(&ru)));
    finish(report, msgs, waited)
}
