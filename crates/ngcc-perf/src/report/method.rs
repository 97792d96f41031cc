//! `performance/method_<SYS>.md` (reference-harness.md §8.5): how the figures were taken and
//! what they cannot show. The fixture has no rendering of this page; it follows the spec and
//! the wording of the reference's published method pages, with facts taken from the dataset.

use super::doc::{Doc, Inline};
use super::format;
use super::model::{self, View, natural_cmp};
use crate::dataset::schema::{HostEnv, RecordStatus};
use anyhow::Result;
use serde_json::Value;
use std::collections::BTreeSet;

pub fn path(sys: &str) -> String {
    format!("performance/method_{sys}.md")
}

/// Python's `str(float)` for ordinary values: `0.5`, `1.0`, `300.0`.
fn py_float(x: f64) -> String {
    let s = format!("{x:?}");
    if s.contains(['.', 'e', 'i', 'N']) {
        s
    } else {
        format!("{s}.0")
    }
}

fn smt_phrase(env: &HostEnv) -> String {
    match env.smt_control.text().as_deref() {
        Some("notsupported") | Some("notimplemented") => "no SMT".into(),
        Some(s) => format!("SMT {s}"),
        None => "SMT unknown".into(),
    }
}

/// Why a record's host state differs from the expected one; empty when it does not.
fn deviations(env: &HostEnv, reference: &HostEnv, has_cycles: bool) -> Vec<String> {
    let mut out = Vec::new();
    let no_turbo = env.intel_pstate_no_turbo.text();
    let boost = env.cpufreq_boost.text();
    if no_turbo.as_deref() == Some("0") || (no_turbo.is_none() && boost.as_deref() == Some("1")) {
        out.push("turbo enabled".to_string());
    }
    if let Some(g) = env.cpufreq_governor.text().filter(|g| g != "performance") {
        out.push(format!("governor {g}"));
    }
    if let Some(s) = env.smt_control.text().filter(|s| {
        !matches!(
            s.as_str(),
            "off" | "forceoff" | "notsupported" | "notimplemented"
        )
    }) {
        out.push(format!("SMT {s}"));
    }
    if !has_cycles {
        out.push("no hardware cycle count".to_string());
    }
    let mhz = |e: &HostEnv| e.core_clock_mhz.json_i64();
    if let (Some(m), Some(r)) = (mhz(env), mhz(reference))
        && m != r
    {
        out.push(format!("clock {m} MHz"));
    }
    out
}

