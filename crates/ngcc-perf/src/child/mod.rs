//! Code that runs inside the jail's worker (the same binary, `__jailed`, see `sandbox::jail`).
//! The worker limits itself, loads one library, does one job, and writes its JSON result to
//! fd 3. Candidate code may crash, hang or lie; the orchestrator judges from outside.

pub(crate) mod count;
pub(crate) mod crash;
pub(crate) mod ct;
pub(crate) mod guard;
pub(crate) mod heap;
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
pub(crate) mod rawtrap;
pub(crate) mod rng;
pub(crate) mod stack;

use crate::dataset::schema::{KatStatus, ProcessStatus};
use crate::sandbox::jail::{channel, worker};
use anyhow::{Context, Result};
use protocol::{KatEnd, KatOutput, Request};
use std::io::Write;
use std::os::fd::FromRawFd;
use std::process::ExitCode;

/// `ngcc-perf __jailed`: the jail's worker. Receives its job from the keeper
/// (`sandbox::jail::worker`) and runs it; a probe only locks the worker down.
pub fn jailed() -> Result<ExitCode> {
    let t_start = crate::measure::counter::monotonic_raw_ns();
    let (nonce, job) = worker::receive()?;
    let Some(job) = job else {
        worker::lock_down("");
        return Ok(ExitCode::SUCCESS);
    };
    let mut request: Request =
        serde_json::from_value(job.request).context("the job is not a request")?;
    request.set_files(job.files);
    run_request(request, &nonce, t_start)
}

/// Runs one job: writes the JSON result, with the job's nonce, to fd 3.
fn run_request(request: Request, nonce: &str, t_start: u64) -> Result<ExitCode> {
    crash::install();
    let result = match request {
        Request::Kat(job) => serde_json::to_value(kat(&job))?,
        Request::Calibrate(job) => serde_json::to_value(op_job(&job, t_start, measure::calibrate))?,
        Request::Trial(job) => serde_json::to_value(op_job(&job, t_start, measure::trial))?,
        Request::Vectors(job) => serde_json::to_value(kat_iccs::vectors(&job))?,
        Request::Profile(job) => serde_json::to_value(profile::run(&job, t_start))?,
        Request::Ct(job) => serde_json::to_value(ct::run(&job))?,
        Request::Verify(job) => serde_json::to_value(verify(&job))?,
        Request::Count(job) => serde_json::to_value(count::run(&job))?,
        Request::Memory(job) => serde_json::to_value(heap::run(&job))?,
    };
    let mut obj = match result {
        serde_json::Value::Object(o) => o,
        _ => serde_json::Map::new(),
    };
    obj.insert(
        channel::NONCE_FIELD.into(),
        serde_json::Value::String(nonce.to_string()),
    );
    let mut line = serde_json::to_vec(&obj)?;
    line.push(b'\n');
    // SAFETY: fd 3 is the result pipe the orchestrator set up for this process.
    let mut pipe = unsafe { std::fs::File::from_raw_fd(3) };
    pipe.write_all(&line).context("writing the result")?;
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
            out.detail = Some(e.to_string());
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

/// Applies the limits, then the jail's own layers (`worker::lock_down`, which reports them
/// on the jail's trusted pipe), before any candidate code runs.
pub(crate) fn sandbox(limits: &protocol::Limits) -> String {
    let text = limits::apply(limits);
    worker::lock_down(&text);
    text
}

fn op_job(
    job: &protocol::OpJob,
    t_start: u64,
    work: fn(&protocol::OpJob, &library::Lib, u64) -> protocol::OpOutput,
) -> protocol::OpOutput {
    // The counter is opened before seccomp, which denies perf_event_open to candidate code,
    // and the clock resolved before dlopen, so no slot the library can patch is on the path.
    measure::preopen_counter(job);
    crate::measure::clock::resolve();
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

/// A verify job: loads a trial's last outputs as a setup and recomputes what they must
/// satisfy (`ops::Runner::verify`). The orchestrator compares, against its own copy.
fn verify(job: &protocol::OpJob) -> protocol::VerifyOutput {
    let mut out = protocol::VerifyOutput {
        sandbox: sandbox(&job.limits),
        ..Default::default()
    };
    let fail = |mut out: protocol::VerifyOutput, e: String| {
        out.status = ProcessStatus::Failed;
        out.error = Some(e);
        out
    };
    if !job.setup_dir.join("setup.json").is_file() {
        return fail(out, "no last outputs to verify".into());
    }
    crash::stage("dlopen (library constructors)");
    let lib = match library::Lib::open(&job.library) {
        Ok(l) => l,
        Err(e) => return fail(out, format!("{}: {e}", KatStatus::LoadFail)),
    };
    if let Err(e) = ops::seed_library(&lib, job.api, job.seed_tweak, job.rng) {
        return fail(out, e.into());
    }
    let op = if job.kind == crate::candidate::Kind::Hash {
        crate::dataset::schema::Op::Hash
    } else {
        job.op.clone()
    };
    crash::stage(&format!("verifying the last outputs of {op}"));
    let prepared =
        ops::Runner::prepare(&lib, job.kind, &op, job.input_bytes, &job.setup_dir, false);
    match prepared.and_then(|mut r| r.verify()) {
        Ok(values) => {
            out.status = ProcessStatus::Complete;
            out.values = values;
            out
        }
        Err(e) => fail(out, e.into()),
    }
}
