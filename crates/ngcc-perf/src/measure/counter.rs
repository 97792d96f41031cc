//! The cycle counter read inside the timing child, and the wall clock next to it.
//!
//! Preference order: perf user-mode core cycles (what the reference harness records), else
//! the architectural timer (TSC on x86_64, CNTVCT_EL0 on aarch64), else nothing. The chosen
//! kind is always labelled, because TSC/CNTVCT ticks are reference time, not core cycles.
//!
//! perf_event_open: we define the 64-byte `PERF_ATTR_SIZE_VER0` attribute block ourselves and
//! call the syscall through `libc`. That layout is a frozen kernel ABI (the kernel accepts the
//! old size forever), we need five of its fields, and a wrapper crate would add a dependency
//! and an abstraction layer between `start`/`stop` and the ioctl we want to keep minimal.

use std::cell::OnceCell;
use std::hint::black_box;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};

pub use crate::dataset::schema::CounterKind;

/// The counter a `Counter` reads: `CounterKind` without its open `Other` arm, so the
/// timing loop matches on a plain byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Source {
    PerfCycles,
    Tsc,
    Cntvct,
    None,
}

impl Source {
    fn of(kind: &CounterKind) -> Option<Source> {
        Some(match kind {
            CounterKind::PerfCycles => Source::PerfCycles,
            CounterKind::Tsc => Source::Tsc,
            CounterKind::Cntvct => Source::Cntvct,
            CounterKind::None => Source::None,
            CounterKind::Other(_) => return None,
        })
    }

    fn kind(self) -> CounterKind {
        match self {
            Source::PerfCycles => CounterKind::PerfCycles,
            Source::Tsc => CounterKind::Tsc,
            Source::Cntvct => CounterKind::Cntvct,
            Source::None => CounterKind::None,
        }
    }

    /// The timer this architecture falls back to when perf cycles do not count.
    fn arch_fallback() -> Source {
        if cfg!(target_arch = "x86_64") {
            Source::Tsc
        } else if cfg!(target_arch = "aarch64") {
            Source::Cntvct
        } else {
            Source::None
        }
    }
}

/// Minimal perf_event ABI (include/uapi/linux/perf_event.h).
mod perf {
    use std::io;
    use std::os::fd::{FromRawFd, OwnedFd, RawFd};

    #[repr(C)]
    #[derive(Default)]
    pub struct Attr {
        pub type_: u32,
        pub size: u32,
        pub config: u64,
        pub sample_period: u64,
        pub sample_type: u64,
        pub read_format: u64,
        /// The bitfield word: disabled, inherit, pinned, exclusive, exclude_user, …
        pub flags: u64,
        pub wakeup_events: u32,
        pub bp_type: u32,
        pub config1: u64,
    }
    const _: () = assert!(std::mem::size_of::<Attr>() == 64);

    pub const TYPE_HARDWARE: u32 = 0;
    #[cfg(test)]
    pub const TYPE_SOFTWARE: u32 = 1;
    #[cfg(test)]
    pub const SW_TASK_CLOCK: u64 = 1;
    pub const HW_CPU_CYCLES: u64 = 0;
    pub const HW_INSTRUCTIONS: u64 = 1;
    const FLAG_DISABLED: u64 = 1 << 0;
    const FLAG_EXCLUDE_KERNEL: u64 = 1 << 5;
    const FLAG_EXCLUDE_HV: u64 = 1 << 6;
    pub const FORMAT_GROUP: u64 = 1 << 3;
    const OPEN_FD_CLOEXEC: libc::c_ulong = 1 << 3;

    // _IO('$', n) in the generic encoding (x86_64, aarch64). Arches with another encoding
    // get failing ioctls, so the counter never passes verification there and is not used.
    pub const IOC_ENABLE: libc::Ioctl = 0x2400;
    pub const IOC_DISABLE: libc::Ioctl = 0x2401;
    pub const IOC_RESET: libc::Ioctl = 0x2403;
    pub const IOC_FLAG_GROUP: libc::c_ulong = 1;

    /// Opens a user-mode-only hardware event for this thread on any CPU, initially disabled.
    pub fn open(config: u64, group: Option<RawFd>, read_format: u64) -> io::Result<OwnedFd> {
        open_typed(TYPE_HARDWARE, config, group, read_format)
    }

