//! `performance/method_<SYS>.md` (reference-harness.md §8.5): how the figures were taken and
//! what they cannot show, with the wording and rules of the reference's published method page
//! (`tests/it/reference_pages.rs` compares line by line); facts come from the dataset.

use super::doc::{Doc, Inline};
use super::format;
use super::model::{self, View};
use super::summary;
use crate::dataset::schema::{HostEnv, Record, RecordStatus};
use anyhow::Result;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

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

/// Why a complete record's host state differs from the fixed one (the reference's
/// `record_host_state` rules); empty when it does not.
fn deviations(rec: &Record, reference: &HostEnv) -> Vec<String> {
    let env = &rec.environment;
    let text = |f: &crate::dataset::schema::EnvField<String>| f.text();
    let mut out = Vec::new();
    if text(&env.intel_pstate_no_turbo).as_deref() == Some("0")
        || text(&env.cpufreq_boost).as_deref() == Some("1")
    {
        out.push("turbo enabled".to_string());
    }
    let governor = text(&env.cpufreq_governor);
    if let Some(g) = governor.as_deref().filter(|g| *g != "performance") {
        out.push(format!("governor {g}"));
    }
    if let Some(s) = text(&env.smt_control).filter(|s| {
        !matches!(
            s.as_str(),
            "off" | "forceoff" | "notsupported" | "notimplemented"
        )
    }) {
        out.push(format!("SMT {s}"));
    }
    if !rec
        .stats
        .as_ref()
        .and_then(|s| s.mean_cycles)
        .is_some_and(|c| c != 0.0)
    {
        out.push("no hardware cycle count".to_string());
    }
    let mhz = |e: &HostEnv| e.core_clock_mhz.json_i64();
    if mhz(reference).is_some_and(|r| r != 0) && governor.is_none() && mhz(env) != mhz(reference) {
        let m = mhz(env).map_or("None".to_string(), |m| m.to_string());
        out.push(format!("clock {m} MHz"));
    }
    out
}

fn complete_records<'a>(v: &View<'a>) -> impl Iterator<Item = &'a Record> {
    v.ds.records
        .iter()
        .map(|r| &r.record)
        .filter(|r| r.status == RecordStatus::Complete)
}

/// The host-state sentence of the first bullet (the reference's `host_state_text`).
fn state_sentence(v: &View) -> Inline {
    let env = &v.env;
    let mut n = 0;
    // Issue → number of records showing it; printed in name order like the reference.
    let mut issues: BTreeMap<String, usize> = BTreeMap::new();
    for r in complete_records(v) {
        n += 1;
        for d in deviations(r, env) {
            *issues.entry(d).or_default() += 1;
        }
    }
    if !issues.is_empty() {
        let list: Vec<String> = issues.iter().map(|(i, c)| format!("{i} ({c})")).collect();
        return format!(
            "Of {n} timing records, some deviate from the fixed host state: {}.",
            list.join("; ")
        )
        .into();
    }
    let driver = env.cpufreq_driver.text().filter(|d| !d.is_empty());
    let arch = env.architecture.text().unwrap_or_default();
    let core_hz = env.core_clock_hz.number().filter(|h| *h != 0.0);
    if driver.is_none() && core_hz.is_some() {
        let mhz = env.core_clock_mhz.json_i64().unwrap_or(0);
        return format!(
            "All {n} timing records were taken in this state (no cpufreq driver; the firmware-set clock, measured on the timing core with the cycle counter before each phase, was steady at {} GHz; SMT {}; hardware cycle counter available), as stored in each record. A trial that ran below 95% of that clock was repeated, up to twice.",
            format::ghz(mhz as f64 / 1000.0),
            model::smt_text(env)
        )
        .into();
    }
    let pinned = env.cpufreq_min_khz.text().is_some()
        && env.cpufreq_min_khz.text() == env.cpufreq_max_khz.text();
    if arch == "aarch64" && driver.is_some() && pinned {
        let ghz = env
            .cpufreq_max_khz
            .number()
            .map(|k| format::ghz(k / 1e6))
            .unwrap_or_default();
        // The reference pinned its clusters below the firmware's thermal limit and says so
        // (campaign.json `history_note`); the clause is only claimed where the campaign does.
        let thermal =
            v.ds.campaign
                .history_note
                .as_deref()
                .is_some_and(|n| n.contains("thermal limiter"));
        let below = if thermal {
            ", below the level at which the firmware's thermal limiter intervenes"
        } else {
            ""
        };
        let boost = match env.cpufreq_boost.text().as_deref() {
            Some("0") => "boost off",
            _ => "boost unknown",
        };
        let smt = match env.smt_control.text().as_deref() {
            Some("notsupported") | Some("notimplemented") => "no SMT".to_string(),
            Some(s) => format!("SMT {s}"),
            None => "SMT unknown".to_string(),
        };
        return Inline::new()
            .text(format!(
                "All {n} timing records were taken in this state (clock pinned at {ghz} GHz on the clusters of the timing cores: "
            ))
            .code("performance")
            .text(format!(
                " governor with minimum = maximum frequency{below}; {boost}; {smt}; hardware cycle counter available), as stored in each record. A trial that ran below 95% of that clock was repeated, up to twice."
            ));
    }
    Inline::new()
        .text(format!(
            "All {n} timing records were taken in this state (turbo off, "
        ))
        .code("performance")
        .text(" governor, SMT off, hardware cycle counter available), as stored in each record.")
}

