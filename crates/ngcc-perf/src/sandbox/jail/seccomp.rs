//! The worker's seccomp filter, installed last before the library is loaded. Candidate code
//! needs none of these calls; they fail with EPERM (so honest-but-odd code sees an error,
//! not a kill): new processes (threads stay allowed), exec, ptrace and peeking into other
//! processes, sockets, sessions and process groups, mounts and namespaces, CPU affinity and
//! scheduling (keeps the pin), kernel-wide facilities (bpf, perf counters, keyrings, modules,
//! kexec, io_uring, userfaultfd), signals to any process but the worker itself, more
//! seccomp filters, and every `prctl` but the few readers and namers libc and std use
//! ([`PRCTL_ALLOWED`]): `PR_SET_TSC` would let a SIGSEGV handler answer each `rdtsc` (the
//! counter and the vDSO clock alike) with scaled values, a filter of its own could trap and
//! answer our clock system calls, and `PR_SET_SPECULATION_CTRL`, `PR_SET_THP_DISABLE` or
//! `PR_SET_TIMERSLACK` change how fast the same code runs. On x86_64 `arch_prctl`'s
//! `ARCH_SET_CPUID` (CPUID faulting, the same trick for `cpuid`) is denied too.
//! `clone3` answers ENOSYS, so glibc falls back to `clone`, whose flags a filter can see.

use anyhow::Result;
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};
use std::collections::BTreeMap;

#[cfg(target_arch = "x86_64")]
const ARCH: TargetArch = TargetArch::x86_64;
#[cfg(target_arch = "aarch64")]
const ARCH: TargetArch = TargetArch::aarch64;

/// Denied to candidate code whatever their arguments: everything denied to a tool run
/// ([`tool_denied`]), and what a tool may do but a library never needs: exec, raw sockets
/// (seccomp filters them by family for tools), a new session or process group, signalling
/// by thread id or pidfd, scheduling parameters, and a seccomp filter of its own.
fn denied() -> Vec<libc::c_long> {
    let mut v = tool_denied();
    v.extend([
        libc::SYS_execve,
        libc::SYS_execveat,
        libc::SYS_pidfd_open,
        libc::SYS_pidfd_send_signal,
        libc::SYS_socket,
        libc::SYS_socketpair,
        libc::SYS_setsid,
        libc::SYS_setpgid,
        libc::SYS_sched_setparam,
        libc::SYS_tkill,
        libc::SYS_seccomp,
    ]);
    #[cfg(target_arch = "x86_64")]
    v.extend([libc::SYS_fork, libc::SYS_vfork]);
    v
}

/// The `prctl` options the worker may still call: readers, and naming a thread
/// (`PR_SET_NAME`, std's thread names) or an anonymous mapping (`PR_SET_VMA`, glibc's malloc).
pub const PRCTL_ALLOWED: &[u64] = &[
    libc::PR_GET_PDEATHSIG as u64,
    libc::PR_GET_DUMPABLE as u64,
    libc::PR_GET_KEEPCAPS as u64,
    libc::PR_SET_NAME as u64,
    libc::PR_GET_NAME as u64,
    libc::PR_GET_SECCOMP as u64,
    libc::PR_CAPBSET_READ as u64,
    libc::PR_GET_TSC as u64,
    libc::PR_GET_TIMERSLACK as u64,
    libc::PR_GET_NO_NEW_PRIVS as u64,
    libc::PR_GET_THP_DISABLE as u64,
    0x5356_4d41, // PR_SET_VMA
];

/// arch_prctl ARCH_SET_CPUID (asm/prctl.h).
#[cfg(target_arch = "x86_64")]
const ARCH_SET_CPUID: u64 = 0x1012;

fn cond(arg: u8, op: SeccompCmpOp, value: u64) -> Result<SeccompCondition> {
    SeccompCondition::new(arg, SeccompCmpArgLen::Qword, op, value).map_err(anyhow::Error::from)
}

