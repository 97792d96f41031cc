//! An instance folder's own build, run jailed on a copy: the folder (or the nearest folder
//! above it in the package) with a build system is copied into the tool job's scratch, and
//! - CMake: configured only, with the file API's codemodel query; its reply is read;
//! - Make (`make -k`), build scripts (`sh build.sh`), README command lines: run with every
//!   exec of the tree recorded; the compiler, archiver and linker calls are read.
//!
//! One run per build folder per package (folders sharing a Makefile share its run). A build
//! that fails, hangs, or is refused by the jail is an `Observation::Failed` with the log's
//! tail: the static reader answers for that instance, labelled.

use super::runner::{RunJob, RunOutcome, ToolRunner, host_program};
use super::{codemodel, trace};
use crate::candidate::ngcc::model::BuildModel;
use crate::candidate::ngcc::package::Folder;
use crate::candidate::ngcc::{Observation, Observer, build_files, safe, script};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

/// Where the copy goes in scratch.
const COPY: &str = "src";

pub struct BuildObserver<'a> {
    runner: &'a dyn ToolRunner,
    wall_s: f64,
    /// Build folder → what its build said (filled once, however many folders ask at once).
    done: Mutex<HashMap<PathBuf, Arc<OnceLock<Observation>>>>,
    /// One line per build run, for the package's log (`how`, wall seconds, result).
    pub log: Mutex<Vec<String>>,
}

impl<'a> BuildObserver<'a> {
    pub fn new(runner: &'a dyn ToolRunner, wall_s: f64) -> Self {
        BuildObserver {
            runner,
            wall_s,
            done: Mutex::new(HashMap::new()),
            log: Mutex::new(Vec::new()),
        }
    }

    fn job(&self, dir: &Path, label: String, program: PathBuf, args: Vec<String>) -> RunJob {
        RunJob {
            label,
            program,
            args,
            cwd: PathBuf::from(COPY),
            copy_in: vec![(dir.to_path_buf(), PathBuf::from(COPY))],
            trace: true,
            wall_s: self.wall_s,
        }
    }

    /// Runs one build file of `dir`.
    fn run_one(&self, package: &Path, dir: &Path, file: &Path, kind: &str) -> Observation {
        let name = file
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        let rel = dir
            .strip_prefix(package)
            .unwrap_or(dir)
            .display()
            .to_string();
        let label = format!("observe {rel}/{name}");
        let tool = |t: &str| host_program(t).ok_or_else(|| format!("{t} is not installed"));
        let (job, how) = match kind {
            "CMake" => {
                let Ok(sh) = tool("sh") else {
                    return Observation::Failed("sh is not installed".into());
                };
                if let Err(e) = tool("cmake") {
                    return Observation::Failed(e);
                }
                // Configure only: the query file asks CMake for its codemodel.
                let script = format!(
                    "mkdir -p build/.cmake/api/v1/query && : > build/.cmake/api/v1/query/codemodel-v2 && exec cmake -S {COPY} -B build"
                );
                let mut j = self.job(dir, label, sh, vec!["-c".into(), script]);
                j.cwd = PathBuf::new();
                j.trace = false;
                (j, "cmake codemodel".to_string())
            }
            "Makefile" => match tool("make") {
                Ok(make) => (
                    self.job(
                        dir,
                        label,
                        make,
                        vec!["-k".into(), "-f".into(), name.clone()],
                    ),
                    format!("make -f {name}"),
                ),
                Err(e) => return Observation::Failed(e),
            },
            "script" => {
                let text = safe::read_text(file, package).unwrap_or_default();
                let shell = if text.lines().next().is_some_and(|l| l.contains("bash")) {
                    "bash"
                } else {
                    "sh"
                };
                match tool(shell) {
                    Ok(sh) => (
                        self.job(dir, label, sh, vec![name.clone()]),
                        format!("{shell} {name}"),
                    ),
                    Err(e) => return Observation::Failed(e),
                }
            }
            _ => {
                // README: only its compiler command lines, one after the other.
                let text = match safe::read_text(file, package) {
                    Ok(t) => t,
                    Err(e) => return Observation::Failed(format!("{e:#}")),
                };
                let cmds = script::readme_commands(&text);
                if cmds.is_empty() {
                    return Observation::NoBuild;
                }
                let lines: Vec<String> = cmds.iter().map(|(_, w)| w.join(" ")).collect();
                let at: Vec<String> = cmds.iter().map(|(n, _)| n.to_string()).collect();
                let Ok(sh) = tool("sh") else {
                    return Observation::Failed("sh is not installed".into());
                };
                (
                    self.job(dir, label, sh, vec!["-c".into(), lines.join("\n")]),
                    format!("{name} line {}", at.join(",")),
                )
            }
        };
        let out = match self.runner.run(&job) {
            Ok(o) => o,
            Err(e) => return Observation::Failed(format!("{how}: {e}")),
        };
        let result = read_outcome(&out, dir, &how, kind);
        self.log
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(format!(
                "{rel}: {how}: {:.1} s, {}",
                out.wall_s,
                match &result {
                    Observation::Built { model, .. } =>
                        format!("{} program(s)", model.programs.len()),
                    Observation::Failed(w) => w.clone(),
                    Observation::NoBuild => "nothing to run".into(),
                }
            ));
        result
    }
}

