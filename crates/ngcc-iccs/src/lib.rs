//! Pure Rust models of the ICCS helpers and KAT generators. No I/O.
//!
//! * [`sm3`], [`hmac`], [`pseudo`]: SM3 over bit strings (with the official length-field
//!   quirk), HMAC-SM3, `pseudohash` and `pseudoXOF` (iccs-api.md §2).
//! * [`hash_drbg`]: the ICCS DRNG, an SM3 Hash_DRBG (§3).
//! * [`ctr_drbg`], [`hqc_prng`]: the NIST AES-256 CTR_DRBG and HQC SHAKE-256 KAT generators
//!   that PQClean's KAT programs use.
//! * [`vectors`]: the published and model test values, shared by tests and self-tests.

pub mod bits;
pub mod ctr_drbg;
mod error;
pub mod hash_drbg;
pub mod hmac;
pub mod hqc_prng;
pub mod pseudo;
pub mod sm3;
pub mod vectors;

pub use error::IccsError;
