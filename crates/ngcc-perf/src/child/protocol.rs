//! Requests the orchestrator sends to a child and the results it gets back (fd 3, JSON).

use crate::candidate::{Api, Kind};
use crate::dataset::schema::{CounterKind, KatRng, KatStatus, Op, ProcessStatus, TimingScope};
use crate::sandbox::Job;
use crate::sandbox::jail::JobFiles;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::PathBuf;

#[derive(Serialize, Deserialize, Debug, Clone)]
#[serde(tag = "job", rename_all = "snake_case")]
pub enum Request {
    Kat(KatJob),
    Calibrate(OpJob),
    Trial(OpJob),
    Vectors(VectorsJob),
    /// Hash/XOF/DRNG profile of one operation on a relinked library (`child::profile`).
    Profile(OpJob),
    /// Constant-time evidence of one operation: a memcheck secret-taint run or a dudect
    /// timing test (`child::ct`).
    Ct(CtJob),
    /// Recomputes what a trial's last outputs (its `setup_dir`) must satisfy, in a fresh
    /// process (`child::verify`); the orchestrator compares.
    Verify(OpJob),
    /// Instruction counts of one operation under callgrind (`child::count`).
    Count(CountJob),
    /// Heap and stack of one operation on the heap-recording relink (`child::heap`).
    Memory(OpJob),
}

impl Request {
    /// Puts back the paths the worker sees (the keeper rewrote [`Job::files`]).
    pub fn set_files(&mut self, f: JobFiles) {
        match self {
            Request::Kat(j) => {
                j.library = f.library;
                j.out_dir = f.kat_dir.unwrap_or_default();
            }
            Request::Calibrate(j)
            | Request::Trial(j)
            | Request::Profile(j)
            | Request::Verify(j)
            | Request::Memory(j) => {
                j.library = f.library;
                j.setup_dir = f.setup_dir.unwrap_or_default();
            }
            Request::Vectors(j) => j.library = f.library,
            Request::Ct(j) => {
                j.library = f.library;
                j.setup_dir = f.setup_dir.unwrap_or_default();
            }
            Request::Count(j) => {
                j.library = f.library;
                j.setup_dir = f.setup_dir.unwrap_or_default();
            }
        }
    }
}

impl Job for Request {
    /// [`Request::set_files`] replaces every path of the request in the worker: they are
    /// sent empty (measured: a first counted call's malloc took 173-204 instructions more or
    /// fewer between two run directories whose paths differed in length).
    fn request_value(&self) -> serde_json::Result<serde_json::Value> {
        let mut bare = self.clone();
        bare.set_files(JobFiles::default());
        serde_json::to_value(bare)
    }

    fn files(&self) -> JobFiles {
        match self {
            Request::Kat(j) => JobFiles {
                library: j.library.clone(),
                kat_dir: Some(j.out_dir.clone()),
                setup_dir: None,
            },
            Request::Calibrate(j)
            | Request::Trial(j)
            | Request::Profile(j)
            | Request::Verify(j)
            | Request::Memory(j) => JobFiles {
                library: j.library.clone(),
                kat_dir: None,
                setup_dir: Some(j.setup_dir.clone()),
            },
            Request::Vectors(j) => JobFiles {
                library: j.library.clone(),
                ..JobFiles::default()
            },
            Request::Ct(j) => JobFiles {
                library: j.library.clone(),
                kat_dir: None,
                setup_dir: Some(j.setup_dir.clone()),
            },
            Request::Count(j) => JobFiles {
                library: j.library.clone(),
                kat_dir: None,
                setup_dir: Some(j.setup_dir.clone()),
            },
        }
    }

    /// Scratch per kind of job (what it may write: KAT text, a calibration's saved setup,
    /// memcheck's log, a trial's last outputs) and memory for the whole job: its
    /// per-process limit once (forked children share it) plus a full scratch; under memcheck
    /// four times the limit (the tool's shadow memory), at least 2 GiB more.
    fn bounds(&self) -> crate::sandbox::jail::JobBounds {
        use crate::sandbox::jail::JobBounds;
        let (limits, scratch) = match self {
            Request::Kat(j) => (&j.limits, 512 << 20),
            Request::Calibrate(j) => (&j.limits, 1 << 30),
            Request::Ct(j) => (&j.limits, 320 << 20),
            Request::Vectors(j) => (&j.limits, 256 << 20),
            Request::Count(j) => (&j.limits, 256 << 20),
            Request::Trial(j) | Request::Profile(j) | Request::Verify(j) | Request::Memory(j) => {
                (&j.limits, 256 << 20)
            }
        };
        let mut b = JobBounds::new(limits.address_space, scratch, 1024);
        if self.tool().is_some() {
            let per = limits
                .address_space
                .unwrap_or(crate::sandbox::DEFAULT_MEM_LIMIT_MIB << 20);
            b.memory_bytes = (4 * per).max(per + (2 << 30)) + scratch;
        }
        b
    }

