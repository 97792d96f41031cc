//! The profile job (reference-harness.md §5.3): on the relinked library, the same prepared
//! operation the trials time (same seed, the saved setup), warm-ups, the tick rate, the
//! wrappers' own cost, then ITERS operations with accounting enabled around each one only.

use super::library::Lib;
use super::ops::{Runner, seed_library};
use super::protocol::{OpJob, ProfileOutput};
use crate::dataset::schema::ProfileCall;
use crate::dataset::schema::{Op, ProcessStatus};
use crate::measure::counter::monotonic_raw_ns;
use std::ffi::{CStr, c_char, c_int};

/// Mirror of `ngcc_prof_entry_t` in csrc/prof/ngcc_prof.c.
#[repr(C)]
#[derive(Clone, Copy)]
struct Entry {
    func: *const c_char,
    in_bits: u64,
    out_bits: u64,
    calls: u64,
    ticks: u64,
}

/// The table size of the C side: `entries` never reports more used slots.
const SLOTS: usize = 8192;
/// Overhead measurement: rounds × calls per round; the median round is kept.
const OVERHEAD_ROUNDS: usize = 9;
const OVERHEAD_CALLS: u64 = 20_000;
/// The tick rate is measured between the job's first and last (ticks, clock) pairs, at least
/// this far apart (the reference spins 100 ms for it). A pair is read back to back, good to
/// tens of ns, so 10 ms gives the rate to about 1e-5; a job that profiles for longer spins
/// not at all.
const TICK_HZ_MIN_NS: u64 = 10_000_000;
/// A pair whose clock reads lie further apart than this was interrupted: read again.
const PAIR_MAX_NS: u64 = 1_000;

struct Prof {
    tick_source: unsafe extern "C" fn() -> *const c_char,
    ticks: unsafe extern "C" fn() -> u64,
    enable: unsafe extern "C" fn(c_int),
    reset: unsafe extern "C" fn(),
    entries: unsafe extern "C" fn(*mut Entry, usize, *mut u64) -> usize,
    overhead: unsafe extern "C" fn(u64, *mut u64),
    mark: unsafe extern "C" fn(),
    rollback: unsafe extern "C" fn() -> c_int,
}

impl Prof {
    fn open(lib: &Lib) -> Result<Prof, super::library::LibError> {
        Ok(Prof {
            tick_source: lib.func("ngcc_prof_tick_source")?,
            ticks: lib.func("ngcc_prof_ticks")?,
            enable: lib.func("ngcc_prof_enable")?,
            reset: lib.func("ngcc_prof_reset")?,
            entries: lib.func("ngcc_prof_entries")?,
            overhead: lib.func("ngcc_prof_overhead")?,
            mark: lib.func("ngcc_prof_mark")?,
            rollback: lib.func("ngcc_prof_rollback")?,
        })
    }

    fn ticks(&self) -> u64 {
        // SAFETY: the wrapper library's tick read takes no arguments.
        unsafe { (self.ticks)() }
    }

    fn enable(&self, on: bool) {
        // SAFETY: sets a flag in the wrapper library.
        unsafe { (self.enable)(c_int::from(on)) }
    }

    fn tick_source(&self) -> String {
        // SAFETY: returns a static NUL-terminated string (or NULL, handled).
        let p = unsafe { (self.tick_source)() };
        if p.is_null() {
            return "unknown".into();
        }
        // SAFETY: non-null, static, NUL-terminated.
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }

    /// (calls, overflow_calls), merged by (fn, in_bits, out_bits) and sorted, because two
    /// symbols may record the same `fn` (e.g. `randombytes` and `PQCLEAN_randombytes`).
    fn read(&self) -> (Vec<ProfileCall>, u64) {
        let mut buf = vec![
            Entry {
                func: std::ptr::null(),
                in_bits: 0,
                out_bits: 0,
                calls: 0,
                ticks: 0,
            };
            SLOTS
        ];
        let mut overflow = 0u64;
        // SAFETY: buf holds SLOTS entries; the library writes at most `cap` of them.
        let n = unsafe { (self.entries)(buf.as_mut_ptr(), SLOTS, &mut overflow) }.min(SLOTS);
        let mut merged: std::collections::BTreeMap<(String, u64, u64), (u64, u64)> =
            Default::default();
        for e in &buf[..n] {
            let name = if e.func.is_null() {
                "unknown".to_string()
            } else {
                // SAFETY: names point into the library's static string table.
                unsafe { CStr::from_ptr(e.func) }
                    .to_string_lossy()
                    .into_owned()
            };
            let slot = merged.entry((name, e.in_bits, e.out_bits)).or_default();
            slot.0 += e.calls;
            slot.1 += e.ticks;
        }
        let calls = merged
            .into_iter()
            .map(|((func, in_bits, out_bits), (calls, ticks))| ProfileCall {
                func,
                in_bits,
                out_bits,
                calls,
                ticks,
            })
            .collect();
        (calls, overflow)
    }

    /// (ticks, clock ns) read back to back: the ticks between two clock reads, read again
    /// while those lie more than `PAIR_MAX_NS` apart (a preemption between them), at most 64
    /// times.
    fn pair(&self) -> (u64, u64) {
        let mut best = (0, 0, u64::MAX);
        for _ in 0..64 {
            let n0 = monotonic_raw_ns();
            let k = self.ticks();
            let n1 = monotonic_raw_ns();
            let gap = n1.saturating_sub(n0);
            if gap < best.2 {
                best = (k, n0 + gap / 2, gap);
            }
            if gap <= PAIR_MAX_NS {
                break;
            }
        }
        (best.0, best.1)
    }

