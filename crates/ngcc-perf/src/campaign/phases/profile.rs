//! Phase `profile` (reference-harness.md §5.4): per measurable reference instance, relink
//! with the wrappers (once per instance and process), check the relinked library is
//! behaviourally the timed one, and profile each operation in a pinned child.
//! `profile/<cand>/<label>__<op>.json` holds the schema 2 profile plus our `ngcc` block;
//! an instance that cannot be relinked gets `<label>__RELINK_FAILED.json` and the phase goes
//! on with the others.

use crate::build::BuildOptions;
use crate::campaign::context::{MeasureCtx, Target};
use crate::campaign::measurable::{self, OpSpec};
use crate::campaign::phases::outputs;
use crate::campaign::{Phase, Selected, Settings, fresh};
use crate::candidate::Kind;
use crate::child::protocol::{ProfileOutput, Request};
use crate::dataset::schema::{
    BuildEntry, Calibration, Op, ProcessStatus, Profile, ProfileExtra, ProfileTotal, SCHEMA,
};
use crate::measure::plan::{profile_iterations, profile_timeout_s};
use crate::profile::relink::{self, ProfPaths, RelinkError, Relinked};
use crate::profile::shares::{self, Overhead};
use crate::rundir::RunDir;
use crate::sandbox::{self, Exit, Spec};
use crate::util::progress::Progress;
use crate::util::{read_json, tail, time::utc_now_iso, write_json};
use anyhow::Result;
use serde::Serialize;
use serde_json::{Map, Value};
use std::path::Path;
use std::time::Duration;

/// The KAT cross-check of a relinked library runs only when one KAT pass is cheap: at most
/// this many seconds per operation (from the calibration).
const KAT_CHECK_MAX_T1_S: f64 = 1.0;

/// How a profile that was not run begins its stderr (see `profile_one`).
const NOT_PROFILED: &str = "not profiled: its calibration was killed at the timeout";

/// `profile/<cand>/<label>__RELINK_FAILED.json`: run-internal and never published
/// (`dataset::publish` skips it, `dataset::load` ignores files without `operation`).
#[derive(Serialize)]
struct RelinkFailed<'a> {
    candidate: &'a str,
    label: &'a str,
    reason: &'a str,
    /// Last 2000 characters of the failing tool's stderr (the reference's only field).
    stderr: &'a str,
    utc: String,
}

