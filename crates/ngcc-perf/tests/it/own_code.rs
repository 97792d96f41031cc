//! The README's "Measure your own code" section, followed literally: its files written where
//! it says, its commands run as printed, on a toy of each API flavour. The first KAT is NOKAT
//! and prints the `kat manifest` command, the second is PASS, and the pages and site that
//! come out link only files that exist and nothing in the reference harness's repository.
//! The reference fixture's pages and site are walked the same way (reference pages may keep
//! the reference's links into its own repository).

use crate::common;
use common::*;
use std::path::{Path, PathBuf};

/// The reference harness's repository (report::model::HARNESS_URL).
const HARNESS: &str = "github.com/ngcc-dev/ngcc-harness";

/// Files the reference's Markdown links that live in its repository, not among its pages.
const REFERENCE_REPO_FILES: &[&str] = &["performance/EXTERNAL_SIZE_AUDIT.md"];

struct Section {
    files: Vec<(String, String)>,
    commands: Vec<String>,
}

fn readme_section() -> Section {
    let readme = std::fs::read_to_string(manifest_dir().join("../../README.md")).unwrap();
    let start = readme
        .find("\n## Measure your own code\n")
        .expect("README has a \"Measure your own code\" section");
    let rest = &readme[start + 1..];
    let end = rest[3..].find("\n## ").map_or(rest.len(), |i| i + 3);
    let lines: Vec<&str> = rest[..end].lines().collect();
    let (mut files, mut commands) = (Vec::new(), Vec::new());
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let name = line
            .strip_prefix('`')
            .and_then(|l| l.strip_suffix("`:"))
            .filter(|_| lines.get(i + 1).is_some_and(|n| n.starts_with("```")));
        let shell = line == "```sh";
        if name.is_none() && !shell {
            i += 1;
            continue;
        }
        i += if shell { 1 } else { 2 };
        let mut body = String::new();
        while lines[i] != "```" {
            body.push_str(lines[i]);
            body.push('\n');
            i += 1;
        }
        match name {
            Some(n) => files.push((n.to_string(), body)),
            None => commands.extend(body.lines().map(String::from)),
        }
        i += 1;
    }
    Section { files, commands }
}

/// Every link target in a Markdown (`](…)`) or HTML (`href="…"`, `src="…"`) file.
fn links(text: &str, html: bool) -> Vec<String> {
    let opens: &[&str] = if html {
        &["href=\"", "src=\""]
    } else {
        &["]("]
    };
    let close = if html { '"' } else { ')' };
    let mut out = Vec::new();
    for open in opens {
        let mut rest = text;
        while let Some(i) = rest.find(open) {
            rest = &rest[i + open.len()..];
            if let Some(j) = rest.find(close) {
                out.push(rest[..j].to_string());
            }
        }
    }
    out
}

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            files_under(&p, out);
        } else {
            out.push(p);
        }
    }
}

/// Dead relative links (and, with `ours`, links into the reference harness) of every page
/// under `root`, as `file: target` lines. `allowed` are root-relative targets a reference
/// page may link although they are not generated.
fn bad_links(root: &Path, ours: bool, allowed: &[&str]) -> Vec<String> {
    let mut files = Vec::new();
    files_under(root, &mut files);
    let mut bad = Vec::new();
    let mut walked = 0;
    for f in files {
        let html = f.extension().is_some_and(|e| e == "html");
        if !html && f.extension().is_none_or(|e| e != "md") {
            continue;
        }
        let text = std::fs::read_to_string(&f).unwrap();
        let shown = f.strip_prefix(root).unwrap().display().to_string();
        for target in links(&text, html) {
            walked += 1;
            if target.contains("://") || target.starts_with("mailto:") {
                if ours && target.contains(HARNESS) {
                    bad.push(format!(
                        "{shown}: {target} (the reference harness's repository)"
                    ));
                }
                continue;
            }
            let path = target.split('#').next().unwrap();
            if path.is_empty() {
                continue;
            }
            let resolved = f.parent().unwrap().join(path);
            if resolved.exists() {
                continue;
            }
            let rel = normalize(&resolved, root);
            if !allowed.contains(&rel.as_str()) {
                bad.push(format!("{shown}: {target} (no such file)"));
            }
        }
    }
    assert!(walked > 0, "no links under {}", root.display());
    bad
}

