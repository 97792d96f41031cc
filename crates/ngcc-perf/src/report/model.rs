//! What every page shares: the view of one dataset for one system, ordering rules, the
//! reference environment, the clock text and the host/counter labels of our own datasets.

use super::doc::Inline;
use super::format::{self, DASH};
use crate::dataset::catalog::{Catalogs, System};
use crate::dataset::load::{Dataset, LoadedProfile, LoadedRecord};
use crate::dataset::schema::{
    BuildEntry, CounterKind, HostEnv, KatStatus, Profile, Record, RecordStatus,
};
use anyhow::Result;
use std::cmp::Ordering;
use std::collections::BTreeSet;

pub const HARNESS_URL: &str = "https://github.com/ngcc-dev/ngcc-harness";
/// The reference picks its environment from a record timed on this CPU (hard-coded there).
const REFERENCE_CPU: &str = "2";

/// Natural order: runs of digits compare as numbers, everything else as text.
pub fn natural_cmp(a: &str, b: &str) -> Ordering {
    let (ta, tb) = (tokens(a), tokens(b));
    for (x, y) in ta.iter().zip(&tb) {
        let ord = match (x, y) {
            (Token::Num(p), Token::Num(q)) => {
                let (p, q) = (p.trim_start_matches('0'), q.trim_start_matches('0'));
                p.len().cmp(&q.len()).then_with(|| p.cmp(q))
            }
            (Token::Text(p), Token::Text(q)) => p.cmp(q),
            // Cannot happen with alternating tokens; keep a total order anyway.
            (Token::Num(_), Token::Text(_)) => Ordering::Less,
            (Token::Text(_), Token::Num(_)) => Ordering::Greater,
        };
        if ord != Ordering::Equal {
            return ord;
        }
    }
    ta.len().cmp(&tb.len())
}

enum Token<'a> {
    Text(&'a str),
    Num(&'a str),
}

/// Splits like Python's `re.split(r'(\d+)', s)`: text, number, text, … (text may be empty).
fn tokens(s: &str) -> Vec<Token<'_>> {
    let mut out = Vec::new();
    let bytes = s.as_bytes();
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i].is_ascii_digit() {
            out.push(Token::Text(&s[start..i]));
            let j = i + bytes[i..].iter().take_while(|b| b.is_ascii_digit()).count();
            out.push(Token::Num(&s[i..j]));
            start = j;
            i = j;
        } else {
            i += 1;
        }
    }
    out.push(Token::Text(&s[start..]));
    out
}

/// Display order of operations; hash sizes follow in numeric order, unknown keys last.
pub fn op_rank(op_key: &str) -> (u32, u64, String) {
    let fixed = [
        "keygen", "enc", "dec", "sign", "verify", "exchange", "init_a", "init_b",
    ];
    if let Some(i) = fixed.iter().position(|o| *o == op_key) {
        return (i as u32, 0, String::new());
    }
    if let Some(n) = op_key
        .strip_prefix("pass")
        .and_then(|n| n.parse::<u32>().ok())
        .filter(|n| (1..=16).contains(n))
    {
        return (100 + n, 0, String::new());
    }
    match op_key {
        "derive_a" => return (200, 0, String::new()),
        "derive_b" => return (201, 0, String::new()),
        _ => {}
    }
    if let Some(size) = op_key
        .rsplit_once('_')
        .and_then(|(_, n)| n.parse::<u64>().ok())
    {
        return (300, size, op_key.to_string());
    }
    (400, 0, op_key.to_string())
}

pub use crate::dataset::catalog::category;

pub fn is_avx2(label: &str) -> bool {
    label.ends_with("-avx2")
}

pub fn arch_label(arch: &str) -> &str {
    match arch {
        "x86_64" => "x86-64",
        "aarch64" => "AArch64",
        other => other,
    }
}

pub fn guide_name(arch: &str) -> &str {
    match arch {
        "x86_64" => "x86",
        "aarch64" => "ARM",
        other => other,
    }
}

fn on_off(v: Option<String>, on: &str, off: &str) -> Option<&'static str> {
    match v.as_deref() {
        Some(x) if x == on => Some("on"),
        Some(x) if x == off => Some("off"),
        _ => None,
    }
}

