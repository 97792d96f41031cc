//! An unpacked submission package: its reference instance folders (those holding a
//! `*_AlgorithmInstance.h`), their kind, and the label each gets — the reference harness's
//! label from the KAT manifest when one is given, else one made from the folder names.

use crate::candidate::Kind;
use crate::candidate::kat_manifest::Manifest;
use anyhow::{Result, bail};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One instance folder of the package.
#[derive(Clone, Debug)]
pub struct Folder {
    /// The instance's root (absolute): the header's folder, or the folder above a source
    /// sub-folder like `src/` or `include/` that holds it.
    pub root: PathBuf,
    /// `root` relative to the package.
    pub rel: PathBuf,
    /// The header, relative to `root` (`KEM_AlgorithmInstance.h`, `src/api/…`).
    pub header: PathBuf,
    pub kind: Kind,
    /// Label made from the folder names below the implementation folder (`Lore-SHAKE-L1`).
    pub derived: String,
}

/// Names of folders that hold an instance's sources rather than being the instance.
fn source_subfolder(name: &str) -> bool {
    matches!(
        name.to_ascii_lowercase().as_str(),
        "src" | "source" | "sources" | "include" | "inc" | "api" | "lib" | "code" | "ref" | "impl"
    )
}

/// The kind a header name declares.
pub fn kind_of(header: &str) -> Option<Kind> {
    let prefix = header.strip_suffix("_AlgorithmInstance.h")?;
    match prefix {
        "KEM" => Some(Kind::Kem),
        "SIG" => Some(Kind::Sig),
        "KEX" => Some(Kind::Kex),
        "CryptHash" | "HASH" | "Hash" => Some(Kind::Hash),
        _ => None,
    }
}

/// Every instance folder below `package`, and how many non-reference ones were left out.
pub fn folders(package: &Path) -> Result<(Vec<Folder>, Vec<PathBuf>)> {
    let mut headers: Vec<PathBuf> = Vec::new();
    walk(package, &mut headers, 0);
    headers.sort();
    let mut all: Vec<Folder> = Vec::new();
    for h in headers {
        let name = h
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        let Some(kind) = kind_of(&name) else {
            continue;
        };
        let mut root = h.parent().unwrap_or(package).to_path_buf();
        while root != package
            && root
                .file_name()
                .is_some_and(|n| source_subfolder(&n.to_string_lossy()))
        {
            root = root.parent().unwrap_or(package).to_path_buf();
        }
        let rel = root.strip_prefix(package).unwrap_or(&root).to_path_buf();
        if all.iter().any(|f| f.root == root) {
            continue;
        }
        all.push(Folder {
            header: h.strip_prefix(&root).unwrap_or(&h).to_path_buf(),
            root,
            rel,
            kind,
            derived: String::new(),
        });
    }
    if all.is_empty() {
        bail!(
            "{}: no instance folders (none holds a *_AlgorithmInstance.h)",
            package.display()
        );
    }
    // Reference implementations only, when the package says which those are.
    let is_ref = |f: &Folder| {
        f.rel.components().any(|c| {
            c.as_os_str()
                .to_string_lossy()
                .to_ascii_lowercase()
                .contains("reference")
        })
    };
    let (mut refs, others): (Vec<Folder>, Vec<Folder>) = if all.iter().any(is_ref) {
        all.into_iter().partition(is_ref)
    } else {
        (all, Vec::new())
    };
    derive_labels(&mut refs);
    Ok((refs, others.into_iter().map(|f| f.rel).collect()))
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>, depth: usize) {
    if depth > 12 {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        let Ok(ty) = e.file_type() else { continue };
        let name = e.file_name().to_string_lossy().into_owned();
        if ty.is_dir() && !name.starts_with('.') {
            walk(&p, out, depth + 1);
        } else if ty.is_file() && name.ends_with("_AlgorithmInstance.h") {
            out.push(p);
        }
    }
}

/// Tokens of a name: letters/digit runs split at `-`, `_`, `.`, `+` and spaces.
pub fn tokens(s: &str) -> Vec<String> {
    s.split(['-', '_', '.', '+', ' '])
        .filter(|t| !t.is_empty())
        .map(str::to_string)
        .collect()
}

/// Folder tokens joined with `-`, a token repeated from an outer folder dropped
/// (`Lore-SHAKE/Lore-L1` → `Lore-SHAKE-L1`).
fn join_dedup(parts: &[String]) -> String {
    let mut seen: Vec<String> = Vec::new();
    let mut out: Vec<String> = Vec::new();
    for part in parts {
        for t in tokens(part) {
            let key = t.to_ascii_lowercase();
            if !seen.contains(&key) {
                seen.push(key);
                out.push(t);
            }
        }
    }
    out.join("-")
}

