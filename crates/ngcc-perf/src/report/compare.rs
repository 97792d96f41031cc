//! `ngcc-perf compare A B`: per instance and operation, the ratio B/A of the mean with a 95 %
//! confidence interval, and a `changed` flag for differences larger than the noise of both
//! runs. Cycle figures of different counters (core cycles vs TSC reference cycles, …) are
//! never divided by each other; `--time` compares wall-clock seconds instead.
//! With `--reference-page PAGE` one dataset is set against a page the reference harness
//! published (`compare_reference.rs`).

use super::format::{self, DASH};
use super::site::charts::{self, RatioRow};
use super::site::html::{self, Banner, BannerKind, HtmlCell, Shell, Table, esc};
use super::site::metric::{Metric, counter_words, record_counter};
use super::site::{assets, figures};
use crate::dataset::load::{self, Dataset};
use crate::dataset::schema::{CounterKind, Record, RecordStatus, Spread};
use crate::measure::stats;
use crate::report::model::{natural_cmp, op_rank};
use crate::util::Failure;
use anyhow::{Context, Result};
use clap::Args;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct CompareArgs {
    /// The baseline dataset (A); with --reference-page, our dataset.
    pub a: PathBuf,
    /// The dataset compared with it (B); ratios are B / A.
    #[arg(required_unless_present = "reference_page")]
    pub b: Option<PathBuf>,
    /// A candidate page the reference harness published (`<cand>/perf_<SYS>.md`): print our
    /// mean cycles / theirs and our hash/DRNG share − theirs per operation, and a summary.
    #[arg(long, value_name = "PAGE.md", conflicts_with = "b")]
    pub reference_page: Option<PathBuf>,
    /// Compare wall-clock seconds (needed when the datasets used different cycle counters).
    #[arg(long)]
    pub time: bool,
    /// What to compare: `cycles` (the default: the records' counter), `time` (as --time) or
    /// `instructions` (the count phase's instructions per call under callgrind: exact
    /// differences, no interval).
    #[arg(long, value_enum, default_value_t = Counter::Cycles)]
    pub counter: Counter,
    /// Exit with status 1 when any operation grew by more than PCT percent: instructions by
    /// their exact counts; cycles and time only where the change is significant (the
    /// interval logic) and larger than PCT.
    #[arg(long, value_name = "PCT", conflicts_with = "reference_page")]
    pub fail_above: Option<f64>,
    /// Also write the comparison as a standalone HTML page.
    #[arg(long, value_name = "FILE.html")]
    pub out: Option<PathBuf>,
}

/// The figure `compare` sets side by side.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Counter {
    Cycles,
    Time,
    Instructions,
}

/// One side of a comparison: mean per operation and its 95 % interval.
#[derive(Clone, Debug, PartialEq)]
pub struct Side {
    pub mean: f64,
    /// `None` with fewer than two trials: one trial says nothing about noise.
    pub ci: Option<(f64, f64)>,
    pub cv: Option<f64>,
    pub trials: usize,
}

/// The mean of `rec` in `metric` and its spread. The spread stored by ngcc-perf is used when
/// it describes this metric (`ngcc.spread`: seconds, `ngcc.cycles_spread`: cycles); otherwise
/// it is computed from the raw trials. The interval is taken relative to the spread's centre
/// (mean of per-trial means) and applied to the record mean (pooled over all calls).
pub fn side(rec: &Record, metric: &Metric) -> Option<Side> {
    let s = rec
        .stats
        .as_ref()
        .filter(|_| rec.status == RecordStatus::Complete)?;
    let mean = metric.value(rec)?;
    let per_trial: Vec<f64> = s
        .trials
        .iter()
        .filter(|t| t.measurements > 0)
        .map(|t| match metric {
            Metric::Cycles { .. } => stats::int_div(t.cycles as u128, t.measurements as u128),
            Metric::Seconds => t.seconds / t.measurements as f64,
        })
        .collect();
    let stored: Option<Spread> = rec.ngcc.as_ref().and_then(|x| match metric {
        Metric::Cycles { .. } => x.cycles_spread.clone(),
        Metric::Seconds => Some(x.spread.clone()),
    });
    let spread = stored.unwrap_or_else(|| stats::spread(&per_trial));
    let trials = per_trial.len();
    let centre = (spread.ci95_low + spread.ci95_high) / 2.0;
    let usable = trials >= 2 && centre > 0.0 && spread.ci95_high >= spread.ci95_low;
    Some(Side {
        mean,
        ci: usable.then(|| {
            (
                mean * spread.ci95_low / centre,
                mean * spread.ci95_high / centre,
            )
        }),
        cv: (trials >= 2).then_some(spread.cv),
        trials,
    })
}

