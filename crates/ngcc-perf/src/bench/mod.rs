//! `ngcc-perf bench`: benchmarks of the harness itself (`plan` in plan.rs, `count`, the
//! cost of instruction counting per operation, in count.rs).
//!
//! `bench overhead`: the harness's timing against a minimal C loop linked to the same
//! library (csrc/bench/overhead.c: same counter, warm-ups, RNG or message pattern), for
//! ML-KEM-768 clean enc and a 32-byte ICCS hash, in interleaved rounds; prints the 95 %
//! interval of the per-round ratio. `bench jail`: the start cost of a jailed child. Benchmarks,
//! not tests.

use crate::campaign::context::{Target, job, run_child};
use crate::campaign::measurable::OpSpec;
use crate::campaign::{self, Phase, Selected, Settings};
use crate::child::protocol::{BenchRng, Request};
use crate::dataset::schema::{CounterKind, KatStatus, Op};
use crate::measure::stats;
use crate::rundir::RunDir;
use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use std::path::PathBuf;
use std::process::{Command, ExitCode};

pub mod count;
pub mod plan;

#[derive(Args, Debug)]
pub struct BenchArgs {
    #[command(subcommand)]
    pub cmd: BenchCmd,
}

#[derive(Subcommand, Debug)]
pub enum BenchCmd {
    /// Harness vs a minimal C loop (same library, counter, warm-ups, message/RNG pattern),
    /// interleaved rounds, 95 % interval of the ratio: ML-KEM-768 clean enc and a 32-byte
    /// ICCS hash (the SM3 sample).
    Overhead(OverheadArgs),
    /// Start cost of one jailed child: empty jobs with every layer, with none, and a bare exec.
    Jail(JailArgs),
    /// Per record of a run: planned vs measured per-call time, fixed cost and timed share of
    /// every process, and their distribution (a Markdown table).
    Plan(plan::PlanArgs),
    /// Per count record of a run: the seconds of its calls under callgrind against the same
    /// calls at the timed record's seconds per call (the slowdown), and the job's CPU and
    /// wall seconds (a Markdown table).
    Count(count::CountArgs),
}

#[derive(Args, Debug)]
pub struct JailArgs {
    /// Children per variant.
    #[arg(long, default_value_t = 200)]
    pub count: usize,
    /// Work folder (the children's scratch folders).
    #[arg(long, default_value = "target/bench-jail")]
    pub dir: PathBuf,
}

#[derive(Args, Debug)]
pub struct OverheadArgs {
    /// Work folder (candidates, run directory, the C driver).
    #[arg(long, default_value = "target/bench-overhead")]
    pub dir: PathBuf,
    /// Interleaved rounds per operation (each: one harness trial process, one C loop
    /// process, alternating which goes first); the interval is over the rounds' ratios.
    /// Each process draws its own stack placement, which moves an enc by about 1 %: 90
    /// rounds bring the enc interval to about ±0.005 (30 gave ±0.01).
    #[arg(long, default_value_t = 90)]
    pub rounds: usize,
    /// Calls per round (default: 10 000 enc, 500 000 hashes).
    #[arg(long)]
    pub iterations: Option<u64>,
    /// Which operation(s) to compare.
    #[arg(long, value_enum, default_value = "both")]
    pub op: OverheadOp,
    /// CPU both sides are pinned to (default: the last one).
    #[arg(long)]
    pub cpu: Option<u32>,
}

pub fn run(args: BenchArgs) -> Result<ExitCode> {
    match args.cmd {
        BenchCmd::Overhead(a) => overhead(a),
        BenchCmd::Jail(a) => jail(a),
        BenchCmd::Plan(a) => plan::run(a),
        BenchCmd::Count(a) => count::run(a),
    }
}

