//! Every compiler and linker call, bounded: a wall-clock timeout after which its whole
//! process group is killed, an address-space limit per process (driver, cc1, as, ld), a CPU
//! and a file-size limit, no core dumps, no stdin, and at most 1 MiB kept of each output
//! stream, and a temporary folder of its own (TMPDIR). `-include /dev/zero` or a macro bomb then
//! ends as a BUILDFAIL of one instance.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::Duration;

pub const DEFAULT_TIMEOUT_S: u64 = 600;
/// RLIMIT_AS of each compiler process, by default (`campaign --build-mem-limit`).
pub const DEFAULT_AS_LIMIT_MIB: u64 = 2048;
/// RLIMIT_FSIZE: no object or library is larger.
pub const FILE_LIMIT: u64 = 2 << 30;
/// Bytes kept of stdout and of stderr.
pub const OUTPUT_CAP: usize = 1 << 20;

/// The bounds of every compiler and linker call of one campaign (`--build-timeout`,
/// `--build-mem-limit`), a value handed to each call rather than process state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BuildLimits {
    /// Wall-clock seconds before a call's process group is killed (at least 1).
    pub timeout_s: u64,
    /// RLIMIT_AS of each compiler process, MiB (at least 64).
    pub as_limit_mib: u64,
}

impl BuildLimits {
    pub fn new(timeout_s: u64, as_limit_mib: u64) -> BuildLimits {
        BuildLimits {
            timeout_s: timeout_s.max(1),
            as_limit_mib: as_limit_mib.max(64),
        }
    }
}

impl Default for BuildLimits {
    fn default() -> BuildLimits {
        BuildLimits::new(DEFAULT_TIMEOUT_S, DEFAULT_AS_LIMIT_MIB)
    }
}

#[derive(Debug)]
pub struct Bounded {
    /// `None`: killed at the timeout.
    pub status: Option<ExitStatus>,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    /// The bounds it ran under (named when one of them stopped it).
    pub limits: BuildLimits,
}

impl Bounded {
    pub fn success(&self) -> bool {
        self.status.is_some_and(|s| s.success())
    }

    /// Why the call failed when it was the bounds that stopped it, in one line.
    pub fn bound_hit(&self, program: &str) -> Option<String> {
        use std::os::unix::process::ExitStatusExt;
        let Some(status) = self.status else {
            return Some(format!(
                "{program} killed after {} s (build timeout)",
                self.limits.timeout_s
            ));
        };
        let err = String::from_utf8_lossy(&self.stderr);
        if err.contains("out of memory") || err.contains("memory exhausted") {
            return Some(format!(
                "{program} ran out of memory (address-space limit of {} MiB per compiler process)",
                self.limits.as_limit_mib
            ));
        }
        if err.contains("File size limit exceeded") {
            return Some(format!(
                "{program} wrote a file larger than {} MiB",
                FILE_LIMIT >> 20
            ));
        }
        status.signal().map(|s| {
            format!(
                "{program} killed by signal {s} ({})",
                crate::sandbox::signal_name(s)
            )
        })
    }
}

fn reader<R: Read + Send + 'static>(stream: Option<R>) -> mpsc::Receiver<Vec<u8>> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut kept = Vec::new();
        let mut dropped = 0usize;
        if let Some(mut s) = stream {
            let mut buf = [0u8; 8192];
            while let Ok(n) = s.read(&mut buf) {
                if n == 0 {
                    break;
                }
                let room = OUTPUT_CAP.saturating_sub(kept.len());
                kept.extend_from_slice(&buf[..n.min(room)]);
                dropped += n.saturating_sub(room);
            }
        }
        if dropped > 0 {
            kept.extend_from_slice(
                format!("\n[{dropped} more bytes of output dropped]\n").as_bytes(),
            );
        }
        let _ = tx.send(kept);
    });
    rx
}

/// Prefix of the compilers' temporary folders: `ngcc-cc<pid>-XXXXXX`.
const TMP_PREFIX: &str = "ngcc-cc";

