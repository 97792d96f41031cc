//! Phase `ct` (issue 17, opt-in): constant-time evidence per KEM, signature and KEX
//! operation of every instance that passed its KAT.
//! - The instance is rebuilt with its timed flag set plus `-g` (`RUN/ct-build/`, gcc's code
//!   does not depend on -g) so memcheck can name file:line.
//! - *Taint*: that library runs in the jail under valgrind memcheck (`Request::tool`) with
//!   the secrets marked undefined (`child::ct`); memcheck's XML log is copied out of
//!   scratch and read here into sites (`measure::memcheck`).
//! - *dudect*: the timed library, fixed-vs-random inputs, raw timings copied out of scratch;
//!   every statistic is computed here (`measure::dudect`).
//!
//! Both jobs of an instance share `--ct-budget` seconds: each operation gets an equal
//! share, half for each job (the taint job is killed at its share, dudect stops measuring
//! at half of its own). `ct/<cand>/<label>__<op>.json` holds the result.

use crate::build::BuildOptions;
use crate::build::flags::FlagSet;
use crate::build::instance::{self, Paths};
use crate::campaign::{Selected, Settings};
use crate::candidate::Kind;
use crate::child::ct::{self as child_ct, STAGE_MARKER, STAGE_WHOLE_SK};
use crate::child::protocol::{
    CT_TIMINGS, CtJob, CtMode, CtOutput, Limits, MEMCHECK_ARGS, MEMCHECK_XML, Request,
    valgrind_program,
};
use crate::dataset::schema::{
    BuildEntry, CtDudect, CtResult, CtTaint, KatStatus, Op, ProcessStatus,
};
use crate::measure::{dudect, memcheck};
use crate::rundir::RunDir;
use crate::sandbox::jail::{JOB_LIBRARY, JailOptions, ingest};
use crate::sandbox::{self, Exit, Outcome, Spec};
use crate::util::progress::Progress;
use crate::util::{sha256_file, write_json};
use anyhow::Result;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Cap on what a ct job may leave in scratch for us (XML log or timings).
const CT_CAP: u64 = 256 << 20;
/// The slowest a taint job may start (valgrind start-up and the setup under memcheck):
/// its share of the budget is never below this.
const MIN_TAINT_S: f64 = 20.0;

pub fn run(run: &RunDir, selected: &[Selected], settings: &Settings) -> Result<()> {
    let build = run.load_build()?;
    let mut work = Vec::new();
    for s in selected {
        if s.cand.kind == Kind::Hash {
            continue;
        }
        let Some(e) = build.entry(&s.key()) else {
            crate::util::say!("ct: skipping {}: not built", s.key());
            continue;
        };
        if e.kat != KatStatus::Pass {
            crate::util::say!("ct: skipping {}: KAT {}", s.key(), e.kat);
            continue;
        }
        let ops: Vec<Op> = child_ct::ops(s.cand.kind)
            .into_iter()
            .filter(|o| !run.ct_path(&s.cand.id, &s.inst.label, &o.name()).is_file())
            .collect();
        if !ops.is_empty() {
            work.push((s, e.clone(), ops));
        }
    }
    let progress = Progress::new("ct", work.iter().map(|w| w.2.len() as u64).sum());
    let tool = valgrind_version();
    let options = settings.build_options();
    for (s, e, ops) in &work {
        progress.working_on(&format!("{} -g build", s.key()));
        let lib = match debug_build(run, s, e, &options) {
            Ok(l) => l,
            Err(err) => {
                for o in ops {
                    progress.done(&format!("ct {} {}: no -g build ({err})", s.key(), o.name()));
                }
                continue;
            }
        };
        let n_ops = child_ct::ops(s.cand.kind).len().max(1) as f64;
        let share = settings.ct_budget_s / n_ops;
        for op in ops {
            progress.working_on(&format!("{} {} taint", s.key(), op.name()));
            let taint = taint_one(run, settings, s, op, &lib, share / 2.0, &tool)?;
            progress.working_on(&format!("{} {} dudect", s.key(), op.name()));
            let dudect = dudect_one(run, settings, s, e, op, share / 2.0)?;
            let r = CtResult {
                candidate: s.cand.id.clone(),
                label: s.inst.label.clone(),
                operation: op.clone(),
                ct_library_sha256: lib.sha256.clone(),
                ct_cflags: lib.cflags.clone(),
                timed_library_sha256: e.library_sha256.clone(),
                taint: Some(taint),
                dudect: Some(dudect),
            };
            write_json(&run.ct_path(&s.cand.id, &s.inst.label, &op.name()), &r)?;
            progress.done(&line(&r));
        }
    }
    progress.finish();
    Ok(())
}

