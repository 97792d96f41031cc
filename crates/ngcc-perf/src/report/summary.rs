//! `performance/summary_<SYS>.md` (reference-harness.md §8.4): one table per category.
//! No reference rendering of this page exists in the fixture; it follows the spec text and
//! the wording of the reference's published summaries.

use super::doc::{Cell, Doc, Inline, Table, code};
use super::format::{self, DASH};
use super::model::{self, HARNESS_URL, View, is_avx2, natural_cmp};
use crate::dataset::load::LoadedRecord;
use crate::dataset::schema::KatStatus;
use anyhow::Result;
use serde_json::Value;

pub fn path(sys: &str) -> String {
    format!("performance/summary_{sys}.md")
}

/// Hash message sizes shown in the summary (S1, S4, S8).
const HASH_SIZES: [u64; 3] = [32, 1024, 65536];
/// All guide message sizes S1..S8.
pub const GUIDE_SIZES: [u64; 8] = [32, 128, 512, 1024, 4096, 8192, 16384, 65536];

struct Category {
    prefix: &'static str,
    title: &'static str,
    ops: &'static [&'static str],
    size_heads: &'static [&'static str],
}

const PK_CATEGORIES: [Category; 3] = [
    Category {
        prefix: "sign",
        title: "Digital signatures",
        ops: &["keygen", "sign", "verify"],
        size_heads: &["public key (B)", "signature (B)"],
    },
    Category {
        prefix: "kem",
        title: "Key encapsulation",
        ops: &["keygen", "enc", "dec"],
        size_heads: &["public key (B)", "ciphertext (B)"],
    },
    Category {
        prefix: "kex",
        title: "Key exchange",
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
fn candidate_cells(cand: &str, sys: &str, algorithm: &str) -> [Cell; 2] {
    [
        Inline::new()
            .link(cand, format!("../{cand}/perf_{sys}.md"))
            .into(),
        Inline::new()
            .text(format!("{algorithm} "))
            .link(
                "PDF",
                format!("{HARNESS_URL}/blob/main/{cand}/{cand}-spec.pdf"),
            )
            .into(),
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
        let what = match item.as_str() {
            "host state" => " Host state: ",
            _ => " Cycle counter: ",
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
    let has_baseline = v.ds.records.iter().any(|r| r.record.candidate == "iccs");
    let mut bullets: Vec<Inline> = Vec::new();
    bullets.push(
        Inline::new()
            .strong("Cycles")
            .text(format!(
                " are the mean of all timed calls in {} trials, normally with each trial in a fresh process.",
                number_word(trials)
            )),
    );
    bullets.push(
        Inline::new()
            .strong("Symmetric %")
            .text(", in parentheses after each public-key cycle count, is the measured share of an operation spent specifically in the ICCS placeholder functions (")
            .code("pseudohash")
            .text(", ")
            .code("pseudoXOF")
            .text(", ")
            .code("sm3hash")
            .text("). It excludes the ICCS DRNG and candidates' own hash primitives, so a low value does not necessarily mean little symmetric-cryptography work; see the ")
            .link("symmetric cryptography survey", "symmetric-survey.md")
            .text(". ")
            .code("(??%)")
            .text(" means that the candidate uses its own symmetric primitives and no ICCS-facing backend was measured."),
    );
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
            .text(" in bytes (public key, ciphertext, signature) are the external encodings curated in ")
            .code("performance/external_sizes.csv")
            .text(", independent of the implementation's buffer capacities and of the system; ")
            .code("≈")
            .text(" marks a specification's nominal size for a variable-length signature."),
    );
    bullets.push(
        Inline::new()
            .strong("Key-exchange bandwidth")
            .text(" is the total of all protocol messages plus each required long-term public key counted once (")
            .code("performance/kex_bandwidth.csv")
            .text("); certificates, identities and framing are excluded."),
    );
    if has_baseline {
        bullets.push(
            Inline::new()
                .strong("Hash rows")
                .text(" give three message sizes; each parenthesized value is the candidate's cycles divided by those of the ICCS ")
                .code("pseudoXOF")
                .text(" with the same output width and message length, timed the same way (")
                .link("ICCS helpers", "#iccs-hash-helpers")
                .text("). It is a relative speed, not an estimate of a production replacement."),
        );
    } else {
        bullets.push(
            Inline::new()
                .strong("Hash rows")
                .text(" give three message sizes. No ICCS baseline was timed in this run, so only the 32 B value is compared with ")
                .code("pseudoXOF")
                .text(": the median per-call cost of 32-byte ")
                .code("pseudoXOF")
                .text(" calls of the same output width seen in the hash profiles. It is a relative speed, not an estimate of a production replacement."),
        );
    }
    bullets.push(
        Inline::new()
            .strong("Scope:")
            .text(" the table keeps reference parameter sets, suppressing a non-ICCS backend only when an ICCS-facing backend of the same candidate was measured. Notes flag important caveats; additional measured variants remain on the linked instance reports."),
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
    if has_baseline {
        iccs_section(v, &mut d);
    }
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
        d.heading(2, "Hash functions");
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
    Ok(d)
}

fn pk_rows(v: &View, cat: &Category, candidates: &[String]) -> Result<Vec<Vec<Cell>>> {
    let mut rows = Vec::new();
    for cand in candidates.iter().filter(|c| v.category(c) == cat.prefix) {
        let algorithm = v.algorithm(cand)?;
        let verdict = v.cat.survey_row(cand).map(|s| s.verdict.as_str());
        let positive_elsewhere = v.candidate_has_positive_share(cand);
        for label in v.labels(cand) {
            if !is_reference(v, cand, &label) {
                continue;
            }
            let all_zero = cat
                .ops
                .iter()
                .filter_map(|op| v.ds.profile(cand, &label, op))
                .all(|p| p.profile.hash_share.unwrap_or(0.0) == 0.0);
            if all_zero && verdict != Some("ICCS-only") && positive_elsewhere {
                continue;
            }
            let mut row: Vec<Cell> = candidate_cells(cand, v.sys, &algorithm).into();
            row.push(instance_cell(v, cand, &label));
            for op in cat.ops {
                let rec = record(v, cand, &label, op).map(|r| &r.record);
                let share = v.share_string(cand, &label, op, cat.ops);
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

fn iccs_section(v: &View, d: &mut Doc) {
    d.heading(2, "ICCS hash helpers");
    d.para(
        Inline::new()
            .text("The ICCS placeholder functions from ")
            .code("api/auxfunc.c")
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
    let mut labels = v.labels("iccs");
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
        if let Some(kat) = v
            .kat_status("iccs", &label)
            .filter(|k| *k != KatStatus::Pass)
        {
            name = name.text(format!(" ⚠ self-test {kat}"));
        }
        let mut row: Vec<Cell> = vec![
            name.into(),
            Cell::num(
                bits.map(|b| b.to_string()).unwrap_or_else(|| DASH.into()),
                bits.map(|b| b as f64),
            ),
        ];
        let cycles = |size: u64| {
            record(v, "iccs", &label, &format!("hash_{size}"))
                .and_then(|r| r.record.stats.as_ref())
                .and_then(|s| s.mean_cycles)
        };
        for size in GUIDE_SIZES {
            let c = cycles(size);
            row.push(Cell::num(format::fmt_int(c), c));
        }
        let cpb = cycles(65536).map(|c| c / 65536.0);
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
    let mut row: Vec<Cell> = candidate_cells(cand, v.sys, algorithm).into();
    row.push(instance_cell(v, cand, label));
    let bits = digest_bits(v, cand, label);
    for size in HASH_SIZES {
        let rec = record(v, cand, label, &format!("hash_{size}")).map(|r| &r.record);
        let cycles = rec
            .and_then(|r| r.stats.as_ref())
            .and_then(|s| s.mean_cycles);
        let base = if has_baseline {
            bits.and_then(|b| {
                record(
                    v,
                    "iccs",
                    &format!("pseudoXOF-{b}"),
                    &format!("hash_{size}"),
                )
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

/// Fallback without a baseline run (§5.7): median over profiles of the per-call ticks of
/// 32-byte pseudoXOF calls with this output width, converted to core cycles.
fn profiled_pseudoxof_cycles(v: &View, out_bits: u64) -> Option<f64> {
    let mut per_profile = Vec::new();
    let mut tick_hz = None;
    for p in &v.ds.profiles {
        let (calls, ticks) = p
            .profile
            .calls
            .iter()
            .filter(|c| c.func == "pseudoXOF" && c.in_bits == 256 && c.out_bits == out_bits)
            .fold((0u64, 0u64), |(n, t), c| (n + c.calls, t + c.ticks));
        if calls > 0 {
            per_profile.push(ticks as f64 / calls as f64);
            tick_hz = tick_hz.or_else(|| {
                p.profile.meta.get("tick_hz").and_then(|h| {
                    h.as_str()
                        .and_then(|s| s.parse::<f64>().ok())
                        .or(h.as_f64())
                })
            });
        }
    }
    let ticks = crate::measure::stats::median(&per_profile)?;
    let khz = v
        .env
        .cpufreq_max_khz
        .text()
        .and_then(|k| k.parse::<f64>().ok());
    let factor = match (khz, tick_hz) {
        (Some(k), Some(h)) if h > 0.0 => k * 1000.0 / h,
        _ => 1.0,
    };
    Some(ticks * factor)
}
