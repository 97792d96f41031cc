//! Phase `memory` (issue 36): per measurable instance, relink its proven objects with the
//! heap recorder (`profile::heap`), then one jailed job per operation on that library:
//! heap figures of the library's own allocator calls during one call, and the painted
//! stack. It runs after the timed phases and never inside a trial, so timed records are as
//! without it. `memory/<cand>/<label>.json` per instance; an instance that cannot be
//! relinked gets a failed record saying why, and the phase goes on.

use crate::build::BuildOptions;
use crate::campaign::context::{self, Target};
use crate::campaign::measurable;
use crate::campaign::phases::outputs;
use crate::campaign::{Selected, Settings};
use crate::child::protocol::{MemoryOutput, Request};
use crate::dataset::memory::{MEMORY_SCHEMA, MemoryRecord, OpMemory, STACK_LIMIT_BYTES};
use crate::dataset::schema::{BuildEntry, Calibration, ProcessStatus};
use crate::profile::heap;
use crate::rundir::RunDir;
use crate::sandbox::{self, Exit, Spec};
use crate::util::progress::Progress;
use crate::util::{read_json, tail, time::utc_now_iso};
use anyhow::Result;
use std::time::Duration;

/// A memory job's wall-clock timeout: this much plus `CALLS_PER_JOB` × the calibrated call
/// (the painting may repeat a deep call a few times), or the operation budget without one.
const TIMEOUT_BASE_S: f64 = 30.0;
const CALLS_PER_JOB: f64 = 12.0;

pub fn run(run: &RunDir, selected: &[Selected], settings: &Settings) -> Result<()> {
    let issues = match &settings.kat_issues {
        Some(p) => measurable::load_kat_issues(p)?,
        None => Vec::new(),
    };
    let build = run.load_build()?;
    let (todo, skipped) = measurable::split(run, &build, selected, &issues, settings.shard);
    for (key, reason) in &skipped {
        crate::util::say!("memory: skipping {key}: {reason}");
    }
    let recorder = heap::recorder_sha256();
    let work: Vec<_> = todo
        .into_iter()
        .filter(|(s, e)| {
            let path = run.memory_path(&s.cand.id, &s.inst.label);
            let what = || format!("memory {}", s.key());
            outputs::due(what, &path, "record", |old: &MemoryRecord| {
                if old.timed_library_sha256 != e.library_sha256 {
                    Some("the timed library changed".into())
                } else if old.recorder_sha256 != recorder {
                    Some("the heap recorder changed".into())
                } else {
                    None
                }
            })
        })
        .collect();
    let progress = Progress::new("memory", work.len() as u64);
    let build = settings.build_options();
    outputs::each(
        &progress,
        &work,
        |(s, _)| format!("{} relink", s.key()),
        |(s, e)| {
            let rec = instance(run, settings, &build, s, e, &progress);
            Ok((run.memory_path(&s.cand.id, &s.inst.label), rec))
        },
        |_, rec| line(rec),
    )?;
    progress.finish();
    Ok(())
}

/// `memory <cand> <label>: <status>` and per operation its heap peak, leak and stack.
pub fn line(r: &MemoryRecord) -> String {
    let head = format!("memory {} {}: {}", r.candidate, r.label, r.status);
    if let Some(e) = &r.error {
        return format!("{head} ({e})");
    }
    let ops: Vec<String> = r
        .operations
        .iter()
        .map(|o| match o.status {
            ProcessStatus::Complete => format!(
                "{} heap {} B leak {} B stack {} B",
                o.key(),
                o.heap_peak_bytes().unwrap_or(0),
                o.leak_bytes().unwrap_or(0),
                o.stack_bytes.unwrap_or(0)
            ),
            _ => format!(
                "{} {} ({})",
                o.key(),
                o.status,
                o.error.as_deref().unwrap_or("")
            ),
        })
        .collect();
    format!("{head}: {}", ops.join("; "))
}

