//! JSON schema 2 of the reference harness (field names and order kept), plus our own
//! additions as extra, optional fields. Every JSON field name of the project lives here.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

pub const SCHEMA: u32 = 2;

// ---------------------------------------------------------------------------------------
// Closed vocabularies: statuses, flag sets, counters, operations, RNGs, timing scopes.
//
// Each is written as the same string as before. Every enum but `Op` comes from `wire_enum!`:
// an `Other(String)` arm keeps values this version does not know (a reference or future
// dataset) so they round-trip byte for byte, and `Default` is the empty value, which is what
// a missing string was before these were types.

macro_rules! wire_enum {
    ($(#[$meta:meta])* pub enum $name:ident { $($(#[$vmeta:meta])* $var:ident = $text:literal,)+ }) => {
        $(#[$meta])*
        #[derive(Clone, Debug, PartialEq, Eq, Hash)]
        pub enum $name {
            $($(#[$vmeta])* $var,)+
            /// A value this version does not know, kept verbatim.
            Other(String),
        }

        impl $name {
            /// The string written in JSON (and shown in logs and pages).
            pub fn as_str(&self) -> &str {
                match self {
                    $($name::$var => $text,)+
                    $name::Other(s) => s,
                }
            }
        }

        impl From<&str> for $name {
            fn from(s: &str) -> $name {
                match s {
                    $($text => $name::$var,)+
                    other => $name::Other(other.to_string()),
                }
            }
        }

        impl Default for $name {
            fn default() -> $name {
                $name::Other(String::new())
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<$name, D::Error> {
                Ok($name::from(String::deserialize(d)?.as_str()))
            }
        }
    };
}

wire_enum! {
    /// KAT status of an instance (build.json `kat`, records `kat`, KAT log RESULT lines).
    pub enum KatStatus {
        Pass = "PASS",
        Mismatch = "MISMATCH",
        NoKat = "NOKAT",
        Partial = "PARTIAL",
        CryptoFail = "CRYPTOFAIL",
        Timeout = "TIMEOUT",
        Overflow = "OVERFLOW",
        LoadFail = "LOADFAIL",
        Crash = "CRASH",
        /// The instance did not build.
        BuildFail = "BUILDFAIL",
        /// Built, KAT not run yet.
        Pending = "PENDING",
    }
}

wire_enum! {
    /// Status of a timing record.
    pub enum RecordStatus {
        Complete = "complete",
        FailedOrPartial = "failed_or_partial",
        /// Timed, but what the orchestrator observed from outside contradicts the trials
        /// (`ngcc.inconsistent_reason` says how): never shown as a result.
        Inconsistent = "inconsistent",
    }
}

wire_enum! {
    /// Status of a child process: a record's processes, calibrations, profiles, and what
    /// calibrate/trial/profile children report.
    pub enum ProcessStatus {
        Complete = "complete",
        /// Some trials, then an error.
        Partial = "partial",
        Failed = "failed",
        /// Killed at its wall-clock timeout.
        HardTimeout = "hard_timeout",
        Missing = "missing",
    }
}

wire_enum! {
    /// build.json `build_status` (ours).
    pub enum BuildStatus {
        Built = "built",
        /// Compile or link error.
        Failed = "failed",
    }
}

wire_enum! {
    /// The flag set an instance was built with (build.json and records `flags`).
    pub enum FlagSetName {
        Guide = "guide",
        HarnessDefault = "harness-default",
        GuidePerformance = "guide-performance",
        /// The harness defaults with `-fgnu89-inline`: tried only when the harness-default
        /// link left undefined symbols (C99 plain `inline` without an external definition,
        /// which gcc leaves undefined wherever it does not inline).
        HarnessDefaultGnu89Inline = "harness-default+gnu89-inline",
    }
}

wire_enum! {
    /// The counter the timing loop read (`measure::counter`). TSC and CNTVCT ticks are
    /// reference time, not core cycles; `Other("")` is a child that died before choosing one.
    pub enum CounterKind {
        /// perf_event HW CPU_CYCLES, user mode only: core cycles, like the reference driver.
        PerfCycles = "perf_cycles",
        /// x86_64 time-stamp counter: constant-rate reference ticks, not core cycles.
        Tsc = "tsc",
        /// aarch64 virtual counter: constant-rate ticks (often 24–1000 MHz).
        Cntvct = "cntvct",
        /// No counter: cycles are recorded as 0.
        None = "none",
    }
}

impl CounterKind {
    /// True when ticks are core cycles (scale with the core clock): "cycles", not "ticks".
    pub fn counts_core_cycles(&self) -> bool {
        *self == CounterKind::PerfCycles
    }

    /// The one name of this counter's unit, in the terminal, the charts and our pages.
    pub fn unit(&self) -> String {
        match self {
            CounterKind::PerfCycles => "cycles".into(),
            CounterKind::Tsc => "TSC cycles".into(),
            CounterKind::Cntvct => "cntvct ticks".into(),
            other => format!("{other} counts"),
        }
    }
}

wire_enum! {
    /// candidate.toml `kat.rng`: the NIST flavour's randombytes behind the KAT.
    pub enum KatRng {
        /// AES-256 CTR_DRBG (NIST rng.c).
        Nist = "nist",
        /// HQC's SHAKE-256 PRNG.
        Hqc = "hqc",
    }
}

wire_enum! {
    /// What a trial's seconds and cycles cover (records `timing_scope`, META `timing_scope`).
    pub enum TimingScope {
        /// The whole timing loop.
        Loop = "loop",
        /// KEX steps: only the selected step of each protocol run, summed.
        PerCallStep = "per_call_step",
    }
}

/// An operation of an instance (records and profiles `operation`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    Keygen,
    Enc,
    Dec,
    Sign,
    Verify,
    Hash,
    /// KEX: one whole protocol run.
    Exchange,
    InitA,
    InitB,
    /// KEX pass 1..=16.
    Pass(u32),
    DeriveA,
    DeriveB,
    /// An operation this version does not know, kept verbatim.
    Other(String),
}

impl Op {
    const NAMED: [(Op, &'static str); 11] = [
        (Op::Keygen, "keygen"),
        (Op::Enc, "enc"),
        (Op::Dec, "dec"),
        (Op::Sign, "sign"),
        (Op::Verify, "verify"),
        (Op::Hash, "hash"),
        (Op::Exchange, "exchange"),
        (Op::InitA, "init_a"),
        (Op::InitB, "init_b"),
        (Op::DeriveA, "derive_a"),
        (Op::DeriveB, "derive_b"),
    ];

    /// The operation's name as written in JSON.
    pub fn name(&self) -> String {
        match self {
            Op::Pass(k) => format!("pass{k}"),
            Op::Other(s) => s.clone(),
            op => Op::NAMED
                .iter()
                .find(|(o, _)| o == op)
                .map_or_else(String::new, |(_, n)| n.to_string()),
        }
    }

    /// The key of one measured operation: the name, plus `_<bytes>` when it has an input
    /// length (hash): `keygen`, `pass2`, `hash_1024`. Names files and rows.
    pub fn key(&self, input_bytes: u64) -> String {
        if input_bytes == 0 {
            self.name()
        } else {
            format!("{}_{input_bytes}", self.name())
        }
    }

    /// The KEX protocol steps timed alone (not the whole exchange).
    pub fn is_kex_step(&self) -> bool {
        matches!(
            self,
            Op::InitA | Op::InitB | Op::Pass(_) | Op::DeriveA | Op::DeriveB
        )
    }

    /// What a trial of this operation times: KEX steps only the step, the rest the loop.
    pub fn timing_scope(&self) -> TimingScope {
        if self.is_kex_step() {
            TimingScope::PerCallStep
        } else {
            TimingScope::Loop
        }
    }
}

impl From<&str> for Op {
    fn from(s: &str) -> Op {
        if let Some((op, _)) = Op::NAMED.iter().find(|(_, n)| *n == s) {
            return op.clone();
        }
        // Only the canonical spelling, so the name round-trips (`pass02` stays Other).
        if let Some(k) = s
            .strip_prefix("pass")
            .and_then(|n| n.parse::<u32>().ok())
            .filter(|k| (1..=16).contains(k) && format!("pass{k}") == s)
        {
            return Op::Pass(k);
        }
        Op::Other(s.to_string())
    }
}

impl Default for Op {
    fn default() -> Op {
        Op::Other(String::new())
    }
}

impl std::fmt::Display for Op {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name())
    }
}

impl Serialize for Op {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.name())
    }
}

impl<'de> Deserialize<'de> for Op {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Op, D::Error> {
        Ok(Op::from(String::deserialize(d)?.as_str()))
    }
}

// ---------------------------------------------------------------------------------------
// The host environment (reference-harness.md §1.5), in campaign.json and every record

/// One environment value: absent, `null`, a value of the type §1.5 gives it, or (kept
/// verbatim) a value of another type some harness wrote.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum EnvField<T> {
    #[default]
    Absent,
    Null,
    Value(T),
    Other(Value),
}

