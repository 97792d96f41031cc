//! `ngcc-perf publish`: a run's evidence, with relative paths, as a dataset.

use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct PublishArgs {
    #[arg(long)]
    pub run: PathBuf,
    #[arg(long)]
    pub system: String,
    #[arg(long)]
    pub out: PathBuf,
}

pub fn run(_args: PublishArgs) -> anyhow::Result<ExitCode> {
    crate::cli::not_built("publish")
}