/// `ct <cand>/<label> <op>: <n> sites (<m> on public sk data), dudect max |t| <t> (<verdict>, <n> timings)`.
pub fn line(r: &CtResult) -> String {
    let head = format!("ct {}/{} {}", r.candidate, r.label, r.operation.name());
    let taint = match &r.taint {
        Some(t) if t.forged => format!(
            "taint FORGED: the library contains {} valgrind client request(s)",
            t.client_requests.as_ref().map_or(0, |c| c.found)
        ),
        Some(t) if t.status == ProcessStatus::Complete => {
            let public = t.sites.iter().filter(|s| s.public_sk_data).count();
            let mut text = format!("{} sites", t.sites.len() - public);
            if public > 0 {
                text.push_str(&format!(" (+{public} on public sk data)"));
            }
            if let Some(first) = t.sites.iter().find(|s| !s.public_sk_data) {
                text.push_str(&format!(
                    ", first {}:{} {}",
                    first.file, first.line, first.kind
                ));
            }
            text
        }
        Some(t) => format!(
            "taint {} ({})",
            t.status,
            t.error.clone().unwrap_or_default()
        ),
        None => "no taint run".into(),
    };
    let dd = match &r.dudect {
        Some(d) if d.status == ProcessStatus::Complete => format!(
            "dudect max |t| {:.2} ({}, {} timings)",
            d.max_abs_t, d.verdict, d.measurements
        ),
        Some(d) => format!(
            "dudect {} ({})",
            d.status,
            d.error.clone().unwrap_or_default()
        ),
        None => "no dudect".into(),
    };
    format!("{head}: {taint}; {dd}")
}

fn valgrind_version() -> String {
    let program = valgrind_program();
    let v = std::process::Command::new(program)
        .arg("--version")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| format!("{program} not found"));
    format!("{v} {}", MEMCHECK_ARGS.join(" "))
}

/// The taint run's library and where its sources lie.
struct DebugLib {
    library: PathBuf,
    sha256: String,
    cflags: String,
    /// Folders site paths are made relative to, most specific first.
    roots: Vec<PathBuf>,
}

/// Builds the instance again with its timed flag set plus `-g` (cached by the build's
/// content key: an existing library with the same key is reused).
fn debug_build(
    run: &RunDir,
    s: &Selected,
    e: &BuildEntry,
    options: &BuildOptions,
) -> Result<DebugLib, String> {
    let flag_set = FlagSet::from_name(&e.flags)
        .ok_or_else(|| format!("flag set {} is not one we build", e.flags))?;
    let work = run.ct_build_dir(&s.cand.id, &s.inst.label);
    let paths = Paths {
        work: work.clone(),
        library: work.join(format!("lib{}.so", s.inst.label)),
        log: work.join("build.log"),
        guide_log: work.join("guide.log"),
    };
    let mut plan = instance::plan(&s.cand, &s.inst, flag_set, &paths, options)
        .map_err(|x| format!("{x:#}"))?;
    plan.cflags.push("-g".into());
    let key_file = work.join("cache_key");
    let key = format!("{}-g", plan.cache_key);
    let cached = std::fs::read_to_string(&key_file).is_ok_and(|k| k == key);
    if !(cached && paths.library.is_file()) {
        let _ = std::fs::remove_file(&paths.log);
        let built = instance::compile_and_link(&plan, &paths).map_err(|x| format!("{x:#}"))?;
        if !built.ok {
            return Err(built.error.unwrap_or_else(|| "build failed".into()));
        }
        crate::util::atomic_write(&key_file, key.as_bytes()).map_err(|x| format!("{x:#}"))?;
    }
    let mut roots = Vec::new();
    if let Ok(d) = s.cand.instance_dir(&s.inst) {
        roots.extend(std::fs::canonicalize(&d).ok());
    }
    roots.extend(std::fs::canonicalize(&s.cand.root).ok());
    roots.extend(std::fs::canonicalize(&work).ok());
    Ok(DebugLib {
        sha256: sha256_file(&paths.library).map_err(|x| format!("{x:#}"))?,
        library: paths.library,
        cflags: plan.flag_string(),
        roots,
    })
}

