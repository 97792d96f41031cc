//! Running one instance's KAT in a sandboxed child and judging it.

use super::log::{self, LogInput};
use crate::candidate::kat_manifest::{LineMode, Manifest, digest};
use crate::candidate::{Api, Candidate, Instance};
use crate::child::protocol::{KatEnd, KatJob, KatOutput, Limits, Request};
use crate::dataset::schema::{BuildEntry, KatStatus};
use crate::rundir::RunDir;
use crate::sandbox::jail::ingest;
use crate::sandbox::{self, Exit, Outcome, Spec};
use crate::util::{atomic_write, sha256_file, sha256_hex};
use anyhow::Result;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Folder of the KAT files in a KAT job's scratch folder.
const KATGEN: &str = "katgen";
/// Most bytes of KAT text one job may leave (the hash KATs' 2^33-bit file is large).
const KAT_CAP: u64 = 512 << 20;

/// An ICCS KAT file name (`KAT_KEM_<instance>.txt`, `KAT_2_12_<instance>.txt`, …).
fn is_iccs_kat_name(n: &str) -> bool {
    n.starts_with("KAT_") && n.ends_with(".txt")
}

#[derive(Debug, Clone)]
pub struct KatOptions {
    pub timeout: Duration,
    pub quick: bool,
    /// RLIMIT_AS of the KAT child, MiB.
    pub mem_limit_mib: u64,
    /// How the KAT child's jail is built.
    pub jail: crate::sandbox::jail::JailOptions,
}

#[derive(Debug, Clone)]
pub struct Verdict {
    pub status: KatStatus,
    pub detail: Option<String>,
    /// ALGORITHM_INSTANCE (or CRYPTO_ALGNAME) from the library's metadata.
    pub instance: Option<String>,
}

/// The child job that writes one instance's KAT text into `out_dir`.
fn kat_job(
    cand: &Candidate,
    inst: &Instance,
    library: PathBuf,
    out_dir: PathBuf,
    opts: &KatOptions,
) -> KatJob {
    KatJob {
        limits: Limits {
            address_space: Some(opts.mem_limit_mib << 20),
            cpu_seconds: Some(opts.timeout.as_secs() + 5),
            file_size: Some(2 << 30),
            pin_cpu: None,
        },
        library,
        kind: cand.kind,
        api: cand.api,
        rng: inst.kat_rng(),
        out_dir,
        count: record_count(cand, inst),
        quick: opts.quick,
    }
}

/// One KAT job of `library` in the jail: the child writes into its scratch folder
/// (`RUN/scratch/<name>`), and the files are copied out of the jail into `out_dir` (emptied
/// first), to be judged here. Returns the outcome, the child's output (listing only the files
/// copied out) and the records per file asked for.
pub fn run_job(
    run: &RunDir,
    name: &str,
    cand: &Candidate,
    inst: &Instance,
    library: PathBuf,
    opts: &KatOptions,
    out_dir: &Path,
) -> Result<(Outcome, Option<KatOutput>, u32)> {
    let _ = std::fs::remove_dir_all(out_dir);
    std::fs::create_dir_all(out_dir)?;
    let scratch = run.scratch(name)?;
    let job = kat_job(cand, inst, library, scratch.join(KATGEN), opts);
    let count = job.count;
    let spec = Spec {
        workdir: scratch.clone(),
        timeout: opts.timeout,
    };
    let mut outcome = sandbox::run(&spec, &opts.jail, &Request::Kat(job))?;
    let mut output: Option<KatOutput> = sandbox::parse_result(&outcome).ok();
    // Only KAT text files (`nistkat.rsp`, the ICCS `KAT_*.txt`), at most KAT_CAP in all.
    let expect = ingest::Expect {
        names: &|n: &str| n == crate::child::kat_nist::FILE_NAME || is_iccs_kat_name(n),
        max_entries: 64,
        max_file: KAT_CAP,
        max_total: KAT_CAP,
    };
    let got = ingest::ingest(&scratch.join(KATGEN), out_dir, &expect)?;
    // The job's scratch goes once its files are out (the tmpfs went with the jail).
    let _ = std::fs::remove_dir_all(&scratch);
    let copied = got.names();
    if let Some(o) = output.as_mut() {
        o.files.retain(|f| copied.contains(f));
    }
    let notes: Vec<String> = (outcome.bound_hit.iter().cloned())
        .chain(outcome.scratch_note.iter().cloned())
        .chain(got.note())
        .collect();
    outcome.scratch_note = (!notes.is_empty()).then(|| notes.join("; "));
    Ok((outcome, output, count))
}

