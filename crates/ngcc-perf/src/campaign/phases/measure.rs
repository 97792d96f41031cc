//! Phase `measure`: planning (reference §1.11), then the trials of every operation, each in a
//! fresh pinned process, into records with raw trials and statistics.

use crate::campaign::Selected;
use crate::campaign::context::{MeasureCtx, Target, exchange_calibration};
use crate::campaign::fresh;
use crate::campaign::measurable::{self, Measurable, OpSpec};
use crate::campaign::phases::calibrate::SETUP_CAP;
use crate::campaign::phases::outputs;
use crate::child::protocol::{Expect, Request, VerifyOutput};
use crate::dataset::schema::*;
use crate::measure::{crosscheck, plan, stats, timing};
use crate::rundir::RunDir;
use crate::sandbox::Exit;
use crate::sandbox::jail::ingest;
use crate::util::progress::Progress;
use crate::util::{read_json, sha256_file, tail, time::utc_now_iso};
use anyhow::Result;

/// A verify child may take this long, plus 20 times the operation's cold call.
const VERIFY_TIMEOUT_S: f64 = 30.0;
/// A trial process whose CPU time is below this fraction of its wall time lost the CPU.
const MIN_CPU_FRACTION: f64 = 0.95;

/// Disturbed trials (clock or counter anomalies), or a process that lost the CPU.
fn was_disturbed(trials: &[Trial], scope: &TimingScope, max_hz: f64) -> bool {
    timing::is_disturbed(trials, scope, max_hz) || lost_cpu(trials)
}

/// An operation with a calibration and no record yet, and the plan it is timed with.
struct Planned<'a> {
    sel: &'a Selected,
    entry: &'a BuildEntry,
    op: OpSpec,
    cal: Calibration,
    plan: Plan,
}

impl Planned<'_> {
    fn target(&self) -> Target<'_> {
        Target {
            sel: self.sel,
            entry: self.entry,
            op: &self.op,
        }
    }
}

/// The processes one record is assembled from, and when and how they ran.
#[derive(Clone)]
struct Measured {
    processes: Vec<Process>,
    disturbed_retries: u32,
    started_utc: String,
    load_average_start: Vec<f64>,
    /// The run's fixed clock (0: unknown), for the disturbance rule.
    max_hz: f64,
    /// The verification of each trial process's last outputs (`RecordChecks::last_outputs`).
    last_outputs: Vec<LastOutputs>,
    /// Wall seconds of the verify children.
    verify_s: f64,
    /// The fixed cost of an empty jailed process, for the time accounting.
    fixed_cost: Option<FixedCost>,
}

pub fn run(ctx: &MeasureCtx, todo: &[Measurable]) -> Result<()> {
    let run = ctx.run;
    let planned = plan_all(ctx, todo);
    let total_s: f64 = planned.iter().map(|p| p.plan.estimated_s).sum();
    crate::util::say!(
        "measure: {} operations planned, about {:.2} h of work outstanding",
        planned.len(),
        total_s / 3600.0
    );
    let progress = Progress::new("measure", planned.len() as u64);
    let mut left = total_s;
    let mut fixed = None;
    if !planned.is_empty() {
        noise_sample(ctx, NoisePoint::Start)?;
        let f = fixed_cost(ctx, "fixed-cost")?;
        crate::util::say!(
            "measure: fixed cost of a jailed process: {:.1} ms CPU, {:.1} ms wall",
            f.cpu_s * 1e3,
            f.wall_s * 1e3
        );
        fixed = Some(f);
    }
    let middle = planned.len() / 2;
    outputs::each(
        &progress,
        planned.iter().enumerate(),
        |(_, p)| format!("{} {}", p.sel.key(), p.op.key()),
        |&(i, p)| {
            if i == middle && i > 0 {
                noise_sample(ctx, NoisePoint::Middle)?;
            }
            let t = p.target();
            let record = measure_one(ctx, p, fixed)?;
            Ok((run.record_path(t.cand(), t.label(), &t.key()), record))
        },
        |(_, p), record| {
            left -= p.plan.estimated_s;
            let value = match &record.stats {
                Some(st) => match st.mean_cycles {
                    Some(c) => format!("{c:.0} {}", ctx.host.counter.unit()),
                    None => format!("{:.6}s", st.mean_seconds),
                },
                None => "no trials".into(),
            };
            let n = record.stats.as_ref().map_or(0, |s| s.measurements);
            let frac = record
                .ngcc
                .as_ref()
                .map_or(0.0, |x| x.timed_fraction * 100.0);
            format!(
                "measure {} {}: {} n={n} {value} (timed {frac:.1} %, left ~{:.2} h)",
                p.sel.key(),
                p.op.key(),
                record.status,
                left.max(0.0) / 3600.0
            )
        },
    )?;
    if !planned.is_empty() {
        noise_sample(ctx, NoisePoint::End)?;
    }
    progress.finish();
    Ok(())
}

