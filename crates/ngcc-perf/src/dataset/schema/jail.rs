//! The jail (issue 12): which containment layers a child had, and what the orchestrator
//! observed of its process tree from outside (exit status, CPU time, wall time).

use serde::{Deserialize, Serialize};

/// One containment layer of a child that ran candidate code.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[serde(rename_all = "snake_case")]
pub enum Layer {
    /// A user namespace: root of the jail is nobody outside it.
    UserNs,
    /// A PID namespace whose init is our proxy: every descendant dies with the job.
    PidNs,
    /// A mount namespace with a minimal read-only root (system libraries, the library,
    /// the job's inputs) and the scratch folder as the only writable place.
    MountNs,
    NetNs,
    IpcNs,
    UtsNs,
    /// Candidate code runs under an unprivileged uid (not root outside the jail).
    Unprivileged,
    /// RLIMIT_NPROC (processes and threads of the jail's uid).
    Nproc,
    /// Landlock: read-only system folders and inputs, the scratch folder read-write.
    Landlock,
    /// A seccomp filter: no new processes, exec, ptrace, sockets, mounts, affinity changes…
    Seccomp,
    /// The scratch folder is a tmpfs of the job's own with a size and an inode bound.
    ScratchTmpfs,
    /// A memory control group: one bound for all processes of the job and its scratch.
    MemoryCgroup,
    /// A pids control group: one bound on the job's processes and threads.
    PidsCgroup,
}

impl Layer {
    pub const ALL: [Layer; 13] = [
        Layer::UserNs,
        Layer::PidNs,
        Layer::MountNs,
        Layer::NetNs,
        Layer::IpcNs,
        Layer::UtsNs,
        Layer::Unprivileged,
        Layer::Nproc,
        Layer::Landlock,
        Layer::Seccomp,
        Layer::ScratchTmpfs,
        Layer::MemoryCgroup,
        Layer::PidsCgroup,
    ];

    /// The JSON name (`user_ns`, …), also used by `NGCC_PERF_JAIL_OFF`.
    pub fn name(self) -> &'static str {
        match self {
            Layer::UserNs => "user_ns",
            Layer::PidNs => "pid_ns",
            Layer::MountNs => "mount_ns",
            Layer::NetNs => "net_ns",
            Layer::IpcNs => "ipc_ns",
            Layer::UtsNs => "uts_ns",
            Layer::Unprivileged => "unprivileged",
            Layer::Nproc => "nproc",
            Layer::Landlock => "landlock",
            Layer::Seccomp => "seccomp",
            Layer::ScratchTmpfs => "scratch_tmpfs",
            Layer::MemoryCgroup => "memory_cgroup",
            Layer::PidsCgroup => "pids_cgroup",
        }
    }

    pub fn from_name(name: &str) -> Option<Layer> {
        Layer::ALL.into_iter().find(|l| l.name() == name)
    }

    /// Layers that contain code by themselves (a host with none of them is uncontained).
    pub fn contains_code(self) -> bool {
        matches!(
            self,
            Layer::PidNs | Layer::MountNs | Layer::Landlock | Layer::Seccomp
        )
    }
}

/// The containment one child had, as its trusted parent (`__child`) reports it.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct Containment {
    /// Active layers, sorted.
    pub layers: Vec<Layer>,
    /// Which control groups held the job's bounds (`cgroup v1`, `cgroup v2`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cgroup: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub landlock_abi: Option<u32>,
    /// Why a layer is missing (one short line each).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing: Vec<String>,
}

impl Containment {
    pub fn has(&self, l: Layer) -> bool {
        self.layers.contains(&l)
    }

    /// Keeps only the layers `other` has too (what every one of several children had).
    pub fn keep_common(&mut self, other: &Containment) {
        self.layers.retain(|l| other.has(*l));
    }

    /// No layer that contains code: the child ran with the orchestrator's rights.
    pub fn uncontained(&self) -> bool {
        !self.layers.iter().any(|l| l.contains_code())
    }

