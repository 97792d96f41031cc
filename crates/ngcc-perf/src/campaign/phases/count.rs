//! Phase `count` (issue 35, opt-in): instruction counts per operation of every instance that
//! passed its KAT, under valgrind callgrind in the usual jail (`Request::tool`, the ct
//! phase's way of running valgrind).
//! - The timed library itself is counted (no rebuild), prepared as a trial prepares it
//!   (`child::count`): the calibration's saved setup when there is one, the trial's seed,
//!   then [`WARMUPS`] warm-up call, then `--count-calls` calls.
//! - Collection is on only inside the shim's entry point of the operation
//!   (`--toggle-collect`), and each call is dumped to its own file, so every call's counts
//!   are separate evidence. The dumps are stored (`count/<cand>/<label>__<op>.callgrind`,
//!   without the lines that name the process) and read here into per-call counts.
//! - The library's bytes are scanned for valgrind client requests: a library that can ask
//!   whether it runs under valgrind has its counts marked.
//!
//! An instance's operations share `--count-budget` CPU seconds equally: a job's process is
//! killed by the kernel at its share (never below `count_budget::MIN_JOB_CPU_S`), and a
//! wall-clock bound of `count_budget::WALL_PER_CPU` times that stops a job that waits
//! without computing ([`count_budget`]).

use super::count_budget::{CPU_GRACE_S, JobBudget};
use crate::campaign::measurable;
use crate::campaign::runner::{JailRunner, Runner};
use crate::campaign::{Selected, Settings};
use crate::candidate::Api;
use crate::child::protocol::{
    CALLGRIND_OUT, CountJob, CountOutput, Limits, Request, callgrind_args, count_entry_points,
    valgrind_program,
};
use crate::dataset::count::{
    self as dc, CACHE_MODEL, COUNT_SCHEMA, CountRecord, ESTIMATE_WEIGHTS, RAW_EXT, RawOutput,
};
use crate::dataset::schema::{BuildEntry, Calibration, KatStatus, ProcessStatus};
use crate::measure::{callgrind, client_requests};
use crate::profile::symbols::{Family, helpers};
use crate::rundir::RunDir;
use crate::sandbox::jail::ingest;
use crate::sandbox::{self, Spec};
use crate::util::progress::Progress;
use crate::util::{atomic_write, read_json, sha256_hex, tail, write_json};
use anyhow::Result;
use std::collections::BTreeSet;
use std::time::Duration;

/// Calls before the counted ones, the same for every operation on every host. Not the
/// trials' number: that follows the calibration's timing (3 under 50 ms, 1 under 5 s, else
/// 0), and on a busy host Mito-1-512 keygen got 1 instead of 3 and Origami-512 signing 0
/// instead of 1, so the counted calls were other draws of the same randomness and their
/// counts differed. One call takes what happens once (lazy tables, the first signing's
/// precomputation) out of the counted calls.
pub const WARMUPS: u64 = 1;

/// Cap on what a count job may leave in scratch (its callgrind files).
const COUNT_CAP: u64 = 256 << 20;
/// How collection is limited to the counted calls, as records say it.
pub const COLLECTION: &str = "callgrind --collect-atstart=no with --toggle-collect on the \
shim's entry point of the operation (only the library call is counted, never the harness \
around it); the counters are dumped (and so zeroed) after the warm-up calls and after each \
counted call (CALLGRIND_DUMP_STATS_AT from the harness, not the library); instrumentation, \
and with it the cache simulation, starts just before the library is loaded \
(--instr-atstart=no, CALLGRIND_START_INSTRUMENTATION), so the warm-up calls meet caches \
that only the library's loading, its setup and earlier calls filled";

pub fn run(run: &RunDir, selected: &[Selected], settings: &Settings) -> Result<()> {
    run_with(
        &JailRunner {
            jail: &settings.jail,
        },
        run,
        selected,
        settings,
    )
}

