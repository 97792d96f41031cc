//! Statistics of a timing record from its raw trials (reference-harness.md §2.6), with the
//! float semantics of the reference's Python so recomputed values match bit for bit:
//! `sum()` of floats is CPython ≥ 3.12's compensated (Neumaier) sum, integer sums are exact,
//! and integer/integer division is correctly rounded.

use crate::dataset::schema::{Process, RecordStats, Spread, TimingScope, Trial};
use serde_json::{Map, Value};

/// CPython's `sum()` over floats (3.12+): left to right with a Neumaier compensation term.
/// The reference datasets were produced by Python 3.14, whose means differ from a naive
/// left-to-right sum in the last bit for about a third of the records.
pub fn py_sum(values: impl IntoIterator<Item = f64>) -> f64 {
    let mut sum = 0.0f64;
    let mut comp = 0.0f64;
    for x in values {
        let t = sum + x;
        if sum.abs() >= x.abs() {
            comp += (sum - t) + x;
        } else {
            comp += (x - t) + sum;
        }
        sum = t;
    }
    if comp != 0.0 && comp.is_finite() {
        sum += comp;
    }
    sum
}

/// `num / den` for integers, correctly rounded to the nearest f64 (Python's int true division).
pub fn int_div(num: u128, den: u128) -> f64 {
    const EXACT: u128 = 1 << 53;
    if den == 0 {
        return f64::NAN;
    }
    if num < EXACT && den < EXACT {
        // Both operands are exact doubles, so IEEE division rounds once, correctly.
        return num as f64 / den as f64;
    }
    // Scale so that the integer quotient has 55..=56 significant bits, then round half to even
    // using the remainder as a sticky bit.
    let num_bits = 128 - num.leading_zeros() as i32;
    let den_bits = 128 - den.leading_zeros() as i32;
    let mut shift = 55 - (num_bits - den_bits); // quotient ≈ 2^(num_bits - den_bits ± 1)
    let (mut n, mut d) = (num, den);
    if shift > 0 {
        match n.checked_shl(shift as u32).filter(|v| v >> shift == n) {
            Some(v) => n = v,
            None => return num as f64 / den as f64, // beyond any realistic count
        }
    } else if shift < 0 {
        match d
            .checked_shl((-shift) as u32)
            .filter(|v| v >> (-shift) == d)
        {
            Some(v) => d = v,
            None => return num as f64 / den as f64,
        }
    }
    let mut q = n / d;
    let mut sticky = n % d != 0;
    // Keep exactly 54 bits (53 + one rounding bit), folding dropped bits into `sticky`.
    while q >= 1 << 54 {
        sticky |= q & 1 == 1;
        q >>= 1;
        shift -= 1;
    }
    let round_bit = q & 1 == 1;
    let mut mantissa = q >> 1;
    if round_bit && (sticky || mantissa & 1 == 1) {
        mantissa += 1;
    }
    // value = mantissa * 2^(1 - shift)
    (mantissa as f64) * 2f64.powi(1 - shift)
}

/// Python's `statistics.median`: the middle value, or the mean of the two middle values.
pub fn median(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

/// All statistics of a record from its processes' trials; `None` when no trial exists.
pub fn record_stats(processes: &[Process], input_bytes: u64) -> Option<RecordStats> {
    let trials: Vec<Trial> = processes
        .iter()
        .flat_map(|p| p.trials.iter().cloned())
        .collect();
    if trials.is_empty() {
        return None;
    }
    let n: u64 = trials.iter().map(|t| t.measurements).sum();
    let total_s = py_sum(trials.iter().map(|t| t.seconds));
    let per_trial_s: Vec<f64> = trials
        .iter()
        .map(|t| t.seconds / t.measurements as f64)
        .collect();
    let all_cycles = trials.iter().all(|t| t.cycles > 0);
    let cycles_sum: u128 = trials.iter().map(|t| t.cycles as u128).sum();
    let per_trial_c: Vec<f64> = trials
        .iter()
        .map(|t| int_div(t.cycles as u128, t.measurements as u128))
        .collect();
    let first = processes.iter().find(|p| !p.meta.is_empty());
    let meta = first.map(|p| &p.meta);
    let max_meta = |key: &str| {
        processes
            .iter()
            .filter_map(|p| meta_u64(&p.meta, key))
            .max()
            .unwrap_or(0)
    };
    Some(RecordStats {
        trials,
        measurements: n,
        guide_100_measurements_met: n >= 100,
        mean_seconds: total_s / n as f64,
        median_trial_seconds: median(&per_trial_s).unwrap_or(f64::NAN),
        min_trial_seconds: per_trial_s.iter().copied().fold(f64::INFINITY, f64::min),
        max_trial_seconds: per_trial_s
            .iter()
            .copied()
            .fold(f64::NEG_INFINITY, f64::max),
        mean_cycles: all_cycles.then(|| int_div(cycles_sum, n as u128)),
        median_trial_cycles: if all_cycles {
            median(&per_trial_c)
        } else {
            None
        },
        operations_per_second: n as f64 / total_s,
        throughput_mb_per_second: (input_bytes > 0)
            .then(|| (input_bytes as u128 * n as u128) as f64 / total_s / 1e6),
        sizes: meta.map(sizes_of).unwrap_or_default(),
        kex: meta.map(kex_of).unwrap_or_default(),
        build_flags: meta
            .and_then(|m| m.get("build_flags"))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
        baseline_rss_bytes: max_meta("baseline_rss_bytes"),
        peak_rss_bytes: max_meta("peak_rss_bytes"),
        timing_scope: TimingScope::from(
            meta.and_then(|m| m.get("timing_scope"))
                .and_then(Value::as_str)
                .unwrap_or_default(),
        ),
    })
}

fn meta_u64(meta: &Map<String, Value>, key: &str) -> Option<u64> {
    match meta.get(key)? {
        Value::String(s) => s.parse().ok(),
        Value::Number(n) => n.as_u64(),
        _ => None,
    }
}

fn digits(v: &Value) -> Option<u64> {
    match v {
        Value::String(s) if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) => {
            s.parse().ok()
        }
        Value::Number(n) => n.as_u64(),
        _ => None,
    }
}

