//! `ngcc-perf bench …`: benchmarks of the harness itself (ratios, not tests).

use clap::{Args, Subcommand};
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct BenchArgs {
    #[command(subcommand)]
    pub cmd: BenchCmd,
}

#[derive(Subcommand, Debug)]
pub enum BenchCmd {
    /// Harness vs a minimal C loop on the same library and counter.
    Overhead,
}

pub fn run(_args: BenchArgs) -> anyhow::Result<ExitCode> {
    crate::cli::not_built("bench")
}
