//! Which instances are timed, and which operations each has (reference §1.7, §1.10).

use super::host_gate::{self, HostState};
use super::shard::in_shard;
use super::{Phase, Selected, Settings};
use crate::candidate::Kind;
use crate::dataset::schema::{
    BuildEntry, BuildFile, Calibration, KatStatus, Op, Planning, ProcessStatus,
};
use crate::rundir::RunDir;

/// KAT statuses that are timed anyway, flagged `kat_not_passed` (reference §1.6).
pub const TIMED_WITHOUT_PASS: &[KatStatus] = &[
    KatStatus::Mismatch,
    KatStatus::NoKat,
    KatStatus::Partial,
    KatStatus::CryptoFail,
    KatStatus::Timeout,
    KatStatus::Overflow,
];
pub use crate::dataset::guide::HASH_SIZES;

/// A `kat_issues.csv` row (`ID;Label;Action;Cause`): Label is a regex searched in the label.
#[derive(Debug, Clone)]
pub struct KatIssue {
    pub id: String,
    pub label: regex_lite::Regex,
    pub action: String,
    pub cause: String,
}

pub fn load_kat_issues(path: &std::path::Path) -> anyhow::Result<Vec<KatIssue>> {
    let text =
        std::fs::read_to_string(path).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim_end();
        if line.is_empty() || line.starts_with('#') || line.starts_with("ID;") {
            continue;
        }
        let parts: Vec<&str> = line.splitn(4, ';').collect();
        if parts.len() < 3 {
            anyhow::bail!(
                "{}:{}: expected ID;Label;Action;Cause",
                path.display(),
                n + 1
            );
        }
        let label = regex_lite::Regex::new(parts[1])
            .map_err(|e| anyhow::anyhow!("{}:{}: bad Label regex: {e}", path.display(), n + 1))?;
        out.push(KatIssue {
            id: parts[0].into(),
            label,
            action: parts[2].into(),
            cause: parts.get(3).unwrap_or(&"").to_string(),
        });
    }
    Ok(out)
}

/// Whether an instance is timed; `Err(reason)` says why not.
pub fn measurable(
    run: &RunDir,
    entry: Option<&BuildEntry>,
    issues: &[KatIssue],
) -> Result<BuildEntry, String> {
    let Some(e) = entry else {
        return Err("never built (run the build phase)".into());
    };
    if let Some(i) = issues
        .iter()
        .find(|i| i.id == e.candidate && i.label.is_match(&e.label) && i.action == "exclude")
    {
        return Err(format!("excluded by kat_issues.csv: {}", i.cause));
    }
    if !e.is_built() || e.kat == KatStatus::BuildFail {
        return Err(format!(
            "build failed: {}",
            e.build_error.as_deref().unwrap_or("see the build log")
        ));
    }
    if e.kat == KatStatus::Pending {
        return Err("KAT not run yet (run the kat phase)".into());
    }
    if e.kat != KatStatus::Pass && !TIMED_WITHOUT_PASS.contains(&e.kat) {
        return Err(format!("KAT status {} is never timed", e.kat));
    }
    let lib = e.library.as_deref().map(|l| run.path(l));
    if !lib.as_ref().is_some_and(|l| l.is_file()) {
        return Err("library file is missing".into());
    }
    Ok(e.clone())
}

/// One operation of an instance to time: the operation and its input length.
#[derive(Clone, Debug, PartialEq)]
pub struct OpSpec {
    pub op: Op,
    pub input_bytes: u64,
}

impl OpSpec {
    pub fn plain(op: Op) -> OpSpec {
        OpSpec { op, input_bytes: 0 }
    }

    /// `keygen`, `hash_1024`, `pass2`: names its calibration, setup, record and profile.
    pub fn key(&self) -> String {
        self.op.key(self.input_bytes)
    }
}

