//! A whole-job memory and process bound: one control group per job, made by the keeper
//! below its own group before the jail's first process runs, the proxy moved into it (every
//! process of the job follows), read and removed after the job.
//!
//! cgroup v2 (`memory.max`, `pids.max`) where the unified hierarchy has both controllers
//! enabled for our group's children; else cgroup v1 (`memory.limit_in_bytes` plus
//! `memory.memsw.limit_in_bytes` where swap is accounted, and `pids.max`) in the `memory` and
//! `pids` hierarchies. Creating groups needs write access to our own group (root, or a
//! delegated subtree); without it the job keeps its per-process rlimits only, and the report
//! says why. The limits hold for the sum of all processes (forked children included) and for
//! the job's tmpfs scratch, whose pages are charged to the job's memory.

use anyhow::{Context, Result, anyhow};
use std::path::{Path, PathBuf};

/// The job's groups (one per hierarchy, or one for v2).
#[derive(Debug)]
pub struct JobGroups {
    kind: Kind,
    dirs: Vec<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    V1,
    V2,
}

/// What the groups saw of the job, read before they are removed.
#[derive(Debug, Default, Clone)]
pub struct Usage {
    /// Peak memory of the whole job (v1: max_usage_in_bytes; v2: memory.peak when present).
    pub peak_bytes: Option<u64>,
    /// Times the kernel's OOM killer ran in the job's group.
    pub oom_kills: u64,
    /// Times a fork or clone was refused at pids.max.
    pub pids_refused: u64,
}

/// `(controller, path)` of our own group per hierarchy, from /proc/self/cgroup.
fn own_groups() -> Vec<(String, String)> {
    let text = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    let mut v = Vec::new();
    for line in text.lines() {
        let mut parts = line.splitn(3, ':');
        let (_, ctrls, path) = (parts.next(), parts.next(), parts.next());
        if let (Some(ctrls), Some(path)) = (ctrls, path) {
            v.push((ctrls.to_string(), path.to_string()));
        }
    }
    v
}

/// Where the hierarchy holding `controller` is mounted (v1), or the unified one (`""`).
fn mount_point(controller: &str) -> Option<PathBuf> {
    let text = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    for line in text.lines() {
        let (left, right) = line.split_once(" - ")?;
        let mut r = right.split_whitespace();
        let fstype = r.next()?;
        let _source = r.next();
        let opts = r.next().unwrap_or("");
        let point = left.split_whitespace().nth(4)?;
        let hit = match controller {
            "" => fstype == "cgroup2",
            c => fstype == "cgroup" && opts.split(',').any(|o| o == c),
        };
        if hit {
            return Some(PathBuf::from(point));
        }
    }
    None
}

fn write(path: &Path, text: &str) -> Result<()> {
    std::fs::write(path, text).with_context(|| path.display().to_string())
}

fn join(mount: &Path, group: &str) -> PathBuf {
    mount.join(group.trim_start_matches('/'))
}

/// The v2 group our children may go in, if memory and pids are delegated to it.
fn v2_parent() -> Option<PathBuf> {
    let mount = mount_point("")?;
    let own = own_groups()
        .into_iter()
        .find(|(c, _)| c.is_empty())
        .map(|(_, p)| p)?;
    let dir = join(&mount, &own);
    let enabled = std::fs::read_to_string(dir.join("cgroup.subtree_control")).ok()?;
    let has = |c: &str| enabled.split_whitespace().any(|x| x == c);
    (has("memory") && has("pids")).then_some(dir)
}

/// The v1 groups (memory, pids) our children may go in.
fn v1_parents() -> Result<(PathBuf, PathBuf)> {
    let own = own_groups();
    let find = |c: &str| -> Result<PathBuf> {
        let mount = mount_point(c).ok_or_else(|| anyhow!("no cgroup v1 `{c}` hierarchy"))?;
        let group = own
            .iter()
            .find(|(ctrls, _)| ctrls.split(',').any(|x| x == c))
            .map(|(_, p)| p.clone())
            .unwrap_or_else(|| "/".into());
        Ok(join(&mount, &group))
    };
    Ok((find("memory")?, find("pids")?))
}

