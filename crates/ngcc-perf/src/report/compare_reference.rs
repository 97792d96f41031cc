//! `ngcc-perf compare --reference-page PAGE DATASET`: our figures next to a page the
//! reference harness published, per operation: our mean cycles / theirs, and our
//! hash/XOF and DRNG shares minus theirs; then one summary line (median and range), so a
//! user sees at once whether a measurement is plausible.

use super::format::{self, DASH};
use super::model::rng_share;
use super::reference_page::{self, Page, PageOp};
use super::site::metric::{counter_words, record_counter};
use crate::dataset::load::{Dataset, LoadedProfile, LoadedRecord};
use crate::dataset::schema::{CounterKind, ProcessStatus, RecordStatus};
use std::fmt::Write as _;

/// One operation on both sides.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub label: String,
    pub op_key: String,
    pub ours: Option<f64>,
    pub theirs: Option<f64>,
    pub ratio: Option<f64>,
    pub hash: (Option<f64>, Option<f64>),
    pub drng: (Option<f64>, Option<f64>),
}

impl Row {
    pub fn hash_delta(&self) -> Option<f64> {
        Some(self.hash.0? - self.hash.1?)
    }
    pub fn drng_delta(&self) -> Option<f64> {
        Some(self.drng.0? - self.drng.1?)
    }
}

#[derive(Clone, Debug)]
pub struct Comparison {
    pub page: Page,
    /// `cycles` or `seconds`.
    pub time: bool,
    pub rows: Vec<Row>,
    /// Our counter(s) (`tsc`, `perf_cycles`, …) for the note.
    pub counters: Vec<CounterKind>,
    pub host_unfixed: bool,
    /// Core cycles per tick of our counter, estimated and checked during our run
    /// (`measure::core_clock`), or why there is no usable estimate.
    pub core_cycles_per_tick: Result<f64, crate::measure::core_clock::NoCoreClock>,
    /// On the page, with no complete record of ours.
    pub not_measured: Vec<String>,
}

fn complete(r: &LoadedRecord) -> bool {
    r.record.status == RecordStatus::Complete
}

/// Our records for the page's candidate: its id if we used it, else any candidate whose
/// labels the page has.
fn ours<'a>(ds: &'a Dataset, page: &Page, op: &PageOp) -> Option<&'a LoadedRecord> {
    let same_id = ds
        .records
        .iter()
        .any(|r| r.record.candidate == page.candidate);
    ds.records.iter().find(|r| {
        (!same_id || r.record.candidate == page.candidate)
            && r.record.label == op.label
            && r.op_key() == op.op_key
    })
}

fn profile<'a>(ds: &'a Dataset, rec: &LoadedRecord) -> Option<&'a LoadedProfile> {
    ds.profile(&rec.record.candidate, &rec.record.label, &rec.op_key())
        .filter(|p| p.profile.status == ProcessStatus::Complete || p.profile.hash_share.is_some())
}

pub fn compare(ds: &Dataset, page: &Page, time: bool) -> Comparison {
    let mut rows = Vec::new();
    let mut not_measured = Vec::new();
    let mut counters: Vec<CounterKind> = Vec::new();
    for op in &page.ops {
        let rec = ours(ds, page, op).filter(|r| complete(r));
        let Some(rec) = rec else {
            not_measured.push(format!("{} {}", op.label, op.op_key));
            continue;
        };
        let c = record_counter(&rec.record, &ds.campaign);
        if !counters.contains(&c) {
            counters.push(c);
        }
        let stats = rec.record.stats.as_ref();
        let (o, t) = if time {
            (stats.map(|s| s.mean_seconds), op.mean_seconds)
        } else {
            (stats.and_then(|s| s.mean_cycles), op.mean_cycles)
        };
        let prof = profile(ds, rec);
        rows.push(Row {
            label: op.label.clone(),
            op_key: op.op_key.clone(),
            ours: o,
            theirs: t,
            ratio: o.zip(t).filter(|(_, t)| *t > 0.0).map(|(o, t)| o / t),
            hash: (prof.and_then(|p| p.profile.hash_share), op.hash_share),
            drng: (prof.map(|p| rng_share(&p.profile)), op.drng_share),
        });
    }
    let host_unfixed = ds.campaign.allow_unfixed_host
        || !ds.campaign.host_problems.is_empty()
        || ds
            .records
            .iter()
            .filter_map(|r| r.record.ngcc.as_ref())
            .any(|x| !x.host_fixed);
    Comparison {
        page: page.clone(),
        time,
        rows,
        counters,
        host_unfixed,
        core_cycles_per_tick: match ds.campaign.noise.as_ref() {
            Some(noise) => crate::measure::core_clock::run_estimate(noise),
            None => Err(crate::measure::core_clock::NoCoreClock::NoNoiseCheck),
        },
        not_measured,
    }
}

