//! Build observation: learn an NGCC instance from the package's own build, run in the jail,
//! instead of imitating Make or CMake. `import ngcc TREE --harness DIR --out CANDS` finds
//! every package of a submission tree (`tree`), names it by the harness manifest its
//! instance labels match, and imports each with the static importer
//! (`candidate::ngcc`) asking an observer (`observer`) for each instance folder: CMake
//! configured only and its codemodel read (`codemodel`), Make, build scripts and README
//! command lines run with every exec traced (`trace`). All runs go through `runner`, whose
//! product implementation is `sandbox::tool` (the candidate jail). The static reader is the
//! fallback (labelled) and the cross-check (disagreements listed).
//!
//! Layer 4 (beside `build` and `kat`): it runs tools through the sandbox and feeds the
//! candidate importer, and nothing below it knows it exists.

pub mod codemodel;
pub mod observer;
pub mod runner;
pub mod trace;
pub mod tree;

use crate::candidate::import::ImportArgs;
use crate::candidate::ngcc::{self, Options, package};
use crate::sandbox::tool::ToolError;
use crate::util::Failure;
use anyhow::Result;
use runner::{RunJob, RunOutcome, ToolRunner};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Condvar, Mutex};
use std::time::Instant;

/// Wall-time bound of one build observation (a configure, a `make`, a script) by default.
pub const DEFAULT_WALL_S: f64 = 300.0;

/// At most `n` tool runs at once, whatever runs them (packages and folders in parallel).
pub struct Limited<'a> {
    inner: &'a dyn ToolRunner,
    free: Mutex<usize>,
    cv: Condvar,
}

impl<'a> Limited<'a> {
    pub fn new(inner: &'a dyn ToolRunner, n: usize) -> Self {
        Limited {
            inner,
            free: Mutex::new(n.max(1)),
            cv: Condvar::new(),
        }
    }
}

impl ToolRunner for Limited<'_> {
    fn run(&self, job: &RunJob) -> std::result::Result<RunOutcome, ToolError> {
        {
            let mut free = self.free.lock().unwrap_or_else(|e| e.into_inner());
            while *free == 0 {
                free = self.cv.wait(free).unwrap_or_else(|e| e.into_inner());
            }
            *free -= 1;
        }
        let out = self.inner.run(job);
        *self.free.lock().unwrap_or_else(|e| e.into_inner()) += 1;
        self.cv.notify_one();
        out
    }
}

