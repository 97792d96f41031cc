//! The memory job (issue 36): on the heap-recording relink (`profile::heap`), the operation
//! the trials time (same seed, the saved setup), called on a painted stack with the
//! recorder counting around the call alone; then once more, for what every later call
//! costs. Runs in the jail like every job that loads candidate code, never in a timed child.

use super::library::Lib;
use super::ops::{Runner, seed_library};
use super::protocol::{MemoryOutput, OpJob};
use super::rawtrap;
use crate::dataset::memory::{HeapCall, OpMemory};
use crate::dataset::schema::{Op, ProcessStatus};
use anyhow::{Context, Result, bail};

/// The recorder's counters, in `ngcc_heap_stats` order (csrc/heap/ngcc_heap.c).
const LOAD_ALLOCATIONS: usize = 0;
const LOAD_BYTES: usize = 1;
const OUTSIDE_ALLOCATIONS: usize = 2;
const OUTSIDE_BYTES: usize = 3;
const FOREIGN_FREES_TOTAL: usize = 4;
const TABLE_FAILURES: usize = 5;
const RAW_SYSCALLS_TOTAL: usize = 6;
const CALL: usize = 7;
const COUNT: usize = 24;

struct Recorder {
    loaded: unsafe extern "C" fn(),
    begin: unsafe extern "C" fn(),
    end: unsafe extern "C" fn(),
    stats: unsafe extern "C" fn(*mut u64, usize) -> usize,
}

impl Recorder {
    fn open(lib: &Lib) -> Result<Recorder> {
        let r = Recorder {
            loaded: lib.func("ngcc_heap_loaded")?,
            begin: lib.func("ngcc_heap_begin")?,
            end: lib.func("ngcc_heap_end")?,
            stats: lib.func("ngcc_heap_stats")?,
        };
        let mut v = [0u64; COUNT];
        // SAFETY: `v` holds COUNT slots; the recorder writes at most that many.
        let n = unsafe { (r.stats)(v.as_mut_ptr(), COUNT) };
        if n != COUNT {
            bail!("the heap recorder has {n} counters, this ngcc-perf reads {COUNT}");
        }
        Ok(r)
    }

    fn stats(&self) -> [u64; COUNT] {
        let mut v = [0u64; COUNT];
        // SAFETY: as in `open`.
        unsafe { (self.stats)(v.as_mut_ptr(), COUNT) };
        v
    }
}

fn call_figures(v: &[u64; COUNT]) -> HeapCall {
    let c = &v[CALL..];
    HeapCall {
        allocations: c[0],
        allocated_bytes: c[1],
        peak_live_bytes: c[2],
        live_after_bytes: c[3],
        live_after_blocks: c[4],
        frees: c[5],
        frees_of_earlier: c[6],
        foreign_frees: c[7],
        mmap_calls: c[8],
        mmap_bytes: c[9],
        untracked_munmaps: c[10],
        raw_syscalls: c[11],
        raw_syscall_bytes: c[12],
        helper_allocations: c[13],
        helper_allocated_bytes: c[14],
        helper_peak_live_bytes: c[15],
    }
}

pub fn run(job: &OpJob) -> MemoryOutput {
    // Before the jail's lock-down, which forbids filters of our own, and before the library
    // is mapped: everything executable now is exempt from the trap.
    let raw_trap = rawtrap::install();
    let sandbox = super::sandbox(&job.limits);
    let op = if job.kind == crate::candidate::Kind::Hash {
        Op::Hash
    } else {
        job.op.clone()
    };
    let mut figures = OpMemory {
        operation: job.op.clone(),
        input_bytes: job.input_bytes,
        status: ProcessStatus::Failed,
        raw_trap,
        ..OpMemory::default()
    };
    super::crash::stage("dlopen (library constructors)");
    let measured = Lib::open(&job.library)
        .map_err(anyhow::Error::from)
        .and_then(|lib| measure(job, &op, &lib, &mut figures));
    if let Err(e) = measured {
        figures.status = ProcessStatus::Failed;
        figures.error = Some(format!("{e:#}"));
    }
    MemoryOutput {
        op: figures,
        sandbox,
    }
}

fn measure(job: &OpJob, op: &Op, lib: &Lib, out: &mut OpMemory) -> Result<()> {
    let rec = Recorder::open(lib).context("not a heap-recording library")?;
    // SAFETY: ends the recorder's load phase (no arguments).
    unsafe { (rec.loaded)() };
    seed_library(lib, job.api, job.seed_tweak, job.rng)?;
    super::crash::stage(&format!("memory of {op}"));
    let mut runner = Runner::prepare(lib, job.kind, op, job.input_bytes, &job.setup_dir, false)?;
    let mut calls: Vec<HeapCall> = Vec::new();
    let mut err = None;
    let mut counted = || {
        // SAFETY: the recorder's begin/end take no arguments.
        rawtrap::begin();
        unsafe { (rec.begin)() };
        let r = runner.call();
        unsafe { (rec.end)() };
        rawtrap::end();
        let mut h = call_figures(&rec.stats());
        let (_, trapped, bytes) = rawtrap::counts();
        h.raw_syscalls += trapped;
        h.raw_syscall_bytes += bytes;
        calls.push(h);
        if let Err(e) = r {
            err.get_or_insert(e);
        }
    };
    // Two painted calls: the first after the setup, then one more (the painting may call
    // more than once itself when a call is deeper than its first paint).
    let a = super::stack::peak_stack_bytes(&mut counted);
    let b = super::stack::peak_stack_bytes(&mut counted);
    let v = rec.stats();
    out.load_allocations = v[LOAD_ALLOCATIONS];
    out.load_bytes = v[LOAD_BYTES];
    out.outside_allocations = v[OUTSIDE_ALLOCATIONS];
    out.outside_bytes = v[OUTSIDE_BYTES];
    out.foreign_frees_total = v[FOREIGN_FREES_TOTAL];
    out.untracked_blocks = v[TABLE_FAILURES];
    out.raw_syscalls_total = v[RAW_SYSCALLS_TOTAL] + rawtrap::counts().0;
    if let Some(e) = err {
        bail!("operation failed: {e}");
    }
    runner.check_guards()?;
    // What the harness's randombytes callback (NIST API: our DRBG, in Rust) adds on the
    // library's stack where the library calls it: painted alone, after the counted calls
    // (it advances the generator).
    if job.api == crate::candidate::Api::Nist {
        let mut buf = [0u8; 64];
        out.rng_callback_stack_bytes = super::stack::peak_stack_bytes(&mut || {
            // SAFETY: buf holds the 64 bytes asked for.
            unsafe { super::rng::host_randombytes(buf.as_mut_ptr(), buf.len()) };
        });
    }
    out.first = calls.first().cloned();
    out.repeat = calls.last().cloned();
    out.stack_bytes = match (a, b) {
        (Some(a), Some(b)) => Some(a.max(b)),
        _ => bail!("could not run the call on a painted stack"),
    };
    out.status = ProcessStatus::Complete;
    Ok(())
}
