//! A child's last word. Candidate code may kill the child (a fatal signal) or end it
//! (`exit()`) at any point; the orchestrator then gets no JSON result. So the child keeps a
//! "stage" (what it is doing), and on a fatal signal or an unexpected exit writes one note
//! line to the result pipe (fd 3): the stage, its peak address space and the RLIMIT_AS, so
//! the orchestrator can say "SIGSEGV in keygen" or "address-space limit reached".
//! The signal handler only uses async-signal-safe calls and preallocated memory.

use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};

const STAGE_CAP: usize = 64;
static STAGE: [AtomicU8; STAGE_CAP] = [const { AtomicU8::new(0) }; STAGE_CAP];
static STAGE_LEN: AtomicUsize = AtomicUsize::new(0);
/// Set once the result is written: a later exit is the normal one.
static FINISHED: AtomicBool = AtomicBool::new(false);

const FATAL: &[libc::c_int] = &[
    libc::SIGSEGV,
    libc::SIGBUS,
    libc::SIGILL,
    libc::SIGFPE,
    libc::SIGABRT,
    libc::SIGXCPU,
    libc::SIGXFSZ,
    libc::SIGSYS,
    libc::SIGTRAP,
];

/// What the child is doing now (spaces become `_` on the wire; at most 64 bytes).
pub fn stage(what: &str) {
    let bytes = what.as_bytes();
    let n = bytes.len().min(STAGE_CAP);
    for (slot, &b) in STAGE.iter().zip(&bytes[..n]) {
        slot.store(if b == b' ' { b'_' } else { b }, Ordering::Relaxed);
    }
    STAGE_LEN.store(n, Ordering::Release);
}

/// The result was written; exiting from now on is expected.
pub fn finished() {
    FINISHED.store(true, Ordering::Release);
}

/// Installs the fatal-signal handlers (on their own stack, so a stack overflow or an
/// exhausted heap still gets its note) and the exit hook. Call before loading candidate code.
pub fn install() {
    const ALT: usize = 64 * 1024;
    let stack: &'static mut [u8] = Box::leak(vec![0u8; ALT].into_boxed_slice());
    // SAFETY: the alternate stack is leaked (lives forever); handlers are plain extern fns.
    unsafe {
        let ss = libc::stack_t {
            ss_sp: stack.as_mut_ptr().cast(),
            ss_flags: 0,
            ss_size: ALT,
        };
        libc::sigaltstack(&ss, std::ptr::null_mut());
        for &sig in FATAL {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_fatal as *const () as usize;
            sa.sa_flags = libc::SA_ONSTACK | libc::SA_RESETHAND;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
        libc::atexit(on_exit);
    }
}

struct Buf {
    b: [u8; 256],
    n: usize,
}

impl Buf {
    fn push(&mut self, s: &[u8]) {
        for &c in s {
            if self.n < self.b.len() {
                self.b[self.n] = c;
                self.n += 1;
            }
        }
    }
    fn num(&mut self, mut v: u64) {
        let mut d = [0u8; 20];
        let mut i = d.len();
        loop {
            i -= 1;
            d[i] = b'0' + (v % 10) as u8;
            v /= 10;
            if v == 0 {
                break;
            }
        }
        self.push(&d[i..]);
    }
}

/// VmPeak of this process in KiB, read with raw syscalls.
fn vm_peak_kib() -> Option<u64> {
    let mut text = [0u8; 4096];
    // SAFETY: plain open/read/close into a stack buffer.
    let n = unsafe {
        let fd = libc::open(c"/proc/self/status".as_ptr(), libc::O_RDONLY);
        if fd < 0 {
            return None;
        }
        let n = libc::read(fd, text.as_mut_ptr().cast(), text.len());
        libc::close(fd);
        n
    };
    let text = &text[..usize::try_from(n).ok()?];
    let key = b"VmPeak:";
    let at = text.windows(key.len()).position(|w| w == key)? + key.len();
    let mut v = 0u64;
    let mut seen = false;
    for &c in &text[at..] {
        match c {
            b'0'..=b'9' => {
                v = v * 10 + u64::from(c - b'0');
                seen = true;
            }
            b' ' | b'\t' if !seen => {}
            _ => break,
        }
    }
    seen.then_some(v)
}

fn last_word(tag: &[u8], sig: Option<libc::c_int>) {
    let mut b = Buf { b: [0; 256], n: 0 };
    b.push(b"\n#");
    b.push(tag);
    if let Some(s) = sig {
        b.push(b" signal=");
        b.num(s as u64);
    }
    let n = STAGE_LEN.load(Ordering::Acquire);
    if n > 0 {
        b.push(b" stage=");
        for slot in &STAGE[..n] {
            b.push(&[slot.load(Ordering::Relaxed)]);
        }
    }
    if let Some(peak) = vm_peak_kib() {
        b.push(b" peak_as_kib=");
        b.num(peak);
    }
    let mut rl = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit fills a local struct.
    if unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut rl) } == 0
        && rl.rlim_cur != libc::RLIM_INFINITY
    {
        b.push(b" as_limit_kib=");
        b.num(rl.rlim_cur / 1024);
    }
    b.push(b"\n");
    // SAFETY: write(2) from a stack buffer to the result pipe.
    unsafe { libc::write(3, b.b.as_ptr().cast(), b.n) };
}

extern "C" fn on_fatal(sig: libc::c_int) {
    last_word(b"crash", Some(sig));
    // SA_RESETHAND restored the default action: the signal, re-raised, ends the process
    // once this handler returns (a faulting instruction simply faults again).
    // SAFETY: raise is async-signal-safe.
    unsafe { libc::raise(sig) };
}

extern "C" fn on_exit() {
    if !FINISHED.load(Ordering::Acquire) {
        last_word(b"exit", None);
    }
}
