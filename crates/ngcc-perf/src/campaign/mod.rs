//! `ngcc-perf campaign`: phases over a run directory.

use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct CampaignArgs {
    /// `all` or a comma list of phases: build, kat, calibrate, measure, profile.
    pub phases: String,
    /// Folder searched recursively for candidate.toml files.
    #[arg(long)]
    pub candidates: PathBuf,
    /// Run directory (created if missing; an existing one is resumed).
    #[arg(long)]
    pub run: PathBuf,
}

pub fn run(_args: CampaignArgs) -> anyhow::Result<ExitCode> {
    crate::cli::not_built("campaign")
}
