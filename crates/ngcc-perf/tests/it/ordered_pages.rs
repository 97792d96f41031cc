//! Ordered comparison pages: security groups from the reference's `security_targets.csv`,
//! representatives by the stated rule, statistical ranks checked against figures computed
//! here from the records' trials (independently of `report/groups.rs`), shared ranks, two
//! systems side by side, `validate` on an edited rank, and the site's ordered pages.

use crate::common::{self, reference};
use common::*;
use serde_json::Value;
use statrs::distribution::{ContinuousCDF, StudentsT};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The reference dataset (fixture + tests/data/reference-arm_1) with the corpus's
/// `security_targets.csv` in its catalog; returns (dataset, catalog).
fn reference_with_targets(dir: &Path) -> Option<(PathBuf, PathBuf)> {
    let fixture = fixture_dir()?;
    let corpus = corpus_dir()?;
    let data = dir.join("reference");
    let catalog = reference::assemble(&fixture, &data);
    std::fs::copy(
        corpus.join("catalog/security_targets.csv"),
        catalog.join("security_targets.csv"),
    )
    .unwrap();
    Some((data, catalog))
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// `ID;Instance;TargetBits[;Representative]` rows: (id, label) → (bits, marked).
fn targets(catalog: &Path) -> BTreeMap<(String, String), (Option<u32>, bool)> {
    let text = std::fs::read_to_string(catalog.join("security_targets.csv")).unwrap();
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with("ID;") && !l.is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split(';').collect();
            (
                (f[0].to_string(), f[1].to_string()),
                (f[2].parse().ok(), f.get(3).is_some_and(|m| *m == "true")),
            )
        })
        .collect()
}

/// Per-trial mean cycles of a record file.
fn trials(path: &Path) -> Vec<f64> {
    read_json(path)["trials"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["cycles"].as_f64().unwrap() / t["measurements"].as_f64().unwrap())
        .collect()
}

/// (mean, squared standard error, degrees of freedom) of a figure summed over records.
fn figure(data: &Path, cand: &str, label: &str, ops: &[&str]) -> (f64, f64, f64) {
    let (mut mean, mut se2, mut den) = (0.0, 0.0, 0.0);
    for op in ops {
        let v = trials(&data.join(format!("records/{cand}/{label}__{op}.json")));
        let n = v.len() as f64;
        let m = v.iter().sum::<f64>() / n;
        let var = v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (n - 1.0);
        mean += m;
        se2 += var / n;
        if var > 0.0 {
            den += (var / n).powi(2) / (n - 1.0);
        }
    }
    (mean, se2, se2 * se2 / den)
}

fn welch(a: (f64, f64, f64), b: (f64, f64, f64)) -> f64 {
    let se2 = a.1 + b.1;
    let df = se2 * se2 / (a.1 * a.1 / a.2 + b.1 * b.1 / b.2);
    let t = (a.0 - b.0).abs() / se2.sqrt();
    2.0 * (1.0 - StudentsT::new(0.0, 1.0, df).unwrap().cdf(t))
}

/// Expected ranks of figures in ascending order: Holm over adjacent Welch p-values.
fn expected_ranks(figs: &[(f64, f64, f64)]) -> Vec<String> {
    let p: Vec<f64> = figs.windows(2).map(|w| welch(w[0], w[1])).collect();
    let mut order: Vec<usize> = (0..p.len()).collect();
    order.sort_by(|&i, &j| p[i].partial_cmp(&p[j]).unwrap());
    let mut split = vec![false; p.len()];
    for (k, &i) in order.iter().enumerate() {
        if p[i] > 0.05 / (p.len() - k) as f64 {
            break;
        }
        split[i] = true;
    }
    // A run ends at a distinguishable pair or at the last figure.
    split.push(true);
    let mut out = Vec::new();
    let mut start = 0;
    for (i, ends) in split.iter().enumerate() {
        if *ends {
            for _ in start..=i {
                out.push(if start == i {
                    (i + 1).to_string()
                } else {
                    format!("{}–{}", start + 1, i + 1)
                });
            }
            start = i + 1;
        }
    }
    out
}

