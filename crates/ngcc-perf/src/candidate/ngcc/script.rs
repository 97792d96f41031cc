//! Compiler command lines in build scripts (`build.sh`, `compile.sh`, …) and README build
//! notes (`gcc *.c -o main -O2`), read as text. Shell variables assigned earlier in a script
//! are expanded; nothing is run.

use super::model::{BuildModel, Program, commands, compiler_command};
use anyhow::{Context, Result};
use std::collections::HashMap;
use std::path::Path;

/// Reads every compiler command of `path`; `kind` is "script" or "README".
pub fn read(path: &Path, kind: &'static str, package: &Path) -> Result<BuildModel> {
    let text = super::safe::read_text(path, package)
        .with_context(|| format!("reading {}", path.display()))?;
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned();
    let mut vars: HashMap<String, String> = HashMap::new();
    let mut programs: Vec<Program> = Vec::new();
    // Compile-only commands (-c) add their flags and sources to the next link.
    let mut pending = Program::default();
    for (n, raw) in joined_lines(&text) {
        let line = raw.trim();
        if line.starts_with('#') && kind == "script" {
            continue;
        }
        if kind == "script"
            && let Some((k, v)) = shell_assignment(line)
        {
            let v = expand(&v, &vars);
            vars.insert(k, v);
            continue;
        }
        // README prose: the command may follow a prompt or a label ("1->In Linux, enter gcc …").
        let line = if kind == "README" {
            match find_compiler(line) {
                Some(at) => &line[at..],
                None => continue,
            }
        } else {
            line
        };
        let expanded = if kind == "script" {
            expand(line, &vars)
        } else {
            line.to_string()
        };
        for cmd in commands(&expanded) {
            let Some(cc) = compiler_command(&cmd) else {
                continue;
            };
            // README prose ends a command at the first word that is not an argument.
            let args: Vec<String> = cc[1..]
                .iter()
                .take_while(|w| kind != "README" || looks_like_arg(w))
                .map(|w| w.trim_end_matches(['.', ',', '"', '\'', '`']).to_string())
                .collect();
            let from = format!("{name}:{n}");
            let mut p = Program::default();
            let compile_only = p.take_args(&args, dir, &from);
            if compile_only {
                pending.absorb(&p);
                continue;
            }
            p.name = format!("{} line {n}", cc[0]);
            p.absorb(&std::mem::take(&mut pending));
            programs.push(p);
        }
    }
    if programs.is_empty() && !pending.sources.is_empty() {
        pending.name = format!("{name} (compile commands)");
        programs.push(pending);
    }
    Ok(BuildModel {
        file: path.to_path_buf(),
        programs,
        notes: Vec::new(),
        problems: Vec::new(),
    })
}

fn joined_lines(text: &str) -> Vec<(usize, String)> {
    let mut out: Vec<(usize, String)> = Vec::new();
    let mut pending: Option<(usize, String)> = None;
    for (i, raw) in text.lines().enumerate() {
        let (n, mut cur) = pending.take().unwrap_or((i + 1, String::new()));
        match raw.strip_suffix('\\') {
            Some(body) => {
                cur.push_str(body);
                cur.push(' ');
                pending = Some((n, cur));
            }
            None => {
                cur.push_str(raw);
                out.push((n, cur));
            }
        }
    }
    out.extend(pending);
    out
}

/// The compiler command lines of README prose, as words (`gcc *.c -o main -O2`), with
/// their line numbers: what a reader would type, for build observation to run.
pub fn readme_commands(text: &str) -> Vec<(usize, Vec<String>)> {
    let mut out = Vec::new();
    for (n, raw) in joined_lines(text) {
        let line = raw.trim();
        let Some(at) = find_compiler(line) else {
            continue;
        };
        for cmd in commands(&line[at..]) {
            let Some(cc) = compiler_command(&cmd) else {
                continue;
            };
            let mut words = vec![cc[0].clone()];
            words.extend(
                cc[1..]
                    .iter()
                    .take_while(|w| looks_like_arg(w))
                    .map(|w| w.trim_end_matches(['.', ',', '"', '\'', '`']).to_string()),
            );
            out.push((n, words));
        }
    }
    out
}

