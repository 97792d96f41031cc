//! One callgrind dump (the count phase's per-call file) into a `CallCount`: the sum of every
//! function's own cost is the call's events; a call edge from a function that is not a
//! helper into one that is adds its inclusive cost (callgrind's cost line after `calls=`) to
//! the helpers' instructions, so a helper called by a helper counts once. Pure: `validate`
//! runs it again on the published text.
//!
//! A counted call is also checked against how it was collected, whatever the library did to
//! the collection (client requests in its bytes or made at run time, or calling the entry
//! point itself, where callgrind's toggle switches collection off): every instruction of
//! the dump lies inside the calls into the operation's entry points, those calls come from
//! outside the library, and the call counted at least one instruction (the entry point's
//! own code always runs).

use crate::dataset::count::{CallCount, DUMP_PREFIX, split_dumps};
use std::collections::{BTreeSet, HashMap};

/// A parsed dump: its trigger (the `desc: Trigger:` text), the events and the call.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Dump {
    pub trigger: String,
    pub count: CallCount,
    /// The dump's own `totals:` line, by event (checked against the sum of the costs).
    pub totals: Vec<(String, u64)>,
    /// Instructions inclusive of the calls into the entry points from outside their object.
    pub entry_ir: u64,
    /// An entry point called from inside its own object (the library), if any.
    pub reentered: Option<String>,
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
    #[error(
        "the call counted no instructions: callgrind's instrumentation or collection was off \
         during it"
    )]
    NothingCounted,
    #[error(
        "{total} instructions counted, {inside} of them inside the calls into the entry point: \
         collection was on outside the operation"
    )]
    CollectedOutside { inside: u64, total: u64 },
    #[error(
        "the calls into the entry point hold {inside} instructions, the dump's functions \
         {total}: collection or instrumentation was switched during the operation"
    )]
    CountsDisagree { inside: u64, total: u64 },
    #[error(
        "the library called the entry point {entry} from inside itself (callgrind's toggle \
         switches collection off there)"
    )]
    Reentered { entry: String },
    #[error("dump {index} was triggered by {trigger:?}, not {want:?}")]
    Trigger {
        index: usize,
        trigger: String,
        want: String,
    },
}

