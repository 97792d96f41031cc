//! The measurement core on a scripted runner (`campaign::runner::scripted`): calibration into
//! a plan, the trial processes into a record, the cross-checks' verdicts and the fresh/redo
//! rules, with exact numbers and no jailed process or real clock.
//!
//! Times are multiples of 1/1024 s and the counter runs at 2^30 Hz, so every sum the code
//! makes is exact and the figures can be compared with `==`.

use super::*;
use crate::campaign::host_gate::HostState;
use crate::campaign::phases::calibrate;
use crate::campaign::phases::toy_kit::ToyRun;
use crate::campaign::runner::Runner;
use crate::campaign::runner::scripted::{Reply, ScriptedRunner};
use crate::campaign::{Phase, Settings};
use crate::child::protocol::{OpOutput, VerifyValue};
use crate::util::write_json;

/// One tick of our clock in these tests: 1/1024 s.
const MS: f64 = 1.0 / 1024.0;
const HZ: f64 = (1u64 << 30) as f64;

/// A run directory with one KEM instance (`toy/l1`) whose library is built.
struct Kit {
    toy: ToyRun,
    settings: Settings,
    todo: Vec<Measurable>,
}

impl Kit {
    fn new() -> Kit {
        let toy = ToyRun::new("ngcc-runner-");
        let mut settings = Settings::new(&[Phase::Measure], Vec::new(), toy.run.path(""));
        settings.trial_target_s = 0.2;
        settings.op_budget_s = 5.0;
        let todo = vec![(toy.selected(), toy.entry.clone())];
        Kit {
            toy,
            settings,
            todo,
        }
    }

    fn ctx<'a>(&'a self, runner: &'a dyn Runner) -> MeasureCtx<'a> {
        MeasureCtx {
            run: &self.toy.run,
            settings: &self.settings,
            host: HostState {
                problems: Vec::new(),
                allow_unfixed: false,
                // No fixed clock: the lost-cycles rule is not held (the fake has no cycles).
                environment: HostEnv::default(),
                counter: CounterKind::Tsc,
                counter_hz: Some(HZ),
            },
            planning: self.settings.planning(),
            runner,
        }
    }

    fn entry(&self) -> &BuildEntry {
        &self.todo[0].1
    }

    fn sha(&self) -> String {
        self.entry().library_sha256.clone().unwrap()
    }

    /// A calibration of `op` on disk, of today's library unless `sha` says otherwise.
    fn calibration(&self, op: &str, t1: f64, sha: &str) -> Calibration {
        let cal = Calibration {
            status: ProcessStatus::Complete,
            t1_s: t1,
            t1_min_s: t1,
            cold_s: 4.0 * t1,
            counter: CounterKind::Tsc,
            library_sha256: sha.into(),
            ..Calibration::default()
        };
        write_json(&self.toy.run.calibration_path("toy", "l1", op), &cal).unwrap();
        cal
    }
}

/// What a calibration child of a 1/1024 s operation replies.
fn calibration_reply() -> Reply {
    let out = OpOutput {
        status: ProcessStatus::Complete,
        counter: CounterKind::Tsc,
        t1_s: MS,
        t1_min_s: 0.875 * MS,
        cold_s: 4.0 * MS,
        warm_calls: 250,
        ready_s: 4.0 * MS,
        prepare_s: 3.0 * MS,
        end_s: 0.5 - 8.0 * MS,
        ..OpOutput::default()
    };
    Reply::ok(out, 0.45, 0.5).leaving("setup/pk", b"saved key pair")
}

/// A trial process of `iters` calls claiming `claimed` seconds per call (ticks and thread CPU
/// time agreeing with it), whose jail the kernel saw use `cpu` seconds in `wall` seconds.
fn trial_reply(iters: u64, claimed: f64, cpu: f64, wall: f64) -> Reply {
    let seconds = iters as f64 * claimed;
    let out = OpOutput {
        status: ProcessStatus::Complete,
        counter: CounterKind::Tsc,
        trials: vec![Trial {
            measurements: iters,
            seconds,
            cycles: (seconds * HZ) as u64,
            cpu_seconds: Some(seconds),
            ..Trial::default()
        }],
        ..OpOutput::default()
    };
    Reply::ok(out, cpu, wall).leaving("last/pk", b"the last key pair")
}

