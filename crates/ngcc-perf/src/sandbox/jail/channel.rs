//! The worker's result channel (fd 3) as the orchestrator reads it. Candidate code shares the
//! worker's address space, so whatever arrives here is data to check: exactly one JSON
//! object carrying the job's nonce and a status the job kind may report (a failure the
//! worker admits, or `ok`/`complete` meaning "now judge my files and trials" — never a
//! verdict such as PASS), plus any number of `#crash`/`#exit` notes. Anything else (two
//! results, garbage, a line without the nonce) is "unexpected output on the result channel".

use serde_json::Value;

pub const UNEXPECTED: &str = "unexpected output on the result channel";

/// The field every result line carries.
pub const NONCE_FIELD: &str = "nonce";
/// The field of a result that says what sandbox the worker had; the orchestrator replaces
/// it with what the keeper reported.
pub const SANDBOX_FIELD: &str = "sandbox";

#[derive(Debug, Default, PartialEq)]
pub struct Parsed {
    /// The result object (nonce removed), when the channel was well-formed.
    pub result: Option<serde_json::Map<String, Value>>,
    /// The text after the first `#crash ` or `#exit ` tag.
    pub crash: Option<String>,
    /// Why the channel was rejected.
    pub unexpected: Option<String>,
}

/// Splits the channel into notes and the one result. `admits` says whether a result object
/// (nonce removed) is one this job may report (`sandbox::Job::admits`).
pub fn parse(raw: &[u8], nonce: &str, admits: &dyn Fn(&Value) -> bool) -> Parsed {
    let text = String::from_utf8_lossy(raw);
    let mut out = Parsed::default();
    let bad = |why: String, out: &mut Parsed| {
        out.unexpected.get_or_insert(why);
    };
    for line in text.split('\n') {
        if line.trim().is_empty() {
            continue;
        }
        if let Some(rest) = line
            .strip_prefix("#crash ")
            .or_else(|| line.strip_prefix("#exit "))
        {
            out.crash.get_or_insert_with(|| rest.to_string());
            continue;
        }
        let Ok(Value::Object(mut obj)) = serde_json::from_str::<Value>(line) else {
            bad(format!("{UNEXPECTED} (not a result line)"), &mut out);
            continue;
        };
        if obj
            .remove(NONCE_FIELD)
            .and_then(|v| v.as_str().map(str::to_string))
            .as_deref()
            != Some(nonce)
        {
            bad(
                format!("{UNEXPECTED} (a result without this job's nonce)"),
                &mut out,
            );
            continue;
        }
        let obj = Value::Object(obj);
        if !admits(&obj) {
            let mut text: String = obj.to_string().chars().take(80).collect();
            if text.chars().count() == 80 {
                text.push_str("...");
            }
            bad(
                format!("{UNEXPECTED} (a result this job may not report: {text})"),
                &mut out,
            );
            continue;
        }
        let Value::Object(obj) = obj else {
            continue;
        };
        if out.result.is_some() {
            bad(format!("{UNEXPECTED} (more than one result)"), &mut out);
            continue;
        }
        out.result = Some(obj);
    }
    if out.unexpected.is_some() {
        out.result = None;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const N: &str = "abc";

    /// A job that may report `ok` or `CRYPTOFAIL`.
    fn ok(v: &Value) -> bool {
        ["ok", "CRYPTOFAIL"]
            .map(Value::from)
            .iter()
            .any(|s| v.get("status") == Some(s))
    }
    const OK: &dyn Fn(&Value) -> bool = &ok;

    #[test]
    fn one_result_with_the_nonce_is_accepted() {
        let p = parse(
            b"{\"nonce\":\"abc\",\"status\":\"ok\",\"files\":[]}\n",
            N,
            OK,
        );
        let r = p.result.unwrap();
        assert_eq!(r.get("status").unwrap(), "ok");
        assert!(r.get("nonce").is_none());
        assert_eq!(p.unexpected, None);
    }

    #[test]
    fn forged_extra_or_foreign_lines_are_rejected() {
        let real = "{\"nonce\":\"abc\",\"status\":\"ok\"}";
        for (raw, why) in [
            (format!("{{\"status\":\"PASS\"}}\n{real}\n"), "nonce"),
            (format!("{real}\n{real}\n"), "more than one"),
            (format!("garbage\n{real}\n"), "not a result"),
            (
                "{\"nonce\":\"abc\",\"status\":\"PASS\"}\n".to_string(),
                "may not report",
            ),
            (format!("#sandbox all fine\n{real}\n"), "not a result"),
        ] {
            let p = parse(raw.as_bytes(), N, OK);
            assert!(p.result.is_none(), "{raw}");
            let u = p.unexpected.unwrap();
            assert!(u.starts_with(UNEXPECTED) && u.contains(why), "{raw}: {u}");
        }
    }

    #[test]
    fn crash_notes_are_kept() {
        let p = parse(b"\n#crash signal=11 stage=keygen\n", N, OK);
        assert_eq!(p.crash.as_deref(), Some("signal=11 stage=keygen"));
        assert!(p.result.is_none() && p.unexpected.is_none());
    }
}
