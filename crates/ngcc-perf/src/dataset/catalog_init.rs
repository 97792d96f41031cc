//! `ngcc-perf catalog`: catalog files for a dataset ngcc-perf measured itself (the reference
//! curates these by hand; for our own runs the facts come from the dataset).

use super::catalog::{
    DOWNLOADS, EXTERNAL_SIZES, KAT_ISSUES, KEX_BANDWIDTH, SECURITY_TARGETS, SUMMARY_NOTES, SURVEY,
    SYSTEMS,
};
use super::load;
use super::schema::{EnvField, Op};
use crate::util::atomic_write;
use anyhow::{Context, Result};
use clap::Args;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct CatalogArgs {
    /// A published dataset (or run directory) measured by ngcc-perf.
    pub dataset: PathBuf,
    /// Folder for the catalog files; rows of other systems and candidates already there are
    /// kept (one folder may serve several datasets), rows of this dataset's ids replaced.
    #[arg(long)]
    pub out: PathBuf,
    /// System id (default: the dataset's campaign.json system_id).
    #[arg(long)]
    pub system: Option<String>,
}

pub fn run(args: CatalogArgs) -> Result<ExitCode> {
    write_catalog(&args.dataset, &args.out, args.system.as_deref())?;
    crate::util::out!("catalog: {}", args.out.display());
    Ok(ExitCode::SUCCESS)
}

pub fn write_catalog(dataset: &Path, out: &Path, system: Option<&str>) -> Result<()> {
    let ds = load::load(dataset)?;
    let sys = system
        .map(str::to_string)
        .or_else(|| ds.campaign.system_id.clone())
        .context("no --system and the dataset's campaign.json has no system_id")?;
    let env = ds.campaign.environment_at_start.clone().unwrap_or_default();
    let text = |f: &EnvField<String>| match f {
        EnvField::Value(s) => s.clone(),
        _ => "unknown".to_string(),
    };
    let state = if ds.campaign.host_problems.is_empty() {
        "host fixed".to_string()
    } else {
        format!("host not fixed ({})", ds.campaign.host_problems.join("; "))
    };
    let description = format!("{}, {}", text(&env.cpu_model), state).replace(';', ",");
    let mut systems: Vec<String> = read_rows(&out.join(SYSTEMS))
        .into_iter()
        .filter(|r| !r.starts_with(&format!("{sys};")))
        .collect();
    systems.push(format!(
        "{sys};{};{};{description}",
        text(&env.architecture),
        text(&env.hostname)
    ));
    write(out, SYSTEMS, "ID;Arch;Hostname;Description", &systems)?;

    let mut algorithms: BTreeMap<String, (String, String)> = BTreeMap::new();
    // The manifests' groups (blank: supplementary), one row per instance of the dataset.
    let mut targets = Vec::new();
    for (_, e) in ds.build_entries() {
        if e.candidate != super::schema::baseline::CANDIDATE {
            targets.push(format!(
                "{};{};{};{}",
                e.candidate,
                e.label,
                e.security_target.map(|b| b.to_string()).unwrap_or_default(),
                if e.representative { "true" } else { "" }
            ));
        }
    }
    merge(
        out,
        SECURITY_TARGETS,
        2,
        "ID;Instance;TargetBits;Representative",
        &targets,
    )?;
    for (_, e) in ds.build_entries() {
        let category = match e.kind.as_deref() {
            Some("sig") => "sign",
            Some(k) => k,
            None => super::catalog::category(&e.candidate),
        }
        .to_string();
        algorithms.entry(e.candidate.clone()).or_insert((
            category,
            e.algorithm.clone().unwrap_or_else(|| e.candidate.clone()),
        ));
    }
    let downloads: Vec<String> = algorithms
        .iter()
        .map(|(id, (cat, alg))| format!("{id};{cat};;{alg};;;;"))
        .collect();
    merge(
        out,
        DOWNLOADS,
        1,
        "ID;Category;No;Algorithm;ZipFile;DownloadURL;PageURL;ForumThread",
        &downloads,
    )?;

    let mut sizes = Vec::new();
    let mut kex = Vec::new();
    for r in &ds.records {
        let rec = &r.record;
        let Some(st) = &rec.stats else { continue };
        let size = |k: &str| st.sizes.get(k).and_then(|v| v.as_u64()).unwrap_or(0);
        match (
            algorithms.get(&rec.candidate).map(|a| a.0.as_str()),
            &rec.operation,
        ) {
            (Some("kem"), Op::Keygen) => sizes.push(format!(
                "{};{};{};{};;encoded",
                rec.candidate,
                rec.label,
                size("pk_bytes"),
                size("ct_bytes")
            )),
            (Some("sign"), Op::Keygen) => sizes.push(format!(
                "{};{};{};;{};encoded",
                rec.candidate,
                rec.label,
                size("pk_bytes"),
                size("signature_bytes")
            )),
            (Some("kex"), Op::Exchange) => kex.push(format!(
                "{};{};{};{};{}",
                rec.candidate,
                rec.label,
                size("pk_bytes"),
                size("pk_bytes"),
                size("total_msg_bytes")
            )),
            _ => {}
        }
    }
    merge(
        out,
        EXTERNAL_SIZES,
        2,
        "ID;Instance;PublicKeyBytes;CiphertextBytes;SignatureBytes;Basis",
        &sizes,
    )?;
    merge(
        out,
        KEX_BANDWIDTH,
        2,
        "ID;Instance;PkABytes;PkBBytes;ProtocolMessageBytes",
        &kex,
    )?;
    for (name, header) in [
        (SURVEY, "ID;Verdict;Notes"),
        (KAT_ISSUES, "ID;Label;Action;Cause"),
        (SUMMARY_NOTES, "ID;Label;Note"),
    ] {
        if !out.join(name).exists() {
            write(out, name, header, &[])?;
        }
    }
    Ok(())
}

fn read_rows(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with("ID;") && !l.trim().is_empty())
        .map(str::to_string)
        .collect()
}

/// Writes `rows` into `dir/name`, keeping the file's rows of other keys (the first
/// `key_fields` fields: ID, or ID and instance), so one catalog folder serves several
/// datasets; rows are in key order.
fn merge(dir: &Path, name: &str, key_fields: usize, header: &str, rows: &[String]) -> Result<()> {
    let key = |r: &str| -> String { r.split(';').take(key_fields).collect::<Vec<_>>().join(";") };
    let mut by_key: BTreeMap<String, String> = read_rows(&dir.join(name))
        .into_iter()
        .map(|r| (key(&r), r))
        .collect();
    for r in rows {
        by_key.insert(key(r), r.clone());
    }
    let rows: Vec<String> = by_key.into_values().collect();
    write(dir, name, header, &rows)
}

fn write(dir: &Path, name: &str, header: &str, rows: &[String]) -> Result<()> {
    let mut text =
        format!("# Written by `ngcc-perf catalog` from the dataset's own records.\n{header}\n");
    for r in rows {
        let _ = writeln!(text, "{r}");
    }
    atomic_write(&dir.join(name), text.as_bytes())
}
