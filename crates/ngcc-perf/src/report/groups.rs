//! The competition at a glance: security groups from `security_targets.csv`, one
//! representative instance per candidate and group, and the statistical order of the
//! representatives (`ranking.rs`). Pure: a dataset and its catalogs in, groups out; the
//! ordered pages (`ordered_page.rs`, `site/ordered.rs`) and `validate` all read this.
//!
//! Representative rule, in this order, per candidate and group:
//! 1. the one instance marked representative (catalog `Representative` column, or the
//!    manifest's `representative = true` recorded in build.json);
//! 2. else the group's only instance of that candidate;
//! 3. else, when the marked instances (or, with none marked, all of them) are
//!    implementations of one parameter set (labels equal but for an implementation suffix
//!    such as `-avx2`, `-clean`, `-ref`), the fastest complete, KAT-passing one by the ranked
//!    figure;
//! 4. else the choice is ambiguous: listed with its parameter sets, no rank.

use super::model::{self, View, natural_cmp};
use super::ranking::{self, Estimate, Ranks};
use super::site::metric::Metric;
use crate::dataset::catalog::TARGET_GROUPS;
use crate::dataset::schema::{KatStatus, META_SIGN_FAILURES_RETRIED, Record, RecordStatus};
use std::collections::BTreeMap;

/// The four kinds, in page order, with the id prefix the reference uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    Kem,
    Sign,
    Kex,
    Hash,
}

pub const KINDS: [Kind; 4] = [Kind::Kem, Kind::Sign, Kind::Kex, Kind::Hash];

impl Kind {
    pub fn key(self) -> &'static str {
        match self {
            Kind::Kem => "kem",
            Kind::Sign => "sign",
            Kind::Kex => "kex",
            Kind::Hash => "hash",
        }
    }

    pub fn of(category: &str) -> Option<Kind> {
        KINDS.into_iter().find(|k| k.key() == category)
    }

    /// The kind's heading on the summary page (the site finds its charts' section by it).
    pub const fn title(self) -> &'static str {
        match self {
            Kind::Kem => "Key encapsulation",
            Kind::Sign => "Digital signatures",
            Kind::Kex => "Key exchange",
            Kind::Hash => "Hash functions",
        }
    }

    /// The operations (op keys) whose figures a row shows; the ranked figure is built from
    /// `ranked_parts`.
    pub fn ops(self) -> &'static [&'static str] {
        match self {
            Kind::Kem => &["keygen", "enc", "dec"],
            Kind::Sign => &["sign", "verify", "keygen"],
            Kind::Kex => &["exchange"],
            Kind::Hash => &["hash_65536", "hash_32"],
        }
    }

    /// The op keys summed into the ranked figure.
    pub fn ranked_parts(self) -> &'static [&'static str] {
        match self {
            Kind::Kem => &["keygen", "enc", "dec"],
            Kind::Sign => &["sign", "verify"],
            Kind::Kex => &["exchange"],
            Kind::Hash => &["hash_65536"],
        }
    }

    /// What the ranked figure is, in words.
    pub fn ranked_words(self) -> &'static str {
        match self {
            Kind::Kem => "keygen + enc + dec",
            Kind::Sign => "sign + verify",
            Kind::Kex => "whole exchange",
            Kind::Hash => "per byte at 64 KiB",
        }
    }

    /// The size a row's bandwidth column adds up.
    pub fn bytes_words(self) -> &'static str {
        match self {
            Kind::Kem => "pk + ct (B)",
            Kind::Sign => "pk + signature (B)",
            Kind::Kex => "bandwidth (B)",
            Kind::Hash => "digest (B)",
        }
    }
}

/// Hash figures are per byte at this input length.
pub const HASH_LONG: u64 = 65536;