/// Plans for every operation of `todo` with a calibration and no record that stands
/// (`fresh::record`), cheapest first.
fn plan_all<'a>(ctx: &MeasureCtx, todo: &'a [Measurable]) -> Vec<Planned<'a>> {
    let run = ctx.run;
    let mut planned = Vec::new();
    for (s, e) in todo {
        let exchange = exchange_calibration(run, s);
        for op in measurable::operations(s.cand.kind, exchange.as_ref()) {
            let key = op.key();
            let record_path = run.record_path(&s.cand.id, &s.inst.label, &key);
            let Ok(cal) =
                read_json::<Calibration>(&run.calibration_path(&s.cand.id, &s.inst.label, &key))
            else {
                continue;
            };
            let iter_cost = (s.cand.kind == crate::candidate::Kind::Kex && op.op != Op::Exchange)
                .then(|| exchange.as_ref().map_or(cal.t1_s, |x| x.t1_s));
            let plan = plan::plan(&ctx.planning, cal.t1_s, cal.trial_fixed_s(), iter_cost);
            let what = || format!("measure {} {key}", s.key());
            if !outputs::due(what, &record_path, "record", |old| {
                fresh::record(old, e, &plan)
            }) {
                continue;
            }
            planned.push(Planned {
                sel: s,
                entry: e,
                op,
                cal,
                plan,
            });
        }
    }
    planned.sort_by(|a, b| a.plan.estimated_s.total_cmp(&b.plan.estimated_s));
    planned
}

/// Times the reference loop at `at` and saves it in campaign.json (appended on resume).
fn noise_sample(ctx: &MeasureCtx, at: NoisePoint) -> Result<()> {
    let mut c = ctx.run.load_campaign()?;
    let check = c.noise.get_or_insert_with(NoiseCheck::default);
    crate::measure::noise::sample(check, at, ctx.settings.cpu, c.counter.clone());
    crate::util::say!(
        "measure: noise check: reference loop spread {:.2} %, CV {:.2} % over {} samples",
        check.spread * 100.0,
        check.cv * 100.0,
        check.samples.len()
    );
    ctx.run.save_campaign(&c)
}

/// Probe jobs measured for the fixed cost of a jailed process with no candidate code.
const FIXED_COST_PROBES: usize = 3;

/// The fixed cost of a jailed process (keeper, proxy, worker start and lock-down; no
/// candidate code): the least CPU and the least wall time of [`FIXED_COST_PROBES`] probe
/// jobs, as the orchestrator observed them. The least: a larger figure would excuse more of
/// a candidate's untimed work, and honest processes pass with it (ARCHITECTURE.md, "Hostile
/// candidates", has the ratios).
fn fixed_cost(ctx: &MeasureCtx, scratch: &str) -> Result<FixedCost> {
    let mut best: Option<FixedCost> = None;
    for i in 0..FIXED_COST_PROBES {
        let spec = crate::sandbox::Spec {
            workdir: ctx.run.scratch(&format!("{scratch}-{i}"))?,
            timeout: std::time::Duration::from_secs(30),
        };
        let out = ctx.runner.probe(&spec)?;
        let (cpu, wall) = (out.observed.tree_usage.cpu_s(), out.observed.wall_s);
        best = Some(best.map_or(
            FixedCost {
                cpu_s: cpu,
                wall_s: wall,
                near_record: false,
            },
            |b| FixedCost {
                cpu_s: b.cpu_s.min(cpu),
                wall_s: b.wall_s.min(wall),
                near_record: false,
            },
        ));
    }
    Ok(best.unwrap_or_default())
}

