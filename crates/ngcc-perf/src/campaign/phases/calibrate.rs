//! Phase `calibrate`: warm calibration of every operation in a pinned child, which also
//! builds and saves the operation's setup (key pairs, ciphertexts, signatures) once.

use crate::campaign::context::{exchange_calibration, job, run_child};
use crate::campaign::host_gate::HostState;
use crate::campaign::measurable::{self, OpSpec};
use crate::campaign::{Selected, Settings};
use crate::child::protocol::Request;
use crate::dataset::schema::*;
use crate::rundir::RunDir;
use crate::util::progress::Progress;
use crate::util::{tail, write_json};
use anyhow::Result;

/// Calibration of one op may take at most this long before it is killed.
const CALIBRATION_TIMEOUT_S: u64 = 6 * 3600;

pub fn run(
    run: &RunDir,
    todo: &[(Selected, BuildEntry)],
    settings: &Settings,
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
            for spec in &ops {
                let key = spec.key();
                let path = run.calibration_path(&s.cand.id, &s.inst.label, &key);
                if path.is_file() {
                    continue;
                }
                progress.working_on(&format!("{} {key}", s.key()));
                let cal = calibrate_one(run, s, e, spec, host, settings)?;
                write_json(&path, &cal)?;
                let what = if cal.status == ProcessStatus::Complete {
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

fn calibrate_one(
    run: &RunDir,
    s: &Selected,
    e: &BuildEntry,
    spec: &OpSpec,
    host: &HostState,
    settings: &Settings,
) -> Result<Calibration> {
    let key = spec.key();
    let dir = run.setup_dir(&s.cand.id, &s.inst.label, &key);
    let _ = std::fs::remove_dir_all(&dir);
    let req = Request::Calibrate(job(run, s, e, spec, host.cpu, settings));
    let (out, outcome) = run_child(
        run,
        &format!("cal-{}-{}-{key}", s.cand.id, s.inst.label),
        &req,
        CALIBRATION_TIMEOUT_S as f64,
        settings,
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
