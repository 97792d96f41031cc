//! Candidate text quarantined at publication (issue 33). A dataset must hold no path of the
//! machine that measured it; `publish` (and `merge`) refuse a file where such a path is in a
//! field the orchestrator writes. But a candidate's own text — what it printed, the compiler
//! quoting its sources, the names in its headers — is the candidate's, and one candidate
//! printing `/home/…` must not stop the publication of all the others (it did). So in those
//! fields a forbidden path is replaced by [`WITHHELD`] and the file says which fields were
//! touched; everything else is published as it is.
//!
//! Which text is the candidate's: in JSON files, the string values (at any depth) under the
//! keys of `schema::CANDIDATE_TEXT_FIELDS`; in KAT logs (`kat/…/*.log`, `kat::log`), the candidate's
//! output (every line between the header and our trailer), the `algorithm`, `instance` and
//! `variant` header values, and the RESULT line's detail. The trailer is recognised by our
//! own line forms from the end; the log writer keeps candidate lines from taking those forms
//! (`kat::log` escapes them), so a candidate cannot dress its text up as ours.

use serde_json::Value;

/// What replaces a forbidden path in a candidate's text.
pub const WITHHELD: &str = "[path withheld]";
use super::schema::{CANDIDATE_TEXT_FIELDS as CANDIDATE_KEYS, QUARANTINED_FIELD};

/// `text` with every path that starts with one of `forbidden` (up to the next blank, quote
/// or bracket) replaced by [`WITHHELD`]; `None` when there is none.
pub fn withhold_paths(text: &str, forbidden: &[&str]) -> Option<String> {
    if !forbidden.iter().any(|f| text.contains(f)) {
        return None;
    }
    let ends = |c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '`' | ')' | ']' | '>' | ',');
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some((i, _)) = forbidden
        .iter()
        .filter_map(|f| rest.find(f).map(|i| (i, f)))
        .min_by_key(|(i, _)| *i)
    {
        out.push_str(&rest[..i]);
        out.push_str(WITHHELD);
        let tail = &rest[i..];
        let len = tail.find(ends).unwrap_or(tail.len());
        rest = &tail[len..];
    }
    out.push_str(rest);
    Some(out)
}

/// Withholds forbidden paths in the candidate fields of a JSON value; returns the JSON paths
/// of the fields touched (`processes/0/stderr`).
fn walk(v: &mut Value, path: &str, candidate: bool, forbidden: &[&str], out: &mut Vec<String>) {
    match v {
        Value::String(s) if candidate => {
            if let Some(clean) = withhold_paths(s, forbidden) {
                *s = clean;
                out.push(path.to_string());
            }
        }
        Value::Object(map) => {
            for (k, x) in map.iter_mut() {
                let here = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}/{k}")
                };
                walk(
                    x,
                    &here,
                    candidate || CANDIDATE_KEYS.contains(&k.as_str()),
                    forbidden,
                    out,
                );
            }
        }
        Value::Array(items) => {
            for (i, x) in items.iter_mut().enumerate() {
                walk(x, &format!("{path}/{i}"), candidate, forbidden, out);
            }
        }
        _ => {}
    }
}

/// A JSON file with its candidate text quarantined: the new bytes (in our JSON layout, with
/// [`QUARANTINED_FIELD`] listing the fields) and the fields touched; `None` when nothing was
/// (the bytes are then published unchanged).
pub fn json(bytes: &[u8], forbidden: &[&str]) -> Option<(Vec<u8>, Vec<String>)> {
    let text = String::from_utf8_lossy(bytes);
    if !forbidden.iter().any(|f| text.contains(f)) {
        return None;
    }
    let mut v: Value = serde_json::from_str(&text).ok()?;
    let mut touched = Vec::new();
    walk(&mut v, "", false, forbidden, &mut touched);
    if touched.is_empty() {
        return None;
    }
    if let Value::Object(map) = &mut v {
        map.insert(
            QUARANTINED_FIELD.into(),
            Value::from(
                touched
                    .iter()
                    .map(|p| format!("{p}: {WITHHELD}"))
                    .collect::<Vec<_>>(),
            ),
        );
    }
    let out = crate::util::fsx::to_json_bytes(&v).ok()?;
    Some((out, touched))
}

/// Header keys of a KAT log whose values are the candidate's (its names).
const LOG_CANDIDATE_KEYS: &[&str] = &["algorithm", "instance", "variant"];
/// Header keys of a KAT log, in the order `kat::log` writes them.
const LOG_HEADER_KEYS: &[&str] = &[
    "library",
    "id",
    "type",
    "algorithm",
    "instance",
    "variant",
    "source_dir",
    "compiler",
    "build_flags",
    "pk_len",
    "sk_len",
    "ct_len",
    "ss_len",
    "sn_len",
    "passes",
    "sta_len",
    "stb_len",
    "total_msg_len",
    "digest_bits",
    "digest_len",
    "sandbox",
];

/// Whether `line` is one of the trailer lines `kat::log` writes after the candidate output.
fn is_log_trailer(line: &str) -> bool {
    ["timing  ", "wrote  ", "sha256 ", "note   ", "RESULT "]
        .iter()
        .any(|p| line.starts_with(p))
}

/// The header key of a `key = value` line of ours, if `line` is one.
fn log_header_key(line: &str) -> Option<&str> {
    let (key, _) = line.split_once(" = ")?;
    let key = key.trim_end();
    LOG_HEADER_KEYS.contains(&key).then_some(key)
}

