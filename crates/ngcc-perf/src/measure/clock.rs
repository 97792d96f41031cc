//! The clock reads of the timing path, resolved before candidate code is loaded (issue 33).
//!
//! A library shares the worker's address space: it can rewrite the main program's GOT slot
//! of `clock_gettime` (the zoo's `got-clock` did, and made trials 3.4 times short). So the
//! timing path never calls through a slot the library can find by walking the dynamic
//! tables: [`resolve`] (called by the worker before `dlopen`, and by the first read anyway)
//! takes the kernel's vDSO `clock_gettime` from the vDSO image itself (`AT_SYSINFO_EHDR`,
//! its `.dynsym`) and keeps the pointer in a private static; without a vDSO the clock is a
//! raw `syscall` instruction, with no libc wrapper in between. What this does not prevent: a
//! library that searches our memory for that pointer, or patches the vDSO's code pages
//! (ARCHITECTURE.md "Hostile candidates", not contained).

use std::sync::atomic::{AtomicUsize, Ordering};

/// The vDSO's `clock_gettime`; 0: not resolved yet; 1: resolved, no vDSO (raw syscall).
static VDSO_CLOCK_GETTIME: AtomicUsize = AtomicUsize::new(0);
const NO_VDSO: usize = 1;

type ClockFn = unsafe extern "C" fn(libc::clockid_t, *mut libc::timespec) -> libc::c_int;

#[cfg(target_arch = "x86_64")]
const VDSO_NAMES: &[&[u8]] = &[b"__vdso_clock_gettime", b"clock_gettime"];
#[cfg(target_arch = "aarch64")]
const VDSO_NAMES: &[&[u8]] = &[b"__kernel_clock_gettime"];
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
const VDSO_NAMES: &[&[u8]] = &[];

/// Resolves the clock now (idempotent). Returns whether the vDSO entry was found (false:
/// raw syscalls, slower by a few hundred ns a read, as safe).
pub fn resolve() -> bool {
    let mut f = VDSO_CLOCK_GETTIME.load(Ordering::Acquire);
    if f == 0 {
        f = vdso_symbol(VDSO_NAMES).unwrap_or(NO_VDSO);
        VDSO_CLOCK_GETTIME.store(f, Ordering::Release);
    }
    f != NO_VDSO
}

/// `clock_gettime(id)` in nanoseconds, through the pointer [`resolve`] took.
#[inline]
pub fn read_ns(id: libc::clockid_t) -> u64 {
    let mut f = VDSO_CLOCK_GETTIME.load(Ordering::Relaxed);
    if f == 0 {
        resolve();
        f = VDSO_CLOCK_GETTIME.load(Ordering::Relaxed);
    }
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    if f > NO_VDSO {
        // SAFETY: `f` is the vDSO's clock_gettime (found by name in the kernel's own image
        // mapped into this process), which has exactly this signature.
        let clock: ClockFn = unsafe { std::mem::transmute::<usize, ClockFn>(f) };
        // SAFETY: `ts` is a valid timespec we own.
        if unsafe { clock(id, &mut ts) } != 0 {
            raw_clock_gettime(id, &mut ts);
        }
    } else {
        raw_clock_gettime(id, &mut ts);
    }
    (ts.tv_sec as u64)
        .wrapping_mul(1_000_000_000)
        .wrapping_add(ts.tv_nsec as u64)
}

/// CLOCK_MONOTONIC_RAW in nanoseconds.
#[inline]
pub fn monotonic_raw_ns() -> u64 {
    read_ns(libc::CLOCK_MONOTONIC_RAW)
}

/// CPU seconds of the calling thread (CLOCK_THREAD_CPUTIME_ID).
pub fn thread_cpu_s() -> f64 {
    read_ns(libc::CLOCK_THREAD_CPUTIME_ID) as f64 / 1e9
}

/// The clock_gettime system call by its instruction, no libc function in between.
#[cfg(target_arch = "x86_64")]
fn raw_clock_gettime(id: libc::clockid_t, ts: &mut libc::timespec) {
    let ret: i64;
    // SAFETY: clock_gettime(2) writes one timespec through the pointer we pass; the syscall
    // instruction clobbers rcx and r11 only.
    unsafe {
        std::arch::asm!(
            "syscall",
            inlateout("rax") libc::SYS_clock_gettime => ret,
            in("rdi") id as i64,
            in("rsi") ts as *mut libc::timespec,
            lateout("rcx") _,
            lateout("r11") _,
            options(nostack)
        );
    }
    let _ = ret;
}

