//! `<sys>/ordered.html` and `<sys>/ordered_<kind>_<bits>.html`: the ordered comparison pages
//! (`report/ordered_page.rs`) with sortable tables and, per group, a chart of the ranked
//! figure against bandwidth (log scales, the 95 % interval as a whisker, the representative
//! instance in each mark's tooltip).

use super::charts::{LogAxis, PALETTE};
use super::html::{Shell, doc_html, esc};
use super::{INDEX, Site, SystemSite, summary_path};
use crate::report::Page;
use crate::report::groups::{self, Group, Groups, Kind};
use crate::report::ordered_page::{self, estimate_text, value_text};
use crate::report::site::metric::Metric;
use anyhow::{Context, Result};
use std::fmt::Write as _;

pub fn index_path(sys: &str) -> String {
    format!("{sys}/ordered.html")
}

pub fn group_path(kind: Kind, bits: u32, sys: &str) -> String {
    format!("{sys}/ordered_{}_{bits}.html", kind.key())
}

/// The site path of every ordered Markdown page of a system, for the link map.
pub fn paths(s: &SystemSite) -> Vec<(String, String)> {
    let sys = s.sys();
    let Some(gs) = groups::compute(&s.view).filter(|g| !g.groups.is_empty()) else {
        return Vec::new();
    };
    let mut out = vec![(ordered_page::index_path(sys), index_path(sys))];
    for g in &gs.groups {
        out.push((
            ordered_page::path(g.kind, g.bits, sys),
            group_path(g.kind, g.bits, sys),
        ));
    }
    out
}

/// Every table of these pages is sortable; filter boxes from 8 rows.
const FILTER_ROWS: usize = 8;

pub fn render(site: &Site, s: &SystemSite, page: &Page) -> Result<(String, String)> {
    let sys = s.sys();
    let gs = groups::compute(&s.view).context("ordered page without security targets")?;
    let (path, group) = if page.path == ordered_page::index_path(sys) {
        (index_path(sys), None)
    } else {
        let g = gs
            .groups
            .iter()
            .find(|g| ordered_page::path(g.kind, g.bits, sys) == page.path)
            .with_context(|| format!("unexpected ordered page {}", page.path))?;
        (group_path(g.kind, g.bits, sys), Some(g))
    };
    let links = site.linker(sys, &page.path, &path);
    let mut body = String::new();
    for sec in page.doc.sections() {
        body.push_str("<section>\n");
        body.push_str(&doc_html(&sec.blocks, &links, FILTER_ROWS));
        if let Some(g) = group
            && sec.heading.as_deref() == Some(ordered_page::ORDER)
        {
            body.push_str(&chart(&gs, g, sys));
        }
        body.push_str("</section>\n");
    }
    let title = page.doc.title();
    let mut crumbs = vec![
        ("Index".to_string(), Some(INDEX.to_string())),
        (format!("System {sys}"), Some(summary_path(sys))),
    ];
    match group {
        Some(g) => {
            crumbs.push(("Ordered comparisons".into(), Some(index_path(sys))));
            crumbs.push((format!("{} {}", g.kind.key(), g.bits), None));
        }
        None => crumbs.push(("Ordered comparisons".into(), None)),
    }
    let html = Shell {
        path: &path,
        title: &title,
        crumbs,
        banners: &s.banners,
    }
    .render(&body);
    drop(links);
    Ok((path, html))
}

/// One mark of the chart.
#[derive(Clone, Debug, PartialEq)]
pub struct Mark {
    pub cand: String,
    pub label: String,
    pub rank: String,
    pub x: f64,
    pub y: f64,
    pub lo: f64,
    pub hi: f64,
    pub tooltip: String,
}

