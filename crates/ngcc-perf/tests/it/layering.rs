//! The module layering of ARCHITECTURE.md, checked on the sources: every `crate::…` (and
//! `super::…` that climbs to the crate root) in `src/` is an edge from the file's top-level
//! module to the one it names. An edge to a higher layer, a module missing from the table,
//! or a circle between modules fails the test, naming file:line.
//!
//! Run it alone with `cargo test -p ngcc-perf --test it layering -- --nocapture` (it prints
//! the graph).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Layers from the bottom up. A module may use modules of its own or a lower layer; within
/// a layer the edges must still not form a circle.
const LAYERS: &[&[&str]] = &[
    // Helpers: files, hashing, time, errors, progress.
    &["util"],
    // The JSON schema and dataset files; the journal of evidence hashes; embedded C;
    // locating third-party samples.
    &["dataset", "journal", "csrc", "samples"],
    // The run directory, the jail and spawning children, candidate manifests,
    // counters/plans/statistics.
    &["rundir", "sandbox", "candidate", "measure"],
    // What runs inside the sandboxed child.
    &["child"],
    // Libraries that know nothing of the campaign; `observe` runs a package's own build in
    // the jail to learn its instances.
    &["build", "kat", "observe"],
    &["profile"],
    // Pages, site, comparison: pure functions of a dataset.
    &["report"],
    // The campaign: settings, selection, host gate, one driver per phase.
    &["campaign"],
    // Commands built on all of the above.
    &["bench", "validate", "demo", "iccs", "slurm"],
    &["cli"],
];

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&module))
}

struct Edge {
    from: String,
    to: String,
    at: String,
}

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The module path of a source file: `campaign/phases/measure.rs` → campaign, phases,
/// measure; `campaign/mod.rs` → campaign.
fn module_path(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .iter()
        .map(|c| c.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().unwrap();
    let stem = last.trim_end_matches(".rs");
    if stem != "mod" {
        parts.push(stem.to_string());
    }
    parts
}

/// The text with comments, string and char literals blanked (newlines kept, so byte
/// offsets still give line numbers).
fn code_only(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let blank = |out: &mut String, s: &[u8]| {
        for &c in s {
            out.push(if c == b'\n' { '\n' } else { ' ' });
        }
    };
    let mut i = 0;
    while i < b.len() {
        let rest = &b[i..];
        if rest.starts_with(b"//") {
            let end = rest.iter().position(|&c| c == b'\n').unwrap_or(rest.len());
            blank(&mut out, &rest[..end]);
            i += end;
        } else if rest.starts_with(b"/*") {
            let end = text[i + 2..].find("*/").map_or(rest.len(), |e| e + 4);
            blank(&mut out, &rest[..end]);
            i += end;
        } else if rest.starts_with(b"r\"") || rest.starts_with(b"r#") {
            let hashes = rest[1..].iter().take_while(|&&c| c == b'#').count();
            if rest.get(1 + hashes) != Some(&b'"') {
                out.push('r');
                i += 1;
                continue;
            }
            let close = format!("\"{}", "#".repeat(hashes));
            let body = 2 + hashes;
            let end = text[i + body..]
                .find(&close)
                .map_or(rest.len(), |e| body + e + close.len());
            blank(&mut out, &rest[..end]);
            i += end;
        } else if rest[0] == b'"' {
            let mut j = 1;
            while j < rest.len() && rest[j] != b'"' {
                j += if rest[j] == b'\\' { 2 } else { 1 };
            }
            let end = (j + 1).min(rest.len());
            blank(&mut out, &rest[..end]);
            i += end;
        } else if rest[0] == b'\'' {
            // A char literal ('x', '\n', '\u{..}'), not a lifetime ('a).
            let end = if rest.get(1) == Some(&b'\\') {
                rest[2..].iter().position(|&c| c == b'\'').map(|p| p + 3)
            } else {
                let ch = text[i + 1..].chars().next().map_or(1, char::len_utf8);
                (rest.get(1 + ch) == Some(&b'\'')).then_some(ch + 2)
            };
            match end {
                Some(e) => {
                    blank(&mut out, &rest[..e]);
                    i += e;
                }
                None => {
                    out.push('\'');
                    i += 1;
                }
            }
        } else {
            let ch = text[i..].chars().next().unwrap();
            out.push(ch);
            i += ch.len_utf8();
        }
    }
    out
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

fn ident_at(s: &str, i: usize) -> &str {
    let b = s.as_bytes();
    let mut j = i;
    while j < b.len() && is_ident(b[j]) {
        j += 1;
    }
    &s[i..j]
}

/// The first names after `crate::` at `i`: one identifier, or each item of a `{…}` group.
fn names_at(code: &str, i: usize) -> Vec<String> {
    let rest = code[i..].trim_start();
    if let Some(group) = rest.strip_prefix('{') {
        let mut depth = 0;
        let mut items = vec![String::new()];
        for c in group.chars() {
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => break,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    items.push(String::new());
                    continue;
                }
                _ => {}
            }
            items.last_mut().unwrap().push(c);
        }
        items
            .iter()
            .map(|s| ident_at(s.trim(), 0).to_string())
            .filter(|n| !n.is_empty() && n != "self")
            .collect()
    } else {
        // `*` (a glob of the crate root) names nothing in particular.
        let name = ident_at(rest, 0);
        if name.is_empty() {
            Vec::new()
        } else {
            vec![name.to_string()]
        }
    }
}

