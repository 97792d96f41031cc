//! records/<cand>/<label>__<op>.json
//!
//! Also `ngcc.checks.last_outputs`: the verification of a trial process's last outputs.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{
    Containment, CounterKind, FlagSetName, HelperFile, HostEnv, KatStatus, Observed, Op,
    ProcessStatus, RecordStatus, TimingScope,
};

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct Plan {
    pub iterations_per_trial: u64,
    pub warmups: u64,
    pub trials: u64,
    pub separate_processes: bool,
    pub estimated_s: f64,
    pub timeout_per_process_s: f64,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct Trial {
    pub measurements: u64,
    pub seconds: f64,
    pub cycles: u64,
    // --- ngcc-perf additions ---
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<u64>,
    /// CPU time (user + system) the timing thread spent in this trial (its thread clock).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_seconds: Option<f64>,
    /// KEX steps: wall seconds of the whole trial loop (every iteration runs a full exchange,
    /// `seconds` is the selected step only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loop_seconds: Option<f64>,
}

impl Trial {
    /// Wall seconds the trial loop ran: the timed window, or the whole loop for KEX steps.
    pub fn loop_wall_s(&self) -> f64 {
        self.loop_seconds.unwrap_or(self.seconds)
    }
}

/// META key: failed signing attempts a SIG sign process retried (the reference's name).
pub const META_SIGN_FAILURES_RETRIED: &str = "sign_failures_retried";

impl Process {
    /// A META count (written as a string or a number), if present and readable.
    pub fn meta_count(&self, key: &str) -> Option<u64> {
        match self.meta.get(key)? {
            Value::String(s) => s.parse().ok(),
            Value::Number(n) => n.as_u64(),
            _ => None,
        }
    }
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct Process {
    pub status: ProcessStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    #[serde(default)]
    pub meta: Map<String, Value>,
    #[serde(default)]
    pub trials: Vec<Trial>,
    #[serde(default)]
    pub stderr: String,
    #[serde(default)]
    pub command: Vec<String>,
    #[serde(default)]
    pub wall_s: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub t1_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub setup_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reused_calibration: Option<bool>,
    #[serde(default)]
    pub disturbed_retries: u32,
    // --- ngcc-perf additions ---
    /// What the orchestrator saw of this process from outside (exit, CPU, wall, jail).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed: Option<Observed>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct Record {
    pub schema: u32,
    pub status: RecordStatus,
    pub candidate: String,
    pub label: String,
    pub instance: String,
    pub variant: String,
    pub flags: FlagSetName,
    pub operation: Op,
    pub input_bytes: u64,
    pub plan: Plan,
    pub kat: KatStatus,
    pub kat_not_passed: bool,
    pub disturbed_retries: u32,
    pub library: Option<String>,
    pub library_sha256: Option<String>,
    pub kat_log: Option<String>,
    pub kat_log_sha256: Option<String>,
    pub started_utc: String,
    pub ended_utc: String,
    pub load_average_start: Vec<f64>,
    pub load_average_end: Vec<f64>,
    pub environment: HostEnv,
    pub processes: Vec<Process>,
    #[serde(flatten)]
    pub stats: Option<RecordStats>,
    // --- ngcc-perf additions ---
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ngcc: Option<RecordExtra>,
}

/// Present only when the record has at least one trial (reference §7.4).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct RecordStats {
    pub trials: Vec<Trial>,
    pub measurements: u64,
    pub guide_100_measurements_met: bool,
    pub mean_seconds: f64,
    pub median_trial_seconds: f64,
    pub min_trial_seconds: f64,
    pub max_trial_seconds: f64,
    pub mean_cycles: Option<f64>,
    pub median_trial_cycles: Option<f64>,
    pub operations_per_second: f64,
    #[serde(rename = "throughput_MB_per_second")]
    pub throughput_mb_per_second: Option<f64>,
    pub sizes: BTreeMapOrdered,
    pub kex: BTreeMapOrdered,
    pub build_flags: String,
    pub baseline_rss_bytes: u64,
    pub peak_rss_bytes: u64,
    pub timing_scope: TimingScope,
}

/// An insertion-ordered `name → integer` map (sizes, kex counts).
pub type BTreeMapOrdered = Map<String, Value>;

/// Our additions to a timing record, kept in one object so reference readers ignore it.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct RecordExtra {
    pub counter: CounterKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counter_hz: Option<f64>,
    pub host_fixed: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub host_problems: Vec<String>,
    pub allow_unfixed_host: bool,
    /// Spread over per-trial means (seconds).
    pub spread: Spread,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cycles_spread: Option<Spread>,
    pub disturbed: bool,
    /// Wall seconds of all processes, seconds inside timed trials, and one-off setup.
    pub wall_s: f64,
    pub timed_s: f64,
    pub timed_fraction: f64,
    pub setup_s: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stack_peak_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heap_peak_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skip_reason: Option<String>,
    /// The jail the record's processes ran in (the layers common to all of them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub containment: Option<Containment>,
    /// ICCS helper files linked into the timed library (from build.json).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub helpers: Vec<HelperFile>,
    /// The cross-checks of the trials against what the orchestrator observed (issue 12).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checks: Option<RecordChecks>,
    /// Why the record is `inconsistent`: the first cross-check it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inconsistent_reason: Option<String>,
}

