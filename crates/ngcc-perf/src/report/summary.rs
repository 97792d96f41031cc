//! `performance/summary_<SYS>.md` (reference-harness.md §8.4): one table per category, with
//! the wording and rules of the reference's newest published summary (`summary_arm_1.md` at
//! ngcc-harness `cdbc80ed…`; `tests/it/reference_pages.rs` compares line by line).

use super::doc::{Cell, Doc, Inline, Table, code};
use super::format::{self, DASH};
use super::groups::Kind;
use super::model::{self, HARNESS_URL, View, is_avx2, natural_cmp};
use crate::dataset::load::LoadedRecord;
use crate::dataset::schema::baseline::{CANDIDATE as ICCS, EMBEDDED};
use crate::dataset::schema::{KatStatus, RecordStatus};
use anyhow::Result;
use serde_json::Value;

pub fn path(sys: &str) -> String {
    format!("performance/summary_{sys}.md")
}

/// Hash message sizes shown in the summary (S1, S4, S8).
const HASH_SIZES: [u64; 3] = [32, 1024, 65536];
use crate::dataset::guide::HASH_SIZES as GUIDE_SIZES;

struct Category {
    prefix: &'static str,
    title: &'static str,
    ops: &'static [&'static str],
    size_heads: &'static [&'static str],
}

const PK_CATEGORIES: [Category; 3] = [
    Category {
        prefix: "sign",
        title: Kind::Sign.title(),
        ops: &["keygen", "sign", "verify"],
        size_heads: &["public key (B)", "signature (B)"],
    },
    Category {
        prefix: "kem",
        title: Kind::Kem.title(),
        ops: &["keygen", "enc", "dec"],
        size_heads: &["public key (B)", "ciphertext (B)"],
    },
    Category {
        prefix: "kex",
        title: Kind::Kex.title(),
        ops: &["exchange"],
        size_heads: &["bandwidth (bytes)"],
    },
];

fn number_word(n: u64) -> String {
    const WORDS: [&str; 11] = [
        "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    ];
    WORDS
        .get(n as usize)
        .map(|w| w.to_string())
        .unwrap_or_else(|| n.to_string())
}

/// The id and algorithm cells of a row.
/// The specification PDF lives in the reference harness's repository: only reference
/// datasets link it.
fn candidate_cells(v: &View, cand: &str, algorithm: &str) -> [Cell; 2] {
    let name = if v.is_reference() {
        Inline::new().foreign(algorithm).text(" ").link(
            "PDF",
            format!("{HARNESS_URL}/blob/main/{cand}/{cand}-spec.pdf"),
        )
    } else {
        Inline::new().foreign(algorithm)
    };
    [
        Inline::new()
            .link(cand, format!("../{cand}/perf_{}.md", v.sys))
            .into(),
        name.into(),
    ]
}

/// True for an instance that the summary shows (reference build only).
fn is_reference(v: &View, cand: &str, label: &str) -> bool {
    if is_avx2(label) {
        return false;
    }
    match v.build_entry(cand, label) {
        Some(e) => e.variant == "reference",
        None => v
            .instance_records(cand, label)
            .first()
            .is_none_or(|r| r.record.variant == "reference"),
    }
}

fn instance_cell(v: &View, cand: &str, label: &str) -> Cell {
    let mut s = code(label);
    if is_avx2(label) {
        s = s.text(" (AVX2)");
    }
    if let Some(kat) = v.kat_status(cand, label).filter(|k| *k != KatStatus::Pass) {
        s = s.text(format!(" ⚠ KAT {kat}"));
    }
    s.into()
}

fn notes(v: &View, cand: &str, label: &str, with_verdict: bool) -> String {
    let mut notes: Vec<String> = Vec::new();
    if with_verdict {
        let verdict_note = match v.cat.survey_row(cand).map(|s| s.verdict.as_str()) {
            Some("bypass") => Some("own symmetric primitives; placeholder share unavailable"),
            Some("mixed") => Some("mixed own/ICCS primitives"),
            Some("instance-dependent") => Some("hash backend varies by instance"),
            _ => None,
        };
        notes.extend(verdict_note.map(str::to_string));
    }
    if v.kat_status(cand, label)
        .is_some_and(|k| k != KatStatus::Pass)
    {
        notes.push("KAT/output caveat; see candidate page".into());
    }
    notes.extend(
        v.cat
            .summary_notes_for(cand, label)
            .into_iter()
            .map(str::to_string),
    );
    let mut seen: Vec<String> = Vec::new();
    for n in notes {
        if !seen.contains(&n) {
            seen.push(n);
        }
    }
    if seen.is_empty() {
        DASH.into()
    } else {
        seen.join("; ")
    }
}

fn record<'a>(v: &View<'a>, cand: &str, label: &str, op_key: &str) -> Option<&'a LoadedRecord> {
    v.ds.record(cand, label, op_key)
}

