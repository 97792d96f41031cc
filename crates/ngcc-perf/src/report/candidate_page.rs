//! `<cand>/perf_<SYS>.md` (reference-harness.md §8.3): one page per candidate.

use super::doc::{Cell, Doc, Inline, Table, code};
use super::format::{self, DASH};
use super::model::{self, HARNESS_URL, View, is_avx2};
use crate::dataset::load::LoadedRecord;
use crate::dataset::schema::{
    EnvField, KatStatus, META_SIGN_FAILURES_RETRIED, Op, Record, RecordStatus,
};
use anyhow::Result;
use serde_json::Value;

/// Headings of the sections the site follows with a chart: written once, so the site matches
/// the section itself (by equality), never a piece of its wording.
pub const PERFORMANCE: &str = "4. Performance";
pub const OVERHEAD: &str = "6. Transmission and storage overhead";
pub const SYMMETRIC: &str = "Symmetric primitives";

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

pub fn render(v: &View, cand: &str) -> Result<Doc> {
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
    let mut d = Doc::new();

    d.heading(
        1,
        Inline::new()
            .text(format!("{cand} "))
            .foreign(algorithm)
            .text(format!(
                " — performance on {} (system {sys})",
                model::arch_label(v.arch())
            )),
    );
    let mut nav = Inline::new()
        .link(
            format!("Performance {sys}"),
            format!("../performance/summary_{sys}.md"),
        )
        .text(" › ")
        .code(cand)
        .text(" · ")
        .link("method", format!("../performance/method_{sys}.md"));
    if v.is_reference() {
        nav = nav
            .text(" · ")
            .link("NICCS page", download.page_url.clone());
    }
    d.para(nav);
    d.para(format!(
        "Independent measurement following the structure of the NICCS {} self-assessment guide, §3.5 (1)–(7). Not a submitter self-assessment.",
        model::guide_name(v.arch())
    ));

    // 1. Basic information
    d.heading(2, "1. Basic information");
    let kind = if is_hash {
        "cryptographic hash algorithm"
    } else {
        "public-key algorithm"
    };
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
    let mut sets = Inline::new().text("Parameter sets: ");
    for (i, l) in labels.iter().enumerate() {
        if i > 0 {
            sets = sets.text(", ");
        }
        sets = sets.code(l);
    }
    d.list(vec![
        format!("Category: {kind}; function: {}", function_of(&category)).into(),
        Inline::new().text("Algorithm: ").foreign(algorithm),
        format!("Implementation versions measured: {}", versions.join(", ")).into(),
        sets,
    ]);

    // 2. Assessment environment
    environment(v, records.iter().map(|r| &r.record), &mut d);

    // 3. KAT
    kat_section(v, cand, &labels, &mut d);

    // 4. Performance
    d.heading(2, PERFORMANCE);
    let with_spread = records.iter().any(|r| r.record.ngcc.is_some());
    if is_hash {
        d.table(hash_table(&records, with_spread));
    } else {
        d.table(pk_table(&records, with_spread));
    }
    if with_spread {
        d.para("Mean cycles are the counter's count per call (its unit: the counter row of section 2). Spread (CV) is the coefficient of variation of the per-trial means: their sample standard deviation divided by their mean; a few percent or less means the trials agree.");
    }

    super::accounting::section(&records, &mut d);

    // 5. Resources
    d.heading(2, "5. Resource consumption");
    d.para("Static memory is approximated by the library's loadable ELF segments; peak memory is the process high-water mark (VmHWM) including the benchmark driver and libc, so both are upper-bound proxies rather than isolated algorithm memory.");
    let mut res = Table::new([
        "instance",
        "operation",
        "static: ELF image (bytes)",
        "baseline RSS",
        "peak RSS",
    ]);
    for r in &records {
        let Some(stats) = r.record.stats.as_ref().filter(|s| s.peak_rss_bytes > 0) else {
            continue;
        };
        let elf = v
            .build_entry(cand, &r.record.label)
            .and_then(|e| e.elf_load_bytes);
        res.row(vec![
            code(&r.record.label).into(),
            r.op_key().into(),
            Cell::num(
                elf.map(|b| b.to_string()).unwrap_or_else(|| DASH.into()),
                elf.map(|b| b as f64),
            ),
            Cell::num(
                format::rss_kib(stats.baseline_rss_bytes),
                stats.baseline_rss_bytes as f64,
            ),
            Cell::num(
                format::rss_kib(stats.peak_rss_bytes),
                stats.peak_rss_bytes as f64,
            ),
        ]);
    }
    d.table(res);
    super::resources::section(v, cand, &labels, &mut d);

    if !is_hash {
        sizes_section(v, cand, &labels, &mut d)?;
        symmetric_section(v, cand, &labels, &mut d);
        ct_section(v, cand, &mut d);
    }
    super::count_section::section(v, cand, &mut d);

    evidence_section(v, cand, &labels, &mut d);
    Ok(d)
}