/// Whether a line has the form of a header or trailer line of a KAT log: `kat::log` indents
/// such candidate lines by one space, so the log's structure stays ours.
pub fn looks_like_log_line(line: &str) -> bool {
    is_log_trailer(line) || log_header_key(line).is_some()
}

/// A KAT log with its candidate text quarantined (module doc); `None` when nothing was.
pub fn kat_log(text: &str, forbidden: &[&str]) -> Option<(String, Vec<String>)> {
    if !forbidden.iter().any(|f| text.contains(f)) {
        return None;
    }
    let lines: Vec<&str> = text.lines().collect();
    // Header: `key = value` lines of our keys, from the top.
    let mut head = 0;
    while head < lines.len() && log_header_key(lines[head]).is_some() {
        head += 1;
    }
    // Trailer: our line forms, from the end.
    let mut tail = lines.len();
    while tail > head && is_log_trailer(lines[tail - 1]) {
        tail -= 1;
    }
    let mut touched = Vec::new();
    let mut out: Vec<String> = Vec::with_capacity(lines.len());
    for (n, line) in lines.iter().enumerate() {
        let (candidate, what) = if n < head {
            let key = log_header_key(line).unwrap_or_default();
            (LOG_CANDIDATE_KEYS.contains(&key), key.to_string())
        } else if n < tail {
            (true, "candidate output".to_string())
        } else if let Some(rest) = line.strip_prefix("RESULT ") {
            // `RESULT <cand> <label> <STATUS> <detail>`: the detail may quote the candidate.
            let fields: Vec<&str> = rest.splitn(4, ' ').collect();
            if let (4, Some(clean)) = (fields.len(), withhold_paths(fields[3], forbidden)) {
                touched.push(format!("line {}: RESULT detail", n + 1));
                out.push(format!(
                    "RESULT {} {} {} {clean}",
                    fields[0], fields[1], fields[2]
                ));
                continue;
            }
            (false, String::new())
        } else {
            (false, String::new())
        };
        match withhold_paths(line, forbidden).filter(|_| candidate) {
            Some(clean) => {
                touched.push(format!("line {}: {what}", n + 1));
                out.push(clean);
            }
            None => out.push(line.to_string()),
        }
    }
    if touched.is_empty() {
        return None;
    }
    let mut text = out.join("\n");
    text.push('\n');
    Some((text, touched))
}

#[cfg(test)]
mod tests {
    use super::*;

    const FORBIDDEN: &[&str] = &["/home/", "/tmp/", "/root/", "/Users/"];

    #[test]
    fn paths_are_withheld_whole() {
        assert_eq!(
            withhold_paths("read /home/v/.ssh/id and '/root/x.txt', ok", FORBIDDEN).unwrap(),
            "read [path withheld] and '[path withheld]', ok"
        );
        assert_eq!(withhold_paths("nothing here", FORBIDDEN), None);
    }

    #[test]
    fn only_candidate_fields_of_json_are_touched() {
        let rec = br#"{"status": "complete", "library": "/home/me/lib.so", "processes": [{"stderr": "leak /home/victim/k\nok", "command": ["x"]}]}"#;
        let (bytes, touched) = json(rec, FORBIDDEN).unwrap();
        let text = String::from_utf8(bytes).unwrap();
        assert_eq!(touched, ["processes/0/stderr"]);
        assert!(
            text.contains("\"stderr\": \"leak [path withheld]\\nok\""),
            "{text}"
        );
        // The orchestrator's own field keeps its path: publish refuses on it.
        assert!(text.contains("/home/me/lib.so"));
        assert!(text.contains("\"quarantined\": [\n  \"processes/0/stderr: [path withheld]\"\n ]"));
        let build = br#"{"instances": {"c/x": {"build_error": "t.h:2: error: #error /home/v/s"}}, "skipped": {"c/x": "build failed: #error /home/v/s"}}"#;
        let (_, touched) = json(build, FORBIDDEN).unwrap();
        assert_eq!(touched, ["instances/c/x/build_error", "skipped/c/x"]);
    }

    #[test]
    fn kat_logs_quarantine_the_candidate_lines_only() {
        let log = "library     = lib/c/libx.so\nid          = c\ntype        = kem\nalgorithm   = A /home/a\ninstance    = X\nsource_dir  = /home/me/src\nsandbox     = jail\ntrust-leak /home/victim/k\n wrote  /tmp/fake (1 bytes)\ntiming  keygen 0.1 ms (avg over 1)\nwrote  katgen/c/x/nistkat.rsp (362 bytes)\nsha256 ab expected ab\nRESULT c x PASS \n";
        let (text, touched) = kat_log(log, FORBIDDEN).unwrap();
        assert_eq!(
            touched,
            [
                "line 4: algorithm",
                "line 8: candidate output",
                "line 9: candidate output"
            ]
        );
        assert!(text.contains("algorithm   = A [path withheld]\n"));
        // A candidate line in our form was indented by the log writer: still candidate text.
        assert!(
            text.contains("trust-leak [path withheld]\n wrote  [path withheld] (1 bytes)\ntiming")
        );
        assert!(looks_like_log_line("wrote  /tmp/x") && looks_like_log_line("compiler    = x"));
        assert!(!looks_like_log_line(" wrote  /tmp/x") && !looks_like_log_line("a = b"));
        // Our own header field keeps its path (publish refuses on it).
        assert!(text.contains("source_dir  = /home/me/src\n"));
        assert!(text.ends_with("RESULT c x PASS \n"));
    }
}