/// A record flagged inconsistent, checked again with the fixed cost measured right after its
/// processes (every flagged record: which check flagged it is text, not a kind we decide on;
/// the checks other than the time accounting do not read the fixed cost, so they stand). The phase's first probes ran under the load of that moment; a host
/// that got busier since makes an honest jail's start cost more CPU than they saw (the zoo's
/// control-like `tsc` toy beside two busy loops: 66 ms of CPU against 23 ms timed and a
/// 12 ms fixed cost). The probes run no candidate code and start after its job has died, so
/// a candidate cannot raise them; a lie the size the accounting exists for (the work of
/// many calls outside the windows) stays beyond the larger fixed cost.
fn recheck_near(ctx: &MeasureCtx, planned: &Planned, m: Measured, first: Record) -> Result<Record> {
    let Some(before) = m.fixed_cost else {
        return Ok(first);
    };
    if first.status != RecordStatus::Inconsistent {
        return Ok(first);
    }
    let now = fixed_cost(ctx, &planned.target().scratch_name("fixed-cost-near"))?;
    let near = FixedCost {
        cpu_s: before.cpu_s.max(now.cpu_s),
        wall_s: before.wall_s.max(now.wall_s),
        near_record: true,
    };
    crate::util::say!(
        "measure {} {}: the time accounting flagged it; fixed cost measured again next to it: {:.1} ms CPU, {:.1} ms wall (phase start: {:.1} ms, {:.1} ms)",
        planned.sel.key(),
        planned.op.key(),
        now.cpu_s * 1e3,
        now.wall_s * 1e3,
        before.cpu_s * 1e3,
        before.wall_s * 1e3
    );
    Ok(assemble(
        ctx,
        planned,
        Measured {
            fixed_cost: Some(near),
            ..m
        },
    ))
}

fn measure_one(ctx: &MeasureCtx, planned: &Planned, fixed: Option<FixedCost>) -> Result<Record> {
    let (t, cal, p) = (planned.target(), &planned.cal, &planned.plan);
    let mut m = Measured {
        processes: Vec::new(),
        disturbed_retries: 0,
        started_utc: utc_now_iso(),
        load_average_start: crate::measure::host::load_average(),
        max_hz: timing::fixed_clock(&ctx.host.environment),
        last_outputs: Vec::new(),
        verify_s: 0.0,
        fixed_cost: fixed,
    };
    let lib_now = ctx.run.path(t.entry.library.as_deref().unwrap_or_default());
    let lib_ok = sha256_file(&lib_now).ok() == t.entry.library_sha256;
    if cal.status != ProcessStatus::Complete || !lib_ok {
        let why = if lib_ok {
            cal.error.clone().unwrap_or_else(|| cal.status.to_string())
        } else {
            "library changed since its KAT; rebuild and re-run the kat phase".into()
        };
        let mut failed = Process {
            // `failed` or `hard_timeout`, as the calibration ended.
            status: if lib_ok {
                cal.status.clone()
            } else {
                ProcessStatus::Failed
            },
            stderr: why,
            ..Process::default()
        };
        if lib_ok {
            // The calibration process is the evidence: what we saw of it from outside.
            failed.command = cal.command.clone();
            failed.wall_s = cal.wall_s;
            failed.reused_calibration = Some(true);
            failed.observed = cal.observed.clone();
        }
        m.processes.push(failed);
    } else if p.trials == 1 && p.iterations_per_trial == 1 && p.warmups == 0 {
        // Too slow to repeat: the calibration's cold call is the measurement (reference §1.12).
        m.processes.push(Process {
            status: ProcessStatus::Complete,
            exit_code: Some(0),
            meta: cal.meta.clone(),
            trials: cal.trials.clone(),
            stderr: cal.stderr.clone(),
            command: cal.command.clone(),
            wall_s: cal.wall_s,
            t1_s: Some(cal.cold_s),
            setup_s: Some(cal.overhead_s),
            reused_calibration: Some(true),
            observed: cal.observed.clone(),
            ..Process::default()
        });
    } else {
        trial_processes(ctx, &t, p, &mut m)?;
        if m.processes
            .iter()
            .all(|p| p.status == ProcessStatus::Complete)
        {
            for (k, proc) in m.processes.iter().enumerate() {
                let started = std::time::Instant::now();
                let v = verify_last(ctx, &t, cal, k, proc)?;
                m.verify_s += started.elapsed().as_secs_f64();
                let failed = v.is_failed();
                m.last_outputs.push(v);
                // One failure decides the record: no need to wait for more.
                if failed {
                    break;
                }
            }
        }
    }
    let first = assemble(ctx, planned, m.clone());
    recheck_near(ctx, planned, m, first)
}

