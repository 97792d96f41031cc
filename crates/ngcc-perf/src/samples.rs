//! Third-party sample sources, obtained through cargo's own fetch (never committed).
//!
//! `samples/pqclean/Cargo.toml` pins `pqcrypto-mlkem = "=0.1.1"`, whose crate ships the whole
//! PQClean tree with `META.yml` KAT digests. `cargo metadata` downloads it (nothing is built)
//! and tells where cargo unpacked it.

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::sync::OnceLock;

/// The ICCS sample candidates shipped with the repository, when running from a checkout.
pub fn iccs_samples() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../samples/iccs");
    dir.is_dir()
        .then(|| std::path::absolute(dir).ok())
        .flatten()
}

const PQCLEAN_CRATE: &str = "pqcrypto-mlkem";
const MANIFEST: &str = include_str!("../../../samples/pqclean/Cargo.toml");
const LOCKFILE: &str = include_str!("../../../samples/pqclean/Cargo.lock");

#[derive(Args, Debug)]
pub struct SamplesArgs {
    #[command(subcommand)]
    pub cmd: SamplesCmd,
}

#[derive(Subcommand, Debug)]
pub enum SamplesCmd {
    /// Print the absolute path of the PQClean tree (fetched by cargo if needed).
    ///
    /// The tree comes from the pinned crate pqcrypto-mlkem 0.1.1 (35 schemes, clean and avx2
    /// implementations, META.yml with official KAT digests). Needs network access the first time.
    Pqclean,
}

pub fn run(args: SamplesArgs) -> Result<ExitCode> {
    match args.cmd {
        SamplesCmd::Pqclean => {
            crate::util::out!("{}", pqclean_dir()?.display());
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// The PQClean tree, located once per process.
pub fn pqclean_dir() -> Result<PathBuf> {
    static DIR: OnceLock<std::result::Result<PathBuf, String>> = OnceLock::new();
    DIR.get_or_init(|| locate_pqclean().map_err(|e| format!("{e:#}")))
        .clone()
        .map_err(|e| anyhow::anyhow!(e))
}

fn locate_pqclean() -> Result<PathBuf> {
    if let Some(dir) = std::env::var_os("NGCC_PQCLEAN_DIR") {
        let dir = PathBuf::from(dir);
        if dir.join("crypto_kem").is_dir() {
            return Ok(dir);
        }
        bail!(
            "NGCC_PQCLEAN_DIR={} has no crypto_kem folder",
            dir.display()
        );
    }
    let manifest = fetch_manifest_dir()?.join("Cargo.toml");
    let out = Command::new(cargo_program())
        .args(["metadata", "--format-version", "1", "--manifest-path"])
        .arg(&manifest)
        .output()
        .context("running cargo (is the Rust toolchain on PATH?)")?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let last = err
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("")
            .trim();
        bail!(
            "cargo could not fetch the PQClean sources (offline? no access to crates.io?): {last}"
        );
    }
    let meta: serde_json::Value =
        serde_json::from_slice(&out.stdout).context("parsing cargo metadata")?;
    let packages = meta["packages"]
        .as_array()
        .context("cargo metadata without packages")?;
    let pkg = packages
        .iter()
        .find(|p| p["name"] == PQCLEAN_CRATE)
        .with_context(|| format!("cargo metadata does not list {PQCLEAN_CRATE}"))?;
    let path = pkg["manifest_path"].as_str().context("no manifest_path")?;
    let dir = Path::new(path)
        .parent()
        .context("manifest without folder")?
        .join("pqclean");
    if !dir.join("crypto_kem").is_dir() {
        bail!("{} does not hold a PQClean tree", dir.display());
    }
    Ok(dir)
}

/// The committed fetch manifest when running from a checkout, else a copy in the cache.
fn fetch_manifest_dir() -> Result<PathBuf> {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../samples/pqclean");
    if repo.join("Cargo.toml").is_file() {
        return Ok(repo);
    }
    let base = crate::util::cache_home().unwrap_or_else(std::env::temp_dir);
    let dir = base.join("ngcc-perf/samples-pqclean");
    for (name, text) in [
        ("Cargo.toml", MANIFEST),
        ("Cargo.lock", LOCKFILE),
        ("lib.rs", ""),
    ] {
        let path = dir.join(name);
        if std::fs::read_to_string(&path).ok().as_deref() != Some(text) {
            crate::util::atomic_write(&path, text.as_bytes())?;
        }
    }
    Ok(dir)
}

fn cargo_program() -> std::ffi::OsString {
    std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into())
}
