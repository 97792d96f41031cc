//! The job's scratch folder as a tmpfs of its own, mounted by the proxy in the job's mount
//! namespace with a size and an inode bound: a job that writes without end fills its tmpfs
//! (ENOSPC), not the disk. The host folder is copied in before the job and what the job left
//! is copied back by the proxy after every process of the job is dead (nothing races it),
//! then the tmpfs goes with the namespace. Copied back: folders and regular files that are
//! not sparse (a file whose size exceeds the blocks it holds would become that size on
//! disk); links, FIFOs and sparse files stay behind and are counted.

use serde::{Deserialize, Serialize};
use std::io::Read;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::Path;

/// Bounds of one job's scratch.
#[derive(Serialize, Deserialize, Debug, Clone, Copy, PartialEq)]
pub struct ScratchBounds {
    pub bytes: u64,
    pub inodes: u64,
}

/// What the job did with its scratch (the proxy's count, trusted).
#[derive(Serialize, Deserialize, Debug, Clone, Default, PartialEq)]
pub struct ScratchUse {
    pub bound_bytes: u64,
    pub bound_inodes: u64,
    pub used_bytes: u64,
    pub used_inodes: u64,
    /// Regular files copied back to the host folder.
    pub copied: u64,
    /// Entries left behind: sparse files, links, FIFOs, sockets.
    pub left: u64,
}

impl ScratchUse {
    /// The job ran out of room or entries.
    pub fn full(&self) -> bool {
        // tmpfs keeps a little for itself; within 1 % (or 4 KiB) of the bound is full.
        let slack = (self.bound_bytes / 100).max(4096);
        self.used_bytes + slack >= self.bound_bytes || self.used_inodes + 2 >= self.bound_inodes
    }

    /// One line for logs when the bound was reached or entries were left behind.
    pub fn note(&self) -> Option<String> {
        let mut parts = Vec::new();
        if self.full() {
            parts.push(format!(
                "the job filled its scratch folder (tmpfs of {} MiB and {} entries; {} MiB and {} entries used): further writes failed",
                self.bound_bytes >> 20,
                self.bound_inodes,
                self.used_bytes >> 20,
                self.used_inodes
            ));
        }
        if self.left > 0 {
            parts.push(format!(
                "{} entries (sparse files, links, FIFOs) were left in the scratch folder, not copied",
                self.left
            ));
        }
        (!parts.is_empty()).then(|| parts.join("; "))
    }
}

/// Options of the tmpfs mount.
pub fn mount_options(b: &ScratchBounds) -> String {
    format!(
        "size={}k,nr_inodes={},mode=0755",
        b.bytes.div_ceil(1024).max(64),
        b.inodes.max(16)
    )
}

/// Copies the folder tree `from` (the host folder, before the job) into `to` (the empty
/// tmpfs): folders and regular files, nothing else.
pub fn copy_in(from: &Path, to: &Path) -> anyhow::Result<()> {
    use anyhow::Context;
    let rd = std::fs::read_dir(from).with_context(|| from.display().to_string())?;
    for e in rd.flatten() {
        let (src, dst) = (e.path(), to.join(e.file_name()));
        let Ok(t) = e.file_type() else { continue };
        if t.is_dir() {
            std::fs::create_dir(&dst).with_context(|| dst.display().to_string())?;
            copy_in(&src, &dst)?;
        } else if t.is_file() {
            std::fs::copy(&src, &dst).with_context(|| dst.display().to_string())?;
        }
    }
    Ok(())
}

/// Copies what the job left in `from` (the tmpfs) back into `to` (the host folder).
pub fn copy_out(from: &Path, to: &Path, used: &mut ScratchUse) {
    let Ok(rd) = std::fs::read_dir(from) else {
        return;
    };
    for e in rd.flatten() {
        let (src, dst) = (e.path(), to.join(e.file_name()));
        let Ok(m) = std::fs::symlink_metadata(&src) else {
            continue;
        };
        if m.is_dir() {
            let made = std::fs::create_dir(&dst).is_ok()
                || std::fs::symlink_metadata(&dst).is_ok_and(|d| d.is_dir());
            if made {
                copy_out(&src, &dst, used);
            } else {
                used.left += 1;
            }
        } else if m.is_file() && m.blocks() * 512 >= m.len() {
            if copy_file(&src, &dst, m.len()).is_ok() {
                used.copied += 1;
            } else {
                used.left += 1;
            }
        } else {
            used.left += 1;
        }
    }
}

/// At most `len` bytes (what the file held when we looked), never through a link.
fn copy_file(src: &Path, dst: &Path, len: u64) -> std::io::Result<()> {
    let mut from = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(src)?;
    let _ = std::fs::remove_file(dst);
    let mut to = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(dst)?;
    std::io::copy(&mut (&mut from).take(len), &mut to)?;
    Ok(())
}

/// Bytes and entries in use on the file system holding `dir`.
pub fn statfs_use(dir: &Path) -> (u64, u64) {
    let c = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes()).unwrap_or_default();
    // SAFETY: statvfs fills the struct we own.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return (0, 0);
    }
    let bytes = (st.f_blocks - st.f_bfree) * st.f_frsize;
    let inodes = st.f_files - st.f_ffree;
    (bytes, inodes)
}
