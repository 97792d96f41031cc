//! `ngcc-perf import ngcc PACKAGE --id ID --out DIR`: an unpacked official NGCC submission
//! package → a commented candidate.toml. Build files are read, never run. Every value
//! written says where it came from; what cannot be decided is reported, not guessed silently.

mod cmake;
mod emit;
mod makefile;
pub(crate) mod model;
mod overrides;
pub(crate) mod package;
pub(crate) mod safe;
pub(crate) mod script;
#[cfg(test)]
mod select_tests;

use crate::candidate::exclude::excluded_path;
use crate::candidate::kat_manifest::Manifest;
use crate::candidate::{Api, Candidate, Instance, Kind};
use crate::util::{Failure, atomic_write, sha256_file};
use anyhow::{Context, Result};
use model::{BuildModel, Program};
use package::{Folder, Naming};
use regex_lite::Regex;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::OnceLock;

/// What `import ngcc` is given.
#[derive(Clone, Debug)]
pub struct Options {
    pub package: PathBuf,
    pub id: String,
    pub kat_manifest: Option<PathBuf>,
    pub iccs_helpers: Option<PathBuf>,
    pub overrides: Option<PathBuf>,
}

/// One value written to the manifest and its comment.
#[derive(Clone, Debug, Default)]
pub struct Noted {
    pub value: String,
    pub note: String,
}

/// Everything decided for one instance, with the reasons.
#[derive(Clone, Debug, Default)]
pub struct Found {
    pub label: String,
    pub label_why: String,
    pub folder: String,
    pub build: String,
    /// `None`: the default `*.c`/`*.S` glob.
    pub sources: Option<Vec<Noted>>,
    pub sources_why: String,
    pub extra_sources: Vec<Noted>,
    pub include: Vec<Noted>,
    pub defines: Vec<Noted>,
    pub cflags: Vec<Noted>,
    pub ldlibs: Vec<Noted>,
    pub own_drng_ctx: Option<String>,
    pub header: Option<String>,
    pub helpers: String,
    pub dropped: Vec<String>,
    pub overrides: Vec<String>,
    /// An override drops the instance.
    pub skipped: bool,
    pub problems: Vec<String>,
    pub instance: Instance,
    /// Hashes of every source and header the instance compiles.
    pub digest: String,
    /// How the instance was learned: `build` (its own build, observed), `static` (the build
    /// files read as text), `folder` (no build system: the folder's files), `override`.
    pub learned: String,
    /// Where the build's answer and the static reader's differ (empty when they agree or
    /// only one answered).
    pub disagreements: Vec<String>,
    /// A build program was chosen for the instance (not the default glob).
    pub chosen: bool,
}

/// What running a folder's own build said (computed by `observe`, which runs it jailed).
#[derive(Clone)]
pub enum Observation {
    /// The build ran: its programs, every path mapped back into the package, and how it ran
    /// (`make`, `cmake codemodel`, `sh build.sh`, `README.txt command`).
    Built { model: BuildModel, how: String },
    /// The folder (and the folders above it in the package) have no build system.
    NoBuild,
    /// The build could not run or failed: why, with its log's tail.
    Failed(String),
}

/// Runs an instance folder's own build (the importer itself never runs anything).
pub trait Observer: Sync {
    fn observe(&self, package: &Path, folder: &Folder) -> Observation;
}

/// The import's result: the candidate and the notes the manifest and table show.
#[derive(Debug)]
pub struct Imported {
    pub cand: Candidate,
    pub found: Vec<Found>,
    pub problems: Vec<String>,
    pub header: Vec<String>,
    pub manifest_text: Option<String>,
}

pub fn run(opts: &Options, out: Option<&Path>, dry_run: bool) -> Result<ExitCode> {
    run_with(opts, out, dry_run, None)
}

