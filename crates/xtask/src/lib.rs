//! `cargo xtask test`, the README's test command: the tests are strict (a missing prerequisite
//! fails its test, see tests/it/common), so this command first brings the Debian packages they
//! need, or stops before running anything with the one command that would, then runs every
//! test with each `NGCC_REQUIRE_*` set to 1 so that nothing can skip.
//!
//! Standard library only (see Cargo.toml): it must build in about a second from an empty
//! `target/` and must not change how the product's dependencies are compiled.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// A Debian package the tests need, and the programs whose presence shows it is installed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Package {
    pub name: &'static str,
    /// Every one must be found (on PATH or in the sbin folders, where the daemons live).
    pub programs: &'static [&'static str],
    /// Which tests need it: printed when it is missing.
    pub why: &'static str,
}

/// What the test suite runs besides cargo and gcc.
pub const PACKAGES: &[Package] = &[
    Package {
        name: "chromium",
        programs: &["chromium"],
        why: "the site tests render every page in headless Chromium",
    },
    Package {
        name: "slurm-wlm",
        programs: &["slurmctld", "slurmd", "sbatch", "scancel", "squeue"],
        why: "the Slurm test starts a single-node cluster of its own",
    },
    Package {
        name: "munge",
        programs: &["munged"],
        why: "Slurm authenticates its daemons with munge",
    },
    Package {
        name: "valgrind",
        programs: &["valgrind"],
        why: "the ct tests run memcheck over candidate code",
    },
    Package {
        name: "cmake",
        programs: &["cmake"],
        why: "the importer configures CMake packages (build observation), and host records name the cmake version",
    },
    Package {
        name: "make",
        programs: &["make"],
        why: "the importer runs a package's Makefile in the jail to learn its instances",
    },
    Package {
        name: "g++",
        programs: &["g++"],
        why: "a test compiles the ICCS helper headers as C++ (extern \"C\" linkage)",
    },
];

/// Inputs the tests read that no package manager provides: (env var, default beside the
/// checkout, file or folder that must exist below it, what it is).
pub const INPUTS: &[(&str, &str, &str, &str)] = &[
    (
        "NGCC_ANCHOR_FIXTURES",
        "../shared/fixtures/anchor-arm_1",
        "campaign.json",
        "the reference fixture",
    ),
    (
        "NGCC_R1_CORPUS",
        "../shared/ngcc-r1",
        "packages",
        "the NGCC Round-1 corpus",
    ),
];

/// Set to 1 for the test run: a test whose prerequisite is missing then fails instead of
/// printing `SKIPPED` (tests/it/common `not_available`).
pub const REQUIRE: &[&str] = &[
    "NGCC_REQUIRE_CHROMIUM",
    "NGCC_REQUIRE_SLURM",
    "NGCC_REQUIRE_FIXTURE",
    "NGCC_REQUIRE_CORPUS",
    "NGCC_REQUIRE_PQCLEAN",
];

/// The folders searched for a program: PATH, then the sbin folders (a user's PATH often lacks
/// them, and the tests look there too).
pub fn search_dirs(path: Option<OsString>) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = path
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default();
    for d in ["/usr/sbin", "/sbin", "/usr/bin", "/bin"] {
        let d = PathBuf::from(d);
        if !dirs.contains(&d) {
            dirs.push(d);
        }
    }
    dirs
}

/// The packages of `PACKAGES` with a program that `found` does not find, in table order.
pub fn missing(found: impl Fn(&str) -> bool) -> Vec<Package> {
    PACKAGES
        .iter()
        .filter(|p| !p.programs.iter().all(|prog| found(prog)))
        .copied()
        .collect()
}

/// A program file in one of `dirs`.
pub fn on_path(dirs: &[PathBuf], program: &str) -> bool {
    dirs.iter().any(|d| is_executable(&d.join(program)))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// How the packages can be installed on this machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Privilege {
    Root,
    /// `sudo -n` works (no password prompt: the command must not hang in CI).
    Sudo,
    None,
}

/// The argument vectors that install `packages`: refresh the package lists (a fresh machine or
/// container has none), then install without recommended packages (Chromium's recommends alone
/// would double the download; the tests need none of them).
pub fn install_commands(packages: &[Package], privilege: Privilege) -> Vec<Vec<String>> {
    let prefix: &[&str] = match privilege {
        Privilege::Root => &[],
        Privilege::Sudo | Privilege::None => &["sudo", "-n"],
    };
    let mut update: Vec<String> = prefix.iter().map(|s| s.to_string()).collect();
    update.extend(["apt-get", "update", "-qq"].map(String::from));
    let mut install: Vec<String> = prefix.iter().map(|s| s.to_string()).collect();
    install.extend(
        [
            "env",
            "DEBIAN_FRONTEND=noninteractive",
            "apt-get",
            "install",
            "-y",
            "-qq",
            "--no-install-recommends",
        ]
        .map(String::from),
    );
    install.extend(packages.iter().map(|p| p.name.to_string()));
    vec![update, install]
}

/// The one line a user without root or password-less sudo runs to install `packages`.
pub fn manual_command(packages: &[Package]) -> String {
    let names: Vec<&str> = packages.iter().map(|p| p.name).collect();
    format!(
        "sudo apt-get update && sudo apt-get install -y --no-install-recommends {}",
        names.join(" ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_lists_packages_with_any_program_absent_in_table_order() {
        let have = [
            "chromium",
            "slurmctld",
            "slurmd",
            "munged",
            "valgrind",
            "make",
            "g++",
        ];
        let m = missing(|p| have.contains(&p));
        let names: Vec<&str> = m.iter().map(|p| p.name).collect();
        // slurm-wlm lacks sbatch and friends: one absent program is enough.
        assert_eq!(names, ["slurm-wlm", "cmake"]);
        assert!(missing(|_| true).is_empty());
        assert_eq!(missing(|_| false).len(), PACKAGES.len());
    }

    #[test]
    fn install_commands_refresh_lists_then_install_without_recommends() {
        let pk = missing(|p| p != "cmake" && p != "munged");
        let root = install_commands(&pk, Privilege::Root);
        assert_eq!(root[0], ["apt-get", "update", "-qq"]);
        assert_eq!(
            root[1].join(" "),
            "env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends munge cmake"
        );
        let sudo = install_commands(&pk, Privilege::Sudo);
        assert!(sudo.iter().all(|c| c[0] == "sudo" && c[1] == "-n"));
        assert_eq!(
            manual_command(&pk),
            "sudo apt-get update && sudo apt-get install -y --no-install-recommends munge cmake"
        );
    }

    /// The README's first command is `cargo run --release -- demo`: with xtask a second binary
    /// in the workspace, cargo can choose only when the default members exclude it.
    #[test]
    fn cargo_run_without_package_still_means_the_product() {
        let manifest =
            std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../Cargo.toml"))
                .unwrap();
        let line = manifest
            .lines()
            .find(|l| l.starts_with("default-members"))
            .expect("the workspace names its default members");
        assert!(
            line.contains("crates/ngcc-perf") && !line.contains("xtask"),
            "{line}"
        );
    }

    #[test]
    fn search_dirs_end_with_the_sbin_folders_once() {
        let d = search_dirs(Some(OsString::from("/opt/x:/usr/sbin")));
        assert_eq!(d[0], PathBuf::from("/opt/x"));
        assert_eq!(d.iter().filter(|p| *p == Path::new("/usr/sbin")).count(), 1);
        assert!(d.contains(&PathBuf::from("/sbin")));
        assert_eq!(search_dirs(None).len(), 4);
    }
}