fn edges() -> (Vec<Edge>, BTreeSet<String>) {
    let src = src_dir();
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut out = Vec::new();
    let mut modules = BTreeSet::new();
    for path in files {
        let rel = path.strip_prefix(&src).unwrap().to_path_buf();
        // The crate root and the binary declare modules; they belong to no layer.
        if rel == Path::new("lib.rs") || rel == Path::new("main.rs") {
            continue;
        }
        let module = module_path(&rel);
        let top = module[0].clone();
        modules.insert(top.clone());
        let code = code_only(&std::fs::read_to_string(&path).unwrap());
        let b = code.as_bytes();
        // Inline `mod x { … }` blocks (tests) nest the module one deeper: the brace depth
        // each one opened at.
        let (mut braces, mut inline, mut mod_pending) = (0usize, Vec::<usize>::new(), false);
        let mut i = 0;
        while i < b.len() {
            let starts_word = i == 0 || !is_ident(b[i - 1]) && b[i - 1] != b':';
            let rest = &code[i..];
            match b[i] {
                b'{' => {
                    braces += 1;
                    if mod_pending {
                        inline.push(braces);
                        mod_pending = false;
                    }
                }
                b'}' => {
                    if inline.last() == Some(&braces) {
                        inline.pop();
                    }
                    braces = braces.saturating_sub(1);
                }
                b';' => mod_pending = false,
                _ => {}
            }
            if starts_word && rest.starts_with("mod ") {
                mod_pending = true;
            }
            let target_at = if !starts_word {
                None
            } else if rest.starts_with("crate::") {
                Some(i + "crate::".len())
            } else if rest.starts_with("super::") {
                // Climb: each `super` leaves one module; reaching the root names a module.
                let mut depth = module.len() + inline.len();
                let mut j = i;
                while code[j..].starts_with("super::") {
                    depth = depth.saturating_sub(1);
                    j += "super::".len();
                }
                (depth == 0).then_some(j)
            } else {
                None
            };
            if let Some(at) = target_at {
                let line = code[..i].matches('\n').count() + 1;
                for name in names_at(&code, at) {
                    if name != top {
                        out.push(Edge {
                            from: top.clone(),
                            to: name,
                            at: format!("src/{}:{line}", rel.display()),
                        });
                    }
                }
            }
            i += 1;
        }
    }
    (out, modules)
}

/// Modules on a circle of the graph (`from` → `to` sets), if any.
fn circles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    // A node is on a circle when it can reach itself.
    let reach = |start: &str| {
        let mut seen = BTreeSet::new();
        let mut todo: Vec<&str> = graph
            .get(start)
            .into_iter()
            .flatten()
            .map(|s| s.as_str())
            .collect();
        while let Some(n) = todo.pop() {
            if seen.insert(n.to_string()) {
                todo.extend(graph.get(n).into_iter().flatten().map(|s| s.as_str()));
            }
        }
        seen
    };
    let mut found: Vec<Vec<String>> = Vec::new();
    for start in graph.keys() {
        let from_start = reach(start);
        if !from_start.contains(start) || found.iter().any(|c| c.contains(start)) {
            continue;
        }
        let circle: Vec<String> = graph
            .keys()
            .filter(|n| from_start.contains(*n) && reach(n).contains(start))
            .cloned()
            .collect();
        found.push(circle);
    }
    found
}