/// An instance's figures, from complete records only.
#[derive(Clone, Debug, PartialEq)]
pub struct Figures {
    /// The ranked figure (hash: per byte at 64 KiB).
    pub ranked: Estimate,
    /// Per op key of `Kind::ops`, its figure (per call).
    pub ops: Vec<(String, Estimate)>,
    /// pk + ct, pk + signature, KEX bandwidth, or the digest size.
    pub bytes: Option<u64>,
    /// How `bytes` adds up (`800 + 768`).
    pub bytes_parts: String,
    /// Largest peak RSS of the ranked records.
    pub peak_rss: Option<u64>,
    /// Hash/XOF and DRNG shares of the ranked figure (cycle-weighted over its parts); `None`
    /// when a part has no complete profile.
    pub hash_share: Option<f64>,
    pub rng_share: Option<f64>,
    /// Signatures: failed signing attempts retried per signature.
    pub retries: Option<f64>,
}

/// One instance of a group: its figures or why it has none.
#[derive(Clone, Debug, PartialEq)]
pub struct Member {
    pub cand: String,
    pub label: String,
    pub kat: Option<KatStatus>,
    pub figures: Result<Figures, NoFigures>,
    pub marked: bool,
}

/// Why an instance has no figures. Typed so that the rows keep the reason as a value (the
/// pages print it with Display) and nothing reads it back from text.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum NoFigures {
    #[error("no {} record", op_words(.0))]
    NoRecord(String),
    /// `status` is how the record's status reads on a page (`format::not_a_result`).
    #[error("{} record {status}", op_words(.op))]
    NotAResult { op: String, status: String },
    #[error("{} record has no trials in this unit", op_words(.0))]
    NoTrials(String),
    #[error("{} record has unusable trials", op_words(.0))]
    UnusableTrials(String),
    #[error("no ranked figure")]
    NoRankedFigure,
}

/// Why a candidate of a group has no representative (rule 4 of the module comment, or
/// nothing usable among the implementations of its one parameter set).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum NoRepresentative {
    #[error(
        "ambiguous: {} parameter sets in this group ({}) and {} marked representative",
        .sets.len(),
        .sets.join(", "),
        marked_words(*.several_marked)
    )]
    Ambiguous {
        sets: Vec<String>,
        several_marked: bool,
    },
    #[error("no complete, KAT-passing implementation of {0}")]
    NoneUsable(String),
}

fn marked_words(several_marked: bool) -> &'static str {
    if several_marked {
        "more than one"
    } else {
        "none"
    }
}

/// Why a candidate of a group is not ranked.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum NotRanked {
    #[error(transparent)]
    NoRepresentative(#[from] NoRepresentative),
    #[error(transparent)]
    NoFigures(#[from] NoFigures),
}

impl Member {
    fn usable(&self) -> bool {
        self.figures.is_ok() && self.kat == Some(KatStatus::Pass)
    }
}

/// How a representative was chosen.
#[derive(Clone, Debug, PartialEq)]
pub enum Choice {
    Marked,
    Only,
    /// The fastest of `n` complete, KAT-passing implementations of one parameter set.
    Fastest {
        of: usize,
    },
}

impl Choice {
    pub fn words(&self) -> String {
        match self {
            Choice::Marked => "marked".into(),
            Choice::Only => "only instance".into(),
            Choice::Fastest { of } => format!("fastest of {of} implementations"),
        }
    }
}

/// A ranked row: a candidate's representative with its figures and rank span.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub member: Member,
    pub choice: Choice,
    pub figures: Figures,
    pub rank: (usize, usize),
}

