//! Ordered comparison pages (`performance/ordered_<kind>_<bits>_<SYS>.md`, one per kind and
//! security group, and the index `performance/ordered_<SYS>.md`): the representatives of a
//! group in the order of their ranked figure, with statistical ranks (`groups.rs`,
//! `ranking.rs`). Written only when the catalog has `security_targets.csv`, so the
//! reference's own pages are untouched.
//!
//! `validate` regenerates these pages and reads the rank column back (`ranks_of`) to name
//! any row whose rank differs; nothing derived is stored in the dataset.

use super::doc::{Cell, Doc, Inline, Table, code};
use super::format::{self, DASH};
use super::groups::{Figures, Group, Groups, Kind};
use super::model::View;
use super::ranking::{ALPHA, Estimate};
use super::site::metric::Metric;
use crate::dataset::catalog::SECURITY_TARGETS;
use crate::dataset::schema::KatStatus;

/// Headings the site and `ranks_of` find sections by (equality on one spelling).
pub const ORDER: &str = "Order";
pub const BOTH_ORDERS: &str = "Both orders";

pub fn index_path(sys: &str) -> String {
    format!("performance/ordered_{sys}.md")
}

pub fn path(kind: Kind, bits: u32, sys: &str) -> String {
    format!("performance/ordered_{}_{bits}_{sys}.md", kind.key())
}

pub fn across_path(kind: Kind, bits: u32, a: &str, b: &str) -> String {
    format!("performance/ordered_{}_{bits}_{a}_vs_{b}.md", kind.key())
}

/// A per-call (or, for hashes' ranked figure, per-byte) value as the tables print it.
pub fn value_text(metric: &Metric, per_byte: bool, v: f64) -> String {
    match metric {
        Metric::Cycles { .. } if per_byte => format::cycles_per_byte(v),
        _ => metric.text(v),
    }
}

fn unit_words(metric: &Metric) -> String {
    match metric {
        Metric::Cycles { counter } => counter.unit(),
        Metric::Seconds => "seconds (wall clock)".into(),
    }
}

/// `534.0 k (531.2 k–536.9 k)`; `24.42 G (1 trial)` when one trial leaves no interval (such a
/// figure is never distinguishable from its neighbours).
pub fn estimate_text(metric: &Metric, per_byte: bool, e: &Estimate) -> String {
    let t = |v: f64| value_text(metric, per_byte, v);
    match e.ci95() {
        Some((lo, hi)) => format::with_interval(&t(e.mean), Some((t(lo), t(hi)))),
        None => format!("{} ({} trial)", t(e.mean), e.trials),
    }
}

fn ranked_head(kind: Kind, metric: &Metric) -> String {
    let unit = unit_words(metric);
    match kind {
        Kind::Hash => format!("{unit}/byte at 64 KiB (95 % interval)"),
        _ => format!("{} ({unit}, 95 % interval)", kind.ranked_words()),
    }
}

fn op_head(op: &str) -> String {
    match op.strip_prefix("hash_") {
        Some(n) => format!("{} (one call)", format::size_text(n.parse().unwrap_or(0))),
        None => op.to_string(),
    }
}

/// The op columns a row shows besides the ranked figure (KEM: all three; SIG: all three;
/// KEX: none, the exchange is the ranked figure; hash: 32 B).
fn side_ops(kind: Kind) -> Vec<&'static str> {
    match kind {
        Kind::Kem => vec!["keygen", "enc", "dec"],
        Kind::Sign => vec!["sign", "verify", "keygen"],
        Kind::Kex => vec![],
        Kind::Hash => vec!["hash_32"],
    }
}

fn share_text(f: &Figures) -> String {
    match (f.hash_share, f.rng_share) {
        (None, _) => DASH.into(),
        (Some(h), r) => format!("{} / {}", format::pct(Some(h)), format::pct(r)),
    }
}

fn bytes_cell(f: &Figures) -> Cell {
    match f.bytes {
        Some(b) if !f.bytes_parts.is_empty() => {
            Cell::num(format!("{b} ({})", f.bytes_parts), b as f64)
        }
        Some(b) => Cell::num(b.to_string(), b as f64),
        None => Cell::new(DASH),
    }
}

fn kat_note(kat: &Option<KatStatus>) -> String {
    match kat {
        Some(KatStatus::Pass) => String::new(),
        Some(k) => format!(" ⚠ KAT {k}"),
        None => " ⚠ no KAT verdict".into(),
    }
}

