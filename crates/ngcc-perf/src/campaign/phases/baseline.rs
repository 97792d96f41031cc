//! Phase `baseline` (reference §1.13): the ICCS helpers `sm3hash`, `pseudohash` and
//! `pseudoXOF` as hash instances of the pseudo-candidate `iccs`. They are built from the
//! official ICCS API files (`--iccs-helpers DIR`) or from ngcc-perf's embedded copy
//! (`csrc/iccs`), each through a `CryptHash` entry point (`csrc/iccs/helper_hash.*`) and the
//! ordinary shim; self-tested against the Rust model (crate `ngcc-iccs`) as their KAT; then
//! calibrated and measured at S1–S8 like any hash instance (`records/iccs/<label>__hash_<n>`).
//! The summary divides each hash candidate's cycles by those of `pseudoXOF` at the same
//! output width and message length.

use super::build::build_with_fallback;
use crate::campaign::context::MeasureCtx;
use crate::campaign::{Phase, Selected, Settings, host_gate, measurable, select};
use crate::candidate::{Api, Candidate, Instance, Kind};
use crate::child::protocol::{KatEnd, Limits, Request, VectorsJob, VectorsOutput};
use crate::dataset::schema::baseline::{CANDIDATE, EMBEDDED, OFFICIAL, VARIANT};
use crate::dataset::schema::{BuildEntry, HostEnv, KatStatus, Record, RecordStatus};
use crate::rundir::{BuildState, RunDir};
use crate::sandbox::{self, Exit, Spec};
use crate::util::{Failure, atomic_write, read_json, sha256_file};
use anyhow::{Context, Result};
use serde_json::Value;
use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::PathBuf;

/// `pseudoXOF` widths the reference always times (the digest widths of its hash candidates).
pub const XOF_BITS: &[u32] = &[256, 384, 512, 768, 1024, 1152, 1280, 2048];
/// `pseudohash` exists only at these widths.
pub const PSEUDOHASH_BITS: &[u32] = &[512, 768, 1024];
/// Self-test message lengths in bytes (reference §1.13).
pub const SELFTEST_LENGTHS: &[u64] = &[
    0, 1, 3, 31, 32, 55, 56, 63, 64, 65, 119, 128, 512, 1024, 4096, 8192, 16384, 65536,
];
/// One ICCS helper function.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Func {
    Sm3hash,
    Pseudohash,
    PseudoXof,
}

impl Func {
    pub fn name(self) -> &'static str {
        match self {
            Func::Sm3hash => "sm3hash",
            Func::Pseudohash => "pseudohash",
            Func::PseudoXof => "pseudoXOF",
        }
    }
    /// `NGCC_HELPER` of `helper_hash.h`.
    fn code(self) -> u32 {
        match self {
            Func::Sm3hash => 1,
            Func::Pseudohash => 2,
            Func::PseudoXof => 3,
        }
    }
}

/// One helper at one output width: a hash instance `iccs/<label>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Helper {
    pub func: Func,
    pub bits: u32,
}

impl Helper {
    /// `sm3hash-256`, `pseudohash-512`, `pseudoXOF-1280`: the reference's labels.
    pub fn label(&self) -> String {
        format!("{}-{}", self.func.name(), self.bits)
    }

    /// The Rust model's output for the first `bits` bits of `msg`.
    pub fn model(&self, msg: &[u8], bits: u64) -> Result<Vec<u8>> {
        Ok(match self.func {
            Func::Sm3hash => ngcc_iccs::sm3::sm3hash(self.bits, msg, bits)
                .map_err(|e| anyhow::anyhow!("model sm3hash: {e:?}"))?
                .to_vec(),
            Func::Pseudohash => ngcc_iccs::pseudo::pseudohash(self.bits, msg, bits)
                .map_err(|e| anyhow::anyhow!("model pseudohash: {e:?}"))?,
            Func::PseudoXof => ngcc_iccs::pseudo::pseudo_xof(u64::from(self.bits), msg, bits),
        })
    }
}