/// Every `*_bytes` META key with an all-digit value except the RSS figures, in META order.
fn sizes_of(meta: &Map<String, Value>) -> Map<String, Value> {
    meta.iter()
        .filter(|(k, _)| {
            k.ends_with("_bytes") && *k != "baseline_rss_bytes" && *k != "peak_rss_bytes"
        })
        .filter_map(|(k, v)| digits(v).map(|d| (k.clone(), Value::from(d))))
        .collect()
}

fn kex_of(meta: &Map<String, Value>) -> Map<String, Value> {
    meta.iter()
        .filter(|(k, _)| k.starts_with("kex_"))
        .filter_map(|(k, v)| digits(v).map(|d| (k.clone(), Value::from(d))))
        .collect()
}

/// Two-sided 95 % Student t quantiles for 1..=30 degrees of freedom.
const T975: [f64; 30] = [
    12.7062, 4.3027, 3.1824, 2.7764, 2.5706, 2.4469, 2.3646, 2.3060, 2.2622, 2.2281, 2.2010,
    2.1788, 2.1604, 2.1448, 2.1314, 2.1199, 2.1098, 2.1009, 2.0930, 2.0860, 2.0796, 2.0739, 2.0687,
    2.0639, 2.0595, 2.0555, 2.0518, 2.0484, 2.0452, 2.0423,
];
/// The normal quantile, used beyond 30 degrees of freedom.
const Z975: f64 = 1.959964;

pub fn t_quantile_975(df: usize) -> f64 {
    match df {
        0 => f64::NAN,
        1..=30 => T975[df - 1],
        _ => Z975,
    }
}

