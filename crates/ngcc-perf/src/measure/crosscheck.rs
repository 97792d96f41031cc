//! The record cross-checks (issue 12): a timing record's trials are the candidate's
//! process's own words, so they are held against what the orchestrator observed from
//! outside. Pure: the measure phase decides a record's status with it, `validate` recomputes
//! it from the stored evidence.
//!
//! The bands, chosen for a noisy shared VM (honest PQClean code never came near them, see
//! ARCHITECTURE.md "Hostile candidates"):
//! - *Wall*: a process's timed trial seconds fit in the wall time the orchestrator measured
//!   around its whole jail, within [`WALL_TOL`] + [`WALL_ABS_S`] (the child's
//!   CLOCK_MONOTONIC_RAW and the orchestrator's CLOCK_MONOTONIC may drift apart by NTP slew).
//! - *CPU*: the CPU seconds the trials claim (their own getrusage around each trial) fit in
//!   the CPU time of the jail's whole process tree (wait4 rusage), within [`CPU_TOL`] +
//!   [`CPU_ABS_S`]. (A trial's seconds are not held to CPU time: a library that sleeps is
//!   slow, not lying, and its trials are `disturbed` by the lost-CPU rule.)
//! - *Clock*: for a counter with a known frequency (TSC, CNTVCT), each trial's ticks per
//!   claimed second are within [`CLOCK_BAND`] of it (+ [`CLOCK_ABS_S`] per trial): catches
//!   a patched `clock_gettime`. Counters of core cycles have no fixed rate and are not held,
//!   nor KEX step trials (their seconds include counter reads, their ticks do not).
//! - *Calibration*: no trial's per-call seconds are below the calibration's fastest warm
//!   call over [`CAL_FAST`] (less [`CAL_ABS_S`]), and the median trial's are not above
//!   [`CAL_SLOW`] times it: catches a library that does less work in trials than in
//!   calibration. The fastest warm call, not the median: on a loaded VM a median of ms-long
//!   calls is stretched by preemption (the zoo's 2 ms toy: a 10 ms median), rarely all 51.
//!   Long trial loops absorb preemption and steal: on this VM under load, honest KEX step
//!   trials ran 7 to 11 times slower than calibration, hence the wide slow side (a slow
//!   trial gains a candidate nothing; the side is a sanity bound, not held when signing
//!   attempts failed and were retried). Operations of seconds have no warm batches: their
//!   bound is the cold call (Origami-128 sign on a core at half clock: a 6.5 s cold call with
//!   one failed attempt, then trials of 11 ms, is flagged 603 times faster; a known limit).

use crate::dataset::schema::{
    Calibration, CounterKind, META_SIGN_FAILURES_RETRIED, Process, Record, RecordChecks, Trial,
};

/// The calibration's fastest warm per-call time for the calibration check (its estimate in
/// calibrations written before the fastest call was kept).
pub fn calibration_bound(cal: &Calibration) -> f64 {
    if cal.t1_min_s > 0.0 {
        cal.t1_min_s
    } else {
        cal.t1_s
    }
}

/// Timed seconds may exceed the observed wall time by this fraction plus [`WALL_ABS_S`].
pub const WALL_TOL: f64 = 0.01;
pub const WALL_ABS_S: f64 = 0.002;
/// Claimed CPU seconds may exceed the tree's rusage CPU time by this fraction plus
/// [`CPU_ABS_S`] (rusage is accounted in µs; the child's own reads are a few µs apart).
pub const CPU_TOL: f64 = 0.02;
pub const CPU_ABS_S: f64 = 0.005;
/// Ticks per claimed second within this fraction of the counter's frequency.
pub const CLOCK_BAND: f64 = 0.05;
/// Per trial, the ticks may also be off by this many seconds' worth (counter and clock are
/// read a few instructions apart; KEX steps read them once per step).
pub const CLOCK_ABS_S: f64 = 2e-6;
/// No trial may be more than this many times faster per call than the calibration.
pub const CAL_FAST: f64 = 3.0;
/// Calibration times single calls between two clock and counter reads (about 0.75 µs on
/// this VM), trials time a loop, and a library's I/O may block single calls (the zoo's
/// chatty toy: 4.3 µs warm calls, 0.7 µs in trials): calibration may be this much slower.
pub const CAL_ABS_S: f64 = 5e-6;
/// The median trial may be at most this many times slower per call than the calibration.
pub const CAL_SLOW: f64 = 50.0;

/// The figures of the checks and the first one that failed.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    pub figures: RecordChecks,
    pub failure: Option<String>,
}

