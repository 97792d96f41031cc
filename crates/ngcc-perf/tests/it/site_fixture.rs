//! `ngcc-perf site` on the reference dataset: every page exists, every link resolves, every
//! table row of the reference's own candidate pages appears in the HTML, charts are drawn;
//! with two systems the pages link to each other and an unfixed host is bannered.

use crate::common;
use common::*;
use regex_lite::Regex;
use std::path::{Path, PathBuf};
use std::time::Instant;

fn html_files(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "html") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&nbsp;", "\u{a0}")
        .replace("&amp;", "&")
}

/// Every local `href`/`src` of every page points to an existing file (and anchor).
pub(crate) fn assert_links_resolve(root: &Path) -> usize {
    let attr = Regex::new(r#"(?:href|src)="([^"]*)""#).unwrap();
    let mut checked = 0;
    for page in html_files(root) {
        let html = std::fs::read_to_string(&page).unwrap();
        for cap in attr.captures_iter(&html) {
            let target = unescape(&cap[1]);
            if target.starts_with("https://") || target.starts_with("http://") {
                continue;
            }
            assert!(!target.is_empty(), "{}: empty link", page.display());
            let (path, fragment) = match target.split_once('#') {
                Some((p, f)) => (p.to_string(), Some(f.to_string())),
                None => (target.clone(), None),
            };
            let file = if path.is_empty() {
                page.clone()
            } else {
                page.parent().unwrap().join(&path)
            };
            assert!(
                file.is_file(),
                "{}: link {target} does not resolve",
                page.display()
            );
            let canonical = file.canonicalize().unwrap();
            assert!(
                canonical.starts_with(root.canonicalize().unwrap()),
                "{}: link {target} leaves the site",
                page.display()
            );
            if let Some(f) = fragment {
                let body = std::fs::read_to_string(&file).unwrap();
                assert!(
                    body.contains(&format!("id=\"{f}\"")),
                    "{}: anchor #{f} missing in {}",
                    page.display(),
                    file.display()
                );
            }
            checked += 1;
        }
    }
    checked
}

/// The visible text of each table row of an HTML page, cells joined by `|`.
fn html_rows(html: &str) -> Vec<String> {
    let tr = Regex::new(r"(?s)<tr>(.*?)</tr>").unwrap();
    let tag = Regex::new(r"<[^>]+>").unwrap();
    tr.captures_iter(html)
        .map(|c| {
            let cells = c[1].replace("</td>", "\u{1f}").replace("</th>", "\u{1f}");
            let plain = unescape(&tag.replace_all(&cells, ""));
            plain
                .trim_end_matches('\u{1f}')
                .split('\u{1f}')
                .map(str::trim)
                .collect::<Vec<_>>()
                .join("|")
        })
        .collect()
}

/// Table rows of a Markdown page in the same form (backticks dropped).
fn md_rows(md: &str) -> Vec<String> {
    md.lines()
        .filter(|l| l.starts_with('|') && !l.starts_with("|---"))
        .map(|l| {
            l.trim()
                .trim_start_matches('|')
                .trim_end_matches('|')
                .split('|')
                .map(|c| c.trim().replace('`', ""))
                .collect::<Vec<_>>()
                .join("|")
        })
        .collect()
}

fn dir_size(root: &Path) -> (usize, u64) {
    let mut files = 0;
    let mut bytes = 0;
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let e = e.unwrap();
            if e.file_type().unwrap().is_dir() {
                stack.push(e.path());
            } else {
                files += 1;
                bytes += e.metadata().unwrap().len();
            }
        }
    }
    (files, bytes)
}

