//! `<sys>/summary.html`: the summary page of §8.4 with sortable, filterable tables, followed
//! in each category by a size-against-speed scatter and one ranking chart per operation.

use super::html::{Shell, doc_html};
use super::{INDEX, Site, SystemSite, figures, summary_path};
use crate::report::Page;
use crate::report::groups::Kind;
use crate::report::model::is_avx2;
use anyhow::Result;

/// Every summary table is filterable, however short.
const FILTER_ROWS: usize = 1;

struct CategoryCharts {
    heading: &'static str,
    prefix: &'static str,
    ops: &'static [(&'static str, &'static str)],
}

const CHARTS: [CategoryCharts; 4] = [
    CategoryCharts {
        heading: Kind::Sign.title(),
        prefix: "sign",
        ops: &[
            ("keygen", "key generation"),
            ("sign", "signing"),
            ("verify", "verification"),
        ],
    },
    CategoryCharts {
        heading: Kind::Kem.title(),
        prefix: "kem",
        ops: &[
            ("keygen", "key generation"),
            ("enc", "encapsulation"),
            ("dec", "decapsulation"),
        ],
    },
    CategoryCharts {
        heading: Kind::Kex.title(),
        prefix: "kex",
        ops: &[("exchange", "exchange")],
    },
    CategoryCharts {
        heading: Kind::Hash.title(),
        prefix: "hash",
        ops: &[
            ("hash_32", "hashing 32 B"),
            ("hash_1024", "hashing 1 KiB"),
            ("hash_65536", "hashing 64 KiB"),
        ],
    },
];

pub fn render(site: &Site, s: &SystemSite, page: &Page) -> Result<String> {
    let sys = s.sys();
    let path = summary_path(sys);
    let md_path = crate::report::summary::path(sys);
    let links = site.linker(sys, &md_path, &path);
    let mut body = String::new();
    for sec in page.doc.sections() {
        body.push_str("<section>\n");
        body.push_str(&doc_html(&sec.blocks, &links, FILTER_ROWS));
        if let Some(c) = CHARTS
            .iter()
            .find(|c| Some(c.heading) == sec.heading.as_deref())
        {
            body.push_str(&category_charts(s, c));
        }
        body.push_str("</section>\n");
    }
    let title = page.doc.title();
    Ok(Shell {
        path: &path,
        title: &title,
        crumbs: vec![
            ("Index".into(), Some(INDEX.into())),
            (format!("System {sys}"), None),
        ],
        banners: &s.banners,
    }
    .render(&body))
}

fn category_charts(s: &SystemSite, c: &CategoryCharts) -> String {
    let mut out = String::new();
    if c.prefix != "hash" {
        let mut points = Vec::new();
        let mut first = None;
        for cand in s
            .candidates
            .iter()
            .filter(|x| s.view.category(x) == c.prefix)
        {
            first.get_or_insert(cand.as_str());
            let labels: Vec<String> = s
                .view
                .labels(cand)
                .into_iter()
                .filter(|l| !is_avx2(l))
                .collect();
            points.extend(figures::size_points(s, cand, &labels));
        }
        if let Some(first) = first {
            let title = format!("{} on {}: size against speed", c.heading, s.sys());
            out.push_str(&figures::size_chart(s, &title, first, &points));
        }
    }
    for (op, what) in c.ops {
        out.push_str(&figures::ranking_chart(s, c.prefix, op, what));
    }
    out
}
