//! Uppercase hex as the KAT files and the `iccs` commands print it.

pub fn upper(bytes: &[u8]) -> String {
    hex::encode_upper(bytes)
}

/// Parses hex (either case); `""` is the empty string.
pub fn parse(text: &str) -> anyhow::Result<Vec<u8>> {
    let t = text.trim();
    if !t.len().is_multiple_of(2) {
        anyhow::bail!("hex string has an odd number of digits ({})", t.len());
    }
    hex::decode(t).map_err(|e| anyhow::anyhow!("not a hex string: {e}"))
}
