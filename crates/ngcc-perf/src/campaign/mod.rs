//! `ngcc-perf campaign`: phases over a run directory. Each phase reads what earlier phases
//! wrote, writes its own files atomically and skips work already done, so a killed campaign
//! resumes where it stopped.

pub mod host_gate;
pub mod measurable;
pub mod measuring;
pub mod phases;
pub mod profiling;
pub mod progress;
pub mod rundir;
pub mod sandbox;
pub mod seed;
pub mod shard;

use crate::candidate::{Candidate, Instance};
use anyhow::Result;
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

/// Phases in the order `all` runs them.
pub const PHASES: &[&str] = &["build", "kat", "calibrate", "measure", "profile"];

#[derive(Args, Debug, Clone)]
pub struct CampaignArgs {
    /// `all` (every phase) or a comma list of: build, kat, calibrate, measure, profile.
    pub phases: String,
    /// Folder(s) searched recursively for candidate.toml files (repeat for several).
    #[arg(long, required = true)]
    pub candidates: Vec<PathBuf>,
    /// Run directory (created if missing; an existing one is resumed).
    #[arg(long)]
    pub run: PathBuf,
    /// Only instances whose label (or `cand/label`) matches one of these comma-separated
    /// globs, e.g. `ml-kem-*` or `ml-kem-768-clean,hqc-128-clean`.
    #[arg(long)]
    pub only: Option<String>,
    /// Parallel build/KAT jobs (default: the number of CPUs).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Hash KATs: skip the 2^33-bit and the million-iteration files (and say so).
    #[arg(long)]
    pub quick: bool,
    /// Exit with status 1 unless every selected instance passed its KAT (for CI).
    #[arg(long)]
    pub require_pass: bool,
    /// Seconds before a KAT child is killed and recorded as TIMEOUT.
    #[arg(long, default_value_t = 900)]
    pub kat_timeout: u64,
    /// Benchmark CPU: every calibration and trial process is pinned to it
    /// (default: the last CPU this process may run on, leaving CPU 0 to the system; under a
    /// scheduler that binds the task to a core, that core).
    #[arg(long)]
    pub cpu: Option<u32>,
    /// Seconds of timed work per trial (fixed per run).
    #[arg(long, default_value_t = 1.0)]
    pub trial_target: f64,
    /// Budget per operation in seconds (fixed per run): slow operations get fewer calls.
    #[arg(long, default_value_t = 900.0)]
    pub op_budget: f64,
    /// Measure even though the host is not fixed (turbo, governor, SMT, no cycle counter,
    /// VM…). The problems are recorded in campaign.json and every record.
    #[arg(long)]
    pub allow_unfixed_host: bool,
    /// Measure only shard K of N (1-based), e.g. `2/3`, for parallel runs on several cores;
    /// `auto`: K and N from the scheduler (a Slurm job array task or a Kubernetes Indexed Job
    /// pod; see `ngcc-perf slurm`). `{shard}` in --run is replaced by K.
    #[arg(long = "shard", value_name = "K/N|auto", value_parser = shard::parse)]
    pub shard_arg: Option<shard::ShardArg>,
    /// With `--shard auto`: the number of shards N (required under Kubernetes; under Slurm it
    /// makes K the array index itself, so one index can be resubmitted alone).
    #[arg(long, value_name = "N")]
    pub shard_count: Option<u32>,
    /// The shard actually measured, resolved from --shard at start (not a flag).
    #[arg(skip)]
    pub shard: Option<(u32, u32)>,
    /// Start a new run directory from the shared build run BUILD (build and KAT done once,
    /// before the shards): copies build.json, campaign.json, every KAT log and this shard's
    /// libraries, objects and KAT output. Only calibrate, measure and profile may run.
    #[arg(long, value_name = "BUILD")]
    pub build_from: Option<PathBuf>,
    /// `kat_issues.csv` (`ID;Label;Action;Cause`): rows with action `exclude` are not timed.
    #[arg(long)]
    pub kat_issues: Option<PathBuf>,
    /// Ceiling in seconds on every calibration and trial process (default: 6 h for a
    /// calibration, the plan's timeout for a trial); a process past it is killed and its
    /// record says so. Useful to bound hanging candidates in tests.
    #[arg(long)]
    pub measure_timeout: Option<f64>,
    /// Address-space limit (RLIMIT_AS) in MiB of every child that runs candidate code (KAT,
    /// calibrate, measure): runaway allocation then fails there instead of exhausting the host.
    #[arg(long, default_value_t = DEFAULT_MEM_LIMIT_MIB)]
    pub mem_limit: u64,
}

/// Default RLIMIT_AS of candidate children, MiB.
pub const DEFAULT_MEM_LIMIT_MIB: u64 = 16 << 10;

/// The default benchmark CPU: the last one this process may run on (under a scheduler that
/// binds tasks to cores, the task's own core).
pub fn default_cpu() -> u32 {
    shard::allowed_cpus().last().copied().unwrap_or(0)
}

impl CampaignArgs {
    /// The command-line defaults, for jobs that drive a campaign from code (demo, bench).
    pub fn defaults(phases: &str, candidates: Vec<PathBuf>, run: PathBuf) -> CampaignArgs {
        CampaignArgs {
            phases: phases.into(),
            candidates,
            run,
            only: None,
            jobs: None,
            quick: false,
            require_pass: false,
            kat_timeout: 900,
            cpu: None,
            trial_target: 1.0,
            op_budget: 900.0,
            allow_unfixed_host: false,
            shard_arg: None,
            shard_count: None,
            shard: None,
            build_from: None,
            kat_issues: None,
            measure_timeout: None,
            mem_limit: DEFAULT_MEM_LIMIT_MIB,
        }
    }
}