/// [`run`] with its jobs run by `runner` (scripted in the tests).
fn run_with(
    runner: &dyn Runner,
    run: &RunDir,
    selected: &[Selected],
    settings: &Settings,
) -> Result<()> {
    let build = run.load_build()?;
    let mut work = Vec::new();
    // A shard counts its own instances, as it times them (its run holds only their
    // libraries): each count record then comes from one shard, which merge requires.
    for s in selected
        .iter()
        .filter(|s| crate::campaign::shard::in_shard(&s.key(), settings.shard))
    {
        let Some(e) = build.entry(&s.key()) else {
            crate::util::say!("count: skipping {}: not built", s.key());
            continue;
        };
        if e.kat != KatStatus::Pass {
            crate::util::say!("count: skipping {}: KAT {}", s.key(), e.kat);
            continue;
        }
        let Some(lib) = e
            .library
            .as_deref()
            .map(|l| run.path(l))
            .filter(|l| l.is_file())
        else {
            crate::util::say!("count: skipping {}: library file is missing", s.key());
            continue;
        };
        let exchange: Option<Calibration> =
            read_json(&run.calibration_path(&s.cand.id, &s.inst.label, "exchange")).ok();
        let ops: Vec<measurable::OpSpec> =
            measurable::operations(s.cand.kind, exchange.as_ref())
                .into_iter()
                .filter(|o| {
                    if count_entry_points(s.cand.kind, &o.op).is_none() {
                        crate::util::say!(
                            "count: skipping {} {}: a KEX pass shares its entry point with the other passes",
                            s.key(),
                            o.key()
                        );
                        return false;
                    }
                    !current(run, s, &e, o, settings)
                })
                .collect();
        if !ops.is_empty() {
            work.push((s, e.clone(), lib, ops));
        }
    }
    let progress = Progress::new("count", work.iter().map(|w| w.3.len() as u64).sum());
    let tool = valgrind_version();
    for (s, e, lib, ops) in &work {
        let bytes = std::fs::read(lib)?;
        let scan = client_requests::scan(&bytes, &sha256_hex(&bytes));
        let budget = JobBudget::share(
            settings.count_budget_s,
            measurable::operations(s.cand.kind, None).len(),
        );
        for o in ops {
            progress.working_on(&format!("{} {}", s.key(), o.key()));
            let mut r = count_one(runner, run, settings, s, e, o, budget, &tool)?;
            r.client_requests = Some(scan.clone());
            write_json(
                &run.count_path(&s.cand.id, &s.inst.label, &o.key(), "json"),
                &r,
            )?;
            progress.done(&line(&r));
        }
    }
    progress.finish();
    Ok(())
}

/// Whether the record on disk counted today's library with today's number of calls.
fn current(
    run: &RunDir,
    s: &Selected,
    e: &BuildEntry,
    o: &measurable::OpSpec,
    settings: &Settings,
) -> bool {
    let path = run.count_path(&s.cand.id, &s.inst.label, &o.key(), "json");
    read_json::<CountRecord>(&path).is_ok_and(|r| {
        Some(&r.library_sha256) == e.library_sha256.as_ref()
            && r.status == ProcessStatus::Complete
            && r.calls.len() as u64 == settings.count_calls
            && r.warmups == WARMUPS
    })
}

/// `count <cand>/<label> <op>: <mean> instructions per call (<min>–<max>), …`.
pub fn line(r: &CountRecord) -> String {
    let head = format!(
        "count {}/{} {}",
        r.candidate,
        r.label,
        r.operation.key(r.input_bytes)
    );
    let mark = if r.valgrind_aware() {
        " [the library contains valgrind client requests]"
    } else {
        ""
    };
    match (&r.status, &r.summary) {
        (ProcessStatus::Complete, Some(s)) => format!(
            "{head}: {:.0} instructions per call ({}-{}), estimated cycles {:.0}, helpers {:.1} %{mark}",
            s.ir_mean,
            s.ir_min,
            s.ir_max,
            s.estimated_cycles_mean,
            100.0 * s.helper_share
        ),
        _ => format!(
            "{head}: {} ({}){mark}",
            r.status,
            r.error.clone().unwrap_or_default()
        ),
    }
}

