//! CMake's own answer: the file-based API's codemodel (v2), written by a configure-only run
//! (`.cmake/api/v1/query/codemodel-v2` in the build folder). Every target with its compiled
//! sources, compile groups (defines, include folders, flags) and dependencies; an executable
//! absorbs every library it depends on, through every level, so the KAT program's sources
//! are followed into the libraries it links.

use super::trace::Mapping;
use crate::candidate::ngcc::model::{BuildModel, Item, Program, shell_words};
use anyhow::{Context, Result, bail};
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The reply's JSON files are CMake's, not the package's; still bounded.
const MAX_REPLY_BYTES: u64 = 16 << 20;

fn load(path: &Path) -> Result<Value> {
    let meta = std::fs::symlink_metadata(path)?;
    if !meta.is_file() || meta.len() > MAX_REPLY_BYTES {
        bail!("{}: not a regular file under 16 MiB", path.display());
    }
    let text = std::fs::read_to_string(path)?;
    serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))
}

fn s(v: &Value, k: &str) -> String {
    v.get(k)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

/// One target of the reply.
struct Target {
    name: String,
    kind: String,
    /// Compiled sources, absolute (scratch paths).
    sources: Vec<PathBuf>,
    defines: Vec<String>,
    includes: Vec<PathBuf>,
    fragments: Vec<String>,
    libs: Vec<String>,
    deps: Vec<String>,
}

fn target(v: &Value, top: &Path) -> Target {
    let arr = |k: &str| {
        v.get(k)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    let abs = |p: &str| {
        let p = Path::new(p);
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            top.join(p)
        }
    };
    let mut t = Target {
        name: s(v, "name"),
        kind: s(v, "type"),
        sources: Vec::new(),
        defines: Vec::new(),
        includes: Vec::new(),
        fragments: Vec::new(),
        libs: Vec::new(),
        deps: arr("dependencies").iter().map(|d| s(d, "id")).collect(),
    };
    for src in arr("sources") {
        if src.get("compileGroupIndex").is_some() {
            t.sources.push(abs(&s(&src, "path")));
        }
    }
    for g in arr("compileGroups") {
        if !matches!(s(&g, "language").as_str(), "C" | "ASM" | "") {
            continue;
        }
        let list = |k: &str| {
            g.get(k)
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default()
        };
        for d in list("defines") {
            t.defines.push(s(&d, "define"));
        }
        for i in list("includes") {
            t.includes.push(abs(&s(&i, "path")));
        }
        for f in list("compileCommandFragments") {
            t.fragments.push(s(&f, "fragment"));
        }
    }
    if let Some(link) = v.get("link") {
        for f in link
            .get("commandFragments")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
        {
            if s(&f, "role") == "libraries" {
                t.libs.push(s(&f, "fragment"));
            }
        }
    }
    t
}

/// `-lgmp`, `/usr/lib/…/libgmp.so` → `-lgmp`; the project's own libraries (in the build
/// folder) and `-lm` are not libraries to name.
fn system_lib(fragment: &str, build: &Path) -> Option<String> {
    let f = fragment.trim();
    if f.starts_with("-l") {
        return Some(f.to_string());
    }
    let p = Path::new(f);
    if p.starts_with(build) || !p.is_absolute() {
        return None;
    }
    let name = p.file_name()?.to_string_lossy().into_owned();
    let stem = name.strip_prefix("lib")?;
    let stem = stem.split(".so").next()?.trim_end_matches(".a");
    Some(format!("-l{stem}"))
}

/// The reply of a configure run: every target as a program (executables with the libraries
/// they depend on absorbed).
pub fn read(build: &Path, map: &Mapping) -> Result<BuildModel> {
    let reply = build.join(".cmake/api/v1/reply");
    let index = std::fs::read_dir(&reply)
        .with_context(|| format!("no file-API reply in {}", reply.display()))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("index-"))
        })
        .max()
        .context("the file-API reply has no index")?;
    let index = load(&index)?;
    let cm_file = index
        .get("objects")
        .and_then(Value::as_array)
        .and_then(|o| {
            o.iter()
                .find(|x| s(x, "kind") == "codemodel")
                .map(|x| s(x, "jsonFile"))
        })
        .context("the reply index names no codemodel")?;
    let cm = load(&reply.join(cm_file))?;
    let top = PathBuf::from(s(cm.get("paths").unwrap_or(&Value::Null), "source"));
    let config = cm
        .get("configurations")
        .and_then(Value::as_array)
        .and_then(|c| c.first())
        .context("the codemodel has no configuration")?;
    let mut targets: HashMap<String, Target> = HashMap::new();
    let mut order: Vec<String> = Vec::new();
    for t in config
        .get("targets")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
    {
        let id = s(&t, "id");
        let v = load(&reply.join(s(&t, "jsonFile")))?;
        targets.insert(id.clone(), target(&v, &top));
        order.push(id);
    }
    let mut notes = Vec::new();
    let mut programs = Vec::new();
    for id in &order {
        let t = &targets[id];
        if !matches!(
            t.kind.as_str(),
            "EXECUTABLE"
                | "STATIC_LIBRARY"
                | "SHARED_LIBRARY"
                | "OBJECT_LIBRARY"
                | "MODULE_LIBRARY"
        ) {
            continue;
        }
        let mut p = Program {
            name: t.name.clone(),
            is_library: t.kind != "EXECUTABLE",
            ..Program::default()
        };
        // This target, then every library it depends on, each once, through the libraries
        // that link it (the codemodel lists an executable's transitive dependencies as its
        // own: a library another dependency already links is reached through that one).
        let mut queue: Vec<(String, String)> = vec![(id.clone(), String::new())];
        let mut seen: Vec<String> = Vec::new();
        while let Some((tid, chain)) = queue.pop() {
            if seen.contains(&tid) {
                continue;
            }
            seen.push(tid.clone());
            let Some(d) = targets.get(&tid) else { continue };
            if tid != *id && !d.kind.ends_with("_LIBRARY") {
                continue;
            }
            let chain = if tid == *id {
                format!("cmake codemodel: target {}", d.name)
            } else {
                format!("{chain} ← library {}", d.name)
            };
            for src in &d.sources {
                let rel = src.strip_prefix(&top).unwrap_or(src);
                p.add_source(Item::new(
                    src.to_string_lossy(),
                    format!("{chain} ← {}", rel.display()),
                ));
            }
            let from = format!("{chain} (compile group)");
            for def in &d.defines {
                p.add_define(Item::new(def.clone(), from.clone()));
            }
            for inc in &d.includes {
                p.add_include(Item::new(inc.to_string_lossy(), from.clone()));
            }
            // Flags: the kept ISA flags; the rest is dropped (the fixed flag sets apply).
            let words: Vec<String> = d.fragments.iter().flat_map(|f| shell_words(f)).collect();
            let mut flags = Program::default();
            flags.take_args(&words, &top, &from);
            flags.sources.clear();
            p.absorb(&flags);
            for l in &d.libs {
                if let Some(l) = system_lib(l, build)
                    && l != "-lm"
                    && !p.ldlibs.iter().any(|x| x.value == l)
                {
                    p.ldlibs.push(Item::new(l, format!("{chain} (link)")));
                }
            }
            let implied = |dep: &String| {
                d.deps.iter().any(|other| {
                    other != dep && targets.get(other).is_some_and(|o| o.deps.contains(dep))
                })
            };
            // Depth first: the implied ones last (popped after the others' subtrees).
            let (later, now): (Vec<&String>, Vec<&String>) =
                d.deps.iter().partition(|x| implied(x));
            for dep in later.into_iter().chain(now.into_iter().rev()) {
                queue.push((dep.clone(), chain.clone()));
            }
        }
        map.program(&mut p, &mut notes);
        programs.push(p);
    }
    if programs.is_empty() {
        notes.push("cmake codemodel: no executable or library target".into());
    }
    Ok(BuildModel {
        file: map.orig.join("CMakeLists.txt"),
        programs,
        notes,
        problems: Vec::new(),
    })
}
