//! The C wrappers on their own: a tiny library with ICCS-named helpers in separate objects,
//! relinked with `--wrap` exactly as the profile phase does, then driven through the
//! exported `ngcc_prof_*` interface: accounting only while enabled, nested calls counted
//! once (as the outer call), call shapes, take-back of an operation, overhead rounds.

use ngcc_perf::candidate::Api;
use ngcc_perf::profile::{relink::WRAPPER_CFLAGS, symbols};
use std::ffi::{CStr, c_char, c_int};
use std::path::{Path, PathBuf};
use std::process::Command;

#[repr(C)]
#[derive(Clone, Copy)]
struct Entry {
    func: *const c_char,
    in_bits: u64,
    out_bits: u64,
    calls: u64,
    ticks: u64,
}

fn cc(args: &[&str], dir: &Path) {
    let out = Command::new("gcc")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("gcc runs");
    assert!(
        out.status.success(),
        "gcc {}:\n{}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
}

const XOF_C: &str = r#"
volatile unsigned long long xof_sink;
int pseudoXOF(unsigned long long out_bits, const unsigned char *m, unsigned long long in_bits,
              unsigned char *out) {
    unsigned long long i, x = out_bits ^ in_bits;
    for (i = 0; i < 2000; i++) { x = x * 6364136223846793005ULL + 1; }
    xof_sink = x; (void)m; out[0] = (unsigned char)x;
    return 0;
}
"#;

/// sm3hash calls pseudoXOF across objects: a nested wrapped call.
const SM3_C: &str = r#"
int pseudoXOF(unsigned long long, const unsigned char *, unsigned long long, unsigned char *);
int sm3hash(int d, const unsigned char *m, unsigned long long in_bits, unsigned char *out) {
    return pseudoXOF(512, m, in_bits, out) + (d == 256 ? 0 : -4);
}
"#;

const CALLER_C: &str = r#"
int pseudoXOF(unsigned long long, const unsigned char *, unsigned long long, unsigned char *);
int sm3hash(int, const unsigned char *, unsigned long long, unsigned char *);
__attribute__((visibility("default"))) int ngcc_test_run(void) {
    unsigned char m[64] = {1}, out[128];
    int rc = sm3hash(256, m, 512, out);
    rc |= pseudoXOF(1024, m, 264, out);
    rc |= pseudoXOF(1024, m, 264, out);
    return rc;
}
"#;

fn build(dir: &Path) -> PathBuf {
    for (name, text) in [
        ("xof.c", XOF_C),
        ("sm3.c", SM3_C),
        ("caller.c", CALLER_C),
        ("ngcc_prof.c", ngcc_perf::csrc::PROF_C),
    ] {
        std::fs::write(dir.join(name), text).unwrap();
    }
    let mut objects = Vec::new();
    for src in ["xof", "sm3", "caller"] {
        cc(
            &[
                "-O2",
                "-fPIC",
                "-fvisibility=hidden",
                "-c",
                &format!("{src}.c"),
            ],
            dir,
        );
        objects.push(dir.join(format!("{src}.o")));
    }
    let syms = symbols::scan_objects(&objects).unwrap();
    let plan = symbols::plan_wraps(Api::Iccs, None, &syms);
    assert_eq!(plan.symbols(), ["sm3hash", "pseudoXOF"]);
    std::fs::write(
        dir.join("ngcc_prof_wraps.h"),
        symbols::wraps_header("test", &plan),
    )
    .unwrap();
    let mut args: Vec<String> = WRAPPER_CFLAGS.iter().map(|s| s.to_string()).collect();
    args.extend(["-Werror", "-I.", "-c", "ngcc_prof.c"].map(String::from));
    cc(&args.iter().map(String::as_str).collect::<Vec<_>>(), dir);
    let mut link: Vec<String> = vec!["-shared".into(), "-o".into(), "libt.so".into()];
    link.extend(["xof.o", "sm3.o", "caller.o", "ngcc_prof.o"].map(String::from));
    link.extend(plan.symbols().iter().map(|s| format!("-Wl,--wrap={s}")));
    cc(&link.iter().map(String::as_str).collect::<Vec<_>>(), dir);
    dir.join("libt.so")
}

struct Lib {
    lib: libloading::Library,
}

impl Lib {
    fn f<T: Copy>(&self, name: &[u8]) -> T {
        // SAFETY: test-only symbol lookups with the types ngcc_prof.c defines.
        unsafe { *self.lib.get::<T>(name).unwrap() }
    }
    fn run(&self) {
        let f: unsafe extern "C" fn() -> c_int = self.f(b"ngcc_test_run\0");
        // SAFETY: plain C function without arguments.
        assert_eq!(unsafe { f() }, 0);
    }
    fn enable(&self, on: bool) {
        let f: unsafe extern "C" fn(c_int) = self.f(b"ngcc_prof_enable\0");
        // SAFETY: sets a flag.
        unsafe { f(c_int::from(on)) }
    }
    fn entries(&self) -> Vec<(String, u64, u64, u64, u64)> {
        let f: unsafe extern "C" fn(*mut Entry, usize, *mut u64) -> usize =
            self.f(b"ngcc_prof_entries\0");
        let mut buf = vec![
            Entry {
                func: std::ptr::null(),
                in_bits: 0,
                out_bits: 0,
                calls: 0,
                ticks: 0
            };
            64
        ];
        let mut overflow = 7u64;
        // SAFETY: buf holds 64 entries.
        let n = unsafe { f(buf.as_mut_ptr(), 64, &mut overflow) };
        assert_eq!(overflow, 0);
        let mut v: Vec<_> = buf[..n]
            .iter()
            .map(|e| {
                // SAFETY: names are static strings of the library.
                let name = unsafe { CStr::from_ptr(e.func) }
                    .to_string_lossy()
                    .into_owned();
                (name, e.in_bits, e.out_bits, e.calls, e.ticks)
            })
            .collect();
        v.sort();
        v
    }
    fn call0(&self, name: &[u8]) {
        let f: unsafe extern "C" fn() = self.f(name);
        // SAFETY: no-argument C functions of ngcc_prof.c.
        unsafe { f() }
    }
}

#[test]
fn wrappers_count_outer_calls_only_while_enabled() {
    let dir = tempfile::tempdir().unwrap();
    let path = build(dir.path());
    // SAFETY: our own test library.
    let lib = Lib {
        lib: unsafe { libloading::Library::new(&path) }.unwrap(),
    };
    let src: unsafe extern "C" fn() -> *const c_char = lib.f(b"ngcc_prof_tick_source\0");
    // SAFETY: static string.
    let source = unsafe { CStr::from_ptr(src()) }
        .to_string_lossy()
        .into_owned();
    assert!(
        ["rdtsc", "cntvct_el0", "clock_gettime_ns"].contains(&source.as_str()),
        "{source}"
    );

    lib.run();
    assert!(lib.entries().is_empty(), "disabled: nothing recorded");

    lib.enable(true);
    lib.run();
    lib.enable(false);
    lib.run();
    let e = lib.entries();
    let shapes: Vec<(&str, u64, u64, u64)> =
        e.iter().map(|x| (x.0.as_str(), x.1, x.2, x.3)).collect();
    // sm3hash's inner pseudoXOF(512 bits) is inside the outer call: not a row of its own.
    assert_eq!(
        shapes,
        [("pseudoXOF", 264, 1024, 2), ("sm3hash", 512, 256, 1)]
    );
    assert!(e.iter().all(|x| x.4 > 0), "ticks recorded: {e:?}");

    // Take-back of one operation restores the table exactly.
    let before = lib.entries();
    lib.call0(b"ngcc_prof_mark\0");
    lib.enable(true);
    lib.run();
    lib.enable(false);
    assert_ne!(lib.entries(), before);
    let rollback: unsafe extern "C" fn() -> c_int = lib.f(b"ngcc_prof_rollback\0");
    // SAFETY: no arguments.
    assert_eq!(unsafe { rollback() }, 1);
    assert_eq!(lib.entries(), before);

    // Overhead rounds: direct, wrapped and recorded ticks; wrapped costs more than direct.
    let overhead: unsafe extern "C" fn(u64, *mut u64) = lib.f(b"ngcc_prof_overhead\0");
    let mut out = [0u64; 3];
    // SAFETY: three output slots.
    unsafe { overhead(10_000, out.as_mut_ptr()) };
    assert!(out[0] > 0 && out[1] > out[0] && out[2] > 0, "{out:?}");
    assert!(
        lib.entries().is_empty(),
        "the overhead probe leaves an empty table"
    );

    lib.call0(b"ngcc_prof_reset\0");
    assert!(lib.entries().is_empty());
}

#[test]
fn the_wrapper_file_compiles_cleanly_with_every_nist_wrapper() {
    let dir = tempfile::tempdir().unwrap();
    let plan = symbols::WrapPlan {
        wraps: symbols::helpers(Api::Nist)
            .into_iter()
            .chain(symbols::helpers(Api::Iccs))
            .map(|h| symbols::Wrap {
                symbol: h.base.clone(),
                helper: h,
            })
            .collect(),
        unreached: vec![],
    };
    std::fs::write(
        dir.path().join("ngcc_prof_wraps.h"),
        symbols::wraps_header("all", &plan),
    )
    .unwrap();
    std::fs::write(dir.path().join("ngcc_prof.c"), ngcc_perf::csrc::PROF_C).unwrap();
    let mut args: Vec<&str> = WRAPPER_CFLAGS.to_vec();
    args.extend(["-Werror", "-I.", "-c", "ngcc_prof.c"]);
    cc(&args, dir.path());
    // And with no wrapper at all (an instance that calls no helper).
    std::fs::write(
        dir.path().join("ngcc_prof_wraps.h"),
        symbols::wraps_header("none", &symbols::WrapPlan::default()),
    )
    .unwrap();
    cc(&args, dir.path());
}