/// Wall seconds per child, interleaved so the variants share the machine's noise.
fn jail(args: JailArgs) -> Result<ExitCode> {
    use crate::dataset::schema::Layer;
    use crate::sandbox::jail::JailOptions;
    let dir = std::path::absolute(&args.dir)?;
    let exe = std::env::current_exe()?;
    let spec = crate::sandbox::Spec {
        workdir: dir.join("scratch"),
        timeout: std::time::Duration::from_secs(30),
    };
    let (mut full, mut none, mut bare, mut setup) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut no_groups, mut no_bounds) = (Vec::new(), Vec::new());
    let (mut tool, mut tool_bare) = (Vec::new(), Vec::new());
    let mut layers = String::new();
    let groups = [Layer::MemoryCgroup, Layer::PidsCgroup];
    let with_off = |off: Vec<Layer>| JailOptions { off };
    let timed = |off: Vec<Layer>, into: &mut Vec<f64>| -> Result<()> {
        let t = std::time::Instant::now();
        crate::sandbox::run_probe(&spec, &with_off(off))?;
        into.push(t.elapsed().as_secs_f64());
        Ok(())
    };
    for _ in 0..args.count {
        let t = std::time::Instant::now();
        let o = crate::sandbox::run_probe(&spec, &JailOptions::full())?;
        full.push(t.elapsed().as_secs_f64());
        setup.push(o.observed.jail_setup_s);
        if let Some(e) = o.jail_error {
            bail!("the jail failed: {e}");
        }
        layers = o.observed.containment.text();
        // The whole-job bounds: every layer but the control groups, and but those and the
        // tmpfs scratch (the differences, paired per round, are their start costs).
        timed(groups.to_vec(), &mut no_groups)?;
        timed(
            [Layer::ScratchTmpfs].into_iter().chain(groups).collect(),
            &mut no_bounds,
        )?;
        // A compiler-sized tool run (`/bin/true` in the jail) against the same exec bare.
        let t = std::time::Instant::now();
        let o = crate::sandbox::tool::run_tool(&crate::sandbox::tool::ToolJob {
            label: "bench".into(),
            program: "/bin/true".into(),
            bounds: crate::sandbox::tool::ToolBounds {
                wall_s: 30.0,
                ..Default::default()
            },
            scratch_in: Some(dir.join("tools")),
            jail: JailOptions::full(),
            ..Default::default()
        })?;
        tool.push(t.elapsed().as_secs_f64());
        if !o.success() {
            bail!("/bin/true in the jail: {:?}", o.exit);
        }
        let t = std::time::Instant::now();
        Command::new("/bin/true").status()?;
        tool_bare.push(t.elapsed().as_secs_f64());
        let t = std::time::Instant::now();
        crate::sandbox::run_probe(&spec, &with_off(Layer::ALL.to_vec()))?;
        none.push(t.elapsed().as_secs_f64());
        let t = std::time::Instant::now();
        let out = Command::new(&exe).arg("--version").output()?;
        bare.push(t.elapsed().as_secs_f64());
        if !out.status.success() {
            bail!("{} --version failed", exe.display());
        }
    }
    let ms = |v: &[f64]| {
        format!(
            "median {:.2} ms, mean {:.2} ms",
            1e3 * stats::median(v).unwrap_or(0.0),
            1e3 * v.iter().sum::<f64>() / v.len().max(1) as f64
        )
    };
    crate::util::out!("{} empty children per variant, interleaved", args.count);
    crate::util::out!("jailed ({layers}): {}", ms(&full));
    crate::util::out!(
        "  of which keeper start to the worker locked down (before any library): {}",
        ms(&setup)
    );
    crate::util::out!("keeper + worker, every layer off: {}", ms(&none));
    let added = |with: &[f64], without: &[f64]| {
        let d: Vec<f64> = with.iter().zip(without).map(|(a, b)| a - b).collect();
        let s = stats::spread(&d);
        format!(
            "{:.2} ms (95 % interval {:.2} to {:.2} ms, mean of {} paired differences)",
            1e3 * stats::py_sum(d.iter().copied()) / d.len().max(1) as f64,
            1e3 * s.ci95_low,
            1e3 * s.ci95_high,
            d.len()
        )
    };
    crate::util::out!(
        "added start cost per job of the tmpfs scratch: {}",
        added(&no_groups, &no_bounds)
    );
    crate::util::out!(
        "added start cost per job of the memory and pids control groups: {}",
        added(&full, &no_groups)
    );
    crate::util::out!(
        "a jailed tool run of /bin/true (a compiler call's added cost): {}; bare: {}; added: {}",
        ms(&tool),
        ms(&tool_bare),
        added(&tool, &tool_bare)
    );
    crate::util::out!("one bare exec of ngcc-perf (--version): {}", ms(&bare));
    crate::util::out!(
        "added start cost of the jail per child: {:.2} ms (median jailed - median bare exec)",
        1e3 * (stats::median(&full).unwrap_or(0.0) - stats::median(&bare).unwrap_or(0.0))
    );
    Ok(ExitCode::SUCCESS)
}

/// What `bench overhead` compares: ML-KEM-768 clean enc, and the shortest operation we time,
/// an ICCS hash (the SM3 sample, `hash-s1/SM3-256`) over 32 bytes.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq)]
pub enum OverheadOp {
    Enc,
    Hash32,
    Both,
}

struct Side<'a> {
    name: &'static str,
    sel: Selected,
    entry: crate::dataset::schema::BuildEntry,
    op: OpSpec,
    /// Arguments of the C loop before ITERS WARMUPS CPU.
    driver_args: Vec<String>,
    iterations: u64,
    driver: PathBuf,
    run: &'a RunDir,
}

const KEM: (&str, &str) = ("ml-kem", "ml-kem-768-clean");
const HASH: (&str, &str) = ("hash-s1", "SM3-256");
const HASH_BYTES: u64 = 32;
/// Warm-up calls on both sides (the plan's for µs operations).
const WARMUPS: u64 = 3;

