//! Closed vocabularies: statuses, flag sets, counters, operations, RNGs, timing scopes.

use serde::{Deserialize, Serialize};

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
        /// Killed at its wall-clock timeout (a count job also at its CPU budget; its
        /// record's `ended_by` says which).
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
