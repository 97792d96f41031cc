//! `ngcc-perf bench plan RUN`: how well calibration predicted the trials, and how much of
//! every trial process was timed. Per record: the planned per-call time (the calibration's
//! `t1_s`) against the measured one, their ratio, the fixed cost of each process (process wall
//! time as the orchestrator measured it, minus the timed windows) against what the plan
//! assumed, and the timed share of the worst process; then the distribution over records.

use crate::dataset::schema::{Calibration, Op, Process, Record};
use crate::measure::stats;
use crate::rundir::RunDir;
use crate::util::read_json;
use anyhow::{Context, Result, bail};
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

/// Planned/actual in this band counts as a good prediction (the acceptance band).
pub const GOOD_BAND: (f64, f64) = (0.8, 1.25);
/// No record may fall outside this band.
pub const HARD_BAND: (f64, f64) = (0.67, 1.5);
/// Every process should be timed for at least this share of its wall time.
pub const MIN_TIMED_SHARE: f64 = 0.95;

#[derive(Args, Debug)]
pub struct PlanArgs {
    /// Run directory with calibrations and records.
    pub run: PathBuf,
}

/// One record with its calibration.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanRow {
    /// `<cand>/<label> <op key>`.
    pub name: String,
    /// Calibration's per-call estimate (what the plan used), seconds; per iteration for a
    /// KEX step.
    pub planned_s: f64,
    /// Measured per call: timed seconds / calls over all trials (KEX step: loop seconds).
    pub actual_s: f64,
    /// planned / actual.
    pub ratio: f64,
    /// Calls per trial and trials, as planned.
    pub iterations: u64,
    pub trials: u64,
    /// Processes with trials (not a reused calibration).
    pub processes: usize,
    /// The fixed cost the plan assumed per process (`Calibration::trial_fixed_s`).
    pub planned_fixed_s: f64,
    /// Median and largest measured fixed cost per process (wall − timed).
    pub fixed_median_s: f64,
    pub fixed_max_s: f64,
    /// Smallest and median timed share of process wall time.
    pub share_min: f64,
    pub share_median: f64,
    /// Timed seconds of all processes over their summed wall time.
    pub share_record: f64,
    /// Spread of the per-trial per-call times (CV).
    pub cv: f64,
}

/// What one process timed and how long it lived (wall from the orchestrator's own clock).
fn process_times(p: &Process) -> (f64, f64) {
    let timed: f64 = p.trials.iter().map(|t| t.loop_wall_s()).sum();
    let wall = p.observed.as_ref().map_or(p.wall_s, |o| o.wall_s);
    (timed, wall)
}

/// The row of one record, or `None` when it has no trials of its own. A KEX step's plan
/// sizes its trials by `iteration_s`, the cost of one iteration (a whole exchange, of which
/// only the step is timed): then planned and actual are per iteration, the loop's wall time.
pub fn row(
    name: String,
    rec: &Record,
    cal: &Calibration,
    iteration_s: Option<f64>,
) -> Option<PlanRow> {
    let procs: Vec<&Process> = rec
        .processes
        .iter()
        .filter(|p| !p.trials.is_empty() && p.reused_calibration != Some(true))
        .collect();
    if procs.is_empty() {
        return None;
    }
    let (mut secs, mut calls) = (0.0, 0u64);
    let mut per_trial = Vec::new();
    for t in procs.iter().flat_map(|p| p.trials.iter()) {
        secs += if iteration_s.is_some() {
            t.loop_wall_s()
        } else {
            t.seconds
        };
        calls += t.measurements;
        per_trial.push(t.seconds / t.measurements.max(1) as f64);
    }
    let actual_s = secs / calls.max(1) as f64;
    let (mut fixed, mut share) = (Vec::new(), Vec::new());
    let (mut timed_sum, mut wall_sum) = (0.0, 0.0);
    for p in &procs {
        let (timed, wall) = process_times(p);
        timed_sum += timed;
        wall_sum += wall;
        fixed.push((wall - timed).max(0.0));
        share.push(if wall > 0.0 { timed / wall } else { 0.0 });
    }
    let planned_s = iteration_s.map_or(cal.t1_s, |x| x.max(cal.t1_s));
    Some(PlanRow {
        name,
        planned_s,
        actual_s,
        ratio: planned_s / actual_s,
        iterations: rec.plan.iterations_per_trial,
        trials: rec.plan.trials,
        processes: procs.len(),
        planned_fixed_s: cal.trial_fixed_s(),
        fixed_median_s: stats::median(&fixed).unwrap_or(0.0),
        fixed_max_s: fixed.iter().copied().fold(0.0, f64::max),
        share_min: share.iter().copied().fold(f64::INFINITY, f64::min),
        share_median: stats::median(&share).unwrap_or(0.0),
        share_record: if wall_sum > 0.0 {
            timed_sum / wall_sum
        } else {
            0.0
        },
        cv: stats::spread(&per_trial).cv,
    })
}