/// The helpers to time: `sm3hash-256`, `pseudohash-512/768/1024` and `pseudoXOF` at the
/// reference's eight widths plus every other digest width in `widths` (sorted, unique).
pub fn helpers(widths: &BTreeSet<u32>) -> Vec<Helper> {
    let mut out = vec![Helper {
        func: Func::Sm3hash,
        bits: 256,
    }];
    out.extend(PSEUDOHASH_BITS.iter().map(|&bits| Helper {
        func: Func::Pseudohash,
        bits,
    }));
    let xof: BTreeSet<u32> = XOF_BITS
        .iter()
        .copied()
        .chain(widths.iter().copied().filter(|&b| b > 0))
        .collect();
    out.extend(xof.into_iter().map(|bits| Helper {
        func: Func::PseudoXof,
        bits,
    }));
    out
}

/// The self-test message: byte i is `(7·i + 1) mod 256` (the reference's, so the digests in
/// the logs can be compared with its published ones).
pub fn selftest_message() -> Vec<u8> {
    (0..65536u64).map(|i| ((7 * i + 1) & 0xff) as u8).collect()
}

/// Where the helper C files come from.
#[derive(Debug, Clone)]
pub enum Source {
    /// The official ICCS API folder (`auxfunc.c`, `auxfunc.h`).
    Official(PathBuf),
    /// ngcc-perf's own `csrc/iccs`.
    Embedded,
}

impl Source {
    pub fn from_settings(settings: &Settings) -> Result<Source> {
        let Some(dir) = &settings.iccs_helpers else {
            return Ok(Source::Embedded);
        };
        for f in ["auxfunc.c", "auxfunc.h"] {
            if !dir.join(f).is_file() {
                return Err(Failure::usage(format!(
                    "--iccs-helpers {}: no {f} there (expected the official ICCS API folder)",
                    dir.display()
                )));
            }
        }
        Ok(Source::Official(dir.clone()))
    }

    pub fn algorithm(&self) -> &'static str {
        match self {
            Source::Official(_) => OFFICIAL,
            Source::Embedded => EMBEDDED,
        }
    }

    /// `auxfunc.c` (and the official `auxfunc.h`) as (name, bytes).
    fn files(&self) -> Result<Vec<(&'static str, Vec<u8>)>> {
        Ok(match self {
            Source::Official(dir) => {
                let mut out = Vec::new();
                for f in ["auxfunc.c", "auxfunc.h"] {
                    let p = dir.join(f);
                    out.push((
                        f,
                        std::fs::read(&p).with_context(|| format!("reading {}", p.display()))?,
                    ));
                }
                out
            }
            Source::Embedded => vec![("auxfunc.c", crate::csrc::AUXFUNC_C.as_bytes().to_vec())],
        })
    }

    /// The `helpers = …` line of the self-test logs.
    fn log_text(&self, auxfunc_sha256: &str) -> String {
        match self {
            Source::Official(_) => {
                format!("official ICCS API auxfunc.c (sha256 {auxfunc_sha256})")
            }
            Source::Embedded => format!(
                "ngcc-perf csrc/iccs/auxfunc.c, embedded (sha256 {auxfunc_sha256}); pass --iccs-helpers DIR for the official api/auxfunc.c"
            ),
        }
    }
}

