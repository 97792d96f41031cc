//! Reading CMakeLists.txt without running cmake: variables, lists, options, globs,
//! conditionals, loops, macros and functions, subdirectories, and the target commands that
//! say which sources, definitions and include folders each executable or library has.

use super::model::{BuildModel, Item, Program, expand_glob, normalize, shell_words};
use anyhow::Result;
use regex_lite::Regex;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// One command invocation: name (lowercase), raw arguments, file and line.
#[derive(Clone, Debug)]
struct Command {
    name: String,
    args: Vec<Arg>,
    file: String,
    line: usize,
}

#[derive(Clone, Debug)]
struct Arg {
    text: String,
    quoted: bool,
}

/// Directory-wide settings that every target of the folder (and its subfolders) gets.
#[derive(Clone, Debug, Default)]
struct DirScope {
    dir: PathBuf,
    defines: Vec<Item>,
    includes: Vec<Item>,
    options: Vec<Item>,
}

#[derive(Clone, Debug)]
struct Callable {
    params: Vec<String>,
    body: Vec<Command>,
}

#[derive(Default)]
struct CMake {
    /// Only files inside it are read.
    package: PathBuf,
    root: PathBuf,
    vars: HashMap<String, String>,
    targets: Vec<(Program, DirScope, PathBuf)>,
    callables: HashMap<String, Callable>,
    notes: Vec<String>,
    problems: Vec<String>,
    /// Files read, for the notes and to avoid loops.
    files: Vec<PathBuf>,
}

pub fn read(path: &Path, package: &Path) -> Result<BuildModel> {
    let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    let mut cm = CMake {
        package: package.to_path_buf(),
        root: dir.clone(),
        ..CMake::default()
    };
    for (k, v) in [
        ("CMAKE_SYSTEM_NAME", "Linux"),
        ("CMAKE_C_COMPILER_ID", "GNU"),
        ("CMAKE_SYSTEM_PROCESSOR", std::env::consts::ARCH),
        ("UNIX", "1"),
        ("CMAKE_BUILD_TYPE", ""),
    ] {
        cm.vars.insert(k.into(), v.into());
    }
    let mut scope = DirScope {
        dir: dir.clone(),
        ..DirScope::default()
    };
    cm.read_file(path, &mut scope, 0)?;
    let mut programs: Vec<Program> = Vec::new();
    let finals = cm.targets.clone();
    for (prog, scope, _) in &finals {
        let mut p = prog.clone();
        for d in &scope.defines {
            p.add_define(d.clone());
        }
        for i in &scope.includes {
            p.add_include(i.clone());
        }
        let opts: Vec<String> = scope.options.iter().map(|o| o.value.clone()).collect();
        let from = scope
            .options
            .first()
            .map(|o| o.from.clone())
            .unwrap_or_default();
        p.take_args(&opts, &scope.dir, &from);
        programs.push(p);
    }
    // Libraries a program links: their sources and flags are part of it; other names are
    // system libraries.
    let snapshot = programs.clone();
    for p in programs.iter_mut() {
        let mut todo = p.links.clone();
        let mut seen: Vec<String> = Vec::new();
        while let Some(name) = todo.pop() {
            if seen.contains(&name) {
                continue;
            }
            seen.push(name.clone());
            match snapshot.iter().find(|q| q.name == name) {
                Some(lib) => {
                    p.absorb(lib);
                    todo.extend(lib.links.iter().cloned());
                }
                None => {
                    let lib = name.strip_prefix("-l").unwrap_or(&name);
                    if lib
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '+')
                    {
                        p.ldlibs.push(Item::new(
                            format!("-l{lib}"),
                            "CMakeLists.txt (target_link_libraries)",
                        ));
                    } else {
                        p.dropped.push(format!("{name} (linked library not found)"));
                    }
                }
            }
        }
    }
    // CMAKE_C_FLAGS as set in the files (never the environment's).
    if let Some(flags) = cm.vars.get("CMAKE_C_FLAGS").cloned() {
        let words = shell_words(&flags);
        for p in programs.iter_mut() {
            p.take_args(&words, &dir, "CMakeLists.txt (CMAKE_C_FLAGS)");
        }
    }
    Ok(BuildModel {
        file: path.to_path_buf(),
        programs,
        notes: cm.notes,
        problems: cm.problems,
    })
}

