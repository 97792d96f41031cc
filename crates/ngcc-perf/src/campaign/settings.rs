//! What a campaign runs with: the clap arguments (`CampaignArgs`) are turned into `Settings`
//! once; everything below the command line reads `Settings`. `demo`, `bench` and tests build
//! `Settings` directly, and clap's defaults are the same constants.

use super::seed;
use super::shard::{self, ShardArg};
use crate::build::bounded::DEFAULT_AS_LIMIT_MIB;
use crate::build::bounded::DEFAULT_TIMEOUT_S as DEFAULT_BUILD_TIMEOUT_S;
use crate::build::{BuildLimits, BuildOptions, SourceRoots};
use crate::dataset::schema::Planning;
use crate::kat::run::KatOptions;
use crate::sandbox::DEFAULT_MEM_LIMIT_MIB;
use crate::sandbox::jail::JailOptions;
use crate::util::Failure;
use anyhow::Result;
use clap::Args;
use std::path::PathBuf;
use std::time::Duration;

/// Seconds before a KAT child is killed (`--kat-timeout`).
pub const DEFAULT_KAT_TIMEOUT_S: u64 = 900;
/// Seconds of timed work per trial (`--trial-target`).
pub const DEFAULT_TRIAL_TARGET_S: f64 = 1.0;
/// Budget per operation in seconds (`--op-budget`).
pub const DEFAULT_OP_BUDGET_S: f64 = 900.0;
/// ct phase: seconds per instance, shared by its operations' taint and dudect jobs
/// (`--ct-budget`).
pub const DEFAULT_CT_BUDGET_S: f64 = 300.0;
/// ct phase: dudect measurements per operation (`--ct-measurements`), unless the budget ends
/// first.
pub const DEFAULT_CT_MEASUREMENTS: u64 = 20_000;
/// ct phase: calls per taint stage under memcheck (`--ct-runs`).
pub const DEFAULT_CT_RUNS: u32 = 3;
/// count phase: counted calls per operation (`--count-calls`).
pub const DEFAULT_COUNT_CALLS: u64 = 10;
/// count phase: CPU seconds per instance, shared by its operations (`--count-budget`). A
/// bound, not a cost: honest operations use what they need. Sized on the corpus: Mito's
/// 512-level dec needs about 260 CPU-s for its warm-ups and 10 counted calls, and Origami's
/// sign and verify start with a cold call of seconds natively (about 100 under valgrind);
/// at 300 per instance (100 per operation) both were killed.
pub const DEFAULT_COUNT_BUDGET_S: f64 = 1200.0;

/// A campaign phase, in pipeline order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Phase {
    Build,
    Kat,
    /// The ICCS helpers as hash instances (reference §1.13): opt-in, not part of `all`.
    Baseline,
    Calibrate,
    Measure,
    Profile,
    /// Heap, stack and static size per operation, outside the timed runs (issue 36).
    Memory,
    /// Constant-time evidence (issue 17): opt-in, not part of `all`.
    Ct,
    /// Instruction counts under callgrind (issue 35): opt-in, not part of `all`.
    Count,
}

impl Phase {
    /// Every phase, in the order `all` runs them.
    pub const ALL: [Phase; 6] = [
        Phase::Build,
        Phase::Kat,
        Phase::Calibrate,
        Phase::Measure,
        Phase::Profile,
        Phase::Memory,
    ];
    /// Every phase that can be named, in pipeline order.
    pub const NAMED: [Phase; 9] = [
        Phase::Build,
        Phase::Kat,
        Phase::Baseline,
        Phase::Calibrate,
        Phase::Measure,
        Phase::Profile,
        Phase::Memory,
        Phase::Ct,
        Phase::Count,
    ];

    /// The name on the command line, in progress lines and in campaign.json host checks.
    pub fn name(self) -> &'static str {
        match self {
            Phase::Build => "build",
            Phase::Kat => "kat",
            Phase::Baseline => "baseline",
            Phase::Calibrate => "calibrate",
            Phase::Measure => "measure",
            Phase::Profile => "profile",
            Phase::Memory => "memory",
            Phase::Ct => "ct",
            Phase::Count => "count",
        }
    }

    /// `all`, or a comma list of phase names, in pipeline order whatever order they were given.
    pub fn parse_list(text: &str) -> Result<Vec<Phase>> {
        if text == "all" {
            return Ok(Phase::ALL.to_vec());
        }
        let mut out = Vec::new();
        for name in text.split(',').map(str::trim) {
            match Phase::NAMED.into_iter().find(|p| p.name() == name) {
                Some(p) => out.push(p),
                None => {
                    let names: Vec<&str> = Phase::NAMED.iter().map(|p| p.name()).collect();
                    return Err(Failure::usage(format!(
                        "unknown phase {name:?} (phases: all, {})",
                        names.join(", ")
                    )));
                }
            }
        }
        out.sort();
        out.dedup();
        Ok(out)
    }
}

