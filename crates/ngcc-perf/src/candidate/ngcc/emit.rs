//! The commented candidate.toml and the `--dry-run` table of an import.

use super::{Found, Imported, Noted};
use std::fmt::Write as _;

/// A TOML string literal.
fn q(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

/// `# prefix line` per line of `text`. Package text (folder names, build output) may hold
/// control bytes, which TOML refuses in a comment: a folder named with an escape sequence
/// made the whole manifest unloadable. They are written out (`\x1b`).
fn comment_lines(out: &mut String, prefix: &str, text: &str) {
    for line in crate::util::text::terminal(text).lines() {
        let _ = writeln!(out, "# {prefix}{line}");
    }
}

/// `key = [ "a", # why … ]`, one value per line with its note.
fn list(out: &mut String, key: &str, items: &[Noted]) {
    if items.is_empty() {
        return;
    }
    let _ = writeln!(out, "{key} = [");
    for it in items {
        if it.note.is_empty() {
            let _ = writeln!(out, "    {},", q(&it.value));
        } else {
            let _ = writeln!(
                out,
                "    {},  # {}",
                q(&it.value),
                crate::util::text::terminal(&it.note.replace('\n', " "))
            );
        }
    }
    let _ = writeln!(out, "]");
}

/// The import's problems, then each instance's (prefixed with its label).
fn all_problems(imp: &Imported) -> Vec<String> {
    imp.problems
        .iter()
        .cloned()
        .chain(
            imp.found
                .iter()
                .flat_map(|f| f.problems.iter().map(move |p| format!("{}: {p}", f.label))),
        )
        .collect()
}

pub fn manifest(imp: &Imported) -> String {
    let mut out = String::new();
    for h in &imp.header {
        comment_lines(&mut out, "", h);
    }
    let all_problems = all_problems(imp);
    if all_problems.is_empty() {
        let _ = writeln!(out, "# Problems: none.");
    } else {
        let _ = writeln!(
            out,
            "# Problems ({}), check these before trusting the results:",
            all_problems.len()
        );
        for p in &all_problems {
            comment_lines(&mut out, "  - ", p);
        }
    }
    let c = &imp.cand;
    let _ = writeln!(out);
    let _ = writeln!(out, "id = {}", q(&c.id));
    let _ = writeln!(
        out,
        "algorithm = {}  # the tokens every instance label starts with",
        q(&c.algorithm)
    );
    let _ = writeln!(
        out,
        "kind = {}  # the instance headers' names ({}_AlgorithmInstance.h)",
        q(c.kind.as_str()),
        match c.kind {
            crate::candidate::Kind::Kem => "KEM",
            crate::candidate::Kind::Sig => "SIG",
            crate::candidate::Kind::Kex => "KEX",
            crate::candidate::Kind::Hash => "CryptHash",
        }
    );
    let _ = writeln!(out, "api = \"iccs\"");
    if let Some(p) = &c.package {
        let _ = writeln!(out, "package = {}  # ${{PACKAGE}} below", q(p));
    }
    if let Some(h) = &c.iccs_helpers {
        let _ = writeln!(out, "iccs_helpers = {}  # --iccs-helpers", q(h));
    }
    for f in &imp.found {
        instance(&mut out, f);
    }
    out
}

fn instance(out: &mut String, f: &Found) {
    let i = &f.instance;
    let _ = writeln!(out);
    let _ = writeln!(out, "# ---- {} ", f.label);
    comment_lines(out, "folder: ", &f.folder);
    comment_lines(out, "label: from ", &f.label_why);
    comment_lines(out, "build: ", &f.build);
    if !f.learned.is_empty() {
        comment_lines(out, "learned: ", &f.learned);
    }
    for d in &f.disagreements {
        comment_lines(out, "DISAGREES (build vs static reader): ", d);
    }
    comment_lines(out, "sources: ", &f.sources_why);
    comment_lines(out, "helpers: ", &f.helpers);
    for d in &f.dropped {
        comment_lines(out, "left out: ", d);
    }
    for o in &f.overrides {
        comment_lines(out, "override: ", o);
    }
    for p in &f.problems {
        comment_lines(out, "PROBLEM: ", p);
    }
    let _ = writeln!(out, "[[instances]]");
    let _ = writeln!(out, "label = {}", q(&i.label));
    let _ = writeln!(out, "dir = {}", q(&i.dir));
    // Overrides may have changed the lists: write the instance's values, with the notes
    // of the values the import found.
    let noted = |values: &[String], notes: &[Noted], why: &str| -> Vec<Noted> {
        values
            .iter()
            .map(|v| Noted {
                value: v.clone(),
                note: notes
                    .iter()
                    .find(|n| n.value == *v)
                    .map(|n| n.note.clone())
                    .unwrap_or_else(|| why.to_string()),
            })
            .collect()
    };
    list(
        out,
        "sources",
        &noted(&i.sources, f.sources.as_deref().unwrap_or(&[]), "override"),
    );
    list(
        out,
        "extra_sources",
        &noted(&i.extra_sources, &f.extra_sources, "override"),
    );
    list(out, "include", &noted(&i.include, &f.include, "override"));
    list(out, "defines", &noted(&i.defines, &f.defines, "override"));
    list(out, "cflags", &noted(&i.cflags, &f.cflags, "override"));
    list(out, "ldlibs", &noted(&i.ldlibs, &f.ldlibs, "override"));
    if let Some(h) = &i.header {
        let _ = writeln!(out, "header = {}", q(h));
    }
    if i.own_drng_ctx {
        let why = f.own_drng_ctx.as_deref().unwrap_or("override");
        let _ = writeln!(out, "own_drng_ctx = true  # {why}");
    }
    if let Some(b) = i.digest_bits {
        let _ = writeln!(out, "digest_bits = {b}  # override");
    }
    if let Some(n) = i.kat_count {
        let _ = writeln!(out, "kat_count = {n}  # override");
    }
}

/// The table `--dry-run` prints (and an import shows): one row per instance, then problems.
pub fn table(imp: &Imported) -> String {
    let head = [
        "label", "folder", "build", "learned", "sources", "defines", "helpers",
    ];
    // Folders without the part all share.
    let shared = common_prefix(imp.found.iter().map(|f| f.folder.as_str()));
    let rows: Vec<[String; 7]> = imp
        .found
        .iter()
        .map(|f| {
            let i = &f.instance;
            let sources = if i.sources.is_empty() {
                "*.c (default)".to_string()
            } else if i.sources.len() == 1 {
                i.sources[0].clone()
            } else {
                format!("{} files", i.sources.len() + i.extra_sources.len())
            };
            let mut defines = i.defines.join(" ");
            if i.own_drng_ctx {
                defines.push_str(" [own drng_algorithm]");
            }
            let build = f.build.split(" (").next().unwrap_or(&f.build).to_string();
            [
                i.label.clone(),
                if shared.is_empty() {
                    f.folder.clone()
                } else {
                    format!("…/{}", &f.folder[shared.len()..])
                },
                build,
                match (f.learned.as_str(), f.disagreements.len()) {
                    ("", _) => "-".to_string(),
                    (l, 0) => l.to_string(),
                    (l, n) => format!("{l} ({n} disagreement(s))"),
                },
                sources,
                if defines.trim().is_empty() {
                    "-".into()
                } else {
                    defines.trim().to_string()
                },
                f.helpers.clone(),
            ]
        })
        .collect();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "import ngcc: {} ({} {}, {} instances)",
        imp.cand.id,
        imp.cand.algorithm,
        imp.cand.kind.as_str(),
        imp.found.len()
    );
    for l in crate::util::columns(&head, &rows) {
        let _ = writeln!(out, "{l}");
    }
    let mut problems = all_problems(imp);
    for f in &imp.found {
        for d in &f.disagreements {
            problems.push(format!("{}: build vs static reader: {d}", f.label));
        }
    }
    if problems.is_empty() {
        let _ = writeln!(out, "problems: none");
    } else {
        let _ = writeln!(out, "problems ({}):", problems.len());
        for p in problems {
            let _ = writeln!(out, "  - {p}");
        }
    }
    out
}

/// The longest leading run of whole folders (ending in `/`) every path shares.
fn common_prefix<'a>(mut paths: impl Iterator<Item = &'a str>) -> String {
    let Some(first) = paths.next() else {
        return String::new();
    };
    let mut prefix = first.to_string();
    let mut n = 1;
    for p in paths {
        n += 1;
        while !p.starts_with(&prefix) {
            prefix.pop();
        }
    }
    // Keep at least the last folder of each path.
    match prefix.rfind('/') {
        Some(i) if n > 1 || prefix.len() < first.len() => prefix[..=i].to_string(),
        Some(i) => first[..=i].to_string(),
        None => String::new(),
    }
}
