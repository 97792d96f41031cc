//! `ngcc-perf site`: a static HTML site from one or more published datasets (one per
//! system). Pure functions from (datasets, catalogs) to files — no clock, environment or
//! randomness — so the same inputs give the same bytes. Works from `file://`: relative links
//! only, one small stylesheet and script, SVG charts inline.
//!
//! Layout: `index.html`, `assets/` and per system `<sys>/summary.html`, `<sys>/method.html`,
//! `<sys>/survey.html` (that system's shares), `<sys>/<cand>.html`, and with security groups
//! in the catalog `<sys>/ordered.html` and `<sys>/ordered_<kind>_<bits>.html`.

pub mod assets;
pub mod candidate;
pub mod charts;
pub mod figures;
pub mod html;
pub mod index;
pub mod metric;
pub mod ordered;
pub mod summary;

use crate::dataset::catalog::Catalogs;
use crate::dataset::load::{self, Dataset};
use crate::report::model::{Honesty, View};
use crate::report::{Page, candidate_page, method, survey, system_of};
use crate::util::Failure;
use anyhow::{Context, Result};
use clap::Args;
use html::{Banner, BannerKind, Shell};
use metric::Metric;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct SiteArgs {
    /// Published datasets, one per system (campaign.json's system_id names the system).
    #[arg(required = true, value_name = "DATASET")]
    pub datasets: Vec<PathBuf>,
    /// Folder with systems.csv, downloads.csv, external_sizes.csv, kat_issues.csv, ….
    #[arg(long)]
    pub catalog: PathBuf,
    /// Output folder of the site; `index.html` is its entry page.
    #[arg(long)]
    pub out: PathBuf,
}

/// One file of the site: path relative to the site root, and its bytes.
#[derive(Clone, Debug, PartialEq)]
pub struct SiteFile {
    pub path: String,
    pub bytes: Vec<u8>,
}

/// One system: its view, the metric of its charts, its banners and its pages (documents).
pub struct SystemSite<'a> {
    pub view: View<'a>,
    pub metric: Metric,
    pub banners: Vec<Banner>,
    pub pages: Vec<Page>,
    pub candidates: Vec<String>,
    /// Whether the system has a survey page (the catalog has a survey).
    pub has_survey: bool,
}

impl SystemSite<'_> {
    pub fn sys(&self) -> &str {
        self.view.sys
    }
}

/// Every system of the site and where each Markdown page went.
pub struct Site<'a> {
    pub systems: Vec<SystemSite<'a>>,
    /// Markdown page path (`kem-38/perf_arm_1.md`) → site path (`arm_1/kem-38.html`).
    pub md_to_html: BTreeMap<String, String>,
}

pub const INDEX: &str = "index.html";

pub fn survey_path(sys: &str) -> String {
    format!("{sys}/survey.html")
}

pub fn summary_path(sys: &str) -> String {
    format!("{sys}/summary.html")
}

pub fn method_path(sys: &str) -> String {
    format!("{sys}/method.html")
}

pub fn candidate_path(sys: &str, cand: &str) -> String {
    format!("{sys}/{cand}.html")
}

/// Ids become folder and file names: refuse anything that could leave the output folder.
fn check_name(kind: &str, id: &str) -> Result<()> {
    let ok = !id.is_empty()
        && !id.starts_with('.')
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
    if ok {
        Ok(())
    } else {
        Err(Failure::usage(format!(
            "{kind} id {id:?} cannot be used as a file name (letters, digits, `-`, `_`, `.` only)"
        )))
    }
}

/// The banners of a system: host not fixed (warning), how candidate code was contained
/// (a warning when it was not) and a counter that is not core cycles. Each is one sentence
/// "System ID: <subject> …." about one of those subjects (`host`, `candidate code`,
/// `cycle counter`), so a reader, or a program, can tell them apart.
pub fn banners(view: &View) -> Vec<Banner> {
    let sys = view.sys;
    let records: Vec<&crate::dataset::schema::Record> =
        view.ds.records.iter().map(|r| &r.record).collect();
    view.honesty_rows(records.iter().copied())
        .into_iter()
        .map(|(item, value)| {
            let value = value.plain();
            match item {
                Honesty::HostState => Banner {
                    kind: BannerKind::Warn,
                    text: format!("System {sys}: host {value}."),
                },
                Honesty::Containment => match super::model::containment(&view.ds.campaign, &records) {
                    Some(super::model::Contained::Jailed(layers)) => Banner {
                        kind: BannerKind::Info,
                        text: format!("System {sys}: candidate code ran jailed ({layers})."),
                    },
                    _ => Banner {
                        kind: BannerKind::Warn,
                        text: format!(
                            "System {sys}: candidate code ran uncontained, with the harness's own rights, so its figures and verdicts could be forged."
                        ),
                    },
                },
                Honesty::Counter => Banner {
                    kind: BannerKind::Info,
                    text: format!("System {sys}: cycle counter is {value}."),
                },
            }
        })
        .collect()
}

