//! The models against published vectors, the `sm3` crate and hand-written definitions: one
//! test binary (four would each link the crate and proptest again).

mod drbg;
mod kat_rngs;
mod pseudo;
#[path = "sm3.rs"]
mod sm3_model;
