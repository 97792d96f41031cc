//! Stale verdicts: a phase's "already done" test depends on what its result depends on. A
//! kat.sha256 added after a NOKAT run turns it into PASS on the next `campaign build,kat`
//! (nothing deleted by hand, the guide flags retried), and a flag changed on one instance
//! rebuilds and re-checks that instance alone.

use crate::common;
use common::*;
use std::path::Path;

const TOML: &str = r#"id = "stale-toy"
algorithm = "Toy KEM"
kind = "kem"
api = "iccs"

[[instances]]
label = "one"
dir = "src"
include = [".", "../common"]

[[instances]]
label = "two"
dir = "src"
include = [".", "../common"]
"#;

fn setup(cands: &Path) {
    let zoo = manifest_dir().join("tests/zoo");
    copy_tree(&zoo.join("common"), &cands.join("stale-toy/common"));
    for f in ["toy.c", "KEM_AlgorithmInstance.h"] {
        let to = cands.join("stale-toy/src").join(f);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(zoo.join("iccs-kem").join(f), to).unwrap();
    }
    write(&cands.join("stale-toy/candidate.toml"), TOML);
}

#[test]
fn a_changed_input_reruns_exactly_what_it_affects_and_says_why() {
    let dir = scratch("stale_state");
    let (cands, run) = (dir.join("cands"), dir.join("run"));
    setup(&cands);

    // No kat.sha256: NOKAT on both flag sets, and the digest is printed with the command.
    let err = campaign_ok("build,kat", &cands, &run, &[]);
    for label in ["one", "two"] {
        let e = build_entry(&run, &format!("stale-toy/{label}"));
        assert_eq!(
            (e.kat.as_str(), e.flags.as_str()),
            ("NOKAT", "harness-default"),
            "{err}"
        );
    }

    // The user writes the manifest from the generated KATs, as NOKAT told them.
    let manifest = cands.join("stale-toy/kat.sha256");
    assert!(
        err.contains(&format!(
            "    ngcc-perf kat manifest {} --cand stale-toy --out {}\n",
            run.display(),
            manifest.display()
        )),
        "{err}"
    );
    assert!(err.contains(" strict one/KAT_KEM_"), "{err}");
    run_ok(&[
        "kat",
        "manifest",
        run.to_str().unwrap(),
        "--cand",
        "stale-toy",
        "--out",
        manifest.to_str().unwrap(),
    ]);
    let err = campaign_ok("build,kat", &cands, &run, &[]);
    assert!(
        err.contains(
            "kat stale-toy/one: NOKAT verdict is stale: the expected digests (kat.sha256) changed"
        ),
        "{err}"
    );
    assert!(
        err.contains("kat: 2 stale verdicts to re-run\nkat: 2 to do\n"),
        "{err}"
    );
    for label in ["one", "two"] {
        let e = build_entry(&run, &format!("stale-toy/{label}"));
        assert_eq!(
            (e.kat.as_str(), e.flags.as_str()),
            ("PASS", "guide"),
            "{err}"
        );
        assert_eq!(
            last_line(&run.join(format!("kat/stale-toy/{label}.log"))).trim_end(),
            format!("RESULT stale-toy {label} PASS")
        );
    }

    // Nothing changed: nothing to do.
    let err = campaign_ok("build,kat", &cands, &run, &[]);
    assert!(
        err.contains("kat: 0 to do\n") && !err.contains("stale verdict"),
        "{err}"
    );
    let one_before = build_entry(&run, "stale-toy/one");

    // A flag on `two` alone: `two` is rebuilt and re-checked, `one` is left as it was.
    let toml = TOML.replacen(
        "label = \"two\"\ndir = \"src\"",
        "label = \"two\"\ndir = \"src\"\ncflags = [\"-fno-strict-aliasing\"]",
        1,
    );
    write(&cands.join("stale-toy/candidate.toml"), &toml);
    let err = campaign_ok("build,kat", &cands, &run, &[]);
    assert!(
        err.contains("build stale-toy/two: rebuilt with guide flags"),
        "{err}"
    );
    assert!(err.contains("build stale-toy/one: cached (guide)"), "{err}");
    assert!(
        err.contains("kat: 1 to do\n") && !err.contains("stale verdict"),
        "{err}"
    );
    let two = build_entry(&run, "stale-toy/two");
    assert_eq!(two.kat.as_str(), "PASS");
    assert!(
        two.build_flags
            .as_deref()
            .unwrap()
            .contains("-fno-strict-aliasing")
    );
    assert_eq!(
        two.kat_inputs
            .get("flags")
            .map(|f| f.contains("-fno-strict-aliasing")),
        Some(true)
    );
    assert_eq!(build_entry(&run, "stale-toy/one"), one_before);

    // An edited manifest line for `one` re-checks `one` only.
    let text = std::fs::read_to_string(&manifest).unwrap();
    let edited: String = text
        .lines()
        .map(|l| {
            if l.contains(" one/") {
                format!("{}{}\n", "0".repeat(64), &l[64..])
            } else {
                format!("{l}\n")
            }
        })
        .collect();
    std::fs::write(&manifest, edited).unwrap();
    let err = campaign_ok("build,kat", &cands, &run, &[]);
    assert!(
        err.contains("kat: 1 stale verdicts to re-run\nkat: 1 to do\n"),
        "{err}"
    );
    assert_eq!(build_entry(&run, "stale-toy/one").kat.as_str(), "MISMATCH");
    assert_eq!(build_entry(&run, "stale-toy/two").kat.as_str(), "PASS");
}