    pub fn open_typed(
        type_: u32,
        config: u64,
        group: Option<RawFd>,
        read_format: u64,
    ) -> io::Result<OwnedFd> {
        let attr = Attr {
            type_,
            size: std::mem::size_of::<Attr>() as u32,
            config,
            read_format,
            flags: FLAG_DISABLED | FLAG_EXCLUDE_KERNEL | FLAG_EXCLUDE_HV,
            ..Attr::default()
        };
        // SAFETY: `attr` is a valid, fully initialised perf_event_attr of the size it
        // declares; pid 0 / cpu -1 = this thread on any CPU.
        let fd = unsafe {
            libc::syscall(
                libc::SYS_perf_event_open,
                &attr as *const Attr,
                0 as libc::pid_t,
                -1 as libc::c_int,
                group.unwrap_or(-1) as libc::c_int,
                OPEN_FD_CLOEXEC,
            )
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: the kernel just returned this descriptor to us; nobody else owns it.
        Ok(unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
    }

    #[inline]
    pub fn ioctl(fd: RawFd, request: libc::Ioctl, arg: libc::c_ulong) -> bool {
        // SAFETY: perf ioctls take an integer argument; a bad fd only yields an error.
        unsafe { libc::ioctl(fd, request, arg) >= 0 }
    }

    /// Reads a `PERF_FORMAT_GROUP` block: `[nr, value0, value1]`; returns `nr` (0 on error).
    #[inline]
    pub fn read_group(fd: RawFd, out: &mut [u64; 3]) -> u64 {
        // SAFETY: `out` is a writable buffer of exactly the byte length passed.
        let n = unsafe {
            libc::read(
                fd,
                out.as_mut_ptr().cast::<libc::c_void>(),
                std::mem::size_of_val(out),
            )
        };
        if n < 16 { 0 } else { out[0] }
    }

    /// Reads one plain 8-byte counter value.
    #[inline]
    pub fn read_one(fd: RawFd) -> Option<u64> {
        let mut v = 0u64;
        // SAFETY: `v` is a writable u64 and we pass its size.
        let n = unsafe { libc::read(fd, (&mut v as *mut u64).cast::<libc::c_void>(), 8) };
        (n == 8).then_some(v)
    }
}

/// CLOCK_MONOTONIC_RAW in nanoseconds (not slewed by NTP; the reference's wall clock), read
/// through the vDSO entry `clock` resolved before candidate code is loaded (no GOT slot).
#[inline]
pub fn monotonic_raw_ns() -> u64 {
    super::clock::monotonic_raw_ns()
}

/// Reads the TSC fenced on both sides: the first LFENCE keeps earlier work from spilling
/// past the read, the second keeps later work from starting before it. (On AMD the kernel
/// makes LFENCE dispatch-serialising, which is what this relies on.)
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub fn read_tsc() -> u64 {
    use std::arch::x86_64::{_mm_lfence, _rdtsc};
    // SAFETY: LFENCE is SSE2 (baseline on x86_64); RDTSC is always present on x86_64 and
    // user-readable unless the kernel set CR4.TSD, which Linux does not do by default.
    unsafe {
        _mm_lfence();
        let t = _rdtsc();
        _mm_lfence();
        t
    }
}

/// Reads CNTVCT_EL0 after an ISB so the read is not hoisted above earlier instructions.
#[cfg(target_arch = "aarch64")]
#[inline(always)]
pub fn read_cntvct() -> u64 {
    let v: u64;
    // SAFETY: CNTVCT_EL0 is readable from EL0 on Linux (the kernel enables it for the vDSO).
    unsafe { std::arch::asm!("isb", "mrs {v}, cntvct_el0", v = out(reg) v, options(nostack)) };
    v
}

/// CNTFRQ_EL0: the architectural frequency of CNTVCT, written by firmware.
#[cfg(target_arch = "aarch64")]
fn cntfrq() -> u64 {
    let v: u64;
    // SAFETY: CNTFRQ_EL0 is readable from EL0 whenever CNTVCT is.
    unsafe { std::arch::asm!("mrs {v}, cntfrq_el0", v = out(reg) v, options(nomem, nostack)) };
    v
}

/// Arithmetic the optimiser cannot remove; `n` steps of a 64-bit LCG.
#[inline(never)]
pub fn busy_loop(n: u64) -> u64 {
    let mut acc = 1u64;
    for i in 0..n {
        acc = black_box(acc.wrapping_mul(6364136223846793005).wrapping_add(i | 1));
    }
    acc
}

/// The counter used by the timing loop. Not `Sync`: it belongs to the thread that opened it
/// (perf counters count only that thread).
pub struct Counter {
    source: Source,
    /// perf cycles group leader (kind PerfCycles only).
    cycles_fd: Option<OwnedFd>,
    /// perf retired instructions: a group member when `cycles_fd` exists, else standalone.
    instructions_fd: Option<OwnedFd>,
    begin: u64,
    last_instructions: Option<u64>,
    hz: OnceCell<Option<f64>>,
}

impl std::fmt::Debug for Counter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Counter")
            .field("source", &self.source)
            .field("instructions", &self.instructions_fd.is_some())
            .finish()
    }
}