/// A verify child that recomputed the pair and found it right.
fn verify_reply() -> Reply {
    let out = VerifyOutput {
        status: ProcessStatus::Complete,
        values: vec![VerifyValue {
            what: "the key pair".into(),
            got: "AA".into(),
            expect: Expect::Equal("AA".into()),
        }],
        ..VerifyOutput::default()
    };
    Reply::ok(out, 0.01, 0.02)
}

/// The fixed cost the three scripted probes give: the least CPU and the least wall.
const PROBES: [(f64, f64); 3] = [
    (6.0 * MS, 10.0 * MS),
    (5.0 * MS, 12.0 * MS),
    (7.0 * MS, 8.0 * MS),
];
const FIXED: FixedCost = FixedCost {
    cpu_s: 5.0 * MS,
    wall_s: 8.0 * MS,
    near_record: false,
};

/// The plan of keygen from the calibration phase below (t1 1/1024 s, fixed 11/1024 s).
const ITERS: u64 = 336;

/// Calibrates keygen on the fake (enc and dec have standing calibrations) and returns the
/// runner and keygen's plan.
fn calibrate_keygen(kit: &Kit) -> (ScriptedRunner, Planned<'_>) {
    kit.calibration("enc", MS, &kit.sha());
    kit.calibration("dec", MS, &kit.sha());
    let dry = |fixed: f64| trial_reply(26, MS, 0.05, 26.0 * MS + fixed * MS);
    let runner = ScriptedRunner::new(vec![calibration_reply(), dry(12.0), dry(10.0), dry(11.0)]);
    calibrate::run(&kit.ctx(&runner), &kit.todo).unwrap();
    let planned = plan_all(&kit.ctx(&runner), &kit.todo)
        .into_iter()
        .find(|p| p.op.op == Op::Keygen)
        .unwrap();
    (runner, planned)
}

#[test]
fn a_calibration_on_the_fake_gives_its_plan() {
    let kit = Kit::new();
    let (runner, planned) = calibrate_keygen(&kit);
    // One calibration child, then three dry trials of 0.025 s of calls (26 of 1/1024 s).
    let seen = runner.seen();
    let names: Vec<&str> = seen.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "cal-toy-l1-keygen",
            "dry-toy-l1-keygen-0",
            "dry-toy-l1-keygen-1",
            "dry-toy-l1-keygen-2"
        ]
    );
    for (_, req) in &seen[1..] {
        let Request::Trial(j) = req else {
            panic!("a dry trial is a trial job: {req:?}")
        };
        assert_eq!((j.iterations, j.warmups, j.trials), (26, 0, 1));
    }
    let cal = &planned.cal;
    // Overhead: 8/1024 s after the job's end, 1/1024 s loading the setup; the dry trials'
    // fixed costs are 12, 10 and 11 /1024 s: their median is the trial's fixed cost.
    assert_eq!(cal.overhead_s, 9.0 * MS);
    assert_eq!(cal.dry_fixed_s, [12.0 * MS, 10.0 * MS, 11.0 * MS]);
    assert_eq!(cal.trial_fixed_s(), 11.0 * MS);
    assert_eq!(cal.library_sha256, kit.sha());
    assert!(
        kit.toy
            .run
            .setup_dir("toy", "l1", "keygen")
            .join("pk")
            .is_file()
    );
    // 0.2 s target: 205 calls; the 96 % timed share against 11 + 3 warm-ups of 1/1024 s:
    // 336 calls. Five separate processes.
    assert_eq!(
        planned.plan,
        Plan {
            iterations_per_trial: ITERS,
            warmups: 3,
            trials: 5,
            separate_processes: true,
            estimated_s: (5 * ITERS + 5 * 14) as f64 * MS,
            timeout_per_process_s: (3 * (ITERS + 3) + 33) as f64 * MS + 300.0,
        }
    );
}

