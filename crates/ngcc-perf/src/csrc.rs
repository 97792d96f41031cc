//! The embedded C sources (the only C in the repository lives under `csrc/`).

/// ICCS `auxfunc.h`: sm3hash, pseudohash, pseudoXOF.
pub const AUXFUNC_H: &str = include_str!("../csrc/iccs/auxfunc.h");
/// ICCS `auxfunc.c` (malloc-free; prints the official -4 message to stderr).
pub const AUXFUNC_C: &str = include_str!("../csrc/iccs/auxfunc.c");
/// ICCS `drng.h`: `DRNG_ctx`, `SEEDLEN`, init/get_random_number.
pub const DRNG_H: &str = include_str!("../csrc/iccs/drng.h");
/// ICCS `drng.c`: the SM3 Hash_DRBG, self-contained (hash builds omit auxfunc.c).
pub const DRNG_C: &str = include_str!("../csrc/iccs/drng.c");