/// (rank, candidate, instance) of the first table below `## Order`.
fn page_ranks(text: &str) -> Vec<(String, String, String)> {
    let mut rows = Vec::new();
    let mut in_table = false;
    let mut in_order = false;
    for line in text.lines() {
        if line.starts_with("## ") {
            in_order = line == "## Order";
        } else if in_order && line.starts_with("| rank |") {
            in_table = true;
        } else if in_table && line.starts_with("|---") {
        } else if in_table && line.starts_with("| ") {
            let c: Vec<&str> = line.split(" | ").collect();
            let cand = c[1].trim_start_matches('[').split(']').next().unwrap();
            let label = c[2].split('`').nth(1).unwrap();
            rows.push((c[0][2..].to_string(), cand.to_string(), label.to_string()));
        } else if in_table {
            break;
        }
    }
    rows
}

fn ranked_ops(kind: &str) -> &'static [&'static str] {
    match kind {
        "kem" => &["keygen", "enc", "dec"],
        "sign" => &["sign", "verify"],
        "kex" => &["exchange"],
        _ => &["hash_65536"],
    }
}

/// Labels of each candidate of a dataset (from its records).
fn labels(data: &Path) -> BTreeMap<String, Vec<String>> {
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for cand in std::fs::read_dir(data.join("records")).unwrap().flatten() {
        let cand = cand.file_name().to_string_lossy().into_owned();
        if cand == "iccs" {
            continue;
        }
        for f in std::fs::read_dir(data.join("records").join(&cand))
            .unwrap()
            .flatten()
        {
            let name = f.file_name().to_string_lossy().into_owned();
            let label = name.split("__").next().unwrap().to_string();
            let v = out.entry(cand.clone()).or_default();
            if !v.contains(&label) {
                v.push(label);
            }
        }
    }
    out
}

/// Checks every group page of `pages` for system `sys` against the catalog and records:
/// each instance in its group, the representative rule, and the order and ranks. Returns
/// the number of ranked rows checked.
fn check_groups(data: &Path, catalog: &Path, pages: &Path, sys: &str) -> usize {
    let rows = targets(catalog);
    let mut checked = 0;
    for kind in ["kem", "sign", "kex", "hash"] {
        for bits in [128u32, 256, 512] {
            // Members of the group per candidate, from the catalog alone.
            let mut members: BTreeMap<String, Vec<(String, bool)>> = BTreeMap::new();
            for (cand, labels) in labels(data) {
                if !cand.starts_with(kind) {
                    continue;
                }
                for l in labels {
                    let (b, marked) = rows[&(cand.clone(), l.clone())];
                    if b == Some(bits) {
                        members.entry(cand.clone()).or_default().push((l, marked));
                    }
                }
            }
            let page = pages.join(format!("performance/ordered_{kind}_{bits}_{sys}.md"));
            if members.is_empty() {
                assert!(!page.exists(), "{} has no member", page.display());
                continue;
            }
            let text = std::fs::read_to_string(&page)
                .unwrap_or_else(|_| panic!("{} missing", page.display()));
            // The rule: the marked one, else the only one; two parameter sets without a
            // mark are ambiguous (no implementation suffixes in these labels).
            let mut reps = Vec::new();
            for (cand, m) in &members {
                let marked: Vec<&(String, bool)> = m.iter().filter(|x| x.1).collect();
                let rep = if marked.len() == 1 {
                    Some(marked[0].0.clone())
                } else if m.len() == 1 {
                    Some(m[0].0.clone())
                } else {
                    None
                };
                match rep {
                    Some(l) => reps.push((cand.clone(), l.clone(), figure(data, cand, &l, ranked_ops(kind)))),
                    None => assert!(
                        text.contains(&format!("| [{cand}](../{cand}/perf_{sys}.md) | – | ambiguous: {} parameter sets", m.len())),
                        "{kind} {bits}: {cand} should be ambiguous:\n{text}"
                    ),
                }
            }
            reps.sort_by(|a, b| a.2.0.partial_cmp(&b.2.0).unwrap());
            let figs: Vec<(f64, f64, f64)> = reps.iter().map(|r| r.2).collect();
            let want: Vec<(String, String, String)> = expected_ranks(&figs)
                .into_iter()
                .zip(&reps)
                .map(|(r, (c, l, _))| (r, c.clone(), l.clone()))
                .collect();
            assert_eq!(page_ranks(&text), want, "{}", page.display());
            let pairs = reps.len().saturating_sub(1);
            let distinct = (0..pairs).filter(|&i| want[i].0 != want[i + 1].0).count();
            assert!(
                text.contains(&format!(
                    "{distinct} of {pairs} adjacent pair(s) are distinguishable"
                )),
                "{text}"
            );
            checked += reps.len();
        }
    }
    checked
}

