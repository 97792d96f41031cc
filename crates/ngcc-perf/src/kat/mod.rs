//! KAT flows (children in `child::kat_*`), judging, logs and kat.sha256 manifests.

pub mod log;
pub mod run;

use clap::{Args, Subcommand};
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct KatArgs {
    #[command(subcommand)]
    pub cmd: KatCmd,
}

#[derive(Subcommand, Debug)]
pub enum KatCmd {
    /// Write a kat.sha256 manifest from the KAT files a run generated.
    Manifest,
}

pub fn run(_args: KatArgs) -> anyhow::Result<ExitCode> {
    crate::cli::not_built("kat manifest")
}
