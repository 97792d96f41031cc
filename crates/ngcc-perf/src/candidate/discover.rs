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

/// Loads every candidate; ids must be unique.
pub fn load_all(root: &Path) -> Result<Vec<Candidate>> {
    let mut cands: Vec<Candidate> = Vec::new();
    for path in manifests(root)? {
        let cand = Candidate::load(&path)?;
        if let Some(other) = cands.iter().find(|c| c.id == cand.id) {
            bail!(
                "{}: candidate id {:?} is also used by {}",
                path.display(),
                cand.id,
                other.root.join("candidate.toml").display()
            );
        }
        cands.push(cand);
    }
    if cands.is_empty() {
        bail!("{}: no candidate.toml found", root.display());
    }
    Ok(cands)
}
