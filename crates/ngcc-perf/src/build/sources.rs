//! Which files make an instance: source globs minus the reference exclusion rule
//! (`candidate::exclude`), includes, and the path guard (`guard`).

use super::guard::SourceRoots;
use crate::candidate::exclude::excluded_path;
use crate::candidate::{Candidate, Instance};
use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};

#[derive(Debug, Clone)]
pub struct SourceSet {
    pub sources: Vec<PathBuf>,
    pub includes: Vec<PathBuf>,
}

/// The instance's files: `sources` globs (default `*.c`, `*.S`) relative to `dir`, minus the
/// exclusion rule (always, also for explicit patterns), then `extra_sources` as given, and
/// the include folders. Every path must resolve inside the allowed roots (`guard`). Anything
/// wrong — a folder or file that is not there, a path outside the roots, no C file, a pattern
/// matching nothing, a file resolving outside the folder — fails that instance's build only
/// (BUILDFAIL); the campaign goes on.
pub fn resolve(cand: &Candidate, inst: &Instance, roots: &SourceRoots) -> Result<SourceSet> {
    let inside = |what: &str, p: &Path| {
        super::guard::check_path(cand, roots, what, p)
            .map_err(|e| anyhow::anyhow!("instance {}: {e}", inst.label))
    };
    let dir = cand.instance_dir(inst)?;
    if !dir.is_dir() {
        bail!(
            "instance {}: source folder {} does not exist",
            inst.label,
            dir.display()
        );
    }
    inside("source folder", &dir)?;
    let real_dir = dir
        .canonicalize()
        .with_context(|| format!("instance {}: {}", inst.label, dir.display()))?;
    let default_globs = inst.sources.is_empty();
    let globs: Vec<String> = if default_globs {
        vec!["*.c".into(), "*.S".into()]
    } else {
        inst.sources.clone()
    };
    // Folder names may hold glob characters; only the pattern part is a pattern.
    let base = glob::Pattern::escape(&dir.to_string_lossy());
    let mut sources = Vec::new();
    for pattern in &globs {
        let full = format!("{base}/{pattern}");
        let mut matched: Vec<PathBuf> = glob::glob(&full)
            .with_context(|| format!("instance {}: bad source pattern {pattern:?}", inst.label))?
            .filter_map(|p| p.ok())
            .filter(|p| p.is_file())
            .filter(|p| !excluded_path(p.strip_prefix(&dir).unwrap_or(p)))
            .collect();
        matched.sort();
        if matched.is_empty() && !default_globs {
            bail!(
                "instance {}: source pattern {pattern:?} matches no file in {} (KAT drivers, mains, tests and benchmarks are never compiled)",
                inst.label,
                dir.display()
            );
        }
        for p in &matched {
            inside("source", p)?;
            let real = p.canonicalize()?;
            if !real.starts_with(&real_dir) {
                bail!(
                    "instance {}: source {} resolves outside {} (use extra_sources for files elsewhere)",
                    inst.label,
                    p.display(),
                    dir.display()
                );
            }
        }
        sources.extend(matched);
    }
    for extra in &inst.extra_sources {
        let path = cand.resolve(&cand.root, extra)?;
        if !path.is_file() {
            bail!(
                "instance {}: extra source {} does not exist",
                inst.label,
                path.display()
            );
        }
        inside("extra source", &path)?;
        sources.push(path);
    }
    if sources.is_empty() {
        bail!("instance {}: no C sources in {}", inst.label, dir.display());
    }
    let include_specs = if inst.include.is_empty() {
        vec![".".to_string()]
    } else {
        inst.include.clone()
    };
    let mut includes = Vec::new();
    for spec in &include_specs {
        let path = cand.resolve(&dir, spec)?;
        if !path.is_dir() {
            bail!(
                "instance {}: include folder {} does not exist",
                inst.label,
                path.display()
            );
        }
        inside("include folder", &path)?;
        includes.push(path);
    }
    Ok(SourceSet { sources, includes })
}

impl SourceSet {
    /// The source whose file name is `name` (the instance's own `drng.c`, …), if any.
    pub fn file(&self, name: &str) -> Option<&PathBuf> {
        self.sources
            .iter()
            .find(|p| p.file_name().is_some_and(|n| n == name))
    }
}