/// Splits a CMake file into commands (comments dropped, quoted and bracket arguments kept).
fn parse_commands(text: &str, file: &str) -> Vec<Command> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let mut line = 1;
    let n = chars.len();
    while i < n {
        let c = chars[i];
        if c == '\n' {
            line += 1;
            i += 1;
            continue;
        }
        if c == '#' {
            // Bracket comment #[[ … ]] or a line comment.
            if chars.get(i + 1) == Some(&'[') && chars.get(i + 2) == Some(&'[') {
                while i + 1 < n && !(chars[i] == ']' && chars[i + 1] == ']') {
                    if chars[i] == '\n' {
                        line += 1;
                    }
                    i += 1;
                }
                i += 2;
            } else {
                while i < n && chars[i] != '\n' {
                    i += 1;
                }
            }
            continue;
        }
        if c.is_alphabetic() || c == '_' {
            let start = i;
            while i < n && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            let name: String = chars[start..i].iter().collect();
            while i < n && (chars[i] == ' ' || chars[i] == '\t') {
                i += 1;
            }
            if i >= n || chars[i] != '(' {
                continue;
            }
            let cmd_line = line;
            i += 1;
            let mut args = Vec::new();
            let mut depth = 0;
            let mut cur = String::new();
            let mut has = false;
            while i < n {
                let c = chars[i];
                match c {
                    '"' => {
                        i += 1;
                        let mut q = String::new();
                        while i < n && chars[i] != '"' {
                            if chars[i] == '\\' && i + 1 < n {
                                q.push(chars[i + 1]);
                                i += 2;
                                continue;
                            }
                            if chars[i] == '\n' {
                                line += 1;
                            }
                            q.push(chars[i]);
                            i += 1;
                        }
                        args.push(Arg {
                            text: q,
                            quoted: true,
                        });
                        i += 1;
                        continue;
                    }
                    '#' => {
                        while i < n && chars[i] != '\n' {
                            i += 1;
                        }
                        continue;
                    }
                    '(' => {
                        depth += 1;
                        cur.push(c);
                        has = true;
                    }
                    ')' if depth == 0 => {
                        if has {
                            args.push(Arg {
                                text: std::mem::take(&mut cur),
                                quoted: false,
                            });
                        }
                        i += 1;
                        break;
                    }
                    ')' => {
                        depth -= 1;
                        cur.push(c);
                    }
                    c if c.is_whitespace() => {
                        if c == '\n' {
                            line += 1;
                        }
                        if has {
                            args.push(Arg {
                                text: std::mem::take(&mut cur),
                                quoted: false,
                            });
                            has = false;
                        }
                    }
                    c => {
                        cur.push(c);
                        has = true;
                    }
                }
                i += 1;
            }
            out.push(Command {
                name: name.to_ascii_lowercase(),
                args,
                file: file.to_string(),
                line: cmd_line,
            });
            continue;
        }
        i += 1;
    }
    out
}

const SCOPE_WORDS: &[&str] = &[
    "PRIVATE",
    "PUBLIC",
    "INTERFACE",
    "SYSTEM",
    "BEFORE",
    "AFTER",
];

impl CMake {
    fn expand(&self, s: &str, depth: usize) -> String {
        if depth > 20 || !s.contains("${") && !s.contains("$ENV{") {
            return s.to_string();
        }
        let mut out = String::new();
        let mut rest = s;
        while let Some(at) = rest.find('$') {
            out.push_str(&rest[..at]);
            let tail = &rest[at..];
            let (skip, is_env) = if tail.starts_with("${") {
                (2, false)
            } else if tail.starts_with("$ENV{") {
                (5, true)
            } else {
                out.push('$');
                rest = &tail[1..];
                continue;
            };
            // Matching brace, allowing nesting.
            let mut d = 1;
            let mut end = None;
            for (i, c) in tail[skip..].char_indices() {
                match c {
                    '{' => d += 1,
                    '}' => {
                        d -= 1;
                        if d == 0 {
                            end = Some(skip + i);
                            break;
                        }
                    }
                    _ => {}
                }
            }
            let Some(end) = end else {
                out.push_str(tail);
                return out;
            };
            let name = self.expand(&tail[skip..end], depth + 1);
            if !is_env {
                out.push_str(self.vars.get(&name).map(String::as_str).unwrap_or(""));
            }
            rest = &tail[end + 1..];
        }
        out.push_str(rest);
        out
    }

