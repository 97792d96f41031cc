//! The namespaced jail: the plan of the worker's root (built by the keeper from the job),
//! and the proxy, pid 1 of the new PID namespace, which builds that root and then only
//! starts the worker, reaps and waits.
//!
//! The root is a read-only tmpfs holding `/usr` (and the `/lib*` links or folders), the
//! loader cache, five device nodes, a fresh `/proc` of the new PID namespace, and `/job`:
//! the library read-only at `/job/lib.so`, the job's saved setup read-only at `/job/setup`
//! (empty for other jobs), and the scratch folder read-write at `/job/scratch` (the working
//! directory). Nothing else of the host is visible: no run directory, no sources, no $HOME.

use super::{INNER_ID, Inner, JOB_EXE, JOB_LIBRARY, JOB_SCRATCH, JOB_SETUP, Msg, Order};
use anyhow::{Context, Result, anyhow, bail};
use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// One bind mount: host path → path in the new root. The proxy opens the source (O_PATH)
/// while it still has the keeper's uid, and binds it through `/proc/self/fd` after taking
/// the jail's uid (needed to create the mount points), whatever the folders above it let
/// the jail's uid traverse.
#[derive(Debug)]
struct Bind {
    src: PathBuf,
    dst: String,
    dir: bool,
    rw: bool,
    /// The scratch folder: a bounded tmpfs at `dst` instead of a bind, when the plan says so.
    scratch: bool,
}