impl<T: Serialize> EnvField<T> {
    /// `Null` for `None`: the snapshot writes every key, unreadable ones as null.
    pub fn from_option(v: Option<T>) -> EnvField<T> {
        v.map_or(EnvField::Null, EnvField::Value)
    }

    pub fn is_absent(&self) -> bool {
        matches!(self, EnvField::Absent)
    }

    /// The value as JSON; `None` when absent.
    pub fn json(&self) -> Option<Value> {
        match self {
            EnvField::Absent => None,
            EnvField::Null => Some(Value::Null),
            EnvField::Value(v) => Some(serde_json::to_value(v).unwrap_or(Value::Null)),
            EnvField::Other(v) => Some(v.clone()),
        }
    }

    /// A string view: strings as they are, numbers and bools printed, `None` for null.
    pub fn text(&self) -> Option<String> {
        match self.json()? {
            Value::Null => None,
            Value::String(s) => Some(s),
            other => Some(other.to_string()),
        }
    }

    /// A number, from a JSON number or a numeric string (`"2707200"`).
    pub fn number(&self) -> Option<f64> {
        match self.json()? {
            Value::Number(n) => n.as_f64(),
            Value::String(s) => s.trim().parse().ok(),
            _ => None,
        }
    }

    /// A JSON number only (strings do not count).
    pub fn json_f64(&self) -> Option<f64> {
        self.json()?.as_f64()
    }