/// The plan's trial processes, each retried up to twice when disturbed; stops at the first
/// process that does not complete.
fn trial_processes(ctx: &MeasureCtx, t: &Target, p: &Plan, m: &mut Measured) -> Result<()> {
    let per_process = if p.separate_processes { 1 } else { p.trials };
    let n_proc = if p.separate_processes { p.trials } else { 1 };
    for k in 0..n_proc {
        let mut attempt = 0;
        loop {
            let mut j = ctx.job(t);
            j.iterations = p.iterations_per_trial;
            j.warmups = p.warmups;
            j.trials = per_process;
            j.seed_tweak = k as u8;
            let name = format!("{}-{k}", t.scratch_name("trial"));
            let (out, outcome) =
                ctx.run_child(&name, &Request::Trial(j), p.timeout_per_process_s)?;
            let mut proc = Process {
                status: out.status.clone(),
                exit_code: match outcome.exit {
                    Exit::Code(c) => Some(c),
                    _ => None,
                },
                meta: out.meta.clone(),
                trials: out.trials.clone(),
                stderr: tail(
                    [
                        out.error.clone().unwrap_or_default(),
                        outcome.stderr.clone(),
                    ]
                    .join("\n")
                    .trim(),
                    2000,
                ),
                command: outcome.command.clone(),
                wall_s: outcome.wall_s,
                timeout_s: matches!(outcome.exit, Exit::Timeout).then_some(p.timeout_per_process_s),
                disturbed_retries: attempt,
                observed: Some(last_outputs(ctx.run, &name, outcome.observed.clone())?),
                ..Process::default()
            };
            let disturbed = proc.status == ProcessStatus::Complete
                && was_disturbed(&proc.trials, &out.timing_scope, m.max_hz);
            if disturbed && attempt < 2 {
                attempt += 1;
                m.disturbed_retries += 1;
                continue;
            }
            if disturbed {
                proc.stderr
                    .push_str("\ndisturbed in all 3 attempts; the last one is kept");
            }
            m.processes.push(proc);
            break;
        }
        if m.processes
            .last()
            .is_some_and(|p| p.status != ProcessStatus::Complete)
        {
            break;
        }
    }
    Ok(())
}

/// The trial's buffers after its last timed iteration, copied out of its scratch folder
/// (`last/`) to `RUN/last/<trial>/`, with their hashes (for the record cross-checks).
fn last_outputs(run: &RunDir, name: &str, mut observed: Observed) -> Result<Observed> {
    let from = run.scratch(name)?.join(crate::child::measure::LAST_OUTPUTS);
    let to = run.last_outputs_dir(name);
    let _ = std::fs::remove_dir_all(&to);
    let (files, _) = ingest::copy_out(&from, &to, SETUP_CAP)?;
    // The job's scratch goes once its files are out.
    if let Some(scratch) = from.parent() {
        let _ = std::fs::remove_dir_all(scratch);
    }
    if !files.is_empty() {
        observed.last_outputs = Some(run.rel(&to));
        for f in files {
            let sha = sha256_file(&to.join(&f))?;
            observed.last_outputs_sha256.push((f, sha));
        }
    }
    Ok(observed)
}

