//! Recorded compiler, archiver and linker calls of a build → the programs it linked, each with
//! every source compiled into it (through objects and archives), its `-D` defines, `-I`
//! folders, kept ISA flags and libraries. Optimisation, warning, `-march=native` and output
//! flags are dropped by `Program::take_args` as for the static reader: the fixed flag sets
//! apply.

use super::runner::Exec;
use crate::candidate::ngcc::model::{BuildModel, Item, Program, compiler_command, normalize};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Where the copy sits and the package folder it is a copy of.
#[derive(Clone, Debug)]
pub struct Mapping {
    /// The copy in scratch (canonical).
    pub copy: PathBuf,
    /// The package folder it was copied from.
    pub orig: PathBuf,
}

impl Mapping {
    /// A path of the copy as the package's path; `None` for anything else (scratch build
    /// folders, /usr/include).
    pub fn back(&self, p: &Path) -> Option<PathBuf> {
        let p = normalize(p);
        p.strip_prefix(&self.copy).ok().map(|rest| {
            if rest.as_os_str().is_empty() {
                self.orig.clone()
            } else {
                self.orig.join(rest)
            }
        })
    }

    /// Maps a program's paths back into the package; what lies elsewhere is dropped, noted.
    pub fn program(&self, p: &mut Program, notes: &mut Vec<String>) {
        let mut keep = |items: &mut Vec<Item>, what: &str| {
            items.retain_mut(|it| match self.back(Path::new(&it.value)) {
                Some(q) => {
                    it.value = q.to_string_lossy().into_owned();
                    true
                }
                None => {
                    let n = format!(
                        "{what} {} of {} (outside the package copy: generated or a system folder)",
                        it.value,
                        p_name(&it.from)
                    );
                    if !notes.contains(&n) {
                        notes.push(n);
                    }
                    false
                }
            });
        };
        keep(&mut p.sources, "source");
        keep(&mut p.includes, "include folder");
    }
}

fn p_name(from: &str) -> &str {
    from.split(':').next().unwrap_or(from)
}

fn base(p: &Path) -> String {
    p.file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned()
}

/// A compiler driver (gcc, cc, clang, x86_64-linux-gnu-gcc-12), not its passes (cc1, as,
/// collect2, ld).
fn is_compiler(e: &Exec) -> bool {
    let names = [
        base(&e.program),
        e.argv
            .first()
            .map(|a| base(Path::new(a)))
            .unwrap_or_default(),
    ];
    names
        .iter()
        .any(|n| compiler_command(std::slice::from_ref(n)).is_some())
}

fn is_archiver(e: &Exec) -> bool {
    let n = base(&e.program);
    n == "ar" || n.ends_with("-ar") || n == "gcc-ar" || n.ends_with("-gcc-ar-12")
}

/// A call shown in a note: its words, shortened.
fn shown(argv: &[String]) -> String {
    let mut words: Vec<String> = argv.to_vec();
    if let Some(first) = words.first_mut() {
        *first = base(Path::new(first));
    }
    let text = words.join(" ");
    let chars: Vec<char> = text.chars().collect();
    if chars.len() <= 160 {
        return text;
    }
    // The compiler and its flags, then the output.
    let head: String = chars[..110].iter().collect();
    let tail: String = chars[chars.len() - 40..].iter().collect();
    format!("{head} … {tail}")
}