/// One instance selected for this invocation.
#[derive(Clone)]
pub struct Selected {
    pub cand: Candidate,
    pub inst: Instance,
}

impl Selected {
    pub fn key(&self) -> String {
        format!("{}/{}", self.cand.id, self.inst.label)
    }
}

pub fn run(args: CampaignArgs) -> Result<ExitCode> {
    let args = shard::resolve(args)?;
    let phases = parse_phases(&args.phases)?;
    seed::check_phases(&args, &phases)?;
    let mut cands = Vec::new();
    for dir in &args.candidates {
        cands.extend(crate::candidate::discover::load_all(dir)?);
    }
    crate::candidate::discover::check_unique(&cands)?;
    let selected = select(&cands, args.only.as_deref())?;
    if phases.contains(&"build") {
        check_sources(&selected)?;
    }
    let run = rundir::RunDir::open(&args.run)?;
    if let Some(from) = &args.build_from {
        seed::seed(&run, from, args.shard)?;
    }
    phases::start(&run)?;
    for phase in phases {
        match phase {
            "build" => phases::build(&run, &selected, &args)?,
            "kat" => phases::kat(&run, &selected, &args)?,
            "calibrate" | "measure" => measuring_phase(&run, phase, &selected, &args)?,
            "profile" => profiling::phase(&run, &selected, &args)?,
            _ => unreachable!("checked by parse_phases"),
        }
    }
    phases::finish(&run)?;
    if args.require_pass {
        let build = run.load_build()?;
        let failing: Vec<String> = selected
            .iter()
            .filter(|s| build.entry(&s.key()).is_none_or(|e| e.kat != "PASS"))
            .map(Selected::key)
            .collect();
        if !failing.is_empty() {
            eprintln!(
                "campaign: {} instance(s) did not pass their KAT: {}",
                failing.len(),
                failing.join(", ")
            );
            return Ok(ExitCode::from(1));
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// A source folder or file the manifest names but that is not there is bad input (exit 2,
/// before any work), unlike code that does not compile (BUILDFAIL, the campaign goes on).
fn check_sources(selected: &[Selected]) -> Result<()> {
    for s in selected {
        if let Err(e) = crate::build::sources::resolve(&s.cand, &s.inst) {
            return Err(crate::util::Failure::usage(format!(
                "{}: {e:#}",
                s.cand.root.join("candidate.toml").display()
            )));
        }
    }
    Ok(())
}

pub fn parse_phases(text: &str) -> Result<Vec<&'static str>> {
    if text == "all" {
        return Ok(PHASES.to_vec());
    }
    let mut out = Vec::new();
    for name in text.split(',').map(str::trim) {
        match PHASES.iter().find(|p| **p == name) {
            Some(p) => out.push(*p),
            None => {
                return Err(crate::util::Failure::usage(format!(
                    "unknown phase {name:?} (phases: all, {})",
                    PHASES.join(", ")
                )));
            }
        }
    }
    // Run in pipeline order whatever order they were given in.
    out.sort_by_key(|p| PHASES.iter().position(|q| q == p));
    out.dedup();
    Ok(out)
}

fn select(cands: &[Candidate], only: Option<&str>) -> Result<Vec<Selected>> {
    let patterns: Option<Vec<glob::Pattern>> = only
        .map(|o| {
            o.split(',')
                .map(|g| glob::Pattern::new(g.trim()))
                .collect::<Result<_, _>>()
        })
        .transpose()
        .map_err(|e| crate::util::Failure::usage(format!("--only: bad glob: {e}")))?;
    let mut out = Vec::new();
    for cand in cands {
        for inst in &cand.instances {
            let key = format!("{}/{}", cand.id, inst.label);
            let hit = |p: &glob::Pattern| p.matches(&inst.label) || p.matches(&key);
            if patterns.as_ref().is_none_or(|ps| ps.iter().any(hit)) {
                out.push(Selected {
                    cand: cand.clone(),
                    inst: inst.clone(),
                });
            }
        }
    }
    if out.is_empty() {
        return Err(crate::util::Failure::usage("no instance matches --only"));
    }
    Ok(out)
}

fn measuring_phase(
    run: &rundir::RunDir,
    phase: &str,
    selected: &[Selected],
    args: &CampaignArgs,
) -> Result<()> {
    let planning = crate::measure::plan::default_planning(args.trial_target, args.op_budget);
    let measurable::PhaseStart {
        host,
        todo,
        skipped,
    } = measurable::gate_and_split(run, phase, selected, args, &planning)?;
    if !skipped.is_empty() {
        let mut c = run.load_campaign()?;
        for (key, reason) in &skipped {
            eprintln!("{phase}: skipping {key}: {reason}");
            c.skipped
                .insert(key.clone(), serde_json::Value::String(reason.clone()));
        }
        run.save_campaign(&c)?;
    }
    match phase {
        "calibrate" => measuring::calibrate(run, &todo, args, &host),
        _ => measuring::measure(run, &todo, args, &host, &planning),
    }
}
