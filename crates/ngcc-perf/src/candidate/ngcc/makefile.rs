//! Reading a Makefile without running make: variables (all flavours, target-specific ones,
//! conditionals, the common functions), rules, pattern rules and VPATH, enough to say which
//! files and flags each linked program is made of. `$(shell …)` is never run.

use super::model::{
    BuildModel, Item, Program, commands, compiler_command, is_source_name, normalize,
};
use anyhow::{Context, Result};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

#[derive(Clone, Debug)]
struct Var {
    /// Raw text (recursive `=`) or the value expanded when defined (`:=`).
    value: String,
    recursive: bool,
    line: usize,
    /// The text as written (also for `:=`), to say which assignment spelled a flag out.
    raw: String,
}

#[derive(Clone, Debug)]
enum Op {
    Set,
    Simple,
    Append,
    IfUnset,
}

#[derive(Clone, Debug)]
struct TargetVar {
    name: String,
    op: Op,
    value: String,
}

#[derive(Clone, Debug, Default)]
struct Rule {
    targets: Vec<String>,
    prereqs: Vec<String>,
    /// Static pattern rule `targets: %.o: %.c`: (target pattern, prerequisite patterns).
    static_pattern: Option<(String, Vec<String>)>,
    recipe: Vec<(usize, String)>,
    line: usize,
}

#[derive(Default)]
struct Make {
    /// Only files inside it are read (an include leaving it is a note, never read).
    package: PathBuf,
    dir: PathBuf,
    file_name: String,
    vars: HashMap<String, Var>,
    target_vars: HashMap<String, Vec<TargetVar>>,
    rules: Vec<Rule>,
    vpath: Vec<String>,
    notes: Vec<String>,
    problems: Vec<String>,
}

/// What expansion knows besides the global variables.
#[derive(Default, Clone)]
struct Ctx {
    target: Option<String>,
    prereqs: Vec<String>,
    stem: Option<String>,
    /// Target-specific assignments in force (the program's and the object's).
    tvars: Vec<TargetVar>,
}

const MAX_DEPTH: usize = 40;

/// Reads `path` (and files it includes) into programs.
pub fn read(path: &Path, package: &Path) -> Result<BuildModel> {
    let text = super::safe::read_text(path, package)
        .with_context(|| format!("reading {}", path.display()))?;
    let mut mk = Make {
        package: package.to_path_buf(),
        dir: path.parent().map(Path::to_path_buf).unwrap_or_default(),
        file_name: path
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned(),
        ..Make::default()
    };
    mk.parse(&text, &mk.file_name.clone(), 0);
    let programs = mk.programs();
    Ok(BuildModel {
        file: path.to_path_buf(),
        programs,
        notes: mk.notes,
        problems: mk.problems,
    })
}

/// Logical lines: (first line number, text) with backslash-newline joined.
fn logical_lines(text: &str) -> Vec<(usize, String)> {
    let mut out: Vec<(usize, String)> = Vec::new();
    let mut pending: Option<(usize, String)> = None;
    for (i, raw) in text.split('\n').enumerate() {
        let raw = raw.strip_suffix('\r').unwrap_or(raw);
        let (n, mut cur) = pending.take().unwrap_or((i + 1, String::new()));
        if let Some(body) = raw.strip_suffix('\\') {
            cur.push_str(body);
            cur.push(' ');
            pending = Some((n, cur));
        } else {
            cur.push_str(raw);
            out.push((n, cur));
        }
    }
    if let Some(p) = pending {
        out.push(p);
    }
    out
}

/// Drops a `#` comment (not `\#`) outside `$(…)`.
fn strip_comment(line: &str) -> String {
    let mut out = String::new();
    let mut depth = 0i32;
    let mut prev = ' ';
    for c in line.chars() {
        match c {
            '(' | '{' if prev == '$' || depth > 0 => depth += 1,
            ')' | '}' if depth > 0 => depth -= 1,
            '#' if depth == 0 && prev != '\\' => break,
            _ => {}
        }
        out.push(c);
        prev = c;
    }
    out
}

/// Position of the first `c` outside `$(…)`/`${…}`.
fn find_top(s: &str, pred: impl Fn(char) -> bool) -> Option<usize> {
    let mut depth = 0i32;
    let mut prev = ' ';
    for (i, c) in s.char_indices() {
        match c {
            '(' | '{' if prev == '$' || depth > 0 => depth += 1,
            ')' | '}' if depth > 0 => depth -= 1,
            c if depth == 0 && pred(c) => return Some(i),
            _ => {}
        }
        prev = c;
    }
    None
}

/// Splits `NAME op value` if the line is an assignment.
fn assignment(line: &str) -> Option<(String, Op, String)> {
    let at = find_top(line, |c| c == '=' || c == ':')?;
    let bytes = line.as_bytes();
    let (name_end, op, value_start) = if bytes[at] == b'=' {
        match at.checked_sub(1).map(|i| bytes[i]) {
            Some(b'+') => (at - 1, Op::Append, at + 1),
            Some(b'?') => (at - 1, Op::IfUnset, at + 1),
            // `!=` runs the shell: never done; the caller notes it.
            Some(b'!') => {
                return Some((line[..at - 1].trim().to_string(), Op::Set, "\u{0}".into()));
            }
            _ => (at, Op::Set, at + 1),
        }
    } else if line[at..].starts_with(":=") {
        (at, Op::Simple, at + 2)
    } else if line[at..].starts_with("::=") {
        (at, Op::Simple, at + 3)
    } else {
        return None;
    };
    let name = line[..name_end].trim();
    let name = name
        .strip_prefix("override ")
        .or_else(|| name.strip_prefix("export "))
        .unwrap_or(name)
        .trim();
    if name.is_empty() || name.contains(char::is_whitespace) {
        return None;
    }
    Some((name.to_string(), op, line[value_start..].trim().to_string()))
}

