//! The count job (issue 35), inside the jail's worker run by callgrind (`Request::tool`).
//! callgrind toggles collection on entering and off leaving the shim's entry point of the
//! operation (`--toggle-collect`, see `protocol::callgrind_args`), so what is counted is the
//! library call alone. This job prepares the operation exactly as a trial does (seed, the
//! calibration's saved setup or the same setup built from the same seed, then a fresh
//! seed, the job's warm-up calls: one, the same everywhere), dumps the counters once to close
//! the warm-up and again after every counted call: one callgrind file per call, which the orchestrator reads.

use super::library::Lib;
use super::ops::{Runner, perf_seed, seed_library};
use super::protocol::{CountJob, CountOutput};
use crate::candidate::Kind;
use crate::dataset::count::{DUMP_PREFIX, WARMUP_DUMP};
use crate::dataset::schema::{Op, ProcessStatus};
use crate::measure::counter::monotonic_raw_ns;

/// callgrind client requests (csrc/count/count_client.c).
mod client {
    use std::ffi::{CString, c_char, c_int, c_uint};

    unsafe extern "C" {
        fn ngcc_count_client_available() -> c_int;
        fn ngcc_count_running_on_valgrind() -> c_uint;
        fn ngcc_count_dump(name: *const c_char);
        fn ngcc_count_start_instrumentation();
    }

    /// Whether this binary was built with callgrind.h (else every request is a no-op).
    pub fn available() -> bool {
        // SAFETY: returns a constant.
        unsafe { ngcc_count_client_available() != 0 }
    }

    pub fn on_valgrind() -> bool {
        // SAFETY: a client request; 0 outside valgrind.
        unsafe { ngcc_count_running_on_valgrind() != 0 }
    }

    /// Starts callgrind's instrumentation (the job runs with `--instr-atstart=no`).
    pub fn start_instrumentation() {
        // SAFETY: a client request; a no-op outside valgrind.
        unsafe { ngcc_count_start_instrumentation() }
    }
    pub fn dump(name: &str) {
        let c = CString::new(name).unwrap_or_default();
        // SAFETY: a NUL-terminated string we own; callgrind copies it.
        unsafe { ngcc_count_dump(c.as_ptr()) }
    }
}

/// Whether the count phase can run here: valgrind installed and this binary built with its
/// callgrind header (the demo counts only then).
pub fn available() -> bool {
    client::available() && std::path::Path::new(super::protocol::valgrind_program()).is_file()
}

/// Whether this process runs with address-space randomisation off (the persona the jail
/// exec'd the tool with is inherited through valgrind's own exec): read, not assumed.
fn fixed_addresses() -> bool {
    // SAFETY: 0xffffffff only queries the persona.
    let p = unsafe { libc::personality(0xffff_ffff) };
    p >= 0 && p & libc::ADDR_NO_RANDOMIZE != 0
}

/// CPU seconds of this process (under callgrind: the tool's, which runs the library), so
/// the slowdown does not grow with the host's load as the wall seconds do.
fn process_cpu_s() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec we own.
    unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 / 1e9
}

fn failed(mut out: CountOutput, e: impl Into<String>) -> CountOutput {
    out.status = ProcessStatus::Failed;
    out.error = Some(e.into());
    out
}

pub fn run(job: &CountJob) -> CountOutput {
    let mut out = CountOutput {
        sandbox: super::sandbox(&job.limits),
        fixed_addresses: fixed_addresses(),
        ..CountOutput::default()
    };
    if let Some(s) = job.cpu_soft_s {
        super::limits::cpu_soft(s);
    }
    if !client::available() {
        return failed(
            out,
            "this ngcc-perf was built without valgrind/callgrind.h: no count run possible",
        );
    }
    if !client::on_valgrind() {
        return failed(out, "the count job is not running under valgrind");
    }
    // Started here (`--instr-atstart=no`), so what callgrind simulates is the library's
    // loading, setup and calls, never the worker's start-up before it.
    client::start_instrumentation();
    super::crash::stage("dlopen (library constructors)");
    let lib = match Lib::open(&job.library) {
        Ok(l) => l,
        Err(e) => return failed(out, format!("LOADFAIL: {e}")),
    };
    let op = if job.kind == Kind::Hash {
        Op::Hash
    } else {
        job.op.clone()
    };
    if let Err(e) = seed_library(&lib, job.api, job.seed_tweak, None) {
        return failed(out, e);
    }
    let loaded = job.setup_dir.join("setup.json").is_file();
    super::crash::stage(&format!("setup for {op}"));
    let mut runner =
        match Runner::prepare(&lib, job.kind, &op, job.input_bytes, &job.setup_dir, false) {
            Ok(r) => r,
            Err(e) => return failed(out, e),
        };
    // A trial loads its setup and so starts its randomness at the seed: a setup built here
    // drew from it, so the stream starts again.
    if !loaded && let Err(e) = seed_library(&lib, job.api, job.seed_tweak, None) {
        return failed(out, e);
    }
    out.setup = if loaded { "loaded" } else { "built" }.into();
    out.seed = hex::encode_upper(perf_seed(job.seed_tweak));
    super::crash::stage(&op.name());
    let t0 = monotonic_raw_ns();
    let c0 = process_cpu_s();
    for _ in 0..job.warmups {
        if let Err(e) = runner.call() {
            return failed(out, format!("warm-up operation failed: {e}"));
        }
        out.warmups += 1;
    }
    // A dump, not a zero: after CALLGRIND_ZERO_STATS the first counted call still carried
    // tens of instructions more than the next (PLT and heap calls in the first dump).
    client::dump(WARMUP_DUMP);
    for i in 1..=job.calls {
        let r = runner.call();
        client::dump(&format!("{DUMP_PREFIX} {i}"));
        if let Err(e) = r {
            return failed(out, format!("counted call {i} failed: {e}"));
        }
        out.calls += 1;
    }
    out.work_s = (monotonic_raw_ns() - t0) as f64 / 1e9;
    out.work_cpu_s = process_cpu_s() - c0;
    if let Err(e) = runner.check_guards() {
        return failed(out, format!("OVERFLOW: {e}"));
    }
    out.status = ProcessStatus::Complete;
    out
}