/// One round's ratio harness/C loop from the rounds' ticks per call: mean, the 95 % Student t
/// interval of the mean over rounds, and the ratio of medians (a robust cross-check).
#[derive(Debug, Clone, PartialEq)]
pub struct RatioSummary {
    pub rounds: usize,
    pub mean: f64,
    pub ci95_low: f64,
    pub ci95_high: f64,
    pub of_medians: f64,
}

pub fn ratio_summary(harness: &[f64], minimal: &[f64]) -> RatioSummary {
    let ratios: Vec<f64> = harness.iter().zip(minimal).map(|(h, c)| h / c).collect();
    let s = stats::spread(&ratios);
    RatioSummary {
        rounds: ratios.len(),
        mean: stats::py_sum(ratios.iter().copied()) / ratios.len().max(1) as f64,
        ci95_low: s.ci95_low,
        ci95_high: s.ci95_high,
        of_medians: stats::median(harness).unwrap_or(f64::NAN)
            / stats::median(minimal).unwrap_or(f64::NAN),
    }
}

fn overhead(args: OverheadArgs) -> Result<ExitCode> {
    let dir = std::path::absolute(&args.dir)?;
    let cands = dir.join("candidates");
    crate::candidate::import::run(crate::candidate::import::ImportArgs::pqclean(
        cands.clone(),
        vec!["ml-kem".into()],
    ))?;
    let iccs = crate::samples::iccs_samples()
        .context("bench overhead needs the samples/iccs folder of a checkout (the SM3 hash)")?;
    let run_path = dir.join("run");
    let mut settings = Settings {
        only: Some(format!("{}/{},{}/{}", KEM.0, KEM.1, HASH.0, HASH.1)),
        quick: true,
        require_pass: true,
        allow_unfixed_host: true,
        ..Settings::new(
            &[Phase::Build, Phase::Kat, Phase::Calibrate],
            vec![cands.clone(), iccs.clone()],
            run_path.clone(),
        )
    };
    if let Some(cpu) = args.cpu {
        settings.cpu = cpu;
    }
    let cpu = settings.cpu;
    let limits = settings.build_options().limits;
    campaign::execute(&settings)?;
    let run = RunDir::open(&run_path)?;
    let mut sides = Vec::new();
    if args.op != OverheadOp::Hash32 {
        let (sel, entry) = selected(&run, std::slice::from_ref(&cands), KEM)?;
        let driver = build_driver(
            &run,
            "enc",
            entry.library.as_deref().unwrap_or_default(),
            limits,
        )?;
        sides.push(Side {
            name: "ML-KEM-768 clean enc",
            sel,
            entry,
            op: OpSpec::plain(Op::Enc),
            driver_args: vec!["enc".into()],
            iterations: args.iterations.unwrap_or(10_000),
            driver,
            run: &run,
        });
    }
    if args.op != OverheadOp::Enc {
        let (sel, entry) = selected(&run, std::slice::from_ref(&iccs), HASH)?;
        let driver = build_driver(
            &run,
            "hash",
            entry.library.as_deref().unwrap_or_default(),
            limits,
        )?;
        let digest_bits = sel.inst.digest_bits.unwrap_or(256);
        sides.push(Side {
            name: "SM3-256 sample hash, 32 bytes",
            sel,
            entry,
            op: OpSpec {
                op: Op::Hash,
                input_bytes: HASH_BYTES,
            },
            driver_args: vec![
                "hash".into(),
                HASH_BYTES.to_string(),
                digest_bits.to_string(),
            ],
            iterations: args.iterations.unwrap_or(500_000),
            driver,
            run: &run,
        });
    }
    let counter = if cfg!(target_arch = "aarch64") {
        CounterKind::Cntvct
    } else {
        CounterKind::Tsc
    };
    let mut table = String::from(
        "| operation | rounds | calls/round | harness median ticks/call | C loop median ticks/call | ratio mean | 95 % interval | ratio of medians |\n|---|---|---|---|---|---|---|---|\n",
    );
    for side in &sides {
        let (mut harness, mut minimal) = (Vec::new(), Vec::new());
        for round in 0..args.rounds {
            // ABAB… alternating which side goes first, so a drift hits both alike.
            let (h, c) = if round % 2 == 0 {
                let h = harness_round(side, &settings, counter.clone(), round)?;
                (h, c_round(side, cpu)?)
            } else {
                let c = c_round(side, cpu)?;
                (harness_round(side, &settings, counter.clone(), round)?, c)
            };
            harness.push(h);
            minimal.push(c);
            crate::util::out!(
                "{} round {round}: harness {h:.1} ticks/call, C loop {c:.1} ticks/call, ratio {:.4}",
                side.name,
                h / c
            );
        }
        let r = ratio_summary(&harness, &minimal);
        table.push_str(&format!(
            "| {} | {} | {} | {:.1} | {:.1} | {:.4} | {:.4}-{:.4} | {:.4} |\n",
            side.name,
            r.rounds,
            side.iterations,
            stats::median(&harness).unwrap_or(0.0),
            stats::median(&minimal).unwrap_or(0.0),
            r.mean,
            r.ci95_low,
            r.ci95_high,
            r.of_medians
        ));
    }
    crate::util::out!(
        "\ncounter: {counter} (forced on both sides); both sides pinned to CPU {cpu}, {WARMUPS} warm-ups, \
         the same library; rounds interleaved (alternating order); interval: Student t over the \
         per-round ratios (targets: within 0.99-1.01 for enc, 0.98-1.02 for the 32-byte hash)\n"
    );
    crate::util::out_text!("{table}");
    Ok(ExitCode::SUCCESS)
}

