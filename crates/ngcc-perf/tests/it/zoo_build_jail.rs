//! The compiler, assembler and linker run in the jail (issue 33, item 2): tests/zoo/host-files
//! asks the preprocessor and the assembler for host files outside every allowed root. Each
//! hostile instance ends exactly as listed (a BUILDFAIL naming the file it could not read, or
//! a probe that saw nothing and built), the honest control builds and passes its KAT, and
//! every build records the jail layers its calls ran under.

use crate::common::*;
use ngcc_perf::dataset::schema::{BuildEntry, BuildFile, Layer};
use std::path::Path;

/// (instance, KAT status, fragment of the build error).
const EXPECTED: &[(&str, &str, &str)] = &[
    ("control", "PASS", ""),
    ("incbin", "BUILDFAIL", "file not found: /etc/passwd"),
    (
        "include-host",
        "BUILDFAIL",
        "/etc/passwd: No such file or directory",
    ),
    (
        "include-flag",
        "BUILDFAIL",
        "/etc/passwd: No such file or directory",
    ),
    // The probe answered "absent" for every host file: built, and the toy passes.
    ("has-include", "PASS", ""),
];

fn entries(run: &Path) -> Vec<BuildEntry> {
    let file: BuildFile = ngcc_perf::util::read_json(&run.join("build.json")).unwrap();
    file.instances
        .into_values()
        .map(|v| serde_json::from_value(v).unwrap())
        .collect()
}

#[test]
fn host_files_are_invisible_to_the_compiler() {
    let dir = tempfile::tempdir().unwrap();
    let cands = dir.path().join("cands");
    let zoo = manifest_dir().join("tests/zoo");
    for sub in ["nist-toy", "common", "host-files"] {
        copy_tree(&zoo.join(sub), &cands.join(sub));
    }
    let run = dir.path().join("run");
    // Relative candidate and run folders: the compiler's working folder is its scratch, so
    // every path it gets must be absolute.
    let out = campaign_cmd(
        "build,kat",
        Path::new("cands"),
        Path::new("run"),
        &["--only", "zoo-host/*", "--kat-timeout", "20"],
    )
    .current_dir(dir.path())
    .output()
    .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let built = entries(&run);
    for (label, kat, error) in EXPECTED {
        let e = built
            .iter()
            .find(|e| e.candidate == "zoo-host" && e.label == *label)
            .unwrap_or_else(|| panic!("no entry for {label}"));
        assert_eq!(
            serde_json::to_value(&e.kat).unwrap(),
            *kat,
            "{label}: {:?}",
            e.build_error
        );
        let err = e.build_error.clone().unwrap_or_default();
        assert!(err.contains(error), "{label}: {err}");
        let c = e
            .build_containment
            .as_ref()
            .unwrap_or_else(|| panic!("{label}: no build containment"));
        for l in [Layer::UserNs, Layer::PidNs, Layer::MountNs, Layer::NetNs] {
            assert!(c.has(l), "{label}: {}", c.text());
        }
        assert!(c.has(Layer::Landlock) && c.has(Layer::Seccomp), "{label}");
        // No byte of the host file reached the build log.
        let log = std::fs::read_to_string(run.join(format!("build/zoo-host/{label}.log")))
            .unwrap_or_default();
        assert!(!log.contains("root:x:0:0"), "{label}: {log}");
    }
    // The control's library holds its own data, built in the same jail.
    let control = built.iter().find(|e| e.label == "control").unwrap();
    assert!(control.library.is_some());
}