/// Every record of the run that has a calibration, sorted by name.
pub fn rows(run: &RunDir) -> Result<Vec<PlanRow>> {
    let records = run.path("records");
    let mut out = Vec::new();
    let Ok(cands) = std::fs::read_dir(&records) else {
        bail!("{} has no records", run.path("").display());
    };
    for cand in cands {
        let cand = cand?;
        let cand_id = cand.file_name().to_string_lossy().into_owned();
        for f in std::fs::read_dir(cand.path())? {
            let path = f?.path();
            let Some(stem) = path
                .file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.strip_suffix(".json"))
            else {
                continue;
            };
            let Some((label, key)) = stem.rsplit_once("__") else {
                continue;
            };
            let rec: Record =
                read_json(&path).with_context(|| format!("reading {}", path.display()))?;
            let Ok(cal) = read_json::<Calibration>(&run.calibration_path(&cand_id, label, key))
            else {
                continue;
            };
            let step = rec
                .processes
                .iter()
                .any(|p| p.trials.iter().any(|t| t.loop_seconds.is_some()));
            let iteration_s = step
                .then(|| {
                    read_json::<Calibration>(&run.calibration_path(
                        &cand_id,
                        label,
                        &Op::Exchange.key(0),
                    ))
                })
                .and_then(|c| c.ok())
                .map(|c| c.t1_s);
            if let Some(r) = row(format!("{cand_id}/{label} {key}"), &rec, &cal, iteration_s) {
                out.push(r);
            }
        }
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

/// The distribution over records.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    pub records: usize,
    pub ratio_min: f64,
    pub ratio_median: f64,
    pub ratio_max: f64,
    /// Share of records with the ratio inside [`GOOD_BAND`].
    pub within_good: f64,
    /// Records outside [`HARD_BAND`].
    pub outside_hard: usize,
    pub share_min: f64,
    pub share_median: f64,
    /// Records with some process timed below [`MIN_TIMED_SHARE`].
    pub below_share: usize,
    /// The smallest whole-record share, and the records whose share is below the minimum.
    pub record_share_min: f64,
    pub record_below_share: usize,
    pub fixed_median_s: f64,
    pub fixed_max_s: f64,
}

pub fn summary(rows: &[PlanRow]) -> Summary {
    let ratios: Vec<f64> = rows.iter().map(|r| r.ratio).collect();
    let shares: Vec<f64> = rows.iter().map(|r| r.share_min).collect();
    let fixed: Vec<f64> = rows.iter().map(|r| r.fixed_median_s).collect();
    let inside = |x: f64, (lo, hi): (f64, f64)| (lo..=hi).contains(&x);
    Summary {
        records: rows.len(),
        ratio_min: ratios.iter().copied().fold(f64::INFINITY, f64::min),
        ratio_median: stats::median(&ratios).unwrap_or(f64::NAN),
        ratio_max: ratios.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        within_good: ratios.iter().filter(|&&r| inside(r, GOOD_BAND)).count() as f64
            / rows.len().max(1) as f64,
        outside_hard: ratios.iter().filter(|&&r| !inside(r, HARD_BAND)).count(),
        share_min: shares.iter().copied().fold(f64::INFINITY, f64::min),
        share_median: stats::median(&shares).unwrap_or(f64::NAN),
        below_share: shares.iter().filter(|&&s| s < MIN_TIMED_SHARE).count(),
        record_share_min: rows
            .iter()
            .map(|r| r.share_record)
            .fold(f64::INFINITY, f64::min),
        record_below_share: rows
            .iter()
            .filter(|r| r.share_record < MIN_TIMED_SHARE)
            .count(),
        fixed_median_s: stats::median(&fixed).unwrap_or(f64::NAN),
        fixed_max_s: rows.iter().map(|r| r.fixed_max_s).fold(0.0, f64::max),
    }
}