fn state_sentence(v: &View) -> Inline {
    let env = &v.env;
    let n = v.ds.records.len();
    // Issue → number of records showing it, in first-seen order.
    let mut issues: Vec<(String, usize)> = Vec::new();
    for r in &v.ds.records {
        let has_cycles = r.record.status != RecordStatus::Complete
            || r.record
                .stats
                .as_ref()
                .is_some_and(|s| s.mean_cycles.is_some());
        for d in deviations(&r.record.environment, env, has_cycles) {
            match issues.iter_mut().find(|(i, _)| *i == d) {
                Some((_, count)) => *count += 1,
                None => issues.push((d, 1)),
            }
        }
    }
    if !issues.is_empty() {
        let list: Vec<String> = issues.iter().map(|(i, c)| format!("{i} ({c})")).collect();
        return format!(
            "Of {n} timing records, some deviate from this state: {}; each record stores its own state.",
            list.join("; ")
        )
        .into();
    }
    let smt = smt_phrase(env);
    let governor = env
        .cpufreq_governor
        .text()
        .unwrap_or_else(|| "unknown".into());
    let driver = env.cpufreq_driver.text();
    let arch = env.architecture.text().unwrap_or_default();
    let min = env.cpufreq_min_khz.text();
    let max = env.cpufreq_max_khz.text();
    let state = if driver.is_none() {
        let clock = env
            .core_clock_hz
            .json_f64()
            .map(|hz| format!("{} GHz", format::ghz(hz / 1e9)))
            .unwrap_or_else(|| "an unmeasured clock".into());
        Inline::from(format!(
            "clock set by the firmware at {clock}, no OS frequency scaling; {smt}; hardware cycle counter available"
        ))
    } else if arch == "aarch64" && min.is_some() && min == max {
        let ghz = max
            .as_deref()
            .and_then(|k| k.parse::<f64>().ok())
            .map(|k| format::ghz(k / 1e6))
            .unwrap_or_default();
        let boost = match env.cpufreq_boost.text().as_deref() {
            Some("0") => "boost off",
            Some("1") => "boost on",
            _ => "boost unknown",
        };
        Inline::new()
            .text(format!("clock pinned at {ghz} GHz: "))
            .code(&governor)
            .text(format!(
                " governor with minimum = maximum frequency; {boost}; {smt}; hardware cycle counter available"
            ))
    } else {
        let turbo = match (
            env.intel_pstate_no_turbo.text().as_deref(),
            env.cpufreq_boost.text().as_deref(),
        ) {
            (Some("1"), _) | (None, Some("0")) => "turbo off",
            (Some("0"), _) | (None, Some("1")) => "turbo on",
            _ => "turbo unknown",
        };
        Inline::new()
            .text(format!("{turbo}, "))
            .code(&governor)
            .text(format!(
                " governor, {smt}, hardware cycle counter available"
            ))
    };
    Inline::new()
        .text(format!("All {n} timing records were taken in this state ("))
        .then(state)
        .text("), as stored in each record. A trial that ran below 95% of that clock was repeated, up to twice.")
}

