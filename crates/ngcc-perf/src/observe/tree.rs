//! A submission tree → its packages and their ids. A package is a folder whose
//! implementation folders hold `*_AlgorithmInstance.h`, at any depth (the official layout
//! `01-public-key/02-key-encapsulation/<Pkg>/…` is not relied on). Its id is the reference
//! harness manifest (`HARNESS/<id>/kat.sha256`) whose instance labels its folders match.

use crate::candidate::kat_manifest::Manifest;
use crate::candidate::ngcc::package::{self, Naming};
use std::path::{Path, PathBuf};

/// Folders deeper than this below the tree are not searched (a link loop cannot be one:
/// links are never followed).
const MAX_DEPTH: usize = 16;

/// Every folder below `tree` holding an instance header (links never followed).
fn header_folders(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) {
    if depth > MAX_DEPTH {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut has = false;
    let mut subs = Vec::new();
    for e in entries.flatten() {
        let Ok(ty) = e.file_type() else { continue };
        let name = e.file_name().to_string_lossy().into_owned();
        if ty.is_dir() && !name.starts_with('.') {
            subs.push(e.path());
        } else if ty.is_file() && package::kind_of(&name).is_some() {
            has = true;
        }
    }
    if has {
        out.push(dir.to_path_buf());
    }
    subs.sort();
    for s in subs {
        header_folders(&s, depth + 1, out);
    }
}

fn name_tokens(s: &str) -> Vec<String> {
    package::tokens(s)
        .into_iter()
        .map(|t| t.to_ascii_lowercase())
        .filter(|t| t.len() >= 3 && !t.chars().all(|c| c.is_ascii_digit()))
        .collect()
}

/// The package a header folder belongs to: the folder above its outermost
/// `Impl…` folder (`Implementations and Test_Vectors`, `Reference_Implementation`); without one, the outermost folder above it (below the tree)
/// whose name shares a name token with the folders on the way (`Toy/Toy-L1`); else the
/// header folder's parent.
fn package_of(tree: &Path, header_dir: &Path) -> PathBuf {
    let rel = header_dir.strip_prefix(tree).unwrap_or(header_dir);
    let comps: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let impl_folder = |c: &str| {
        c.split(|ch: char| !ch.is_ascii_alphanumeric())
            .any(|t| t.to_ascii_lowercase().starts_with("impl"))
    };
    if let Some(i) = comps.iter().position(|c| impl_folder(c)) {
        return comps[..i].iter().fold(tree.to_path_buf(), |p, c| p.join(c));
    }
    for (i, c) in comps.iter().enumerate().take(comps.len().saturating_sub(1)) {
        let own = name_tokens(c);
        let rest: Vec<String> = comps[i + 1..].iter().flat_map(|c| name_tokens(c)).collect();
        if own.iter().any(|t| rest.contains(t)) {
            return comps[..=i]
                .iter()
                .fold(tree.to_path_buf(), |p, c| p.join(c));
        }
    }
    match header_dir.parent() {
        Some(p) if p.starts_with(tree) && p != tree => p.to_path_buf(),
        _ => header_dir.to_path_buf(),
    }
}

/// The packages below `tree`, outermost first, none inside another.
pub fn packages(tree: &Path) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    header_folders(tree, 0, &mut dirs);
    let mut pkgs: Vec<PathBuf> = dirs.iter().map(|d| package_of(tree, d)).collect();
    pkgs.sort();
    pkgs.dedup();
    let all = pkgs.clone();
    pkgs.retain(|p| !all.iter().any(|q| q != p && p.starts_with(q)));
    pkgs
}

/// The harness's manifests: (id, path, labels).
pub fn manifests(harness: &Path) -> Vec<(String, PathBuf, Manifest)> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(harness) else {
        return out;
    };
    let mut dirs: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    dirs.sort();
    for d in dirs {
        let path = d.join("kat.sha256");
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        if let Ok(m) = Manifest::parse(&text) {
            let id = d
                .file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned();
            out.push((id, path, m));
        }
    }
    out
}

/// The id whose manifest labels the package's instance folders match (most folders named
/// exactly or by all their tokens; a tie is no answer), with why.
pub fn match_id(
    pkg: &Path,
    manifests: &[(String, PathBuf, Manifest)],
) -> (Option<(String, PathBuf)>, String) {
    let Ok((folders, _)) = package::folders(pkg) else {
        return (None, "no instance folders".into());
    };
    let mut scored: Vec<(usize, &str, &PathBuf)> = manifests
        .iter()
        .map(|(id, path, m)| {
            let (named, _) = package::name_folders(&folders, Some(m));
            let n = named
                .iter()
                .filter(|(_, how)| matches!(how, Naming::Exact | Naming::Tokens(_)))
                .count();
            (n, id.as_str(), path)
        })
        .filter(|(n, _, _)| *n > 0)
        .collect();
    scored.sort_by_key(|(n, id, _)| (std::cmp::Reverse(*n), id.to_string()));
    match scored.as_slice() {
        [] => (
            None,
            format!(
                "no harness manifest names any of its {} instance folders",
                folders.len()
            ),
        ),
        [(n, id, p), rest @ ..] if rest.first().is_none_or(|r| r.0 < *n) => (
            Some((id.to_string(), (*p).clone())),
            format!(
                "the harness manifest {id}/kat.sha256 names {n} of its {} instance folders",
                folders.len()
            ),
        ),
        [(n, id, _), (_, id2, _), ..] => (
            None,
            format!("the harness manifests {id} and {id2} each name {n} of its instance folders"),
        ),
        [_] => unreachable!("a single match is taken above"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn touch(root: &Path, rel: &str) {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, "").unwrap();
    }

    #[test]
    fn packages_at_any_depth_in_any_layout() {
        let d = tempfile::tempdir().unwrap();
        let t = d.path();
        touch(
            t,
            "01-pk/02-kem/Alpha/Impl and KAT/Implementations/Reference_Implementation/Alpha-1/KEM_AlgorithmInstance.h",
        );
        touch(
            t,
            "01-pk/02-kem/Alpha/Impl and KAT/Implementations/Reference_Implementation/Alpha-3/KEM_AlgorithmInstance.h",
        );
        touch(t, "03-hash/Beta/Beta-256/CryptHash_AlgorithmInstance.h");
        touch(t, "03-hash/Beta/Beta-512/src/CryptHash_AlgorithmInstance.h");
        touch(t, "Gamma/KEX_AlgorithmInstance.h");
        let pk = packages(t);
        let rel: Vec<String> = pk
            .iter()
            .map(|p| p.strip_prefix(t).unwrap().display().to_string())
            .collect();
        assert_eq!(rel, ["01-pk/02-kem/Alpha", "03-hash/Beta", "Gamma"]);
    }
}
