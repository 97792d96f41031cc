//! Phases `calibrate` and `measure`: warm calibration, planning (reference §1.11), five
//! trials each in a fresh pinned process, records with raw trials and statistics.

use super::host_gate::HostState;
use super::measurable::{self, calibration_path, record_path, setup_dir};
use super::progress::Progress;
use super::rundir::RunDir;
use super::sandbox::{self, Exit, Spec};
use super::{CampaignArgs, Selected};
use crate::child::protocol::{Limits, OpJob, OpOutput, Request};
use crate::dataset::schema::*;
use crate::measure::{plan, stats, timing};
use crate::util::{read_json, sha256_file, tail, time::utc_now_iso, write_json};
use anyhow::Result;
use std::time::Duration;

/// Calibration of one op may take at most this long before it is killed.
const CALIBRATION_TIMEOUT_S: u64 = 6 * 3600;
/// A trial process whose CPU time is below this fraction of its wall time lost the CPU.
const MIN_CPU_FRACTION: f64 = 0.95;

/// The calibration of a KEX instance's whole exchange, once there is one.
fn exchange_calibration(run: &RunDir, s: &Selected) -> Option<Calibration> {
    read_json(&calibration_path(
        run,
        &s.cand.id,
        &s.inst.label,
        "exchange",
    ))
    .ok()
}

/// What a trial's META says was timed: the whole `loop` (default) or `per_call_step`.
fn timing_scope(meta: &serde_json::Map<String, serde_json::Value>) -> &str {
    meta.get("timing_scope")
        .and_then(|v| v.as_str())
        .unwrap_or("loop")
}

/// Disturbed trials (clock or counter anomalies), or a process that lost the CPU.
fn was_disturbed(trials: &[Trial], scope: &str, max_hz: f64) -> bool {
    timing::is_disturbed(trials, scope, max_hz) || lost_cpu(trials)
}

#[allow(clippy::too_many_arguments)]
pub fn job(
    run: &RunDir,
    s: &Selected,
    e: &BuildEntry,
    op: &str,
    bytes: u64,
    key: &str,
    cpu: u32,
    args: &CampaignArgs,
) -> OpJob {
    OpJob {
        limits: Limits {
            address_space: Some(args.mem_limit << 20),
            // Set per process from its wall-clock timeout (see `run_child`).
            cpu_seconds: None,
            file_size: Some(1 << 30),
            pin_cpu: Some(cpu),
        },
        library: run.path(e.library.as_deref().unwrap_or_default()),
        kind: s.cand.kind,
        api: s.cand.api,
        op: op.into(),
        input_bytes: bytes,
        setup_dir: setup_dir(run, &s.cand.id, &s.inst.label, key),
        seed_tweak: 0,
        iterations: 1,
        warmups: 0,
        trials: 1,
        counter: None,
        rng: None,
    }
}

/// Runs one child and turns every way it can end into an `OpOutput` plus its process facts.
pub fn run_child(
    run: &RunDir,
    name: &str,
    req: &Request,
    timeout_s: f64,
    args: &CampaignArgs,
) -> Result<(OpOutput, sandbox::Outcome)> {
    let timeout_s = args
        .measure_timeout
        .map_or(timeout_s, |c| timeout_s.min(c))
        .max(1.0);
    let spec = Spec {
        workdir: run.scratch(name)?,
        timeout: Duration::from_secs_f64(timeout_s),
    };
    // The CPU-time limit backs up the wall-clock one (a little later, so the wall clock
    // normally decides and the status says "killed after").
    let mut req = req.clone();
    if let Request::Calibrate(j) | Request::Trial(j) = &mut req {
        j.limits.cpu_seconds = Some(timeout_s.ceil() as u64 + 5);
    }
    let outcome = sandbox::run(&spec, &req)?;
    let out = match (&outcome.exit, sandbox::parse_result::<OpOutput>(&outcome)) {
        (Exit::Timeout, _) => OpOutput {
            status: "hard_timeout".into(),
            error: Some(format!(
                "killed after {} s",
                (timeout_s * 10.0).round() / 10.0
            )),
            sandbox: outcome.sandbox.clone().unwrap_or_default(),
            ..Default::default()
        },
        (_, Ok(o)) => o,
        (_, Err(_)) => OpOutput {
            status: "failed".into(),
            error: Some(format!(
                "crashed: {}",
                outcome.failure_text().unwrap_or_else(|| "no result".into())
            )),
            // Known even when the child died: it was reported before candidate code ran.
            sandbox: outcome.sandbox.clone().unwrap_or_default(),
            ..Default::default()
        },
    };
    Ok((out, outcome))
}