impl Make {
    fn from(&self, file: &str, line: usize) -> String {
        format!("{file}:{line}")
    }

    fn parse(&mut self, text: &str, file: &str, depth: usize) {
        // Conditional stack: (this branch active, some branch taken, enclosing active).
        let mut conds: Vec<(bool, bool, bool)> = Vec::new();
        let active = |c: &Vec<(bool, bool, bool)>| c.iter().all(|(a, _, _)| *a);
        let mut current: Option<usize> = None;
        let mut define: Option<(String, usize, Vec<String>)> = None;
        for (n, raw) in logical_lines(text) {
            if let Some((name, line, body)) = define.as_mut() {
                if raw.trim() == "endef" {
                    let (name, line, body) = (name.clone(), *line, body.join("\n"));
                    if active(&conds) {
                        self.vars.insert(
                            name,
                            Var {
                                raw: body.clone(),
                                value: body,
                                recursive: true,
                                line,
                            },
                        );
                    }
                    define = None;
                } else {
                    body.push(raw.clone());
                }
                continue;
            }
            if let Some(recipe) = raw.strip_prefix('\t') {
                if let (Some(r), true) = (current, active(&conds)) {
                    self.rules[r].recipe.push((n, recipe.to_string()));
                }
                continue;
            }
            let line = strip_comment(&raw);
            let t = line.trim();
            if t.is_empty() {
                continue;
            }
            let word = t.split_whitespace().next().unwrap_or("");
            match word {
                "ifeq" | "ifneq" | "ifdef" | "ifndef" => {
                    let parent = active(&conds);
                    let on = parent && self.condition(t);
                    conds.push((on, on, parent));
                    continue;
                }
                "else" => {
                    let rest = t[4..].trim().to_string();
                    let Some(&(_, taken, parent)) = conds.last() else {
                        continue;
                    };
                    let now = parent && !taken && (rest.is_empty() || self.condition(&rest));
                    if let Some(last) = conds.last_mut() {
                        *last = (now, taken || now, parent);
                    }
                    continue;
                }
                "endif" => {
                    conds.pop();
                    continue;
                }
                _ => {}
            }
            if !active(&conds) {
                continue;
            }
            if word == "define" {
                let name = t[6..].trim().trim_end_matches('=').trim().to_string();
                define = Some((name, n, Vec::new()));
                continue;
            }
            if matches!(word, "include" | "-include" | "sinclude") {
                let files = self.expand(&t[word.len()..], &Ctx::default(), 0);
                for f in files.split_whitespace() {
                    let p = self.dir.join(f);
                    if !p.exists() && super::safe::outside(&p, &self.package).is_none() {
                        self.notes
                            .push(format!("{}: include {f} not found", self.from(file, n)));
                        continue;
                    }
                    match super::safe::read_text(&p, &self.package) {
                        Ok(text) if depth < 8 => {
                            let name = f.to_string();
                            self.parse(&text, &name, depth + 1);
                        }
                        Ok(_) => self.notes.push(format!(
                            "{}: include {f} nested too deep: not read",
                            self.from(file, n)
                        )),
                        Err(e) => self
                            .problems
                            .push(format!("{}: include {f}: {e:#}", self.from(file, n))),
                    }
                }
                continue;
            }
            if word == "vpath" {
                let parts: Vec<String> = self
                    .expand(&t[5..], &Ctx::default(), 0)
                    .split_whitespace()
                    .map(String::from)
                    .collect();
                if parts.len() >= 2 {
                    self.vpath.extend(parts[1].split(':').map(String::from));
                }
                continue;
            }
            if matches!(word, "export" | "unexport" | "override") && assignment(t).is_none() {
                continue;
            }
            if let Some((name, op, value)) = assignment(t) {
                current = None;
                if value == "\u{0}" {
                    self.notes.push(format!(
                        "{}: {name} != … runs the shell; not run, left empty",
                        self.from(file, n)
                    ));
                    continue;
                }
                self.assign(&name, op, &value, n);
                continue;
            }
            // A rule: targets ':' (or '::') rest.
            let Some(colon) = find_top(t, |c| c == ':') else {
                continue;
            };
            let targets_text = &t[..colon];
            let mut rest = t[colon + 1..].trim_start_matches(':').to_string();
            let mut inline_recipe = None;
            if let Some(semi) = find_top(&rest, |c| c == ';') {
                inline_recipe = Some(rest[semi + 1..].to_string());
                rest.truncate(semi);
            }
            let targets: Vec<String> = self
                .expand(targets_text, &Ctx::default(), 0)
                .split_whitespace()
                .map(String::from)
                .collect();
            // Target-specific variable: `targets: NAME op value`.
            if let Some((name, op, value)) = assignment(rest.trim()) {
                for tg in &targets {
                    self.target_vars
                        .entry(tg.clone())
                        .or_default()
                        .push(TargetVar {
                            name: name.clone(),
                            op: op.clone(),
                            value: value.clone(),
                        });
                }
                current = None;
                continue;
            }
            let mut rule = Rule {
                targets,
                line: n,
                ..Rule::default()
            };
            // Order-only prerequisites (after `|`) are folders to create: not inputs.
            let rest = match find_top(&rest, |c| c == '|') {
                Some(bar) => rest[..bar].to_string(),
                None => rest,
            };
            if let Some(second) = find_top(&rest, |c| c == ':') {
                let pat = self
                    .expand(&rest[..second], &Ctx::default(), 0)
                    .trim()
                    .to_string();
                let prereqs = self
                    .expand(&rest[second + 1..], &Ctx::default(), 0)
                    .split_whitespace()
                    .map(String::from)
                    .collect();
                rule.static_pattern = Some((pat, prereqs));
            } else {
                rule.prereqs = self
                    .expand(&rest, &Ctx::default(), 0)
                    .split_whitespace()
                    .map(String::from)
                    .collect();
            }
            if let Some(r) = inline_recipe {
                rule.recipe.push((n, r));
            }
            self.rules.push(rule);
            current = Some(self.rules.len() - 1);
        }
    }