fn join_numbers(v: &[i64]) -> String {
    v.iter()
        .map(|c| c.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The bullet about the cores timing ran on (the reference's `secondary_core_text`).
fn cores_limitation(v: &View) -> String {
    let cpu = |r: &Record| r.environment.cpu_number.json_i64();
    let cpus: Vec<i64> = complete_records(v)
        .filter_map(cpu)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let main = v.env.cpu_number.json_i64();
    let c = &v.ds.campaign;
    if c.shards.is_some_and(|s| s > 1) && cpus.len() > 1 {
        let shard_cpus: BTreeSet<i64> = c
            .shard_cpus
            .iter()
            .flat_map(|m| m.values())
            .filter_map(Value::as_i64)
            .collect();
        // (candidate, label) pairs in tuple order, as the reference sorts them.
        let slow: BTreeSet<(String, String)> = if shard_cpus.is_empty() {
            BTreeSet::new()
        } else {
            complete_records(v)
                .filter(|r| cpu(r).is_none_or(|c| !shard_cpus.contains(&c)))
                .map(|r| (r.candidate.clone(), r.label.clone()))
                .collect()
        };
        let divided = if shard_cpus.is_empty() {
            join_numbers(&cpus)
        } else {
            join_numbers(&shard_cpus.into_iter().collect::<Vec<_>>())
        };
        let mut text = format!(
            "Timing ran in parallel on cores {}. The instances were divided among cores {divided} by expected run time",
            join_numbers(&cpus)
        );
        if !slow.is_empty() {
            let names: Vec<String> = slow.iter().map(|(c, l)| format!("{c} {l}")).collect();
            text.push_str(&format!(
                "; the slowest instances ({}) ran on a further core",
                names.join(", ")
            ));
        }
        text.push_str(". All operations of one instance ran on the same core, and each record states its CPU. Cycle counts are comparable across these identical cores.");
        return text;
    }
    let main_text = main.map_or("None".to_string(), |m| m.to_string());
    let other: BTreeSet<(String, String)> = complete_records(v)
        .filter(|r| cpu(r) != main)
        .map(|r| (r.candidate.clone(), r.label.clone()))
        .collect();
    if other.is_empty() {
        return format!("All timing ran on CPU {main_text}.");
    }
    let names: Vec<String> = other.iter().map(|(c, l)| format!("{c} {l}")).collect();
    if v.has_ngcc_fields() {
        // Ours: no claim about why other cores were used; each record says which.
        return format!(
            "Timing ran on cores {}; {} ran on another core than CPU {main_text}. Each record states its CPU.",
            join_numbers(&cpus),
            names.join(", ")
        );
    }
    let kind = if v.env.architecture.text().as_deref() == Some("x86_64") {
        "performance "
    } else {
        ""
    };
    format!(
        "Timing ran on {kind}core(s) {}. The slowest instances ({}) were timed on a second {kind}core in parallel with the main run on CPU {main_text}, as was the hash profiling; each record states its CPU. Cycle counts are comparable across these identical cores.",
        join_numbers(&cpus),
        names.join(", ")
    )
}

/// The profile tick source where it is coarser than the core clock: every source named,
/// the median tick rate (the reference's `tick_text`).
fn tick_text(v: &View) -> Inline {
    let metas: Vec<&serde_json::Map<String, Value>> =
        v.ds.profiles.iter().map(|p| &p.profile.meta).collect();
    let sources: BTreeSet<&str> = metas
        .iter()
        .filter_map(|m| m.get("tick_source").and_then(Value::as_str))
        .filter(|s| *s != "rdtsc")
        .collect();
    let hz: Vec<f64> = metas
        .iter()
        .filter_map(|m| m.get("tick_hz"))
        .filter_map(|h| {
            h.as_str()
                .and_then(|s| s.parse::<f64>().ok())
                .or(h.as_f64())
        })
        .filter(|h| *h > 0.0)
        .collect();
    let Some(median) = crate::measure::stats::median(&hz).filter(|_| !sources.is_empty()) else {
        return Inline::new();
    };
    let mut out = Inline::new().text(" On this system the tick counter is ");
    for (i, s) in sources.iter().enumerate() {
        if i > 0 {
            out = out.text(", ");
        }
        out = out.code(*s);
    }
    out.text(format!(
        " at {:.1} MHz, so a single short call is resolved only to about {:.0} ns; the rounding is unbiased and averages out over the many calls that make up a share.",
        median / 1e6,
        1e9 / median
    ))
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
        .find(|(k, _)| *k == model::Honesty::Counter)
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
    if let Some((_, state)) = honesty
        .iter()
        .find(|(k, _)| *k == model::Honesty::HostState)
    {
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
    // Ours only (reference datasets have no noise check, so their page is unchanged).
    if let Some(n) = &c.noise {
        bullets.push(
            format!(
                "Host noise: a fixed reference loop ({}) was timed {} times on the benchmark CPU at the start, middle and end of the measure phase; its times spread by {} (max − min over min), CV {}.",
                n.work,
                n.samples.len(),
                format::noise_percent(n.spread),
                format::noise_percent(n.cv)
            )
            .into(),
        );
    }
    // Ours only (reference datasets have no share rule, so their page is unchanged).
    if let Some(share) = c.planning.as_ref().and_then(|p| p.min_timed_share) {
        bullets.push(
            format!(
                "Calibration times batches of back-to-back calls of at least 2 ms after the trial's warm-up and plans with the median batch; dry trial processes measure the fixed cost of a trial process (start, jail, library load, setup), and each trial is made long enough that its timed work is at least {:.0} % of its process's wall time.",
                share * 100.0
            )
            .into(),
        );
    }
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
    if summary::has_baseline(v) {
        let source = summary::helper_source(v);
        let of = match source {
            summary::HelperSource::Reference => Inline::new()
                .code("api/auxfunc.c")
                .text(" (")
                .code("performance/iccs")
                .text(", records under ")
                .code("iccs/")
                .text(")"),
            summary::HelperSource::Official => Inline::new()
                .text("the official ")
                .code("api/auxfunc.c")
                .text(" (")
                .code("campaign baseline --iccs-helpers")
                .text(", records under ")
                .code("iccs/")
                .text(")"),
            summary::HelperSource::Embedded => Inline::new()
                .text("ngcc-perf's own ")
                .code("csrc/iccs/auxfunc.c")
                .text(" (")
                .code("campaign baseline")
                .text(", records under ")
                .code("iccs/")
                .text("; the official ")
                .code("api/auxfunc.c")
                .text(" was not given: same outputs, but it is faster, so the ratios are not those to the official helpers)"),
        };
        let model = match source {
            summary::HelperSource::Reference => {
                Inline::new().text("an independent model on OpenSSL's SM3")
            }
            _ => Inline::new()
                .text("the Rust model ")
                .code("ngcc-iccs")
                .text(" at 18 message lengths"),
        };
        d.para(
            Inline::new()
                .text("The ICCS helpers ")
                .code("sm3hash")
                .text(", ")
                .code("pseudohash")
                .text(" and ")
                .code("pseudoXOF")
                .text(" are also timed directly, as hash instances of ")
                .then(of)
                .text(": same reference flags, driver, message lengths and planning as the hash candidates. Before timing, each is checked against ")
                .then(model)
                .text(", and ")
                .code("sm3hash")
                .text(" against the GB/T 32905 examples. The summary divides each hash candidate's cycles by those of ")
                .code("pseudoXOF")
                .text(" with the same output width and message length. This is a direct, self-contained relative measurement, not an estimate of substituting that hash into a public-key scheme. Several hash submissions are not yet constant-time (e.g. table-based S-boxes), so their current timings are not production figures; the summary flags known cases."),
        );
    } else {
        d.para(
            Inline::new()
                .text("The summary compares each hash candidate's 32-byte timing with the median measured ")
                .code("pseudoXOF")
                .text(" call having exactly the same input and output widths in the published profiles. Profile TSC ticks are converted to fixed-frequency core cycles using each profile's recorded tick calibration and the campaign's fixed CPU frequency. This is a direct, self-contained relative measurement, not an estimate of substituting that hash into a public-key scheme. Several hash submissions are not yet constant-time (e.g. table-based S-boxes), so their current timings are not production figures; the summary flags known cases."),
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
