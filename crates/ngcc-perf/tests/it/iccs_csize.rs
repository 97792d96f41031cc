//! The embedded ICCS C helpers compile without warnings under the guide, harness and
//! performance flags, and add at most 16 KiB to a candidate library's loadable segments.

use ngcc_perf::csrc;
use object::read::elf::{ElfFile64, ProgramHeader};
use object::{Endianness, Object, ObjectSymbol};
use std::path::Path;
use std::process::Command;

/// The flag sets a candidate may be built with (iccs-api.md §5.3): the guide's reference
/// flags, the harness defaults and (x86-64 only) the guide's performance flags.
fn flag_sets() -> Vec<(&'static str, Vec<&'static str>)> {
    let mut sets = vec![
        (
            "guide",
            vec!["-std=c99", "-Wpedantic", "-Wall", "-Wextra", "-O2", "-fPIC"],
        ),
        ("harness", vec!["-O2", "-fPIC", "-std=gnu11", "-Wall"]),
    ];
    if cfg!(target_arch = "x86_64") {
        sets.push((
            "performance",
            vec![
                "-O3",
                "-march=x86-64",
                "-mavx2",
                "-mtune=native",
                "-flto",
                "-fomit-frame-pointer",
                "-std=c99",
                "-Wpedantic",
                "-Wall",
                "-Wextra",
                "-fPIC",
            ],
        ));
    }
    sets
}

const BUDGET: u64 = 16 * 1024;

/// A stand-in candidate: some code and data of its own, no ICCS calls.
const TINY_C: &str = r#"
static const unsigned char table[64] = { 1, 2, 3 };
int candidate_op(unsigned char *out, int n) {
    int i;
    for (i = 0; i < n && i < 64; i++) out[i] = (unsigned char)(table[i] ^ i);
    return 0;
}
"#;

/// A scratch folder with the helper sources. gcc and g++ are prerequisites of the test
/// command (README), so a missing compiler fails the test instead of passing it unrun.
fn sources_for(compiler: &str) -> tempfile::TempDir {
    let ok = Command::new(compiler)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        ok,
        "{compiler} not found: it is a prerequisite of these tests"
    );
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in [
        ("auxfunc.h", csrc::AUXFUNC_H),
        ("auxfunc.c", csrc::AUXFUNC_C),
        ("drng.h", csrc::DRNG_H),
        ("drng.c", csrc::DRNG_C),
        ("iccs_sm3.h", csrc::ICCS_SM3_H),
        ("iccs_sm3.c", csrc::ICCS_SM3_C),
        ("tiny.c", TINY_C),
    ] {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    dir
}

fn compile(compiler: &str, dir: &Path, args: &[&str]) -> String {
    let out = Command::new(compiler)
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success(),
        "{compiler} {args:?} failed:\n{stderr}"
    );
    stderr
}

fn gcc(dir: &Path, args: &[&str]) -> String {
    compile("gcc", dir, args)
}

/// Sum of p_memsz over the PT_LOAD program headers.
fn load_size(path: &Path) -> u64 {
    let data = std::fs::read(path).unwrap();
    let elf = ElfFile64::<Endianness>::parse(&*data).unwrap();
    let e = elf.endian();
    elf.elf_program_headers()
        .iter()
        .filter(|p| p.p_type(e) == object::elf::PT_LOAD)
        .map(|p| p.p_memsz(e))
        .sum()
}

#[test]
fn helpers_compile_without_warnings() {
    let dir = sources_for("gcc");
    for (set, flags) in flag_sets() {
        for file in ["auxfunc.c", "drng.c", "iccs_sm3.c"] {
            let mut args = flags.clone();
            args.extend(["-c", file, "-o", "out.o"]);
            let warnings = gcc(dir.path(), &args);
            assert!(warnings.is_empty(), "{file} with {set} flags:\n{warnings}");
        }
    }
}

#[test]
fn helpers_add_at_most_16_kib_to_a_library() {
    let dir = sources_for("gcc");
    for (set, flags) in flag_sets() {
        let link = ["-shared", "-Wl,-z,noexecstack", "-Wl,-z,relro"];
        let mut base = flags.clone();
        base.extend(link);
        base.extend(["tiny.c", "-o", "libbase.so"]);
        gcc(dir.path(), &base);
        let mut with = flags.clone();
        with.extend(link);
        with.extend([
            "tiny.c",
            "auxfunc.c",
            "drng.c",
            "iccs_sm3.c",
            "-o",
            "libwith.so",
        ]);
        gcc(dir.path(), &with);
        let (b, w) = (
            load_size(&dir.path().join("libbase.so")),
            load_size(&dir.path().join("libwith.so")),
        );
        let delta = w.saturating_sub(b);
        println!(
            "{set} flags: PT_LOAD p_memsz {b} -> {w} bytes, +{delta} ({:.1} KiB)",
            delta as f64 / 1024.0
        );
        assert!(
            delta <= BUDGET,
            "{set} flags: the helpers add {delta} bytes (> {BUDGET})"
        );
    }
}

/// Hash builds link drng.c without auxfunc.c: the shared SM3 core is all it needs, and the
/// core's `ngcc_iccs_sm3_*` functions stay out of the dynamic symbol table.
#[test]
fn drng_links_with_the_sm3_core_alone() {
    let dir = sources_for("gcc");
    gcc(
        dir.path(),
        &[
            "-std=c99",
            "-O2",
            "-fPIC",
            "-shared",
            "-Wl,--no-undefined",
            "drng.c",
            "iccs_sm3.c",
            "-o",
            "libdrng.so",
        ],
    );
    let data = std::fs::read(dir.path().join("libdrng.so")).unwrap();
    let elf = ElfFile64::<Endianness>::parse(&*data).unwrap();
    let exported: Vec<String> = elf
        .dynamic_symbols()
        .filter(|s| s.is_definition())
        .filter_map(|s| s.name().ok().map(String::from))
        .collect();
    assert!(
        exported.iter().any(|n| n == "get_random_number"),
        "{exported:?}"
    );
    assert!(
        !exported.iter().any(|n| n.starts_with("ngcc_iccs_sm3_")),
        "the SM3 core is exported: {exported:?}"
    );
}

#[test]
fn headers_declare_c_linkage_for_cpp() {
    let dir = sources_for("g++");
    let user = "#include \"auxfunc.h\"\n#include \"drng.h\"\n\
        extern \"C\" DRNG_ctx drng_algorithm;\n\
        int op(unsigned char *d) { get_random_number(&drng_algorithm, d, 8); \
        return sm3hash(256, d, 8, d) | pseudohash(512, d, 0, d) | pseudoXOF(8, d, 0, d); }\n";
    std::fs::write(dir.path().join("user.cpp"), user).unwrap();
    let warnings = compile(
        "g++",
        dir.path(),
        &[
            "-std=gnu++17",
            "-Wall",
            "-Wextra",
            "-c",
            "user.cpp",
            "-o",
            "user.o",
        ],
    );
    assert!(warnings.is_empty(), "{warnings}");
    let nm = Command::new("nm").arg(dir.path().join("user.o")).output();
    if let Ok(nm) = nm {
        let syms = String::from_utf8_lossy(&nm.stdout);
        for f in ["sm3hash", "pseudohash", "pseudoXOF", "get_random_number"] {
            assert!(
                syms.lines().any(|l| l.ends_with(&format!(" U {f}"))),
                "{f} is mangled:\n{syms}"
            );
        }
    }
}
