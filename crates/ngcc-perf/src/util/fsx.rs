//! Atomic writes (temp file + rename) and JSON in the reference harness layout
//! (indent 1, trailing newline).

use anyhow::{Context, Result};
use serde::{Serialize, de::DeserializeOwned};
use sha2::{Digest, Sha256};
use std::io::Write;
use std::path::Path;

/// Called after every atomic write (the run journal registers itself here).
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
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    {
        let mut f =
            std::fs::File::create(&tmp).with_context(|| format!("creating {}", tmp.display()))?;
        f.write_all(bytes)?;
        f.sync_all()?;
    }
    std::fs::rename(&tmp, path).with_context(|| format!("renaming onto {}", path.display()))?;
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
