//! `ngcc-perf campaign`: phases over a run directory. Each phase reads what earlier phases
//! wrote, writes its own files atomically and skips work already done, so a killed campaign
//! resumes where it stopped.

pub mod phases;
pub mod progress;
pub mod rundir;
pub mod sandbox;

use crate::candidate::{Candidate, Instance};
use anyhow::Result;
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

/// Phases in the order `all` runs them.
pub const PHASES: &[&str] = &["build", "kat"];

#[derive(Args, Debug, Clone)]
pub struct CampaignArgs {
    /// `all` (every phase) or a comma list of: build, kat.
    pub phases: String,
    /// Folder searched recursively for candidate.toml files.
    #[arg(long)]
    pub candidates: PathBuf,
    /// Run directory (created if missing; an existing one is resumed).
    #[arg(long)]
    pub run: PathBuf,
    /// Only instances whose label (or `cand/label`) matches one of these comma-separated
    /// globs, e.g. `ml-kem-*` or `ml-kem-768-clean,hqc-128-clean`.
    #[arg(long)]
    pub only: Option<String>,
    /// Parallel build/KAT jobs (default: the number of CPUs).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Hash KATs: skip the 2^33-bit and the million-iteration files (and say so).
    #[arg(long)]
    pub quick: bool,
    /// Exit with status 1 unless every selected instance passed its KAT (for CI).
    #[arg(long)]
    pub require_pass: bool,
    /// Seconds before a KAT child is killed and recorded as TIMEOUT.
    #[arg(long, default_value_t = 900)]
    pub kat_timeout: u64,
}

/// One instance selected for this invocation.
#[derive(Clone)]
pub struct Selected {
    pub cand: Candidate,
    pub inst: Instance,
}

impl Selected {
    pub fn key(&self) -> String {
        format!("{}/{}", self.cand.id, self.inst.label)
    }
}

pub fn run(args: CampaignArgs) -> Result<ExitCode> {
    let phases = parse_phases(&args.phases)?;
    let cands = crate::candidate::discover::load_all(&args.candidates)?;
    let selected = select(&cands, args.only.as_deref())?;
    let run = rundir::RunDir::open(&args.run)?;
    phases::start(&run)?;
    for phase in phases {
        match phase {
            "build" => phases::build(&run, &selected, &args)?,
            "kat" => phases::kat(&run, &selected, &args)?,
            _ => unreachable!("checked by parse_phases"),
        }
    }
    phases::finish(&run)?;
    if args.require_pass {
        let build = run.load_build()?;
        let failing: Vec<String> = selected
            .iter()
            .filter(|s| build.entry(&s.key()).is_none_or(|e| e.kat != "PASS"))
            .map(Selected::key)
            .collect();
        if !failing.is_empty() {
            eprintln!(
                "campaign: {} instance(s) did not pass their KAT: {}",
                failing.len(),
                failing.join(", ")
            );
            return Ok(ExitCode::from(1));
        }
    }
    Ok(ExitCode::SUCCESS)
}

pub fn parse_phases(text: &str) -> Result<Vec<&'static str>> {
    if text == "all" {
        return Ok(PHASES.to_vec());
    }
    let mut out = Vec::new();
    for name in text.split(',').map(str::trim) {
        match PHASES.iter().find(|p| **p == name) {
            Some(p) => out.push(*p),
            None => {
                return Err(crate::util::Failure::usage(format!(
                    "unknown phase {name:?} (phases: all, {})",
                    PHASES.join(", ")
                )));
            }
        }
    }
    // Run in pipeline order whatever order they were given in.
    out.sort_by_key(|p| PHASES.iter().position(|q| q == p));
    out.dedup();
    Ok(out)
}

fn select(cands: &[Candidate], only: Option<&str>) -> Result<Vec<Selected>> {
    let patterns: Option<Vec<glob::Pattern>> = only
        .map(|o| {
            o.split(',')
                .map(|g| glob::Pattern::new(g.trim()))
                .collect::<Result<_, _>>()
        })
        .transpose()
        .map_err(|e| crate::util::Failure::usage(format!("--only: bad glob: {e}")))?;
    let mut out = Vec::new();
    for cand in cands {
        for inst in &cand.instances {
            let key = format!("{}/{}", cand.id, inst.label);
            let hit = |p: &glob::Pattern| p.matches(&inst.label) || p.matches(&key);
            if patterns.as_ref().is_none_or(|ps| ps.iter().any(hit)) {
                out.push(Selected {
                    cand: cand.clone(),
                    inst: inst.clone(),
                });
            }
        }
    }
    if out.is_empty() {
        return Err(crate::util::Failure::usage("no instance matches --only"));
    }
    Ok(out)
}
