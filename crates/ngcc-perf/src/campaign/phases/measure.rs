//! Phase `measure`: planning (reference §1.11), then the trials of every operation, each in a
//! fresh pinned process, into records with raw trials and statistics.

use crate::campaign::context::{exchange_calibration, job, run_child};
use crate::campaign::host_gate::HostState;
use crate::campaign::measurable::{self, OpSpec};
use crate::campaign::{Selected, Settings};
use crate::child::protocol::Request;
use crate::dataset::schema::*;
use crate::measure::{plan, stats, timing};
use crate::rundir::RunDir;
use crate::sandbox::Exit;
use crate::util::progress::Progress;
use crate::util::{read_json, sha256_file, tail, time::utc_now_iso, write_json};
use anyhow::Result;

/// A trial process whose CPU time is below this fraction of its wall time lost the CPU.
const MIN_CPU_FRACTION: f64 = 0.95;

/// Disturbed trials (clock or counter anomalies), or a process that lost the CPU.
fn was_disturbed(trials: &[Trial], scope: &TimingScope, max_hz: f64) -> bool {
    timing::is_disturbed(trials, scope, max_hz) || lost_cpu(trials)
}

pub fn run(
    run: &RunDir,
    todo: &[(Selected, BuildEntry)],
    settings: &Settings,
    host: &HostState,
    planning: &Planning,
) -> Result<()> {
    // Plans for every op with a calibration and no record, cheapest first.
    let mut planned = Vec::new();
    for (s, e) in todo {
        let exchange = exchange_calibration(run, s);
        for spec in measurable::operations(s.cand.kind, exchange.as_ref()) {
            let key = spec.key();
            if run.record_path(&s.cand.id, &s.inst.label, &key).is_file() {
                continue;
            }
            let Ok(cal) =
                read_json::<Calibration>(&run.calibration_path(&s.cand.id, &s.inst.label, &key))
            else {
                continue;
            };
            let iter_cost = (s.cand.kind == crate::candidate::Kind::Kex && spec.op != Op::Exchange)
                .then(|| exchange.as_ref().map_or(cal.t1_s, |x| x.t1_s));
            let p = plan::plan(planning, cal.t1_s, cal.overhead_s, iter_cost);
            planned.push((s, e, spec, key, cal, p));
        }
    }
    planned.sort_by(|a, b| a.5.estimated_s.total_cmp(&b.5.estimated_s));
    let total_s: f64 = planned.iter().map(|p| p.5.estimated_s).sum();
    eprintln!(
        "measure: {} operations planned, about {:.2} h of work outstanding",
        planned.len(),
        total_s / 3600.0
    );
    let progress = Progress::new("measure", planned.len() as u64);
    let mut left = total_s;
    for (s, e, spec, key, cal, p) in planned {
        progress.working_on(&format!("{} {key}", s.key()));
        let record = measure_one(run, s, e, &spec, &cal, &p, host, settings)?;
        write_json(&run.record_path(&s.cand.id, &s.inst.label, &key), &record)?;
        left -= p.estimated_s;
        let value = match &record.stats {
            Some(st) => match st.mean_cycles {
                Some(c) => format!(
                    "{c:.0} {}",
                    if host.counter.counts_core_cycles() {
                        "cycles"
                    } else {
                        "ticks"
                    }
                ),
                None => format!("{:.6}s", st.mean_seconds),
            },
            None => "no trials".into(),
        };
        let n = record.stats.as_ref().map_or(0, |s| s.measurements);
        let frac = record
            .ngcc
            .as_ref()
            .map_or(0.0, |x| x.timed_fraction * 100.0);
        progress.done(&format!(
            "measure {} {key}: {} n={n} {value} (timed {frac:.1} %, left ~{:.2} h)",
            s.key(),
            record.status,
            left.max(0.0) / 3600.0
        ));
    }
    progress.finish();
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn measure_one(
    run: &RunDir,
    s: &Selected,
    e: &BuildEntry,
    spec: &OpSpec,
    cal: &Calibration,
    p: &Plan,
    host: &HostState,
    settings: &Settings,
) -> Result<Record> {
    let key = spec.key();
    let started = utc_now_iso();
    let load_start = crate::measure::host::load_average();
    let max_hz = timing::fixed_clock(&host.environment);
    let mut processes: Vec<Process> = Vec::new();
    let mut disturbed_total = 0u32;
    let lib_now = run.path(e.library.as_deref().unwrap_or_default());
    let lib_ok = sha256_file(&lib_now).ok() == e.library_sha256;
    if cal.status != ProcessStatus::Complete || !lib_ok {
        let why = if lib_ok {
            cal.error.clone().unwrap_or_else(|| cal.status.to_string())
        } else {
            "library changed since its KAT; rebuild and re-run the kat phase".into()
        };
        processes.push(Process {
            // `failed` or `hard_timeout`, as the calibration ended.
            status: if lib_ok {
                cal.status.clone()
            } else {
                ProcessStatus::Failed
            },
            stderr: why,
            ..Process::default()
        });
    } else if p.trials == 1 && p.iterations_per_trial == 1 && p.warmups == 0 {
        // Too slow to repeat: the calibration's cold call is the measurement (reference §1.12).
        processes.push(Process {
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
            ..Process::default()
        });
    } else {
        let per_process = if p.separate_processes { 1 } else { p.trials };
        let n_proc = if p.separate_processes { p.trials } else { 1 };
        for k in 0..n_proc {
            let mut attempt = 0;
            loop {
                let mut j = job(run, s, e, spec, host.cpu, settings);
                j.iterations = p.iterations_per_trial;
                j.warmups = p.warmups;
                j.trials = per_process;
                j.seed_tweak = k as u8;
                let name = format!("trial-{}-{}-{key}-{k}", s.cand.id, s.inst.label);
                let (out, outcome) = run_child(
                    run,
                    &name,
                    &Request::Trial(j),
                    p.timeout_per_process_s,
                    settings,
                )?;
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
                    timeout_s: matches!(outcome.exit, Exit::Timeout)
                        .then_some(p.timeout_per_process_s),
                    disturbed_retries: attempt,
                    ..Process::default()
                };
                let disturbed = proc.status == ProcessStatus::Complete
                    && was_disturbed(&proc.trials, &out.timing_scope, max_hz);
                if disturbed && attempt < 2 {
                    attempt += 1;
                    disturbed_total += 1;
                    continue;
                }
                if disturbed {
                    proc.stderr
                        .push_str("\ndisturbed in all 3 attempts; the last one is kept");
                }
                processes.push(proc);
                break;
            }
            if processes
                .last()
                .is_some_and(|p| p.status != ProcessStatus::Complete)
            {
                break;
            }
        }
    }
    assemble(
        s,
        e,
        spec,
        cal,
        p,
        host,
        processes,
        disturbed_total,
        started,
        load_start,
        max_hz,
    )
}