/// `valgrind-3.19.0`, or why there is none.
pub fn valgrind_version() -> String {
    let program = valgrind_program();
    std::process::Command::new(program)
        .arg("--version")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| format!("{program} not found"))
}

/// Function names counted as helpers for this instance (the profile phase's helpers under
/// their plain and, NIST, namespaced names) and those of them that are randomness.
pub fn helper_names(api: Api, namespace: Option<&str>) -> (Vec<String>, Vec<String>) {
    let mut all = BTreeSet::new();
    let mut rng = BTreeSet::new();
    for h in helpers(api) {
        let mut names = vec![h.base.clone()];
        if api == Api::Nist
            && let Some(ns) = namespace
            && !h.base.starts_with("PQCLEAN_")
        {
            names.push(format!("{ns}_{}", h.base));
        }
        for n in names {
            if h.family == Family::Rng {
                rng.insert(n.clone());
            }
            all.insert(n);
        }
    }
    (all.into_iter().collect(), rng.into_iter().collect())
}

/// Drops the lines of a dump that name this process (`pid:`, `cmd:`): what remains is the
/// same for the same instruction stream.
pub fn sanitize(dump: &str) -> String {
    dump.lines()
        .filter(|l| !l.starts_with("pid:") && !l.starts_with("cmd:"))
        .map(|l| format!("{l}\n"))
        .collect()
}

