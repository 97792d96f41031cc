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