    /// Expanded arguments; unquoted ones split into list elements at `;`.
    fn args(&self, cmd: &Command) -> Vec<String> {
        let mut out = Vec::new();
        for a in &cmd.args {
            let v = self.expand(&a.text, 0);
            if a.quoted {
                out.push(v);
            } else {
                out.extend(v.split(';').filter(|s| !s.is_empty()).map(String::from));
            }
        }
        out
    }

    fn read_file(&mut self, path: &Path, scope: &mut DirScope, depth: usize) -> Result<()> {
        if depth > 8 || self.files.contains(&path.to_path_buf()) {
            return Ok(());
        }
        self.files.push(path.to_path_buf());
        let text = match super::safe::read_text(path, &self.package) {
            Ok(t) => t,
            // An included file is one note; only the top file's absence is an error.
            Err(e) if depth > 0 => {
                self.problems.push(format!("{e:#}"));
                return Ok(());
            }
            Err(e) => return Err(e.context(format!("reading {}", path.display()))),
        };
        let rel = path
            .strip_prefix(&self.root)
            .unwrap_or(path)
            .to_string_lossy()
            .into_owned();
        let cmds = parse_commands(&text, &rel);
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        for (k, v) in [
            ("CMAKE_CURRENT_SOURCE_DIR", dir.clone()),
            ("CMAKE_CURRENT_LIST_DIR", dir.clone()),
        ] {
            self.vars.insert(k.into(), v.to_string_lossy().into_owned());
        }
        if depth == 0 {
            for k in ["CMAKE_SOURCE_DIR", "PROJECT_SOURCE_DIR"] {
                self.vars
                    .insert(k.into(), dir.to_string_lossy().into_owned());
            }
        }
        self.run(&cmds, scope, depth)
    }

    fn from(cmd: &Command) -> String {
        format!("{}:{} ({})", cmd.file, cmd.line, cmd.name)
    }

    /// Runs commands, handling blocks (if, foreach, macro/function definitions).
    fn run(&mut self, cmds: &[Command], scope: &mut DirScope, depth: usize) -> Result<()> {
        let mut i = 0;
        while i < cmds.len() {
            let cmd = &cmds[i];
            match cmd.name.as_str() {
                "if" => {
                    let end = block_end(cmds, i, "if", "endif");
                    // Branches: (condition args or None for else, start, end).
                    let mut branches: Vec<(Option<&Command>, usize)> = vec![(Some(cmd), i + 1)];
                    let mut nest = 0;
                    for (j, c) in cmds.iter().enumerate().take(end).skip(i + 1) {
                        match c.name.as_str() {
                            "if" => nest += 1,
                            "endif" => nest -= 1,
                            "elseif" if nest == 0 => branches.push((Some(c), j + 1)),
                            "else" if nest == 0 => branches.push((None, j + 1)),
                            _ => {}
                        }
                    }
                    for k in 0..branches.len() {
                        let (c, start) = branches[k];
                        let stop = branches.get(k + 1).map(|b| b.1 - 1).unwrap_or(end);
                        let take = match c {
                            Some(c) => self.condition(&self.args(c)),
                            None => true,
                        };
                        if take {
                            let body = cmds[start..stop].to_vec();
                            self.run(&body, scope, depth)?;
                            break;
                        }
                    }
                    i = end + 1;
                    continue;
                }
                "foreach" => {
                    let end = block_end(cmds, i, "foreach", "endforeach");
                    let a = self.args(cmd);
                    let body = cmds[i + 1..end].to_vec();
                    if let Some((var, items)) = a.split_first() {
                        for item in foreach_items(items) {
                            self.vars.insert(var.clone(), item);
                            self.run(&body, scope, depth)?;
                        }
                    }
                    i = end + 1;
                    continue;
                }
                "while" => {
                    let end = block_end(cmds, i, "while", "endwhile");
                    self.notes
                        .push(format!("{}: while() loop not followed", Self::from(cmd)));
                    i = end + 1;
                    continue;
                }
                "macro" | "function" => {
                    let closing = if cmd.name == "macro" {
                        "endmacro"
                    } else {
                        "endfunction"
                    };
                    let end = block_end(cmds, i, &cmd.name, closing);
                    let a: Vec<String> = cmd.args.iter().map(|a| a.text.clone()).collect();
                    if let Some((name, params)) = a.split_first() {
                        self.callables.insert(
                            name.to_ascii_lowercase(),
                            Callable {
                                params: params.to_vec(),
                                body: cmds[i + 1..end].to_vec(),
                            },
                        );
                    }
                    i = end + 1;
                    continue;
                }
                _ => {}
            }
            self.command(cmd, scope, depth)?;
            i += 1;
        }
        Ok(())
    }