impl<'a> Site<'a> {
    /// Builds the views and pages of every dataset. `sys_ids[i]` is the system of
    /// `datasets[i]`.
    pub fn new(
        datasets: &'a [Dataset],
        sys_ids: &'a [String],
        cat: &'a Catalogs,
    ) -> Result<Site<'a>> {
        let mut systems = Vec::new();
        let mut md_to_html = BTreeMap::new();
        for (ds, sys) in datasets.iter().zip(sys_ids) {
            check_name("system", sys)?;
            let view = View::new(ds, cat, sys)?;
            let candidates = view.candidates();
            for c in &candidates {
                check_name("candidate", c)?;
                md_to_html.insert(candidate_page::path(c, sys), candidate_path(sys, c));
            }
            md_to_html.insert(crate::report::summary::path(sys), summary_path(sys));
            md_to_html.insert(method::path(sys), method_path(sys));
            let pages =
                crate::report::render_all(ds, cat, sys).with_context(|| format!("system {sys}"))?;
            let has_survey = pages.iter().any(|p| p.path == survey::PATH);
            systems.push(SystemSite {
                has_survey,
                metric: Metric::of(ds),
                banners: banners(&view),
                view,
                pages,
                candidates,
            });
        }
        for s in &systems {
            md_to_html.extend(ordered::paths(s));
        }
        Ok(Site {
            systems,
            md_to_html,
        })
    }

    /// Link resolver for the page `md_from` (its Markdown path) of system `sys`, rendered at
    /// site path `html_from`. The survey path resolves to that system's survey.
    pub fn linker<'s>(
        &'s self,
        sys: &'s str,
        md_from: &'s str,
        html_from: &'s str,
    ) -> impl Fn(&str) -> Option<String> + 's {
        move |target: &str| {
            if target.starts_with("https://")
                || target.starts_with("http://")
                || target.starts_with("mailto:")
                || target.starts_with('#')
            {
                return Some(target.to_string());
            }
            let (path, fragment) = match target.split_once('#') {
                Some((p, f)) => (p, format!("#{f}")),
                None => (target, String::new()),
            };
            let dir = md_from.rsplit_once('/').map(|(d, _)| d).unwrap_or("");
            let resolved = html::normalize(&format!("{dir}/{path}"))?;
            let to = if resolved == survey::PATH {
                self.systems
                    .iter()
                    .find(|s| s.sys() == sys && s.has_survey)
                    .map(|_| survey_path(sys))?
            } else {
                self.md_to_html.get(&resolved)?.clone()
            };
            Some(format!("{}{fragment}", html::rel_href(html_from, &to)))
        }
    }

    /// Systems (in dataset order) on which `cand` has a page.
    pub fn systems_with(&self, cand: &str) -> Vec<&str> {
        self.systems
            .iter()
            .filter(|s| s.candidates.iter().any(|c| c == cand))
            .map(|s| s.sys())
            .collect()
    }

    /// Every candidate of every system, in id order.
    pub fn all_candidates(&self) -> Vec<String> {
        let mut all: Vec<String> = self
            .systems
            .iter()
            .flat_map(|s| s.candidates.iter().cloned())
            .collect();
        all.sort();
        all.dedup();
        all
    }
}