/// The marks of a group: x is the bandwidth (hash: one 32-byte call), y the ranked figure.
pub fn marks(metric: &Metric, g: &Group) -> Vec<Mark> {
    g.rows
        .iter()
        .filter_map(|r| {
            let f = &r.figures;
            let x = match g.kind {
                Kind::Hash => f.ops.iter().find(|(o, _)| o == "hash_32")?.1.mean,
                _ => f.bytes? as f64,
            };
            let (lo, hi) = f.ranked.ci95().unwrap_or((f.ranked.mean, f.ranked.mean));
            let per_byte = g.kind == Kind::Hash;
            let x_text = match g.kind {
                Kind::Hash => format!("32 B: {}", value_text(metric, false, x)),
                _ => format!("{} B", f.bytes?),
            };
            Some(Mark {
                cand: r.member.cand.clone(),
                label: r.member.label.clone(),
                rank: crate::report::format::rank(r.rank),
                x,
                y: f.ranked.mean,
                lo: lo.max(f.ranked.mean * 1e-3),
                hi,
                tooltip: format!(
                    "rank {}: {} {} ({}): {}; {x_text}",
                    crate::report::format::rank(r.rank),
                    r.member.cand,
                    r.member.label,
                    r.choice.words(),
                    estimate_text(metric, per_byte, &f.ranked)
                ),
            })
        })
        .collect()
}

fn chart(gs: &Groups, g: &Group, sys: &str) -> String {
    let metric = &gs.metric;
    let ms = marks(metric, g);
    let title = format!(
        "{}, {}-bit group on {sys}: {} against {}",
        g.kind.title(),
        g.bits,
        g.kind.ranked_words(),
        match g.kind {
            Kind::Hash => "one 32-byte call",
            _ => "bandwidth",
        }
    );
    if ms.is_empty() {
        return format!(
            "<figure><p class=\"empty\">{}: no ranked representative with {}.</p></figure>\n",
            esc(&title),
            if g.kind == Kind::Hash {
                "a 32-byte record"
            } else {
                "sizes"
            }
        );
    }
    let xs = |f: fn(&Mark) -> f64| ms.iter().map(f).collect::<Vec<_>>();
    let min = |v: Vec<f64>| v.into_iter().fold(f64::INFINITY, f64::min);
    let max = |v: Vec<f64>| v.into_iter().fold(0.0, f64::max);
    let (Some(xa), Some(ya)) = (
        LogAxis::covering(min(xs(|m| m.x)), max(xs(|m| m.x))),
        LogAxis::covering(min(xs(|m| m.lo)), max(xs(|m| m.hi))),
    ) else {
        return String::new();
    };
    let (w, h) = (820.0, 440.0);
    let (x0, x1, y0, y1) = (90.0, w - 40.0, 40.0, h - 60.0);
    let px = |v: f64| x0 + xa.frac(v) * (x1 - x0);
    let py = |v: f64| y1 - ya.frac(v) * (y1 - y0);
    let per_byte = g.kind == Kind::Hash;
    let mut out = String::new();
    let _ = write!(
        out,
        "<figure><svg class=\"chart ordered\" xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" \
         aria-label=\"{t}\" viewBox=\"0 0 {w} {h}\" width=\"{w}\" height=\"{h}\"><title>{t}</title>\n\
         <text class=\"chart-title\" x=\"8\" y=\"18\">{t}</text>\n",
        t = esc(&title)
    );
    for t in xa.ticks() {
        let x = px(t);
        let text = match g.kind {
            Kind::Hash => value_text(metric, false, t),
            _ => crate::report::format::g3(t),
        };
        let _ = writeln!(
            out,
            "<line class=\"grid\" x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{y0}\" y2=\"{y1}\"/>\
             <text class=\"tick\" x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
            y1 + 14.0,
            esc(&text)
        );
    }
    for t in ya.ticks() {
        let y = py(t);
        let _ = writeln!(
            out,
            "<line class=\"grid\" x1=\"{x0}\" x2=\"{x1}\" y1=\"{y:.1}\" y2=\"{y:.1}\"/>\
             <text class=\"tick\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            x0 - 4.0,
            y + 4.0,
            esc(&value_text(metric, per_byte, t))
        );
    }
    for (i, m) in ms.iter().enumerate() {
        let fill = PALETTE[i % PALETTE.len()];
        let (cx, cy) = (px(m.x), py(m.y));
        // Labels point inwards, so one at the right edge stays inside the chart.
        let (label_x, anchor) = if cx > (x0 + x1) / 2.0 {
            (cx - 7.0, "end")
        } else {
            (cx + 7.0, "start")
        };
        let _ = writeln!(
            out,
            "<g class=\"mark\"><title>{tip}</title>\
             <line class=\"whisker\" x1=\"{cx:.1}\" x2=\"{cx:.1}\" y1=\"{:.1}\" y2=\"{:.1}\" stroke=\"{fill}\" stroke-width=\"2\"/>\
             <line x1=\"{:.1}\" x2=\"{:.1}\" y1=\"{:.1}\" y2=\"{:.1}\" stroke=\"{fill}\"/>\
             <line x1=\"{:.1}\" x2=\"{:.1}\" y1=\"{:.1}\" y2=\"{:.1}\" stroke=\"{fill}\"/>\
             <circle cx=\"{cx:.1}\" cy=\"{cy:.1}\" r=\"5\" fill=\"{fill}\"/>\
             <text class=\"label\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"{anchor}\">{} ({})</text></g>",
            py(m.lo),
            py(m.hi),
            cx - 4.0,
            cx + 4.0,
            py(m.lo),
            py(m.lo),
            cx - 4.0,
            cx + 4.0,
            py(m.hi),
            py(m.hi),
            label_x,
            cy - 6.0,
            esc(&m.cand),
            esc(&m.rank),
            tip = esc(&m.tooltip)
        );
    }
    let x_axis = match g.kind {
        Kind::Hash => format!("{} for one 32-byte call, log scale", metric_unit(metric)),
        _ => format!("{}, log scale", g.kind.bytes_words()),
    };
    let _ = writeln!(
        out,
        "<text class=\"axis\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>\
         <text class=\"axis\" x=\"8\" y=\"34\">↑ {}, log scale; whiskers: 95 % interval</text>",
        (x0 + x1) / 2.0,
        h - 16.0,
        esc(&x_axis),
        esc(&match g.kind {
            Kind::Hash => format!("{} per byte at 64 KiB", metric_unit(metric)),
            _ => format!("{} ({})", g.kind.ranked_words(), metric_unit(metric)),
        })
    );
    out.push_str("</svg>\n");
    let _ = writeln!(
        out,
        "<figcaption>{}. Hover a mark for its representative instance and interval.</figcaption></figure>",
        esc(&title)
    );
    out
}

