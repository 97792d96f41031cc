//! The host environment (reference-harness.md §1.5), in campaign.json and every record

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::CounterKind;

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
