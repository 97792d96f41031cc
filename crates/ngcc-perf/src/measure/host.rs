//! Host checks: is this machine fit for publishable cycle counts?

use clap::Args;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct CheckArgs {
    /// The benchmark CPU the checks refer to.
    #[arg(long, default_value_t = 1)]
    pub cpu: u32,
}

pub fn run_check(_args: CheckArgs) -> anyhow::Result<ExitCode> {
    crate::cli::not_built("check")
}
