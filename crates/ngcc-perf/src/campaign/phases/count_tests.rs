//! The count phase's bounds on a scripted runner (`campaign::runner::scripted`): what each
//! job is given (RLIMIT_CPU, wall timeout) and how its record reads when the CPU budget, the
//! wall-clock safety net or something else ended it, with exact numbers and no valgrind.

use super::*;
use crate::campaign::Phase;
use crate::campaign::phases::toy_kit::ToyRun;
use crate::campaign::runner::scripted::{Reply, ScriptedRunner};
use crate::dataset::count::JobBound;
use crate::dataset::schema::BuildFile;
use crate::dataset::schema::Op;
use crate::sandbox::Exit;
use std::time::Duration;

/// A run directory with one built, KAT-passed ICCS KEM instance (`toy/l1`).
struct Kit {
    toy: ToyRun,
    settings: Settings,
    selected: Vec<Selected>,
}

impl Kit {
    fn new(calls: u64) -> Kit {
        let toy = ToyRun::new("ngcc-count-");
        let mut build = BuildFile::default();
        build.set(&toy.entry);
        write_json(&toy.run.build_json(), &build).unwrap();
        let mut settings = Settings::new(&[Phase::Count], Vec::new(), toy.run.path(""));
        settings.count_calls = calls;
        // The tests' own budget, so their numbers do not follow the default.
        settings.count_budget_s = 300.0;
        let selected = vec![toy.selected()];
        Kit {
            toy,
            settings,
            selected,
        }
    }

    fn record(&self, op: &str) -> CountRecord {
        read_json(&self.toy.run.count_path("toy", "l1", op, "json")).unwrap()
    }
}

/// A job the scripted runner ends with `exit` and no result, the jail having used `cpu`
/// seconds in `wall`.
fn killed(exit: Exit, cpu: f64, wall: f64) -> Reply {
    Reply {
        result: serde_json::Value::Null,
        exit,
        cpu_s: cpu,
        wall_s: wall,
        files: Vec::new(),
    }
}

/// Counted call `n`'s dump: 160 instructions.
fn dump(n: u32) -> String {
    DUMP.replace("ngcc-count-call 1", &format!("ngcc-count-call {n}"))
}

const DUMP: &str = "# callgrind format\nversion: 1\ndesc: Trigger: Client Request: ngcc-count-call 1\n\
positions: line\nevents: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw\n\nob=(2) /job/ngcc-perf\nfl=(1) ???\n\
fn=(3) harness\ncob=(1) /job/lib.so\ncfn=(1) ngcc_kem_keygen\ncalls=1 0\n0 160 17 16\n\nob=(1)\n\
fn=(1)\n0 70 8 7\ncfn=(2) sha3_256\ncalls=1 0\n0 90 9 9\n\n\
fn=(2)\n0 90 9 9\n\ntotals: 160 17 16 0 0 0 0 0 0\n";

#[test]
fn each_job_gets_its_share_of_the_budget_as_cpu_time_and_ten_times_that_as_wall_time() {
    let kit = Kit::new(10);
    let runner = ScriptedRunner::new(vec![
        killed(Exit::Code(3), 1.0, 2.0),
        killed(Exit::Code(3), 1.0, 2.0),
        killed(Exit::Code(3), 1.0, 2.0),
    ]);
    run_with(&runner, &kit.toy.run, &kit.selected, &kit.settings).unwrap();
    // 300 CPU-s for keygen, enc and dec: 100 each; the wall net 10 × 100.
    for (_, req) in runner.seen() {
        let Request::Count(job) = req else {
            panic!("a count job: {req:?}")
        };
        assert_eq!(job.cpu_soft_s, Some(100));
        assert_eq!(job.limits.cpu_seconds, Some(105));
        assert_eq!(job.calls, 10);
    }
    assert_eq!(runner.timeouts(), vec![Duration::from_secs(1000); 3]);
    let r = kit.record("keygen");
    assert_eq!((r.cpu_budget_s, r.wall_bound_s), (100, 1000));
    assert_eq!(r.status, ProcessStatus::Failed);
    assert_eq!(r.ended_by, None);
}