#[allow(clippy::too_many_arguments)]
fn count_one(
    runner: &dyn Runner,
    run: &RunDir,
    settings: &Settings,
    s: &Selected,
    e: &BuildEntry,
    o: &measurable::OpSpec,
    budget: JobBudget,
    tool: &str,
) -> Result<CountRecord> {
    let (helper_fns, rng_fns) = helper_names(s.cand.api, s.inst.namespace.as_deref());
    let warmups = WARMUPS;
    let name = format!("count-{}-{}-{}", s.cand.id, s.inst.label, o.key());
    let scratch = run.scratch(&name)?;
    let saved = run.setup_dir(&s.cand.id, &s.inst.label, &o.key());
    let setup_dir = if saved.join("setup.json").is_file() {
        saved
    } else {
        let d = scratch.join("setup");
        std::fs::create_dir_all(&d)?;
        d
    };
    let job = CountJob {
        limits: Limits {
            address_space: Some(settings.mem_limit_mib << 20),
            // The hard limit, for code that catches the budget's SIGXCPU (`cpu_soft_s`).
            cpu_seconds: Some(budget.cpu_s + CPU_GRACE_S),
            file_size: Some(1 << 30),
            pin_cpu: Some(settings.cpu),
        },
        library: run.path(e.library.as_deref().unwrap_or_default()),
        kind: s.cand.kind,
        api: s.cand.api,
        op: o.op.clone(),
        input_bytes: o.input_bytes,
        setup_dir,
        seed_tweak: 0,
        warmups,
        calls: settings.count_calls,
        cpu_soft_s: Some(budget.cpu_s),
    };
    let mut r = CountRecord {
        schema: COUNT_SCHEMA,
        candidate: s.cand.id.clone(),
        label: s.inst.label.clone(),
        operation: o.op.clone(),
        input_bytes: o.input_bytes,
        library_sha256: e.library_sha256.clone().unwrap_or_default(),
        tool: tool.to_string(),
        tool_args: callgrind_args(s.cand.kind, &o.op).unwrap_or_default(),
        cache_model: CACHE_MODEL,
        estimate_weights: ESTIMATE_WEIGHTS,
        collection: COLLECTION.into(),
        seed_tweak: 0,
        warmups,
        helper_fns: helper_fns.clone(),
        rng_fns: rng_fns.clone(),
        cpu_budget_s: budget.cpu_s,
        wall_bound_s: budget.wall_s,
        ..CountRecord::default()
    };
    let spec = Spec {
        workdir: scratch.clone(),
        timeout: Duration::from_secs(budget.wall_s),
    };
    let outcome = runner.run(&spec, &Request::Count(job))?;
    r.wall_s = outcome.wall_s;
    let tree = &outcome.observed.tree_usage;
    r.cpu_s = tree.user_s + tree.sys_s;
    r.sandbox = outcome.sandbox.clone().unwrap_or_default();
    r.ended_by = budget.ended_by(&outcome.exit, r.cpu_s, outcome.bound_hit.is_some());
    let out = match (r.ended_by, sandbox::parse_result::<CountOutput>(&outcome)) {
        (Some(bound), _) => CountOutput {
            status: ProcessStatus::HardTimeout,
            error: Some(budget.reason(bound, r.cpu_s, r.wall_s)),
            ..Default::default()
        },
        (None, Ok(o)) => {
            // Only a job that answered (it read its own persona) says how its addresses
            // were laid out; a killed or crashed one leaves the record `unrecorded`.
            r.address_space = if o.fixed_addresses {
                dc::AddressSpace::Fixed
            } else {
                dc::AddressSpace::Randomized
            };
            o
        }
        (None, Err(_)) => CountOutput {
            status: ProcessStatus::Failed,
            error: Some(format!(
                "crashed: {}; stderr: {}",
                outcome.failure_text().unwrap_or_else(|| "no result".into()),
                tail(outcome.stderr.trim(), 600)
            )),
            ..Default::default()
        },
    };
    r.status = out.status.clone();
    r.error = out.error.clone();
    r.seed = out.seed.clone();
    r.work_s = out.work_s;
    r.work_cpu_s = out.work_cpu_s;
    r.setup = out.setup.clone();
    r.warmups = out.warmups.max(if r.status == ProcessStatus::Complete {
        0
    } else {
        warmups
    });
    let copied = run.path(&format!("count-work/{name}"));
    let _ = std::fs::remove_dir_all(&copied);
    ingest::copy_out(&scratch, &copied, COUNT_CAP)?;
    let _ = std::fs::remove_dir_all(&scratch);
    if r.status != ProcessStatus::Complete {
        let _ = std::fs::remove_dir_all(&copied);
        return Ok(r);
    }
    let mut raw = String::new();
    for i in 1..=out.calls {
        // callgrind's dump 1 closed the warm-up.
        match std::fs::read_to_string(copied.join(format!("{CALLGRIND_OUT}.{}", i + 1))) {
            Ok(t) => raw.push_str(&sanitize(&t)),
            Err(err) => {
                r.status = ProcessStatus::Failed;
                r.error = Some(format!("no callgrind dump for call {i}: {err}"));
                let _ = std::fs::remove_dir_all(&copied);
                return Ok(r);
            }
        }
    }
    let _ = std::fs::remove_dir_all(&copied);
    match callgrind::calls_from_raw(&raw, &helper_fns, &r.entry_fns()) {
        Ok(calls) if calls.len() as u64 == settings.count_calls => r.calls = calls,
        Ok(calls) => {
            r.status = ProcessStatus::Failed;
            r.error = Some(format!(
                "{} dumps for {} calls",
                calls.len(),
                settings.count_calls
            ));
        }
        Err(err) => {
            r.status = ProcessStatus::Failed;
            r.error = Some(err.to_string());
        }
    }
    r.summary = dc::summarize(&r.calls, &ESTIMATE_WEIGHTS, &rng_fns);
    let raw_path = run.count_path(&s.cand.id, &s.inst.label, &o.key(), RAW_EXT);
    atomic_write(&raw_path, raw.as_bytes())?;
    r.raw = Some(RawOutput {
        path: format!(
            "{}/{}/{}.{RAW_EXT}",
            dc::COUNT_DIR,
            s.cand.id,
            dc::stem(&s.inst.label, &r.operation, r.input_bytes)
        ),
        sha256: sha256_hex(raw.as_bytes()),
        bytes: raw.len() as u64,
    });
    Ok(r)
}

#[cfg(test)]
#[path = "count_tests.rs"]
mod tests;