/// The phase: host check, selection (§5.4), relink, profile.
pub fn run(run: &RunDir, selected: &[Selected], settings: &Settings) -> Result<()> {
    // Profiling plans nothing from the trial target: keep the run's recorded planning so a
    // profile-only invocation does not trip the "same planning" guard of the host check.
    let planning = run
        .load_campaign()?
        .planning
        .unwrap_or_else(|| settings.planning());
    let measurable::PhaseStart {
        host,
        todo,
        skipped,
    } = measurable::gate_and_split(run, Phase::Profile, selected, settings, &planning)?;
    let ctx = MeasureCtx {
        run,
        settings,
        host,
        planning,
        runner: &crate::campaign::runner::JailRunner::new(&settings.jail),
    };
    for (key, reason) in &skipped {
        crate::util::say!("profile: skipping {key}: {reason}");
    }
    // Reference variant only; hash candidates are not profiled (their whole op is the hash).
    let build = settings.build_options();
    let mut work = Vec::new();
    for (s, e) in todo {
        if e.variant != "reference" || s.cand.kind == Kind::Hash {
            continue;
        }
        let pending: Vec<OpSpec> = profile_ops(s.cand.kind)
            .into_iter()
            .filter(|o| {
                let path = run.profile_path(&s.cand.id, &s.inst.label, &o.key());
                let what = || format!("profile {} {}", s.key(), o.key());
                outputs::due(what, &path, "profile", |old: &Profile| {
                    fresh::profile(old, &e).or_else(|| {
                        let t = Target {
                            sel: &s,
                            entry: &e,
                            op: o,
                        };
                        skip_outdated(old, ctx.calibration(&t).map(|c| c.status))
                    })
                })
            })
            .collect();
        if !pending.is_empty() {
            work.push((s, e, pending));
        }
    }
    let n_ops: usize = work.iter().map(|w| w.2.len()).sum();
    let progress = Progress::new("profile", n_ops as u64);
    for (s, e, pending) in &work {
        progress.working_on(&format!("{} relink", s.key()));
        let relinked = match relink_checked(&ctx, &build, s, e) {
            Ok(r) => r,
            Err(err) => {
                write_json(
                    &run.relink_failed_path(&s.cand.id, &s.inst.label),
                    &RelinkFailed {
                        candidate: &s.cand.id,
                        label: &s.inst.label,
                        reason: &err.reason,
                        stderr: &err.stderr,
                        utc: utc_now_iso(),
                    },
                )?;
                for o in pending {
                    progress.done(&format!(
                        "profile {} {} {}: relink_failed ({})",
                        s.cand.id,
                        s.inst.label,
                        o.key(),
                        err.reason
                    ));
                }
                continue;
            }
        };
        let _ = std::fs::remove_file(run.relink_failed_path(&s.cand.id, &s.inst.label));
        outputs::each(
            &progress,
            pending,
            |op| format!("{} {}", s.key(), op.key()),
            |op| {
                let t = Target {
                    sel: s,
                    entry: e,
                    op,
                };
                let p = profile_one(&ctx, &t, &relinked)?;
                Ok((run.profile_path(t.cand(), t.label(), &t.key()), p))
            },
            |_, p| line(p),
        )?;
    }
    progress.finish();
    Ok(())
}

/// The operations profiled per kind: KEX only the whole exchange (§5.4).
fn profile_ops(kind: Kind) -> Vec<OpSpec> {
    match kind {
        Kind::Kex => vec![OpSpec::plain(Op::Exchange)],
        Kind::Hash => Vec::new(),
        k => measurable::operations(k, None),
    }
}

/// `profile <cand> <label> <op>: <status> hash=<x.x>% rng=<y.y>%` (+ the corrected hash share).
pub fn line(p: &Profile) -> String {
    let head = format!("profile {} {} {}", p.candidate, p.label, op_key(p));
    if p.status != ProcessStatus::Complete {
        let why = p.stderr.lines().next().unwrap_or("").trim();
        return format!("{head}: {} ({why})", p.status);
    }
    let share = p.share.clone().unwrap_or_default();
    let extra = p.ngcc.clone().unwrap_or_default();
    let rng = crate::measure::stats::py_sum(
        share
            .iter()
            .filter(|(f, _)| extra.rng_fns.contains(f))
            .filter_map(|(_, v)| v.as_f64()),
    );
    let ops = p.total.as_ref().map_or(0, |t| t.operations);
    let cpo: Vec<String> = shares::calls_per_op(&p.calls, ops)
        .into_iter()
        .map(|(f, c)| format!("{f} {}", crate::report::format::g3(c)))
        .collect();
    format!(
        "{head}: {} hash={:.1}% rng={:.1}% (corrected hash={:.1}%, wrapper {:.1} ticks/call; calls/op: {})",
        p.status,
        100.0 * p.hash_share.unwrap_or(0.0),
        100.0 * rng,
        100.0 * extra.hash_share_corrected,
        extra.wrapper_ticks_per_call,
        if cpo.is_empty() {
            "none".into()
        } else {
            cpo.join(", ")
        }
    )
}

fn op_key(p: &Profile) -> String {
    p.operation.key(p.input_bytes)
}

