//! Reads a dataset (or run directory): campaign.json, build.json, every timing record and
//! every hash profile, in sorted path order so that everything derived from it is
//! deterministic.

use super::schema::{BuildEntry, BuildFile, Campaign, Profile, Record};
use anyhow::{Result, bail};
use serde_json::Value;
use std::path::{Path, PathBuf};

#[derive(Clone, Debug)]
pub struct LoadedRecord {
    /// Path relative to the dataset root, `/`-separated: `records/kem-31/NGCC-1__dec.json`.
    pub path: String,
    pub record: Record,
}

impl LoadedRecord {
    /// `<op>` or `<op>_<input bytes>`.
    pub fn op_key(&self) -> String {
        self.record.operation.key(self.record.input_bytes)
    }
}

#[derive(Clone, Debug)]
pub struct LoadedProfile {
    pub path: String,
    pub profile: Profile,
}

impl LoadedProfile {
    pub fn op_key(&self) -> String {
        self.profile.operation.key(self.profile.input_bytes)
    }
}

/// `ct/<cand>/<label>__<op>.json` (ours; absent from reference datasets).
#[derive(Clone, Debug)]
pub struct LoadedCt {
    pub path: String,
    pub ct: super::schema::CtResult,
}

/// `memory/<cand>/<label>.json` (ours; absent from reference datasets).
#[derive(Clone, Debug)]
pub struct LoadedMemory {
    pub path: String,
    pub memory: super::memory::MemoryRecord,
}

/// `count/<cand>/<label>__<op>.json` (ours; absent from reference datasets).
#[derive(Clone, Debug)]
pub struct LoadedCount {
    pub path: String,
    pub count: super::count::CountRecord,
}

#[derive(Clone, Debug, Default)]
pub struct Dataset {
    pub root: PathBuf,
    pub campaign: Campaign,
    pub build: BuildFile,
    pub records: Vec<LoadedRecord>,
    pub profiles: Vec<LoadedProfile>,
    pub ct: Vec<LoadedCt>,
    pub memory: Vec<LoadedMemory>,
    pub count: Vec<LoadedCount>,
}

/// A file that could not be read or parsed.
#[derive(Clone, Debug, PartialEq)]
pub struct LoadProblem {
    pub path: String,
    pub message: String,
}

impl std::fmt::Display for LoadProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

/// Loads a dataset; any unreadable or malformed file is an error naming it.
pub fn load(root: &Path) -> Result<Dataset> {
    let (ds, problems) = load_lenient(root)?;
    if let Some(p) = problems.first() {
        bail!("{}: {p}", root.display());
    }
    Ok(ds)
}

/// Loads what can be loaded and lists the files that could not (validation reports them as
/// problems instead of stopping). Fails only if `root` is not a folder.
pub fn load_lenient(root: &Path) -> Result<(Dataset, Vec<LoadProblem>)> {
    if !root.is_dir() {
        bail!("dataset folder {} does not exist", root.display());
    }
    refuse_newer_schema(root)?;
    let mut problems = Vec::new();
    let mut ds = Dataset {
        root: root.to_path_buf(),
        ..Default::default()
    };
    match parse_file::<Campaign>(root, "campaign.json") {
        Ok(c) => ds.campaign = c,
        Err(p) => problems.push(p),
    }
    match parse_file::<BuildFile>(root, "build.json") {
        Ok(b) => ds.build = b,
        Err(p) => problems.push(p),
    }
    for path in json_files(root, "records", &mut problems) {
        match parse_file::<Record>(root, &path) {
            Ok(record) => ds.records.push(LoadedRecord { path, record }),
            Err(p) => problems.push(p),
        }
    }
    for path in json_files(root, "profile", &mut problems) {
        let name = path.rsplit('/').next().unwrap_or_default();
        if !name.contains("__") {
            continue;
        }
        // Only files with an `operation` key are profiles (RELINK_FAILED notes are not).
        match parse_file::<Value>(root, &path) {
            Ok(v) if v.get("operation").is_none() => continue,
            Ok(v) => match serde_json::from_value::<Profile>(v) {
                Ok(profile) => ds.profiles.push(LoadedProfile { path, profile }),
                Err(e) => problems.push(LoadProblem {
                    path,
                    message: format!("not a schema 2 profile: {e}"),
                }),
            },
            Err(p) => problems.push(p),
        }
    }
    for path in json_files(root, "ct", &mut problems) {
        match parse_file::<super::schema::CtResult>(root, &path) {
            Ok(ct) => ds.ct.push(LoadedCt { path, ct }),
            Err(p) => problems.push(p),
        }
    }
    for path in json_files(root, "memory", &mut problems) {
        match parse_file::<super::memory::MemoryRecord>(root, &path) {
            Ok(memory) => ds.memory.push(LoadedMemory { path, memory }),
            Err(p) => problems.push(p),
        }
    }
    for path in json_files(root, super::count::COUNT_DIR, &mut problems) {
        match parse_file::<super::count::CountRecord>(root, &path) {
            Ok(count) => ds.count.push(LoadedCount { path, count }),
            Err(p) => problems.push(p),
        }
    }
    Ok((ds, problems))
}