/// The evidence a record is checked against besides its processes.
pub struct Evidence {
    pub counter: CounterKind,
    /// The counter's frequency when it is not a core-cycle counter.
    pub counter_hz: Option<f64>,
    /// The calibration's fastest warm call in seconds (0: none, not held).
    pub calibration_min_s: f64,
}

impl Evidence {
    /// What a record stores of it (`ngcc`), if it was checked when it was written.
    pub fn of(r: &Record) -> Option<Evidence> {
        let x = r.ngcc.as_ref()?;
        Some(Evidence {
            counter: x.counter.clone(),
            counter_hz: x.counter_hz,
            calibration_min_s: x.checks.as_ref()?.calibration_min_s,
        })
    }
}

fn per_call(t: &Trial) -> f64 {
    t.seconds / t.measurements.max(1) as f64
}

/// Checks every process that has trials and was observed; `last_outputs` are carried over
/// (their verification is done by the measure phase in its own child).
pub fn check(processes: &[Process], ev: &Evidence, last_outputs: Vec<String>) -> Verdict {
    let mut f = RecordChecks {
        calibration_min_s: ev.calibration_min_s,
        last_outputs,
        ..RecordChecks::default()
    };
    let mut failure: Option<String> = None;
    let mut fail = |why: String| {
        failure.get_or_insert(why);
    };
    let fixed_rate = matches!(ev.counter, CounterKind::Tsc | CounterKind::Cntvct);
    let hz = ev.counter_hz.filter(|h| *h > 0.0 && fixed_rate);
    let mut clock: Option<(f64, f64)> = None;
    for (k, p) in processes.iter().enumerate() {
        if p.trials.is_empty() {
            continue;
        }
        if let Some(o) = &p.observed {
            let timed: f64 = p.trials.iter().map(Trial::loop_wall_s).sum();
            if o.wall_s > 0.0 {
                f.wall_fill = f.wall_fill.max(timed / o.wall_s);
            }
            if timed > o.wall_s * (1.0 + WALL_TOL) + WALL_ABS_S {
                fail(format!(
                    "process {k}: its trials claim {timed:.6} s of timing, its jail ran {:.6} s (wall, observed)",
                    o.wall_s
                ));
            }
            let cpu = o.tree_usage.cpu_s();
            let claim: f64 = p.trials.iter().filter_map(|t| t.cpu_seconds).sum();
            if cpu > 0.0 {
                f.cpu_fill = f.cpu_fill.max(claim / cpu);
            }
            if claim > cpu * (1.0 + CPU_TOL) + CPU_ABS_S {
                fail(format!(
                    "process {k}: its trials claim {claim:.6} s on the CPU, its jail used {cpu:.6} s (rusage, observed)"
                ));
            }
        }
        if let Some(hz) = hz {
            // KEX steps (`loop_seconds`) time counter reads into their seconds, not into
            // their ticks: a µs step is 0.4 of its seconds in ticks. Not held.
            for (i, t) in p
                .trials
                .iter()
                .enumerate()
                .filter(|(_, t)| t.loop_seconds.is_none())
            {
                let ratio = if t.seconds > 0.0 {
                    t.cycles as f64 / hz / t.seconds
                } else {
                    f64::INFINITY
                };
                clock =
                    Some(clock.map_or((ratio, ratio), |(lo, hi)| (lo.min(ratio), hi.max(ratio))));
                let off = (t.cycles as f64 / hz - t.seconds).abs();
                if off > CLOCK_BAND * t.seconds + CLOCK_ABS_S {
                    fail(format!(
                        "process {k} trial {i}: {} {} ticks are {:.6} s at {hz:.0} Hz, the trial claims {:.6} s (×{ratio:.2})",
                        t.cycles,
                        ev.counter,
                        t.cycles as f64 / hz,
                        t.seconds
                    ));
                }
            }
        }
    }
    f.clock_ratio = clock;
    let mut calls: Vec<f64> = processes
        .iter()
        .flat_map(|p| p.trials.iter().map(per_call))
        .collect();
    calls.sort_by(f64::total_cmp);
    if ev.calibration_min_s > 0.0 && !calls.is_empty() {
        let t1 = ev.calibration_min_s;
        let (fastest, median) = (calls[0], calls[calls.len() / 2]);
        f.calibration_ratio = (fastest / t1, median / t1);
        if fastest * CAL_FAST + CAL_ABS_S < t1 {
            fail(format!(
                "a trial took {fastest:.3e} s per call, {:.1} times faster than calibration's {t1:.3e} s (band ×{CAL_FAST})",
                t1 / fastest.max(f64::MIN_POSITIVE)
            ));
        }
        // Failed signing attempts make trials slower than calibration's fastest call by
        // design (Origami-128 sign: 9 % of signs retry attempts 470 times dearer, a median
        // trial 46 times the fastest call); a slow trial gains a candidate nothing.
        let retried = processes
            .iter()
            .any(|p| p.meta_count(META_SIGN_FAILURES_RETRIED).unwrap_or(0) > 0);
        if median > t1 * CAL_SLOW && !retried {
            fail(format!(
                "the median trial took {median:.3e} s per call, {:.1} times slower than calibration's {t1:.3e} s (band ×{CAL_SLOW})",
                median / t1
            ));
        }
    }
    if let Some(bad) = f.last_outputs.iter().find(|v| v.starts_with("FAILED")) {
        fail(format!("last outputs: {bad}"));
    }
    Verdict {
        figures: f,
        failure,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::schema::{Observed, Usage};

    fn process(seconds: f64, cycles: u64, wall: f64, cpu: f64) -> Process {
        Process {
            trials: vec![Trial {
                measurements: 100,
                seconds,
                cycles,
                cpu_seconds: Some(seconds),
                ..Trial::default()
            }],
            observed: Some(Observed {
                wall_s: wall,
                tree_usage: Usage {
                    user_s: cpu,
                    ..Usage::default()
                },
                ..Observed::default()
            }),
            ..Process::default()
        }
    }

    fn ev(t1: f64) -> Evidence {
        Evidence {
            counter: CounterKind::Tsc,
            counter_hz: Some(1e9),
            calibration_min_s: t1,
        }
    }

    #[test]
    fn an_honest_process_passes() {
        let v = check(&[process(0.1, 100_000_000, 0.12, 0.11)], &ev(1e-3), vec![]);
        assert_eq!(v.failure, None);
        assert_eq!(v.figures.clock_ratio, Some((1.0, 1.0)));
        assert_eq!(v.figures.calibration_ratio, (1.0, 1.0));
    }

    #[test]
    fn each_check_names_what_it_saw() {
        let v = check(&[process(0.1, 100_000_000, 0.05, 0.2)], &ev(1e-3), vec![]);
        assert!(v.failure.unwrap().contains("jail ran 0.050000 s (wall"));
        let v = check(&[process(0.1, 100_000_000, 0.2, 0.05)], &ev(1e-3), vec![]);
        assert!(v.failure.unwrap().contains("jail used 0.050000 s (rusage"));
        let v = check(&[process(0.1, 340_000_000, 0.5, 0.5)], &ev(1e-3), vec![]);
        assert!(v.failure.unwrap().contains("(×3.40)"));
        let v = check(&[process(0.1, 100_000_000, 0.2, 0.2)], &ev(0.7), vec![]);
        assert!(v.failure.unwrap().contains("700.0 times faster"));
        let v = check(&[process(0.1, 100_000_000, 0.2, 0.2)], &ev(1e-6), vec![]);
        assert!(v.failure.unwrap().contains("1000.0 times slower"));
        let kex = vec!["not verified: KEX outputs are not checked".to_string()];
        let v = check(&[process(0.1, 100_000_000, 0.2, 0.2)], &ev(1e-3), kex);
        assert_eq!(v.failure, None);
        let bad = vec!["FAILED: ct does not decapsulate".to_string()];
        let v = check(&[process(0.1, 100_000_000, 0.2, 0.2)], &ev(1e-3), bad);
        assert_eq!(
            v.failure.unwrap(),
            "last outputs: FAILED: ct does not decapsulate"
        );
    }

    #[test]
    fn retried_signing_attempts_may_be_slow_but_never_fast() {
        let mut p = process(0.1, 100_000_000, 0.2, 0.2);
        p.meta.insert(META_SIGN_FAILURES_RETRIED.into(), "3".into());
        assert_eq!(check(&[p.clone()], &ev(1e-6), vec![]).failure, None);
        let v = check(&[p], &ev(0.7), vec![]);
        assert!(v.failure.unwrap().contains("700.0 times faster"));
    }

    #[test]
    fn a_sleeping_trial_is_not_a_liar() {
        // Said it lost the CPU (and is `disturbed` for it): its seconds need no CPU time.
        let mut p = process(0.1, 100_000_000, 0.12, 0.001);
        p.trials[0].cpu_seconds = Some(0.0005);
        assert_eq!(check(&[p], &ev(1e-3), vec![]).failure, None);
    }

    #[test]
    fn core_cycles_have_no_clock_band() {
        let e = Evidence {
            counter: CounterKind::PerfCycles,
            counter_hz: None,
            calibration_min_s: 1e-3,
        };
        let v = check(&[process(0.1, 340_000_000, 0.5, 0.5)], &e, vec![]);
        assert_eq!((v.failure, v.figures.clock_ratio), (None, None));
    }
}