fn instance(
    run: &RunDir,
    settings: &Settings,
    build: &BuildOptions,
    s: &Selected,
    e: &BuildEntry,
    progress: &Progress,
) -> MemoryRecord {
    let mut rec = MemoryRecord {
        schema: MEMORY_SCHEMA,
        candidate: s.cand.id.clone(),
        label: s.inst.label.clone(),
        status: ProcessStatus::Failed,
        timed_library_sha256: e.library_sha256.clone(),
        recorder_sha256: heap::recorder_sha256(),
        wrapped_symbols: heap::HEAP_WRAPS.iter().map(|w| w.to_string()).collect(),
        stack_limit_bytes: STACK_LIMIT_BYTES,
        utc: utc_now_iso(),
        ..MemoryRecord::default()
    };
    let relinked = match heap::relink(&run.root, &s.cand, &s.inst, e, build) {
        Ok(r) => r,
        Err(err) => {
            rec.error = Some(format!("relink failed: {}", err.reason));
            return rec;
        }
    };
    rec.recorder_library_sha256 = Some(relinked.sha256.clone());
    rec.static_size = Some(relinked.static_size.clone());
    for op in measurable::operations(s.cand.kind, None) {
        let t = Target {
            sel: s,
            entry: e,
            op: &op,
        };
        progress.working_on(&format!("{} {}", s.key(), op.key()));
        rec.operations.push(
            one(run, settings, &t, &relinked.library).unwrap_or_else(|err| OpMemory {
                operation: op.op.clone(),
                input_bytes: op.input_bytes,
                status: ProcessStatus::Failed,
                error: Some(format!("{err:#}")),
                ..OpMemory::default()
            }),
        );
    }
    rec.status = MemoryRecord::status_of(&rec.operations);
    rec
}

/// One operation's job on the recording library, in the jail with the campaign's limits.
fn one(
    run: &RunDir,
    settings: &Settings,
    t: &Target,
    library: &std::path::Path,
) -> Result<OpMemory> {
    let mut job = context::job(run, settings, t);
    job.library = library.to_path_buf();
    let cal: Option<Calibration> =
        read_json(&run.calibration_path(t.cand(), t.label(), &t.key())).ok();
    let t1 = cal
        .filter(|c| c.status == ProcessStatus::Complete)
        .map_or(settings.op_budget_s, |c| c.t1_s + c.prepare_s);
    let timeout = settings.child_timeout_s(TIMEOUT_BASE_S + CALLS_PER_JOB * t1);
    job.limits.cpu_seconds = Some(timeout.ceil() as u64 + 5);
    let spec = Spec {
        workdir: run.scratch(&t.scratch_name("mem"))?,
        timeout: Duration::from_secs_f64(timeout.max(1.0)),
    };
    let outcome = sandbox::run(&spec, &settings.jail, &Request::Memory(job))?;
    let failed = |why: String| OpMemory {
        operation: t.op.op.clone(),
        input_bytes: t.op.input_bytes,
        status: ProcessStatus::Failed,
        error: Some(why),
        ..OpMemory::default()
    };
    let mut op = match (
        &outcome.exit,
        sandbox::parse_result::<MemoryOutput>(&outcome),
    ) {
        (Exit::Timeout, _) => failed(format!("hard timeout after {timeout:.0} s")),
        (_, Ok(o)) => o.op,
        (_, Err(_)) => failed(format!(
            "crashed: {}",
            outcome.failure_text().unwrap_or_else(|| "no result".into())
        )),
    };
    // The job's words are only figures: which operation it was is ours.
    op.operation = t.op.op.clone();
    op.input_bytes = t.op.input_bytes;
    if op.status != ProcessStatus::Complete {
        op.status = ProcessStatus::Failed;
        if op.error.is_none() {
            op.error = Some(tail(outcome.stderr.trim(), 300));
        }
    }
    Ok(op)
}
