//! Host checks on fabricated facts (fixed bare metal, this VM, each unfixed setting), and the
//! environment snapshot's keys and types against the reference dataset.

use crate::common;
use common::*;
use ngcc_perf::measure::counter::{CounterKind, perf_cycles_available};
use ngcc_perf::measure::host::{
    ClockProbe, HostFacts, environment, host_problems, problems_from_facts,
};
use serde_json::Value;
use std::cell::Cell;

/// x86_1-like host: P-core 2, performance governor, turbo off, SMT off, perf cycles count.
fn bare_metal() -> HostFacts {
    HostFacts {
        cpu: 2,
        arch: "x86_64".into(),
        perf_event_paranoid: Some("2".into()),
        intel_pstate_no_turbo: Some("1".into()),
        cpufreq_boost: None,
        governor: Some("performance".into()),
        scaling_min_freq: Some("800000".into()),
        scaling_max_freq: Some("2100000".into()),
        thread_siblings_list: Some("2".into()),
        cpu_core_cpus: Some("0-15".into()),
        can_use_cpu: true,
        counter: CounterKind::PerfCycles,
        virtualized: false,
    }
}

/// This project's VM: no cpufreq, no PMU, hypervisor flag.
fn our_vm() -> HostFacts {
    HostFacts {
        cpu: 1,
        arch: "x86_64".into(),
        perf_event_paranoid: Some("2".into()),
        intel_pstate_no_turbo: None,
        cpufreq_boost: None,
        governor: None,
        scaling_min_freq: None,
        scaling_max_freq: None,
        thread_siblings_list: Some("1".into()),
        cpu_core_cpus: None,
        can_use_cpu: true,
        counter: CounterKind::Tsc,
        virtualized: true,
    }
}

fn probe(hz: f64, spread: f64) -> ClockProbe {
    ClockProbe {
        hz,
        min_hz: hz - spread,
        max_hz: hz + spread,
        iqr_hz: spread,
        windows: 21,
    }
}

/// Facts checked with a probe that must not be called.
fn problems(f: &HostFacts) -> Vec<String> {
    problems_from_facts(f, |_| {
        panic!("clock probed although cpufreq exists or a check failed")
    })
}

#[test]
fn fixed_bare_metal_host_has_no_problems() {
    assert!(problems(&bare_metal()).is_empty());
    // arm_1: aarch64, scmi pinned min = max, no SMT files beyond the CPU itself.
    let arm = HostFacts {
        arch: "aarch64".into(),
        intel_pstate_no_turbo: None,
        cpufreq_boost: Some("0".into()),
        scaling_min_freq: Some("2707200".into()),
        scaling_max_freq: Some("2707200".into()),
        cpu_core_cpus: None,
        ..bare_metal()
    };
    assert!(problems(&arm).is_empty());
}

#[test]
fn our_vm_reports_counter_clock_and_virtualisation() {
    let calls = Cell::new(0);
    let got = problems_from_facts(&our_vm(), |_| {
        calls.set(calls.get() + 1);
        None // perf cycles do not count here, so the probe fails at once
    });
    assert_eq!(calls.get(), 1, "probe failure stops the attempts");
    assert_eq!(
        got,
        vec![
            "hardware cycle counter not supported by this kernel/VM (perf_event_open cycles \
             failed); falling back to tsc",
            "CPU 1: no cpufreq and no cycle counter to measure the clock",
            "virtual machine (hypervisor flag): timings are shared with other guests",
        ]
    );
}

#[test]
fn this_host_matches_its_facts() {
    let facts = HostFacts::gather(1);
    assert_eq!(
        facts.counter == CounterKind::PerfCycles,
        perf_cycles_available()
    );
    let live = host_problems(1);
    if facts == our_vm() {
        assert_eq!(live.len(), 3, "{live:?}");
    }
    // A host whose perf cycles count never gets the fallback problem.
    let fallback = live.iter().any(|p| p.contains("falling back to"));
    assert_eq!(
        fallback,
        facts.counter != CounterKind::PerfCycles && {
            let p = facts.perf_event_paranoid.as_deref().unwrap_or("x");
            ["-1", "0", "1", "2"].contains(&p)
        }
    );
}