fn metric_unit(metric: &Metric) -> String {
    match metric {
        Metric::Cycles { counter } => counter.unit(),
        Metric::Seconds => "wall-clock time".into(),
    }
}

/// Site path of the side-by-side page of systems `a` and `b`.
pub fn across_site_path(kind: Kind, bits: u32, a: &str, b: &str) -> String {
    format!("{a}/ordered_{}_{bits}_vs_{b}.html", kind.key())
}

/// The side-by-side pages the site has: (link text, site path), for the index.
pub fn across_links(site: &Site) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let Some((first, others)) = site.systems.split_first() else {
        return out;
    };
    let Some(ga) = groups::compute(&first.view).filter(|g| !g.groups.is_empty()) else {
        return out;
    };
    for s in others {
        let Some(gb) = groups::compute(&s.view).filter(|g| !g.groups.is_empty()) else {
            continue;
        };
        let mut keys: Vec<(Kind, u32)> = ga
            .groups
            .iter()
            .chain(&gb.groups)
            .map(|g| (g.kind, g.bits))
            .collect();
        keys.sort();
        keys.dedup();
        for (kind, bits) in keys {
            out.push((
                format!("{} {bits}: {} and {}", kind.title(), first.sys(), s.sys()),
                across_site_path(kind, bits, first.sys(), s.sys()),
            ));
        }
    }
    out
}

