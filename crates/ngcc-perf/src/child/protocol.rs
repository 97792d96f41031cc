//! Requests the orchestrator sends to a child and the results it gets back (fd 3, JSON).

use crate::candidate::{Api, Kind};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

#[derive(Serialize, Deserialize, Debug, Clone)]
#[serde(tag = "job", rename_all = "snake_case")]
pub enum Request {
    Kat(KatJob),
    Vectors(VectorsJob),
}

/// Limits the child applies to itself before loading candidate code.
#[derive(Serialize, Deserialize, Debug, Clone, Default)]
pub struct Limits {
    /// RLIMIT_AS in bytes.
    pub address_space: Option<u64>,
    /// RLIMIT_CPU in seconds.
    pub cpu_seconds: Option<u64>,
    /// RLIMIT_FSIZE in bytes (caps any file the child writes).
    pub file_size: Option<u64>,
    /// Pin to this CPU with sched_setaffinity.
    pub pin_cpu: Option<u32>,
}

#[derive(Serialize, Deserialize, Debug, Clone)]
pub struct KatJob {
    pub limits: Limits,
    pub library: PathBuf,
    pub kind: Kind,
    pub api: Api,
    /// NIST flavour: `nist` or `hqc`.
    pub rng: String,
    /// Where the KAT text files go.
    pub out_dir: PathBuf,
    /// ICCS: records per KAT file (10 officially).
    pub count: u32,
    /// ICCS hash: skip the 2^33-bit and the million-iteration files.
    pub quick: bool,
}

/// The metadata block of a library, as the child read it.
#[derive(Serialize, Deserialize, Debug, Clone, Default, PartialEq)]
pub struct Meta {
    pub kind: u32,
    pub id: String,
    pub algorithm: String,
    pub instance: String,
    pub variant: String,
    pub source_dir: String,
    pub compiler: String,
    pub build_flags: String,
    pub sizes: Vec<u64>,
}

/// Outcome of a KAT job. `status` is `ok` when the files were written; otherwise the KAT
/// status the run ended in (CRYPTOFAIL, OVERFLOW, LOADFAIL, NOKAT…).
#[derive(Serialize, Deserialize, Debug, Clone, Default)]
pub struct KatOutput {
    pub status: String,
    #[serde(default)]
    pub detail: Option<String>,
    #[serde(default)]
    pub meta: Option<Meta>,
    /// File names written in `out_dir`, in order.
    #[serde(default)]
    pub files: Vec<String>,
    /// Average milliseconds per operation over the KAT records: (op, ms).
    #[serde(default)]
    pub timing: Vec<(String, f64)>,
    /// Records run per file.
    #[serde(default)]
    pub records: u32,
    /// Sandbox facts: whether the network namespace could be dropped, etc.
    #[serde(default)]
    pub sandbox: String,
    /// KAT files deliberately not generated (hash files skipped by `quick`).
    #[serde(default)]
    pub skipped: Vec<String>,
}

/// Cross-checks two builds of the same code: one keygen/enc/dec (or keygen/sign/verify) with
/// all randomness from an ICCS Hash_DRBG seeded with `seed`. ICCS libraries use their own
/// DRNG (`ngcc_seed`); NIST libraries get one model Generate per `randombytes` call, so both
/// see the same bytes.
#[derive(Serialize, Deserialize, Debug, Clone)]
pub struct VectorsJob {
    pub limits: Limits,
    pub library: PathBuf,
    pub kind: Kind,
    pub api: Api,
    /// Hex.
    pub seed: String,
    /// Hex; the message signed (sig only).
    #[serde(default)]
    pub message: String,
}

/// `values` are (name, uppercase hex): pk, sk, ct, ss, ss_dec for a KEM; pk, sk, sig for a
/// signature. `status` is `ok` or the failure status.
#[derive(Serialize, Deserialize, Debug, Clone, Default)]
pub struct VectorsOutput {
    pub status: String,
    #[serde(default)]
    pub detail: Option<String>,
    #[serde(default)]
    pub values: Vec<(String, String)>,
}