    /// The taint job runs under memcheck, writing its XML log into the scratch folder (the
    /// worker's working directory in every jail mode).
    fn tool(&self) -> Option<crate::sandbox::jail::Tool> {
        match self {
            Request::Ct(CtJob {
                mode: CtMode::Taint { .. },
                ..
            }) => Some(crate::sandbox::jail::Tool {
                program: valgrind_program().into(),
                args: MEMCHECK_ARGS.iter().map(|a| a.to_string()).collect(),
                fixed_addresses: false,
            }),
            Request::Count(j) => Some(crate::sandbox::jail::Tool {
                program: valgrind_program().into(),
                args: callgrind_args(j.kind, &j.op).unwrap_or_default(),
                fixed_addresses: true,
            }),
            _ => None,
        }
    }

    /// A well-formed output of this job's kind whose status is a failure the worker admits,
    /// or `ok`/`complete` ("now judge my files and trials"); a verdict such as PASS never is.
    fn admits(&self, result: &Value) -> bool {
        let kat = |s: KatEnd| match s {
            KatEnd::Ok => true,
            KatEnd::Failed(k) => matches!(
                k,
                KatStatus::CryptoFail
                    | KatStatus::Overflow
                    | KatStatus::LoadFail
                    | KatStatus::Mismatch
                    | KatStatus::Crash
                    | KatStatus::NoKat
            ),
        };
        use ProcessStatus as P;
        match self {
            Request::Kat(_) => KatOutput::deserialize(result).is_ok_and(|o| kat(o.status)),
            Request::Vectors(_) => VectorsOutput::deserialize(result).is_ok_and(|o| kat(o.status)),
            Request::Calibrate(_) | Request::Trial(_) => OpOutput::deserialize(result)
                .is_ok_and(|o| matches!(o.status, P::Complete | P::Partial | P::Failed)),
            Request::Profile(_) => ProfileOutput::deserialize(result)
                .is_ok_and(|o| matches!(o.status, P::Complete | P::Failed)),
            Request::Ct(_) => CtOutput::deserialize(result)
                .is_ok_and(|o| matches!(o.status, P::Complete | P::Failed)),
            Request::Verify(_) => VerifyOutput::deserialize(result)
                .is_ok_and(|o| matches!(o.status, P::Complete | P::Failed)),
            Request::Count(_) => CountOutput::deserialize(result)
                .is_ok_and(|o| matches!(o.status, P::Complete | P::Failed)),
            Request::Memory(_) => MemoryOutput::deserialize(result)
                .is_ok_and(|o| matches!(o.op.status, P::Complete | P::Failed)),
        }
    }
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
    /// NIST flavour of randombytes.
    pub rng: KatRng,
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

/// How a KAT or vectors job ended.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(rename_all = "snake_case")]
pub enum KatEnd {
    /// Every file was written (judged by the orchestrator) or every value computed.
    Ok,
    /// Stopped at this KAT status (CRYPTOFAIL, OVERFLOW, LOADFAIL, NOKAT…).
    Failed(KatStatus),
}

impl std::fmt::Display for KatEnd {
    /// `ok`, or the status.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            KatEnd::Ok => f.write_str("ok"),
            KatEnd::Failed(s) => write!(f, "{s}"),
        }
    }
}

impl Default for KatEnd {
    /// No outcome yet (as the empty status string was).
    fn default() -> KatEnd {
        KatEnd::Failed(KatStatus::default())
    }
}

/// Outcome of a KAT job.
#[derive(Serialize, Deserialize, Debug, Clone, Default)]
pub struct KatOutput {
    pub status: KatEnd,
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
    /// Hex; the message signed (sig), or hashed (hash: its first `len` bytes per length).
    #[serde(default)]
    pub message: String,
    /// Hash: message lengths in bytes, one digest each.
    #[serde(default)]
    pub lengths: Vec<u64>,
}