/// Relinks and, when the instance has cheap KAT output, checks the relinked library writes
/// the same KAT files as the timed one: the wrappers must only observe.
fn relink_checked(
    ctx: &MeasureCtx,
    build: &BuildOptions,
    s: &Selected,
    e: &BuildEntry,
) -> Result<Relink, RelinkError> {
    let (run, settings) = (ctx.run, ctx.settings);
    let r = relink::relink(&run.root, &s.cand, &s.inst, e, build)?;
    let timed_dir = run.katgen_dir(&s.cand.id, &s.inst.label);
    let expected = kat_files(&timed_dir);
    let max_t1 = profile_ops(s.cand.kind)
        .iter()
        .filter_map(|o| {
            read_json::<Calibration>(&run.calibration_path(&s.cand.id, &s.inst.label, &o.key()))
                .ok()
        })
        .map(|c| c.t1_s)
        .fold(0.0, f64::max);
    if expected.is_empty() || max_t1 > KAT_CHECK_MAX_T1_S {
        return Ok(Relink {
            lib: r,
            kat_identical: None,
        });
    }
    let out_dir = ProfPaths::new(&run.root, &s.cand.id, &s.inst.label)
        .work
        .join("katgen");
    let fail = |reason: String, stderr: String| RelinkError { reason, stderr };
    let opts = crate::kat::run::KatOptions {
        quick: true,
        ..settings.kat_options()
    };
    let name = format!("profkat-{}-{}", s.cand.id, s.inst.label);
    let (outcome, output, _) = crate::kat::run::run_job(
        run,
        &name,
        &s.cand,
        &s.inst,
        r.library.clone(),
        &opts,
        &out_dir,
    )
    .map_err(|x| fail(format!("{x:#}"), String::new()))?;
    let status = output
        .map(|o| o.status.to_string())
        .unwrap_or_else(|| outcome.failure_text().unwrap_or_else(|| "no result".into()));
    for (name, bytes) in &expected {
        let got = std::fs::read(out_dir.join(name)).ok();
        if got.as_deref() != Some(bytes.as_slice()) {
            return Err(fail(
                format!(
                    "the relinked library's KAT output {name} differs from the timed library's (KAT job: {status}): a wrapper changed behaviour"
                ),
                tail(&outcome.stderr, 2000),
            ));
        }
    }
    Ok(Relink {
        lib: r,
        kat_identical: Some(true),
    })
}

/// (file name, bytes) of every file a KAT job left in `dir`, sorted by name.
fn kat_files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut v: Vec<(String, Vec<u8>)> = rd
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_file())
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().to_string();
            std::fs::read(e.path()).ok().map(|b| (name, b))
        })
        .collect();
    v.sort();
    v
}

/// A relinked library and whether its KAT output matched the timed one's.
struct Relink {
    lib: Relinked,
    /// None: no KAT output cheap enough to compare.
    kat_identical: Option<bool>,
}

/// Why a profile that was not run (its calibration hung) must be run now: its calibration no
/// longer ended at the timeout.
fn skip_outdated(old: &Profile, calibration: Option<ProcessStatus>) -> Option<String> {
    let skipped = old
        .ngcc
        .as_ref()
        .is_some_and(|x| x.skipped_hung_calibration);
    (skipped && calibration != Some(ProcessStatus::HardTimeout))
        .then(|| "its calibration no longer timed out".to_string())
}