/// Labels from the folder names below the implementation folder (`…Implementation/`), or
/// below the folders' common parent; more outer folders are added until labels differ.
fn derive_labels(folders: &mut [Folder]) {
    let below_impl = |f: &Folder| -> Vec<String> {
        let comps: Vec<String> = f
            .rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        match comps
            .iter()
            .rposition(|c| c.to_ascii_lowercase().contains("implementation"))
        {
            Some(i) if i + 1 < comps.len() => comps[i + 1..].to_vec(),
            _ => comps,
        }
    };
    let mut parts: Vec<Vec<String>> = folders.iter().map(below_impl).collect();
    // Drop the leading folders all share (but keep at least the last one).
    while parts.iter().all(|p| p.len() > 1)
        && parts.windows(2).all(|w| w[0][0] == w[1][0])
        && parts.len() > 1
    {
        for p in parts.iter_mut() {
            p.remove(0);
        }
    }
    let mut labels: Vec<String> = parts.iter().map(|p| join_dedup(p)).collect();
    // Collisions: add outer folders of the full path until they differ.
    for _ in 0..8 {
        let mut count: BTreeMap<&str, usize> = BTreeMap::new();
        for l in &labels {
            *count.entry(l.as_str()).or_default() += 1;
        }
        let clash: Vec<bool> = labels.iter().map(|l| count[l.as_str()] > 1).collect();
        if !clash.iter().any(|c| *c) {
            break;
        }
        for (i, f) in folders.iter().enumerate() {
            if clash[i] {
                let comps: Vec<String> = f
                    .rel
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect();
                let have = parts[i].len();
                let start = comps.len().saturating_sub(have + 1);
                parts[i] = comps[start..].to_vec();
                labels[i] = join_dedup(&parts[i]);
            }
        }
    }
    for (f, l) in folders.iter_mut().zip(labels) {
        f.derived = sanitize(&l);
    }
}

/// Label characters the manifest allows (letters, digits, `-`, `_`, `.`).
pub fn sanitize(s: &str) -> String {
    let out: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '-'
            }
        })
        .collect();
    if out.is_empty() {
        "instance".into()
    } else {
        out
    }
}

/// How a folder got its label.
#[derive(Clone, Debug, PartialEq)]
pub enum Naming {
    /// The manifest's label equals the folder label (up to case and separators).
    Exact,
    /// The manifest's label shares these tokens with the folder's path.
    Tokens(String),
    /// The only folder and the only label.
    Single,
    /// No manifest given: the folder label.
    FromFolders,
    /// A manifest was given but no label of it fits: the folder label.
    Unmatched,
}

fn norm(s: &str) -> String {
    tokens(s).join("-").to_ascii_lowercase()
}

