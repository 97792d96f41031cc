//! Shares from a call table (reference-harness.md §5.4–§5.5), raw and with the wrappers'
//! own cost taken out. Float semantics follow the validator (`dataset::validate`): per-`fn`
//! tick sums are exact integers, a share is a correctly rounded integer division, and
//! `hash_share` is a Python-style sum in order of first appearance.

use crate::dataset::schema::ProfileCall;
use crate::measure::stats::{int_div, py_sum};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// What the wrappers cost per outermost wrapped call, in ticks.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Overhead {
    /// Extra ticks the whole operation pays per call (the wrapper path around the call).
    pub per_call: f64,
    /// The part of `per_call` that falls inside the helper's own recorded ticks.
    pub inside: f64,
}

/// Σ ticks and Σ calls per `fn`, in order of first appearance.
pub fn per_fn(calls: &[ProfileCall]) -> Vec<(String, u64, u64)> {
    let mut out: Vec<(String, u64, u64)> = Vec::new();
    for c in calls {
        match out.iter_mut().find(|(f, _, _)| *f == c.func) {
            Some((_, t, n)) => {
                *t += c.ticks;
                *n += c.calls;
            }
            None => out.push((c.func.clone(), c.ticks, c.calls)),
        }
    }
    out
}

/// `share[fn]` = Σ ticks(fn) / total ticks; None when nothing was measured.
pub fn shares(calls: &[ProfileCall], total_ticks: u64) -> Option<Map<String, Value>> {
    if total_ticks == 0 {
        return None;
    }
    let mut m = Map::new();
    for (f, t, _) in per_fn(calls) {
        m.insert(f, Value::from(int_div(t as u128, total_ticks as u128)));
    }
    Some(m)
}

/// Σ of the shares of the hash functions, in the share map's order.
pub fn hash_share(share: &Map<String, Value>, hash_fns: &[String]) -> f64 {
    py_sum(
        share
            .iter()
            .filter(|(f, _)| hash_fns.iter().any(|h| h == *f))
            .filter_map(|(_, v)| v.as_f64()),
    )
}

/// Shares with the wrapper cost removed: each helper loses `calls × inside` ticks, the
/// operation loses `Σ calls × per_call` (every recorded call went through the full wrapper
/// path). Calls nested inside another wrapped call are not in the table; they took the
/// cheap disabled path and are not corrected for.
pub fn corrected(
    calls: &[ProfileCall],
    total_ticks: u64,
    overhead: Overhead,
    hash_fns: &[String],
) -> (BTreeMap<String, f64>, f64) {
    let fns = per_fn(calls);
    let n_calls: u64 = fns.iter().map(|(_, _, n)| n).sum();
    let total = (total_ticks as f64 - n_calls as f64 * overhead.per_call).max(1.0);
    let mut share = BTreeMap::new();
    let mut ordered = Vec::new();
    for (f, t, n) in &fns {
        let s = (*t as f64 - *n as f64 * overhead.inside).max(0.0) / total;
        share.insert(f.clone(), s);
        ordered.push((f.clone(), s));
    }
    let hash = py_sum(
        ordered
            .iter()
            .filter(|(f, _)| hash_fns.contains(f))
            .map(|(_, s)| *s),
    );
    (share, hash)
}

/// Bytes fed into hash functions per operation (Σ in_bits / 8 over hash calls).
pub fn bytes_hashed_per_op(calls: &[ProfileCall], hash_fns: &[String], operations: u64) -> f64 {
    if operations == 0 {
        return 0.0;
    }
    let bits: u128 = calls
        .iter()
        .filter(|c| hash_fns.contains(&c.func))
        .map(|c| c.in_bits as u128 * c.calls as u128)
        .sum();
    int_div(bits, 8 * operations as u128)
}

