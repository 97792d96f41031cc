//! Third-party sample sources, obtained through cargo's own fetch (never committed).

use clap::{Args, Subcommand};
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct SamplesArgs {
    #[command(subcommand)]
    pub cmd: SamplesCmd,
}

#[derive(Subcommand, Debug)]
pub enum SamplesCmd {
    /// Print the absolute path of the PQClean tree (fetching it with cargo if needed).
    Pqclean,
}

pub fn run(_args: SamplesArgs) -> anyhow::Result<ExitCode> {
    crate::cli::not_built("samples pqclean")
}