/// Every upward edge, unknown module and circle, one line each; and the graph.
fn check(
    edges: &[Edge],
    modules: &BTreeSet<String>,
) -> (Vec<String>, BTreeMap<String, BTreeSet<String>>) {
    let mut problems = Vec::new();
    for m in modules {
        if layer_of(m).is_none() {
            problems.push(format!(
                "src/{m}: top-level module `{m}` is not in the layer table of tests/it/layering.rs"
            ));
        }
    }
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for e in edges {
        match (layer_of(&e.from), layer_of(&e.to)) {
            (_, None) if !modules.contains(&e.to) => problems.push(format!(
                "{}: `crate::{}` is not a top-level module",
                e.at, e.to
            )),
            (Some(a), Some(b)) if b > a => problems.push(format!(
                "{}: `{}` (layer {a}) imports `{}` from the higher layer {b}",
                e.at, e.from, e.to
            )),
            _ => {}
        }
        graph
            .entry(e.from.clone())
            .or_default()
            .insert(e.to.clone());
    }
    for circle in circles(&graph) {
        let sites: Vec<&str> = edges
            .iter()
            .filter(|e| circle.contains(&e.from) && circle.contains(&e.to))
            .map(|e| e.at.as_str())
            .collect();
        problems.push(format!(
            "import circle between {}: {}",
            circle.join(", "),
            sites.join(", ")
        ));
    }
    (problems, graph)
}

#[test]
fn imports_only_run_downward_and_never_in_a_circle() {
    let (edges, modules) = edges();
    let (problems, graph) = check(&edges, &modules);
    for (i, layer) in LAYERS.iter().enumerate().rev() {
        println!("layer {i}:");
        for m in layer.iter() {
            let uses: Vec<&str> = graph
                .get(*m)
                .into_iter()
                .flatten()
                .map(|s| s.as_str())
                .collect();
            println!("  {m:<9} -> {}", uses.join(" "));
        }
    }
    println!("{} imports between modules checked", edges.len());
    assert!(
        edges.len() > 100,
        "only {} imports found: is the parser broken?",
        edges.len()
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_parser_sees_groups_super_and_ignores_text() {
    let code = code_only(
        "use crate::{a::b, c::{d, e}, self};\n// crate::x\nlet s = \"crate::y\"; let c = '\"';\n\
         fn f<'a>(x: &'a str) { crate::z::g(); r#\"crate::w\"# }\n",
    );
    let mut found = Vec::new();
    for (i, _) in code.match_indices("crate::") {
        found.extend(names_at(&code, i + "crate::".len()));
    }
    assert_eq!(found, ["a", "c", "z"]);
    assert_eq!(code.lines().count(), 4, "newlines are kept");
    assert_eq!(
        module_path(Path::new("campaign/phases/mod.rs")),
        ["campaign", "phases"]
    );
    assert_eq!(module_path(Path::new("util/fsx.rs")), ["util", "fsx"]);
}

#[test]
fn planted_upward_imports_circles_and_strangers_are_reported() {
    let edge = |from: &str, to: &str, at: &str| Edge {
        from: from.into(),
        to: to.into(),
        at: at.into(),
    };
    let modules: BTreeSet<String> = ["util", "campaign", "build", "kat", "newcomer"]
        .map(String::from)
        .into();
    let (problems, _) = check(
        &[
            edge("util", "campaign", "src/util/fsx.rs:7"),
            edge("build", "kat", "src/build/mod.rs:3"),
            edge("kat", "build", "src/kat/run.rs:9"),
            edge("campaign", "util", "src/campaign/mod.rs:1"),
        ],
        &modules,
    );
    assert_eq!(problems.len(), 4, "{problems:#?}");
    assert!(problems[0].contains("`newcomer` is not in the layer table"));
    assert!(problems[1].starts_with("src/util/fsx.rs:7: `util` (layer 0) imports `campaign`"));
    assert_eq!(
        problems[2],
        "import circle between build, kat: src/build/mod.rs:3, src/kat/run.rs:9"
    );
    // The upward edge also closes a circle with the (allowed) downward one.
    assert_eq!(
        problems[3],
        "import circle between campaign, util: src/util/fsx.rs:7, src/campaign/mod.rs:1"
    );
}