#[derive(Args, Debug, Clone)]
#[command(
    after_help = "Compiled objects are shared by runs through an object cache keyed by compiler, \
flags and preprocessed text (~/.cache/ngcc-perf/objects; NGCC_OBJECT_CACHE=DIR elsewhere, \
NGCC_OBJECT_CACHE=off none)."
)]
pub struct CampaignArgs {
    /// `all` (build, kat, calibrate, measure, profile, memory: heap, stack and static size per operation on a relink with a heap recorder, outside the timed runs) or a comma list of those and
    /// `baseline` (the ICCS helpers sm3hash, pseudohash, pseudoXOF built, self-tested against
    /// the Rust model and timed as hash instances `iccs/<label>`, e.g. `iccs/pseudoXOF-256`; opt-in)
    /// and `ct` (constant-time evidence per KEM/signature/KEX operation: a valgrind memcheck
    /// secret-taint run on a `-g` build and a dudect fixed-vs-random timing test; opt-in)
    /// and `count` (instructions, data accesses and simulated cache misses per call under
    /// valgrind callgrind; opt-in).
    pub phases: String,
    /// Folder(s) searched recursively for candidate.toml files (repeat for several).
    #[arg(long, required = true)]
    pub candidates: Vec<PathBuf>,
    /// Run directory (created if missing; an existing one is resumed).
    #[arg(long)]
    pub run: PathBuf,
    /// Only instances whose label (or `cand/label`) matches one of these comma-separated
    /// globs, e.g. `ml-kem-*` or `ml-kem-768-clean,hqc-128-clean`. Phase `baseline` times
    /// only the ICCS helpers a glob names (`iccs/sm3hash-256`), else all of them.
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
    #[arg(long, default_value_t = DEFAULT_KAT_TIMEOUT_S)]
    pub kat_timeout: u64,
    /// Benchmark CPU: every calibration and trial process is pinned to it
    /// (default: the last CPU this process may run on, leaving CPU 0 to the system; under a
    /// scheduler that binds the task to a core, that core).
    #[arg(long)]
    pub cpu: Option<u32>,
    /// Seconds of timed work per trial (fixed per run).
    #[arg(long, default_value_t = DEFAULT_TRIAL_TARGET_S)]
    pub trial_target: f64,
    /// Budget per operation in seconds (fixed per run): slow operations get fewer calls.
    #[arg(long, default_value_t = DEFAULT_OP_BUDGET_S)]
    pub op_budget: f64,
    /// Measure even though the host is not fixed (turbo, governor, SMT, no cycle counter,
    /// VM…). The problems are recorded in campaign.json and every record.
    #[arg(long)]
    pub allow_unfixed_host: bool,
    /// Measure only shard K of N (1-based), e.g. `2/3`, for parallel runs on several cores;
    /// `auto`: K and N from the scheduler (a Slurm job array task or a Kubernetes Indexed Job
    /// pod; see `ngcc-perf slurm`). `{shard}` in --run is replaced by K.
    #[arg(long, value_name = "K/N|auto", value_parser = shard::parse)]
    pub shard: Option<ShardArg>,
    /// With `--shard auto`: the number of shards N (required under Kubernetes; under Slurm it
    /// makes K the array index itself, so one index can be resubmitted alone).
    #[arg(long, value_name = "N")]
    pub shard_count: Option<u32>,
    /// Start a new run directory from the shared build run BUILD (build and KAT done once,
    /// before the shards): copies build.json, campaign.json, every KAT log and this shard's
    /// libraries, objects and KAT output. Only calibrate, measure, profile and memory may run.
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
    /// Baseline phase: build the ICCS helpers from this official ICCS API folder (its
    /// `auxfunc.c`, `auxfunc.h`) instead of ngcc-perf's embedded copy (`csrc/iccs`).
    #[arg(long, value_name = "DIR")]
    pub iccs_helpers: Option<PathBuf>,
    /// Run candidate code even where the host offers no containment layer at all (no
    /// namespaces, Landlock or seccomp); campaign.json, every record and the pages say so.
    #[arg(long)]
    pub allow_uncontained: bool,
    /// Seconds before one compiler or linker call is killed (its instance is a BUILDFAIL).
    #[arg(long, default_value_t = DEFAULT_BUILD_TIMEOUT_S)]
    pub build_timeout: u64,
    /// MiB of address space each compiler process (driver, cc1, as, ld) may map; beyond it
    /// the instance is a BUILDFAIL ("ran out of memory").
    #[arg(long, default_value_t = DEFAULT_AS_LIMIT_MIB)]
    pub build_mem_limit: u64,
    /// More folders (besides each --candidates folder and the fetched PQClean tree) that
    /// manifest paths (`dir`, `sources`, `include`, `extra_sources`) may point into.
    #[arg(long)]
    pub allow_source_root: Vec<PathBuf>,
    /// ct phase: seconds per instance for all its operations' taint and dudect jobs (each
    /// job is killed at its share; valgrind makes a taint run 20-100x slower than native).
    #[arg(long, default_value_t = DEFAULT_CT_BUDGET_S)]
    pub ct_budget: f64,
    /// ct phase: dudect measurements per operation (fewer if the budget ends first).
    #[arg(long, default_value_t = DEFAULT_CT_MEASUREMENTS)]
    pub ct_measurements: u64,
    /// ct phase: calls per taint stage under memcheck.
    #[arg(long, default_value_t = DEFAULT_CT_RUNS)]
    pub ct_runs: u32,
    /// count phase: counted calls per operation under callgrind (after one warm-up call).
    #[arg(long, default_value_t = DEFAULT_COUNT_CALLS)]
    pub count_calls: u64,
    /// count phase: CPU seconds per instance for all its operations (each job's process is
    /// killed by the kernel at its share, at least 30; a wall-clock bound of 10x the share
    /// stops a job that waits without computing; callgrind with its cache simulation runs
    /// code 50-100x slower than native).
    #[arg(long, default_value_t = DEFAULT_COUNT_BUDGET_S)]
    pub count_budget: f64,
}