/// 95 % interval of B/A from both intervals, by interval division (conservative: it assumes
/// nothing about how the two runs' errors combine). Unbounded above when A's interval
/// reaches zero.
pub fn ratio_ci(a: &Side, b: &Side) -> Option<(f64, f64)> {
    let (a_lo, a_hi) = a.ci?;
    let (b_lo, b_hi) = b.ci?;
    if a_hi <= 0.0 {
        return None;
    }
    let lo = b_lo.max(0.0) / a_hi;
    let hi = if a_lo > 0.0 {
        b_hi / a_lo
    } else {
        f64::INFINITY
    };
    Some((lo, hi))
}

/// A change is flagged when the ratio's interval excludes 1 and the change is larger than
/// the run-to-run spread (CV) of both runs.
pub fn is_changed(
    ratio: f64,
    ci: Option<(f64, f64)>,
    cv_a: Option<f64>,
    cv_b: Option<f64>,
) -> bool {
    let (Some((lo, hi)), Some(cv_a), Some(cv_b)) = (ci, cv_a, cv_b) else {
        return false;
    };
    (lo > 1.0 || hi < 1.0) && (ratio - 1.0).abs() > cv_a.max(cv_b)
}

#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub candidate: String,
    pub label: String,
    pub op_key: String,
    pub a: Side,
    pub b: Side,
    pub ratio: f64,
    pub ci: Option<(f64, f64)>,
    pub changed: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    pub metric: Metric,
    pub rows: Vec<Row>,
    /// `cand label op` present (complete) in only one dataset.
    pub only_a: Vec<String>,
    pub only_b: Vec<String>,
    /// Present in both but without a value in this metric on one side (failed, no cycles).
    pub not_comparable: Vec<String>,
}

fn key_text(r: &Record) -> String {
    format!(
        "{} {} {}",
        r.candidate,
        r.label,
        r.operation.key(r.input_bytes)
    )
}

/// Compares every record of B with the record of A for the same candidate, instance and
/// operation. Refuses (exit 2) to divide counts of different counters unless `time`.
pub fn compare(a: &Dataset, b: &Dataset, time: bool) -> Result<Comparison> {
    let key = |r: &Record| {
        (
            r.candidate.clone(),
            r.label.clone(),
            r.operation.key(r.input_bytes),
        )
    };
    let b_by_key: BTreeMap<_, &Record> = b
        .records
        .iter()
        .map(|r| (key(&r.record), &r.record))
        .collect();
    let a_keys: BTreeSet<_> = a.records.iter().map(|r| key(&r.record)).collect();
    let mut pairs: Vec<(&Record, &Record)> = Vec::new();
    let mut only_a = Vec::new();
    let mut only_b = Vec::new();
    for ra in a.records.iter().map(|r| &r.record) {
        match b_by_key.get(&key(ra)) {
            Some(rb) => pairs.push((ra, rb)),
            None => only_a.push(key_text(ra)),
        }
    }
    for rb in b.records.iter().map(|r| &r.record) {
        if !a_keys.contains(&key(rb)) {
            only_b.push(key_text(rb));
        }
    }
    let metric = if time {
        Metric::Seconds
    } else {
        let mut counter: Option<CounterKind> = None;
        for (ra, rb) in &pairs {
            let (ca, cb) = (
                record_counter(ra, &a.campaign),
                record_counter(rb, &b.campaign),
            );
            if ca != cb {
                return Err(Failure::usage(format!(
                    "refusing to compare cycles: A counts `{ca}` ({}) but B counts `{cb}` ({}) for {}; pass --time to compare wall-clock seconds",
                    counter_words(&ca),
                    counter_words(&cb),
                    key_text(ra)
                )));
            }
            match &counter {
                Some(c) if *c != ca => {
                    return Err(Failure::usage(format!(
                        "refusing to compare cycles: the records use both `{c}` and `{ca}` (e.g. {}); pass --time to compare wall-clock seconds",
                        key_text(ra)
                    )));
                }
                _ => counter = Some(ca),
            }
        }
        match counter {
            Some(c) if c != CounterKind::None => Metric::Cycles { counter: c },
            _ => Metric::Seconds,
        }
    };
    let mut rows = Vec::new();
    let mut not_comparable = Vec::new();
    for (ra, rb) in pairs {
        match (side(ra, &metric), side(rb, &metric)) {
            (Some(sa), Some(sb)) if sa.mean > 0.0 => {
                let ratio = sb.mean / sa.mean;
                let ci = ratio_ci(&sa, &sb);
                let changed = is_changed(ratio, ci, sa.cv, sb.cv);
                let k = key(ra);
                rows.push(Row {
                    candidate: k.0,
                    label: k.1,
                    op_key: k.2,
                    a: sa,
                    b: sb,
                    ratio,
                    ci,
                    changed,
                });
            }
            _ => not_comparable.push(key_text(ra)),
        }
    }
    rows.sort_by(|x, y| {
        x.candidate
            .cmp(&y.candidate)
            .then_with(|| natural_cmp(&x.label, &y.label))
            .then_with(|| op_rank(&x.op_key).cmp(&op_rank(&y.op_key)))
    });
    Ok(Comparison {
        metric,
        rows,
        only_a,
        only_b,
        not_comparable,
    })
}

