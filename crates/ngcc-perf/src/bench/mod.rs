//! `ngcc-perf bench`: benchmarks of the harness itself (`plan` in plan.rs).
//!
//! `bench overhead`: the harness's timing of ML-KEM-768 clean `enc` against a
//! minimal C loop linked to the same library, same RNG pattern, same counter, interleaved.
//! Prints both and their ratio (target ≤ 1.01). A benchmark, not a test.

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

pub mod plan;

#[derive(Args, Debug)]
pub struct BenchArgs {
    #[command(subcommand)]
    pub cmd: BenchCmd,
}

#[derive(Subcommand, Debug)]
pub enum BenchCmd {
    /// Harness vs a minimal C loop on ML-KEM-768 clean enc (same library and counter).
    Overhead(OverheadArgs),
    /// Start cost of one jailed child: empty jobs with every layer, with none, and a bare exec.
    Jail(JailArgs),
    /// Per record of a run: planned vs measured per-call time, fixed cost and timed share of
    /// every process, and their distribution (a Markdown table).
    Plan(plan::PlanArgs),
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
    /// Interleaved rounds (each: one harness trial process, one C loop process).
    #[arg(long, default_value_t = 7)]
    pub rounds: usize,
    /// Operations per trial.
    #[arg(long, default_value_t = 10000)]
    pub iterations: u64,
    /// CPU both sides are pinned to (default: the last one).
    #[arg(long)]
    pub cpu: Option<u32>,
}

pub fn run(args: BenchArgs) -> Result<ExitCode> {
    match args.cmd {
        BenchCmd::Overhead(a) => overhead(a),
        BenchCmd::Jail(a) => jail(a),
        BenchCmd::Plan(a) => plan::run(a),
    }
}

/// Wall seconds per child, interleaved so the variants share the machine's noise.
fn jail(args: JailArgs) -> Result<ExitCode> {
    use crate::dataset::schema::Layer;
    let dir = std::path::absolute(&args.dir)?;
    let exe = std::env::current_exe()?;
    let spec = crate::sandbox::Spec {
        workdir: dir.join("scratch"),
        timeout: std::time::Duration::from_secs(30),
    };
    let (mut full, mut none, mut bare, mut setup) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut layers = String::new();
    for _ in 0..args.count {
        crate::sandbox::jail::set_off(Some(Vec::new()));
        let t = std::time::Instant::now();
        let o = crate::sandbox::run_probe(&spec)?;
        full.push(t.elapsed().as_secs_f64());
        setup.push(o.observed.jail_setup_s);
        if let Some(e) = o.jail_error {
            bail!("the jail failed: {e}");
        }
        layers = o.observed.containment.text();
        crate::sandbox::jail::set_off(Some(Layer::ALL.to_vec()));
        let t = std::time::Instant::now();
        crate::sandbox::run_probe(&spec)?;
        none.push(t.elapsed().as_secs_f64());
        let t = std::time::Instant::now();
        let out = Command::new(&exe).arg("--version").output()?;
        bare.push(t.elapsed().as_secs_f64());
        if !out.status.success() {
            bail!("{} --version failed", exe.display());
        }
    }
    crate::sandbox::jail::set_off(None);
    let ms = |v: &[f64]| {
        format!(
            "median {:.2} ms, mean {:.2} ms",
            1e3 * stats::median(v).unwrap_or(0.0),
            1e3 * v.iter().sum::<f64>() / v.len().max(1) as f64
        )
    };
    println!("{} empty children per variant, interleaved", args.count);
    println!("jailed ({layers}): {}", ms(&full));
    println!(
        "  of which keeper start to the worker locked down (before any library): {}",
        ms(&setup)
    );
    println!("keeper + worker, every layer off: {}", ms(&none));
    println!("one bare exec of ngcc-perf (--version): {}", ms(&bare));
    println!(
        "added start cost of the jail per child: {:.2} ms (median jailed - median bare exec)",
        1e3 * (stats::median(&full).unwrap_or(0.0) - stats::median(&bare).unwrap_or(0.0))
    );
    Ok(ExitCode::SUCCESS)
}

const LABEL: &str = "ml-kem-768-clean";