    fn assign(&mut self, name: &str, op: Op, value: &str, line: usize) {
        match op {
            Op::Set => {
                self.vars.insert(
                    name.into(),
                    Var {
                        value: value.into(),
                        recursive: true,
                        line,
                        raw: value.into(),
                    },
                );
            }
            Op::Simple => {
                let v = self.expand(value, &Ctx::default(), 0);
                self.vars.insert(
                    name.into(),
                    Var {
                        value: v,
                        recursive: false,
                        line,
                        raw: value.into(),
                    },
                );
            }
            Op::IfUnset => {
                if !self.vars.contains_key(name) {
                    self.assign(name, Op::Set, value, line);
                }
            }
            Op::Append => match self.vars.get(name).cloned() {
                Some(mut v) => {
                    let add = if v.recursive {
                        value.to_string()
                    } else {
                        self.expand(value, &Ctx::default(), 0)
                    };
                    if !v.value.is_empty() {
                        v.value.push(' ');
                    }
                    v.value.push_str(&add);
                    v.raw.push(' ');
                    v.raw.push_str(value);
                    self.vars.insert(name.into(), v);
                }
                None => self.assign(name, Op::Set, value, line),
            },
        }
    }

    fn condition(&self, t: &str) -> bool {
        let (word, rest) = t.split_once(char::is_whitespace).unwrap_or((t, ""));
        let rest = rest.trim();
        let ctx = Ctx::default();
        match word {
            "ifdef" | "ifndef" => {
                let name = self.expand(rest, &ctx, 0);
                let defined = self
                    .vars
                    .get(name.trim())
                    .is_some_and(|v| !v.value.trim().is_empty());
                defined == (word == "ifdef")
            }
            "ifeq" | "ifneq" => {
                let (a, b) = split_cond(rest);
                let eq = self.expand(&a, &ctx, 0).trim() == self.expand(&b, &ctx, 0).trim();
                eq == (word == "ifeq")
            }
            _ => false,
        }
    }

    /// A variable's value as seen under `ctx` (target-specific assignments applied).
    fn lookup(&self, name: &str, ctx: &Ctx, depth: usize) -> String {
        match name {
            "@" => return ctx.target.clone().unwrap_or_default(),
            "<" => return ctx.prereqs.first().cloned().unwrap_or_default(),
            "^" | "+" | "?" => {
                let mut seen: Vec<&String> = Vec::new();
                for p in &ctx.prereqs {
                    if name == "+" || !seen.contains(&p) {
                        seen.push(p);
                    }
                }
                return seen
                    .iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(" ");
            }
            "*" => return ctx.stem.clone().unwrap_or_default(),
            "CURDIR" => return self.dir.to_string_lossy().into_owned(),
            _ => {}
        }
        let mut value: Option<String> = self.vars.get(name).map(|v| {
            if v.recursive {
                self.expand(&v.value, ctx, depth + 1)
            } else {
                v.value.clone()
            }
        });
        for tv in ctx.tvars.iter().filter(|t| t.name == name) {
            let add = self.expand(&tv.value, ctx, depth + 1);
            value = Some(match (&tv.op, value) {
                (Op::Append, Some(v)) if !v.is_empty() => format!("{v} {add}"),
                (Op::IfUnset, Some(v)) => v,
                _ => add,
            });
        }
        value.unwrap_or_else(|| match name {
            "CC" => "cc".into(),
            "CXX" => "g++".into(),
            "MAKE" => "make".into(),
            "RM" => "rm -f".into(),
            _ => String::new(),
        })
    }

