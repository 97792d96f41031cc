//! The phases `build` and `kat` over the selected instances.

use super::progress::Progress;
use super::rundir::{BuildState, RunDir};
use super::{CampaignArgs, Selected};
use crate::build::{self, KAT_PENDING};
use crate::dataset::schema::{ArchConfig, BuildEntry};
use crate::kat::run::{KatOptions, run_kat};
use crate::util::{sha256_file, time::utc_now_iso};
use anyhow::Result;
use rayon::prelude::*;
use std::time::{Duration, Instant};

fn pool(args: &CampaignArgs) -> Result<rayon::ThreadPool> {
    let n = args
        .jobs
        .unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1)
        })
        .max(1);
    Ok(rayon::ThreadPoolBuilder::new().num_threads(n).build()?)
}

pub fn start(run: &RunDir) -> Result<()> {
    let mut c = run.load_campaign()?;
    c.started_utc.get_or_insert_with(utc_now_iso);
    c.tool = Some(format!("ngcc-perf {}", env!("CARGO_PKG_VERSION")));
    c.arch_config = Some(ArchConfig {
        reference: build::flags::GUIDE_REFERENCE.into(),
        performance: build::flags::performance_flags().into(),
        optimized_families: vec![],
    });
    c.harness_additions = Some(build::flags::HARNESS_ADDITIONS.into());
    run.save_campaign(&c)
}

pub fn finish(run: &RunDir) -> Result<()> {
    let mut c = run.load_campaign()?;
    c.ended_utc = Some(utc_now_iso());
    run.save_campaign(&c)
}

pub fn build(run: &RunDir, selected: &[Selected], args: &CampaignArgs) -> Result<()> {
    let state = BuildState::load(run)?;
    let progress = Progress::new("build", selected.len() as u64);
    let started = Instant::now();
    let results: Vec<Result<bool>> = pool(args)?.install(|| {
        selected
            .par_iter()
            .map(|s| {
                progress.working_on(&s.key());
                let t = Instant::now();
                let (entry, worked) = build::build_with_fallback(run, &state, &s.cand, &s.inst)?;
                state.put(&entry)?;
                progress.done(&build_line(s, &entry, worked, t.elapsed()));
                Ok(worked)
            })
            .collect()
    });
    progress.finish();
    let mut rebuilt = 0;
    for r in results {
        rebuilt += usize::from(r?);
    }
    let snapshot = state.snapshot();
    let failed = selected
        .iter()
        .filter(|s| {
            snapshot
                .entry(&s.key())
                .is_none_or(|e| e.build_status.as_deref() != Some("built"))
        })
        .count();
    eprintln!(
        "build: {} instances, {rebuilt} compiled, {} cached, {failed} failed ({:.1} s)",
        selected.len(),
        selected.len() - rebuilt,
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

fn build_line(s: &Selected, e: &BuildEntry, worked: bool, took: Duration) -> String {
    let what = match (e.build_status.as_deref(), worked) {
        (Some("built"), false) => format!("cached ({})", e.flags),
        (Some("built"), true) => format!("built with {} flags", e.flags),
        _ => format!("BUILDFAIL: {}", e.build_error.as_deref().unwrap_or("?")),
    };
    format!("build {}: {what} ({:.1} s)", s.key(), took.as_secs_f64())
}

pub fn kat(run: &RunDir, selected: &[Selected], args: &CampaignArgs) -> Result<()> {
    let state = BuildState::load(run)?;
    let todo: Vec<&Selected> = selected
        .iter()
        .filter(|s| match state.get(&s.key()) {
            Some(e) => {
                e.build_status.as_deref() == Some("built")
                    && (e.kat == KAT_PENDING || !run.kat_log(&s.cand.id, &s.inst.label).is_file())
            }
            None => false,
        })
        .collect();
    let missing = selected
        .iter()
        .filter(|s| state.get(&s.key()).is_none())
        .count();
    if missing > 0 {
        eprintln!("kat: {missing} selected instances were never built (run the build phase first)");
    }
    let opts = KatOptions {
        timeout: Duration::from_secs(args.kat_timeout),
        quick: args.quick,
        mem_limit_mib: args.mem_limit,
    };
    let progress = Progress::new("kat", todo.len() as u64);
    let results: Vec<Result<()>> = pool(args)?.install(|| {
        todo.par_iter()
            .map(|s| {
                progress.working_on(&s.key());
                let t = Instant::now();
                let entry = kat_with_fallback(run, &state, s, &opts)?;
                let detail = entry
                    .kat_detail
                    .as_deref()
                    .map(|d| format!(": {d}"))
                    .unwrap_or_default();
                progress.done(&format!(
                    "kat {}: {} ({} flags){detail} ({:.1} s)",
                    s.key(),
                    entry.kat,
                    entry.flags,
                    t.elapsed().as_secs_f64()
                ));
                Ok(())
            })
            .collect()
    });
    progress.finish();
    for r in results {
        r?;
    }
    let snap = state.snapshot();
    let mut counts: std::collections::BTreeMap<String, usize> = Default::default();
    for s in selected {
        if let Some(e) = snap.entry(&s.key()) {
            *counts.entry(e.kat).or_default() += 1;
        }
    }
    let summary: Vec<String> = counts.iter().map(|(k, v)| format!("{v} {k}")).collect();
    eprintln!("kat: {}", summary.join(", "));
    Ok(())
}

/// KAT with the current build; on anything but PASS with guide flags, rebuild this
/// instance alone with the harness defaults and try again (reference §1.6).
fn kat_with_fallback(
    run: &RunDir,
    state: &BuildState,
    s: &Selected,
    opts: &KatOptions,
) -> Result<BuildEntry> {
    let mut entry = state.get(&s.key()).expect("selected entries exist");
    let verdict = run_kat(run, &s.cand, &s.inst, &entry, opts)?;
    record_verdict(run, &mut entry, &verdict)?;
    state.put(&entry)?;
    // A timeout is not a flag problem: the fallback would only wait as long again.
    if entry.kat == "PASS"
        || entry.kat == "TIMEOUT"
        || entry.flags != build::flags::FlagSet::Guide.name()
    {
        return Ok(entry);
    }
    let (mut fb, _) = build::fallback(run, &s.cand, &s.inst, &entry, &entry.kat.clone())?;
    if fb.build_status.as_deref() == Some("built") {
        let verdict = run_kat(run, &s.cand, &s.inst, &fb, opts)?;
        record_verdict(run, &mut fb, &verdict)?;
    } else {
        fb.kat = build::BUILDFAIL.into();
    }
    state.put(&fb)?;
    Ok(fb)
}

fn record_verdict(
    run: &RunDir,
    entry: &mut BuildEntry,
    v: &crate::kat::run::Verdict,
) -> Result<()> {
    entry.kat = v.status.clone();
    entry.kat_detail = v.detail.clone();
    if let Some(i) = &v.instance {
        entry.instance = i.clone();
    }
    let log = run.kat_log(&entry.candidate, &entry.label);
    entry.kat_log = Some(run.rel(&log));
    entry.kat_log_sha256 = Some(sha256_file(&log)?);
    Ok(())
}
