//! `ngcc-perf import pqclean`: one manifest per PQClean scheme family.

use super::pqclean::{self, PqcImpl};
use super::{Api, Candidate, Instance, KatSpec};
use anyhow::{Result, bail};
use clap::Args;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct ImportArgs {
    /// What to import: `pqclean`.
    pub source: String,
    /// The PQClean tree to import (default: the tree cargo fetched; manifests then refer to
    /// it as `${PQCLEAN}` so they work on any machine).
    pub dir: Option<PathBuf>,
    /// Folder to write `<family>/candidate.toml` into.
    #[arg(long)]
    pub out: PathBuf,
    /// Also import avx2 implementations this CPU cannot run (they will fail their KAT).
    #[arg(long)]
    pub all_impls: bool,
    /// Only these families (comma list: ml-kem, hqc, mceliece, ml-dsa, falcon, sphincs-sha2,
    /// sphincs-shake).
    #[arg(long, value_delimiter = ',')]
    pub family: Vec<String>,
}

pub fn run(args: ImportArgs) -> Result<ExitCode> {
    if args.source != "pqclean" {
        return Err(crate::util::Failure::usage(format!(
            "import: unknown source {:?} (known: pqclean)",
            args.source
        )));
    }
    let mut cands = pqclean_candidates(args.dir.as_deref(), args.all_impls)?;
    if !args.family.is_empty() {
        cands.retain(|c| args.family.contains(&c.id));
        if cands.is_empty() {
            return Err(crate::util::Failure::usage(format!(
                "import: no family among {:?}",
                args.family
            )));
        }
    }
    let mut total = 0;
    for cand in &cands {
        let path = args.out.join(&cand.id).join("candidate.toml");
        let text = format!(
            "# Written by `ngcc-perf import pqclean`: the PQClean tree fetched by cargo.\n{}",
            toml::to_string(cand)?
        );
        crate::util::atomic_write(&path, text.as_bytes())?;
        total += cand.instances.len();
        println!("{}: {} instances", path.display(), cand.instances.len());
    }
    println!(
        "import: {} candidates, {total} instances in {}",
        cands.len(),
        args.out.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// Candidates for every family; `tree = None` uses the fetched tree through `${PQCLEAN}`.
pub fn pqclean_candidates(tree: Option<&Path>, all_impls: bool) -> Result<Vec<Candidate>> {
    let (root, prefix) = match tree {
        Some(t) => (
            t.to_path_buf(),
            std::path::absolute(t)?.to_string_lossy().to_string(),
        ),
        None => (crate::samples::pqclean_dir()?, "${PQCLEAN}".to_string()),
    };
    let mut families: BTreeMap<&str, Candidate> = BTreeMap::new();
    for imp in pqclean::scan(&root)? {
        let Some((id, algorithm)) = pqclean::family(&imp.scheme) else {
            continue;
        };
        if imp.implementation != "clean"
            && !all_impls
            && !pqclean::cpu_supports(&imp.required_flags)
        {
            continue;
        }
        let cand = families.entry(id).or_insert_with(|| Candidate {
            id: id.to_string(),
            algorithm: algorithm.to_string(),
            kind: imp.kind,
            api: Api::Nist,
            variant: None,
            instances: Vec::new(),
            root: PathBuf::new(),
        });
        cand.instances.push(instance_for(&imp, &prefix));
    }
    if families.is_empty() {
        bail!("{}: no PQClean schemes found", root.display());
    }
    Ok(families.into_values().collect())
}

fn instance_for(imp: &PqcImpl, prefix: &str) -> Instance {
    let mut include = vec![".".to_string(), format!("{prefix}/common")];
    let mut extra: Vec<String> = imp
        .common_sources
        .iter()
        .map(|s| format!("{prefix}/{s}"))
        .collect();
    let mut cflags = Vec::new();
    if imp.implementation == "avx2" {
        cflags = ["-mavx2", "-mbmi2", "-mbmi", "-mpopcnt", "-maes", "-mpclmul"]
            .map(String::from)
            .to_vec();
    }
    if imp.needs_keccak4x {
        include.push(format!("{prefix}/common/keccak4x"));
        extra.push(format!(
            "{prefix}/common/keccak4x/KeccakP-1600-times4-SIMD256.c"
        ));
    }
    Instance {
        label: imp.label(),
        dir: format!("{prefix}/{}", imp.rel_dir),
        extra_sources: extra,
        include,
        cflags,
        namespace: Some(imp.namespace.clone()),
        kat: Some(KatSpec {
            manifest: None,
            sha256: Some(imp.nistkat_sha256.clone()),
            rng: Some(imp.nistkat_rng.clone()),
        }),
        ..Instance::default()
    }
}