/// A dataset written by a newer ngcc-perf (any file with `"schema"` above ours) is refused
/// as a whole: reading it as schema 2 would report nonsense, not problems.
fn refuse_newer_schema(root: &Path) -> Result<()> {
    let mut files = vec!["campaign.json".to_string(), "build.json".to_string()];
    let mut ignored = Vec::new();
    files.extend(json_files(root, "records", &mut ignored));
    files.extend(json_files(root, "profile", &mut ignored));
    for rel in files {
        let Ok(bytes) = std::fs::read(root.join(&rel)) else {
            continue;
        };
        let Ok(v) = serde_json::from_slice::<Value>(&bytes) else {
            continue;
        };
        if let Some(n) = v.get("schema").and_then(Value::as_u64)
            && n > u64::from(super::schema::SCHEMA)
        {
            return Err(crate::util::Failure::usage(format!(
                "{}: {rel} has schema {n}, newer than the schema {} this ngcc-perf reads; \
                 use a newer ngcc-perf",
                root.display(),
                super::schema::SCHEMA
            )));
        }
    }
    Ok(())
}

fn parse_file<T: serde::de::DeserializeOwned>(
    root: &Path,
    rel: &str,
) -> std::result::Result<T, LoadProblem> {
    let bytes = std::fs::read(root.join(rel)).map_err(|e| LoadProblem {
        path: rel.to_string(),
        message: format!("cannot read: {e}"),
    })?;
    serde_json::from_slice(&bytes).map_err(|e| LoadProblem {
        path: rel.to_string(),
        message: format!("not valid JSON for schema 2: {e}"),
    })
}

/// Every `*.json` below `root/sub`, as sorted `/`-separated relative paths.
fn json_files(root: &Path, sub: &str, problems: &mut Vec<LoadProblem>) -> Vec<String> {
    let mut out = Vec::new();
    walk(root, Path::new(sub), &mut out, problems);
    out.retain(|p| p.ends_with(".json"));
    out.sort();
    out
}

/// Every file below `root/rel` (recursively) as sorted `/`-separated paths relative to `root`.
pub fn files_under(root: &Path, rel: &str) -> Vec<String> {
    let mut out = Vec::new();
    walk(root, Path::new(rel), &mut out, &mut Vec::new());
    out.sort();
    out
}

fn walk(root: &Path, rel: &Path, out: &mut Vec<String>, problems: &mut Vec<LoadProblem>) {
    let dir = root.join(rel);
    let entries = match std::fs::read_dir(&dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return,
        Err(e) => {
            problems.push(LoadProblem {
                path: rel_string(rel),
                message: format!("cannot list: {e}"),
            });
            return;
        }
    };
    for entry in entries.flatten() {
        let child = rel.join(entry.file_name());
        match entry.file_type() {
            Ok(t) if t.is_dir() => walk(root, &child, out, problems),
            Ok(t) if t.is_file() => out.push(rel_string(&child)),
            _ => {}
        }
    }
}

fn rel_string(p: &Path) -> String {
    p.components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/")
}

impl Dataset {
    /// Build entries keyed `<cand>/<label>`, in file order.
    pub fn build_entries(&self) -> Vec<(String, BuildEntry)> {
        self.build.entries()
    }

    pub fn build_entry(&self, cand: &str, label: &str) -> Option<BuildEntry> {
        self.build.entry(&format!("{cand}/{label}"))
    }

    pub fn records_of<'a>(&'a self, cand: &'a str) -> impl Iterator<Item = &'a LoadedRecord> + 'a {
        self.records
            .iter()
            .filter(move |r| r.record.candidate == cand)
    }

    pub fn profiles_of<'a>(
        &'a self,
        cand: &'a str,
    ) -> impl Iterator<Item = &'a LoadedProfile> + 'a {
        self.profiles
            .iter()
            .filter(move |p| p.profile.candidate == cand)
    }

    pub fn record(&self, cand: &str, label: &str, op_key: &str) -> Option<&LoadedRecord> {
        self.records
            .iter()
            .find(|r| r.record.candidate == cand && r.record.label == label && r.op_key() == op_key)
    }

    /// The memory record of one instance.
    pub fn memory(&self, cand: &str, label: &str) -> Option<&super::memory::MemoryRecord> {
        self.memory
            .iter()
            .map(|m| &m.memory)
            .find(|m| m.candidate == cand && m.label == label)
    }

    /// The ct results of one candidate, in path order.
    pub fn ct_of<'a>(&'a self, cand: &'a str) -> impl Iterator<Item = &'a LoadedCt> + 'a {
        self.ct.iter().filter(move |c| c.ct.candidate == cand)
    }

    pub fn profile(&self, cand: &str, label: &str, op_key: &str) -> Option<&LoadedProfile> {
        self.profiles.iter().find(|p| {
            p.profile.candidate == cand && p.profile.label == label && p.op_key() == op_key
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn corrupt_files_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join("campaign.json"), b"{\"system_id\": \"x\"}").unwrap();
        std::fs::write(root.join("build.json"), b"{\"instances\": {}}").unwrap();
        std::fs::create_dir_all(root.join("records/kem-1")).unwrap();
        std::fs::write(
            root.join("records/kem-1/A__keygen.json"),
            b"{\"schema\": 2,",
        )
        .unwrap();
        std::fs::create_dir_all(root.join("profile/kem-1")).unwrap();
        std::fs::write(
            root.join("profile/kem-1/A__RELINK_FAILED.json"),
            b"{\"stderr\": \"x\"}",
        )
        .unwrap();
        let (ds, problems) = load_lenient(root).unwrap();
        assert_eq!(ds.campaign.system_id.as_deref(), Some("x"));
        assert_eq!(problems.len(), 1);
        assert_eq!(problems[0].path, "records/kem-1/A__keygen.json");
        let err = load(root).unwrap_err().to_string();
        assert!(err.contains("records/kem-1/A__keygen.json"), "{err}");
        assert!(load(&root.join("nope")).is_err());
    }
}