    /// Expands `$(…)`, `${…}`, `$X` and `$$`.
    fn expand(&self, s: &str, ctx: &Ctx, depth: usize) -> String {
        if depth > MAX_DEPTH || !s.contains('$') {
            return s.to_string();
        }
        let mut out = String::new();
        let chars: Vec<char> = s.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            if c != '$' || i + 1 >= chars.len() {
                out.push(c);
                i += 1;
                continue;
            }
            let n = chars[i + 1];
            if n == '$' {
                out.push('$');
                i += 2;
            } else if n == '(' || n == '{' {
                let close = if n == '(' { ')' } else { '}' };
                let mut d = 0;
                let mut j = i + 1;
                while j < chars.len() {
                    if chars[j] == n {
                        d += 1;
                    } else if chars[j] == close {
                        d -= 1;
                        if d == 0 {
                            break;
                        }
                    }
                    j += 1;
                }
                let inner: String = chars[i + 2..j.min(chars.len())].iter().collect();
                out.push_str(&self.reference(&inner, ctx, depth + 1));
                i = j + 1;
            } else {
                out.push_str(&self.lookup(&n.to_string(), ctx, depth + 1));
                i += 2;
            }
        }
        out
    }

    /// The inside of `$(…)`: a function call, a substitution reference or a variable.
    fn reference(&self, inner: &str, ctx: &Ctx, depth: usize) -> String {
        if let Some(sp) = inner.find([' ', '\t']) {
            let (func, args) = (&inner[..sp], inner[sp + 1..].trim_start());
            if let Some(v) = self.function(func, args, ctx, depth) {
                return v;
            }
        }
        let name = self.expand(inner, ctx, depth);
        // Substitution reference $(VAR:a=b).
        if let Some((var, sub)) = name.split_once(':')
            && let Some((from, to)) = sub.split_once('=')
        {
            let value = self.lookup(var, ctx, depth);
            let (from, to) = if from.contains('%') {
                (from.to_string(), to.to_string())
            } else {
                (format!("%{from}"), format!("%{to}"))
            };
            return value
                .split_whitespace()
                .map(|w| patsubst(&from, &to, w))
                .collect::<Vec<_>>()
                .join(" ");
        }
        self.lookup(name.trim(), ctx, depth)
    }

    fn function(&self, func: &str, args: &str, ctx: &Ctx, depth: usize) -> Option<String> {
        let split = |n: usize| -> Vec<String> { split_args(args, n) };
        let ex = |s: &str| self.expand(s, ctx, depth);
        let words =
            |s: &str| -> Vec<String> { ex(s).split_whitespace().map(String::from).collect() };
        let v = match func {
            "subst" => {
                let a = split(3);
                ex(&a[2]).replace(&ex(&a[0]), &ex(&a[1]))
            }
            "patsubst" => {
                let a = split(3);
                let (from, to) = (ex(&a[0]), ex(&a[1]));
                words(&a[2])
                    .iter()
                    .map(|w| patsubst(from.trim(), to.trim(), w))
                    .collect::<Vec<_>>()
                    .join(" ")
            }
            "strip" => words(args).join(" "),
            "findstring" => {
                let a = split(2);
                let (f, inw) = (ex(&a[0]), ex(&a[1]));
                if inw.contains(&f) { f } else { String::new() }
            }
            "filter" | "filter-out" => {
                let a = split(2);
                let pats = words(&a[0]);
                let keep = func == "filter";
                words(&a[1])
                    .into_iter()
                    .filter(|w| pats.iter().any(|p| pattern_match(p, w).is_some()) == keep)
                    .collect::<Vec<_>>()
                    .join(" ")
            }
            "sort" => {
                let mut w = words(args);
                w.sort();
                w.dedup();
                w.join(" ")
            }
            "word" => {
                let a = split(2);
                let n: usize = ex(&a[0]).trim().parse().unwrap_or(0);
                words(&a[1])
                    .get(n.wrapping_sub(1))
                    .cloned()
                    .unwrap_or_default()
            }
            "words" => words(args).len().to_string(),
            "firstword" => words(args).first().cloned().unwrap_or_default(),
            "lastword" => words(args).last().cloned().unwrap_or_default(),
            "dir" => words(args)
                .iter()
                .map(|w| match w.rfind('/') {
                    Some(i) => w[..=i].to_string(),
                    None => "./".into(),
                })
                .collect::<Vec<_>>()
                .join(" "),
            "notdir" => words(args)
                .iter()
                .map(|w| w.rsplit('/').next().unwrap_or(w).to_string())
                .collect::<Vec<_>>()
                .join(" "),
            "basename" => words(args)
                .iter()
                .map(|w| match w.rfind('.') {
                    Some(i) if !w[i..].contains('/') => w[..i].to_string(),
                    _ => w.clone(),
                })
                .collect::<Vec<_>>()
                .join(" "),
            "suffix" => words(args)
                .iter()
                .filter_map(|w| w.rfind('.').map(|i| w[i..].to_string()))
                .collect::<Vec<_>>()
                .join(" "),
            "addprefix" | "addsuffix" => {
                let a = split(2);
                let fix = ex(&a[0]);
                let fix = fix.trim();
                words(&a[1])
                    .iter()
                    .map(|w| {
                        if func == "addprefix" {
                            format!("{fix}{w}")
                        } else {
                            format!("{w}{fix}")
                        }
                    })
                    .collect::<Vec<_>>()
                    .join(" ")
            }
            "join" => {
                let a = split(2);
                let (x, y) = (words(&a[0]), words(&a[1]));
                (0..x.len().max(y.len()))
                    .map(|i| {
                        format!(
                            "{}{}",
                            x.get(i).map(String::as_str).unwrap_or(""),
                            y.get(i).map(String::as_str).unwrap_or("")
                        )
                    })
                    .collect::<Vec<_>>()
                    .join(" ")
            }
            "wildcard" => words(args)
                .iter()
                .flat_map(|w| {
                    let found = super::model::expand_glob(&self.dir, w);
                    found
                        .into_iter()
                        .filter(|p| p.exists())
                        .map(|p| {
                            p.strip_prefix(&self.dir)
                                .map(Path::to_path_buf)
                                .unwrap_or(p)
                                .to_string_lossy()
                                .into_owned()
                        })
                        .collect::<Vec<_>>()
                })
                .collect::<Vec<_>>()
                .join(" "),
            "abspath" | "realpath" => words(args)
                .iter()
                .map(|w| normalize(&self.dir.join(w)).to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join(" "),
            "if" => {
                let a = split(3);
                if !ex(&a[0]).trim().is_empty() {
                    ex(&a[1])
                } else {
                    ex(&a[2])
                }
            }
            "or" => split(usize::MAX)
                .iter()
                .map(|a| ex(a))
                .find(|v| !v.trim().is_empty())
                .unwrap_or_default(),
            "and" => {
                let vals: Vec<String> = split(usize::MAX).iter().map(|a| ex(a)).collect();
                if vals.iter().all(|v| !v.trim().is_empty()) {
                    vals.last().cloned().unwrap_or_default()
                } else {
                    String::new()
                }
            }
            "foreach" => {
                let a = split(3);
                let var = ex(&a[0]).trim().to_string();
                words(&a[1])
                    .iter()
                    .map(|w| {
                        let mut c = ctx.clone();
                        c.tvars.push(TargetVar {
                            name: var.clone(),
                            op: Op::Simple,
                            value: w.clone(),
                        });
                        self.expand(&a[2], &c, depth + 1)
                    })
                    .collect::<Vec<_>>()
                    .join(" ")
            }
            "call" => {
                let a = split(usize::MAX);
                let name = ex(&a[0]).trim().to_string();
                let mut c = ctx.clone();
                for (i, arg) in a.iter().enumerate().skip(1) {
                    c.tvars.push(TargetVar {
                        name: i.to_string(),
                        op: Op::Simple,
                        value: ex(arg),
                    });
                }
                let body = self
                    .vars
                    .get(&name)
                    .map(|v| v.value.clone())
                    .unwrap_or_default();
                self.expand(&body, &c, depth + 1)
            }
            "value" => self
                .vars
                .get(ex(args).trim())
                .map(|v| v.value.clone())
                .unwrap_or_default(),
            "origin" => "file".into(),
            "shell" | "error" | "warning" | "info" | "eval" | "file" => String::new(),
            _ => return None,
        };
        Some(v)
    }

    fn ctx_for(&self, target: &str, prereqs: &[String], stem: Option<String>, base: &Ctx) -> Ctx {
        let mut tvars = base.tvars.clone();
        for (pat, list) in &self.target_vars {
            if pat == target || pattern_match(pat, target).is_some() && pat.contains('%') {
                tvars.extend(list.iter().cloned());
            }
        }
        Ctx {
            target: Some(target.to_string()),
            prereqs: prereqs.to_vec(),
            stem,
            tvars,
        }
    }

    fn is_special(t: &str) -> bool {
        t.starts_with('.') && t.chars().nth(1).is_some_and(|c| c.is_ascii_uppercase())
    }

    /// Every explicit target whose recipe links with a compiler (a command without `-c`).
    fn programs(&self) -> Vec<Program> {
        let mut out = Vec::new();
        for rule in &self.rules {
            if rule.recipe.is_empty() || rule.static_pattern.is_some() {
                continue;
            }
            for target in &rule.targets {
                if target.contains('%') || Self::is_special(target) {
                    continue;
                }
                let ctx = self.ctx_for(target, &rule.prereqs, None, &Ctx::default());
                let mut prog = Program {
                    name: target.clone(),
                    is_library: target.ends_with(".a") || target.ends_with(".so"),
                    ..Program::default()
                };
                let mut links = false;
                let mut inputs: Vec<String> = Vec::new();
                for (n, line) in &rule.recipe {
                    let text = self.expand(line, &ctx, 0);
                    let from = format!("{}:{n} (target {target})", self.file_name);
                    for cmd in commands(text.trim_start_matches(['@', '-', '+'])) {
                        let Some(cc) = compiler_command(&cmd) else {
                            if cmd.first().is_some_and(|w| w == "ar") {
                                links = true;
                                prog.is_library = true;
                                inputs.extend(
                                    cmd.iter().skip(2).filter(|w| is_source_name(w)).cloned(),
                                );
                            }
                            continue;
                        };
                        let mut p = Program::default();
                        let compile = p.take_args(&cc[1..], &self.dir, &from);
                        if !compile {
                            links = true;
                        }
                        for w in &cc[1..] {
                            if is_source_name(w) {
                                inputs.push(w.clone());
                            }
                        }
                        // Sources named on the link line itself take its flags.
                        p.sources.retain(|s| !s.value.ends_with(".o"));
                        prog.absorb(&p);
                    }
                }
                if !links {
                    continue;
                }
                for p in rule.prereqs.iter().filter(|p| is_source_name(p)) {
                    if !inputs.contains(p) {
                        inputs.push(p.clone());
                    }
                }
                prog.sources.clear();
                for input in &inputs {
                    self.input(input, &ctx, &mut prog);
                }
                let raw: Vec<&str> = rule.recipe.iter().map(|(_, l)| l.as_str()).collect();
                self.attribute(&mut prog, &raw);
                out.push(prog);
            }
        }
        out
    }

    /// One input of a program: a source file, or an object traced to its source and flags.
    fn input(&self, word: &str, ctx: &Ctx, prog: &mut Program) {
        if !word.ends_with(".o") && !word.ends_with(".obj") {
            let path = self.find_file(word);
            prog.add_source(Item::new(
                path.to_string_lossy(),
                format!("{} (target {})", self.file_name, prog.name),
            ));
            return;
        }
        match self.object_rule(word, ctx) {
            Some((src, flags)) => {
                let mut src_item = Item::new(
                    src.to_string_lossy(),
                    format!("{} ({} of target {})", self.file_name, word, prog.name),
                );
                src_item.from = flags
                    .sources
                    .first()
                    .map(|s| s.from.clone())
                    .unwrap_or(src_item.from);
                prog.add_source(src_item);
                let mut f = flags;
                f.sources.clear();
                prog.absorb(&f);
            }
            None => self.note_missing(prog, word),
        }
    }

    fn note_missing(&self, prog: &mut Program, word: &str) {
        prog.dropped
            .push(format!("{word} (no rule or source found)"));
    }

    /// A path named by the Makefile: in its folder, else in a VPATH folder.
    fn find_file(&self, word: &str) -> PathBuf {
        let direct = normalize(&self.dir.join(word));
        if direct.exists() {
            return direct;
        }
        let mut dirs: Vec<String> = self.vpath.clone();
        let vp = self.lookup("VPATH", &Ctx::default(), 0);
        dirs.extend(
            vp.split([':', ' '])
                .filter(|s| !s.is_empty())
                .map(String::from),
        );
        for d in dirs {
            let p = normalize(&self.dir.join(&d).join(word));
            if p.exists() {
                return p;
            }
        }
        direct
    }

    /// The source of an object and the flags its recipe compiles it with.
    fn object_rule(&self, obj: &str, pctx: &Ctx) -> Option<(PathBuf, Program)> {
        // Explicit and static pattern rules first, then pattern rules, then the built-in one.
        let mut candidates: Vec<(&Rule, Vec<String>, Option<String>)> = Vec::new();
        for rule in &self.rules {
            if !rule.targets.iter().any(|t| t == obj) {
                continue;
            }
            match &rule.static_pattern {
                Some((pat, pre)) => {
                    if let Some(stem) = pattern_match(pat, obj) {
                        let prereqs = pre.iter().map(|p| p.replace('%', &stem)).collect();
                        candidates.push((rule, prereqs, Some(stem)));
                    }
                }
                None => candidates.push((rule, rule.prereqs.clone(), None)),
            }
        }
        for rule in &self.rules {
            if rule.static_pattern.is_some() {
                continue;
            }
            for t in rule.targets.iter().filter(|t| t.contains('%')) {
                if let Some(stem) = pattern_match(t, obj) {
                    let prereqs: Vec<String> =
                        rule.prereqs.iter().map(|p| p.replace('%', &stem)).collect();
                    let src = prereqs
                        .iter()
                        .find(|p| p.ends_with(".c") || p.ends_with(".S"));
                    if src.is_some_and(|s| self.find_file(s).exists()) {
                        candidates.push((rule, prereqs, Some(stem)));
                    }
                }
            }
        }
        for (rule, prereqs, stem) in candidates {
            let src_name = prereqs
                .iter()
                .find(|p| p.ends_with(".c") || p.ends_with(".S") || p.ends_with(".s"))
                .cloned();
            let ctx = self.ctx_for(obj, &prereqs, stem, pctx);
            let mut flags = Program::default();
            let mut recipe_src = None;
            for (n, line) in &rule.recipe {
                let text = self.expand(line, &ctx, 0);
                let from = format!("{}:{n} (rule for {obj})", self.file_name);
                for cmd in commands(text.trim_start_matches(['@', '-', '+'])) {
                    if let Some(cc) = compiler_command(&cmd) {
                        let mut p = Program::default();
                        p.take_args(&cc[1..], &self.dir, &from);
                        recipe_src = recipe_src.or_else(|| {
                            p.sources
                                .iter()
                                .find(|s| !s.value.ends_with(".o"))
                                .map(|s| PathBuf::from(&s.value))
                        });
                        p.sources.clear();
                        flags.absorb(&p);
                    }
                }
            }
            let Some(src) = recipe_src.or_else(|| src_name.map(|s| self.find_file(&s))) else {
                continue;
            };
            let from = format!("{}:{} (rule for {obj})", self.file_name, rule.line);
            flags.sources.push(Item::new(src.to_string_lossy(), from));
            if rule.recipe.is_empty() {
                self.builtin_flags(obj, &prereqs, &ctx, &mut flags);
            }
            return Some((src, flags));
        }
        // Built-in rule %.o: %.c with $(CC) $(CFLAGS) $(CPPFLAGS).
        let stem = obj.strip_suffix(".o").unwrap_or(obj);
        let c = format!("{stem}.c");
        let src = self.find_file(&c);
        if !src.exists() {
            return None;
        }
        let ctx = self.ctx_for(obj, std::slice::from_ref(&c), None, pctx);
        let mut flags = Program::default();
        self.builtin_flags(obj, &[c], &ctx, &mut flags);
        flags.sources.push(Item::new(
            src.to_string_lossy(),
            format!("{} (built-in rule for {obj})", self.file_name),
        ));
        Some((src, flags))
    }

    fn builtin_flags(&self, obj: &str, _prereqs: &[String], ctx: &Ctx, flags: &mut Program) {
        let text = self.expand("$(CFLAGS) $(CPPFLAGS) $(TARGET_ARCH)", ctx, 0);
        let words = super::model::shell_words(&text);
        flags.take_args(
            &words,
            &self.dir,
            &format!(
                "{} (built-in rule for {obj}: $(CFLAGS) $(CPPFLAGS))",
                self.file_name
            ),
        );
    }

    /// Names the assignment that spells each define out (`Makefile:17 (CFLAGS_1)`),
    /// preferring variables the program's recipe uses.
    fn attribute(&self, prog: &mut Program, recipe: &[&str]) {
        let used = self.referenced(recipe);
        for d in prog.defines.iter_mut() {
            let name = d.value.split('=').next().unwrap_or(&d.value);
            let spells = |v: &Var| {
                v.raw.split_whitespace().any(|w| {
                    w.strip_prefix("-D")
                        .is_some_and(|rest| rest.split('=').next() == Some(name))
                }) || v.raw.contains(&format!("-D {name}"))
            };
            let mut owners: Vec<(&String, &Var)> =
                self.vars.iter().filter(|(_, v)| spells(v)).collect();
            owners.sort_by_key(|(n, v)| (!used.contains(*n), v.line));
            if let Some((var, v)) = owners.first() {
                d.from = format!("{}:{} ({var}), {}", self.file_name, v.line, d.from);
            }
        }
    }

    /// Variables a recipe refers to, directly or through other variables.
    fn referenced(&self, lines: &[&str]) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        let mut todo: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
        while let Some(text) = todo.pop() {
            for name in var_refs(&text) {
                if !out.contains(&name) {
                    if let Some(v) = self.vars.get(&name) {
                        todo.push(v.raw.clone());
                    }
                    out.push(name);
                }
            }
        }
        out
    }
}

