//! The planning rule against the reference dataset: every recorded plan must be what
//! `plan()` gives for some calibration (t1, setup).

use crate::common;
use common::*;
use ngcc_perf::dataset::schema::{Campaign, Plan, Record};
use ngcc_perf::measure::plan::{infer_calibration, plan, reference_planning};
use proptest::prelude::*;

fn read<T: serde::de::DeserializeOwned>(path: &std::path::Path) -> T {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// UVW-KEM-128 enc (arm_1): the recorded plan is reproduced exactly. The record has no
/// embedded calibration (not reused), so t1 comes from the integer fields:
/// 3107 = ceil(0.5 / t1) ⇒ t1 ∈ [160.927, 160.979) µs, and then
/// setup = (estimated_s − 15550·t1) / 5 ≈ 0.2011 s.
#[test]
fn uvw_kem_128_enc_plan_is_reproduced() {
    let Some(dir) = fixture_dir() else { return };
    let campaign: Campaign = read(&dir.join("campaign.json"));
    let planning = campaign.planning.expect("campaign has planning");
    assert_eq!(planning, reference_planning(0.5, 300.0));

    let rec: Record = read(&dir.join("records/kem-38/UVW-KEM-128__enc.json"));
    assert!(rec.processes.iter().all(|p| p.t1_s.is_none()));
    let want = Plan {
        iterations_per_trial: 3107,
        warmups: 3,
        trials: 5,
        separate_processes: true,
        estimated_s: 3.508489355141602,
        timeout_per_process_s: 302.105093613085,
    };
    assert_eq!(rec.plan, want);

    let t1 = 160.95e-6;
    let setup = (want.estimated_s - 15550.0 * t1) / 5.0;
    assert!((0.2010..0.2013).contains(&setup), "setup {setup}");
    let got = plan(&planning, t1, setup, None);
    assert_eq!(
        (
            got.iterations_per_trial,
            got.warmups,
            got.trials,
            got.separate_processes
        ),
        (3107, 3, 5, true)
    );
    assert!((got.estimated_s - want.estimated_s).abs() < 1e-12);
    assert!((got.timeout_per_process_s - want.timeout_per_process_s).abs() < 1e-9);
    // Either end of the t1 interval gives the same published numbers.
    for t in [0.5 / 3107.0, 0.5 / 3106.0 - 1e-12] {
        let s = (want.estimated_s - 15550.0 * t) / 5.0;
        assert_eq!(plan(&planning, t, s, None).iterations_per_trial, 3107);
    }
}

#[test]
fn every_fixture_plan_follows_the_rule() {
    let Some(dir) = fixture_dir() else { return };
    let campaign: Campaign = read(&dir.join("campaign.json"));
    let planning = campaign.planning.unwrap();
    let mut checked = 0;
    for path in glob::glob(&format!("{}/records/*/*.json", dir.display())).unwrap() {
        let path = path.unwrap();
        let rec: Record = read(&path);
        let (t1, setup) = infer_calibration(&planning, &rec.plan)
            .unwrap_or_else(|| panic!("{}: no calibration gives {:?}", path.display(), rec.plan));
        // When a process embeds its calibration, that calibration must be the one.
        if let Some(p) = rec.processes.iter().find(|p| p.t1_s.is_some()) {
            let got = plan(&planning, p.t1_s.unwrap(), p.setup_s.unwrap(), None);
            assert_eq!(got, rec.plan, "{}", path.display());
        }
        assert!(t1 > 0.0 && setup >= 0.0);
        checked += 1;
    }
    assert_eq!(checked, 18);
}

#[test]
fn inconsistent_plans_are_rejected() {
    let p = reference_planning(0.5, 300.0);
    let mut bad = plan(&p, 1e-4, 0.2, None);
    bad.timeout_per_process_s += 1.0; // breaks timeout = 0.6·estimate + 300
    assert_eq!(infer_calibration(&p, &bad), None);
    let mut bad = plan(&p, 1e-4, 0.2, None);
    bad.warmups = 0; // 0 warm-ups means t ≥ 5 s, which cannot give 5000 iterations
    assert_eq!(infer_calibration(&p, &bad), None);
}

/// Found by proptest: one call far over the budget with zero setup has a single valid t1
/// (= estimated_s), which a plain grid misses.
#[test]
fn single_call_with_zero_setup_is_inferable() {
    let p = reference_planning(0.5, 300.0);
    let want = plan(&p, 8.813849007719346f64.exp(), 0.0, None);
    assert_eq!((want.iterations_per_trial, want.trials), (1, 1));
    let (t1, setup) = infer_calibration(&p, &want).unwrap();
    assert_eq!(setup, 0.0);
    assert!((t1 - want.estimated_s).abs() < 1e-9);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Any plan the rule produces is recognised, and the calibration found reproduces it.
    #[test]
    fn infer_inverts_plan(
        log_t in -16.0f64..9.0,
        setup in 0.0f64..100.0,
        target in prop::sample::select(vec![0.5, 1.0]),
        budget in prop::sample::select(vec![300.0, 900.0]),
    ) {
        let p = reference_planning(target, budget);
        let want = plan(&p, log_t.exp(), setup, None);
        let (t1, s) = infer_calibration(&p, &want).expect("plan from the rule is inferable");
        let got = plan(&p, t1, s, None);
        prop_assert_eq!(got.iterations_per_trial, want.iterations_per_trial);
        prop_assert_eq!(got.trials, want.trials);
        prop_assert_eq!(got.warmups, want.warmups);
        prop_assert_eq!(got.separate_processes, want.separate_processes);
    }

    /// Invariants of §1.11: ≥ 1 call per trial, ≤ max iterations, ≥ 100 calls whenever
    /// 100 calls fit in the budget, and the work never exceeds the budget by more than one
    /// call per trial.
    #[test]
    fn plan_invariants(log_t in -20.0f64..10.0, setup in 0.0f64..120.0) {
        let p = reference_planning(1.0, 900.0);
        let t = log_t.exp().max(1e-8);
        let x = plan(&p, t, setup, None);
        prop_assert!(x.iterations_per_trial >= 1 && x.iterations_per_trial <= 20000);
        prop_assert!(x.trials >= 1 && x.trials <= 5);
        if 100.0 * t <= 900.0 {
            prop_assert!(x.iterations_per_trial * x.trials >= 100);
        }
        if x.iterations_per_trial > 1 {
            prop_assert!((x.trials * x.iterations_per_trial) as f64 * t <= 900.0 + 1e-9);
        }
        prop_assert!(x.timeout_per_process_s > 300.0);
        prop_assert!(x.estimated_s > 0.0);
    }
}

#[test]
fn our_planning_lets_fast_operations_reach_the_trial_target() {
    let ours = ngcc_perf::measure::plan::default_planning(1.0, 900.0);
    let reference = reference_planning(1.0, 900.0);
    assert_eq!(ours.max_iters_per_trial, 10_000_000);
    // A 0.5 µs operation: the reference caps a trial at 20 000 calls (10 ms), ours at 1 s.
    let capped = plan(&reference, 0.5e-6, 0.01, None);
    let full = plan(&ours, 0.5e-6, 0.01, None);
    assert_eq!(capped.iterations_per_trial, 20_000);
    assert_eq!(full.iterations_per_trial, 2_000_000);
    assert!((full.iterations_per_trial as f64 * 0.5e-6 - 1.0).abs() < 1e-9);
}