/// `values` are (name, uppercase hex): pk, sk, ct, ss, ss_dec for a KEM; pk, sk, sig for a
/// signature; `len=<n>` and the digest of the first n message bytes for a hash.
#[derive(Serialize, Deserialize, Debug, Clone, Default)]
pub struct VectorsOutput {
    pub status: KatEnd,
    #[serde(default)]
    pub detail: Option<String>,
    #[serde(default)]
    pub values: Vec<(String, String)>,
}

/// One operation of one library: calibrate it (and save its setup), or time it.
#[derive(Serialize, Deserialize, Debug, Clone)]
pub struct OpJob {
    pub limits: Limits,
    pub library: PathBuf,
    pub kind: Kind,
    pub api: Api,
    pub op: Op,
    pub input_bytes: u64,
    /// Saved setup (key pairs, ciphertexts, signatures) shared by all processes of this op.
    pub setup_dir: PathBuf,
    /// XORed into the last seed byte, so trial processes draw different recorded streams.
    pub seed_tweak: u8,
    pub iterations: u64,
    pub warmups: u64,
    pub trials: u64,
    /// Force a counter instead of the best available.
    #[serde(default)]
    pub counter: Option<CounterKind>,
    /// NIST randomness other than the CTR_DRBG.
    #[serde(default)]
    pub rng: Option<BenchRng>,
    /// Seconds of batches a calibration child times (`measure::calibration::calibration_s`).
    #[serde(default = "default_calibration_s")]
    pub calibration_s: f64,
}

fn default_calibration_s() -> f64 {
    crate::measure::calibration::CALIBRATION_S
}

/// NIST randomness of a timing child instead of the CTR_DRBG.
#[derive(Serialize, Deserialize, Debug, Clone, Copy, PartialEq)]
#[serde(rename_all = "snake_case")]
pub enum BenchRng {
    /// Byte i = i mod 256 (benchmarks of the harness itself, same bytes as the C loop).
    Counter,
}

/// What a calibrate or trial child reports.
#[derive(Serialize, Deserialize, Debug, Clone, Default)]
pub struct OpOutput {
    /// `complete`, `partial` (some trials), `failed` (setup or operation error).
    pub status: ProcessStatus,
    #[serde(default)]
    pub error: Option<String>,
    /// The reference driver's META (strings).
    #[serde(default)]
    pub meta: serde_json::Map<String, serde_json::Value>,
    #[serde(default)]
    pub trials: Vec<crate::dataset::schema::Trial>,
    pub counter: CounterKind,
    /// What the trials timed (also in META, as the reference writes it).
    #[serde(default)]
    pub timing_scope: TimingScope,
    /// Seconds from process start of work to ready-to-time (load library, load/build setup).
    pub ready_s: f64,
    /// Seconds the one-off setup took when it was built (not loaded) by this process.
    pub prepare_s: f64,
    /// Seconds from the start of `main` to the end of the job (the rest of the process wall
    /// time is exec, runtime start-up and exit).
    #[serde(default)]
    pub end_s: f64,
    /// Calibration: per-call seconds (and ticks) of the median warm batch; the cold first call.
    #[serde(default)]
    pub t1_s: f64,
    #[serde(default)]
    pub t1_ticks: u64,
    /// Calibration: the fastest warm call.
    #[serde(default)]
    pub t1_min_s: f64,
    #[serde(default)]
    pub cold_s: f64,
    #[serde(default)]
    pub cold_ticks: u64,
    #[serde(default)]
    pub warm_calls: u64,
    #[serde(default)]
    pub warmup_calls: u64,
    /// Calibration: every timed warm batch.
    #[serde(default)]
    pub batches: Vec<crate::dataset::schema::CalibrationBatch>,
    #[serde(default)]
    pub stack_peak_bytes: Option<u64>,
    #[serde(default)]
    pub counter_overhead_ticks: u64,
    #[serde(default)]
    pub sandbox: String,
}

/// What a memory child reports: its operation's figures (`dataset::memory::OpMemory`).
#[derive(Serialize, Deserialize, Debug, Clone, Default)]
pub struct MemoryOutput {
    pub op: crate::dataset::memory::OpMemory,
    #[serde(default)]
    pub sandbox: String,
}