/// The operations of an instance; KEX steps need the exchange calibration.
pub fn operations(kind: Kind, exchange: Option<&Calibration>) -> Vec<OpSpec> {
    let plain = |ops: &[Op]| ops.iter().cloned().map(OpSpec::plain).collect();
    match kind {
        Kind::Kem => plain(&[Op::Keygen, Op::Enc, Op::Dec]),
        Kind::Sig => plain(&[Op::Keygen, Op::Sign, Op::Verify]),
        Kind::Hash => HASH_SIZES
            .iter()
            .map(|&b| OpSpec {
                op: Op::Hash,
                input_bytes: b,
            })
            .collect(),
        Kind::Kex => {
            let mut ops = vec![Op::Exchange];
            if let Some(c) = exchange.filter(|c| c.status == ProcessStatus::Complete) {
                let num = |k: &str| {
                    c.meta
                        .get(k)
                        .and_then(|v| v.as_str())
                        .and_then(|s| s.parse::<u64>().ok())
                        .unwrap_or(0)
                };
                let passes = num("kex_passes").min(num("kex_passes_run"));
                ops.push(Op::InitA);
                ops.push(Op::InitB);
                ops.extend((1..=passes).map(|k| Op::from(format!("pass{k}").as_str())));
                ops.push(Op::DeriveA);
                ops.push(Op::DeriveB);
            }
            ops.into_iter().map(OpSpec::plain).collect()
        }
    }
}

/// A selected instance that will be timed, with its build entry.
pub type Measurable = (Selected, BuildEntry);

/// What a timing phase (calibrate, measure, profile) starts from.
pub struct PhaseStart {
    pub host: HostState,
    pub todo: Vec<Measurable>,
    /// (instance key, reason)
    pub skipped: Vec<(String, String)>,
}

/// The host check with `planning`, then the selection split into instances to time and
/// skipped ones.
pub fn gate_and_split(
    run: &RunDir,
    phase: Phase,
    selected: &[Selected],
    settings: &Settings,
    planning: &Planning,
) -> anyhow::Result<PhaseStart> {
    let host = host_gate::check(
        run,
        phase.name(),
        settings.cpu,
        settings.allow_unfixed_host,
        planning,
        settings.shard,
    )?;
    let issues = match &settings.kat_issues {
        Some(p) => load_kat_issues(p)?,
        None => Vec::new(),
    };
    let build = run.load_build()?;
    let (todo, skipped) = split(run, &build, selected, &issues, settings.shard);
    Ok(PhaseStart {
        host,
        todo,
        skipped,
    })
}

/// Selected instances that are measurable, plus the skipped ones with reasons.
pub fn split(
    run: &RunDir,
    build: &BuildFile,
    selected: &[Selected],
    issues: &[KatIssue],
    shard: Option<(u32, u32)>,
) -> (Vec<Measurable>, Vec<(String, String)>) {
    let mut ok = Vec::new();
    let mut skipped = Vec::new();
    for s in selected.iter().filter(|s| in_shard(&s.key(), shard)) {
        match measurable(run, build.entry(&s.key()).as_ref(), issues) {
            Ok(e) => ok.push((s.clone(), e)),
            Err(reason) => skipped.push((s.key(), reason)),
        }
    }
    (ok, skipped)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_partition_the_keys() {
        let keys: Vec<String> = (0..200).map(|i| format!("cand/label-{i}")).collect();
        for n in 1..5 {
            for key in &keys {
                let hits = (1..=n).filter(|&k| in_shard(key, Some((k, n)))).count();
                assert_eq!(hits, 1, "{key} in {hits} of {n} shards");
            }
        }
    }

    #[test]
    fn kex_steps_follow_the_exchange() {
        let mut c = Calibration {
            status: ProcessStatus::Complete,
            ..Calibration::default()
        };
        c.meta.insert("kex_passes".into(), "2".into());
        c.meta.insert("kex_passes_run".into(), "2".into());
        let ops: Vec<String> = operations(Kind::Kex, Some(&c))
            .iter()
            .map(OpSpec::key)
            .collect();
        assert_eq!(
            ops,
            [
                "exchange", "init_a", "init_b", "pass1", "pass2", "derive_a", "derive_b"
            ]
        );
        assert_eq!(operations(Kind::Kex, None).len(), 1);
        assert_eq!(operations(Kind::Hash, None)[7].key(), "hash_65536");
    }
}