fn cond32(arg: u8, op: SeccompCmpOp, value: u64) -> Result<SeccompCondition> {
    SeccompCondition::new(arg, SeccompCmpArgLen::Dword, op, value).map_err(anyhow::Error::from)
}

fn rule(conditions: Vec<SeccompCondition>) -> Result<SeccompRule> {
    SeccompRule::new(conditions).map_err(anyhow::Error::from)
}

/// The EPERM filter for a worker whose pid (in its own namespace) is `pid`.
fn eperm_filter(pid: u32, allow_exec: bool) -> Result<BpfProgram> {
    let pid = u64::from(pid);
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for s in denied() {
        if allow_exec && (s == libc::SYS_execve || s == libc::SYS_execveat) {
            continue;
        }
        rules.insert(s, Vec::new());
    }
    // clone without CLONE_THREAD makes a process.
    rules.insert(
        libc::SYS_clone,
        vec![rule(vec![cond(
            0,
            SeccompCmpOp::MaskedEq(libc::CLONE_THREAD as u64),
            0,
        )?])?],
    );
    // Signals: only to ourselves.
    for s in [
        libc::SYS_kill,
        libc::SYS_tgkill,
        libc::SYS_rt_sigqueueinfo,
        libc::SYS_rt_tgsigqueueinfo,
    ] {
        rules.insert(s, vec![rule(vec![cond32(0, SeccompCmpOp::Ne, pid)?])?]);
    }
    // Resource limits: only our own (0 or our pid).
    rules.insert(
        libc::SYS_prlimit64,
        vec![rule(vec![
            cond32(0, SeccompCmpOp::Ne, 0)?,
            cond32(0, SeccompCmpOp::Ne, pid)?,
        ])?],
    );
    // prctl: every option but the allowed ones.
    let others = PRCTL_ALLOWED
        .iter()
        .map(|&o| cond32(0, SeccompCmpOp::Ne, o))
        .collect::<Result<Vec<_>, _>>()?;
    rules.insert(libc::SYS_prctl, vec![rule(others)?]);
    #[cfg(target_arch = "x86_64")]
    rules.insert(
        libc::SYS_arch_prctl,
        vec![rule(vec![cond32(0, SeccompCmpOp::Eq, ARCH_SET_CPUID)?])?],
    );
    let f = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        ARCH,
    )?;
    let program: std::result::Result<BpfProgram, seccompiler::BackendError> = f.try_into();
    Ok(program?)
}

fn enosys_filter() -> Result<BpfProgram> {
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    rules.insert(libc::SYS_clone3, Vec::new());
    let f = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::ENOSYS as u32),
        ARCH,
    )?;
    let program: std::result::Result<BpfProgram, seccompiler::BackendError> = f.try_into();
    Ok(program?)
}

/// Installs both filters on the calling (single-threaded) process.
pub fn install() -> Result<()> {
    // SAFETY: getpid has no preconditions.
    let pid = unsafe { libc::getpid() } as u32;
    let eperm = eperm_filter(pid, false)?;
    let enosys = enosys_filter()?;
    seccompiler::apply_filter(&enosys)?;
    seccompiler::apply_filter(&eperm).map_err(anyhow::Error::from)
}

/// The worker's filter with exec allowed, installed before a job's tool (valgrind) is
/// exec'd: the tool's launcher execs its real binary, and the calls the tool then makes for
/// candidate code (which runs on its synthetic CPU) pass this filter — no new processes, no
/// sockets, no ptrace. The pid is the same after exec.
pub fn install_before_tool() -> Result<()> {
    // SAFETY: getpid has no preconditions.
    let pid = unsafe { libc::getpid() } as u32;
    let eperm = eperm_filter(pid, true)?;
    let enosys = enosys_filter()?;
    seccompiler::apply_filter(&enosys)?;
    seccompiler::apply_filter(&eperm).map_err(anyhow::Error::from)
}