pub fn render(v: &View) -> Result<Doc> {
    let sys = v.sys;
    let env = &v.env;
    let mut d = Doc::new();
    d.heading(
        1,
        format!(
            "Performance — {}, system {sys}",
            model::arch_label(v.arch())
        ),
    );
    let mut intro = Inline::new().text(format!(
        "Independent measurements of the NGCC Round 1 implementations on one {} core ({}).",
        env.cpu_model.text().unwrap_or_else(|| "unknown".into()),
        model::clock_text(env)
    ));
    for (item, value) in v.honesty_rows(v.ds.records.iter().map(|r| &r.record)) {
        let what = match item {
            model::Honesty::HostState => " Host state: ",
            model::Honesty::Containment => " Containment: ",
            model::Honesty::Counter => " Cycle counter: ",
        };
        intro = intro.text(what).then(value).text(".");
    }
    d.para(intro);
    let trials =
        v.ds.campaign
            .planning
            .as_ref()
            .map(|p| p.trials as u64)
            .unwrap_or(5);
    let has_baseline = has_baseline(v);
    let mut bullets: Vec<Inline> = Vec::new();
    bullets.push(
        Inline::new()
            .strong("Cycles")
            .text(format!(
                " are the mean of all timed calls in {} trials, normally with each trial in a fresh process.",
                number_word(trials)
            )),
    );
    bullets.push(if v.is_reference() {
        Inline::new()
            .strong("Symmetric %")
            .text(" is the cycle share in ICCS placeholder hashes, excluding the DRNG and candidates' own hashes. ")
            .code("(??%)")
            .text(" means no ICCS-facing backend was measured. See the ")
            .link("symmetric survey", "symmetric-survey.md")
            .text(".")
    } else {
        // Our profiles wrap the ICCS helpers for ICCS code and PQClean's FIPS 202, SHA-2 and
        // AES functions for NIST-API code (profile/symbols.rs).
        let mut t = Inline::new()
            .strong("Symmetric %")
            .text(" is the cycle share in the wrapped hash functions: the ICCS helpers (sm3hash, pseudohash, pseudoXOF) for ICCS-API code; the FIPS 202 (Keccak/SHAKE), SHA-2 and AES functions for NIST/PQClean-API code. The DRNG and randombytes are excluded, and so are an ICCS candidate's own hashes. ")
            .code("(??%)")
            .text(" means no hash function was profiled.");
        if v.cat.survey.is_some() {
            t = t
                .text(" See the ")
                .link("symmetric survey", "symmetric-survey.md")
                .text(".");
        }
        t
    });
    bullets.push(
        Inline::new()
            .text("Each instance links to its ")
            .strong("performance report")
            .text(" with KAT status, all measured implementations, sizes, memory proxies, primitive profiles, and raw-evidence references."),
    );
    bullets.push(
        Inline::new()
            .text("See ")
            .link("method and limitations", format!("method_{sys}.md"))
            .text(". These are independent measurements, not submitter self-assessments or NICCS results."),
    );
    bullets.push(
        Inline::new()
            .strong("Notation:")
            .text(" ")
            .code(DASH)
            .text(" means not measured, ")
            .code("n=")
            .text(" marks fewer than 100 timed calls, and ⚠ marks an instance whose submitted KAT vectors are not reproduced by the submitted code."),
    );
    bullets.push(
        Inline::new()
            .strong("Sizes")
            .text(" use a separate catalog, not timing-record buffer sizes. ")
            .code("≈")
            .text(" marks a nominal variable-length signature; other variable signatures use their maximum."),
    );
    let kex = Inline::new()
        .strong("KEX bandwidth")
        .text(" counts protocol messages plus required public keys once. KEM public-key size is listed separately from ciphertext size. Certificates and transport framing are excluded");
    bullets.push(if v.is_reference() {
        kex.text("; see the ")
            .link("size audit", "EXTERNAL_SIZE_AUDIT.md")
            .text(" for discrepancies and AFS-KEX's API mapping.")
    } else {
        kex.text(".")
    });
    if has_baseline {
        bullets.push(
            Inline::new()
                .strong("Hash rows")
                .text(" show three message sizes. Parentheses give cycles relative to the same-width, same-length ICCS ")
                .code("pseudoXOF")
                .text(" (")
                .link("helper timings", "#iccs-hash-helpers")
                .text("), not a production replacement estimate."),
        );
    } else {
        bullets.push(
            Inline::new()
                .strong("Hash rows")
                .text(" give three message sizes; the parenthesized 32-byte value is relative to an exact-shape measured ")
                .code("pseudoXOF")
                .text(" call, not an estimate of a production replacement."),
        );
    }
    bullets.push(
        Inline::new()
            .strong("Scope:")
            .text(" reference sets are shown. When both ICCS and non-ICCS backends were measured, the non-ICCS one stays on the candidate report; notes flag caveats."),
    );
    d.list(bullets);

    let candidates = v.candidates();
    for cat in &PK_CATEGORIES {
        let rows = pk_rows(v, cat, &candidates)?;
        if rows.is_empty() {
            continue;
        }
        d.heading(2, cat.title);
        let mut head: Vec<String> = ["id", "algorithm", "instance performance report"]
            .map(String::from)
            .to_vec();
        head.extend(cat.ops.iter().map(|op| format!("{op} cycles (sym %)")));
        head.extend(cat.size_heads.iter().map(|h| h.to_string()));
        head.push("notes".into());
        let mut t = Table::new(head);
        t.rows = rows;
        d.table(t);
    }

    let hash_cands: Vec<&String> = candidates
        .iter()
        .filter(|c| v.category(c) == "hash")
        .collect();
    let mut hash_rows = Vec::new();
    for cand in &hash_cands {
        let algorithm = v.algorithm(cand)?;
        for label in v.labels(cand) {
            if !is_reference(v, cand, &label) {
                continue;
            }
            hash_rows.push(hash_row(v, cand, &label, &algorithm, has_baseline));
        }
    }
    if !hash_rows.is_empty() {
        if has_baseline {
            iccs_section(v, &mut d);
        }
        d.heading(2, Kind::Hash.title());
        let mut t = if has_baseline {
            Table::new([
                "id",
                "algorithm",
                "instance performance report",
                "32 B cycles (× pseudoXOF)",
                "1 KiB cycles (× pseudoXOF)",
                "64 KiB cycles (× pseudoXOF)",
                "notes",
            ])
        } else {
            Table::new([
                "id",
                "algorithm",
                "instance performance report",
                "32 B cycles (vs pseudoXOF)",
                "1 KiB cycles",
                "64 KiB cycles",
                "notes",
            ])
        };
        t.rows = hash_rows;
        d.table(t);
    }
    super::resources::summary_section(v, &mut d);
    Ok(d)
}