/// §2 of the page; also the honest host/counter rows of our own datasets.
fn environment<'r>(v: &View, records: impl Iterator<Item = &'r Record>, d: &mut Doc) {
    let env = &v.env;
    let get = |f: &EnvField<String>| f.text().unwrap_or_else(|| DASH.into());
    d.heading(2, "2. Assessment environment");
    let mut t = Table::new(["item", "value"]);
    let mut row = |item: &str, value: Inline| t.row(vec![item.into(), value.into()]);
    row(
        "processor",
        format!(
            "{} (CPU {}, one core)",
            get(&env.cpu_model),
            env.cpu_number.text().unwrap_or_else(|| DASH.into())
        )
        .into(),
    );
    if let Some(machine) = env.machine.text().filter(|m| !m.is_empty()) {
        row("machine", machine.into());
    }
    row("clock", model::clock_text(env).into());
    let memory = env
        .memory_total_kib
        .json_u64()
        .map(format::mib_from_kib)
        .unwrap_or_else(|| DASH.into());
    row("memory", memory.into());
    row(
        "OS / kernel",
        format!("{} / {}", get(&env.os), get(&env.kernel)).into(),
    );
    row(
        "compiler / build tool",
        format!("{} / {}", get(&env.compiler), get(&env.cmake)).into(),
    );
    for (item, value) in v.honesty_rows(records) {
        row(item.label(), value);
    }
    let c = &v.ds.campaign;
    let time = |t: &Option<String>| {
        t.as_deref()
            .map(format::campaign_time)
            .unwrap_or_else(|| DASH.into())
    };
    row(
        "campaign start / end (UTC)",
        format!("{} / {}", time(&c.started_utc), time(&c.ended_utc)).into(),
    );
    d.table(t);
}

fn kat_section(v: &View, cand: &str, labels: &[String], d: &mut Doc) {
    d.heading(2, "3. Functional testing (KAT)");
    if v.is_reference() {
        d.para(
            Inline::new()
                .text(
                    "Each library was checked against the submitted KAT vectors (SHA-256 manifest ",
                )
                .code(format!("{cand}/kat.sha256"))
                .text(" in the harness) before timing."),
        );
    } else {
        d.para(
            Inline::new()
                .text("Each library's KAT output was checked before timing against the expected SHA-256 digests given with the candidate (its ")
                .code("kat.sha256")
                .text(" manifest, or ")
                .code("kat.sha256")
                .text(" in candidate.toml for NIST-API code). PASS means the output reproduced those digests; NOKAT means none were given."),
        );
    }
    let mut t = Table::new(["instance", "build flags", "KAT"]);
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
        t.row(vec![
            code(label).into(),
            entry.flags.to_string().into(),
            status.into(),
        ]);
    }
    d.table(t);
    for (i, (cause, measure)) in footnotes.iter().enumerate() {
        let extra = if *measure {
            " These instances are timed anyway; their output is not validated."
        } else {
            ""
        };
        d.para(
            Inline::new()
                .text(format!("[{}] ", i + 1))
                .then(Inline::catalog(cause))
                .text(extra),
        );
    }
    helpers_table(v, cand, labels, d);
}