/// What a profile child reports (reference-harness.md §5.3: META, TOTAL, CALL lines).
#[derive(Serialize, Deserialize, Debug, Clone, Default)]
pub struct ProfileOutput {
    /// `complete` or `failed`.
    pub status: ProcessStatus,
    #[serde(default)]
    pub error: Option<String>,
    #[serde(default)]
    pub id: String,
    #[serde(default)]
    pub instance: String,
    #[serde(default)]
    pub tick_source: String,
    /// Ticks per second, from a 100 ms spin against CLOCK_MONOTONIC_RAW.
    #[serde(default)]
    pub tick_hz: f64,
    #[serde(default)]
    pub warmups: u64,
    /// Operations profiled and the ticks they took in all (accounting enabled).
    #[serde(default)]
    pub operations: u64,
    #[serde(default)]
    pub total_ticks: u64,
    #[serde(default)]
    pub overflow_calls: u64,
    #[serde(default)]
    pub calls: Vec<crate::dataset::schema::ProfileCall>,
    /// Wrapper cost per call in ticks: on the whole operation, and inside a helper's ticks.
    #[serde(default)]
    pub wrapper_ticks_per_call: f64,
    #[serde(default)]
    pub wrapper_inside_ticks_per_call: f64,
    /// Operations preempted (involuntary context switch) and taken back, and preempted
    /// operations kept because the take-back budget was spent or the journal overflowed.
    #[serde(default)]
    pub discarded_ops: u64,
    #[serde(default)]
    pub preempted_ops_kept: u64,
    #[serde(default)]
    pub sandbox: String,
    #[serde(default)]
    pub end_s: f64,
}

/// valgrind, as Debian installs it (its tools live in /usr/libexec/valgrind: both are under
/// /usr, which every jail shows read-only). Debian's `/usr/bin/valgrind` is a shell wrapper
/// (`#!/bin/sh`, and a jail has no /bin) that only sets environment variables for debug
/// libraries and execs this binary, so the jail execs the binary itself.
pub const VALGRIND: &str = "/usr/bin/valgrind.bin";
/// What the user runs (and `valgrind --version` asks) where there is no Debian wrapper.
pub const VALGRIND_WRAPPER: &str = "/usr/bin/valgrind";

/// The valgrind program a jail execs: the Debian binary when present, else the wrapper.
pub fn valgrind_program() -> &'static str {
    if std::path::Path::new(VALGRIND).is_file() {
        VALGRIND
    } else {
        VALGRIND_WRAPPER
    }
}
/// The name of memcheck's XML log in the job's scratch folder.
pub const MEMCHECK_XML: &str = "memcheck.xml";
/// memcheck options of the taint job: every error (no limit, no suppressions of ours), XML
/// log in the working directory, no leak check (not what we look for).
pub const MEMCHECK_ARGS: &[&str] = &[
    "--tool=memcheck",
    "--xml=yes",
    "--xml-file=memcheck.xml",
    "--error-limit=no",
    "--leak-check=no",
    "--track-origins=no",
    "--num-callers=16",
    "--quiet",
    // No gdbserver: its FIFOs are an IPC channel out of the job, and the jail's Landlock
    // (applied before valgrind starts) lets no FIFO be made.
    "--vgdb=no",
];

/// One constant-time job: which operation, on which library, and which method.
#[derive(Serialize, Deserialize, Debug, Clone)]
pub struct CtJob {
    pub limits: Limits,
    pub library: PathBuf,
    pub kind: Kind,
    pub api: Api,
    pub op: Op,
    /// An empty folder in scratch: the job builds its setup (key pair, ciphertext) itself.
    pub setup_dir: PathBuf,
    pub mode: CtMode,
    /// Byte ranges `[start, end)` of the secret key that are public data (the manifest's
    /// `ct_sk_public`): not marked secret in the first taint stage.
    #[serde(default)]
    pub sk_public: Vec<(u64, u64)>,
}

/// What a verify child computed from a trial's last outputs.
#[derive(Serialize, Deserialize, Debug, Clone, Default)]
pub struct VerifyOutput {
    /// `complete` (values computed) or `failed` (could not load or call).
    pub status: ProcessStatus,
    #[serde(default)]
    pub error: Option<String>,
    #[serde(default)]
    pub values: Vec<VerifyValue>,
    #[serde(default)]
    pub sandbox: String,
}

