//! What a chart or comparison measures: counts of one cycle counter, or wall-clock seconds.
//! The name of the counter goes into every axis title, so TSC reference cycles are never
//! presented as core cycles.

use crate::dataset::load::Dataset;
use crate::dataset::schema::{Campaign, CounterKind, Record, RecordStatus};
use crate::report::format;

/// The counter behind a record's cycle figures: our `ngcc.counter`, else the campaign's,
/// else `perf_cycles` (the reference harness counts user-mode core cycles with
/// `perf_event_open`, reference-harness.md §2.5).
pub fn record_counter(rec: &Record, campaign: &Campaign) -> CounterKind {
    rec.ngcc
        .as_ref()
        .map(|x| x.counter.clone())
        .or_else(|| campaign.counter.clone())
        .unwrap_or(CounterKind::PerfCycles)
}

/// One description of a counter for people.
pub fn counter_words(counter: &CounterKind) -> String {
    match counter {
        CounterKind::PerfCycles => "user-mode core cycles".into(),
        CounterKind::Tsc => "TSC reference cycles, not core cycles".into(),
        CounterKind::Cntvct => "cntvct_el0 ticks, not core cycles".into(),
        CounterKind::None => "no cycle counter".into(),
        CounterKind::Other(other) => format!("{other} counts, not core cycles"),
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Metric {
    /// Mean counts per operation of one counter.
    Cycles { counter: CounterKind },
    /// Mean wall-clock seconds per operation.
    Seconds,
}

impl Metric {
    /// Cycles when every complete record of the dataset used the same counter and some have
    /// cycle figures; otherwise seconds (a chart never mixes counters).
    pub fn of(ds: &Dataset) -> Metric {
        let mut counters: Vec<CounterKind> = Vec::new();
        let mut any_cycles = false;
        for r in ds.records.iter().map(|r| &r.record) {
            let Some(s) = r
                .stats
                .as_ref()
                .filter(|_| r.status == RecordStatus::Complete)
            else {
                continue;
            };
            any_cycles |= s.mean_cycles.is_some();
            let c = record_counter(r, &ds.campaign);
            if !counters.contains(&c) {
                counters.push(c);
            }
        }
        match counters.as_slice() {
            [c] if *c != CounterKind::None && any_cycles => Metric::Cycles { counter: c.clone() },
            _ => Metric::Seconds,
        }
    }

    /// The record's mean per operation in this metric; `None` for failed records and for
    /// records without cycle figures.
    pub fn value(&self, rec: &Record) -> Option<f64> {
        let s = rec
            .stats
            .as_ref()
            .filter(|_| rec.status == RecordStatus::Complete)?;
        match self {
            Metric::Cycles { .. } => s.mean_cycles,
            Metric::Seconds => Some(s.mean_seconds),
        }
    }

    /// A value as the tables print it.
    pub fn text(&self, v: f64) -> String {
        match self {
            Metric::Cycles { .. } => format::fmt_int(Some(v)),
            Metric::Seconds => format::fmt_time(Some(v)),
        }
    }

    /// Value with its unit, for tooltips: `534.0 k cycles`, `198 µs`.
    pub fn text_with_unit(&self, v: f64) -> String {
        match self {
            Metric::Cycles { counter } => format!("{} {}", self.text(v), unit(counter)),
            Metric::Seconds => self.text(v),
        }
    }

    /// Axis title: `mean cycles per operation (user-mode core cycles), log scale`.
    pub fn axis(&self, per: &str) -> String {
        match self {
            Metric::Cycles { counter } => format!(
                "mean {} per {per} ({}), log scale",
                unit(counter),
                counter_words(counter)
            ),
            Metric::Seconds => format!("mean wall-clock time per {per}, log scale"),
        }
    }
}

/// The unit word of a counter.
pub fn unit(counter: &CounterKind) -> String {
    counter.unit()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axis_titles_name_the_counter() {
        let core = Metric::Cycles {
            counter: CounterKind::PerfCycles,
        };
        assert_eq!(
            core.axis("operation"),
            "mean cycles per operation (user-mode core cycles), log scale"
        );
        let tsc = Metric::Cycles {
            counter: CounterKind::Tsc,
        };
        assert!(
            tsc.axis("operation")
                .contains("TSC reference cycles, not core cycles")
        );
        assert_eq!(tsc.text_with_unit(534.0e3), "534.0 k TSC cycles");
        assert!(Metric::Seconds.axis("operation").contains("wall-clock"));
        assert_eq!(Metric::Seconds.text_with_unit(198e-6), "198 µs");
    }
}
