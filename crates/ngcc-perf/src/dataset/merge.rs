//! `ngcc-perf merge`: one dataset from the shards of one campaign (run directories, or
//! datasets published from them), laid out exactly as `publish` lays out a single run: the
//! same evidence files, rewritten the same way (each input relative to its own folder), the
//! same refusal of absolute paths, the same atomic write.
//!
//! It refuses, with one line naming the field and both values, to merge shards whose hosts
//! differ in what makes numbers comparable, shards that measured different builds, a record
//! or profile found in two inputs (both paths), shards missing from the set or never finished,
//! and a shard whose campaign is still running.

use super::publish;
use super::schema::{BuildFile, Campaign, HostCheck, HostEnv, MergedPart, Profile, Record};
use crate::journal;
use crate::util::Failure;
use crate::util::fsx::to_json_bytes;
use anyhow::Result;
use clap::Args;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct MergeArgs {
    /// Shard run directories (or datasets) of one campaign on one system, e.g. `camp/shard-*`;
    /// the shared build run may be given too.
    #[arg(required = true, value_name = "SHARD_RUN_OR_DATASET")]
    pub inputs: Vec<PathBuf>,
    /// Dataset folder to create or replace (as with publish).
    #[arg(long)]
    pub out: PathBuf,
    /// System id recorded in the dataset (default: the inputs' campaign.json system_id).
    #[arg(long)]
    pub system: Option<String>,
}

/// The counter's measured rate varies a little from one measurement to the next; identical
/// machines agree within this fraction.
const COUNTER_HZ_REL_TOL: f64 = 0.01;

