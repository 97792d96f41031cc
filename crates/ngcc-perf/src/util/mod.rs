//! Small shared helpers: atomic file writes, hashing, JSON in the reference layout.

pub mod fsx;
pub mod hexs;
pub mod time;

pub use fsx::{atomic_write, read_json, sha256_file, sha256_hex, write_json};

/// An error that carries its own exit code (e.g. 1 = "a check failed", 2 = bad input).
#[derive(Debug, thiserror::Error)]
#[error("{msg}")]
pub struct Failure {
    pub code: u8,
    pub msg: String,
}

impl Failure {
    pub fn usage(msg: impl Into<String>) -> anyhow::Error {
        Failure {
            code: 2,
            msg: msg.into(),
        }
        .into()
    }
}
