//! The disturbance rule on the reference dataset: every kept process of arm_1 ran at full
//! clock (none was retried), and losing 10 % of the cycles would have flagged it.

use crate::common;
use common::*;
use ngcc_perf::dataset::schema::Record;
use ngcc_perf::measure::timing::{fixed_clock, is_disturbed};

#[test]
fn reference_processes_are_undisturbed_and_the_rule_would_catch_a_slow_one() {
    let Some(dir) = fixture_dir() else { return };
    let mut checked = 0;
    for path in glob::glob(&format!("{}/records/*/*.json", dir.display())).unwrap() {
        let path = path.unwrap();
        let rec: Record = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        let max_hz = fixed_clock(&rec.environment);
        assert_eq!(max_hz, 2.7072e9, "{}", path.display());
        let scope = rec.stats.as_ref().unwrap().timing_scope.clone();
        for p in &rec.processes {
            assert_eq!(p.disturbed_retries, 0);
            assert!(
                !is_disturbed(&p.trials, &scope, max_hz),
                "{}",
                path.display()
            );
            let mut slowed = p.trials.clone();
            for t in &mut slowed {
                t.cycles = t.cycles / 10 * 9;
            }
            assert!(is_disturbed(&slowed, &scope, max_hz), "{}", path.display());
            checked += 1;
        }
    }
    assert_eq!(checked, 18 * 5);
}
