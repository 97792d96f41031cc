//! Relinking an instance with the profiling wrappers (reference-harness.md §5.1), from the
//! objects the build phase left on disk — after proving they are the timed library's.
//!
//! Proof: the manifest must still give the build's cache key (same sources, headers, flags,
//! compiler), and linking the objects exactly as the build did must reproduce the timed
//! library byte for byte (sha256 equal to build.json `library_sha256`). Only then are the
//! wrapper object and `-Wl,--wrap=` flags added. The reference relinked whatever objects
//! were on disk with no such link.

use super::symbols::{self, WrapPlan};
use crate::build::flags::{FlagSet, LINK};
use crate::build::instance::{self, Paths};
use crate::build::{BuildLimits, BuildOptions};
use crate::candidate::{Candidate, Instance};
use crate::dataset::schema::BuildEntry;
use crate::util::{atomic_write, sha256_file, tail};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Flags of the wrapper object: the guide's reference flags, which it compiles cleanly under.
pub const WRAPPER_CFLAGS: &[&str] = &[
    "-std=c99",
    "-Wpedantic",
    "-Wall",
    "-Wextra",
    "-O2",
    "-fPIC",
    "-fvisibility=hidden",
];
/// The build's export map (build/instance.rs); reproduced verbatim for the proof link.
const BUILD_EXPORTS: &str = "{\n  global: ngcc_*;\n  local: *;\n};\n";
/// The relinked library also exports the profiling entry points.
const PROF_EXPORTS: &str = "{\n  global: ngcc_*; ngcc_prof_*;\n  local: *;\n};\n";

/// `RUN/profile-lib/<cand>/lib<label>.so` and its work folder `RUN/profile-lib/<cand>/<label>/`.
#[derive(Debug, Clone)]
pub struct ProfPaths {
    pub work: PathBuf,
    pub library: PathBuf,
}

impl ProfPaths {
    pub fn new(run: &Path, cand: &str, label: &str) -> ProfPaths {
        let dir = run.join("profile-lib").join(cand);
        ProfPaths {
            work: dir.join(label),
            library: dir.join(format!("lib{label}.so")),
        }
    }
}

#[derive(Debug, Clone)]
pub struct Relinked {
    pub library: PathBuf,
    pub sha256: String,
    pub plan: WrapPlan,
}

/// Why an instance could not be relinked: one line, and the failing tool's stderr.
#[derive(Debug, Clone, PartialEq)]
pub struct RelinkError {
    pub reason: String,
    pub stderr: String,
}

pub(crate) fn fail(reason: impl Into<String>) -> RelinkError {
    RelinkError {
        reason: reason.into(),
        stderr: String::new(),
    }
}

/// The object files of the timed build, in link order (named as `compile_and_link` names them).
pub fn build_objects(
    run: &Path,
    cand: &Candidate,
    inst: &Instance,
    entry: &BuildEntry,
    options: &BuildOptions,
) -> Result<(Vec<PathBuf>, Vec<String>), RelinkError> {
    let flag_set = FlagSet::from_name(&entry.flags)
        .ok_or_else(|| fail(format!("flag set {:?} is not relinkable", entry.flags)))?;
    let paths = Paths::new(run, &cand.id, &inst.label);
    let plan = instance::plan(cand, inst, flag_set, &paths, options)
        .map_err(|e| fail(format!("cannot plan the build again: {e:#}")))?;
    if entry.cache_key.as_deref() != Some(plan.cache_key.as_str()) {
        return Err(fail(
            "sources, headers, flags or compiler changed since the timed build (cache key differs); run the build phase again",
        ));
    }
    let obj_dir = paths.work.join(format!("obj-{}", flag_set.name()));
    let mut objects = Vec::new();
    for (i, src) in plan.sources.iter().enumerate() {
        let stem = src.file_stem().unwrap_or_default().to_string_lossy();
        let obj = obj_dir.join(format!("{i:03}_{stem}.o"));
        if !obj.is_file() {
            return Err(fail(format!("object {} is missing", obj.display())));
        }
        objects.push(obj);
    }
    Ok((objects, plan.ldlibs))
}

