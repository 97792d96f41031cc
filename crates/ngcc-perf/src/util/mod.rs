//! Small shared helpers: atomic file writes, hashing, JSON in the reference layout.

pub mod fsx;
pub(crate) mod hexs;
pub(crate) mod progress;
pub(crate) mod time;

pub use fsx::{atomic_write, read_json, sha256_file, sha256_hex, write_json};

/// Last `n` characters of `s` (stderr kept in records and logs).
pub fn tail(s: &str, n: usize) -> String {
    let start = s
        .char_indices()
        .rev()
        .nth(n.saturating_sub(1))
        .map_or(0, |(i, _)| i);
    s[start..].to_string()
}

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

#[cfg(test)]
mod tests {
    #[test]
    fn tail_keeps_the_end() {
        assert_eq!(super::tail("abcdef", 3), "def");
        assert_eq!(super::tail("ab", 10), "ab");
        assert_eq!(super::tail("αβγ", 2), "βγ");
    }
}
