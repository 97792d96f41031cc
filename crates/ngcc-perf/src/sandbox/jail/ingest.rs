//! Files a job left in its scratch folder, copied into the run directory by the orchestrator
//! (who then hashes them itself). The scratch folder was writable by candidate code, so
//! nothing there is trusted: links are never followed, only regular files with plain names
//! are taken, and the total is capped.

use anyhow::{Context, Result, bail};
use std::ffi::CString;
use std::io::Read;
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// Letters, digits, `.`, `_`, `-`, not starting with a dot.
pub fn plain_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
}

fn open_nofollow(dir: Option<&OwnedFd>, path: &[u8], flags: libc::c_int) -> Option<OwnedFd> {
    let c = CString::new(path).ok()?;
    let base = dir.map_or(libc::AT_FDCWD, std::os::fd::AsRawFd::as_raw_fd);
    // SAFETY: openat with a NUL-terminated name; the fd is ours.
    let fd = unsafe {
        libc::openat(
            base,
            c.as_ptr(),
            flags | libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK,
        )
    };
    (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Copies the regular files directly in `from` into `to` (atomically each), at most
/// `max_bytes` in all. Returns the names copied (sorted) and the entries refused.
pub fn copy_out(from: &Path, to: &Path, max_bytes: u64) -> Result<(Vec<String>, Vec<String>)> {
    let Some(dir) = open_nofollow(
        None,
        from.as_os_str().as_bytes(),
        libc::O_RDONLY | libc::O_DIRECTORY,
    ) else {
        // Absent (the job wrote nothing) or not a plain folder.
        return Ok((Vec::new(), Vec::new()));
    };
    let mut names: Vec<String> = std::fs::read_dir(from)
        .with_context(|| format!("listing {}", from.display()))?
        .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
        .collect();
    names.sort();
    let (mut copied, mut refused) = (Vec::new(), Vec::new());
    let mut total = 0u64;
    for name in names {
        if !plain_name(&name) {
            refused.push(name);
            continue;
        }
        let Some(fd) = open_nofollow(Some(&dir), name.as_bytes(), libc::O_RDONLY) else {
            refused.push(name);
            continue;
        };
        let mut f = std::fs::File::from(fd);
        let meta = f.metadata()?;
        if !meta.is_file() {
            refused.push(name);
            continue;
        }
        total += meta.len();
        if total > max_bytes {
            bail!("{} holds more than {} MiB", from.display(), max_bytes >> 20);
        }
        let mut bytes = Vec::with_capacity(meta.len() as usize);
        f.by_ref().take(meta.len()).read_to_end(&mut bytes)?;
        crate::util::atomic_write(&to.join(&name), &bytes)?;
        copied.push(name);
    }
    Ok((copied, refused))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_and_odd_names_stay_behind() {
        let t = tempfile::tempdir().unwrap();
        let from = t.path().join("from");
        std::fs::create_dir_all(&from).unwrap();
        std::fs::write(from.join("kat_1.rsp"), b"ok").unwrap();
        std::fs::write(from.join(".hidden"), b"x").unwrap();
        std::os::unix::fs::symlink("/etc/hostname", from.join("link.rsp")).unwrap();
        std::fs::create_dir(from.join("sub")).unwrap();
        let to = t.path().join("to");
        let (copied, refused) = copy_out(&from, &to, 1 << 20).unwrap();
        assert_eq!(copied, ["kat_1.rsp"]);
        assert_eq!(refused, [".hidden", "link.rsp", "sub"]);
        assert_eq!(std::fs::read(to.join("kat_1.rsp")).unwrap(), b"ok");
        assert!(!to.join("link.rsp").exists());
    }
}