/// The hash shares of an instance's profiled summary operations (those with a share).
fn placeholder_shares(v: &View, cand: &str, label: &str, ops: &[&str]) -> Vec<f64> {
    ops.iter()
        .filter_map(|op| v.ds.profile(cand, label, op))
        .filter_map(|p| p.profile.hash_share)
        .collect()
}

/// Every profiled summary operation of the instance avoids the placeholder hashes.
fn zero_placeholder_row(v: &View, cand: &str, label: &str, ops: &[&str]) -> bool {
    let shares = placeholder_shares(v, cand, label, ops);
    !shares.is_empty() && shares.iter().all(|s| *s == 0.0)
}

/// Some measured reference instance of the candidate has a positive placeholder share.
fn candidate_has_iccs_backend(v: &View, cand: &str, ops: &[&str]) -> bool {
    v.labels(cand).iter().any(|label| {
        is_reference(v, cand, label)
            && placeholder_shares(v, cand, label, ops)
                .iter()
                .any(|s| *s > 0.0)
    })
}

fn pk_rows(v: &View, cat: &Category, candidates: &[String]) -> Result<Vec<Vec<Cell>>> {
    let mut rows = Vec::new();
    for cand in candidates.iter().filter(|c| v.category(c) == cat.prefix) {
        let algorithm = v.algorithm(cand)?;
        let iccs_only = v.cat.survey_row(cand).map(|s| s.verdict.as_str()) == Some("ICCS-only");
        let iccs_backend = candidate_has_iccs_backend(v, cand, cat.ops);
        for label in v.labels(cand) {
            if !is_reference(v, cand, &label) {
                continue;
            }
            // A non-ICCS backend stays on the candidate page when an ICCS-facing one exists;
            // ICCS-only candidates keep every row (some use the separately counted DRNG).
            let zero = zero_placeholder_row(v, cand, &label, cat.ops);
            if zero && !iccs_only && iccs_backend {
                continue;
            }
            let unavailable = zero && !iccs_backend;
            let mut row: Vec<Cell> = candidate_cells(v, cand, &algorithm).into();
            row.push(instance_cell(v, cand, &label));
            for op in cat.ops {
                let rec = record(v, cand, &label, op).map(|r| &r.record);
                let share = if unavailable {
                    Some("??%".to_string())
                } else {
                    v.ds.profile(cand, &label, op)
                        .and_then(|p| p.profile.hash_share)
                        .map(|s| format::pct(Some(s)))
                };
                row.push(Cell::num(
                    format::pk_cell(rec, share.as_deref()),
                    format::cell_key(rec),
                ));
            }
            row.extend(size_cells(v, cat.prefix, cand, &label)?);
            row.push(Inline::catalog(&notes(v, cand, &label, true)).into());
            rows.push(row);
        }
    }
    Ok(rows)
}