/// Which ICCS helper files each library linked (ngcc-perf datasets record them; reference
/// datasets do not, so their pages are unchanged).
fn helpers_table(v: &View, cand: &str, labels: &[String], d: &mut Doc) {
    let entries: Vec<_> = labels
        .iter()
        .filter_map(|l| v.build_entry(cand, l))
        .filter(|e| !e.helpers.is_empty())
        .collect();
    if entries.is_empty() {
        return;
    }
    d.para(
        Inline::new()
            .text("ICCS helper files linked into each library: the package's own (")
            .code("package")
            .text("), the official ICCS API files (")
            .code("official")
            .text("), or ngcc-perf's bit-exact but faster reimplementation (")
            .code("embedded")
            .text(")."),
    );
    let mut t = Table::new(["instance", "file", "origin", "sha256"]);
    for e in &entries {
        for h in &e.helpers {
            t.row(vec![
                code(e.label.clone()).into(),
                h.name.clone().into(),
                h.origin.as_str().into(),
                code(format::digest_prefix(&h.sha256)).into(),
            ]);
        }
    }
    d.table(t);
}

fn n_text(r: &Record) -> String {
    let n = r.stats.as_ref().map(|s| s.measurements).unwrap_or(0);
    let mut text = format!("{n} ({} × {})", r.plan.trials, r.plan.iterations_per_trial);
    let retried: u64 = r
        .processes
        .iter()
        .filter_map(|p| p.meta_count(META_SIGN_FAILURES_RETRIED))
        .sum();
    if retried > 0 {
        text.push_str(&format!("; {retried} failed signing attempts retried"));
    }
    text
}

fn spread_cell(r: &Record) -> Cell {
    match r.ngcc.as_ref() {
        Some(x) => Cell::num(format!("{:.1}%", 100.0 * x.spread.cv), x.spread.cv),
        None => DASH.into(),
    }
}

fn n_cell(r: &Record) -> Cell {
    let n = r.stats.as_ref().map(|s| s.measurements as f64);
    Cell::num(n_text(r), n)
}

fn pk_table(records: &[&LoadedRecord], with_spread: bool) -> Table {
    let mut head = vec![
        "instance",
        "operation",
        "mean cycles",
        "mean time",
        "ops/s",
        "median trial",
        "n (trials × iters)",
    ];
    if with_spread {
        head.push("spread (CV)");
    }
    let mut t = Table::new(head);
    for r in records {
        let rec = &r.record;
        let mut row: Vec<Cell> = vec![code(&rec.label).into(), r.op_key().into()];
        match rec
            .stats
            .as_ref()
            .filter(|_| rec.status == RecordStatus::Complete)
        {
            Some(s) => {
                row.extend([
                    Cell::num(format::fmt_int(s.mean_cycles), s.mean_cycles),
                    Cell::num(format::fmt_time(Some(s.mean_seconds)), s.mean_seconds),
                    Cell::num(
                        format::ops_per_second(s.operations_per_second),
                        s.operations_per_second,
                    ),
                    Cell::num(
                        format::fmt_time(Some(s.median_trial_seconds)),
                        s.median_trial_seconds,
                    ),
                    n_cell(rec),
                ]);
                if with_spread {
                    row.push(spread_cell(rec));
                }
            }
            None => {
                row.push(super::doc::foreign(format::not_a_result(rec, true)).into());
                let gaps = if with_spread { 5 } else { 4 };
                row.extend((0..gaps).map(|_| Cell::gap()));
            }
        }
        t.row(row);
    }
    t
}