/// Runs one tool, logging the command and its output; Err carries the stderr.
pub(crate) fn run_logged(
    cmd: &mut Command,
    log: &mut String,
    limits: BuildLimits,
) -> Result<(), RelinkError> {
    let line: Vec<String> = std::iter::once(cmd.get_program().to_string_lossy().to_string())
        .chain(cmd.get_args().map(|a| a.to_string_lossy().to_string()))
        .collect();
    let _ = writeln!(log, "$ {}", line.join(" "));
    let out = crate::build::bounded::output(cmd, limits)
        .map_err(|e| fail(format!("running {}: {e}", line[0])))?;
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    log.push_str(&String::from_utf8_lossy(&out.stdout));
    log.push_str(&stderr);
    if out.success() {
        return Ok(());
    }
    if let Some(why) = out.bound_hit(&line[0]) {
        return Err(RelinkError {
            reason: why,
            stderr: tail(&stderr, 2000),
        });
    }
    let first = stderr
        .lines()
        .find(|l| l.contains("undefined reference") || l.contains("error"))
        .or_else(|| stderr.lines().find(|l| !l.trim().is_empty()))
        .unwrap_or("failed without output")
        .trim()
        .to_string();
    Err(RelinkError {
        reason: format!("{} failed: {first}", line[0]),
        stderr: tail(&stderr, 2000),
    })
}

fn link_cmd(map: &Path, out: &Path, objects: &[PathBuf], ldlibs: &[String]) -> Command {
    let mut cmd = Command::new(crate::build::compiler::program());
    cmd.args(LINK)
        .arg(format!("-Wl,--version-script={}", map.display()))
        .arg("-o")
        .arg(out);
    cmd.args(objects).args(ldlibs).arg("-lm");
    cmd
}

pub(crate) fn io(what: &str, e: impl std::fmt::Display) -> RelinkError {
    fail(format!("{what}: {e}"))
}

/// Proves the objects, scans them, compiles the wrappers and links the profiling library.
pub fn relink(
    run: &Path,
    cand: &Candidate,
    inst: &Instance,
    entry: &BuildEntry,
    options: &BuildOptions,
) -> Result<Relinked, RelinkError> {
    let pp = ProfPaths::new(run, &cand.id, &inst.label);
    std::fs::create_dir_all(&pp.work).map_err(|e| io("creating the work folder", e))?;
    let mut log = String::new();
    let result = relink_logged(run, cand, inst, entry, options, &pp, &mut log);
    if let Err(e) = &result {
        let _ = writeln!(log, "relink failed: {}", e.reason);
    }
    let _ = atomic_write(&pp.work.join("relink.log"), log.as_bytes());
    result
}

fn relink_logged(
    run: &Path,
    cand: &Candidate,
    inst: &Instance,
    entry: &BuildEntry,
    options: &BuildOptions,
    pp: &ProfPaths,
    log: &mut String,
) -> Result<Relinked, RelinkError> {
    let (objects, ldlibs) = prove(run, cand, inst, entry, options, &pp.work, log)?;

    // 2. Which helpers to wrap.
    let syms = symbols::scan_objects(&objects).map_err(|e| fail(e.to_string()))?;
    let plan = symbols::plan_wraps(cand.api, inst.namespace.as_deref(), &syms);
    let _ = writeln!(
        log,
        "wrapped: {}\nunreached (defined, never called from another object): {}",
        plan.symbols().join(" "),
        plan.unreached.join(" ")
    );

    // 3. The wrapper object.
    let header = symbols::wraps_header(&format!("{}/{}", cand.id, inst.label), &plan);
    let wrap_obj = compile_wrapper(
        &pp.work.join("prof"),
        &[
            ("ngcc_prof_wraps.h", header.as_str()),
            ("ngcc_prof.c", crate::csrc::PROF_C),
        ],
        log,
        options.limits,
    )?;

    // 4. The profiling library: the same link plus the wrappers.
    let sha256 = link_wrapped(
        &pp.work,
        &pp.library,
        &objects,
        &wrap_obj,
        &ldlibs,
        &plan.symbols(),
        PROF_EXPORTS,
        log,
        options.limits,
    )?;
    Ok(Relinked {
        library: pp.library.clone(),
        sha256,
        plan,
    })
}

