//! One callgrind dump (the count phase's per-call file) into a `CallCount`: the sum of every
//! function's own cost is the call's events; a call edge from a function that is not a
//! helper into one that is adds its inclusive cost (callgrind's cost line after `calls=`) to
//! the helpers' instructions, so a helper called by a helper counts once. Pure: `validate`
//! runs it again on the published text.

use crate::dataset::count::{CallCount, DUMP_PREFIX, split_dumps};
use std::collections::{BTreeSet, HashMap};

/// A parsed dump: its trigger (the `desc: Trigger:` text), the events and the call.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Dump {
    pub trigger: String,
    pub count: CallCount,
    /// The dump's own `totals:` line, by event (checked against the sum of the costs).
    pub totals: Vec<(String, u64)>,
}

/// The name a `fn=`/`cfn=` value stands for: `(id) name` defines `id`, `(id)` uses it.
fn name(value: &str, names: &mut HashMap<String, String>) -> String {
    let v = value.trim();
    if let Some(rest) = v.strip_prefix('(')
        && let Some(close) = rest.find(')')
    {
        let id = &rest[..close];
        let text = rest[close + 1..].trim();
        if text.is_empty() {
            return names.get(id).cloned().unwrap_or_default();
        }
        names.insert(id.to_string(), text.to_string());
        return text.to_string();
    }
    v.to_string()
}

/// The function's name without callgrind's recursion-level suffix (`f'2`).
fn base(name: &str) -> &str {
    match name.rfind('\'') {
        Some(i) if name[i + 1..].bytes().all(|b| b.is_ascii_digit()) && i + 1 < name.len() => {
            &name[..i]
        }
        _ => name,
    }
}

/// Why a record's raw callgrind text is not the counted calls it should be. The count phase
/// records the text and `validate` reports it; the kinds keep the wording in one place.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DumpError {
    #[error("totals: {0}")]
    Totals(std::num::ParseIntError),
    #[error("a cost line before the events line")]
    CostBeforeEvents,
    #[error("cost {text:?}: {error}")]
    Cost {
        text: String,
        error: std::num::ParseIntError,
    },
    #[error("{costs} costs for {events} events")]
    TooManyCosts { costs: usize, events: usize },
    #[error("no events line: not a callgrind dump")]
    NoEvents,
    #[error("the dump has no Ir event")]
    NoIr,
    #[error("the dump's totals say {event} {total}, its cost lines sum to {sum}")]
    TotalsDisagree { event: String, total: u64, sum: u64 },
    /// Dump `index` (from 1) of a record's raw text.
    #[error("dump {index}: {error}")]
    InDump { index: usize, error: Box<DumpError> },
    #[error("dump {index} was triggered by {trigger:?}, not {want:?}")]
    Trigger {
        index: usize,
        trigger: String,
        want: String,
    },
}

/// Parses one dump; `is_helper` says which function names are helpers.
pub fn parse(text: &str, is_helper: &dyn Fn(&str) -> bool) -> Result<Dump, DumpError> {
    let mut fn_names = HashMap::new();
    let mut events: Vec<String> = Vec::new();
    let mut sums: Vec<u64> = Vec::new();
    let mut dump = Dump::default();
    let mut current = String::new();
    let mut callee: Option<String> = None;
    let mut after_calls = false;
    for line in text.lines() {
        let line = line.trim_end();
        if let Some(v) = line.strip_prefix("events:") {
            events = v.split_whitespace().map(str::to_string).collect();
            sums = vec![0; events.len()];
            continue;
        }
        if let Some(v) = line.strip_prefix("desc: Trigger:") {
            dump.trigger = v.trim().to_string();
            continue;
        }
        if let Some(v) = line.strip_prefix("totals:") {
            let vals: Vec<u64> = v
                .split_whitespace()
                .map(|x| x.parse().map_err(DumpError::Totals))
                .collect::<Result<_, _>>()?;
            dump.totals = events.iter().cloned().zip(vals).collect();
            continue;
        }
        if let Some(v) = line.strip_prefix("fn=") {
            current = name(v, &mut fn_names);
            continue;
        }
        if let Some(v) = line.strip_prefix("cfn=") {
            callee = Some(name(v, &mut fn_names));
            continue;
        }
        if line.starts_with("calls=") {
            after_calls = true;
            continue;
        }
        let first = line.bytes().next();
        if !first.is_some_and(|b| b.is_ascii_digit() || b == b'+' || b == b'-' || b == b'*') {
            continue;
        }
        if events.is_empty() {
            return Err(DumpError::CostBeforeEvents);
        }
        let mut tokens = line.split_whitespace();
        tokens.next(); // the position (a line number, 0 without -g)
        let costs: Vec<u64> = tokens
            .map(|x| {
                x.parse().map_err(|error| DumpError::Cost {
                    text: x.to_string(),
                    error,
                })
            })
            .collect::<Result<_, _>>()?;
        if costs.len() > events.len() {
            return Err(DumpError::TooManyCosts {
                costs: costs.len(),
                events: events.len(),
            });
        }
        if after_calls {
            after_calls = false;
            let to = callee.take().unwrap_or_default();
            if is_helper(base(&to)) && !is_helper(base(&current)) {
                let ir = costs.first().copied().unwrap_or(0);
                dump.count.helper_ir += ir;
                *dump.count.helpers.entry(base(&to).to_string()).or_default() += ir;
            }
        } else {
            for (s, c) in sums.iter_mut().zip(&costs) {
                *s += c;
            }
        }
    }
    if events.is_empty() {
        return Err(DumpError::NoEvents);
    }
    let get = |e: &str| {
        events
            .iter()
            .position(|x| x == e)
            .map(|i| sums[i])
            .unwrap_or(0)
    };
    if get("Ir") == 0 && !events.iter().any(|e| e == "Ir") {
        return Err(DumpError::NoIr);
    }
    let c = &mut dump.count;
    c.ir = get("Ir");
    c.dr = get("Dr");
    c.dw = get("Dw");
    c.i1mr = get("I1mr");
    c.d1mr = get("D1mr");
    c.d1mw = get("D1mw");
    c.ilmr = get("ILmr");
    c.dlmr = get("DLmr");
    c.dlmw = get("DLmw");
    for (e, v) in &dump.totals {
        if get(e) != *v {
            return Err(DumpError::TotalsDisagree {
                event: e.clone(),
                total: *v,
                sum: get(e),
            });
        }
    }
    Ok(dump)
}

