//! The memory job's trap for raw memory syscalls (issue 36): a `syscall` instruction in the
//! library's own code asking for brk, mmap, mremap or munmap goes around both the allocator
//! and the recorder's wrappers. A seccomp filter sends exactly those (the syscall number, and
//! the instruction pointer inside the library's executable mapping) to a SIGSYS handler that
//! counts them and performs the call itself, so the library behaves as it does when timed.
//! libc's own syscalls (the allocator behind the wrappers, our Rust) are not in that range.

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

/// The executable mappings of the file mapped at `addr` (/proc/self/maps) as one
/// [start, end) range.
fn text_range(addr: u64) -> Option<(u64, u64)> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    let parse = |line: &str| -> Option<(u64, u64, bool, String)> {
        let f: Vec<&str> = line.split_whitespace().collect();
        let (a, b) = f.first()?.split_once('-')?;
        Some((
            u64::from_str_radix(a, 16).ok()?,
            u64::from_str_radix(b, 16).ok()?,
            f.get(1)?.contains('x'),
            f.get(5)?.to_string(),
        ))
    };
    let lines: Vec<_> = maps.lines().filter_map(parse).collect();
    let (_, _, _, path) = lines.iter().find(|l| l.0 <= addr && addr < l.1)?;
    lines
        .iter()
        .filter(|l| l.2 && &l.3 == path)
        .map(|l| (l.0, l.1))
        .reduce(|(x, y), (a, b)| (x.min(a), y.max(b)))
}

#[cfg(target_arch = "x86_64")]
const ARCH: u32 = 0xC000_003E; // AUDIT_ARCH_X86_64
#[cfg(target_arch = "aarch64")]
const ARCH: u32 = 0xC000_00B7; // AUDIT_ARCH_AARCH64

/// Installs the handler and the filter for the library whose code holds `addr`; false (nothing
/// installed) when the range cannot be found or spans a 4 GiB boundary (classic BPF compares
/// 32-bit words), or on an architecture without a handler here.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
pub fn install(addr: u64) -> bool {
    let Some((start, end)) = text_range(addr) else {
        return false;
    };
    if start >> 32 != (end - 1) >> 32 {
        return false;
    }
    let (hi, lo, lo_end) = ((start >> 32) as u32, start as u32, (end - 1) as u32);
    let stmt = |code: u32, k: u32| libc::sock_filter {
        code: code as u16,
        jt: 0,
        jf: 0,
        k,
    };
    let jump = |code: u32, k: u32, jt: u8, jf: u8| libc::sock_filter {
        code: code as u16,
        jt,
        jf,
        k,
    };
    let ld = libc::BPF_LD | libc::BPF_W | libc::BPF_ABS;
    let jeq = libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K;
    let jge = libc::BPF_JMP | libc::BPF_JGE | libc::BPF_K;
    let jgt = libc::BPF_JMP | libc::BPF_JGT | libc::BPF_K;
    let ret = libc::BPF_RET | libc::BPF_K;
    // seccomp_data: nr at 0, arch at 4, instruction_pointer at 8 (low word first).
    let prog = [
        stmt(ld, 4),
        jump(jeq, ARCH, 0, 11), // → allow
        stmt(ld, 0),
        jump(jeq, WATCHED[0] as u32, 3, 0),
        jump(jeq, WATCHED[1] as u32, 2, 0),
        jump(jeq, WATCHED[2] as u32, 1, 0),
        jump(jeq, WATCHED[3] as u32, 0, 6),
        stmt(ld, 12),
        jump(jeq, hi, 0, 4),
        stmt(ld, 8),
        jump(jge, lo, 0, 2),
        jump(jgt, lo_end, 1, 0),
        stmt(ret, libc::SECCOMP_RET_TRAP),
        stmt(ret, libc::SECCOMP_RET_ALLOW),
    ];
    // SAFETY: a handler for SIGSYS only, then a filter program that lives until prctl
    // copied it; no_new_privs is already set by the jail (set again: harmless).
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = handler as *const () as usize;
        sa.sa_flags = libc::SA_SIGINFO;
        libc::sigemptyset(&mut sa.sa_mask);
        if libc::sigaction(libc::SIGSYS, &sa, std::ptr::null_mut()) != 0 {
            return false;
        }
        let fprog = libc::sock_fprog {
            len: prog.len() as u16,
            filter: prog.as_ptr() as *mut libc::sock_filter,
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
pub fn install(_addr: u64) -> bool {
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