/// For a counter that is not core cycles: the ratios converted with the estimated core
/// cycles per tick, as (factor, median, low, high).
pub fn core_estimate(c: &Comparison) -> Option<(f64, f64, f64, f64)> {
    if c.time || c.counters.iter().all(CounterKind::counts_core_cycles) {
        return None;
    }
    let f = *c.core_cycles_per_tick.as_ref().ok()?;
    let (m, lo, hi) = median_range(
        c.rows
            .iter()
            .filter_map(|r| r.ratio)
            .map(|r| r * f)
            .collect(),
    )?;
    Some((f, m, lo, hi))
}

/// Median and range of a list, or None.
pub fn median_range(mut v: Vec<f64>) -> Option<(f64, f64, f64)> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    let med = if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    };
    Some((med, v[0], v[n - 1]))
}

pub fn summary_line(c: &Comparison) -> String {
    let ratios: Vec<f64> = c.rows.iter().filter_map(|r| r.ratio).collect();
    let mut parts = vec![format!("compare: {} operation(s)", ratios.len())];
    let what = if c.time { "time" } else { "cycles" };
    parts.push(match median_range(ratios) {
        Some((m, lo, hi)) => format!(
            "ours/theirs ({what}) median {} (range {}–{})",
            format::ratio(m),
            format::ratio(lo),
            format::ratio(hi)
        ),
        None => format!("ours/theirs ({what}): nothing to compare"),
    });
    for (name, deltas) in [
        (
            "hash share",
            c.rows
                .iter()
                .filter_map(Row::hash_delta)
                .collect::<Vec<_>>(),
        ),
        (
            "DRNG share",
            c.rows
                .iter()
                .filter_map(Row::drng_delta)
                .collect::<Vec<_>>(),
        ),
    ] {
        if let Some((m, lo, hi)) = median_range(deltas) {
            parts.push(format!(
                "{name} − theirs median {} (range {} … {})",
                format::points(Some(m)),
                format::points(Some(lo)),
                format::points(Some(hi))
            ));
        }
    }
    if !c.not_measured.is_empty() {
        parts.push(format!(
            "{} on the page not measured by us",
            c.not_measured.len()
        ));
    }
    parts.join("; ")
}

pub fn text(c: &Comparison, page_name: &str, ds_name: &str) -> String {
    let mut out = String::new();
    let p = &c.page;
    let _ = writeln!(
        out,
        "theirs = {page_name} ({} {}, system {})",
        p.candidate, p.algorithm, p.system
    );
    let _ = writeln!(out, "ours   = {ds_name}");
    let value = |v: Option<f64>| {
        if c.time {
            format::fmt_time(v)
        } else {
            format::fmt_int(v)
        }
    };
    let head = [
        "instance",
        "operation",
        "ours",
        "theirs",
        "ours/theirs",
        "hash ours",
        "hash theirs",
        "Δ hash",
        "DRNG ours",
        "DRNG theirs",
        "Δ DRNG",
    ];
    let rows: Vec<Vec<String>> = c
        .rows
        .iter()
        .map(|r| {
            vec![
                r.label.clone(),
                r.op_key.clone(),
                value(r.ours),
                value(r.theirs),
                r.ratio.map(format::ratio).unwrap_or_else(|| DASH.into()),
                format::pct(r.hash.0),
                format::pct(r.hash.1),
                format::points(r.hash_delta()),
                format::pct(r.drng.0),
                format::pct(r.drng.1),
                format::points(r.drng_delta()),
            ]
        })
        .collect();
    for l in crate::util::columns(&head, &rows) {
        let _ = writeln!(out, "{l}");
    }
    if !c.not_measured.is_empty() {
        let _ = writeln!(out, "not measured by us: {}", c.not_measured.join(", "));
    }
    if !c.time {
        let words: Vec<String> = c
            .counters
            .iter()
            .map(|k| format!("`{k}` ({})", counter_words(k)))
            .collect();
        if c.counters.iter().all(CounterKind::counts_core_cycles) {
            let _ = writeln!(
                out,
                "note: ours counts {}, like the reference's pages.",
                words.join(", ")
            );
        } else {
            let _ = writeln!(
                out,
                "note: ours counts {}; the reference's pages count core cycles (perf) at a fixed clock. Different counters are not the same unit: the ratio is a plausibility check (--time compares seconds).",
                if words.is_empty() {
                    "nothing".into()
                } else {
                    words.join(", ")
                }
            );
        }
    }
    if let Some((f, m, lo, hi)) = core_estimate(c) {
        let _ = writeln!(
            out,
            "in estimated core cycles (ours × {f:.3}, the core cycles per tick a chain of dependent multiplies took on our benchmark CPU during the run, checked against the CPU's nominal clock): ours/theirs median {} (range {}–{})",
            format::ratio(m),
            format::ratio(lo),
            format::ratio(hi)
        );
    } else if let (false, false, Err(why)) = (
        c.time,
        c.counters.iter().all(CounterKind::counts_core_cycles),
        &c.core_cycles_per_tick,
    ) {
        let _ = writeln!(out, "core clock unknown ({why}): no ratio in core cycles.");
    }
    if c.host_unfixed {
        let _ = writeln!(
            out,
            "note: our host was not fixed (frequency, other load): our figures are indicative, not publishable."
        );
    }
    let _ = writeln!(out, "{}", summary_line(c));
    out
}