/// The cells every row of a figure table shares, after rank/candidate/instance.
fn figure_cells(kind: Kind, metric: &Metric, f: &Figures) -> Vec<Cell> {
    let per_byte = kind == Kind::Hash;
    let mut cells = vec![Cell::num(
        estimate_text(metric, per_byte, &f.ranked),
        f.ranked.mean,
    )];
    for op in side_ops(kind) {
        let e = f.ops.iter().find(|(o, _)| o == op).map(|(_, e)| e);
        cells.push(match e {
            Some(e) => Cell::num(estimate_text(metric, false, e), e.mean),
            None => Cell::new(DASH),
        });
    }
    cells.push(bytes_cell(f));
    if kind == Kind::Sign {
        cells.push(match f.retries {
            Some(r) => Cell::num(format::g3(r), r),
            None => Cell::new(DASH),
        });
    }
    cells.push(match f.peak_rss {
        Some(b) => Cell::num(format::rss_kib(b), b as f64),
        None => Cell::new(DASH),
    });
    cells.push(Cell::num(share_text(f), f.hash_share));
    cells
}

fn figure_heads(kind: Kind, metric: &Metric) -> Vec<String> {
    let mut h = vec![ranked_head(kind, metric)];
    h.extend(side_ops(kind).into_iter().map(op_head));
    h.push(kind.bytes_words().into());
    if kind == Kind::Sign {
        h.push("retries per signature".into());
    }
    h.push("peak memory".into());
    h.push("hash/DRNG share".into());
    h
}

fn cand_link(sys: &str, cand: &str) -> Inline {
    Inline::new().link(cand, format!("../{cand}/perf_{sys}.md"))
}

fn title(kind: Kind, bits: u32) -> String {
    format!("{}, {bits}-bit group", kind.title())
}

/// The method bullets every ordered page carries.
fn method_items(kind: Kind, metric: &Metric, g: &Group) -> Vec<Inline> {
    let pairs = g.rows.len().saturating_sub(1);
    let mut items = vec![
        Inline::new()
            .strong("Group")
            .text(format!(
                ": the instances whose TargetBits is {} in ",
                g.bits
            ))
            .code(SECURITY_TARGETS)
            .text("; blank TargetBits are supplementary parameter sets, listed below the order and never ranked."),
        Inline::new().strong("Representative").text(
            ": per candidate, the instance marked representative (catalog column or candidate.toml), else its only instance in the group, else the fastest complete, KAT-passing implementation of the one parameter set (labels equal but for a suffix like -avx2 or -clean), else the choice is ambiguous and the candidate gets no rank.",
        ),
        Inline::new().strong("Ranked figure").text(format!(
            ": {} in {}, the mean of the per-trial means (each trial is its own process), with the 95 % interval of Student's t over the trials{}.",
            match kind {
                Kind::Hash => "cycles per byte of a 64 KiB message".to_string(),
                Kind::Kex => "one whole exchange".to_string(),
                _ => format!("{} per operation", kind.ranked_words()),
            },
            unit_words(metric),
            match kind {
                Kind::Kem | Kind::Sign => "; a sum's interval adds the parts' squared standard errors (Welch–Satterthwaite degrees of freedom)",
                _ => "",
            }
        )),
        Inline::new()
            .strong("Ranks")
            .text(format!(
                ": neighbours in this order are compared with Welch's t-test on their trials, α = {ALPHA}, Holm-corrected over the {pairs} adjacent pair(s); neighbours not distinguishable share a rank ("
            ))
            .code("2–4")
            .text(format!(
                "). {} of {pairs} adjacent pair(s) are distinguishable.",
                g.ranks.distinguishable_pairs()
            )),
    ];
    match kind {
        Kind::Kex => items.push(
            Inline::new()
                .strong("Bandwidth")
                .text(": protocol messages + public key A + public key B, each required long-term public key counted once, from ")
                .code(crate::dataset::catalog::KEX_BANDWIDTH)
                .text(" (responder-only protocols have public key A = 0)."),
        ),
        Kind::Sign => items.push(Inline::new().strong("Sizes").text(
            ": public key + signature; retries are failed signing attempts the harness retried with a fresh salt, per signature.",
        )),
        Kind::Kem => items.push(Inline::new().strong("Sizes").text(": public key + ciphertext.")),
        Kind::Hash => items.push(Inline::new().strong("Second figure").text(
            ": one call on a 32-byte message; the digest size is the instance's output.",
        )),
    }
    items.push(
        Inline::new()
            .strong("Hash/DRNG share")
            .text(": the ranked operations' share of time in the ICCS hash/XOF helpers / in the DRNG, weighted by their figures; – without a profile."),
    );
    items
}