#[test]
fn reference_candidates_land_in_their_groups_with_statistical_ranks() {
    let tmp = tempfile::tempdir().unwrap();
    let Some((data, catalog)) = reference_with_targets(tmp.path()) else {
        return;
    };
    let out = tmp.path().join("pages");
    let o = report(&data, &out, &[]);
    assert!(o.status.success(), "{}", text(&o));
    let checked = check_groups(&data, &catalog, &out, "arm_1");
    // kem-31 and kem-38 in three groups, sign-18 and kex-06 in three, hash-03 in two.
    assert_eq!(checked, 6 + 3 + 3 + 2, "ranked rows checked");
    let hash = std::fs::read_to_string(out.join("performance/ordered_hash_256_arm_1.md")).unwrap();
    assert!(
        hash.contains("ambiguous: 2 parameter sets in this group (Dragon-512, Dragon-XOF-256)"),
        "{hash}"
    );
    // Supplementary sets are listed below, unranked.
    let kex = std::fs::read_to_string(out.join("performance/ordered_kex_128_arm_1.md")).unwrap();
    assert!(kex.contains("## Supplementary parameter sets (not ranked)"));
    assert!(kex.contains("`MAMBA-NIKE-192`"));
    // The reference's bandwidth rule: responder-only key (1568 + 0 + 1184).
    assert!(kex.contains("2752 (1568 + 0 + 1184)"), "{kex}");
    // Reference pages are unchanged by the ordered pages next to them.
    let index = std::fs::read_to_string(out.join("performance/ordered_arm_1.md")).unwrap();
    assert!(
        index.contains("[Key encapsulation](ordered_kem_128_arm_1.md)"),
        "{index}"
    );

    // A Representative column decides Dragon's 256-bit group: it is ranked then.
    let csv = std::fs::read_to_string(catalog.join("security_targets.csv")).unwrap();
    let marked = csv
        .replace(
            "ID;Instance;TargetBits",
            "ID;Instance;TargetBits;Representative",
        )
        .replace("hash-07;Dragon-512;256", "hash-07;Dragon-512;256;true");
    std::fs::write(catalog.join("security_targets.csv"), marked).unwrap();
    let out2 = tmp.path().join("pages2");
    let o = report(&data, &out2, &[]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(check_groups(&data, &catalog, &out2, "arm_1"), 15);
    // To read the pages: NGCC_ORDERED_PAGES_DIR=DIR keeps a copy.
    if let Some(dir) = std::env::var_os("NGCC_ORDERED_PAGES_DIR") {
        copy_tree(&out2, Path::new(&dir));
    }
    let hash = std::fs::read_to_string(out2.join("performance/ordered_hash_256_arm_1.md")).unwrap();
    assert!(hash.contains("`Dragon-512` |"), "{hash}");
    assert!(hash.contains("| marked |"), "{hash}");

    // validate recomputes them: nothing about groups as rendered (the assembled records
    // lack the per-process blocks validate also asks for), an edited rank named.
    let o = validate(&data, &catalog, Some(&out2));
    let t = text(&o);
    assert!(!t.contains("ordered_") && !t.contains("no row for"), "{t}");
    assert!(
        t.contains("security targets: 598 row(s), 0 instance(s) of this dataset without a row"),
        "{t}"
    );
    assert!(t.contains("pages, 0 differ"), "{t}");
    let page = out2.join("performance/ordered_kem_128_arm_1.md");
    let md = std::fs::read_to_string(&page).unwrap();
    let ranks = page_ranks(&md);
    let (first, cand) = (&ranks[0].0, &ranks[0].1);
    let edited = md.replacen(
        &format!("| {first} | [{cand}]"),
        &format!("| 9 | [{cand}]"),
        1,
    );
    assert_ne!(edited, md);
    std::fs::write(&page, edited).unwrap();
    let o = validate(&data, &catalog, Some(&out2));
    assert!(!o.status.success());
    let t = text(&o);
    assert!(
        t.contains(&format!(
            "{cand} `{}` has rank 9 on the page, recomputed {first}",
            ranks[0].2
        )),
        "{t}"
    );
}

/// Scales every trial's cycles of a record by `f` (and its cycle means).
fn scale_record(path: &Path, f: impl Fn(usize) -> f64) {
    let mut v = read_json(path);
    for (i, t) in v["trials"].as_array_mut().unwrap().iter_mut().enumerate() {
        let c = t["cycles"].as_f64().unwrap() * f(i);
        t["cycles"] = Value::from(c.round() as u64);
    }
    let trials = v["trials"].as_array().unwrap().clone();
    let cycles: f64 = trials.iter().map(|t| t["cycles"].as_f64().unwrap()).sum();
    let n: f64 = trials
        .iter()
        .map(|t| t["measurements"].as_f64().unwrap())
        .sum();
    v["mean_cycles"] = Value::from(cycles / n);
    std::fs::write(path, serde_json::to_string_pretty(&v).unwrap() + "\n").unwrap();
}

#[test]
fn records_closer_than_their_interval_share_a_rank() {
    let tmp = tempfile::tempdir().unwrap();
    let Some((data, catalog)) = reference_with_targets(tmp.path()) else {
        return;
    };
    // kem-31 NGCC-1 becomes kem-38 UVW-KEM-128 plus 0.1 %; both get trial-to-trial noise
    // of ±2 %.
    for op in ["keygen", "enc", "dec"] {
        scale_record(
            &data.join(format!("records/kem-38/UVW-KEM-128__{op}.json")),
            |i| 1.0 + [-0.02, 0.02, -0.01, 0.01, 0.0][i % 5],
        );
        let from = data.join(format!("records/kem-38/UVW-KEM-128__{op}.json"));
        let to = data.join(format!("records/kem-31/NGCC-1__{op}.json"));
        let mut v = read_json(&from);
        let mut old = read_json(&to);
        old["trials"] = v["trials"].take();
        std::fs::write(&to, serde_json::to_string_pretty(&old).unwrap() + "\n").unwrap();
        scale_record(&to, |i| {
            1.001 * (1.0 + [0.02, -0.02, 0.01, -0.01, 0.0][i % 5])
                / (1.0 + [-0.02, 0.02, -0.01, 0.01, 0.0][i % 5])
        });
    }
    let a = figure(&data, "kem-31", "NGCC-1", &["keygen", "enc", "dec"]);
    let b = figure(&data, "kem-38", "UVW-KEM-128", &["keygen", "enc", "dec"]);
    let half =
        |f: (f64, f64, f64)| StudentsT::new(0.0, 1.0, f.2).unwrap().inverse_cdf(0.975) * f.1.sqrt();
    assert!((a.0 - b.0).abs() < half(a).min(half(b)), "{a:?} {b:?}");
    let out = tmp.path().join("pages");
    let o = report(&data, &out, &[]);
    assert!(o.status.success(), "{}", text(&o));
    let md = std::fs::read_to_string(out.join("performance/ordered_kem_128_arm_1.md")).unwrap();
    let ranks = page_ranks(&md);
    assert_eq!(ranks.len(), 2);
    assert!(ranks.iter().all(|r| r.0 == "1–2"), "{md}");
    assert!(
        md.contains("0 of 1 adjacent pair(s) are distinguishable"),
        "{md}"
    );
    check_groups(&data, &catalog, &out, "arm_1");
}

#[test]
fn two_systems_side_by_side_with_ratios_and_order_changes() {
    let tmp = tempfile::tempdir().unwrap();
    let Some((data, catalog)) = reference_with_targets(tmp.path()) else {
        return;
    };
    // A second system: the same records, kem-31 ten times slower, kem-38 twice as fast, so
    // their order changes (kem-31 is 3.4 times faster on arm_1).
    let other = tmp.path().join("x86");
    copy_tree(&data, &other);
    edit_campaign(&other, |c| c.system_id = Some("x86_1".into()));
    for (cand, f) in [("kem-31", 10.0), ("kem-38", 0.5)] {
        for e in std::fs::read_dir(other.join("records").join(cand))
            .unwrap()
            .flatten()
        {
            scale_record(&e.path(), |_| f);
        }
    }
    let out = tmp.path().join("pages");
    let o = report(&data, &out, &["--across", other.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    let md =
        std::fs::read_to_string(out.join("performance/ordered_kem_128_arm_1_vs_x86_1.md")).unwrap();
    assert!(
        md.contains("| candidate | rank on arm_1 | rank on x86_1 |"),
        "{md}"
    );
    // Per-candidate ratio x86_1 / arm_1 of the ranked figure.
    assert!(md.contains("| 10.00× ("), "{md}");
    assert!(md.contains("| 0.50× ("), "{md}");
    assert!(
        md.contains("1 pair(s) change order between arm_1 and x86_1; 1 of them significantly."),
        "{md}"
    );
    assert!(md.contains("| yes ⚠ |"), "{md}");
    // The site shows the same page with a ratio chart, linked from the index, no dead link.
    let site_dir = tmp.path().join("site");
    let o = site(&[&data, &other], &catalog, &site_dir);
    assert!(o.status.success(), "{}", text(&o));
    let html =
        std::fs::read_to_string(site_dir.join("arm_1/ordered_kem_128_vs_x86_1.html")).unwrap();
    assert!(
        html.contains("<svg class=\"chart\"") && html.contains("x86_1 / arm_1 = 10.00×"),
        "{html}"
    );
    let index = std::fs::read_to_string(site_dir.join("index.html")).unwrap();
    assert!(
        index.contains("href=\"arm_1/ordered_kem_128_vs_x86_1.html\""),
        "{index}"
    );
    assert!(index.contains("href=\"x86_1/ordered.html\""), "{index}");
    assert!(crate::site_fixture::assert_links_resolve(&site_dir) > 0);
    if let Some(dir) = std::env::var_os("NGCC_ORDERED_PAGES_DIR") {
        copy_tree(&site_dir, &Path::new(&dir).join("site"));
    }
}

#[test]
fn catalog_writes_security_targets_from_build_entries() {
    let tmp = tempfile::tempdir().unwrap();
    let Some((data, _)) = reference_with_targets(tmp.path()) else {
        return;
    };
    // Our own build entries carry the manifest's keys; the catalog writes them out.
    let mut build = read_json(&data.join("build.json"));
    build["instances"]["kem-38/UVW-KEM-128"]["security_target"] = Value::from(128);
    build["instances"]["kem-38/UVW-KEM-128"]["representative"] = Value::from(true);
    std::fs::write(
        data.join("build.json"),
        serde_json::to_string_pretty(&build).unwrap(),
    )
    .unwrap();
    let out = tmp.path().join("cat");
    catalog_ok(&data, &out);
    let csv = std::fs::read_to_string(out.join("security_targets.csv")).unwrap();
    assert!(
        csv.contains("ID;Instance;TargetBits;Representative\n"),
        "{csv}"
    );
    assert!(csv.contains("\nkem-38;UVW-KEM-128;128;true\n"), "{csv}");
    assert!(csv.contains("\nkem-38;UVW-KEM-256;;\n"), "{csv}");
    assert!(!csv.contains("iccs;"), "{csv}");
    // An instance without a row is a validation problem.
    let rows: String = csv
        .lines()
        .filter(|l| !l.contains("UVW-KEM-256"))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(out.join("security_targets.csv"), rows).unwrap();
    let o = validate(&data, &out, None);
    assert!(!o.status.success());
    assert!(
        text(&o).contains("security_targets.csv: no row for kem-38 UVW-KEM-256"),
        "{}",
        text(&o)
    );
}

#[test]
fn ordered_site_pages_render_in_chromium_without_dead_links() {
    use crate::site_chromium::{assert_console_clean, attr, chromium, find_chromium, number};
    let Some(bin) = find_chromium() else {
        not_available(
            "NGCC_REQUIRE_CHROMIUM",
            "chromium not installed (apt-get install -y chromium)",
        );
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let Some((data, catalog)) = reference_with_targets(tmp.path()) else {
        return;
    };
    let out = tmp.path().join("site");
    let o = site(&[&data], &catalog, &out);
    assert!(o.status.success(), "{}", text(&o));
    // Every local link of every page (ordered pages included) resolves.
    assert!(crate::site_fixture::assert_links_resolve(&out) > 0);
    let index = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(index.contains("href=\"arm_1/ordered.html\""), "{index}");
    for (page, charts) in [("arm_1/ordered_kem_128.html", 1), ("arm_1/ordered.html", 0)] {
        let html = std::fs::read_to_string(out.join(page)).unwrap();
        if charts > 0 {
            // Whiskers and the representative's instance in each mark's tooltip.
            assert!(html.contains("class=\"whisker\""), "{page}");
            assert!(html.contains("<title>rank 1: "), "{page}");
            assert!(html.contains("UVW-KEM-128 (only instance)"), "{page}");
        }
        let run = chromium(
            &bin,
            &tmp.path()
                .join(format!("profile-{}", page.replace('/', "_"))),
            &["--dump-dom".into()],
            &format!("file://{}?selfcheck", out.join(page).display()),
        );
        assert!(run.success, "{page}: {}", run.stderr);
        let dom = &run.stdout;
        assert_eq!(attr(dom, "data-rendered"), Some("ok"), "{page}: {dom:.600}");
        assert_eq!(attr(dom, "data-errors"), Some(""), "{page}");
        assert_eq!(number(dom, "data-charts"), charts, "{page}");
        assert_eq!(attr(dom, "data-selfcheck"), Some("ok"), "{page}");
        assert!(dom.contains("class=\"sortable\""), "{page}");
        assert_console_clean(&run, page);
        // The links of the page as the browser built it.
        let base = out.join(page);
        let dir = base.parent().unwrap();
        let mut links = 0;
        for part in dom.split("href=\"").skip(1) {
            let target = part.split('"').next().unwrap().replace("&amp;", "&");
            if target.starts_with("http") {
                continue;
            }
            let file = target.split('#').next().unwrap();
            if !file.is_empty() {
                assert!(dir.join(file).is_file(), "{page}: dead link {target}");
                links += 1;
            }
        }
        assert!(links > 3, "{page}: {links} links");
    }
}