    fn command(&mut self, cmd: &Command, scope: &mut DirScope, depth: usize) -> Result<()> {
        let a = self.args(cmd);
        let from = Self::from(cmd);
        let here = PathBuf::from(
            self.vars
                .get("CMAKE_CURRENT_SOURCE_DIR")
                .cloned()
                .unwrap_or_default(),
        );
        match cmd.name.as_str() {
            "project" => {
                if let Some(name) = a.first() {
                    self.vars.insert("PROJECT_NAME".into(), name.clone());
                }
            }
            "set" => {
                if let Some((name, values)) = a.split_first() {
                    let end = values
                        .iter()
                        .position(|v| v == "CACHE" || v == "PARENT_SCOPE")
                        .unwrap_or(values.len());
                    // A cache entry does not replace a value set before (as with -D on the
                    // command line); a plain set does.
                    let cache = values.get(end).is_some_and(|v| v == "CACHE");
                    if !(cache && self.vars.contains_key(name)) {
                        self.vars.insert(name.clone(), values[..end].join(";"));
                    }
                }
            }
            "unset" => {
                if let Some(name) = a.first() {
                    self.vars.remove(name);
                }
            }
            "option" => {
                if let Some(name) = a.first()
                    && !self.vars.contains_key(name)
                {
                    let v = a.get(2).cloned().unwrap_or_else(|| "OFF".into());
                    self.vars.insert(name.clone(), v);
                }
            }
            "list" => self.list(&a),
            "string" => self.string(&a),
            "file" => self.file(&a, &here, &from),
            "add_executable" | "add_library" => {
                let Some((name, rest)) = a.split_first() else {
                    return Ok(());
                };
                if rest
                    .first()
                    .is_some_and(|w| w == "ALIAS" || w == "IMPORTED")
                {
                    return Ok(());
                }
                let mut p = Program {
                    name: name.clone(),
                    is_library: cmd.name == "add_library",
                    ..Program::default()
                };
                for s in rest.iter().filter(|w| {
                    !matches!(
                        w.as_str(),
                        "STATIC"
                            | "SHARED"
                            | "MODULE"
                            | "OBJECT"
                            | "INTERFACE"
                            | "WIN32"
                            | "MACOSX_BUNDLE"
                            | "EXCLUDE_FROM_ALL"
                    )
                }) {
                    add_sources(&mut p, &here, s, &from);
                }
                self.targets.push((p, scope.clone(), here));
            }
            "target_sources" => self.on_target(&a, |p, dir, w| add_sources(p, dir, w, &from)),
            "target_compile_definitions" => self.on_target(&a, |p, _, w| {
                let d = w.strip_prefix("-D").unwrap_or(w);
                if !d.is_empty() {
                    p.add_define(Item::new(d, from.clone()));
                }
            }),
            "target_include_directories" => self.on_target(&a, |p, dir, w| {
                p.add_include(Item::new(
                    normalize(&dir.join(w)).to_string_lossy(),
                    from.clone(),
                ));
            }),
            "target_compile_options" => self.on_target(&a, |p, dir, w| {
                p.take_args(&[w.to_string()], dir, &from);
            }),
            "target_link_libraries" => self.on_target(&a, |p, _, w| {
                if w != "m" && w != "-lm" {
                    p.links.push(w.to_string());
                }
            }),
            "include_directories" => {
                for w in a.iter().filter(|w| !SCOPE_WORDS.contains(&w.as_str())) {
                    let item = Item::new(normalize(&here.join(w)).to_string_lossy(), from.clone());
                    scope.includes.push(item.clone());
                    for (_, s, d) in self.targets.iter_mut() {
                        if *d == here {
                            s.includes.push(item.clone());
                        }
                    }
                }
            }
            "add_definitions" | "add_compile_definitions" | "add_compile_options" => {
                let mut p = Program::default();
                let words: Vec<String> = if cmd.name == "add_compile_definitions" {
                    a.iter().map(|d| format!("-D{d}")).collect()
                } else {
                    a.clone()
                };
                p.take_args(&words, &here, &from);
                // Other flags go on as options: the target's flag sorting keeps or drops (and
                // names) them.
                let options: Vec<Item> = words
                    .iter()
                    .filter(|w| !w.starts_with("-D"))
                    .map(|w| Item::new(w.clone(), from.clone()))
                    .collect();
                for (_, s, d) in self.targets.iter_mut() {
                    if *d == here {
                        s.defines.extend(p.defines.iter().cloned());
                        s.options.extend(options.iter().cloned());
                    }
                }
                scope.defines.extend(p.defines);
                scope.options.extend(options);
            }
            "add_subdirectory" => {
                if let Some(sub) = a.first() {
                    let sub_dir = normalize(&here.join(sub));
                    let file = sub_dir.join("CMakeLists.txt");
                    if file.is_file() {
                        let saved = self.vars.clone();
                        let mut child = DirScope {
                            dir: sub_dir,
                            ..scope.clone()
                        };
                        self.read_file(&file, &mut child, depth + 1)?;
                        // Variables set in a subdirectory stay there.
                        let targets_dir_vars = std::mem::replace(&mut self.vars, saved);
                        drop(targets_dir_vars);
                    } else {
                        self.notes
                            .push(format!("{from}: {} has no CMakeLists.txt", file.display()));
                    }
                }
            }
            "include" => {
                if let Some(f) = a.first() {
                    let p = here.join(f);
                    if p.is_file() {
                        self.read_file(&p, scope, depth + 1)?;
                        self.vars.insert(
                            "CMAKE_CURRENT_SOURCE_DIR".into(),
                            here.to_string_lossy().into_owned(),
                        );
                    }
                }
            }
            "execute_process" | "add_custom_command" | "add_custom_target" => {
                self.notes.push(format!("{from}: not run"));
            }
            other => {
                if let Some(c) = self.callables.get(other).cloned() {
                    let saved: Vec<(String, Option<String>)> = c
                        .params
                        .iter()
                        .map(|p| (p.clone(), self.vars.get(p).cloned()))
                        .collect();
                    for (i, p) in c.params.iter().enumerate() {
                        self.vars
                            .insert(p.clone(), a.get(i).cloned().unwrap_or_default());
                    }
                    for (i, v) in a.iter().enumerate() {
                        self.vars.insert(format!("ARGV{i}"), v.clone());
                    }
                    self.vars.insert(
                        "ARGN".into(),
                        a.get(c.params.len()..).unwrap_or(&[]).join(";"),
                    );
                    if depth < 16 {
                        self.run(&c.body, scope, depth + 1)?;
                    }
                    for (p, v) in saved {
                        match v {
                            Some(v) => self.vars.insert(p, v),
                            None => self.vars.remove(&p),
                        };
                    }
                }
            }
        }
        Ok(())
    }