pub fn smt_text(env: &HostEnv) -> String {
    match env.smt_control.text().as_deref() {
        Some("notsupported") | Some("notimplemented") => "none".into(),
        Some(s) => s.into(),
        None => "unknown".into(),
    }
}

/// How the core clock was held, in words (§8.3 clock_text).
pub fn clock_text(env: &HostEnv) -> String {
    let smt = smt_text(env);
    let driver = env.cpufreq_driver.text().filter(|d| !d.is_empty());
    let core_hz = env.core_clock_hz.number().filter(|h| *h > 0.0);
    let min_khz = env.cpufreq_min_khz.text();
    let max_khz = env.cpufreq_max_khz.text();
    let governor = env
        .cpufreq_governor
        .text()
        .unwrap_or_else(|| "unknown".into());
    let arch = env.architecture.text().unwrap_or_default();
    if driver.is_none()
        && let Some(hz) = core_hz
    {
        return format!(
            "measured {} GHz, set by firmware (no OS frequency scaling or boost), SMT {smt}",
            format::ghz(hz / 1e9)
        );
    }
    let max_ghz = env.cpufreq_max_khz.number().map(|k| format::ghz(k / 1e6));
    let Some(max_ghz) = max_ghz else {
        // Neither a frequency driver nor a measured clock: nothing to claim.
        return format!("unknown (no cpufreq data, no measured clock), SMT {smt}");
    };
    if arch == "aarch64" && min_khz.is_some() && min_khz == max_khz {
        let boost = on_off(env.cpufreq_boost.text(), "1", "0").unwrap_or("unknown");
        return format!(
            "fixed {max_ghz} GHz (governor {governor}, minimum = maximum), boost {boost}, SMT {smt}"
        );
    }
    let turbo = on_off(env.intel_pstate_no_turbo.text(), "0", "1")
        .or_else(|| on_off(env.cpufreq_boost.text(), "1", "0"))
        .unwrap_or("unknown");
    format!("max {max_ghz} GHz, governor {governor}, turbo {turbo}, SMT {smt}")
}

/// One dataset seen for one system, with the catalogs: the input of every page.
pub struct View<'a> {
    pub ds: &'a Dataset,
    pub cat: &'a Catalogs,
    pub sys: &'a str,
    pub system: &'a System,
    /// The environment shown on pages (§8.1 "reference environment").
    pub env: HostEnv,
}

impl<'a> View<'a> {
    pub fn new(ds: &'a Dataset, cat: &'a Catalogs, sys: &'a str) -> Result<View<'a>> {
        let system = cat.system(sys)?;
        let env = reference_env(ds);
        Ok(View {
            ds,
            cat,
            sys,
            system,
            env,
        })
    }

    /// Candidates with a page: every candidate of the records or build.json except `iccs`.
    pub fn candidates(&self) -> Vec<String> {
        let mut set: BTreeSet<String> = self
            .ds
            .records
            .iter()
            .map(|r| r.record.candidate.clone())
            .collect();
        for (_, e) in self.ds.build_entries() {
            set.insert(e.candidate);
        }
        set.remove("iccs");
        set.into_iter().collect()
    }

    /// Labels of a candidate from records and build.json, in natural order.
    pub fn labels(&self, cand: &str) -> Vec<String> {
        let mut set: BTreeSet<String> = self
            .ds
            .records_of(cand)
            .map(|r| r.record.label.clone())
            .collect();
        for (_, e) in self.ds.build_entries() {
            if e.candidate == cand {
                set.insert(e.label);
            }
        }
        sorted_natural(set.into_iter().collect())
    }

    /// Records of one instance in display order.
    pub fn instance_records(&self, cand: &str, label: &str) -> Vec<&'a LoadedRecord> {
        let mut v: Vec<&LoadedRecord> = self
            .ds
            .records
            .iter()
            .filter(|r| r.record.candidate == cand && r.record.label == label)
            .collect();
        v.sort_by_key(|r| op_rank(&r.op_key()));
        v
    }