fn hash_table(records: &[&LoadedRecord], with_spread: bool) -> Table {
    let mut head = vec![
        "instance",
        "message",
        "mean cycles",
        "cycles/byte",
        "mean time",
        "MB/s",
        "n",
    ];
    if with_spread {
        head.push("spread (CV)");
    }
    let mut t = Table::new(head);
    for r in records {
        let rec = &r.record;
        let bytes = rec.input_bytes;
        let mut row: Vec<Cell> = vec![
            code(&rec.label).into(),
            Cell::num(format!("{bytes} B"), bytes as f64),
        ];
        match rec
            .stats
            .as_ref()
            .filter(|_| rec.status == RecordStatus::Complete)
        {
            Some(s) => {
                let cpb = s
                    .mean_cycles
                    .filter(|_| bytes > 0)
                    .map(|c| c / bytes as f64);
                let mb = s.throughput_mb_per_second.unwrap_or(0.0);
                row.extend([
                    Cell::num(format::fmt_int(s.mean_cycles), s.mean_cycles),
                    Cell::num(
                        cpb.map(format::cycles_per_byte)
                            .unwrap_or_else(|| DASH.into()),
                        cpb,
                    ),
                    Cell::num(format::fmt_time(Some(s.mean_seconds)), s.mean_seconds),
                    Cell::num(format::mb_per_second(mb), mb),
                    n_cell(rec),
                ]);
                if with_spread {
                    row.push(spread_cell(rec));
                }
            }
            None => {
                row.push(super::doc::foreign(format::not_a_result(rec, true)).into());
                let gaps = if with_spread { 5 } else { 4 };
                row.extend((0..gaps).map(|_| Cell::gap()));
            }
        }
        t.row(row);
    }
    t
}

fn size_of(v: &View, cand: &str, label: &str, key: &str) -> Option<u64> {
    let recs = v.instance_records(cand, label);
    recs.iter()
        .filter_map(|r| r.record.stats.as_ref())
        .find_map(|s| s.sizes.get(key).and_then(Value::as_u64))
}

fn size_cell(v: Option<u64>) -> Cell {
    Cell::num(
        v.map(|n| n.to_string()).unwrap_or_else(|| DASH.into()),
        v.map(|n| n as f64),
    )
}

fn sizes_section(v: &View, cand: &str, labels: &[String], d: &mut Doc) -> Result<()> {
    // Only instances that were timed have sizes to show.
    let timed: Vec<&String> = labels
        .iter()
        .filter(|l| !v.instance_records(cand, l).is_empty())
        .collect();
    d.heading(2, OVERHEAD);
    match v.category(cand).as_str() {
        "kex" => kex_sizes(v, cand, &timed, d)?,
        cat => {
            let mut text = Inline::new()
                .text("External public-key, ciphertext and signature sizes follow the curated ")
                .code("performance/external_sizes.csv")
                .text(" catalog; secret-key and shared-secret lengths remain API figures.");
            if v.is_reference() {
                text = text
                    .text(" See ")
                    .link("the size audit", "../performance/EXTERNAL_SIZE_AUDIT.md")
                    .text(" for disagreements.");
            }
            d.para(text);
            let mut t = if cat == "sign" {
                Table::new(["instance", "public key", "secret key", "signature"])
            } else {
                Table::new([
                    "instance",
                    "public key",
                    "secret key",
                    "ciphertext",
                    "shared secret",
                ])
            };
            let mut nominal = false;
            for label in &timed {
                let ext = v.cat.external_size(cand, label)?;
                let sk = size_cell(size_of(v, cand, label, "sk_bytes"));
                let pk = size_cell(Some(ext.pk));
                if cat == "sign" {
                    let qualifier = match ext.basis.as_str() {
                        "nominal-variable" => {
                            nominal = true;
                            " ≈ nominal"
                        }
                        "maximum-variable" => " (maximum)",
                        _ => "",
                    };
                    let sig = Cell::num(
                        format!(
                            "{}{qualifier}",
                            ext.sig
                                .map(|n| n.to_string())
                                .unwrap_or_else(|| DASH.into())
                        ),
                        ext.sig.map(|n| n as f64),
                    );
                    t.row(vec![code(*label).into(), pk, sk, sig]);
                } else {
                    let ss = size_cell(size_of(v, cand, label, "ss_bytes"));
                    t.row(vec![code(*label).into(), pk, sk, size_cell(ext.ct), ss]);
                }
            }
            d.table(t);
            if nominal {
                d.para("Signatures marked ≈ nominal vary in length; the figure is the specification's representative size, not a maximum.");
            }
        }
    }
    Ok(())
}

