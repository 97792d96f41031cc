//! build.json

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

use super::{BuildStatus, Containment, FlagSetName, KatStatus};

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