/// Each adjacent pair of the order: its Welch p and whether Holm keeps it distinguishable.
fn pair_table(g: &Group) -> Table {
    let mut t = Table::new(["pair", "Welch p", "distinguishable (Holm)"]);
    for (i, w) in g.rows.windows(2).enumerate() {
        t.row(vec![
            format!("{} – {}", w[0].member.cand, w[1].member.cand).into(),
            Cell::num(format::p_value(g.ranks.p[i]), g.ranks.p[i]),
            if g.ranks.distinguishable[i] {
                "yes"
            } else {
                "no"
            }
            .into(),
        ]);
    }
    t
}

/// One group's page on one system.
pub fn render_group(v: &View, gs: &Groups, g: &Group) -> Doc {
    let sys = v.sys;
    let metric = &gs.metric;
    let kind = g.kind;
    let mut d = Doc::new();
    d.heading(
        1,
        format!("Ordered comparison — {}, system {sys}", title(kind, g.bits)),
    );
    d.para(
        Inline::new()
            .text(format!("System {sys}: {}. ", v.system.description))
            .link("Summary", format!("summary_{sys}.md"))
            .text(" · ")
            .link("All groups", format!("ordered_{sys}.md"))
            .text("."),
    );
    d.list(method_items(kind, metric, g));
    for (item, value) in v.honesty_rows(v.ds.records.iter().map(|r| &r.record)) {
        d.para(Inline::new().strong(item.label()).text(": ").then(value));
    }
    d.heading(2, ORDER);
    if g.rows.is_empty() {
        d.para("No candidate of this group has a representative with complete records.");
    } else {
        let mut head = vec!["rank".to_string(), "candidate".into(), "instance".into()];
        head.extend(figure_heads(kind, metric));
        head.push("representative".into());
        let mut t = Table::new(head);
        for r in &g.rows {
            let mut cells = vec![
                Cell::num(format::rank(r.rank), r.rank.0 as f64),
                cand_link(sys, &r.member.cand).into(),
                Inline::new()
                    .code(&r.member.label)
                    .text(kat_note(&r.member.kat))
                    .into(),
            ];
            cells.extend(figure_cells(kind, metric, &r.figures));
            cells.push(r.choice.words().into());
            t.row(cells);
        }
        d.table(t);
        if g.rows.len() > 1 {
            d.table(pair_table(g));
        }
        let reps: Vec<(&str, &str)> = g
            .rows
            .iter()
            .map(|r| (r.member.cand.as_str(), r.member.label.as_str()))
            .collect();
        super::resources::group_section(v, &reps, &mut d);
    }
    if !g.unranked.is_empty() {
        d.heading(2, "Not ranked");
        let mut t = Table::new(["candidate", "instance", "why"]);
        for u in &g.unranked {
            t.row(vec![
                cand_link(sys, &u.cand).into(),
                match &u.label {
                    Some(l) => code(l).into(),
                    None => DASH.into(),
                },
                u.why.to_string().into(),
            ]);
        }
        d.table(t);
    }
    if !g.supplementary.is_empty() {
        d.heading(2, "Supplementary parameter sets (not ranked)");
        let mut head = vec!["candidate".to_string(), "instance".into()];
        head.extend(figure_heads(kind, metric));
        let mut t = Table::new(head);
        for m in &g.supplementary {
            let mut cells = vec![
                cand_link(sys, &m.cand).into(),
                Inline::new().code(&m.label).text(kat_note(&m.kat)).into(),
            ];
            match &m.figures {
                Ok(f) => cells.extend(figure_cells(kind, metric, f)),
                Err(why) => {
                    cells.push(why.to_string().into());
                    cells.extend((1..figure_heads(kind, metric).len()).map(|_| Cell::new(DASH)));
                }
            }
            t.row(cells);
        }
        d.table(t);
    }
    d
}