/// The selected instance `(cand, label)` and its build entry (built and KAT-passed).
fn selected(
    run: &RunDir,
    dirs: &[PathBuf],
    (cand_id, label): (&str, &str),
) -> Result<(Selected, crate::dataset::schema::BuildEntry)> {
    let entry = run
        .load_build()?
        .entry(&format!("{cand_id}/{label}"))
        .with_context(|| format!("{cand_id}/{label} was not built"))?;
    if entry.kat != KatStatus::Pass {
        bail!("{cand_id}/{label} did not pass its KAT ({})", entry.kat);
    }
    let mut all = Vec::new();
    for d in dirs {
        all.extend(crate::candidate::discover::load_all(d)?);
    }
    let cand = all
        .into_iter()
        .find(|c| c.id == cand_id)
        .with_context(|| format!("no {cand_id} manifest"))?;
    let inst = cand
        .instances
        .iter()
        .find(|i| i.label == label)
        .with_context(|| format!("no {label} instance"))?
        .clone();
    Ok((Selected { cand, inst }, entry))
}

/// One harness trial process (jailed, as in a campaign): ticks per call.
fn harness_round(
    side: &Side,
    settings: &Settings,
    counter: CounterKind,
    round: usize,
) -> Result<f64> {
    let target = Target {
        sel: &side.sel,
        entry: &side.entry,
        op: &side.op,
    };
    if !side
        .run
        .setup_dir(target.cand(), target.label(), &target.key())
        .is_dir()
    {
        bail!(
            "the {} setup is missing; delete {} and retry",
            target.key(),
            side.run.root.display()
        );
    }
    let mut j = job(side.run, settings, &target);
    j.iterations = side.iterations;
    j.warmups = WARMUPS;
    j.counter = Some(counter);
    j.rng = Some(BenchRng::Counter);
    let (out, _) = run_child(
        side.run,
        settings,
        &format!("bench-{}-{round}", target.key()),
        &Request::Trial(j),
        600.0,
    )?;
    let t = out
        .trials
        .first()
        .with_context(|| format!("harness trial failed: {:?}", out.error))?;
    Ok(t.cycles as f64 / t.measurements as f64)
}

/// One C loop process: ticks per call.
fn c_round(side: &Side, cpu: u32) -> Result<f64> {
    let o = Command::new(&side.driver)
        .args(&side.driver_args)
        .args([
            side.iterations.to_string(),
            WARMUPS.to_string(),
            cpu.to_string(),
        ])
        .output()?;
    if !o.status.success() {
        bail!("the C loop failed: {}", String::from_utf8_lossy(&o.stderr));
    }
    let text = String::from_utf8_lossy(&o.stdout);
    let ticks: f64 = text
        .split_whitespace()
        .nth(1)
        .and_then(|v| v.parse().ok())
        .context("C loop output")?;
    Ok(ticks / side.iterations as f64)
}

fn build_driver(
    run: &RunDir,
    what: &str,
    library: &str,
    limits: crate::build::BuildLimits,
) -> Result<PathBuf> {
    let dir = run.scratch(&format!("bench-driver-{what}"))?;
    let src = dir.join("overhead.c");
    crate::util::atomic_write(&src, crate::csrc::BENCH_OVERHEAD_C.as_bytes())?;
    let lib = run.path(library);
    let exe = dir.join("overhead");
    let libdir = lib.parent().context("library path")?;
    let out = crate::build::bounded::output(
        Command::new(crate::build::compiler::program())
            .args(["-O2", "-o"])
            .arg(&exe)
            .arg(&src)
            // Every reference to the library is weak (one driver for KEMs and hashes): keep
            // it needed anyway.
            .arg("-Wl,--no-as-needed")
            .arg(&lib)
            .arg(format!("-Wl,-rpath,{}", libdir.display())),
        limits,
    )?;
    if !out.success() {
        bail!(
            "building the C loop: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(exe)
}
