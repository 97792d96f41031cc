//! Code that runs inside the sandboxed child process (the same binary, `__child`).
//! The child limits itself, loads one library, does one job, and writes its JSON result to
//! fd 3. Candidate code may crash or hang; the orchestrator classifies that from outside.

pub(crate) mod crash;
pub(crate) mod guard;
pub(crate) mod kat_common;
pub(crate) mod kat_iccs;
pub(crate) mod kat_nist;
pub(crate) mod library;
pub(crate) mod limits;
pub(crate) mod measure;
pub(crate) mod memory;
pub(crate) mod ops;
pub(crate) mod profile;
pub mod protocol;
pub(crate) mod rng;
pub(crate) mod stack;

use crate::dataset::schema::{KatStatus, ProcessStatus};
use anyhow::{Context, Result};
use clap::Args;
use protocol::{KatEnd, KatOutput, Request};
use std::io::Write;
use std::os::fd::FromRawFd;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct ChildArgs {
    /// JSON request file written by the orchestrator.
    pub request: std::path::PathBuf,
}

pub fn run(args: ChildArgs) -> Result<ExitCode> {
    let t_start = crate::measure::counter::monotonic_raw_ns();
    crash::install();
    let request: Request = crate::util::read_json(&args.request)?;
    let result = match request {
        Request::Kat(job) => serde_json::to_vec(&kat(&job))?,
        Request::Calibrate(job) => serde_json::to_vec(&op_job(&job, t_start, measure::calibrate))?,
        Request::Trial(job) => serde_json::to_vec(&op_job(&job, t_start, measure::trial))?,
        Request::Vectors(job) => serde_json::to_vec(&kat_iccs::vectors(&job))?,
        Request::Profile(job) => serde_json::to_vec(&profile::run(&job, t_start))?,
    };
    // SAFETY: fd 3 is the result pipe the orchestrator set up for this process.
    let mut pipe = unsafe { std::fs::File::from_raw_fd(3) };
    pipe.write_all(&result).context("writing the result")?;
    pipe.write_all(b"\n")?;
    crash::finished();
    Ok(ExitCode::SUCCESS)
}

fn kat(job: &protocol::KatJob) -> KatOutput {
    let mut out = KatOutput {
        sandbox: sandbox(&job.limits),
        ..KatOutput::default()
    };
    crash::stage("dlopen (library constructors)");
    let lib = match library::Lib::open(&job.library) {
        Ok(l) => l,
        Err(e) => {
            out.status = KatEnd::Failed(KatStatus::LoadFail);
            out.detail = Some(e);
            return out;
        }
    };
    out.meta = Some(lib.meta.clone());
    let res = match job.api {
        crate::candidate::Api::Nist => kat_nist::run(job, &lib, &mut out),
        crate::candidate::Api::Iccs => kat_iccs::run(job, &lib, &mut out),
    };
    match res {
        Ok(()) => out.status = KatEnd::Ok,
        Err((status, detail)) => {
            out.status = KatEnd::Failed(status);
            out.detail = Some(detail);
        }
    }
    out
}

/// Applies the limits and reports them on the result pipe before any candidate code runs.
fn sandbox(limits: &protocol::Limits) -> String {
    let text = limits::apply(limits);
    crash::note("sandbox", &text);
    text
}

fn op_job(
    job: &protocol::OpJob,
    t_start: u64,
    work: fn(&protocol::OpJob, &library::Lib, u64) -> protocol::OpOutput,
) -> protocol::OpOutput {
    let sandbox = sandbox(&job.limits);
    crash::stage("dlopen (library constructors)");
    let lib = library::Lib::open(&job.library);
    crash::stage(&job.op.name());
    let mut out = match lib {
        Ok(lib) => work(job, &lib, t_start),
        Err(e) => protocol::OpOutput {
            status: ProcessStatus::Failed,
            error: Some(format!("{}: {e}", KatStatus::LoadFail)),
            ..Default::default()
        },
    };
    out.sandbox = sandbox;
    out.end_s = (crate::measure::counter::monotonic_raw_ns() - t_start) as f64 / 1e9;
    out
}