#[test]
fn the_fixed_cost_is_the_least_cpu_and_the_least_wall_of_the_probes() {
    let kit = Kit::new();
    let runner = ScriptedRunner::default().with_probes(&PROBES);
    assert_eq!(fixed_cost(&kit.ctx(&runner), "fixed-cost").unwrap(), FIXED);
}

/// The honest jail of a trial of `iters` calls of `per_call` s: the timed CPU, the fixed cost,
/// three warm-ups and 4/1024 s of loading; 20/1024 s of wall beyond the timed seconds.
fn honest(iters: u64, per_call: f64) -> (f64, f64) {
    let timed = iters as f64 * per_call;
    (
        timed + 5.0 * MS + 3.0 * per_call + 4.0 * MS,
        timed + 20.0 * MS,
    )
}

/// Measures keygen on `trials` (then five verify children while all complete), with the
/// phase's fixed cost [`FIXED`] and `probes` for a flagged record's second look.
fn measure_keygen(trials: Vec<Reply>, probes: &[(f64, f64)]) -> (Record, ScriptedRunner) {
    let kit = Kit::new();
    let (_, planned) = calibrate_keygen(&kit);
    let n = trials.len();
    let mut script = trials;
    script.extend((0..n).map(|_| verify_reply()));
    let runner = ScriptedRunner::new(script).with_probes(probes);
    let record = measure_one(&kit.ctx(&runner), &planned, Some(FIXED)).unwrap();
    (record, runner)
}

#[test]
fn a_record_is_assembled_from_the_trials_with_exact_statistics() {
    let per_call = [1.0, 1.125, 0.875, 1.0, 1.25].map(|c| c * MS);
    let trials = per_call
        .iter()
        .map(|&p| {
            let (cpu, wall) = honest(ITERS, p);
            trial_reply(ITERS, p, cpu, wall)
        })
        .collect();
    let (rec, runner) = measure_keygen(trials, &[]);
    assert_eq!(runner.left(), 0);
    // Five trial processes of one trial each, seeded apart, then one verify child each.
    let seen = runner.seen();
    for (k, (name, req)) in seen[..5].iter().enumerate() {
        assert_eq!(name, &format!("trial-toy-l1-keygen-{k}"));
        let Request::Trial(j) = req else {
            panic!("{req:?}")
        };
        assert_eq!((j.iterations, j.warmups, j.trials), (ITERS, 3, 1));
        assert_eq!(j.seed_tweak, k as u8);
    }
    assert!(
        seen[5..]
            .iter()
            .all(|(_, r)| matches!(r, Request::Verify(_)))
    );

    assert_eq!(rec.status, RecordStatus::Complete);
    let st = rec.stats.as_ref().unwrap();
    assert_eq!(st.measurements, 5 * ITERS);
    // 336 calls in each trial at 1, 1.125, 0.875, 1 and 1.25 /1024 s.
    assert_eq!(st.mean_seconds, 1.05 * MS);
    assert_eq!(st.median_trial_seconds, MS);
    assert_eq!(st.min_trial_seconds, 0.875 * MS);
    assert_eq!(st.max_trial_seconds, 1.25 * MS);
    // 2^20 ticks per 1/1024 s.
    assert_eq!(st.mean_cycles, Some(1.05 * 1048576.0));
    assert_eq!(st.median_trial_cycles, Some(1048576.0));
    let x = rec.ngcc.as_ref().unwrap();
    assert_eq!(x.counter_hz, Some(HZ));
    assert_eq!(x.timed_s, 1764.0 * MS);
    assert_eq!(x.wall_s, 1864.0 * MS);
    assert_eq!(x.timed_fraction, 1764.0 / 1864.0);
    assert!(!x.disturbed);
    assert_eq!(x.inconsistent_reason, None);
    let c = x.checks.as_ref().unwrap();
    assert_eq!(c.fixed_cost, Some(FIXED));
    assert_eq!(c.warmups, 3);
    assert_eq!(c.calibration_min_s, 0.875 * MS);
    assert_eq!(c.clock_ratio, Some((1.0, 1.0)));
    assert_eq!(c.calibration_ratio, (1.0, 1.0 / 0.875));
    // The least accounted share: the fastest process (3 × 0.875 /1024 s of warm-ups).
    assert_eq!(c.cpu_accounted, Some(301.625 / 305.625));
    // Untimed: 9/1024 s and the warm-ups per process, against all their CPU.
    assert_eq!(c.untimed_share, Some(60.75 / 1824.75));
    assert_eq!(c.wall_accounted, Some((294.0 + 8.0) / (294.0 + 20.0)));
    assert_eq!(c.last_outputs.len(), 5);
    assert!(c.last_outputs.iter().all(|v| !v.is_failed()));
    assert_eq!(rec.plan.iterations_per_trial, ITERS);
}

