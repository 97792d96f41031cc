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

/// Folders whose files are never library code: tests, KAT drivers, benchmarks, examples.
fn excluded_dir(name: &str) -> bool {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"(?i)^(tests?|testing|kats?|bench|benchmarks?|speed|examples?|demos?)$")
            .expect("valid regex")
    })
    .is_match(name)
}

/// A file below the instance folder that the exclusion rule drops: by its name, or by a
/// folder on its way (`src/KAT/KAT_KEM.c`, `src/tests/t.c`).
pub fn excluded_path(rel: &std::path::Path) -> bool {
    let name = rel.file_name().unwrap_or_default().to_string_lossy();
    excluded(&name)
        || rel
            .parent()
            .into_iter()
            .flat_map(|p| p.components())
            .any(|c| excluded_dir(&c.as_os_str().to_string_lossy()))
}

#[derive(Debug, Clone)]
pub struct SourceSet {
    pub dir: PathBuf,
    pub sources: Vec<PathBuf>,
    pub includes: Vec<PathBuf>,
}

/// What must exist before a campaign starts (else bad input, exit 2): the source folder,
/// every extra source and every include folder. Anything else wrong with the sources (no C
/// file, a pattern matching nothing, a file resolving outside the folder) fails that
/// instance's build only.
pub fn check_paths(cand: &Candidate, inst: &Instance) -> Result<()> {
    let dir = cand.instance_dir(inst)?;
    if !dir.is_dir() {
        bail!(
            "instance {}: source folder {} does not exist",
            inst.label,
            dir.display()
        );
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
    }
    includes(cand, inst, &dir).map(|_| ())
}

fn includes(cand: &Candidate, inst: &Instance, dir: &std::path::Path) -> Result<Vec<PathBuf>> {
    let specs = if inst.include.is_empty() {
        vec![".".to_string()]
    } else {
        inst.include.clone()
    };
    let mut out = Vec::new();
    for spec in &specs {
        let path = cand.resolve(dir, spec)?;
        if !path.is_dir() {
            bail!(
                "instance {}: include folder {} does not exist",
                inst.label,
                path.display()
            );
        }
        out.push(path);
    }
    Ok(out)
}

/// The instance's files: `sources` globs (default `*.c`, `*.S`) relative to `dir`, minus the
/// exclusion rule (always, also for explicit patterns), then `extra_sources` as given.
pub fn resolve(cand: &Candidate, inst: &Instance) -> Result<SourceSet> {
    check_paths(cand, inst)?;
    let dir = cand.instance_dir(inst)?;
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
        sources.push(cand.resolve(&cand.root, extra)?);
    }
    if sources.is_empty() {
        bail!("instance {}: no C sources in {}", inst.label, dir.display());
    }
    let includes = includes(cand, inst, &dir)?;
    Ok(SourceSet {
        dir,
        sources,
        includes,
    })
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

    #[test]
    fn excluded_folders_on_the_way() {
        use std::path::Path;
        for rel in [
            "src/KAT/KAT_KEM.c",
            "src/tests/a.c",
            "Test/x.c",
            "bench/y.c",
            "KAT_KEM.c",
        ] {
            assert!(super::excluded_path(Path::new(rel)), "{rel}");
        }
        for rel in ["src/api/kem.c", "src/backend/poly.c", "attest/x.c", "kem.c"] {
            assert!(!super::excluded_path(Path::new(rel)), "{rel}");
        }
    }
}
