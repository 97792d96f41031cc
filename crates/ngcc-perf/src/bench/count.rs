//! `ngcc-perf bench count RUN`: what counting costs, per operation. For each count record
//! (`count/<cand>/<label>__<op>.json`) with a timed record of the same operation
//! (`records/…`): the CPU seconds its warm-up and counted calls took under callgrind
//! (`work_cpu_s`, measured inside the job; its wall seconds `work_s` where a record lacks
//! it), the same number of calls at the timed record's seconds per call, and their ratio,
//! the slowdown. A KEX step's count job calls the whole exchange (only the step is
//! collected), so its timed figure is per iteration, the step trial's loop. The job's CPU seconds (valgrind's start-up
//! included) and wall seconds are shown beside it: they, not the slowdown, bound the phase.
//! A pure function of the run's files.

use crate::dataset::count::{COUNT_DIR, CountRecord};
use crate::dataset::schema::{Process, ProcessStatus, Record};
use crate::measure::stats;
use crate::report::format::{DASH, fmt_g, fmt_time};
use crate::rundir::RunDir;
use crate::util::read_json;
use anyhow::{Context, Result, bail};
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct CountArgs {
    /// Run directory with count records (phase `count`) and timed records (`measure`).
    pub run: PathBuf,
}

/// One counted operation against its timed record.
#[derive(Debug, Clone, PartialEq)]
pub struct CountRow {
    /// `<cand>/<label> <op key>`.
    pub name: String,
    /// Warm-up plus counted calls the job made under callgrind.
    pub calls: u64,
    /// Seconds of those calls under callgrind: wall, and CPU when the record has it.
    pub work_s: f64,
    pub work_cpu_s: Option<f64>,
    /// The timed record's seconds per call (all its own trials); `None` without one.
    pub timed_s: Option<f64>,
    /// `work_s / (calls × timed_s)`.
    pub slowdown: Option<f64>,
    /// The whole job: CPU seconds of the jail's tree and wall seconds.
    pub cpu_s: f64,
    pub wall_s: f64,
}

/// Seconds per call (per iteration for a KEX step) over a record's own trials (a reused
/// calibration's are not its own).
pub fn timed_per_call(rec: &Record) -> Option<f64> {
    let (mut secs, mut calls) = (0.0, 0u64);
    for t in rec
        .processes
        .iter()
        .filter(|p: &&Process| p.reused_calibration != Some(true))
        .flat_map(|p| p.trials.iter())
    {
        // A KEX step's loop: the whole iteration, as the count job calls it.
        secs += t.loop_wall_s();
        calls += t.measurements;
    }
    (calls > 0 && secs > 0.0).then(|| secs / calls as f64)
}

/// The row of one complete count record; `rec` is its timed record, if any.
pub fn row(c: &CountRecord, rec: Option<&Record>) -> CountRow {
    let calls = c.warmups + c.calls.len() as u64;
    let timed_s = rec.and_then(timed_per_call);
    let work_cpu_s = (c.work_cpu_s > 0.0).then_some(c.work_cpu_s);
    let spent = work_cpu_s.unwrap_or(c.work_s);
    CountRow {
        name: format!(
            "{}/{} {}",
            c.candidate,
            c.label,
            c.operation.key(c.input_bytes)
        ),
        calls,
        work_s: c.work_s,
        work_cpu_s,
        timed_s,
        slowdown: timed_s
            .filter(|_| calls > 0 && spent > 0.0)
            .map(|t| spent / (calls as f64 * t)),
        cpu_s: c.cpu_s,
        wall_s: c.wall_s,
    }
}