#[test]
fn a_child_claiming_half_the_time_its_jail_used_is_inconsistent() {
    // The trials claim (seconds, ticks and thread CPU alike) half of 1/1024 s per call; the
    // kernel saw the CPU of full calls.
    let trials = (0..5)
        .map(|_| {
            let (cpu, wall) = honest(ITERS, MS);
            trial_reply(ITERS, 0.5 * MS, cpu, wall)
        })
        .collect();
    // Measured again next to the record, the fixed cost is what it was.
    let (rec, _) = measure_keygen(trials, &PROBES);
    assert_eq!(rec.status, RecordStatus::Inconsistent);
    let x = rec.ngcc.unwrap();
    // 168 timed + 5 fixed + 1.5 warm-ups of 348 /1024 s: 50 %.
    assert_eq!(
        x.inconsistent_reason.as_deref(),
        Some(
            "process 0: its jail used 0.339844 s of CPU (rusage, observed), its trials \
             account for 0.164062 s timed + 0.006348 s fixed cost and warm-ups (50 %, band ≥ \
             80 % less 15 ms)"
        )
    );
    let c = x.checks.unwrap();
    assert_eq!(c.cpu_accounted, Some(174.5 / 348.0));
    assert_eq!(
        c.fixed_cost,
        Some(FixedCost {
            near_record: true,
            ..FIXED
        })
    );
}

/// An honest trial process on a host that got busier after the phase's probes: its jail's
/// start took `loaded` seconds of CPU instead of [`FIXED`]'s.
fn honest_loaded(loaded: f64) -> Reply {
    let (cpu, wall) = honest(ITERS, MS);
    trial_reply(ITERS, MS, cpu - 5.0 * MS + loaded, wall + loaded)
}

#[test]
fn a_record_flagged_by_the_accounting_is_checked_again_with_the_fixed_cost_next_to_it() {
    // 336 timed + 5 fixed + 3 warm-ups of 463 /1024 s: 74 %, below 80 % less 15 ms.
    let trials = (0..5).map(|_| honest_loaded(120.0 * MS)).collect();
    let probes = [
        (125.0 * MS, 30.0 * MS),
        (120.0 * MS, 28.0 * MS),
        (130.0 * MS, 40.0 * MS),
    ];
    let (rec, runner) = measure_keygen(trials, &probes);
    // The record's five trials and five verify children, then the three probes.
    assert_eq!(runner.left(), 0);
    assert_eq!(rec.status, RecordStatus::Complete);
    let c = rec.ngcc.unwrap().checks.unwrap();
    assert_eq!(
        c.fixed_cost,
        Some(FixedCost {
            cpu_s: 120.0 * MS,
            wall_s: 28.0 * MS,
            near_record: true,
        })
    );
    assert_eq!(c.cpu_accounted, Some(459.0 / 463.0));
}

