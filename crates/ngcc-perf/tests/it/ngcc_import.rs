//! `import ngcc` on the real NGCC corpus (`../shared/ngcc-r1`): the instances of the five
//! packages KAT-PASS against the reference harness's kat.sha256 through the importer alone,
//! from copies of the packages under other names; helpers come from the package, the official
//! files or ours, and say so; and a package laid out in a way the corpus never shows (CMake,
//! sources below src/, the level only in CMakeLists.txt, its own drng_algorithm) imports,
//! builds and passes too.
//!
//! The corpus is required unless NGCC_REQUIRE_CORPUS=0 (CI sets it to 1). Every package is
//! imported whole (32 instances), and by default one instance of each source family (Lore's
//! SHAKE and SM3 sets, Mito's three, MAMBA-NIKE, Dragon's hash and XOF, Origami: 9) is built
//! and KAT-checked: the other 23 run the same importer and build paths on other parameters and
//! cost 95 more CPU-s here, so `NGCC_CORPUS_ALL=1` (.ci/run sets it) checks all 32 with the
//! same assertions. Hash KATs run with --quick here (the 2^12- and 2^23-bit files of every
//! Dragon instance are still checked against the harness digests); .ci/run also builds and
//! checks every instance from the original packages with the full set.

use crate::common;
use common::*;
use ngcc_perf::dataset::schema::{BuildStatus, FlagSetName, HelperOrigin, KatStatus, Record};
use std::path::{Path, PathBuf};

/// The static reader alone (`--static`): these tests pin what it reads from build files;
/// tests/it/ngcc_tree.rs covers learning from the build.
fn import(args: &[&str]) -> std::process::Output {
    let mut all = vec!["import", "ngcc"];
    all.extend_from_slice(args);
    all.push("--static");
    run_ok(&all)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The labels of a kat.sha256, in order of first appearance.
fn manifest_labels(path: &Path) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for l in std::fs::read_to_string(path).unwrap().lines() {
        let name = l.split_whitespace().nth(2).unwrap();
        let label = name.split('/').next().unwrap().to_string();
        if !out.contains(&label) {
            out.push(label);
        }
    }
    out
}

#[test]
fn dry_run_finds_every_instance_with_its_defines() {
    let Some(corpus) = corpus_dir() else { return };
    let mut tables = String::new();
    for (id, pkg, n) in CORPUS {
        let manifest = corpus.join(format!("harness/{id}/kat.sha256"));
        let out = import(&[
            s(&corpus.join("packages").join(pkg)),
            "--id",
            id,
            "--kat-manifest",
            s(&manifest),
            "--dry-run",
        ]);
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(text.contains(&format!("{n} instances)")), "{text}");
        assert!(text.contains("problems: none"), "{text}");
        let rows: Vec<&str> = text.lines().skip(2).take(*n).collect();
        let labels: Vec<&str> = rows
            .iter()
            .map(|r| r.split_whitespace().next().unwrap())
            .collect();
        let mut want = manifest_labels(&manifest);
        want.sort();
        let mut got: Vec<String> = labels.iter().map(|l| l.to_string()).collect();
        got.sort();
        assert_eq!(got, want, "{id}: labels are the harness's");
        let row = |label: &str| {
            *rows
                .iter()
                .find(|r| r.starts_with(&format!("{label} ")))
                .unwrap()
        };
        match *id {
            // The level from the folder name, the DRNG routing from the Makefile's KAT flags.
            "kem-19" => {
                for l in 1..=4 {
                    for v in ["SHAKE", "SM3"] {
                        let r = row(&format!("Lore-{v}-L{l}"));
                        assert!(r.contains(&format!("Makefile: KAT_KEM_{l}")), "{r}");
                        assert!(
                            r.contains(&format!("LORE_LEVEL={l} LORE_USE_API_PKC_DRNG")),
                            "{r}"
                        );
                    }
                }
            }
            "kem-23" => assert!(row("Mito-1-E-128").contains("README.txt: gcc line 3")),
            "kex-06" => {
                let r = row("MAMBA-NIKE-384");
                assert!(
                    r.contains("Makefile: KAT_KEX") && r.contains(" KAT_BUILD "),
                    "{r}"
                );
            }
            "hash-07" => {
                let r = row("Dragon-XOF-512");
                assert!(
                    r.contains("no build file") && r.contains("drng.c: package"),
                    "{r}"
                );
            }
            "sign-18" => {
                let r = row("Origami-384");
                assert!(
                    r.contains("KAT_SIG_Origami-384")
                        && r.contains("KAT_NUM_TESTS=1 ORIGAMI_OPT=REF"),
                    "{r}"
                );
            }
            _ => unreachable!(),
        }
        tables.push_str(&text);
    }
    eprintln!("{tables}");
}