fn kex_sizes(v: &View, cand: &str, labels: &[&String], d: &mut Doc) -> Result<()> {
    d.para(
        Inline::new()
            .text("Protocol-message sizes are the raw API message lengths of one honest run; bandwidth adds each required long-term public key once, as curated in ")
            .code("performance/kex_bandwidth.csv")
            .text(" (certificates, identities and framing excluded). Secret-key and shared-secret lengths are API figures."),
    );
    match cand {
        "kex-02" => d.para("AFS-KEX pass 4 sends nothing, but the API leaves its length at the buffer capacity, so the raw fourth message is a phantom; the catalog counts the protocol's real messages."),
        "kex-01" | "kex-06" => d.para("Only the responder has a long-term public key in this protocol (public key A = 0)."),
        "kex-08" => d.para("This is a non-interactive exchange: no protocol messages, only both public keys."),
        _ => {}
    }
    let mut t = Table::new([
        "instance",
        "passes",
        "messages (bytes; raw API)",
        "protocol-message bytes",
        "public key A / B",
        "bandwidth (bytes)",
        "long-term sk (API cap)",
        "shared secret",
    ]);
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
        let passes = size_cell(
            kex.and_then(|k| k.get("kex_passes"))
                .and_then(Value::as_u64),
        );
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
        t.row(vec![
            code(*label).into(),
            passes,
            messages.into(),
            size_cell(Some(bw.messages)),
            format!("{} / {}", bw.pk_a, bw.pk_b).into(),
            size_cell(Some(bw.total())),
            get("sk_bytes"),
            size_cell(ss),
        ]);
    }
    d.table(t);
    Ok(())
}

fn symmetric_section(v: &View, cand: &str, labels: &[String], d: &mut Doc) {
    d.heading(2, SYMMETRIC);
    let survey = Inline::new()
        .link("Survey", "../performance/symmetric-survey.md")
        .text(" verdict: ");
    d.para(match v.cat.survey_row(cand) {
        Some(s) if !s.notes.is_empty() => survey
            .strong(s.verdict.as_str())
            .text(" — ")
            .then(Inline::catalog(&s.notes)),
        Some(s) => survey.strong(s.verdict.as_str()),
        None => survey.strong("not surveyed"),
    });
    // NIST-API candidates (ngcc-perf runs) hash with Keccak/SHA-2/AES and draw randombytes.
    let nist = labels.iter().any(|l| {
        v.build_entry(cand, l)
            .is_some_and(|e| e.api.as_deref() == Some("nist"))
    });
    let mut t = if nist {
        d.para("Share of each operation spent in the hash functions (FIPS 202, SHA-2, AES) and in randombytes (measured in the same run with link-time wrappers on a relink of the timed objects):");
        Table::new([
            "instance",
            "operation",
            "Keccak/SHA-2/AES",
            "randombytes",
            "calls per operation",
        ])
    } else {
        d.para("Share of each operation spent in the ICCS placeholder hash functions and in the ICCS DRNG (reference build, measured in the same run with link-time wrappers):");
        Table::new([
            "instance",
            "operation",
            "pseudohash/XOF/sm3",
            "DRNG",
            "calls per operation",
        ])
    };
    for label in labels {
        for p in v.instance_profiles(cand, label) {
            let prof = &p.profile;
            let measured = prof.total.as_ref().is_some_and(|t| t.ticks > 0);
            let drng = measured.then(|| model::rng_share(prof));
            let hash = prof.hash_share.filter(|_| measured);
            t.row(vec![
                code(label).into(),
                p.op_key().into(),
                Cell::num(format::pct(hash), hash),
                Cell::num(
                    drng.map(|s| format::pct(Some(s)))
                        .unwrap_or_else(|| DASH.into()),
                    drng,
                ),
                model::calls_per_op(prof).into(),
            ]);
        }
    }
    d.table(t);
}