fn overhead(args: OverheadArgs) -> Result<ExitCode> {
    let dir = std::path::absolute(&args.dir)?;
    let cands = dir.join("candidates");
    crate::candidate::import::run(crate::candidate::import::ImportArgs::pqclean(
        cands.clone(),
        vec!["ml-kem".into()],
    ))?;
    let run_path = dir.join("run");
    let mut settings = Settings {
        only: Some(LABEL.into()),
        quick: true,
        require_pass: true,
        allow_unfixed_host: true,
        ..Settings::new(
            &[Phase::Build, Phase::Kat, Phase::Calibrate],
            vec![cands.clone()],
            run_path.clone(),
        )
    };
    if let Some(cpu) = args.cpu {
        settings.cpu = cpu;
    }
    let cpu = settings.cpu;
    campaign::execute(&settings)?;
    let run = RunDir::open(&run_path)?;
    let entry = run
        .load_build()?
        .entry(&format!("ml-kem/{LABEL}"))
        .context("ML-KEM-768 clean was not built")?;
    if entry.kat != KatStatus::Pass {
        bail!("ML-KEM-768 clean did not pass its KAT ({})", entry.kat);
    }
    let cand = crate::candidate::discover::load_all(&cands)?
        .into_iter()
        .find(|c| c.id == "ml-kem")
        .context("no ml-kem manifest")?;
    let inst = cand
        .instances
        .iter()
        .find(|i| i.label == LABEL)
        .context("no ml-kem-768-clean instance")?
        .clone();
    let sel = Selected { cand, inst };
    if !run.calibration_path("ml-kem", LABEL, "enc").is_file()
        || !run.setup_dir("ml-kem", LABEL, "enc").is_dir()
    {
        bail!(
            "the enc setup is missing; delete {} and retry",
            run_path.display()
        );
    }
    let driver = build_driver(&run, entry.library.as_deref().unwrap_or_default())?;
    let warmups = 3;
    let (mut harness, mut minimal) = (Vec::new(), Vec::new());
    let mut harness_cv = Vec::new();
    for round in 0..args.rounds {
        let op = OpSpec::plain(Op::Enc);
        let target = Target {
            sel: &sel,
            entry: &entry,
            op: &op,
        };
        let mut j = job(&run, &settings, &target);
        j.iterations = args.iterations;
        j.warmups = warmups;
        j.counter = Some(if cfg!(target_arch = "aarch64") {
            CounterKind::Cntvct
        } else {
            CounterKind::Tsc
        });
        j.rng = Some(BenchRng::Counter);
        let (out, _) = run_child(
            &run,
            &settings,
            &format!("bench-{round}"),
            &Request::Trial(j),
            600.0,
        )?;
        let t = out
            .trials
            .first()
            .with_context(|| format!("harness trial failed: {:?}", out.error))?;
        harness.push(t.cycles as f64 / t.measurements as f64);
        harness_cv.push(t.seconds / t.measurements as f64);
        let o = Command::new(&driver)
            .args([
                args.iterations.to_string(),
                warmups.to_string(),
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
        minimal.push(ticks / args.iterations as f64);
        println!(
            "round {round}: harness {:.0} ticks/op, C loop {:.0} ticks/op",
            harness[round], minimal[round]
        );
    }
    let (h, c) = (
        stats::median(&harness).unwrap_or(0.0),
        stats::median(&minimal).unwrap_or(f64::NAN),
    );
    let (sh, sc) = (stats::spread(&harness), stats::spread(&minimal));
    println!(
        "counter: {} (forced on both sides); {} rounds × {} enc; RNG: counter pattern on both sides",
        if cfg!(target_arch = "aarch64") {
            CounterKind::Cntvct
        } else {
            CounterKind::Tsc
        },
        args.rounds,
        args.iterations
    );
    println!(
        "harness median {h:.0} ticks/op (CV {:.2} %), C loop median {c:.0} ticks/op (CV {:.2} %)",
        sh.cv * 100.0,
        sc.cv * 100.0
    );
    println!(
        "ratio harness / C loop = {:.4} of medians, {:.4} of minima (target <= 1.01)",
        h / c,
        sh.min / sc.min
    );
    Ok(ExitCode::SUCCESS)
}

fn build_driver(run: &RunDir, library: &str) -> Result<PathBuf> {
    let dir = run.scratch("bench-driver")?;
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
            .arg(&lib)
            .arg(format!("-Wl,-rpath,{}", libdir.display())),
    )?;
    if !out.success() {
        bail!(
            "building the C loop: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(exe)
}