/// Seconds in a readable unit (µs below a millisecond).
fn dur(s: f64) -> String {
    if s < 1e-3 {
        format!("{:.3} us", s * 1e6)
    } else if s < 1.0 {
        format!("{:.3} ms", s * 1e3)
    } else {
        format!("{s:.3} s")
    }
}

/// The table and the summary as printed (Markdown, so it goes into a note as is).
pub fn render(rows: &[PlanRow]) -> String {
    let mut t = String::from(
        "| record | planned/call | actual/call | planned/actual | iters x trials | procs | \
         fixed planned | fixed median | fixed max | timed share min | timed share median | \
         timed share record | CV |\n\
         |---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for r in rows {
        t.push_str(&format!(
            "| {} | {} | {} | {:.3} | {} x {} | {} | {} | {} | {} | {:.1} % | {:.1} % | {:.1} % | \
             {:.2} % |\n",
            r.name,
            dur(r.planned_s),
            dur(r.actual_s),
            r.ratio,
            r.iterations,
            r.trials,
            r.processes,
            dur(r.planned_fixed_s),
            dur(r.fixed_median_s),
            dur(r.fixed_max_s),
            100.0 * r.share_min,
            100.0 * r.share_median,
            100.0 * r.share_record,
            100.0 * r.cv,
        ));
    }
    let s = summary(rows);
    t.push_str(&format!(
        "\n{} records. planned/actual: min {:.3}, median {:.3}, max {:.3}; {:.1} % within \
         {}-{}; {} outside {}-{}.\n",
        s.records,
        s.ratio_min,
        s.ratio_median,
        s.ratio_max,
        100.0 * s.within_good,
        GOOD_BAND.0,
        GOOD_BAND.1,
        s.outside_hard,
        HARD_BAND.0,
        HARD_BAND.1,
    ));
    t.push_str(&format!(
        "timed share of process wall time (worst process of each record): min {:.1} %, median \
         {:.1} %; {} records below {:.0} %. Whole records (timed over wall of all their \
         processes): min {:.1} %; {} below. Fixed cost per process: median {}, max {}.\n",
        100.0 * s.share_min,
        100.0 * s.share_median,
        s.below_share,
        100.0 * MIN_TIMED_SHARE,
        100.0 * s.record_share_min,
        s.record_below_share,
        dur(s.fixed_median_s),
        dur(s.fixed_max_s),
    ));
    t
}