/// The number of CPUs this process may use.
fn cpus() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}

/// The default benchmark CPU: the last one this process may run on (under a scheduler that
/// binds tasks to cores, the task's own core).
pub fn default_cpu() -> u32 {
    shard::allowed_cpus().last().copied().unwrap_or(0)
}

/// A campaign's settings, resolved once (defaults filled in, phases parsed).
#[derive(Debug, Clone)]
pub struct Settings {
    pub phases: Vec<Phase>,
    pub candidates: Vec<PathBuf>,
    pub run: PathBuf,
    pub only: Option<String>,
    /// Parallel build/KAT jobs.
    pub jobs: usize,
    pub quick: bool,
    pub require_pass: bool,
    pub kat_timeout: Duration,
    /// The benchmark CPU every timing child is pinned to.
    pub cpu: u32,
    pub trial_target_s: f64,
    pub op_budget_s: f64,
    pub allow_unfixed_host: bool,
    /// The shard measured (K of N), resolved from `--shard` (also `auto`); `run` already
    /// has `{shard}` replaced by K.
    pub shard: Option<(u32, u32)>,
    /// The shared build run a shard's run directory is seeded from (`--build-from`).
    pub build_from: Option<PathBuf>,
    pub kat_issues: Option<PathBuf>,
    /// Ceiling in seconds on every calibration, trial and profile process.
    pub measure_timeout_s: Option<f64>,
    /// RLIMIT_AS of every child that runs candidate code, MiB.
    pub mem_limit_mib: u64,
    /// Baseline: the official ICCS API folder, or `None` for the embedded helpers.
    pub iccs_helpers: Option<PathBuf>,
    /// Run candidate code on a host without any containment layer.
    pub allow_uncontained: bool,
    /// Seconds before one compiler or linker call is killed.
    pub build_timeout_s: u64,
    pub build_mem_limit_mib: u64,
    /// Folders manifest paths may point into besides the candidate folders and PQClean.
    pub allow_source_roots: Vec<PathBuf>,
    /// ct phase: seconds per instance, dudect measurements per operation, taint calls.
    pub ct_budget_s: f64,
    pub ct_measurements: u64,
    pub ct_runs: u32,
    /// count phase: counted calls per operation, seconds per instance.
    pub count_calls: u64,
    pub count_budget_s: f64,
    /// How every jail of the campaign is built (`NGCC_PERF_JAIL_OFF`, read here once).
    pub jail: JailOptions,
}

impl Settings {
    /// The command-line defaults for `phases` over `candidates` in `run`.
    pub fn new(phases: &[Phase], candidates: Vec<PathBuf>, run: PathBuf) -> Settings {
        Settings {
            phases: phases.to_vec(),
            candidates,
            run,
            only: None,
            jobs: cpus().max(1),
            quick: false,
            require_pass: false,
            kat_timeout: Duration::from_secs(DEFAULT_KAT_TIMEOUT_S),
            cpu: default_cpu(),
            trial_target_s: DEFAULT_TRIAL_TARGET_S,
            op_budget_s: DEFAULT_OP_BUDGET_S,
            allow_unfixed_host: false,
            shard: None,
            build_from: None,
            kat_issues: None,
            measure_timeout_s: None,
            mem_limit_mib: DEFAULT_MEM_LIMIT_MIB,
            iccs_helpers: None,
            allow_uncontained: false,
            build_timeout_s: DEFAULT_BUILD_TIMEOUT_S,
            build_mem_limit_mib: DEFAULT_AS_LIMIT_MIB,
            allow_source_roots: Vec::new(),
            ct_budget_s: DEFAULT_CT_BUDGET_S,
            ct_measurements: DEFAULT_CT_MEASUREMENTS,
            ct_runs: DEFAULT_CT_RUNS,
            count_calls: DEFAULT_COUNT_CALLS,
            count_budget_s: DEFAULT_COUNT_BUDGET_S,
            jail: JailOptions::from_env(),
        }
    }