/// One recomputed value and what it must equal.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct VerifyValue {
    /// What was recomputed, in words (`the shared secret decapsulated from the last ct`).
    pub what: String,
    /// Uppercase hex, or a word (`accepted`).
    pub got: String,
    pub expect: Expect,
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(rename_all = "snake_case")]
pub enum CtMode {
    /// Under memcheck: the secrets marked undefined, the operation run `runs` times per stage.
    Taint { runs: u32 },
    /// Fixed-vs-random inputs interleaved at random, one counter reading per call, until
    /// `measurements` calls or `budget_s` seconds; the timings go to [`CT_TIMINGS`].
    Dudect {
        measurements: u64,
        budget_s: f64,
        /// Seeds the class choice and the random inputs (recorded).
        seed: u64,
    },
}

/// The dudect timings in scratch: per call one little-endian u64 of ticks, then one u8 class
/// per call (0 fixed, 1 random), in call order.
pub const CT_TIMINGS: &str = "dudect.bin";

/// What a ct child reports (facts only; the orchestrator reads the XML log or the timings
/// and computes every figure itself).
#[derive(Serialize, Deserialize, Debug, Clone, Default)]
pub struct CtOutput {
    pub status: ProcessStatus,
    #[serde(default)]
    pub error: Option<String>,
    /// What was marked secret, e.g. `sk[0..1152]`, `randombytes output`.
    #[serde(default)]
    pub secrets: Vec<String>,
    /// Taint: the stages run, in order (each begins with a marker line in the XML log).
    #[serde(default)]
    pub stages: Vec<String>,
    /// Taint: operations run per stage; dudect: calls timed.
    #[serde(default)]
    pub calls: u64,
    /// Dudect: what the two classes are.
    #[serde(default)]
    pub classes: Vec<String>,
    #[serde(default)]
    pub counter: CounterKind,
    /// Seconds of the measurement (dudect) or of the stages (taint).
    #[serde(default)]
    pub work_s: f64,
    #[serde(default)]
    pub sandbox: String,
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(rename_all = "snake_case")]
pub enum Expect {
    /// The bytes of this file of the last outputs (read by the orchestrator).
    File(String),
    /// This value.
    Equal(String),
}

/// The callgrind output file in the job's scratch folder: the dump after counted call i is
/// `callgrind.out.<i>` (callgrind numbers its dumps from 1), the end-of-program dump is this
/// name alone.
pub const CALLGRIND_OUT: &str = "callgrind.out";

/// callgrind options of the count job: no instrumentation until the harness reaches the
/// library (the worker's own start-up, JIT-translated without callgrind's instrumentation and
/// cache simulation, costs about a third less: 52 -> 43 CPU-s for the demo's 55 jobs);
/// collection off at start and toggled on entering and
/// off leaving the shim's entry point of the operation (`--toggle-collect`, so only the
/// library call counts, never our code around it); the cache simulation with a fixed cache
/// model (not the host's, so counts do not depend on the machine); no per-line positions
/// (libraries are built without -g).
pub fn callgrind_args(kind: Kind, op: &Op) -> Option<Vec<String>> {
    let mut args: Vec<String> = [
        "--tool=callgrind",
        "--instr-atstart=no",
        "--collect-atstart=no",
        "--cache-sim=yes",
        "--dump-line=no",
        "--compress-pos=no",
        "--callgrind-out-file=callgrind.out",
        "--quiet",
    ]
    .iter()
    .map(|a| a.to_string())
    .collect();
    args.extend(crate::dataset::count::CACHE_MODEL.args());
    for entry in count_entry_points(kind, op)? {
        args.push(format!("{}{entry}", crate::dataset::count::TOGGLE_COLLECT));
    }
    Some(args)
}