/// `import ngcc …`: a tree (with `--harness`, or without `--id`) or one package (`--id`).
pub fn cli(args: &ImportArgs) -> Result<ExitCode> {
    let dir = args.dir.clone().ok_or_else(|| {
        Failure::usage(
            "import ngcc: give the tree or package folder: import ngcc TREE --harness DIR --out CANDS, or import ngcc PACKAGE --id ID --out DIR",
        )
    })?;
    // The operator's NGCC_PERF_JAIL_OFF, read once for the whole import.
    let jail = runner::Jailed {
        scratch_in: None,
        jail: crate::sandbox::jail::JailOptions::from_env(),
    };
    let limited = Limited::new(&jail, args.jobs.unwrap_or(2));
    let wall_s = args.observe_timeout.unwrap_or(DEFAULT_WALL_S);
    if let (Some(id), None) = (&args.id, &args.harness) {
        let opts = Options {
            package: dir,
            id: id.clone(),
            kat_manifest: args.kat_manifest.clone(),
            iccs_helpers: args.iccs_helpers.clone(),
            overrides: args.overrides.clone(),
        };
        if args.static_only {
            return ngcc::run(&opts, args.out.as_deref(), args.dry_run);
        }
        let obs = observer::BuildObserver::new(&limited, wall_s);
        prefetch(&opts.package, &obs, args.jobs.unwrap_or(2));
        return ngcc::run_with(&opts, args.out.as_deref(), args.dry_run, Some(&obs));
    }
    let out = match (&args.out, args.dry_run) {
        (Some(o), _) => Some(o.clone()),
        (None, true) => None,
        (None, false) => {
            return Err(Failure::usage(
                "import ngcc TREE: --out CANDS is required (or --dry-run)",
            ));
        }
    };
    if !dir.is_dir() {
        return Err(Failure::usage(format!(
            "import ngcc: {}: no such folder",
            dir.display()
        )));
    }
    let t = TreeRun {
        tree: std::path::absolute(&dir)?,
        harness: args.harness.clone(),
        out,
        iccs_helpers: args.iccs_helpers.clone(),
        overrides: args.overrides.clone(),
        static_only: args.static_only,
        jobs: args.jobs.unwrap_or(2).max(1),
        wall_s,
        id: args.id.clone(),
    };
    let rows = import_tree(&t, &limited)?;
    crate::util::out_text!("{}", summary(&rows));
    if rows.is_empty() {
        return Err(Failure::usage(format!(
            "import ngcc: no package below {} (no folder holds a *_AlgorithmInstance.h)",
            dir.display()
        )));
    }
    if let Some(o) = &t.out {
        crate::util::out!(
            "import ngcc: then: ngcc-perf campaign build,kat --candidates {} --run RUN --allow-source-root {}",
            o.display(),
            t.tree.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// A tree import's settings.
pub struct TreeRun {
    pub tree: PathBuf,
    pub harness: Option<PathBuf>,
    pub out: Option<PathBuf>,
    pub iccs_helpers: Option<PathBuf>,
    pub overrides: Option<PathBuf>,
    pub static_only: bool,
    pub jobs: usize,
    pub wall_s: f64,
    /// Forces the id (a tree of one package).
    pub id: Option<String>,
}

/// One package's line of the closing table.
#[derive(Clone, Debug, Default)]
pub struct Row {
    pub package: String,
    pub id: String,
    pub id_why: String,
    pub instances: usize,
    pub problems: Vec<String>,
    /// `build 8`, `static 1`, `folder 6`.
    pub learned: String,
    pub disagreements: usize,
    pub wall_s: f64,
    /// Per-instance (label, learned).
    pub per_instance: Vec<(String, String)>,
}

/// Runs every folder's observation ahead of the import, `jobs` at a time (the observer
/// keeps the answers; the import then asks in its own order).
fn prefetch(pkg: &Path, obs: &observer::BuildObserver, jobs: usize) {
    use crate::candidate::ngcc::Observer;
    let pkg = pkg.canonicalize().unwrap_or_else(|_| pkg.to_path_buf());
    let Ok((folders, _)) = package::folders(&pkg) else {
        return;
    };
    let next = Mutex::new(0usize);
    std::thread::scope(|s| {
        for _ in 0..jobs.max(1).min(folders.len()) {
            s.spawn(|| {
                loop {
                    let i = {
                        let mut n = next.lock().unwrap_or_else(|e| e.into_inner());
                        *n += 1;
                        *n - 1
                    };
                    let Some(f) = folders.get(i) else { break };
                    let _ = obs.observe(&pkg, f);
                }
            });
        }
    });
}

/// Imports every package below the tree; one failing package is its row's problem.
pub fn import_tree(t: &TreeRun, runner: &dyn ToolRunner) -> Result<Vec<Row>> {
    let pkgs = tree::packages(&t.tree);
    let manifests = match &t.harness {
        Some(h) => {
            if !h.is_dir() {
                return Err(Failure::usage(format!(
                    "import ngcc: --harness {}: no such folder",
                    h.display()
                )));
            }
            tree::manifests(h)
        }
        None => Vec::new(),
    };
    // Ids first (cheap, in order): two packages never share one.
    let mut plans: Vec<(PathBuf, String, Option<PathBuf>, String)> = Vec::new();
    for p in &pkgs {
        let name = package::sanitize(&p.file_name().unwrap_or_default().to_string_lossy());
        let (id, man, why) = match (&t.id, tree::match_id(p, &manifests)) {
            (Some(id), (m, _)) => (
                id.clone(),
                m.filter(|(mid, _)| mid == id).map(|(_, p)| p),
                "--id".to_string(),
            ),
            (None, (Some((id, path)), why)) => (id, Some(path), why),
            (None, (None, why)) => (
                name.clone(),
                None,
                format!("{why}: imported under its folder name, every KAT will be NOKAT"),
            ),
        };
        let (id, why) = if plans.iter().any(|x| x.1 == id) {
            (
                format!("{id}-{name}"),
                format!("{why}; {id} was taken by another package, so {id}-{name}"),
            )
        } else {
            (id, why)
        };
        plans.push((p.clone(), id, man, why));
    }
    let rows: Mutex<Vec<Option<Row>>> = Mutex::new(vec![None; plans.len()]);
    let next = Mutex::new(0usize);
    let print = Mutex::new(());
    std::thread::scope(|s| {
        for _ in 0..t.jobs.min(plans.len()).max(1) {
            s.spawn(|| {
                loop {
                    let i = {
                        let mut n = next.lock().unwrap_or_else(|e| e.into_inner());
                        *n += 1;
                        *n - 1
                    };
                    let Some((pkg, id, man, why)) = plans.get(i) else {
                        break;
                    };
                    let (row, text) =
                        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                            one_package(t, runner, pkg, id, man.as_deref(), why)
                        }))
                        .unwrap_or_else(|_| {
                            (
                                Row {
                                    package: rel(&t.tree, pkg),
                                    id: id.clone(),
                                    problems: vec![
                                        "the import panicked (a bug: please report)".into(),
                                    ],
                                    ..Row::default()
                                },
                                String::new(),
                            )
                        });
                    {
                        let _g = print.lock().unwrap_or_else(|e| e.into_inner());
                        crate::util::out_text!("{text}");
                    }
                    rows.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(row);
                }
            });
        }
    });
    Ok(rows
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .into_iter()
        .flatten()
        .collect())
}

