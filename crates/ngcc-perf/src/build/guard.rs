//! What a manifest may ask of the compiler. The compiler runs in the jail (`bounded::
//! output_in_jail`), which already hides the host; these rules still refuse flags that load
//! or run other programs, read options from files, or write files where ngcc-perf did not
//! choose (a second wall, and the only one where the jail is unavailable); and every path a manifest names must resolve
//! (symlinks and `..` followed) inside the candidate's folder, a `--candidates` folder, the
//! fetched PQClean tree (when the manifest names `${PQCLEAN}`) or a `--allow-source-root`.
//! A refusal is a BUILDFAIL of that instance.

use crate::candidate::Candidate;
use anyhow::{Result, anyhow, bail};
use std::path::{Path, PathBuf};

/// The folders besides each candidate's own that manifest paths may point into (the
/// `--candidates` folders and every `--allow-source-root`), canonical. Built once from the
/// campaign's settings and handed to the build, not kept in process state.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SourceRoots(Vec<PathBuf>);

impl SourceRoots {
    /// `roots` as they resolve now; a folder that does not exist allows nothing.
    pub fn new(roots: &[PathBuf]) -> SourceRoots {
        SourceRoots(
            roots
                .iter()
                .filter_map(|r| std::fs::canonicalize(r).ok())
                .collect(),
        )
    }
}

/// The folders a candidate's build may read: its own, the allowed source roots, PQClean.
pub fn allowed_roots(cand: &Candidate, roots: &SourceRoots) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = roots.0.clone();
    v.extend(std::fs::canonicalize(&cand.root));
    if cand.uses_pqclean()
        && let Ok(pq) = crate::samples::pqclean_dir()
    {
        v.extend(std::fs::canonicalize(pq));
    }
    v
}

/// `Err` unless `path` (which must exist) resolves inside an allowed root.
///
/// The errors are one-line messages (no context chain): a refusal only fails the instance's
/// build, no caller decides on its kind, and the callers print it with `{}` after a prefix of
/// their own, which shows a context chain's outer line alone.
pub fn check_path(cand: &Candidate, roots: &SourceRoots, what: &str, path: &Path) -> Result<()> {
    let canon =
        std::fs::canonicalize(path).map_err(|e| anyhow!("{what} {}: {e}", path.display()))?;
    if allowed_roots(cand, roots)
        .iter()
        .any(|r| canon.starts_with(r))
    {
        return Ok(());
    }
    Err(anyhow!(
        "{what} {} resolves to {}, outside the candidate's folder and the allowed source roots (--allow-source-root)",
        path.display(),
        canon.display()
    ))
}

const RUNS: &str = "runs or loads another program";
const WRITES: &str = "writes a file where ngcc-perf did not choose";
const OPTIONS: &str = "reads more options from a file";

/// Why one linker option (a part of `-Wl,` or the argument of `-Xlinker`) is refused.
fn linker_option(p: &str) -> Option<&'static str> {
    let starts = |x: &str| p.starts_with(x);
    if starts("@") {
        Some(OPTIONS)
    } else if p.contains("plugin") {
        Some(RUNS)
    } else if p == "-o"
        || starts("--output")
        || starts("-Map")
        || starts("--Map")
        || starts("--dependency-file")
    {
        Some(WRITES)
    } else if starts("-T") || starts("--script") || starts("--default-script") || p == "-dT" {
        Some("is a linker script (it can read and write any file)")
    } else if starts("--version-script") || starts("--sysroot") {
        Some("overrides how ngcc-perf links")
    } else {
        None
    }
}

fn assembler_option(p: &str) -> Option<&'static str> {
    if p.starts_with('@') {
        Some(OPTIONS)
    } else if p == "-o" || p.starts_with("--MD") || (p.starts_with("-a") && p.contains('=')) {
        Some(WRITES)
    } else {
        None
    }
}

/// Why a compiler flag is refused, or `None`. `next` is the following token (for flags that
/// take their argument separately).
fn compiler_flag(f: &str, next: Option<&str>) -> Option<&'static str> {
    let starts = |x: &str| f.starts_with(x);
    if starts("@") {
        return Some(OPTIONS);
    }
    if f == "-wrapper"
        || starts("-fplugin")
        || starts("-iplugindir")
        || starts("-specs")
        || starts("--specs")
        || starts("-B")
        || starts("-fuse-ld")
        || starts("--ld-path")
    {
        return Some(RUNS);
    }
    if starts("--sysroot") || starts("-isysroot") {
        return Some("moves the system root the compiler reads from");
    }
    if starts("-o")
        || starts("-save-temps")
        || starts("-dumpdir")
        || starts("-dumpbase")
        || starts("-fdump-")
        || starts("-aux-info")
        || starts("-MF")
        || starts("-fdiagnostics-format=sarif-file")
        || starts("-fdiagnostics-add-output")
    {
        return Some(WRITES);
    }
    if starts("-Wp,") || f == "-Xpreprocessor" {
        return Some("passes options to the preprocessor behind the driver's back");
    }
    if let Some(parts) = f.strip_prefix("-Wl,") {
        return parts.split(',').find_map(linker_option);
    }
    if f == "-Xlinker" {
        return next
            .and_then(linker_option)
            .or(next.is_none().then_some(RUNS));
    }
    if let Some(parts) = f.strip_prefix("-Wa,") {
        return parts.split(',').find_map(assembler_option);
    }
    if f == "-Xassembler" {
        return next.and_then(assembler_option);
    }
    None
}