/// Lost CPU: a trial over 10 ms whose process ran less than 95 % of its wall time.
fn lost_cpu(trials: &[Trial]) -> bool {
    trials.iter().any(|t| {
        let wall = t.loop_wall_s();
        wall > 0.01 && t.cpu_seconds.is_some_and(|c| c < MIN_CPU_FRACTION * wall)
    })
}

#[allow(clippy::too_many_arguments)]
fn assemble(
    s: &Selected,
    e: &BuildEntry,
    spec: &OpSpec,
    cal: &Calibration,
    p: &Plan,
    host: &HostState,
    processes: Vec<Process>,
    disturbed_retries: u32,
    started: String,
    load_start: Vec<f64>,
    max_hz: f64,
) -> Result<Record> {
    let stats = stats::record_stats(&processes, spec.input_bytes);
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
    let scope = spec.op.timing_scope();
    let disturbed = processes
        .iter()
        .any(|pr| was_disturbed(&pr.trials, &scope, max_hz));
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
    };
    Ok(Record {
        schema: SCHEMA,
        status: if complete {
            RecordStatus::Complete
        } else {
            RecordStatus::FailedOrPartial
        },
        candidate: s.cand.id.clone(),
        label: s.inst.label.clone(),
        instance: e.instance.clone(),
        variant: e.variant.clone(),
        flags: e.flags.clone(),
        operation: spec.op.clone(),
        input_bytes: spec.input_bytes,
        plan: p.clone(),
        kat: e.kat.clone(),
        kat_not_passed: e.kat != KatStatus::Pass,
        disturbed_retries,
        library: e.library.clone(),
        library_sha256: e.library_sha256.clone(),
        kat_log: e.kat_log.clone(),
        kat_log_sha256: e.kat_log_sha256.clone(),
        started_utc: started,
        ended_utc: utc_now_iso(),
        load_average_start: load_start,
        load_average_end: crate::measure::host::load_average(),
        environment: host.environment.clone(),
        processes,
        stats,
        ngcc: Some(extra),
    })
}
