//! Candidate manifests (`candidate.toml`) and importers.

pub mod import;
