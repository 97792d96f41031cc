//! The KAT log (reference-harness.md §6.2): metadata, candidate output, timing, the files
//! written and their digests, and a last line `RESULT <cand> <label> <STATUS> [detail]`.

use crate::child::protocol::Meta;
use crate::dataset::quarantine::looks_like_log_line;
use crate::util::text;
use std::fmt::Write as _;

pub struct LogInput<'a> {
    pub library: &'a str,
    pub cand: &'a str,
    pub label: &'a str,
    pub kind: &'a str,
    pub meta: Option<&'a Meta>,
    pub candidate_output: &'a str,
    pub timing: &'a [(String, f64)],
    pub records: u32,
    /// (path relative to the run, bytes, digest line) per file written.
    pub files: &'a [(String, u64, String)],
    /// Lines shown before the RESULT line (e.g. hash files skipped by --quick).
    pub notes: &'a [String],
    pub sandbox: &'a str,
    pub status: &'a str,
    pub detail: Option<&'a str>,
}

fn size_names(kind: &str) -> &'static [&'static str] {
    match kind {
        "kem" => &["pk_len", "sk_len", "ct_len", "ss_len"],
        "sig" => &["pk_len", "sk_len", "sn_len"],
        "kex" => &[
            "passes",
            "pk_len",
            "sk_len",
            "sta_len",
            "stb_len",
            "ss_len",
            "total_msg_len",
        ],
        "hash" => &["digest_bits", "digest_len"],
        _ => &[],
    }
}

pub fn render(i: &LogInput) -> String {
    let mut s = String::new();
    let mut kv = |k: &str, v: &str| {
        let _ = writeln!(s, "{k:<11} = {v}");
    };
    kv("library", i.library);
    kv("id", i.cand);
    kv("type", i.kind);
    // The candidate's own text (names from its headers and manifest, its output) is
    // written with terminal controls escaped and names on one line (`util::text`).
    let one_line = |v: &str| text::terminal(v).replace('\n', " ");
    if let Some(m) = i.meta {
        kv("algorithm", &one_line(&m.algorithm));
        kv("instance", &one_line(&m.instance));
        kv("variant", &one_line(&m.variant));
        kv("source_dir", &m.source_dir);
        kv("compiler", &m.compiler);
        let flags: String = m.build_flags.chars().take(127).collect();
        kv("build_flags", &flags);
        for (name, v) in size_names(i.kind).iter().zip(&m.sizes) {
            kv(name, &v.to_string());
        }
    }
    if !i.sandbox.is_empty() {
        kv("sandbox", i.sandbox);
    }
    for l in text::terminal(i.candidate_output).lines() {
        // A candidate line never takes the form of one of ours: publish tells them apart by
        // form (`dataset::quarantine`).
        let indent = if looks_like_log_line(l) { " " } else { "" };
        let _ = writeln!(s, "{indent}{l}");
    }
    if !i.timing.is_empty() {
        let parts: Vec<String> = i
            .timing
            .iter()
            .map(|(op, ms)| format!("{op} {ms:.3} ms"))
            .collect();
        let _ = writeln!(
            s,
            "timing  {} (avg over {})",
            parts.join("  "),
            i.records.max(1)
        );
    }
    for (path, bytes, digest) in i.files {
        let _ = writeln!(s, "wrote  {path} ({bytes} bytes)");
        let _ = writeln!(s, "{digest}");
    }
    for note in i.notes {
        let _ = writeln!(s, "note   {note}");
    }
    let detail = i.detail.map(one_line).unwrap_or_default();
    let _ = writeln!(s, "RESULT {} {} {} {}", i.cand, i.label, i.status, detail);
    s
}