pub fn run(run: &RunDir, selected: &[Selected], settings: &Settings) -> Result<()> {
    if settings.shard.is_some() {
        return Err(Failure::usage(
            "baseline: not with --shard (the helpers are timed once, on one core)",
        ));
    }
    let planning = settings.planning();
    let host = host_gate::check(
        run,
        Phase::Baseline.name(),
        settings.cpu,
        settings.allow_unfixed_host,
        &planning,
        None,
    )?;
    host_guard(run, settings, &host.environment)?;
    let source = Source::from_settings(settings)?;
    let helpers = helpers(&hash_widths(run, selected));
    let cand = write_candidate(run, &source, &helpers)?;
    let sel: Vec<Selected> = cand
        .instances
        .iter()
        .map(|inst| Selected {
            cand: cand.clone(),
            inst: inst.clone(),
        })
        .collect();

    let state = BuildState::load(run)?;
    let build = settings.build_options();
    let auxfunc_sha = sha256_file(&cand.root.join("src").join("auxfunc.c"))?;
    let mut passed = 0;
    let mut built = 0;
    for (s, helper) in sel.iter().zip(&helpers) {
        let (mut entry, _) = build_with_fallback(run, &state, &s.cand, &s.inst, &build)?;
        entry.variant = VARIANT.into();
        if entry.is_built() {
            built += 1;
            let log = run.kat_log(CANDIDATE, &s.inst.label);
            let now = self_test_inputs(&entry, &auxfunc_sha);
            let stale = crate::kat::run::stale_because(&entry.kat_inputs, &now);
            if entry.kat == KatStatus::Pending || !log.is_file() || stale.is_some() {
                if let Some(why) = stale.filter(|_| entry.kat != KatStatus::Pending) {
                    crate::util::say!(
                        "baseline {}: {} self-test is stale: {why}",
                        s.key(),
                        entry.kat
                    );
                }
                let (status, text) =
                    self_test(run, &entry, helper, &source, &auxfunc_sha, settings)?;
                atomic_write(&log, text.as_bytes())?;
                entry.kat = status;
                entry.kat_log = Some(run.rel(&log));
                entry.kat_log_sha256 = Some(sha256_file(&log)?);
                entry.kat_inputs = now;
            }
            passed += usize::from(entry.kat == KatStatus::Pass);
        }
        crate::util::say!(
            "baseline {}: {} ({} flags{})",
            s.key(),
            entry.kat,
            entry.flags,
            entry
                .build_error
                .as_deref()
                .map(|e| format!(": {e}"))
                .unwrap_or_default()
        );
        state.put(&entry)?;
    }
    crate::util::say!(
        "baseline build: {built}/{} built ({}), {passed}/{} self-tests PASS",
        sel.len(),
        source.algorithm(),
        sel.len()
    );

    let build = run.load_build()?;
    let timed = named_helpers(&sel, settings.only.as_deref())?;
    let (todo, skipped) = measurable::split(run, &build, &timed, &[], None);
    if !skipped.is_empty() {
        let mut c = run.load_campaign()?;
        for (key, reason) in &skipped {
            crate::util::say!("baseline: skipping {key}: {reason}");
            c.skipped.insert(key.clone(), Value::String(reason.clone()));
        }
        run.save_campaign(&c)?;
    }
    let ctx = MeasureCtx {
        run,
        settings,
        host,
        planning,
        runner: &crate::campaign::runner::JailRunner::new(&settings.jail),
    };
    super::calibrate::run(&ctx, &todo)?;
    super::measure::run(&ctx, &todo)
}

/// The helpers to time: those an `--only` glob names (by `iccs/<label>` or label), or all of
/// them when none does (a campaign's `--only` names its candidates, not the helpers).
fn named_helpers(sel: &[Selected], only: Option<&str>) -> Result<Vec<Selected>> {
    let patterns = only
        .map(select::only_patterns)
        .transpose()?
        .unwrap_or_default();
    let named: Vec<Selected> = sel
        .iter()
        .filter(|s| select::names(&patterns, &s.key(), &s.inst.label))
        .cloned()
        .collect();
    Ok(if named.is_empty() {
        sel.to_vec()
    } else {
        named
    })
}

