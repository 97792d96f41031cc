//! Files a job left in its scratch folder, copied into the run directory by the orchestrator
//! (who then hashes them itself). The scratch folder was writable by candidate code, so
//! nothing there is trusted: links are never followed, only regular files with plain names
//! are taken, and the total is capped.

use anyhow::{Context, Result};
use std::ffi::CString;
use std::io::Read;
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
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

/// What a job may leave behind: which names, how many entries are looked at, and how large
/// one file and all of them may be.
pub struct Expect<'a> {
    pub names: &'a dyn Fn(&str) -> bool,
    pub max_entries: usize,
    pub max_file: u64,
    pub max_total: u64,
}

/// What ingest took and left.
#[derive(Debug, Default)]
pub struct Ingested {
    /// Names copied, sorted, with the SHA-256 of what was copied (hashed while streaming).
    pub copied: Vec<(String, String)>,
    /// Names refused, with why (at most [`LISTED`]; `refused_count` counts them all).
    pub refused: Vec<String>,
    pub refused_count: usize,
    /// Entries in the folder (counted, not all listed).
    pub entries: usize,
}

/// Refused names listed at most.
const LISTED: usize = 5;

impl Ingested {
    pub fn names(&self) -> Vec<String> {
        self.copied.iter().map(|(n, _)| n.clone()).collect()
    }

    /// One line when something was refused.
    pub fn note(&self) -> Option<String> {
        (self.refused_count > 0).then(|| {
            let more = self.refused_count.saturating_sub(self.refused.len());
            let tail = if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            };
            format!(
                "{} of {} entries left by the job were not taken: {}{tail}",
                self.refused_count,
                self.entries,
                self.refused.join(", ")
            )
        })
    }

    fn refuse(&mut self, name: &str, why: &str) {
        self.refused_count += 1;
        if self.refused.len() < LISTED {
            let shown: String = name.chars().take(60).collect();
            self.refused.push(format!("{shown:?} ({why})"));
        }
    }
}

/// Copies the regular files directly in `from` that `expect` allows into `to` (atomically
/// each), streaming and hashing: never more than a file's size when it was opened, no
/// sparse file (its size is not what it holds), no link, nothing past the bounds.
pub fn ingest(from: &Path, to: &Path, expect: &Expect) -> Result<Ingested> {
    let mut out = Ingested::default();
    let Some(dir) = open_nofollow(
        None,
        from.as_os_str().as_bytes(),
        libc::O_RDONLY | libc::O_DIRECTORY,
    ) else {
        // Absent (the job wrote nothing) or not a plain folder.
        return Ok(out);
    };
    let mut names = Vec::new();
    for e in std::fs::read_dir(from).with_context(|| format!("listing {}", from.display()))? {
        let Ok(e) = e else { continue };
        out.entries += 1;
        let name = e.file_name().to_string_lossy().into_owned();
        if names.len() < expect.max_entries {
            names.push(name);
        } else {
            out.refuse(&name, "too many entries");
        }
    }
    names.sort();
    let mut total = 0u64;
    for name in names {
        if !plain_name(&name) || !(expect.names)(&name) {
            out.refuse(&name, "not a file this job makes");
            continue;
        }
        let Some(fd) = open_nofollow(Some(&dir), name.as_bytes(), libc::O_RDONLY) else {
            out.refuse(&name, "not a plain file");
            continue;
        };
        let mut f = std::fs::File::from(fd);
        let meta = f.metadata()?;
        if !meta.is_file() {
            out.refuse(&name, "not a plain file");
            continue;
        }
        let len = meta.len();
        if meta.blocks() * 512 < len {
            out.refuse(&name, "sparse");
            continue;
        }
        if len > expect.max_file {
            out.refuse(&name, &format!("larger than {} MiB", expect.max_file >> 20));
            continue;
        }
        if total + len > expect.max_total {
            out.refuse(&name, "over the job's total");
            continue;
        }
        total += len;
        let sha = stream_copy(&mut f, len, &to.join(&name))?;
        out.copied.push((name, sha));
    }
    Ok(out)
}

/// Copies at most `len` bytes of `from` into `to` through a temporary file, hashing them.
fn stream_copy(from: &mut std::fs::File, len: u64, to: &Path) -> Result<String> {
    use sha2::Digest;
    use std::io::Write;
    let dir = to.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    let mut hash = sha2::Sha256::new();
    let mut buf = vec![0u8; 64 * 1024];
    let mut left = len;
    while left > 0 {
        let want = left.min(buf.len() as u64) as usize;
        let n = from.read(&mut buf[..want])?;
        if n == 0 {
            break;
        }
        hash.update(&buf[..n]);
        tmp.write_all(&buf[..n])?;
        left -= n as u64;
    }
    // Readable by the jails that load it later (a trial's setup): a temporary file is 0600.
    use std::os::unix::fs::PermissionsExt;
    tmp.as_file()
        .set_permissions(std::fs::Permissions::from_mode(0o644))?;
    tmp.persist(to)
        .with_context(|| format!("installing {}", to.display()))?;
    Ok(hex::encode(hash.finalize()))
}

/// Files with any plain name, at most `max_bytes` in all (and each); the names copied and
/// the entries refused.
pub fn copy_out(from: &Path, to: &Path, max_bytes: u64) -> Result<(Vec<String>, Vec<String>)> {
    let expect = Expect {
        names: &|_| true,
        max_entries: 4096,
        max_file: max_bytes,
        max_total: max_bytes,
    };
    let got = ingest(from, to, &expect)?;
    let refused = got
        .refused
        .iter()
        .map(|r| {
            r.split(" (")
                .next()
                .unwrap_or_default()
                .trim_matches('"')
                .to_string()
        })
        .collect();
    Ok((got.names(), refused))
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

    #[test]
    fn only_expected_names_few_entries_no_sparse_and_streamed_hashes() {
        let t = tempfile::tempdir().unwrap();
        let from = t.path().join("from");
        std::fs::create_dir_all(&from).unwrap();
        std::fs::write(from.join("nistkat.rsp"), b"kat").unwrap();
        std::fs::write(from.join("other.txt"), b"x").unwrap();
        let sparse = std::fs::File::create(from.join("KAT_big.txt")).unwrap();
        sparse.set_len(1 << 30).unwrap();
        for i in 0..500 {
            std::fs::write(from.join(format!("e{i:03}")), b"").unwrap();
        }
        let names = |n: &str| n == "nistkat.rsp" || n.starts_with("KAT_");
        let expect = Expect {
            names: &names,
            max_entries: 64,
            max_file: 1 << 20,
            max_total: 1 << 20,
        };
        let to = t.path().join("to");
        let got = ingest(&from, &to, &expect).unwrap();
        let want = hex::encode(<sha2::Sha256 as sha2::Digest>::digest(b"kat"));
        // Read in directory order: nistkat.rsp may be past the first 64 entries.
        if got.copied.is_empty() {
            assert!(got.refused_count >= 440);
        } else {
            assert_eq!(got.copied, [("nistkat.rsp".to_string(), want)]);
        }
        assert_eq!(got.entries, 503);
        assert_eq!(got.refused_count, 503 - got.copied.len());
        assert!(got.refused.len() <= 5);
        assert!(!to.join("KAT_big.txt").exists() && !to.join("other.txt").exists());
        assert!(
            got.note()
                .unwrap()
                .contains("entries left by the job were not taken")
        );
    }
}
