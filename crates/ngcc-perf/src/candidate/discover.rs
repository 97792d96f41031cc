//! Finds every candidate.toml under a folder, in a stable order.

use super::Candidate;
use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};

pub fn manifests(root: &Path) -> Result<Vec<PathBuf>> {
    if !root.is_dir() {
        bail!("{}: no such candidates folder", root.display());
    }
    let mut out = Vec::new();
    walk(root, &mut out)?;
    out.sort();
    Ok(out)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    let entries = std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))?;
    for entry in entries {
        let entry = entry?;
        let path = entry.path();
        let ty = entry.file_type()?;
        if ty.is_dir() && !entry.file_name().to_string_lossy().starts_with('.') {
            walk(&path, out)?;
        } else if ty.is_file() && entry.file_name() == "candidate.toml" {
            out.push(path);
        }
    }
    Ok(())
}

/// Loads every candidate under `root`.
pub fn load_all(root: &Path) -> Result<Vec<Candidate>> {
    let cands = manifests(root)?
        .iter()
        .map(|p| Candidate::load(p))
        .collect::<Result<Vec<_>>>()?;
    if cands.is_empty() {
        bail!("{}: no candidate.toml found", root.display());
    }
    check_unique(&cands)?;
    Ok(cands)
}

/// Candidate ids must be unique across every folder of a campaign.
pub fn check_unique(cands: &[Candidate]) -> Result<()> {
    for (i, c) in cands.iter().enumerate() {
        if let Some(other) = cands[..i].iter().find(|o| o.id == c.id) {
            bail!(
                "{}: candidate id {:?} is also used by {}",
                c.root.join("candidate.toml").display(),
                c.id,
                other.root.join("candidate.toml").display()
            );
        }
    }
    Ok(())
}