fn open_path(p: &Path) -> Result<OwnedFd> {
    let c = cstr(p);
    // SAFETY: O_PATH open of a NUL-terminated path; the fd is ours.
    let fd = unsafe { libc::open(c.as_ptr(), libc::O_PATH | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(errno(&format!("opening {}", p.display())));
    }
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn bind(src: &Path, dst: &str, dir: bool, rw: bool) -> Result<Bind> {
    Ok(Bind {
        src: src.to_path_buf(),
        dst: dst.to_string(),
        dir,
        rw,
        scratch: false,
    })
}

fn scratch_bind(src: &Path, dst: &str) -> Result<Bind> {
    Ok(Bind {
        scratch: true,
        ..bind(src, dst, true, true)?
    })
}

/// Everything the proxy needs, computed before the clone.
#[derive(Debug)]
pub struct Plan {
    binds: Vec<Bind>,
    /// (target, link) symlinks in the new root, e.g. `usr/lib` at `/lib`.
    links: Vec<(PathBuf, String)>,
    /// Empty folders to create in the new root.
    dirs: Vec<String>,
    pub inner: Inner,
    /// The job's tool, which execs the binary bound at [`JOB_EXE`].
    pub tool: Option<super::ToolExec>,
    /// The working directory inside the new root.
    workdir: String,
    /// A tool run: started by the proxy instead of the worker.
    pub tool_run: Option<super::tool_exec::ToolRunExec>,
    /// The scratch folder as a bounded tmpfs (else a bind of the host folder).
    scratch_fs: Option<super::scratchfs::ScratchBounds>,
    /// Where the scratch folder is inside the new root.
    scratch_inside: String,
}

const DEVICES: [&str; 5] = [
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
];

/// System paths visible (read-only) in every jail, and also the Landlock read-only set
/// when there are no namespaces.
pub fn system_paths() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = ["/usr", "/lib", "/lib64", "/lib32", "/libx32"]
        .iter()
        .map(PathBuf::from)
        .collect();
    v.push("/etc/ld.so.cache".into());
    v.extend(DEVICES.iter().map(PathBuf::from));
    v.push("/proc/self".into());
    v
}

fn under(path: &Path, dir: &Path) -> Option<PathBuf> {
    path.strip_prefix(dir).ok().map(Path::to_path_buf)
}

/// `path` inside the scratch folder, as the worker sees it.
fn in_scratch(path: &Path, scratch: &Path, canon: &Path) -> Option<PathBuf> {
    under(path, scratch)
        .or_else(|| under(path, canon))
        .map(|rel| Path::new(JOB_SCRATCH).join(rel))
}

impl Plan {
    /// The jail of `order` with `scratch` (canonical) as the writable folder.
    pub fn new(order: &Order, scratch: &Path, landlock: bool, seccomp: bool) -> Result<Plan> {
        let mut binds = Vec::new();
        let mut links = Vec::new();
        let mut dirs: Vec<String> =
            vec!["/etc".into(), "/dev".into(), "/proc".into(), "/job".into()];
        for top in ["/usr", "/lib", "/lib64", "/lib32", "/libx32"] {
            let p = Path::new(top);
            match std::fs::symlink_metadata(p) {
                Ok(m) if m.file_type().is_symlink() => {
                    let target = std::fs::read_link(p).with_context(|| top.to_string())?;
                    links.push((target, top.to_string()));
                }
                Ok(m) if m.is_dir() => binds.push(bind(p, top, true, false)?),
                _ => {}
            }
        }
        for file in ["/etc/ld.so.cache"].iter().chain(DEVICES.iter()) {
            if Path::new(file).exists() {
                binds.push(bind(Path::new(file), file, false, false)?);
            }
        }
        let mut job = order.job.clone();
        let mut setup_bound = false;
        if let Some(f) = job.as_mut().map(|j| &mut j.files) {
            let canon = std::fs::canonicalize(&f.library)
                .with_context(|| format!("library {}", f.library.display()))?;
            binds.push(bind(&canon, JOB_LIBRARY, false, false)?);
            f.library = JOB_LIBRARY.into();
            if let Some(dir) = f.kat_dir.as_mut() {
                *dir = in_scratch(dir, &order.scratch, scratch).ok_or_else(|| {
                    anyhow!("KAT folder {} is not in the scratch folder", dir.display())
                })?;
            }
            if let Some(dir) = f.setup_dir.as_mut() {
                if let Some(p) = in_scratch(dir, &order.scratch, scratch) {
                    *dir = p;
                } else {
                    if let Ok(canon) = std::fs::canonicalize(&*dir) {
                        binds.push(bind(&canon, JOB_SETUP, true, false)?);
                        setup_bound = true;
                    }
                    *dir = JOB_SETUP.into();
                }
            }
        }
        if !setup_bound {
            dirs.push(JOB_SETUP.into());
        }
        binds.push(scratch_bind(scratch, JOB_SCRATCH)?);
        let tool = match &order.tool {
            Some(t) => {
                let exe =
                    super::running_exe(scratch).context("locating the ngcc-perf executable")?;
                binds.push(bind(&exe, JOB_EXE, false, false)?);
                Some(super::ToolExec::new(
                    t,
                    Path::new(JOB_EXE),
                    Path::new(JOB_SCRATCH),
                )?)
            }
            None => None,
        };
        let mut read_only: Vec<PathBuf> = vec!["/usr".into(), "/etc/ld.so.cache".into()];
        read_only.extend(DEVICES.iter().map(PathBuf::from));
        read_only.extend([
            PathBuf::from("/proc/self"),
            JOB_LIBRARY.into(),
            JOB_SETUP.into(),
        ]);
        let mut tool = tool;
        if let Some(t) = tool.as_mut() {
            read_only.push(JOB_EXE.into());
            t.lock = Some(super::PreExec {
                read_only: read_only.clone(),
                read_write: vec![JOB_SCRATCH.into()],
                landlock,
                seccomp,
            });
        }
        Ok(Plan {
            binds,
            links,
            dirs,
            inner: Inner {
                nonce: order.nonce.clone(),
                job,
                read_only,
                read_write: vec![JOB_SCRATCH.into()],
                landlock,
                seccomp,
                nproc: Some(super::NPROC),
            },
            tool,
            workdir: JOB_SCRATCH.into(),
            tool_run: None,
            scratch_fs: scratch_fs(order),
            scratch_inside: JOB_SCRATCH.into(),
        })
    }

    /// The jail of a tool run: the system folders (plus `/bin`, `/sbin` and
    /// `/etc/alternatives`, where `cc` and friends point), the run's read-only inputs and
    /// the scratch folder, each at its host path.
    pub fn for_tool(
        order: &Order,
        run: &super::ToolRun,
        scratch: &Path,
        landlock: bool,
        seccomp: bool,
    ) -> Result<Plan> {
        let mut binds = Vec::new();
        let mut links = Vec::new();
        let dirs: Vec<String> = vec!["/etc".into(), "/dev".into(), "/proc".into()];
        let tops = [
            "/usr", "/lib", "/lib64", "/lib32", "/libx32", "/bin", "/sbin",
        ];
        for top in tops {
            let p = Path::new(top);
            match std::fs::symlink_metadata(p) {
                Ok(m) if m.file_type().is_symlink() => {
                    let target = std::fs::read_link(p).with_context(|| top.to_string())?;
                    links.push((target, top.to_string()));
                }
                Ok(m) if m.is_dir() => binds.push(bind(p, top, true, false)?),
                _ => {}
            }
        }
        for file in ["/etc/ld.so.cache"].iter().chain(DEVICES.iter()) {
            if Path::new(file).exists() {
                binds.push(bind(Path::new(file), file, false, false)?);
            }
        }
        let alternatives = Path::new("/etc/alternatives");
        if alternatives.is_dir() {
            binds.push(bind(alternatives, "/etc/alternatives", true, false)?);
        }
        // Inputs and the scratch folder at their host paths, parents before children so a
        // folder bound inside another lands on top of it.
        let mut own: Vec<(PathBuf, bool)> = Vec::new();
        for p in &run.read_only {
            let canon =
                std::fs::canonicalize(p).with_context(|| format!("input {}", p.display()))?;
            if tops.iter().any(|t| canon.starts_with(t)) {
                continue;
            }
            own.push((canon, false));
        }
        own.push((scratch.to_path_buf(), true));
        own.sort_by_key(|(p, _)| p.components().count());
        let mut read_only: Vec<PathBuf> = vec!["/etc/ld.so.cache".into()];
        for (p, rw) in &own {
            let dst = p
                .to_str()
                .ok_or_else(|| anyhow!("{} is not UTF-8", p.display()))?;
            if dst == "/" || !p.is_absolute() {
                bail!("{dst} cannot be bound into the jail");
            }
            binds.push(if *rw {
                scratch_bind(p, dst)?
            } else {
                bind(p, dst, p.is_dir(), false)?
            });
            if !rw {
                read_only.push(p.clone());
            }
        }
        let exec = super::tool_exec::ToolRunExec::new(
            run,
            super::tool_exec::Rules {
                read_exec: vec!["/usr".into()],
                read_only,
                devices: DEVICES.iter().map(PathBuf::from).collect(),
                read_write: vec![scratch.to_path_buf()],
            },
            landlock,
            seccomp,
        )?;
        Ok(Plan {
            binds,
            links,
            dirs,
            inner: Inner {
                nonce: order.nonce.clone(),
                job: None,
                read_only: Vec::new(),
                read_write: Vec::new(),
                landlock,
                seccomp,
                nproc: None,
            },
            tool: None,
            workdir: run.cwd.to_string_lossy().into_owned(),
            tool_run: Some(exec),
            scratch_fs: scratch_fs(order),
            scratch_inside: scratch.to_string_lossy().into_owned(),
        })
    }
}

/// The order's scratch bounds, unless the operator switched the tmpfs off.
fn scratch_fs(order: &Order) -> Option<super::scratchfs::ScratchBounds> {
    (!order
        .off
        .contains(&crate::dataset::schema::Layer::ScratchTmpfs))
    .then_some(order.bounds.scratch)
}

fn cstr(p: impl AsRef<Path>) -> CString {
    CString::new(p.as_ref().as_os_str().as_bytes()).unwrap_or_default()
}

/// The last OS error, said of `what` (`{:#}` shows "what: error").
fn errno(what: &str) -> anyhow::Error {
    anyhow::Error::new(std::io::Error::last_os_error()).context(what.to_string())
}

fn mount(
    src: Option<&CString>,
    dst: &CString,
    fstype: Option<&CString>,
    flags: libc::c_ulong,
    data: Option<&CString>,
) -> Result<()> {
    let p = |c: Option<&CString>| c.map_or(std::ptr::null(), |c| c.as_ptr());
    // SAFETY: pointers to NUL-terminated strings that outlive the call (or NULL).
    let rc = unsafe { libc::mount(p(src), dst.as_ptr(), p(fstype), flags, p(data).cast()) };
    if rc != 0 {
        return Err(errno(&format!("mount {}", dst.to_string_lossy())));
    }
    Ok(())
}

fn mkdir_p(path: &str) -> Result<()> {
    std::fs::create_dir_all(path).with_context(|| format!("mkdir {path}"))
}

/// Mount flags a bind must keep when it is remounted (the kernel locks them in a user
/// namespace).
fn locked_flags(path: &CString) -> libc::c_ulong {
    // SAFETY: statvfs fills the struct we own.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(path.as_ptr(), &mut st) } != 0 {
        return 0;
    }
    let f = st.f_flag;
    let mut out = 0;
    for (st_flag, ms_flag) in [
        (libc::ST_NOSUID, libc::MS_NOSUID),
        (libc::ST_NODEV, libc::MS_NODEV),
        (libc::ST_NOEXEC, libc::MS_NOEXEC),
        (libc::ST_NOATIME, libc::MS_NOATIME),
        (libc::ST_NODIRATIME, libc::MS_NODIRATIME),
        (libc::ST_RELATIME, libc::MS_RELATIME),
    ] {
        if f & st_flag != 0 {
            out |= ms_flag;
        }
    }
    out
}

