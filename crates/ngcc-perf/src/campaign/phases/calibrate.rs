//! Phase `calibrate`: warm calibration of every operation in a pinned child, which also
//! builds and saves the operation's setup (key pairs, ciphertexts, signatures) once.

use crate::campaign::context::{MeasureCtx, Target, exchange_calibration};
use crate::campaign::fresh;
use crate::campaign::measurable::{self, Measurable};
use crate::campaign::phases::outputs;
use crate::child::protocol::Request;
use crate::dataset::schema::{Calibration, Op, ProcessStatus};
use crate::measure::calibration::calibration_s;
use crate::measure::plan::plan;
use crate::sandbox::jail::ingest;
use crate::util::progress::Progress;
use crate::util::{tail, write_json};
use anyhow::Result;

/// Calibration of one op may take at most this long before it is killed.
const CALIBRATION_TIMEOUT_S: u64 = 6 * 3600;
/// Operations faster than this get dry trials (slower ones have plans whose trials dwarf
/// any process cost, and a dry call would cost as much as it tells).
const DRY_BELOW_S: f64 = 0.01;
const DRY_TRIALS: usize = 3;
/// Seconds of calls in each dry trial. A trial process's fixed cost grows with the work it
/// has done (measured on ML-KEM-512 clean keygen: 8.5 ms after one call, 9.4 ms after 100,
/// 10.4 ms after 800 and no more after 8000), so a one-call dry trial planned too short.
/// At most the calibration's own time (small budgets).
const DRY_WORK_S: f64 = 0.025;
const DRY_TIMEOUT_S: f64 = 600.0;
/// Most bytes a calibration's saved setup, or a trial's last outputs, may take.
pub const SETUP_CAP: u64 = 4 << 30;

pub fn run(ctx: &MeasureCtx, todo: &[Measurable]) -> Result<()> {
    let run = ctx.run;
    let progress = Progress::new("calibrate", todo.len() as u64);
    for (s, e) in todo {
        // KEX: the exchange first; its passes decide the steps.
        let mut done_ops = 0;
        loop {
            let exchange = exchange_calibration(run, s);
            let ops = measurable::operations(s.cand.kind, exchange.as_ref());
            for op in &ops {
                let t = Target {
                    sel: s,
                    entry: e,
                    op,
                };
                let key = t.key();
                let path = run.calibration_path(t.cand(), t.label(), &key);
                let what = || format!("calibrate {} {key}", s.key());
                if !outputs::due(what, &path, "calibration", |old| fresh::calibration(old, e)) {
                    continue;
                }
                progress.working_on(&format!("{} {key}", s.key()));
                // A KEX step's calls each run a whole exchange.
                let iter_s = exchange
                    .as_ref()
                    .filter(|_| s.cand.kind == crate::candidate::Kind::Kex && op.op != Op::Exchange)
                    .map(|x| x.t1_s);
                let cal = calibrate_one(ctx, &t, iter_s)?;
                write_json(&path, &cal)?;
                let what = if cal.status == ProcessStatus::Complete {
                    format!(
                        "{:.6} s warm ({:.6} s cold, {} warm calls in {} batches; trial fixed cost {:.1} ms)",
                        cal.t1_s,
                        cal.cold_s,
                        cal.warm_calls,
                        cal.batches.len(),
                        cal.trial_fixed_s() * 1e3
                    )
                } else {
                    format!("{}: {}", cal.status, cal.error.clone().unwrap_or_default())
                };
                crate::util::say!(
                    "calibrate {} {key}: {what} (process {:.1} s)",
                    s.key(),
                    cal.wall_s
                );
            }
            if ops.len() == done_ops {
                break;
            }
            done_ops = ops.len();
        }
        progress.done(&format!("calibrate {}: done", s.key()));
    }
    progress.finish();
    Ok(())
}

