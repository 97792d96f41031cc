//! Which files make an instance: source globs, the reference exclusion rule, includes.

use crate::candidate::{Candidate, Instance};
use anyhow::{Context, Result, bail};
use regex::Regex;
use std::path::PathBuf;
use std::sync::OnceLock;

/// Basenames the reference harness never compiles by default: KAT drivers, mains, tests.
fn excluded(name: &str) -> bool {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(
            r"^(KAT_|PQCgenKAT|main|test|bench|speed|cpucycles|osfreq|run_bench|selftest|self_test|example|demo|kat\.c|kat_)|(_test|test_|_bench|bench_|_main|_kat)\.",
        )
        .expect("valid regex")
    })
    .is_match(name)
}

#[derive(Debug, Clone)]
pub struct SourceSet {
    pub sources: Vec<PathBuf>,
    pub includes: Vec<PathBuf>,
}

pub fn resolve(cand: &Candidate, inst: &Instance) -> Result<SourceSet> {
    let dir = cand.instance_dir(inst)?;
    if !dir.is_dir() {
        bail!(
            "instance {}: source folder {} does not exist",
            inst.label,
            dir.display()
        );
    }
    let inside = |what: &str, p: &std::path::Path| {
        super::guard::check_path(cand, what, p)
            .map_err(|e| anyhow::anyhow!("instance {}: {e}", inst.label))
    };
    inside("source folder", &dir)?;
    let default_globs = inst.sources.is_empty();
    let globs: Vec<String> = if default_globs {
        vec!["*.c".into(), "*.S".into()]
    } else {
        inst.sources.clone()
    };
    let mut sources = Vec::new();
    for pattern in &globs {
        let full = dir.join(pattern);
        let mut matched: Vec<PathBuf> = glob::glob(&full.to_string_lossy())
            .with_context(|| format!("instance {}: bad source pattern {pattern:?}", inst.label))?
            .filter_map(|p| p.ok())
            .filter(|p| p.is_file())
            .filter(|p| {
                !default_globs || !excluded(&p.file_name().unwrap_or_default().to_string_lossy())
            })
            .collect();
        matched.sort();
        if matched.is_empty() && !default_globs {
            bail!(
                "instance {}: source pattern {pattern:?} matches no file in {}",
                inst.label,
                dir.display()
            );
        }
        for m in &matched {
            inside("source", m)?;
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
    pub fn has_file(&self, name: &str) -> bool {
        self.sources
            .iter()
            .any(|p| p.file_name().is_some_and(|n| n == name))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn exclusion_rule_matches_the_reference() {
        for name in [
            "KAT_KEM.c",
            "PQCgenKAT_kem.c",
            "main.c",
            "test_foo.c",
            "foo_test.c",
            "kat.c",
            "bench_x.c",
            "speed.c",
        ] {
            assert!(super::excluded(name), "{name} should be excluded");
        }
        for name in [
            "kem.c",
            "fips202.c",
            "attest.c",
            "poly.c",
            "contest.c",
            "drng.c",
        ] {
            assert!(!super::excluded(name), "{name} should be kept");
        }
    }
}