#[test]
fn a_fixed_cost_measured_again_never_falls_below_the_phases() {
    // Quieter probes next to the record than at the phase's start: the phase's figure stays,
    // and the record stays flagged.
    let trials = (0..5).map(|_| honest_loaded(120.0 * MS)).collect();
    let (rec, _) = measure_keygen(trials, &[(1.0 * MS, 2.0 * MS); 3]);
    assert_eq!(rec.status, RecordStatus::Inconsistent);
    let c = rec.ngcc.unwrap().checks.unwrap();
    assert_eq!(
        c.fixed_cost,
        Some(FixedCost {
            near_record: true,
            ..FIXED
        })
    );
}

#[test]
fn untimed_work_beyond_the_timed_is_inconsistent() {
    // A constructor that does a second of work before the trials (cached for every call).
    let trials = (0..5)
        .map(|_| {
            let (cpu, wall) = honest(ITERS, MS);
            trial_reply(ITERS, MS, cpu + 1.0, wall + 1.0)
        })
        .collect();
    let (rec, _) = measure_keygen(trials, &PROBES);
    assert_eq!(rec.status, RecordStatus::Inconsistent);
    assert_eq!(
        rec.ngcc.unwrap().inconsistent_reason.as_deref(),
        Some(
            "process 0: 1.003906 s of CPU outside its timed windows (load, constructors, first \
             calls; beyond the fixed cost and 3 warm-ups) against 0.328125 s timed (band: \
             timed + 30 ms)"
        )
    );
}

#[test]
fn a_failed_trial_process_stops_the_record_without_verifying() {
    let mut dead = Reply::ok(serde_json::Value::Null, 0.01, 0.02);
    dead.exit = Exit::Signal(libc::SIGSEGV);
    let (cpu, wall) = honest(ITERS, MS);
    let kit = Kit::new();
    let (_, planned) = calibrate_keygen(&kit);
    let runner = ScriptedRunner::new(vec![trial_reply(ITERS, MS, cpu, wall), dead]);
    let rec = measure_one(&kit.ctx(&runner), &planned, Some(FIXED)).unwrap();
    assert_eq!(runner.seen().len(), 2);
    assert_eq!(rec.status, RecordStatus::FailedOrPartial);
    assert_eq!(rec.processes.len(), 2);
    assert_eq!(rec.processes[1].status, ProcessStatus::Failed);
    assert_eq!(
        rec.processes[1].stderr,
        "crashed: killed by signal 11 (SIGSEGV, invalid memory access)"
    );
    assert_eq!(rec.ngcc.unwrap().checks, None);
}

#[test]
fn a_standing_calibration_is_not_rerun_and_one_of_another_library_is() {
    let kit = Kit::new();
    kit.calibration("keygen", MS, &kit.sha());
    kit.calibration("enc", MS, &kit.sha());
    kit.calibration("dec", MS, &"0".repeat(64));
    // dec's calibration is of an older library: only it runs (slow enough for no dry trials).
    let mut reply = calibration_reply();
    reply.result["t1_s"] = serde_json::json!(0.02);
    let runner = ScriptedRunner::new(vec![reply]);
    calibrate::run(&kit.ctx(&runner), &kit.todo).unwrap();
    let names: Vec<String> = runner.seen().into_iter().map(|(n, _)| n).collect();
    assert_eq!(names, ["cal-toy-l1-dec"]);
    let dec: Calibration = read_json(&kit.toy.run.calibration_path("toy", "l1", "dec")).unwrap();
    assert_eq!((dec.t1_s, dec.library_sha256), (0.02, kit.sha()));
    // Now every calibration stands: nothing runs.
    let runner = ScriptedRunner::default();
    calibrate::run(&kit.ctx(&runner), &kit.todo).unwrap();
    assert!(runner.seen().is_empty());
}

