//! What makes an instance's sources, and what happens when they make no library: the
//! exclusion rule also applies to explicit patterns (`src/**/*.c` never links src/KAT or
//! src/tests), a pattern matching nothing, a folder without C files and a file resolving
//! outside the folder fail that instance only (BUILDFAIL, the campaign goes on), and a guide
//! flag failure keeps its log next to the harness-default one.

use crate::common;
use common::*;
use ngcc_perf::dataset::schema::{BuildStatus, FlagSetName, KatStatus};

const TOY: &str = "tests/toys/ngcc-cmake/Toy-128";

fn instance(label: &str, dir: &str, extra: &str) -> String {
    format!(
        "[[instances]]\nlabel = \"{label}\"\ndir = \"{dir}\"\ninclude = [\"src/api\", \"src/backend\", \"src/symmetric\"]\n\
         defines = [\"SECURITY_LEVEL=128\"]\nown_drng_ctx = true\n{extra}\n"
    )
}

#[test]
fn bad_sources_fail_their_instance_only_and_guide_failures_keep_their_log() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    copy_tree(&manifest_dir().join(TOY), &d.join("cand/toy"));
    write(&d.join("cand/headers-only/x.h"), "int x;\n");
    write(&d.join("cand/elsewhere/y.c"), "int y;\n");
    let mut toml =
        String::from("id = \"src-1\"\nalgorithm = \"Toy\"\nkind = \"kem\"\napi = \"iccs\"\n\n");
    toml.push_str(&instance("tree", "toy", "sources = [\"src/**/*.c\"]"));
    toml.push_str(&instance("nomatch", "toy", "sources = [\"nothing/*.c\"]"));
    toml.push_str("[[instances]]\nlabel = \"noc\"\ndir = \"headers-only\"\n\n");
    toml.push_str(&instance(
        "outside",
        "toy",
        "sources = [\"src/**/*.c\", \"../elsewhere/*.c\"]",
    ));
    toml.push_str(&instance(
        "gnuonly",
        "toy",
        "sources = [\"src/**/*.c\"]\ncflags = [\"-DTOY_GNU_ONLY\"]",
    ));
    write(&d.join("cand/candidate.toml"), &toml);
    let run = d.join("run");
    let stderr = campaign_ok("build", &d.join("cand"), &run, &[]);
    assert!(
        stderr.contains("5 instances, 5 compiled, 0 cached, 3 failed"),
        "{stderr}"
    );

    let tree = build_entry(&run, "src-1/tree");
    assert_eq!(
        tree.build_status,
        Some(BuildStatus::Built),
        "{:?}",
        tree.build_error
    );
    let names: Vec<&str> = tree.sources.iter().map(|s| s.path.as_str()).collect();
    assert!(
        names.iter().any(|n| n.ends_with("src/backend/mix.c")),
        "{names:?}"
    );
    assert!(
        !names
            .iter()
            .any(|n| n.contains("/KAT/") || n.contains("/tests/")),
        "{names:?}"
    );

    for (label, says) in [
        ("nomatch", "source pattern \"nothing/*.c\" matches no file"),
        ("noc", "no C sources in"),
        ("outside", "resolves outside"),
    ] {
        let e = build_entry(&run, &format!("src-1/{label}"));
        assert_eq!(e.kat, KatStatus::BuildFail, "{label}");
        let err = e.build_error.unwrap_or_default();
        assert!(err.contains(says), "{label}: {err}");
    }

    // The guide flags fail (`typeof` in C99), the harness defaults build: both logs kept.
    let g = build_entry(&run, "src-1/gnuonly");
    assert_eq!(g.build_status, Some(BuildStatus::Built));
    assert_eq!(g.flags, FlagSetName::HarnessDefault);
    assert_eq!(g.guide_result, Some(KatStatus::BuildFail));
    assert_eq!(
        g.guide_build_log.as_deref(),
        Some("build/src-1/gnuonly.guide.log")
    );
    let guide = std::fs::read_to_string(run.join("build/src-1/gnuonly.guide.log")).unwrap();
    assert!(
        guide.contains("-std=c99") && guide.contains("error"),
        "{guide}"
    );
    let fallback = std::fs::read_to_string(run.join(g.build_log.unwrap())).unwrap();
    assert!(
        fallback.contains("-std=gnu11") && !fallback.contains("exit status"),
        "{fallback}"
    );

    // Resumed: the built ones are cached (failed ones are retried), the kept log still named.
    let again = campaign_ok("build", &d.join("cand"), &run, &[]);
    assert!(again.contains("2 cached, 3 failed"), "{again}");
    assert_eq!(
        build_entry(&run, "src-1/gnuonly")
            .guide_build_log
            .as_deref(),
        Some("build/src-1/gnuonly.guide.log")
    );
}