/// Names in `$(NAME)` / `${NAME}` references of a text (also inside function calls).
fn var_refs(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let b = text.as_bytes();
    let mut i = 0;
    while i + 1 < b.len() {
        if b[i] == b'$' && (b[i + 1] == b'(' || b[i + 1] == b'{') {
            let start = i + 2;
            let mut j = start;
            while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'_') {
                j += 1;
            }
            if j > start {
                out.push(text[start..j].to_string());
            }
            i = start;
        } else {
            i += 1;
        }
    }
    out
}

/// `ifeq (a,b)`, `ifeq "a" "b"`, `ifeq 'a' 'b'`.
fn split_cond(rest: &str) -> (String, String) {
    let r = rest.trim();
    if let Some(inner) = r.strip_prefix('(').and_then(|x| x.strip_suffix(')')) {
        let a = split_args(inner, 2);
        return (a[0].clone(), a[1].clone());
    }
    let words = super::model::shell_words(r);
    (
        words.first().cloned().unwrap_or_default(),
        words.get(1).cloned().unwrap_or_default(),
    )
}

/// Function arguments split at top-level commas, at most `n` parts (padded with empty ones).
fn split_args(args: &str, n: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut cur = String::new();
    let mut prev = ' ';
    for c in args.chars() {
        match c {
            '(' | '{' if prev == '$' || depth > 0 => depth += 1,
            ')' | '}' if depth > 0 => depth -= 1,
            ',' if depth == 0 && out.len() + 1 < n => {
                out.push(std::mem::take(&mut cur));
                prev = c;
                continue;
            }
            _ => {}
        }
        cur.push(c);
        prev = c;
    }
    out.push(cur);
    while n != usize::MAX && out.len() < n {
        out.push(String::new());
    }
    out
}

