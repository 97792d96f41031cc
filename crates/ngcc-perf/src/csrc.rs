//! The embedded C sources (the only C in the repository lives under `csrc/`).

/// The uniform ABI header (metadata block layout).
pub const SHIM_H: &str = include_str!("../csrc/shim/ngcc_shim.h");
/// The link shim, compiled into every library with a generated `ngcc_shim_config.h`.
pub const SHIM_C: &str = include_str!("../csrc/shim/ngcc_shim.c");
/// Harness-owned randombytes.h for NIST/PQClean builds.
pub const RANDOMBYTES_H: &str = include_str!("../csrc/shim/randombytes.h");

/// ICCS `auxfunc.h`: sm3hash, pseudohash, pseudoXOF.
pub const AUXFUNC_H: &str = include_str!("../csrc/iccs/auxfunc.h");
/// ICCS `auxfunc.c` (malloc-free; prints the official -4 message to stderr).
pub const AUXFUNC_C: &str = include_str!("../csrc/iccs/auxfunc.c");
/// ICCS `drng.h`: `DRNG_ctx`, `SEEDLEN`, init/get_random_number.
pub const DRNG_H: &str = include_str!("../csrc/iccs/drng.h");
/// ICCS `drng.c`: the SM3 Hash_DRBG (hash builds omit auxfunc.c; it needs only the SM3 core).
pub const DRNG_C: &str = include_str!("../csrc/iccs/drng.c");
/// `iccs_sm3.h`: the SM3 core shared by our `auxfunc.c` and `drng.c` (`ngcc_iccs_sm3_*`,
/// hidden; not part of the ICCS API).
pub const ICCS_SM3_H: &str = include_str!("../csrc/iccs/iccs_sm3.h");
/// `iccs_sm3.c`: compiled into every library that gets our `auxfunc.c` or `drng.c`.
pub const ICCS_SM3_C: &str = include_str!("../csrc/iccs/iccs_sm3.c");

/// `helper_hash.h`: the instance header that makes one ICCS helper a hash instance (baseline
/// phase; the helper and its width are defines of the generated manifest).
pub const HELPER_HASH_H: &str = include_str!("../csrc/iccs/helper_hash.h");
/// `helper_hash.c`: `CryptHash` over that helper.
pub const HELPER_HASH_C: &str = include_str!("../csrc/iccs/helper_hash.c");

/// The timing program of `ngcc-perf iccs bench` (built against each set of ICCS helpers).
pub const HELPERS_BENCH_C: &str = include_str!("../csrc/bench/helpers_bench.c");
/// The minimal C timing loop `ngcc-perf bench overhead` compares the harness with.
pub const BENCH_OVERHEAD_C: &str = include_str!("../csrc/bench/overhead.c");
/// Profiling wrappers (`--wrap` targets, call table, tick source); includes the generated
/// per-instance `ngcc_prof_wraps.h`.
pub const PROF_C: &str = include_str!("../csrc/prof/ngcc_prof.c");
/// The memory phase's heap recorder (`--wrap` targets of the allocator, counters per call).
pub const HEAP_C: &str = include_str!("../csrc/heap/ngcc_heap.c");
