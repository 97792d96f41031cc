//! JSON schema 2 of the reference harness (field names and order kept), plus our own
//! additions as extra, optional fields. Every JSON field name of the project lives here.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

pub const SCHEMA: u32 = 2;

/// Environment snapshot (reference-harness.md §1.5): kept as an ordered map because the
/// reference writes strings, ints, bools and nulls and readers only look up a few keys.
pub type Env = Map<String, Value>;

fn is_false(b: &bool) -> bool {
    !*b
}

// ---------------------------------------------------------------------------------------
// campaign.json

#[derive(Serialize, Deserialize, Clone, Debug, Default)]
pub struct Campaign {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_utc: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environment_at_start: Option<Env>,
    #[serde(default)]
    pub host_checks: Vec<HostCheck>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arch_config: Option<ArchConfig>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub harness_additions: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub planning: Option<Planning>,
    #[serde(default)]
    pub host_problems: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shards: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard_cpus: Option<Map<String, Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_utc: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environment_at_end: Option<Env>,
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
    pub counter: Option<String>,
    /// Instances not measured, with the reason (`<cand>/<label>` → reason).
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub skipped: Map<String, Value>,
    /// Written by `merge`: the run directories (or datasets) this dataset was merged from.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub merged_from: Vec<MergedPart>,
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
}

// ---------------------------------------------------------------------------------------
// build.json

#[derive(Serialize, Deserialize, Clone, Debug, Default)]
pub struct BuildFile {
    /// `<cand>/<label>` → entry, in completion order.
    pub instances: Map<String, Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub optimized: Option<Map<String, Value>>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct BuildEntry {
    pub candidate: String,
    pub label: String,
    pub instance: String,
    pub variant: String,
    /// Flag set used: `guide`, `harness-default` or `guide-performance`.
    pub flags: String,
    /// KAT status: PASS, MISMATCH, NOKAT, CRYPTOFAIL, OVERFLOW, LOADFAIL, TIMEOUT, CRASH, BUILDFAIL…
    pub kat: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guide_result: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub library: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub library_sha256: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elf_load_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kat_log: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kat_log_sha256: Option<String>,
    // --- ngcc-perf additions ---
    /// `built`, `failed` (compile/link error) or `cached`-equivalent `built`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build_status: Option<String>,
    /// One line saying why the build failed, for humans.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build_error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compiler: Option<String>,
    /// The full compiler flag string (the reference only kept the flag-set name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build_flags: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sources: Vec<SourceFile>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build_log: Option<String>,
    /// Hash of sources + flags + compiler: a rebuild with the same key is skipped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_key: Option<String>,
    /// Cache key of the failed guide attempt, so a fallback is not retried needlessly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guide_cache_key: Option<String>,
    /// One line explaining a KAT status other than PASS.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kat_detail: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api: Option<String>,
    /// The candidate's algorithm name (candidate.toml `algorithm`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub algorithm: Option<String>,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct SourceFile {
    pub path: String,
    pub sha256: String,
}

impl BuildFile {
    pub fn entry(&self, key: &str) -> Option<BuildEntry> {
        self.instances
            .get(key)
            .and_then(|v| serde_json::from_value(v.clone()).ok())
    }
    pub fn entries(&self) -> Vec<(String, BuildEntry)> {
        self.instances
            .iter()
            .filter_map(|(k, v)| {
                serde_json::from_value(v.clone())
                    .ok()
                    .map(|e| (k.clone(), e))
            })
            .collect()
    }
    pub fn set(&mut self, entry: &BuildEntry) {
        let key = format!("{}/{}", entry.candidate, entry.label);
        let value = serde_json::to_value(entry).expect("build entry serialises");
        self.instances.insert(key, value);
    }
}

// ---------------------------------------------------------------------------------------
// records/<cand>/<label>__<op>.json

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
    /// CPU time (user + system) the child spent in this trial.
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

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct Process {
    pub status: String,
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
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct Record {
    pub schema: u32,
    pub status: String,
    pub candidate: String,
    pub label: String,
    pub instance: String,
    pub variant: String,
    pub flags: String,
    pub operation: String,
    pub input_bytes: u64,
    pub plan: Plan,
    pub kat: String,
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
    pub environment: Env,
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
    pub timing_scope: String,
}

/// An insertion-ordered `name → integer` map (sizes, kex counts).
pub type BTreeMapOrdered = Map<String, Value>;

/// Our additions to a timing record, kept in one object so reference readers ignore it.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct RecordExtra {
    /// `perf_cycles` (user-mode core cycles), `tsc` (reference cycles), `cntvct` or `none`.
    pub counter: String,
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
// profile/<cand>/<label>__<op>.json

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct Profile {
    pub schema: u32,
    pub candidate: String,
    pub label: String,
    pub operation: String,
    pub input_bytes: u64,
    pub status: String,
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
}

// ---------------------------------------------------------------------------------------
// calibrate/<cand>/<label>__<op>.json (run-internal, not published)

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct Calibration {
    pub status: String,
    #[serde(default)]
    pub error: Option<String>,
    /// Median seconds (and counter ticks) of warm single calls: what planning uses.
    pub t1_s: f64,
    pub t1_ticks: u64,
    /// The cold first call (the reference's calibration).
    pub cold_s: f64,
    pub cold_ticks: u64,
    pub warm_calls: u64,
    /// One-off setup (keys, ciphertexts, signatures) done here and saved for trial processes.
    pub prepare_s: f64,
    /// Process overhead of a trial process: start, load library, load setup.
    pub overhead_s: f64,
    pub wall_s: f64,
    pub counter: String,
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
}