/// Removes the compiler folders in `dir` whose campaign is gone: the pid in the name is not
/// running and nothing changed in the folder for longer than a build call may last (a pid
/// from another PID namespace looks dead; the age keeps its live folder). Names without a
/// pid come from builds before the pid was added and go by age alone.
fn sweep_orphans(dir: &std::path::Path, timeout_s: u64) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let patience = Duration::from_secs(timeout_s + 60);
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(rest) = name.strip_prefix(TMP_PREFIX) else {
            continue;
        };
        let pid = rest
            .split_once('-')
            .and_then(|(p, _)| p.parse::<i32>().ok());
        let running = pid.is_some_and(|p| std::path::Path::new(&format!("/proc/{p}")).exists());
        let stale = e
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > patience);
        if !running && stale && e.file_type().is_ok_and(|t| t.is_dir()) {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

/// Runs `cmd` within `limits` and collects its (capped) output.
pub fn output(cmd: &mut Command, limits: BuildLimits) -> std::io::Result<Bounded> {
    let timeout = limits.timeout_s;
    let as_limit = limits.as_limit_mib;
    // The compiler's temporary files (cc*.s, cc*.o) go with this folder, also when the call
    // is killed before it could remove them. The name carries our pid: a folder left by a
    // campaign that was itself killed is swept by the next one.
    static SWEPT: std::sync::Once = std::sync::Once::new();
    SWEPT.call_once(|| sweep_orphans(&std::env::temp_dir(), timeout));
    let tmp = tempfile::Builder::new()
        .prefix(&format!("{TMP_PREFIX}{}-", std::process::id()))
        .tempdir()?;
    cmd.env("TMPDIR", tmp.path());
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            let set = |r, v: u64| {
                let lim = libc::rlimit {
                    rlim_cur: v,
                    rlim_max: v,
                };
                libc::setrlimit(r, &lim);
            };
            set(libc::RLIMIT_AS, as_limit << 20);
            set(libc::RLIMIT_CPU, timeout + 5);
            set(libc::RLIMIT_FSIZE, FILE_LIMIT);
            set(libc::RLIMIT_CORE, 0);
            libc::setpgid(0, 0);
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            Ok(())
        });
    }
    let mut child = cmd.spawn()?;
    let pid = child.id() as i32;
    let out = reader(child.stdout.take());
    let err = reader(child.stderr.take());
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait());
    });
    let status = match rx.recv_timeout(Duration::from_secs(timeout)) {
        Ok(s) => Some(s?),
        Err(_) => None,
    };
    // SAFETY: the call's whole process group (cc1, as, ld…) goes, also after a timeout.
    unsafe { libc::kill(-pid, libc::SIGKILL) };
    if status.is_none() {
        let _ = rx.recv();
    }
    let grace = Duration::from_secs(2);
    drop(tmp);
    Ok(Bounded {
        status,
        stdout: out.recv_timeout(grace).unwrap_or_default(),
        stderr: err.recv_timeout(grace).unwrap_or_default(),
        limits,
    })
}

/// `name` as the orchestrator's PATH finds it (a tool run needs an absolute program).
pub fn resolve_program(name: &std::ffi::OsStr) -> std::path::PathBuf {
    let p = std::path::Path::new(name);
    if p.components().count() > 1 {
        return std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    }
    let path = std::env::var_os("PATH").unwrap_or_else(|| "/usr/bin:/bin".into());
    std::env::split_paths(&path)
        .map(|d| d.join(p))
        .find(|f| f.is_file())
        .unwrap_or_else(|| std::path::Path::new("/usr/bin").join(p))
}