/// Calls per operation of each `fn`, summed over its shapes.
pub fn calls_per_op(calls: &[ProfileCall], operations: u64) -> Vec<(String, f64)> {
    per_fn(calls)
        .into_iter()
        .map(|(f, _, n)| (f, int_div(n as u128, operations.max(1) as u128)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(f: &str, in_bits: u64, out_bits: u64, calls: u64, ticks: u64) -> ProfileCall {
        ProfileCall {
            func: f.into(),
            in_bits,
            out_bits,
            calls,
            ticks,
        }
    }

    fn table() -> Vec<ProfileCall> {
        vec![
            call("pseudoXOF", 280, 9408, 1000, 1_440_000),
            call("drng", 0, 256, 1000, 30_000),
            call("sm3hash", 256, 256, 500, 100_000),
            call("pseudoXOF", 264, 256, 2000, 60_000),
        ]
    }

    #[test]
    fn shares_and_hash_share() {
        let calls = table();
        let s = shares(&calls, 2_400_000).unwrap();
        let keys: Vec<&String> = s.keys().collect();
        assert_eq!(keys, ["pseudoXOF", "drng", "sm3hash"]);
        assert_eq!(s["pseudoXOF"].as_f64(), Some(1_500_000.0 / 2_400_000.0));
        assert_eq!(s["drng"].as_f64(), Some(0.0125));
        let hash_fns = vec!["pseudoXOF".to_string(), "sm3hash".to_string()];
        let hs = hash_share(&s, &hash_fns);
        assert!((hs - 1_600_000.0 / 2_400_000.0).abs() < 1e-15);
        assert!(shares(&calls, 0).is_none());
        // An fn not in hash_fns never counts, whatever its name.
        assert_eq!(hash_share(&s, &[]), 0.0);
    }

    #[test]
    fn corrected_shares_remove_the_wrapper_cost() {
        let calls = vec![
            call("shake256", 256, 256, 10, 1000),
            call("randombytes", 0, 256, 2, 300),
        ];
        let hash_fns = vec!["shake256".to_string()];
        let ov = Overhead {
            per_call: 30.0,
            inside: 20.0,
        };
        let (share, hash) = corrected(&calls, 10_000, ov, &hash_fns);
        // total 10000 - 12·30 = 9640; shake256 1000 - 10·20 = 800; randombytes 300 - 40 = 260.
        assert_eq!(share["shake256"], 800.0 / 9640.0);
        assert_eq!(share["randombytes"], 260.0 / 9640.0);
        assert_eq!(hash, 800.0 / 9640.0);
        // Raw share is larger: the correction lowers a helper-heavy share.
        assert!(hash < 1000.0 / 10_000.0);
        // No overhead: corrected == raw.
        let (s0, h0) = corrected(&calls, 10_000, Overhead::default(), &hash_fns);
        assert_eq!(s0["shake256"], 0.1);
        assert_eq!(h0, 0.1);
        // Overhead larger than a helper's ticks clamps at 0 instead of going negative.
        let big = Overhead {
            per_call: 1.0,
            inside: 1e6,
        };
        assert_eq!(corrected(&calls, 10_000, big, &hash_fns).1, 0.0);
    }

    #[test]
    fn bytes_and_calls_per_op() {
        let calls = table();
        let hash_fns = vec!["pseudoXOF".to_string(), "sm3hash".to_string()];
        // (280·1000 + 256·500 + 264·2000) bits / 8 / 1000 ops
        let want = (280.0 * 1000.0 + 256.0 * 500.0 + 264.0 * 2000.0) / 8.0 / 1000.0;
        assert_eq!(bytes_hashed_per_op(&calls, &hash_fns, 1000), want);
        assert_eq!(bytes_hashed_per_op(&calls, &hash_fns, 0), 0.0);
        let cpo = calls_per_op(&calls, 1000);
        assert_eq!(
            cpo,
            [
                ("pseudoXOF".to_string(), 3.0),
                ("drng".to_string(), 1.0),
                ("sm3hash".to_string(), 0.5)
            ]
        );
    }
}
