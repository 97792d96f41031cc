//! `import ngcc TREE --harness DIR --out CANDS`: every package of a submission tree learned
//! from its own build, run in the jail (tests/toys/ngcc-tree: CMake with
//! aux_source_directory in a src/ sub-project and a library chain, the level in
//! add_compile_definitions or a cache option; a Makefile with $(wildcard src/*/*.c) and VPATH;
//! a build.sh looping over the levels; a package writing obj/ and output/ into its own
//! folders; one defining drng_algorithm itself; one whose C99 plain `inline` links only with
//! gnu89 inline semantics), named by the harness manifest its labels
//! match (tests/toys/ngcc-harness, computed once with the official KAT driver), then built
//! and KAT-PASSed. Hostile packages (a build that hangs, forks without end, writes outside
//! its copy, needs the network) are that package's problem; the others import. The corpus:
//! every instance learned from its build, the static reader agreeing.

use crate::common;
use common::*;
use ngcc_perf::dataset::schema::{FlagSetName, KatStatus};
use std::path::{Path, PathBuf};

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Every file below `dir` (relative), sorted: what the import must leave unchanged.
fn listing(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            if e.file_type().unwrap().is_dir() {
                stack.push(e.path());
            } else {
                out.push((
                    e.path().strip_prefix(dir).unwrap().to_path_buf(),
                    std::fs::read(e.path()).unwrap(),
                ));
            }
        }
    }
    out.sort();
    out
}

/// The toy tree copied to `at` (the hostile Makefile's target set to a path of ours).
fn toy_tree(at: &Path, escape: &Path) -> PathBuf {
    let tree = at.join("submissions");
    copy_tree(&manifest_dir().join("tests/toys/ngcc-tree"), &tree);
    let mk = tree.join("99-hostile/Escape/Implementations/Escape-1/Makefile");
    let text = std::fs::read_to_string(&mk)
        .unwrap()
        .replace("ESCAPE_TARGET", s(escape));
    std::fs::write(mk, text).unwrap();
    tree
}

/// The closing table's row of a package: its cells.
fn row<'a>(table: &'a str, package: &str) -> Vec<&'a str> {
    let summary = table
        .rsplit_once("import ngcc: packages\n")
        .map_or(table, |(_, t)| t);
    summary
        .lines()
        .find(|l| l.split("  ").next() == Some(package))
        .unwrap_or_else(|| panic!("no row {package}\n{table}"))
        .split("  ")
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .collect()
}