/// What a finished run says.
fn read_outcome(out: &RunOutcome, dir: &Path, how: &str, kind: &str) -> Observation {
    let map = trace::Mapping {
        copy: out.scratch.join(COPY),
        orig: dir.to_path_buf(),
    };
    let failed = |why: String| {
        let tail = out.tail(4);
        Observation::Failed(if tail.is_empty() {
            format!("{how}: {why}")
        } else {
            format!("{how}: {why}; log: {tail}")
        })
    };
    if kind == "CMake" {
        if let Some(f) = &out.failure {
            return failed(f.clone());
        }
        return match codemodel::read(&out.scratch.join("build"), &map) {
            Ok(model) => built(model, how),
            Err(e) => failed(format!("{e:#}")),
        };
    }
    let model = trace::programs(&out.execs, how, &map);
    if model.programs.is_empty() {
        return failed(match &out.failure {
            Some(f) => f.clone(),
            None => "it linked no program".into(),
        });
    }
    // A timeout or a refused step after the KAT program was linked still taught us the
    // program; a failed run that never linked a KAT driver did not build the instance.
    let links_kat = model.programs.iter().any(|p| {
        p.sources
            .iter()
            .any(|s| crate::candidate::ngcc::is_kat_driver(&s.value))
    });
    if let Some(f) = &out.failure
        && !links_kat
    {
        return failed(format!(
            "{f} before linking a KAT program (it linked {})",
            model
                .programs
                .iter()
                .map(|p| p.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let mut model = model;
    if let Some(f) = &out.failure {
        model.notes.push(format!(
            "{how} {f} after linking {} program(s)",
            model.programs.len()
        ));
    }
    built(model, how)
}

fn built(model: BuildModel, how: &str) -> Observation {
    Observation::Built {
        model,
        how: how.to_string(),
    }
}

impl Observer for BuildObserver<'_> {
    fn observe(&self, package: &Path, folder: &Folder) -> Observation {
        // The folder's own build files, else the nearest folder above that has some.
        let mut dir = folder.root.clone();
        let files = loop {
            let files = build_files(&dir);
            if !files.is_empty() {
                break files;
            }
            if dir == package || !dir.starts_with(package) {
                return Observation::NoBuild;
            }
            match dir.parent() {
                Some(p) => dir = p.to_path_buf(),
                None => return Observation::NoBuild,
            }
        };
        let cell = self
            .done
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(dir.clone())
            .or_default()
            .clone();
        cell.get_or_init(|| self.run_all(package, &dir, &files))
            .clone()
    }
}

impl BuildObserver<'_> {
    /// The build files of `dir` in the static reader's order; the first that links a
    /// program answers.
    fn run_all(
        &self,
        package: &Path,
        dir: &Path,
        files: &[(PathBuf, &'static str)],
    ) -> Observation {
        let mut first_failure: Option<Observation> = None;
        let mut result = Observation::NoBuild;
        for (file, kind) in files {
            match self.run_one(package, dir, file, kind) {
                o @ Observation::Built { .. } => {
                    result = o;
                    first_failure = None;
                    break;
                }
                Observation::NoBuild => {}
                f => {
                    if first_failure.is_none() {
                        first_failure = Some(f);
                    }
                }
            }
        }
        if let Some(f) = first_failure {
            result = f;
        }
        result
    }
}
