//! The calibrate and trial jobs: prepare one operation, warm up, and time it with no clock
//! read inside the loop (reference §2.5), reporting cycles and CLOCK_MONOTONIC_RAW seconds.

use super::library::Lib;
use super::memory;
use super::ops::{OpError, Runner, seed_library};
use super::protocol::{OpJob, OpOutput};
use crate::dataset::schema::{CalibrationBatch, Trial};
use crate::dataset::schema::{Op, ProcessStatus, TimingScope};
use crate::measure::calibration as cal;
use crate::measure::counter::{Counter, monotonic_raw_ns, overhead};

/// Folder (in the working directory, the jail's scratch) where a trial leaves its buffers
/// after the last timed iteration, in the setup layout: the outputs the parent can verify.
pub const LAST_OUTPUTS: &str = "last";
/// Above this, one cold call is the calibration (a warm repeat would cost too much).
const SLOW_CALL_S: f64 = 5.0;

/// A counter opened before the jail's seccomp filter (which denies perf_event_open).
static PREOPENED: std::sync::Mutex<Option<Counter>> = std::sync::Mutex::new(None);

/// Opens the job's counter now, before the library is loaded; `ready` takes it.
pub fn preopen_counter(job: &OpJob) {
    let c = new_counter(job);
    *PREOPENED.lock().unwrap_or_else(|e| e.into_inner()) = Some(c);
}

fn open_counter(job: &OpJob) -> Counter {
    let pre = PREOPENED.lock().unwrap_or_else(|e| e.into_inner()).take();
    pre.unwrap_or_else(|| new_counter(job))
}

fn new_counter(job: &OpJob) -> Counter {
    let forced = job.counter.as_ref().and_then(Counter::open);
    let mut c = forced.unwrap_or_else(Counter::open_best);
    c.open_instructions();
    c
}

struct Ready<'l> {
    runner: Runner<'l>,
    counter: Counter,
    out: OpOutput,
}

fn ready<'l>(
    job: &OpJob,
    lib: &'l Lib,
    save: bool,
    t_start: u64,
) -> Result<Ready<'l>, Box<OpOutput>> {
    let counter = open_counter(job);
    let mut out = OpOutput {
        counter: counter.kind(),
        ..OpOutput::default()
    };
    let fail = |mut out: OpOutput, e: String| {
        out.status = ProcessStatus::Failed;
        out.error = Some(e);
        Box::new(out)
    };
    if let Err(e) = seed_library(lib, job.api, job.seed_tweak, job.rng) {
        return Err(fail(out, e.into()));
    }
    let op = if job.kind == crate::candidate::Kind::Hash {
        Op::Hash
    } else {
        job.op.clone()
    };
    if save {
        let _ = std::fs::create_dir_all(&job.setup_dir);
    }
    super::crash::stage(&format!("setup for {op}"));
    let prepared = Runner::prepare(lib, job.kind, &op, job.input_bytes, &job.setup_dir, save);
    super::crash::stage(&op.name());
    let runner = match prepared {
        Ok(r) => r,
        Err(e) => return Err(fail(out, e.into())),
    };
    out.ready_s = (monotonic_raw_ns() - t_start) as f64 / 1e9;
    Ok(Ready {
        runner,
        counter,
        out,
    })
}

