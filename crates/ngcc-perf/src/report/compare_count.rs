//! `ngcc-perf compare --counter instructions A B`: per instance and operation, the exact
//! difference of the instructions per call that callgrind counted (`count/` of both
//! datasets), and the regression gate `--fail-above PCT`. Counts do not move with the host's
//! load, so the gate needs no interval: an operation whose mean instructions per call grew
//! by more than PCT percent fails it. A pure function of the two datasets.

use super::format;
use crate::dataset::count::CountRecord;
use crate::dataset::load::Dataset;
use crate::dataset::schema::ProcessStatus;
use crate::report::model::{natural_cmp, op_rank};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// One operation in both datasets.
#[derive(Clone, Debug, PartialEq)]
pub struct CountRow {
    pub candidate: String,
    pub label: String,
    pub op_key: String,
    /// Mean instructions per call, and the range over the calls.
    pub a: Side,
    pub b: Side,
    /// (B − A) / A × 100 of the means.
    pub change_pct: f64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Side {
    pub mean: f64,
    pub min: u64,
    pub max: u64,
    /// Every call the same count: the mean is exact.
    pub constant: bool,
    /// The library contains valgrind client requests.
    pub valgrind_aware: bool,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct CountComparison {
    pub rows: Vec<CountRow>,
    /// Operations counted in one dataset only (or not complete in the other): `cand/label op`.
    pub only_a: Vec<String>,
    pub only_b: Vec<String>,
}

fn side(r: &CountRecord) -> Option<Side> {
    let s = r
        .summary
        .as_ref()
        .filter(|_| r.status == ProcessStatus::Complete)?;
    Some(Side {
        mean: s.ir_mean,
        min: s.ir_min,
        max: s.ir_max,
        constant: s.constant_ir,
        valgrind_aware: r.valgrind_aware(),
    })
}

type Key = (String, String, String);

fn sides(ds: &Dataset) -> BTreeMap<Key, Side> {
    ds.count
        .iter()
        .filter_map(|c| {
            let r = &c.count;
            let key = (
                r.candidate.clone(),
                r.label.clone(),
                r.operation.key(r.input_bytes),
            );
            side(r).map(|s| (key, s))
        })
        .collect()
}

pub fn compare(a: &Dataset, b: &Dataset) -> CountComparison {
    let (sa, sb) = (sides(a), sides(b));
    let mut out = CountComparison::default();
    let name = |k: &Key| format!("{}/{} {}", k.0, k.1, k.2);
    for (k, x) in &sa {
        match sb.get(k) {
            Some(y) => out.rows.push(CountRow {
                candidate: k.0.clone(),
                label: k.1.clone(),
                op_key: k.2.clone(),
                a: x.clone(),
                b: y.clone(),
                change_pct: if x.mean > 0.0 {
                    100.0 * (y.mean - x.mean) / x.mean
                } else {
                    0.0
                },
            }),
            None => out.only_a.push(name(k)),
        }
    }
    out.only_b = sb
        .keys()
        .filter(|k| !sa.contains_key(*k))
        .map(name)
        .collect();
    out.rows.sort_by(|x, y| {
        natural_cmp(&x.candidate, &y.candidate)
            .then_with(|| natural_cmp(&x.label, &y.label))
            .then_with(|| op_rank(&x.op_key).cmp(&op_rank(&y.op_key)))
            .then_with(|| x.op_key.cmp(&y.op_key))
    });
    out
}

/// The rows whose instructions grew by more than `pct` percent.
pub fn grew(c: &CountComparison, pct: f64) -> Vec<&CountRow> {
    c.rows.iter().filter(|r| r.change_pct > pct).collect()
}

fn count_text(s: &Side) -> String {
    let mut t = if s.constant {
        format::exact(s.min)
    } else {
        format!(
            "{:.1} ({}–{})",
            s.mean,
            format::exact(s.min),
            format::exact(s.max)
        )
    };
    if s.valgrind_aware {
        t.push_str(" [valgrind-aware]");
    }
    t
}

/// The comparison as text: one line per operation, then the gate's verdict.
pub fn text(c: &CountComparison, a_name: &str, b_name: &str, fail_above: Option<f64>) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "compare instructions per call (callgrind, mean over the counted calls; range when they differ): A = {a_name}, B = {b_name}"
    );
    let _ = writeln!(
        s,
        "{:<40} {:<10} {:>18} {:>18} {:>14} {:>11}",
        "instance", "operation", "A", "B", "B − A", "change"
    );
    for r in &c.rows {
        let delta = if r.a.constant && r.b.constant {
            format::exact_delta(r.a.min, r.b.min)
        } else {
            format!("{:+.1}", r.b.mean - r.a.mean)
        };
        let flag = match fail_above {
            Some(p) if r.change_pct > p => "  GREW",
            _ => "",
        };
        let _ = writeln!(
            s,
            "{:<40} {:<10} {:>18} {:>18} {:>14} {:>11}{flag}",
            format!("{}/{}", r.candidate, r.label),
            r.op_key,
            count_text(&r.a),
            count_text(&r.b),
            delta,
            format::change_percent(r.change_pct)
        );
    }
    for (which, list) in [("A", &c.only_a), ("B", &c.only_b)] {
        if !list.is_empty() {
            let _ = writeln!(s, "counted in {which} only: {}", list.join(", "));
        }
    }
    let unchanged = c.rows.iter().filter(|r| r.a.mean == r.b.mean).count();
    let _ = write!(
        s,
        "compare: {} operation(s) in both, {unchanged} with the same instructions per call",
        c.rows.len()
    );
    match fail_above {
        Some(p) => {
            let g = grew(c, p);
            let names: Vec<String> = g
                .iter()
                .map(|r| format!("{}/{} {}", r.candidate, r.label, r.op_key))
                .collect();
            let _ = writeln!(
                s,
                "; {} grew by more than {p} % (--fail-above){}",
                g.len(),
                if names.is_empty() {
                    String::new()
                } else {
                    format!(": {}", names.join(", "))
                }
            );
        }
        None => s.push('\n'),
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::count::{CountSummary, summarize};
    use crate::dataset::load::LoadedCount;
    use crate::dataset::schema::Op;

    fn rec(label: &str, op: Op, irs: &[u64]) -> LoadedCount {
        let calls: Vec<_> = irs
            .iter()
            .map(|&ir| crate::dataset::count::CallCount {
                ir,
                ..Default::default()
            })
            .collect();
        let summary: Option<CountSummary> =
            summarize(&calls, &crate::dataset::count::ESTIMATE_WEIGHTS, &[]);
        LoadedCount {
            path: String::new(),
            count: CountRecord {
                candidate: "c".into(),
                label: label.into(),
                operation: op,
                status: ProcessStatus::Complete,
                calls,
                summary,
                ..Default::default()
            },
        }
    }

    #[test]
    fn the_gate_names_exactly_the_operations_that_grew() {
        let a = Dataset {
            count: vec![
                rec("x", Op::Enc, &[1000, 1000]),
                rec("x", Op::Dec, &[500, 500]),
                rec("x", Op::Keygen, &[100, 120]),
            ],
            ..Default::default()
        };
        let b = Dataset {
            count: vec![
                rec("x", Op::Enc, &[1011, 1011]),
                rec("x", Op::Dec, &[500, 500]),
                rec("x", Op::Keygen, &[100, 120]),
            ],
            ..Default::default()
        };
        let c = compare(&a, &b);
        assert_eq!(c.rows.len(), 3);
        let g = grew(&c, 1.0);
        assert_eq!(g.len(), 1);
        assert_eq!(g[0].op_key, "enc");
        let t = text(&c, "A", "B", Some(1.0));
        assert!(t.contains("+11"), "{t}");
        assert!(t.contains("110.0 (100–120)"), "{t}");
        assert!(
            t.ends_with("1 grew by more than 1 % (--fail-above): c/x enc\n"),
            "{t}"
        );
        assert!(grew(&compare(&a, &a), 0.0).is_empty());
    }
}
