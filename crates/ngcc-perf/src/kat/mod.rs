//! KAT flows (children in `child::kat_*`), judging, logs and kat.sha256 manifests.

pub(crate) mod log;
pub(crate) mod run;

use crate::candidate::kat_manifest::{self as manifest, Entry, LineMode, Manifest};
use crate::util::{Failure, atomic_write};
use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct KatArgs {
    #[command(subcommand)]
    pub cmd: KatCmd,
}

#[derive(Subcommand, Debug)]
pub enum KatCmd {
    /// Write a kat.sha256 manifest from the KAT files a run generated.
    ///
    /// Hashes every file under RUN/katgen/<cand>/<label>/ in strict mode and prints the lines
    /// `<sha256> strict <label>/<file>`, sorted by name (the reference format).
    Manifest(ManifestArgs),
}

#[derive(Args, Debug)]
pub struct ManifestArgs {
    /// Run directory whose katgen/ folder holds the generated KAT text.
    pub run: PathBuf,
    /// Candidate id.
    #[arg(long)]
    pub cand: String,
    /// Write the manifest to this file (atomically) instead of printing it.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

pub fn run(args: KatArgs) -> Result<ExitCode> {
    match args.cmd {
        KatCmd::Manifest(a) => write_manifest(&a),
    }
}

fn write_manifest(args: &ManifestArgs) -> Result<ExitCode> {
    if !args.run.is_dir() {
        return Err(Failure::usage(format!(
            "{}: no such run directory",
            args.run.display()
        )));
    }
    let dir = args.run.join("katgen").join(&args.cand);
    if !dir.is_dir() {
        return Err(Failure::usage(format!(
            "{}: no KAT files for candidate {:?} (run the kat phase first)",
            dir.display(),
            args.cand
        )));
    }
    let manifest = manifest_of(&dir)?;
    if manifest.entries.is_empty() {
        return Err(Failure::usage(format!(
            "{}: no KAT files for candidate {:?}",
            dir.display(),
            args.cand
        )));
    }
    let text = manifest.render();
    match &args.out {
        None => crate::util::out_text!("{text}"),
        Some(path) => {
            atomic_write(path, text.as_bytes())?;
            crate::util::say!(
                "kat manifest: {} files of {} -> {}",
                manifest.entries.len(),
                args.cand,
                path.display()
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Strict lines for `<dir>/<label>/<file>`, every label folder and regular file.
pub fn manifest_of(dir: &Path) -> Result<Manifest> {
    let mut entries = Vec::new();
    for label in sorted_entries(dir)? {
        let label_dir = dir.join(&label);
        if !label_dir.is_dir() {
            continue;
        }
        for file in sorted_entries(&label_dir)? {
            let path = label_dir.join(&file);
            if !path.is_file() {
                continue;
            }
            let bytes =
                std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?;
            entries.push(Entry {
                sha256: manifest::digest(&String::from_utf8_lossy(&bytes), LineMode::STRICT),
                mode: LineMode::STRICT,
                name: format!("{label}/{file}"),
            });
        }
    }
    Ok(Manifest { entries })
}

/// Names in a folder, without hidden and temporary files, sorted.
fn sorted_entries(dir: &Path) -> Result<Vec<String>> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with('.') && !n.ends_with(".tmp"))
        .collect();
    names.sort();
    Ok(names)
}