/// Runs `cmd` (a compiler, assembler or linker call over candidate files) as a jailed tool
/// run (`sandbox::tool`) with the same bounds as [`output`]: it sees only `read_only` (the
/// candidate's folder, the allowed source roots, our generated files) besides the system,
/// and writes only its scratch folder, in which `output` (one argument of `cmd`) is
/// produced under its file name and then moved to `output`. Also returns the layers the
/// call ran under. A `.incbin` or `#include` of a host file outside `read_only` finds
/// nothing.
pub fn output_in_jail(
    cmd: &Command,
    read_only: &[std::path::PathBuf],
    output: &std::path::Path,
    limits: BuildLimits,
    jail: &crate::sandbox::jail::JailOptions,
) -> std::io::Result<(Bounded, crate::dataset::schema::Containment)> {
    use crate::sandbox::tool::{ToolBounds, ToolError, ToolJob, run_tool};
    use std::os::unix::process::ExitStatusExt;
    let name = output
        .file_name()
        .ok_or_else(|| std::io::Error::other("an output needs a file name"))?;
    let args = cmd
        .get_args()
        .map(|a| {
            if std::path::Path::new(a) == output {
                name.to_os_string()
            } else {
                a.to_os_string()
            }
        })
        .collect();
    let env = cmd
        .get_envs()
        .filter(|(k, _)| *k != "TMPDIR")
        .filter_map(|(k, v)| {
            Some((
                k.to_str()?.to_string(),
                v.and_then(|v| v.to_str()).unwrap_or_default().to_string(),
            ))
        })
        .collect();
    let program = resolve_program(cmd.get_program());
    let mut read_only = read_only.to_vec();
    // A compiler installed outside /usr (CC=/opt/…/bin/clang) needs its own tree.
    if !program.starts_with("/usr")
        && let Some(prefix) = program.parent().and_then(std::path::Path::parent)
    {
        read_only.push(prefix.to_path_buf());
    }
    let timeout = limits.timeout_s;
    let job = ToolJob {
        label: program_label(&program),
        program,
        args,
        env,
        read_only,
        bounds: ToolBounds {
            wall_s: timeout as f64,
            cpu_s: timeout + 5,
            address_space_mib: limits.as_limit_mib,
            nproc: 64,
            file_size_mib: FILE_LIMIT >> 20,
            output_cap: OUTPUT_CAP,
            // One object, library or preprocessed text, and the compiler's temporaries.
            scratch_bytes: 1 << 30,
            scratch_inodes: 10_000,
            memory_mib: 2 * limits.as_limit_mib + 1024,
        },
        scratch_in: output.parent().map(std::path::Path::to_path_buf),
        jail: jail.clone(),
        ..ToolJob::default()
    };
    let o = match run_tool(&job) {
        Ok(o) => o,
        Err(ToolError::Bounds { why, .. }) => {
            return Ok((
                Bounded {
                    status: Some(ExitStatus::from_raw(1 << 8)),
                    stdout: Vec::new(),
                    stderr: format!("{why}\n").into_bytes(),
                    limits,
                },
                crate::dataset::schema::Containment::default(),
            ));
        }
        Err(e) => return Err(std::io::Error::other(e.to_string())),
    };
    let status = match o.exit {
        crate::sandbox::Exit::Code(c) => Some(ExitStatus::from_raw((c & 0xff) << 8)),
        crate::sandbox::Exit::Signal(s) => Some(ExitStatus::from_raw(s & 0x7f)),
        crate::sandbox::Exit::Timeout => None,
    };
    let made = o.scratch.path().join(name);
    if status.is_some_and(|s| s.success())
        && made.is_file()
        && std::fs::rename(&made, output).is_err()
    {
        std::fs::copy(&made, output)?;
    }
    Ok((
        Bounded {
            status,
            stdout: o.stdout.into_bytes(),
            stderr: o.stderr.into_bytes(),
            limits,
        },
        o.layers,
    ))
}

fn program_label(p: &std::path::Path) -> String {
    p.file_name().map_or_else(
        || p.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::SystemTime;

    fn folder(root: &std::path::Path, name: &str, age_s: u64) {
        let dir = root.join(name);
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join("cc1.s"), "x").unwrap();
        let when = SystemTime::now() - Duration::from_secs(age_s);
        std::fs::File::open(&dir)
            .unwrap()
            .set_modified(when)
            .unwrap();
    }

    #[test]
    fn a_bound_hit_names_the_limits_the_call_ran_under() {
        use std::os::unix::process::ExitStatusExt;
        let limits = BuildLimits::new(0, 1);
        assert_eq!(limits, BuildLimits::new(1, 64), "clamped to 1 s and 64 MiB");
        let timed_out = Bounded {
            status: None,
            stdout: Vec::new(),
            stderr: Vec::new(),
            limits: BuildLimits::new(7, 512),
        };
        assert_eq!(
            timed_out.bound_hit("cc").as_deref(),
            Some("cc killed after 7 s (build timeout)")
        );
        let oom = Bounded {
            status: Some(ExitStatus::from_raw(1 << 8)),
            stdout: Vec::new(),
            stderr: b"cc1: out of memory allocating 4096 bytes".to_vec(),
            limits: BuildLimits::new(7, 512),
        };
        assert!(oom.bound_hit("cc").unwrap().contains("of 512 MiB"));
    }

    #[test]
    fn orphaned_compiler_folders_are_swept_live_and_recent_ones_kept() {
        let root = tempfile::tempdir().unwrap();
        let r = root.path();
        let me = std::process::id();
        // No such pid (above pid_max): its campaign is gone.
        folder(r, "ngcc-cc2147483647-dead", 3600);
        folder(r, "ngcc-ccOLDNAME", 3600);
        folder(r, &format!("ngcc-cc{me}-live"), 3600);
        folder(r, "ngcc-cc2147483647-recent", 5);
        folder(r, "other-old", 3600);
        sweep_orphans(r, 600);
        let mut left: Vec<String> = std::fs::read_dir(r)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        let mut want = vec![
            "ngcc-cc2147483647-recent".to_string(),
            format!("ngcc-cc{me}-live"),
            "other-old".to_string(),
        ];
        want.sort();
        assert_eq!(left, want);
    }
}