    /// Applies `f` to each value of a `target_*` command's target (scope keywords skipped).
    fn on_target(&mut self, a: &[String], mut f: impl FnMut(&mut Program, &Path, &str)) {
        let Some((name, rest)) = a.split_first() else {
            return;
        };
        let here = PathBuf::from(
            self.vars
                .get("CMAKE_CURRENT_SOURCE_DIR")
                .cloned()
                .unwrap_or_default(),
        );
        if let Some((p, _, _)) = self.targets.iter_mut().rev().find(|t| t.0.name == *name) {
            for w in rest.iter().filter(|w| !SCOPE_WORDS.contains(&w.as_str())) {
                f(p, &here, w);
            }
        }
    }

    fn list(&mut self, a: &[String]) {
        let (Some(op), Some(var)) = (a.first(), a.get(1)) else {
            return;
        };
        let mut items: Vec<String> = self
            .vars
            .get(var)
            .map(|v| {
                v.split(';')
                    .filter(|s| !s.is_empty())
                    .map(String::from)
                    .collect()
            })
            .unwrap_or_default();
        match op.as_str() {
            "APPEND" => items.extend(a[2..].iter().cloned()),
            "PREPEND" => {
                let mut new = a[2..].to_vec();
                new.extend(items);
                items = new;
            }
            "REMOVE_ITEM" => items.retain(|i| !a[2..].contains(i)),
            "REMOVE_DUPLICATES" => {
                let mut seen = Vec::new();
                items.retain(|i| {
                    let new = !seen.contains(i);
                    seen.push(i.clone());
                    new
                });
            }
            "FILTER" => {
                // list(FILTER var INCLUDE|EXCLUDE REGEX re)
                if let (Some(mode), Some(re)) = (a.get(2), a.get(4))
                    && let Ok(re) = Regex::new(re)
                {
                    let keep = mode == "INCLUDE";
                    items.retain(|i| re.is_match(i) == keep);
                }
            }
            _ => return,
        }
        self.vars.insert(var.clone(), items.join(";"));
    }