fn join_numbers(v: &[i64]) -> String {
    v.iter()
        .map(|c| c.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

fn cores_limitation(v: &View) -> String {
    let cpus = v.record_cpus();
    let shard_cpus: BTreeSet<i64> =
        v.ds.campaign
            .shard_cpus
            .iter()
            .flat_map(|m| m.values())
            .filter_map(Value::as_i64)
            .collect();
    let sharded = v.ds.campaign.shards.is_some_and(|s| s > 1) && !shard_cpus.is_empty();
    if sharded {
        let mut slow: Vec<String> =
            v.ds.records
                .iter()
                .filter(|r| {
                    r.record
                        .environment
                        .cpu_number
                        .json_i64()
                        .is_some_and(|c| !shard_cpus.contains(&c))
                })
                .map(|r| format!("{} {}", r.record.candidate, r.record.label))
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect();
        slow.sort_by(|a, b| natural_cmp(a, b));
        let shard_list: Vec<i64> = shard_cpus.into_iter().collect();
        let mut text = format!(
            "Timing ran in parallel on cores {}. The instances were divided among cores {} by expected run time",
            join_numbers(&cpus),
            join_numbers(&shard_list)
        );
        if slow.is_empty() {
            text.push('.');
        } else {
            text.push_str(&format!(
                "; the slowest instances ({}) ran on a further core.",
                slow.join(", ")
            ));
        }
        text.push_str(" All operations of one instance ran on the same core, and each record states its CPU. Cycle counts are comparable across these identical cores.");
        text
    } else if cpus.len() > 1 {
        format!(
            "Timing ran on cores {}; each record states its CPU. Cycle counts are comparable across these identical cores.",
            join_numbers(&cpus)
        )
    } else {
        format!(
            "Timing ran on core {}; each record states its CPU.",
            join_numbers(&cpus)
        )
    }
}

fn tick_text(v: &View) -> Inline {
    let Some(meta) = v.ds.profiles.iter().map(|p| &p.profile.meta).find(|m| {
        m.get("tick_source")
            .and_then(Value::as_str)
            .is_some_and(|s| !s.is_empty())
    }) else {
        return Inline::new();
    };
    let source = meta
        .get("tick_source")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if source == "rdtsc" {
        return Inline::new();
    }
    let hz = meta
        .get("tick_hz")
        .and_then(|h| {
            h.as_str()
                .and_then(|s| s.parse::<f64>().ok())
                .or(h.as_f64())
        })
        .filter(|h| *h > 0.0);
    let start = Inline::new()
        .text(" On this system the tick counter is ")
        .code(source);
    match hz {
        Some(hz) => start.text(format!(
            " at {} MHz, so a single short call is resolved only to about {:.0} ns; the rounding is unbiased and averages out over the many calls that make up a share.",
            format::g3(hz / 1e6),
            1e9 / hz
        )),
        None => start.text("."),
    }
}

pub fn render(v: &View) -> Result<Doc> {
    let sys = v.sys;
    let env = &v.env;
    let c = &v.ds.campaign;
    let mut d = Doc::new();
    d.heading(
        1,
        format!("Performance method and limitations — system {sys}"),
    );
    d.para(
        Inline::new()
            .text(format!("System {sys}: {}. ", v.system.description))
            .link("Summary", format!("summary_{sys}.md"))
            .text("."),
    );
    d.heading(2, "Measurement");

    let honesty = v.honesty_rows(v.ds.records.iter().map(|r| &r.record));
    let counter = honesty
        .iter()
        .find(|(k, _)| k == "counter")
        .map(|(_, val)| val.clone());
    let counter_sentence = match counter {
        Some(text) => Inline::new()
            .text("Cycle figures come from ")
            .then(text)
            .text("; time from ")
            .code("CLOCK_MONOTONIC_RAW")
            .text("."),
        None => Inline::new()
            .text("Cycles come from the hardware counter (")
            .code("perf_event_open")
            .text(", user mode); time from ")
            .code("CLOCK_MONOTONIC_RAW")
            .text("."),
    };
    let mut first = Inline::new()
        .text(format!(
            "One {} core (CPU {}; {}). ",
            env.cpu_model.text().unwrap_or_else(|| "unknown".into()),
            env.cpu_number.text().unwrap_or_else(|| "unknown".into()),
            model::clock_text(env)
        ))
        .then(counter_sentence)
        .text(" ")
        .then(state_sentence(v));
    if let Some((_, state)) = honesty.iter().find(|(k, _)| k == "host state") {
        first = first.text(" Host state: ").then(state.clone()).text(".");
    }
    let mut bullets = vec![first];

    let reference_flags = c
        .arch_config
        .as_ref()
        .map(|a| a.reference.clone())
        .unwrap_or_default();
    let additions = c.harness_additions.clone().unwrap_or_default();
    bullets.push(
        Inline::new()
            .text("Reference builds use the guide's flags ")
            .code(reference_flags)
            .text(" plus ")
            .code(additions)
            .text(" for shared libraries and pre-C99 declarations; an instance that fails to build or to pass its KATs that way is rebuilt with the harness defaults, and its page says so. Optimized builds use the guide's performance flags."),
    );
    bullets.push(
        Inline::new()
            .text("Every library is checked against the submitted KAT vectors before timing. Instances whose vectors are not reproduced by the submitted code are still timed and are marked ⚠, with the identified cause on their candidate page (")
            .code("performance/kat_issues.csv")
            .text("); an instance without a reference source of its own is not timed. The DRNG is seeded with bytes 00..2f; signatures use a 64-byte message; hash inputs are the guide's S1–S8 lengths."),
    );
    bullets.push(match &c.planning {
        Some(p) => format!(
            "Each operation is calibrated with one call, then measured in {} trials. Trials normally run in separate processes (fresh address-space layout); if setup takes more than {:.0} s, the trials share one process. Each trial runs a fixed number of calls, targeting {} s and at least {} calls in total; if that would exceed {:.0} minutes, fewer calls are used, but never fewer than one per trial. No operation is cut short by a time limit.",
            p.trials,
            p.separate_process_setup_s,
            py_float(p.trial_target_s),
            p.min_total,
            p.op_budget_s / 60.0
        )
        .into(),
        None => "Each operation is calibrated with one call, then measured in several trials of a fixed number of calls; campaign.json records no planning values.".into(),
    });
    bullets.push("Reported cycles are the arithmetic mean over all timed calls (the guide's metric); the median of the trial means is also recorded as a robustness check.".into());
    bullets.push(
        Inline::new()
            .text("Key exchange: ")
            .code("exchange")
            .text(" covers both initialisations, every pass and both key derivations of one protocol run (no network time); single steps are timed call by call."),
    );
    d.list(bullets);

    d.heading(2, "Share of the ICCS placeholder functions");
    d.para(
        Inline::new()
            .text("Each reference library is relinked with link-time wrappers (")
            .code("-Wl,--wrap")
            .text(") around ")
            .code("pseudohash")
            .text(", ")
            .code("pseudoXOF")
            .text(", ")
            .code("sm3hash")
            .text(" and the DRNG's ")
            .code("get_random_number")
            .text(". Every call that crosses an object-file boundary is timed with the CPU tick counter and recorded with its input and output length; nested calls are not counted twice. The reported share is the time inside these functions divided by the time of the whole operation, measured in the same process on the same inputs as the benchmark. The wrappers cost a few tens of cycles per call.")
            .then(tick_text(v)),
    );
    let has_baseline = v.ds.records.iter().any(|r| r.record.candidate == "iccs");
    if has_baseline {
        d.para(
            Inline::new()
                .text("The ICCS helpers ")
                .code("sm3hash")
                .text(", ")
                .code("pseudohash")
                .text(" and ")
                .code("pseudoXOF")
                .text(" are also timed directly, as hash instances of ")
                .code("api/auxfunc.c")
                .text(" (")
                .code("performance/iccs")
                .text(", records under ")
                .code("iccs/")
                .text("): same reference flags, driver, message lengths and planning as the hash candidates. Before timing, each is checked against an independent model on OpenSSL's SM3, and ")
                .code("sm3hash")
                .text(" against the GB/T 32905 examples. The summary divides each hash candidate's cycles by those of ")
                .code("pseudoXOF")
                .text(" with the same output width and message length. This is a direct, self-contained relative measurement, not an estimate of substituting that hash into a public-key scheme. Several hash submissions are not yet constant-time (e.g. table-based S-boxes), so their current timings are not production figures; the summary flags known cases."),
        );
    } else {
        d.para(
            Inline::new()
                .text("No ICCS helper was timed directly in this dataset, so the summary compares only 32-byte hash timings with ")
                .code("pseudoXOF")
                .text(", using the median per-call cost of 32-byte ")
                .code("pseudoXOF")
                .text(" calls seen in the hash profiles, converted from ticks to core cycles. This is a relative speed, not an estimate of substituting that hash into a public-key scheme. Several hash submissions are not yet constant-time (e.g. table-based S-boxes), so their current timings are not production figures; the summary flags known cases."),
        );
    }

    d.heading(2, "Limitations");
    d.list(vec![
        "Static and peak memory are process-level proxies (ELF image, VmHWM), not isolated algorithm memory.".into(),
        "The ICCS share covers only the three helper functions; candidates that implement their own SHAKE/AES/SM3 show that time as non-symmetric (see the survey).".into(),
        "Link-time wrapping is not reliable with LTO, so shares are measured on reference builds.".into(),
        "The complete functional test vectors are referenced by digest, not embedded.".into(),
        "Very slow operations have fewer than 100 timed calls; their pages say how many. Operations too slow for more than one call use their calibration call as the measurement.".into(),
        cores_limitation(v).into(),
        Inline::new()
            .text("A single key-exchange step is timed around each call, so its wall time includes the counter start/stop system calls (a floor of roughly a microsecond); its user-mode cycle count does not. The ")
            .code("exchange")
            .text(" figure has no such overhead."),
    ]);
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_float_text() {
        assert_eq!(py_float(0.5), "0.5");
        assert_eq!(py_float(1.0), "1.0");
        assert_eq!(py_float(300.0), "300.0");
    }
}
