//! A jail's keeper and its job end with the orchestrator that started them, and with the
//! keeper itself when it is asked to end. The orchestrator is a real command,
//! `ngcc-perf import ngcc`, on a package whose own build (make, run in the jail to learn the
//! instance) starts `sh` with a background and a foreground `sleep` and waits.
//! The test finds that tree in /proc, signals one of its processes and awaits the end of
//! every process of the tree (pidfd), each wait bounded, failing with what is still alive.

use std::collections::{BTreeMap, BTreeSet};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The jail the orchestrator builds: every layer, or (as `NGCC_PERF_JAIL_OFF=user_ns`
/// gives it) the fallback without namespaces, where the tree is held together by the
/// keeper's process group only.
const FULL: &str = "full";
const NO_NAMESPACES: &str = "no_namespaces";
/// How long the jailed tree may take to appear: a jail starts in well under a second on a
/// quiet host; the bound is for a host at load 10-20 (the shared 2-core VM).
const APPEAR_S: u64 = 120;
/// How long the tree may take to go once signalled (the kernel's part: parent-death
/// signals and a PID namespace's end; seconds even under load).
const GONE_S: u64 = 60;

/// The orchestrator process and the folder of its package; killed (and its jail by the
/// code under test) if a test ends early, so no stopped or waiting orchestrator outlives a
/// failed test.
struct Orchestrator {
    child: Child,
    /// Held so the package outlives the orchestrator.
    _package: tempfile::TempDir,
}

impl Drop for Orchestrator {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

impl std::ops::Deref for Orchestrator {
    type Target = Child;
    fn deref(&self) -> &Child {
        &self.child
    }
}

impl std::ops::DerefMut for Orchestrator {
    fn deref_mut(&mut self) -> &mut Child {
        &mut self.child
    }
}

/// A package of one instance whose build never ends: `make` starts `sh`, which waits for a
/// background and a foreground `sleep`.
fn sleeping_package(at: &std::path::Path) -> std::path::PathBuf {
    let inst = at.join("Sleepy/Implementations/Sleepy-1");
    std::fs::create_dir_all(&inst).unwrap();
    std::fs::write(
        inst.join("KEM_AlgorithmInstance.h"),
        "#define CRYPTO_ALGNAME \"Sleepy-1\"\n",
    )
    .unwrap();
    std::fs::write(
        inst.join("Makefile"),
        "all:\n\tsleep 1001 & sleep 1002; wait\n",
    )
    .unwrap();
    at.join("Sleepy")
}

/// The orchestrator, `ngcc-perf import ngcc` on [`sleeping_package`], started with the
/// jail `jail` ([`FULL`] or [`NO_NAMESPACES`]).
fn orchestrator(jail: &str) -> Orchestrator {
    let dir = tempfile::tempdir().unwrap();
    let tree = dir.path().join("tree");
    sleeping_package(&tree);
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ngcc-perf"));
    cmd.arg("import")
        .arg("ngcc")
        .arg(&tree)
        .arg("--out")
        .arg(dir.path().join("cands"))
        .args(["--observe-timeout", "900"])
        .env_remove("NGCC_PERF_JAIL_OFF");
    if jail == NO_NAMESPACES {
        cmd.env("NGCC_PERF_JAIL_OFF", "user_ns");
    }
    let child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    Orchestrator {
        child,
        _package: dir,
    }
}

/// One process as /proc/<pid>/stat shows it.
#[derive(Clone, Debug)]
struct Proc {
    pid: i32,
    ppid: i32,
    comm: String,
    state: char,
    /// Clock ticks since boot at its start: with the pid, names one process.
    start: u64,
}

fn stat(pid: i32) -> Option<Proc> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (head, rest) = text.rsplit_once(')')?;
    let comm = head.split_once('(')?.1.to_string();
    let f: Vec<&str> = rest.split_whitespace().collect();
    // After the comm: state is field 3 of stat(5), ppid 4, starttime 22.
    Some(Proc {
        pid,
        ppid: f.get(1)?.parse().ok()?,
        comm,
        state: f.first()?.chars().next()?,
        start: f.get(19)?.parse().ok()?,
    })
}

fn all_procs() -> Vec<Proc> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(stat)
        .collect()
}