/// The stem if `word` matches the `%` pattern (or equals a pattern without `%`).
fn pattern_match(pattern: &str, word: &str) -> Option<String> {
    match pattern.split_once('%') {
        None => (pattern == word).then(String::new),
        Some((pre, post)) => {
            if word.len() >= pre.len() + post.len() && word.starts_with(pre) && word.ends_with(post)
            {
                Some(word[pre.len()..word.len() - post.len()].to_string())
            } else {
                None
            }
        }
    }
}

fn patsubst(from: &str, to: &str, word: &str) -> String {
    match pattern_match(from, word) {
        Some(stem) if from.contains('%') => to.replacen('%', &stem, 1),
        Some(_) => to.to_string(),
        None => word.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(text: &str, files: &[&str]) -> (tempfile::TempDir, BuildModel) {
        let dir = tempfile::tempdir().unwrap();
        for f in files {
            let p = dir.path().join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, "int x;\n").unwrap();
        }
        std::fs::write(dir.path().join("Makefile"), text).unwrap();
        let m = read(&dir.path().join("Makefile"), dir.path()).unwrap();
        (dir, m)
    }

    fn names(items: &[Item], dir: &Path) -> Vec<String> {
        items
            .iter()
            .map(|i| {
                Path::new(&i.value)
                    .strip_prefix(dir)
                    .map(|p| p.to_string_lossy().into_owned())
                    .unwrap_or(i.value.clone())
            })
            .collect()
    }

    #[test]
    fn per_level_programs_from_pattern_rules() {
        let text = "CC := gcc\nBASE := -O3 -I.\nCFLAGS_1 := $(BASE) -DLEVEL=1\nCFLAGS_2 := $(BASE) -DLEVEL=2\n\
            CFLAGS_KAT_1 := $(CFLAGS_1) -DUSE_DRNG\nCFLAGS_KAT_2 := $(CFLAGS_2) -DUSE_DRNG\nOBJ := obj\n\
            SRC := a.c \\\n\tb.c\nAPI := KAT_KEM.c drng.c\n\
            K1 := $(addprefix $(OBJ)/kat1/,$(SRC:.c=.o) $(API:.c=.o))\n\
            K2 := $(addprefix $(OBJ)/kat2/,$(patsubst %.c,%.o,$(SRC) $(API)))\n\
            all: KAT_1 KAT_2\nKAT_1: $(K1)\n\t$(CC) $(CFLAGS_KAT_1) $^ -o $@\n\
            KAT_2: $(K2)\n\t$(CC) $(CFLAGS_KAT_2) $^ -o $@\n\
            $(OBJ)/kat1/%.o: %.c | $(OBJ)\n\t$(CC) $(CFLAGS_KAT_1) -c $< -o $@\n\
            $(OBJ)/kat2/%.o: %.c | $(OBJ)\n\t$(CC) $(CFLAGS_KAT_2) -c $< -o $@\n\
            clean:\n\trm -rf $(OBJ)\n";
        let (dir, m) = model(text, &["a.c", "b.c", "KAT_KEM.c", "drng.c"]);
        assert_eq!(m.programs.len(), 2, "{:?}", m.programs);
        let p1 = &m.programs[0];
        assert_eq!(p1.name, "KAT_1");
        assert_eq!(
            names(&p1.sources, dir.path()),
            ["a.c", "b.c", "KAT_KEM.c", "drng.c"]
        );
        let defs: Vec<&str> = p1.defines.iter().map(|d| d.value.as_str()).collect();
        assert_eq!(defs, ["LEVEL=1", "USE_DRNG"]);
        assert!(
            p1.defines[0].from.starts_with("Makefile:3 (CFLAGS_1)"),
            "{}",
            p1.defines[0].from
        );
        assert!(p1.dropped.contains(&"-O3".to_string()));
        let d2: Vec<&str> = m.programs[1]
            .defines
            .iter()
            .map(|d| d.value.as_str())
            .collect();
        assert_eq!(d2, ["LEVEL=2", "USE_DRNG"]);
    }

    #[test]
    fn objects_with_explicit_rules_builtin_rules_and_target_variables() {
        let text = "CC = /usr/bin/gcc\nCFLAGS = -std=c99 -O3 -DKAT_BUILD\nN ?= 1\nCFLAGS += -DN=$(N)\n\
            OBJS = x.o y.o\nifeq ($(N),1)\nEXTRA = -DONE\nelse\nEXTRA = -DOTHER\nendif\n\
            KAT_KEX: $(OBJS) main_src.c KAT_KEX.c\n\t$(CC) $(CFLAGS) $(EXTRA) -o KAT_KEX $(OBJS) KAT_KEX.c main_src.c -lm -lgmp\n\
            x.o: x.c x.h\n\t$(CC) $(CFLAGS) -c x.c\n\
            bench: KAT_KEX\nbench: CFLAGS += -DBENCH\n";
        let (dir, m) = model(text, &["x.c", "y.c", "KAT_KEX.c", "main_src.c"]);
        assert_eq!(m.programs.len(), 1);
        let p = &m.programs[0];
        assert_eq!(
            names(&p.sources, dir.path()),
            ["x.c", "y.c", "KAT_KEX.c", "main_src.c"]
        );
        let defs: Vec<&str> = p.defines.iter().map(|d| d.value.as_str()).collect();
        assert_eq!(defs, ["KAT_BUILD", "N=1", "ONE"]);
        assert_eq!(p.ldlibs[0].value, "-lgmp");
    }

    #[test]
    fn variables_in_target_names_and_continued_lists() {
        let text = "KAT_NUM_TESTS ?= 1\nCFLAGS = -DKAT_NUM_TESTS=$(KAT_NUM_TESTS) -DOPT=REF\nINSTANCE = X-128\n\
            KAT = KAT_SIG_$(INSTANCE)\nOBJS = SIG_AlgorithmInstance.o KAT_SIG.o \\\n  drng.o\n\
            $(KAT): $(OBJS)\n\t$(CC) $(CFLAGS) -o $@ $(OBJS)\nkat: $(KAT)\n\t./$(KAT)\n";
        let (dir, m) = model(text, &["SIG_AlgorithmInstance.c", "KAT_SIG.c", "drng.c"]);
        assert_eq!(m.programs.len(), 1);
        let p = &m.programs[0];
        assert_eq!(p.name, "KAT_SIG_X-128");
        assert_eq!(
            names(&p.sources, dir.path()),
            ["SIG_AlgorithmInstance.c", "KAT_SIG.c", "drng.c"]
        );
        let defs: Vec<&str> = p.defines.iter().map(|d| d.value.as_str()).collect();
        assert_eq!(defs, ["KAT_NUM_TESTS=1", "OPT=REF"]);
    }

    #[test]
    fn shell_is_never_run() {
        let text = "V != echo -DPWNED\nX = $(shell touch /tmp/ngcc-never)\nall: a.c\n\tgcc $(V) $(X) -o all a.c\n";
        let (_dir, m) = model(text, &["a.c"]);
        assert!(m.programs[0].defines.is_empty());
        assert!(m.notes.iter().any(|n| n.contains("runs the shell")));
        assert!(!Path::new("/tmp/ngcc-never").exists());
    }
}