    /// A JSON integer only.
    pub fn json_i64(&self) -> Option<i64> {
        self.json()?.as_i64()
    }

    /// A JSON non-negative integer only.
    pub fn json_u64(&self) -> Option<u64> {
        self.json()?.as_u64()
    }
}

impl<T: Serialize> Serialize for EnvField<T> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            // Skipped by `skip_serializing_if`; null if serialised on its own.
            EnvField::Absent | EnvField::Null => s.serialize_unit(),
            EnvField::Value(v) => v.serialize(s),
            EnvField::Other(v) => v.serialize(s),
        }
    }
}

impl<'de, T: serde::de::DeserializeOwned> Deserialize<'de> for EnvField<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<EnvField<T>, D::Error> {
        let v = Value::deserialize(d)?;
        if v.is_null() {
            return Ok(EnvField::Null);
        }
        Ok(match T::deserialize(v.clone()) {
            Ok(t) => EnvField::Value(t),
            Err(_) => EnvField::Other(v),
        })
    }
}

/// The environment snapshot of §1.5 (keys, order and types of the reference) followed by
/// ours. Parsed once; keys this version does not know are kept in `extra` and written after
/// the known ones, so every file whose known keys come first in this order (all reference
/// and ngcc-perf files) re-serialises byte for byte.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct HostEnv {
    #[serde(default, skip_serializing_if = "EnvField::is_absent")]
    pub hostname: EnvField<String>,
    #[serde(default, skip_serializing_if = "EnvField::is_absent")]
    pub architecture: EnvField<String>,
    #[serde(default, skip_serializing_if = "EnvField::is_absent")]
    pub cpu_model: EnvField<String>,
    #[serde(default, skip_serializing_if = "EnvField::is_absent")]
    pub machine: EnvField<String>,
    #[serde(default, skip_serializing_if = "EnvField::is_absent")]
    pub cpu_number: EnvField<u64>,
    #[serde(default, skip_serializing_if = "EnvField::is_absent")]
    pub logical_cpus_online: EnvField<String>,
    #[serde(default, skip_serializing_if = "EnvField::is_absent")]
    pub virtualized: EnvField<bool>,
    #[serde(default, skip_serializing_if = "EnvField::is_absent")]
    pub memory_total_kib: EnvField<u64>,
    #[serde(default, skip_serializing_if = "EnvField::is_absent")]
    pub os: EnvField<String>,
    #[serde(default, skip_serializing_if = "EnvField::is_absent")]
    pub kernel: EnvField<String>,
    #[serde(default, skip_serializing_if = "EnvField::is_absent")]
    pub compiler: EnvField<String>,
    #[serde(default, skip_serializing_if = "EnvField::is_absent")]
    pub cmake: EnvField<String>,
    #[serde(default, skip_serializing_if = "EnvField::is_absent")]
    pub python: EnvField<String>,
    #[serde(default, skip_serializing_if = "EnvField::is_absent")]
    pub perf_event_paranoid: EnvField<String>,
    #[serde(default, skip_serializing_if = "EnvField::is_absent")]
    pub cpufreq_governor: EnvField<String>,
    #[serde(default, skip_serializing_if = "EnvField::is_absent")]
    pub cpufreq_driver: EnvField<String>,
    #[serde(default, skip_serializing_if = "EnvField::is_absent")]
    pub cpufreq_min_khz: EnvField<String>,
    #[serde(default, skip_serializing_if = "EnvField::is_absent")]
    pub cpufreq_max_khz: EnvField<String>,
    /// `cpuinfo_avg_freq` (arm64 AMU; newer harness versions only).
    #[serde(default, skip_serializing_if = "EnvField::is_absent")]
    pub cpufreq_avg_khz: EnvField<String>,
    #[serde(default, skip_serializing_if = "EnvField::is_absent")]
    pub intel_pstate_no_turbo: EnvField<String>,
    #[serde(default, skip_serializing_if = "EnvField::is_absent")]
    pub cpufreq_boost: EnvField<String>,
    #[serde(default, skip_serializing_if = "EnvField::is_absent")]
    pub smt_control: EnvField<String>,
    /// Probed core clock (only with a core cycle counter).
    #[serde(default, skip_serializing_if = "EnvField::is_absent")]
    pub core_clock_hz: EnvField<u64>,
    #[serde(default, skip_serializing_if = "EnvField::is_absent")]
    pub core_clock_min_hz: EnvField<u64>,
    #[serde(default, skip_serializing_if = "EnvField::is_absent")]
    pub core_clock_max_hz: EnvField<u64>,
    #[serde(default, skip_serializing_if = "EnvField::is_absent")]
    pub core_clock_mhz: EnvField<u64>,
    // --- ngcc-perf additions (after the reference keys, never renamed) ---
    /// The counter a timing child would use on this CPU.
    #[serde(default, skip_serializing_if = "EnvField::is_absent")]
    pub counter: EnvField<CounterKind>,
    /// Its ticks per second.
    #[serde(default, skip_serializing_if = "EnvField::is_absent")]
    pub counter_hz: EnvField<u64>,
    /// `constant_tsc` and `nonstop_tsc` in the CPU flags.
    #[serde(default, skip_serializing_if = "EnvField::is_absent")]
    pub tsc_constant: EnvField<bool>,
    #[serde(default, skip_serializing_if = "EnvField::is_absent")]
    pub perf_cycles_available: EnvField<bool>,
    /// Keys this version does not know, in file order.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl HostEnv {
    /// No key at all (a record that lost its environment).
    pub fn is_empty(&self) -> bool {
        *self == HostEnv::default()
    }

    /// What decides whether numbers from two hosts can be compared (CPU, clock settings,
    /// kernel, compiler, counter), by JSON name; `merge` wants them equal on every shard
    /// (the counter's rate, `counter_hz`, within a tolerance).
    pub fn comparability(&self) -> [(&'static str, Option<Value>); 14] {
        [
            ("architecture", self.architecture.json()),
            ("cpu_model", self.cpu_model.json()),
            ("virtualized", self.virtualized.json()),
            ("kernel", self.kernel.json()),
            ("compiler", self.compiler.json()),
            ("counter", self.counter.json()),
            ("core_clock_mhz", self.core_clock_mhz.json()),
            ("cpufreq_governor", self.cpufreq_governor.json()),
            ("cpufreq_driver", self.cpufreq_driver.json()),
            ("cpufreq_min_khz", self.cpufreq_min_khz.json()),
            ("cpufreq_max_khz", self.cpufreq_max_khz.json()),
            ("intel_pstate_no_turbo", self.intel_pstate_no_turbo.json()),
            ("cpufreq_boost", self.cpufreq_boost.json()),
            ("smt_control", self.smt_control.json()),
        ]
    }
}

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
    pub flags: FlagSetName,
    pub kat: KatStatus,
    /// What the guide-flag attempt ended in, when this entry is the harness-default fallback.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guide_result: Option<KatStatus>,
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
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build_status: Option<BuildStatus>,
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
    /// The guide-flag attempt's build log, kept when the harness defaults were used after it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guide_build_log: Option<String>,
    /// ICCS: the helper files (drng.c, auxfunc.c, …) linked into the library, and their origin.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub helpers: Vec<HelperFile>,
    /// What the recorded KAT verdict was computed from (`kat::run::inputs`): input name →
    /// value or digest. A verdict whose inputs differ from today's is stale and re-run.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub kat_inputs: BTreeMap<String, String>,
    /// The jail layers every compiler, assembler and linker call of this build ran under
    /// (the layers all of them had).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build_containment: Option<Containment>,
    /// candidate.toml `security_target` (bits), for `ngcc-perf catalog`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub security_target: Option<u32>,
    /// candidate.toml `representative = true`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub representative: bool,
}

