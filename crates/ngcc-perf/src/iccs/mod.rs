//! `ngcc-perf iccs …`: the embedded C helpers, checked against the Rust model.

use clap::{Args, Subcommand};
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct IccsArgs {
    #[command(subcommand)]
    pub cmd: IccsCmd,
}

#[derive(Subcommand, Debug)]
pub enum IccsCmd {
    /// Check the C helpers against the Rust model and the published vectors.
    Selftest,
}

pub fn run(args: IccsArgs) -> anyhow::Result<ExitCode> {
    match args.cmd {
        IccsCmd::Selftest => selftest(),
    }
}

pub fn selftest() -> anyhow::Result<ExitCode> {
    crate::cli::not_built("iccs selftest")
}