/// The first instance of each source family of the corpus, as `<id>/<label>`.
const FAMILY_FIRSTS: [&str; 9] = [
    "kem-19/Lore-SHAKE-L1",
    "kem-19/Lore-SM3-L1",
    "kem-23/Mito-1-128",
    "kem-23/Mito-1-E-128",
    "kem-23/Mito-2-E-128",
    "kex-06/MAMBA-NIKE-128",
    "hash-07/Dragon-512",
    "hash-07/Dragon-XOF-256",
    "sign-18/Origami-128",
];

#[test]
fn corpus_instances_pass_their_kat_through_the_importer_from_renamed_copies() {
    let Some(corpus) = corpus_dir() else { return };
    let all = std::env::var("NGCC_CORPUS_ALL").is_ok_and(|v| v == "1");
    let dir = tempfile::tempdir().unwrap();
    let cands = dir.path().join("cands");
    let helpers = corpus.join("iccs-api");
    for (id, pkg, _) in CORPUS {
        // A download unpacked under another name.
        let copy = dir.path().join(format!("downloads/{id}-submission copy"));
        copy_tree(&corpus.join("packages").join(pkg), &copy);
        import(&[
            s(&copy),
            "--id",
            id,
            "--kat-manifest",
            s(&corpus.join(format!("harness/{id}/kat.sha256"))),
            "--iccs-helpers",
            s(&helpers),
            "--out",
            s(&cands.join(id)),
        ]);
    }
    let run = dir.path().join("run");
    let t = std::time::Instant::now();
    // The packages lie outside the candidates folder: allowed explicitly.
    let downloads = dir.path().join("downloads");
    // Every package imported whole, whatever is built.
    let imported: usize = CORPUS
        .iter()
        .map(|(id, _, _)| {
            let path = cands.join(id).join("candidate.toml");
            ngcc_perf::candidate::Candidate::load(&path)
                .unwrap()
                .instances
                .len()
        })
        .sum();
    assert_eq!(imported, 32);
    let only = FAMILY_FIRSTS.join(",");
    let mut args = vec![
        "--quick",
        "--require-pass",
        "--allow-source-root",
        s(&downloads),
        "--allow-source-root",
        s(&helpers),
    ];
    if !all {
        args.extend(["--only", &only]);
    }
    let stderr = campaign_ok("build,kat", &cands, &run, &args);
    let entries = build_file(&run).entries();
    eprintln!(
        "corpus build+kat (quick hash files): {} of 32 instances{} in {:.1} s",
        entries.len(),
        if all {
            ""
        } else {
            ", one per source family (NGCC_CORPUS_ALL=1: all 32)"
        },
        t.elapsed().as_secs_f64()
    );
    let mut want: Vec<String> = if all {
        CORPUS
            .iter()
            .flat_map(|(id, _, _)| {
                manifest_labels(&corpus.join(format!("harness/{id}/kat.sha256")))
                    .into_iter()
                    .map(move |l| format!("{id}/{l}"))
            })
            .collect()
    } else {
        FAMILY_FIRSTS.iter().map(|k| k.to_string()).collect()
    };
    want.sort();
    let mut got: Vec<String> = entries.iter().map(|(k, _)| k.to_string()).collect();
    got.sort();
    assert_eq!(got, want, "{stderr}");
    for (key, e) in &entries {
        assert_eq!(e.kat, KatStatus::Pass, "{key}: {:?}", e.kat_detail);
        // No fallback was needed: every KAT passed with the guide flags, first time.
        assert_eq!(e.flags, FlagSetName::Guide, "{key}");
        assert_eq!(e.guide_result, None, "{key}");
        // The package's own helpers, never a substitute.
        let names: Vec<&str> = e.helpers.iter().map(|h| h.name.as_str()).collect();
        let want: &[&str] = if key.starts_with("hash-") {
            &["drng.c"]
        } else {
            &["drng.c", "auxfunc.c"]
        };
        assert_eq!(names, want, "{key}");
        assert!(
            e.helpers.iter().all(|h| h.origin == HelperOrigin::Package),
            "{key}: {:?}",
            e.helpers
        );
        assert!(
            e.helpers.iter().all(|h| h.path.starts_with("${PACKAGE}/")),
            "{key}: {:?}",
            e.helpers
        );
    }
    // Origami's manifest hashes one record (`strict:1`): exactly one was run.
    let origami = entries
        .iter()
        .filter_map(|(k, _)| k.strip_prefix("sign-18/Origami-"));
    for l in origami {
        let log =
            std::fs::read_to_string(run.join(format!("kat/sign-18/Origami-{l}.log"))).unwrap();
        assert!(
            log.contains("(avg over 1)") && log.contains(" strict:1 "),
            "{log}"
        );
        let kat = std::fs::read_to_string(run.join(format!(
            "katgen/sign-18/Origami-{l}/KAT_SIG_Origami-{l}.txt"
        )))
        .unwrap();
        assert_eq!(kat.matches("Count = ").count(), 1);
    }
    // MAMBA-NIKE ships a modified drng.c; Lore the official one: the manifest says which.
    let mamba = std::fs::read_to_string(cands.join("kex-06/candidate.toml")).unwrap();
    assert!(mamba.contains("# helpers: drng.c: package (modified), auxfunc.c: package (identical to the official file)"), "{mamba}");
    assert!(
        mamba.contains("\"KAT_BUILD\",  # Makefile:3 (CFLAGS)"),
        "{mamba}"
    );
    let lore = std::fs::read_to_string(cands.join("kem-19/candidate.toml")).unwrap();
    assert!(
        lore.contains("drng.c: package (identical to the official file)"),
        "{lore}"
    );
    assert!(
        lore.contains("# left out: KAT_KEM.c (KAT driver, main, test or benchmark)"),
        "{lore}"
    );
}