#[test]
fn each_unfixed_setting_is_reported_with_the_reference_string() {
    let one = |f: HostFacts| problems(&f);
    assert_eq!(
        one(HostFacts {
            intel_pstate_no_turbo: Some("0".into()),
            ..bare_metal()
        }),
        vec!["turbo/boost is enabled"]
    );
    assert_eq!(
        one(HostFacts {
            intel_pstate_no_turbo: None,
            cpufreq_boost: Some("1".into()),
            ..bare_metal()
        }),
        vec!["turbo/boost is enabled"]
    );
    assert_eq!(
        one(HostFacts {
            governor: Some("powersave".into()),
            ..bare_metal()
        }),
        vec!["CPU 2 governor is powersave, not performance"]
    );
    assert_eq!(
        one(HostFacts {
            thread_siblings_list: Some("0,8".into()),
            cpu: 0,
            ..bare_metal()
        }),
        vec!["CPU 0 shares its core with CPUs 0,8 (SMT on)"]
    );
    assert_eq!(
        one(HostFacts {
            cpu_core_cpus: Some("0-11".into()),
            cpu: 16,
            thread_siblings_list: Some("16".into()),
            ..bare_metal()
        }),
        vec!["CPU 16 is not a performance core (cpu_core: 0-11)"]
    );
    assert_eq!(
        one(HostFacts {
            can_use_cpu: false,
            ..bare_metal()
        }),
        vec!["CPU 2 cannot be used by this process (cpuset)"]
    );
    assert_eq!(
        one(HostFacts {
            arch: "riscv64".into(),
            ..bare_metal()
        }),
        vec!["architecture riscv64 has no guide configuration"]
    );
    // x86 with min != max is fine (only aarch64 needs min = max); aarch64 is not.
    assert!(one(bare_metal()).is_empty());
    assert_eq!(
        one(HostFacts {
            arch: "aarch64".into(),
            ..bare_metal()
        }),
        vec!["CPU 2 clock not pinned (scaling_min_freq 800000 != scaling_max_freq 2100000)"]
    );
}

#[test]
fn paranoid_above_two_or_unreadable_hides_the_counter_detail() {
    for p in [Some("4"), Some("3"), None, Some("junk")] {
        let f = HostFacts {
            perf_event_paranoid: p.map(Into::into),
            counter: CounterKind::Tsc,
            ..bare_metal()
        };
        assert_eq!(
            problems(&f),
            vec!["hardware cycle counter unavailable: set kernel.perf_event_paranoid=2"]
        );
    }
    for p in ["-1", "0", "1", "2"] {
        let f = HostFacts {
            perf_event_paranoid: Some(p.into()),
            ..bare_metal()
        };
        assert!(problems(&f).is_empty());
    }
}

#[test]
fn problems_keep_the_reference_order() {
    let f = HostFacts {
        arch: "aarch64".into(),
        perf_event_paranoid: Some("4".into()),
        cpufreq_boost: Some("1".into()),
        governor: Some("schedutil".into()),
        thread_siblings_list: Some("2-3".into()),
        cpu_core_cpus: Some("4-7".into()),
        can_use_cpu: false,
        virtualized: true,
        ..bare_metal()
    };
    let got = problems(&f);
    let heads: Vec<&str> = got.iter().map(|p| &p[..12.min(p.len())]).collect();
    assert_eq!(
        heads,
        vec![
            "hardware cyc",
            "turbo/boost ",
            "CPU 2 govern",
            "CPU 2 clock ",
            "CPU 2 shares",
            "CPU 2 is not",
            "CPU 2 cannot",
            "virtual mach"
        ]
    );
}