pub fn run(args: MergeArgs) -> Result<ExitCode> {
    let m = merge(&args.inputs, args.system.as_deref(), &args.out)?;
    let shards = if m.shards.is_empty() {
        String::new()
    } else {
        format!(" (shards {})", m.shards.join(", "))
    };
    crate::util::out!(
        "merge: {} input(s){shards}, {} record(s), {} profile(s), {} KAT log(s) for system {} -> {}",
        m.inputs,
        m.records,
        m.profiles,
        m.kat_logs,
        m.system,
        args.out.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// What a merge wrote.
#[derive(Debug, Default)]
pub struct Merged {
    pub system: String,
    pub inputs: usize,
    pub shards: Vec<String>,
    pub records: usize,
    pub profiles: usize,
    pub kat_logs: usize,
}

/// One input, staged as `publish` stages a run.
struct Input {
    /// The folder as given, for messages.
    shown: String,
    /// Its name (`shard-2`), for campaign.json.
    name: String,
    files: BTreeMap<String, Vec<u8>>,
    /// Each file's run hash, from its journal (`None`: the input has no journal).
    run_sha256: Option<BTreeMap<String, String>>,
    campaign: Campaign,
    build: Option<BuildFile>,
    /// (K, N) of its host checks.
    shards: BTreeSet<(u32, u32)>,
}

impl Input {
    fn at(&self, rel: &str) -> String {
        format!("{}/{rel}", self.shown.trim_end_matches('/'))
    }
}

fn refuse(msg: String) -> anyhow::Error {
    Failure::usage(format!("merge: {msg}"))
}

pub fn merge(inputs: &[PathBuf], system: Option<&str>, out: &Path) -> Result<Merged> {
    let mut seen: Vec<(PathBuf, String)> = Vec::new();
    let out_abs = std::fs::canonicalize(out).ok();
    let mut loaded = Vec::new();
    for path in inputs {
        let canon =
            std::fs::canonicalize(path).map_err(|e| refuse(format!("{}: {e}", path.display())))?;
        if let Some((_, first)) = seen.iter().find(|(c, _)| *c == canon) {
            return Err(refuse(format!(
                "{} is given twice (also as {first})",
                path.display()
            )));
        }
        if out_abs.as_ref() == Some(&canon) {
            return Err(refuse(format!(
                "--out {} is one of the inputs",
                out.display()
            )));
        }
        seen.push((canon, path.display().to_string()));
        loaded.push(load_input(path)?);
    }
    // A fixed order (shard, then folder) so the result does not depend on the command line.
    loaded.sort_by(|a, b| {
        let k = |i: &Input| i.shards.iter().next().map_or(0, |s| s.0);
        k(a).cmp(&k(b)).then_with(|| a.shown.cmp(&b.shown))
    });
    let system = system_id(&loaded, system)?;
    check_shards(&loaded)?;
    check_campaigns(&loaded)?;
    let (build_bytes, build) = merge_build(&loaded)?;
    let mut evidence = union_evidence(&loaded)?;
    let records = parse_all::<Record>(&loaded, &evidence, "records/")?;
    let profiles = parse_all::<Profile>(&loaded, &evidence, "profile/")?;
    check_hosts(&loaded, &records)?;
    check_libraries(&loaded, &build, &records, &profiles)?;
    check_kat_logs(&build, &evidence)?;

    let campaign = merge_campaign(&loaded, &system, &records, &profiles);
    let mut files: Vec<(String, Vec<u8>)> = vec![
        ("campaign.json".into(), to_json_bytes(&campaign)?),
        ("build.json".into(), build_bytes),
    ];
    let kat_logs = evidence
        .keys()
        .filter(|r| r.starts_with("kat/") || r.starts_with("katcheck/"))
        .count();
    // Candidate text quarantined as publish does, before the journal hashes the files.
    let mut staged: Vec<(String, Vec<u8>)> = std::mem::take(&mut files);
    staged.extend(
        evidence
            .iter_mut()
            .map(|(rel, (_, bytes))| (rel.clone(), std::mem::take(bytes))),
    );
    for line in publish::quarantine_staged(&mut staged) {
        crate::util::say!("merge: {line}");
    }
    for (rel, bytes) in staged {
        match evidence.get_mut(&rel) {
            Some((_, slot)) => *slot = bytes,
            None => files.push((rel, bytes)),
        }
    }
    let journal = journal_of(&loaded, &files, &evidence)?;
    files.extend(evidence.into_iter().map(|(rel, (_, bytes))| (rel, bytes)));
    publish::refuse_absolute(&files)?;
    if let Some(text) = journal {
        files.push((journal::DATASET_JOURNAL.to_string(), text.into_bytes()));
    }
    publish::write_dataset(out, &files)?;
    let mut shards: Vec<(u32, u32)> = loaded.iter().flat_map(|i| i.shards.clone()).collect();
    shards.sort();
    shards.dedup();
    Ok(Merged {
        system,
        inputs: loaded.len(),
        shards: shards.iter().map(|(k, n)| format!("{k}/{n}")).collect(),
        records: records.len(),
        profiles: profiles.len(),
        kat_logs,
    })
}

fn load_input(path: &Path) -> Result<Input> {
    refuse_running(path)?;
    let shown = path.display().to_string();
    let staged = publish::stage(path).map_err(|e| refuse(format!("{shown}: {e:#}")))?;
    let files: BTreeMap<String, Vec<u8>> = staged.files.into_iter().collect();
    let run_sha256 = staged.run_sha256;
    let campaign: Campaign = serde_json::from_slice(&files["campaign.json"])
        .map_err(|e| refuse(format!("{shown}/campaign.json: not a campaign.json: {e}")))?;
    let build = match files.get("build.json") {
        Some(b) => Some(
            serde_json::from_slice(b)
                .map_err(|e| refuse(format!("{shown}/build.json: not a build.json: {e}")))?,
        ),
        None => None,
    };
    let mut shards = BTreeSet::new();
    for check in &campaign.host_checks {
        if let Some(s) = &check.shard {
            let parsed = s
                .split_once('/')
                .and_then(|(k, n)| Some((k.parse().ok()?, n.parse().ok()?)));
            let Some(kn) = parsed else {
                return Err(refuse(format!(
                    "{shown}/campaign.json: host check shard {s:?} is not K/N"
                )));
            };
            shards.insert(kn);
        }
    }
    let name = std::fs::canonicalize(path)?
        .file_name()
        .map_or_else(|| shown.clone(), |n| n.to_string_lossy().into_owned());
    Ok(Input {
        shown,
        name,
        files,
        run_sha256,
        campaign,
        build,
        shards,
    })
}

/// The merged dataset's journal, as `publish` writes one: every file with its run hash (a
/// file taken from one input keeps that input's; campaign.json, and a build.json the inputs
/// did not agree on byte for byte, are `merged:` the inputs' hashes joined by `+`). Inputs
/// without a journal give a dataset without one; a mix is refused.
fn journal_of(
    inputs: &[Input],
    made: &[(String, Vec<u8>)],
    evidence: &BTreeMap<String, (usize, Vec<u8>)>,
) -> Result<Option<String>> {
    if inputs.iter().all(|i| i.run_sha256.is_none()) {
        return Ok(None);
    }
    if let Some(i) = inputs.iter().find(|i| i.run_sha256.is_none()) {
        return Err(refuse(format!(
            "{} has no journal but other inputs do: the evidence of a merged dataset is journaled for all inputs or none",
            i.shown
        )));
    }
    let sha = |i: &Input, rel: &str| {
        i.run_sha256
            .as_ref()
            .and_then(|m| m.get(rel).cloned())
            .unwrap_or_default()
    };
    let run_of = |rel: &str| -> String {
        if let Some((n, _)) = evidence.get(rel) {
            return sha(&inputs[*n], rel);
        }
        let from: Vec<String> = inputs
            .iter()
            .filter(|i| i.files.contains_key(rel))
            .map(|i| sha(i, rel))
            .collect();
        let bytes = made.iter().find(|(r, _)| r == rel).map(|(_, b)| b);
        match inputs.iter().find(|i| i.files.contains_key(rel)) {
            // Taken as it was (every input's build.json the same bytes).
            Some(i) if from.windows(2).all(|w| w[0] == w[1]) && i.files.get(rel) == bytes => {
                sha(i, rel)
            }
            _ => format!("merged:{}", from.join("+")),
        }
    };
    let mut all: Vec<(String, Vec<u8>)> = made.to_vec();
    all.extend(
        evidence
            .iter()
            .map(|(rel, (_, b))| (rel.clone(), b.clone())),
    );
    Ok(Some(journal::dataset_text(&all, &run_of)))
}

/// A campaign still working in a run directory holds its lock (`RunDir::open`).
fn refuse_running(path: &Path) -> Result<()> {
    let lock = path.join(".ngcc-perf.lock");
    let Ok(file) = std::fs::File::open(&lock) else {
        return Ok(());
    };
    // SAFETY: flock on an fd we own, released when `file` is dropped at return.
    let rc = unsafe {
        libc::flock(
            std::os::fd::AsRawFd::as_raw_fd(&file),
            libc::LOCK_SH | libc::LOCK_NB,
        )
    };
    if rc != 0 {
        return Err(refuse(format!(
            "{}: a campaign is still running there (its .ngcc-perf.lock is held); merge after it finishes",
            path.display()
        )));
    }
    Ok(())
}

fn system_id(inputs: &[Input], explicit: Option<&str>) -> Result<String> {
    let mut found: Option<(&str, &Input)> = None;
    for i in inputs {
        if let Some(id) = i.campaign.system_id.as_deref() {
            if let Some(want) = explicit.filter(|w| *w != id) {
                return Err(refuse(format!(
                    "{}/campaign.json has system_id `{id}` but --system is `{want}`",
                    i.shown
                )));
            }
            match found {
                Some((other, j)) if other != id => {
                    return Err(refuse(format!(
                        "the inputs belong to different systems: `{other}` in {}/campaign.json vs `{id}` in {}/campaign.json",
                        j.shown, i.shown
                    )));
                }
                _ => found = Some((id, i)),
            }
        }
    }
    explicit
        .or(found.map(|f| f.0))
        .map(str::to_string)
        .ok_or_else(|| {
            refuse("no system id: pass --system (shard run directories carry none)".into())
        })
}

/// Every shard of the count must be there, each input counted alike, and each finished.
fn check_shards(inputs: &[Input]) -> Result<()> {
    for i in inputs {
        if i.campaign.ended_utc.is_none() {
            return Err(refuse(format!(
                "{} never finished a campaign (campaign.json has no ended_utc): its array task was killed or is still running; resubmit that index, then merge",
                i.shown
            )));
        }
    }
    let mut count: Option<(u32, u32, &Input)> = None;
    for i in inputs {
        for &(k, n) in &i.shards {
            match count {
                Some((k0, n0, j)) if n0 != n => {
                    return Err(refuse(format!(
                        "the inputs were sharded differently: {} ran shard {k0}/{n0} but {} ran {k}/{n}",
                        j.shown, i.shown
                    )));
                }
                None => count = Some((k, n, i)),
                _ => {}
            }
        }
    }
    let Some((_, n, _)) = count else {
        return Ok(());
    };
    let present: BTreeSet<u32> = inputs
        .iter()
        .flat_map(|i| i.shards.iter().map(|s| s.0))
        .collect();
    let missing: Vec<String> = (1..=n)
        .filter(|k| !present.contains(k))
        .map(|k| format!("{k}/{n}"))
        .collect();
    if !missing.is_empty() {
        let have: Vec<String> = present.iter().map(|k| format!("{k}/{n}")).collect();
        return Err(refuse(format!(
            "shard(s) {} missing: the inputs hold {}; merge every shard (a failed array task can be resubmitted alone)",
            missing.join(", "),
            have.join(", ")
        )));
    }
    Ok(())
}

/// Two (where, value) pairs that must agree; the error names the field and both.
fn differ(what: &str, field: &str, a: (&str, &Value), b: (&str, &Value)) -> anyhow::Error {
    refuse(format!(
        "{what} differ in {field}: {} in {} vs {} in {}; numbers from them are not comparable",
        a.1, a.0, b.1, b.0
    ))
}

/// Campaign facts every shard must share: tool version, counter, flags, planning.
fn check_campaigns(inputs: &[Input]) -> Result<()> {
    let mut first: BTreeMap<String, (String, Value)> = BTreeMap::new();
    for i in inputs {
        let c = &i.campaign;
        let mut facts: Vec<(String, Value)> = Vec::new();
        let mut put = |k: &str, v: Option<Value>| {
            if let Some(v) = v.filter(|v| !v.is_null()) {
                facts.push((k.to_string(), v));
            }
        };
        put("tool", c.tool.clone().map(Value::from));
        put(
            "counter",
            c.counter.as_ref().map(|k| Value::from(k.as_str())),
        );
        put(
            "harness_additions",
            c.harness_additions.clone().map(Value::from),
        );
        if let Some(a) = &c.arch_config {
            put("arch_config.reference", Some(a.reference.clone().into()));
            put(
                "arch_config.performance",
                Some(a.performance.clone().into()),
            );
        }
        if let Some(p) = c
            .planning
            .as_ref()
            .and_then(|p| serde_json::to_value(p).ok())
            && let Value::Object(map) = p
        {
            for (k, v) in map {
                put(&format!("planning.{k}"), Some(v));
            }
        }
        let at = i.at("campaign.json");
        for (k, v) in facts {
            match first.get(&k) {
                Some((where0, v0)) if *v0 != v => {
                    return Err(differ("campaigns", &k, (where0, v0), (&at, &v)));
                }
                Some(_) => {}
                None => {
                    first.insert(k, (at.clone(), v));
                }
            }
        }
    }
    Ok(())
}

/// build.json of the merged dataset: the inputs' own bytes when they all agree byte for byte
/// (the normal case: every shard copied the shared build run's), else their union, where an
/// instance in several inputs must be the same entry in each.
fn merge_build(inputs: &[Input]) -> Result<(Vec<u8>, BuildFile)> {
    let with: Vec<&Input> = inputs.iter().filter(|i| i.build.is_some()).collect();
    let Some(first) = with.first() else {
        return Err(refuse("none of the inputs has a build.json".into()));
    };
    let mut merged = BuildFile::default();
    let mut owner: BTreeMap<String, &Input> = BTreeMap::new();
    for i in &with {
        let b = i.build.as_ref().expect("filtered");
        for (key, v) in &b.instances {
            match merged.instances.get(key) {
                None => {
                    merged.instances.insert(key.clone(), v.clone());
                    owner.insert(key.clone(), i);
                }
                Some(v0) if v0 == v => {}
                Some(v0) => {
                    let j = owner[key];
                    let (Value::Object(a), Value::Object(b)) = (v0, v) else {
                        return Err(refuse(format!(
                            "build.json instances.{key} is not an object"
                        )));
                    };
                    let field = a
                        .keys()
                        .chain(b.keys())
                        .find(|f| a.get(*f) != b.get(*f))
                        .cloned()
                        .unwrap_or_default();
                    let none = Value::Null;
                    return Err(refuse(format!(
                        "build.json differs for {key} in {field}: {} in {} vs {} in {}; every shard must measure the same build (seed them all from one --build-from)",
                        a.get(&field).unwrap_or(&none),
                        j.at("build.json"),
                        b.get(&field).unwrap_or(&none),
                        i.at("build.json")
                    )));
                }
            }
        }
        if let Some(opt) = &b.optimized {
            merged
                .optimized
                .get_or_insert_with(Default::default)
                .extend(opt.clone());
        }
    }
    let same = with
        .iter()
        .all(|i| i.files.get("build.json") == first.files.get("build.json"));
    let bytes = if same {
        first.files["build.json"].clone()
    } else {
        to_json_bytes(&merged)?
    };
    Ok((bytes, merged))
}

/// Records, profiles and KAT logs of every input. A record or profile in two inputs is
/// refused (both paths); a KAT log may be in several (every shard carries them) if identical.
fn union_evidence(inputs: &[Input]) -> Result<BTreeMap<String, (usize, Vec<u8>)>> {
    let mut out: BTreeMap<String, (usize, Vec<u8>)> = BTreeMap::new();
    for (n, i) in inputs.iter().enumerate() {
        for (rel, bytes) in &i.files {
            if rel == "campaign.json" || rel == "build.json" {
                continue;
            }
            let Some((m, old)) = out.get(rel) else {
                out.insert(rel.clone(), (n, bytes.clone()));
                continue;
            };
            let j = &inputs[*m];
            if ["records/", "profile/", "memory/", "count/"]
                .iter()
                .any(|p| rel.starts_with(p))
            {
                let what = if rel.starts_with("records/") {
                    "record"
                } else if rel.starts_with("memory/") {
                    "memory record"
                } else if rel.starts_with("count/") {
                    "count record"
                } else {
                    "profile"
                };
                return Err(refuse(format!(
                    "duplicate {what} {rel}: {} and {} (each instance is measured by one shard only)",
                    j.at(rel),
                    i.at(rel)
                )));
            }
            if old != bytes {
                return Err(refuse(format!(
                    "KAT log {rel} differs between {} and {}: the shards did not come from one build",
                    j.at(rel),
                    i.at(rel)
                )));
            }
        }
    }
    Ok(out)
}

/// (input index, relative path, parsed file) of every file under `prefix`.
fn parse_all<T: serde::de::DeserializeOwned>(
    inputs: &[Input],
    evidence: &BTreeMap<String, (usize, Vec<u8>)>,
    prefix: &str,
) -> Result<Vec<(usize, String, T)>> {
    let mut out = Vec::new();
    for (rel, (n, bytes)) in evidence.range(prefix.to_string()..) {
        if !rel.starts_with(prefix) {
            break;
        }
        // Profile folders also hold notes that are not profiles (no `operation`).
        if prefix == "profile/" {
            let v: Value = serde_json::from_slice(bytes).unwrap_or(Value::Null);
            if v.get("operation").is_none() {
                continue;
            }
        }
        let parsed = serde_json::from_slice(bytes)
            .map_err(|e| refuse(format!("{}: not a schema 2 file: {e}", inputs[*n].at(rel))))?;
        out.push((*n, rel.clone(), parsed));
    }
    Ok(out)
}

/// Every record's environment (and every input's last host check) against the first one.
fn check_hosts(inputs: &[Input], records: &[(usize, String, Record)]) -> Result<()> {
    let mut envs: Vec<(String, &HostEnv)> = Vec::new();
    for (n, rel, r) in records {
        envs.push((inputs[*n].at(rel), &r.environment));
    }
    for i in inputs {
        if let Some(e) = &i.campaign.environment_at_end {
            envs.push((format!("{} (environment_at_end)", i.at("campaign.json")), e));
        }
    }
    let Some((where0, env0)) = envs.first() else {
        return Ok(());
    };
    let none = Value::Null;
    let want = env0.comparability();
    for (at, env) in &envs[1..] {
        for ((key, a), (_, b)) in want.iter().zip(env.comparability()) {
            let (a, b) = (a.as_ref().unwrap_or(&none), b.as_ref().unwrap_or(&none));
            if a != b {
                return Err(differ("hosts", key, (where0, a), (at, b)));
            }
        }
        let hz = |e: &HostEnv| e.counter_hz.json_f64();
        if let (Some(a), Some(b)) = (hz(env0), hz(env))
            && (a - b).abs() > COUNTER_HZ_REL_TOL * a.abs().max(b.abs())
        {
            return Err(differ(
                "hosts",
                "counter_hz",
                (where0, &Value::from(a)),
                (at, &Value::from(b)),
            ));
        }
    }
    Ok(())
}

/// Every record and profile timed the library build.json names for its instance.
fn check_libraries(
    inputs: &[Input],
    build: &BuildFile,
    records: &[(usize, String, Record)],
    profiles: &[(usize, String, Profile)],
) -> Result<()> {
    let want = |cand: &str, label: &str| {
        build
            .entry(&format!("{cand}/{label}"))
            .and_then(|e| e.library_sha256)
    };
    let mismatch = |at: String, got: &str, key: String, want: &str| {
        refuse(format!(
            "{at} timed library_sha256 {got} but build.json has {want} for {key}: it measured another build"
        ))
    };
    for (n, rel, r) in records {
        if let (Some(got), Some(w)) = (&r.library_sha256, want(&r.candidate, &r.label))
            && *got != w
        {
            let key = format!("{}/{}", r.candidate, r.label);
            return Err(mismatch(inputs[*n].at(rel), got, key, &w));
        }
    }
    for (n, rel, p) in profiles {
        let timed = p.ngcc.as_ref().and_then(|x| x.timed_library_sha256.clone());
        if let (Some(got), Some(w)) = (timed, want(&p.candidate, &p.label))
            && got != w
        {
            let key = format!("{}/{}", p.candidate, p.label);
            return Err(mismatch(inputs[*n].at(rel), &got, key, &w));
        }
    }
    Ok(())
}

/// Every KAT log build.json names must be in some input.
fn check_kat_logs(build: &BuildFile, evidence: &BTreeMap<String, (usize, Vec<u8>)>) -> Result<()> {
    for (key, e) in build.entries() {
        if let Some(log) = e.kat_log.as_deref()
            && !evidence.contains_key(log)
        {
            return Err(refuse(format!(
                "build.json names {log} as the KAT log of {key}, but no input holds it"
            )));
        }
    }
    Ok(())
}

/// The campaign as one run would have recorded it: the earliest start, the latest end, every
/// host check of every shard in time order, the union of host problems and skips; plus
/// `merged_from`, one entry per input.
fn merge_campaign(
    inputs: &[Input],
    system: &str,
    records: &[(usize, String, Record)],
    profiles: &[(usize, String, Profile)],
) -> Campaign {
    let earliest = inputs
        .iter()
        .filter(|i| i.campaign.started_utc.is_some())
        .min_by(|a, b| a.campaign.started_utc.cmp(&b.campaign.started_utc));
    let latest = inputs
        .iter()
        .filter(|i| i.campaign.ended_utc.is_some())
        .max_by(|a, b| a.campaign.ended_utc.cmp(&b.campaign.ended_utc));
    let first_some = |f: &dyn Fn(&Campaign) -> bool| {
        inputs
            .iter()
            .map(|i| &i.campaign)
            .find(|c| f(c))
            .cloned()
            .unwrap_or_default()
    };
    let mut m = Campaign {
        system_id: Some(system.to_string()),
        started_utc: earliest.and_then(|i| i.campaign.started_utc.clone()),
        environment_at_start: earliest.and_then(|i| i.campaign.environment_at_start.clone()),
        arch_config: first_some(&|c| c.arch_config.is_some()).arch_config,
        harness_additions: first_some(&|c| c.harness_additions.is_some()).harness_additions,
        planning: first_some(&|c| c.planning.is_some()).planning,
        ended_utc: latest.and_then(|i| i.campaign.ended_utc.clone()),
        environment_at_end: latest.and_then(|i| i.campaign.environment_at_end.clone()),
        tool: first_some(&|c| c.tool.is_some()).tool,
        counter: first_some(&|c| c.counter.is_some()).counter,
        // The first shard's noise check (each shard ran its own on its own CPU).
        noise: first_some(&|c| c.noise.is_some()).noise,
        ..Campaign::default()
    };
    let mut checks: Vec<HostCheck> = Vec::new();
    let mut notes: Vec<String> = Vec::new();
    for i in inputs {
        let c = &i.campaign;
        for h in &c.host_checks {
            if !checks.iter().any(|x| same_check(x, h)) {
                checks.push(h.clone());
            }
        }
        for p in &c.host_problems {
            if !m.host_problems.contains(p) {
                m.host_problems.push(p.clone());
            }
        }
        m.allow_unfixed_host |= c.allow_unfixed_host;
        m.allow_uncontained |= c.allow_uncontained;
        if let Some(ci) = &c.containment {
            // The layers every shard had; every reason one was missing anywhere.
            let merged = m.containment.get_or_insert_with(|| ci.clone());
            merged.keep_common(ci);
            for why in &ci.missing {
                if !merged.missing.contains(why) {
                    merged.missing.push(why.clone());
                }
            }
        }
        m.shards = m.shards.max(c.shards);
        if let Some(cpus) = &c.shard_cpus {
            m.shard_cpus
                .get_or_insert_with(Default::default)
                .extend(cpus.clone());
        }
        for (k, v) in &c.skipped {
            m.skipped.entry(k.clone()).or_insert_with(|| v.clone());
        }
        if let Some(n) = &c.history_note
            && !notes.contains(n)
        {
            notes.push(n.clone());
        }
    }
    checks.sort_by(|a, b| a.utc.cmp(&b.utc));
    m.host_checks = checks;
    m.host_problems.sort();
    m.history_note = (!notes.is_empty()).then(|| notes.join("\n"));
    m.merged_from = inputs
        .iter()
        .enumerate()
        .map(|(n, i)| part(n, i, records, profiles))
        .collect();
    m
}

fn same_check(a: &HostCheck, b: &HostCheck) -> bool {
    a.phase == b.phase
        && a.cpu == b.cpu
        && a.utc == b.utc
        && a.problems == b.problems
        && a.shard == b.shard
        && a.host == b.host
}

fn part(
    n: usize,
    i: &Input,
    records: &[(usize, String, Record)],
    profiles: &[(usize, String, Profile)],
) -> MergedPart {
    let mut hosts: BTreeSet<String> = i
        .campaign
        .host_checks
        .iter()
        .filter_map(|h| h.host.clone())
        .collect();
    let mine: Vec<&Record> = records.iter().filter(|r| r.0 == n).map(|r| &r.2).collect();
    hosts.extend(mine.iter().filter_map(|r| r.environment.hostname.text()));
    MergedPart {
        source: i.name.clone(),
        shards: i.shards.iter().map(|(k, n)| format!("{k}/{n}")).collect(),
        hosts: hosts.into_iter().collect(),
        started_utc: i
            .campaign
            .host_checks
            .iter()
            .map(|h| h.utc.clone())
            .min()
            .or_else(|| i.campaign.started_utc.clone()),
        ended_utc: i.campaign.ended_utc.clone(),
        records: mine.len(),
        profiles: profiles.iter().filter(|p| p.0 == n).count(),
    }
}