/// A copy of the Lore package whose Lore-SM3-L1 folder lacks drng.c and auxfunc.c.
fn lore_without_helpers(corpus: &Path, at: &Path) -> PathBuf {
    let copy = at.join("Lore-without-helpers");
    copy_tree(&corpus.join("packages/Lore"), &copy);
    let inst = copy.join("Implementations and Test_Vectors/Implementations/Reference_Implementation/Lore-SM3/Lore-L1");
    std::fs::remove_file(inst.join("drng.c")).unwrap();
    std::fs::remove_file(inst.join("auxfunc.c")).unwrap();
    copy
}

#[test]
fn helpers_come_from_the_package_the_official_files_or_ours_and_records_and_pages_say_so() {
    let Some(corpus) = corpus_dir() else { return };
    let dir = tempfile::tempdir().unwrap();
    let pkg = lore_without_helpers(&corpus, dir.path());
    let manifest = corpus.join("harness/kem-19/kat.sha256");
    let official = corpus.join("iccs-api");
    let sha = |p: &Path| ngcc_perf::util::sha256_file(p).unwrap();
    for (name, with_official) in [("official", true), ("embedded", false)] {
        let cands = dir.path().join(format!("cands-{name}"));
        let mut args = vec![
            s(&pkg),
            "--id",
            "kem-19",
            "--kat-manifest",
            s(&manifest),
            "--out",
            s(&cands),
        ];
        if with_official {
            args.extend(["--iccs-helpers", s(&official)]);
        }
        let out = import(&args);
        let table = String::from_utf8_lossy(&out.stdout);
        let want = if with_official {
            "drng.c: official, auxfunc.c: official"
        } else {
            "drng.c: embedded, auxfunc.c: embedded"
        };
        let row = table
            .lines()
            .find(|l| l.starts_with("Lore-SM3-L1 "))
            .unwrap();
        assert!(row.contains(want), "{row}");
        let run = dir.path().join(format!("run-{name}"));
        let mut extra = vec![
            "--only",
            "kem-19/Lore-SM3-L1",
            "--require-pass",
            "--allow-source-root",
            s(&pkg),
            "--allow-source-root",
            s(&official),
        ];
        if !with_official {
            // Also measured, briefly: records carry the helpers.
            extra.extend([
                "--allow-unfixed-host",
                "--trial-target",
                "0.002",
                "--op-budget",
                "0.05",
            ]);
        }
        let phases = if with_official {
            "build,kat"
        } else {
            "build,kat,calibrate,measure"
        };
        campaign_ok(phases, &cands, &run, &extra);
        let e = build_entry(&run, "kem-19/Lore-SM3-L1");
        let got: Vec<(&str, HelperOrigin, &str)> = e
            .helpers
            .iter()
            .map(|h| (h.name.as_str(), h.origin, h.path.as_str()))
            .collect();
        if with_official {
            assert_eq!(
                got,
                [
                    ("drng.c", HelperOrigin::Official, "${ICCS_HELPERS}/drng.c"),
                    (
                        "auxfunc.c",
                        HelperOrigin::Official,
                        "${ICCS_HELPERS}/auxfunc.c"
                    )
                ]
            );
            assert_eq!(e.helpers[0].sha256, sha(&official.join("drng.c")));
            assert_eq!(e.helpers[1].sha256, sha(&official.join("auxfunc.c")));
        } else {
            assert_eq!(
                got,
                [
                    ("drng.c", HelperOrigin::Embedded, "csrc/iccs/drng.c"),
                    ("auxfunc.c", HelperOrigin::Embedded, "csrc/iccs/auxfunc.c"),
                    ("iccs_sm3.c", HelperOrigin::Embedded, "csrc/iccs/iccs_sm3.c")
                ]
            );
            let rec: Record =
                ngcc_perf::util::read_json(&run.join("records/kem-19/Lore-SM3-L1__keygen.json"))
                    .unwrap();
            assert_eq!(rec.ngcc.unwrap().helpers, e.helpers);
            // Published and rendered: the candidate page names them.
            let ds = dir.path().join("ds");
            publish_ok(&run, "vm_1", &ds);
            catalog_ok(&ds, &ds.join("catalog"));
            let pages = dir.path().join("pages");
            let o = report(&ds, &pages, &[]);
            assert!(o.status.success(), "{}", text(&o));
            let page = std::fs::read_to_string(pages.join("kem-19/perf_vm_1.md")).unwrap();
            assert!(
                page.contains("| `Lore-SM3-L1` | auxfunc.c | embedded | `"),
                "{page}"
            );
        }
        // Bit-exact either way: the same KAT as the package's own helpers (the PASS above).
        assert_eq!(e.kat, KatStatus::Pass);
    }
}