/// Where an ICCS helper file linked into a library came from.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum HelperOrigin {
    /// The candidate's own file (among its sources).
    Package,
    /// The official ICCS API file from the candidate's `iccs_helpers` folder.
    Official,
    /// ngcc-perf's reimplementation (`csrc/iccs/`), bit-exact but faster.
    Embedded,
}

impl HelperOrigin {
    pub fn as_str(self) -> &'static str {
        match self {
            HelperOrigin::Package => "package",
            HelperOrigin::Official => "official",
            HelperOrigin::Embedded => "embedded",
        }
    }
}

/// One ICCS helper file linked into a library.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct HelperFile {
    /// File name: `drng.c`, `auxfunc.c` or (embedded only) `iccs_sm3.c`.
    pub name: String,
    pub origin: HelperOrigin,
    /// As recorded for sources (`${PACKAGE}/…`, relative to the candidate, …); official
    /// files as `${ICCS_HELPERS}/drng.c` (the manifest's `iccs_helpers`); embedded files by
    /// their place in the ngcc-perf sources (`csrc/iccs/drng.c`).
    pub path: String,
    pub sha256: String,
}

/// The ICCS baseline (campaign phase `baseline`, reference §1.13): the pseudo-candidate of
/// the helpers, the variant of their build entries, and the `algorithm` of those entries,
/// which says where their C came from (reference datasets have none: the official file).
pub mod baseline {
    /// Records under `records/iccs/`, logs under `kat/iccs/`.
    pub const CANDIDATE: &str = "iccs";
    pub const VARIANT: &str = "iccs-baseline";
    /// Built from the official ICCS API `auxfunc.c` (`--iccs-helpers DIR`).
    pub const OFFICIAL: &str = "ICCS helpers: official api/auxfunc.c";
    /// Built from ngcc-perf's own `csrc/iccs/auxfunc.c` (no `--iccs-helpers`).
    pub const EMBEDDED: &str = "ICCS helpers: ngcc-perf csrc/iccs/auxfunc.c";
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct SourceFile {
    pub path: String,
    pub sha256: String,
}

impl BuildEntry {
    /// The library was built (and its `library` fields are set).
    pub fn is_built(&self) -> bool {
        self.build_status == Some(BuildStatus::Built)
    }
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

/// Keys whose string values (at any depth of a dataset JSON file) are a candidate's text:
/// its output, what the compiler or the child said about it (build errors, KAT details,
/// errors, campaign.json's `skipped` reasons) and the names from its headers and manifest.
/// `publish` quarantines host paths in them (`dataset::quarantine`).
pub const CANDIDATE_TEXT_FIELDS: &[&str] = &[
    "stderr",
    "stdout",
    "build_error",
    "kat_detail",
    "error",
    "detail",
    "skipped",
    "algorithm",
    "instance",
];
/// The field a quarantined JSON file gains: the fields whose text was withheld.
pub const QUARANTINED_FIELD: &str = "quarantined";

/// CPU and wall seconds a jailed process costs with no candidate code in it.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq)]
pub struct FixedCost {
    pub cpu_s: f64,
    pub wall_s: f64,
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
}

// ---------------------------------------------------------------------------------------
// ct/<cand>/<label>__<op>.json (ours: constant-time evidence, issue 17)

wire_enum! {
    /// What memcheck saw a secret decide at a site.
    pub enum CtSiteKind {
        /// A conditional jump or move (memcheck `UninitCondition`).
        Branch = "branch",
        /// An address computed from a secret: a table index (memcheck `UninitValue`).
        Index = "index",
        /// A secret passed to a system call (memcheck `SyscallParam`).
        Syscall = "syscall",
    }
}

impl CtSiteKind {
    /// The kind of a memcheck error kind; `None` for errors that are not about secrets.
    pub fn of_memcheck(kind: &str) -> Option<CtSiteKind> {
        match kind {
            "UninitCondition" => Some(CtSiteKind::Branch),
            "UninitValue" => Some(CtSiteKind::Index),
            "SyscallParam" => Some(CtSiteKind::Syscall),
            _ => None,
        }
    }
}

wire_enum! {
    /// The dudect verdict of a max |t|. Its words depend on what the two classes vary
    /// ([`ct_varied_buffer`]): with the key fixed and a public input varied (dec, sign), a
    /// difference is a `leak`; where the classes vary the seed (keygen, enc, exchange, …), it
    /// says only that the timing depends on the seed (e.g. rejection sampling of public
    /// values), never which secret, if any, it reveals.
    pub enum CtVerdict {
        /// Key fixed, public input varied: max |t| below [`CT_T_SUSPICIOUS`].
        NoLeakFound = "no_leak_found",
        /// Key fixed, public input varied: max |t| from [`CT_T_SUSPICIOUS`] to [`CT_T_LEAK`].
        Suspicious = "suspicious",
        /// Key fixed, public input varied: max |t| above [`CT_T_LEAK`].
        Leak = "leak",
        /// Seed varied: max |t| below [`CT_T_SUSPICIOUS`].
        NoSeedDependenceFound = "no_seed_dependence_found",
        /// Seed varied: max |t| from [`CT_T_SUSPICIOUS`] to [`CT_T_LEAK`].
        MaybeSeedDependent = "maybe_seed_dependent",
        /// Seed varied: max |t| above [`CT_T_LEAK`]; the timing depends on the seed.
        SeedDependent = "seed_dependent",
        /// No test had [`CT_MIN_CLASS_N`] timings in both classes (the budget ended first).
        TooFewTimings = "too_few_timings",
    }
}

/// The input dudect's two classes differ in for `op` with everything else, the secret key
/// included, held fixed: the ciphertext of dec, the message of sign. `None`: the classes
/// differ in the seed of the operation's randomness (keygen, enc, exchange and the rest),
/// which is itself secret, so a timing difference is not a leak of a key.
pub fn ct_varied_buffer(op: &Op) -> Option<&'static str> {
    match op {
        Op::Dec => Some("ct"),
        Op::Sign => Some("m"),
        _ => None,
    }
}

/// dudect's thresholds on |t|: above 10 a leak, from 4.5 suspicious.
pub const CT_T_LEAK: f64 = 10.0;
pub const CT_T_SUSPICIOUS: f64 = 4.5;
/// A dudect test counts towards max |t| only with at least this many timings per class.
pub const CT_MIN_CLASS_N: u64 = 100;

impl CtVerdict {
    /// The verdict of `max_abs_t` for `op`'s classes (see [`ct_varied_buffer`]).
    pub fn of(max_abs_t: f64, op: &Op) -> CtVerdict {
        let seed = ct_varied_buffer(op).is_none();
        if max_abs_t > CT_T_LEAK {
            if seed {
                CtVerdict::SeedDependent
            } else {
                CtVerdict::Leak
            }
        } else if max_abs_t >= CT_T_SUSPICIOUS {
            if seed {
                CtVerdict::MaybeSeedDependent
            } else {
                CtVerdict::Suspicious
            }
        } else if seed {
            CtVerdict::NoSeedDependenceFound
        } else {
            CtVerdict::NoLeakFound
        }
    }
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct CtResult {
    pub candidate: String,
    pub label: String,
    pub operation: Op,
    /// The taint run's library: the timed build's objects' flags plus `-g` (gcc's code does
    /// not depend on -g), and its sha256.
    pub ct_library_sha256: String,
    pub ct_cflags: String,
    /// The timed library (dudect times it).
    #[serde(default)]
    pub timed_library_sha256: Option<String>,
    pub taint: Option<CtTaint>,
    pub dudect: Option<CtDudect>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct CtTaint {
    pub status: ProcessStatus,
    #[serde(default)]
    pub error: Option<String>,
    /// `valgrind --version` and the options it ran with.
    pub tool: String,
    /// What was marked secret, per stage.
    pub secrets: Vec<String>,
    pub stages: Vec<String>,
    /// Calls per stage.
    pub calls: u64,
    /// Sites in the library (innermost frame with a source line in it), one per
    /// (file, line, kind), sorted by file and line.
    pub sites: Vec<CtSite>,
    /// memcheck errors with no frame in the library (harness or system code).
    pub errors_outside: u64,
    /// Errors before the first stage (seeding, setup).
    pub errors_before_stages: u64,
    /// valgrind client requests in the library that ran (issue 33): code that can tell
    /// memcheck its secrets are defined. With any, the result is `forged`: no site proves
    /// nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_requests: Option<super::count::ClientRequests>,
    #[serde(default)]
    pub forged: bool,
    pub wall_s: f64,
    /// The limits and jail layers in force, as the keeper reported them.
    #[serde(default)]
    pub sandbox: String,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct CtSite {
    /// Relative to the candidate's folder when inside it, else as the debug info says.
    pub file: String,
    pub line: u64,
    pub kind: CtSiteKind,
    /// The function at the site, and the innermost function when that is outside the
    /// library (e.g. `memcmp`).
    pub function: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub via: Option<String>,
    /// Times memcheck reported it (all stages).
    pub count: u64,
    /// Seen only once the manifest's public ranges of sk were marked secret too: the site
    /// depends on public data the secret key embeds (e.g. ML-KEM's pk and H(pk)).
    #[serde(default)]
    pub public_sk_data: bool,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct CtDudect {
    pub status: ProcessStatus,
    #[serde(default)]
    pub error: Option<String>,
    pub counter: CounterKind,
    /// Class 0 (fixed) and class 1 (random).
    pub classes: Vec<String>,
    pub seed: u64,
    pub measurements: u64,
    pub budget_s: f64,
    pub wall_s: f64,
    /// The raw test, one test per crop threshold, and the second-order test.
    pub tests: Vec<CtTest>,
    pub max_abs_t: f64,
    pub verdict: CtVerdict,
    #[serde(default)]
    pub sandbox: String,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct CtTest {
    /// `raw`, `crop<k>` (timings below the k-th dudect percentile), `second_order`.
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub below_ticks: Option<u64>,
    pub fixed: CtClassStats,
    pub random: CtClassStats,
    pub t: f64,
}

/// Welch's t inputs of one class: count, mean, sample variance (n-1).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct CtClassStats {
    pub n: u64,
    pub mean: f64,
    pub var: f64,
}

// ---------------------------------------------------------------------------------------
// calibrate/<cand>/<label>__<op>.json (run-internal, not published)

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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn vocabularies_round_trip_known_and_unknown_values() {
        for s in ["PASS", "BUILDFAIL", "PENDING", "NORESULT", ""] {
            let k: KatStatus = serde_json::from_value(json!(s)).unwrap();
            assert_eq!(serde_json::to_value(&k).unwrap(), json!(s));
        }
        assert_eq!(KatStatus::from("PASS"), KatStatus::Pass);
        assert_eq!(
            KatStatus::from("SLOW"),
            KatStatus::Other("SLOW".to_string())
        );
        assert_eq!(ProcessStatus::default().as_str(), "");
        assert_eq!(CounterKind::from("tsc"), CounterKind::Tsc);
        assert!(CounterKind::PerfCycles.counts_core_cycles());
        assert!(!CounterKind::Cntvct.counts_core_cycles());
    }

    #[test]
    fn operations_and_their_keys() {
        assert_eq!(Op::from("pass3"), Op::Pass(3));
        assert_eq!(Op::Pass(3).key(0), "pass3");
        assert_eq!(Op::Hash.key(1024), "hash_1024");
        // Only canonical spellings are passes, so every name round-trips.
        for s in ["pass02", "pass17", "pass0", "sign_open"] {
            assert_eq!(Op::from(s), Op::Other(s.to_string()));
            assert_eq!(Op::from(s).name(), s);
        }
        assert_eq!(Op::InitA.timing_scope(), TimingScope::PerCallStep);
        assert_eq!(Op::Exchange.timing_scope(), TimingScope::Loop);
    }

    #[test]
    fn the_environment_keeps_absent_null_foreign_types_and_unknown_keys() {
        let raw = json!({
            "hostname": "h",
            "cpu_number": 2,
            "cpufreq_max_khz": 2100000,
            "intel_pstate_no_turbo": null,
            "core_clock_hz": 2.5e9,
            "counter": "tsc",
            "someone_elses_key": [1, 2],
        });
        let env: HostEnv = serde_json::from_value(raw.clone()).unwrap();
        assert_eq!(env.cpu_number, EnvField::Value(2));
        assert_eq!(env.cpufreq_max_khz.number(), Some(2.1e6));
        assert_eq!(env.cpufreq_max_khz.text().as_deref(), Some("2100000"));
        assert_eq!(env.intel_pstate_no_turbo, EnvField::Null);
        assert!(env.machine.is_absent());
        assert_eq!(env.core_clock_hz.number(), Some(2.5e9));
        assert_eq!(env.counter, EnvField::Value(CounterKind::Tsc));
        let back = serde_json::to_value(&env).unwrap();
        assert_eq!(back, raw);
        let keys: Vec<&String> = back.as_object().unwrap().keys().collect();
        assert_eq!(keys.last().unwrap().as_str(), "someone_elses_key");
        assert!(HostEnv::default().is_empty() && !env.is_empty());
    }
}

// --- The jail (issue 12): which containment layers a child had, and what the orchestrator
// observed of its process tree from outside (exit status, CPU time, wall time). ---

/// One containment layer of a child that ran candidate code.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[serde(rename_all = "snake_case")]
pub enum Layer {
    /// A user namespace: root of the jail is nobody outside it.
    UserNs,
    /// A PID namespace whose init is our proxy: every descendant dies with the job.
    PidNs,
    /// A mount namespace with a minimal read-only root (system libraries, the library,
    /// the job's inputs) and the scratch folder as the only writable place.
    MountNs,
    NetNs,
    IpcNs,
    UtsNs,
    /// Candidate code runs under an unprivileged uid (not root outside the jail).
    Unprivileged,
    /// RLIMIT_NPROC (processes and threads of the jail's uid).
    Nproc,
    /// Landlock: read-only system folders and inputs, the scratch folder read-write.
    Landlock,
    /// A seccomp filter: no new processes, exec, ptrace, sockets, mounts, affinity changes…
    Seccomp,
    /// The scratch folder is a tmpfs of the job's own with a size and an inode bound.
    ScratchTmpfs,
    /// A memory control group: one bound for all processes of the job and its scratch.
    MemoryCgroup,
    /// A pids control group: one bound on the job's processes and threads.
    PidsCgroup,
}

impl Layer {
    pub const ALL: [Layer; 13] = [
        Layer::UserNs,
        Layer::PidNs,
        Layer::MountNs,
        Layer::NetNs,
        Layer::IpcNs,
        Layer::UtsNs,
        Layer::Unprivileged,
        Layer::Nproc,
        Layer::Landlock,
        Layer::Seccomp,
        Layer::ScratchTmpfs,
        Layer::MemoryCgroup,
        Layer::PidsCgroup,
    ];

    /// The JSON name (`user_ns`, …), also used by `NGCC_PERF_JAIL_OFF`.
    pub fn name(self) -> &'static str {
        match self {
            Layer::UserNs => "user_ns",
            Layer::PidNs => "pid_ns",
            Layer::MountNs => "mount_ns",
            Layer::NetNs => "net_ns",
            Layer::IpcNs => "ipc_ns",
            Layer::UtsNs => "uts_ns",
            Layer::Unprivileged => "unprivileged",
            Layer::Nproc => "nproc",
            Layer::Landlock => "landlock",
            Layer::Seccomp => "seccomp",
            Layer::ScratchTmpfs => "scratch_tmpfs",
            Layer::MemoryCgroup => "memory_cgroup",
            Layer::PidsCgroup => "pids_cgroup",
        }
    }

    pub fn from_name(name: &str) -> Option<Layer> {
        Layer::ALL.into_iter().find(|l| l.name() == name)
    }

    /// Layers that contain code by themselves (a host with none of them is uncontained).
    pub fn contains_code(self) -> bool {
        matches!(
            self,
            Layer::PidNs | Layer::MountNs | Layer::Landlock | Layer::Seccomp
        )
    }
}

/// The containment one child had, as its trusted parent (`__child`) reports it.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct Containment {
    /// Active layers, sorted.
    pub layers: Vec<Layer>,
    /// Which control groups held the job's bounds (`cgroup v1`, `cgroup v2`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cgroup: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub landlock_abi: Option<u32>,
    /// Why a layer is missing (one short line each).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing: Vec<String>,
}

impl Containment {
    pub fn has(&self, l: Layer) -> bool {
        self.layers.contains(&l)
    }