#[test]
fn a_job_ends_at_the_bound_the_kernel_saw_it_reach() {
    let kit = Kit::new(10);
    let runner = ScriptedRunner::new(vec![
        // keygen: SIGXCPU at its 100 s budget, which wait4's rusage reads as 91.25 s.
        killed(Exit::Signal(libc::SIGXCPU), 91.25, 412.5),
        // enc: stopped by the orchestrator at the wall net, having had 40 CPU-s.
        killed(Exit::Timeout, 40.0, 1000.5),
        // dec: killed well short of its budget: not the budget's doing.
        killed(Exit::Signal(libc::SIGKILL), 12.0, 20.0),
    ]);
    run_with(&runner, &kit.toy.run, &kit.selected, &kit.settings).unwrap();
    let keygen = kit.record("keygen");
    assert_eq!(keygen.status, ProcessStatus::HardTimeout);
    assert_eq!(keygen.ended_by, Some(JobBound::Cpu));
    assert_eq!(
        keygen.error.as_deref(),
        Some(
            "killed at its CPU budget of 100 s (its share of --count-budget) after 412.5 s; the \
             jail's rusage: 91.2 CPU-s"
        )
    );
    assert_eq!((keygen.cpu_s, keygen.wall_s), (91.25, 412.5));
    assert_eq!(
        line(&keygen),
        "count toy/l1 keygen: hard_timeout (killed at its CPU budget of 100 s (its share of \
         --count-budget) after 412.5 s; the jail's rusage: 91.2 CPU-s)"
    );
    let enc = kit.record("enc");
    assert_eq!(enc.status, ProcessStatus::HardTimeout);
    assert_eq!(enc.ended_by, Some(JobBound::Wall));
    assert_eq!(
        enc.error.as_deref(),
        Some(
            "killed at the wall-clock safety net of 1000 s (10 x its CPU budget of 100 s) having \
             used 40.0 CPU-s: the host gave it less than 1/10 of a CPU, or it waited without computing"
        )
    );
    let dec = kit.record("dec");
    assert_eq!(dec.status, ProcessStatus::Failed);
    assert_eq!(dec.ended_by, None);
    assert!(
        dec.error
            .as_deref()
            .unwrap()
            .starts_with("crashed: killed by signal 9"),
        "{:?}",
        dec.error
    );
    // The typed field is on the wire only for a job a bound ended.
    let text =
        std::fs::read_to_string(kit.toy.run.count_path("toy", "l1", "keygen", "json")).unwrap();
    assert!(text.contains("\"ended_by\": \"cpu\""), "{text}");
    let text = std::fs::read_to_string(kit.toy.run.count_path("toy", "l1", "dec", "json")).unwrap();
    assert!(!text.contains("ended_by"), "{text}");
}

#[test]
fn a_slow_job_on_a_busy_host_completes_within_its_cpu_budget() {
    // Mito's case: 35 CPU-s of work that a host at load 4-11 spread over 400 s, four times
    // the old wall share of 100 s; under its CPU budget it completes.
    let kit = Kit::new(2);
    let out = CountOutput {
        status: ProcessStatus::Complete,
        calls: 2,
        warmups: super::WARMUPS,
        setup: "built".into(),
        seed: "00".repeat(48),
        work_s: 380.0,
        work_cpu_s: 33.0,
        fixed_addresses: true,
        ..CountOutput::default()
    };
    let done = Reply::ok(out, 35.0, 400.0)
        // Dump 1 closed the warm-up; dumps 2 and 3 are the counted calls 1 and 2.
        .leaving(&format!("{CALLGRIND_OUT}.1"), dump(0).as_bytes())
        .leaving(&format!("{CALLGRIND_OUT}.2"), dump(1).as_bytes())
        .leaving(&format!("{CALLGRIND_OUT}.3"), dump(2).as_bytes());
    let runner = ScriptedRunner::new(vec![
        done,
        killed(Exit::Code(3), 1.0, 2.0),
        killed(Exit::Code(3), 1.0, 2.0),
    ]);
    run_with(&runner, &kit.toy.run, &kit.selected, &kit.settings).unwrap();
    let r = kit.record("keygen");
    assert_eq!(r.status, ProcessStatus::Complete, "{:?}", r.error);
    assert_eq!(r.ended_by, None);
    assert_eq!(r.operation, Op::Keygen);
    assert_eq!(r.calls.len(), 2);
    assert_eq!(r.calls[0].ir, 160);
    assert_eq!(r.calls[1].ir, 160);
    assert_eq!((r.cpu_s, r.wall_s, r.cpu_budget_s), (35.0, 400.0, 100));
}
