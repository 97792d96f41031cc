//! `performance/symmetric-survey.md` (reference-harness.md §8.6): the curated verdicts of
//! `symmetric_survey.csv` with the largest measured hash share of each candidate. Written only
//! for the first system of systems.csv.

use super::doc::{Cell, Doc, Inline, Table};
use super::format::{self, DASH};
use super::model::{View, category};
use crate::dataset::catalog::SURVEY;
use anyhow::{Result, anyhow};
use std::collections::BTreeSet;

pub const PATH: &str = "performance/symmetric-survey.md";

pub fn render(v: &View) -> Result<Doc> {
    let sys = v.sys;
    let rows = v.cat.survey.as_ref().ok_or_else(|| {
        anyhow!(
            "catalog {} is missing (needed for the survey page)",
            v.cat.dir.join(SURVEY).display()
        )
    })?;
    let mut d = Doc::new();
    d.final_blank = false;
    d.heading(1, "Symmetric cryptography survey");
    d.para(
        Inline::new()
            .text("The NGCC public-key submissions were asked to use the ICCS placeholder functions ")
            .code("pseudohash")
            .text(" (SM3/HMAC-SM3), ")
            .code("pseudoXOF")
            .text(" (KDF-SM3) and ")
            .code("sm3hash")
            .text(" for hashing, and the ICCS SM3 DRNG for randomness, so that the selected NGCC hash can later be substituted. This survey records which reference implementations do so, which bypass the helpers with their own primitives, and how much of each operation the helpers take."),
    );
    // Verdicts by descending count; ties keep the order of first appearance.
    let mut totals: Vec<(&str, usize)> = Vec::new();
    for r in rows {
        match totals.iter_mut().find(|(v, _)| *v == r.verdict) {
            Some((_, n)) => *n += 1,
            None => totals.push((&r.verdict, 1)),
        }
    }
    totals.sort_by_key(|t| std::cmp::Reverse(t.1));
    let totals: Vec<String> = totals.iter().map(|(v, n)| format!("{n} {v}")).collect();
    d.para(format!("Totals: {}.", totals.join(", ")));
    d.para("Evidence: call-graph reachability from the exported API in the harness-built libraries, object-level constant scans (Keccak, SHA-2, SM3, AES, SM4, ChaCha), and source reading for candidates without a harness build. A primitive that is compiled but unreachable is not counted.");
    d.para(
        Inline::new()
            .text(format!(
                "The last column is measured on system {sys} ({}); see its ",
                v.system.description
            ))
            .link("summary", format!("summary_{sys}.md"))
            .text("."),
    );
    let mut t = Table::new([
        "id".to_string(),
        "algorithm".into(),
        "verdict".into(),
        "notes".into(),
        format!("largest hash share on {sys} (op)"),
    ]);
    let with_page: BTreeSet<String> = v.candidates().into_iter().collect();
    let mut sorted: Vec<_> = rows.iter().collect();
    sorted.sort_by(|a, b| (category(&a.id), &a.id).cmp(&(category(&b.id), &b.id)));
    for r in sorted {
        let algorithm = v.algorithm(&r.id)?;
        let id: Inline = if with_page.contains(&r.id) {
            Inline::new().link(r.id.as_str(), format!("../{0}/perf_{sys}.md", r.id))
        } else {
            r.id.clone().into()
        };
        // The first profile (in path order) with the largest share wins ties.
        let mut best: Option<(f64, String)> = None;
        for p in v.ds.profiles_of(&r.id) {
            if let Some(share) = p.profile.hash_share
                && best.as_ref().is_none_or(|(b, _)| share > *b)
            {
                best = Some((share, format!("{} {}", p.profile.label, p.op_key())));
            }
        }
        let largest = match &best {
            Some((share, what)) => format!("{} ({what})", format::pct(Some(*share))),
            None => DASH.into(),
        };
        t.row(vec![
            id.into(),
            crate::report::doc::foreign(algorithm).into(),
            r.verdict.clone().into(),
            Inline::catalog(&r.notes).into(),
            Cell::num(largest, best.map(|(s, _)| s)),
        ]);
    }
    d.table(t);
    Ok(d)
}
