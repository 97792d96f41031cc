//! Pure rules over measured trials: the fixed clock of a run and the disturbance test
//! (reference §1.5 and §1.12).

use crate::dataset::schema::{HostEnv, TimingScope, Trial};

/// Trials shorter than this are too short to judge (one timer tick, one interrupt).
const MIN_JUDGED_TRIAL_S: f64 = 0.01;
/// A busy core delivers ≥ 95 % of its fixed clock as user cycles per wall second.
const MIN_CLOCK_FRACTION: f64 = 0.95;

/// The clock a run was fixed at, in Hz: `cpufreq_max_khz`·1000 when set and non-zero, else
/// the probed `core_clock_hz`, else 0 (unknown). Accepts the reference's strings and ints.
pub fn fixed_clock(env: &HostEnv) -> f64 {
    let finite = |x: &f64| x.is_finite();
    let max_khz = env.cpufreq_max_khz.number().filter(finite).unwrap_or(0.0);
    if max_khz != 0.0 {
        return max_khz * 1000.0;
    }
    env.core_clock_hz.number().filter(finite).unwrap_or(0.0)
}

/// True when a run lost CPU time (preempted, throttled): some trial longer than 10 ms ran at
/// fewer than 95 % of `max_hz` user cycles per wall second. Never true when the clock is
/// unknown (`max_hz` ≤ 0), for per-call KEX steps (they time counter syscalls into the wall
/// clock but not into user cycles), or for trials without cycles.
pub fn is_disturbed(trials: &[Trial], timing_scope: &TimingScope, max_hz: f64) -> bool {
    if max_hz <= 0.0 || *timing_scope == TimingScope::PerCallStep {
        return false;
    }
    trials.iter().any(|t| {
        t.cycles > 0
            && t.seconds > MIN_JUDGED_TRIAL_S
            && (t.cycles as f64 / t.seconds) < MIN_CLOCK_FRACTION * max_hz
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn env(v: Value) -> HostEnv {
        serde_json::from_value(v).unwrap()
    }

    fn trial(seconds: f64, cycles: u64) -> Trial {
        Trial {
            measurements: 100,
            seconds,
            cycles,
            ..Trial::default()
        }
    }

    #[test]
    fn fixed_clock_prefers_cpufreq_max() {
        let e = env(json!({"cpufreq_max_khz": "2707200", "core_clock_hz": 2695077195u64}));
        assert_eq!(fixed_clock(&e), 2_707_200_000.0);
        let e = env(json!({"cpufreq_max_khz": 2100000, "core_clock_hz": null}));
        assert_eq!(fixed_clock(&e), 2_100_000_000.0);
    }

    #[test]
    fn fixed_clock_falls_back_to_the_probe_then_zero() {
        let e = env(json!({"cpufreq_max_khz": null, "core_clock_hz": 3400000000u64}));
        assert_eq!(fixed_clock(&e), 3.4e9);
        let e = env(json!({"cpufreq_max_khz": "0", "core_clock_hz": 3400000000u64}));
        assert_eq!(fixed_clock(&e), 3.4e9);
        let e = env(json!({"cpufreq_max_khz": null, "core_clock_hz": null}));
        assert_eq!(fixed_clock(&e), 0.0);
        assert_eq!(fixed_clock(&HostEnv::default()), 0.0);
        let e = env(json!({"cpufreq_max_khz": "n/a", "core_clock_hz": true}));
        assert_eq!(fixed_clock(&e), 0.0);
    }

    #[test]
    fn fixed_clock_of_the_reference_environment() {
        // arm_1 record environment (kem-38): scmi pinned at 2.7072 GHz.
        let e = env(
            json!({"cpufreq_min_khz": "2707200", "cpufreq_max_khz": "2707200",
                           "core_clock_hz": 2695077195u64, "core_clock_mhz": 2700}),
        );
        assert_eq!(fixed_clock(&e), 2.7072e9);
    }

    #[test]
    fn full_speed_trials_are_not_disturbed() {
        // UVW-KEM-128 enc on arm_1: 1659422517 cycles in 0.616084166 s = 2.6935 GHz.
        let trials = [
            trial(0.616084166, 1659422517),
            trial(0.615274531, 1657845707),
        ];
        assert!(!is_disturbed(&trials, &TimingScope::Loop, 2.7072e9));
    }

    #[test]
    fn a_slow_trial_is_disturbed() {
        let trials = [trial(0.5, 1_350_000_000), trial(0.5, 1_200_000_000)];
        assert!(is_disturbed(&trials, &TimingScope::Loop, 2.7e9));
        // 95 % exactly is still fine; just below is not.
        assert!(!is_disturbed(
            &[trial(1.0, 2_565_000_000)],
            &TimingScope::Loop,
            2.7e9
        ));
        assert!(is_disturbed(
            &[trial(1.0, 2_564_999_000)],
            &TimingScope::Loop,
            2.7e9
        ));
    }

    #[test]
    fn cases_the_rule_does_not_judge() {
        let slow = [trial(0.5, 1_000_000)];
        assert!(
            !is_disturbed(&slow, &TimingScope::Loop, 0.0),
            "unknown clock"
        );
        assert!(
            !is_disturbed(&slow, &TimingScope::PerCallStep, 2.7e9),
            "KEX step scope"
        );
        assert!(
            !is_disturbed(&[trial(0.01, 1000)], &TimingScope::Loop, 2.7e9),
            "≤ 10 ms"
        );
        assert!(
            !is_disturbed(&[trial(0.5, 0)], &TimingScope::Loop, 2.7e9),
            "no cycles"
        );
        assert!(!is_disturbed(&[], &TimingScope::Loop, 2.7e9));
    }
}