fn pivot_root(new: &CString, old: &CString) -> Result<()> {
    // SAFETY: pivot_root takes two paths.
    let rc = unsafe { libc::syscall(libc::SYS_pivot_root, new.as_ptr(), old.as_ptr()) };
    if rc != 0 {
        return Err(errno("pivot_root"));
    }
    Ok(())
}

fn chdir(p: &str) -> Result<()> {
    std::env::set_current_dir(p).with_context(|| format!("chdir {p}"))
}

/// Builds the new root (in the proxy, with every capability of the new user namespace).
/// Returns the host scratch folder (an O_PATH descriptor) when the scratch is a tmpfs: the
/// proxy copies the job's files back through it.
fn enter(plan: &Plan, drop_groups: bool) -> Result<Option<OwnedFd>> {
    let c = |s: &str| CString::new(s).unwrap_or_default();
    let sources = plan
        .binds
        .iter()
        .map(|b| open_path(&b.src))
        .collect::<Result<Vec<OwnedFd>>>()?;
    // Files can only be created under a uid the namespace maps: take ours first.
    take_ids(drop_groups)?;
    mount(None, &c("/"), None, libc::MS_REC | libc::MS_PRIVATE, None)?;
    // A small tmpfs holding the new root and the old one, then the real new root on it.
    let tmpfs = c("tmpfs");
    mount(
        Some(&tmpfs),
        &c("/tmp"),
        Some(&tmpfs),
        libc::MS_NOSUID | libc::MS_NODEV,
        Some(&c("size=64k,mode=0755")),
    )?;
    mkdir_p("/tmp/newroot")?;
    mkdir_p("/tmp/oldroot")?;
    pivot_root(&c("/tmp"), &c("/tmp/oldroot"))?;
    chdir("/")?;
    mount(
        Some(&tmpfs),
        &c("/newroot"),
        Some(&tmpfs),
        libc::MS_NOSUID | libc::MS_NODEV,
        Some(&c("size=1m,mode=0755")),
    )?;
    for d in &plan.dirs {
        mkdir_p(&format!("/newroot{d}"))?;
    }
    let mut host_scratch = None;
    for (b, src) in plan.binds.iter().zip(&sources) {
        let dst = format!("/newroot{}", b.dst);
        if let (true, Some(bounds)) = (b.scratch, plan.scratch_fs.as_ref()) {
            mkdir_p(&dst)?;
            let opts = c(&super::scratchfs::mount_options(bounds));
            mount(
                Some(&tmpfs),
                &c(&dst),
                Some(&tmpfs),
                libc::MS_NOSUID | libc::MS_NODEV,
                Some(&opts),
            )?;
            let host = format!("/oldroot/proc/self/fd/{}", src.as_raw_fd());
            super::scratchfs::copy_in(Path::new(&host), Path::new(&dst))?;
            // SAFETY: a copy of a descriptor we own, kept after `sources` is dropped.
            let kept = unsafe { libc::fcntl(src.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 10) };
            if kept < 0 {
                return Err(errno("keeping the scratch folder"));
            }
            host_scratch = Some(unsafe { OwnedFd::from_raw_fd(kept) });
            continue;
        }
        if b.dir {
            mkdir_p(&dst)?;
        } else {
            if let Some(parent) = Path::new(&dst).parent() {
                mkdir_p(&parent.to_string_lossy())?;
            }
            std::fs::write(&dst, b"").with_context(|| format!("mountpoint {dst}"))?;
        }
        let src = c(&format!("/oldroot/proc/self/fd/{}", src.as_raw_fd()));
        let dst = c(&dst);
        mount(Some(&src), &dst, None, libc::MS_BIND | libc::MS_REC, None)?;
        let mut flags = libc::MS_REMOUNT | libc::MS_BIND | libc::MS_NOSUID | locked_flags(&dst);
        if !b.rw {
            flags |= libc::MS_RDONLY;
        }
        mount(None, &dst, None, flags, None)?;
    }
    for (target, link) in &plan.links {
        std::os::unix::fs::symlink(target, format!("/newroot{link}"))
            .with_context(|| format!("symlink {link}"))?;
    }
    let proc_ = c("proc");
    mount(
        Some(&proc_),
        &c("/newroot/proc"),
        Some(&proc_),
        libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
        None,
    )?;
    // SAFETY: detaching the old root, which nothing in the jail may reach.
    if unsafe { libc::umount2(c"/oldroot".as_ptr(), libc::MNT_DETACH) } != 0 {
        return Err(errno("umount the old root"));
    }
    chdir("/newroot")?;
    pivot_root(&c("."), &c("."))?;
    // SAFETY: the base tmpfs is now stacked on top of the new root: detach it.
    if unsafe { libc::umount2(c".".as_ptr(), libc::MNT_DETACH) } != 0 {
        return Err(errno("umount the base tmpfs"));
    }
    chdir("/")?;
    mount(
        None,
        &c("/"),
        None,
        libc::MS_REMOUNT | libc::MS_BIND | libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV,
        None,
    )?;
    let host = b"ngcc-jail";
    // SAFETY: sethostname copies the bytes (UTS namespace of the jail only).
    unsafe { libc::sethostname(host.as_ptr().cast(), host.len()) };
    chdir(&plan.workdir)?;
    Ok(host_scratch)
}