fn rel(tree: &Path, p: &Path) -> String {
    let r = p.strip_prefix(tree).unwrap_or(p).display().to_string();
    if r.is_empty() { ".".into() } else { r }
}

/// One package: imported, written, summarised. Never an error: a failure is its row's problem.
fn one_package(
    t: &TreeRun,
    runner: &dyn ToolRunner,
    pkg: &Path,
    id: &str,
    manifest: Option<&Path>,
    id_why: &str,
) -> (Row, String) {
    let start = Instant::now();
    let mut row = Row {
        package: rel(&t.tree, pkg),
        id: id.to_string(),
        id_why: id_why.to_string(),
        ..Row::default()
    };
    let opts = Options {
        package: pkg.to_path_buf(),
        id: id.to_string(),
        kat_manifest: manifest.map(Path::to_path_buf),
        iccs_helpers: t.iccs_helpers.clone(),
        overrides: t.overrides.clone(),
    };
    let obs = observer::BuildObserver::new(runner, t.wall_s);
    let result = if t.static_only {
        ngcc::import(&opts)
    } else {
        prefetch(pkg, &obs, t.jobs);
        ngcc::import_with(&opts, Some(&obs))
    };
    let mut text = String::new();
    match result {
        Ok(mut imp) => {
            if manifest.is_none() {
                imp.problems.push(format!("id {id}: {id_why}"));
            }
            text = ngcc::table(&imp);
            for l in obs.log.lock().unwrap_or_else(|e| e.into_inner()).iter() {
                text.push_str(&format!("  observed {l}\n"));
            }
            row.instances = imp.found.len();
            row.problems = imp.problems.clone();
            for f in &imp.found {
                row.problems
                    .extend(f.problems.iter().map(|p| format!("{}: {p}", f.label)));
                row.disagreements += f.disagreements.len();
                row.per_instance.push((f.label.clone(), f.learned.clone()));
            }
            let mut counts: Vec<(String, usize)> = Vec::new();
            for f in &imp.found {
                match counts.iter_mut().find(|(l, _)| *l == f.learned) {
                    Some(c) => c.1 += 1,
                    None => counts.push((f.learned.clone(), 1)),
                }
            }
            row.learned = counts
                .iter()
                .map(|(l, n)| format!("{l} {n}"))
                .collect::<Vec<_>>()
                .join(", ");
            if let Some(out) = &t.out
                && let Err(e) = ngcc::write(&imp, &out.join(id))
            {
                row.problems.push(format!("not written: {e:#}"));
            }
        }
        Err(e) => row.problems.push(format!("not imported: {e:#}")),
    }
    row.wall_s = start.elapsed().as_secs_f64();
    (row, text)
}

/// The closing table: package, id, instances, problems, how the instances were learned.
pub fn summary(rows: &[Row]) -> String {
    let head = [
        "package",
        "id",
        "instances",
        "problems",
        "learned",
        "disagreements",
        "wall s",
    ];
    let body: Vec<[String; 7]> = rows
        .iter()
        .map(|r| {
            [
                // A folder name is package text: no terminal controls reach the console.
                crate::util::text::terminal(&r.package),
                r.id.clone(),
                r.instances.to_string(),
                r.problems.len().to_string(),
                if r.learned.is_empty() {
                    "-".into()
                } else {
                    r.learned.clone()
                },
                r.disagreements.to_string(),
                format!("{:.1}", r.wall_s),
            ]
        })
        .collect();
    let mut out = String::from("\nimport ngcc: packages\n");
    for l in crate::util::columns(&head, &body) {
        out.push_str(&l);
        out.push('\n');
    }
    for r in rows {
        for p in &r.problems {
            out.push_str(&crate::util::text::terminal(&format!(
                "  - {} ({}): {p}\n",
                r.package, r.id
            )));
        }
    }
    out
}