/// Ours only: reference datasets have no `ct/` (their pages stay byte-exact).
fn ct_section(v: &View, cand: &str, d: &mut Doc) {
    use crate::dataset::schema::ProcessStatus;
    let results: Vec<_> = v.ds.ct_of(cand).collect();
    if results.is_empty() || v.ds.campaign.tool.is_none() {
        return;
    }
    d.heading(2, "Constant-time evidence");
    d.para("Secret-taint run: valgrind memcheck on a -g build with the same flags, the secrets marked undefined (the secret key for dec and sign, the randomness for every operation); a site is a source line where a secret decided a conditional jump (branch) or a memory address (index). Sites on public sk data appear only once the ranges of sk the manifest declares public (ct_sk_public) are marked secret too. dudect: fixed-vs-random inputs interleaved at random on the timed library, Welch's t on raw, cropped and second-order timings. For dec and sign the secret key is fixed and the classes differ in a public input (fixed or random ciphertext, message): max abs(t) above 10 is a leak, from 4.5 suspicious, below no_leak_found. For keygen, enc and exchange the classes differ in the seed of the operation's randomness (the same seed before every call, or a fresh one): above 10 is seed_dependent, from 4.5 maybe_seed_dependent, below no_seed_dependence_found. seed_dependent means the running time depends on the seed, e.g. through rejection sampling of public values (ML-KEM's matrix from the public seed); it does not say that a secret key or message leaks, and it is not a leak verdict: whether the dependence reveals a secret is a question for the taint sites above. A search tool, not a proof: no site means no secret branch or index on the paths these inputs took. A library whose bytes hold a valgrind client request (the fixed instruction sequence of valgrind.h) can unmark its own secrets: its taint result is shown as forged.");
    let mut t = Table::new([
        "instance",
        "operation",
        "secret sites",
        "sites on public sk data",
        "dudect max abs(t)",
        "verdict",
        "timings",
    ]);
    let mut sites = Table::new([
        "instance",
        "operation",
        "site",
        "kind",
        "function",
        "reports",
    ]);
    for r in &results {
        let c = &r.ct;
        let (secret, public) = match &c.taint {
            // The library can tell memcheck its secrets are defined: its count is no evidence.
            Some(tn) if tn.forged => (
                Cell::new(format!(
                    "forged: {} valgrind client request(s) in the library",
                    tn.client_requests.as_ref().map_or(0, |r| r.found)
                )),
                Cell::new(DASH),
            ),
            Some(tn) if tn.status == ProcessStatus::Complete => {
                let p = tn.sites.iter().filter(|s| s.public_sk_data).count();
                (
                    Cell::num(
                        (tn.sites.len() - p).to_string(),
                        (tn.sites.len() - p) as f64,
                    ),
                    Cell::num(p.to_string(), p as f64),
                )
            }
            Some(tn) => (Cell::new(tn.status.as_str()), Cell::new(DASH)),
            None => (Cell::new(DASH), Cell::new(DASH)),
        };
        let (max_t, verdict, n) = match &c.dudect {
            Some(dd) if dd.status == ProcessStatus::Complete => (
                Cell::num(format::t_stat(dd.max_abs_t), dd.max_abs_t),
                Cell::new(dd.verdict.as_str()),
                Cell::num(dd.measurements.to_string(), dd.measurements as f64),
            ),
            Some(dd) => (
                Cell::new(dd.status.as_str()),
                Cell::new(DASH),
                Cell::new(DASH),
            ),
            None => (Cell::new(DASH), Cell::new(DASH), Cell::new(DASH)),
        };
        t.row(vec![
            code(&c.label).into(),
            c.operation.name().into(),
            secret,
            public,
            max_t,
            verdict,
            n,
        ]);
        for s in c.taint.iter().flat_map(|tn| &tn.sites) {
            let func = match &s.via {
                Some(via) => format!("{} (in {via})", s.function),
                None => s.function.clone(),
            };
            let kind = if s.public_sk_data {
                format!("{} (public sk data)", s.kind)
            } else {
                s.kind.to_string()
            };
            sites.row(vec![
                code(&c.label).into(),
                c.operation.name().into(),
                code(format!("{}:{}", s.file, s.line)).into(),
                kind.into(),
                code(func).into(),
                Cell::num(s.count.to_string(), s.count as f64),
            ]);
        }
    }
    d.table(t);
    if results
        .iter()
        .any(|r| r.ct.taint.as_ref().is_some_and(|t| !t.sites.is_empty()))
    {
        d.para("Sites:");
        d.table(sites);
    }
}

