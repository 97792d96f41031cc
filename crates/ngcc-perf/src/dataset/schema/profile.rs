//! profile/<cand>/<label>__<op>.json

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

use super::{Op, ProcessStatus};

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct Profile {
    pub schema: u32,
    pub candidate: String,
    pub label: String,
    pub operation: Op,
    pub input_bytes: u64,
    pub status: ProcessStatus,
    #[serde(default)]
    pub command: Vec<String>,
    #[serde(default)]
    pub stderr: String,
    #[serde(default)]
    pub meta: Map<String, Value>,
    pub total: Option<ProfileTotal>,
    #[serde(default)]
    pub calls: Vec<ProfileCall>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub share: Option<Map<String, Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hash_share: Option<f64>,
    // --- ngcc-perf additions ---
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ngcc: Option<ProfileExtra>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct ProfileTotal {
    pub operations: u64,
    pub ticks: u64,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct ProfileCall {
    #[serde(rename = "fn")]
    pub func: String,
    pub in_bits: u64,
    pub out_bits: u64,
    pub calls: u64,
    pub ticks: u64,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct ProfileExtra {
    pub relinked_library_sha256: String,
    pub timed_library_sha256: Option<String>,
    /// Measured wrapper cost per call, in ticks.
    pub wrapper_ticks_per_call: f64,
    /// Shares with the wrapper cost subtracted from both numerator and denominator.
    pub share_corrected: BTreeMap<String, f64>,
    pub hash_share_corrected: f64,
    /// Helper families: which `fn` names count as hashing (vs DRNG/RNG).
    pub hash_fns: Vec<String>,
    pub bytes_hashed_per_op: f64,
    /// `fn` names counted as randomness (`drng`, `randombytes`), not in `hash_share`.
    #[serde(default)]
    pub rng_fns: Vec<String>,
    /// The part of `wrapper_ticks_per_call` inside a helper's own recorded ticks.
    #[serde(default)]
    pub wrapper_inside_ticks_per_call: f64,
    /// Symbols linked with `-Wl,--wrap=`.
    #[serde(default)]
    pub wrapped_symbols: Vec<String>,
    /// Helpers also called inside their own object file: `--wrap` cannot see those calls,
    /// which count only as part of an enclosing wrapped call (else as the operation's own).
    #[serde(default)]
    pub unreached_symbols: Vec<String>,
    /// The relinked library's KAT output equals the timed library's (None: no KAT output
    /// to compare).
    #[serde(default)]
    pub relinked_kat_identical: Option<bool>,
    /// Operations preempted by the scheduler (involuntary context switch) and replaced by
    /// another run, and preempted operations kept (budget of ITERS take-backs spent).
    #[serde(default)]
    pub preempted_ops_discarded: u64,
    #[serde(default)]
    pub preempted_ops_kept: u64,
    /// Not run: its calibration was killed at the timeout, and the profile would only hang
    /// again. Such a profile is redone once its calibration no longer times out.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub skipped_hung_calibration: bool,
}