/// Step 1 of every relink: the instance's objects, in link order, after proving that
/// linking them exactly as the build did reproduces the timed library byte for byte.
pub fn prove(
    run: &Path,
    cand: &Candidate,
    inst: &Instance,
    entry: &BuildEntry,
    options: &BuildOptions,
    work: &Path,
    log: &mut String,
) -> Result<(Vec<PathBuf>, Vec<String>), RelinkError> {
    let timed_sha = entry
        .library_sha256
        .clone()
        .ok_or_else(|| fail("build.json has no library_sha256 for the timed library"))?;
    let (objects, ldlibs) = build_objects(run, cand, inst, entry, options)?;
    let build_map = work.join("exports-build.map");
    atomic_write(&build_map, BUILD_EXPORTS.as_bytes()).map_err(|e| io("writing a map", e))?;
    let proof = work.join("reproduced.so");
    run_logged(
        &mut link_cmd(&build_map, &proof, &objects, &ldlibs),
        log,
        options.limits,
    )?;
    let proof_sha = sha256_file(&proof).map_err(|e| io("hashing the proof link", e))?;
    let _ = std::fs::remove_file(&proof);
    if proof_sha != timed_sha {
        return Err(fail(format!(
            "the objects on disk do not reproduce the timed library (sha256 {} != {}); run the build phase again",
            &proof_sha[..16],
            &timed_sha[..timed_sha.len().min(16)]
        )));
    }
    Ok((objects, ldlibs))
}

/// Writes `files` into `dir` and compiles the last one (the wrapper source) with
/// `WRAPPER_CFLAGS`, `dir` on the include path; returns the object.
pub fn compile_wrapper(
    dir: &Path,
    files: &[(&str, &str)],
    log: &mut String,
    limits: BuildLimits,
) -> Result<PathBuf, RelinkError> {
    for (name, text) in files {
        atomic_write(&dir.join(name), text.as_bytes())
            .map_err(|e| io("writing the wrapper sources", e))?;
    }
    let src = dir.join(files.last().map_or("", |f| f.0));
    let obj = src.with_extension("o");
    let mut cc = Command::new(crate::build::compiler::program());
    cc.args(WRAPPER_CFLAGS)
        .arg(format!("-I{}", dir.display()))
        .arg("-c")
        .arg(&src)
        .arg("-o")
        .arg(&obj);
    run_logged(&mut cc, log, limits)?;
    Ok(obj)
}

/// Links `objects` + `wrap_obj` as the build did, with `-Wl,--wrap=` for each of `wraps` and
/// the export map `exports`, into `library` (atomically); returns its sha256.
#[allow(clippy::too_many_arguments)]
pub fn link_wrapped(
    work: &Path,
    library: &Path,
    objects: &[PathBuf],
    wrap_obj: &Path,
    ldlibs: &[String],
    wraps: &[String],
    exports: &str,
    log: &mut String,
    limits: BuildLimits,
) -> Result<String, RelinkError> {
    let map = work.join("exports-wrapped.map");
    atomic_write(&map, exports.as_bytes()).map_err(|e| io("writing a map", e))?;
    let tmp = library.with_extension(format!("so.{}.tmp", std::process::id()));
    let mut all = objects.to_vec();
    all.push(wrap_obj.to_path_buf());
    let mut cmd = link_cmd(&map, &tmp, &all, ldlibs);
    for s in wraps {
        cmd.arg(format!("-Wl,--wrap={s}"));
    }
    if let Err(e) = run_logged(&mut cmd, log, limits) {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    std::fs::rename(&tmp, library).map_err(|e| io("installing the relinked library", e))?;
    sha256_file(library).map_err(|e| io("hashing the relinked library", e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_export_the_profiling_entry_points() {
        assert!(PROF_EXPORTS.contains("ngcc_prof_*;"));
        assert!(BUILD_EXPORTS.contains("ngcc_*;"));
    }
}