/// After the job: every other process of the namespace is killed and reaped, then what the
/// job left in its tmpfs scratch is copied back to the host folder and reported.
pub fn collect_scratch(out: &super::tool_exec::ScratchOut, report: libc::c_int) {
    // SAFETY: as pid 1 of the namespace, -1 reaches every other process in it; then reap.
    unsafe {
        libc::kill(-1, libc::SIGKILL);
        loop {
            let pid = libc::waitpid(-1, std::ptr::null_mut(), libc::__WALL);
            if pid < 0 && std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
                break;
            }
        }
    }
    let (Some(host), Some(bounds)) = (out.host, out.bounds) else {
        return;
    };
    let inside = out.inside;
    let (used_bytes, used_inodes) = super::scratchfs::statfs_use(inside);
    let mut used = super::scratchfs::ScratchUse {
        bound_bytes: bounds.bytes,
        bound_inodes: bounds.inodes,
        used_bytes,
        used_inodes,
        ..Default::default()
    };
    let to = PathBuf::from(format!("/proc/self/fd/{}", host.as_raw_fd()));
    super::scratchfs::copy_out(inside, &to, &mut used);
    super::worker::send(report, &Msg::Scratch(used));
}

/// Takes the jail's own uid and gid (mapped to the unprivileged outside ids by the keeper).
fn take_ids(drop_groups: bool) -> Result<()> {
    let id = INNER_ID;
    // SAFETY: credential calls on our own process.
    unsafe {
        if drop_groups && libc::setgroups(0, std::ptr::null()) != 0 {
            return Err(errno("setgroups"));
        }
        if libc::setresgid(id, id, id) != 0 {
            return Err(errno("setresgid"));
        }
        if libc::setresuid(id, id, id) != 0 {
            return Err(errno("setresuid"));
        }
    }
    Ok(())
}

