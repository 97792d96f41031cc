//! The embedded C sources (the only C in the repository lives under `csrc/`).

/// The uniform ABI header (metadata block layout).
pub const SHIM_H: &str = include_str!("../csrc/shim/ngcc_shim.h");
/// The link shim, compiled into every library with a generated `ngcc_shim_config.h`.
pub const SHIM_C: &str = include_str!("../csrc/shim/ngcc_shim.c");
/// Harness-owned randombytes.h for NIST/PQClean builds.
pub const RANDOMBYTES_H: &str = include_str!("../csrc/shim/randombytes.h");

// Placeholders until the ICCS helpers land (replaced by csrc/iccs/*).
pub const AUXFUNC_H: &str = "";
pub const AUXFUNC_C: &str = "";
pub const DRNG_H: &str = "";
pub const DRNG_C: &str = "";
