use std::process::ExitCode;

fn main() -> ExitCode {
    ngcc_perf::cli::main()
}
