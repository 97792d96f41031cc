//! Phase `build`: every selected instance with the guide flags, falling back per instance to
//! the harness defaults (reference §1.6); cached by content.

use super::pool;
use crate::build::flags::FlagSet;
use crate::build::instance::{self, Paths};
use crate::build::{BuildOptions, build_instance};
use crate::campaign::{Selected, Settings};
use crate::candidate::{Candidate, Instance};
use crate::dataset::schema::{BuildEntry, KatStatus};
use crate::rundir::{BuildState, RunDir};
use crate::util::progress::Progress;
use anyhow::Result;
use rayon::prelude::*;
use std::time::{Duration, Instant};

pub fn run(run: &RunDir, selected: &[Selected], settings: &Settings) -> Result<()> {
    let state = BuildState::load(run)?;
    let options = settings.build_options();
    let progress = Progress::new("build", selected.len() as u64);
    let started = Instant::now();
    let results: Vec<Result<bool>> = pool(settings)?.install(|| {
        selected
            .par_iter()
            .map(|s| {
                progress.working_on(&s.key());
                let t = Instant::now();
                let had = state.get(&s.key()).is_some_and(|e| e.is_built());
                let (entry, worked) = build_with_fallback(run, &state, &s.cand, &s.inst, &options)?;
                state.put(&entry)?;
                progress.done(&build_line(s, &entry, worked && had, worked, t.elapsed()));
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
        .filter(|s| snapshot.entry(&s.key()).is_none_or(|e| !e.is_built()))
        .count();
    crate::util::say!(
        "build: {} instances, {rebuilt} compiled, {} cached, {failed} failed ({:.1} s)",
        selected.len(),
        selected.len() - rebuilt,
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

fn build_line(s: &Selected, e: &BuildEntry, again: bool, worked: bool, took: Duration) -> String {
    let what = match (e.is_built(), worked) {
        (true, false) => format!("cached ({})", e.flags),
        (true, true) if again => format!(
            "rebuilt with {} flags (its sources, headers, flags or compiler changed)",
            e.flags
        ),
        (true, true) => format!("built with {} flags", e.flags),
        (false, _) => format!(
            "{}: {}",
            KatStatus::BuildFail,
            e.build_error.as_deref().unwrap_or("?")
        ),
    };
    format!("build {}: {what} ({:.1} s)", s.key(), took.as_secs_f64())
}

/// Builds with the guide flags, falling back to the harness defaults when that fails.
/// An instance that already fell back keeps its harness-default build while the guide
/// inputs are unchanged (no pointless retry on every run).
pub fn build_with_fallback(
    run: &RunDir,
    state: &BuildState,
    cand: &Candidate,
    inst: &Instance,
    options: &BuildOptions,
) -> Result<(BuildEntry, bool)> {
    let key = format!("{}/{}", cand.id, inst.label);
    let previous = state.get(&key);
    if let Some((prev, set)) = previous.as_ref().and_then(|p| {
        FlagSet::from_name(&p.flags)
            .filter(|s| *s != FlagSet::Guide)
            .map(|s| (p, s))
    }) {
        let paths = Paths::new(&run.root, &cand.id, &inst.label);
        let guide_key = instance::plan(cand, inst, FlagSet::Guide, &paths, options)
            .ok()
            .map(|p| p.cache_key);
        if guide_key.is_some() && prev.guide_cache_key == guide_key {
            let a = build_instance(run, cand, inst, set, Some(prev), options)?;
            let (entry, worked) = (a.entry, a.worked);
            let entry = if worked {
                keep_guide(entry, prev)
            } else {
                entry
            };
            return Ok((entry, worked));
        }
    }
    let a = build_instance(run, cand, inst, FlagSet::Guide, previous.as_ref(), options)?;
    let (entry, worked) = (a.entry, a.worked);
    if entry.is_built() {
        return Ok((entry, worked));
    }
    fallback(run, cand, inst, &entry, KatStatus::BuildFail, options)
}

/// Rebuilds with the harness defaults after the guide attempt ended in `guide_result`.
pub fn fallback(
    run: &RunDir,
    cand: &Candidate,
    inst: &Instance,
    guide: &BuildEntry,
    guide_result: KatStatus,
    options: &BuildOptions,
) -> Result<(BuildEntry, bool)> {
    // Keep the guide attempt's log: it says why the guide flags were not used.
    let paths = Paths::new(&run.root, &cand.id, &inst.label);
    let kept = std::fs::rename(&paths.log, &paths.guide_log).is_ok() || paths.guide_log.is_file();
    let harness = build_instance(run, cand, inst, FlagSet::HarnessDefault, None, options)?;
    let mut entry = harness.entry;
    // Undefined symbols at the harness defaults: C99 plain `inline` without an external
    // definition is the usual cause; one more try with gnu89 inline semantics (labelled).
    if !entry.is_built() && harness.undefined_symbols {
        let third = build_instance(
            run,
            cand,
            inst,
            FlagSet::HarnessDefaultGnu89Inline,
            None,
            options,
        )?
        .entry;
        if third.is_built() {
            entry = third;
        }
    }
    entry.guide_result = Some(guide_result);
    entry.guide_cache_key = guide.cache_key.clone();
    entry.guide_build_log = kept.then(|| run.rel(&paths.guide_log));
    if entry.build_error.is_none() && guide.build_error.is_some() && !entry.is_built() {
        entry.build_error = guide.build_error.clone();
    }
    Ok((entry, true))
}

fn keep_guide(mut entry: BuildEntry, prev: &BuildEntry) -> BuildEntry {
    entry.guide_result = prev.guide_result.clone();
    entry.guide_cache_key = prev.guide_cache_key.clone();
    entry.guide_build_log = prev.guide_build_log.clone();
    entry
}