/// Checks a trial process's last outputs in a fresh jailed child (which recomputes from
/// them what they must satisfy) against the orchestrator's own copy in `RUN/last/<trial>/`:
/// whether every value matched, which did not, or that the kind is not checked (KEX).
fn verify_last(
    ctx: &MeasureCtx,
    t: &Target,
    cal: &Calibration,
    k: usize,
    proc: &Process,
) -> Result<LastOutputs> {
    let Some(dir) = proc.observed.as_ref().and_then(|o| o.last_outputs.as_ref()) else {
        return Ok(LastOutputs::Failed("the trial left no last outputs".into()));
    };
    let dir = ctx.run.path(dir);
    let mut job = ctx.job(t);
    job.setup_dir = dir.clone();
    job.seed_tweak = k as u8;
    let timeout = VERIFY_TIMEOUT_S + 20.0 * cal.cold_s;
    let verify_name = format!("{}-{k}", t.scratch_name("verify"));
    let outcome = ctx.runner.run(
        &crate::sandbox::Spec {
            workdir: ctx.run.scratch(&verify_name)?,
            timeout: std::time::Duration::from_secs_f64(ctx.settings.child_timeout_s(timeout)),
        },
        &Request::Verify(job),
    )?;
    let out = match crate::sandbox::parse_result::<VerifyOutput>(&outcome) {
        Ok(o) => o,
        Err(_) => {
            let why = outcome.failure_text().unwrap_or_else(|| "no result".into());
            return Ok(LastOutputs::Failed(format!(
                "the verifying child ended without values: {why}"
            )));
        }
    };
    if out.status != ProcessStatus::Complete {
        return Ok(LastOutputs::Failed(
            out.error.unwrap_or_else(|| out.status.to_string()),
        ));
    }
    // What we know each kind must recompute (the child could send fewer values).
    use crate::candidate::Kind;
    let kind = t.sel.cand.kind;
    let from_file = out
        .values
        .iter()
        .any(|v| matches!(v.expect, Expect::File(_)));
    let needs_file = kind == Kind::Hash || (kind == Kind::Kem && t.op.op != Op::Keygen);
    if kind == Kind::Kex {
        return Ok(LastOutputs::NotVerified(
            "KEX outputs are not checked".into(),
        ));
    }
    if out.values.is_empty() || (needs_file && !from_file) {
        return Ok(LastOutputs::Failed(
            "the verifying child did not recompute the last outputs".into(),
        ));
    }
    let mut said = Vec::new();
    for v in &out.values {
        let want = match &v.expect {
            Expect::Equal(x) => x.clone(),
            // The name comes from candidate code: a plain file name of the copy, or nothing.
            Expect::File(f) => match ingest::plain_name(f).then(|| std::fs::read(dir.join(f))) {
                Some(Ok(b)) => hex::encode_upper(b),
                _ => {
                    return Ok(LastOutputs::Failed(format!("the last outputs lack {f:?}")));
                }
            },
        };
        if v.got != want {
            return Ok(LastOutputs::Failed(format!(
                "{} is {}, expected {}",
                v.what,
                short(&v.got),
                short(&want)
            )));
        }
        said.push(v.what.clone());
    }
    Ok(LastOutputs::Ok(said.join("; ")))
}

/// A hex value shortened for a reason line.
fn short(v: &str) -> String {
    if v.len() > 16 {
        format!("{}…", &v[..16])
    } else {
        v.to_string()
    }
}

/// The layers every process of a record had (the calibration's when none was run).
fn common_containment(processes: &[Process], cal: &Calibration) -> Option<Containment> {
    let mut seen = processes.iter().filter_map(|p| p.observed.as_ref());
    let first = seen.next().or(cal.observed.as_ref())?.containment.clone();
    Some(seen.fold(first, |mut c, o| {
        c.keep_common(&o.containment);
        c
    }))
}

/// Lost CPU: a trial over 10 ms whose process ran less than 95 % of its wall time.
fn lost_cpu(trials: &[Trial]) -> bool {
    trials.iter().any(|t| {
        let wall = t.loop_wall_s();
        wall > 0.01 && t.cpu_seconds.is_some_and(|c| c < MIN_CPU_FRACTION * wall)
    })
}