/// Labels for the folders: from the manifest where one fits each folder (one folder per
/// label), else the folder labels. Returns the naming per folder and the manifest labels no
/// folder took.
pub fn name_folders(
    folders: &[Folder],
    manifest: Option<&Manifest>,
) -> (Vec<(String, Naming)>, Vec<String>) {
    let Some(m) = manifest else {
        return (
            folders
                .iter()
                .map(|f| (f.derived.clone(), Naming::FromFolders))
                .collect(),
            Vec::new(),
        );
    };
    let mut labels: Vec<String> = Vec::new();
    for e in &m.entries {
        if let Some((label, _)) = e.name.split_once('/')
            && !labels.iter().any(|l| l == label)
        {
            labels.push(label.to_string());
        }
    }
    let mut out: Vec<Option<(String, Naming)>> = vec![None; folders.len()];
    let mut taken = vec![false; labels.len()];
    // 1. Exact matches.
    for (i, f) in folders.iter().enumerate() {
        if let Some(j) = labels.iter().position(|l| norm(l) == norm(&f.derived))
            && !taken[j]
        {
            taken[j] = true;
            out[i] = Some((labels[j].clone(), Naming::Exact));
        }
    }
    // 2. Token overlap with the whole relative path, best unique pair first.
    loop {
        let mut best: Option<(f64, usize, usize)> = None;
        let mut tie = false;
        for (i, f) in folders
            .iter()
            .enumerate()
            .filter(|(i, _)| out[*i].is_none())
        {
            let path_tokens: Vec<String> = f
                .rel
                .components()
                .flat_map(|c| tokens(&c.as_os_str().to_string_lossy()))
                .map(|t| t.to_ascii_lowercase())
                .collect();
            for (j, l) in labels.iter().enumerate().filter(|(j, _)| !taken[*j]) {
                let lt: Vec<String> = tokens(l).iter().map(|t| t.to_ascii_lowercase()).collect();
                let shared = lt.iter().filter(|t| path_tokens.contains(t)).count();
                // Every label token must be in the path: a partial match is a guess.
                if shared < lt.len() || lt.is_empty() {
                    continue;
                }
                let score = shared as f64 / path_tokens.len().max(1) as f64;
                match best {
                    Some((b, _, _)) if score < b => {}
                    Some((b, _, _)) if score == b => tie = true,
                    _ => {
                        best = Some((score, i, j));
                        tie = false;
                    }
                }
            }
        }
        match best {
            Some((_, i, j)) if !tie => {
                taken[j] = true;
                out[i] = Some((labels[j].clone(), Naming::Tokens(labels[j].clone())));
            }
            _ => break,
        }
    }
    // 3. One folder, one label: the package may have been renamed.
    let open_f: Vec<usize> = (0..folders.len()).filter(|i| out[*i].is_none()).collect();
    let open_l: Vec<usize> = (0..labels.len()).filter(|j| !taken[*j]).collect();
    if open_f.len() == 1 && open_l.len() == 1 && folders.len() == 1 {
        out[open_f[0]] = Some((labels[open_l[0]].clone(), Naming::Single));
        taken[open_l[0]] = true;
    }
    let named = out
        .into_iter()
        .zip(folders)
        .map(|(o, f)| o.unwrap_or_else(|| (f.derived.clone(), Naming::Unmatched)))
        .collect();
    let unused = labels
        .into_iter()
        .zip(taken)
        .filter(|(_, t)| !t)
        .map(|(l, _)| l)
        .collect();
    (named, unused)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(files: &[&str]) -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        for f in files {
            let p = d.path().join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, "").unwrap();
        }
        d
    }

    #[test]
    fn folders_labels_and_manifest_names() {
        let d = tree(&[
            "P/Impl and TV/Implementations/Reference_Implementation/X-SHAKE/X-L1/KEM_AlgorithmInstance.h",
            "P/Impl and TV/Implementations/Reference_Implementation/X-SHAKE/X-L2/KEM_AlgorithmInstance.h",
            "P/Impl and TV/Implementations/Reference_Implementation/X-SM3/X-L1/KEM_AlgorithmInstance.h",
            "P/Impl and TV/Implementations/Optimized_Implementation/X-SM3/X-L1/KEM_AlgorithmInstance.h",
            "P/Impl and TV/Implementations/Reference_Implementation/Y-576/src/api/KEM_AlgorithmInstance.h",
        ]);
        let (f, others) = folders(&d.path().join("P")).unwrap();
        let labels: Vec<&str> = f.iter().map(|f| f.derived.as_str()).collect();
        assert_eq!(labels, ["X-SHAKE-L1", "X-SHAKE-L2", "X-SM3-L1", "Y-576"]);
        assert_eq!(others.len(), 1);
        assert_eq!(f[3].header, Path::new("src/api/KEM_AlgorithmInstance.h"));
        let a = "a".repeat(64);
        let m = Manifest::parse(&format!(
            "{a} strict X-SHAKE-L1/KAT_KEM_X-L1.txt\n{a} strict x-sm3-l1/KAT_KEM_X-L1.txt\n{a} strict X-SHAKE-L2/KAT_KEM_X-L2.txt\n{a} strict Z-9/KAT_KEM_Z.txt\n"
        ))
        .unwrap();
        let (named, unused) = name_folders(&f, Some(&m));
        assert_eq!(named[0], ("X-SHAKE-L1".into(), Naming::Exact));
        assert_eq!(named[2], ("x-sm3-l1".into(), Naming::Exact));
        assert_eq!(named[3], ("Y-576".into(), Naming::Unmatched));
        assert_eq!(unused, ["Z-9"]);
    }

    #[test]
    fn single_instance_package_renamed() {
        let d = tree(&["Renamed/SIG_AlgorithmInstance.h"]);
        let (f, _) = folders(&d.path().join("Renamed")).unwrap();
        let a = "a".repeat(64);
        let m = Manifest::parse(&format!("{a} strict:1 Orig-128/KAT_SIG_Orig-128.txt\n")).unwrap();
        let (named, unused) = name_folders(&f, Some(&m));
        assert_eq!(named[0], ("Orig-128".into(), Naming::Single));
        assert!(unused.is_empty());
    }
}
