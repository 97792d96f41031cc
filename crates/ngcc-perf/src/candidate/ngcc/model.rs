//! What a build file says, read but never run: the programs it builds, each with its
//! source files, `-D` defines, `-I` folders and other flags, and where each value came from.
//! The readers (Makefile, CMake, scripts and README notes) all produce this.

use regex_lite::Regex;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// A value and where it came from (`Makefile:17 (CFLAGS_1)`), for the manifest's comments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Item {
    pub value: String,
    pub from: String,
}

impl Item {
    pub fn new(value: impl Into<String>, from: impl Into<String>) -> Item {
        Item {
            value: value.into(),
            from: from.into(),
        }
    }
}

/// One program (executable or library target) of a build file.
#[derive(Clone, Debug, Default)]
pub struct Program {
    /// Target name: `KAT_KEM_1`, `PQCgenKAT_sign128`, or `gcc line 3` for scripts.
    pub name: String,
    /// Source files, absolute (they may not exist: the build file may name generated files).
    pub sources: Vec<Item>,
    pub defines: Vec<Item>,
    /// Include folders, absolute.
    pub includes: Vec<Item>,
    /// Compile flags kept (ISA flags like `-mavx2`, `-fcommon`).
    pub cflags: Vec<Item>,
    /// Libraries (`-lgmp`), never `-lm` (always linked).
    pub ldlibs: Vec<Item>,
    /// Other libraries of the same file this program links (CMake `target_link_libraries`).
    pub links: Vec<String>,
    /// True for libraries (CMake `add_library`, `lib*.a`/`.so` targets).
    pub is_library: bool,
    /// Flags ignored on purpose (optimisation, warnings, standards: ngcc-perf's flag sets apply).
    pub dropped: Vec<String>,
}

impl Program {
    pub fn add_define(&mut self, item: Item) {
        if !self.defines.iter().any(|d| d.value == item.value) {
            self.defines.push(item);
        }
    }
    pub fn add_source(&mut self, item: Item) {
        if !self.sources.iter().any(|d| d.value == item.value) {
            self.sources.push(item);
        }
    }
    pub fn add_include(&mut self, item: Item) {
        if !self.includes.iter().any(|d| d.value == item.value) {
            self.includes.push(item);
        }
    }
    fn add_cflag(&mut self, item: Item) {
        if !self.cflags.iter().any(|d| d.value == item.value) {
            self.cflags.push(item);
        }
    }
    fn add_ldlib(&mut self, item: Item) {
        if !self.ldlibs.iter().any(|d| d.value == item.value) {
            self.ldlibs.push(item);
        }
    }
    fn drop_flag(&mut self, flag: &str) {
        if !self.dropped.iter().any(|d| d == flag) {
            self.dropped.push(flag.to_string());
        }
    }

    /// Merges another program's values into this one (a library it links, an object's flags).
    pub fn absorb(&mut self, other: &Program) {
        for s in &other.sources {
            self.add_source(s.clone());
        }
        for d in &other.defines {
            self.add_define(d.clone());
        }
        for i in &other.includes {
            self.add_include(i.clone());
        }
        for c in &other.cflags {
            self.add_cflag(c.clone());
        }
        for l in &other.ldlibs {
            self.add_ldlib(l.clone());
        }
        for d in &other.dropped {
            self.drop_flag(d);
        }
    }