/// Spread of per-trial values: range, sample coefficient of variation and the 95 % confidence
/// interval of the mean. With a single value there is no spread: CV 0 and a zero-width
/// interval at that value.
pub fn spread(per_trial_values: &[f64]) -> Spread {
    let n = per_trial_values.len();
    if n == 0 {
        return Spread::default();
    }
    let min = per_trial_values
        .iter()
        .copied()
        .fold(f64::INFINITY, f64::min);
    let max = per_trial_values
        .iter()
        .copied()
        .fold(f64::NEG_INFINITY, f64::max);
    let mean = py_sum(per_trial_values.iter().copied()) / n as f64;
    if n == 1 {
        return Spread {
            min,
            max,
            cv: 0.0,
            ci95_low: mean,
            ci95_high: mean,
        };
    }
    let ss = py_sum(per_trial_values.iter().map(|v| (v - mean) * (v - mean)));
    let sd = (ss / (n - 1) as f64).sqrt();
    let half = t_quantile_975(n - 1) * sd / (n as f64).sqrt();
    Spread {
        min,
        max,
        cv: if mean != 0.0 { sd / mean } else { 0.0 },
        ci95_low: mean - half,
        ci95_high: mean + half,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn process(trials: &[(u64, f64, u64)]) -> Process {
        Process {
            status: crate::dataset::schema::ProcessStatus::Complete,
            trials: trials
                .iter()
                .map(|&(measurements, seconds, cycles)| Trial {
                    measurements,
                    seconds,
                    cycles,
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }
    }

    #[test]
    fn py_sum_is_compensated() {
        // Naive summation loses the 1.0 entirely; Python 3.12+ keeps it.
        assert_eq!(py_sum([1e100, 1.0, -1e100]), 1.0);
        assert_eq!(py_sum([0.1, 0.2, 0.3]), 0.6);
        assert_eq!(py_sum([]), 0.0);
    }

    #[test]
    fn int_div_is_correctly_rounded() {
        assert_eq!(int_div(999533429375, 15), 66635561958.333336);
        assert_eq!(int_div(1, 3), 1.0 / 3.0);
        // Beyond 2^53 (values from Python's `n / d`).
        assert_eq!(int_div((1u128 << 60) + 3, 7), 1.647030720866924e+17);
        assert_eq!(int_div(u64::MAX as u128, 3), 6.148914691236517e+18);
        assert_eq!(int_div(10u128.pow(22) + 1, 3), 3.3333333333333335e+21);
        assert_eq!(int_div((1u128 << 70) + 12345, 1000001), 1180590440126971.2);
        assert_eq!(int_div((1u128 << 80) * 3, 3), 2f64.powi(80));
        assert_eq!(int_div(10, 4), 2.5);
        assert!(int_div(1, 0).is_nan());
        // 2^54 + 2 lies halfway between two doubles: ties go to the even mantissa.
        assert_eq!(int_div((1 << 54) + 2, 1), (1u64 << 54) as f64);
        assert_eq!(int_div((1 << 54) + 6, 1), ((1u64 << 54) + 8) as f64);
        assert_eq!(int_div((1 << 54) + 3, 1), ((1u64 << 54) + 4) as f64);
    }

    #[test]
    fn median_even_is_mean_of_middle() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&[]), None);
    }

    #[test]
    fn stats_pool_trials_over_processes() {
        let mut p1 = process(&[(10, 1.0, 1000), (10, 2.0, 3000)]);
        p1.meta.insert("pk_bytes".into(), "610".into());
        p1.meta.insert("mode".into(), "fixed_iterations".into());
        p1.meta.insert("peak_rss_bytes".into(), "4096".into());
        p1.meta.insert("input_bytes".into(), "32".into());
        p1.meta.insert("kex_passes".into(), "4".into());
        p1.meta.insert("timing_scope".into(), "loop".into());
        let mut p2 = process(&[(20, 1.0, 2000)]);
        p2.meta.insert("peak_rss_bytes".into(), "8192".into());
        let s = record_stats(&[p1, p2], 32).unwrap();
        assert_eq!(s.measurements, 40);
        assert!(!s.guide_100_measurements_met);
        assert_eq!(s.mean_seconds, 4.0 / 40.0);
        assert_eq!(s.median_trial_seconds, 0.1);
        assert_eq!(s.min_trial_seconds, 0.05);
        assert_eq!(s.max_trial_seconds, 0.2);
        assert_eq!(s.mean_cycles, Some(150.0));
        assert_eq!(s.median_trial_cycles, Some(100.0));
        assert_eq!(s.operations_per_second, 10.0);
        assert_eq!(s.throughput_mb_per_second, Some(32.0 * 40.0 / 4.0 / 1e6));
        assert_eq!(s.peak_rss_bytes, 8192);
        assert_eq!(s.baseline_rss_bytes, 0);
        assert_eq!(s.timing_scope, TimingScope::Loop);
        let sizes: Vec<&String> = s.sizes.keys().collect();
        assert_eq!(sizes, ["pk_bytes", "input_bytes"]);
        assert_eq!(s.kex["kex_passes"], 4);
        assert_eq!(s.trials.len(), 3);
    }

    #[test]
    fn zero_cycles_mean_no_cycle_figures() {
        let s = record_stats(&[process(&[(5, 1.0, 0), (5, 1.0, 100)])], 0).unwrap();
        assert_eq!(s.mean_cycles, None);
        assert_eq!(s.median_trial_cycles, None);
        assert_eq!(s.throughput_mb_per_second, None);
        assert!(record_stats(&[process(&[])], 0).is_none());
    }

    #[test]
    fn spread_of_trials() {
        let s = spread(&[1.0, 2.0, 3.0]);
        assert_eq!((s.min, s.max), (1.0, 3.0));
        assert!((s.cv - 0.5).abs() < 1e-15);
        let half = 4.3027 * 1.0 / 3f64.sqrt();
        assert!((s.ci95_low - (2.0 - half)).abs() < 1e-12);
        assert!((s.ci95_high - (2.0 + half)).abs() < 1e-12);
        let one = spread(&[5.0]);
        assert_eq!((one.cv, one.ci95_low, one.ci95_high), (0.0, 5.0, 5.0));
        assert_eq!(t_quantile_975(31), Z975);
        assert_eq!(t_quantile_975(4), 2.7764);
    }
}