/// Records per ICCS KAT file: `kat_count` if set, else the `:N` of this label's manifest
/// lines (a manifest hashed over N records wants a run of N), else the official 10.
pub fn record_count(cand: &Candidate, inst: &Instance) -> u32 {
    if let Some(n) = inst.kat_count {
        return n;
    }
    let manifest = manifest_path(cand, inst)
        .ok()
        .and_then(|p| std::fs::read_to_string(p).ok())
        .and_then(|t| Manifest::parse(&t).ok());
    let counts: Vec<u32> = manifest
        .iter()
        .flat_map(|m| {
            m.files_of(&inst.label)
                .filter_map(|f| m.lookup(&inst.label, f))
                .filter_map(|e| e.mode.records)
                .collect::<Vec<_>>()
        })
        .collect();
    match counts.first() {
        // Lines that disagree cannot all be met: the judge then names the ones that differ.
        Some(&n) if counts.iter().all(|&c| c == n) => n,
        Some(&n) => counts.iter().copied().max().unwrap_or(n),
        None => 10,
    }
}

/// Everything a KAT verdict depends on besides the candidate's own behaviour: the library,
/// its flags and helper files, what is expected of it (the NIST digest, or this label's
/// kat.sha256 lines), how the KAT is run and the tool. Values are short or digests, so two
/// maps say by their differing keys why a verdict is stale.
pub fn inputs(
    cand: &Candidate,
    inst: &Instance,
    entry: &BuildEntry,
    opts: &KatOptions,
) -> BTreeMap<String, String> {
    let mut m = BTreeMap::new();
    let mut put = |k: &str, v: String| {
        m.insert(k.to_string(), v);
    };
    put("tool", env!("CARGO_PKG_VERSION").to_string());
    put(
        "library",
        entry.library_sha256.clone().unwrap_or_else(|| "-".into()),
    );
    put(
        "flags",
        format!(
            "{} {}",
            entry.flags,
            entry.build_flags.as_deref().unwrap_or("")
        ),
    );
    if !entry.helpers.is_empty() {
        let list: Vec<String> = entry
            .helpers
            .iter()
            .map(|h| format!("{} {}", h.name, h.sha256))
            .collect();
        put("helpers", sha256_hex(list.join("\n").as_bytes()));
    }
    put("quick", opts.quick.to_string());
    match cand.api {
        Api::Nist => {
            put("rng", inst.kat_rng().to_string());
            let given = inst.kat.as_ref().and_then(|k| k.sha256.clone());
            put(
                "expected",
                given.map_or_else(|| manifest_lines(cand, inst), |d| d.to_ascii_lowercase()),
            );
        }
        Api::Iccs => {
            put("records", record_count(cand, inst).to_string());
            put("expected", manifest_lines(cand, inst));
        }
    }
    m
}

/// A digest of the kat.sha256 lines that apply to this instance ("missing", "unreadable").
fn manifest_lines(cand: &Candidate, inst: &Instance) -> String {
    let Ok(Ok(text)) = manifest_path(cand, inst).map(std::fs::read_to_string) else {
        return "missing".into();
    };
    let Ok(man) = Manifest::parse(&text) else {
        return "unreadable".into();
    };
    // This label's lines and the bare names (they apply to every label).
    let prefix = format!("{}/", inst.label);
    let mut lines: Vec<String> = man
        .entries
        .iter()
        .filter(|e| e.name.starts_with(&prefix) || !e.name.contains('/'))
        .map(|e| e.to_string())
        .collect();
    lines.sort();
    sha256_hex(lines.join("\n").as_bytes())
}

/// Why a verdict computed from `was` does not stand for `now`: the inputs that changed, in
/// words, or `None` when it stands.
pub fn stale_because(
    was: &BTreeMap<String, String>,
    now: &BTreeMap<String, String>,
) -> Option<String> {
    if was.is_empty() {
        return Some("no record of what the last verdict was computed from".into());
    }
    let changed: Vec<&str> = now
        .keys()
        .chain(was.keys())
        .filter(|k| was.get(*k) != now.get(*k))
        .map(|k| match k.as_str() {
            "tool" => "the ngcc-perf version",
            "library" => "the library",
            "flags" => "the flags",
            "helpers" => "the helper files",
            "quick" => "--quick",
            "rng" => "kat.rng",
            "records" => "the record count",
            "expected" => "the expected digests (kat.sha256)",
            _ => "an input",
        })
        .collect();
    let mut changed = changed;
    changed.dedup();
    (!changed.is_empty()).then(|| format!("{} changed", changed.join(", ")))
}