fn ci_text(ci: Option<(f64, f64)>) -> String {
    match ci {
        Some((lo, hi)) if hi.is_finite() => {
            format!("[{}, {}]", format::ratio(lo), format::ratio(hi))
        }
        Some((lo, _)) => format!("[{}, ∞]", format::ratio(lo)),
        None => DASH.into(),
    }
}

fn flag_text(r: &Row) -> String {
    if r.changed {
        if r.ratio > 1.0 {
            "changed (B slower)".into()
        } else {
            "changed (B faster)".into()
        }
    } else if r.ci.is_none() {
        "no interval (<2 trials)".into()
    } else {
        String::new()
    }
}

fn cv_text(cv: Option<f64>) -> String {
    cv.map(|c| format::pct(Some(c)))
        .unwrap_or_else(|| DASH.into())
}

pub const HEAD: [&str; 10] = [
    "candidate",
    "instance",
    "operation",
    "A mean",
    "B mean",
    "B/A",
    "95% CI",
    "CV A",
    "CV B",
    "flag",
];

/// The cells of one row, as printed and rendered.
pub fn row_cells(c: &Comparison, r: &Row) -> [String; 10] {
    [
        r.candidate.clone(),
        r.label.clone(),
        r.op_key.clone(),
        c.metric.text(r.a.mean),
        c.metric.text(r.b.mean),
        format::ratio(r.ratio),
        ci_text(r.ci),
        cv_text(r.a.cv),
        cv_text(r.b.cv),
        flag_text(r),
    ]
}

/// The numbers behind `row_cells` (sort keys of the HTML table): means, ratio, the interval's
/// lower bound, the CVs.
fn row_keys(r: &Row) -> [Option<f64>; 10] {
    [
        None,
        None,
        None,
        Some(r.a.mean),
        Some(r.b.mean),
        Some(r.ratio),
        r.ci.map(|(lo, _)| lo),
        r.a.cv,
        r.b.cv,
        None,
    ]
}

pub fn metric_text(m: &Metric) -> String {
    match m {
        Metric::Cycles { counter } => format!(
            "mean {} per operation (`{counter}`: {})",
            super::site::metric::unit(counter),
            counter_words(counter)
        ),
        Metric::Seconds => "mean wall-clock seconds per operation".into(),
    }
}

pub fn summary_line(c: &Comparison) -> String {
    format!(
        "compare: {} pair(s), {} changed; {} only in A, {} only in B, {} not comparable",
        c.rows.len(),
        c.rows.iter().filter(|r| r.changed).count(),
        c.only_a.len(),
        c.only_b.len(),
        c.not_comparable.len()
    )
}

