//! `cargo xtask test [ARGS…]` (alias in .cargo/config.toml): see the library's documentation.
//! ARGS go to `cargo test` after `--release --workspace` (e.g. `-- --test-threads 1`).

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use xtask::{
    INPUTS, PACKAGES, Privilege, REQUIRE, install_commands, manual_command, missing, on_path,
    search_dirs,
};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("test") => test(&args[1..]),
        _ => {
            eprintln!(
                "usage: cargo xtask test [CARGO TEST ARGS…]\n\
                 installs the Debian packages the tests need ({}) when it can, then runs\n\
                 `cargo test --release --workspace` with every NGCC_REQUIRE_* set to 1",
                PACKAGES
                    .iter()
                    .map(|p| p.name)
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            ExitCode::from(2)
        }
    }
}

/// The workspace root: this crate lives in `crates/xtask`.
fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn test(extra: &[String]) -> ExitCode {
    let dirs = search_dirs(std::env::var_os("PATH"));
    let need = missing(|p| on_path(&dirs, p));
    if !need.is_empty() {
        for p in &need {
            eprintln!("xtask: {} is not installed: {}", p.name, p.why);
        }
        let privilege = privilege();
        if privilege == Privilege::None || !on_path(&dirs, "apt-get") {
            eprintln!(
                "xtask: cannot install them here (needs root or password-less sudo, and apt-get); \
                 run this, then the test command again:\n    {}",
                manual_command(&need)
            );
            return ExitCode::from(2);
        }
        let (t0, cpu0) = (std::time::Instant::now(), children_cpu_s());
        for cmd in install_commands(&need, privilege) {
            eprintln!("xtask: {}", cmd.join(" "));
            // apt's and dpkg's progress (thousands of lines) would bury the test output;
            // their errors go to stderr, which stays.
            let ok = Command::new(&cmd[0])
                .args(&cmd[1..])
                .stdout(std::process::Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
            if !ok {
                eprintln!(
                    "xtask: `{}` failed; install the packages, then run the test command again:\n    {}",
                    cmd.join(" "),
                    manual_command(&need)
                );
                return ExitCode::from(2);
            }
        }
        eprintln!(
            "xtask: installed in {:.0} s, {:.1} CPU-s",
            t0.elapsed().as_secs_f64(),
            children_cpu_s() - cpu0
        );
        // A package whose programs are still absent (a renamed binary, a partial install)
        // would fail its tests later, after minutes of building: stop here instead.
        let still = missing(|p| on_path(&dirs, p));
        if !still.is_empty() {
            eprintln!(
                "xtask: still missing after the install: {}",
                still.iter().map(|p| p.name).collect::<Vec<_>>().join(", ")
            );
            return ExitCode::from(2);
        }
    }

    let root = workspace_root();
    let mut absent = false;
    for (var, default, probe, what) in INPUTS {
        let dir = std::env::var_os(var)
            .map(PathBuf::from)
            .unwrap_or_else(|| root.join(default));
        if !dir.join(probe).exists() {
            eprintln!(
                "xtask: {what} is not at {} (set {var}, or put it at {default} beside the checkout)",
                dir.display()
            );
            absent = true;
        }
    }
    if absent {
        return ExitCode::from(2);
    }

    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(&root)
        .args(["test", "--release", "--workspace"])
        .args(extra);
    for var in REQUIRE {
        cmd.env(var, "1");
    }
    // `cargo run` describes this binary's package to it; the tests must not inherit that.
    for (k, _) in std::env::vars_os() {
        let k = k.to_string_lossy();
        if k.starts_with("CARGO_PKG_")
            || matches!(
                k.as_ref(),
                "CARGO_MANIFEST_DIR"
                    | "CARGO_MANIFEST_PATH"
                    | "CARGO_CRATE_NAME"
                    | "CARGO_BIN_NAME"
            )
        {
            cmd.env_remove(k.as_ref());
        }
    }
    eprintln!(
        "xtask: cargo test --release --workspace {} ({}=1)",
        extra.join(" "),
        REQUIRE.join("=1 ")
    );
    match cmd.status() {
        Ok(s) if s.success() => ExitCode::SUCCESS,
        Ok(s) => ExitCode::from(s.code().unwrap_or(1).clamp(1, 255) as u8),
        Err(e) => {
            eprintln!("xtask: cannot run cargo: {e}");
            ExitCode::from(2)
        }
    }
}

/// Root, else password-less sudo (`sudo -n true` succeeds), else neither.
fn privilege() -> Privilege {
    if std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0) {
        return Privilege::Root;
    }
    let sudo = Command::new("sudo")
        .args(["-n", "true"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if sudo {
        Privilege::Sudo
    } else {
        Privilege::None
    }
}

/// CPU seconds of this process's waited-for children and their descendants (fields 16 and 17
/// of /proc/self/stat, in USER_HZ = 100 ticks on Linux): what the install cost, apt and dpkg
/// included, for the user to see beside the test run's own figures.
fn children_cpu_s() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // The command name (field 2) may hold spaces; the fields after its ')' are fixed.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<f64> = rest
        .split_whitespace()
        .map(|x| x.parse().unwrap_or(0.0))
        .collect();
    // rest starts at field 3: cutime is field 16, cstime field 17.
    (f.get(13).copied().unwrap_or(0.0) + f.get(14).copied().unwrap_or(0.0)) / 100.0
}
