//! Process memory figures (reference §3.2): resident pages now, and the high-water mark.

fn page_size() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 { p as u64 } else { 4096 }
}

/// Resident bytes from /proc/self/statm (field 2 × page size).
pub fn rss_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| {
            s.split_whitespace()
                .nth(1)
                .and_then(|v| v.parse::<u64>().ok())
        })
        .map_or(0, |pages| pages * page_size())
}

/// VmHWM from /proc/self/status, in bytes.
pub fn peak_rss_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        })
        .map_or(0, |kb| kb * 1024)
}

/// CPU seconds the calling thread (the one that runs the timed loop) has run, read through
/// the clock resolved before the library was loaded (`measure::clock`). The thread clock,
/// not the process clock: this kernel advances the process clock only at ticks and context
/// switches (4 ms steps: a 1.5 ms trial read 0 or 4 ms), the thread clock to the ns.
pub fn cpu_seconds() -> f64 {
    crate::measure::clock::thread_cpu_s()
}