/// `run`, learning each instance from its own build when `observer` is given.
pub fn run_with(
    opts: &Options,
    out: Option<&Path>,
    dry_run: bool,
    observer: Option<&dyn Observer>,
) -> Result<ExitCode> {
    let imp = import_with(opts, observer)?;
    crate::util::out_text!("{}", emit::table(&imp));
    if dry_run {
        return Ok(ExitCode::SUCCESS);
    }
    let out =
        out.ok_or_else(|| Failure::usage("import ngcc: --out DIR is required (or --dry-run)"))?;
    write(&imp, out)?;
    crate::util::out!(
        "import ngcc: {} instances, {} problem(s) -> {}",
        imp.found.len(),
        imp.problems.len() + imp.found.iter().map(|f| f.problems.len()).sum::<usize>(),
        out.join("candidate.toml").display()
    );
    // Manifest paths outside the candidates folder are refused unless allowed (build::guard).
    let canon = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let outside: Vec<PathBuf> = std::iter::once(&opts.package)
        .chain(opts.iccs_helpers.as_ref())
        .map(|p| canon(p))
        .filter(|p| !p.starts_with(canon(out)))
        .collect();
    if !outside.is_empty() {
        let flags: Vec<String> = outside
            .iter()
            .map(|p| format!("--allow-source-root {}", p.display()))
            .collect();
        crate::util::out!(
            "import ngcc: the sources stay where they are; give the campaign {}",
            flags.join(" ")
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// The import's table, for callers that print several.
pub fn table(imp: &Imported) -> String {
    emit::table(imp)
}

/// Writes `out/candidate.toml` (and `kat.sha256`) and checks the manifest loads.
pub fn write(imp: &Imported, out: &Path) -> Result<()> {
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let path = out.join("candidate.toml");
    atomic_write(&path, emit::manifest(imp).as_bytes())?;
    if let Some(text) = &imp.manifest_text {
        atomic_write(&out.join("kat.sha256"), text.as_bytes())?;
    }
    // The manifest must load as any other would.
    Candidate::load(&path)
        .with_context(|| format!("{} as written does not load", path.display()))?;
    Ok(())
}

pub fn import(opts: &Options) -> Result<Imported> {
    import_with(opts, None)
}

/// `import`, learning each instance from its own build when `observer` is given; the static
/// reader then answers too, as the fallback and the cross-check.
pub fn import_with(opts: &Options, observer: Option<&dyn Observer>) -> Result<Imported> {
    let id_ok = !opts.id.is_empty()
        && opts
            .id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c));
    if !id_ok {
        return Err(Failure::usage(format!(
            "import ngcc: --id {:?} must be letters, digits, '-', '_' or '.'",
            opts.id
        )));
    }
    if !opts.package.is_dir() {
        return Err(Failure::usage(format!(
            "import ngcc: {}: no such package folder",
            opts.package.display()
        )));
    }
    let package = std::path::absolute(&opts.package)?;
    let package = package.canonicalize().unwrap_or(package);
    let helpers_dir = match &opts.iccs_helpers {
        Some(d) if !d.join("drng.c").is_file() => {
            return Err(Failure::usage(format!(
                "import ngcc: --iccs-helpers {}: no drng.c there",
                d.display()
            )));
        }
        Some(d) => Some(std::path::absolute(d)?),
        None => None,
    };
    let (manifest, manifest_text) = match &opts.kat_manifest {
        Some(p) => {
            let text = std::fs::read_to_string(p)
                .map_err(|e| Failure::usage(format!("import ngcc: {}: {e}", p.display())))?;
            let m = Manifest::parse(&text)
                .map_err(|e| Failure::usage(format!("import ngcc: {}: {e:#}", p.display())))?;
            (Some(m), Some(text))
        }
        None => (None, None),
    };
    let table = overrides::Table::load(opts.overrides.as_deref())
        .map_err(|e| Failure::usage(format!("import ngcc: {e:#}")))?;
    let applied: Vec<&overrides::Override> = table.for_id(&opts.id).collect();

    let (folders, others) =
        package::folders(&package).map_err(|e| Failure::usage(format!("import ngcc: {e:#}")))?;
    let kinds: Vec<Kind> = folders.iter().map(|f| f.kind).collect();
    let kind = kinds[0];
    if kinds.iter().any(|k| *k != kind) {
        let list: Vec<String> = folders
            .iter()
            .map(|f| format!("{} ({})", f.rel.display(), f.kind.as_str()))
            .collect();
        return Err(Failure::usage(format!(
            "import ngcc: the package mixes instance kinds: {}",
            list.join(", ")
        )));
    }
    let (names, unused) = package::name_folders(&folders, manifest.as_ref());
    let mut problems = Vec::new();
    if !others.is_empty() {
        problems.push(format!(
            "{} instance folder(s) outside the reference implementation left out: {}",
            others.len(),
            others
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    for l in &unused {
        problems.push(format!(
            "kat.sha256 names {l}, but no instance folder fits it"
        ));
    }
    let official = helpers_dir.as_deref();
    let mut found: Vec<Found> = Vec::new();
    for (folder, (label, naming)) in folders.iter().zip(names) {
        let mut f = learn(&package, folder, kind, official, observer);
        f.label = label.clone();
        f.label_why = match naming {
            Naming::Exact => "kat.sha256 (the folder names give the same label)".into(),
            Naming::Tokens(_) => {
                format!("kat.sha256 (every token of {label} is in the folder path)")
            }
            Naming::Single => "kat.sha256 (its only label, for the package's only instance)".into(),
            Naming::FromFolders => "the folder names (no kat.sha256 given)".into(),
            Naming::Unmatched => {
                f.problems.push(format!(
                    "no kat.sha256 label fits folder {}; labelled {label} from the folder names (its KAT will be NOKAT)",
                    folder.rel.display()
                ));
                "the folder names (no kat.sha256 label fits)".into()
            }
        };
        f.instance.label = label;
        found.push(f);
    }
    // Overrides, in table order.
    for o in &applied {
        for io in &o.instance {
            for f in found.iter_mut().filter(|f| io.matches(&f.label)) {
                if io.skip {
                    f.overrides.push(format!("skipped ({})", o.why));
                    f.skipped = true;
                    continue;
                }
                for change in io.apply(&mut f.instance) {
                    f.overrides.push(format!("{change} ({})", o.why));
                    f.learned = format!("{}+override", f.learned);
                }
            }
        }
    }
    let skipped: Vec<String> = found
        .iter()
        .filter(|f| f.skipped)
        .map(|f| f.label.clone())
        .collect();
    found.retain(|f| !skipped.contains(&f.label));
    identical_builds(&found, &mut problems);
    let labels: Vec<String> = found.iter().map(|f| f.label.clone()).collect();
    let algorithm = applied
        .iter()
        .find_map(|o| o.algorithm.clone())
        .unwrap_or_else(|| algorithm_name(&labels, &package));
    let mut header = vec![match observer {
        None => format!(
            "Written by `ngcc-perf import ngcc` from the package {} (its build files were read, never run).",
            package.display()
        ),
        Some(_) => format!(
            "Written by `ngcc-perf import ngcc` from the package {}: each instance learned from its own build, run in the jail on a copy (CMake: configure only, the file API's codemodel; Make, scripts, README commands: every compiler call traced); the build files read as text cross-check it and answer where the build cannot.",
            package.display()
        ),
    }];
    header.push(match &opts.kat_manifest {
        Some(p) => format!(
            "KAT manifest: kat.sha256 next to this file, copied from {}.",
            p.display()
        ),
        None => "No KAT manifest given (--kat-manifest): every KAT will be NOKAT.".into(),
    });
    header.push(match &helpers_dir {
        Some(d) => format!(
            "ICCS helpers: the package's own drng.c/auxfunc.c where an instance has them, else the official files of {}.",
            d.display()
        ),
        None => "ICCS helpers: the package's own drng.c/auxfunc.c where an instance has them, else ngcc-perf's own (bit-exact, faster; pass --iccs-helpers for the official files).".into(),
    });
    if applied.is_empty() {
        header.push(format!(
            "Overrides: none (the table shipped with ngcc-perf has no entry for {}).",
            opts.id
        ));
    } else {
        for o in &applied {
            header.push(format!("Override for {}: {}", opts.id, o.why));
        }
    }
    let cand = Candidate {
        id: opts.id.clone(),
        algorithm,
        kind,
        api: Api::Iccs,
        variant: None,
        package: Some(package.to_string_lossy().into_owned()),
        iccs_helpers: helpers_dir.map(|d| d.to_string_lossy().into_owned()),
        instances: found.iter().map(|f| f.instance.clone()).collect(),
        root: PathBuf::new(),
    };
    Ok(Imported {
        cand,
        found,
        problems,
        header,
        manifest_text,
    })
}

/// The algorithm: the tokens every label starts with (`Lore-SHAKE-L1`, `Lore-SM3-L2` → Lore).
fn algorithm_name(labels: &[String], package: &Path) -> String {
    let toks: Vec<Vec<String>> = labels.iter().map(|l| package::tokens(l)).collect();
    let mut common: Vec<String> = Vec::new();
    if let Some(first) = toks.first() {
        for (i, t) in first.iter().enumerate() {
            // Numbers are parameters, not the name.
            if t.chars().all(|c| c.is_ascii_digit()) || !toks.iter().all(|x| x.get(i) == Some(t)) {
                break;
            }
            common.push(t.clone());
        }
        if toks.len() == 1 && common.len() == first.len() && common.len() > 1 {
            common.pop();
        }
    }
    if common.is_empty() {
        package
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned()
    } else {
        common.join("-")
    }
}

/// Build files of a folder, in the order they are tried.
pub(crate) fn build_files(dir: &Path) -> Vec<(PathBuf, &'static str)> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    let mut names: Vec<String> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let rank = |n: &str| -> Option<(u8, &'static str)> {
        let l = n.to_ascii_lowercase();
        if matches!(n, "Makefile" | "makefile" | "GNUmakefile")
            || l.ends_with(".mk") && l.starts_with("make")
        {
            Some((0, "Makefile"))
        } else if n == "CMakeLists.txt" {
            Some((1, "CMake"))
        } else if l.ends_with(".sh")
            && (l.contains("build")
                || l.contains("compile")
                || l.contains("make")
                || l.contains("kat"))
        {
            Some((2, "script"))
        } else if l.starts_with("readme") || l.starts_with("build") && l.ends_with(".txt") {
            Some((3, "README"))
        } else {
            None
        }
    };
    let mut ranked: Vec<(u8, &'static str, String)> = names
        .into_iter()
        .filter_map(|n| rank(&n).map(|(r, k)| (r, k, n)))
        .collect();
    ranked.sort();
    for (_, k, n) in ranked {
        out.push((dir.join(n), k));
    }
    out
}

fn read_model(path: &Path, kind: &'static str, package: &Path) -> Result<BuildModel> {
    match kind {
        "Makefile" => makefile::read(path, package),
        "CMake" => cmake::read(path, package),
        k => script::read(path, k, package),
    }
}

/// A KAT driver among a program's inputs (official `KAT_*.c`, NIST `PQCgenKAT*`).
pub(crate) fn is_kat_driver(path: &str) -> bool {
    let name = Path::new(path)
        .file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .to_string();
    (name.starts_with("KAT_") || name.starts_with("PQCgenKAT"))
        && (name.ends_with(".c") || name.ends_with(".o"))
}

fn is_test_program(name: &str) -> bool {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"(?i)(test|bench|speed|example|demo|cycles|fuzz)").expect("valid regex")
    })
    .is_match(name)
}

/// Lowercase tokens of a name, with the digit runs inside tokens as tokens of their own
/// (`L1` → `l1`, `1`).
fn match_tokens(s: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for t in s
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|t| !t.is_empty())
    {
        out.push(t.to_ascii_lowercase());
        let mut digits = String::new();
        for c in t.chars().chain(std::iter::once(' ')) {
            if c.is_ascii_digit() {
                digits.push(c);
            } else if !digits.is_empty() {
                out.push(std::mem::take(&mut digits));
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// The program [`select`] chose, why, whether it is a KAT program (else the library), and
/// the problem to show when the folder name did not decide among several (`None` when the
/// choice was clear).
struct Selected<'a> {
    program: &'a Program,
    why: String,
    is_kat: bool,
    ambiguous: Option<String>,
}

/// The program that made the instance's KAT files, or the library: among several, the one
/// whose name and define values best match the folder's name (its level, its variant).
fn select<'a>(model: &'a BuildModel, folder: &Folder) -> Option<Selected<'a>> {
    let under_root = |p: &Program| {
        p.sources
            .iter()
            .any(|s| Path::new(&s.value).starts_with(&folder.root))
    };
    let relevant: Vec<&Program> = model
        .programs
        .iter()
        .filter(|p| {
            under_root(p)
                || !p.sources.is_empty() && model.file.parent() == Some(folder.root.as_path())
        })
        .collect();
    let kat: Vec<&Program> = relevant
        .iter()
        .copied()
        .filter(|p| p.sources.iter().any(|s| is_kat_driver(&s.value)) || p.name.contains("KAT"))
        .collect();
    let is_kat = !kat.is_empty();
    let (pool, what) = if is_kat {
        (kat, "the program that writes the KAT files")
    } else {
        let libs: Vec<&Program> = relevant
            .iter()
            .copied()
            .filter(|p| !is_test_program(&p.name))
            .collect();
        (
            libs,
            "no KAT program; the program that is not a test or benchmark",
        )
    };
    match pool.len() {
        0 => None,
        1 => Some(Selected {
            program: pool[0],
            why: what.to_string(),
            is_kat,
            ambiguous: None,
        }),
        _ => {
            let folder_name = folder
                .root
                .file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned();
            let wanted = match_tokens(&folder_name);
            let score = |p: &Program| -> usize {
                let mut have = match_tokens(&p.name);
                for d in &p.defines {
                    if let Some((_, v)) = d.value.split_once('=') {
                        have.extend(match_tokens(v));
                    }
                    have.extend(match_tokens(&d.value));
                }
                wanted.iter().filter(|t| have.contains(t)).count()
            };
            let mut scored: Vec<(usize, &Program)> = pool.iter().map(|p| (score(p), *p)).collect();
            scored.sort_by_key(|s| std::cmp::Reverse(s.0));
            let names: Vec<&str> = pool.iter().map(|p| p.name.as_str()).collect();
            if scored[0].0 > 0 && scored[1].0 < scored[0].0 {
                Some(Selected {
                    program: scored[0].1,
                    why: format!(
                        "{what}, chosen among {} by the folder name {folder_name}",
                        names.join(", ")
                    ),
                    is_kat,
                    ambiguous: None,
                })
            } else {
                let ambiguous = format!(
                    "AMBIGUOUS: {} programs in {} ({}) and the folder name {folder_name} does not pick one; took {} — check its defines, or add an override",
                    pool.len(),
                    model.file.file_name().unwrap_or_default().to_string_lossy(),
                    names.join(", "),
                    scored[0].1.name
                );
                Some(Selected {
                    program: scored[0].1,
                    why: format!("{what} (AMBIGUOUS, see the problems)"),
                    is_kat,
                    ambiguous: Some(ambiguous),
                })
            }
        }
    }
}

/// Defines `main` (a driver, never library code).
fn defines_main(path: &Path, package: &Path) -> bool {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE.get_or_init(|| Regex::new(r"(?m)^\s*(int|void)\s+main\s*\(").expect("valid regex"));
    safe::read(path, package)
        .map(|b| re.is_match(&String::from_utf8_lossy(&b)))
        .unwrap_or(false)
}

/// A file-scope definition of `drng_algorithm` (not an `extern` declaration); true when it
/// is in a header (a tentative definition every includer repeats: needs -fcommon).
fn drng_definition(path: &Path, package: &Path) -> Option<bool> {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE.get_or_init(|| {
        Regex::new(r"(?m)^[ \t]*(static[ \t]+)?(volatile[ \t]+)?DRNG_ctx[ \t]+drng_algorithm[ \t]*(=|;|\[)")
            .expect("valid regex")
    });
    let text = String::from_utf8_lossy(&safe::read(path, package).ok()?).into_owned();
    re.is_match(&text)
        .then(|| path.extension().is_some_and(|e| e == "h"))
}

/// `path` as the manifest writes it: relative to the instance folder, else `${PACKAGE}/…`.
fn manifest_path(path: &Path, root: &Path, package: &Path) -> (String, bool) {
    if let Ok(rel) = path.strip_prefix(root) {
        let s = rel.to_string_lossy().into_owned();
        return (if s.is_empty() { ".".into() } else { s }, true);
    }
    if let Ok(rel) = path.strip_prefix(package) {
        return (format!("${{PACKAGE}}/{}", rel.display()), false);
    }
    (path.to_string_lossy().into_owned(), false)
}

/// Everything about one instance folder except its label.
fn instance(
    package: &Path,
    folder: &Folder,
    kind: Kind,
    official: Option<&Path>,
    observed: Option<(&BuildModel, &str)>,
) -> Found {
    let root = &folder.root;
    let mut f = Found {
        folder: folder.rel.display().to_string(),
        ..Found::default()
    };
    let (dir_text, _) = manifest_path(root, package, package);
    let dir_text = if dir_text == "." {
        "${PACKAGE}".to_string()
    } else {
        format!("${{PACKAGE}}/{dir_text}")
    };
    let mut inst = Instance {
        dir: dir_text,
        ..Instance::default()
    };
    let (chosen, seen) = choose_program(&mut f, folder, package, observed);
    let chosen_prog = chosen.as_ref().map(|c| (&c.model, &c.prog));
    let mut from = match chosen_prog {
        Some((model, prog)) => program_sources(&mut f, &mut inst, model, prog, root, package),
        None => {
            f.build = if seen.is_empty() {
                "no build file: every C file of the folder".into()
            } else {
                format!(
                    "{} name no program: every C file of the folder",
                    seen.join(", ")
                )
            };
            Sources::default()
        }
    };
    // Without a program: every C file (the default glob, or below src/ trees).
    let direct_c = c_files(root, false);
    if chosen.is_none() {
        from = default_sources(&mut f, &mut inst, root, &direct_c, from.include_dirs);
    }
    link_helpers(
        &mut f,
        &mut from.files,
        kind,
        root,
        official,
        chosen_prog.map(|(_, p)| p),
    );
    list_sources(
        &mut f,
        &mut inst,
        &from.files,
        &direct_c,
        root,
        package,
        observed.is_some(),
        chosen.is_some(),
    );
    list_includes(&mut f, &mut inst, from.include_dirs, folder, root, package);
    // The shim includes the header by name; only unusual names need saying.
    if let Some(name) = unusual_header(kind, folder) {
        inst.header = Some(name.clone());
        f.header = Some(name);
    }
    let scan = own_drng(&mut f, &mut inst, &from.files, root, package);
    if from.files.is_empty() && f.sources.is_none() {
        f.problems
            .push(format!("no C sources in {}", folder.rel.display()));
    }
    // What the library is built from, by content (for the identical-builds check).
    let mut digests: Vec<String> = scan.iter().filter_map(|p| sha256_file(p).ok()).collect();
    digests.sort();
    f.digest = digests.join(",");
    f.instance = inst;
    f.chosen = chosen.is_some();
    f
}

/// The program an instance is built from, the build model that names it, and whether it is
/// a KAT program (else the library).
struct Chosen {
    model: BuildModel,
    prog: Program,
    is_kat: bool,
}

/// The program of the instance: the observed build's, else from the folder's own build
/// files, else the nearest folder's above that has one (a KAT program found further up
/// beats a library found nearer). Also returns the build files read, named from the
/// instance folder. Sets `f.build`, and adds the chosen model's notes and problems.
fn choose_program(
    f: &mut Found,
    folder: &Folder,
    package: &Path,
    observed: Option<(&BuildModel, &str)>,
) -> (Option<Chosen>, Vec<String>) {
    let mut chosen: Option<Chosen> = None;
    let mut seen: Vec<String> = Vec::new();
    let root = &folder.root;
    let mut dir = Some(root.as_path());
    // Where the chosen program's ambiguity sits in `f.problems`: a better choice later
    // removes it (by position, so no other problem is mistaken for it), keeping the order.
    let mut ambiguity: Option<usize> = None;
    if let Some((model, how)) = observed {
        // The build's own programs: nothing is read from the build files.
        dir = None;
        if let Some(Selected {
            program: prog,
            why,
            is_kat,
            ambiguous,
        }) = select(model, folder)
        {
            if let Some(a) = ambiguous {
                ambiguity = Some(f.problems.len());
                f.problems.push(a);
            }
            f.build = format!("{how}: {} ({why})", prog.name);
            note_all(f, model);
            chosen = Some(Chosen {
                model: model.clone(),
                prog: prog.clone(),
                is_kat,
            });
        }
    }
    while let Some(d) = dir {
        for (path, kind) in build_files(d) {
            let model = match read_model(&path, kind, package) {
                Ok(m) => m,
                Err(e) => {
                    f.problems.push(format!("{e:#}"));
                    continue;
                }
            };
            // Named from the instance folder: `Makefile`, `../Makefile`.
            let rel = relative_to(&path, root);
            seen.push(rel.clone());
            if let Some(Selected {
                program: prog,
                why,
                is_kat,
                ambiguous,
            }) = select(&model, folder)
            {
                // A KAT program found further up beats a library found nearer.
                let better = chosen.as_ref().is_none_or(|was| !was.is_kat && is_kat);
                if better {
                    if let Some(i) = ambiguity.take() {
                        f.problems.remove(i);
                    }
                    if let Some(a) = ambiguous {
                        ambiguity = Some(f.problems.len());
                        f.problems.push(a);
                    }
                    let prog = prog.clone();
                    note_all(f, &model);
                    f.build = format!("{}: {} ({why})", rel, prog.name);
                    chosen = Some(Chosen {
                        model,
                        prog,
                        is_kat,
                    });
                }
            }
        }
        if chosen.is_some() || d == package {
            break;
        }
        dir = d.parent();
    }
    (chosen, seen)
}

/// The C files an instance is built from and the include folders its build names, each
/// with where it came from (the build file's words, or empty).
#[derive(Default)]
struct Sources {
    files: Vec<(PathBuf, String)>,
    include_dirs: Vec<(PathBuf, String)>,
}

/// The sources, include folders, defines, flags and libraries of the chosen program;
/// files it names that are not in the package, drivers and unusable flags are dropped,
/// saying so.
fn program_sources(
    f: &mut Found,
    inst: &mut Instance,
    model: &BuildModel,
    prog: &Program,
    root: &Path,
    package: &Path,
) -> Sources {
    let mut out = Sources::default();
    let file = model
        .file
        .file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned();
    for s in &prog.sources {
        let mut p = PathBuf::from(&s.value);
        if p.extension().is_some_and(|e| e == "o" || e == "obj") {
            p = p.with_extension("c");
        }
        if !p.is_file() {
            f.dropped.push(format!(
                "{} (named by {file}, not in the package)",
                p.file_name().unwrap_or_default().to_string_lossy()
            ));
            continue;
        }
        if out.files.iter().any(|(q, _)| *q == p) {
            continue;
        }
        let rel = p
            .strip_prefix(root)
            .map(Path::to_path_buf)
            .unwrap_or_else(|_| PathBuf::from(p.file_name().unwrap_or_default()));
        if excluded_path(&rel) {
            if defines_main(&p, package) || is_kat_driver(&s.value) {
                f.dropped.push(format!(
                    "{} (KAT driver, main, test or benchmark)",
                    rel.display()
                ));
                continue;
            }
            // Named like a test but library code the KAT program links: kept, as
            // extra_sources (never filtered).
            f.extra_sources.push(Noted {
                value: format!(
                    "${{PACKAGE}}/{}",
                    p.strip_prefix(package).unwrap_or(&p).display()
                ),
                note: format!(
                    "named like a test, but {} links it and it has no main()",
                    prog.name
                ),
            });
            continue;
        }
        out.files.push((p, s.from.clone()));
    }
    for i in &prog.includes {
        out.include_dirs
            .push((PathBuf::from(&i.value), i.from.clone()));
    }
    for d in &prog.defines {
        inst.defines.push(d.value.clone());
        f.defines.push(Noted {
            value: d.value.clone(),
            note: d.from.clone(),
        });
    }
    for c in &prog.cflags {
        inst.cflags.push(c.value.clone());
        f.cflags.push(Noted {
            value: c.value.clone(),
            note: c.from.clone(),
        });
    }
    for l in &prog.ldlibs {
        inst.ldlibs.push(l.value.clone());
        f.ldlibs.push(Noted {
            value: l.value.clone(),
            note: l.from.clone(),
        });
    }
    if !prog.dropped.is_empty() {
        f.dropped.push(format!(
            "flags {} (ngcc-perf's fixed flag sets apply)",
            prog.dropped.join(" ")
        ));
    }
    f.sources_why = format!("{} of {}", prog.name, file);
    out
}

/// Without a program: the folder's C files (`direct_c`), or, when it has none directly,
/// every C file below it (`**/*.c`) with every folder that has headers.
fn default_sources(
    f: &mut Found,
    inst: &mut Instance,
    root: &Path,
    direct_c: &[PathBuf],
    mut include_dirs: Vec<(PathBuf, String)>,
) -> Sources {
    let all = c_files(root, true);
    let files = if direct_c.is_empty() && !all.is_empty() {
        inst.sources = vec!["**/*.c".into()];
        f.sources = Some(vec![Noted {
            value: "**/*.c".into(),
            note: "no C file directly in the folder: every one below it (KAT drivers, mains, tests and benchmarks are never compiled)".into(),
        }]);
        for d in header_dirs(root) {
            include_dirs.push((d, "a folder with headers".into()));
        }
        all.into_iter().map(|p| (p, String::new())).collect()
    } else {
        direct_c
            .iter()
            .map(|p| (p.clone(), String::new()))
            .collect()
    };
    f.sources_why = "the default glob *.c, *.S (minus KAT drivers, mains, tests)".into();
    Sources {
        files,
        include_dirs,
    }
}

/// The package's own ICCS helpers are linked whenever it has them (added to `sources`
/// when the chosen program does not link them); `f.helpers` says where each comes from.
fn link_helpers(
    f: &mut Found,
    sources: &mut Vec<(PathBuf, String)>,
    kind: Kind,
    root: &Path,
    official: Option<&Path>,
    chosen: Option<&Program>,
) {
    let mut helper_notes = Vec::new();
    let wanted: &[&str] = if kind == Kind::Hash {
        &["drng.c"]
    } else {
        &["drng.c", "auxfunc.c"]
    };
    for name in wanted {
        let have = sources
            .iter()
            .any(|(p, _)| p.file_name().is_some_and(|n| n == *name));
        let own = root.join(name);
        let added = !have && chosen.is_some() && own.is_file();
        if added {
            sources.push((
                own.clone(),
                format!("the package's own {name}; not in {}", f.sources_why),
            ));
        }
        let linked = sources
            .iter()
            .find(|(p, _)| p.file_name().is_some_and(|n| n == *name));
        let mut note = match (linked, official) {
            (Some((p, _)), Some(o)) => {
                let same = sha256_file(p).ok() == sha256_file(&o.join(name)).ok();
                format!(
                    "{name}: package ({})",
                    if same {
                        "identical to the official file"
                    } else {
                        "modified"
                    }
                )
            }
            (Some(_), None) => format!("{name}: package"),
            (None, Some(o)) if o.join(name).is_file() => format!("{name}: official"),
            (None, _) => format!("{name}: embedded"),
        };
        if added {
            let by = chosen.map_or("the build file", |p| p.name.as_str());
            note.push_str(&format!(
                " (not linked by {by}; linked so that no other {name} is)"
            ));
        }
        helper_notes.push(note);
    }
    f.helpers = helper_notes.join(", ");
}

/// Writes the sources into the instance: nothing when they are exactly the default glob,
/// else each file in the folder as an escaped glob and each outside as an extra source.
#[allow(clippy::too_many_arguments)]
fn list_sources(
    f: &mut Found,
    inst: &mut Instance,
    sources: &[(PathBuf, String)],
    direct_c: &[PathBuf],
    root: &Path,
    package: &Path,
    observed: bool,
    chosen: bool,
) {
    if inst.sources.is_empty() {
        let default: Vec<PathBuf> = direct_c
            .iter()
            .filter(|p| !excluded_path(p.strip_prefix(root).unwrap_or(p)))
            .cloned()
            .collect();
        let mine: Vec<PathBuf> = {
            let mut v: Vec<PathBuf> = sources.iter().map(|(p, _)| p.clone()).collect();
            v.sort();
            v
        };
        let mut def_sorted = default.clone();
        def_sorted.sort();
        if mine == def_sorted {
            f.sources = None;
            if chosen {
                f.sources_why =
                    format!("{} (the same files as the default glob *.c)", f.sources_why);
            }
        } else {
            let mut listed = Vec::new();
            for (p, from) in sources {
                let (text, inside) = manifest_path(p, root, package);
                if inside {
                    inst.sources.push(glob::Pattern::escape(&text));
                    listed.push(Noted {
                        value: glob::Pattern::escape(&text),
                        note: if from.contains("the package's own") || observed {
                            from.clone()
                        } else {
                            String::new()
                        },
                    });
                } else {
                    inst.extra_sources.push(text.clone());
                    f.extra_sources.push(Noted {
                        value: text,
                        note: format!("outside the instance folder; {from}"),
                    });
                }
            }
            f.sources = Some(listed);
        }
    }
    for e in &f.extra_sources {
        if !inst.extra_sources.contains(&e.value) {
            inst.extra_sources.push(e.value.clone());
        }
    }
}

/// Include folders: the instance folder, the build file's, the header's (none written
/// when only the instance folder is left).
fn list_includes(
    f: &mut Found,
    inst: &mut Instance,
    mut include_dirs: Vec<(PathBuf, String)>,
    folder: &Folder,
    root: &Path,
    package: &Path,
) {
    let header_dir = folder.header.parent().filter(|p| !p.as_os_str().is_empty());
    if let Some(h) = header_dir {
        include_dirs.push((root.join(h), "the folder of the instance header".into()));
    }
    if !include_dirs.is_empty() {
        let mut push = |text: String, note: String| {
            if !inst.include.contains(&text) {
                inst.include.push(text.clone());
                f.include.push(Noted { value: text, note });
            }
        };
        push(".".into(), "the instance folder".into());
        for (d, from) in include_dirs {
            if !d.is_dir() {
                f.dropped.push(format!(
                    "include folder {} (not in the package)",
                    d.display()
                ));
                continue;
            }
            let (text, _) = manifest_path(&d, root, package);
            push(text, from);
        }
        if inst.include == ["."] {
            inst.include.clear();
            f.include.clear();
        }
    }
}

/// The instance header's name when it is not the kind's usual one.
fn unusual_header(kind: Kind, folder: &Folder) -> Option<String> {
    let name = folder
        .header
        .file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned();
    let usual = match kind {
        Kind::Kem => "KEM_AlgorithmInstance.h",
        Kind::Sig => "SIG_AlgorithmInstance.h",
        Kind::Kex => "KEX_AlgorithmInstance.h",
        Kind::Hash => "CryptHash_AlgorithmInstance.h",
    };
    (name != usual).then_some(name)
}

/// The package's own drng_algorithm: looked for in the sources and the headers of the
/// include folders (`-fcommon` when a header defines it). Returns the files looked at,
/// sorted: what the library is built from.
fn own_drng(
    f: &mut Found,
    inst: &mut Instance,
    sources: &[(PathBuf, String)],
    root: &Path,
    package: &Path,
) -> Vec<PathBuf> {
    let mut scan: Vec<PathBuf> = sources.iter().map(|(p, _)| p.clone()).collect();
    let mut inc_dirs: Vec<PathBuf> = vec![root.to_path_buf()];
    inc_dirs.extend(
        inst.include
            .iter()
            .map(|i| normalize_join(root, i, package)),
    );
    for d in &inc_dirs {
        if let Ok(entries) = std::fs::read_dir(d) {
            scan.extend(
                entries
                    .flatten()
                    .map(|e| e.path())
                    .filter(|p| p.extension().is_some_and(|e| e == "h")),
            );
        }
    }
    scan.sort();
    scan.dedup();
    for p in &scan {
        if let Some(in_header) = drng_definition(p, package) {
            let rel = p.strip_prefix(root).unwrap_or(p).display().to_string();
            inst.own_drng_ctx = true;
            f.own_drng_ctx = Some(format!("{rel} defines drng_algorithm"));
            if in_header && !inst.cflags.iter().any(|c| c == "-fcommon") {
                inst.cflags.push("-fcommon".into());
                f.cflags.push(Noted {
                    value: "-fcommon".into(),
                    note: format!("{rel} defines drng_algorithm in a header (one tentative definition per includer)"),
                });
            }
            break;
        }
    }
    scan
}

/// A reader's notes: problems (an include that leaves the package) and what was left out.
fn note_all(f: &mut Found, model: &BuildModel) {
    f.problems.extend(model.problems.iter().cloned());
    f.dropped.extend(model.notes.iter().cloned());
}

/// One instance: from its own build when an observer runs it (the static reader's answer
/// kept as the cross-check), else from the build files read as text.
fn learn(
    package: &Path,
    folder: &Folder,
    kind: Kind,
    official: Option<&Path>,
    observer: Option<&dyn Observer>,
) -> Found {
    let mut stat = instance(package, folder, kind, official, None);
    let Some(observer) = observer else {
        stat.learned = "static".into();
        return stat;
    };
    let why = match observer.observe(package, folder) {
        Observation::Built { model, how } => {
            let mut built = instance(package, folder, kind, official, Some((&model, &how)));
            if built.chosen {
                built.learned = "build".into();
                built.disagreements = compare(&built.instance, &stat.instance);
                if !stat.chosen {
                    built.disagreements.clear();
                    built
                        .dropped
                        .push(format!("static reader: {} (no cross-check)", stat.build));
                }
                return built;
            }
            format!("{how} ran, but no program it built compiles this folder's sources")
        }
        Observation::NoBuild => {
            // Nothing to run: the default glob of the folder is the instance (as the
            // reference harness builds such packages).
            stat.learned = if stat.chosen { "static" } else { "folder" }.into();
            return stat;
        }
        Observation::Failed(why) => why,
    };
    stat.learned = "static".into();
    stat.problems.push(format!(
        "its build did not answer ({why}); the static reader's answer is used"
    ));
    stat
}

/// Where two answers for one instance differ, value by value.
fn compare(build: &Instance, stat: &Instance) -> Vec<String> {
    let set = |v: &[String]| -> std::collections::BTreeSet<String> { v.iter().cloned().collect() };
    let mut out = Vec::new();
    let fields: [(&str, &[String], &[String]); 6] = [
        ("sources", &build.sources, &stat.sources),
        ("extra_sources", &build.extra_sources, &stat.extra_sources),
        ("include", &build.include, &stat.include),
        ("defines", &build.defines, &stat.defines),
        ("cflags", &build.cflags, &stat.cflags),
        ("ldlibs", &build.ldlibs, &stat.ldlibs),
    ];
    for (name, b, s) in fields {
        let (b, s) = (set(b), set(s));
        if b == s {
            continue;
        }
        let only = |x: &std::collections::BTreeSet<String>,
                    y: &std::collections::BTreeSet<String>| {
            let v: Vec<&str> = x.difference(y).map(String::as_str).collect();
            if v.is_empty() {
                "-".to_string()
            } else {
                v.join(" ")
            }
        };
        out.push(format!(
            "{name}: only the build has {}; only the static reader has {}",
            only(&b, &s),
            only(&s, &b)
        ));
    }
    if build.own_drng_ctx != stat.own_drng_ctx {
        out.push(format!(
            "own_drng_ctx: the build says {}, the static reader {}",
            build.own_drng_ctx, stat.own_drng_ctx
        ));
    }
    out
}

/// `path` relative to `base` (with `..` where it lies above).
fn relative_to(path: &Path, base: &Path) -> String {
    let mut up = 0;
    let mut b = base;
    loop {
        if let Ok(rest) = path.strip_prefix(b) {
            let mut s = "../".repeat(up);
            s.push_str(&rest.to_string_lossy());
            return s;
        }
        match b.parent() {
            Some(p) => {
                b = p;
                up += 1;
            }
            None => return path.display().to_string(),
        }
    }
}

fn normalize_join(root: &Path, spec: &str, package: &Path) -> PathBuf {
    match spec.strip_prefix("${PACKAGE}/") {
        Some(rest) => package.join(rest),
        None => model::normalize(&root.join(spec)),
    }
}

/// C files of a folder (recursive: below it too, outside excluded folders).
fn c_files(root: &Path, recursive: bool) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            let rel = p.strip_prefix(root).unwrap_or(&p).to_path_buf();
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                if recursive && !excluded_path(&rel.join("x.c")) {
                    stack.push(p);
                }
            } else if p.extension().is_some_and(|x| x == "c" || x == "S") && !excluded_path(&rel) {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// Folders below `root` holding headers (outside excluded folders), for src/ trees.
fn header_dirs(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        let mut has_h = false;
        for e in entries.flatten() {
            let p = e.path();
            let rel = p.strip_prefix(root).unwrap_or(&p).to_path_buf();
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                if !excluded_path(&rel.join("x.c")) {
                    stack.push(p);
                }
            } else if p.extension().is_some_and(|x| x == "h") {
                has_h = true;
            }
        }
        if has_h && d != root {
            out.push(d);
        }
    }
    out.sort();
    out
}