#[test]
fn a_standing_record_is_not_remeasured_and_one_of_another_library_is() {
    let kit = Kit::new();
    let ctx_plan = |cal: &Calibration| {
        plan::plan(
            &kit.settings.planning(),
            cal.t1_s,
            cal.trial_fixed_s(),
            None,
        )
    };
    let mut records = Vec::new();
    for op in ["keygen", "enc", "dec"] {
        let cal = kit.calibration(op, MS, &kit.sha());
        let rec = Record {
            library_sha256: Some(kit.sha()),
            kat: KatStatus::Pass,
            plan: ctx_plan(&cal),
            ..Record::default()
        };
        write_json(&kit.toy.run.record_path("toy", "l1", op), &rec).unwrap();
        records.push(rec);
    }
    // Every record stands: the measure phase runs nothing (not even its probes).
    let runner = ScriptedRunner::default();
    run(&kit.ctx(&runner), &kit.todo).unwrap();
    assert!(runner.seen().is_empty());
    // enc's record is of another library, dec's of another plan: both are planned again.
    records[1].library_sha256 = Some("0".repeat(64));
    records[2].plan.iterations_per_trial += 1;
    for (op, rec) in ["keygen", "enc", "dec"].iter().zip(&records) {
        write_json(&kit.toy.run.record_path("toy", "l1", op), rec).unwrap();
    }
    let runner = ScriptedRunner::default();
    let mut again: Vec<String> = plan_all(&kit.ctx(&runner), &kit.todo)
        .iter()
        .map(|p| p.op.key())
        .collect();
    again.sort();
    assert_eq!(again, ["dec", "enc"]);
    assert!(runner.seen().is_empty());
}

#[test]
fn a_trial_process_that_lost_the_cpu_is_run_again() {
    let kit = Kit::new();
    let (_, planned) = calibrate_keygen(&kit);
    let (cpu, wall) = honest(ITERS, MS);
    // The first attempt's thread ran 0.5 of its 0.33 s trial: disturbed, run again.
    let mut lost = trial_reply(ITERS, MS, cpu, wall);
    lost.result["trials"][0]["cpu_seconds"] = serde_json::json!(0.5 * ITERS as f64 * MS);
    let mut script = vec![lost];
    script.extend((0..5).map(|_| trial_reply(ITERS, MS, cpu, wall)));
    script.extend((0..5).map(|_| verify_reply()));
    let runner = ScriptedRunner::new(script);
    let rec = measure_one(&kit.ctx(&runner), &planned, Some(FIXED)).unwrap();
    let names: Vec<String> = runner.seen().into_iter().map(|(n, _)| n).take(3).collect();
    assert_eq!(
        names,
        [
            "trial-toy-l1-keygen-0",
            "trial-toy-l1-keygen-0",
            "trial-toy-l1-keygen-1"
        ]
    );
    assert_eq!(runner.left(), 0);
    assert_eq!(rec.status, RecordStatus::Complete);
    assert_eq!(rec.disturbed_retries, 1);
    assert_eq!(rec.processes[0].disturbed_retries, 1);
    assert_eq!(rec.processes.len(), 5);
    assert!(!rec.ngcc.unwrap().disturbed);
}

#[test]
fn a_trial_process_killed_at_its_timeout_fails_the_record() {
    let kit = Kit::new();
    let (_, planned) = calibrate_keygen(&kit);
    let mut hung = Reply::ok(serde_json::Value::Null, 301.0, 301.0);
    hung.exit = Exit::Timeout;
    let runner = ScriptedRunner::new(vec![hung]);
    let rec = measure_one(&kit.ctx(&runner), &planned, Some(FIXED)).unwrap();
    assert_eq!(rec.status, RecordStatus::FailedOrPartial);
    let p = &rec.processes[0];
    assert_eq!(p.status, ProcessStatus::HardTimeout);
    // The plan's timeout: 3 × (336 + 3) calls and 3 × 11 /1024 s of fixed cost, plus 300 s.
    assert_eq!(p.timeout_s, Some(1050.0 * MS + 300.0));
    assert_eq!(p.stderr, "killed after 301 s");
    assert_eq!(p.exit_code, None);
}