/// The comparison as an aligned text table.
pub fn text(c: &Comparison, a_name: &str, b_name: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "A = {a_name}");
    let _ = writeln!(out, "B = {b_name}");
    let _ = writeln!(
        out,
        "metric: {}; ratio B/A; 95% CI of the ratio from both runs' trial spreads; changed = CI excludes 1 and |B/A - 1| exceeds both runs' CV",
        metric_text(&c.metric)
    );
    let rows: Vec<[String; 10]> = c.rows.iter().map(|r| row_cells(c, r)).collect();
    for l in crate::util::columns(&HEAD, &rows) {
        let _ = writeln!(out, "{l}");
    }
    for (what, list) in [
        ("only in A", &c.only_a),
        ("only in B", &c.only_b),
        ("not comparable", &c.not_comparable),
    ] {
        if !list.is_empty() {
            let _ = writeln!(out, "{what}: {}", list.join(", "));
        }
    }
    let _ = writeln!(out, "{}", summary_line(c));
    out
}

/// A standalone HTML page (stylesheet and script inline, so the file works anywhere).
pub fn html_page(c: &Comparison, a_name: &str, b_name: &str, banners: &[Banner]) -> String {
    let mut body = String::new();
    let _ = writeln!(body, "<h1 id=\"compare\">Comparison B / A</h1>");
    let _ = writeln!(
        body,
        "<ul><li>A = <code>{}</code></li><li>B = <code>{}</code></li><li>Metric: {}.</li>\
         <li>The 95&nbsp;% interval of B/A divides the two runs' intervals (conservative). \
         <strong>changed</strong> means the interval excludes 1 and the change is larger than the \
         coefficient of variation of both runs.</li></ul>",
        esc(a_name),
        esc(b_name),
        esc(&metric_text(&c.metric).replace('`', ""))
    );
    let _ = writeln!(body, "<p>{}</p>", esc(&summary_line(c)));
    let mut table = Table {
        head: HEAD.iter().map(|h| esc(h)).collect(),
        filterable: true,
        ..Default::default()
    };
    let mut ratio_rows = Vec::new();
    for r in &c.rows {
        let cells = row_cells(c, r);
        let keys = row_keys(r);
        let mut row: Vec<HtmlCell> = cells
            .iter()
            .zip(keys)
            .map(|(t, k)| match k {
                Some(k) => HtmlCell::num(t, k),
                None => HtmlCell::text(t),
            })
            .collect();
        if r.changed {
            row[9].html = format!("<span class=\"changed\">{}</span>", esc(&cells[9]));
        }
        table.rows.push(row);
        ratio_rows.push(RatioRow {
            label: format!("{} {} {}", r.candidate, r.label, r.op_key),
            ratio: r.ratio,
            ci: r.ci.map(|(lo, hi)| (lo, hi.min(r.ratio * 1e3))),
            changed: r.changed,
            text: format!(
                "{} {} {}: B/A {} {}; A {}, B {}",
                r.candidate, r.label, r.op_key, cells[5], cells[6], cells[3], cells[4]
            ),
        });
    }
    body.push_str(&table.render());
    body.push_str(&figures::figure(
        charts::ratio_chart(
            "B / A per instance and operation, with 95 % intervals",
            "ratio B / A (log scale; right of 1 = B slower)",
            &ratio_rows,
        ),
        "Dots are ratios, whiskers their 95 % intervals; coloured dots are flagged changes.",
        "Nothing to compare.",
    ));
    for (what, list) in [
        ("Only in A", &c.only_a),
        ("Only in B", &c.only_b),
        (
            "Not comparable (failed or without a value in this metric)",
            &c.not_comparable,
        ),
    ] {
        if !list.is_empty() {
            let _ = writeln!(
                body,
                "<p><strong>{what}:</strong> {}</p>",
                esc(&list.join(", "))
            );
        }
    }
    // Inline assets: the page must work when copied anywhere on its own.
    let page = Shell {
        path: "compare.html",
        title: "ngcc-perf comparison",
        crumbs: vec![("Comparison".into(), None)],
        banners,
    };
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>ngcc-perf comparison</title>\n<style>\n{}</style>\n</head>\n<body>\n{}<main>\n{body}</main>\n{}\
         <script>\n{}</script>\n</body>\n</html>\n",
        assets::CSS,
        page.head_html(),
        html::footer(),
        assets::JS
    )
}

