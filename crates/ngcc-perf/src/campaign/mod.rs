//! `ngcc-perf campaign`: phases over a run directory. Each phase reads what earlier phases
//! wrote, writes its own files atomically and skips work already done, so a killed campaign
//! resumes where it stopped.

pub(crate) mod context;
pub(crate) mod fresh;
pub(crate) mod host_gate;
pub(crate) mod jail_gate;
pub(crate) mod measurable;
pub(crate) mod phases;
pub(crate) mod runner;
pub(crate) mod seed;
pub(crate) mod select;
pub(crate) mod settings;
pub mod shard;

use crate::dataset::schema::KatStatus;
use crate::rundir;
use anyhow::Result;
use std::process::ExitCode;

pub use select::Selected;
pub use settings::{CampaignArgs, Phase, Settings};

/// `ngcc-perf campaign`: the command line turned into settings once, then the campaign.
pub fn run(args: CampaignArgs) -> Result<ExitCode> {
    execute(&Settings::try_from(args)?)
}

/// The phases of `s` over its candidates, in pipeline order.
pub fn execute(settings: &Settings) -> Result<ExitCode> {
    let mut cands = Vec::new();
    for dir in &settings.candidates {
        cands.extend(crate::candidate::discover::load_all(dir)?);
    }
    crate::candidate::discover::check_unique(&cands)?;
    let selected = select::select(&cands, settings.only.as_deref())?;
    let run = rundir::RunDir::open(&settings.run)?;
    if let Some(from) = &settings.build_from {
        seed::seed(&run, from, settings.shard)?;
    }
    phases::start(&run)?;
    // Candidate code runs in every phase but build: check the jail first.
    if let Some(first) = settings.phases.iter().find(|p| **p != Phase::Build) {
        jail_gate::check(
            &run,
            first.name(),
            settings.allow_uncontained,
            &settings.jail,
        )?;
    }
    for &phase in &settings.phases {
        match phase {
            Phase::Build => phases::build::run(&run, &selected, settings)?,
            Phase::Kat => phases::kat::run(&run, &selected, settings)?,
            Phase::Baseline => phases::baseline::run(&run, &selected, settings)?,
            Phase::Calibrate | Phase::Measure => measuring_phase(&run, phase, &selected, settings)?,
            Phase::Profile => phases::profile::run(&run, &selected, settings)?,
            Phase::Memory => phases::memory::run(&run, &selected, settings)?,
            Phase::Ct => phases::ct::run(&run, &selected, settings)?,
            Phase::Count => phases::count::run(&run, &selected, settings)?,
        }
    }
    phases::finish(&run)?;
    if settings.require_pass {
        let build = run.load_build()?;
        let failing: Vec<String> = selected
            .iter()
            .filter(|s| {
                build
                    .entry(&s.key())
                    .is_none_or(|e| e.kat != KatStatus::Pass)
            })
            .map(Selected::key)
            .collect();
        if !failing.is_empty() {
            crate::util::say!(
                "campaign: {} instance(s) did not pass their KAT: {}",
                failing.len(),
                failing.join(", ")
            );
            return Ok(crate::util::Exit::CheckFailed.into());
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn measuring_phase(
    run: &rundir::RunDir,
    phase: Phase,
    selected: &[Selected],
    settings: &Settings,
) -> Result<()> {
    let planning = settings.planning();
    let measurable::PhaseStart {
        host,
        todo,
        skipped,
    } = measurable::gate_and_split(run, phase, selected, settings, &planning)?;
    if !skipped.is_empty() {
        let mut c = run.load_campaign()?;
        for (key, reason) in &skipped {
            crate::util::say!("{}: skipping {key}: {reason}", phase.name());
            c.skipped
                .insert(key.clone(), serde_json::Value::String(reason.clone()));
        }
        run.save_campaign(&c)?;
    }
    let ctx = context::MeasureCtx {
        run,
        settings,
        host,
        planning,
        runner: &runner::JailRunner::new(&settings.jail),
    };
    match phase {
        Phase::Calibrate => phases::calibrate::run(&ctx, &todo),
        _ => phases::measure::run(&ctx, &todo),
    }
}
