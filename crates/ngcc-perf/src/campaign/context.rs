//! What every timing child of a campaign shares: the target (instance, build entry,
//! operation), the measuring context of a phase, the job sent to the child, and running one
//! child with the campaign's limits into an `OpOutput` plus its process facts.

use super::host_gate::HostState;
use super::measurable::OpSpec;
use super::runner::{JailRunner, Runner};
use super::{Selected, Settings};
use crate::child::protocol::{Limits, OpJob, OpOutput, Request};
use crate::dataset::schema::{BuildEntry, Calibration, KatStatus, Planning, ProcessStatus};
use crate::rundir::RunDir;
use crate::sandbox::{self, Exit, Outcome, Spec};
use crate::util::read_json;
use anyhow::Result;
use std::time::Duration;

/// The calibration of a KEX instance's whole exchange, once there is one.
pub fn exchange_calibration(run: &RunDir, s: &Selected) -> Option<Calibration> {
    read_json(&run.calibration_path(&s.cand.id, &s.inst.label, "exchange")).ok()
}

/// One operation of one selected instance, timed from its build entry.
#[derive(Clone, Copy)]
pub struct Target<'a> {
    pub sel: &'a Selected,
    pub entry: &'a BuildEntry,
    pub op: &'a OpSpec,
}

impl Target<'_> {
    /// The op key: names the calibration, setup, record and profile files.
    pub fn key(&self) -> String {
        self.op.key()
    }

    pub fn cand(&self) -> &str {
        &self.sel.cand.id
    }

    pub fn label(&self) -> &str {
        &self.sel.inst.label
    }

    /// A child's scratch folder name: `<what>-<cand>-<label>-<key>`.
    pub fn scratch_name(&self, what: &str) -> String {
        format!("{what}-{}-{}-{}", self.cand(), self.label(), self.key())
    }
}

/// What the timing phases (calibrate, measure, profile) share: where, with which settings,
/// on which host state, with which planning rule, and through which runner (the jail, or a
/// scripted one in unit tests) their children run.
pub struct MeasureCtx<'a> {
    pub run: &'a RunDir,
    pub settings: &'a Settings,
    pub host: HostState,
    pub planning: Planning,
    pub runner: &'a dyn Runner,
}

impl MeasureCtx<'_> {
    pub fn job(&self, t: &Target) -> OpJob {
        job(self.run, self.settings, t)
    }

    pub fn run_child(
        &self,
        name: &str,
        req: &Request,
        timeout_s: f64,
    ) -> Result<(OpOutput, Outcome)> {
        run_child_with(self.runner, self.run, self.settings, name, req, timeout_s)
    }

    /// The calibration of `t`, if one was written.
    pub fn calibration(&self, t: &Target) -> Option<Calibration> {
        read_json(&self.run.calibration_path(t.cand(), t.label(), &t.key())).ok()
    }
}

/// The job of one calibrate, trial or profile child for `t`: one call, no warm-up, pinned to
/// the benchmark CPU (callers set iterations, warm-ups and trials).
pub fn job(run: &RunDir, settings: &Settings, t: &Target) -> OpJob {
    OpJob {
        limits: Limits {
            address_space: Some(settings.mem_limit_mib << 20),
            // Set per process from its wall-clock timeout (see `run_child`).
            cpu_seconds: None,
            file_size: Some(1 << 30),
            pin_cpu: Some(settings.cpu),
        },
        library: run.path(t.entry.library.as_deref().unwrap_or_default()),
        kind: t.sel.cand.kind,
        api: t.sel.cand.api,
        op: t.op.op.clone(),
        input_bytes: t.op.input_bytes,
        setup_dir: run.setup_dir(t.cand(), t.label(), &t.key()),
        seed_tweak: 0,
        iterations: 1,
        warmups: 0,
        trials: 1,
        counter: None,
        rng: None,
        calibration_s: crate::measure::calibration::calibration_s(settings.op_budget_s),
    }
}

/// Runs one child in the jail and turns every way it can end into an `OpOutput` plus its
/// process facts.
pub fn run_child(
    run: &RunDir,
    settings: &Settings,
    name: &str,
    req: &Request,
    timeout_s: f64,
) -> Result<(OpOutput, Outcome)> {
    run_child_with(
        &JailRunner::new(&settings.jail),
        run,
        settings,
        name,
        req,
        timeout_s,
    )
}

/// [`run_child`] through `runner`.
pub fn run_child_with(
    runner: &dyn Runner,
    run: &RunDir,
    settings: &Settings,
    name: &str,
    req: &Request,
    timeout_s: f64,
) -> Result<(OpOutput, Outcome)> {
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
    let outcome = runner.run(&spec, &req)?;
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
        (_, Err(_)) if outcome.unexpected.is_some() || outcome.jail_error.is_some() => OpOutput {
            status: ProcessStatus::Failed,
            error: Some(format!(
                "{}: {}",
                KatStatus::Crash,
                outcome.failure_text().unwrap_or_default()
            )),
            sandbox: outcome.sandbox.clone().unwrap_or_default(),
            ..Default::default()
        },
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