/// Every live descendant of `root`, by parent links.
fn descendants(root: i32) -> Vec<Proc> {
    let procs = all_procs();
    let mut children: BTreeMap<i32, Vec<&Proc>> = BTreeMap::new();
    for p in &procs {
        children.entry(p.ppid).or_default().push(p);
    }
    let mut out = Vec::new();
    let mut todo = vec![root];
    while let Some(pid) = todo.pop() {
        for c in children.get(&pid).into_iter().flatten() {
            if c.state != 'Z' && c.state != 'X' {
                out.push((*c).clone());
            }
            todo.push(c.pid);
        }
    }
    out
}

/// Polls until the jailed tree under `orch` holds both sleeps (bounded; the job gives no
/// other sign that it has started).
fn await_tree(orch: &mut Orchestrator) -> Vec<Proc> {
    let deadline = Instant::now() + Duration::from_secs(APPEAR_S);
    loop {
        let tree = descendants(orch.id() as i32);
        if tree.iter().filter(|p| p.comm == "sleep").count() == 2 {
            return tree;
        }
        if let Some(status) = orch.try_wait().unwrap() {
            let out = orch.wait_with_output_now();
            panic!("the orchestrator ended ({status}) before its job started:\n{out}");
        }
        assert!(
            Instant::now() < deadline,
            "the jailed sh and its two sleeps did not appear within {APPEAR_S} s: {tree:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

trait OutputNow {
    fn wait_with_output_now(&mut self) -> String;
}

impl OutputNow for Child {
    /// What the ended child printed.
    fn wait_with_output_now(&mut self) -> String {
        use std::io::Read;
        let mut s = String::new();
        if let Some(o) = self.stdout.as_mut() {
            let _ = o.read_to_string(&mut s);
        }
        if let Some(e) = self.stderr.as_mut() {
            let _ = e.read_to_string(&mut s);
        }
        s
    }
}

/// A pidfd for each process of `tree` that is still the same process (same start time
/// after the pidfd was opened, so a reused pid is never waited for).
fn pidfds(tree: &[Proc]) -> Vec<(Proc, OwnedFd)> {
    tree.iter()
        .filter_map(|p| {
            // SAFETY: pidfd_open returns a new descriptor or -1.
            let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, p.pid, 0) };
            if fd < 0 {
                return None; // already gone
            }
            // SAFETY: a fresh descriptor we own.
            let fd = unsafe { OwnedFd::from_raw_fd(fd as i32) };
            let same = stat(p.pid).is_some_and(|now| now.start == p.start);
            same.then(|| (p.clone(), fd))
        })
        .collect()
}

/// Waits (poll on the pidfds, bounded) until every process of `fds` has ended.
fn await_gone(fds: Vec<(Proc, OwnedFd)>, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(GONE_S);
    let mut left = fds;
    while !left.is_empty() {
        let now = Instant::now();
        let alive: Vec<String> = left
            .iter()
            .map(|(p, _)| format!("{} {} (parent {})", p.pid, p.comm, p.ppid))
            .collect();
        if now >= deadline {
            // Not left behind for the rest of the suite.
            for (_, fd) in &left {
                // SAFETY: a signal through a pidfd we own.
                unsafe { libc::syscall(libc::SYS_pidfd_send_signal, fd.as_raw_fd(), 9, 0, 0) };
            }
            panic!("{what}: still running {GONE_S} s later: {alive:?}");
        }
        let mut polls: Vec<libc::pollfd> = left
            .iter()
            .map(|(_, fd)| libc::pollfd {
                fd: fd.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            })
            .collect();
        let ms = (deadline - now).as_millis().min(i32::MAX as u128) as i32;
        // SAFETY: poll over descriptors we own, in a buffer we own.
        unsafe { libc::poll(polls.as_mut_ptr(), polls.len() as libc::nfds_t, ms) };
        let ended: BTreeSet<usize> = polls
            .iter()
            .enumerate()
            .filter(|(_, p)| p.revents != 0)
            .map(|(i, _)| i)
            .collect();
        left = left
            .into_iter()
            .enumerate()
            .filter(|(i, _)| !ended.contains(i))
            .map(|(_, x)| x)
            .collect();
    }
}

/// The tree's keeper: the orchestrator's child running `__child`.
fn keeper(orch: i32, tree: &[Proc]) -> i32 {
    tree.iter()
        .find(|p| p.ppid == orch)
        .map(|p| p.pid)
        .unwrap_or_else(|| panic!("no keeper under the orchestrator {orch}: {tree:?}"))
}

fn ended_with_orchestrator(jail: &str, signal: libc::c_int) {
    let mut orch = orchestrator(jail);
    let tree = await_tree(&mut orch);
    let fds = pidfds(&tree);
    assert!(fds.len() >= 4, "keeper, proxy, sh, 2 sleeps: {tree:?}");
    let jail = format!("the {jail} jail");
    // SAFETY: a signal to our own child.
    unsafe { libc::kill(orch.id() as i32, signal) };
    let status = orch.wait().unwrap();
    assert!(
        status.code().is_none(),
        "the orchestrator was killed: {status}"
    );
    await_gone(
        fds,
        &format!("{jail} of an orchestrator ended by signal {signal}"),
    );
}

#[test]
fn a_jail_ends_with_its_orchestrator_on_sigterm() {
    ended_with_orchestrator(FULL, libc::SIGTERM);
}

#[test]
fn a_jail_ends_with_its_orchestrator_on_sigkill() {
    ended_with_orchestrator(FULL, libc::SIGKILL);
}

#[test]
fn a_jail_without_namespaces_ends_with_its_orchestrator_on_sigterm() {
    ended_with_orchestrator(NO_NAMESPACES, libc::SIGTERM);
}

#[test]
fn a_jail_without_namespaces_ends_with_its_orchestrator_on_sigkill() {
    ended_with_orchestrator(NO_NAMESPACES, libc::SIGKILL);
}

#[test]
fn a_keeper_asked_to_end_takes_its_job_with_it() {
    keeper_asked_to_end(FULL);
}

#[test]
fn a_keeper_without_namespaces_asked_to_end_takes_its_job_with_it() {
    keeper_asked_to_end(NO_NAMESPACES);
}

fn keeper_asked_to_end(jail: &str) {
    let mut orch = orchestrator(jail);
    let tree = await_tree(&mut orch);
    let keeper = keeper(orch.id() as i32, &tree);
    let fds = pidfds(&tree);
    // The orchestrator is stopped meanwhile: it would kill the keeper's process group once
    // the keeper ended, and the test is whether the keeper itself takes its job along.
    // SAFETY: signals to our own child and to a process of its tree.
    unsafe {
        libc::kill(orch.id() as i32, libc::SIGSTOP);
        libc::kill(keeper, libc::SIGTERM);
    }
    await_gone(fds, &format!("the {jail} jail of a keeper sent SIGTERM"));
    // SAFETY: a signal to our own child.
    unsafe { libc::kill(orch.id() as i32, libc::SIGCONT) };
    // The orchestrator is not left waiting: its run ends (killed job, reported).
    let deadline = Instant::now() + Duration::from_secs(GONE_S);
    while orch.try_wait().unwrap().is_none() {
        assert!(
            Instant::now() < deadline,
            "the orchestrator still waits {GONE_S} s after its keeper ended"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // …and it goes on: the package's failed build is its problem, the import completes.
    let out = orch.wait_with_output_now();
    assert!(out.contains("import ngcc: packages"), "{out}");
}