/// Reads the page and prints the comparison.
pub fn run(
    page_path: &std::path::Path,
    ds: &Dataset,
    ds_name: &str,
    time: bool,
) -> anyhow::Result<String> {
    let text = std::fs::read_to_string(page_path)
        .map_err(|e| crate::util::Failure::usage(format!("{}: {e}", page_path.display())))?;
    let page = reference_page::parse(&text)
        .map_err(|e| crate::util::Failure::usage(format!("{}: {e:#}", page_path.display())))?;
    let c = compare(ds, &page, time);
    Ok(text_of(&c, page_path, ds_name))
}

fn text_of(c: &Comparison, page_path: &std::path::Path, ds_name: &str) -> String {
    text(c, &page_path.display().to_string(), ds_name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_and_points() {
        assert_eq!(median_range(vec![3.0, 1.0, 2.0]), Some((2.0, 1.0, 3.0)));
        assert_eq!(median_range(vec![1.0, 2.0]), Some((1.5, 1.0, 2.0)));
        assert_eq!(median_range(vec![]), None);
        assert_eq!(format::points(Some(0.012)), "+1.2 pt");
        assert_eq!(format::points(Some(-0.004)), "−0.4 pt");
        assert_eq!(format::points(Some(-0.0001)), "0.0 pt");
    }

    #[test]
    fn tsc_ratios_convert_with_the_estimated_core_clock() {
        let row = |ratio: f64| Row {
            label: "L".into(),
            op_key: "enc".into(),
            ours: Some(ratio),
            theirs: Some(1.0),
            ratio: Some(ratio),
            hash: (None, None),
            drng: (None, None),
        };
        let mut c = Comparison {
            page: Page::default(),
            time: false,
            rows: vec![row(0.5), row(0.6), row(0.55)],
            counters: vec![CounterKind::Tsc],
            host_unfixed: true,
            core_cycles_per_tick: Ok(1.6),
            not_measured: Vec::new(),
        };
        let (f, m, lo, hi) = core_estimate(&c).unwrap();
        assert_eq!(f, 1.6);
        assert!((m - 0.88).abs() < 1e-12 && (lo - 0.8).abs() < 1e-12 && (hi - 0.96).abs() < 1e-12);
        assert!(text(&c, "p", "d").contains("in estimated core cycles (ours × 1.600"));
        // Core cycles already, or seconds: nothing to convert.
        c.counters = vec![CounterKind::PerfCycles];
        assert_eq!(core_estimate(&c), None);
        c.counters = vec![CounterKind::Tsc];
        c.time = true;
        assert_eq!(core_estimate(&c), None);
        c.time = false;
        c.core_cycles_per_tick = Err(crate::measure::core_clock::NoCoreClock::NoEstimate);
        assert_eq!(core_estimate(&c), None);
        let t = text(&c, "p", "d");
        assert!(
            t.contains("core clock unknown (the run has no core-clock estimate)")
                && !t.contains("in estimated core cycles"),
            "{t}"
        );
    }
}
