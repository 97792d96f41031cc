//! Instruction-count records (issue 35, phase `count`): `count/<cand>/<label>__<op>.json`
//! and the callgrind output they were read from, `count/<cand>/<label>__<op>.callgrind`
//! (the per-call dumps, one after the other). Every JSON field name of the record is here;
//! the figures a page shows (`CountSummary`) are pure functions of the per-call counts, which
//! are pure functions of the callgrind text, so `validate` recomputes both.

use super::schema::{Op, ProcessStatus};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Version of the count record layout.
pub const COUNT_SCHEMA: u32 = 1;
/// Top folder of the count records in a run and a dataset.
pub const COUNT_DIR: &str = "count";
/// Extension of the raw callgrind text beside each record.
pub const RAW_EXT: &str = "callgrind";
/// The dump after counted call i is triggered as `<prefix> <i>` (its `desc: Trigger:` line
/// reads `Client Request: <prefix> <i>`).
pub const DUMP_PREFIX: &str = "ngcc-count-call";
/// The dump that closes the warm-up (callgrind's file 1, discarded).
pub const WARMUP_DUMP: &str = "ngcc-count-warmup";
/// callgrind's option naming an entry point whose calls are collected (one per entry point).
pub const TOGGLE_COLLECT: &str = "--toggle-collect=";

/// One cache level of callgrind's simulation.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheLevel {
    pub size_bytes: u64,
    pub ways: u32,
    pub line_bytes: u32,
}

impl CacheLevel {
    /// callgrind's `--I1=`/`--D1=`/`--LL=` value: size,associativity,line size.
    fn arg(&self) -> String {
        format!("{},{},{}", self.size_bytes, self.ways, self.line_bytes)
    }
}

/// The simulated caches. Fixed, not the host's (callgrind would otherwise read them from
/// CPUID), so two machines give the same misses for the same instruction stream.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheModel {
    pub i1: CacheLevel,
    pub d1: CacheLevel,
    pub ll: CacheLevel,
}

/// 32 KiB 8-way L1 instruction and data caches and an 8 MiB 16-way last level, 64-byte
/// lines: a common x86-64 desktop and server core of the last decade.
pub const CACHE_MODEL: CacheModel = CacheModel {
    i1: CacheLevel {
        size_bytes: 32 << 10,
        ways: 8,
        line_bytes: 64,
    },
    d1: CacheLevel {
        size_bytes: 32 << 10,
        ways: 8,
        line_bytes: 64,
    },
    ll: CacheLevel {
        size_bytes: 8 << 20,
        ways: 16,
        line_bytes: 64,
    },
};

impl CacheModel {
    /// The callgrind options that set this model.
    pub fn args(&self) -> Vec<String> {
        vec![
            format!("--I1={}", self.i1.arg()),
            format!("--D1={}", self.d1.arg()),
            format!("--LL={}", self.ll.arg()),
        ]
    }
}

/// Weights of the estimated cycles: every instruction fetch and data access that hits L1
/// costs `l1_hit`, one that misses L1 and hits the last level `ll_hit`, one that misses
/// both `memory`. A model of a machine, not a measurement, and never called cycles.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
pub struct EstimateWeights {
    pub l1_hit: u64,
    pub ll_hit: u64,
    pub memory: u64,
}

impl Default for EstimateWeights {
    fn default() -> EstimateWeights {
        ESTIMATE_WEIGHTS
    }
}

/// The weights used for every record (the common 1/5/35 model of callgrind-based benchmark
/// tools).
pub const ESTIMATE_WEIGHTS: EstimateWeights = EstimateWeights {
    l1_hit: 1,
    ll_hit: 5,
    memory: 35,
};

/// callgrind's events for one counted call, and the instructions inside the helpers.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
pub struct CallCount {
    /// Instructions executed.
    pub ir: u64,
    /// Data reads and writes.
    pub dr: u64,
    pub dw: u64,
    /// L1 misses: instruction fetch, data read, data write.
    pub i1mr: u64,
    pub d1mr: u64,
    pub d1mw: u64,
    /// Last-level misses: instruction fetch, data read, data write.
    pub ilmr: u64,
    pub dlmr: u64,
    pub dlmw: u64,
    /// Instructions inside the hash/XOF/DRNG helpers (inclusive: what they call counts;
    /// a helper called from inside a helper counts once).
    pub helper_ir: u64,
    /// The same per helper function (inclusive), by name.
    #[serde(default)]
    pub helpers: BTreeMap<String, u64>,
}

impl CallCount {
    pub fn l1_misses(&self) -> u64 {
        self.i1mr + self.d1mr + self.d1mw
    }

    pub fn ll_misses(&self) -> u64 {
        self.ilmr + self.dlmr + self.dlmw
    }