/// The evidence of a record's cross-checks that its processes do not hold, and the figures
/// each check compared with its band (`measure::crosscheck` states the bands).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct RecordChecks {
    /// The calibration's fastest warm call in seconds: the prediction trials are held to.
    pub calibration_min_s: f64,
    /// Largest share of a process's observed wall time its trials claim to have timed.
    pub wall_fill: f64,
    /// Largest share of a process tree's CPU time (rusage) its on-CPU trials claim.
    pub cpu_fill: f64,
    /// Counter ticks per claimed second over the counter's frequency: smallest and largest
    /// over the trials (`None`: the counter counts core cycles, no fixed frequency).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_ratio: Option<(f64, f64)>,
    /// Per-call seconds of the trials over the calibration's: fastest trial and median.
    pub calibration_ratio: (f64, f64),
    /// Verification of each trial process's last outputs in a fresh jailed child.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub last_outputs: Vec<LastOutputs>,
    /// Wall seconds the verify children took in all (the cost of that check).
    #[serde(default)]
    pub verify_s: f64,
    /// The fixed cost of a jailed process with no candidate code (the measure phase's
    /// probe jobs, from outside): what the time accounting adds to the timed seconds.
    /// `None` in records written before the accounting (issue 33); then it is not held.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fixed_cost: Option<FixedCost>,
    /// Warm-up calls per trial process (the plan's), for the untimed-work check.
    #[serde(default)]
    pub warmups: u64,
    /// Smallest share of a process's tree CPU time (wait4) explained by its timed seconds
    /// plus the fixed cost (`measure::crosscheck::CPU_ACCOUNTED`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_accounted: Option<f64>,
    /// Smallest share of a process's observed wall time explained the same way.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wall_accounted: Option<f64>,
    /// Share of the trial processes' CPU time (all together) spent outside the timed
    /// windows: load, constructors, set-up, warm-ups, saving outputs, the jail itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub untimed_share: Option<f64>,
    /// Largest untimed CPU seconds of one process beyond the fixed cost and its warm-ups,
    /// over that process's timed CPU seconds (≤ 1 plus a small constant when honest).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub untimed_over_timed: Option<f64>,
    /// The calibration's cold first call in seconds (shown next to the untimed share).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cold_s: Option<f64>,
}

/// CPU and wall seconds a jailed process costs with no candidate code in it.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq)]
pub struct FixedCost {
    pub cpu_s: f64,
    pub wall_s: f64,
    /// Measured again right after this record's processes, because the phase's first probes
    /// (taken under another load) did not account for them; the larger of the two is kept.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub near_record: bool,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct Spread {
    pub min: f64,
    pub max: f64,
    /// Coefficient of variation of the per-trial means (sample standard deviation / mean).
    pub cv: f64,
    /// 95 % confidence interval of the mean (Student t over trial means).
    pub ci95_low: f64,
    pub ci95_high: f64,
}

// ---------------------------------------------------------------------------------------
// records: ngcc.checks.last_outputs

/// The verification of one trial process's last outputs, written as one line: `ok: …`,
/// `FAILED: …` or `not verified: …`. Code decides on the variant; the prefix is read and
/// written here only.
#[derive(Clone, Debug, PartialEq)]
pub enum LastOutputs {
    /// Every value recomputed from the outputs matched (what was checked).
    Ok(String),
    /// A value did not match, or the check could not be made (why).
    Failed(String),
    /// The kind's outputs are not checked (why).
    NotVerified(String),
}

impl LastOutputs {
    const OK: &'static str = "ok: ";
    const FAILED: &'static str = "FAILED: ";
    const NOT_VERIFIED: &'static str = "not verified: ";

    pub fn is_failed(&self) -> bool {
        matches!(self, LastOutputs::Failed(_))
    }

    /// A line of a record; text in no known form is a failure of that text (a record's
    /// check is never taken as passed on words this version does not know).
    pub fn parse(line: &str) -> LastOutputs {
        if let Some(t) = line.strip_prefix(Self::OK) {
            LastOutputs::Ok(t.into())
        } else if let Some(t) = line.strip_prefix(Self::NOT_VERIFIED) {
            LastOutputs::NotVerified(t.into())
        } else {
            LastOutputs::Failed(line.strip_prefix(Self::FAILED).unwrap_or(line).into())
        }
    }
}

impl std::fmt::Display for LastOutputs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (prefix, text) = match self {
            LastOutputs::Ok(t) => (Self::OK, t),
            LastOutputs::Failed(t) => (Self::FAILED, t),
            LastOutputs::NotVerified(t) => (Self::NOT_VERIFIED, t),
        };
        write!(f, "{prefix}{text}")
    }
}

impl Serialize for LastOutputs {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

impl<'de> Deserialize<'de> for LastOutputs {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(LastOutputs::parse(&String::deserialize(d)?))
    }
}
