//! `ngcc-perf validate`: recompute every figure of a dataset from raw evidence.

use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct ValidateArgs {
    pub dataset: PathBuf,
    #[arg(long)]
    pub catalog: PathBuf,
    #[arg(long)]
    pub pages: Option<PathBuf>,
}

pub fn run(_args: ValidateArgs) -> anyhow::Result<ExitCode> {
    crate::cli::not_built("validate")
}