/// The index of every group of one system.
pub fn render_index(v: &View, gs: &Groups) -> Doc {
    let sys = v.sys;
    let mut d = Doc::new();
    d.heading(1, format!("Ordered comparisons — system {sys}"));
    d.para(
        Inline::new()
            .text(format!("System {sys}: {}. ", v.system.description))
            .link("Summary", format!("summary_{sys}.md"))
            .text(". One page per kind and security group of ")
            .code(SECURITY_TARGETS)
            .text("; ranks are statistical (Welch's t-test, α = 0.05, Holm over adjacent pairs)."),
    );
    let mut t = Table::new([
        "kind",
        "group",
        "ranked",
        "not ranked",
        "supplementary",
        "distinguishable adjacent pairs",
    ]);
    for g in &gs.groups {
        t.row(vec![
            Inline::new()
                .link(
                    g.kind.title(),
                    format!("ordered_{}_{}_{sys}.md", g.kind.key(), g.bits),
                )
                .into(),
            Cell::num(format!("{} bits", g.bits), g.bits as f64),
            Cell::num(g.rows.len().to_string(), g.rows.len() as f64),
            Cell::num(g.unranked.len().to_string(), g.unranked.len() as f64),
            Cell::num(
                g.supplementary.len().to_string(),
                g.supplementary.len() as f64,
            ),
            format!(
                "{} of {}",
                g.ranks.distinguishable_pairs(),
                g.rows.len().saturating_sub(1)
            )
            .into(),
        ]);
    }
    d.table(t);
    if !gs.without_row.is_empty() {
        d.para(
            Inline::new()
                .text("Instances without a row in ")
                .code(SECURITY_TARGETS)
                .text(" (not grouped): ")
                .text(
                    gs.without_row
                        .iter()
                        .map(|(c, l)| format!("{c} {l}"))
                        .collect::<Vec<_>>()
                        .join(", "),
                )
                .text("."),
        );
    }
    d
}

/// Every ordered page of one system: the index, then one page per group; none when no
/// instance is in a group (every set supplementary: nothing is ranked).
pub fn render(v: &View, gs: &Groups) -> Vec<(String, Doc)> {
    if gs.groups.is_empty() {
        return Vec::new();
    }
    let mut out = vec![(index_path(v.sys), render_index(v, gs))];
    for g in &gs.groups {
        out.push((path(g.kind, g.bits, v.sys), render_group(v, gs, g)));
    }
    out
}

/// `(rank text, candidate, instance)` of each row of an ordered page's order table, read
/// back from its Markdown (for `validate`).
pub fn ranks_of(markdown: &str) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    // The first table below `## Order`; the pair table after it is not read.
    let (mut in_order, mut in_table) = (false, false);
    for line in markdown.lines() {
        if line.starts_with("## ") {
            in_order = line.strip_prefix("## ") == Some(ORDER);
            continue;
        }
        if in_order && line.starts_with("| rank ") {
            in_table = true;
            continue;
        }
        if in_table && !line.starts_with('|') {
            break;
        }
        if !in_table || !line.starts_with("| ") {
            continue;
        }
        let cells: Vec<&str> = line.split(" | ").collect();
        if cells.len() < 3 {
            continue;
        }
        let rank = cells[0].trim_start_matches("| ").to_string();
        if !rank.chars().next().is_some_and(|c| c.is_ascii_digit()) {
            continue;
        }
        let cand = cells[1]
            .trim_start_matches('[')
            .split(']')
            .next()
            .unwrap_or("")
            .to_string();
        let label = cells[2].split('`').nth(1).unwrap_or("").to_string();
        out.push((rank, cand, label));
    }
    out
}

/// For `validate`: every row of a regenerated ordered page whose rank (or place) the page on
/// disk does not show, naming the page, the candidate and both ranks. A missing page is
/// left to the byte comparison.
pub fn rank_differences(pages: &[super::Page], dir: &std::path::Path) -> Vec<String> {
    let mut out = Vec::new();
    for p in pages.iter().filter(|p| is_ordered(&p.path)) {
        let Ok(text) = std::fs::read_to_string(dir.join(&p.path)) else {
            continue;
        };
        let want = ranks_of(&p.text);
        let got = ranks_of(&text);
        for (rank, cand, label) in &want {
            match got.iter().find(|(_, c, l)| c == cand && l == label) {
                Some((r, _, _)) if r == rank => {}
                Some((r, _, _)) => out.push(format!(
                    "{}: {cand} `{label}` has rank {r} on the page, recomputed {rank}",
                    dir.join(&p.path).display()
                )),
                None => out.push(format!(
                    "{}: {cand} `{label}` (recomputed rank {rank}) is not in the page's order",
                    dir.join(&p.path).display()
                )),
            }
        }
        for (r, cand, label) in &got {
            if !want.iter().any(|(_, c, l)| c == cand && l == label) {
                out.push(format!(
                    "{}: {cand} `{label}` has rank {r} on the page but is not a recomputed representative",
                    dir.join(&p.path).display()
                ));
            }
        }
    }
    out
}

