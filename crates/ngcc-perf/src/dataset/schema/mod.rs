//! JSON schema 2 of the reference harness (field names and order kept), plus our own
//! additions as extra, optional fields. Every JSON field name of the project lives here.
//!
//! One module per file format (each says which file); everything is re-exported here, so
//! callers name `crate::dataset::schema::X` whatever file X lives in.

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

mod build;
mod calibration;
mod campaign;
mod ct;
mod environment;
mod jail;
mod profile;
mod record;
mod vocab;

pub use build::*;
pub use calibration::*;
pub use campaign::*;
pub use ct::*;
pub use environment::*;
pub use jail::*;
pub use profile::*;
pub use record::*;
pub use vocab::*;

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