pub fn run(args: PlanArgs) -> Result<ExitCode> {
    let run = RunDir::read_only(&args.run)?;
    let rows = rows(&run)?;
    if rows.is_empty() {
        bail!("{}: no record with a calibration", args.run.display());
    }
    crate::util::out_text!("{}", render(&rows));
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::schema::{Observed, Plan, Trial};
    use crate::util::write_json;

    fn trial(calls: u64, seconds: f64) -> Trial {
        Trial {
            measurements: calls,
            seconds,
            ..Trial::default()
        }
    }

    fn process(wall: f64, trials: Vec<Trial>) -> Process {
        Process {
            trials,
            // The orchestrator's clock wins over the process's own figure.
            wall_s: 99.0,
            observed: Some(Observed {
                wall_s: wall,
                ..Observed::default()
            }),
            ..Process::default()
        }
    }

    fn record() -> Record {
        Record {
            plan: Plan {
                iterations_per_trial: 1000,
                trials: 2,
                ..Plan::default()
            },
            processes: vec![
                process(0.22, vec![trial(1000, 0.2)]),
                process(0.25, vec![trial(1000, 0.24)]),
            ],
            ..Record::default()
        }
    }

    fn calibration(t1: f64) -> Calibration {
        Calibration {
            t1_s: t1,
            overhead_s: 0.005,
            dry_fixed_s: vec![0.02, 0.01, 0.03],
            ..Calibration::default()
        }
    }

    #[test]
    fn a_row_recomputes_from_its_files() {
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::read_only(dir.path()).unwrap();
        write_json(&run.record_path("c", "L-1", "enc"), &record()).unwrap();
        write_json(&run.calibration_path("c", "L-1", "enc"), &calibration(2e-4)).unwrap();
        // A record without a calibration is left out.
        write_json(&run.record_path("c", "L-2", "enc"), &record()).unwrap();
        let rows = rows(&run).unwrap();
        assert_eq!(rows.len(), 1);
        let r = &rows[0];
        assert_eq!(r.name, "c/L-1 enc");
        // 0.44 s over 2000 calls = 220 µs; planned 200 µs.
        assert!((r.actual_s - 2.2e-4).abs() < 1e-15);
        assert!((r.ratio - 2e-4 / 2.2e-4).abs() < 1e-12);
        assert_eq!((r.iterations, r.trials, r.processes), (1000, 2, 1 + 1));
        // Fixed: 0.02 and 0.01 s; planned: the median dry trial (0.02 s > overhead 0.005 s).
        assert!((r.fixed_median_s - 0.015).abs() < 1e-12);
        assert!((r.fixed_max_s - 0.02).abs() < 1e-12);
        assert_eq!(r.planned_fixed_s, 0.02);
        assert!((r.share_min - 0.2 / 0.22).abs() < 1e-12);
        assert!((r.share_median - (0.2 / 0.22 + 0.24 / 0.25) / 2.0).abs() < 1e-12);
        assert!((r.share_record - 0.44 / 0.47).abs() < 1e-12);
        let text = render(&rows);
        let table: Vec<&str> = text.lines().filter(|l| l.starts_with('|')).collect();
        assert_eq!(table.len(), 3, "header, rule, one row");
        let cells: Vec<&str> = table[2].split('|').map(str::trim).collect();
        assert_eq!(cells[1], "c/L-1 enc");
        assert_eq!(cells[4], format!("{:.3}", r.ratio));
        assert_eq!(cells[10], "90.9 %");
        assert_eq!(cells[12], "93.6 %");
        assert!(text.contains("1 records. planned/actual: min 0.909"));
        assert!(text.contains("0.0 % within 0.8-1.25; 0 outside 0.67-1.5"));
    }

    #[test]
    fn a_kex_step_is_planned_and_compared_per_iteration() {
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::read_only(dir.path()).unwrap();
        // 100 exchanges of 1 ms each, of which the step took 10 ns.
        let step = Trial {
            loop_seconds: Some(0.1),
            ..trial(100, 1e-6)
        };
        let rec = Record {
            processes: vec![process(0.11, vec![step])],
            ..record()
        };
        write_json(&run.record_path("k", "L", "init_a"), &rec).unwrap();
        write_json(
            &run.calibration_path("k", "L", "init_a"),
            &calibration(1e-8),
        )
        .unwrap();
        write_json(
            &run.calibration_path("k", "L", "exchange"),
            &calibration(0.8e-3),
        )
        .unwrap();
        let r = &rows(&run).unwrap()[0];
        assert_eq!(r.planned_s, 0.8e-3);
        assert!((r.actual_s - 1e-3).abs() < 1e-15);
        assert!((r.ratio - 0.8).abs() < 1e-12);
    }

    #[test]
    fn the_summary_counts_the_bands() {
        let row = |ratio: f64, share: f64| PlanRow {
            name: String::new(),
            planned_s: ratio,
            actual_s: 1.0,
            ratio,
            iterations: 1,
            trials: 1,
            processes: 1,
            planned_fixed_s: 0.0,
            fixed_median_s: 0.01,
            fixed_max_s: 0.02,
            share_min: share,
            share_median: share,
            share_record: share + 0.01,
            cv: 0.0,
        };
        let rows = [
            row(1.0, 0.97),
            row(0.8, 0.99),
            row(1.26, 0.95),
            row(0.6, 0.90),
        ];
        let s = summary(&rows);
        assert_eq!(s.records, 4);
        assert_eq!(s.within_good, 0.5);
        assert_eq!(s.outside_hard, 1);
        assert_eq!((s.ratio_min, s.ratio_max), (0.6, 1.26));
        assert_eq!(s.ratio_median, 0.9);
        assert_eq!(s.below_share, 1);
        assert_eq!(s.share_min, 0.90);
        assert_eq!((s.record_share_min, s.record_below_share), (0.91, 1));
    }

    #[test]
    fn overhead_ratio_interval() {
        let r = super::super::ratio_summary(&[102.0, 98.0, 100.0], &[100.0, 100.0, 100.0]);
        assert_eq!(r.rounds, 3);
        assert!((r.mean - 1.0).abs() < 1e-12);
        // sd 0.02, t(2) = 4.303: half width 4.303 · 0.02 / √3.
        let half = stats::t_quantile_975(2) * 0.02 / 3f64.sqrt();
        assert!((r.ci95_high - 1.0 - half).abs() < 1e-9, "{r:?}");
        assert!((1.0 - r.ci95_low - half).abs() < 1e-9);
        assert_eq!(r.of_medians, 1.0);
    }
}