#[test]
fn toy_tree_every_layout_learned_from_its_build_and_hostile_packages_stay_their_own_problem() {
    let dir = tempfile::tempdir().unwrap();
    let escape = dir.path().join("escaped");
    let tree = toy_tree(dir.path(), &escape);
    let before = listing(&tree);
    let cands = dir.path().join("cands");
    let harness = manifest_dir().join("tests/toys/ngcc-harness");
    // The hang is stopped by the wall bound (10 s here, 300 s by default).
    let out = run_ok(&[
        "import",
        "ngcc",
        s(&tree),
        "--harness",
        s(&harness),
        "--out",
        s(&cands),
        "--jobs",
        "2",
        "--observe-timeout",
        "10",
    ]);
    let table = String::from_utf8_lossy(&out.stdout).into_owned();
    for (pkg, id, n) in [
        ("01-kem/Cmk", "toy-cmk", 2),
        ("01-kem/Mkw", "toy-mkw", 2),
        ("02-kem/Loopy", "toy-loopy", 3),
        ("03-kem/Outy", "toy-outy", 1),
        ("04-kem/Owny", "toy-owny", 1),
        ("05-kem/Inly", "toy-inly", 1),
    ] {
        let r = row(&table, pkg);
        assert_eq!(r[1], id, "{table}");
        assert_eq!(r[2], n.to_string(), "{table}");
        assert_eq!(r[3], "0", "{pkg}: no problems\n{table}");
        assert_eq!(r[4], format!("build {n}"), "{table}");
    }
    // Hostile packages: their own problem, named by their folders, NOKAT.
    for (pkg, says) in [
        ("99-hostile/Hang", "exceeded its wall-time bound"),
        ("99-hostile/Netty", "before linking a KAT program"),
        ("99-hostile/Forky", "its build did not answer"),
    ] {
        let r = row(&table, pkg);
        assert_eq!(r[4], "static 1", "{pkg}\n{table}");
        assert!(
            table
                .lines()
                .any(|l| l.starts_with(&format!("  - {pkg} (")) && l.contains(says)),
            "{pkg}: {says}\n{table}"
        );
    }
    // The escape built its program in its copy; nothing it wrote outside exists.
    assert_eq!(row(&table, "99-hostile/Escape")[4], "build 1", "{table}");
    assert!(!escape.exists());
    assert!(!Path::new("/usr/escaped").exists() && !Path::new("/escaped").exists());
    // The packages were read, never written (Outy writes obj/ and output/ in its copy).
    assert!(listing(&tree) == before, "the tree changed");
    // Values name the build call they came from.
    let cmk = std::fs::read_to_string(cands.join("toy-cmk/candidate.toml")).unwrap();
    for want in [
        "# learned: build",
        "\"src/core/kem.c\",  # cmake codemodel: target kat_cmk ← library cmkcore ← src/core/kem.c",
        "\"src/sym/toy_rand.c\",  # cmake codemodel: target kat_cmk ← library cmkcore ← library cmksym ← src/sym/toy_rand.c",
        "\"SECURITY_LEVEL=256\",  # cmake codemodel: target kat_cmk (compile group)",
        // The static reader does not read aux_source_directory: listed, not used.
        "# DISAGREES (build vs static reader): sources: only the build has",
    ] {
        assert!(cmk.contains(want), "{want}\n{cmk}");
    }
    let mkw = std::fs::read_to_string(cands.join("toy-mkw/candidate.toml")).unwrap();
    assert!(
        mkw.contains("\"SECURITY_LEVEL=192\",  # make -f Makefile: gcc -O2 -Wall -std=c99 -DSECURITY_LEVEL=192"),
        "{mkw}"
    );
    let owny = std::fs::read_to_string(cands.join("toy-owny/candidate.toml")).unwrap();
    assert!(owny.contains("own_drng_ctx = true"), "{owny}");
    // One campaign over all: every toy instance passes its KAT, the hostile ones fail alone.
    let run = dir.path().join("run");
    campaign(
        "build,kat",
        &cands,
        &run,
        &["--allow-source-root", s(&tree)],
    );
    for key in [
        "toy-cmk/Cmk-128",
        "toy-cmk/Cmk-256",
        "toy-mkw/Mkw-128",
        "toy-mkw/Mkw-192",
        "toy-loopy/Loopy-128",
        "toy-loopy/Loopy-192",
        "toy-loopy/Loopy-256",
        "toy-outy/Outy-128",
        "toy-owny/Owny-128",
        "toy-inly/Inly-128",
    ] {
        assert_eq!(build_entry(&run, key).kat, KatStatus::Pass, "{key}");
    }
    // Inly's C99 plain inline links only with gnu89 inline semantics: the third flag set,
    // labelled, after the harness defaults named the undefined symbol.
    let inly = build_entry(&run, "toy-inly/Inly-128");
    assert_eq!(inly.flags, FlagSetName::HarnessDefaultGnu89Inline);
    assert_eq!(inly.guide_result, Some(KatStatus::BuildFail));
}