#[cfg(test)]
mod package_only_tests {
    use super::*;

    #[test]
    fn includes_that_leave_the_package_are_problems_never_read() {
        let d = tempfile::tempdir().unwrap();
        let pkg = d.path().join("pkg");
        std::fs::create_dir_all(&pkg).unwrap();
        std::fs::write(d.path().join("outside.mk"), "CFLAGS += -DLEAKED=1\n").unwrap();
        std::fs::write(
            pkg.join("Makefile"),
            "-include /dev/zero\ninclude /etc/os-release\ninclude ../outside.mk\n\
             all: KAT_KEM\nKAT_KEM: KAT_KEM.c a.c\n\t$(CC) $(CFLAGS) -DX=$(ID) $^ -o $@\n",
        )
        .unwrap();
        let m = read(&pkg.join("Makefile"), &pkg).unwrap();
        assert_eq!(m.problems.len(), 3, "{:?}", m.problems);
        for p in &m.problems {
            assert!(
                p.contains("outside the package") && p.contains("not read"),
                "{p}"
            );
        }
        let defines: Vec<&str> = m.programs[0]
            .defines
            .iter()
            .map(|d| d.value.as_str())
            .collect();
        assert!(
            !defines
                .iter()
                .any(|d| d.contains("LEAKED") || d.contains("debian")),
            "{defines:?}"
        );
    }
}
