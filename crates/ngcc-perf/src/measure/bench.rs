//! `ngcc-perf bench overhead`: the harness's timing of ML-KEM-768 clean `enc` against a
//! minimal C loop linked to the same library, same RNG pattern, same counter, interleaved.
//! Prints both and their ratio (target ≤ 1.01). A benchmark, not a test.

use crate::campaign::measurable::{calibration_path, setup_dir};
use crate::campaign::measuring::{job, run_child};
use crate::campaign::rundir::RunDir;
use crate::campaign::{self, CampaignArgs, Selected};
use crate::child::protocol::Request;
use crate::measure::stats;
use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use std::path::PathBuf;
use std::process::{Command, ExitCode};

#[derive(Args, Debug)]
pub struct BenchArgs {
    #[command(subcommand)]
    pub cmd: BenchCmd,
}

#[derive(Subcommand, Debug)]
pub enum BenchCmd {
    /// Harness vs a minimal C loop on ML-KEM-768 clean enc (same library and counter).
    Overhead(OverheadArgs),
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
    }
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
    let cpu = args.cpu.unwrap_or_else(campaign::default_cpu);
    let campaign_args = CampaignArgs {
        only: Some(LABEL.into()),
        quick: true,
        require_pass: true,
        cpu: Some(cpu),
        allow_unfixed_host: true,
        ..CampaignArgs::defaults("build,kat,calibrate", vec![cands.clone()], run_path.clone())
    };
    campaign::run(campaign_args.clone())?;
    let run = RunDir::open(&run_path)?;
    let entry = run
        .load_build()?
        .entry(&format!("ml-kem/{LABEL}"))
        .context("ML-KEM-768 clean was not built")?;
    if entry.kat != "PASS" {
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
    if !calibration_path(&run, "ml-kem", LABEL, "enc").is_file()
        || !setup_dir(&run, "ml-kem", LABEL, "enc").is_dir()
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
        let mut j = job(&run, &sel, &entry, "enc", 0, "enc", cpu, &campaign_args);
        j.iterations = args.iterations;
        j.warmups = warmups;
        j.counter = Some(
            if cfg!(target_arch = "aarch64") {
                "cntvct"
            } else {
                "tsc"
            }
            .into(),
        );
        j.rng = Some("counter".into());
        let (out, _) = run_child(
            &run,
            &format!("bench-{round}"),
            &Request::Trial(j),
            600.0,
            &campaign_args,
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
            "cntvct"
        } else {
            "tsc"
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
    let out = Command::new(crate::build::compiler::program())
        .args(["-O2", "-o"])
        .arg(&exe)
        .arg(&src)
        .arg(&lib)
        .arg(format!("-Wl,-rpath,{}", libdir.display()))
        .output()?;
    if !out.status.success() {
        bail!(
            "building the C loop: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(exe)
}