/// The corpus tree: every instance learned from its build (Dragon, which has no build
/// system, from its folder: the default glob), the static reader agreeing on every one.
/// By default one folder per package is observed (a copy of the tree with the others
/// removed); NGCC_CORPUS_ALL=1 (CI) imports the whole tree and KAT-checks all 32.
#[test]
fn corpus_tree_learned_from_its_builds_agrees_with_the_static_reader() {
    let Some(corpus) = corpus_dir() else { return };
    let all = std::env::var("NGCC_CORPUS_ALL").is_ok_and(|v| v == "1");
    let dir = tempfile::tempdir().unwrap();
    let tree = if all {
        corpus.join("packages")
    } else {
        let t = dir.path().join("packages");
        copy_tree(&corpus.join("packages"), &t);
        // One instance folder per package: the first of every folder holding instances.
        prune(&t);
        t
    };
    let cands = dir.path().join("cands");
    let out = run_ok(&[
        "import",
        "ngcc",
        s(&tree),
        "--harness",
        s(&corpus.join("harness")),
        "--out",
        s(&cands),
    ]);
    let table = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut total = 0;
    for (id, pkg, n) in CORPUS {
        let r = row(&table, pkg);
        let got: usize = r[2].parse().unwrap();
        if all {
            assert_eq!(got, *n, "{table}");
        }
        let n = got;
        total += n;
        assert!(n > 0, "{table}");
        assert_eq!(r[1], *id, "{table}");
        // A pruned tree leaves manifest labels without folders (listed as problems).
        if all {
            assert_eq!(r[3], "0", "{pkg}: no problems\n{table}");
        }
        let how = if *pkg == "Dragon" { "folder" } else { "build" };
        assert_eq!(r[4], format!("{how} {n}"), "{table}");
        assert_eq!(r[5], "0", "{pkg}: the static reader agrees\n{table}");
    }
    if all {
        assert_eq!(total, 32);
        let run = dir.path().join("run");
        campaign_ok(
            "build,kat",
            &cands,
            &run,
            &["--allow-source-root", s(&tree), "--require-pass", "--quick"],
        );
    }
}

/// Keeps the first instance folder (by name) among siblings that hold instances.
fn prune(dir: &Path) {
    let mut subs: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    subs.sort();
    let holds = |p: &Path| {
        std::fs::read_dir(p).unwrap().any(|e| {
            e.unwrap()
                .file_name()
                .to_string_lossy()
                .ends_with("_AlgorithmInstance.h")
        })
    };
    let (inst, rest): (Vec<PathBuf>, Vec<PathBuf>) = subs.into_iter().partition(|p| holds(p));
    for p in inst.iter().skip(1) {
        std::fs::remove_dir_all(p).unwrap();
    }
    for p in &rest {
        prune(p);
    }
}

/// A layout added after the importer was written, imported with its code unchanged
/// (tests/toys/ngcc-unseen/Recy: a recursive make builds lib/libtoycore.a from
/// $(wildcard */*.c) with make's built-in rules, the KAT program links it with -L/-l): learned
/// from the build, KAT PASS. The static reader does not follow the sub-make (listed).
#[test]
fn an_unseen_layout_recursive_make_with_its_own_library_imports_and_passes() {
    let dir = tempfile::tempdir().unwrap();
    let tree = dir.path().join("tree");
    copy_tree(&manifest_dir().join("tests/toys/ngcc-unseen"), &tree);
    let cands = dir.path().join("cands");
    let harness = manifest_dir().join("tests/toys/ngcc-harness");
    let out = run_ok(&[
        "import",
        "ngcc",
        s(&tree),
        "--harness",
        s(&harness),
        "--out",
        s(&cands),
    ]);
    let table = String::from_utf8_lossy(&out.stdout).into_owned();
    let r = row(&table, "Recy");
    assert_eq!(r[1..5], ["toy-recy", "1", "0", "build 1"], "{table}");
    let toml = std::fs::read_to_string(cands.join("toy-recy/candidate.toml")).unwrap();
    assert!(
        toml.contains("\"lib/kem/kem.c\",  # make -f Makefile: cc -O3 -DSECURITY_LEVEL=128"),
        "{toml}"
    );
    assert!(
        !toml.contains("ldlibs = ["),
        "its own library is not a system library\n{toml}"
    );
    let run = dir.path().join("run");
    campaign_ok(
        "build,kat",
        &cands,
        &run,
        &["--allow-source-root", s(&tree), "--require-pass"],
    );
}
