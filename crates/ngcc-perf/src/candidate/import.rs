//! `ngcc-perf import pqclean`: one manifest per PQClean scheme family.

use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct ImportArgs {
    /// What to import: `pqclean`.
    pub source: String,
    /// The tree to import (default: the PQClean tree cargo fetched).
    pub dir: Option<PathBuf>,
    /// Folder to write the candidate folders into.
    #[arg(long)]
    pub out: PathBuf,
}

pub fn run(_args: ImportArgs) -> anyhow::Result<ExitCode> {
    crate::cli::not_built("import")
}
