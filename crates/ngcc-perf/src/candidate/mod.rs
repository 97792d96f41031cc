//! Candidate manifests (`candidate.toml`) and importers.

pub mod discover;
pub mod import;
pub mod manifest;
pub mod ngcc;
pub mod pqclean;

pub use manifest::{Api, Candidate, Instance, KatSpec, Kind};