/// Checks an instance's extra compiler flags and libraries; the error (a one-line message,
/// as for `check_path`) names the flag.
pub fn check_flags(
    cand: &Candidate,
    roots: &SourceRoots,
    cflags: &[String],
    ldlibs: &[String],
) -> Result<()> {
    for (i, f) in cflags.iter().enumerate() {
        let next = cflags.get(i + 1).map(String::as_str);
        if let Some(why) = compiler_flag(f, next) {
            bail!("refused compiler flag `{f}`: it {why}");
        }
    }
    for (i, f) in ldlibs.iter().enumerate() {
        let next = ldlibs.get(i + 1).map(String::as_str);
        let why = if let Some(name) = f.strip_prefix("-l") {
            (name.is_empty() || name.contains('/')).then_some("names a library by path")
        } else if let Some(dir) = f.strip_prefix("-L") {
            if let Err(e) = check_path(cand, roots, "library folder", Path::new(dir)) {
                bail!("refused ldlibs `{f}`: {e}");
            }
            None
        } else if f.starts_with("-Wl,") || f == "-Xlinker" {
            compiler_flag(f, next)
        } else if ["-pthread", "-fopenmp", "-static-libgcc"].contains(&f.as_str())
            || (i > 0 && ldlibs[i - 1] == "-Xlinker")
        {
            None
        } else {
            Some("is not a library (ldlibs take -l, -L, -pthread and -Wl, options)")
        };
        if let Some(why) = why {
            bail!("refused ldlibs `{f}`: it {why}");
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cand() -> Candidate {
        Candidate {
            id: "c".into(),
            algorithm: "a".into(),
            kind: crate::candidate::Kind::Kem,
            api: crate::candidate::Api::Nist,
            variant: None,
            package: None,
            iccs_helpers: None,
            instances: Vec::new(),
            root: std::env::temp_dir(),
        }
    }

    // The message as the user reads it, so the asserts below read the text.
    fn flags(v: &[&str]) -> std::result::Result<(), String> {
        let v: Vec<String> = v.iter().map(|s| s.to_string()).collect();
        check_flags(&cand(), &SourceRoots::default(), &v, &[]).map_err(|e| e.to_string())
    }

    #[test]
    fn program_running_and_file_writing_flags_are_refused() {
        for (f, why) in [
            (&["-wrapper", "/bin/sh,-c,id"][..], "runs or loads"),
            (&["-fplugin=/tmp/x.so"], "runs or loads"),
            (&["-specs=evil.specs"], "runs or loads"),
            (&["-B/tmp/bin"], "runs or loads"),
            (&["--sysroot=/tmp/root"], "system root"),
            (&["-isysroot", "/tmp"], "system root"),
            (&["-Wl,-plugin,/tmp/p.so"], "runs or loads"),
            (&["-Xlinker", "-plugin"], "runs or loads"),
            (&["@opts.txt"], "options from a file"),
            (&["-Wl,@opts"], "options from a file"),
            (&["-o", "/tmp/x"], "writes a file"),
            (&["-save-temps=cwd"], "writes a file"),
            (&["-fdump-tree-all"], "writes a file"),
            (&["-dumpdir", "/root/"], "writes a file"),
            (&["-Wl,-Map=/tmp/m"], "writes a file"),
            (&["-Wl,-T,evil.ld"], "linker script"),
            (&["-Wp,-MD,/tmp/d"], "preprocessor"),
            (&["-fuse-ld=/tmp/ld"], "runs or loads"),
        ] {
            let e = flags(f).unwrap_err();
            assert!(
                e.contains(&format!("`{}`", f[0])) && e.contains(why),
                "{f:?}: {e}"
            );
        }
        for ok in [
            &["-O3", "-mavx2", "-DX=1", "-include", "/dev/zero"][..],
            &[
                "-Wa,--noexecstack",
                "-Wl,-z,now",
                "-fno-strict-aliasing",
                "-std=c11",
            ],
        ] {
            assert_eq!(flags(ok), Ok(()), "{ok:?}");
        }
        let libs = |v: &[&str]| {
            let v: Vec<String> = v.iter().map(|s| s.to_string()).collect();
            check_flags(&cand(), &SourceRoots::default(), &[], &v).map_err(|e| e.to_string())
        };
        assert_eq!(
            libs(&["-lgmp", "-lm", "-pthread", "-Wl,--as-needed"]),
            Ok(())
        );
        assert!(
            libs(&["/tmp/evil.o"])
                .unwrap_err()
                .contains("not a library")
        );
        assert!(libs(&["-l:/tmp/x.a"]).unwrap_err().contains("by path"));
        assert!(libs(&["-L/etc"]).unwrap_err().contains("outside"));
    }
}