/// The toy CMake package at `at`: Toy-128 as committed, Toy-256 with another level.
fn toy_package(at: &Path) -> PathBuf {
    let pkg = at.join("Toy KEM package");
    let refs = pkg.join("Implementations/Reference_Implementation");
    let toy = manifest_dir().join("tests/toys/ngcc-cmake/Toy-128");
    copy_tree(&toy, &refs.join("Toy-128"));
    copy_tree(&toy, &refs.join("Toy-256"));
    let cm = refs.join("Toy-256/CMakeLists.txt");
    let text = std::fs::read_to_string(&cm)
        .unwrap()
        .replace("set(SECURITY_LEVEL 128)", "set(SECURITY_LEVEL 256)");
    std::fs::write(cm, text).unwrap();
    pkg
}

#[test]
fn an_unseen_cmake_src_tree_package_imports_builds_and_passes() {
    let dir = tempfile::tempdir().unwrap();
    let pkg = toy_package(dir.path());
    let cands = dir.path().join("cands");
    let out = import(&[s(&pkg), "--id", "toy-1", "--out", s(&cands)]);
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.contains("problems: none"), "{table}");
    let toml = std::fs::read_to_string(cands.join("candidate.toml")).unwrap();
    for want in [
        "label = \"Toy-128\"",
        "\"SECURITY_LEVEL=256\",  # CMakeLists.txt:10 (target_compile_definitions)",
        "\"src/backend/mix.c\",",
        "own_drng_ctx = true  # src/symmetric/toy_rand.c defines drng_algorithm",
        "# left out: src/KAT/KAT_KEM.c (KAT driver, main, test or benchmark)",
        "# build: CMakeLists.txt: KAT_KEM_128",
    ] {
        assert!(toml.contains(want), "{want}\n{toml}");
    }
    assert!(
        !toml.contains("src/tests/") && !toml.contains("\"src/KAT/"),
        "{toml}"
    );
    // The package is outside the candidates folder: without --allow-source-root its
    // instances are refused (BUILDFAIL, the campaign goes on), with it they build.
    let refused = dir.path().join("run-refused");
    campaign_ok("build", &cands, &refused, &[]);
    let err = build_entry(&refused, "toy-1/Toy-128")
        .build_error
        .unwrap_or_default();
    assert!(
        err.contains("outside the candidate's folder") && err.contains("--allow-source-root"),
        "{err}"
    );
    // Built and run: the level reached the code (file names, sizes, distinct libraries).
    let run = dir.path().join("run");
    campaign_ok("build,kat", &cands, &run, &["--allow-source-root", s(&pkg)]);
    let a = build_entry(&run, "toy-1/Toy-128");
    let b = build_entry(&run, "toy-1/Toy-256");
    assert_eq!(a.build_status, Some(BuildStatus::Built));
    assert_ne!(a.library_sha256, b.library_sha256);
    assert!(
        run.join("katgen/toy-1/Toy-128/KAT_KEM_Toy128.txt")
            .is_file()
    );
    assert!(
        run.join("katgen/toy-1/Toy-256/KAT_KEM_Toy256.txt")
            .is_file()
    );
    // A manifest of these files, then the package renamed: the labels come back from it.
    let manifest = dir.path().join("toy.sha256");
    run_ok(&[
        "kat",
        "manifest",
        s(&run),
        "--cand",
        "toy-1",
        "--out",
        s(&manifest),
    ]);
    let renamed = dir.path().join("renamed");
    std::fs::rename(&pkg, &renamed).unwrap();
    let cands2 = dir.path().join("cands2");
    import(&[
        s(&renamed),
        "--id",
        "toy-1",
        "--kat-manifest",
        s(&manifest),
        "--out",
        s(&cands2),
    ]);
    let run2 = dir.path().join("run2");
    campaign_ok(
        "build,kat",
        &cands2,
        &run2,
        &["--require-pass", "--allow-source-root", s(&renamed)],
    );
}

