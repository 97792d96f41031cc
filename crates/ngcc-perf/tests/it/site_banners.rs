//! The site's banners, read as a reader (or a program) would: every banner is one sentence
//! "System ID: <subject> …." about exactly one subject — the host, how candidate code was
//! contained, or the cycle counter — and none mixes two (a containment sentence printed under
//! the counter's label read "cycle counter is candidate code ran jailed: …").

use std::path::Path;

/// What a banner can be about, each with words only a banner on that subject uses.
const SUBJECTS: &[(&str, &[&str])] = &[
    ("host", &[]),
    ("candidate code", &["jailed", "uncontained", "namespaces"]),
    ("cycle counter", &["cycle counter", "core cycles", "ticks"]),
];

/// (kind, text) of every banner of an HTML page, the text unescaped.
pub fn banners(html: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut rest = html;
    while let Some(i) = rest.find("<div class=\"banner ") {
        rest = &rest[i + "<div class=\"banner ".len()..];
        let kind = rest[..rest.find('"').unwrap()].to_string();
        let body = &rest[rest.find('>').unwrap() + 1..];
        let text = &body[..body.find("</div>").unwrap()];
        let text = text
            .replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&quot;", "\"")
            .replace("&#39;", "'")
            .replace("&amp;", "&");
        out.push((kind, text));
    }
    out
}

/// (system, subject) of one banner, or why it cannot be read.
pub fn parse(text: &str) -> Result<(String, &'static str), String> {
    let body = text
        .strip_prefix("System ")
        .ok_or_else(|| format!("does not start with `System `: {text}"))?;
    let (sys, sentence) = body
        .split_once(": ")
        .ok_or_else(|| format!("no `: ` after the system: {text}"))?;
    if sys.is_empty() || sys.contains(char::is_whitespace) {
        return Err(format!("system id {sys:?}: {text}"));
    }
    let Some(inner) = sentence.strip_suffix('.') else {
        return Err(format!("not one sentence ending with `.`: {text}"));
    };
    if inner.contains(". ") {
        return Err(format!("more than one sentence: {text}"));
    }
    let subject = SUBJECTS
        .iter()
        .find(|(s, _)| sentence.starts_with(s))
        .map(|(s, _)| *s)
        .ok_or_else(|| format!("about none of the known subjects: {text}"))?;
    // The host's banner lists its reasons, which may name the counter ("hardware cycle
    // counter not supported … falling back to tsc"); the other two keep to their subject.
    for (other, words) in SUBJECTS
        .iter()
        .filter(|(s, _)| *s != subject && subject != "host" && *s != "host")
    {
        if let Some(w) = words.iter().find(|w| sentence.contains(*w)) {
            return Err(format!(
                "a `{subject}` banner also speaks of {other} ({w:?}): {text}"
            ));
        }
    }
    Ok((sys.to_string(), subject))
}

/// Every banner of every page under `site` parses; the subjects found, sorted, deduplicated.
pub fn check_site(site: &Path) -> Vec<&'static str> {
    let mut subjects = Vec::new();
    for page in ngcc_perf::dataset::load::files_under(site, "")
        .into_iter()
        .filter(|p| p.ends_with(".html"))
    {
        let html = std::fs::read_to_string(site.join(&page)).unwrap();
        for (kind, text) in banners(&html) {
            let (_, subject) = parse(&text).unwrap_or_else(|e| panic!("{page}: {e}"));
            assert!(["info", "warn"].contains(&kind.as_str()), "{page}: {kind}");
            subjects.push(subject);
        }
    }
    subjects.sort();
    subjects.dedup();
    subjects
}

#[test]
fn banner_sentences_parse_and_keep_to_one_subject() {
    let ok = [
        (
            "System local_1: host not fixed: governor powersave; figures are indicative, not publishable.",
            "host",
        ),
        (
            "System local_1: candidate code ran jailed (user, pid, mount, net, ipc, uts namespaces; unprivileged uid; nproc limit; landlock abi 6; seccomp).",
            "candidate code",
        ),
        (
            "System local_1: cycle counter is TSC reference cycles at 2.6 GHz (not core cycles).",
            "cycle counter",
        ),
    ];
    for (text, subject) in ok {
        assert_eq!(parse(text), Ok(("local_1".to_string(), subject)));
    }
    // What the site printed before: the containment sentence under the counter's label.
    let mixed = "System local_1: cycle counter is candidate code ran jailed: user, pid, mount, net, ipc, uts namespaces; seccomp.";
    assert!(
        parse(mixed)
            .unwrap_err()
            .contains("also speaks of candidate code")
    );
    assert!(parse("System a: host not fixed. Figures are indicative.").is_err());
    let html = "<div class=\"banner info\" role=\"note\">System x: cycle counter is TSC reference cycles (not core cycles).</div>\n";
    assert_eq!(banners(html).len(), 1);
}