    /// Sorts compiler arguments into this program: `-D`, `-I`, kept and dropped flags,
    /// libraries, and source files (relative to `base`). Returns whether `-c` was given.
    pub fn take_args(&mut self, args: &[String], base: &Path, from: &str) -> bool {
        let mut compile_only = false;
        let mut i = 0;
        while i < args.len() {
            let a = &args[i];
            // Flags whose value may be the next word.
            let joined = |prefix: &str| -> Option<(String, usize)> {
                if a == prefix {
                    args.get(i + 1).map(|v| (v.clone(), 2))
                } else {
                    a.strip_prefix(prefix).map(|v| (v.to_string(), 1))
                }
            };
            if let Some((v, n)) = joined("-D") {
                self.add_define(Item::new(v, from));
                i += n;
                continue;
            }
            if let Some((v, n)) = joined("-I") {
                self.add_include(Item::new(normalize(&base.join(&v)).to_string_lossy(), from));
                i += n;
                continue;
            }
            if let Some((v, n)) = joined("-l") {
                if v != "m" {
                    self.add_ldlib(Item::new(format!("-l{v}"), from));
                }
                i += n;
                continue;
            }
            if a == "-o" || a == "-MF" || a == "-MT" || a == "-MQ" || a == "-x" {
                i += 2;
                continue;
            }
            if let Some((_, n)) = joined("-U").or_else(|| joined("-L")) {
                self.drop_flag(a);
                i += n;
                continue;
            }
            if a == "-c" || a == "-S" || a == "-E" {
                compile_only = true;
            } else if a.starts_with('-') {
                if kept_flag(a) {
                    self.add_cflag(Item::new(a.clone(), from));
                } else {
                    self.drop_flag(a);
                }
            } else if is_source_name(a) || a.contains('*') {
                for p in expand_glob(base, a) {
                    self.add_source(Item::new(p.to_string_lossy(), from));
                }
            }
            i += 1;
        }
        compile_only
    }
}

/// A build file read into programs, with notes on what could not be read.
#[derive(Clone, Debug, Default)]
pub struct BuildModel {
    /// `Makefile`, `CMakeLists.txt`, `build.sh`, `README.txt`, … (the file name).
    pub file: PathBuf,
    pub programs: Vec<Program>,
    /// What was left out, for the import's "dropped" list.
    pub notes: Vec<String>,
    /// What the package itself should fix (an include that leaves the package or cannot be
    /// read), for its problems list: kept apart from `notes` so no one sorts them by text.
    pub problems: Vec<String>,
}

/// Flags carried into the manifest: instruction-set flags the code may need, `-fcommon`
/// (tentative definitions), OpenMP. Everything else (optimisation, warnings, standards,
/// `-march=native`) is replaced by ngcc-perf's fixed flag sets.
fn kept_flag(flag: &str) -> bool {
    static RE: OnceLock<Regex> = OnceLock::new();
    let dropped_m = ["-march=native", "-mtune=native", "-m64", "-m32"];
    if dropped_m.contains(&flag) || flag.starts_with("-mtune=") || flag.starts_with("-march=") {
        return false;
    }
    RE.get_or_init(|| {
        Regex::new(r"^(-m(no-)?(avx|avx2|avx512\w*|sse\d?(\.\d)?|ssse3|aes|pclmul|bmi2?|popcnt|sha|adx|fma|vaes|vpclmulqdq|gfni|rdrnd|rdseed|lzcnt|neon|crypto|fpu=\S+|cpu=\S+)|-fcommon|-fopenmp|-funsigned-char|-fsigned-char)$")
            .expect("valid regex")
    })
    .is_match(flag)
}

/// `.c`, `.S`, `.s`, `.o` (an object, mapped to its source by the reader).
pub fn is_source_name(word: &str) -> bool {
    let w = word.trim_matches(|c| c == '"' || c == '\'');
    [".c", ".S", ".s", ".o", ".obj"]
        .iter()
        .any(|e| w.ends_with(e))
        && !w.starts_with('-')
}

