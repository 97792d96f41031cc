//! `ngcc-perf demo`: the main job on the bundled default.

use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct DemoArgs {
    /// Output folder for the run, dataset and pages.
    #[arg(long, default_value = "demo-out")]
    pub out: PathBuf,
}

pub fn run(_args: DemoArgs) -> anyhow::Result<ExitCode> {
    println!("demo: running the ICCS helper self-test (later phases are not built yet)");
    crate::iccs::selftest()
}
