//! What every timing child of a campaign shares: the operation job sent to the child, and
//! running one child with the campaign's limits into an `OpOutput` plus its process facts.

use super::measurable::OpSpec;
use super::{Selected, Settings};
use crate::child::protocol::{Limits, OpJob, OpOutput, Request};
use crate::dataset::schema::{BuildEntry, Calibration, ProcessStatus};
use crate::rundir::RunDir;
use crate::sandbox::{self, Exit, Spec};
use crate::util::read_json;
use anyhow::Result;
use std::time::Duration;

/// The calibration of a KEX instance's whole exchange, once there is one.
pub fn exchange_calibration(run: &RunDir, s: &Selected) -> Option<Calibration> {
    read_json(&run.calibration_path(&s.cand.id, &s.inst.label, "exchange")).ok()
}

pub fn job(
    run: &RunDir,
    s: &Selected,
    e: &BuildEntry,
    spec: &OpSpec,
    cpu: u32,
    settings: &Settings,
) -> OpJob {
    OpJob {
        limits: Limits {
            address_space: Some(settings.mem_limit_mib << 20),
            // Set per process from its wall-clock timeout (see `run_child`).
            cpu_seconds: None,
            file_size: Some(1 << 30),
            pin_cpu: Some(cpu),
        },
        library: run.path(e.library.as_deref().unwrap_or_default()),
        kind: s.cand.kind,
        api: s.cand.api,
        op: spec.op.clone(),
        input_bytes: spec.input_bytes,
        setup_dir: run.setup_dir(&s.cand.id, &s.inst.label, &spec.key()),
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
    settings: &Settings,
) -> Result<(OpOutput, sandbox::Outcome)> {
    let timeout_s = settings.child_timeout_s(timeout_s);
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
            status: ProcessStatus::HardTimeout,
            error: Some(format!(
                "killed after {} s",
                (timeout_s * 10.0).round() / 10.0
            )),
            sandbox: outcome.sandbox.clone().unwrap_or_default(),
            ..Default::default()
        },
        (_, Ok(o)) => o,
        (_, Err(_)) => OpOutput {
            status: ProcessStatus::Failed,
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