/// What a helper's self-test verdict depends on (keys as in `kat::run::inputs`).
fn self_test_inputs(
    entry: &BuildEntry,
    auxfunc_sha: &str,
) -> std::collections::BTreeMap<String, String> {
    [
        ("tool", env!("CARGO_PKG_VERSION").to_string()),
        ("library", entry.library_sha256.clone().unwrap_or_default()),
        (
            "flags",
            format!(
                "{} {}",
                entry.flags,
                entry.build_flags.as_deref().unwrap_or("")
            ),
        ),
        ("helpers", auxfunc_sha.to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

/// The host-state keys that must not differ from the candidates' records (reference §1.13).
const FIXED_ENV: &[&str] = &[
    "hostname",
    "cpu_model",
    "cpu_number",
    "cpufreq_governor",
    "cpufreq_max_khz",
    "intel_pstate_no_turbo",
    "cpufreq_boost",
    "smt_control",
    "perf_event_paranoid",
    "core_clock_mhz",
];

/// The helpers are only comparable with the candidates when timed in the same host state: the
/// first complete candidate record on this CPU (path order) is the reference; a difference
/// in one of [`FIXED_ENV`] that the record has refuses (exit 2), or with
/// `--allow-unfixed-host` is only reported.
fn host_guard(run: &RunDir, settings: &Settings, now: &HostEnv) -> Result<()> {
    let Some((path, reference)) = first_candidate_record(run, settings.cpu) else {
        return Ok(());
    };
    let (Ok(Value::Object(want)), Ok(Value::Object(have))) = (
        serde_json::to_value(&reference.environment),
        serde_json::to_value(now),
    ) else {
        return Ok(());
    };
    let differ: Vec<String> = FIXED_ENV
        .iter()
        .filter_map(|k| {
            let w = want.get(*k)?;
            let h = have.get(*k).unwrap_or(&Value::Null);
            (w != h).then(|| format!("{k} {w} in {path}, now {h}"))
        })
        .collect();
    if differ.is_empty() {
        return Ok(());
    }
    let text = format!("baseline: host state differs: {}", differ.join("; "));
    if settings.allow_unfixed_host {
        crate::util::say!("{text} (measuring anyway: --allow-unfixed-host)");
        return Ok(());
    }
    Err(Failure::usage(text))
}

fn first_candidate_record(run: &RunDir, cpu: u32) -> Option<(String, Record)> {
    let records = run.root.join("records");
    let mut files = Vec::new();
    for cand in std::fs::read_dir(&records).ok()?.flatten() {
        if cand.file_name() == CANDIDATE {
            continue;
        }
        for f in std::fs::read_dir(cand.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            if f.path().extension().is_some_and(|e| e == "json") {
                files.push(f.path());
            }
        }
    }
    files.sort();
    files.into_iter().find_map(|p| {
        let r: Record = read_json(&p).ok()?;
        (r.status == RecordStatus::Complete
            && r.environment.cpu_number.json_u64() == Some(u64::from(cpu)))
        .then(|| (run.rel(&p), r))
    })
}

/// Digest widths of the campaign's hash instances: their manifests, their KAT logs
/// (`digest_bits = N`) and their records.
fn hash_widths(run: &RunDir, selected: &[Selected]) -> BTreeSet<u32> {
    let mut out = BTreeSet::new();
    for s in selected
        .iter()
        .filter(|s| s.cand.kind == Kind::Hash && s.cand.id != CANDIDATE)
    {
        out.extend(s.inst.digest_bits);
        if let Ok(text) = std::fs::read_to_string(run.kat_log(&s.cand.id, &s.inst.label)) {
            out.extend(text.lines().find_map(|l| {
                let (k, v) = l.split_once('=')?;
                (k.trim() == "digest_bits").then(|| v.trim().parse::<u32>().ok())?
            }));
        }
        let rec: Option<Record> =
            read_json(&run.record_path(&s.cand.id, &s.inst.label, "hash_32")).ok();
        out.extend(
            rec.and_then(|r| r.stats)
                .and_then(|st| st.sizes.get("digest_bytes").and_then(Value::as_u64))
                .and_then(|b| u32::try_from(8 * b).ok()),
        );
    }
    out
}

/// Writes the internal candidate `RUN/baseline/iccs/` (manifest, `helper_hash.{c,h}` and the
/// chosen `auxfunc` files under `src/`) and loads it like any other.
fn write_candidate(run: &RunDir, source: &Source, helpers: &[Helper]) -> Result<Candidate> {
    let root = run.root.join("baseline").join(CANDIDATE);
    let src = root.join("src");
    atomic_write(
        &src.join("helper_hash.h"),
        crate::csrc::HELPER_HASH_H.as_bytes(),
    )?;
    atomic_write(
        &src.join("helper_hash.c"),
        crate::csrc::HELPER_HASH_C.as_bytes(),
    )?;
    if matches!(source, Source::Embedded) {
        let _ = std::fs::remove_file(src.join("auxfunc.h"));
    }
    for (name, bytes) in source.files()? {
        atomic_write(&src.join(name), &bytes)?;
    }
    let cand = Candidate {
        package: None,
        // The helper under test is one of the instance's own sources.
        iccs_helpers: None,
        id: CANDIDATE.into(),
        algorithm: source.algorithm().into(),
        kind: Kind::Hash,
        api: Api::Iccs,
        variant: Some(VARIANT.into()),
        instances: helpers
            .iter()
            .map(|h| Instance {
                label: h.label(),
                dir: "src".into(),
                sources: vec!["helper_hash.c".into(), "auxfunc.c".into()],
                header: Some("helper_hash.h".into()),
                defines: vec![
                    format!("NGCC_HELPER={}", h.func.code()),
                    format!("NGCC_HELPER_BITS={}", h.bits),
                ],
                digest_bits: Some(h.bits),
                ..Instance::default()
            })
            .collect(),
        root: PathBuf::new(),
    };
    let mut text = String::from(
        "# Generated by `ngcc-perf campaign baseline`: the ICCS helpers as hash instances.\n",
    );
    text.push_str(&toml::to_string(&cand).context("writing the helper manifest")?);
    let manifest = root.join("candidate.toml");
    atomic_write(&manifest, text.as_bytes())?;
    Candidate::load(&manifest)
}

/// Runs the helper on the self-test message prefixes (and `sm3hash` on the GB/T 32905
/// examples) in a sandboxed child and compares with the Rust model. Returns the status and
/// the log (reference §1.13 format).
fn self_test(
    run: &RunDir,
    entry: &BuildEntry,
    helper: &Helper,
    source: &Source,
    auxfunc_sha256: &str,
    settings: &Settings,
) -> Result<(KatStatus, String)> {
    let label = helper.label();
    let library = entry.library.as_deref().unwrap_or_default();
    let mut log = String::new();
    writeln!(log, "instance = {label}")?;
    writeln!(log, "library = {library}")?;
    writeln!(
        log,
        "model = ngcc-iccs {} (Rust model of api/auxfunc.c on its own SM3)",
        env!("CARGO_PKG_VERSION")
    )?;
    writeln!(log, "helpers = {}", source.log_text(auxfunc_sha256))?;
    let msg = selftest_message();
    let mut cases: Vec<(String, Vec<u8>, u64)> = SELFTEST_LENGTHS
        .iter()
        .map(|&n| (format!("len={n}"), msg.clone(), n))
        .collect();
    if helper.func == Func::Sm3hash {
        cases.push(("GB/T 32905 abc".into(), b"abc".to_vec(), 3));
        cases.push(("GB/T 32905 abcdabcd...".into(), b"abcd".repeat(16), 64));
    }
    // GB/T 32905 A.1 and A.2: the published digests, independent of the model.
    let published = |name: &str| match name {
        "GB/T 32905 abc" => {
            Some("66c7f0f462eeedd9d1f2d46bdc10e4e24167c4875cf2f7a2297da02b8f4ba8e0")
        }
        "GB/T 32905 abcdabcd..." => {
            Some("debe9ff92275b8a138604889c18e5a4d6fdb70e5387e5765293dcba39c0c5732")
        }
        _ => None,
    };
    let total = cases.len();
    let mut ok = 0;
    let mut worst: Option<KatStatus> = None;
    // One child per distinct message: every length of the shared message at once.
    let mut groups: Vec<(Vec<u8>, Vec<usize>)> = Vec::new();
    for (i, (_, m, _)) in cases.iter().enumerate() {
        match groups.iter_mut().find(|(g, _)| g == m) {
            Some((_, idx)) => idx.push(i),
            None => groups.push((m.clone(), vec![i])),
        }
    }
    let mut results: Vec<Option<Result<Vec<u8>, String>>> = vec![None; total];
    for (gi, (m, idx)) in groups.iter().enumerate() {
        let lengths: Vec<u64> = idx.iter().map(|&i| cases[i].2).collect();
        match vectors(run, entry, &label, gi, m, &lengths, settings)? {
            Ok(values) => {
                for (&i, (_, hex)) in idx.iter().zip(values) {
                    results[i] = Some(hex::decode(&hex).map_err(|e| format!("bad hex: {e}")));
                }
            }
            Err((status, detail)) => {
                for &i in idx {
                    results[i] = Some(Err(format!("{status}: {detail}")));
                }
                worst.get_or_insert(status);
            }
        }
    }
    for ((name, m, n), got) in cases.iter().zip(results) {
        let want = helper.model(&m[..*n as usize], 8 * n)?;
        match got {
            Some(Ok(got)) => {
                let head = hex::encode(&got[..got.len().min(16)]);
                let published_ok = published(name).is_none_or(|p| hex::encode(&got) == p);
                if got == want && published_ok {
                    ok += 1;
                    writeln!(log, "ok   {name} rc=0 {head}...")?;
                } else {
                    writeln!(
                        log,
                        "FAIL {name} rc=0 {head}... model {}...",
                        hex::encode(&want[..want.len().min(16)])
                    )?;
                    worst.get_or_insert(KatStatus::Mismatch);
                }
            }
            Some(Err(e)) => writeln!(log, "FAIL {name} {e}")?,
            None => writeln!(log, "FAIL {name} no result")?,
        }
    }
    let status = if ok == total {
        KatStatus::Pass
    } else {
        worst.unwrap_or(KatStatus::Mismatch)
    };
    writeln!(log, "RESULT {CANDIDATE} {label} {status} ({ok}/{total})")?;
    Ok((status, log))
}

type Vectors = std::result::Result<Vec<(String, String)>, (KatStatus, String)>;

/// One vectors child: the digests of the first `lengths` bytes of `msg`.
fn vectors(
    run: &RunDir,
    entry: &BuildEntry,
    label: &str,
    group: usize,
    msg: &[u8],
    lengths: &[u64],
    settings: &Settings,
) -> Result<Vectors> {
    let timeout = settings.kat_timeout;
    let job = VectorsJob {
        limits: Limits {
            address_space: Some(settings.mem_limit_mib << 20),
            cpu_seconds: Some(timeout.as_secs() + 5),
            file_size: Some(1 << 20),
            pin_cpu: None,
        },
        library: run.path(entry.library.as_deref().unwrap_or_default()),
        kind: Kind::Hash,
        api: Api::Iccs,
        seed: String::new(),
        message: hex::encode(msg),
        lengths: lengths.to_vec(),
    };
    let spec = Spec {
        workdir: run.scratch(&format!("selftest-{CANDIDATE}-{label}-{group}"))?,
        timeout,
    };
    let outcome = sandbox::run(&spec, &settings.jail, &Request::Vectors(job))?;
    let out: Option<VectorsOutput> = sandbox::parse_result(&outcome).ok();
    Ok(match (&outcome.exit, out) {
        (Exit::Timeout, _) => Err((
            KatStatus::Timeout,
            format!("no result within {} s", timeout.as_secs()),
        )),
        (_, Some(o)) if o.status == KatEnd::Ok && o.values.len() == lengths.len() => Ok(o.values),
        (_, Some(o)) => Err((
            match o.status {
                KatEnd::Failed(s) => s,
                KatEnd::Ok => KatStatus::Crash,
            },
            o.detail.unwrap_or_default(),
        )),
        (_, None) => Err((
            KatStatus::Crash,
            outcome
                .failure_text()
                .unwrap_or_else(|| "child sent no result".into()),
        )),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_the_references_and_every_candidate_width() {
        let labels: Vec<String> = helpers(&BTreeSet::from([256, 1280, 1536]))
            .iter()
            .map(Helper::label)
            .collect();
        assert_eq!(
            labels,
            [
                "sm3hash-256",
                "pseudohash-512",
                "pseudohash-768",
                "pseudohash-1024",
                "pseudoXOF-256",
                "pseudoXOF-384",
                "pseudoXOF-512",
                "pseudoXOF-768",
                "pseudoXOF-1024",
                "pseudoXOF-1152",
                "pseudoXOF-1280",
                "pseudoXOF-1536",
                "pseudoXOF-2048",
            ]
        );
    }

    /// The model on the self-test message reproduces the digests the reference published in
    /// its self-test logs (performance/data/arm_1/kat/iccs, first 16 bytes).
    #[test]
    fn the_model_reproduces_the_references_selftest_digests() {
        let msg = selftest_message();
        let cases = [
            (Func::Sm3hash, 256, 1, "799b719ac031fc89c6d8925a487dad07"),
            (
                Func::Sm3hash,
                256,
                65536,
                "416eeb17c935673101cb85cfd51f844a",
            ),
            (
                Func::Pseudohash,
                512,
                55,
                "6c4198d6ffa0ccaec5fcda5764589739",
            ),
            (
                Func::Pseudohash,
                1024,
                4096,
                "b36a1335a6e8eee86f997f916a5906fe",
            ),
            (
                Func::PseudoXof,
                2048,
                119,
                "b5631e9a17e21d73341732c3ca2169bb",
            ),
        ];
        for (func, bits, n, want) in cases {
            let got = Helper { func, bits }
                .model(&msg[..n], 8 * n as u64)
                .unwrap();
            assert_eq!(hex::encode(&got[..16]), want, "{func:?}-{bits} len={n}");
        }
    }
}
