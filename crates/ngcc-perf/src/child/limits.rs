//! What the child does to itself before loading untrusted code.

use super::protocol::Limits;

/// Applies resource limits and pinning; returns a short description of what took effect
/// (recorded with results). Isolation is the jail's (`crate::jail`).
pub fn apply(limits: &Limits) -> String {
    let mut notes = Vec::new();
    set(libc::RLIMIT_CORE, 0);
    if let Some(v) = limits.address_space {
        set(libc::RLIMIT_AS, v);
        notes.push(format!("address space {} MiB", v >> 20));
    }
    if let Some(v) = limits.cpu_seconds {
        set(libc::RLIMIT_CPU, v);
        notes.push(format!("cpu {v} s"));
    }
    if let Some(v) = limits.file_size {
        set(libc::RLIMIT_FSIZE, v);
        notes.push(format!("file size {} MiB", v >> 20));
    }
    if let Some(cpu) = limits.pin_cpu {
        match pin(cpu) {
            Ok(()) => notes.push(format!("pinned cpu {cpu}")),
            Err(e) => notes.push(format!("not pinned: {e}")),
        }
    }
    notes.push("core dumps off".into());
    notes.join(", ")
}

/// Lowers RLIMIT_CPU's soft limit to `seconds` (the hard one stays: the kernel then sends
/// SIGXCPU at the soft limit and SIGKILL at the hard one). Lowering needs no privilege.
pub fn cpu_soft(seconds: u64) {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit on our own process, into a struct we own.
    unsafe {
        libc::getrlimit(libc::RLIMIT_CPU, &mut lim);
        lim.rlim_cur = seconds.min(lim.rlim_max);
        libc::setrlimit(libc::RLIMIT_CPU, &lim);
    }
}

fn set(resource: libc::__rlimit_resource_t, value: u64) {
    let lim = libc::rlimit {
        rlim_cur: value,
        rlim_max: value,
    };
    // SAFETY: plain setrlimit on our own process.
    unsafe { libc::setrlimit(resource, &lim) };
}

pub fn pin(cpu: u32) -> std::io::Result<()> {
    // SAFETY: cpu_set_t is plain data; sched_setaffinity reads it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu as usize, &mut set);
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}