/// The programs a traced build linked (and the shared libraries it made).
pub fn programs(execs: &[Exec], how: &str, map: &Mapping) -> BuildModel {
    let calls: Vec<&Exec> = execs
        .iter()
        .filter(|e| is_compiler(e) || is_archiver(e))
        .collect();
    let total = calls.len();
    let mut objects: HashMap<PathBuf, Program> = HashMap::new();
    let mut archives: HashMap<PathBuf, Vec<PathBuf>> = HashMap::new();
    let mut shared: HashMap<PathBuf, Program> = HashMap::new();
    let mut programs: Vec<Program> = Vec::new();
    let mut notes: Vec<String> = Vec::new();
    for (i, e) in calls.iter().enumerate() {
        let from = format!(
            "{how}: {} (call {} of {total} recorded compiler calls)",
            shown(&e.argv),
            i + 1
        );
        let args: Vec<String> = e.argv.iter().skip(1).cloned().collect();
        let at = |a: &str| normalize(&e.cwd.join(a));
        if is_archiver(e) {
            // ar [-]ops archive members…
            let mut words = args.iter().skip(1);
            if let Some(archive) = words.next() {
                let members: Vec<PathBuf> = words
                    .filter(|w| w.ends_with(".o") || w.ends_with(".obj"))
                    .map(|w| at(w))
                    .collect();
                archives.entry(at(archive)).or_default().extend(members);
            }
            continue;
        }
        let output = args
            .iter()
            .position(|a| a == "-o")
            .and_then(|k| args.get(k + 1))
            .map(|o| at(o))
            .or_else(|| {
                args.iter()
                    .find_map(|a| a.strip_prefix("-o").filter(|v| !v.is_empty()).map(at))
            });
        let mut p = Program::default();
        let compile_only = p.take_args(&args, &e.cwd, &from);
        // Inputs that are objects or archives: what they were built from.
        let mut inputs: Vec<PathBuf> = Vec::new();
        p.sources.retain(|s| {
            let is_obj = s.value.ends_with(".o") || s.value.ends_with(".obj");
            if is_obj {
                inputs.push(PathBuf::from(&s.value));
            }
            !is_obj
        });
        inputs.extend(args.iter().filter(|a| a.ends_with(".a")).map(|a| at(a)));
        if compile_only {
            if args.iter().any(|a| a == "-E" || a == "-M" || a == "-MM") {
                continue;
            }
            // One object per source: the -o name, or the source's stem in the cwd.
            let srcs = p.sources.clone();
            for s in &srcs {
                let obj = match (&output, srcs.len()) {
                    (Some(o), 1) => o.clone(),
                    _ => e.cwd.join(format!(
                        "{}.o",
                        Path::new(&s.value)
                            .file_stem()
                            .unwrap_or_default()
                            .to_string_lossy()
                    )),
                };
                let mut one = p.clone();
                one.sources = vec![s.clone()];
                objects.insert(normalize(&obj), one);
            }
            continue;
        }
        // A link: the program absorbs its objects, archives and the package's own libraries.
        let search: Vec<PathBuf> = std::iter::once(e.cwd.clone())
            .chain(args.iter().filter_map(|a| a.strip_prefix("-L").map(at)))
            .collect();
        let mut own_libs: Vec<String> = Vec::new();
        for l in p.ldlibs.iter().map(|l| l.value.clone()).collect::<Vec<_>>() {
            let name = l.trim_start_matches("-l");
            for d in &search {
                let a = normalize(&d.join(format!("lib{name}.a")));
                let so = normalize(&d.join(format!("lib{name}.so")));
                if archives.contains_key(&a) {
                    inputs.push(a);
                    own_libs.push(l.clone());
                    break;
                }
                if shared.contains_key(&so) {
                    inputs.push(so);
                    own_libs.push(l.clone());
                    break;
                }
            }
        }
        p.ldlibs.retain(|l| !own_libs.contains(&l.value));
        inputs.extend(args.iter().filter(|a| a.ends_with(".so")).map(|a| at(a)));
        let mut seen: Vec<PathBuf> = Vec::new();
        while let Some(input) = inputs.pop() {
            if seen.contains(&input) {
                continue;
            }
            seen.push(input.clone());
            if let Some(o) = objects.get(&input) {
                p.absorb(o);
            } else if let Some(members) = archives.get(&input) {
                inputs.extend(members.iter().cloned());
            } else if let Some(lib) = shared.get(&input) {
                p.absorb(lib);
            } else {
                let n = format!(
                    "input {} of {} was not built by a recorded call",
                    input.display(),
                    shown(&e.argv)
                );
                if !notes.contains(&n) {
                    notes.push(n);
                }
            }
        }
        let out = output.unwrap_or_else(|| e.cwd.join("a.out"));
        p.name = base(&out);
        p.is_library = args.iter().any(|a| a == "-shared");
        if p.is_library {
            shared.insert(normalize(&out), p.clone());
        }
        programs.push(p);
    }
    for p in programs.iter_mut() {
        map.program(p, &mut notes);
    }
    if programs.is_empty() {
        notes.push(format!(
            "{how}: no program was linked ({total} compiler calls)"
        ));
    }
    BuildModel {
        file: map.orig.join(how),
        programs,
        notes,
        problems: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exec(cwd: &str, argv: &str) -> Exec {
        let argv: Vec<String> = argv.split(' ').map(String::from).collect();
        let program = if argv[0] == "ar" {
            PathBuf::from("/usr/bin/x86_64-linux-gnu-ar")
        } else if argv[0].ends_with("gcc") || argv[0] == "cc" {
            PathBuf::from("/usr/bin/x86_64-linux-gnu-gcc-12")
        } else {
            PathBuf::from(format!("/usr/bin/{}", argv[0]))
        };
        Exec {
            program,
            argv,
            cwd: PathBuf::from(cwd),
        }
    }

    #[test]
    fn objects_archives_and_libraries_reach_the_program_that_links_them() {
        let execs = vec![
            exec("/s/src", "make -k"),
            exec(
                "/s/src",
                "gcc -O3 -Wall -DLEVEL=3 -Iinc -mavx2 -c core/a.c -o obj/a.o",
            ),
            exec("/usr/lib/gcc", "cc1 -quiet core/a.c"),
            exec("/s/src", "gcc -O3 -DLEVEL=3 -Iinc -c sym/b.c -o obj/b.o"),
            exec("/s/src", "ar rcs libtoy.a obj/a.o obj/b.o"),
            exec(
                "/s/src/test",
                "cc -march=native -DLEVEL=3 -I../inc -c KAT_KEM.c",
            ),
            exec(
                "/s/src",
                "gcc -o kat test/KAT_KEM.o drng.c -L. -ltoy -lm -lgmp -march=native",
            ),
            exec("/s/src", "gcc -o test_speed speed.c -ltoy"),
        ];
        let map = Mapping {
            copy: PathBuf::from("/s/src"),
            orig: PathBuf::from("/pkg/Toy-L3"),
        };
        let m = programs(&execs, "make", &map);
        assert_eq!(m.programs.len(), 2);
        let kat = &m.programs[0];
        assert_eq!(kat.name, "kat");
        let v = |items: &[Item]| {
            let mut v: Vec<String> = items.iter().map(|i| i.value.clone()).collect();
            v.sort();
            v
        };
        assert_eq!(
            v(&kat.sources),
            [
                "/pkg/Toy-L3/core/a.c",
                "/pkg/Toy-L3/drng.c",
                "/pkg/Toy-L3/sym/b.c",
                "/pkg/Toy-L3/test/KAT_KEM.c"
            ]
        );
        assert_eq!(v(&kat.defines), ["LEVEL=3"]);
        assert_eq!(v(&kat.includes), ["/pkg/Toy-L3/inc"]);
        assert_eq!(v(&kat.cflags), ["-mavx2"]);
        assert_eq!(v(&kat.ldlibs), ["-lgmp"]);
        assert!(kat.dropped.contains(&"-march=native".to_string()));
        let a = kat
            .sources
            .iter()
            .find(|s| s.value.ends_with("a.c"))
            .unwrap();
        assert!(a.from.starts_with("make: gcc -O3"), "{}", a.from);
        assert!(a.from.contains("(call 1 of 6"), "{}", a.from);
    }
}