/// Every complete count record of the run, sorted by name.
pub fn rows(run: &RunDir) -> Result<Vec<CountRow>> {
    let dir = run.path(COUNT_DIR);
    let Ok(cands) = std::fs::read_dir(&dir) else {
        bail!("{} has no count records", run.path("").display());
    };
    let mut out = Vec::new();
    for cand in cands {
        for f in std::fs::read_dir(cand?.path())? {
            let path = f?.path();
            if path.extension().and_then(|e| e.to_str()) != Some("json") {
                continue;
            }
            let c: CountRecord =
                read_json(&path).with_context(|| format!("reading {}", path.display()))?;
            if c.status != ProcessStatus::Complete {
                continue;
            }
            let key = c.operation.key(c.input_bytes);
            let rec: Option<Record> =
                read_json(&run.record_path(&c.candidate, &c.label, &key)).ok();
            out.push(row(&c, rec.as_ref()));
        }
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

/// The table and a summary line (Markdown).
pub fn render(rows: &[CountRow]) -> String {
    let mut t = String::from(
        "| operation | calls under callgrind | their CPU s | their wall s | per call under \
         callgrind | timed per call | slowdown | job CPU s | job wall s |\n\
         |---|---|---|---|---|---|---|---|---|\n",
    );
    for r in rows {
        let spent = r.work_cpu_s.unwrap_or(r.work_s);
        t.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            r.name,
            r.calls,
            r.work_cpu_s.map_or(DASH.into(), |s| fmt_g(s, 3)),
            fmt_g(r.work_s, 3),
            fmt_time((r.calls > 0).then(|| spent / r.calls as f64)),
            fmt_time(r.timed_s),
            r.slowdown
                .map_or("no timed record".into(), |s| format!("{}×", fmt_g(s, 3))),
            fmt_g(r.cpu_s, 3),
            fmt_g(r.wall_s, 3),
        ));
    }
    let slow: Vec<f64> = rows.iter().filter_map(|r| r.slowdown).collect();
    let cpu = stats::py_sum(rows.iter().map(|r| r.cpu_s));
    let work = stats::py_sum(rows.iter().map(|r| r.work_cpu_s.unwrap_or(r.work_s)));
    t.push_str(&format!(
        "\n{} counted operation(s), {} with a timed record; slowdown under callgrind min {}×, \
         median {}×, max {}× (the calls' CPU seconds under callgrind, each call followed by a counter dump, \
         over the same calls at the timed seconds per call; wall seconds for records without \
         CPU seconds); the jobs took {} CPU s in all, of which {} s in the calls (the rest: \
         valgrind's start-up, the library's load and setup)\n",
        rows.len(),
        slow.len(),
        fmt_g(slow.iter().copied().fold(f64::INFINITY, f64::min), 3),
        fmt_g(stats::median(&slow).unwrap_or(f64::NAN), 3),
        fmt_g(slow.iter().copied().fold(f64::NEG_INFINITY, f64::max), 3),
        fmt_g(cpu, 3),
        fmt_g(work, 3),
    ));
    t
}

pub fn run(args: CountArgs) -> Result<ExitCode> {
    let run = RunDir::open(&args.run)?;
    crate::util::out_text!("{}", render(&rows(&run)?));
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::schema::{Op, Trial};

    #[test]
    fn the_slowdown_is_the_calls_seconds_over_the_timed_ones() {
        let c = CountRecord {
            candidate: "c".into(),
            label: "l".into(),
            operation: Op::Enc,
            warmups: 3,
            calls: vec![Default::default(); 7],
            work_s: 0.9,
            work_cpu_s: 0.5,
            status: ProcessStatus::Complete,
            ..CountRecord::default()
        };
        let mut rec = Record::default();
        let mut p = Process::default();
        p.trials.push(Trial {
            measurements: 1000,
            seconds: 0.001,
            ..Trial::default()
        });
        rec.processes.push(p);
        let r = row(&c, Some(&rec));
        // 10 calls at 1 µs would take 10 µs: 0.5 s is 50 000 times that.
        assert_eq!(r.calls, 10);
        assert!((r.slowdown.unwrap() - 50_000.0).abs() < 1e-6, "{r:?}");
        assert_eq!(row(&c, None).slowdown, None);
        let t = render(&[r]);
        assert!(
            t.contains("| c/l enc | 10 | 0.5 | 0.9 | 50 ms | 1 µs | 5e+04× |"),
            "{t}"
        );
        // Without CPU seconds (an older record) the wall seconds stand in.
        let old = CountRecord {
            work_cpu_s: 0.0,
            ..c
        };
        assert!((row(&old, Some(&rec)).slowdown.unwrap() - 90_000.0).abs() < 1e-6);
    }
}
