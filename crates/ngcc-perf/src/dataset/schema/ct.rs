//! ct/<cand>/<label>__<op>.json (ours: constant-time evidence, issue 17)

use serde::{Deserialize, Serialize};

use super::{CounterKind, Op, ProcessStatus};

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
    pub client_requests: Option<crate::dataset::count::ClientRequests>,
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
