//! Phase `kat`: every built instance's KAT in a sandboxed child; on anything but PASS with
//! the guide flags, that instance is rebuilt with the harness defaults and tried again.

use super::build::fallback;
use super::pool;
use crate::build::flags::FlagSet;
use crate::build::{BuildOptions, build_instance};
use crate::campaign::{Selected, Settings};
use crate::candidate::Api;
use crate::dataset::schema::{BuildEntry, KatStatus};
use crate::kat::run::{KatOptions, inputs, manifest_path, run_kat, stale_because};
use crate::rundir::{BuildState, RunDir};
use crate::util::progress::Progress;
use crate::util::sha256_file;
use anyhow::Result;
use rayon::prelude::*;
use std::time::Instant;

pub fn run(run: &RunDir, selected: &[Selected], settings: &Settings) -> Result<()> {
    let state = BuildState::load(run)?;
    let opts = settings.kat_options();
    let build = settings.build_options();
    // (instance, why its KAT runs: None for a first KAT).
    let mut todo: Vec<(&Selected, Option<String>)> = Vec::new();
    for s in selected {
        let Some(e) = state.get(&s.key()).filter(|e| e.is_built()) else {
            continue;
        };
        if e.kat == KatStatus::Pending || !run.kat_log(&s.cand.id, &s.inst.label).is_file() {
            todo.push((s, None));
        } else if let Some(why) = stale_because(&e.kat_inputs, &inputs(&s.cand, &s.inst, &e, &opts))
        {
            crate::util::say!("kat {}: {} verdict is stale: {why}", s.key(), e.kat);
            todo.push((s, Some(why)));
        }
    }
    let missing = selected
        .iter()
        .filter(|s| state.get(&s.key()).is_none())
        .count();
    if missing > 0 {
        crate::util::say!(
            "kat: {missing} selected instances were never built (run the build phase first)"
        );
    }
    let stale = todo.iter().filter(|t| t.1.is_some()).count();
    if stale > 0 {
        crate::util::say!("kat: {stale} stale verdicts to re-run");
    }
    let progress = Progress::new("kat", todo.len() as u64);
    let results: Vec<Result<()>> = pool(settings)?.install(|| {
        todo.par_iter()
            .map(|(s, stale)| {
                progress.working_on(&s.key());
                let t = Instant::now();
                let entry = kat_with_fallback(run, &state, s, &opts, &build, stale.is_some())?;
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
                if entry.kat == KatStatus::NoKat
                    && let Some(hint) = nokat_hint(run, s)
                {
                    crate::util::say!("{hint}");
                }
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
    crate::util::say!("kat: {}", summary.join(", "));
    Ok(())
}

/// KAT with the current build; on anything but PASS or TIMEOUT with guide flags, rebuild this
/// instance alone with the harness defaults and try again (reference §1.6). A stale verdict
/// of a harness-default fallback whose guide attempt failed its KAT (not its build) first
/// tries the guide flags again: what that attempt was judged against may have changed.
fn kat_with_fallback(
    run: &RunDir,
    state: &BuildState,
    s: &Selected,
    opts: &KatOptions,
    build: &BuildOptions,
    stale: bool,
) -> Result<BuildEntry> {
    let mut entry = state.get(&s.key()).expect("selected entries exist");
    let guide_kat_failed = entry.flags == FlagSet::HarnessDefault.name()
        && entry
            .guide_result
            .as_ref()
            .is_some_and(|g| !matches!(g, KatStatus::BuildFail | KatStatus::Timeout));
    if stale && guide_kat_failed {
        let guide = build_instance(run, &s.cand, &s.inst, FlagSet::Guide, None, build)?.entry;
        if guide.is_built() {
            entry = guide;
        }
    }
    let verdict = run_kat(run, &s.cand, &s.inst, &entry, opts)?;
    record_verdict(run, s, opts, &mut entry, &verdict)?;
    state.put(&entry)?;
    // A timeout is not a flag problem: the fallback would only wait as long again.
    if matches!(entry.kat, KatStatus::Pass | KatStatus::Timeout)
        || entry.flags != FlagSet::Guide.name()
    {
        return Ok(entry);
    }
    let (mut fb, _) = fallback(run, &s.cand, &s.inst, &entry, entry.kat.clone(), build)?;
    if fb.is_built() {
        let verdict = run_kat(run, &s.cand, &s.inst, &fb, opts)?;
        record_verdict(run, s, opts, &mut fb, &verdict)?;
    } else {
        fb.kat = KatStatus::BuildFail;
    }
    state.put(&fb)?;
    Ok(fb)
}

fn record_verdict(
    run: &RunDir,
    s: &Selected,
    opts: &KatOptions,
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
    entry.kat_inputs = inputs(&s.cand, &s.inst, entry, opts);
    Ok(())
}

/// After a NOKAT: the digests this run's KAT output has and how to make them the expected
/// ones (a later PASS then means "reproduces these digests", nothing more).
fn nokat_hint(run: &RunDir, s: &Selected) -> Option<String> {
    let manifest = crate::kat::manifest_of(&run.katgen_dir(&s.cand.id, "")).ok()?;
    let prefix = format!("{}/", s.inst.label);
    let lines: Vec<String> = manifest
        .entries
        .iter()
        .filter(|e| e.name.starts_with(&prefix))
        .map(|e| format!("    {e}"))
        .collect();
    if lines.is_empty() {
        return None;
    }
    let target = manifest_path(&s.cand, &s.inst).ok()?;
    let mut hint = format!(
        "  this run's KAT output digests:\n{}\n  to expect them (every instance of {}), write the manifest:\n    ngcc-perf kat manifest {} --cand {} --out {}",
        lines.join("\n"),
        s.cand.id,
        run.root.display(),
        s.cand.id,
        target.display()
    );
    if s.cand.api == Api::Nist {
        let dir = run.katgen_dir(&s.cand.id, &s.inst.label);
        if let Some(file) = std::fs::read_dir(&dir).ok()?.filter_map(|e| e.ok()).next()
            && let Ok(sha) = sha256_file(&file.path())
        {
            hint.push_str(&format!(
                "\n  or give the file's sha256 in candidate.toml, instance {:?}: [instances.kat] sha256 = \"{sha}\"",
                s.inst.label
            ));
        }
    }
    Some(hint)
}
