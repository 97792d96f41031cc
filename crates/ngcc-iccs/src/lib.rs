//! Pure Rust models of the ICCS helpers and KAT generators. No I/O.