fn banners_of(ds: &Dataset, side: &str, cat_free_sys: &str) -> Vec<Banner> {
    // No catalog here: the host state comes straight from the records and campaign.
    let unfixed = ds.campaign.allow_unfixed_host
        || !ds.campaign.host_problems.is_empty()
        || ds
            .records
            .iter()
            .filter_map(|r| r.record.ngcc.as_ref())
            .any(|x| !x.host_fixed || x.allow_unfixed_host);
    if unfixed {
        vec![Banner {
            kind: BannerKind::Warn,
            text: format!(
                "{side} ({cat_free_sys}): host not fixed; its figures are indicative, not publishable."
            ),
        }]
    } else {
        Vec::new()
    }
}

pub fn run(args: CompareArgs) -> Result<ExitCode> {
    let a = load::load(&args.a)?;
    if let Some(page) = &args.reference_page {
        let name = match &a.campaign.system_id {
            Some(s) => format!("{} (system {s})", args.a.display()),
            None => args.a.display().to_string(),
        };
        let text = super::compare_reference::run(page, &a, &name, args.time)?;
        crate::util::console::write_out(&text);
        return Ok(ExitCode::SUCCESS);
    }
    let b_path = args
        .b
        .clone()
        .expect("clap requires B without --reference-page");
    let b = load::load(&b_path)?;
    let name = |ds: &Dataset, p: &Path| match &ds.campaign.system_id {
        Some(s) => format!("{} (system {s})", p.display()),
        None => p.display().to_string(),
    };
    let (a_name, b_name) = (name(&a, &args.a), name(&b, &b_path));
    if args.counter == Counter::Instructions {
        let c = super::compare_count::compare(&a, &b);
        if c.rows.is_empty() {
            return Err(Failure::usage(
                "compare --counter instructions: no operation has instruction counts in both datasets (run the campaign phase count)",
            ));
        }
        crate::util::console::write_out(&super::compare_count::text(
            &c,
            &a_name,
            &b_name,
            args.fail_above,
        ));
        let failed = args
            .fail_above
            .is_some_and(|p| !super::compare_count::grew(&c, p).is_empty());
        return Ok(crate::util::Exit::check(!failed));
    }
    let c = compare(&a, &b, args.time || args.counter == Counter::Time)?;
    let mut report = text(&c, &a_name, &b_name);
    for l in super::resources::compare_lines(&a, &b) {
        let _ = writeln!(report, "{l}");
    }
    let mut banners = banners_of(&a, "A", a.campaign.system_id.as_deref().unwrap_or("?"));
    banners.extend(banners_of(
        &b,
        "B",
        b.campaign.system_id.as_deref().unwrap_or("?"),
    ));
    for banner in &banners {
        let _ = writeln!(report, "note: {}", banner.text);
    }
    if let Some(out) = &args.out {
        let page = html_page(&c, &a_name, &b_name, &banners);
        crate::util::atomic_write(out, page.as_bytes())
            .with_context(|| format!("writing {}", out.display()))?;
        let _ = writeln!(report, "compare: page {}", out.display());
    }
    // The gate on cycles or time: a change the intervals call significant, and larger.
    let grown: Vec<String> = match args.fail_above {
        Some(p) => c
            .rows
            .iter()
            .filter(|r| r.changed && r.ratio > 1.0 + p / 100.0)
            .map(|r| format!("{}/{} {}", r.candidate, r.label, r.op_key))
            .collect(),
        None => Vec::new(),
    };
    if let Some(p) = args.fail_above {
        let _ = writeln!(
            report,
            "compare: {} operation(s) significantly slower by more than {p} % (--fail-above){}",
            grown.len(),
            if grown.is_empty() {
                String::new()
            } else {
                format!(": {}", grown.join(", "))
            }
        );
    }
    crate::util::console::write_out(&report);
    Ok(crate::util::Exit::check(grown.is_empty()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::load::LoadedRecord;
    use crate::dataset::schema::{Process, ProcessStatus, RecordExtra, Trial};

    /// A complete record with one process per trial of `(measurements, seconds, cycles)`.
    fn record(
        label: &str,
        op: &str,
        trials: &[(u64, f64, u64)],
        counter: Option<CounterKind>,
    ) -> Record {
        let processes: Vec<Process> = trials
            .iter()
            .map(|&(measurements, seconds, cycles)| Process {
                status: ProcessStatus::Complete,
                trials: vec![Trial {
                    measurements,
                    seconds,
                    cycles,
                    ..Default::default()
                }],
                ..Default::default()
            })
            .collect();
        let stats = stats::record_stats(&processes, 0);
        let per_trial: Vec<f64> = trials.iter().map(|t| t.1 / t.0 as f64).collect();
        Record {
            schema: 2,
            status: RecordStatus::Complete,
            candidate: "kem-1".into(),
            label: label.into(),
            operation: op.into(),
            processes,
            stats,
            ngcc: counter.map(|c| RecordExtra {
                counter: c,
                host_fixed: true,
                spread: stats::spread(&per_trial),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    fn dataset(records: Vec<Record>) -> Dataset {
        Dataset {
            records: records
                .into_iter()
                .map(|record| LoadedRecord {
                    path: String::new(),
                    record,
                })
                .collect(),
            ..Default::default()
        }
    }

    /// Five trials of 100 calls around `cycles` per call with ±`jitter` relative noise.
    fn trials(cycles: f64, jitter: f64) -> Vec<(u64, f64, u64)> {
        [-1.0, -0.5, 0.0, 0.5, 1.0]
            .iter()
            .map(|k| {
                let c = cycles * (1.0 + k * jitter);
                (100, c * 100.0 / 2.5e9, (c * 100.0) as u64)
            })
            .collect()
    }

    #[test]
    fn ratio_and_interval() {
        let a = Side {
            mean: 100.0,
            ci: Some((90.0, 110.0)),
            cv: Some(0.05),
            trials: 5,
        };
        let b = Side {
            mean: 200.0,
            ci: Some((180.0, 220.0)),
            cv: Some(0.05),
            trials: 5,
        };
        let (lo, hi) = ratio_ci(&a, &b).unwrap();
        assert!((lo - 180.0 / 110.0).abs() < 1e-12 && (hi - 220.0 / 90.0).abs() < 1e-12);
        assert!(lo < 2.0 && 2.0 < hi);
        let open = Side {
            ci: Some((-5.0, 205.0)),
            ..a.clone()
        };
        assert_eq!(ratio_ci(&open, &b).unwrap().1, f64::INFINITY);
        let one = Side {
            ci: None,
            ..a.clone()
        };
        assert_eq!(ratio_ci(&one, &b), None);
    }

    #[test]
    fn changed_needs_interval_excluding_one_and_change_beyond_both_cvs() {
        assert!(is_changed(1.5, Some((1.3, 1.7)), Some(0.02), Some(0.03)));
        assert!(is_changed(0.5, Some((0.4, 0.6)), Some(0.02), Some(0.03)));
        // Interval contains 1.
        assert!(!is_changed(
            1.05,
            Some((0.98, 1.12)),
            Some(0.01),
            Some(0.01)
        ));
        // Interval excludes 1, but the change is within one run's CV.
        assert!(!is_changed(
            1.05,
            Some((1.01, 1.09)),
            Some(0.01),
            Some(0.08)
        ));
        // No interval: never flagged.
        assert!(!is_changed(3.0, None, Some(0.01), Some(0.01)));
        assert!(!is_changed(3.0, Some((2.0, 4.0)), None, Some(0.01)));
    }

    #[test]
    fn identical_runs_are_unchanged_and_a_real_slowdown_is_flagged() {
        let a = dataset(vec![
            record("A", "keygen", &trials(1e6, 0.01), None),
            record("A", "enc", &trials(5e4, 0.01), None),
        ]);
        let same = compare(&a, &a, false).unwrap();
        assert_eq!(
            same.metric,
            Metric::Cycles {
                counter: CounterKind::PerfCycles
            }
        );
        assert_eq!(same.rows.len(), 2);
        assert!(same.rows.iter().all(|r| r.ratio == 1.0 && !r.changed));
        // Sorted in operation order.
        assert_eq!(same.rows[0].op_key, "keygen");

        let b = dataset(vec![
            record("A", "keygen", &trials(1.5e6, 0.01), None),
            record("A", "enc", &trials(5.01e4, 0.01), None),
            record("B", "enc", &trials(5e4, 0.01), None),
        ]);
        let c = compare(&a, &b, false).unwrap();
        let keygen = c.rows.iter().find(|r| r.op_key == "keygen").unwrap();
        assert!((keygen.ratio - 1.5).abs() < 1e-6);
        assert!(keygen.changed, "{keygen:?}");
        let (lo, hi) = keygen.ci.unwrap();
        assert!(lo < 1.5 && 1.5 < hi && lo > 1.0);
        let enc = c.rows.iter().find(|r| r.op_key == "enc").unwrap();
        assert!(!enc.changed, "0.2% is within the noise: {enc:?}");
        assert_eq!(c.only_b, ["kem-1 B enc"]);
        let text = text(&c, "a", "b");
        assert!(text.contains("changed (B slower)"), "{text}");
        assert!(text.contains("1.50×"), "{text}");
        assert!(text.ends_with(
            "compare: 2 pair(s), 1 changed; 0 only in A, 1 only in B, 0 not comparable\n"
        ));
    }

    #[test]
    fn different_counters_are_refused_unless_time() {
        let a = dataset(vec![record(
            "A",
            "keygen",
            &trials(1e6, 0.01),
            Some(CounterKind::Tsc),
        )]);
        let b = dataset(vec![record(
            "A",
            "keygen",
            &trials(1e6, 0.01),
            Some(CounterKind::PerfCycles),
        )]);
        let err = compare(&a, &b, false).unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains("`tsc`") && msg.contains("`perf_cycles`"),
            "{msg}"
        );
        assert!(msg.contains("--time"), "{msg}");
        assert_eq!(
            err.downcast_ref::<Failure>().map(|f| f.exit.code()),
            Some(2)
        );
        let t = compare(&a, &b, true).unwrap();
        assert_eq!(t.metric, Metric::Seconds);
        assert_eq!(t.rows.len(), 1);
        // The stored seconds spread is used: CV equals the record's own.
        let cv = a.records[0].record.ngcc.as_ref().unwrap().spread.cv;
        assert_eq!(t.rows[0].a.cv, Some(cv));
    }

    #[test]
    fn single_trial_has_no_interval_and_is_never_flagged() {
        let a = dataset(vec![record("A", "keygen", &[(10, 1.0, 1000)], None)]);
        let b = dataset(vec![record("A", "keygen", &[(10, 3.0, 3000)], None)]);
        let c = compare(&a, &b, false).unwrap();
        assert_eq!(c.rows[0].ci, None);
        assert!(!c.rows[0].changed);
        assert!(text(&c, "a", "b").contains("no interval (<2 trials)"));
    }

    #[test]
    fn failed_records_are_not_comparable() {
        let mut failed = record("A", "keygen", &trials(1e6, 0.01), None);
        failed.status = RecordStatus::FailedOrPartial;
        let a = dataset(vec![record("A", "keygen", &trials(1e6, 0.01), None)]);
        let b = dataset(vec![failed]);
        let c = compare(&a, &b, false).unwrap();
        assert!(c.rows.is_empty());
        assert_eq!(c.not_comparable, ["kem-1 A keygen"]);
    }

    #[test]
    fn html_page_is_standalone() {
        let a = dataset(vec![record("A", "keygen", &trials(1e6, 0.01), None)]);
        let b = dataset(vec![record("A", "keygen", &trials(2e6, 0.01), None)]);
        let c = compare(&a, &b, false).unwrap();
        let page = html_page(&c, "a <x>", "b", &[]);
        assert!(page.contains("<style>") && page.contains("<script>"));
        assert!(!page.contains("assets/site.css"));
        assert!(page.contains("a &lt;x&gt;"));
        assert!(page.contains("<circle"));
        assert!(page.contains("class=\"changed\""));
    }
}