/// Instances whose libraries would be identical (same sources, headers and flags): the
/// level or variant is chosen somewhere the importer did not see.
fn identical_builds(found: &[Found], problems: &mut Vec<String>) {
    let key = |f: &Found| -> String {
        let i = &f.instance;
        // Contents, not names: folders of different levels hold files of the same names.
        format!("{:?}{:?}{}", i.defines, i.cflags, f.digest)
    };
    let keys: Vec<String> = found.iter().map(key).collect();
    for (i, k) in keys.iter().enumerate() {
        let same: Vec<&str> = keys
            .iter()
            .enumerate()
            .filter(|(j, kj)| *j > i && *kj == k)
            .map(|(j, _)| found[j].label.as_str())
            .collect();
        if !same.is_empty() && !keys[..i].contains(k) {
            problems.push(format!(
                "{} and {} would build the same library (same files and defines): the parameter set is chosen somewhere the build files do not say — add an override",
                found[i].label,
                same.join(", ")
            ));
        }
    }
}

/// Runs `import ngcc` from the CLI arguments.
pub fn cli(args: &crate::candidate::import::ImportArgs) -> Result<ExitCode> {
    let package = args.dir.clone().ok_or_else(|| {
        Failure::usage(
            "import ngcc: give the package folder: import ngcc PACKAGE_DIR --id ID --out DIR",
        )
    })?;
    let id = args.id.clone().ok_or_else(|| {
        Failure::usage("import ngcc: --id ID is required (the candidate id, e.g. kem-19)")
    })?;
    let opts = Options {
        package,
        id,
        kat_manifest: args.kat_manifest.clone(),
        iccs_helpers: args.iccs_helpers.clone(),
        overrides: args.overrides.clone(),
    };
    run(&opts, args.out.as_deref(), args.dry_run)
}