/// The shim's entry points whose calls are the counted operation (`None`: not countable,
/// a KEX pass, whose steps share one entry point).
pub fn count_entry_points(kind: Kind, op: &Op) -> Option<Vec<&'static str>> {
    Some(match (kind, op) {
        (Kind::Kem, Op::Keygen) => vec!["ngcc_kem_keygen"],
        (Kind::Kem, Op::Enc) => vec!["ngcc_kem_enc"],
        (Kind::Kem, Op::Dec) => vec!["ngcc_kem_dec"],
        (Kind::Sig, Op::Keygen) => vec!["ngcc_sig_keygen"],
        (Kind::Sig, Op::Sign) => vec!["ngcc_sig_sign"],
        (Kind::Sig, Op::Verify) => vec!["ngcc_sig_verify"],
        (Kind::Hash, _) => vec!["ngcc_hash"],
        (Kind::Kex, Op::Exchange) => vec![
            "ngcc_kex_init_a",
            "ngcc_kex_init_b",
            "ngcc_kex_pass",
            "ngcc_kex_derive_a",
            "ngcc_kex_derive_b",
        ],
        (Kind::Kex, Op::InitA) => vec!["ngcc_kex_init_a"],
        (Kind::Kex, Op::InitB) => vec!["ngcc_kex_init_b"],
        (Kind::Kex, Op::DeriveA) => vec!["ngcc_kex_derive_a"],
        (Kind::Kex, Op::DeriveB) => vec!["ngcc_kex_derive_b"],
        _ => return None,
    })
}

/// One count job: the operation prepared as a trial prepares it (the calibration's saved
/// setup when there is one, the same seed), `warmups` calls, then `calls` calls,
/// each dumped to its own callgrind file.
#[derive(Serialize, Deserialize, Debug, Clone)]
pub struct CountJob {
    pub limits: Limits,
    pub library: PathBuf,
    pub kind: Kind,
    pub api: Api,
    pub op: Op,
    pub input_bytes: u64,
    /// The calibration's saved setup, or an empty folder (the job builds the setup itself
    /// from the same seed, as the calibration did).
    pub setup_dir: PathBuf,
    pub seed_tweak: u8,
    pub warmups: u64,
    pub calls: u64,
    /// The job's CPU budget: RLIMIT_CPU's soft limit (SIGXCPU, a kill the job's status names),
    /// set below `limits.cpu_seconds`, the hard one (SIGKILL, for code that catches SIGXCPU).
    #[serde(default)]
    pub cpu_soft_s: Option<u64>,
}

/// What a count job reports (facts only; the orchestrator reads the callgrind files).
#[derive(Serialize, Deserialize, Debug, Clone, Default)]
pub struct CountOutput {
    pub status: ProcessStatus,
    #[serde(default)]
    pub error: Option<String>,
    /// Counted calls (each followed by one dump).
    #[serde(default)]
    pub calls: u64,
    #[serde(default)]
    pub warmups: u64,
    /// `loaded` (the calibration's setup) or `built` (from the seed, in the job).
    #[serde(default)]
    pub setup: String,
    /// The 48-byte seed the randomness was drawn from (hex), after the setup.
    #[serde(default)]
    pub seed: String,
    #[serde(default)]
    pub work_s: f64,
    /// CPU seconds of the same calls (the process's).
    #[serde(default)]
    pub work_cpu_s: f64,
    #[serde(default)]
    pub sandbox: String,
    /// Whether this process ran with address-space randomisation off, as read from its
    /// own persona (not as asked for).
    #[serde(default)]
    pub fixed_addresses: bool,
}

#[cfg(test)]
mod request_tests {
    use super::*;

    /// The worker's request carries no path of the orchestrator: where the run lies must not
    /// change the worker's memory (a count depends on its heap layout).
    #[test]
    fn a_request_reaches_the_worker_without_paths() {
        let job = |root: &str| {
            Request::Count(CountJob {
                limits: Limits::default(),
                library: format!("{root}/lib/x/libx.so").into(),
                kind: Kind::Kem,
                api: Api::Nist,
                op: Op::Enc,
                input_bytes: 0,
                setup_dir: format!("{root}/setup/x").into(),
                seed_tweak: 0,
                warmups: 3,
                calls: 10,
                cpu_soft_s: Some(100),
            })
        };
        let (a, b) = (job("/tmp/a"), job("/tmp/a-much-longer-run-directory"));
        let va = a.request_value().unwrap();
        assert_eq!(va, b.request_value().unwrap());
        assert!(!va.to_string().contains("/tmp"), "{va}");
        // The paths travel in the file list, which the jail maps.
        assert_eq!(a.files().library, PathBuf::from("/tmp/a/lib/x/libx.so"));
    }
}
