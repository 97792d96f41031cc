//! Running one instance's KAT in a sandboxed child and judging it.

use super::log::{self, LogInput};
use crate::campaign::rundir::RunDir;
use crate::campaign::sandbox::{self, Exit, Spec};
use crate::candidate::{Api, Candidate, Instance};
use crate::child::protocol::{KatJob, KatOutput, Limits, Request};
use crate::dataset::schema::BuildEntry;
use crate::util::{atomic_write, sha256_file};
use anyhow::Result;
use std::time::Duration;

#[derive(Debug, Clone)]
pub struct KatOptions {
    pub timeout: Duration,
    pub quick: bool,
    /// RLIMIT_AS of the KAT child, MiB.
    pub mem_limit_mib: u64,
}

impl Default for KatOptions {
    fn default() -> Self {
        KatOptions {
            timeout: Duration::from_secs(900),
            quick: false,
            mem_limit_mib: crate::campaign::DEFAULT_MEM_LIMIT_MIB,
        }
    }
}

#[derive(Debug, Clone)]
pub struct Verdict {
    pub status: String,
    pub detail: Option<String>,
    /// ALGORITHM_INSTANCE (or CRYPTO_ALGNAME) from the library's metadata.
    pub instance: Option<String>,
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
    let _ = std::fs::remove_dir_all(&out_dir);
    std::fs::create_dir_all(&out_dir)?;
    let job = KatJob {
        limits: Limits {
            address_space: Some(opts.mem_limit_mib << 20),
            cpu_seconds: Some(opts.timeout.as_secs() + 5),
            file_size: Some(2 << 30),
            pin_cpu: None,
        },
        library: library.clone(),
        kind: cand.kind,
        api: cand.api,
        rng: inst.kat_rng().to_string(),
        out_dir: out_dir.clone(),
        count: inst.kat_count.unwrap_or(10),
        quick: opts.quick,
    };
    let spec = Spec {
        workdir: run.scratch(&format!("kat-{}-{}", cand.id, inst.label))?,
        timeout: opts.timeout,
    };
    let outcome = sandbox::run(&spec, &Request::Kat(job))?;
    let output: Option<KatOutput> = sandbox::parse_result(&outcome).ok();
    let (mut status, mut detail) = match (&outcome.exit, &output) {
        (Exit::Timeout, _) => (
            "TIMEOUT".to_string(),
            Some(format!("no result within {} s", opts.timeout.as_secs())),
        ),
        (Exit::Signal(s), _) => (
            "CRASH".to_string(),
            outcome.failure_text().or(Some(format!("signal {s}"))),
        ),
        (_, Some(o)) => (o.status.clone(), o.detail.clone()),
        (Exit::Code(_), None) => (
            "CRASH".to_string(),
            outcome.failure_text().map(|t| format!("child {t}")),
        ),
    };
    let mut files = Vec::new();
    if status == "ok" {
        let written = output.as_ref().map(|o| o.files.clone()).unwrap_or_default();
        let (s, d, lines) = judge(cand, inst, run, &out_dir, &written)?;
        status = s;
        detail = d;
        files = lines;
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
        sandbox: output
            .as_ref()
            .map(|o| o.sandbox.as_str())
            .or(outcome.sandbox.as_deref())
            .unwrap_or(""),
        status: &status,
        detail: detail.as_deref(),
    });
    atomic_write(&run.kat_log(&cand.id, &inst.label), text.as_bytes())?;
    Ok(Verdict {
        status,
        detail,
        instance: meta.map(|m| m.instance).filter(|s| !s.is_empty()),
    })
}

/// A written KAT file for the log: (path relative to the run, bytes, digest line).
type FileLine = (String, u64, String);
/// Status, detail and the files judged.
type Judged = (String, Option<String>, Vec<FileLine>);

/// Compares generated files with the expected digests: PASS, MISMATCH or NOKAT.
fn judge(
    cand: &Candidate,
    inst: &Instance,
    run: &RunDir,
    out_dir: &std::path::Path,
    written: &[String],
) -> Result<Judged> {
    let mut lines = Vec::new();
    match cand.api {
        Api::Nist => {
            let Some(name) = written.first() else {
                return Ok((
                    "NOKAT".into(),
                    Some("no KAT text was produced".into()),
                    lines,
                ));
            };
            let path = out_dir.join(name);
            let got = sha256_file(&path)?;
            let bytes = std::fs::metadata(&path)?.len();
            let expected = inst.kat.as_ref().and_then(|k| k.sha256.clone());
            lines.push((
                run.rel(&path),
                bytes,
                format!(
                    "sha256 {got} expected {}",
                    expected.as_deref().unwrap_or("-")
                ),
            ));
            Ok(match expected {
                None => (
                    "NOKAT".into(),
                    Some("the manifest gives no kat.sha256".into()),
                    lines,
                ),
                Some(e) if e.eq_ignore_ascii_case(&got) => ("PASS".into(), None, lines),
                Some(e) => (
                    "MISMATCH".into(),
                    Some(format!(
                        "sha256 {} != expected {}",
                        &got[..16],
                        &e[..e.len().min(16)]
                    )),
                    lines,
                ),
            })
        }
        Api::Iccs => Ok((
            "NOKAT".into(),
            Some("ICCS KAT manifests are not checked yet".into()),
            lines,
        )),
    }
}