/// A word of a build file as paths: a glob is expanded in `base` (reading the folder,
/// which is not running anything), a plain name joined to it.
pub fn expand_glob(base: &Path, word: &str) -> Vec<PathBuf> {
    let w = word.trim_matches(|c| c == '"' || c == '\'');
    let joined = base.join(w);
    if !w.contains(['*', '?', '[']) {
        return vec![normalize(&joined)];
    }
    let pattern = format!("{}/{}", glob::Pattern::escape(&base.to_string_lossy()), w);
    let mut out: Vec<PathBuf> = glob::glob(&pattern)
        .map(|paths| {
            paths
                .filter_map(|p| p.ok())
                .filter(|p| p.is_file())
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out.into_iter().map(|p| normalize(&p)).collect()
}

/// `a/./b/../c` → `a/c` without touching the file system.
pub fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// Shell-like words: whitespace separates, quotes group, a backslash escapes.
pub fn shell_words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = text.chars().peekable();
    let mut quote: Option<char> = None;
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some('"'), '\\') => {
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
            }
            (Some(_), c) => cur.push(c),
            (None, '"' | '\'') => {
                quote = Some(c);
                in_word = true;
            }
            (None, '\\') => {
                if let Some(n) = chars.next() {
                    cur.push(n);
                    in_word = true;
                }
            }
            (None, c) if c.is_whitespace() => {
                if in_word {
                    out.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            (None, c) => {
                cur.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        out.push(cur);
    }
    out
}

/// The compiler in a command, if the command runs one: its words from the compiler on.
/// `cc_names` holds what `$(CC)` and friends expanded to.
pub fn compiler_command(words: &[String]) -> Option<&[String]> {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE.get_or_init(|| {
        Regex::new(
            r"^(\S*/)?((x86_64|aarch64|riscv64)[\w-]*-)?(gcc|cc|clang|icc|icx|tcc)(-\d+(\.\d+)*)?$",
        )
        .expect("valid regex")
    });
    let at = words.iter().position(|w| re.is_match(w))?;
    Some(&words[at..])
}

/// Splits a shell line into commands at `&&`, `||`, `;` and `|`.
pub fn commands(line: &str) -> Vec<Vec<String>> {
    let words = shell_words(line);
    let mut out = vec![Vec::new()];
    for w in words {
        if matches!(w.as_str(), "&&" | "||" | ";" | "|") {
            out.push(Vec::new());
        } else if let Some(stripped) = w.strip_suffix(';') {
            out.last_mut().expect("one").push(stripped.to_string());
            out.push(Vec::new());
        } else {
            out.last_mut().expect("one").push(w);
        }
    }
    out.retain(|c| !c.is_empty());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn args_are_sorted_into_defines_includes_and_dropped_flags() {
        let mut p = Program::default();
        let args: Vec<String> = "-std=c99 -O3 -march=native -DKAT_BUILD -D LEVEL=3 -I inc -Isrc/api -mavx2 -fcommon -c a.c -o a.o -lgmp -lm"
            .split(' ')
            .map(String::from)
            .collect();
        let compile = p.take_args(&args, Path::new("/pkg/X"), "Makefile:3");
        assert!(compile);
        let v = |items: &[Item]| items.iter().map(|i| i.value.clone()).collect::<Vec<_>>();
        assert_eq!(v(&p.defines), ["KAT_BUILD", "LEVEL=3"]);
        assert_eq!(v(&p.includes), ["/pkg/X/inc", "/pkg/X/src/api"]);
        assert_eq!(v(&p.cflags), ["-mavx2", "-fcommon"]);
        assert_eq!(v(&p.ldlibs), ["-lgmp"]);
        assert_eq!(v(&p.sources), ["/pkg/X/a.c"]);
        assert_eq!(p.dropped, ["-std=c99", "-O3", "-march=native"]);
    }

    #[test]
    fn words_and_commands() {
        assert_eq!(
            shell_words(r#"gcc -DNAME="\"x y\"" 'a b.c' c\ d.c"#),
            ["gcc", "-DNAME=\"x y\"", "a b.c", "c d.c"]
        );
        let cmds = commands("cd build && gcc -o main *.c; ./main");
        assert_eq!(cmds.len(), 3);
        assert_eq!(compiler_command(&cmds[1]).unwrap()[0], "gcc");
        assert!(compiler_command(&cmds[2]).is_none());
        assert!(compiler_command(&["/usr/bin/gcc".to_string()]).is_some());
        assert!(compiler_command(&["x86_64-linux-gnu-gcc-12".to_string()]).is_some());
        assert_eq!(normalize(Path::new("/a/./b/../c")), PathBuf::from("/a/c"));
    }
}
