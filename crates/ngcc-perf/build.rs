//! Compiles the embedded ICCS helpers (csrc/iccs) into a static library so the binary can
//! check them in-process against the Rust model, the memcheck client requests of the ct
//! phase (csrc/ct) into another and the callgrind ones of the count phase (csrc/count) into a
//! third.

fn main() {
    let dir = "csrc/iccs";
    for f in [
        "auxfunc.c",
        "auxfunc.h",
        "drng.c",
        "drng.h",
        "iccs_sm3.c",
        "iccs_sm3.h",
    ] {
        println!("cargo:rerun-if-changed={dir}/{f}");
    }
    println!("cargo:rerun-if-changed=build.rs");
    cc::Build::new()
        .file(format!("{dir}/auxfunc.c"))
        .file(format!("{dir}/drng.c"))
        .file(format!("{dir}/iccs_sm3.c"))
        .include(dir)
        .flag("-std=c99")
        .opt_level(2)
        .compile("ngcc_iccs_helpers");
    // memcheck client requests (ct phase): the system's valgrind headers when present.
    println!("cargo:rerun-if-changed=csrc/ct/ct_client.c");
    let mut ct = cc::Build::new();
    ct.file("csrc/ct/ct_client.c").flag("-std=c99").opt_level(2);
    let header = std::path::Path::new("/usr/include/valgrind/memcheck.h");
    if header.is_file() {
        ct.define("NGCC_HAVE_MEMCHECK", None);
    } else {
        println!(
            "cargo:warning=valgrind/memcheck.h not found: the ct taint job will refuse to run"
        );
    }
    ct.compile("ngcc_ct_client");
    // callgrind client requests (count phase): the system's valgrind headers when present.
    println!("cargo:rerun-if-changed=csrc/count/count_client.c");
    let mut count = cc::Build::new();
    count
        .file("csrc/count/count_client.c")
        .flag("-std=c99")
        .opt_level(2);
    if std::path::Path::new("/usr/include/valgrind/callgrind.h").is_file() {
        count.define("NGCC_HAVE_CALLGRIND", None);
    } else {
        println!("cargo:warning=valgrind/callgrind.h not found: the count job will refuse to run");
    }
    count.compile("ngcc_count_client");
}