pub fn run_kat(
    run: &RunDir,
    cand: &Candidate,
    inst: &Instance,
    entry: &BuildEntry,
    opts: &KatOptions,
) -> Result<Verdict> {
    let library = run.path(entry.library.as_deref().unwrap_or_default());
    let out_dir = run.katgen_dir(&cand.id, &inst.label);
    let name = format!("kat-{}-{}", cand.id, inst.label);
    let (outcome, output, count) =
        run_job(run, &name, cand, inst, library.clone(), opts, &out_dir)?;
    let (end, mut detail) = match (&outcome.exit, &output) {
        (Exit::Timeout, _) => (
            KatEnd::Failed(KatStatus::Timeout),
            Some(format!("no result within {} s", opts.timeout.as_secs())),
        ),
        (_, None) if outcome.unexpected.is_some() || outcome.jail_error.is_some() => {
            (KatEnd::Failed(KatStatus::Crash), outcome.failure_text())
        }
        (Exit::Signal(s), _) => (
            KatEnd::Failed(KatStatus::Crash),
            outcome.failure_text().or(Some(format!("signal {s}"))),
        ),
        // A status the child admits (a failure) is recorded; "ok" only means: judge the files.
        (_, Some(o)) => (o.status.clone(), o.detail.clone()),
        (Exit::Code(_), None) => (
            KatEnd::Failed(KatStatus::Crash),
            outcome.failure_text().map(|t| format!("child {t}")),
        ),
    };
    let mut files = Vec::new();
    let mut notes = Vec::new();
    let scratch_note = outcome.scratch_note.clone();
    let status = match end {
        KatEnd::Ok => {
            let empty = KatOutput::default();
            let judged = judge(
                cand,
                inst,
                run,
                &out_dir,
                output.as_ref().unwrap_or(&empty),
                count,
            )?;
            detail = judged.detail;
            files = judged.files;
            notes = judged.notes;
            judged.status
        }
        KatEnd::Failed(status) => {
            if let Some(o) = output.as_ref().filter(|o| !o.skipped.is_empty()) {
                notes.push(format!("quick: not generated: {}", o.skipped.join(", ")));
            }
            status
        }
    };
    if let Some(n) = scratch_note {
        notes.push(format!("jail: {n}"));
    }
    let meta = output.as_ref().and_then(|o| o.meta.clone());
    let candidate_output = [outcome.stdout.trim_end(), outcome.stderr.trim_end()]
        .iter()
        .filter(|s| !s.is_empty())
        .copied()
        .collect::<Vec<_>>()
        .join("\n");
    let empty = Vec::new();
    let text = log::render(&LogInput {
        library: entry.library.as_deref().unwrap_or(""),
        cand: &cand.id,
        label: &inst.label,
        kind: cand.kind.as_str(),
        meta: meta.as_ref(),
        candidate_output: &candidate_output,
        timing: output.as_ref().map(|o| &o.timing).unwrap_or(&empty),
        records: output.as_ref().map(|o| o.records).unwrap_or(0),
        files: &files,
        notes: &notes,
        sandbox: outcome.sandbox.as_deref().unwrap_or(""),
        status: status.as_str(),
        detail: detail.as_deref(),
    });
    atomic_write(&run.kat_log(&cand.id, &inst.label), text.as_bytes())?;
    Ok(Verdict {
        status,
        detail,
        instance: meta.map(|m| m.instance).filter(|s| !s.is_empty()),
    })
}

/// What the log shows per generated file: (path relative to the run, bytes, digest line).
type FileLines = Vec<(String, u64, String)>;

/// The outcome of comparing generated files with the expected digests.
struct Judged {
    status: KatStatus,
    detail: Option<String>,
    files: FileLines,
    notes: Vec<String>,
}

impl Judged {
    fn new(status: KatStatus, detail: Option<String>, files: FileLines) -> Judged {
        Judged {
            status,
            detail,
            files,
            notes: Vec::new(),
        }
    }
}

/// Compares generated files with the expected digests: PASS, MISMATCH or NOKAT.
fn judge(
    cand: &Candidate,
    inst: &Instance,
    run: &RunDir,
    out_dir: &Path,
    output: &KatOutput,
    count: u32,
) -> Result<Judged> {
    let written = &output.files;
    match cand.api {
        Api::Nist => {
            let mut lines = Vec::new();
            let Some(name) = written.first() else {
                return Ok(Judged::new(
                    KatStatus::NoKat,
                    Some("no KAT text was produced".into()),
                    lines,
                ));
            };
            let path = out_dir.join(name);
            let mut got = sha256_file(&path)?;
            let bytes = std::fs::metadata(&path)?.len();
            let mut expected = inst.kat.as_ref().and_then(|k| k.sha256.clone());
            // Without candidate.toml `kat.sha256`: the kat.sha256 manifest's line for this
            // file (what `kat manifest` writes), compared in its mode.
            if expected.is_none()
                && let Ok(text) = std::fs::read_to_string(manifest_path(cand, inst)?)
                && let Ok(m) = Manifest::parse(&text)
                && let Some(e) = m.lookup(&inst.label, name)
            {
                got = digest(&String::from_utf8_lossy(&std::fs::read(&path)?), e.mode);
                expected = Some(e.sha256.clone());
            }
            lines.push((
                run.rel(&path),
                bytes,
                format!(
                    "sha256 {got} expected {}",
                    expected.as_deref().unwrap_or("-")
                ),
            ));
            Ok(match expected {
                None => Judged::new(
                    KatStatus::NoKat,
                    Some("no expected digest (candidate.toml kat.sha256, or a kat.sha256 manifest line)".into()),
                    lines,
                ),
                Some(e) if e.eq_ignore_ascii_case(&got) => {
                    Judged::new(KatStatus::Pass, None, lines)
                }
                Some(e) => Judged::new(
                    KatStatus::Mismatch,
                    Some(format!(
                        "sha256 {} != expected {}",
                        &got[..16],
                        &e[..e.len().min(16)]
                    )),
                    lines,
                ),
            })
        }
        Api::Iccs => judge_iccs(cand, inst, run, out_dir, output, count),
    }
}