    /// One line for logs and pages, e.g. `user, pid, mount, net, ipc, uts namespaces; uid
    /// 65534; nproc; landlock abi 7; seccomp`.
    pub fn text(&self) -> String {
        if self.uncontained() {
            return "UNCONTAINED (no namespace, Landlock or seccomp layer)".into();
        }
        let mut parts = Vec::new();
        let ns: Vec<&str> = [
            (Layer::UserNs, "user"),
            (Layer::PidNs, "pid"),
            (Layer::MountNs, "mount"),
            (Layer::NetNs, "net"),
            (Layer::IpcNs, "ipc"),
            (Layer::UtsNs, "uts"),
        ]
        .iter()
        .filter(|(l, _)| self.has(*l))
        .map(|(_, n)| *n)
        .collect();
        if !ns.is_empty() {
            parts.push(format!("{} namespaces", ns.join(", ")));
        }
        if self.has(Layer::Unprivileged) {
            parts.push("unprivileged uid".into());
        }
        if self.has(Layer::Nproc) {
            parts.push("nproc limit".into());
        }
        if self.has(Layer::ScratchTmpfs) {
            parts.push("scratch tmpfs".into());
        }
        let groups: Vec<&str> = [(Layer::MemoryCgroup, "memory"), (Layer::PidsCgroup, "pids")]
            .iter()
            .filter(|(l, _)| self.has(*l))
            .map(|(_, n)| *n)
            .collect();
        if !groups.is_empty() {
            let version = self.cgroup.as_deref().unwrap_or("cgroup");
            parts.push(format!("{} {version}", groups.join(", ")));
        }
        if self.has(Layer::Landlock) {
            parts.push(match self.landlock_abi {
                Some(v) => format!("landlock abi {v}"),
                None => "landlock".into(),
            });
        }
        if self.has(Layer::Seccomp) {
            parts.push("seccomp".into());
        }
        parts.join("; ")
    }
}

/// How a process ended, as its parent's wait4 saw it.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum WaitStatus {
    Code(i32),
    Signal(i32),
}

impl WaitStatus {
    pub fn from_raw(status: i32) -> WaitStatus {
        if libc::WIFSIGNALED(status) {
            WaitStatus::Signal(libc::WTERMSIG(status))
        } else {
            WaitStatus::Code(libc::WEXITSTATUS(status))
        }
    }
}

/// CPU time and memory high-water mark from a wait4 rusage.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq)]
pub struct Usage {
    pub user_s: f64,
    pub sys_s: f64,
    pub max_rss_kib: u64,
}

impl Usage {
    pub fn from_rusage(ru: &libc::rusage) -> Usage {
        let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
        Usage {
            user_s: secs(ru.ru_utime),
            sys_s: secs(ru.ru_stime),
            max_rss_kib: ru.ru_maxrss.max(0) as u64,
        }
    }

    pub fn cpu_s(&self) -> f64 {
        self.user_s + self.sys_s
    }
}

/// What the orchestrator observed of one child from outside (never from the child's own
/// words): the base of the record cross-checks.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct Observed {
    /// How the process that ran candidate code ended (its parent in the jail saw it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker_exit: Option<WaitStatus>,
    /// That process's own CPU time and memory (its wait4 rusage).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker_usage: Option<Usage>,
    /// The whole process tree (wait4 on the jail's top process).
    pub tree_usage: Usage,
    /// Wall seconds from spawning the jail to its end, measured by the orchestrator.
    pub wall_s: f64,
    /// Seconds the jail took to set up before the worker started (namespaces, mounts).
    #[serde(default)]
    pub jail_setup_s: f64,
    pub containment: Containment,
    /// The buffers after the last timed iteration (trials), copied out of the jail:
    /// run-relative folder and the sha256 of each file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_outputs: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub last_outputs_sha256: Vec<(String, String)>,
}