/// Parses every dump of a record's raw text into its calls, checking each dump is the
/// counted call it should be. `validate` runs this again.
pub fn calls_from_raw(raw: &str, helper_fns: &[String]) -> Result<Vec<CallCount>, DumpError> {
    let set: BTreeSet<&str> = helper_fns.iter().map(String::as_str).collect();
    let is_helper = |n: &str| set.contains(n);
    let mut calls = Vec::new();
    for (i, d) in split_dumps(raw).into_iter().enumerate() {
        let parsed = parse(d, &is_helper).map_err(|e| DumpError::InDump {
            index: i + 1,
            error: Box::new(e),
        })?;
        let want = format!("Client Request: {DUMP_PREFIX} {}", i + 1);
        if parsed.trigger != want {
            return Err(DumpError::Trigger {
                index: i + 1,
                trigger: parsed.trigger,
                want,
            });
        }
        calls.push(parsed.count);
    }
    Ok(calls)
}

#[cfg(test)]
mod tests {
    use super::*;

    const DUMP: &str = "# callgrind format\nversion: 1\ndesc: Trigger: Client Request: ngcc-count-call 1\n\
positions: line\nevents: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw\n\nob=(1) /job/lib.so\nfl=(1) ???\n\
fn=(1) ngcc_kem_enc\n0 10 2 1\ncfn=(2) sha3_256\ncalls=1 0\n0 50 5 5\ncfn=(3) indcpa\ncalls=1 0\n0 100 10 10 1\n\n\
fn=(3)\n0 60 6 6 1\ncfn=(2)\ncalls=2 0\n0 40 4 4\n\nfn=(2)\n0 90 9 9\n\ntotals: 160 17 16 1 0 0 0 0 0\n";

    #[test]
    fn self_costs_sum_and_helpers_are_inclusive() {
        let helper = |n: &str| n == "sha3_256";
        let d = parse(DUMP, &helper).unwrap();
        assert_eq!(d.trigger, "Client Request: ngcc-count-call 1");
        assert_eq!(d.count.ir, 160);
        assert_eq!(d.count.dr, 17);
        assert_eq!(d.count.i1mr, 1);
        assert_eq!(d.count.helper_ir, 90);
        assert_eq!(d.count.helpers["sha3_256"], 90);
    }

    #[test]
    fn totals_that_disagree_are_an_error() {
        let bad = DUMP.replace("totals: 160", "totals: 161");
        assert!(parse(&bad, &|_| false).is_err());
    }

    /// The texts a count record and `validate` show, as they were when errors were strings.
    #[test]
    fn a_broken_dump_says_why_in_the_same_words() {
        let why = |text: &str| parse(text, &|_| false).unwrap_err().to_string();
        assert_eq!(
            why("positions: line\n"),
            "no events line: not a callgrind dump"
        );
        assert_eq!(why("1 2\n"), "a cost line before the events line");
        assert_eq!(why("events: Ir\n1 2 3\n"), "2 costs for 1 events");
        assert_eq!(
            why("events: Ir\n1 x\n"),
            "cost \"x\": invalid digit found in string"
        );
        assert_eq!(
            why("events: Ir\ntotals: 5\n1 2\n"),
            "the dump's totals say Ir 5, its cost lines sum to 2"
        );
    }
}
