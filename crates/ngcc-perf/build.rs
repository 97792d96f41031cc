//! Compiles the embedded ICCS helpers (csrc/iccs) into a static library so the binary can
//! check them in-process against the Rust model.

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
}