fn profile_one(ctx: &MeasureCtx, t: &Target, relink: &Relink) -> Result<Profile> {
    let (run, settings) = (ctx.run, ctx.settings);
    let cal = ctx.calibration(t);
    // An operation its calibration had to kill would only hang again, for a whole timeout.
    if let Some(c) = cal
        .as_ref()
        .filter(|c| c.status == ProcessStatus::HardTimeout)
    {
        let why = format!(
            "{NOT_PROFILED} ({})",
            c.error.as_deref().unwrap_or("hard_timeout")
        );
        let out = ProfileOutput {
            status: ProcessStatus::Failed,
            error: Some(why.clone()),
            ..Default::default()
        };
        let mut skipped = assemble(t, relink, out, Vec::new(), why);
        if let Some(x) = skipped.ngcc.as_mut() {
            x.skipped_hung_calibration = true;
        }
        return Ok(skipped);
    }
    let cal = cal.filter(|c| c.status == ProcessStatus::Complete);
    // §5.4: t1 defaults to 1 s without a calibration.
    let (t1, setup) = cal
        .as_ref()
        .map_or((1.0, 0.0), |c| (c.t1_s, c.overhead_s + c.prepare_s));
    let (iters, warmups) = profile_iterations(t1);
    let timeout = profile_timeout_s(t1, setup, iters, warmups);
    let mut job = ctx.job(t);
    job.library = relink.lib.library.clone();
    job.iterations = iters;
    job.warmups = warmups;
    let timeout = settings
        .measure_timeout_s
        .map_or(timeout, |c| timeout.min(c));
    let spec = Spec {
        workdir: run.scratch(&t.scratch_name("prof"))?,
        timeout: Duration::from_secs_f64(timeout.max(1.0)),
    };
    let outcome = ctx.runner.run(&spec, &Request::Profile(job))?;
    let out = match (
        &outcome.exit,
        sandbox::parse_result::<ProfileOutput>(&outcome),
    ) {
        (Exit::Timeout, _) => ProfileOutput {
            status: ProcessStatus::Failed,
            error: Some(format!("hard timeout after {timeout:.0} s")),
            ..Default::default()
        },
        (_, Ok(o)) => o,
        (_, Err(_)) => ProfileOutput {
            status: ProcessStatus::Failed,
            error: Some(format!(
                "crashed: {}",
                outcome.failure_text().unwrap_or_else(|| "no result".into())
            )),
            ..Default::default()
        },
    };
    let stderr = tail(
        [
            out.error.clone().unwrap_or_default(),
            outcome.stderr.clone(),
        ]
        .join("\n")
        .trim(),
        2000,
    );
    Ok(assemble(t, relink, out, outcome.command.clone(), stderr))
}