fn limits(settings: &Settings, timeout_s: f64) -> Limits {
    Limits {
        address_space: Some(settings.mem_limit_mib << 20),
        cpu_seconds: Some(timeout_s.ceil() as u64 + 5),
        file_size: Some(1 << 30),
        pin_cpu: Some(settings.cpu),
    }
}

/// Runs one ct job; the output, or a failure built from how the process ended.
fn run_job(
    run: &RunDir,
    name: &str,
    job: CtJob,
    timeout_s: f64,
    jail: &JailOptions,
) -> Result<(CtOutput, Outcome, PathBuf)> {
    let scratch = run.scratch(name)?;
    let spec = Spec {
        workdir: scratch.clone(),
        timeout: Duration::from_secs_f64(timeout_s.max(1.0)),
    };
    let job = CtJob {
        setup_dir: scratch.join("setup"),
        ..job
    };
    let outcome = sandbox::run(&spec, jail, &Request::Ct(job))?;
    let out = match (&outcome.exit, sandbox::parse_result::<CtOutput>(&outcome)) {
        (Exit::Timeout, _) => CtOutput {
            status: ProcessStatus::HardTimeout,
            error: Some(format!(
                "killed after {timeout_s:.0} s (its share of --ct-budget)"
            )),
            ..Default::default()
        },
        (_, Ok(o)) => o,
        (_, Err(_)) => CtOutput {
            status: ProcessStatus::Failed,
            error: Some(format!(
                "crashed: {}",
                outcome.failure_text().unwrap_or_else(|| "no result".into())
            )),
            ..Default::default()
        },
    };
    // The job's files, copied out of the jail's writable folder without following links.
    let copied = run.path(&format!("ct-work/{name}"));
    let _ = std::fs::remove_dir_all(&copied);
    ingest::copy_out(&scratch, &copied, CT_CAP)?;
    let _ = std::fs::remove_dir_all(&scratch);
    Ok((out, outcome, copied))
}

/// The keeper's limits and layers, and why a layer is missing (under valgrind 3.19 the
/// worker's Landlock and seccomp calls do not take effect: see ARCHITECTURE.md).
fn sandbox_text(o: &Outcome) -> String {
    let mut text = o.sandbox.clone().unwrap_or_default();
    let missing = &o.observed.containment.missing;
    if !missing.is_empty() {
        text.push_str(&format!("; missing: {}", missing.join("; ")));
    }
    text
}

fn job(s: &Selected, op: &Op, library: &Path, mode: CtMode, limits: Limits) -> CtJob {
    CtJob {
        limits,
        library: library.to_path_buf(),
        kind: s.cand.kind,
        api: s.cand.api,
        op: op.clone(),
        setup_dir: PathBuf::new(),
        mode,
        sk_public: s.inst.ct_sk_public.clone(),
    }
}

