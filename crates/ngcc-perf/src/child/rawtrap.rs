//! The memory job's trap for raw memory syscalls (issue 36): a `syscall` instruction in the
//! library's own code asking for brk, mmap, mremap or munmap goes around both the allocator
//! and the recorder's wrappers. A seccomp filter sends exactly those (the syscall number, and
//! an instruction pointer outside the code mapped before the library was loaded) to a SIGSYS
//! handler that counts them and performs the call itself, so the library behaves as it does
//! when timed. libc's own syscalls (the allocator behind the wrappers, our Rust, the loader)
//! come from code mapped before and are never trapped.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Counted while the recorder counts a call (set around it by `child::heap`).
pub static IN_CALL: AtomicBool = AtomicBool::new(false);
static TOTAL: AtomicU64 = AtomicU64::new(0);
static CALL: AtomicU64 = AtomicU64::new(0);
static CALL_BYTES: AtomicU64 = AtomicU64::new(0);

const WATCHED: [libc::c_long; 4] = [
    libc::SYS_brk,
    libc::SYS_mmap,
    libc::SYS_mremap,
    libc::SYS_munmap,
];

/// (trapped in the job, trapped in the current call, bytes those calls asked for).
pub fn counts() -> (u64, u64, u64) {
    (
        TOTAL.load(Ordering::Relaxed),
        CALL.load(Ordering::Relaxed),
        CALL_BYTES.load(Ordering::Relaxed),
    )
}

/// Starts a counted call's trap counts.
pub fn begin() {
    CALL.store(0, Ordering::Relaxed);
    CALL_BYTES.store(0, Ordering::Relaxed);
    IN_CALL.store(true, Ordering::Relaxed);
}

pub fn end() {
    IN_CALL.store(false, Ordering::Relaxed);
}

/// The executable mappings of this process now (our binary, libc, the loader, the vDSO):
/// [start, end) ranges, merged where they touch.
fn known_code() -> Option<Vec<(u64, u64)>> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    let mut v: Vec<(u64, u64)> = Vec::new();
    for line in maps.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if !f.get(1)?.contains('x') {
            continue;
        }
        let (a, b) = f.first()?.split_once('-')?;
        v.push((
            u64::from_str_radix(a, 16).ok()?,
            u64::from_str_radix(b, 16).ok()?,
        ));
    }
    v.sort_unstable();
    let mut merged: Vec<(u64, u64)> = Vec::new();
    for (a, b) in v {
        match merged.last_mut() {
            Some(last) if a <= last.1 => last.1 = last.1.max(b),
            _ => merged.push((a, b)),
        }
    }
    Some(merged)
}

#[cfg(target_arch = "x86_64")]
const ARCH: u32 = 0xC000_003E; // AUDIT_ARCH_X86_64
#[cfg(target_arch = "aarch64")]
const ARCH: u32 = 0xC000_00B7; // AUDIT_ARCH_AARCH64

/// A classic-BPF instruction whose jumps name absolute instruction indexes (resolved later).
enum Ins {
    Load(u32),
    /// Jump if equal / greater-or-equal / greater: (op, k, target if true, target if false).
    Jump(u32, u32, usize, usize),
    Ret(u32),
}