    pub fn instance_profiles(&self, cand: &str, label: &str) -> Vec<&'a LoadedProfile> {
        let mut v: Vec<&LoadedProfile> = self
            .ds
            .profiles
            .iter()
            .filter(|p| p.profile.candidate == cand && p.profile.label == label)
            .collect();
        v.sort_by_key(|p| op_rank(&p.op_key()));
        v
    }

    pub fn build_entry(&self, cand: &str, label: &str) -> Option<BuildEntry> {
        self.ds.build_entry(cand, label)
    }

    /// `kem`, `sign`, `kex` or `hash`: the kind ngcc-perf records in build.json, else the
    /// reference's id prefix (`kem-31`).
    pub fn category(&self, cand: &str) -> String {
        let kind = self
            .ds
            .build_entries()
            .into_iter()
            .find(|(_, e)| e.candidate == cand)
            .and_then(|(_, e)| e.kind);
        match kind.as_deref() {
            Some("sig") => "sign".into(),
            Some(k) => k.into(),
            None => category(cand).into(),
        }
    }

    pub fn algorithm(&self, cand: &str) -> Result<String> {
        Ok(self.cat.download(cand)?.algorithm.clone())
    }

    pub fn arch(&self) -> &str {
        &self.system.arch
    }

    /// The KAT status of an instance: build.json first, else its records.
    pub fn kat_status(&self, cand: &str, label: &str) -> Option<KatStatus> {
        self.build_entry(cand, label).map(|e| e.kat).or_else(|| {
            self.ds
                .records
                .iter()
                .find(|r| r.record.candidate == cand && r.record.label == label)
                .map(|r| r.record.kat.clone())
        })
    }

    /// A dataset the reference harness published (no ngcc-perf fields): its pages keep the
    /// reference's links into the harness repository; ours link only what exists.
    pub fn is_reference(&self) -> bool {
        !self.has_ngcc_fields()
    }

    pub fn has_ngcc_fields(&self) -> bool {
        let c = &self.ds.campaign;
        c.tool.is_some()
            || c.counter.is_some()
            || c.allow_unfixed_host
            || self.ds.records.iter().any(|r| r.record.ngcc.is_some())
    }

    /// Host and counter rows for our own datasets (empty for reference datasets).
    pub fn honesty_rows<'r>(
        &self,
        records: impl Iterator<Item = &'r Record>,
    ) -> Vec<(Honesty, Inline)> {
        let records: Vec<&Record> = records.collect();
        let campaign = &self.ds.campaign;
        let ngcc_records = records.iter().filter_map(|r| r.ngcc.as_ref());
        if !self.has_ngcc_fields() {
            return Vec::new();
        }
        let mut rows = Vec::new();
        let mut problems: Vec<String> = Vec::new();
        let mut unfixed = campaign.allow_unfixed_host;
        for x in ngcc_records.clone() {
            unfixed |= !x.host_fixed || x.allow_unfixed_host;
            for p in &x.host_problems {
                if !problems.contains(p) {
                    problems.push(p.clone());
                }
            }
        }
        for p in &campaign.host_problems {
            unfixed = true;
            if !problems.contains(p) {
                problems.push(p.clone());
            }
        }
        if unfixed {
            let what = if problems.is_empty() {
                "not fixed".to_string()
            } else {
                format!("not fixed: {}", problems.join("; "))
            };
            rows.push((
                Honesty::HostState,
                format!("{what}; figures are indicative, not publishable").into(),
            ));
        }
        if let Some(text) = containment_text(campaign, &records) {
            rows.push((Honesty::Containment, text.into()));
        }
        let mut counters: Vec<(CounterKind, Option<f64>)> = Vec::new();
        for x in ngcc_records {
            if !counters.iter().any(|(c, _)| *c == x.counter) {
                counters.push((x.counter.clone(), x.counter_hz));
            }
        }
        if counters.is_empty()
            && let Some(c) = &campaign.counter
        {
            counters.push((c.clone(), None));
        }
        let mut text = Inline::new();
        for (i, t) in counters
            .iter()
            .filter_map(|(c, hz)| counter_text(c, *hz))
            .enumerate()
        {
            if i > 0 {
                text = text.text("; ");
            }
            text = text.then(t);
        }
        if !text.is_empty() {
            rows.push((Honesty::Counter, text));
        }
        rows
    }
}

/// What an honesty row is about: pages decide on this, and show [`Honesty::label`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Honesty {
    /// The host was not fixed (figures indicative).
    HostState,
    /// How candidate code was contained.
    Containment,
    /// The cycle counter, where it is not core cycles or its rate is known.
    Counter,
}