/// Renders every file of the site.
pub fn render_site(datasets: &[Dataset], cat: &Catalogs) -> Result<Vec<SiteFile>> {
    let mut sys_ids = Vec::new();
    for ds in datasets {
        let sys = system_of(ds, None).with_context(|| ds.root.display().to_string())?;
        if sys_ids.contains(&sys) {
            return Err(Failure::usage(format!(
                "two datasets are both system {sys}; give one dataset per system (compare runs with `ngcc-perf compare`)"
            )));
        }
        sys_ids.push(sys);
    }
    let site = Site::new(datasets, &sys_ids, cat)?;
    let mut files = vec![
        SiteFile {
            path: INDEX.into(),
            bytes: index::render(&site)?.into_bytes(),
        },
        SiteFile {
            path: html::CSS_PATH.into(),
            bytes: assets::CSS.as_bytes().to_vec(),
        },
        SiteFile {
            path: html::JS_PATH.into(),
            bytes: assets::JS.as_bytes().to_vec(),
        },
    ];
    for s in &site.systems {
        let sys = s.sys();
        for page in &s.pages {
            let (path, text) = if page.path == survey::PATH {
                let p = survey_path(sys);
                let t = plain_page(&site, s, page, &p, "symmetric survey");
                (p, t)
            } else if page.path == method::path(sys) {
                let p = method_path(sys);
                let t = plain_page(&site, s, page, &p, "method");
                (p, t)
            } else if crate::report::ordered_page::is_ordered(&page.path) {
                ordered::render(&site, s, page)?
            } else if page.path == crate::report::summary::path(sys) {
                let p = summary_path(sys);
                let t = summary::render(&site, s, page)?;
                (p, t)
            } else {
                let cand = s
                    .candidates
                    .iter()
                    .find(|c| candidate_page::path(c, sys) == page.path)
                    .with_context(|| format!("unexpected page {}", page.path))?;
                (
                    candidate_path(sys, cand),
                    candidate::render(&site, s, cand, page)?,
                )
            };
            files.push(SiteFile {
                path,
                bytes: text.into_bytes(),
            });
        }
    }
    files.extend(ordered::across_files(&site)?);
    Ok(files)
}

/// Method and survey pages: their documents as HTML, with the system's banners.
fn plain_page(site: &Site, s: &SystemSite, page: &Page, path: &str, crumb: &str) -> String {
    let title = page.doc.title();
    let sys = s.sys();
    let links = site.linker(sys, &page.path, path);
    let blocks: Vec<&crate::report::doc::Block> = page.doc.blocks.iter().collect();
    let body = html::doc_html(&blocks, &links, 12);
    Shell {
        path,
        title: &title,
        crumbs: vec![
            ("Index".to_string(), Some(INDEX.to_string())),
            (format!("System {sys}"), Some(summary_path(sys))),
            (crumb.to_string(), None),
        ],
        banners: &s.banners,
    }
    .render(&body)
}

/// Loads the datasets and catalogs, renders and writes the site; returns `index.html`.
pub fn write_site(datasets: &[PathBuf], catalog: &Path, out: &Path) -> Result<PathBuf> {
    write_site_files(datasets, catalog, out).map(|(index, _)| index)
}

fn write_site_files(
    datasets: &[PathBuf],
    catalog: &Path,
    out: &Path,
) -> Result<(PathBuf, Vec<SiteFile>)> {
    let loaded = datasets
        .iter()
        .map(|d| load::load(d))
        .collect::<Result<Vec<_>>>()?;
    let cat = Catalogs::load(catalog)?;
    let files = render_site(&loaded, &cat)?;
    for f in &files {
        crate::util::atomic_write(&out.join(&f.path), &f.bytes)?;
    }
    Ok((out.join(INDEX), files))
}

pub fn run(args: SiteArgs) -> Result<ExitCode> {
    let (index, files) = write_site_files(&args.datasets, &args.catalog, &args.out)?;
    let pages = files.iter().filter(|f| f.path.ends_with(".html")).count();
    let bytes: usize = files.iter().map(|f| f.bytes.len()).sum();
    crate::util::console::write_out(&format!(
        "site: {} system(s), {pages} pages, {} files, {bytes} bytes in {}\n{}\n",
        args.datasets.len(),
        files.len(),
        args.out.display(),
        index.display()
    ));
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_that_would_escape_the_site_are_refused() {
        for bad in ["", "..", ".hidden", "a/b", "a\\b", "kem 1", "x<y"] {
            assert!(check_name("candidate", bad).is_err(), "{bad:?}");
        }
        for good in ["kem-38", "arm_1", "sign-19", "hash-1.2"] {
            assert!(check_name("candidate", good).is_ok(), "{good}");
        }
    }
}