impl Counter {
    fn new(source: Source, cycles_fd: Option<OwnedFd>) -> Counter {
        Counter {
            source,
            cycles_fd,
            instructions_fd: None,
            begin: 0,
            last_instructions: None,
            hz: OnceCell::new(),
        }
    }

    /// The best counter that works on this host and thread; never fails (worst case `None`).
    pub fn open_best() -> Counter {
        [Source::PerfCycles, Source::arch_fallback()]
            .into_iter()
            .find_map(Counter::open_source)
            .unwrap_or_else(|| Counter::new(Source::None, None))
    }

    /// Opens exactly `kind`, or `None` if it is not available here. A perf counter is only
    /// accepted after it counted a short busy loop (some VMs open it but never count).
    pub fn open(kind: &CounterKind) -> Option<Counter> {
        Counter::open_source(Source::of(kind)?)
    }

    fn open_source(source: Source) -> Option<Counter> {
        match source {
            Source::PerfCycles => {
                let fd = perf::open(perf::HW_CPU_CYCLES, None, perf::FORMAT_GROUP).ok()?;
                let mut c = Counter::new(Source::PerfCycles, Some(fd));
                (c.verify_counts() > 0).then_some(c)
            }
            Source::Tsc if cfg!(target_arch = "x86_64") => Some(Counter::new(Source::Tsc, None)),
            Source::Cntvct if cfg!(target_arch = "aarch64") => {
                Some(Counter::new(Source::Cntvct, None))
            }
            Source::None => Some(Counter::new(Source::None, None)),
            _ => None,
        }
    }

    fn verify_counts(&mut self) -> u64 {
        // A few attempts: the first window may be too short to be scheduled on a PMU.
        for _ in 0..3 {
            self.start();
            black_box(busy_loop(200_000));
            let n = self.stop();
            if n > 0 {
                return n;
            }
        }
        0
    }

    /// Adds a user-mode retired-instructions counter, in the cycles group when perf cycles
    /// are in use (one enable/disable/read for both). Returns whether it counts.
    pub fn open_instructions(&mut self) -> bool {
        if self.instructions_fd.is_some() {
            return true;
        }
        let group = self.cycles_fd.as_ref().map(|fd| fd.as_raw_fd());
        let format = if group.is_some() {
            perf::FORMAT_GROUP
        } else {
            0
        };
        let Ok(fd) = perf::open(perf::HW_INSTRUCTIONS, group, format) else {
            return false;
        };
        self.instructions_fd = Some(fd);
        self.start();
        black_box(busy_loop(100_000));
        self.stop();
        if self.last_instructions.unwrap_or(0) == 0 {
            self.instructions_fd = None;
            self.last_instructions = None;
            return false;
        }
        self.last_instructions = None;
        true
    }

    pub fn kind(&self) -> CounterKind {
        self.source.kind()
    }

    /// Retired user-mode instructions of the last `start`/`stop` window, if counted.
    pub fn instructions(&self) -> Option<u64> {
        self.last_instructions
    }

    /// Ticks per second: TSC/perf measured against CLOCK_MONOTONIC_RAW (about 60 ms, once),
    /// CNTVCT from CNTFRQ_EL0. For perf cycles this is the busy core clock of that moment.
    pub fn hz(&self) -> Option<f64> {
        *self.hz.get_or_init(|| self.measure_hz())
    }

