//! A package's own text never acts on the user's terminal: a submission folder named with an
//! escape sequence (OSC 0 retitles the terminal, BEL ends it) goes through `import ngcc` and
//! a `campaign build,kat` whose first flag set fails (Inly's C99 plain inline), so the path is
//! printed by the importer, the build's BUILDFAIL line and the KAT phase. Every byte that
//! would act is written out (the tree's folder is named so too), and the package still
//! imports and passes; broken, its
//! BUILDFAIL line (the compiler's message, with the path) is written out too.

use crate::common::*;
use ngcc_perf::dataset::schema::KatStatus;
use std::path::Path;

/// A control that acts on a terminal (C0 but newline and tab, DEL, C1).
fn acts(c: char) -> bool {
    c.is_control() && c != '\n' && c != '\t'
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn a_package_named_with_an_escape_sequence_is_printed_written_out_and_still_passes() {
    let dir = tempfile::tempdir().unwrap();
    // The tree's own folder too: the importer's closing hint prints it in a line of ours.
    let tree = dir.path().join("tr\u{1b}]2;ee\u{7}");
    let name = "Re\u{1b}]0;pwned\u{7}cy";
    copy_tree(
        &manifest_dir().join("tests/toys/ngcc-tree/05-kem/Inly"),
        &tree.join(name),
    );
    let cands = dir.path().join("cands");
    let harness = manifest_dir().join("tests/toys/ngcc-harness");
    let import = run_ok(&[
        "import",
        "ngcc",
        s(&tree),
        "--harness",
        s(&harness),
        "--out",
        s(&cands),
    ]);
    // And the run's folder, which the campaign names in lines of its own.
    let run = dir.path().join("ru\u{1b}[31mn");
    let built = campaign(
        "build,kat",
        &cands,
        &run,
        &["--allow-source-root", s(&tree)],
    );
    assert!(built.status.success(), "{}", text(&built));
    assert_eq!(build_entry(&run, "toy-inly/Inly-128").kat, KatStatus::Pass);
    // Then the package breaks: the compiler's message, with the path, is the BUILDFAIL line.
    let src = tree
        .join(name)
        .join("Implementations/Reference_Implementation/Inly-128/mix.c");
    let code = std::fs::read_to_string(&src).unwrap();
    std::fs::write(&src, format!("#error broken on purpose\n{code}")).unwrap();
    let broken = campaign("build", &cands, &run, &["--allow-source-root", s(&tree)]);
    assert_eq!(
        build_entry(&run, "toy-inly/Inly-128").kat,
        KatStatus::BuildFail
    );
    // Without the source root the importer named, the campaign refuses the instance with
    // its path in a reason of our own.
    let refused = campaign("build", &cands, &dir.path().join("run2"), &[]);
    for (what, out) in [
        ("import", &import),
        ("campaign after the break", &broken),
        ("campaign without the source root", &refused),
    ] {
        let all = text(out);
        if let Some(c) = all.chars().find(|&c| acts(c)) {
            panic!("{what} printed {c:?} raw:\n{all}");
        }
        // The path was printed, written out: the test sees the lines it guards.
        assert!(all.contains("Re\\x1b]0;pwned\\x07cy"), "{what}:\n{all}");
    }
}

/// The print macros and the standard output's handle live in `util/console.rs` only: every
/// other line goes through it.
#[test]
fn every_printed_line_goes_through_the_console() {
    let src = manifest_dir().join("src");
    let mut stack = vec![src.clone()];
    let mut found = Vec::new();
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            if p.extension().is_none_or(|x| x != "rs") || p.ends_with("util/console.rs") {
                continue;
            }
            let code = std::fs::read_to_string(&p).unwrap();
            for (i, line) in code.lines().enumerate() {
                let bare = ["println!(", "print!(", "eprintln!(", "eprint!(", "stdout()"]
                    .iter()
                    .any(|m| {
                        line.match_indices(m).any(|(at, _)| {
                            !line[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_')
                        })
                    });
                if bare && !line.trim_start().starts_with("//") {
                    found.push(format!(
                        "{}:{}: {}",
                        p.strip_prefix(&src).unwrap().display(),
                        i + 1,
                        line.trim()
                    ));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "print with crate::util::say!/out!/out_text! (util/console.rs):\n{}",
        found.join("\n")
    );
}
