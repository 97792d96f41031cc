//! campaign.json

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{Containment, CounterKind, HostEnv};

fn is_false(b: &bool) -> bool {
    !*b
}

#[derive(Serialize, Deserialize, Clone, Debug, Default)]
pub struct Campaign {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_utc: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environment_at_start: Option<HostEnv>,
    #[serde(default)]
    pub host_checks: Vec<HostCheck>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arch_config: Option<ArchConfig>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub harness_additions: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub planning: Option<Planning>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_utc: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environment_at_end: Option<HostEnv>,
    #[serde(default)]
    pub host_problems: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shards: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard_cpus: Option<Map<String, Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history_note: Option<String>,
    // --- ngcc-perf additions ---
    /// Name and version of the tool that wrote the campaign (absent in reference datasets).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// True when any measuring phase ran with `--allow-unfixed-host`.
    #[serde(default, skip_serializing_if = "is_false")]
    pub allow_unfixed_host: bool,
    /// Counter used for cycles: `perf_cycles`, `tsc`, `cntvct`, or `none`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counter: Option<CounterKind>,
    /// Instances not measured, with the reason (`<cand>/<label>` → reason).
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub skipped: Map<String, Value>,
    /// The containment a probe child had at the start of each phase that ran candidate code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub containment: Option<Containment>,
    /// True when a phase ran candidate code without any containment (`--allow-uncontained`).
    #[serde(default, skip_serializing_if = "is_false")]
    pub allow_uncontained: bool,
    /// Written by `merge`: the run directories (or datasets) this dataset was merged from.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub merged_from: Vec<MergedPart>,
    /// The run-level noise figure (`measure::noise`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noise: Option<NoiseCheck>,
}

/// A fixed reference loop timed at points of the measure phase, and its spread.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct NoiseCheck {
    pub work: String,
    pub samples: Vec<NoiseSample>,
    /// (max − min) / min of the samples' seconds.
    pub spread: f64,
    /// Sample coefficient of variation of the samples' seconds.
    pub cv: f64,
    /// Core cycles per tick from a dependent-add chain, written by older versions only:
    /// recent cores fold add-immediates in the renamer (several per cycle), so these values
    /// are read (older datasets load) but never used to convert anything.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub core_cycles_per_tick: Vec<f64>,
    /// The core clock per counter tick at each point, with its check (`measure::core_clock`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub core_clock: Vec<CoreClock>,
}

/// One core-clock estimate: a dependent `imul` chain (3 cycles each) timed by the counter,
/// checked against a dependent-add chain and the CPU's nominal clock range.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct CoreClock {
    /// Core cycles per tick by the multiply chain: 3 × multiplies / ticks (best repeat).
    pub mul_cycles_per_tick: f64,
    /// The same by the add chain (1 cycle per add): higher where the core folds adds.
    pub add_cycles_per_tick: f64,
    /// Counter ticks per second over the chains (CLOCK_MONOTONIC_RAW).
    pub tick_hz: f64,
    /// The core clock range the estimate must fall in, Hz.
    pub nominal_low_hz: f64,
    pub nominal_high_hz: f64,
    pub nominal_source: NominalSource,
    pub verdict: CoreClockVerdict,
    /// Why the estimate is not used (`unknown` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
}

wire_enum! {
    /// Where a core clock range comes from.
    pub enum NominalSource {
        /// cpufreq's cpuinfo_min_freq … cpuinfo_max_freq.
        Cpufreq = "cpufreq",
        /// The clock in the CPU's brand string (/proc/cpuinfo `model name`): half to 4.5 times it.
        BrandString = "brand_string",
        /// Neither: 0.4–6.5 GHz, every core clock on sale.
        Plausible = "plausible",
    }
}

wire_enum! {
    /// Whether a core-clock estimate passed its check.
    pub enum CoreClockVerdict {
        /// Inside the nominal range and consistent with the add chain: usable to convert.
        Measured = "measured",
        /// Not usable: `compare` prints "core clock unknown" instead of a converted ratio.
        Unknown = "unknown",
    }
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct NoiseSample {
    pub at: NoisePoint,
    pub seconds: f64,
}

/// Where in the measure phase a noise sample was taken.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "lowercase")]
pub enum NoisePoint {
    Start,
    Middle,
    End,
}

/// One input of `merge`: which shards it measured, on which hosts, and when.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct MergedPart {
    /// The input folder's name (`shard-2`), not its path on the machine that merged.
    pub source: String,
    /// Shards (`K/N`) of its host checks; empty for a run that was not sharded.
    pub shards: Vec<String>,
    /// Host names of its host checks and records.
    pub hosts: Vec<String>,
    /// Its first host check (when its measuring began), else its campaign start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_utc: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_utc: Option<String>,
    pub records: usize,
    pub profiles: usize,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default)]
pub struct HostCheck {
    pub phase: String,
    pub cpu: u32,
    pub utc: String,
    pub problems: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<String>,
    // --- ngcc-perf additions ---
    /// Host name of the machine checked (shards of one campaign run on several).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct ArchConfig {
    pub reference: String,
    pub performance: String,
    pub optimized_families: Vec<String>,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct Planning {
    pub trials: u32,
    pub trial_target_s: f64,
    pub min_total: u64,
    pub max_iters_per_trial: u64,
    pub op_budget_s: f64,
    pub separate_process_setup_s: f64,
    /// Ours: each trial process is planned so its timed work is at least this share of its
    /// wall time, given the fixed cost measured at calibration (absent: the reference rule).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_timed_share: Option<f64>,
}
