//! Landlock, applied by the worker to itself before it loads the library: the listed system
//! folders and inputs readable, the scratch folder writable, nothing executable, no symlinks
//! or device nodes created, no TCP, no signals to processes outside the domain.

use anyhow::{Context, Result, bail};
use landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, LandlockStatus,
    PathBeneath, PathFd, Ruleset, RulesetAttr, RulesetCreatedAttr, RulesetStatus, Scope,
};
use std::path::PathBuf;

/// The newest ABI these rules were written and tested for (the kernel may offer less).
const TESTED: ABI = ABI::V6;

fn read() -> BitFlags<AccessFs> {
    AccessFs::ReadFile | AccessFs::ReadDir
}

fn write() -> BitFlags<AccessFs> {
    read()
        | AccessFs::WriteFile
        | AccessFs::RemoveDir
        | AccessFs::RemoveFile
        | AccessFs::MakeDir
        | AccessFs::MakeReg
        | AccessFs::Refer
        | AccessFs::Truncate
}

/// Restricts the calling process; returns the Landlock ABI in force, or why there is none.
pub fn restrict(read_only: &[PathBuf], read_write: &[PathBuf]) -> Result<u32> {
    let ro: Vec<_> = read_only.iter().map(|p| (p.clone(), read())).collect();
    let rw: Vec<_> = read_write.iter().map(|p| (p.clone(), write())).collect();
    restrict_rules(&[ro, rw].concat())
}

/// The rules of a tool run: it may run programs (compilers run their passes, `make` runs
/// `sh`), from the system folders, its inputs and what it built in scratch.
pub fn restrict_tool(rules: &super::tool_exec::Rules) -> Result<u32> {
    let exec = AccessFs::Execute;
    let mut all = Vec::new();
    all.extend(rules.read_exec.iter().map(|p| (p.clone(), read() | exec)));
    all.extend(rules.read_only.iter().map(|p| (p.clone(), read() | exec)));
    all.extend(rules.devices.iter().map(|p| {
        (
            p.clone(),
            AccessFs::ReadFile | AccessFs::WriteFile | AccessFs::IoctlDev,
        )
    }));
    all.push(("/proc".into(), read()));
    all.extend(
        rules
            .read_write
            .iter()
            .map(|p| (p.clone(), write() | exec | AccessFs::MakeDir)),
    );
    restrict_rules(&all)
}

/// The worker's rules plus execution from `/usr`, applied before a job's tool (valgrind) is
/// exec'd: its launcher execs the tool binary under /usr/libexec; the worker it then loads
/// (by mmap, not exec) is only read.
pub fn restrict_before_tool(read_only: &[PathBuf], read_write: &[PathBuf]) -> Result<u32> {
    let mut all: Vec<_> = read_only.iter().map(|p| (p.clone(), read())).collect();
    all.push(("/usr".into(), read() | AccessFs::Execute));
    all.extend(read_write.iter().map(|p| (p.clone(), write())));
    restrict_rules(&all)
}

fn restrict_rules(rules: &[(PathBuf, BitFlags<AccessFs>)]) -> Result<u32> {
    let mut rs = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(AccessFs::from_all(TESTED))?
        .handle_access(AccessNet::from_all(TESTED))?
        .scope(Scope::from_all(TESTED))?
        .create()?;
    for (p, access) in rules {
        // A path this host does not have needs no rule.
        let Ok(meta) = std::fs::metadata(p) else {
            continue;
        };
        let access = if meta.is_dir() {
            *access
        } else {
            *access & AccessFs::from_file(TESTED)
        };
        let fd = PathFd::new(p).with_context(|| p.display().to_string())?;
        rs = rs.add_rule(PathBeneath::new(fd, access))?;
    }
    let status = rs.restrict_self()?;
    if status.ruleset == RulesetStatus::NotEnforced {
        bail!("not supported by this kernel");
    }
    match status.landlock {
        LandlockStatus::Available { effective_abi, .. } => {
            Ok(effective_abi.to_string().parse().unwrap_or(0))
        }
        LandlockStatus::NotEnabled => bail!("not enabled in this kernel"),
        LandlockStatus::NotImplemented => bail!("not built into this kernel"),
    }
}