    fn string(&mut self, a: &[String]) {
        match a.first().map(String::as_str) {
            Some("REPLACE") if a.len() >= 5 => {
                let v = a[4..].join("").replace(&a[1], &a[2]);
                self.vars.insert(a[3].clone(), v);
            }
            Some("APPEND") if a.len() >= 2 => {
                let mut v = self.vars.get(&a[1]).cloned().unwrap_or_default();
                v.push_str(&a[2..].join(""));
                self.vars.insert(a[1].clone(), v);
            }
            Some("TOUPPER" | "TOLOWER") if a.len() >= 3 => {
                let v = if a[0] == "TOUPPER" {
                    a[1].to_uppercase()
                } else {
                    a[1].to_lowercase()
                };
                self.vars.insert(a[2].clone(), v);
            }
            _ => {}
        }
    }

    /// `file(GLOB|GLOB_RECURSE var [RELATIVE dir] [CONFIGURE_DEPENDS] patterns…)`.
    fn file(&mut self, a: &[String], here: &Path, from: &str) {
        let (Some(mode), Some(var)) = (a.first(), a.get(1)) else {
            return;
        };
        if mode != "GLOB" && mode != "GLOB_RECURSE" {
            return;
        }
        let mut relative: Option<PathBuf> = None;
        let mut pats = Vec::new();
        let mut i = 2;
        while i < a.len() {
            match a[i].as_str() {
                "RELATIVE" => {
                    relative = a.get(i + 1).map(PathBuf::from);
                    i += 2;
                    continue;
                }
                "CONFIGURE_DEPENDS" | "FOLLOW_SYMLINKS" | "LIST_DIRECTORIES" => {}
                p => pats.push(p.to_string()),
            }
            i += 1;
        }
        let mut found: Vec<PathBuf> = Vec::new();
        for p in &pats {
            let pattern = if mode == "GLOB_RECURSE" {
                // dir/*.c → dir/**/*.c
                match p.rfind('/') {
                    Some(k) => format!("{}/**/{}", &p[..k], &p[k + 1..]),
                    None => format!("**/{p}"),
                }
            } else {
                p.clone()
            };
            let base = if Path::new(&pattern).is_absolute() {
                PathBuf::from("/")
            } else {
                here.to_path_buf()
            };
            let pat = pattern.trim_start_matches('/');
            found.extend(expand_glob(&base, pat));
        }
        found.sort();
        found.dedup();
        let values: Vec<String> = found
            .iter()
            .map(|f| match &relative {
                Some(r) => f
                    .strip_prefix(r)
                    .unwrap_or(f)
                    .to_string_lossy()
                    .into_owned(),
                None => f.to_string_lossy().into_owned(),
            })
            .collect();
        if values.is_empty() {
            self.notes
                .push(format!("{from}: file({mode}) matched nothing"));
        }
        self.vars.insert(var.clone(), values.join(";"));
    }