fn evidence_section(v: &View, cand: &str, labels: &[String], d: &mut Doc) {
    d.heading(2, "7. Raw evidence index");
    let ours = v.ds.campaign.tool.clone();
    match &ours {
        None => d.para(
            Inline::new()
                .text("Paths are relative to ")
                .code(format!("performance/data/{}/", v.sys))
                .text(" in the ")
                .link("harness", HARNESS_URL)
                .text("; each JSON file records its commands, environment and trials."),
        ),
        Some(_) => d.para(format!("Paths are relative to the published dataset of system {}; each JSON file records its commands, environment and trials.", v.sys)),
    }
    let mut t = Table::new(["instance", "item", "file"]);
    for label in labels {
        if let Some(e) = v.build_entry(cand, label)
            && let Some(log) = &e.kat_log
        {
            let digest = e
                .kat_log_sha256
                .as_deref()
                .map(format::digest_prefix)
                .unwrap_or_else(|| DASH.into());
            t.row(vec![
                code(label).into(),
                Inline::new()
                    .text("KAT log (sha256 ")
                    .code(digest)
                    .text(")")
                    .into(),
                code(log).into(),
            ]);
        }
        let mut recs = v.instance_records(cand, label);
        recs.sort_by_key(|r| r.op_key());
        for r in recs {
            t.row(vec![
                code(label).into(),
                format!("timing {}", r.op_key()).into(),
                code(&r.path).into(),
            ]);
        }
        let mut profs = v.instance_profiles(cand, label);
        profs.sort_by_key(|p| p.op_key());
        for p in profs {
            t.row(vec![
                code(label).into(),
                format!("hash profile {}", p.op_key()).into(),
                code(&p.path).into(),
            ]);
        }
        for c in v.ds.ct_of(cand).filter(|c| c.ct.label == *label) {
            t.row(vec![
                code(label).into(),
                format!("constant-time evidence {}", c.ct.operation.name()).into(),
                code(&c.path).into(),
            ]);
        }
    }
    d.table(t);
    match ours {
        None => d.para(
            Inline::new()
                .text("Scripts: ")
                .code("performance/campaign.py")
                .text(", ")
                .code("performance/ngcc_perf.c")
                .text(", ")
                .code("performance/hashprof/")
                .text(" in the ")
                .link("harness", HARNESS_URL)
                .text("."),
        ),
        Some(tool) => d.para(
            Inline::new()
                .text(format!("Produced by {tool}: "))
                .code("ngcc-perf campaign")
                .text(" measured, ")
                .code("ngcc-perf publish")
                .text(" published and ")
                .code("ngcc-perf report")
                .text(" rendered this page; ")
                .code("ngcc-perf validate")
                .text(" recomputes every figure from these files."),
        ),
    }
}