    /// The longest one tick can last, in ns, for a counter that runs with the wall clock:
    /// every TSC runs at 0.5 GHz or more (the rate `hz` measures is checked against that
    /// range), CNTVCT at CNTFRQ_EL0. `None` for perf cycles (they stop with the thread) and
    /// for no counter.
    pub fn max_tick_ns(&self) -> Option<f64> {
        match self.source {
            Source::Tsc => Some(2.0),
            #[cfg(target_arch = "aarch64")]
            Source::Cntvct if cntfrq() > 0 => Some(1e9 / cntfrq() as f64),
            _ => None,
        }
    }

    fn measure_hz(&self) -> Option<f64> {
        match self.source {
            Source::None => None,
            #[cfg(target_arch = "aarch64")]
            Source::Cntvct if cntfrq() > 0 => Some(cntfrq() as f64),
            _ => {
                let mut rates: Vec<f64> = (0..3).filter_map(|_| self.rate_window(20)).collect();
                rates.sort_by(f64::total_cmp);
                rates.get(rates.len() / 2).copied()
            }
        }
    }

    /// Ticks per second over one busy window of `ms` milliseconds of CLOCK_MONOTONIC_RAW.
    fn rate_window(&self, ms: u64) -> Option<f64> {
        let ns = ms * 1_000_000;
        let (ticks, elapsed) = match self.source {
            Source::PerfCycles => {
                let fd = self.cycles_fd.as_ref()?.as_raw_fd();
                perf::ioctl(fd, perf::IOC_RESET, perf::IOC_FLAG_GROUP);
                let t0 = monotonic_raw_ns();
                perf::ioctl(fd, perf::IOC_ENABLE, perf::IOC_FLAG_GROUP);
                let mut t1 = t0;
                while t1 - t0 < ns {
                    black_box(busy_loop(10_000));
                    t1 = monotonic_raw_ns();
                }
                perf::ioctl(fd, perf::IOC_DISABLE, perf::IOC_FLAG_GROUP);
                let mut buf = [0u64; 3];
                let nr = perf::read_group(fd, &mut buf);
                (if nr >= 1 { buf[1] } else { 0 }, t1 - t0)
            }
            _ => {
                let c0 = monotonic_raw_ns();
                let r0 = self.raw();
                let mut c1 = c0;
                while c1 - c0 < ns {
                    black_box(busy_loop(1_000));
                    c1 = monotonic_raw_ns();
                }
                let r1 = self.raw();
                (r1.wrapping_sub(r0), monotonic_raw_ns() - c0)
            }
        };
        (ticks > 0 && elapsed > 0).then(|| ticks as f64 * 1e9 / elapsed as f64)
    }

    /// Free-running timer value (TSC/CNTVCT); 0 for the other kinds.
    #[inline(always)]
    fn raw(&self) -> u64 {
        match self.source {
            #[cfg(target_arch = "x86_64")]
            Source::Tsc => read_tsc(),
            #[cfg(target_arch = "aarch64")]
            Source::Cntvct => read_cntvct(),
            _ => 0,
        }
    }

    /// Opens the timed window. perf: reset + enable (one ioctl each, for the whole group).
    #[inline]
    pub fn start(&mut self) {
        if let Some(fd) = &self.cycles_fd {
            let fd = fd.as_raw_fd();
            perf::ioctl(fd, perf::IOC_RESET, perf::IOC_FLAG_GROUP);
            perf::ioctl(fd, perf::IOC_ENABLE, perf::IOC_FLAG_GROUP);
            return;
        }
        self.start_instructions();
        self.begin = self.raw();
    }

    /// The standalone instructions counter (with TSC/CNTVCT), if there is one.
    #[inline]
    fn start_instructions(&self) {
        if let Some(fd) = &self.instructions_fd {
            start_standalone(fd.as_raw_fd());
        }
    }

    /// [`Counter::start`] and the clock read beside it: the trial's seconds start at the
    /// returned ns. With a free-running counter the two are read again while the counter ran
    /// more than [`PAIR_MAX_NS`] across the clock read: a preemption between the reads puts
    /// time in the ticks that the seconds lack (under load, an honest 11 ms trial once got
    /// 1.1 ms of it and was flagged by the record's clock check).
    pub fn start_timed(&mut self) -> u64 {
        let Some(limit) = self.pair_limit_ticks() else {
            self.start();
            return monotonic_raw_ns();
        };
        self.start_instructions();
        let (before, ns, _) = tight_pair(|| self.raw(), monotonic_raw_ns, limit);
        self.begin = before;
        ns
    }