impl Honesty {
    /// The row's label on the pages.
    pub const fn label(self) -> &'static str {
        match self {
            Honesty::HostState => "host state",
            Honesty::Containment => "containment",
            Honesty::Counter => "counter",
        }
    }
}

/// The containment row of our pages: the layers every record's processes had (the
/// campaign's probe when no record says), or the UNCONTAINED warning. `None` for datasets
/// without containment data (the reference's, older ones).
pub fn containment_text(
    campaign: &crate::dataset::schema::Campaign,
    records: &[&crate::dataset::schema::Record],
) -> Option<String> {
    Some(match containment(campaign, records)? {
        Contained::Jailed(layers) => format!("candidate code ran jailed: {layers}"),
        Contained::Uncontained => "UNCONTAINED: candidate code ran with the harness's own rights; its figures and verdicts could be forged".into(),
    })
}

/// How candidate code ran, for the containment row and the site's banner (which words it
/// differently: one sentence per banner).
#[derive(Clone, Debug, PartialEq)]
pub enum Contained {
    /// In the jail; the layers every process had, in words.
    Jailed(String),
    /// With the harness's own rights.
    Uncontained,
}

/// See [`containment_text`].
pub fn containment(
    campaign: &crate::dataset::schema::Campaign,
    records: &[&crate::dataset::schema::Record],
) -> Option<Contained> {
    let mut common: Option<crate::dataset::schema::Containment> = None;
    for c in records
        .iter()
        .filter_map(|r| r.ngcc.as_ref().and_then(|x| x.containment.as_ref()))
    {
        common = Some(match common {
            None => c.clone(),
            Some(mut k) => {
                k.keep_common(c);
                k
            }
        });
    }
    let c = common.or_else(|| campaign.containment.clone())?;
    Some(if c.uncontained() || campaign.allow_uncontained {
        Contained::Uncontained
    } else {
        Contained::Jailed(c.text())
    })
}

/// What the cycle figures are when they are not user-mode core cycles; `None` for core cycles.
pub fn counter_text(counter: &CounterKind, hz: Option<f64>) -> Option<Inline> {
    match counter {
        CounterKind::PerfCycles => None,
        CounterKind::Tsc => Some(
            match hz {
                Some(hz) => format!(
                    "TSC reference cycles at {} GHz (not core cycles)",
                    format::ghz(hz / 1e9)
                ),
                None => "TSC reference cycles (not core cycles)".into(),
            }
            .into(),
        ),
        CounterKind::Cntvct => Some(Inline::new().code("cntvct_el0").text(match hz {
            Some(hz) => format!(" ticks at {} MHz (not core cycles)", format::g3(hz / 1e6)),
            None => " ticks (not core cycles)".into(),
        })),
        CounterKind::None => Some(
            format!("none: no cycle counter, cycle columns show {DASH} and times are wall-clock")
                .into(),
        ),
        CounterKind::Other(other) => Some(format!("{other} (not core cycles)").into()),
    }
}

pub fn sorted_natural(mut v: Vec<String>) -> Vec<String> {
    v.sort_by(|a, b| natural_cmp(a, b));
    v
}

/// The first complete record timed on CPU 2, else the first record, else the campaign start.
pub fn reference_env(ds: &Dataset) -> HostEnv {
    let on_reference_cpu = |r: &&LoadedRecord| {
        r.record.status == RecordStatus::Complete
            && r.record.environment.cpu_number.text().as_deref() == Some(REFERENCE_CPU)
    };
    ds.records
        .iter()
        .find(on_reference_cpu)
        .or_else(|| ds.records.first())
        .map(|r| r.record.environment.clone())
        .or_else(|| ds.campaign.environment_at_start.clone())
        .unwrap_or_default()
}