#[test]
fn site_renders_the_reference_fixture() {
    let Some(fixture) = fixture_dir() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("site");
    let started = Instant::now();
    let o = site(&[&fixture], &fixture.join("catalog"), &out);
    let elapsed = started.elapsed();
    assert!(o.status.success(), "{}", text(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout
            .trim_end()
            .ends_with(&out.join("index.html").display().to_string()),
        "{stdout}"
    );
    for f in [
        "index.html",
        "assets/site.css",
        "assets/site.js",
        "arm_1/summary.html",
        "arm_1/method.html",
        "arm_1/kem-31.html",
        "arm_1/kem-38.html",
    ] {
        assert!(out.join(f).is_file(), "{f} missing");
    }
    let links = assert_links_resolve(&out);
    assert!(links > 20, "only {links} links checked");

    let index = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(index.contains("href=\"arm_1/kem-38.html\""), "{index}");
    assert!(index.contains("href=\"arm_1/summary.html\""), "{index}");

    for cand in ["kem-31", "kem-38"] {
        let page = std::fs::read_to_string(out.join(format!("arm_1/{cand}.html"))).unwrap();
        let rows = html_rows(&page);
        // Every table row of the reference harness's own page is on ours.
        let md =
            std::fs::read_to_string(fixture.join(format!("pages/{cand}/perf_arm_1.md"))).unwrap();
        let want = md_rows(&md);
        assert!(want.len() > 40, "{cand}: {} rows", want.len());
        for row in &want {
            assert!(rows.contains(row), "{cand}: row missing: {row}");
        }
        for section in [
            "1. Basic information",
            "2. Assessment environment",
            "3. Functional testing (KAT)",
            "4. Performance",
            "5. Resource consumption",
            "6. Transmission and storage overhead",
            "7. Raw evidence index",
        ] {
            assert!(
                page.contains(&format!(">{section}</h2>")),
                "{cand}: {section}"
            );
        }
        // Three charts: cost bars, size scatter, share bars; every mark has a tooltip.
        assert_eq!(page.matches("<svg class=\"chart\"").count(), 3, "{cand}");
        assert!(page.matches("<rect").count() >= 9 + 27, "{cand}");
        assert_eq!(page.matches("<circle").count(), 3, "{cand}");
        assert!(page.contains("mean cycles per operation (user-mode core cycles), log scale"));
        assert!(
            !page.contains("class=\"banner"),
            "{cand}: reference data has no banner"
        );
        assert!(page.contains("<strong>arm_1 (this page)</strong>"));
    }
    let kem38 = std::fs::read_to_string(out.join("arm_1/kem-38.html")).unwrap();
    assert!(kem38.contains("<code>UVW-KEM-128</code>"));
    // Sort keys are the record's numbers, not the rounded text (mean cycles of UVW-KEM-128 enc).
    let enc: ngcc_perf::dataset::schema::Record =
        ngcc_perf::util::read_json(&fixture.join("records/kem-38/UVW-KEM-128__enc.json")).unwrap();
    let cycles = enc.stats.unwrap().mean_cycles.unwrap();
    assert!(
        kem38.contains(&format!(
            "<td data-v=\"{cycles:e}\" class=\"n\">534.0 k</td>"
        )),
        "{cycles:e}"
    );
    assert!(kem38.contains("<title>UVW-KEM-128 enc: 534.0 k cycles</title>"));
    assert!(kem38.contains("<title>UVW-KEM-128 enc: pseudohash/XOF/sm3 25%</title>"));
    assert!(kem38.contains("<title>UVW-KEM-128 enc: DRNG 35%</title>"));
    assert!(kem38.contains("pk 208013 B + ct 1032 B"));

    let summary = std::fs::read_to_string(out.join("arm_1/summary.html")).unwrap();
    assert!(summary.contains("class=\"data filterable\""));
    assert!(summary.contains("href=\"kem-38.html\""));
    assert!(
        html_rows(&summary)
            .iter()
            .any(|r| r.contains("534.0 k (25%)"))
    );
    assert_eq!(summary.matches("<svg class=\"chart\"").count(), 4);

    // Same inputs, same bytes.
    let again = tmp.path().join("again");
    assert!(
        site(&[&fixture], &fixture.join("catalog"), &again)
            .status
            .success()
    );
    for f in html_files(&out) {
        let rel = f.strip_prefix(&out).unwrap();
        assert_eq!(
            std::fs::read(&f).unwrap(),
            std::fs::read(again.join(rel)).unwrap(),
            "{} differs between two runs",
            rel.display()
        );
    }

    let (files, bytes) = dir_size(&out);
    println!(
        "site size for the fixture: {files} files, {bytes} bytes; `ngcc-perf site` took {} ms",
        elapsed.as_millis()
    );
}

#[test]
fn two_systems_link_to_each_other_and_an_unfixed_host_is_bannered() {
    let Some(fixture) = fixture_dir() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let x86 = tmp.path().join("x86_1");
    copy_tree(&fixture, &x86);
    // System x86_1 measured by us: TSC counter, host not fixed.
    edit_campaign(&x86, |c| c.system_id = Some("x86_1".into()));
    make_tsc(&x86, &["kem-38"], &["governor powersave"]);
    let out = tmp.path().join("site");
    let o = site(&[&fixture, &x86], &fixture.join("catalog"), &out);
    assert!(o.status.success(), "{}", text(&o));
    assert_links_resolve(&out);
    // Each system has its own survey page (its shares), linked from its candidate pages.
    for sys in ["arm_1", "x86_1"] {
        let survey = std::fs::read_to_string(out.join(format!("{sys}/survey.html"))).unwrap();
        assert!(
            survey.contains(&format!("largest hash share on {sys} (op)")),
            "{survey}"
        );
        let page = std::fs::read_to_string(out.join(format!("{sys}/kem-38.html"))).unwrap();
        assert!(page.contains("<a href=\"survey.html\">Survey</a>"), "{sys}");
    }
    assert!(!out.join("survey.html").exists());

    let arm = std::fs::read_to_string(out.join("arm_1/kem-38.html")).unwrap();
    assert!(
        arm.contains("<a href=\"../x86_1/kem-38.html\">x86_1</a>"),
        "{arm}"
    );
    assert!(!arm.contains("class=\"banner"));
    for page in [
        "x86_1/kem-38.html",
        "x86_1/kem-31.html",
        "x86_1/summary.html",
        "x86_1/method.html",
    ] {
        let html = std::fs::read_to_string(out.join(page)).unwrap();
        assert!(
            html.contains("<div class=\"banner warn\" role=\"alert\">System x86_1: host not fixed: governor powersave; figures are indicative, not publishable.</div>"),
            "{page}"
        );
        assert!(html.contains("<div class=\"banner info\""), "{page}");
    }
    let x = std::fs::read_to_string(out.join("x86_1/kem-38.html")).unwrap();
    assert!(x.contains("<a href=\"../arm_1/kem-38.html\">arm_1</a>"));
    // Axis titles say what was counted.
    assert!(x.contains(
        "mean TSC cycles per operation (TSC reference cycles, not core cycles), log scale"
    ));
    assert!(!x.contains("user-mode core cycles"));
    assert!(x.contains("534.0 k TSC cycles"));
    let index = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(
        index.contains("href=\"x86_1/kem-31.html\"")
            && index.contains("href=\"arm_1/kem-31.html\"")
    );
    assert!(index.contains("<strong class=\"bad\">not fixed</strong>"));
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let Some(fixture) = fixture_dir() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("site");
    let cat = fixture.join("catalog");
    let missing = tmp.path().join("nope");
    for (datasets, what) in [
        (vec![missing.as_path()], "does not exist"),
        (
            vec![fixture.as_path(), fixture.as_path()],
            "both system arm_1",
        ),
    ] {
        let o = site(&datasets, &cat, &out);
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.starts_with("ngcc-perf: error:") && err.contains(what),
            "{err}"
        );
    }
    // A system missing from systems.csv.
    let other = tmp.path().join("zz");
    copy_tree(&fixture, &other);
    edit_campaign(&other, |c| c.system_id = Some("zz_9".into()));
    let o = site(&[&other], &cat, &out);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("zz_9"), "{}", text(&o));
}