pub fn calibrate(job: &OpJob, lib: &Lib, t_start: u64) -> OpOutput {
    let Ready {
        mut runner,
        mut counter,
        mut out,
    } = match ready(job, lib, true, t_start) {
        Ok(r) => r,
        Err(o) => return *o,
    };
    let loaded = job.setup_dir.join("setup.json").is_file();
    out.prepare_s = runner.facts().prepare_s;
    if !loaded {
        out.prepare_s = 0.0;
    }
    out.counter_overhead_ticks = overhead(&mut counter).1;
    let baseline = memory::rss_bytes();
    // The cold first call (the reference's calibration), the trial's warm-up, then batches
    // of back-to-back calls (measure::calibration); every batch is kept as evidence.
    let per_step = runner.timing_scope() == TimingScope::PerCallStep;
    let time_batch =
        |runner: &mut Runner, counter: &mut Counter, k: u64| -> Result<(f64, u64), TrialError> {
            if per_step {
                return step_trial(runner, counter, k);
            }
            loop_trial(runner, counter, k)
        };
    match time_batch(&mut runner, &mut counter, 1) {
        Ok((s, c)) => {
            out.cold_s = s;
            out.cold_ticks = c;
        }
        Err(e) => {
            out.status = ProcessStatus::Failed;
            out.error = Some(format!("measured operation failed: {e}"));
            return out;
        }
    }
    if out.cold_s < cal::WARMUP_BELOW_S {
        for _ in 0..cal::WARMUP_CALLS {
            if let Err(e) = time_batch(&mut runner, &mut counter, 1) {
                out.status = ProcessStatus::Failed;
                out.error = Some(format!("warm-up operation failed: {e}"));
                return out;
            }
            out.warmup_calls += 1;
        }
    }
    // KEX steps are timed one step at a time (as their trials are): batches of one.
    let min_s = if per_step { 0.0 } else { cal::BATCH_MIN_S };
    if out.cold_s < SLOW_CALL_S {
        let mut k = 1;
        let t0 = monotonic_raw_ns();
        while !cal::enough(
            &out.batches,
            min_s,
            (monotonic_raw_ns() - t0) as f64 / 1e9,
            job.calibration_s,
        ) {
            match time_batch(&mut runner, &mut counter, k) {
                Ok((seconds, ticks)) => {
                    out.batches.push(CalibrationBatch {
                        calls: k,
                        seconds,
                        ticks,
                    });
                    if !per_step {
                        k = cal::next_batch_calls(k, seconds);
                    }
                }
                Err(e) => {
                    out.status = ProcessStatus::Failed;
                    out.error = Some(format!("warm-up operation failed: {e}"));
                    return out;
                }
            }
        }
    }
    out.warm_calls = out.batches.iter().map(|b| b.calls).sum();
    let (t1, ticks) = cal::estimate(&out.batches, min_s).unwrap_or((out.cold_s, out.cold_ticks));
    out.t1_s = t1;
    out.t1_ticks = ticks;
    // The fastest warm batch per call: the cross-check's bound on how fast a trial may be.
    out.t1_min_s = out
        .batches
        .iter()
        .filter(|b| b.calls > 0)
        .map(|b| b.seconds / b.calls as f64)
        .min_by(f64::total_cmp)
        .unwrap_or(out.cold_s);
    // The cold call as a trial, so a single-call plan can reuse it as the measurement.
    out.trials = vec![Trial {
        measurements: 1,
        seconds: out.cold_s,
        cycles: out.cold_ticks,
        ..Trial::default()
    }];
    // Peak stack of one more call, on a painted stack (outside any timed window).
    if runner.timing_scope() == TimingScope::Loop {
        let mut err = None;
        out.stack_peak_bytes = super::stack::peak_stack_bytes(&mut || {
            if let Err(e) = runner.call() {
                err = Some(e);
            }
        });
        if let Some(e) = err {
            out.status = ProcessStatus::Failed;
            out.error = Some(format!("operation failed on the measured stack: {e}"));
            return out;
        }
    }
    if let Err(e) = runner.check_guards() {
        out.status = ProcessStatus::Failed;
        out.error = Some(e.to_string());
        return out;
    }
    out.meta = runner.meta(&out.counter, 0, baseline, memory::peak_rss_bytes(), 1);
    out.timing_scope = runner.timing_scope();
    out.status = ProcessStatus::Complete;
    out
}

pub fn trial(job: &OpJob, lib: &Lib, t_start: u64) -> OpOutput {
    let Ready {
        mut runner,
        mut counter,
        mut out,
    } = match ready(job, lib, false, t_start) {
        Ok(r) => r,
        Err(o) => return *o,
    };
    let baseline = memory::rss_bytes();
    for _ in 0..job.warmups {
        let r = if runner.timing_scope() == TimingScope::Loop {
            runner.call()
        } else {
            runner.call_step(&mut counter).map(|_| ())
        };
        if let Err(e) = r {
            out.status = ProcessStatus::Failed;
            out.error = Some(format!("warm-up operation failed: {e}"));
            return out;
        }
    }
    let per_step = runner.timing_scope() == TimingScope::PerCallStep;
    for _ in 0..job.trials {
        let cpu0 = memory::cpu_seconds();
        let wall0 = monotonic_raw_ns();
        let result = if per_step {
            step_trial(&mut runner, &mut counter, job.iterations)
        } else {
            loop_trial(&mut runner, &mut counter, job.iterations)
        };
        let cpu = memory::cpu_seconds() - cpu0;
        let wall = (monotonic_raw_ns() - wall0) as f64 / 1e9;
        match result {
            Ok((seconds, cycles)) => out.trials.push(Trial {
                measurements: job.iterations,
                seconds,
                cycles,
                instructions: counter.instructions(),
                cpu_seconds: Some(cpu),
                loop_seconds: per_step.then_some(wall),
            }),
            Err(e) => {
                out.error = Some(format!("measured operation failed: {e}"));
                break;
            }
        }
        if let Err(e) = runner.check_guards() {
            out.error = Some(e.to_string());
            out.trials.pop();
            break;
        }
    }
    if !out.trials.is_empty() {
        let dir = std::path::Path::new(LAST_OUTPUTS);
        if let Err(e) = std::fs::create_dir_all(dir)
            .map_err(|e| e.to_string())
            .and_then(|()| runner.save(dir).map_err(String::from))
        {
            out.error
                .get_or_insert(format!("saving the last outputs: {e}"));
        }
    }
    let count = out.trials.iter().map(|t| t.measurements).sum();
    out.timing_scope = runner.timing_scope();
    out.meta = runner.meta(
        &out.counter,
        job.warmups,
        baseline,
        memory::peak_rss_bytes(),
        count,
    );
    out.status = match (out.error.is_some(), out.trials.is_empty()) {
        (false, _) => ProcessStatus::Complete,
        (true, false) => ProcessStatus::Partial,
        (true, true) => ProcessStatus::Failed,
    };
    out
}