/// Calls per operation of each helper, `drng 1, pseudoXOF 5`, or `–`.
pub fn calls_per_op(p: &Profile) -> String {
    let Some(total) = p.total.as_ref().filter(|t| t.operations > 0) else {
        return DASH.into();
    };
    let mut per_fn: std::collections::BTreeMap<&str, u64> = Default::default();
    for c in &p.calls {
        *per_fn.entry(c.func.as_str()).or_default() += c.calls;
    }
    if per_fn.is_empty() {
        return DASH.into();
    }
    per_fn
        .iter()
        .map(|(f, calls)| {
            format!(
                "{f} {}",
                format::calls_per_op(crate::measure::stats::int_div(
                    *calls as u128,
                    total.operations as u128
                ))
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The RNG share of a profile: ICCS `drng`, plus NIST `randombytes` in ngcc-perf profiles.
pub fn rng_share(p: &Profile) -> f64 {
    share_of(p, "drng").unwrap_or(0.0) + share_of(p, "randombytes").unwrap_or(0.0)
}

pub fn share_of(p: &Profile, func: &str) -> Option<f64> {
    p.share.as_ref()?.get(func)?.as_f64()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    #[test]
    fn natural_order() {
        let v = sorted_natural(
            [
                "NGCC-10", "NGCC-2", "NGCC-1", "a", "A", "x9y", "x10y", "x09y",
            ]
            .map(String::from)
            .to_vec(),
        );
        assert_eq!(
            v,
            [
                "A", "NGCC-1", "NGCC-2", "NGCC-10", "a", "x9y", "x09y", "x10y"
            ]
        );
        assert_eq!(natural_cmp("UVW-KEM-128", "UVW-KEM-256"), Ordering::Less);
        assert_eq!(natural_cmp("Wish512", "Wish1024"), Ordering::Less);
    }

    #[test]
    fn operation_order() {
        let mut ops = vec![
            "verify",
            "pass10",
            "derive_b",
            "hash_65536",
            "pass2",
            "sign",
            "hash_32",
            "keygen",
            "zzz",
            "exchange",
        ];
        ops.sort_by_key(|o| op_rank(o));
        assert_eq!(
            ops,
            [
                "keygen",
                "sign",
                "verify",
                "exchange",
                "pass2",
                "pass10",
                "derive_b",
                "hash_32",
                "hash_65536",
                "zzz"
            ]
        );
    }

    fn env(pairs: &[(&str, Value)]) -> HostEnv {
        let map: serde_json::Map<String, Value> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect();
        serde_json::from_value(Value::Object(map)).unwrap()
    }

    #[test]
    fn clock_texts() {
        let arm = env(&[
            ("architecture", "aarch64".into()),
            ("cpufreq_driver", "scmi".into()),
            ("cpufreq_governor", "performance".into()),
            ("cpufreq_min_khz", "2707200".into()),
            ("cpufreq_max_khz", "2707200".into()),
            ("cpufreq_boost", "0".into()),
            ("smt_control", "notsupported".into()),
        ]);
        assert_eq!(
            clock_text(&arm),
            "fixed 2.71 GHz (governor performance, minimum = maximum), boost off, SMT none"
        );
        let x86 = env(&[
            ("architecture", "x86_64".into()),
            ("cpufreq_driver", "intel_pstate".into()),
            ("cpufreq_governor", "performance".into()),
            ("cpufreq_min_khz", "800000".into()),
            ("cpufreq_max_khz", "2100000".into()),
            ("intel_pstate_no_turbo", "1".into()),
            ("smt_control", "off".into()),
        ]);
        assert_eq!(
            clock_text(&x86),
            "max 2.10 GHz, governor performance, turbo off, SMT off"
        );
        let fw = env(&[
            ("architecture", "aarch64".into()),
            ("core_clock_hz", Value::from(3400000000u64)),
            ("smt_control", "notimplemented".into()),
        ]);
        assert_eq!(
            clock_text(&fw),
            "measured 3.40 GHz, set by firmware (no OS frequency scaling or boost), SMT none"
        );
        assert!(clock_text(&HostEnv::default()).starts_with("unknown"));
    }

    #[test]
    fn counter_labels() {
        assert_eq!(counter_text(&CounterKind::PerfCycles, None), None);
        assert_eq!(
            counter_text(&CounterKind::Tsc, Some(2.45e9))
                .unwrap()
                .markdown(),
            "TSC reference cycles at 2.45 GHz (not core cycles)"
        );
        assert_eq!(
            counter_text(&CounterKind::Cntvct, Some(19.2e6))
                .unwrap()
                .markdown(),
            "`cntvct_el0` ticks at 19.2 MHz (not core cycles)"
        );
    }
}