/// File descriptors the proxy works with.
pub struct ProxyFds {
    pub exe: libc::c_int,
    pub request: libc::c_int,
    pub report: libc::c_int,
    /// Read end of the start pipe: one byte says "go"; end of file says the keeper is gone
    /// (it holds the write end for as long as it lives).
    pub go: libc::c_int,
    /// The keeper's write end of that pipe, which this copy of the keeper must not hold.
    pub go_keeper: libc::c_int,
}

/// Arms the parent-death signal again and checks that the keeper is still there. `enter`
/// took the jail's uid, and a change of uid clears that signal (prctl(2)): a proxy whose
/// keeper then died (killed with its orchestrator) lived on, reparented to init, with its
/// whole namespace (a valgrind job and all) still running. getppid cannot tell a dead keeper
/// here (the parent is outside our PID namespace, so it reads 0 either way): the start pipe
/// can, as its only writer is the keeper.
fn die_with_keeper(go: libc::c_int) {
    // SAFETY: prctl and poll on our own process and descriptor; _exit ends it.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
        let mut p = libc::pollfd {
            fd: go,
            events: libc::POLLIN,
            revents: 0,
        };
        let polled = libc::poll(&mut p, 1, 0);
        if polled != 0 && p.revents & (libc::POLLHUP | libc::POLLIN | libc::POLLERR) != 0 {
            libc::_exit(1);
        }
        libc::close(go);
    }
}