#[cfg(target_arch = "aarch64")]
fn raw_clock_gettime(id: libc::clockid_t, ts: &mut libc::timespec) {
    let ret: i64;
    // SAFETY: clock_gettime(2) writes one timespec through the pointer we pass.
    unsafe {
        std::arch::asm!(
            "svc 0",
            in("x8") libc::SYS_clock_gettime,
            inlateout("x0") id as i64 => ret,
            in("x1") ts as *mut libc::timespec,
            options(nostack)
        );
    }
    let _ = ret;
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
fn raw_clock_gettime(id: libc::clockid_t, ts: &mut libc::timespec) {
    // SAFETY: clock_gettime fills the struct we pass (no vDSO lookup on this arch).
    unsafe { libc::clock_gettime(id, ts) };
}

/// Reads a little-endian integer of `N` bytes at `base + off`.
///
/// SAFETY: the caller guarantees the bytes lie in the mapped vDSO image.
unsafe fn rd<const N: usize>(base: usize, off: usize) -> u64 {
    let mut b = [0u8; 8];
    // SAFETY: see above; an unaligned copy of N ≤ 8 bytes.
    unsafe { std::ptr::copy_nonoverlapping((base + off) as *const u8, b.as_mut_ptr(), N) };
    u64::from_le_bytes(b)
}

/// The address of the first of `names` in the vDSO's dynamic symbol table. The kernel maps
/// the whole vDSO file image (ELF header, program and section headers, `.dynsym`,
/// `.dynstr`), so file offsets are offsets from its base.
fn vdso_symbol(names: &[&[u8]]) -> Option<usize> {
    // SAFETY: getauxval has no preconditions.
    let base = unsafe { libc::getauxval(libc::AT_SYSINFO_EHDR) } as usize;
    if base == 0 || names.is_empty() {
        return None;
    }
    // SAFETY: every read below is inside the vDSO image at `base`: the ELF header, then the
    // header tables and sections it names, each checked against the image's own sizes.
    unsafe {
        // "\x7fELF", 64-bit, little-endian.
        if rd::<4>(base, 0) != 0x464c_457f || rd::<1>(base, 4) != 2 || rd::<1>(base, 5) != 1 {
            return None;
        }
        let phoff = rd::<8>(base, 0x20) as usize;
        let shoff = rd::<8>(base, 0x28) as usize;
        let phentsize = rd::<2>(base, 0x36) as usize;
        let phnum = rd::<2>(base, 0x38) as usize;
        let shentsize = rd::<2>(base, 0x3a) as usize;
        let shnum = rd::<2>(base, 0x3c) as usize;
        // The image's extent: its first PT_LOAD (offset 0) and the bias of its addresses.
        let (mut bias, mut size) = (None, 0usize);
        for i in 0..phnum {
            let ph = phoff + i * phentsize;
            if rd::<4>(base, ph) == 1 && rd::<8>(base, ph + 8) == 0 {
                bias = Some(base.wrapping_sub(rd::<8>(base, ph + 0x10) as usize));
                size = rd::<8>(base, ph + 0x20) as usize;
                break;
            }
        }
        let bias = bias?;
        // The kernel maps the whole file image, page-rounded; the section headers follow
        // the loaded part (on this kernel's x86_64 vDSO, past its PT_LOAD's file size).
        let page = 4096;
        let size = size
            .max(shoff.saturating_add(shnum.saturating_mul(shentsize)))
            .div_ceil(page)
            * page;
        let inside = |off: usize, len: usize| off.checked_add(len).is_some_and(|e| e <= size);
        if shentsize < 0x40 || !inside(shoff, shnum * shentsize) {
            return None;
        }
        let section = |i: usize| shoff + i * shentsize;
        for i in 0..shnum {
            let sh = section(i);
            if rd::<4>(base, sh + 4) != 11 {
                continue; // not SHT_DYNSYM
            }
            let (off, len, link, entsize) = (
                rd::<8>(base, sh + 0x18) as usize,
                rd::<8>(base, sh + 0x20) as usize,
                rd::<4>(base, sh + 0x28) as usize,
                rd::<8>(base, sh + 0x38) as usize,
            );
            if entsize < 24 || link >= shnum || !inside(off, len) {
                return None;
            }
            let strs = section(link);
            let (str_off, str_len) = (
                rd::<8>(base, strs + 0x18) as usize,
                rd::<8>(base, strs + 0x20) as usize,
            );
            if !inside(str_off, str_len) {
                return None;
            }
            let strtab = std::slice::from_raw_parts((base + str_off) as *const u8, str_len);
            for want in names {
                for k in 0..len / entsize {
                    let sym = off + k * entsize;
                    let name = rd::<4>(base, sym) as usize;
                    let value = rd::<8>(base, sym + 8) as usize;
                    let info = rd::<1>(base, sym + 4);
                    // STT_FUNC, defined.
                    if info & 0xf != 2 || value == 0 || rd::<2>(base, sym + 6) == 0 {
                        continue;
                    }
                    let Some(rest) = strtab.get(name..) else {
                        continue;
                    };
                    let end = rest.iter().position(|&c| c == 0).unwrap_or(rest.len());
                    if &rest[..end] == *want {
                        return Some(bias.wrapping_add(value));
                    }
                }
            }
            return None;
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn libc_ns(id: libc::clockid_t) -> u64 {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: fills the struct we pass.
        unsafe { libc::clock_gettime(id, &mut ts) };
        ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
    }

    #[test]
    fn the_vdso_clock_is_found_and_agrees_with_libc() {
        if cfg!(any(target_arch = "x86_64", target_arch = "aarch64")) {
            assert!(resolve(), "no vDSO clock_gettime found");
        }
        for id in [libc::CLOCK_MONOTONIC_RAW, libc::CLOCK_MONOTONIC] {
            let a = libc_ns(id);
            let b = read_ns(id);
            let c = libc_ns(id);
            assert!(a <= b && b <= c, "{a} {b} {c}");
        }
    }

    #[test]
    fn the_raw_syscall_agrees_with_libc() {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        let a = libc_ns(libc::CLOCK_MONOTONIC_RAW);
        raw_clock_gettime(libc::CLOCK_MONOTONIC_RAW, &mut ts);
        let c = libc_ns(libc::CLOCK_MONOTONIC_RAW);
        let b = ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64;
        assert!(a <= b && b <= c, "{a} {b} {c}");
        assert!(thread_cpu_s() > 0.0);
    }
}
