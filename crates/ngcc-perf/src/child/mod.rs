//! Code that runs inside the sandboxed child process (the same binary, `__child`).

use clap::Args;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct ChildArgs {
    /// JSON request file written by the orchestrator.
    pub request: std::path::PathBuf,
}

pub fn run(_args: ChildArgs) -> anyhow::Result<ExitCode> {
    crate::cli::not_built("child")
}
