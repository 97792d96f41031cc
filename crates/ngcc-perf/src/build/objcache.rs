//! Object files shared by builds and runs, addressed by what made them: the compiler, every
//! flag and define, the source's file name and its preprocessed text (`-E -P`, so the folders
//! it was read from do not count). Three ML-KEM sizes sharing Keccak code, a candidate copied
//! under another name, the ICCS helpers every instance links: each is compiled once per flag
//! set. Only a compile that printed nothing is stored, so a hit never hides a diagnostic;
//! `-g` compiles are never stored (their objects name paths).
//!
//! `NGCC_OBJECT_CACHE` names the folder (`off`: no cache); the default is
//! `$XDG_CACHE_HOME/ngcc-perf/objects` (`~/.cache/…`). Entries unused for 30 days are removed.

use sha2::{Digest, Sha256};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, SystemTime};

/// Variable naming the cache folder, or `off`.
pub const ENV: &str = "NGCC_OBJECT_CACHE";
/// Entries not used for this long are removed (once per process).
const KEEP: Duration = Duration::from_secs(30 * 24 * 3600);
/// Changes when what the key covers changes.
const FORMAT: &str = "ngcc-perf object cache 1";

pub struct ObjCache {
    dir: PathBuf,
}

/// The cache, or `None` when it is off or its folder cannot be made (builds then compile
/// every source).
pub fn open() -> Option<&'static ObjCache> {
    static CACHE: OnceLock<Option<ObjCache>> = OnceLock::new();
    CACHE
        .get_or_init(|| {
            let dir = folder()?;
            std::fs::create_dir_all(&dir).ok()?;
            let cache = ObjCache { dir };
            cache.prune(SystemTime::now());
            Some(cache)
        })
        .as_ref()
}

fn folder() -> Option<PathBuf> {
    match std::env::var_os(ENV) {
        Some(v) if v == "off" => None,
        Some(v) if !v.is_empty() => Some(PathBuf::from(v)),
        _ => crate::util::cache_home().map(|base| base.join("ngcc-perf/objects")),
    }
}

/// Whether objects compiled with these flags may be stored: not with debug information.
pub fn cacheable(cflags: &[String]) -> bool {
    !cflags.iter().any(|f| f.starts_with("-g"))
}

/// The key of one compile: compiler identity, its arguments other than include folders,
/// source path and output, the source's file name (objects carry it) and the preprocessed
/// text's hash.
pub fn key<'a>(
    compiler: &str,
    version: &str,
    args: impl IntoIterator<Item = &'a str>,
    source: &Path,
    preprocessed_sha256: &str,
) -> String {
    let mut h = Sha256::new();
    for part in [FORMAT, compiler, version] {
        h.update(part.as_bytes());
        h.update([0]);
    }
    for a in args {
        h.update(a.as_bytes());
        h.update([0]);
    }
    h.update([0]);
    let name = source.file_name().unwrap_or(OsStr::new(""));
    h.update(name.as_encoded_bytes());
    h.update([0]);
    h.update(preprocessed_sha256.as_bytes());
    hex::encode(h.finalize())
}

impl ObjCache {
    fn entry(&self, key: &str) -> PathBuf {
        self.dir.join(format!("{key}.o"))
    }

    /// Copies the object stored under `key` to `dest`; false when there is none.
    pub fn get(&self, key: &str, dest: &Path) -> bool {
        let entry = self.entry(key);
        if std::fs::copy(&entry, dest).is_err() {
            return false;
        }
        // Used now: pruning goes by modification time.
        if let Ok(f) = std::fs::File::options().append(true).open(&entry) {
            let _ = f.set_modified(SystemTime::now());
        }
        true
    }

    /// Stores `object` under `key` (atomically; a failure only means no entry).
    pub fn put(&self, key: &str, object: &Path) {
        let tmp = self.dir.join(format!(".{key}.{}.tmp", std::process::id()));
        if std::fs::copy(object, &tmp).is_ok() && std::fs::rename(&tmp, self.entry(key)).is_ok() {
            return;
        }
        let _ = std::fs::remove_file(&tmp);
    }

    /// Removes entries (and temporary files of killed writers) unused since `now - KEEP`.
    fn prune(&self, now: SystemTime) {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return;
        };
        for e in entries.flatten() {
            let old = e
                .metadata()
                .and_then(|m| m.modified())
                .is_ok_and(|t| now.duration_since(t).is_ok_and(|age| age > KEEP));
            if old {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_follows_compiler_flags_name_and_text_but_not_folders() {
        let k = |cc: &str, args: &[&str], src: &str, text: &str| {
            key(cc, "gcc 12.2.0", args.iter().copied(), Path::new(src), text)
        };
        let base = k("gcc", &["-O3", "-DN=2"], "/a/x.c", "t1");
        assert_eq!(base, k("gcc", &["-O3", "-DN=2"], "/b/c/x.c", "t1"));
        assert_ne!(base, k("clang", &["-O3", "-DN=2"], "/a/x.c", "t1"));
        assert_ne!(base, k("gcc", &["-O2", "-DN=2"], "/a/x.c", "t1"));
        assert_ne!(base, k("gcc", &["-O3", "-DN=3"], "/a/x.c", "t1"));
        assert_ne!(base, k("gcc", &["-O3-DN=2"], "/a/x.c", "t1"));
        assert_ne!(base, k("gcc", &["-O3", "-DN=2"], "/a/y.c", "t1"));
        assert_ne!(base, k("gcc", &["-O3", "-DN=2"], "/a/x.c", "t2"));
        assert_ne!(
            base,
            key(
                "gcc",
                "gcc 13.1.0",
                ["-O3", "-DN=2"],
                Path::new("/a/x.c"),
                "t1"
            )
        );
    }

    #[test]
    fn entries_are_stored_found_and_pruned_when_unused() {
        let dir = tempfile::tempdir().unwrap();
        let cache = ObjCache {
            dir: dir.path().join("c"),
        };
        std::fs::create_dir_all(&cache.dir).unwrap();
        let obj = dir.path().join("x.o");
        std::fs::write(&obj, b"object").unwrap();
        let out = dir.path().join("y.o");
        assert!(!cache.get("k1", &out));
        cache.put("k1", &obj);
        assert!(cache.get("k1", &out));
        assert_eq!(std::fs::read(&out).unwrap(), b"object");
        cache.prune(SystemTime::now());
        assert!(cache.get("k1", &out), "a fresh entry stays");
        cache.prune(SystemTime::now() + KEEP + Duration::from_secs(60));
        assert!(!cache.get("k1", &out), "an entry unused for 30 days goes");
    }

    #[test]
    fn only_builds_without_debug_information_are_stored() {
        assert!(cacheable(&["-O3".into(), "-march=native".into()]));
        assert!(!cacheable(&["-O3".into(), "-g".into()]));
        assert!(!cacheable(&["-ggdb3".into()]));
    }
}