    /// [`ESTIMATE_WEIGHTS`] applied to the accesses: L1 hits, L1 misses that hit the last
    /// level, last-level misses.
    pub fn estimated_cycles(&self, w: &EstimateWeights) -> u64 {
        let accesses = self.ir + self.dr + self.dw;
        let l1_hits = accesses.saturating_sub(self.l1_misses());
        let ll_hits = self.l1_misses().saturating_sub(self.ll_misses());
        l1_hits * w.l1_hit + ll_hits * w.ll_hit + self.ll_misses() * w.memory
    }
}

/// The figures pages show, from the calls alone (`summarize`).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct CountSummary {
    pub calls: u64,
    pub ir_mean: f64,
    pub ir_min: u64,
    pub ir_max: u64,
    pub estimated_cycles_mean: f64,
    pub estimated_cycles_min: u64,
    pub estimated_cycles_max: u64,
    pub dr_mean: f64,
    pub dw_mean: f64,
    pub l1_misses_mean: f64,
    pub ll_misses_mean: f64,
    /// Helper instructions over all instructions of the calls: all helpers, the hash/XOF
    /// ones, the randomness ones (the profile phase's `hash_share` and DRNG share).
    pub helper_share: f64,
    pub hash_share: f64,
    pub rng_share: f64,
    /// Every call executed the same number of instructions.
    pub constant_ir: bool,
}

/// The summary of `calls` (None for no calls); `rng_fns` are the helpers that are
/// randomness, not hashing.
pub fn summarize(
    calls: &[CallCount],
    w: &EstimateWeights,
    rng_fns: &[String],
) -> Option<CountSummary> {
    if calls.is_empty() {
        return None;
    }
    let n = calls.len() as f64;
    let mean = |f: &dyn Fn(&CallCount) -> u64| calls.iter().map(|c| f(c) as f64).sum::<f64>() / n;
    let est: Vec<u64> = calls.iter().map(|c| c.estimated_cycles(w)).collect();
    let ir_total: u64 = calls.iter().map(|c| c.ir).sum();
    let helper_total: u64 = calls.iter().map(|c| c.helper_ir).sum();
    let rng_total: u64 = calls
        .iter()
        .flat_map(|c| c.helpers.iter())
        .filter(|(n, _)| rng_fns.contains(n))
        .map(|(_, v)| v)
        .sum();
    let share = |part: u64| {
        if ir_total == 0 {
            0.0
        } else {
            part as f64 / ir_total as f64
        }
    };
    let ir_min = calls.iter().map(|c| c.ir).min().unwrap_or(0);
    let ir_max = calls.iter().map(|c| c.ir).max().unwrap_or(0);
    Some(CountSummary {
        calls: calls.len() as u64,
        ir_mean: mean(&|c| c.ir),
        ir_min,
        ir_max,
        estimated_cycles_mean: est.iter().map(|&e| e as f64).sum::<f64>() / n,
        estimated_cycles_min: est.iter().copied().min().unwrap_or(0),
        estimated_cycles_max: est.iter().copied().max().unwrap_or(0),
        dr_mean: mean(&|c| c.dr),
        dw_mean: mean(&|c| c.dw),
        l1_misses_mean: mean(&|c| c.l1_misses()),
        ll_misses_mean: mean(&|c| c.ll_misses()),
        helper_share: share(helper_total),
        hash_share: share(helper_total.saturating_sub(rng_total)),
        rng_share: share(rng_total),
        constant_ir: ir_min == ir_max,
    })
}