/// With several systems: the side-by-side pages of the first system and each other one
/// (`report --across`'s pages), each with a chart of the per-candidate ratios.
pub fn across_files(site: &Site) -> Result<Vec<super::SiteFile>> {
    let mut files = Vec::new();
    let Some((first, others)) = site.systems.split_first() else {
        return Ok(files);
    };
    let Some(ga) = groups::compute(&first.view).filter(|g| !g.groups.is_empty()) else {
        return Ok(files);
    };
    for s in others {
        let Some(gb) = groups::compute(&s.view).filter(|g| !g.groups.is_empty()) else {
            continue;
        };
        let (a, b) = (first.sys(), s.sys());
        for (md_path, doc) in ordered_page::render_across(&first.view, &ga, &s.view, &gb) {
            let (kind, bits) = ga
                .groups
                .iter()
                .chain(&gb.groups)
                .map(|g| (g.kind, g.bits))
                .find(|(k, n)| ordered_page::across_path(*k, *n, a, b) == md_path)
                .context("an across page of no group")?;
            let path = across_site_path(kind, bits, a, b);
            let links = site.linker(a, &md_path, &path);
            let mut body = String::new();
            for sec in doc.sections() {
                body.push_str("<section>\n");
                body.push_str(&doc_html(&sec.blocks, &links, FILTER_ROWS));
                if sec.heading.as_deref() == Some(ordered_page::BOTH_ORDERS) {
                    body.push_str(&ratio_chart(&ga, &gb, kind, bits, a, b));
                }
                body.push_str("</section>\n");
            }
            drop(links);
            let title = doc.title();
            let html = Shell {
                path: &path,
                title: &title,
                crumbs: vec![
                    ("Index".to_string(), Some(INDEX.to_string())),
                    ("Ordered comparisons".into(), Some(index_path(a))),
                    (format!("{} {bits}: {a} and {b}", kind.key()), None),
                ],
                banners: &[first.banners.clone(), s.banners.clone()].concat(),
            }
            .render(&body);
            files.push(super::SiteFile {
                path,
                bytes: html.into_bytes(),
            });
        }
    }
    Ok(files)
}

fn ratio_chart(ga: &Groups, gb: &Groups, kind: Kind, bits: u32, a: &str, b: &str) -> String {
    let find = |gs: &Groups| {
        gs.groups
            .iter()
            .find(|g| g.kind == kind && g.bits == bits)
            .cloned()
    };
    let (Some(x), Some(y)) = (find(ga), find(gb)) else {
        return String::new();
    };
    let rows: Vec<super::charts::RatioRow> = x
        .rows
        .iter()
        .filter_map(|ra| {
            let rb = y.rows.iter().find(|r| r.member.cand == ra.member.cand)?;
            let (r, ci) = ordered_page::ratio(&ra.figures.ranked, &rb.figures.ranked);
            let fmt = crate::report::format::ratio;
            Some(super::charts::RatioRow {
                label: ra.member.cand.clone(),
                ratio: r,
                ci,
                changed: ci.is_some_and(|(lo, hi)| lo > 1.0 || hi < 1.0),
                text: format!(
                    "{}: {b} / {a} = {}",
                    ra.member.cand,
                    crate::report::format::with_interval(
                        &fmt(r),
                        ci.map(|(lo, hi)| (fmt(lo), fmt(hi)))
                    )
                ),
            })
        })
        .collect();
    let title = format!("{}, {bits}-bit group: {b} / {a}", kind.title());
    super::figures::figure(
        super::charts::ratio_chart(
            &title,
            &format!("{b} / {a} of {}, log scale", kind.ranked_words()),
            &rows,
        ),
        &format!("{title}; whiskers: conservative 95 % interval; coloured when it excludes 1."),
        "No candidate is ranked in this group on both systems.",
    )
}