/// The schema 2 record (§7.4) with our `ngcc` block.
fn assemble(ctx: &MeasureCtx, planned: &Planned, m: Measured) -> Record {
    let (e, op, cal, p, host) = (
        planned.entry,
        &planned.op,
        &planned.cal,
        &planned.plan,
        &ctx.host,
    );
    let processes = m.processes;
    let stats = stats::record_stats(&processes, op.input_bytes);
    let n_trials: u64 = processes.iter().map(|p| p.trials.len() as u64).sum();
    let complete = !processes.is_empty()
        && processes
            .iter()
            .all(|p| p.status == ProcessStatus::Complete)
        && n_trials == p.trials;
    let all_trials: Vec<&Trial> = processes.iter().flat_map(|p| p.trials.iter()).collect();
    let per_trial_s: Vec<f64> = all_trials
        .iter()
        .map(|t| t.seconds / t.measurements.max(1) as f64)
        .collect();
    let per_trial_c: Vec<f64> = all_trials
        .iter()
        .map(|t| t.cycles as f64 / t.measurements.max(1) as f64)
        .collect();
    let wall_s: f64 = processes.iter().map(|p| p.wall_s).sum();
    let timed_s: f64 = all_trials.iter().map(|t| t.loop_wall_s()).sum();
    // Only processes with trials can be disturbed, and those timed the op's scope.
    let scope = op.op.timing_scope();
    let disturbed = processes
        .iter()
        .any(|pr| was_disturbed(&pr.trials, &scope, m.max_hz));
    let extra = RecordExtra {
        counter: cal.counter.clone(),
        counter_hz: if cal.counter.counts_core_cycles() {
            None
        } else {
            host.counter_hz
        },
        host_fixed: host.fixed(),
        host_problems: host.problems.clone(),
        allow_unfixed_host: host.allow_unfixed,
        spread: stats::spread(&per_trial_s),
        cycles_spread: all_trials
            .iter()
            .all(|t| t.cycles > 0)
            .then(|| stats::spread(&per_trial_c))
            .filter(|_| !all_trials.is_empty()),
        disturbed,
        wall_s,
        timed_s,
        timed_fraction: if wall_s > 0.0 { timed_s / wall_s } else { 0.0 },
        setup_s: cal.prepare_s,
        stack_peak_bytes: cal.stack_peak_bytes,
        heap_peak_bytes: None,
        sandbox: Some(cal.sandbox.clone()).filter(|s| !s.is_empty()),
        skip_reason: None,
        containment: common_containment(&processes, cal),
        helpers: e.helpers.clone(),
        checks: None,
        inconsistent_reason: None,
    };
    let mut extra = extra;
    let mut status = if complete {
        RecordStatus::Complete
    } else {
        RecordStatus::FailedOrPartial
    };
    if complete {
        let ev = crosscheck::Evidence {
            counter: extra.counter.clone(),
            counter_hz: extra.counter_hz,
            calibration_min_s: crosscheck::calibration_bound(cal),
            fixed_cost: m.fixed_cost,
            warmups: p.warmups,
        };
        let mut verdict = crosscheck::check(&processes, &ev, m.last_outputs);
        verdict.figures.verify_s = m.verify_s;
        verdict.figures.cold_s = Some(cal.cold_s);
        extra.checks = Some(verdict.figures);
        if let Some(why) = verdict.failure {
            status = RecordStatus::Inconsistent;
            extra.inconsistent_reason = Some(why);
        }
    }
    Record {
        schema: SCHEMA,
        status,
        candidate: planned.sel.cand.id.clone(),
        label: planned.sel.inst.label.clone(),
        instance: e.instance.clone(),
        variant: e.variant.clone(),
        flags: e.flags.clone(),
        operation: op.op.clone(),
        input_bytes: op.input_bytes,
        plan: p.clone(),
        kat: e.kat.clone(),
        kat_not_passed: e.kat != KatStatus::Pass,
        disturbed_retries: m.disturbed_retries,
        library: e.library.clone(),
        library_sha256: e.library_sha256.clone(),
        kat_log: e.kat_log.clone(),
        kat_log_sha256: e.kat_log_sha256.clone(),
        started_utc: m.started_utc,
        ended_utc: utc_now_iso(),
        load_average_start: m.load_average_start,
        load_average_end: crate::measure::host::load_average(),
        environment: host.environment.clone(),
        processes,
        stats,
        ngcc: Some(extra),
    }
}

#[cfg(test)]
#[path = "measure_tests.rs"]
mod tests;
