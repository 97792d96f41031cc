//! The C compiler: which one, and its identity for the cache key and the records.

use std::process::Command;
use std::sync::OnceLock;

/// `$CC` if set, else `gcc`.
pub fn program() -> String {
    std::env::var("CC")
        .ok()
        .filter(|s| !s.trim().is_empty())
        .unwrap_or_else(|| "gcc".into())
}

/// First line of `cc --version`, e.g. `gcc (Debian 12.2.0-14+deb12u1) 12.2.0`.
pub fn version_line() -> String {
    static LINE: OnceLock<String> = OnceLock::new();
    LINE.get_or_init(|| {
        Command::new(program())
            .arg("--version")
            .output()
            .ok()
            .and_then(|o| String::from_utf8(o.stdout).ok())
            .and_then(|s| s.lines().next().map(str::to_string))
            .unwrap_or_else(|| "unknown compiler".into())
    })
    .clone()
}

/// Short form for metadata blocks, e.g. `gcc 12.2.0`.
pub fn short_name() -> String {
    let line = version_line();
    let name = program();
    let base = std::path::Path::new(&name)
        .file_name()
        .map(|s| s.to_string_lossy().to_string())
        .unwrap_or(name);
    match line.split_whitespace().last() {
        Some(v) if v.chars().next().is_some_and(|c| c.is_ascii_digit()) => format!("{base} {v}"),
        _ => base,
    }
}