#[test]
fn without_cpufreq_the_clock_must_be_steady() {
    let no_cpufreq = HostFacts {
        governor: None,
        scaling_min_freq: None,
        scaling_max_freq: None,
        intel_pstate_no_turbo: None,
        ..bare_metal()
    };
    // Steady at once: one probe, no problem.
    let calls = Cell::new(0);
    let got = problems_from_facts(&no_cpufreq, |_| {
        calls.set(calls.get() + 1);
        Some(probe(3.4e9, 1e6))
    });
    assert!(got.is_empty());
    assert_eq!(calls.get(), 1);

    // Unsteady, then steady on the second attempt.
    let got = problems_from_facts(&no_cpufreq, |a| {
        Some(probe(3.4e9, if a == 0 { 1e8 } else { 1e6 }))
    });
    assert!(got.is_empty());

    // Unsteady three times: reported with the last probe's range, 3 decimals of GHz.
    let calls = Cell::new(0);
    let got = problems_from_facts(&no_cpufreq, |_| {
        calls.set(calls.get() + 1);
        Some(ClockProbe {
            hz: 3.1e9,
            min_hz: 2.8504e9,
            max_hz: 3.3996e9,
            iqr_hz: 0.2e9,
            windows: 21,
        })
    });
    assert_eq!(calls.get(), 3);
    assert_eq!(
        got,
        vec!["CPU 2 clock is not steady without cpufreq control (2.850-3.400 GHz)"]
    );

    // Exactly 0.5 % is still steady.
    assert!(probe(2e9, 1e7).is_steady());
    assert!(!probe(2e9, 1.0001e7).is_steady());

    // A failed reference check skips the probe.
    let f = HostFacts {
        thread_siblings_list: Some("2,10".into()),
        ..no_cpufreq.clone()
    };
    assert_eq!(
        problems(&f),
        vec!["CPU 2 shares its core with CPUs 2,10 (SMT on)"]
    );
    // Our own problems do not: a VM with a PMU still gets its clock probed.
    let f = HostFacts {
        virtualized: true,
        ..no_cpufreq
    };
    let got = problems_from_facts(&f, |_| Some(probe(3.0e9, 0.0)));
    assert_eq!(
        got,
        vec!["virtual machine (hypervisor flag): timings are shared with other guests"]
    );
}

/// Same keys in the same order as the reference (its newest snapshot, with
/// `cpufreq_avg_khz`), then our four; the reference's types.
#[test]
fn environment_keys_order_and_types() {
    // As written to campaign.json and records.
    let written = serde_json::to_value(environment(0)).unwrap();
    let env = written.as_object().unwrap();
    let keys: Vec<&str> = env.keys().map(String::as_str).collect();
    let reference = [
        "hostname",
        "architecture",
        "cpu_model",
        "machine",
        "cpu_number",
        "logical_cpus_online",
        "virtualized",
        "memory_total_kib",
        "os",
        "kernel",
        "compiler",
        "cmake",
        "python",
        "perf_event_paranoid",
        "cpufreq_governor",
        "cpufreq_driver",
        "cpufreq_min_khz",
        "cpufreq_max_khz",
        "cpufreq_avg_khz",
        "intel_pstate_no_turbo",
        "cpufreq_boost",
        "smt_control",
        "core_clock_hz",
        "core_clock_min_hz",
        "core_clock_max_hz",
        "core_clock_mhz",
    ];
    let ours = [
        "counter",
        "counter_hz",
        "tsc_constant",
        "perf_cycles_available",
    ];
    assert_eq!(
        keys,
        reference.iter().chain(&ours).copied().collect::<Vec<_>>()
    );

    let dir = fixture_path();
    if dir.join("campaign.json").is_file() {
        let rec: serde_json::Value = serde_json::from_slice(
            &std::fs::read(dir.join("records/kem-38/UVW-KEM-128__enc.json")).unwrap(),
        )
        .unwrap();
        let theirs = rec["environment"].as_object().unwrap();
        let theirs_keys: Vec<&str> = theirs.keys().map(String::as_str).collect();
        assert_eq!(theirs_keys, reference);
        // Same JSON type per key wherever both sides have a value.
        for (k, v) in theirs {
            let mine = &env[k.as_str()];
            if !v.is_null() && !mine.is_null() {
                assert_eq!(
                    std::mem::discriminant(v),
                    std::mem::discriminant(mine),
                    "{k}"
                );
            }
        }
    }

    assert_eq!(env["cpu_number"], Value::from(0));
    assert!(env["virtualized"].is_boolean());
    assert!(env["tsc_constant"].is_boolean());
    assert!(env["memory_total_kib"].is_u64());
    assert!(
        env["hostname"].is_string() && env["kernel"].is_string() && env["cpu_model"].is_string()
    );
    for k in [
        "machine",
        "os",
        "compiler",
        "cmake",
        "python",
        "perf_event_paranoid",
        "smt_control",
    ] {
        assert!(env[k].is_string() || env[k].is_null(), "{k}");
    }
    let perf = env["perf_cycles_available"].as_bool().unwrap();
    assert_eq!(perf, perf_cycles_available());
    assert_eq!(env["counter"] == "perf_cycles", perf);
    // Core-clock keys only from a core cycle counter.
    for k in [
        "core_clock_hz",
        "core_clock_min_hz",
        "core_clock_max_hz",
        "core_clock_mhz",
    ] {
        assert_eq!(env[k].is_u64(), perf, "{k}");
    }
    if env["counter"] != "none" {
        assert!(env["counter_hz"].as_u64().unwrap() > 1_000_000);
    }
}
