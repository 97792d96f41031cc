//! `ngcc-perf import pqclean`: one manifest per PQClean scheme family; `import ngcc`
//! (official NGCC packages) lives in `ngcc/`.

use super::manifest::PQCLEAN_VAR;
use super::pqclean::{self, PqcImpl};
use super::{Api, Candidate, Instance, KatSpec};
use anyhow::{Result, bail};
use clap::Args;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Args, Debug)]
#[command(after_help = "Examples:\n  \
    ngcc-perf import pqclean --out cands\n  \
    ngcc-perf import ngcc ~/ngcc/Lore --id kem-19 --kat-manifest kat.sha256 --dry-run\n  \
    ngcc-perf import ngcc ~/ngcc/Lore --id kem-19 --kat-manifest kat.sha256 --out cands/kem-19\n  \
    ngcc-perf import ngcc ~/ngcc-r1/packages --harness ~/ngcc-r1/harness --out cands")]
pub struct ImportArgs {
    /// What to import: `pqclean` (a PQClean tree) or `ngcc` (an unpacked NGCC submission
    /// package or a tree of them: each instance learned from the package's own build, run in
    /// the jail on a copy, the build files read as text to cross-check; `--static` reads only).
    pub source: String,
    /// pqclean: the tree to import (default: the tree cargo fetched; manifests then refer to
    /// it as `${PQCLEAN}` so they work on any machine). ngcc: the package folder.
    pub dir: Option<PathBuf>,
    /// pqclean: folder to write `<family>/candidate.toml` into. ngcc: folder to write
    /// candidate.toml (and kat.sha256) into.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// ngcc: the candidate id (e.g. kem-19); also selects the override table's entry.
    #[arg(long)]
    pub id: Option<String>,
    /// ngcc: the reference harness's kat.sha256 for the candidate: its labels name the
    /// instances, and it is copied next to candidate.toml.
    #[arg(long, value_name = "FILE")]
    pub kat_manifest: Option<PathBuf>,
    /// ngcc: folder with the official ICCS API files (drng.c, auxfunc.c, headers), linked
    /// for instances that do not ship their own.
    #[arg(long, value_name = "DIR")]
    pub iccs_helpers: Option<PathBuf>,
    /// ngcc: an override table of the shipped form, applied after the shipped one.
    #[arg(long, value_name = "FILE")]
    pub overrides: Option<PathBuf>,
    /// ngcc: print the table of instances found and write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// ngcc: a folder of the reference harness's per-candidate manifests
    /// (`<id>/kat.sha256`): DIR is then a submission tree, every package below it is
    /// imported to `--out CANDS/<id>/`, its id the manifest its instance labels match.
    #[arg(long, value_name = "DIR")]
    pub harness: Option<PathBuf>,
    /// ngcc: build observations (and packages) run in parallel, at most N at once (default 2).
    #[arg(long, value_name = "N")]
    pub jobs: Option<usize>,
    /// ngcc: read the build files as text only; never run a package's build.
    #[arg(long = "static")]
    pub static_only: bool,
    /// ngcc: wall-time bound of one jailed build observation, in seconds (default 300).
    #[arg(long, value_name = "S", hide = true)]
    pub observe_timeout: Option<f64>,
    /// Also import avx2 implementations this CPU cannot run (they will fail their KAT).
    #[arg(long)]
    pub all_impls: bool,
    /// Only these families (comma list: ml-kem, hqc, mceliece, ml-dsa, falcon, sphincs-sha2,
    /// sphincs-shake).
    #[arg(long, value_delimiter = ',')]
    pub family: Vec<String>,
}

impl ImportArgs {
    /// `import pqclean --out OUT --family …` on the fetched tree, for jobs run from code.
    pub fn pqclean(out: PathBuf, family: Vec<String>) -> ImportArgs {
        ImportArgs {
            source: "pqclean".into(),
            dir: None,
            out: Some(out),
            id: None,
            kat_manifest: None,
            iccs_helpers: None,
            overrides: None,
            dry_run: false,
            harness: None,
            jobs: None,
            static_only: false,
            observe_timeout: None,
            all_impls: false,
            family,
        }
    }
}

pub fn run(args: ImportArgs) -> Result<ExitCode> {
    if args.source == "ngcc" {
        return super::ngcc::cli(&args);
    }
    if args.source != "pqclean" {
        return Err(crate::util::Failure::usage(format!(
            "import: unknown source {:?} (known: pqclean, ngcc)",
            args.source
        )));
    }
    let Some(out) = args.out.clone() else {
        return Err(crate::util::Failure::usage(
            "import pqclean: --out DIR is required",
        ));
    };
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
    // A tree given by path is written into the manifests as an absolute path; the campaign
    // reads it only from an allowed root (build::guard), so the header and the last line say
    // which flag to give, as `import ngcc` does for a package.
    let given = match &args.dir {
        Some(d) => Some(std::path::absolute(d)?),
        None => None,
    };
    let header = match &given {
        Some(tree) => format!(
            "# Written by `ngcc-perf import pqclean {tree}`: the PQClean tree at {tree}, given \
             by path.\n# Its sources stay there: the campaign needs \
             --allow-source-root {tree} unless the tree lies inside the candidates folder.\n",
            tree = quoted(tree)
        ),
        None => "# Written by `ngcc-perf import pqclean`: the PQClean tree fetched by cargo \
                 (`${PQCLEAN}` in the paths below).\n"
            .to_string(),
    };
    let mut total = 0;
    for cand in &cands {
        let path = out.join(&cand.id).join("candidate.toml");
        let text = format!("{header}{}", toml::to_string(cand)?);
        crate::util::atomic_write(&path, text.as_bytes())?;
        total += cand.instances.len();
        crate::util::out!("{}: {} instances", path.display(), cand.instances.len());
    }
    crate::util::out!(
        "import: {} candidates, {total} instances in {}",
        cands.len(),
        out.display()
    );
    if let Some(tree) = &given {
        let canon = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
        if !canon(tree).starts_with(canon(&out)) {
            crate::util::out!(
                "import pqclean: the sources stay where they are; give the campaign --allow-source-root {}",
                quoted(tree)
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// A path as one shell word (quoted only when it needs it), so the printed flag can be pasted.
fn quoted(p: &Path) -> String {
    let s = p.to_string_lossy();
    shlex::try_quote(&s).map_or_else(|_| s.to_string(), |q| q.into_owned())
}

/// Candidates for every family; `tree = None` uses the fetched tree through `${PQCLEAN}`.
pub fn pqclean_candidates(tree: Option<&Path>, all_impls: bool) -> Result<Vec<Candidate>> {
    let (root, prefix) = match tree {
        Some(t) => (
            t.to_path_buf(),
            std::path::absolute(t)?.to_string_lossy().to_string(),
        ),
        None => (crate::samples::pqclean_dir()?, PQCLEAN_VAR.to_string()),
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
            package: None,
            iccs_helpers: None,
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