/// `a/b/../c` relative to `root`, as a string.
fn normalize(p: &Path, root: &Path) -> String {
    let mut parts: Vec<String> = Vec::new();
    for c in p.strip_prefix(root).unwrap_or(p).components() {
        match c {
            std::path::Component::ParentDir => {
                parts.pop();
            }
            std::path::Component::Normal(n) => parts.push(n.to_string_lossy().into_owned()),
            _ => {}
        }
    }
    parts.join("/")
}

#[test]
fn the_readme_section_reaches_kat_pass_a_page_and_a_site_for_both_api_flavours() {
    let dir = scratch("own_code");
    let section = readme_section();
    assert_eq!(section.files.len(), 6, "three files per flavour");
    for (name, body) in &section.files {
        write(&dir.join(name), body);
    }
    assert!(section.commands.len() >= 8, "{:?}", section.commands);
    let mut outputs = Vec::new();
    for line in &section.commands {
        let words: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(
            words[0], "ngcc-perf",
            "a command the test can follow: {line}"
        );
        let out = bin().args(&words[1..]).current_dir(&dir).output().unwrap();
        assert!(out.status.success(), "{line}: {}", text(&out));
        outputs.push(text(&out));
    }
    // The first KAT: NOKAT, the digests and the command the README runs next.
    let run = dir.join("run");
    for cand in ["mykem-nist", "mykem-iccs"] {
        assert!(
            outputs[0].contains(&format!(
                "ngcc-perf kat manifest {} --cand {cand} --out cands/{cand}/kat.sha256",
                run.display()
            )),
            "{}",
            outputs[0]
        );
        assert!(outputs[0].contains(&format!("kat {cand}/mykem-1: NOKAT")));
        let e = build_entry(&run, &format!("{cand}/mykem-1"));
        assert_eq!((e.kat.as_str(), e.flags.as_str()), ("PASS", "guide"));
        assert!(
            dir.join(format!("pages/{cand}/perf_mine.md")).is_file(),
            "a page for {cand}"
        );
    }
    assert!(dir.join("site/index.html").is_file());
    let bad: Vec<String> = ["pages", "site"]
        .iter()
        .flat_map(|d| bad_links(&dir.join(d), true, &[]))
        .collect();
    assert!(bad.is_empty(), "{}", bad.join("\n"));

    // A second dataset (one candidate, another system) catalogued into the same folder: the
    // rows of both stay, and a site of both datasets renders with no dead link.
    let cands = dir.join("cands");
    let run2 = dir.join("run2");
    campaign_ok(
        "build,kat,calibrate,measure",
        &cands,
        &run2,
        &[
            "--only",
            "mykem-nist/*",
            "--allow-unfixed-host",
            "--trial-target",
            "0.02",
            "--op-budget",
            "0.5",
        ],
    );
    let (data2, catalog) = (dir.join("dataset2"), dir.join("catalog"));
    publish_ok(&run2, "other", &data2);
    let before = std::fs::read_to_string(catalog.join("downloads.csv")).unwrap();
    catalog_ok(&data2, &catalog);
    catalog_ok(&data2, &catalog);
    assert_eq!(
        std::fs::read_to_string(catalog.join("downloads.csv")).unwrap(),
        before,
        "the same rows, merged by id, written once each"
    );
    let systems = std::fs::read_to_string(catalog.join("systems.csv")).unwrap();
    assert!(
        systems.contains("\nmine;") && systems.contains("\nother;"),
        "{systems}"
    );
    let sizes = std::fs::read_to_string(catalog.join("external_sizes.csv")).unwrap();
    for row in [
        "mykem-iccs;mykem-1;32;32;;encoded",
        "mykem-nist;mykem-1;32;32;;encoded",
    ] {
        assert_eq!(sizes.matches(row).count(), 1, "{sizes}");
    }
    let site2 = dir.join("site2");
    let o = site(&[&dir.join("dataset"), &data2], &catalog, &site2);
    assert!(o.status.success(), "{}", text(&o));
    let bad = bad_links(&site2, true, &[]);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn reference_pages_and_site_have_no_dead_links() {
    let Some(fixture) = fixture_dir() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let pages = tmp.path().join("pages");
    let o = report(&fixture, &pages, &[]);
    assert!(o.status.success(), "{}", text(&o));
    let out = tmp.path().join("site");
    let o = site(&[&fixture], &fixture.join("catalog"), &out);
    assert!(o.status.success(), "{}", text(&o));
    let mut bad = bad_links(&pages, false, REFERENCE_REPO_FILES);
    bad.extend(bad_links(&out, false, &[]));
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}