/// Whether a page path is an ordered page (index or group).
pub fn is_ordered(path: &str) -> bool {
    path.starts_with("performance/ordered_")
}

/// One pair of candidates ranked on both systems whose order differs.
#[derive(Clone, Debug, PartialEq)]
pub struct Swap {
    /// Faster on system A.
    pub first: String,
    pub second: String,
    /// Both orders are significant (Welch, Holm-corrected over all pairs of the group on
    /// each system).
    pub significant: bool,
}

/// Holm-corrected significance of every pair of a group's rows on one system, keyed by
/// (candidate, candidate) in row order.
fn pair_significance(g: &Group) -> Vec<((String, String), bool)> {
    let mut keys = Vec::new();
    let mut p = Vec::new();
    for i in 0..g.rows.len() {
        for j in i + 1..g.rows.len() {
            keys.push((g.rows[i].member.cand.clone(), g.rows[j].member.cand.clone()));
            p.push(super::ranking::welch_p(
                &g.rows[i].figures.ranked,
                &g.rows[j].figures.ranked,
            ));
        }
    }
    keys.into_iter().zip(super::ranking::holm(&p)).collect()
}

/// Pairs ranked on both systems whose order changes from A to B.
pub fn swaps(a: &Group, b: &Group) -> Vec<Swap> {
    let sig_a = pair_significance(a);
    let sig_b = pair_significance(b);
    let mut out = Vec::new();
    for ((x, y), sa) in &sig_a {
        // x is faster than y on A; swapped when y is before x on B.
        if let Some((_, sb)) = sig_b.iter().find(|((p, q), _)| p == y && q == x) {
            out.push(Swap {
                first: x.clone(),
                second: y.clone(),
                significant: *sa && *sb,
            });
        }
    }
    out
}

/// B/A of two figures with a conservative 95 % interval (interval division: it assumes
/// nothing about how the two systems' errors combine).
pub fn ratio(a: &Estimate, b: &Estimate) -> (f64, Option<(f64, f64)>) {
    let r = b.mean / a.mean;
    let ci = match (a.ci95(), b.ci95()) {
        (Some((alo, ahi)), Some((blo, bhi))) if alo > 0.0 => Some((blo.max(0.0) / ahi, bhi / alo)),
        _ => None,
    };
    (r, ci)
}

