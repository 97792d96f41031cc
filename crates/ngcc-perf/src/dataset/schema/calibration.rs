//! calibrate/<cand>/<label>__<op>.json (run-internal, not published)

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{CounterKind, Observed, ProcessStatus, Trial};

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct Calibration {
    pub status: ProcessStatus,
    #[serde(default)]
    pub error: Option<String>,
    /// Per-call seconds (and counter ticks) of the median warm batch: what planning uses.
    pub t1_s: f64,
    pub t1_ticks: u64,
    /// The fastest warm call: what the record cross-checks hold trials to (a loaded host
    /// stretches a median of ms-long calls, rarely every one of them).
    #[serde(default)]
    pub t1_min_s: f64,
    /// The cold first call (the reference's calibration).
    pub cold_s: f64,
    pub cold_ticks: u64,
    pub warm_calls: u64,
    /// One-off setup (keys, ciphertexts, signatures) done here and saved for trial processes.
    pub prepare_s: f64,
    /// Process overhead of a trial process: start, load library, load setup.
    pub overhead_s: f64,
    pub wall_s: f64,
    pub counter: CounterKind,
    pub counter_overhead_ticks: u64,
    #[serde(default)]
    pub stack_peak_bytes: Option<u64>,
    pub library_sha256: String,
    #[serde(default)]
    pub meta: Map<String, Value>,
    #[serde(default)]
    pub trials: Vec<Trial>,
    #[serde(default)]
    pub stderr: String,
    #[serde(default)]
    pub command: Vec<String>,
    #[serde(default)]
    pub sandbox: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed: Option<Observed>,
    /// Untimed calls between the cold call and the first batch (as a trial warms up).
    #[serde(default)]
    pub warmup_calls: u64,
    /// Every timed warm batch, in order: the evidence `t1_s` was taken from.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub batches: Vec<CalibrationBatch>,
    /// Fixed cost of a trial process measured with dry trials (one call each): process wall
    /// time (the orchestrator's clock) minus the timed window, one value per dry trial.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dry_fixed_s: Vec<f64>,
}

impl Calibration {
    /// The fixed cost a trial process pays besides its calls, for planning: the median dry
    /// trial, or the estimate from the calibration process when it is larger or alone.
    pub fn trial_fixed_s(&self) -> f64 {
        let mut v = self.dry_fixed_s.clone();
        v.sort_by(f64::total_cmp);
        v.get(v.len().saturating_sub(1) / 2)
            .copied()
            .unwrap_or(0.0)
            .max(self.overhead_s)
    }
}

/// One timed batch of a calibration: `calls` back-to-back calls between one pair of clock
/// reads (no clock inside, like a trial loop).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct CalibrationBatch {
    pub calls: u64,
    pub seconds: f64,
    pub ticks: u64,
}
