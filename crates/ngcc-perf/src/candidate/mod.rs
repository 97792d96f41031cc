//! Candidate manifests (`candidate.toml`) and importers.

pub mod discover;
pub(crate) mod import;
pub(crate) mod manifest;
pub(crate) mod pqclean;

pub use manifest::{Api, Candidate, Instance, KatSpec, Kind};