    /// Keeps only the layers `other` has too (what every one of several children had).
    pub fn keep_common(&mut self, other: &Containment) {
        self.layers.retain(|l| other.has(*l));
    }

    /// No layer that contains code: the child ran with the orchestrator's rights.
    pub fn uncontained(&self) -> bool {
        !self.layers.iter().any(|l| l.contains_code())
    }

    /// One line for logs and pages, e.g. `user, pid, mount, net, ipc, uts namespaces; uid
    /// 65534; nproc; landlock abi 7; seccomp`.
    pub fn text(&self) -> String {
        if self.uncontained() {
            return "UNCONTAINED (no namespace, Landlock or seccomp layer)".into();
        }
        let mut parts = Vec::new();
        let ns: Vec<&str> = [
            (Layer::UserNs, "user"),
            (Layer::PidNs, "pid"),
            (Layer::MountNs, "mount"),
            (Layer::NetNs, "net"),
            (Layer::IpcNs, "ipc"),
            (Layer::UtsNs, "uts"),
        ]
        .iter()
        .filter(|(l, _)| self.has(*l))
        .map(|(_, n)| *n)
        .collect();
        if !ns.is_empty() {
            parts.push(format!("{} namespaces", ns.join(", ")));
        }
        if self.has(Layer::Unprivileged) {
            parts.push("unprivileged uid".into());
        }
        if self.has(Layer::Nproc) {
            parts.push("nproc limit".into());
        }
        if self.has(Layer::ScratchTmpfs) {
            parts.push("scratch tmpfs".into());
        }
        let groups: Vec<&str> = [(Layer::MemoryCgroup, "memory"), (Layer::PidsCgroup, "pids")]
            .iter()
            .filter(|(l, _)| self.has(*l))
            .map(|(_, n)| *n)
            .collect();
        if !groups.is_empty() {
            let version = self.cgroup.as_deref().unwrap_or("cgroup");
            parts.push(format!("{} {version}", groups.join(", ")));
        }
        if self.has(Layer::Landlock) {
            parts.push(match self.landlock_abi {
                Some(v) => format!("landlock abi {v}"),
                None => "landlock".into(),
            });
        }
        if self.has(Layer::Seccomp) {
            parts.push("seccomp".into());
        }
        parts.join("; ")
    }
}

/// How a process ended, as its parent's wait4 saw it.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum WaitStatus {
    Code(i32),
    Signal(i32),
}

impl WaitStatus {
    pub fn from_raw(status: i32) -> WaitStatus {
        if libc::WIFSIGNALED(status) {
            WaitStatus::Signal(libc::WTERMSIG(status))
        } else {
            WaitStatus::Code(libc::WEXITSTATUS(status))
        }
    }
}

/// CPU time and memory high-water mark from a wait4 rusage.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq)]
pub struct Usage {
    pub user_s: f64,
    pub sys_s: f64,
    pub max_rss_kib: u64,
}

impl Usage {
    pub fn from_rusage(ru: &libc::rusage) -> Usage {
        let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
        Usage {
            user_s: secs(ru.ru_utime),
            sys_s: secs(ru.ru_stime),
            max_rss_kib: ru.ru_maxrss.max(0) as u64,
        }
    }

    pub fn cpu_s(&self) -> f64 {
        self.user_s + self.sys_s
    }
}

/// What the orchestrator observed of one child from outside (never from the child's own
/// words): the base of the record cross-checks.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct Observed {
    /// How the process that ran candidate code ended (its parent in the jail saw it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker_exit: Option<WaitStatus>,
    /// That process's own CPU time and memory (its wait4 rusage).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker_usage: Option<Usage>,
    /// The whole process tree (wait4 on the jail's top process).
    pub tree_usage: Usage,
    /// Wall seconds from spawning the jail to its end, measured by the orchestrator.
    pub wall_s: f64,
    /// Seconds the jail took to set up before the worker started (namespaces, mounts).
    #[serde(default)]
    pub jail_setup_s: f64,
    pub containment: Containment,
    /// The buffers after the last timed iteration (trials), copied out of the jail:
    /// run-relative folder and the sha256 of each file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_outputs: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub last_outputs_sha256: Vec<(String, String)>,
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