/// Parses one dump; `is_helper` says which function names are helpers, `is_entry` which are
/// the operation's entry points.
pub fn parse(
    text: &str,
    is_helper: &dyn Fn(&str) -> bool,
    is_entry: &dyn Fn(&str) -> bool,
) -> Result<Dump, DumpError> {
    let mut fn_names = HashMap::new();
    // Objects have their own name compression (`ob=`, `cob=`).
    let mut ob_names = HashMap::new();
    let mut current_ob = String::new();
    let mut callee_ob: Option<String> = None;
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
        if let Some(v) = line.strip_prefix("ob=") {
            current_ob = name(v, &mut ob_names);
            continue;
        }
        if let Some(v) = line.strip_prefix("cob=") {
            callee_ob = Some(name(v, &mut ob_names));
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
            // Without `cob=` the callee lies in the caller's object.
            let to_ob = callee_ob.take().unwrap_or_else(|| current_ob.clone());
            let ir = costs.first().copied().unwrap_or(0);
            if is_entry(base(&to)) {
                if to_ob == current_ob {
                    dump.reentered.get_or_insert_with(|| base(&to).to_string());
                } else {
                    dump.entry_ir += ir;
                }
            }
            if is_helper(base(&to)) && !is_helper(base(&current)) {
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

/// Whether a dump is a counted call and nothing else: something counted, all of it inside
/// calls into the entry points made from outside the library.
fn collected_in_entry(d: &Dump) -> Result<(), DumpError> {
    if let Some(entry) = &d.reentered {
        return Err(DumpError::Reentered {
            entry: entry.clone(),
        });
    }
    if d.count.ir == 0 {
        return Err(DumpError::NothingCounted);
    }
    let (inside, total) = (d.entry_ir, d.count.ir);
    if inside < total {
        return Err(DumpError::CollectedOutside { inside, total });
    }
    if inside > total {
        return Err(DumpError::CountsDisagree { inside, total });
    }
    Ok(())
}

/// Parses every dump of a record's raw text into its calls, checking each dump is the
/// counted call it should be, collected inside `entry_fns` alone. `validate` runs this again.
pub fn calls_from_raw(
    raw: &str,
    helper_fns: &[String],
    entry_fns: &[String],
) -> Result<Vec<CallCount>, DumpError> {
    let set: BTreeSet<&str> = helper_fns.iter().map(String::as_str).collect();
    let is_helper = |n: &str| set.contains(n);
    let is_entry = |n: &str| entry_fns.iter().any(|e| e == n);
    let mut calls = Vec::new();
    for (i, d) in split_dumps(raw).into_iter().enumerate() {
        let in_dump = |e| DumpError::InDump {
            index: i + 1,
            error: Box::new(e),
        };
        let parsed = parse(d, &is_helper, &is_entry).map_err(in_dump)?;
        let want = format!("Client Request: {DUMP_PREFIX} {}", i + 1);
        if parsed.trigger != want {
            return Err(DumpError::Trigger {
                index: i + 1,
                trigger: parsed.trigger,
                want,
            });
        }
        collected_in_entry(&parsed).map_err(in_dump)?;
        calls.push(parsed.count);
    }
    Ok(calls)
}

#[cfg(test)]
mod tests {
    use super::*;

    const DUMP: &str = "# callgrind format\nversion: 1\ndesc: Trigger: Client Request: ngcc-count-call 1\n\
positions: line\nevents: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw\n\nob=(2) /job/ngcc-perf\nfl=(1) ???\n\
fn=(9) harness\ncob=(1) /job/lib.so\ncfi=(1)\ncfn=(1) ngcc_kem_enc\ncalls=1 0\n0 160 17 16 1\n\nob=(1)\n\
fn=(1)\n0 10 2 1\ncfn=(2) sha3_256\ncalls=1 0\n0 50 5 5\ncfn=(3) indcpa\ncalls=1 0\n0 100 10 10 1\n\n\
fn=(3)\n0 60 6 6 1\ncfn=(2)\ncalls=2 0\n0 40 4 4\n\nfn=(2)\n0 90 9 9\n\ntotals: 160 17 16 1 0 0 0 0 0\n";

    #[test]
    fn self_costs_sum_and_helpers_are_inclusive() {
        let helper = |n: &str| n == "sha3_256";
        let d = parse(DUMP, &helper, &entry).unwrap();
        assert_eq!(d.trigger, "Client Request: ngcc-count-call 1");
        assert_eq!(d.count.ir, 160);
        assert_eq!(d.count.dr, 17);
        assert_eq!(d.count.i1mr, 1);
        assert_eq!(d.count.helper_ir, 90);
        assert_eq!(d.count.helpers["sha3_256"], 90);
        assert_eq!((d.entry_ir, d.reentered.as_deref()), (160, None));
    }

    fn entry(n: &str) -> bool {
        n == "ngcc_kem_enc"
    }

    fn counted(text: &str) -> Result<Vec<CallCount>, DumpError> {
        calls_from_raw(
            text,
            &["sha3_256".to_string()],
            &["ngcc_kem_enc".to_string()],
        )
    }

    /// What the library did to callgrind's collection shows in the dump, whatever way it
    /// did it: nothing counted, cost outside the entry point, the entry point re-entered.
    #[test]
    fn a_call_counted_outside_its_entry_point_is_an_error() {
        let why = |text: &str| counted(text).unwrap_err().to_string();
        assert_eq!(counted(DUMP).unwrap()[0].ir, 160);
        // Instrumentation stopped: an empty dump.
        let empty = "# callgrind format\ndesc: Trigger: Client Request: ngcc-count-call 1\n\
                     events: Ir Dr\nsummary: 0\ntotals: 0\n";
        assert_eq!(
            why(empty),
            "dump 1: the call counted no instructions: callgrind's instrumentation or \
             collection was off during it"
        );
        // Collection left on after the call: the harness's own code in the dump.
        let leaked = DUMP.replace(
            "\n\nfn=(2)\n0 90 9 9\n",
            "\n\nfn=(2)\n0 90 9 9\n\nob=(2)\nfn=(7) after\n0 5\n",
        );
        let leaked = leaked.replace("totals: 160 17", "totals: 165 17");
        assert_eq!(
            why(&leaked),
            "dump 1: 165 instructions counted, 160 of them inside the calls into the entry \
             point: collection was on outside the operation"
        );
        // Instrumentation paused inside the call: the call edge holds more than the functions.
        let paused = DUMP.replace("calls=1 0\n0 160 17 16 1\n", "calls=1 0\n0 172 17 16 1\n");
        assert_eq!(
            why(&paused),
            "dump 1: the calls into the entry point hold 172 instructions, the dump's functions \
             160: collection or instrumentation was switched during the operation"
        );
        // The library calls the entry point itself (its nested call goes uncounted).
        let nested = DUMP.replace(
            "\n\nfn=(2)\n0 90 9 9\n",
            "\n\nfn=(2)\n0 90 9 9\ncfn=(1)\ncalls=1 0\n0 0\n",
        );
        assert_eq!(
            why(&nested),
            "dump 1: the library called the entry point ngcc_kem_enc from inside itself \
             (callgrind's toggle switches collection off there)"
        );
    }

    #[test]
    fn totals_that_disagree_are_an_error() {
        let bad = DUMP.replace("totals: 160", "totals: 161");
        assert!(parse(&bad, &|_| false, &entry).is_err());
    }

    /// The texts a count record and `validate` show, as they were when errors were strings.
    #[test]
    fn a_broken_dump_says_why_in_the_same_words() {
        let why = |text: &str| parse(text, &|_| false, &entry).unwrap_err().to_string();
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