/// The candidate's kat.sha256: `kat.manifest` if given, else `kat.sha256` next to
/// candidate.toml (the reference layout).
pub fn manifest_path(cand: &Candidate, inst: &Instance) -> Result<PathBuf> {
    match inst.kat.as_ref().and_then(|k| k.manifest.as_deref()) {
        Some(m) => cand.resolve(&cand.root, m),
        None => Ok(cand.root.join("kat.sha256")),
    }
}

/// ICCS: every generated file needs a matching manifest line (reference §4.5), and every
/// manifest line of this label a generated file (unless `quick` skipped it on purpose).
fn judge_iccs(
    cand: &Candidate,
    inst: &Instance,
    run: &RunDir,
    out_dir: &Path,
    output: &KatOutput,
    count: u32,
) -> Result<Judged> {
    let path = manifest_path(cand, inst)?;
    let shown = path
        .strip_prefix(cand.root.parent().unwrap_or(&cand.root))
        .unwrap_or(&path)
        .display()
        .to_string();
    let manifest = match std::fs::read_to_string(&path) {
        Ok(text) => Manifest::parse(&text).map_err(|e| format!("{shown}: {e:#}")),
        Err(_) => Err(format!("no kat.sha256 manifest ({shown} is missing)")),
    };
    let (mut mismatched, mut unknown) = (Vec::new(), Vec::new());
    let mut files = Vec::new();
    for file in &output.files {
        let fpath = out_dir.join(file);
        let bytes = std::fs::read(&fpath)?;
        let text = String::from_utf8_lossy(&bytes);
        let entry = manifest
            .as_ref()
            .ok()
            .and_then(|m| m.lookup(&inst.label, file));
        let mode = entry.map(|e| e.mode).unwrap_or(LineMode::STRICT);
        let got = digest(&text, mode);
        files.push((
            run.rel(&fpath),
            bytes.len() as u64,
            format!("manifest {got} {mode} {file}"),
        ));
        match entry {
            None => unknown.push(format!("kat.sha256 has no line for {}/{file}", inst.label)),
            Some(e) => match e.mode.records {
                Some(n) if n != count => mismatched.push(format!(
                    "{file}: kat.sha256 covers {n} records, the run wrote {count}"
                )),
                _ if e.sha256 != got => {
                    let hint = if count != 10 && e.mode.records.is_none() {
                        format!(" (the run wrote {count} records)")
                    } else {
                        String::new()
                    };
                    mismatched.push(format!(
                        "{file}: sha256 {} differs from kat.sha256 {}{hint}",
                        &got[..16],
                        &e.sha256[..16]
                    ));
                }
                _ => {}
            },
        }
    }
    let mut judged = if !mismatched.is_empty() {
        Judged::new(KatStatus::Mismatch, Some(mismatched.join("; ")), files)
    } else {
        match &manifest {
            Err(e) => Judged::new(KatStatus::NoKat, Some(e.clone()), files),
            Ok(m) => {
                for name in m.files_of(&inst.label) {
                    if !output.files.iter().any(|f| f == name)
                        && !output.skipped.iter().any(|f| f == name)
                    {
                        unknown.push(format!(
                            "kat.sha256 names {}/{name}, which the run did not produce",
                            inst.label
                        ));
                    }
                }
                if !unknown.is_empty() {
                    Judged::new(KatStatus::NoKat, Some(unknown.join("; ")), files)
                } else if output.files.is_empty() {
                    Judged::new(
                        KatStatus::NoKat,
                        Some("no KAT text was produced".into()),
                        files,
                    )
                } else {
                    Judged::new(KatStatus::Pass, None, files)
                }
            }
        }
    };
    if !output.skipped.is_empty() {
        let note = format!("quick: not generated: {}", output.skipped.join(", "));
        if judged.status == KatStatus::Pass {
            judged.detail = Some(note.clone());
        }
        judged.notes.push(note);
    }
    Ok(judged)
}
