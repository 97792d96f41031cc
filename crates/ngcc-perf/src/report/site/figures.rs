//! The charts of the pages, from the dataset: what is plotted, with which labels.

use super::SystemSite;
use super::charts::{self, Bar, BarChart, Point, Scatter, ShareRow};
use super::metric::Metric;
use crate::report::format;
use crate::report::model::{self, is_avx2};

/// Wraps a chart in a figure with a caption, or says why there is none.
pub fn figure(svg: Option<String>, caption: &str, empty: &str) -> String {
    match svg {
        Some(svg) => format!(
            "<figure class=\"chart\">{svg}<figcaption>{}</figcaption></figure>\n",
            super::html::esc(caption)
        ),
        None => format!("<p class=\"no-chart\">{}</p>\n", super::html::esc(empty)),
    }
}

/// The series name of a record: its operation, or `32 B` for hash message sizes.
fn series_of(operation: &str, input_bytes: u64) -> String {
    if input_bytes > 0 {
        format::size_text(input_bytes)
    } else {
        operation.to_string()
    }
}

/// Bars of every timed instance and operation of a candidate.
pub fn candidate_bars(s: &SystemSite, cand: &str) -> Vec<Bar> {
    let mut bars = Vec::new();
    for label in s.view.labels(cand) {
        for r in s.view.instance_records(cand, &label) {
            let rec = &r.record;
            if let Some(v) = s.metric.value(rec) {
                bars.push(Bar {
                    label: label.clone(),
                    series: series_of(&rec.operation.name(), rec.input_bytes),
                    value: v,
                    value_text: s.metric.text_with_unit(v),
                });
            }
        }
    }
    bars
}

pub fn candidate_bar_chart(s: &SystemSite, cand: &str) -> String {
    let bars = candidate_bars(s, cand);
    let title = format!(
        "{cand} on {}: mean cost per operation, by instance",
        s.sys()
    );
    let axis = s.metric.axis("operation");
    let metric = s.metric.clone();
    let svg = charts::log_bars(&BarChart {
        title: &title,
        axis: &axis,
        bars: &bars,
        tick_text: &|v| metric.text(v),
    });
    figure(
        svg,
        &format!("Bar length is logarithmic: equal distances are equal ratios. Axis: {axis}."),
        "No completed timing record to chart.",
    )
}

/// What a size-against-speed point is made of, per category.
struct SizeSpec {
    size_what: &'static str,
    ops: &'static [&'static str],
    ops_what: &'static str,
}

fn size_spec(category: &str) -> Option<SizeSpec> {
    match category {
        "kem" => Some(SizeSpec {
            size_what: "public key + ciphertext",
            ops: &["enc", "dec"],
            ops_what: "enc + dec",
        }),
        "sign" => Some(SizeSpec {
            size_what: "public key + signature",
            ops: &["sign", "verify"],
            ops_what: "sign + verify",
        }),
        "kex" => Some(SizeSpec {
            size_what: "bandwidth (messages + long-term public keys)",
            ops: &["exchange"],
            ops_what: "exchange",
        }),
        _ => None,
    }
}

/// Transmitted bytes of an instance from the curated catalogs, with its parts for the tooltip.
fn size_bytes(s: &SystemSite, cand: &str, label: &str) -> Option<(u64, String)> {
    let cat = s.view.cat;
    match s.view.category(cand).as_str() {
        "kex" => {
            let b = cat.kex_bandwidth(cand, label).ok()?;
            Some((b.total(), format!("bandwidth {} B", b.total())))
        }
        "sign" => {
            let e = cat.external_size(cand, label).ok()?;
            let sig = e.sig?;
            Some((e.pk + sig, format!("pk {} B + signature {sig} B", e.pk)))
        }
        _ => {
            let e = cat.external_size(cand, label).ok()?;
            let ct = e.ct?;
            Some((e.pk + ct, format!("pk {} B + ct {ct} B", e.pk)))
        }
    }
}

