//! Peak stack depth of one call: run it on a thread whose stack we allocate and paint, then
//! find the deepest byte that changed (the pqm4 technique, on a host).

use std::ffi::c_void;

/// The painted stack (`dataset::memory::STACK_LIMIT_BYTES`). Below it lies one guard page
/// (PROT_NONE): a call that needs more stack is killed by SIGSEGV there, and its job fails,
/// rather than writing over whatever the kernel mapped next.
const STACK_BYTES: usize = crate::dataset::memory::STACK_LIMIT_BYTES as usize;
const GUARD_BYTES: usize = 64 << 10;
/// Bytes painted for the first call (most operations use tens of KiB).
const FIRST_PAINT_BYTES: usize = 256 << 10;
const PAINT: u64 = 0x5A5A_5A5A_5A5A_5A5A;

struct Job<'a> {
    f: &'a mut dyn FnMut(),
}

extern "C" fn trampoline(arg: *mut c_void) -> *mut c_void {
    // SAFETY: `arg` is the &mut Job passed to pthread_create below, alive until join.
    let job = unsafe { &mut *(arg as *mut Job) };
    (job.f)();
    std::ptr::null_mut()
}

/// Bytes of stack `f` used beyond an empty call, or None if the thread could not be made.
pub fn peak_stack_bytes(f: &mut dyn FnMut()) -> Option<u64> {
    let base = depth(&mut || {})?;
    let used = depth(f)?;
    Some(used.saturating_sub(base))
}

fn depth(f: &mut dyn FnMut()) -> Option<u64> {
    // SAFETY: an anonymous private mapping we own and unmap below.
    unsafe {
        let map = libc::mmap(
            std::ptr::null_mut(),
            GUARD_BYTES + STACK_BYTES,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        );
        if map == libc::MAP_FAILED {
            return None;
        }
        if libc::mprotect(map, GUARD_BYTES, libc::PROT_NONE) != 0 {
            libc::munmap(map, GUARD_BYTES + STACK_BYTES);
            return None;
        }
        let mem = (map as *mut u8).add(GUARD_BYTES) as *mut c_void;
        let words = std::slice::from_raw_parts_mut(mem as *mut u64, STACK_BYTES / 8);
        // Paint only the top of the stack, and repeat the call with 4 × the paint while it
        // reached the paint's bottom: painting all 32 MiB cost a calibration child ≈ 40 ms
        // of page faults for calls that use kilobytes.
        let mut painted = FIRST_PAINT_BYTES.min(STACK_BYTES);
        let result = loop {
            let start = (STACK_BYTES - painted) / 8;
            words[start..].fill(PAINT);
            if !run_on(mem, f) {
                break None;
            }
            // The stack grows down: the first changed word from the bottom marks the depth.
            match words[start..].iter().position(|&w| w != PAINT) {
                Some(0) if painted < STACK_BYTES => painted = (painted * 4).min(STACK_BYTES),
                Some(i) => break Some((STACK_BYTES - (start + i) * 8) as u64),
                None => break None,
            }
        };
        libc::munmap(map, GUARD_BYTES + STACK_BYTES);
        result
    }
}

/// Runs `f` on a thread whose stack is the `STACK_BYTES` at `mem`; false if it could not.
unsafe fn run_on(mem: *mut c_void, f: &mut dyn FnMut()) -> bool {
    // SAFETY: `mem` is a live mapping of STACK_BYTES; the thread is joined before return.
    unsafe {
        let mut attr: libc::pthread_attr_t = std::mem::zeroed();
        libc::pthread_attr_init(&mut attr);
        libc::pthread_attr_setstack(&mut attr, mem, STACK_BYTES);
        let mut job = Job { f };
        let mut tid: libc::pthread_t = 0;
        let ok = libc::pthread_create(
            &mut tid,
            &attr,
            trampoline,
            &mut job as *mut Job as *mut c_void,
        ) == 0;
        libc::pthread_attr_destroy(&mut attr);
        ok && libc::pthread_join(tid, std::ptr::null_mut()) == 0
    }
}

#[cfg(test)]
mod tests {
    #[inline(never)]
    fn use_stack(n: usize) -> u8 {
        let buf = [0u8; 0];
        let mut local = [0u8; 64 * 1024];
        for (i, b) in local.iter_mut().enumerate().take(n) {
            *b = std::hint::black_box(i as u8);
        }
        std::hint::black_box(&local)[n / 2] ^ buf.len() as u8
    }

    #[test]
    fn a_64_kib_frame_is_seen() {
        let used = super::peak_stack_bytes(&mut || {
            std::hint::black_box(use_stack(60 * 1024));
        })
        .unwrap();
        assert!((60 * 1024..200 * 1024).contains(&(used as usize)), "{used}");
    }

    #[test]
    fn a_deeper_call_than_the_first_paint_is_measured() {
        #[inline(never)]
        fn deep(n: usize) -> u8 {
            if n == 0 {
                return 0;
            }
            let mut local = [0u8; 32 * 1024];
            local[n % 1024] = std::hint::black_box(n as u8);
            std::hint::black_box(&local)[7] ^ deep(n - 1)
        }
        // 40 frames of 32 KiB: 1.25 MiB, beyond the first 256 KiB and the first retry.
        let used = super::peak_stack_bytes(&mut || {
            std::hint::black_box(deep(40));
        })
        .unwrap();
        assert!(
            (40 * 32 * 1024..2 * 40 * 32 * 1024).contains(&(used as usize)),
            "{used}"
        );
    }
}
