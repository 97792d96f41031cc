//! The seam in front of the jail for the timing phases: calibrate, measure (trials, verify
//! children, the fixed-cost probes) and profile run their children through a [`Runner`]
//! held by `MeasureCtx`, so the planning rule, record assembly, the cross-checks and the
//! fresh/redo rules can be tested on scripted outcomes with exact numbers, without jailed
//! processes or a real clock. [`JailRunner`] is the only product implementation.

use crate::child::protocol::Request;
use crate::sandbox::{self, Outcome, Spec};
use anyhow::Result;

/// Runs one child job and reports it as the orchestrator sees it (the child's reply plus
/// what was observed from outside: exit, CPU from wait4, wall time).
pub trait Runner {
    /// One job in its jail, waiting at most `spec.timeout` (`sandbox::run`).
    fn run(&self, spec: &Spec, req: &Request) -> Result<Outcome>;
    /// An empty jail, no candidate code (`sandbox::run_probe`): the fixed cost of a process.
    fn probe(&self, spec: &Spec) -> Result<Outcome>;
}

/// The real jail.
pub struct JailRunner;

impl Runner for JailRunner {
    fn run(&self, spec: &Spec, req: &Request) -> Result<Outcome> {
        sandbox::run(spec, req)
    }

    fn probe(&self, spec: &Spec) -> Result<Outcome> {
        sandbox::run_probe(spec)
    }
}