/// One point per instance: transmitted bytes against the cost of the category's main
/// operations. Instances lacking a size or a completed operation are left out.
pub fn size_points(s: &SystemSite, cand: &str, labels: &[String]) -> Vec<Point> {
    let Some(spec) = size_spec(&s.view.category(cand)) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for label in labels {
        let Some((bytes, parts)) = size_bytes(s, cand, label) else {
            continue;
        };
        let values: Option<Vec<f64>> = spec
            .ops
            .iter()
            .map(|op| {
                s.view
                    .ds
                    .record(cand, label, op)
                    .and_then(|r| s.metric.value(&r.record))
            })
            .collect();
        let Some(values) = values else { continue };
        let y: f64 = values.iter().sum();
        out.push(Point {
            label: label.clone(),
            series: cand.to_string(),
            x: bytes as f64,
            y,
            text: format!(
                "{cand} {label}: {parts}; {} {}",
                spec.ops_what,
                s.metric.text_with_unit(y)
            ),
        });
    }
    out
}

pub fn size_chart(s: &SystemSite, title: &str, cand_for_spec: &str, points: &[Point]) -> String {
    let Some(spec) = size_spec(&s.view.category(cand_for_spec)) else {
        return String::new();
    };
    let x_axis = format!(
        "{} (bytes, curated external sizes), log scale",
        spec.size_what
    );
    let y_axis = s.metric.axis(spec.ops_what);
    let metric = s.metric.clone();
    let svg = charts::log_scatter(&Scatter {
        title,
        x_axis: &x_axis,
        y_axis: &y_axis,
        points,
        x_tick: &|v| format::fmt_int(Some(v)),
        y_tick: &|v| metric.text(v),
    });
    figure(
        svg,
        &format!("Lower left is smaller and faster. x: {x_axis}; y: {y_axis}."),
        "No instance has both a curated size and completed timings to plot.",
    )
}

/// Hash and DRNG shares of every profiled operation of a candidate.
pub fn share_rows(s: &SystemSite, cand: &str) -> Vec<ShareRow> {
    let mut rows = Vec::new();
    for label in s.view.labels(cand) {
        for p in s.view.instance_profiles(cand, &label) {
            let prof = &p.profile;
            if prof.total.as_ref().is_none_or(|t| t.ticks == 0) {
                continue;
            }
            rows.push(ShareRow {
                label: format!("{label} {}", p.op_key()),
                hash: prof.hash_share.unwrap_or(0.0),
                drng: model::rng_share(prof),
            });
        }
    }
    rows
}

pub fn share_chart(s: &SystemSite, cand: &str) -> String {
    let rows = share_rows(s, cand);
    let title = format!("{cand} on {}: time in ICCS hash helpers and DRNG", s.sys());
    figure(
        charts::share_bars(&title, &rows),
        "Each bar is one operation (100 %): ICCS pseudohash/pseudoXOF/sm3hash, the ICCS DRNG, and everything else.",
        "No hash/DRNG profile was recorded for this candidate.",
    )
}

/// Reference-build instances of the summary: one bar per instance for operation `op`,
/// sorted by value so the chart reads as a ranking.
pub fn op_ranking(s: &SystemSite, prefix: &str, op_key: &str) -> Vec<Bar> {
    let mut bars = Vec::new();
    for cand in s.candidates.iter().filter(|c| s.view.category(c) == prefix) {
        for label in s.view.labels(cand) {
            if is_avx2(&label) {
                continue;
            }
            let Some(r) = s.view.ds.record(cand, &label, op_key) else {
                continue;
            };
            if r.record.variant != "reference" {
                continue;
            }
            if let Some(v) = s.metric.value(&r.record) {
                bars.push(Bar {
                    label: format!("{cand} {label}"),
                    series: series_of(&r.record.operation.name(), r.record.input_bytes),
                    value: v,
                    value_text: s.metric.text_with_unit(v),
                });
            }
        }
    }
    bars.sort_by(|a, b| {
        a.value
            .total_cmp(&b.value)
            .then_with(|| a.label.cmp(&b.label))
    });
    bars
}

pub fn ranking_chart(s: &SystemSite, prefix: &str, op_key: &str, what: &str) -> String {
    let bars = op_ranking(s, prefix, op_key);
    let title = format!("{what} on {}: instances from fastest to slowest", s.sys());
    let axis = s.metric.axis("operation");
    let metric: Metric = s.metric.clone();
    let svg = charts::log_bars(&BarChart {
        title: &title,
        axis: &axis,
        bars: &bars,
        tick_text: &|v| metric.text(v),
    });
    figure(
        svg,
        &format!("Reference builds only. Axis: {axis}."),
        &format!("No completed {op_key} record to chart."),
    )
}