pub fn calibrate(
    run: &RunDir,
    todo: &[(Selected, BuildEntry)],
    args: &CampaignArgs,
    host: &HostState,
) -> Result<()> {
    let mut work = Vec::new();
    for (s, e) in todo {
        work.push((s, e));
    }
    let progress = Progress::new("calibrate", work.len() as u64);
    for (s, e) in work {
        // KEX: the exchange first; its passes decide the steps.
        let mut done_ops = 0;
        loop {
            let exchange = exchange_calibration(run, s);
            let ops = measurable::operations(s.cand.kind, exchange.as_ref());
            for (op, bytes, key) in &ops {
                let path = calibration_path(run, &s.cand.id, &s.inst.label, key);
                if path.is_file() {
                    continue;
                }
                progress.working_on(&format!("{} {key}", s.key()));
                let cal = calibrate_one(run, s, e, op, *bytes, key, host, args)?;
                write_json(&path, &cal)?;
                let what = if cal.status == "complete" {
                    format!("{:.6} s warm ({:.6} s cold)", cal.t1_s, cal.cold_s)
                } else {
                    format!("{}: {}", cal.status, cal.error.clone().unwrap_or_default())
                };
                eprintln!(
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

#[allow(clippy::too_many_arguments)]
fn calibrate_one(
    run: &RunDir,
    s: &Selected,
    e: &BuildEntry,
    op: &str,
    bytes: u64,
    key: &str,
    host: &HostState,
    args: &CampaignArgs,
) -> Result<Calibration> {
    let dir = setup_dir(run, &s.cand.id, &s.inst.label, key);
    let _ = std::fs::remove_dir_all(&dir);
    let req = Request::Calibrate(job(run, s, e, op, bytes, key, host.cpu, args));
    let (out, outcome) = run_child(
        run,
        &format!("cal-{}-{}-{key}", s.cand.id, s.inst.label),
        &req,
        CALIBRATION_TIMEOUT_S as f64,
        args,
    )?;
    Ok(Calibration {
        status: out.status.clone(),
        error: out.error.clone(),
        t1_s: out.t1_s,
        t1_ticks: out.t1_ticks,
        cold_s: out.cold_s,
        cold_ticks: out.cold_ticks,
        warm_calls: out.warm_calls,
        prepare_s: out.prepare_s,
        // What a trial process pays before timing: start-up and loading the saved setup.
        overhead_s: (outcome.wall_s - out.end_s).max(0.0) + (out.ready_s - out.prepare_s).max(0.0),
        wall_s: outcome.wall_s,
        counter: out.counter.clone(),
        counter_overhead_ticks: out.counter_overhead_ticks,
        stack_peak_bytes: out.stack_peak_bytes,
        library_sha256: e.library_sha256.clone().unwrap_or_default(),
        meta: out.meta.clone(),
        trials: out.trials.clone(),
        stderr: tail(&outcome.stderr, 2000),
        command: outcome.command.clone(),
        sandbox: out.sandbox,
    })
}

pub fn measure(
    run: &RunDir,
    todo: &[(Selected, BuildEntry)],
    args: &CampaignArgs,
    host: &HostState,
    planning: &Planning,
) -> Result<()> {
    // Plans for every op with a calibration and no record, cheapest first.
    let mut planned = Vec::new();
    for (s, e) in todo {
        let exchange = exchange_calibration(run, s);
        for (op, bytes, key) in measurable::operations(s.cand.kind, exchange.as_ref()) {
            if record_path(run, &s.cand.id, &s.inst.label, &key).is_file() {
                continue;
            }
            let Ok(cal) =
                read_json::<Calibration>(&calibration_path(run, &s.cand.id, &s.inst.label, &key))
            else {
                continue;
            };
            let iter_cost = (s.cand.kind == crate::candidate::Kind::Kex && op != "exchange")
                .then(|| exchange.as_ref().map_or(cal.t1_s, |x| x.t1_s));
            let p = plan::plan(planning, cal.t1_s, cal.overhead_s, iter_cost);
            planned.push((s, e, op, bytes, key, cal, p));
        }
    }
    planned.sort_by(|a, b| a.6.estimated_s.total_cmp(&b.6.estimated_s));
    let total_s: f64 = planned.iter().map(|p| p.6.estimated_s).sum();
    eprintln!(
        "measure: {} operations planned, about {:.2} h of work outstanding",
        planned.len(),
        total_s / 3600.0
    );
    let progress = Progress::new("measure", planned.len() as u64);
    let mut left = total_s;
    for (s, e, op, bytes, key, cal, p) in planned {
        progress.working_on(&format!("{} {key}", s.key()));
        let record = measure_one(run, s, e, &op, bytes, &key, &cal, &p, host, args)?;
        write_json(&record_path(run, &s.cand.id, &s.inst.label, &key), &record)?;
        left -= p.estimated_s;
        let value = match &record.stats {
            Some(st) => match st.mean_cycles {
                Some(c) => format!(
                    "{c:.0} {}",
                    if host.counter == "perf_cycles" {
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
    op: &str,
    bytes: u64,
    key: &str,
    cal: &Calibration,
    p: &Plan,
    host: &HostState,
    args: &CampaignArgs,
) -> Result<Record> {
    let started = utc_now_iso();
    let load_start = crate::measure::host::load_average();
    let max_hz = timing::fixed_clock(&host.environment);
    let mut processes: Vec<Process> = Vec::new();
    let mut disturbed_total = 0u32;
    let lib_now = run.path(e.library.as_deref().unwrap_or_default());
    let lib_ok = sha256_file(&lib_now).ok() == e.library_sha256;
    if cal.status != "complete" || !lib_ok {
        let why = if lib_ok {
            cal.error.clone().unwrap_or_else(|| cal.status.clone())
        } else {
            "library changed since its KAT; rebuild and re-run the kat phase".into()
        };
        processes.push(Process {
            // `failed` or `hard_timeout`, as the calibration ended.
            status: if lib_ok {
                cal.status.clone()
            } else {
                "failed".into()
            },
            stderr: why,
            ..Process::default()
        });
    } else if p.trials == 1 && p.iterations_per_trial == 1 && p.warmups == 0 {
        // Too slow to repeat: the calibration's cold call is the measurement (reference §1.12).
        processes.push(Process {
            status: "complete".into(),
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
                let mut j = job(run, s, e, op, bytes, key, host.cpu, args);
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
                    args,
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
                let disturbed = proc.status == "complete"
                    && was_disturbed(&proc.trials, timing_scope(&out.meta), max_hz);
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
            if processes.last().is_some_and(|p| p.status != "complete") {
                break;
            }
        }
    }
    assemble(
        s,
        e,
        op,
        bytes,
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
    op: &str,
    bytes: u64,
    cal: &Calibration,
    p: &Plan,
    host: &HostState,
    processes: Vec<Process>,
    disturbed_retries: u32,
    started: String,
    load_start: Vec<f64>,
    max_hz: f64,
) -> Result<Record> {
    let stats = stats::record_stats(&processes, bytes);
    let n_trials: u64 = processes.iter().map(|p| p.trials.len() as u64).sum();
    let complete = !processes.is_empty()
        && processes.iter().all(|p| p.status == "complete")
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
    let scope = processes.first().map_or("loop", |p| timing_scope(&p.meta));
    let disturbed = processes
        .iter()
        .any(|pr| was_disturbed(&pr.trials, scope, max_hz));
    let extra = RecordExtra {
        counter: cal.counter.clone(),
        counter_hz: if cal.counter == "perf_cycles" {
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
        helpers: e.helpers.clone(),
    };
    Ok(Record {
        schema: SCHEMA,
        status: if complete {
            "complete"
        } else {
            "failed_or_partial"
        }
        .into(),
        candidate: s.cand.id.clone(),
        label: s.inst.label.clone(),
        instance: e.instance.clone(),
        variant: e.variant.clone(),
        flags: e.flags.clone(),
        operation: op.into(),
        input_bytes: bytes,
        plan: p.clone(),
        kat: e.kat.clone(),
        kat_not_passed: e.kat != "PASS",
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
