//! Phase `kat`: every built instance's KAT in a sandboxed child; on anything but PASS with
//! the guide flags, that instance is rebuilt with the harness defaults and tried again.

use super::build::fallback;
use super::pool;
use crate::build::flags::FlagSet;
use crate::campaign::{Selected, Settings};
use crate::dataset::schema::{BuildEntry, KatStatus};
use crate::kat::run::{KatOptions, run_kat};
use crate::rundir::{BuildState, RunDir};
use crate::util::progress::Progress;
use crate::util::sha256_file;
use anyhow::Result;
use rayon::prelude::*;
use std::time::Instant;

pub fn run(run: &RunDir, selected: &[Selected], settings: &Settings) -> Result<()> {
    let state = BuildState::load(run)?;
    let todo: Vec<&Selected> = selected
        .iter()
        .filter(|s| match state.get(&s.key()) {
            Some(e) => {
                e.is_built()
                    && (e.kat == KatStatus::Pending
                        || !run.kat_log(&s.cand.id, &s.inst.label).is_file())
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
    let opts = settings.kat_options();
    let progress = Progress::new("kat", todo.len() as u64);
    let results: Vec<Result<()>> = pool(settings)?.install(|| {
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
            *counts.entry(e.kat.to_string()).or_default() += 1;
        }
    }
    let summary: Vec<String> = counts.iter().map(|(k, v)| format!("{v} {k}")).collect();
    eprintln!("kat: {}", summary.join(", "));
    Ok(())
}

/// KAT with the current build; on anything but PASS or TIMEOUT with guide flags, rebuild this
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
    if matches!(entry.kat, KatStatus::Pass | KatStatus::Timeout)
        || entry.flags != FlagSet::Guide.name()
    {
        return Ok(entry);
    }
    let (mut fb, _) = fallback(run, &s.cand, &s.inst, &entry, entry.kat.clone())?;
    if fb.is_built() {
        let verdict = run_kat(run, &s.cand, &s.inst, &fb, opts)?;
        record_verdict(run, &mut fb, &verdict)?;
    } else {
        fb.kat = KatStatus::BuildFail;
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
