//! The object cache (`build/objcache.rs`): a second run takes every silent compile's object
//! from it and says so in the build log, a compile that warns runs every time, and the
//! libraries are byte-identical to those built with the cache off.

use crate::common;
use common::*;
use std::path::Path;

/// The `$ gcc … -c` lines of a build log, each with whether the next line says the object
/// came from the cache.
fn compiles(log: &str) -> Vec<(String, bool)> {
    let lines: Vec<&str> = log.lines().collect();
    lines
        .iter()
        .enumerate()
        .filter(|(_, l)| l.starts_with("$ ") && l.contains(" -c "))
        .map(|(i, l)| {
            let cached = lines
                .get(i + 1)
                .is_some_and(|n| n.contains("from the object cache"));
            (l.to_string(), cached)
        })
        .collect()
}

fn build(cands: &Path, run: &Path, cache: &str) {
    let out = campaign_cmd("build", cands, run, &[])
        .env("NGCC_OBJECT_CACHE", cache)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
}

fn log(run: &Path, id: &str) -> String {
    std::fs::read_to_string(run.join(format!("build/{id}/SM3-256.log"))).unwrap()
}

#[test]
fn a_second_run_reuses_silent_objects_and_warnings_are_compiled_again() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cands = d.join("cands");
    let sample = manifest_dir().join("../../samples/iccs/hash-s1");
    copy_tree(&sample, &cands.join("hash-s1"));
    // The same candidate with one unused function: -Wall warns about it.
    copy_tree(&sample, &cands.join("warns"));
    let manifest = std::fs::read_to_string(sample.join("candidate.toml")).unwrap();
    write(
        &cands.join("warns/candidate.toml"),
        &manifest.replace("id = \"hash-s1\"", "id = \"warns\""),
    );
    let src = cands.join("warns/SM3-256/sm3_crypthash.c");
    let mut c = std::fs::read_to_string(&src).unwrap();
    c.push_str("static int never_called(void) { return 1; }\n");
    write(&src, &c);

    let cache = d.join("cache");
    let cache = cache.to_str().unwrap();
    let runs = [d.join("run1"), d.join("run2"), d.join("off")];
    build(&cands, &runs[0], cache);
    build(&cands, &runs[1], cache);
    build(&cands, &runs[2], "off");

    let second = compiles(&log(&runs[1], "hash-s1"));
    assert!(second.len() >= 2, "{second:?}");
    assert!(second.iter().all(|(_, cached)| *cached), "{second:?}");
    for run in [&runs[0], &runs[1]] {
        let warns = log(run, "warns");
        assert!(warns.contains("never_called"), "{warns}");
        let c = compiles(&warns);
        let own = c
            .iter()
            .find(|(l, _)| l.contains("sm3_crypthash.c"))
            .unwrap();
        assert!(!own.1, "a compile that warned came from the cache: {warns}");
    }
    assert!(compiles(&log(&runs[2], "hash-s1")).iter().all(|(_, c)| !c));
    assert!(!log(&runs[2], "warns").contains("object cache"));

    for id in ["hash-s1", "warns"] {
        let lib = |run: &Path| std::fs::read(run.join(format!("lib/{id}/libSM3-256.so"))).unwrap();
        let off = lib(&runs[2]);
        assert!(lib(&runs[0]) == off && lib(&runs[1]) == off, "{id}");
    }
}