/// The ordered pages of two systems side by side, one per kind and group either has.
pub fn render_across(va: &View, ga: &Groups, vb: &View, gb: &Groups) -> Vec<(String, Doc)> {
    let (a, b) = (va.sys, vb.sys);
    let mut keys: Vec<(Kind, u32)> = ga
        .groups
        .iter()
        .chain(&gb.groups)
        .map(|g| (g.kind, g.bits))
        .collect();
    keys.sort();
    keys.dedup();
    let mut out = Vec::new();
    for (kind, bits) in keys {
        let find = |gs: &'_ Groups| {
            gs.groups
                .iter()
                .find(|g| g.kind == kind && g.bits == bits)
                .cloned()
        };
        // A group only one system has: the other ranks nobody in it.
        let empty = || Group {
            kind,
            bits,
            rows: Vec::new(),
            ranks: super::ranking::rank(&[]),
            unranked: Vec::new(),
            supplementary: Vec::new(),
        };
        let g_a = find(ga).unwrap_or_else(empty);
        let g_b = find(gb).unwrap_or_else(empty);
        let mut d = Doc::new();
        d.heading(
            1,
            format!(
                "Ordered comparison — {}, systems {a} and {b}",
                title(kind, bits)
            ),
        );
        d.para(
            Inline::new()
                .text(format!("System {a}: {}. ", va.system.description))
                .text(format!("System {b}: {}. ", vb.system.description))
                .link(
                    format!("Order on {a}"),
                    format!("ordered_{}_{bits}_{a}.md", kind.key()),
                )
                .text(" · ")
                .link(
                    format!("Order on {b}"),
                    format!("ordered_{}_{bits}_{b}.md", kind.key()),
                )
                .text("."),
        );
        d.list(vec![
            Inline::new().text(format!(
                "Ranked figure: {} ({} on {a}, {} on {b}); ranks are each system's own (Welch's t-test between neighbours, α = {ALPHA}, Holm-corrected).",
                kind.ranked_words(),
                unit_words(&ga.metric),
                unit_words(&gb.metric)
            )),
            Inline::new().text(format!(
                "Ratio: {b} / {a} of the ranked figure, with a conservative 95 % interval (each system's interval divided by the other's)."
            )),
            Inline::new().text(format!(
                "Order changes: pairs of candidates ranked on both systems whose order differs; significant when Welch's t-test rejects equal figures on both systems (α = {ALPHA}, Holm-corrected over all pairs of the group on each system)."
            )),
        ]);
        let mut cands: Vec<String> = g_a
            .rows
            .iter()
            .chain(&g_b.rows)
            .map(|r| r.member.cand.clone())
            .collect();
        cands.sort();
        cands.dedup();
        let pos = |g: &Group, c: &str| g.rows.iter().position(|r| r.member.cand == c);
        // In A's order, then the candidates ranked only on B.
        cands.sort_by_key(|c| (pos(&g_a, c).unwrap_or(usize::MAX), pos(&g_b, c)));
        let mut t = Table::new(vec![
            "candidate".to_string(),
            format!("rank on {a}"),
            format!("rank on {b}"),
            format!("instance ({a} / {b})"),
            format!("{} on {a}", kind.ranked_words()),
            format!("{} on {b}", kind.ranked_words()),
            format!("ratio {b} / {a} (95 % interval)"),
        ]);
        let per_byte = kind == Kind::Hash;
        for c in &cands {
            let ra = pos(&g_a, c).map(|i| &g_a.rows[i]);
            let rb = pos(&g_b, c).map(|i| &g_b.rows[i]);
            let rank_cell = |r: Option<&super::groups::Row>| match r {
                Some(r) => Cell::num(format::rank(r.rank), r.rank.0 as f64),
                None => Cell::new(DASH),
            };
            let fig = |r: Option<&super::groups::Row>, m: &Metric| match r {
                Some(r) => Cell::num(
                    estimate_text(m, per_byte, &r.figures.ranked),
                    r.figures.ranked.mean,
                ),
                None => Cell::new(DASH),
            };
            let ratio_cell = match (ra, rb) {
                (Some(x), Some(y)) => {
                    let (r, ci) = ratio(&x.figures.ranked, &y.figures.ranked);
                    Cell::num(
                        format::with_interval(
                            &format::ratio(r),
                            ci.map(|(lo, hi)| (format::ratio(lo), format::ratio(hi))),
                        ),
                        r,
                    )
                }
                _ => Cell::new(DASH),
            };
            let label = |r: Option<&super::groups::Row>| {
                r.map(|r| r.member.label.clone())
                    .unwrap_or_else(|| DASH.into())
            };
            t.row(vec![
                Inline::new().text(c.clone()).into(),
                rank_cell(ra),
                rank_cell(rb),
                format!("{} / {}", label(ra), label(rb)).into(),
                fig(ra, &ga.metric),
                fig(rb, &gb.metric),
                ratio_cell,
            ]);
        }
        d.heading(2, BOTH_ORDERS);
        if cands.is_empty() {
            d.para("No candidate is ranked in this group on either system.");
        } else {
            d.table(t);
        }
        let sw = swaps(&g_a, &g_b);
        d.heading(2, "Order changes");
        let significant = sw.iter().filter(|s| s.significant).count();
        d.para(format!(
            "{} pair(s) change order between {a} and {b}; {significant} of them significantly.",
            sw.len()
        ));
        if !sw.is_empty() {
            let mut t = Table::new(vec![
                format!("faster on {a}"),
                format!("faster on {b}"),
                "significant on both".to_string(),
            ]);
            for s in &sw {
                t.row(vec![
                    s.first.clone().into(),
                    s.second.clone().into(),
                    if s.significant { "yes ⚠" } else { "no" }.into(),
                ]);
            }
            d.table(t);
        }
        out.push((across_path(kind, bits, a, b), d));
    }
    out
}
