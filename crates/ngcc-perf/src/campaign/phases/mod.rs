//! One driver per phase over the selected instances: `build`, `kat`, `baseline`,
//! `calibrate`, `measure`, `profile`, `memory`, `ct`, `count`. Each reads what earlier phases wrote in the run directory, writes
//! its own files atomically and skips work already done.

pub mod baseline;
pub mod build;
pub mod calibrate;
pub mod count;
pub mod count_budget;
pub mod ct;
pub mod kat;
pub mod measure;
pub mod memory;
mod outputs;
pub mod profile;
#[cfg(test)]
mod toy_kit;

use super::Settings;
use crate::build::flags;
use crate::dataset::schema::ArchConfig;
use crate::rundir::RunDir;
use crate::util::time::utc_now_iso;
use anyhow::Result;

/// The thread pool of the build and KAT phases (`--jobs`, default: the number of CPUs).
pub(crate) fn pool(settings: &Settings) -> Result<rayon::ThreadPool> {
    Ok(rayon::ThreadPoolBuilder::new()
        .num_threads(settings.jobs)
        .build()?)
}

pub fn start(run: &RunDir) -> Result<()> {
    let mut c = run.load_campaign()?;
    c.started_utc.get_or_insert_with(utc_now_iso);
    c.tool = Some(format!("ngcc-perf {}", env!("CARGO_PKG_VERSION")));
    c.arch_config = Some(ArchConfig {
        reference: flags::GUIDE_REFERENCE.into(),
        performance: flags::performance_flags().into(),
        optimized_families: vec![],
    });
    c.harness_additions = Some(flags::HARNESS_ADDITIONS.into());
    run.save_campaign(&c)
}

pub fn finish(run: &RunDir) -> Result<()> {
    let mut c = run.load_campaign()?;
    c.ended_utc = Some(utc_now_iso());
    run.save_campaign(&c)
}