    /// The clock read and [`Counter::stop`] closing a window opened by
    /// [`Counter::start_timed`], read again the same way: (ns, ticks).
    pub fn stop_timed(&mut self) -> (u64, u64) {
        let Some(limit) = self.pair_limit_ticks() else {
            let ns = monotonic_raw_ns();
            return (ns, self.stop());
        };
        let (_, ns, after) = tight_pair(|| self.raw(), monotonic_raw_ns, limit);
        (ns, self.finish(after))
    }

    /// Ticks that surely last [`PAIR_MAX_NS`] or less; `None` when the counter does not run
    /// with the wall clock (perf cycles, none).
    fn pair_limit_ticks(&self) -> Option<u64> {
        self.max_tick_ns()
            .map(|tick_ns| (PAIR_MAX_NS / tick_ns).max(1.0) as u64)
    }

    /// Closes the timed window and returns its ticks (0 when the counter cannot be read).
    #[inline]
    pub fn stop(&mut self) -> u64 {
        if let Some(fd) = &self.cycles_fd {
            let fd = fd.as_raw_fd();
            perf::ioctl(fd, perf::IOC_DISABLE, perf::IOC_FLAG_GROUP);
            let mut buf = [0u64; 3];
            let nr = perf::read_group(fd, &mut buf);
            if self.instructions_fd.is_some() {
                self.last_instructions = (nr >= 2).then_some(buf[2]);
            }
            return if nr >= 1 { buf[1] } else { 0 };
        }
        let end = self.raw();
        self.finish(end)
    }

    /// The free-running counter's window ends at `end`; the instructions counter stops now.
    #[inline]
    fn finish(&mut self, end: u64) -> u64 {
        if let Some(fd) = &self.instructions_fd {
            self.last_instructions = stop_standalone(fd.as_raw_fd());
        }
        end.wrapping_sub(self.begin)
    }
}

/// Longest a free-running counter may run across the clock read beside it (`start_timed`):
/// a normal pair takes well under 0.2 µs, and the record's clock check allows 2 µs a trial.
pub const PAIR_MAX_NS: f64 = 1_000.0;
/// Pairs read before the last one is kept anyway (a host preempting that often is flagged
/// by the check, as it should be).
const PAIR_TRIES: u32 = 64;

/// (counter, clock, counter) read in that order, again while the counter moved more than
/// `limit` ticks across the clock read.
fn tight_pair(counter: impl Fn() -> u64, clock: impl Fn() -> u64, limit: u64) -> (u64, u64, u64) {
    let mut before = counter();
    let mut ns = clock();
    let mut after = counter();
    for _ in 1..PAIR_TRIES {
        if after.wrapping_sub(before) <= limit {
            break;
        }
        before = counter();
        ns = clock();
        after = counter();
    }
    (before, ns, after)
}

#[inline]
fn start_standalone(fd: RawFd) {
    perf::ioctl(fd, perf::IOC_RESET, 0);
    perf::ioctl(fd, perf::IOC_ENABLE, 0);
}

#[inline]
fn stop_standalone(fd: RawFd) -> Option<u64> {
    perf::ioctl(fd, perf::IOC_DISABLE, 0);
    perf::read_one(fd)
}

/// Whether perf user-mode cycles open and count on this thread (i.e. `open_best` would pick
/// them).
pub fn perf_cycles_available() -> bool {
    Counter::open_source(Source::PerfCycles).is_some()
}