    /// `if()` conditions: constants, variables, NOT/AND/OR, STREQUAL, EQUAL, LESS, GREATER,
    /// MATCHES, DEFINED, EXISTS (anything else is false, and noted).
    fn condition(&self, a: &[String]) -> bool {
        // OR binds loosest, then AND, then NOT.
        if let Some(k) = a.iter().position(|w| w == "OR") {
            return self.condition(&a[..k]) || self.condition(&a[k + 1..]);
        }
        if let Some(k) = a.iter().position(|w| w == "AND") {
            return self.condition(&a[..k]) && self.condition(&a[k + 1..]);
        }
        match a {
            [] => false,
            [not, rest @ ..] if not == "NOT" => !self.condition(rest),
            [d, v] if d == "DEFINED" => self.vars.contains_key(v),
            [e, p] if e == "EXISTS" => Path::new(p).exists(),
            [x, op, y] => {
                let val = |s: &String| self.vars.get(s).cloned().unwrap_or_else(|| s.clone());
                let (x, y) = (val(x), y.clone());
                let num = |s: &str| s.trim().parse::<f64>().ok();
                match op.as_str() {
                    "STREQUAL" => x == y,
                    "EQUAL" => num(&x).zip(num(&y)).is_some_and(|(a, b)| a == b),
                    "LESS" => num(&x).zip(num(&y)).is_some_and(|(a, b)| a < b),
                    "GREATER" => num(&x).zip(num(&y)).is_some_and(|(a, b)| a > b),
                    "MATCHES" => Regex::new(&y).is_ok_and(|re| re.is_match(&x)),
                    _ => false,
                }
            }
            // A defined variable by its value; an undefined name only if it is a true constant.
            [x] => match self.vars.get(x) {
                Some(v) => truthy(v),
                None => {
                    let u = x.to_ascii_uppercase();
                    matches!(u.as_str(), "1" | "ON" | "YES" | "TRUE" | "Y")
                        || x.parse::<f64>().is_ok_and(|n| n != 0.0)
                }
            },
            _ => false,
        }
    }
}

fn truthy(v: &str) -> bool {
    let u = v.to_ascii_uppercase();
    !(u.is_empty()
        || matches!(
            u.as_str(),
            "0" | "OFF" | "NO" | "FALSE" | "N" | "IGNORE" | "NOTFOUND"
        )
        || u.ends_with("-NOTFOUND"))
}

fn foreach_items(items: &[String]) -> Vec<String> {
    match items {
        [r, rest @ ..] if r == "RANGE" => {
            let nums: Vec<i64> = rest.iter().filter_map(|s| s.parse().ok()).collect();
            let (start, stop, step) = match nums.as_slice() {
                [stop] => (0, *stop, 1),
                [start, stop] => (*start, *stop, 1),
                [start, stop, step] => (*start, *stop, (*step).max(1)),
                _ => return Vec::new(),
            };
            (start..=stop)
                .step_by(step as usize)
                .map(|n| n.to_string())
                .collect()
        }
        [i, rest @ ..] if i == "IN" => rest
            .iter()
            .filter(|w| *w != "LISTS" && *w != "ITEMS")
            .cloned()
            .collect(),
        _ => items.to_vec(),
    }
}

/// Index of the command closing the block opened at `start`.
fn block_end(cmds: &[Command], start: usize, open: &str, close: &str) -> usize {
    let mut depth = 0;
    for (j, c) in cmds.iter().enumerate().skip(start) {
        if c.name == open {
            depth += 1;
        } else if c.name == close {
            depth -= 1;
            if depth == 0 {
                return j;
            }
        }
    }
    cmds.len()
}