/// Byte offset of a compiler word (gcc, cc, clang) starting a command in prose.
fn find_compiler(line: &str) -> Option<usize> {
    let mut offset = 0;
    for word in line.split_inclusive(char::is_whitespace) {
        let w = word
            .trim()
            .trim_start_matches(['`', '"', '\'', '$', '>'])
            .trim();
        if compiler_command(&[w.to_string()]).is_some() {
            let lead = word.len()
                - word
                    .trim_start_matches(['`', '"', '\'', '$', '>', ' '])
                    .len();
            return Some(offset + lead);
        }
        offset += word.len();
    }
    None
}

fn looks_like_arg(w: &str) -> bool {
    w.starts_with('-') || w.contains('.') || w.contains('*') || w.contains('/') || w == "main"
}

fn shell_assignment(line: &str) -> Option<(String, String)> {
    let line = line.strip_prefix("export ").unwrap_or(line);
    let (k, v) = line.split_once('=')?;
    if k.is_empty() || !k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return None;
    }
    let v = v.trim();
    let v = v
        .strip_prefix('"')
        .and_then(|x| x.strip_suffix('"'))
        .or_else(|| v.strip_prefix('\'').and_then(|x| x.strip_suffix('\'')))
        .unwrap_or(v);
    Some((k.to_string(), v.to_string()))
}

/// `$VAR` and `${VAR}` from earlier assignments (others expand to nothing).
fn expand(s: &str, vars: &HashMap<String, String>) -> String {
    let mut out = String::new();
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '$' {
            out.push(c);
            continue;
        }
        let braced = chars.peek() == Some(&'{');
        if braced {
            chars.next();
        }
        let mut name = String::new();
        while let Some(&n) = chars.peek() {
            if n.is_ascii_alphanumeric() || n == '_' {
                name.push(n);
                chars.next();
            } else {
                break;
            }
        }
        if braced && chars.peek() == Some(&'}') {
            chars.next();
        }
        if name.is_empty() {
            out.push('$');
        } else {
            out.push_str(vars.get(&name).map(String::as_str).unwrap_or(""));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readme_prose_and_scripts() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        for f in ["a.c", "b.c", "KAT_KEM.c"] {
            std::fs::write(d.join(f), "").unwrap();
        }
        std::fs::write(
            d.join("README.txt"),
            "Build script:\n\n1->In the Linux system, enter gcc *.c -o main -O2.\n2->Enter ./main to run.\n",
        )
        .unwrap();
        let m = read(&d.join("README.txt"), "README", d).unwrap();
        assert_eq!(m.programs.len(), 1);
        let names: Vec<String> = m.programs[0]
            .sources
            .iter()
            .map(|s| {
                Path::new(&s.value)
                    .file_name()
                    .unwrap()
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
        assert_eq!(names, ["KAT_KEM.c", "a.c", "b.c"]);
        assert_eq!(m.programs[0].dropped, ["-O2"]);

        std::fs::write(
            d.join("build.sh"),
            "#!/bin/sh\nLEVEL=3\nFLAGS=\"-DLEVEL=$LEVEL -Iinc\"\ngcc ${FLAGS} -c a.c -o a.o\ngcc $FLAGS -DKAT a.o b.c KAT_KEM.c -o kat && ./kat\n",
        )
        .unwrap();
        let m = read(&d.join("build.sh"), "script", d).unwrap();
        assert_eq!(m.programs.len(), 1);
        let p = &m.programs[0];
        let defs: Vec<&str> = p.defines.iter().map(|x| x.value.as_str()).collect();
        assert_eq!(defs, ["LEVEL=3", "KAT"]);
        assert!(p.defines[1].from == "build.sh:5", "{}", p.defines[1].from);
        assert_eq!(p.sources.len(), 4, "{:?}", p.sources);
    }
}