fn size_cells(v: &View, prefix: &str, cand: &str, label: &str) -> Result<Vec<Cell>> {
    let opt = |n: Option<u64>| n.map(|n| n.to_string()).unwrap_or_else(|| DASH.into());
    let num = |text: String, n: Option<u64>| Cell::num(text, n.map(|n| n as f64));
    // An instance that passed its KAT but was never timed (e.g. `--only` chose others) has
    // no sizes in our catalog: dashes, not an error. A timed one must have its row.
    let timed =
        v.ds.records
            .iter()
            .any(|r| r.record.candidate == cand && r.record.label == label);
    if !timed {
        let n = if prefix == "kex" { 1 } else { 2 };
        let missing = match prefix {
            "kex" => v.cat.kex_bandwidth(cand, label).is_err(),
            _ => v.cat.external_size(cand, label).is_err(),
        };
        if missing {
            return Ok(vec![Cell::new(DASH); n]);
        }
    }
    Ok(match prefix {
        "kex" => {
            let total = v.cat.kex_bandwidth(cand, label)?.total();
            vec![num(total.to_string(), Some(total))]
        }
        "sign" => {
            let e = v.cat.external_size(cand, label)?;
            let approx = if e.basis == "nominal-variable" {
                "≈"
            } else {
                ""
            };
            vec![
                num(e.pk.to_string(), Some(e.pk)),
                num(format!("{approx}{}", opt(e.sig)), e.sig),
            ]
        }
        _ => {
            let e = v.cat.external_size(cand, label)?;
            vec![num(e.pk.to_string(), Some(e.pk)), num(opt(e.ct), e.ct)]
        }
    })
}