#[test]
fn overrides_from_a_table_apply_and_are_listed() {
    let dir = tempfile::tempdir().unwrap();
    let pkg = toy_package(dir.path());
    let table = dir.path().join("overrides.toml");
    write(
        &table,
        "[[candidate]]\nid = \"toy-9\"\nwhy = \"the test says so\"\nalgorithm = \"ToyKEM\"\n\
         [[candidate.instance]]\nlabel = \"Toy-2*\"\ndefines = [\"EXTRA=1\"]\n\
         [[candidate.instance]]\nlabel = \"Toy-128\"\nskip = true\n",
    );
    let cands = dir.path().join("cands");
    import(&[
        s(&pkg),
        "--id",
        "toy-9",
        "--overrides",
        s(&table),
        "--out",
        s(&cands),
    ]);
    let toml = std::fs::read_to_string(cands.join("candidate.toml")).unwrap();
    assert!(
        toml.contains("# Override for toy-9: the test says so"),
        "{toml}"
    );
    assert!(toml.contains("algorithm = \"ToyKEM\""), "{toml}");
    assert!(
        toml.contains("# override: defines: added EXTRA=1 (the test says so)"),
        "{toml}"
    );
    assert!(toml.contains("\"EXTRA=1\",  # override"), "{toml}");
    assert!(!toml.contains("label = \"Toy-128\""), "{toml}");
    // Another id: the table does not apply.
    let other = dir.path().join("other");
    import(&[
        s(&pkg),
        "--id",
        "toy-1",
        "--overrides",
        s(&table),
        "--out",
        s(&other),
    ]);
    let toml = std::fs::read_to_string(other.join("candidate.toml")).unwrap();
    assert!(
        toml.contains("Overrides: none") && !toml.contains("EXTRA"),
        "{toml}"
    );
}

#[test]
fn bad_import_input_is_a_one_line_error() {
    let dir = tempfile::tempdir().unwrap();
    for (args, says) in [
        (
            vec![
                "import",
                "ngcc",
                "/nonexistent/pkg",
                "--id",
                "x",
                "--dry-run",
            ],
            "no such package folder",
        ),
        (
            // Without --id the folder is a submission tree.
            vec!["import", "ngcc", s(dir.path()), "--dry-run"],
            "no package below",
        ),
        (
            vec!["import", "ngcc", s(dir.path()), "--id", "x", "--dry-run"],
            "no instance folders",
        ),
        (
            vec!["import", "ngcc", s(dir.path()), "--id", "a b", "--dry-run"],
            "--id \"a b\"",
        ),
    ] {
        let o = bin().args(&args).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains(says) && err.lines().count() == 1,
            "{args:?}: {err}"
        );
    }
}
