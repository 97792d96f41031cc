//! Reading a package's text files without letting the package choose what we read: only
//! regular files inside the package folder, opened without following a link and without
//! blocking (a FIFO or a device never stalls or floods the import), at most `MAX_BYTES`
//! each. A build file that `include`s `/dev/zero` or `/etc/os-release` gets a listed
//! problem, never the file's content.

use anyhow::{Result, bail};
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Component, Path, PathBuf};

/// The largest build file, README or source the importer reads (the largest corpus file is
/// under 200 KiB; a generated table of a few MiB is still read).
pub const MAX_BYTES: u64 = 8 << 20;

/// `path` made absolute and free of `.`/`..` without the file system.
fn lexical(path: &Path) -> PathBuf {
    let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut out = PathBuf::new();
    for c in abs.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// Why `path` may not be read as part of `package`, if it may not.
pub fn outside(path: &Path, package: &Path) -> Option<String> {
    let pkg = package.canonicalize().unwrap_or_else(|_| lexical(package));
    let lex = lexical(path);
    if !lex.starts_with(&pkg) && !lex.starts_with(lexical(package)) {
        return Some(format!("{} is outside the package", path.display()));
    }
    // Every folder on the way must be a real folder of the package (no link leaving it).
    match lex.parent().map(Path::canonicalize) {
        Some(Ok(dir)) if dir.starts_with(&pkg) => None,
        Some(Ok(dir)) => Some(format!(
            "{} lies in {}, outside the package (a link)",
            path.display(),
            dir.display()
        )),
        _ => Some(format!("{}: no such folder", path.display())),
    }
}

/// The bytes of a regular file inside `package`, or why not.
pub fn read(path: &Path, package: &Path) -> Result<Vec<u8>> {
    if let Some(why) = outside(path, package) {
        bail!("{why}: not read");
    }
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| anyhow::anyhow!("{}: {e} (links are never followed)", path.display()))?;
    let meta = file.metadata()?;
    if !meta.file_type().is_file() {
        bail!("{} is not a regular file: not read", path.display());
    }
    if meta.len() > MAX_BYTES {
        bail!(
            "{} is {} bytes, more than the {MAX_BYTES} read of any package file: not read",
            path.display(),
            meta.len()
        );
    }
    let mut out = Vec::new();
    file.take(MAX_BYTES + 1).read_to_end(&mut out)?;
    if out.len() as u64 > MAX_BYTES {
        bail!("{} grew past {MAX_BYTES} bytes: not read", path.display());
    }
    Ok(out)
}

/// `read` as (lossy) text.
pub fn read_text(path: &Path, package: &Path) -> Result<String> {
    Ok(String::from_utf8_lossy(&read(path, package)?).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_regular_files_inside_the_package() {
        let d = tempfile::tempdir().unwrap();
        let pkg = d.path().join("pkg");
        std::fs::create_dir_all(pkg.join("sub")).unwrap();
        std::fs::write(pkg.join("sub/Makefile"), "all:\n").unwrap();
        std::fs::write(d.path().join("secret"), "host value").unwrap();
        std::os::unix::fs::symlink(d.path().join("secret"), pkg.join("link")).unwrap();
        std::os::unix::fs::symlink(d.path(), pkg.join("dirlink")).unwrap();
        assert_eq!(
            read_text(&pkg.join("sub/Makefile"), &pkg).unwrap(),
            "all:\n"
        );
        for bad in [
            pkg.join("link"),
            pkg.join("dirlink/secret"),
            pkg.join("sub/../../secret"),
            PathBuf::from("/etc/os-release"),
            PathBuf::from("/dev/zero"),
        ] {
            let e = read_text(&bad, &pkg).unwrap_err().to_string();
            assert!(!e.contains("host value"), "{e}");
        }
        // A FIFO inside the package never blocks the read.
        let fifo = pkg.join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert!(read_text(&fifo, &pkg).is_err());
    }
}