fn helper_rank(func: &str) -> u32 {
    match func {
        "sm3hash" => 0,
        "pseudohash" => 1,
        "pseudoXOF" => 2,
        _ => 3,
    }
}

/// `pseudoXOF-256` → (`pseudoXOF`, 256).
fn split_helper(label: &str) -> (String, Option<u64>) {
    match label.rsplit_once('-') {
        Some((f, bits)) => (f.to_string(), bits.parse().ok()),
        None => (label.to_string(), None),
    }
}

/// Whether the dataset times the ICCS helpers directly (records under `iccs/`).
pub(crate) fn has_baseline(v: &View) -> bool {
    v.ds.records.iter().any(|r| r.record.candidate == ICCS)
}

/// Where the timed ICCS helpers came from, by the `algorithm` of their build entries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum HelperSource {
    /// The reference's own datasets: the official file, built by the reference harness.
    Reference,
    /// ngcc-perf with the official `api/auxfunc.c` (`--iccs-helpers`).
    Official,
    /// ngcc-perf with its own `csrc/iccs/auxfunc.c`.
    Embedded,
}

pub(crate) fn helper_source(v: &View) -> HelperSource {
    let algorithms: Vec<Option<String>> = v
        .labels(ICCS)
        .iter()
        .filter_map(|l| v.build_entry(ICCS, l))
        .map(|e| e.algorithm)
        .collect();
    if algorithms.iter().any(|a| a.as_deref() == Some(EMBEDDED)) {
        HelperSource::Embedded
    } else if algorithms.iter().any(Option::is_some) {
        HelperSource::Official
    } else {
        HelperSource::Reference
    }
}

fn iccs_section(v: &View, d: &mut Doc) {
    d.heading(2, "ICCS hash helpers");
    let from = match helper_source(v) {
        HelperSource::Embedded => Inline::new()
            .text("The ICCS placeholder functions as ngcc-perf implements them (")
            .code("csrc/iccs/auxfunc.c")
            .text("; the official ")
            .code("api/auxfunc.c")
            .text(" was not given to this campaign: same outputs, but faster, so the ratios below are not those to the official helpers)"),
        _ => Inline::new()
            .text("The ICCS placeholder functions from ")
            .code("api/auxfunc.c"),
    };
    d.para(
        from
            .text(", built with the reference flags and timed as hash instances at the guide's S1–S8 message lengths (mean cycles per call). ")
            .code("pseudohash")
            .text(" exists only with 512-, 768- and 1024-bit output; ")
            .code("pseudoXOF")
            .text(" is given at every digest width of a hash candidate."),
    );
    let mut head: Vec<String> = vec!["ICCS helper".into(), "output bits".into()];
    head.extend(GUIDE_SIZES.iter().map(|s| format::size_text(*s)));
    head.push(format!("cycles/byte ({})", format::size_text(65536)));
    let mut t = Table::new(head);
    let mut labels = v.labels(ICCS);
    labels.sort_by(|a, b| {
        let (fa, ba) = split_helper(a);
        let (fb, bb) = split_helper(b);
        helper_rank(&fa)
            .cmp(&helper_rank(&fb))
            .then_with(|| fa.cmp(&fb))
            .then_with(|| ba.cmp(&bb))
            .then_with(|| natural_cmp(a, b))
    });
    for label in labels {
        let (func, bits) = split_helper(&label);
        let mut name = code(&func);
        if let Some(kat) = v.kat_status(ICCS, &label).filter(|k| *k != KatStatus::Pass) {
            name = name.text(format!(" ⚠ self-test {kat}"));
        }
        let mut row: Vec<Cell> = vec![
            name.into(),
            Cell::num(
                bits.map(|b| b.to_string()).unwrap_or_else(|| DASH.into()),
                bits.map(|b| b as f64),
            ),
        ];
        let rec = |size: u64| record(v, ICCS, &label, &format!("hash_{size}")).map(|r| &r.record);
        for size in GUIDE_SIZES {
            row.push(Cell::num(
                format::cell(rec(size)),
                format::cell_key(rec(size)),
            ));
        }
        let cpb = rec(65536)
            .filter(|r| r.status == RecordStatus::Complete)
            .and_then(|r| r.stats.as_ref())
            .and_then(|s| s.mean_cycles)
            .map(|c| c / 65536.0);
        row.push(Cell::num(
            cpb.map(format::cycles_per_byte)
                .unwrap_or_else(|| DASH.into()),
            cpb,
        ));
        t.row(row);
    }
    d.table(t);
}

