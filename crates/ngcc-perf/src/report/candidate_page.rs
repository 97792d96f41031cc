//! `<cand>/perf_<SYS>.md` (reference-harness.md §8.3): one page per candidate.

use super::format::{self, DASH};
use super::model::{self, HARNESS_URL, View, is_avx2};
use crate::dataset::load::LoadedRecord;
use crate::dataset::schema::{EnvField, KatStatus, Op, Record, RecordStatus};
use anyhow::Result;
use serde_json::Value;

pub fn path(cand: &str, sys: &str) -> String {
    format!("{cand}/perf_{sys}.md")
}

fn function_of(category: &str) -> &'static str {
    match category {
        "kem" => "key encapsulation",
        "sign" => "digital signature",
        "kex" => "key exchange",
        "hash" => "hash",
        _ => "unknown",
    }
}

pub fn render(v: &View, cand: &str) -> Result<String> {
    let sys = v.sys;
    let download = v.cat.download(cand)?;
    let algorithm = &download.algorithm;
    let category = v.category(cand);
    let is_hash = category == "hash";
    let labels = v.labels(cand);
    let records: Vec<&LoadedRecord> = labels
        .iter()
        .flat_map(|l| v.instance_records(cand, l))
        .collect();
    let mut out: Vec<String> = Vec::new();

    out.push(format!(
        "# {cand} {algorithm} — performance on {} (system {sys})",
        model::arch_label(v.arch())
    ));
    out.push(String::new());
    out.push(format!(
        "[Performance {sys}](../performance/summary_{sys}.md) › `{cand}` · [method](../performance/method_{sys}.md) · [NICCS page]({})",
        download.page_url
    ));
    out.push(String::new());
    out.push(format!(
        "Independent measurement following the structure of the NICCS {} self-assessment guide, §3.5 (1)–(7). Not a submitter self-assessment.",
        model::guide_name(v.arch())
    ));
    out.push(String::new());

    // 1. Basic information
    out.push("## 1. Basic information".into());
    out.push(String::new());
    let kind = if is_hash {
        "cryptographic hash algorithm"
    } else {
        "public-key algorithm"
    };
    out.push(format!(
        "- Category: {kind}; function: {}",
        function_of(&category)
    ));
    out.push(format!("- Algorithm: {algorithm}"));
    let mut versions: Vec<&str> = labels
        .iter()
        .map(|l| {
            if is_avx2(l) {
                "optimized (AVX2)"
            } else {
                "reference"
            }
        })
        .collect();
    versions.sort();
    versions.dedup();
    out.push(format!(
        "- Implementation versions measured: {}",
        versions.join(", ")
    ));
    out.push(format!(
        "- Parameter sets: {}",
        labels
            .iter()
            .map(|l| format!("`{l}`"))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    out.push(String::new());

    // 2. Assessment environment
    environment(v, records.iter().map(|r| &r.record), &mut out);

    // 3. KAT
    kat_section(v, cand, &labels, &mut out);

    // 4. Performance
    out.push("## 4. Performance".into());
    out.push(String::new());
    let with_spread = records.iter().any(|r| r.record.ngcc.is_some());
    if is_hash {
        hash_table(&records, with_spread, &mut out);
    } else {
        pk_table(&records, with_spread, &mut out);
    }
    out.push(String::new());

    // 5. Resources
    out.push("## 5. Resource consumption".into());
    out.push(String::new());
    out.push("Static memory is approximated by the library's loadable ELF segments; peak memory is the process high-water mark (VmHWM) including the benchmark driver and libc, so both are upper-bound proxies rather than isolated algorithm memory.".into());
    out.push(String::new());
    out.push(
        "| instance | operation | static: ELF image (bytes) | baseline RSS | peak RSS |".into(),
    );
    out.push("|---|---|---|---|---|".into());
    for r in &records {
        let Some(stats) = r.record.stats.as_ref().filter(|s| s.peak_rss_bytes > 0) else {
            continue;
        };
        let elf = v
            .build_entry(cand, &r.record.label)
            .and_then(|e| e.elf_load_bytes)
            .map(|b| b.to_string())
            .unwrap_or_else(|| DASH.into());
        out.push(format!(
            "| `{}` | {} | {elf} | {} | {} |",
            r.record.label,
            r.op_key(),
            format::rss_kib(stats.baseline_rss_bytes),
            format::rss_kib(stats.peak_rss_bytes)
        ));
    }
    out.push(String::new());

    if !is_hash {
        sizes_section(v, cand, &labels, &mut out)?;
        symmetric_section(v, cand, &labels, &mut out);
    }

    evidence_section(v, cand, &labels, &mut out);
    Ok(out.join("\n") + "\n")
}

/// §2 of the page; also the honest host/counter rows of our own datasets.
fn environment<'r>(v: &View, records: impl Iterator<Item = &'r Record>, out: &mut Vec<String>) {
    let env = &v.env;
    let get = |f: &EnvField<String>| f.text().unwrap_or_else(|| DASH.into());
    out.push("## 2. Assessment environment".into());
    out.push(String::new());
    out.push("| item | value |".into());
    out.push("|---|---|".into());
    out.push(format!(
        "| processor | {} (CPU {}, one core) |",
        get(&env.cpu_model),
        env.cpu_number.text().unwrap_or_else(|| DASH.into())
    ));
    if let Some(machine) = env.machine.text().filter(|m| !m.is_empty()) {
        out.push(format!("| machine | {machine} |"));
    }
    out.push(format!("| clock | {} |", model::clock_text(env)));
    let memory = env
        .memory_total_kib
        .json_u64()
        .map(format::mib_from_kib)
        .unwrap_or_else(|| DASH.into());
    out.push(format!("| memory | {memory} |"));
    out.push(format!(
        "| OS / kernel | {} / {} |",
        get(&env.os),
        get(&env.kernel)
    ));
    out.push(format!(
        "| compiler / build tool | {} / {} |",
        get(&env.compiler),
        get(&env.cmake)
    ));
    for (item, value) in v.honesty_rows(records) {
        out.push(format!("| {item} | {value} |"));
    }
    let c = &v.ds.campaign;
    let time = |t: &Option<String>| {
        t.as_deref()
            .map(format::campaign_time)
            .unwrap_or_else(|| DASH.into())
    };
    out.push(format!(
        "| campaign start / end (UTC) | {} / {} |",
        time(&c.started_utc),
        time(&c.ended_utc)
    ));
    out.push(String::new());
}

fn kat_section(v: &View, cand: &str, labels: &[String], out: &mut Vec<String>) {
    out.push("## 3. Functional testing (KAT)".into());
    out.push(String::new());
    out.push(format!("Each library was checked against the submitted KAT vectors (SHA-256 manifest `{cand}/kat.sha256` in the harness) before timing."));
    out.push(String::new());
    out.push("| instance | build flags | KAT |".into());
    out.push("|---|---|---|".into());
    let mut footnotes: Vec<(String, bool)> = Vec::new();
    for label in labels {
        let Some(entry) = v.build_entry(cand, label) else {
            continue;
        };
        let mut status = entry.kat.to_string();
        let issue = v.cat.kat_issue(cand, label).filter(|k| {
            // A timeout note does not apply where this instance's KAT passed.
            !(k.cause.starts_with("KAT TIMEOUT") && entry.kat == KatStatus::Pass)
        });
        if let Some(k) = issue {
            let measure = k.action == "measure";
            let n = match footnotes.iter().position(|(c, _)| *c == k.cause) {
                Some(i) => i + 1,
                None => {
                    footnotes.push((k.cause.clone(), measure));
                    footnotes.len()
                }
            };
            status.push_str(&format!(" [{n}]"));
            if k.action == "exclude" {
                status.push_str(" (not timed)");
            }
        }
        out.push(format!("| `{label}` | {} | {status} |", entry.flags));
    }
    out.push(String::new());
    for (i, (cause, measure)) in footnotes.iter().enumerate() {
        let extra = if *measure {
            " These instances are timed anyway; their output is not validated."
        } else {
            ""
        };
        out.push(format!("[{}] {cause}{extra}", i + 1));
        out.push(String::new());
    }
    helpers_table(v, cand, labels, out);
}

/// Which ICCS helper files each library linked (ngcc-perf datasets record them; reference
/// datasets do not, so their pages are unchanged).
fn helpers_table(v: &View, cand: &str, labels: &[String], out: &mut Vec<String>) {
    let entries: Vec<_> = labels
        .iter()
        .filter_map(|l| v.build_entry(cand, l))
        .filter(|e| !e.helpers.is_empty())
        .collect();
    if entries.is_empty() {
        return;
    }
    out.push("ICCS helper files linked into each library: the package's own (`package`), the official ICCS API files (`official`), or ngcc-perf's bit-exact but faster reimplementation (`embedded`).".into());
    out.push(String::new());
    out.push("| instance | file | origin | sha256 |".into());
    out.push("|---|---|---|---|".into());
    for e in &entries {
        for h in &e.helpers {
            out.push(format!(
                "| `{}` | {} | {} | `{}` |",
                e.label,
                h.name,
                h.origin.as_str(),
                format::digest_prefix(&h.sha256)
            ));
        }
    }
    out.push(String::new());
}

fn n_text(r: &Record) -> String {
    let n = r.stats.as_ref().map(|s| s.measurements).unwrap_or(0);
    let mut text = format!("{n} ({} × {})", r.plan.trials, r.plan.iterations_per_trial);
    let retried: u64 = r
        .processes
        .iter()
        .filter_map(|p| p.meta.get("sign_failures_retried"))
        .filter_map(|v| match v {
            Value::String(s) => s.parse::<u64>().ok(),
            Value::Number(n) => n.as_u64(),
            _ => None,
        })
        .sum();
    if retried > 0 {
        text.push_str(&format!("; {retried} failed signing attempts retried"));
    }
    text
}

fn spread_text(r: &Record) -> String {
    r.ngcc
        .as_ref()
        .map(|x| format!("{:.1}%", 100.0 * x.spread.cv))
        .unwrap_or_else(|| DASH.into())
}

fn pk_table(records: &[&LoadedRecord], with_spread: bool, out: &mut Vec<String>) {
    let (extra_head, extra_rule) = if with_spread {
        (" spread (CV) |", "---|")
    } else {
        ("", "")
    };
    out.push(format!("| instance | operation | mean cycles | mean time | ops/s | median trial | n (trials × iters) |{extra_head}"));
    out.push(format!("|---|---|---|---|---|---|---|{extra_rule}"));
    for r in records {
        let rec = &r.record;
        let extra = if with_spread {
            format!(" {} |", spread_text(rec))
        } else {
            String::new()
        };
        match rec
            .stats
            .as_ref()
            .filter(|_| rec.status == RecordStatus::Complete)
        {
            Some(s) => out.push(format!(
                "| `{}` | {} | {} | {} | {} | {} | {} |{extra}",
                rec.label,
                r.op_key(),
                format::fmt_int(s.mean_cycles),
                format::fmt_time(Some(s.mean_seconds)),
                format::ops_per_second(s.operations_per_second),
                format::fmt_time(Some(s.median_trial_seconds)),
                n_text(rec)
            )),
            None => out.push(format!(
                "| `{}` | {} | failed | | | | |{}",
                rec.label,
                r.op_key(),
                if with_spread { " |" } else { "" }
            )),
        }
    }
}

fn hash_table(records: &[&LoadedRecord], with_spread: bool, out: &mut Vec<String>) {
    let (extra_head, extra_rule) = if with_spread {
        (" spread (CV) |", "---|")
    } else {
        ("", "")
    };
    out.push(format!(
        "| instance | message | mean cycles | cycles/byte | mean time | MB/s | n |{extra_head}"
    ));
    out.push(format!("|---|---|---|---|---|---|---|{extra_rule}"));
    for r in records {
        let rec = &r.record;
        let bytes = rec.input_bytes;
        let extra = if with_spread {
            format!(" {} |", spread_text(rec))
        } else {
            String::new()
        };
        match rec
            .stats
            .as_ref()
            .filter(|_| rec.status == RecordStatus::Complete)
        {
            Some(s) => {
                let cpb = match s.mean_cycles {
                    Some(c) if bytes > 0 => format::cycles_per_byte(c / bytes as f64),
                    _ => DASH.into(),
                };
                out.push(format!(
                    "| `{}` | {bytes} B | {} | {cpb} | {} | {} | {} |{extra}",
                    rec.label,
                    format::fmt_int(s.mean_cycles),
                    format::fmt_time(Some(s.mean_seconds)),
                    format::mb_per_second(s.throughput_mb_per_second.unwrap_or(0.0)),
                    n_text(rec)
                ));
            }
            None => out.push(format!(
                "| `{}` | {bytes} B | failed | | | | |{}",
                rec.label,
                if with_spread { " |" } else { "" }
            )),
        }
    }
}

fn size_of(v: &View, cand: &str, label: &str, key: &str) -> Option<u64> {
    let recs = v.instance_records(cand, label);
    recs.iter()
        .filter_map(|r| r.record.stats.as_ref())
        .find_map(|s| s.sizes.get(key).and_then(Value::as_u64))
}

fn size_cell(v: Option<u64>) -> String {
    v.map(|n| n.to_string()).unwrap_or_else(|| DASH.into())
}

fn sizes_section(v: &View, cand: &str, labels: &[String], out: &mut Vec<String>) -> Result<()> {
    // Only instances that were timed have sizes to show.
    let timed: Vec<&String> = labels
        .iter()
        .filter(|l| !v.instance_records(cand, l).is_empty())
        .collect();
    out.push("## 6. Transmission and storage overhead".into());
    out.push(String::new());
    match v.category(cand).as_str() {
        "kex" => kex_sizes(v, cand, &timed, out)?,
        cat => {
            out.push("External public-key, ciphertext and signature sizes follow the curated `performance/external_sizes.csv` catalog; secret-key and shared-secret lengths remain API figures. See [the size audit](../performance/EXTERNAL_SIZE_AUDIT.md) for disagreements.".into());
            out.push(String::new());
            if cat == "sign" {
                out.push("| instance | public key | secret key | signature |".into());
                out.push("|---|---|---|---|".into());
            } else {
                out.push(
                    "| instance | public key | secret key | ciphertext | shared secret |".into(),
                );
                out.push("|---|---|---|---|---|".into());
            }
            let mut nominal = false;
            for label in &timed {
                let ext = v.cat.external_size(cand, label)?;
                let sk = size_cell(size_of(v, cand, label, "sk_bytes"));
                if cat == "sign" {
                    let qualifier = match ext.basis.as_str() {
                        "nominal-variable" => {
                            nominal = true;
                            " ≈ nominal"
                        }
                        "maximum-variable" => " (maximum)",
                        _ => "",
                    };
                    out.push(format!(
                        "| `{label}` | {} | {sk} | {}{qualifier} |",
                        ext.pk,
                        size_cell(ext.sig)
                    ));
                } else {
                    let ss = size_cell(size_of(v, cand, label, "ss_bytes"));
                    out.push(format!(
                        "| `{label}` | {} | {sk} | {} | {ss} |",
                        ext.pk,
                        size_cell(ext.ct)
                    ));
                }
            }
            if nominal {
                out.push(String::new());
                out.push("Signatures marked ≈ nominal vary in length; the figure is the specification's representative size, not a maximum.".into());
            }
        }
    }
    out.push(String::new());
    Ok(())
}

fn kex_sizes(v: &View, cand: &str, labels: &[&String], out: &mut Vec<String>) -> Result<()> {
    out.push("Protocol-message sizes are the raw API message lengths of one honest run; bandwidth adds each required long-term public key once, as curated in `performance/kex_bandwidth.csv` (certificates, identities and framing excluded). Secret-key and shared-secret lengths are API figures.".into());
    out.push(String::new());
    match cand {
        "kex-02" => {
            out.push("AFS-KEX pass 4 sends nothing, but the API leaves its length at the buffer capacity, so the raw fourth message is a phantom; the catalog counts the protocol's real messages.".into());
            out.push(String::new());
        }
        "kex-01" | "kex-06" => {
            out.push("Only the responder has a long-term public key in this protocol (public key A = 0).".into());
            out.push(String::new());
        }
        "kex-08" => {
            out.push(
                "This is a non-interactive exchange: no protocol messages, only both public keys."
                    .into(),
            );
            out.push(String::new());
        }
        _ => {}
    }
    out.push("| instance | passes | messages (bytes; raw API) | protocol-message bytes | public key A / B | bandwidth (bytes) | long-term sk (API cap) | shared secret |".into());
    out.push("|---|---|---|---|---|---|---|---|".into());
    for label in labels {
        let bw = v.cat.kex_bandwidth(cand, label)?;
        let recs = v.instance_records(cand, label);
        let stats = recs
            .iter()
            .find(|r| r.record.operation == Op::Exchange)
            .or(recs.first())
            .and_then(|r| r.record.stats.as_ref());
        let sizes = stats.map(|s| &s.sizes);
        let kex = stats.map(|s| &s.kex);
        let passes = kex
            .and_then(|k| k.get("kex_passes"))
            .and_then(Value::as_u64)
            .map(|n| n.to_string())
            .unwrap_or_else(|| DASH.into());
        let mut msgs: Vec<(u64, u64)> = sizes
            .map(|s| {
                s.iter()
                    .filter_map(|(k, v)| {
                        let n = k
                            .strip_prefix("msg")?
                            .strip_suffix("_bytes")?
                            .parse()
                            .ok()?;
                        Some((n, v.as_u64()?))
                    })
                    .collect()
            })
            .unwrap_or_default();
        msgs.sort();
        let messages = if msgs.is_empty() {
            DASH.to_string()
        } else {
            msgs.iter()
                .map(|(_, b)| b.to_string())
                .collect::<Vec<_>>()
                .join(" / ")
        };
        let get = |k: &str| size_cell(sizes.and_then(|s| s.get(k)).and_then(Value::as_u64));
        let ss = sizes
            .and_then(|s| s.get("ss_actual_bytes").or_else(|| s.get("ss_bytes")))
            .and_then(Value::as_u64);
        out.push(format!(
            "| `{label}` | {passes} | {messages} | {} | {} / {} | {} | {} | {} |",
            bw.messages,
            bw.pk_a,
            bw.pk_b,
            bw.total(),
            get("sk_bytes"),
            size_cell(ss)
        ));
    }
    Ok(())
}

fn symmetric_section(v: &View, cand: &str, labels: &[String], out: &mut Vec<String>) {
    out.push("## Symmetric primitives".into());
    out.push(String::new());
    let line = match v.cat.survey_row(cand) {
        Some(s) if !s.notes.is_empty() => format!(
            "[Survey](../performance/symmetric-survey.md) verdict: **{}** — {}",
            s.verdict, s.notes
        ),
        Some(s) => format!(
            "[Survey](../performance/symmetric-survey.md) verdict: **{}**",
            s.verdict
        ),
        None => "[Survey](../performance/symmetric-survey.md) verdict: **not surveyed**".into(),
    };
    out.push(line);
    out.push(String::new());
    // NIST-API candidates (ngcc-perf runs) hash with Keccak/SHA-2/AES and draw randombytes.
    let nist = labels.iter().any(|l| {
        v.build_entry(cand, l)
            .is_some_and(|e| e.api.as_deref() == Some("nist"))
    });
    if nist {
        out.push("Share of each operation spent in the hash functions (FIPS 202, SHA-2, AES) and in randombytes (measured in the same run with link-time wrappers on a relink of the timed objects):".into());
        out.push(String::new());
        out.push(
            "| instance | operation | Keccak/SHA-2/AES | randombytes | calls per operation |"
                .into(),
        );
    } else {
        out.push("Share of each operation spent in the ICCS placeholder hash functions and in the ICCS DRNG (reference build, measured in the same run with link-time wrappers):".into());
        out.push(String::new());
        out.push(
            "| instance | operation | pseudohash/XOF/sm3 | DRNG | calls per operation |".into(),
        );
    }
    out.push("|---|---|---|---|---|".into());
    for label in labels {
        for p in v.instance_profiles(cand, label) {
            let prof = &p.profile;
            let measured = prof.total.as_ref().is_some_and(|t| t.ticks > 0);
            let drng = if measured {
                format::pct(Some(model::rng_share(prof)))
            } else {
                DASH.into()
            };
            out.push(format!(
                "| `{label}` | {} | {} | {drng} | {} |",
                p.op_key(),
                format::pct(prof.hash_share.filter(|_| measured)),
                model::calls_per_op(prof)
            ));
        }
    }
    out.push(String::new());
}

fn evidence_section(v: &View, cand: &str, labels: &[String], out: &mut Vec<String>) {
    out.push("## 7. Raw evidence index".into());
    out.push(String::new());
    let ours = v.ds.campaign.tool.clone();
    match &ours {
        None => out.push(format!("Paths are relative to `performance/data/{}/` in the [harness]({HARNESS_URL}); each JSON file records its commands, environment and trials.", v.sys)),
        Some(_) => out.push(format!("Paths are relative to the published dataset of system {}; each JSON file records its commands, environment and trials.", v.sys)),
    }
    out.push(String::new());
    out.push("| instance | item | file |".into());
    out.push("|---|---|---|".into());
    for label in labels {
        if let Some(e) = v.build_entry(cand, label)
            && let Some(log) = &e.kat_log
        {
            let digest = e
                .kat_log_sha256
                .as_deref()
                .map(format::digest_prefix)
                .unwrap_or_else(|| DASH.into());
            out.push(format!(
                "| `{label}` | KAT log (sha256 `{digest}`) | `{log}` |"
            ));
        }
        let mut recs = v.instance_records(cand, label);
        recs.sort_by_key(|r| r.op_key());
        for r in recs {
            out.push(format!(
                "| `{label}` | timing {} | `{}` |",
                r.op_key(),
                r.path
            ));
        }
        let mut profs = v.instance_profiles(cand, label);
        profs.sort_by_key(|p| p.op_key());
        for p in profs {
            out.push(format!(
                "| `{label}` | hash profile {} | `{}` |",
                p.op_key(),
                p.path
            ));
        }
    }
    out.push(String::new());
    match ours {
        None => out.push(format!("Scripts: `performance/campaign.py`, `performance/ngcc_perf.c`, `performance/hashprof/` in the [harness]({HARNESS_URL}).")),
        Some(tool) => out.push(format!("Produced by {tool}: `ngcc-perf campaign` measured, `ngcc-perf publish` published and `ngcc-perf report` rendered this page; `ngcc-perf validate` recomputes every figure from these files.")),
    }
    out.push(String::new());
}
