//! The calibration rule: after the cold call and the trial's warm-up, time batches of
//! back-to-back calls (no clock inside, like a trial loop), doubling the batch until it lasts
//! [`BATCH_MIN_S`], and take the per-call time of the median long batch. Single calls of a
//! µs operation measured mostly the clock and counter reads around them and a handful of
//! them was noise; a batch of ≥ 2 ms times what a trial times.

use crate::dataset::schema::CalibrationBatch;

/// A batch this long makes the two clock reads (≈ 50 ns) and the counter start/stop
/// negligible (< 0.01 %) while many batches still fit in the calibration time.
pub const BATCH_MIN_S: f64 = 0.002;
/// Timed warm work of a calibration, once at least [`MIN_LONG_BATCHES`] long batches exist.
pub const CALIBRATION_S: f64 = 0.25;
/// Share of the operation's budget a calibration may spend at most.
pub const CALIBRATION_BUDGET_SHARE: f64 = 0.1;
/// Long batches needed before the calibration may stop (the median of 3 rejects one outlier).
pub const MIN_LONG_BATCHES: usize = 3;
/// Long batches after which the calibration stops even before its time is up.
pub const MAX_LONG_BATCHES: usize = 200;
/// Untimed warm-up calls before the first batch for operations faster than this (the same
/// as a trial's 3 warm-ups, reference §1.11).
pub const WARMUP_BELOW_S: f64 = 0.05;
pub const WARMUP_CALLS: u64 = 3;

/// Calls of the next batch after one of `calls` calls that took `seconds`: doubled (at most
/// ×16 at once, enough to reach the minimum) while short, else unchanged.
pub fn next_batch_calls(calls: u64, seconds: f64) -> u64 {
    if seconds >= BATCH_MIN_S {
        return calls;
    }
    let want = if seconds > 0.0 {
        (calls as f64 * BATCH_MIN_S * 1.25 / seconds).ceil() as u64
    } else {
        calls.saturating_mul(16)
    };
    want.clamp(calls.saturating_mul(2), calls.saturating_mul(16))
}

/// Seconds of batches a calibration aims at under an operation budget of `op_budget_s`:
/// [`CALIBRATION_S`], or a tenth of a smaller budget (a short smoke campaign must not spend
/// most of its time planning).
pub fn calibration_s(op_budget_s: f64) -> f64 {
    CALIBRATION_S.min(CALIBRATION_BUDGET_SHARE * op_budget_s.max(0.0))
}

/// True once the batches so far are enough: ≥ [`MIN_LONG_BATCHES`] long ones (at least
/// `min_s` each) after `elapsed_s` ≥ `want_s` of calibrating, or [`MAX_LONG_BATCHES`]
/// long ones.
pub fn enough(batches: &[CalibrationBatch], min_s: f64, elapsed_s: f64, want_s: f64) -> bool {
    let long = batches.iter().filter(|b| is_long(b, min_s)).count();
    long >= MAX_LONG_BATCHES || (long >= MIN_LONG_BATCHES && elapsed_s >= want_s)
}

/// A batch that counts for the estimate: at least `min_s` long ([`BATCH_MIN_S`] for loops;
/// an operation slower than that is timed one call per batch from the start).
fn is_long(b: &CalibrationBatch, min_s: f64) -> bool {
    b.calls > 0 && b.seconds >= min_s
}

/// Per-call seconds and ticks of the median long batch (the lower middle one of an even
/// count), or `None` without one.
pub fn estimate(batches: &[CalibrationBatch], min_s: f64) -> Option<(f64, u64)> {
    let mut long: Vec<(f64, u64)> = batches
        .iter()
        .filter(|b| is_long(b, min_s))
        .map(|b| (b.seconds / b.calls as f64, b.ticks / b.calls))
        .collect();
    if long.is_empty() {
        return None;
    }
    long.sort_by(|a, b| a.0.total_cmp(&b.0));
    Some(long[(long.len() - 1) / 2])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(calls: u64, seconds: f64) -> CalibrationBatch {
        CalibrationBatch {
            calls,
            seconds,
            ticks: (seconds * 1e9).round() as u64,
        }
    }

    #[test]
    fn batches_grow_until_long() {
        // 1 µs calls: 1 → 16 → 256 → 2500 (2.5 ms, long) → unchanged.
        assert_eq!(next_batch_calls(1, 1e-6), 16);
        assert_eq!(next_batch_calls(16, 16e-6), 256);
        assert_eq!(next_batch_calls(256, 256e-6), 2500);
        assert_eq!(next_batch_calls(2500, 2.5e-3), 2500);
        // Close to the minimum: at least doubled.
        assert_eq!(next_batch_calls(100, 1.9e-3), 200);
        assert_eq!(next_batch_calls(4, 0.0), 64);
    }

    #[test]
    fn estimate_is_the_median_long_batch() {
        let v = [
            b(1, 1e-6),
            b(16, 30e-6),
            b(2000, 2.2e-3),
            b(2000, 2.0e-3),
            b(2000, 9.0e-3),
            b(2000, 2.1e-3),
        ];
        let (s, t) = estimate(&v, BATCH_MIN_S).unwrap();
        assert_eq!(s, 2.1e-3 / 2000.0);
        assert_eq!(t, 2_100_000 / 2000);
        // A slow op: single calls count.
        assert_eq!(
            estimate(&[b(1, 0.5), b(1, 0.4), b(1, 0.7)], BATCH_MIN_S)
                .unwrap()
                .0,
            0.5
        );
        assert_eq!(estimate(&[b(4, 1e-6)], BATCH_MIN_S), None);
        assert_eq!(estimate(&[], BATCH_MIN_S), None);
    }

    #[test]
    fn enough_needs_long_batches_and_time() {
        let m = BATCH_MIN_S;
        let w = CALIBRATION_S;
        let short: Vec<_> = (0..500).map(|_| b(8, 1e-4)).collect();
        assert!(!enough(&short, m, 10.0, w), "short batches never count");
        let three: Vec<_> = (0..3).map(|_| b(1000, 0.09)).collect();
        assert!(enough(&three, m, 0.27, w));
        assert!(!enough(&three, m, 0.2, w), "3 long batches but only 0.2 s");
        assert!(
            enough(&three, m, 0.2, 0.1),
            "a smaller budget's calibration time"
        );
        let many: Vec<_> = (0..200).map(|_| b(1000, 0.0021)).collect();
        assert!(enough(&many, m, 0.1, w));
        assert!(!enough(&many[..199], m, 0.1, w));
        let two_slow = [b(1, 2.0), b(1, 2.0)];
        assert!(
            !enough(&two_slow, m, 4.0, w),
            "at least 3 calls of a slow op"
        );
        // KEX steps: single steps all count (min 0).
        let steps: Vec<_> = (0..3).map(|_| b(1, 1e-6)).collect();
        assert!(enough(&steps, 0.0, 0.3, w));
        assert_eq!(estimate(&steps, 0.0).unwrap().0, 1e-6);
    }

    #[test]
    fn calibration_time_is_capped_by_the_budget() {
        assert_eq!(calibration_s(900.0), CALIBRATION_S);
        assert_eq!(calibration_s(2.5), CALIBRATION_S);
        assert_eq!(calibration_s(0.5), 0.05);
        assert_eq!(calibration_s(-1.0), 0.0);
    }
}