    /// The planning rule this campaign plans with (fixed per run).
    pub fn planning(&self) -> Planning {
        crate::measure::plan::default_planning(self.trial_target_s, self.op_budget_s)
    }

    /// What the build needs: manifest paths may point into the candidate folders and every
    /// `--allow-source-root` (as they resolve now); compiler and linker calls are bounded.
    pub fn build_options(&self) -> BuildOptions {
        let mut roots = self.candidates.clone();
        roots.extend(self.allow_source_roots.iter().cloned());
        BuildOptions {
            roots: SourceRoots::new(&roots),
            limits: BuildLimits::new(self.build_timeout_s, self.build_mem_limit_mib),
            jail: self.jail.clone(),
        }
    }

    /// How a KAT child runs (`quick` as given: the kat phase; the profile check forces it).
    pub fn kat_options(&self) -> KatOptions {
        KatOptions {
            timeout: self.kat_timeout,
            quick: self.quick,
            mem_limit_mib: self.mem_limit_mib,
            jail: self.jail.clone(),
        }
    }

    /// A child's wall-clock timeout: `timeout_s` under the `--measure-timeout` ceiling, at
    /// least 1 s.
    pub fn child_timeout_s(&self, timeout_s: f64) -> f64 {
        self.measure_timeout_s
            .map_or(timeout_s, |c| timeout_s.min(c))
            .max(1.0)
    }
}

impl TryFrom<CampaignArgs> for Settings {
    type Error = anyhow::Error;

    fn try_from(a: CampaignArgs) -> Result<Settings> {
        let phases = Phase::parse_list(&a.phases)?;
        let (shard, run) = shard::resolve(a.shard, a.shard_count, &a.run)?;
        seed::check_phases(a.build_from.as_deref(), &phases)?;
        let defaults = Settings::new(&phases, a.candidates, run);
        Ok(Settings {
            only: a.only,
            jobs: a.jobs.unwrap_or(defaults.jobs).max(1),
            quick: a.quick,
            require_pass: a.require_pass,
            kat_timeout: Duration::from_secs(a.kat_timeout),
            cpu: a.cpu.unwrap_or(defaults.cpu),
            trial_target_s: a.trial_target,
            op_budget_s: a.op_budget,
            allow_unfixed_host: a.allow_unfixed_host,
            shard,
            build_from: a.build_from,
            kat_issues: a.kat_issues,
            measure_timeout_s: a.measure_timeout,
            mem_limit_mib: a.mem_limit,
            iccs_helpers: a.iccs_helpers,
            allow_uncontained: a.allow_uncontained,
            build_timeout_s: a.build_timeout,
            build_mem_limit_mib: a.build_mem_limit,
            allow_source_roots: a.allow_source_root,
            ct_budget_s: a.ct_budget,
            ct_measurements: a.ct_measurements,
            ct_runs: a.ct_runs,
            count_calls: a.count_calls,
            count_budget_s: a.count_budget,
            ..defaults
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: CampaignArgs,
    }

    #[test]
    fn clap_defaults_are_the_settings_defaults() {
        let cli = Cli::parse_from(["x", "all", "--candidates", "c", "--run", "r"]);
        let from_cli = Settings::try_from(cli.args).unwrap();
        let direct = Settings::new(&Phase::ALL, vec!["c".into()], "r".into());
        assert_eq!(format!("{from_cli:?}"), format!("{direct:?}"));
    }

    #[test]
    fn phases_run_in_pipeline_order() {
        assert_eq!(
            Phase::parse_list("all").unwrap().last(),
            Some(&Phase::Memory)
        );
        assert_eq!(
            Phase::parse_list("profile,measure").unwrap(),
            [Phase::Measure, Phase::Profile]
        );
        assert_eq!(
            Phase::parse_list("kat, build,kat").unwrap(),
            [Phase::Build, Phase::Kat]
        );
        let e = Phase::parse_list("bild").unwrap_err().to_string();
        assert_eq!(
            e,
            "unknown phase \"bild\" (phases: all, build, kat, baseline, calibrate, measure, profile, memory, ct, count)"
        );
    }
}