fn taint_one(
    run: &RunDir,
    settings: &Settings,
    s: &Selected,
    op: &Op,
    lib: &DebugLib,
    share_s: f64,
    tool: &str,
) -> Result<CtTaint> {
    let timeout = share_s.max(MIN_TAINT_S);
    let name = format!("ct-taint-{}-{}-{}", s.cand.id, s.inst.label, op.name());
    let mode = CtMode::Taint {
        runs: settings.ct_runs,
    };
    let j = job(s, op, &lib.library, mode, limits(settings, timeout));
    let (out, outcome, copied) = run_job(run, &name, j, timeout, &settings.jail)?;
    // The library that ran under memcheck, scanned for client requests of its own.
    let scan = std::fs::read(&lib.library)
        .map(|b| crate::measure::client_requests::scan(&b, &lib.sha256))
        .ok();
    let forged = scan.as_ref().is_some_and(|c| c.found > 0);
    let mut t = CtTaint {
        client_requests: scan,
        forged,
        status: out.status.clone(),
        error: out.error.clone(),
        tool: tool.to_string(),
        secrets: out.secrets.clone(),
        stages: out.stages.clone(),
        calls: out.calls,
        wall_s: outcome.wall_s,
        sandbox: sandbox_text(&outcome),
        ..CtTaint::default()
    };
    if t.status != ProcessStatus::Complete {
        let why = t.error.take().unwrap_or_default();
        t.error = Some(format!(
            "{why}; stderr: {}",
            crate::util::tail(outcome.stderr.trim(), 600)
        ));
        return Ok(t);
    }
    let xml = match std::fs::read_to_string(copied.join(MEMCHECK_XML)) {
        Ok(x) => x,
        Err(e) => {
            t.status = ProcessStatus::Failed;
            t.error = Some(format!("no memcheck log: {e}"));
            return Ok(t);
        }
    };
    let library = lib.library.to_string_lossy().to_string();
    let canon = std::fs::canonicalize(&lib.library)
        .map(|p| p.to_string_lossy().to_string())
        .unwrap_or_default();
    let is_library = |obj: &str| obj == JOB_LIBRARY || obj == library || obj == canon;
    let roots = lib.roots.clone();
    let path = |dir: &str, file: &str| site_path(&roots, dir, file);
    match memcheck::parse(&xml, &is_library, &path, STAGE_MARKER, STAGE_WHOLE_SK) {
        Ok(p) => {
            t.sites = p.sites;
            t.errors_outside = p.errors_outside;
            t.errors_before_stages = p.errors_before_stages;
            if p.stages_seen.len() < t.stages.len() {
                t.status = ProcessStatus::Failed;
                t.error = Some("the memcheck log lacks stage markers".into());
            }
        }
        Err(e) => {
            t.status = ProcessStatus::Failed;
            t.error = Some(e.to_string());
        }
    }
    Ok(t)
}

/// A site's file relative to the first root it lies under, else as the debug info says.
fn site_path(roots: &[PathBuf], dir: &str, file: &str) -> String {
    let full = if file.starts_with('/') || dir.is_empty() {
        PathBuf::from(file)
    } else {
        Path::new(dir).join(file)
    };
    let full = std::fs::canonicalize(&full).unwrap_or(full);
    roots
        .iter()
        .find_map(|r| full.strip_prefix(r).ok())
        .map(|p| p.to_string_lossy().to_string())
        .unwrap_or_else(|| full.to_string_lossy().to_string())
}

fn dudect_one(
    run: &RunDir,
    settings: &Settings,
    s: &Selected,
    e: &BuildEntry,
    op: &Op,
    share_s: f64,
) -> Result<CtDudect> {
    // Measuring stops at half the share; the rest covers start-up and the setup.
    let budget = (share_s / 2.0).max(1.0);
    let timeout = share_s.max(budget + 30.0);
    let seed = dudect_seed(&s.key(), op);
    let name = format!("ct-dudect-{}-{}-{}", s.cand.id, s.inst.label, op.name());
    let mode = CtMode::Dudect {
        measurements: settings.ct_measurements,
        budget_s: budget,
        seed,
    };
    let library = run.path(e.library.as_deref().unwrap_or_default());
    let j = job(s, op, &library, mode, limits(settings, timeout));
    let (out, outcome, copied) = run_job(run, &name, j, timeout, &settings.jail)?;
    let mut d = CtDudect {
        status: out.status.clone(),
        error: out.error.clone(),
        counter: out.counter.clone(),
        classes: out.classes.clone(),
        seed,
        budget_s: budget,
        wall_s: outcome.wall_s,
        sandbox: sandbox_text(&outcome),
        ..CtDudect::default()
    };
    if d.status != ProcessStatus::Complete {
        return Ok(d);
    }
    let parsed = std::fs::read(copied.join(CT_TIMINGS))
        .ok()
        .and_then(|b| dudect::parse_timings(&b));
    let Some((ticks, classes)) = parsed else {
        d.status = ProcessStatus::Failed;
        d.error = Some(format!("no valid {CT_TIMINGS}"));
        return Ok(d);
    };
    d.measurements = ticks.len() as u64;
    d.tests = dudect::tests(&ticks, &classes);
    d.max_abs_t = dudect::max_abs_t(&d.tests);
    d.verdict = dudect::verdict(&d.tests, op);
    Ok(d)
}

/// A fixed seed per instance and operation (recorded): reruns draw the same classes.
fn dudect_seed(key: &str, op: &Op) -> u64 {
    let h = crate::util::sha256_hex(format!("ct {key} {}", op.name()).as_bytes());
    u64::from_str_radix(&h[..16], 16).unwrap_or(1)
}
