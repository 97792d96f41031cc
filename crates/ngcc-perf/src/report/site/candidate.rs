//! `<sys>/<cand>.html`: the candidate page of §8.3 (the same tables as the Markdown page,
//! §3.5 (1)–(7)) with charts after the performance, size and symmetric-primitive sections,
//! and links to the same candidate on the other systems.

use super::html::{Shell, doc_html, esc, rel_href};
use super::{INDEX, Site, SystemSite, candidate_path, figures, summary_path};
use crate::report::{Page, candidate_page};
use anyhow::Result;
use std::fmt::Write as _;

/// Tables with at least this many rows get a filter box.
const FILTER_ROWS: usize = 8;

pub fn render(site: &Site, s: &SystemSite, cand: &str, page: &Page) -> Result<String> {
    let sys = s.sys();
    let path = candidate_path(sys, cand);
    let md_path = candidate_page::path(cand, sys);
    let links = site.linker(sys, &md_path, &path);
    let mut body = String::new();
    for (i, sec) in page.doc.sections().iter().enumerate() {
        body.push_str("<section>\n");
        body.push_str(&doc_html(&sec.blocks, &links, FILTER_ROWS));
        if i == 0 {
            body.push_str(&other_systems(site, sys, cand, &path));
        }
        let heading = sec.heading.as_deref().unwrap_or("");
        if heading == candidate_page::PERFORMANCE {
            body.push_str(&figures::candidate_bar_chart(s, cand));
        } else if heading == candidate_page::OVERHEAD {
            let labels = s.view.labels(cand);
            let points = figures::size_points(s, cand, &labels);
            let title = format!("{cand} on {sys}: size against speed, by instance");
            body.push_str(&figures::size_chart(s, &title, cand, &points));
        } else if heading == candidate_page::SYMMETRIC {
            body.push_str(&figures::share_chart(s, cand));
        }
        body.push_str("</section>\n");
    }
    let title = page.doc.title();
    Ok(Shell {
        path: &path,
        title: &title,
        crumbs: vec![
            ("Index".into(), Some(INDEX.into())),
            (format!("System {sys}"), Some(summary_path(sys))),
            (cand.to_string(), None),
        ],
        banners: &s.banners,
    }
    .render(&body))
}

/// `Same candidate on: arm_1 (this page) · x86_1` — links across systems.
fn other_systems(site: &Site, sys: &str, cand: &str, path: &str) -> String {
    let mut out = String::from("<p class=\"systems\">Same candidate on: ");
    for (i, other) in site.systems_with(cand).iter().enumerate() {
        if i > 0 {
            out.push_str(" · ");
        }
        if *other == sys {
            let _ = write!(out, "<strong>{} (this page)</strong>", esc(other));
        } else {
            let _ = write!(
                out,
                "<a href=\"{}\">{}</a>",
                esc(&rel_href(path, &candidate_path(other, cand))),
                esc(other)
            );
        }
    }
    out.push_str("</p>\n");
    out
}
