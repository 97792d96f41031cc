//! Candidate manifests (`candidate.toml`) and importers.

pub mod discover;
pub(crate) mod exclude;
pub(crate) mod import;
pub mod kat_manifest;
pub(crate) mod manifest;
pub(crate) mod ngcc;
pub(crate) mod pqclean;

pub use manifest::{Api, Candidate, Instance, KatSpec, Kind};