/// Cost of the bracket itself: ticks of back-to-back `start()`/`stop()`, as (min, median)
/// over 1001 samples after 32 untimed pairs. Recorded with results so readers can judge
/// operations that are not ≫ this.
pub fn overhead(counter: &mut Counter) -> (u64, u64) {
    if counter.source == Source::None {
        return (0, 0);
    }
    for _ in 0..32 {
        counter.start();
        counter.stop();
    }
    let mut samples = [0u64; 1001];
    for s in samples.iter_mut() {
        counter.start();
        *s = counter.stop();
    }
    samples.sort_unstable();
    (samples[0], samples[samples.len() / 2])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pair_interrupted_between_its_reads_is_read_again() {
        use std::cell::Cell;
        // A counter that jumps by a million ticks between the first counter read and the
        // second (a preemption across the clock read), then runs normally.
        let reads = Cell::new(0u64);
        let counter = || {
            let n = reads.get();
            reads.set(n + 1);
            100 * n + if n >= 1 { 1_000_000 } else { 0 }
        };
        let clock = Cell::new(0u64);
        let clock = || {
            clock.set(clock.get() + 1);
            clock.get()
        };
        let (before, ns, after) = tight_pair(counter, clock, 500);
        assert_eq!((before, ns, after), (1_000_200, 2, 1_000_300));
        // A host that preempts every pair: the last one is kept, after PAIR_TRIES.
        let reads = Cell::new(0u64);
        let jumpy = || {
            reads.set(reads.get() + 1);
            reads.get() * 10_000
        };
        let (before, _, after) = tight_pair(jumpy, || 0, 500);
        assert_eq!(after - before, 10_000);
        assert_eq!(reads.get(), 2 * PAIR_TRIES as u64);
    }

    /// Minimum ticks over `reps` windows of `n` busy steps.
    fn min_ticks(c: &mut Counter, n: u64, reps: usize) -> u64 {
        (0..reps)
            .map(|_| {
                c.start();
                black_box(busy_loop(n));
                c.stop()
            })
            .min()
            .unwrap_or(0)
    }

    #[test]
    fn labels_round_trip() {
        for k in [
            CounterKind::PerfCycles,
            CounterKind::Tsc,
            CounterKind::Cntvct,
            CounterKind::None,
        ] {
            assert_eq!(CounterKind::from(k.as_str()), k);
        }
        assert_eq!(CounterKind::PerfCycles.as_str(), "perf_cycles");
        assert_eq!(
            CounterKind::from("cycles"),
            CounterKind::Other("cycles".into())
        );
    }

    #[test]
    fn open_best_never_panics_and_picks_a_known_kind() {
        let c = Counter::open_best();
        let kind = c.kind();
        if cfg!(target_arch = "x86_64") {
            assert!(matches!(kind, CounterKind::PerfCycles | CounterKind::Tsc));
        } else if cfg!(target_arch = "aarch64") {
            assert!(matches!(
                kind,
                CounterKind::PerfCycles | CounterKind::Cntvct
            ));
        }
        // perf cycles are either fully usable or absent, never a half-open counter.
        assert_eq!(kind == CounterKind::PerfCycles, perf_cycles_available());
    }

    #[test]
    fn foreign_arch_counters_are_refused() {
        if cfg!(target_arch = "x86_64") {
            assert!(Counter::open(&CounterKind::Cntvct).is_none());
        }
        if cfg!(target_arch = "aarch64") {
            assert!(Counter::open(&CounterKind::Tsc).is_none());
        }
        let mut none = Counter::open(&CounterKind::None).unwrap();
        none.start();
        assert_eq!(none.stop(), 0);
        assert_eq!(none.hz(), None);
        assert_eq!(overhead(&mut none), (0, 0));
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn tsc_is_monotonic_and_advances_over_busy_work() {
        let mut prev = read_tsc();
        let first = prev;
        for _ in 0..10_000 {
            let t = read_tsc();
            assert!(t >= prev, "TSC went backwards: {prev} -> {t}");
            prev = t;
        }
        black_box(busy_loop(100_000));
        assert!(read_tsc() > first);
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn tsc_rate_is_a_plausible_clock() {
        let c = Counter::open(&CounterKind::Tsc).unwrap();
        let hz = c.hz().expect("TSC rate measurable");
        assert!((0.5e9..6.0e9).contains(&hz), "TSC at {hz} Hz");
        assert_eq!(c.hz(), Some(hz), "rate is measured once and cached");
        let tick_ns = 1e9 / hz;
        assert!(
            tick_ns <= c.max_tick_ns().unwrap(),
            "a tick lasts {tick_ns} ns"
        );
    }

    #[test]
    fn best_counter_rate_is_plausible() {
        let c = Counter::open_best();
        match c.kind() {
            CounterKind::None => assert_eq!(c.hz(), None),
            // CNTVCT runs from ~1 MHz up; core clocks and TSC are GHz-range.
            CounterKind::Cntvct => assert!((1e6..6e9).contains(&c.hz().unwrap())),
            _ => assert!((0.1e9..6.0e9).contains(&c.hz().unwrap())),
        }
    }

    #[test]
    fn twice_the_work_takes_about_twice_the_ticks() {
        let mut c = Counter::open_best();
        if c.kind() == CounterKind::None {
            return;
        }
        // Short loops (well under a scheduler slice) and the minimum of many: a loaded VM
        // preempts a long loop nearly every time, which says nothing about the counter.
        let n = 300_000;
        let mut ratios = Vec::new();
        for _ in 0..5 {
            let one = min_ticks(&mut c, n, 15);
            let two = min_ticks(&mut c, 2 * n, 15);
            let ratio = two as f64 / one.max(1) as f64;
            if (1.5..=2.6).contains(&ratio) {
                return;
            }
            ratios.push(ratio);
        }
        panic!("2x work gave ratios {ratios:?} ({})", c.kind());
    }

    #[test]
    fn overhead_is_small_against_real_work() {
        let mut c = Counter::open_best();
        let (min, median) = overhead(&mut c);
        if c.kind() == CounterKind::None {
            assert_eq!((min, median), (0, 0));
        } else {
            // An empty bracket costs far less than a window holding a million busy steps
            // (a few ms of work; the minimum of 5 windows stays so under load).
            let work = min_ticks(&mut c, 1_000_000, 5);
            assert!(
                median * 10 < work,
                "overhead {median} ticks vs {work} for work"
            );
            // Even a syscall-based perf read stays far below a millisecond of ticks.
            let hz = c.hz().unwrap_or(1e9);
            assert!(
                (median as f64) < hz * 1e-3,
                "overhead {median} ticks at {hz} Hz"
            );
        }
    }

    /// Exercises the perf plumbing (attr layout, group ioctls, group read) with the software
    /// task clock, which works even where hardware counters do not (VMs, CI).
    #[test]
    fn perf_group_plumbing_counts_with_a_software_event() {
        let Ok(leader) = perf::open_typed(
            perf::TYPE_SOFTWARE,
            perf::SW_TASK_CLOCK,
            None,
            perf::FORMAT_GROUP,
        ) else {
            crate::util::say!("SKIPPED: perf_event_open refused even a software event");
            return;
        };
        let member = perf::open_typed(
            perf::TYPE_SOFTWARE,
            perf::SW_TASK_CLOCK,
            Some(leader.as_raw_fd()),
            perf::FORMAT_GROUP,
        )
        .expect("group member opens when the leader did");
        let mut c = Counter::new(Source::PerfCycles, Some(leader));
        c.instructions_fd = Some(member);
        let short = min_ticks(&mut c, 200_000, 3);
        assert!(short > 0, "task clock counted nothing");
        assert!(c.instructions().unwrap() > 0, "group member not read");
        let long = min_ticks(&mut c, 2_000_000, 3);
        assert!(long > short, "{long} ns !> {short} ns");
        // Disabled between windows: CPU work done while the counter is stopped is not in
        // the next window (the task clock counts CPU time, so the gap must be busy, not
        // asleep, for a counter left running to show it).
        c.start();
        c.stop();
        black_box(busy_loop(4_000_000));
        c.start();
        let empty = c.stop();
        assert!(
            empty < long / 4,
            "disabled counter kept counting: {empty} ns after a gap of about 2x {long} ns"
        );
        // Task clock is this thread's CPU time in ns: ≤ 1e9 per wall second, less when
        // other threads compete for the core (as user cycles would).
        let hz = c.hz().unwrap();
        assert!(hz > 0.0 && hz < 1.1e9, "task clock rate {hz}");
    }

    #[test]
    fn monotonic_raw_advances() {
        let a = monotonic_raw_ns();
        black_box(busy_loop(100_000));
        let b = monotonic_raw_ns();
        assert!(b > a);
    }

    #[test]
    fn instructions_are_optional_and_consistent() {
        let mut c = Counter::open_best();
        let has = c.open_instructions();
        assert_eq!(has, c.instructions_fd.is_some());
        c.start();
        black_box(busy_loop(100_000));
        c.stop();
        if has {
            assert!(c.instructions().unwrap() >= 100_000);
        } else {
            assert_eq!(c.instructions(), None);
        }
    }
}