fn assemble(prog: &[Ins]) -> Option<Vec<libc::sock_filter>> {
    let mut out = Vec::with_capacity(prog.len());
    for (i, ins) in prog.iter().enumerate() {
        let f = match *ins {
            Ins::Load(off) => libc::sock_filter {
                code: (libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16,
                jt: 0,
                jf: 0,
                k: off,
            },
            Ins::Jump(op, k, t, f) => libc::sock_filter {
                code: (libc::BPF_JMP | op | libc::BPF_K) as u16,
                jt: u8::try_from(t.checked_sub(i + 1)?).ok()?,
                jf: u8::try_from(f.checked_sub(i + 1)?).ok()?,
                k,
            },
            Ins::Ret(k) => libc::sock_filter {
                code: (libc::BPF_RET | libc::BPF_K) as u16,
                jt: 0,
                jf: 0,
                k,
            },
        };
        out.push(f);
    }
    Some(out)
}

/// Installs the handler and the filter. Called before the jail's lock-down (which forbids
/// further filters, so that candidate code cannot trap our clock) and before the library is
/// loaded: every executable mapping that exists now is ours, libc's or the loader's and is
/// exempt; whatever code is mapped later (the candidate's library, anything it loads or
/// writes) is trapped. False, with nothing installed, where a range spans a 4 GiB boundary
/// (classic BPF compares 32-bit words) or on an architecture without a handler here.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
pub fn install() -> bool {
    let Some(ranges) = known_code() else {
        return false;
    };
    if ranges.iter().any(|&(a, b)| a >> 32 != (b - 1) >> 32) {
        return false;
    }
    let (jeq, jge, jgt) = (libc::BPF_JEQ, libc::BPF_JGE, libc::BPF_JGT);
    // Layout: 0 arch, 1-2 number, 3-6 watched numbers, then 5 per range, then TRAP, ALLOW.
    let check = 7;
    let trap = check + 5 * ranges.len();
    let allow = trap + 1;
    let mut prog = vec![Ins::Load(4), Ins::Jump(jeq, ARCH, 2, allow), Ins::Load(0)];
    for (i, nr) in WATCHED.iter().enumerate() {
        let miss = if i + 1 == WATCHED.len() { allow } else { 4 + i };
        prog.push(Ins::Jump(jeq, *nr as u32, check, miss));
    }
    // seccomp_data: nr at 0, arch at 4, instruction_pointer at 8 (low word first).
    for (i, &(a, b)) in ranges.iter().enumerate() {
        let at = check + 5 * i;
        let next = at + 5;
        prog.push(Ins::Load(12));
        prog.push(Ins::Jump(jeq, (a >> 32) as u32, at + 2, next));
        prog.push(Ins::Load(8));
        prog.push(Ins::Jump(jge, a as u32, at + 4, next));
        prog.push(Ins::Jump(jgt, (b - 1) as u32, next, allow));
    }
    prog.push(Ins::Ret(libc::SECCOMP_RET_TRAP));
    prog.push(Ins::Ret(libc::SECCOMP_RET_ALLOW));
    let Some(filter) = assemble(&prog) else {
        return false;
    };
    // SAFETY: a handler for SIGSYS only, then a filter program that lives until prctl
    // copied it.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = handler as *const () as usize;
        sa.sa_flags = libc::SA_SIGINFO;
        libc::sigemptyset(&mut sa.sa_mask);
        if libc::sigaction(libc::SIGSYS, &sa, std::ptr::null_mut()) != 0 {
            return false;
        }
        let fprog = libc::sock_fprog {
            len: filter.len() as u16,
            filter: filter.as_ptr() as *mut libc::sock_filter,
        };
        libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
        libc::prctl(
            libc::PR_SET_SECCOMP,
            libc::SECCOMP_MODE_FILTER,
            &fprog as *const libc::sock_fprog,
        ) == 0
    }
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
pub fn install() -> bool {
    false
}

/// The call's number and arguments, and where its result goes, in the trapped context.
#[cfg(target_arch = "x86_64")]
unsafe fn regs(uc: *mut libc::ucontext_t) -> (*mut i64, [i64; 7]) {
    // SAFETY: the kernel's signal frame; REG_* index the general registers.
    unsafe {
        let g = &mut (*uc).uc_mcontext.gregs;
        let rax = &mut g[libc::REG_RAX as usize] as *mut i64;
        let r = |i: libc::c_int| g[i as usize];
        (
            rax,
            [
                r(libc::REG_RAX),
                r(libc::REG_RDI),
                r(libc::REG_RSI),
                r(libc::REG_RDX),
                r(libc::REG_R10),
                r(libc::REG_R8),
                r(libc::REG_R9),
            ],
        )
    }
}

#[cfg(target_arch = "aarch64")]
unsafe fn regs(uc: *mut libc::ucontext_t) -> (*mut i64, [i64; 7]) {
    // SAFETY: the kernel's signal frame; x8 holds the number, x0-x5 the arguments.
    unsafe {
        let x = &mut (*uc).uc_mcontext.regs;
        let x0 = &mut x[0] as *mut u64 as *mut i64;
        let r = |i: usize| x[i] as i64;
        (x0, [r(8), r(0), r(1), r(2), r(3), r(4), r(5)])
    }
}

#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
extern "C" fn handler(_sig: libc::c_int, _info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
    // SAFETY: ctx is the ucontext of the trapped thread; the syscall is made from our code,
    // outside the filtered range, so it is not trapped again.
    unsafe {
        let (result, [nr, a0, a1, a2, a3, a4, a5]) = regs(ctx as *mut libc::ucontext_t);
        let mut bytes = 0u64;
        if nr == libc::SYS_mmap && a3 & i64::from(libc::MAP_ANONYMOUS) != 0 {
            bytes = a1 as u64;
        } else if nr == libc::SYS_brk {
            let now = libc::syscall(libc::SYS_brk, 0) as i64;
            bytes = a0.saturating_sub(now).max(0) as u64;
        }
        let r = libc::syscall(nr, a0, a1, a2, a3, a4, a5);
        *result = r as i64;
        TOTAL.fetch_add(1, Ordering::Relaxed);
        if IN_CALL.load(Ordering::Relaxed) {
            CALL.fetch_add(1, Ordering::Relaxed);
            CALL_BYTES.fetch_add(bytes, Ordering::Relaxed);
        }
    }
}