fn digest_bits(v: &View, cand: &str, label: &str) -> Option<u64> {
    v.instance_records(cand, label)
        .iter()
        .filter_map(|r| r.record.stats.as_ref())
        .find_map(|s| s.sizes.get("digest_bytes").and_then(Value::as_u64))
        .map(|b| 8 * b)
}

fn hash_row(v: &View, cand: &str, label: &str, algorithm: &str, has_baseline: bool) -> Vec<Cell> {
    let mut row: Vec<Cell> = candidate_cells(v, cand, algorithm).into();
    row.push(instance_cell(v, cand, label));
    let bits = digest_bits(v, cand, label);
    for size in HASH_SIZES {
        let rec = record(v, cand, label, &format!("hash_{size}")).map(|r| &r.record);
        let cycles = rec
            .and_then(|r| r.stats.as_ref())
            .and_then(|s| s.mean_cycles);
        let base = if has_baseline {
            bits.and_then(|b| {
                record(v, ICCS, &format!("pseudoXOF-{b}"), &format!("hash_{size}"))
                    .and_then(|r| r.record.stats.as_ref())
                    .and_then(|s| s.mean_cycles)
            })
        } else if size == 32 {
            bits.and_then(|b| profiled_pseudoxof_cycles(v, b))
        } else {
            None
        };
        let ratio = match (cycles, base) {
            (Some(c), Some(b)) if b > 0.0 => Some(c / b),
            _ => None,
        };
        let show = has_baseline || size == 32;
        row.push(Cell::num(
            format::hash_cell(rec, ratio, show),
            format::cell_key(rec),
        ));
    }
    row.push(Inline::catalog(&notes(v, cand, label, false)).into());
    row
}

/// Fallback without a baseline run (§5.7): the median, over every profiled call shape
/// (`pseudoXOF`, 256 input bits, this output width), of ticks per call converted to core
/// cycles with that profile's tick rate and the fixed clock.
fn profiled_pseudoxof_cycles(v: &View, out_bits: u64) -> Option<f64> {
    let core_hz = 1000.0
        * v.env
            .cpufreq_max_khz
            .text()
            .and_then(|k| k.parse::<f64>().ok())
            .unwrap_or(0.0);
    let mut costs = Vec::new();
    for p in &v.ds.profiles {
        let tick_hz = p
            .profile
            .meta
            .get("tick_hz")
            .and_then(|h| {
                h.as_str()
                    .and_then(|s| s.parse::<f64>().ok())
                    .or(h.as_f64())
            })
            .unwrap_or(0.0);
        let factor = if core_hz > 0.0 && tick_hz > 0.0 {
            core_hz / tick_hz
        } else {
            1.0
        };
        costs.extend(
            p.profile
                .calls
                .iter()
                .filter(|c| {
                    c.func == "pseudoXOF"
                        && c.calls > 0
                        && c.in_bits == 256
                        && c.out_bits == out_bits
                })
                .map(|c| c.ticks as f64 / c.calls as f64 * factor),
        );
    }
    crate::measure::stats::median(&costs)
}