/// ITERS operations between one counter start/stop and two clock reads.
fn loop_trial(
    runner: &mut Runner,
    counter: &mut Counter,
    iters: u64,
) -> Result<(f64, u64), TrialError> {
    let t0 = counter.start_timed();
    let done = runner.call_n(iters);
    let (t1, cycles) = counter.stop_timed();
    done?;
    Ok(((t1 - t0) as f64 / 1e9, cycles))
}

/// Why a trial (or a batch) stopped: the operation failed, or the clock and the counter
/// kept disagreeing about its steps. The text goes into the process record.
#[derive(Debug, thiserror::Error)]
enum TrialError {
    #[error(transparent)]
    Op(#[from] OpError),
    #[error(
        "{redone} steps took longer by the clock than their ticks can last \
         ({ns} ns for {ticks} ticks): the clock and the counter disagree"
    )]
    ClockDisagrees { redone: u64, ns: u64, ticks: u64 },
}

/// KEX steps: whole protocol runs, only the selected step timed, summed.
fn step_trial(
    runner: &mut Runner,
    counter: &mut Counter,
    iters: u64,
) -> Result<(f64, u64), TrialError> {
    // Each step has its own bracket (clock read, counter start, step, counter stop, clock
    // read: `Kex::run`); on a VM the bracket can cost more than a short step (init_a: 126 ns
    // timed next to 131 ticks, 54 ns at 2.445 GHz). The cheapest of many brackets around
    // nothing is subtracted from both, per step: its fixed cost. Subtracting the mean instead
    // took a step of a few ticks to zero on a host whose bracket is noisy, and a record
    // with a zero-tick trial loses its counter.
    let (empty_ns, empty_ticks) = empty_bracket(counter, iters.clamp(1, 10_000));
    // A preemption between a clock read and the counter lengthens the step's seconds only
    // (a 34 ns step once averaged 3.7 µs under load). With a counter that runs with the wall
    // clock, a step whose seconds exceed what its ticks can last is run again.
    let max_tick_ns = counter.max_tick_ns();
    let max_ns = |ticks: u64| {
        max_tick_ns.map(|tick| tick * ticks as f64 + 2.0 * empty_ns as f64 + MAX_OUTSIDE_NS)
    };
    let (mut ns, mut ticks, mut done, mut redone) = (0u64, 0u64, 0u64, 0u64);
    while done < iters {
        let (n, t) = runner.call_step(counter)?;
        if max_ns(t).is_some_and(|max| n as f64 > max) {
            redone += 1;
            if redone > iters.max(16) {
                return Err(TrialError::ClockDisagrees {
                    redone,
                    ns: n,
                    ticks: t,
                });
            }
            continue;
        }
        ns += n;
        ticks += t;
        done += 1;
    }
    let seconds = ns.saturating_sub(empty_ns * iters).max(1) as f64 / 1e9;
    let ticks = match ticks {
        0 => 0,
        t => t.saturating_sub(empty_ticks * iters).max(1),
    };
    Ok((seconds, ticks))
}

/// Nanoseconds a step's clock interval may exceed its ticks' longest duration by before it is
/// taken as interrupted outside the counter (an interrupt of a few µs is let through).
const MAX_OUTSIDE_NS: f64 = 2_000.0;

/// The cheapest ns and ticks among `n` step brackets around nothing.
fn empty_bracket(counter: &mut Counter, n: u64) -> (u64, u64) {
    let (mut ns, mut ticks) = (u64::MAX, u64::MAX);
    for _ in 0..n {
        let t0 = monotonic_raw_ns();
        counter.start();
        ticks = ticks.min(std::hint::black_box(counter.stop()));
        ns = ns.min(monotonic_raw_ns() - t0);
    }
    (ns, ticks)
}
