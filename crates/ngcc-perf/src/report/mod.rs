//! Reports: pure functions from a dataset (plus catalogs) to text.

use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct ReportArgs {
    pub dataset: PathBuf,
    #[arg(long)]
    pub catalog: PathBuf,
    #[arg(long)]
    pub out: PathBuf,
    #[arg(long)]
    pub check: bool,
}

pub fn run(_args: ReportArgs) -> anyhow::Result<ExitCode> {
    crate::cli::not_built("report")
}