/// Denied to a tool run (a compiler, `make`, valgrind) whatever the arguments: unlike
/// candidate code a tool makes processes and execs, but it needs no debugger, no view into
/// other processes, no mounts or namespaces and no kernel-wide facility.
fn tool_denied() -> Vec<libc::c_long> {
    vec![
        libc::SYS_ptrace,
        libc::SYS_process_vm_readv,
        libc::SYS_process_vm_writev,
        libc::SYS_process_madvise,
        libc::SYS_pidfd_getfd,
        libc::SYS_connect,
        libc::SYS_bind,
        libc::SYS_listen,
        libc::SYS_accept,
        libc::SYS_accept4,
        libc::SYS_mount,
        libc::SYS_umount2,
        libc::SYS_pivot_root,
        libc::SYS_chroot,
        libc::SYS_fsopen,
        libc::SYS_fsmount,
        libc::SYS_fsconfig,
        libc::SYS_fspick,
        libc::SYS_move_mount,
        libc::SYS_open_tree,
        libc::SYS_mount_setattr,
        libc::SYS_sched_setaffinity,
        libc::SYS_sched_setscheduler,
        libc::SYS_sched_setattr,
        libc::SYS_unshare,
        libc::SYS_setns,
        libc::SYS_kexec_load,
        libc::SYS_kexec_file_load,
        libc::SYS_bpf,
        libc::SYS_perf_event_open,
        libc::SYS_userfaultfd,
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
        libc::SYS_keyctl,
        libc::SYS_add_key,
        libc::SYS_request_key,
        libc::SYS_init_module,
        libc::SYS_finit_module,
        libc::SYS_delete_module,
        libc::SYS_reboot,
        libc::SYS_swapon,
        libc::SYS_swapoff,
        libc::SYS_acct,
    ]
}

/// The EPERM filter of a tool run: [`tool_denied`], sockets other than AF_UNIX, clone into
/// new namespaces, and `prctl(PR_SET_TSC)` (a tool has no business changing how the
/// counter reads).
fn tool_filter() -> Result<BpfProgram> {
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for s in tool_denied() {
        rules.insert(s, Vec::new());
    }
    for s in [libc::SYS_socket, libc::SYS_socketpair] {
        rules.insert(
            s,
            vec![rule(vec![cond32(
                0,
                SeccompCmpOp::Ne,
                libc::AF_UNIX as u64,
            )?])?],
        );
    }
    let ns_flags = [
        libc::CLONE_NEWNS,
        libc::CLONE_NEWUSER,
        libc::CLONE_NEWPID,
        libc::CLONE_NEWNET,
        libc::CLONE_NEWIPC,
        libc::CLONE_NEWUTS,
        libc::CLONE_NEWCGROUP,
    ];
    rules.insert(
        libc::SYS_clone,
        ns_flags
            .iter()
            .map(|f| rule(vec![cond(0, SeccompCmpOp::MaskedEq(*f as u64), *f as u64)?]))
            .collect::<Result<Vec<_>>>()?,
    );
    rules.insert(
        libc::SYS_prctl,
        vec![rule(vec![cond32(
            0,
            SeccompCmpOp::Eq,
            libc::PR_SET_TSC as u64,
        )?])?],
    );
    let f = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        ARCH,
    )?;
    let program: std::result::Result<BpfProgram, seccompiler::BackendError> = f.try_into();
    Ok(program?)
}

/// Installs the tool filters on the calling (single-threaded) process before it execs the
/// tool; they hold for every process the tool starts. `clone3` answers ENOSYS as for the
/// worker, so namespace flags are always visible to the filter.
pub fn install_tool() -> Result<()> {
    let filter = tool_filter()?;
    let enosys = enosys_filter()?;
    seccompiler::apply_filter(&enosys)?;
    seccompiler::apply_filter(&filter).map_err(anyhow::Error::from)
}
