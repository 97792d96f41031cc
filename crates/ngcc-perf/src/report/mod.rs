//! Reports: pure functions from a dataset (plus catalogs) to text. No clock, no environment,
//! no randomness, so `--check` and `validate --pages` can demand byte equality.

pub(crate) mod accounting;
pub(crate) mod candidate_page;
pub(crate) mod compare;
pub(crate) mod compare_count;
pub mod compare_reference;
pub(crate) mod count_section;
pub(crate) mod doc;
pub(crate) mod format;
pub(crate) mod groups;
pub(crate) mod method;
pub(crate) mod model;
pub(crate) mod ordered_page;
pub(crate) mod ranking;
pub mod reference_page;
pub(crate) mod resources;
pub(crate) mod site;
pub(crate) mod summary;
pub(crate) mod survey;

use crate::dataset::catalog::Catalogs;
use crate::dataset::load::{self, Dataset};
use crate::util::Failure;
use anyhow::{Context, Result};
use clap::Args;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// Published dataset (or run directory) with campaign.json, build.json, records/, profile/.
    pub dataset: PathBuf,
    /// Folder with systems.csv, downloads.csv, external_sizes.csv, kat_issues.csv, ….
    #[arg(long)]
    pub catalog: PathBuf,
    /// Output folder: `<cand>/perf_<SYS>.md` and `performance/*.md` are written below it.
    #[arg(long)]
    pub out: PathBuf,
    /// Compare with the pages already in OUT instead of writing; exit 1 if any differs.
    #[arg(long)]
    pub check: bool,
    /// System id (default: campaign.json's system_id).
    #[arg(long)]
    pub system: Option<String>,
    /// A dataset of a second system: also write the ordered pages of both systems side by
    /// side (`performance/ordered_<kind>_<bits>_<SYS>_vs_<SYS2>.md`; needs
    /// security_targets.csv in the catalog).
    #[arg(long, value_name = "DATASET")]
    pub across: Option<PathBuf>,
}

/// One rendered page: path relative to the output folder, its structured form and its
/// Markdown bytes (written from `doc`).
#[derive(Clone, Debug, PartialEq)]
pub struct Page {
    pub path: String,
    pub doc: doc::Doc,
    pub text: String,
}

impl Page {
    fn new(path: String, doc: doc::Doc) -> Page {
        let text = doc.markdown();
        Page { path, doc, text }
    }
}

/// The system a dataset is reported for: `--system`, else campaign.json's `system_id`.
pub fn system_of(ds: &Dataset, explicit: Option<&str>) -> Result<String> {
    explicit
        .map(str::to_string)
        .or_else(|| ds.campaign.system_id.clone())
        .ok_or_else(|| {
            Failure::usage(
                "no system id: campaign.json has no system_id and --system was not given",
            )
        })
}

/// Every page of one system, in a fixed order: candidate pages, summary, survey, method. The
/// survey is rendered for this system (the reference writes it only for the first system of
/// systems.csv); it needs `symmetric_survey.csv` and is left out without one.
pub fn render_all(ds: &Dataset, cat: &Catalogs, sys: &str) -> Result<Vec<Page>> {
    let view = model::View::new(ds, cat, sys)?;
    let mut pages = Vec::new();
    for cand in view.candidates() {
        let doc = candidate_page::render(&view, &cand)
            .with_context(|| format!("rendering the page of {cand}"))?;
        pages.push(Page::new(candidate_page::path(&cand, sys), doc));
    }
    pages.push(Page::new(
        summary::path(sys),
        summary::render(&view).context("rendering the summary page")?,
    ));
    if cat.survey.is_some() {
        pages.push(Page::new(
            survey::PATH.into(),
            survey::render(&view).context("rendering the survey page")?,
        ));
    }
    pages.push(Page::new(
        method::path(sys),
        method::render(&view).context("rendering the method page")?,
    ));
    // Ordered comparisons only with security groups in the catalog (the reference's pages
    // are rendered from catalogs without them).
    if let Some(gs) = groups::compute(&view) {
        for (path, doc) in ordered_page::render(&view, &gs) {
            pages.push(Page::new(path, doc));
        }
    }
    Ok(pages)
}

/// The side-by-side ordered pages of `a` (system `sys`) and `b` (its campaign's system).
pub fn render_across(a: &Dataset, sys: &str, b: &Dataset, cat: &Catalogs) -> Result<Vec<Page>> {
    let sys_b = system_of(b, None)?;
    if sys_b == sys {
        return Err(Failure::usage(format!(
            "--across: both datasets are system {sys}; give a dataset of another system"
        )));
    }
    let va = model::View::new(a, cat, sys)?;
    let vb = model::View::new(b, cat, &sys_b)?;
    let (Some(ga), Some(gb)) = (groups::compute(&va), groups::compute(&vb)) else {
        return Err(Failure::usage(format!(
            "--across needs {} in the catalog (the security groups)",
            crate::dataset::catalog::SECURITY_TARGETS
        )));
    };
    Ok(ordered_page::render_across(&va, &ga, &vb, &gb)
        .into_iter()
        .map(|(path, doc)| Page::new(path, doc))
        .collect())
}

/// Pages whose bytes differ from (or are missing in) `out`.
pub fn differing_pages<'p>(pages: &'p [Page], out: &Path) -> Vec<&'p Page> {
    pages
        .iter()
        .filter(|p| std::fs::read(out.join(&p.path)).ok().as_deref() != Some(p.text.as_bytes()))
        .collect()
}

pub fn run(args: ReportArgs) -> Result<ExitCode> {
    let ds = load::load(&args.dataset)?;
    let cat = Catalogs::load(&args.catalog)?;
    let sys = system_of(&ds, args.system.as_deref())?;
    let mut pages = render_all(&ds, &cat, &sys)?;
    if let Some(other) = &args.across {
        let ds_b = load::load(other)?;
        pages.extend(render_across(&ds, &sys, &ds_b, &cat)?);
    }
    if args.check {
        let differ = differing_pages(&pages, &args.out);
        for p in &differ {
            crate::util::out!(
                "differs from regenerated output: {}",
                args.out.join(&p.path).display()
            );
        }
        crate::util::out!(
            "report check: system {sys}: {} pages, {} differ",
            pages.len(),
            differ.len()
        );
        return Ok(crate::util::Exit::check(differ.is_empty()));
    }
    for p in &pages {
        crate::util::atomic_write(&args.out.join(&p.path), p.text.as_bytes())?;
    }
    crate::util::out!("report: system {sys} in {}", args.out.display());
    Ok(ExitCode::SUCCESS)
}