fn add_sources(p: &mut Program, dir: &Path, word: &str, from: &str) {
    if word.ends_with(".h") || word.ends_with(".hpp") || word.starts_with("$<") {
        return;
    }
    for path in expand_glob(dir, word) {
        p.add_source(Item::new(path.to_string_lossy(), from));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn src_tree_with_level_definitions_and_a_library() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        for f in [
            "src/api/kem.c",
            "src/backend/poly.c",
            "src/symmetric/hash.c",
            "src/KAT/KAT_KEM.c",
            "src/tests/test_kem.c",
        ] {
            std::fs::create_dir_all(d.join(f).parent().unwrap()).unwrap();
            std::fs::write(d.join(f), "int x;\n").unwrap();
        }
        std::fs::write(
            d.join("CMakeLists.txt"),
            "cmake_minimum_required(VERSION 3.10)\nproject(Toy C)\n\
             set(SECURITY_LEVEL 128 CACHE STRING \"level\")\n\
             # comment with add_executable(fake x.c)\n\
             file(GLOB_RECURSE CORE src/api/*.c src/backend/*.c)\n\
             file(GLOB SYM ${CMAKE_CURRENT_SOURCE_DIR}/src/symmetric/*.c)\n\
             add_library(toy STATIC ${CORE} ${SYM})\n\
             target_compile_definitions(toy PUBLIC SECURITY_LEVEL=${SECURITY_LEVEL})\n\
             target_include_directories(toy PUBLIC src/api src/backend)\n\
             include_directories(src/symmetric)\n\
             if(NOT MSVC)\n  add_compile_options(-O3 -mavx2)\nelse()\n  add_compile_options(/O2)\nendif()\n\
             foreach(L 1 2)\n  add_executable(test_${L} src/tests/test_kem.c)\nendforeach()\n\
             add_executable(kat src/KAT/KAT_KEM.c)\ntarget_link_libraries(kat PRIVATE toy m)\n",
        )
        .unwrap();
        let m = read(&d.join("CMakeLists.txt"), d).unwrap();
        let names: Vec<&str> = m.programs.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["toy", "test_1", "test_2", "kat"]);
        let toy = &m.programs[0];
        let rel = |items: &[Item]| -> Vec<String> {
            items
                .iter()
                .map(|i| {
                    Path::new(&i.value)
                        .strip_prefix(d)
                        .unwrap()
                        .to_string_lossy()
                        .into_owned()
                })
                .collect()
        };
        assert_eq!(
            rel(&toy.sources),
            [
                "src/api/kem.c",
                "src/backend/poly.c",
                "src/symmetric/hash.c"
            ]
        );
        assert_eq!(toy.defines[0].value, "SECURITY_LEVEL=128");
        assert!(
            toy.defines[0].from.starts_with("CMakeLists.txt:8"),
            "{}",
            toy.defines[0].from
        );
        assert_eq!(
            rel(&toy.includes),
            ["src/api", "src/backend", "src/symmetric"]
        );
        assert_eq!(toy.cflags[0].value, "-mavx2");
        assert_eq!(m.programs[3].links, ["toy"]);
    }

    #[test]
    fn macros_make_per_level_targets() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join("a.c"), "").unwrap();
        std::fs::write(
            d.join("CMakeLists.txt"),
            "macro(kat_for LEVEL)\n add_executable(KAT_${LEVEL} a.c)\n target_compile_definitions(KAT_${LEVEL} PRIVATE -DPARAMS=${LEVEL} USE_ICCS)\nendmacro()\n\
             kat_for(1)\nkat_for(3)\n",
        )
        .unwrap();
        let m = read(&d.join("CMakeLists.txt"), d).unwrap();
        assert_eq!(m.programs.len(), 2);
        assert_eq!(m.programs[1].name, "KAT_3");
        let defs: Vec<&str> = m.programs[1]
            .defines
            .iter()
            .map(|x| x.value.as_str())
            .collect();
        assert_eq!(defs, ["PARAMS=3", "USE_ICCS"]);
    }
}
