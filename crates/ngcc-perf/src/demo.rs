//! `ngcc-perf demo`: the main job on the bundled default. Fetches PQClean through cargo,
//! imports ML-KEM-512/768/1024 (clean and avx2) plus our ICCS sample candidates, builds,
//! checks KATs, calibrates and measures with a short budget, publishes, and renders the
//! pages. Resumable: a second run reuses what the first one finished.

use crate::campaign::{self, Phase, Settings};
use crate::dataset::schema::CounterKind;
use anyhow::{Context, Result};
use clap::Args;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct DemoArgs {
    /// Output folder: candidates/, run/, dataset/, catalog/, pages/, site/.
    #[arg(long, default_value = "demo-out")]
    pub out: PathBuf,
    /// Seconds of timed work per trial (the demo keeps it short).
    #[arg(long, default_value_t = 0.1)]
    pub trial_target: f64,
    /// Budget per operation in seconds (the demo's quarter second puts the trials of a fast
    /// operation in one process; a campaign's default is 900).
    #[arg(long, default_value_t = 0.25)]
    pub op_budget: f64,
    /// System id for the published dataset.
    #[arg(long, default_value = "local_1")]
    pub system: String,
}

pub fn run(args: DemoArgs) -> Result<ExitCode> {
    let t0 = std::time::Instant::now();
    let out = std::path::absolute(&args.out)?;
    crate::util::out!("demo: ICCS helper self-test");
    let st = crate::iccs::selftest()?;
    if st != ExitCode::SUCCESS {
        anyhow::bail!("the ICCS helper self-test failed; not measuring with broken helpers");
    }
    crate::util::out!(
        "demo: PQClean tree: {}",
        crate::samples::pqclean_dir()?.display()
    );
    let cands = out.join("candidates");
    crate::candidate::import::run(crate::candidate::import::ImportArgs::pqclean(
        cands.clone(),
        vec!["ml-kem".into()],
    ))?;
    let mut dirs = vec![cands];
    match crate::samples::iccs_samples() {
        Some(d) => dirs.push(d),
        None => {
            crate::util::out!("demo: no samples/iccs folder here; measuring PQClean ML-KEM only")
        }
    }
    let run_dir = out.join("run");
    // Instruction counts too where valgrind is installed (they take about a minute).
    let mut phases = Phase::ALL.to_vec();
    let counting = crate::child::count::available();
    if counting {
        phases.push(Phase::Count);
    }
    let settings = Settings {
        quick: true,
        trial_target_s: args.trial_target,
        op_budget_s: args.op_budget,
        allow_unfixed_host: true,
        ..Settings::new(&phases, dirs, run_dir.clone())
    };
    crate::util::out!(
        "demo: campaign (build, KAT, calibrate, measure, profile, memory{}) in {}; hash KATs in --quick mode; the host is not \
         checked for fixed clocks (--allow-unfixed-host), and the data says so",
        if counting {
            ", count"
        } else {
            "; no valgrind: no instruction counts"
        },
        run_dir.display()
    );
    campaign::execute(&settings)?;
    let dataset = out.join("dataset");
    crate::dataset::publish::run(crate::dataset::publish::PublishArgs {
        run: run_dir.clone(),
        system: args.system.clone(),
        out: dataset.clone(),
    })?;
    let catalog = out.join("catalog");
    crate::dataset::catalog_init::write_catalog(&dataset, &catalog, Some(&args.system))?;
    let pages = out.join("pages");
    crate::report::run(crate::report::ReportArgs {
        dataset: dataset.clone(),
        catalog: catalog.clone(),
        out: pages.clone(),
        check: false,
        system: Some(args.system.clone()),
        across: None,
    })
    .context("rendering the pages")?;
    let index = crate::report::site::write_site(
        std::slice::from_ref(&dataset),
        &catalog,
        &out.join("site"),
    )
    .context("writing the HTML site")?;
    print_results(&dataset)?;
    crate::util::out!("demo: dataset {}", dataset.display());
    crate::util::out!("demo: pages   {}", pages.display());
    crate::util::out!("demo: site    {}", index.display());
    crate::util::out!("demo: done in {:.0} s", t0.elapsed().as_secs_f64());
    Ok(ExitCode::SUCCESS)
}

/// instance, op, cycles (or time), ops/s, KAT — one line per record.
fn print_results(dataset: &Path) -> Result<()> {
    use crate::report::format;
    let ds = crate::dataset::load::load(dataset)?;
    let mut rows: Vec<_> = ds.records.iter().map(|r| &r.record).collect();
    use crate::report::model::{natural_cmp, op_rank};
    rows.sort_by(|a, b| {
        a.candidate
            .cmp(&b.candidate)
            .then_with(|| natural_cmp(&a.label, &b.label))
            .then_with(|| op_rank(&op_key(a)).cmp(&op_rank(&op_key(b))))
    });
    let counter = ds.campaign.counter.clone().unwrap_or(CounterKind::None);
    let unit = counter.unit();
    crate::util::out!(
        "\n{:<26} {:<10} {:>12} {:>10} {:>10} {:>7}  KAT",
        "instance",
        "operation",
        unit,
        "time",
        "ops/s",
        "CV"
    );
    for r in rows {
        let (cyc, time, ops, cv) = match &r.stats {
            Some(s) => (
                format::fmt_int(s.mean_cycles),
                format::fmt_time(Some(s.mean_seconds)),
                format::g3(s.operations_per_second),
                r.ngcc
                    .as_ref()
                    .map_or("–".into(), |x| format!("{:.1}%", x.spread.cv * 100.0)),
            ),
            None => ("failed".into(), String::new(), String::new(), String::new()),
        };
        crate::util::out!(
            "{:<26} {:<10} {:>12} {:>10} {:>10} {:>7}  {}",
            r.label,
            op_key(r),
            cyc,
            time,
            ops,
            cv,
            r.kat
        );
    }
    crate::util::out!(
        "({unit}: counter {counter}, mean per call; CV: coefficient of variation of the per-trial means, standard deviation / mean; see the pages for the host state)\n"
    );
    Ok(())
}

fn op_key(r: &crate::dataset::schema::Record) -> String {
    r.operation.key(r.input_bytes)
}