/// The proxy: waits for the keeper to map its ids, builds the root, starts the worker, reaps
/// every process of the namespace, reports the worker's end and exits (which kills whatever
/// is left in the namespace).
pub fn proxy(plan: &Plan, fds: &ProxyFds, drop_groups: bool) -> ! {
    // SAFETY: plain syscalls; this process is a single-threaded copy of the keeper.
    unsafe {
        libc::close(0);
        libc::close(4);
        libc::close(fds.go_keeper);
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
        let mut b = [0u8; 1];
        if libc::read(fds.go, b.as_mut_ptr().cast(), 1) != 1 {
            libc::_exit(1);
        }
    }
    let send = |m: &Msg| super::worker::send(fds.report, m);
    let host_scratch = match enter(plan, drop_groups) {
        Ok(h) => h,
        Err(e) => {
            send(&Msg::SetupError(format!("{e:#}")));
            // SAFETY: ending the proxy.
            unsafe { libc::_exit(1) };
        }
    };
    die_with_keeper(fds.go);
    let inside = PathBuf::from(&plan.scratch_inside);
    let scratch = super::tool_exec::ScratchOut {
        inside: &inside,
        host: host_scratch.as_ref(),
        bounds: plan.scratch_fs,
    };
    send(&Msg::Ready);
    // SAFETY: as above.
    unsafe {
        // The worker may not read our memory or file descriptors through /proc/1.
        libc::prctl(libc::PR_SET_DUMPABLE, 0);
        if let Some(run) = &plan.tool_run {
            libc::close(fds.request);
            super::tool_exec::run_tree(run, fds.report, Some(&scratch));
        }
        let worker = libc::fork();
        if worker == 0 {
            super::worker::exec(fds.exe, fds.request, fds.report, plan.tool.as_ref());
        }
        if worker < 0 {
            send(&Msg::ExecError(format!(
                "{:#}",
                errno("fork of the worker")
            )));
            libc::_exit(1);
        }
        // A stop request (the job's timeout) kills the worker; the loop below reaps it.
        super::keeper::stop_goes_to(worker, libc::SIGKILL);
        libc::close(fds.request);
        loop {
            let mut status = 0;
            let mut ru: libc::rusage = std::mem::zeroed();
            let pid = libc::wait4(-1, &mut status, libc::__WALL, &mut ru);
            if pid == worker {
                collect_scratch(&scratch, fds.report);
                send(&Msg::Exit {
                    status: crate::dataset::schema::WaitStatus::from_raw(status),
                    usage: crate::dataset::schema::Usage::from_rusage(&ru),
                });
                libc::_exit(0);
            }
            if pid < 0 && std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
                libc::_exit(1);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    /// A failed system call reads "what: the system's error" in the setup line, as it did
    /// when the error was a string.
    #[test]
    fn a_failed_call_reads_what_then_why() {
        let e = super::mkdir_p("/proc/ngcc-no-such/x").unwrap_err();
        let text = format!("{e:#}");
        assert_eq!(
            text.split(": ").next(),
            Some("mkdir /proc/ngcc-no-such/x"),
            "{text}"
        );
        // A failed open leaves ENOENT in errno, which `errno` reads as the call's cause.
        assert!(std::fs::File::open("/ngcc-no-such").is_err());
        assert_eq!(
            format!("{:#}", super::errno("chdir")),
            "chdir: No such file or directory (os error 2)"
        );
    }
}