    /// Ticks per second of the wrapper's tick source since `start` (a [`Prof::pair`]),
    /// waiting until at least `TICK_HZ_MIN_NS` have passed.
    fn tick_hz_since(&self, start: (u64, u64)) -> f64 {
        let (k0, n0) = start;
        while monotonic_raw_ns().saturating_sub(n0) < TICK_HZ_MIN_NS {
            std::hint::spin_loop();
        }
        let (k1, n1) = self.pair();
        k1.wrapping_sub(k0) as f64 / ((n1 - n0) as f64 / 1e9)
    }

    /// (per call on the operation, per call inside a helper's ticks), medians of rounds.
    fn overhead(&self) -> (f64, f64) {
        let mut full = Vec::with_capacity(OVERHEAD_ROUNDS);
        let mut inside = Vec::with_capacity(OVERHEAD_ROUNDS);
        let n = OVERHEAD_CALLS as f64;
        for _ in 0..OVERHEAD_ROUNDS {
            let mut out = [0u64; 3];
            // SAFETY: `out` has the three slots the C side writes.
            unsafe { (self.overhead)(OVERHEAD_CALLS, out.as_mut_ptr()) };
            let direct = out[0] as f64 / n;
            full.push((out[1] as f64 / n - direct).max(0.0));
            inside.push((out[2] as f64 / n - direct).max(0.0));
        }
        let med = |v: &[f64]| crate::measure::stats::median(v).unwrap_or(0.0);
        let (f, i) = (med(&full), med(&inside));
        (f, i.min(f))
    }
}

/// Involuntary context switches of this thread so far (0 if getrusage fails).
fn involuntary_switches() -> i64 {
    // SAFETY: getrusage fills the zeroed struct we own.
    unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        if libc::getrusage(libc::RUSAGE_THREAD, &mut ru) != 0 {
            return 0;
        }
        ru.ru_nivcsw
    }
}

fn failed(mut out: ProfileOutput, e: impl Into<String>) -> ProfileOutput {
    out.status = ProcessStatus::Failed;
    out.error = Some(e.into());
    out
}

pub fn run(job: &OpJob, t_start: u64) -> ProfileOutput {
    let sandbox = super::sandbox(&job.limits);
    let mut out = match Lib::open(&job.library) {
        Ok(lib) => profile(job, &lib),
        Err(e) => failed(ProfileOutput::default(), format!("LOADFAIL: {e}")),
    };
    out.sandbox = sandbox;
    out.end_s = (monotonic_raw_ns() - t_start) as f64 / 1e9;
    out
}

fn profile(job: &OpJob, lib: &Lib) -> ProfileOutput {
    let mut out = ProfileOutput {
        id: lib.meta.id.clone(),
        instance: lib.meta.instance.clone(),
        warmups: job.warmups,
        ..ProfileOutput::default()
    };
    let prof = match Prof::open(lib) {
        Ok(p) => p,
        Err(e) => return failed(out, format!("not a profiling library: {e}")),
    };
    out.tick_source = prof.tick_source();
    let tick_start = prof.pair();
    prof.enable(false);
    if let Err(e) = seed_library(lib, job.api, job.seed_tweak, job.rng) {
        return failed(out, e);
    }
    let op = if job.kind == crate::candidate::Kind::Hash {
        Op::Hash
    } else {
        job.op.clone()
    };
    let mut runner =
        match Runner::prepare(lib, job.kind, &op, job.input_bytes, &job.setup_dir, false) {
            Ok(r) => r,
            Err(e) => return failed(out, e),
        };
    for _ in 0..job.warmups {
        if let Err(e) = runner.call() {
            return failed(out, format!("warm-up operation failed: {e}"));
        }
    }
    (
        out.wrapper_ticks_per_call,
        out.wrapper_inside_ticks_per_call,
    ) = prof.overhead();
    // SAFETY: clears the wrapper library's table.
    unsafe { (prof.reset)() };
    let mut total = 0u64;
    let mut done = 0u64;
    while done < job.iterations {
        let switches = involuntary_switches();
        // SAFETY: starts the wrapper library's per-operation journal.
        unsafe { (prof.mark)() };
        prof.enable(true);
        let t0 = prof.ticks();
        let r = runner.call();
        let t1 = prof.ticks();
        prof.enable(false);
        if let Err(e) = r {
            out.operations = done;
            return failed(out, format!("profiled operation failed: {e}"));
        }
        let preempted = involuntary_switches() > switches;
        // A preempted operation's ticks include another task's time: take it back and run
        // one more, at most ITERS times (then keep what comes, and say so).
        // SAFETY: takes back this operation's records (returns 0 if it cannot).
        if preempted && out.discarded_ops < job.iterations && unsafe { (prof.rollback)() } == 1 {
            out.discarded_ops += 1;
            continue;
        }
        out.preempted_ops_kept += u64::from(preempted);
        total += t1.wrapping_sub(t0);
        done += 1;
    }
    if let Err(e) = runner.check_guards() {
        return failed(out, e);
    }
    (out.calls, out.overflow_calls) = prof.read();
    out.tick_hz = prof.tick_hz_since(tick_start);
    out.operations = job.iterations;
    out.total_ticks = total;
    out.status = ProcessStatus::Complete;
    out
}