/// The schema 2 profile (§7.5) with our `ngcc` block, from a child's output.
fn assemble(
    t: &Target,
    relink: &Relink,
    out: ProfileOutput,
    command: Vec<String>,
    stderr: String,
) -> Profile {
    let (e, op, relinked) = (t.entry, t.op, &relink.lib);
    let complete = out.status == ProcessStatus::Complete;
    let mut meta = Map::new();
    for (k, v) in [
        ("id", out.id.clone()),
        ("instance", out.instance.clone()),
        ("operation", op.op.name()),
        ("tick_source", out.tick_source.clone()),
        ("tick_hz", format!("{:.0}", out.tick_hz)),
        ("warmups", out.warmups.to_string()),
        ("overflow_calls", out.overflow_calls.to_string()),
    ] {
        meta.insert(k.into(), Value::String(v));
    }
    let hash_fns = relinked.plan.hash_fns();
    let total = complete.then_some(ProfileTotal {
        operations: out.operations,
        ticks: out.total_ticks,
    });
    let ticks = total.as_ref().map_or(0, |t| t.ticks);
    let share = if complete {
        shares::shares(&out.calls, ticks)
    } else {
        None
    };
    let hash_share = share.as_ref().map(|m| shares::hash_share(m, &hash_fns));
    let overhead = Overhead {
        per_call: out.wrapper_ticks_per_call,
        inside: out.wrapper_inside_ticks_per_call,
    };
    let (share_corrected, hash_share_corrected) = if share.is_some() {
        shares::corrected(&out.calls, ticks, overhead, &hash_fns)
    } else {
        Default::default()
    };
    let extra = ProfileExtra {
        relinked_library_sha256: relinked.sha256.clone(),
        timed_library_sha256: e.library_sha256.clone(),
        wrapper_ticks_per_call: out.wrapper_ticks_per_call,
        share_corrected,
        hash_share_corrected,
        bytes_hashed_per_op: shares::bytes_hashed_per_op(&out.calls, &hash_fns, out.operations),
        hash_fns,
        rng_fns: relinked.plan.rng_fns(),
        wrapper_inside_ticks_per_call: out.wrapper_inside_ticks_per_call,
        wrapped_symbols: relinked.plan.symbols(),
        unreached_symbols: relinked.plan.unreached.clone(),
        relinked_kat_identical: relink.kat_identical,
        preempted_ops_discarded: out.discarded_ops,
        preempted_ops_kept: out.preempted_ops_kept,
        skipped_hung_calibration: false,
    };
    Profile {
        schema: SCHEMA,
        candidate: t.cand().to_string(),
        label: t.label().to_string(),
        operation: op.op.clone(),
        input_bytes: op.input_bytes,
        status: if complete {
            ProcessStatus::Complete
        } else {
            ProcessStatus::Failed
        },
        command,
        stderr,
        meta,
        total,
        calls: out.calls,
        share,
        hash_share,
        ngcc: Some(extra),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::schema::ProfileCall;

    #[test]
    fn a_skipped_profile_is_redone_once_its_calibration_no_longer_hangs() {
        let skipped = Profile {
            status: ProcessStatus::Failed,
            stderr: format!("{NOT_PROFILED} (killed after 1.5 s)"),
            ngcc: Some(ProfileExtra {
                skipped_hung_calibration: true,
                ..ProfileExtra::default()
            }),
            ..Profile::default()
        };
        assert_eq!(
            skip_outdated(&skipped, Some(ProcessStatus::HardTimeout)),
            None
        );
        for now in [
            Some(ProcessStatus::Complete),
            Some(ProcessStatus::Failed),
            None,
        ] {
            assert_eq!(
                skip_outdated(&skipped, now.clone()).as_deref(),
                Some("its calibration no longer timed out"),
                "{now:?}"
            );
        }
        // A profile that ran is not redone for this reason, whatever its text says.
        let ran = Profile {
            stderr: "hard timeout after 2 s".into(),
            ngcc: Some(ProfileExtra::default()),
            ..skipped.clone()
        };
        assert_eq!(skip_outdated(&ran, Some(ProcessStatus::Complete)), None);
        let ran_with_that_text = Profile {
            ngcc: Some(ProfileExtra::default()),
            ..skipped
        };
        assert_eq!(
            skip_outdated(&ran_with_that_text, Some(ProcessStatus::Complete)),
            None
        );
    }

    #[test]
    fn kex_profiles_the_exchange_and_hash_nothing() {
        assert_eq!(profile_ops(Kind::Kex).len(), 1);
        assert!(profile_ops(Kind::Hash).is_empty());
    }

    #[test]
    fn the_line_shows_hash_and_rng_shares() {
        let calls = vec![
            ProfileCall {
                func: "shake256".into(),
                in_bits: 264,
                out_bits: 1024,
                calls: 6,
                ticks: 250,
            },
            ProfileCall {
                func: "randombytes".into(),
                in_bits: 0,
                out_bits: 256,
                calls: 3,
                ticks: 20,
            },
        ];
        let p = Profile {
            candidate: "c".into(),
            label: "l".into(),
            operation: Op::Enc,
            status: ProcessStatus::Complete,
            total: Some(ProfileTotal {
                operations: 3,
                ticks: 1000,
            }),
            share: shares::shares(&calls, 1000),
            hash_share: Some(0.25),
            calls,
            ngcc: Some(ProfileExtra {
                hash_fns: vec!["shake256".into()],
                rng_fns: vec!["randombytes".into()],
                hash_share_corrected: 0.2,
                wrapper_ticks_per_call: 40.0,
                ..ProfileExtra::default()
            }),
            ..Profile::default()
        };
        assert_eq!(
            line(&p),
            "profile c l enc: complete hash=25.0% rng=2.0% (corrected hash=20.0%, wrapper 40.0 ticks/call; calls/op: shake256 2, randombytes 1)"
        );
        let failed = Profile {
            status: ProcessStatus::Failed,
            stderr: "hard timeout after 301 s\nmore".into(),
            ..p
        };
        assert_eq!(
            line(&failed),
            "profile c l enc: failed (hard timeout after 301 s)"
        );
    }
}
