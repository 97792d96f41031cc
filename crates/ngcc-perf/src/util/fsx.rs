//! Atomic writes (temp file + rename) and JSON in the reference harness layout
//! (indent 1, trailing newline).

use anyhow::{Context, Result};
use serde::{Serialize, de::DeserializeOwned};
use sha2::{Digest, Sha256};
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// Called after every atomic write (the run journal registers itself here). Process state,
/// not a setting: `util` sits below `journal` and cannot call it, so the journal registers
/// its observer once when a run directory is opened; nothing reads it as configuration.
static WRITE_HOOK: std::sync::OnceLock<fn(&Path, &[u8])> = std::sync::OnceLock::new();

/// Registers the observer of every later `atomic_write` (once per process).
pub fn set_write_hook(hook: fn(&Path, &[u8])) {
    let _ = WRITE_HOOK.set(hook);
}

/// Writes `bytes` to `path` atomically: a crash leaves either the old file or the new one.
pub fn atomic_write(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let name = path
        .file_name()
        .context("path has no file name")?
        .to_string_lossy();
    // A unique name per writer (threads of one process may write the same path); the ".tmp"
    // suffix lets a resumed run sweep what a killed one left. Mode 0666 before umask, as
    // File::create: jailed children (another uid) read some of these files.
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".tmp")
        .permissions(std::fs::Permissions::from_mode(0o666))
        .tempfile_in(dir)
        .with_context(|| format!("creating a temporary file in {}", dir.display()))?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path)
        .map_err(|e| e.error)
        .with_context(|| format!("renaming onto {}", path.display()))?;
    if let Some(hook) = WRITE_HOOK.get() {
        hook(
            &std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf()),
            bytes,
        );
    }
    Ok(())
}

/// Serialises like Python's `json.dump(obj, f, indent=1)` plus a final newline.
pub fn to_json_bytes<T: Serialize + ?Sized>(value: &T) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    let fmt = serde_json::ser::PrettyFormatter::with_indent(b" ");
    let mut ser = serde_json::Serializer::with_formatter(&mut out, fmt);
    value.serialize(&mut ser)?;
    out.push(b'\n');
    Ok(out)
}

pub fn write_json<T: Serialize + ?Sized>(path: &Path, value: &T) -> Result<()> {
    atomic_write(path, &to_json_bytes(value)?)
}

pub fn read_json<T: DeserializeOwned>(path: &Path) -> Result<T> {
    let text = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    serde_json::from_slice(&text)
        .with_context(|| format!("{}: not valid JSON for this schema", path.display()))
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

pub fn sha256_file(path: &Path) -> Result<String> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    Ok(sha256_hex(&bytes))
}

/// The user's cache folder: `$XDG_CACHE_HOME`, else `$HOME/.cache`; `None` without either.
pub fn cache_home() -> Option<std::path::PathBuf> {
    std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".cache")))
}