fn calibrate_one(ctx: &MeasureCtx, t: &Target, iter_s: Option<f64>) -> Result<Calibration> {
    let dir = ctx.run.setup_dir(t.cand(), t.label(), &t.key());
    let _ = std::fs::remove_dir_all(&dir);
    // The child saves the setup in its scratch folder; we copy it out of the jail.
    let name = t.scratch_name("cal");
    let scratch = ctx.run.scratch(&name)?;
    let mut job = ctx.job(t);
    job.setup_dir = scratch.join("setup");
    let req = Request::Calibrate(job);
    let (out, outcome) = ctx.run_child(&name, &req, CALIBRATION_TIMEOUT_S as f64)?;
    if out.status == ProcessStatus::Complete {
        ingest::copy_out(&scratch.join("setup"), &dir, SETUP_CAP)?;
    }
    // The job's scratch goes once its files are out.
    let _ = std::fs::remove_dir_all(&scratch);
    // What a trial process pays before timing: start-up and loading the saved setup.
    let overhead_s = (outcome.wall_s - out.end_s).max(0.0) + (out.ready_s - out.prepare_s).max(0.0);
    let dry_fixed_s = if out.status == ProcessStatus::Complete
        && out.t1_s < DRY_BELOW_S
        && separate_at_least_cost(ctx, out.t1_s, overhead_s, iter_s)
    {
        let per_call = iter_s.unwrap_or(out.t1_s).max(out.t1_s).max(1e-9);
        let work = DRY_WORK_S.min(calibration_s(ctx.settings.op_budget_s));
        dry_trials(ctx, t, (work / per_call).ceil().min(1e7) as u64)?
    } else {
        Vec::new()
    };
    Ok(Calibration {
        status: out.status.clone(),
        error: out.error.clone(),
        t1_s: out.t1_s,
        t1_ticks: out.t1_ticks,
        t1_min_s: out.t1_min_s,
        cold_s: out.cold_s,
        cold_ticks: out.cold_ticks,
        warm_calls: out.warm_calls,
        prepare_s: out.prepare_s,
        overhead_s,
        wall_s: outcome.wall_s,
        counter: out.counter.clone(),
        counter_overhead_ticks: out.counter_overhead_ticks,
        stack_peak_bytes: out.stack_peak_bytes,
        library_sha256: t.entry.library_sha256.clone().unwrap_or_default(),
        meta: out.meta.clone(),
        trials: out.trials.clone(),
        stderr: tail(&outcome.stderr, 2000),
        command: outcome.command.clone(),
        sandbox: out.sandbox,
        observed: Some(outcome.observed.clone()),
        warmup_calls: out.warmup_calls,
        batches: out.batches.clone(),
        dry_fixed_s,
    })
}

/// Whether the plan keeps separate trial processes with the least fixed cost a trial can
/// have (the calibration process's own). A larger measured cost only lengthens trials or
/// joins them in one process, so when even this plan joins them (a small budget), dry trials
/// could change its estimate and timeout but not its calls or processes: they are skipped.
fn separate_at_least_cost(ctx: &MeasureCtx, t1: f64, overhead_s: f64, iter_s: Option<f64>) -> bool {
    plan(&ctx.planning, t1, overhead_s, iter_s).separate_processes
}

/// Fixed cost of a trial process, measured: [`DRY_TRIALS`] trial processes of `iters` calls
/// each (same job as a real trial: start, jail, dlopen, loading the saved setup, saving the
/// last outputs, exit), each its wall time minus its timed window. Stops at the first failure.
fn dry_trials(ctx: &MeasureCtx, t: &Target, iters: u64) -> Result<Vec<f64>> {
    let mut fixed = Vec::new();
    for k in 0..DRY_TRIALS {
        let name = format!("{}-{k}", t.scratch_name("dry"));
        let mut job = ctx.job(t);
        job.iterations = iters.max(1);
        let (out, outcome) = ctx.run_child(&name, &Request::Trial(job), DRY_TIMEOUT_S)?;
        let Some(trial) = out.trials.first() else {
            break;
        };
        fixed.push((outcome.observed.wall_s - trial.loop_wall_s()).max(0.0));
    }
    Ok(fixed)
}
