//! `import pqclean PATH` on a user's own PQClean checkout, then the campaign as the README
//! shows it: the importer says where the tree came from and prints the flag the campaign
//! needs, and with exactly that flag the instance builds and passes its official KAT.

use crate::common;
use common::*;
use std::path::Path;

/// The part of the fetched tree one ML-KEM instance needs, copied elsewhere: a checkout the
/// harness knows nothing about (not cargo's, not below the candidates folder).
fn user_checkout(tree: &Path, to: &Path) {
    copy_tree(&tree.join("common"), &to.join("common"));
    copy_tree(
        &tree.join("crypto_kem/ml-kem-512"),
        &to.join("crypto_kem/ml-kem-512"),
    );
    // scan() reads both kind folders.
    std::fs::create_dir_all(to.join("crypto_sign")).unwrap();
}

#[test]
fn a_pqclean_tree_given_by_path_imports_and_passes_its_kat_with_the_printed_flag() {
    let Some(fetched) = pqclean() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let tree = tmp.path().join("PQClean");
    user_checkout(&fetched, &tree);
    let cands = tmp.path().join("cands");
    let out = run_ok(&[
        "import",
        "pqclean",
        tree.to_str().unwrap(),
        "--out",
        cands.to_str().unwrap(),
        "--family",
        "ml-kem",
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);

    // The manifest's header names the tree it was written from, not cargo's.
    let manifest = std::fs::read_to_string(cands.join("ml-kem/candidate.toml")).unwrap();
    let header: Vec<&str> = manifest
        .lines()
        .take_while(|l| l.starts_with('#'))
        .collect();
    let header = header.join("\n");
    assert!(
        header.contains(tree.to_str().unwrap()) && header.contains("given by path"),
        "{header}"
    );
    assert!(!header.contains("fetched by cargo"), "{header}");

    // The last line gives the flag, as one pasteable shell word after it.
    let hint = "give the campaign ";
    let line = stdout
        .lines()
        .find(|l| l.contains(hint))
        .unwrap_or_else(|| panic!("no --allow-source-root hint in:\n{stdout}"));
    let flag = shlex::split(&line[line.find(hint).unwrap() + hint.len()..]).unwrap();
    assert_eq!(flag, ["--allow-source-root", tree.to_str().unwrap()]);

    // Without the flag the sources are refused (before any compile) ...
    let only = ["--only", "ml-kem-512-clean"];
    let refused = tmp.path().join("run-refused");
    let _ = campaign("build,kat", &cands, &refused, &only);
    let e = build_entry(&refused, "ml-kem/ml-kem-512-clean");
    assert_eq!(e.kat.as_str(), "BUILDFAIL");
    assert!(
        e.build_error
            .as_deref()
            .unwrap_or("")
            .contains("--allow-source-root"),
        "{:?}",
        e.build_error
    );

    // ... and with it, exactly as printed, the official digest is reproduced.
    let run = tmp.path().join("run");
    let mut extra: Vec<&str> = flag.iter().map(String::as_str).collect();
    extra.extend(only);
    extra.push("--require-pass");
    campaign_ok("build,kat", &cands, &run, &extra);
    let e = build_entry(&run, "ml-kem/ml-kem-512-clean");
    assert_eq!(e.kat.as_str(), "PASS", "{:?}", e.kat_detail);
}
