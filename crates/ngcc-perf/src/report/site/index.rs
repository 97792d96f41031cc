//! `index.html`: the systems, and every candidate with a link to its page on each system.

use super::html::{Banner, BannerKind, HtmlCell, Shell, Table, esc, rel_href};
use super::metric::{Metric, counter_words};
use super::{INDEX, Site, candidate_path, method_path, summary_path, survey_path};
use crate::report::format::DASH;
use crate::report::model::{self, category};
use anyhow::Result;
use std::fmt::Write as _;

fn link(from: &str, to: &str, text: &str) -> String {
    format!("<a href=\"{}\">{}</a>", esc(&rel_href(from, to)), esc(text))
}

fn cell(html: String, text: impl Into<String>) -> HtmlCell {
    HtmlCell::html(html, text)
}

fn plain(text: &str) -> HtmlCell {
    HtmlCell::text(text)
}

fn count(n: usize) -> HtmlCell {
    HtmlCell::num(&n.to_string(), n as f64)
}

pub fn render(site: &Site) -> Result<String> {
    let mut body = String::new();
    body.push_str("<h1 id=\"top\">NGCC performance — systems and candidates</h1>\n");
    body.push_str(
        "<p>Independent measurements of the NGCC candidates, one page per candidate and \
         system with the §3.5 (1)–(7) tables of the NICCS self-assessment guide, summaries \
         with sortable and filterable tables, and charts. Every figure links back to the raw \
         evidence (timing records, hash profiles, KAT logs) of its dataset.</p>\n",
    );

    body.push_str("<h2 id=\"systems\">Systems</h2>\n");
    let mut systems = Table {
        head: [
            "system",
            "architecture",
            "processor",
            "clock",
            "cycle figures",
            "host state",
            "candidates",
            "timing records",
            "method",
        ]
        .iter()
        .map(|h| esc(h))
        .collect(),
        ..Default::default()
    };
    for s in &site.systems {
        let sys = s.sys();
        let env = &s.view.env;
        let counter = match &s.metric {
            Metric::Cycles { counter } => counter_words(counter),
            Metric::Seconds => "none: charts show wall-clock time".into(),
        };
        let host = if s.banners.iter().any(|b| b.kind == BannerKind::Warn) {
            cell(
                "<strong class=\"bad\">not fixed</strong>".into(),
                "not fixed",
            )
        } else {
            plain("no host problem recorded")
        };
        systems.rows.push(vec![
            cell(link(INDEX, &summary_path(sys), sys), sys),
            plain(model::arch_label(s.view.arch())),
            plain(&env.cpu_model.text().unwrap_or_else(|| DASH.into())),
            plain(&model::clock_text(env)),
            plain(&counter),
            host,
            count(s.candidates.len()),
            count(s.view.ds.records.len()),
            cell(link(INDEX, &method_path(sys), "method"), "method"),
        ]);
    }
    body.push_str(&systems.render());
    for s in &site.systems {
        let _ = writeln!(
            body,
            "<p class=\"system-note\"><strong>{}</strong>: {}</p>",
            esc(s.sys()),
            esc(&s.view.system.description)
        );
    }
    for s in site.systems.iter().filter(|s| s.has_survey) {
        let _ = writeln!(
            body,
            "<p>{} of the candidates' use of the ICCS hash functions, with the shares measured on {}.</p>",
            link(
                INDEX,
                &survey_path(s.sys()),
                &format!("Symmetric-primitive survey ({})", s.sys())
            ),
            esc(s.sys())
        );
    }

    for s in &site.systems {
        let ordered = super::ordered::index_path(s.sys());
        if site.md_to_html.values().any(|p| *p == ordered) {
            let _ = writeln!(
                body,
                "<p>{}: the candidates of each kind and security group in order, with statistical ranks.</p>",
                link(
                    INDEX,
                    &ordered,
                    &format!("Ordered comparisons ({})", s.sys())
                )
            );
        }
    }

    let across = super::ordered::across_links(site);
    if !across.is_empty() {
        body.push_str("<p>Both systems side by side, with the ratio per candidate and the pairs whose order changes:</p>\n<ul>\n");
        for (text, path) in &across {
            let _ = writeln!(body, "<li>{}</li>", link(INDEX, path, text));
        }
        body.push_str("</ul>\n");
    }

    body.push_str("<h2 id=\"candidates\">Candidates</h2>\n");
    let mut head = vec![esc("id"), esc("algorithm"), esc("category")];
    head.extend(site.systems.iter().map(|s| esc(s.sys())));
    let mut cands = Table {
        head,
        filterable: true,
        ..Default::default()
    };
    for cand in site.all_candidates() {
        let algorithm = site
            .systems
            .iter()
            .find_map(|s| s.view.algorithm(&cand).ok())
            .unwrap_or_else(|| DASH.into());
        let mut row = vec![
            plain(&cand),
            plain(&algorithm),
            plain(category_name(
                &site
                    .systems
                    .iter()
                    .find(|s| s.candidates.contains(&cand))
                    .map_or_else(|| category(&cand).to_string(), |s| s.view.category(&cand)),
            )),
        ];
        for s in &site.systems {
            if s.candidates.contains(&cand) {
                let to = candidate_path(s.sys(), &cand);
                let text = format!("{cand} on {}", s.sys());
                row.push(cell(link(INDEX, &to, &text), text));
            } else {
                row.push(plain(DASH));
            }
        }
        cands.rows.push(row);
    }
    body.push_str(&cands.render());
    body.push_str(
        "<h2 id=\"compare\">Comparing runs</h2>\n<p>Ratios between two datasets (two systems, \
         or two runs on one system), with 95&nbsp;% confidence intervals and the changes that \
         exceed the noise of both runs: <code>ngcc-perf compare DATASET_A DATASET_B --out \
         compare.html</code>. Cycle figures of different counters are not compared; \
         <code>--time</code> compares wall-clock time instead.</p>\n",
    );

    let banners: Vec<Banner> = site
        .systems
        .iter()
        .flat_map(|s| s.banners.iter().cloned())
        .collect();
    Ok(Shell {
        path: INDEX,
        title: "NGCC performance — systems and candidates",
        crumbs: vec![("Index".into(), None)],
        banners: &banners,
    }
    .render(&body))
}

fn category_name(prefix: &str) -> &str {
    match prefix {
        "kem" => "key encapsulation",
        "sign" => "digital signature",
        "kex" => "key exchange",
        "hash" => "hash",
        other => other,
    }
}
