//! Building one instance with one flag set → `RUN/lib/<cand>/lib<label>.so`, cached by
//! content (the phase driver with the guide → harness-default fallback is
//! `campaign::phases::build`).

pub mod bounded;
pub mod compiler;
pub mod elf;
pub mod flags;
pub mod guard;
pub mod instance;
pub mod objcache;
pub mod sources;

use crate::candidate::{Candidate, Instance};
use crate::dataset::schema::{
    BuildEntry, BuildStatus, HelperFile, HelperOrigin, KatStatus, SourceFile,
};
use crate::rundir::RunDir;
use crate::util::sha256_file;
use anyhow::Result;
use flags::FlagSet;
use instance::Paths;
use std::path::Path;

pub use bounded::BuildLimits;
pub use guard::SourceRoots;

/// What the build takes from a campaign's settings: where manifest paths may point, the
/// bounds of each compiler call and how its jail is built. A value built once per phase and
/// handed down.
#[derive(Debug, Clone, Default)]
pub struct BuildOptions {
    pub roots: SourceRoots,
    pub limits: BuildLimits,
    pub jail: crate::sandbox::jail::JailOptions,
}

/// One build attempt: its entry and what a caller decides on.
#[derive(Debug)]
pub struct Attempt {
    /// The new entry (the previous one when cached).
    pub entry: BuildEntry,
    /// Work was done (false: the cached entry was kept).
    pub worked: bool,
    /// The link left symbols undefined: another flag set may resolve them.
    pub undefined_symbols: bool,
}

/// Builds one instance with `flag_set` unless the same inputs already produced the library
/// on disk.
pub fn build_instance(
    run: &RunDir,
    cand: &Candidate,
    inst: &Instance,
    flag_set: FlagSet,
    previous: Option<&BuildEntry>,
    options: &BuildOptions,
) -> Result<Attempt> {
    let attempt = |entry, worked| Attempt {
        entry,
        worked,
        undefined_symbols: false,
    };
    let paths = Paths::new(&run.root, &cand.id, &inst.label);
    let mut entry = BuildEntry {
        candidate: cand.id.clone(),
        label: inst.label.clone(),
        instance: inst.label.clone(),
        variant: "reference".into(),
        flags: flag_set.name(),
        kat: KatStatus::BuildFail,
        compiler: Some(compiler::version_line()),
        build_log: Some(run.rel(&paths.log)),
        kind: Some(cand.kind.as_str().into()),
        api: Some(format!("{:?}", cand.api).to_lowercase()),
        algorithm: Some(cand.algorithm.clone()),
        security_target: inst.security_target,
        representative: inst.representative,
        ..BuildEntry::default()
    };
    let plan = match instance::plan(cand, inst, flag_set, &paths, options) {
        Ok(p) => p,
        Err(e) => {
            entry.build_status = Some(BuildStatus::Failed);
            entry.build_error = Some(format!("{e:#}"));
            return Ok(attempt(entry, true));
        }
    };
    if let Some(prev) = previous
        && prev.cache_key.as_deref() == Some(plan.cache_key.as_str())
        && prev.flags == flag_set.name()
        && prev.is_built()
        && paths.library.is_file()
        && prev.library_sha256.as_deref() == sha256_file(&paths.library).ok().as_deref()
    {
        // The grouping keys do not change the library: a cached entry takes today's.
        let mut kept = prev.clone();
        kept.security_target = inst.security_target;
        kept.representative = inst.representative;
        return Ok(attempt(kept, false));
    }
    entry.cache_key = Some(plan.cache_key.clone());
    entry.build_flags = Some(plan.flag_string());
    // The sources on disk with their hashes.
    let list_sources = || -> Result<Vec<SourceFile>> {
        plan.sources
            .iter()
            .filter(|p| p.is_file())
            .map(|p| {
                Ok(SourceFile {
                    path: portable(cand, run, p),
                    sha256: sha256_file(p)?,
                })
            })
            .collect()
    };
    entry.sources = list_sources()?;
    let _ = std::fs::remove_file(&paths.log);
    if flag_set == FlagSet::Guide {
        // A fresh guide attempt: an older attempt's kept log no longer applies.
        let _ = std::fs::remove_file(&paths.guide_log);
    }
    let built = instance::compile_and_link(&plan, &paths)?;
    // Generated sources exist only now; list them too.
    entry.sources = list_sources()?;
    entry.helpers = helper_files(cand, run, &plan.helpers)?;
    entry.build_containment = built.containment.clone();
    if built.ok {
        entry.build_status = Some(BuildStatus::Built);
        entry.kat = KatStatus::Pending;
        entry.library = Some(run.rel(&paths.library));
        entry.library_sha256 = Some(sha256_file(&paths.library)?);
        entry.elf_load_bytes = elf::load_bytes(&paths.library).ok();
    } else {
        entry.build_status = Some(BuildStatus::Failed);
        entry.build_error = built.error;
        let _ = std::fs::remove_file(&paths.library);
    }
    Ok(Attempt {
        entry,
        worked: true,
        undefined_symbols: built.undefined_symbols,
    })
}

/// The helper files of a plan as build.json records them, with their hashes.
fn helper_files(
    cand: &Candidate,
    run: &RunDir,
    helpers: &[(HelperOrigin, std::path::PathBuf)],
) -> Result<Vec<HelperFile>> {
    helpers
        .iter()
        .map(|(origin, path)| {
            let name = path
                .file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned();
            let shown = match origin {
                HelperOrigin::Embedded => format!("csrc/iccs/{name}"),
                // The folder is the manifest's `iccs_helpers`; the hash says which file.
                HelperOrigin::Official => format!("${{ICCS_HELPERS}}/{name}"),
                HelperOrigin::Package => portable(cand, run, path),
            };
            Ok(HelperFile {
                name,
                origin: *origin,
                path: shown,
                sha256: sha256_file(path)?,
            })
        })
        .collect()
}

/// Source paths as recorded: `${PQCLEAN}/…`, relative to the run or candidate, never $HOME.
fn portable(cand: &Candidate, run: &RunDir, path: &Path) -> String {
    if cand.uses_pqclean()
        && let Ok(pq) = crate::samples::pqclean_dir()
        && let Ok(rest) = path.strip_prefix(&pq)
    {
        return format!("${{PQCLEAN}}/{}", rest.display());
    }
    if let Ok(rest) = path.strip_prefix(&run.root) {
        return rest.display().to_string();
    }
    if let Some(rest) = cand
        .package_dir()
        .and_then(|p| path.strip_prefix(p).ok().map(Path::to_path_buf))
    {
        return format!("${{PACKAGE}}/{}", rest.display());
    }
    if let Ok(rest) = path.strip_prefix(&cand.root) {
        return format!("{}/{}", cand.id, rest.display());
    }
    path.display().to_string()
}