/// A candidate of the group without a rank, and why.
#[derive(Clone, Debug, PartialEq)]
pub struct Unranked {
    pub cand: String,
    /// The representative, when one was chosen (its records are what is missing).
    pub label: Option<String>,
    pub why: NotRanked,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Group {
    pub kind: Kind,
    pub bits: u32,
    /// Ascending by the ranked figure.
    pub rows: Vec<Row>,
    pub ranks: Ranks,
    pub unranked: Vec<Unranked>,
    /// The kind's supplementary parameter sets (blank TargetBits), shown below, not ranked.
    pub supplementary: Vec<Member>,
}

/// Every group of one dataset, and the instances the catalog has no row for.
#[derive(Clone, Debug, PartialEq)]
pub struct Groups {
    pub metric: Metric,
    pub groups: Vec<Group>,
    /// `cand label` of instances without a `security_targets.csv` row (never grouped).
    pub without_row: Vec<(String, String)>,
}

/// An implementation suffix: labels equal but for it name one parameter set.
const IMPLEMENTATION_SUFFIXES: [&str; 11] = [
    "avx2",
    "avx512",
    "clean",
    "ref",
    "reference",
    "opt",
    "optimized",
    "aarch64",
    "neon",
    "portable",
    "generic",
];

/// The parameter set of an instance label (`ml-kem-768-avx2` → `ml-kem-768`).
pub fn parameter_set(label: &str) -> String {
    for sep in ['-', '_'] {
        if let Some((head, tail)) = label.rsplit_once(sep)
            && IMPLEMENTATION_SUFFIXES.contains(&tail.to_ascii_lowercase().as_str())
            && !head.is_empty()
        {
            return head.to_string();
        }
    }
    label.to_string()
}

/// Per-trial means of a complete record in `metric` (per call).
pub fn per_trial(rec: &Record, metric: &Metric) -> Option<Vec<f64>> {
    let s = rec
        .stats
        .as_ref()
        .filter(|_| rec.status == RecordStatus::Complete)?;
    let v: Vec<f64> = s
        .trials
        .iter()
        .filter(|t| t.measurements > 0)
        .map(|t| match metric {
            Metric::Cycles { .. } => t.cycles as f64 / t.measurements as f64,
            Metric::Seconds => t.seconds / t.measurements as f64,
        })
        .collect();
    (!v.is_empty()).then_some(v)
}

fn op_words(op: &str) -> String {
    match op.strip_prefix("hash_") {
        Some(n) => format!("{n}-byte hash"),
        None => op.to_string(),
    }
}

/// The figures of one instance, or why it has none.
pub fn figures(
    v: &View,
    metric: &Metric,
    kind: Kind,
    cand: &str,
    label: &str,
) -> Result<Figures, NoFigures> {
    let mut ops = Vec::new();
    let mut recs: BTreeMap<&str, &Record> = BTreeMap::new();
    for op in kind.ops() {
        let Some(lr) = v.ds.record(cand, label, op) else {
            return Err(NoFigures::NoRecord(op.to_string()));
        };
        let rec = &lr.record;
        if rec.status != RecordStatus::Complete {
            return Err(NoFigures::NotAResult {
                op: op.to_string(),
                status: super::format::not_a_result(rec, true),
            });
        }
        let Some(trials) = per_trial(rec, metric) else {
            return Err(NoFigures::NoTrials(op.to_string()));
        };
        let est = Estimate::from_trials(&trials)
            .ok_or_else(|| NoFigures::UnusableTrials(op.to_string()))?;
        ops.push((op.to_string(), est));
        recs.insert(op, rec);
    }
    let part = |op: &str| ops.iter().find(|(o, _)| o == op).map(|(_, e)| e.clone());
    let parts: Vec<Estimate> = kind.ranked_parts().iter().filter_map(|o| part(o)).collect();
    let mut ranked = Estimate::sum(&parts).ok_or(NoFigures::NoRankedFigure)?;
    if kind == Kind::Hash {
        ranked = ranked.scaled(1.0 / HASH_LONG as f64);
    }
    let size = |rec: &Record, k: &str| {
        rec.stats
            .as_ref()
            .and_then(|s| s.sizes.get(k))
            .and_then(|x| x.as_u64())
    };
    let (bytes, bytes_parts) = match kind {
        Kind::Kem | Kind::Sign => {
            let second = if kind == Kind::Kem {
                "ct_bytes"
            } else {
                "signature_bytes"
            };
            let from_catalog = v.cat.external_size(cand, label).ok().and_then(|e| {
                let s = if kind == Kind::Kem { e.ct } else { e.sig };
                s.map(|s| (e.pk, s))
            });
            let keygen = recs.get("keygen");
            let from_record = keygen.and_then(|r| Some((size(r, "pk_bytes")?, size(r, second)?)));
            match from_catalog.or(from_record) {
                Some((pk, other)) => (Some(pk + other), format!("{pk} + {other}")),
                None => (None, String::new()),
            }
        }
        Kind::Kex => match v.cat.kex_bandwidth(cand, label) {
            Ok(b) => (
                Some(b.total()),
                format!("{} + {} + {}", b.messages, b.pk_a, b.pk_b),
            ),
            Err(_) => (None, String::new()),
        },
        Kind::Hash => {
            let d = recs.get("hash_65536").and_then(|r| size(r, "digest_bytes"));
            (d, String::new())
        }
    };
    let ranked_recs: Vec<&Record> = kind
        .ranked_parts()
        .iter()
        .filter_map(|o| recs.get(o).copied())
        .collect();
    let peak_rss = ranked_recs
        .iter()
        .filter_map(|r| r.stats.as_ref().map(|s| s.peak_rss_bytes))
        .max();
    let (mut hash, mut rng, mut weight) = (0.0, 0.0, 0.0);
    let mut profiled = true;
    for op in kind.ranked_parts() {
        let w = part(op).map(|e| e.mean).unwrap_or(0.0);
        match v
            .ds
            .profile(cand, label, op)
            .filter(|p| p.profile.hash_share.is_some())
        {
            Some(p) => {
                hash += w * p.profile.hash_share.unwrap_or(0.0);
                rng += w * model::rng_share(&p.profile);
                weight += w;
            }
            None => profiled = false,
        }
    }
    let share = |x: f64| (profiled && weight > 0.0).then(|| x / weight);
    let retries = (kind == Kind::Sign)
        .then(|| recs.get("sign"))
        .flatten()
        .and_then(|r| {
            let counts: Vec<u64> = r
                .processes
                .iter()
                .filter_map(|p| p.meta_count(META_SIGN_FAILURES_RETRIED))
                .collect();
            let calls = r.stats.as_ref()?.measurements;
            (!counts.is_empty() && calls > 0)
                .then(|| counts.iter().sum::<u64>() as f64 / calls as f64)
        });
    Ok(Figures {
        ranked,
        ops,
        bytes,
        bytes_parts,
        peak_rss,
        hash_share: share(hash),
        rng_share: share(rng),
        retries,
    })
}

/// The representative of one candidate's members of a group, or why there is none.
fn choose(members: &[Member]) -> Result<(usize, Choice), NoRepresentative> {
    let marked: Vec<usize> = (0..members.len()).filter(|&i| members[i].marked).collect();
    if marked.len() == 1 {
        return Ok((marked[0], Choice::Marked));
    }
    if members.len() == 1 {
        return Ok((0, Choice::Only));
    }
    let several_marked = !marked.is_empty();
    let pool: Vec<usize> = if several_marked {
        marked
    } else {
        (0..members.len()).collect()
    };
    let mut sets: Vec<String> = pool
        .iter()
        .map(|&i| parameter_set(&members[i].label))
        .collect();
    sets.sort_by(|a, b| natural_cmp(a, b));
    sets.dedup();
    if sets.len() > 1 {
        return Err(NoRepresentative::Ambiguous {
            sets,
            several_marked,
        });
    }
    let usable: Vec<usize> = pool.into_iter().filter(|&i| members[i].usable()).collect();
    let fastest = usable.iter().copied().min_by(|&a, &b| {
        let fa = members[a]
            .figures
            .as_ref()
            .map(|f| f.ranked.mean)
            .unwrap_or(f64::INFINITY);
        let fb = members[b]
            .figures
            .as_ref()
            .map(|f| f.ranked.mean)
            .unwrap_or(f64::INFINITY);
        fa.total_cmp(&fb)
            .then_with(|| natural_cmp(&members[a].label, &members[b].label))
    });
    match fastest {
        Some(i) => Ok((i, Choice::Fastest { of: usable.len() })),
        None => Err(NoRepresentative::NoneUsable(sets.swap_remove(0))),
    }
}

/// Groups, representatives and ranks of one dataset. Needs `security_targets.csv`; without
/// it (`None`) there are no groups.
pub fn compute(v: &View) -> Option<Groups> {
    v.cat.security_targets.as_ref()?;
    let metric = Metric::of(v.ds);
    let mut without_row = Vec::new();
    // (kind, bits) → candidate → members; kind → supplementary members.
    let mut grouped: BTreeMap<(Kind, u32), BTreeMap<String, Vec<Member>>> = BTreeMap::new();
    let mut supplementary: BTreeMap<Kind, Vec<Member>> = BTreeMap::new();
    for cand in v.candidates() {
        let Some(kind) = Kind::of(&v.category(&cand)) else {
            continue;
        };
        for label in v.labels(&cand) {
            let Some(target) = v.cat.security_target(&cand, &label) else {
                without_row.push((cand.clone(), label.clone()));
                continue;
            };
            let marked = target.representative
                || v.build_entry(&cand, &label)
                    .is_some_and(|e| e.representative);
            let member = Member {
                figures: figures(v, &metric, kind, &cand, &label),
                kat: v.kat_status(&cand, &label),
                cand: cand.clone(),
                label: label.clone(),
                marked,
            };
            match target.bits {
                Some(bits) => grouped
                    .entry((kind, bits))
                    .or_default()
                    .entry(cand.clone())
                    .or_default()
                    .push(member),
                None => supplementary.entry(kind).or_default().push(member),
            }
        }
    }
    let mut groups = Vec::new();
    for kind in KINDS {
        for bits in TARGET_GROUPS {
            let Some(cands) = grouped.remove(&(kind, bits)) else {
                continue;
            };
            let mut rows = Vec::new();
            let mut unranked = Vec::new();
            for (cand, members) in cands {
                match choose(&members) {
                    Ok((i, choice)) => {
                        let m = members[i].clone();
                        match m.figures.clone() {
                            Ok(f) => rows.push(Row {
                                member: m,
                                choice,
                                figures: f,
                                rank: (0, 0),
                            }),
                            Err(why) => unranked.push(Unranked {
                                cand,
                                label: Some(m.label),
                                why: why.into(),
                            }),
                        }
                    }
                    Err(why) => unranked.push(Unranked {
                        cand,
                        label: None,
                        why: why.into(),
                    }),
                }
            }
            rows.sort_by(|a, b| {
                a.figures
                    .ranked
                    .mean
                    .total_cmp(&b.figures.ranked.mean)
                    .then_with(|| natural_cmp(&a.member.cand, &b.member.cand))
            });
            let est: Vec<Estimate> = rows.iter().map(|r| r.figures.ranked.clone()).collect();
            let ranks = ranking::rank(&est);
            for (r, span) in rows.iter_mut().zip(&ranks.spans) {
                r.rank = *span;
            }
            groups.push(Group {
                kind,
                bits,
                rows,
                ranks,
                unranked,
                supplementary: supplementary.get(&kind).cloned().unwrap_or_default(),
            });
        }
    }
    Some(Groups {
        metric,
        groups,
        without_row,
    })
}

/// For `validate`: problems (instances of the dataset without a `security_targets.csv` row)
/// and a line listing the catalog's ids and labels this dataset does not have. `None`
/// without the file.
pub fn check_catalog(
    ds: &crate::dataset::load::Dataset,
    cat: &crate::dataset::catalog::Catalogs,
    sys: &str,
) -> anyhow::Result<Option<(Vec<String>, String)>> {
    let Some(rows) = cat.security_targets.as_ref() else {
        return Ok(None);
    };
    let v = View::new(ds, cat, sys)?;
    let (missing, unknown) = catalog_problems(&v);
    let problems = missing
        .iter()
        .map(|m| {
            format!(
                "{}: no row for {m}",
                crate::dataset::catalog::SECURITY_TARGETS
            )
        })
        .collect();
    let grouped = rows.len();
    let mut line = format!(
        "security targets: {grouped} row(s), {} instance(s) of this dataset without a row",
        missing.len()
    );
    if !unknown.is_empty() {
        // A shared catalog covers every candidate: name a few, count the rest.
        const SHOWN: usize = 12;
        let more = unknown.len().saturating_sub(SHOWN);
        line.push_str(&format!(
            "; {} catalog id(s)/label(s) not in this dataset: {}{}",
            unknown.len(),
            unknown[..unknown.len().min(SHOWN)].join(", "),
            if more > 0 {
                format!(", … {more} more")
            } else {
                String::new()
            }
        ));
    }
    Ok(Some((problems, line)))
}

/// Catalog problems: instances of the dataset without a row (every ranked instance needs
/// one), and rows whose id or label the dataset does not have (`unknown_*`: listed, since a
/// shared catalog legitimately covers other datasets' candidates).
pub fn catalog_problems(v: &View) -> (Vec<String>, Vec<String>) {
    let Some(rows) = v.cat.security_targets.as_ref() else {
        return (Vec::new(), Vec::new());
    };
    let cands = v.candidates();
    let mut missing = Vec::new();
    for cand in &cands {
        for label in v.labels(cand) {
            if !rows.contains_key(&(cand.clone(), label.clone())) {
                missing.push(format!("{cand} {label}"));
            }
        }
    }
    let mut unknown = Vec::new();
    for (cand, label) in rows.keys() {
        if !cands.contains(cand) {
            if !unknown.contains(&format!("id {cand}")) {
                unknown.push(format!("id {cand}"));
            }
        } else if !v.labels(cand).contains(label) {
            unknown.push(format!("label {cand} {label}"));
        }
    }
    (missing, unknown)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn implementation_suffixes_name_one_parameter_set() {
        assert_eq!(parameter_set("ml-kem-768-avx2"), "ml-kem-768");
        assert_eq!(parameter_set("ml-kem-768-clean"), "ml-kem-768");
        assert_eq!(parameter_set("UVW_KEM_128_ref"), "UVW_KEM_128");
        assert_eq!(parameter_set("Lore-SHAKE-L1"), "Lore-SHAKE-L1");
        assert_eq!(parameter_set("avx2"), "avx2");
    }

    fn member(label: &str, mean: Option<f64>, kat: KatStatus, marked: bool) -> Member {
        Member {
            cand: "kem-1".into(),
            label: label.into(),
            kat: Some(kat),
            figures: match mean {
                Some(m) => Ok(Figures {
                    ranked: Estimate::from_trials(&[m, m]).unwrap(),
                    ops: Vec::new(),
                    bytes: None,
                    bytes_parts: String::new(),
                    peak_rss: None,
                    hash_share: None,
                    rng_share: None,
                    retries: None,
                }),
                None => Err(NoFigures::NoRecord("enc".into())),
            },
            marked,
        }
    }

    #[test]
    fn the_representative_rule_in_order() {
        use KatStatus::*;
        // Marked wins even when slower.
        let m = [
            member("A", Some(9.0), Pass, true),
            member("B", Some(1.0), Pass, false),
        ];
        assert_eq!(choose(&m).unwrap(), (0, Choice::Marked));
        // The only instance, complete or not.
        assert_eq!(choose(&m[1..]).unwrap(), (0, Choice::Only));
        // Two implementations of one set: the fastest complete, KAT-passing one.
        let m = [
            member("x-768-clean", Some(9.0), Pass, false),
            member("x-768-avx2", Some(3.0), Pass, false),
            member("x-768-opt", Some(1.0), Mismatch, false),
        ];
        assert_eq!(choose(&m).unwrap(), (1, Choice::Fastest { of: 2 }));
        // Two parameter sets, none marked: ambiguous.
        let m = [
            member("L-SHAKE-L1", Some(1.0), Pass, false),
            member("L-SM3-L1", Some(2.0), Pass, false),
        ];
        let why = choose(&m).unwrap_err();
        assert_eq!(
            why.to_string(),
            "ambiguous: 2 parameter sets in this group (L-SHAKE-L1, L-SM3-L1) and none marked representative"
        );
        // Two marked of different sets: ambiguous too.
        let m = [
            member("L-SHAKE-L1", Some(1.0), Pass, true),
            member("L-SM3-L1", Some(2.0), Pass, true),
        ];
        assert_eq!(
            choose(&m).unwrap_err().to_string(),
            "ambiguous: 2 parameter sets in this group (L-SHAKE-L1, L-SM3-L1) and more than one marked representative"
        );
        // One set, nothing usable.
        let m = [
            member("x-clean", None, Pass, false),
            member("x-avx2", Some(1.0), Mismatch, false),
        ];
        assert_eq!(
            choose(&m).unwrap_err().to_string(),
            "no complete, KAT-passing implementation of x"
        );
        assert_eq!(
            NoFigures::NoRecord("hash_64".into()).to_string(),
            "no 64-byte hash record"
        );
    }
}