impl JobGroups {
    /// Makes the job's groups with these limits; `Err` says why the job has none.
    pub fn create(name: &str, memory_bytes: u64, pids: u64) -> Result<JobGroups> {
        if let Some(parent) = v2_parent() {
            let dir = parent.join(name);
            std::fs::create_dir(&dir).with_context(|| dir.display().to_string())?;
            let g = JobGroups {
                kind: Kind::V2,
                dirs: vec![dir.clone()],
            };
            write(&dir.join("memory.max"), &memory_bytes.to_string())?;
            // Swap would let a job hold more than its bound.
            let _ = write(&dir.join("memory.swap.max"), "0");
            write(&dir.join("pids.max"), &pids.to_string())?;
            return Ok(g);
        }
        let (mem_parent, pids_parent) = v1_parents()?;
        let mem = mem_parent.join(name);
        let pid = pids_parent.join(name);
        std::fs::create_dir(&mem).with_context(|| mem.display().to_string())?;
        let mut g = JobGroups {
            kind: Kind::V1,
            dirs: vec![mem.clone()],
        };
        std::fs::create_dir(&pid).with_context(|| pid.display().to_string())?;
        g.dirs.push(pid.clone());
        write(
            &mem.join("memory.limit_in_bytes"),
            &memory_bytes.to_string(),
        )?;
        // Memory plus swap at the same bound: no swapping past it (where swap is accounted).
        let memsw = mem.join("memory.memsw.limit_in_bytes");
        if memsw.exists() {
            write(&memsw, &memory_bytes.to_string())?;
        }
        write(&pid.join("pids.max"), &pids.to_string())?;
        Ok(g)
    }

    /// `v1` or `v2`, for the record.
    pub fn version(&self) -> &'static str {
        match self.kind {
            Kind::V1 => "cgroup v1",
            Kind::V2 => "cgroup v2",
        }
    }

    /// Moves `pid` (and so everything it starts later) into the job's groups.
    pub fn enter(&self, pid: libc::pid_t) -> Result<()> {
        for d in &self.dirs {
            write(&d.join("cgroup.procs"), &pid.to_string())?;
        }
        Ok(())
    }

    /// What the groups counted.
    pub fn usage(&self) -> Usage {
        let read = |p: PathBuf| std::fs::read_to_string(p).unwrap_or_default();
        let field = |text: &str, key: &str| -> u64 {
            text.lines()
                .find_map(|l| l.strip_prefix(key).map(|v| v.trim().parse().unwrap_or(0)))
                .unwrap_or(0)
        };
        let mut u = Usage::default();
        match self.kind {
            Kind::V1 => {
                let mem = &self.dirs[0];
                u.peak_bytes = read(mem.join("memory.max_usage_in_bytes"))
                    .trim()
                    .parse()
                    .ok();
                u.oom_kills = field(&read(mem.join("memory.oom_control")), "oom_kill ");
                if let Some(p) = self.dirs.get(1) {
                    u.pids_refused = field(&read(p.join("pids.events")), "max ");
                }
            }
            Kind::V2 => {
                let d = &self.dirs[0];
                u.peak_bytes = read(d.join("memory.peak")).trim().parse().ok();
                u.oom_kills = field(&read(d.join("memory.events")), "oom_kill ");
                u.pids_refused = field(&read(d.join("pids.events")), "max ");
            }
        }
        u
    }
}

impl Drop for JobGroups {
    /// Removes the groups; the job's processes are gone by then (the PID namespace ended
    /// with its init), but the kernel may take a moment to let go of the group.
    fn drop(&mut self) {
        for d in &self.dirs {
            for _ in 0..100 {
                if std::fs::remove_dir(d).is_ok() || !d.exists() {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(2));
            }
        }
    }
}
