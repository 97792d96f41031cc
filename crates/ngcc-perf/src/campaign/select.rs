//! Which instances an invocation works on: `--only` globs over the discovered candidates.

use crate::candidate::{Candidate, Instance};
use anyhow::Result;

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

pub fn select(cands: &[Candidate], only: Option<&str>) -> Result<Vec<Selected>> {
    let patterns = only.map(only_patterns).transpose()?;
    let mut out = Vec::new();
    for cand in cands {
        for inst in &cand.instances {
            let key = format!("{}/{}", cand.id, inst.label);
            if patterns
                .as_ref()
                .is_none_or(|ps| names(ps, &key, &inst.label))
            {
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

/// The comma-separated globs of `--only`.
pub fn only_patterns(only: &str) -> Result<Vec<glob::Pattern>> {
    only.split(',')
        .map(|g| glob::Pattern::new(g.trim()))
        .collect::<Result<_, _>>()
        .map_err(|e| crate::util::Failure::usage(format!("--only: bad glob: {e}")))
}

/// Whether one of `patterns` names the instance `key` (`cand/label`) or its `label`.
pub fn names(patterns: &[glob::Pattern], key: &str, label: &str) -> bool {
    patterns.iter().any(|p| p.matches(label) || p.matches(key))
}