/// valgrind client-request sequences found in a library's bytes: code that talks to
/// valgrind (asks whether it runs under it, or changes memcheck's view of memory).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
pub struct ClientRequests {
    /// sha256 of the file scanned.
    pub library_sha256: String,
    /// Sequences found (the fixed preamble of valgrind.h followed by a request marker).
    pub found: u64,
    /// `x86-64` or `aarch64` per sequence, with its file offset (at most 16 listed).
    pub sites: Vec<ClientRequestSite>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
pub struct ClientRequestSite {
    pub arch: String,
    pub offset: u64,
    /// What the marker after the preamble asks (`client request`, `get nraddr`, …).
    pub request: String,
}

/// The raw tool output beside a record.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
pub struct RawOutput {
    /// Relative to the run (or dataset) root: `count/<cand>/<label>__<op>.callgrind`.
    pub path: String,
    pub sha256: String,
    pub bytes: u64,
}

/// One operation's instruction counts.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct CountRecord {
    pub schema: u32,
    pub candidate: String,
    pub label: String,
    pub operation: Op,
    /// Hash: the message length (the operation's key is `hash_<bytes>`); 0 otherwise.
    #[serde(default)]
    pub input_bytes: u64,
    pub status: ProcessStatus,
    #[serde(default)]
    pub error: Option<String>,
    /// The timed library's sha256 (the library counted is the timed one).
    pub library_sha256: String,
    /// `valgrind --version`.
    pub tool: String,
    /// The options valgrind ran with (tool, collection toggles, cache model).
    pub tool_args: Vec<String>,
    pub cache_model: CacheModel,
    pub estimate_weights: EstimateWeights,
    /// How collection was limited to the counted calls, in words.
    pub collection: String,
    /// The randomness: the 48-byte seed (hex), the trial process's tweak it corresponds to.
    pub seed: String,
    pub seed_tweak: u8,
    /// Calls before the counted ones (not counted), as a trial warms up.
    pub warmups: u64,
    /// `loaded` (the calibration's saved setup, as trials load it) or `built` (from the
    /// same seed, in the count job).
    pub setup: String,
    /// Per counted call, in order.
    pub calls: Vec<CallCount>,
    #[serde(default)]
    pub summary: Option<CountSummary>,
    /// Function names counted as helpers (the profile phase's set for this API), and those
    /// of them that are randomness (DRNG, randombytes).
    pub helper_fns: Vec<String>,
    #[serde(default)]
    pub rng_fns: Vec<String>,
    #[serde(default)]
    pub raw: Option<RawOutput>,
    /// The library talks to valgrind: its counts may describe what it chose to do there.
    #[serde(default)]
    pub client_requests: Option<ClientRequests>,
    pub wall_s: f64,
    /// CPU seconds of the whole jail (valgrind's start-up included), and the seconds the job
    /// spent in its warm-up and counted calls under callgrind (its slowdown against a trial).
    #[serde(default)]
    pub cpu_s: f64,
    #[serde(default)]
    pub work_s: f64,
    /// The process's CPU seconds over the same calls (0 in records from before it existed).
    #[serde(default)]
    pub work_cpu_s: f64,
    #[serde(default)]
    pub sandbox: String,
    /// How the job's address space was laid out (the job read its own persona).
    #[serde(default)]
    pub address_space: AddressSpace,
    /// The job's bounds: CPU seconds of its process (RLIMIT_CPU, its share of
    /// `--count-budget`) and the wall-clock safety net (0 in records from before them).
    #[serde(default)]
    pub cpu_budget_s: u64,
    #[serde(default)]
    pub wall_bound_s: u64,
    /// The bound that ended the job, when one did (status `hard_timeout`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_by: Option<JobBound>,
}

/// The bound a count job ran into.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum JobBound {
    /// Its CPU budget: the kernel killed its process at RLIMIT_CPU.
    Cpu,
    /// The wall-clock safety net: the orchestrator stopped it.
    Wall,
}

/// Whether the counted process ran with address-space randomisation off. With it on, the
/// stack, heap and mappings move per process, and glibc's copy and allocation paths (which
/// branch on alignment and heap layout) can execute a few instructions more or fewer from
/// one run to the next.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum AddressSpace {
    /// A record from before the field existed: not known.
    #[default]
    Unrecorded,
    /// `personality(ADDR_NO_RANDOMIZE)` was in force: the same layout every run.
    Fixed,
    /// Randomisation was on (the persona could not be set).
    Randomized,
}

impl CountRecord {
    /// Whether the library contains valgrind client requests (its counts are marked).
    pub fn valgrind_aware(&self) -> bool {
        self.client_requests.as_ref().is_some_and(|c| c.found > 0)
    }

    /// The entry points callgrind collected the calls of, as its options named them.
    pub fn entry_fns(&self) -> Vec<String> {
        self.tool_args
            .iter()
            .filter_map(|a| a.strip_prefix(TOGGLE_COLLECT))
            .map(str::to_string)
            .collect()
    }
}

/// The record's file name stem: `<label>__<op key>`.
pub fn stem(label: &str, op: &Op, input_bytes: u64) -> String {
    format!("{label}__{}", op.key(input_bytes))
}

/// Splits the raw text into its per-call dumps (each begins with `# callgrind format`).
pub fn split_dumps(text: &str) -> Vec<&str> {
    const HEAD: &str = "# callgrind format";
    let mut starts: Vec<usize> = text.match_indices(HEAD).map(|(i, _)| i).collect();
    starts.retain(|&i| i == 0 || text.as_bytes()[i - 1] == b'\n');
    let mut out = Vec::new();
    for (k, &s) in starts.iter().enumerate() {
        let e = starts.get(k + 1).copied().unwrap_or(text.len());
        out.push(&text[s..e]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimated_cycles_weigh_hits_and_misses() {
        let c = CallCount {
            ir: 100,
            dr: 20,
            dw: 10,
            i1mr: 2,
            d1mr: 3,
            d1mw: 1,
            ilmr: 1,
            dlmr: 1,
            dlmw: 0,
            ..CallCount::default()
        };
        // 130 accesses, 6 L1 misses of which 2 miss LL: 124 + 4·5 + 2·35.
        assert_eq!(c.estimated_cycles(&ESTIMATE_WEIGHTS), 124 + 20 + 70);
        let s = summarize(&[c.clone(), c], &ESTIMATE_WEIGHTS, &[]).unwrap();
        assert!(s.constant_ir);
        assert_eq!(s.ir_min, 100);
    }

    #[test]
    fn dumps_split_at_their_headers() {
        let t = "# callgrind format\na\n# callgrind format\nb\n";
        assert_eq!(
            split_dumps(t),
            vec!["# callgrind format\na\n", "# callgrind format\nb\n"]
        );
    }
}
