//! Host checks: is this machine fit for publishable cycle counts? Plus the environment
//! snapshot stored with every record, the core-clock probe, CPU pinning and load averages.
//!
//! The reference checks (§1.3) and snapshot keys (§1.5) are kept verbatim so datasets stay
//! comparable; our additions come after them (snapshot) or are new strings (problems).

use crate::dataset::schema::{EnvField, HostEnv};
use crate::measure::counter::{self, Counter, CounterKind, monotonic_raw_ns};
use clap::Args;
use std::hint::black_box;
use std::path::Path;
use std::process::{Command, ExitCode, Stdio};
use std::time::Duration;

const CHECK_HELP: &str = "\
What is checked, in order (each failing check prints one `HOST:` line):
  1. the architecture has a guide configuration (x86_64, aarch64);
  2. kernel.perf_event_paranoid is -1..2, so user-mode core cycles can be counted,
     and the perf hardware cycle counter really counts (VMs often lack a PMU; the
     timing then falls back to TSC/CNTVCT reference ticks, which are not core cycles);
  3. turbo/boost is off (intel_pstate/no_turbo, cpufreq/boost): boost makes the clock
     depend on temperature and on the other cores;
  4. the CPU's cpufreq governor is `performance`;
  5. on aarch64, scaling_min_freq == scaling_max_freq (the clock is pinned);
  6. the CPU has no SMT sibling (a sibling shares the core's execution units);
  7. on Intel hybrid parts, the CPU is a performance core;
  8. this process may run on the CPU (cpuset / affinity);
  9. without cpufreq, the core clock is probed with the cycle counter and must be steady
     (interquartile range <= 0.5 % of the median over 21 windows of 50 ms; 3 attempts);
 10. the host is not a virtual machine (guests share cores and time with other guests).
Then a `counter:` line gives the counter the timing child would use, its tick rate and the
cost of one start/stop bracket.

Exit status: 0 when the host is ready, 1 when any problem was found. Measuring phases
refuse an unfixed host unless --allow-unfixed-host is given.";

#[derive(Args, Debug)]
#[command(after_long_help = CHECK_HELP)]
pub struct CheckArgs {
    /// The benchmark CPU the checks refer to.
    #[arg(long, default_value_t = 1)]
    pub cpu: u32,
}

pub fn run_check(args: CheckArgs) -> anyhow::Result<ExitCode> {
    let problems = host_problems(args.cpu);
    for p in &problems {
        crate::util::out!("HOST: {p}");
    }
    if problems.is_empty() {
        crate::util::out!("host ready");
    } else {
        crate::util::out!("{} problem(s)", problems.len());
    }
    let info = counter_info(args.cpu);
    let hz = info
        .hz
        .map(|hz| format!("{hz:.0} Hz"))
        .unwrap_or_else(|| "unknown rate".into());
    crate::util::out!(
        "counter: {} ({hz}), overhead {} ticks",
        info.kind.as_str(),
        info.overhead.1
    );
    Ok(crate::util::Exit::check(problems.is_empty()))
}

// ---------------------------------------------------------------------------------------
// CPU affinity and load

/// Pins the calling thread to `cpu` (sched_setaffinity on thread id 0 = this thread only).
pub fn pin_to_cpu(cpu: u32) -> anyhow::Result<()> {
    let max = 8 * std::mem::size_of::<libc::cpu_set_t>();
    anyhow::ensure!(
        (cpu as usize) < max,
        "CPU {cpu} is beyond the affinity mask"
    );
    // SAFETY: a zeroed cpu_set_t is the empty set; CPU_SET stays within it (checked above).
    let rc = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu as usize, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set)
    };
    if rc != 0 {
        anyhow::bail!(
            "cannot pin to CPU {cpu}: {}",
            std::io::Error::last_os_error()
        );
    }
    Ok(())
}

/// Runs `f` on a fresh thread pinned to `cpu`, leaving the caller's affinity untouched.
/// `None` when the thread cannot be pinned (or `f` panicked).
pub fn on_cpu<T: Send + 'static>(cpu: u32, f: impl FnOnce() -> T + Send + 'static) -> Option<T> {
    std::thread::spawn(move || pin_to_cpu(cpu).ok().map(|()| f()))
        .join()
        .ok()
        .flatten()
}

/// 1, 5 and 15-minute load averages from /proc/loadavg (empty when unreadable).
pub fn load_average() -> Vec<f64> {
    read_trim("/proc/loadavg")
        .map(|s| parse_load_average(&s))
        .unwrap_or_default()
}

fn parse_load_average(text: &str) -> Vec<f64> {
    let v: Vec<f64> = text
        .split_whitespace()
        .take(3)
        .map_while(|w| w.parse().ok())
        .collect();
    if v.len() == 3 { v } else { Vec::new() }
}

// ---------------------------------------------------------------------------------------
// Clock probe (§1.4)

/// Core clock measured with user-mode cycles over busy windows (Hz, sorted statistics).
#[derive(Clone, Debug, PartialEq)]
pub struct ClockProbe {
    /// Median window: `hz[n/2]` of the sorted rates.
    pub hz: f64,
    pub min_hz: f64,
    pub max_hz: f64,
    /// `hz[3n/4] − hz[n/4]`.
    pub iqr_hz: f64,
    pub windows: u32,
}

impl ClockProbe {
    /// Steady when the interquartile range is within 0.5 % of the median.
    pub fn is_steady(&self) -> bool {
        self.iqr_hz <= 0.005 * self.hz
    }

    /// From per-window rates, with the reference's index choices.
    pub fn from_rates(mut hz: Vec<f64>) -> Option<ClockProbe> {
        if hz.is_empty() {
            return None;
        }
        hz.sort_by(f64::total_cmp);
        let n = hz.len();
        Some(ClockProbe {
            hz: hz[n / 2],
            min_hz: hz[0],
            max_hz: hz[n - 1],
            iqr_hz: hz[3 * n / 4] - hz[n / 4],
            windows: n as u32,
        })
    }
}

/// Measures the core clock of `cpu` with perf user-mode cycles: one untimed warm window,
/// then `windows` busy windows of `window_ms`. `None` without a core cycle counter (TSC and
/// CNTVCT tick at a constant rate and cannot see the core clock), when the CPU cannot be
/// used, on a window that counted nothing, or for windows ∉ 1..=10000 / window_ms = 0.
pub fn clock_probe(cpu: u32, windows: u32, window_ms: u64) -> Option<ClockProbe> {
    if !(1..=10_000).contains(&windows) || window_ms < 1 {
        return None;
    }
    on_cpu(cpu, move || probe_here(windows, window_ms)).flatten()
}

fn probe_here(windows: u32, window_ms: u64) -> Option<ClockProbe> {
    let mut c = Counter::open(&CounterKind::PerfCycles)?;
    let window_ns = window_ms * 1_000_000;
    let mut rates = Vec::with_capacity(windows as usize);
    for k in 0..=windows {
        c.start();
        let t0 = monotonic_raw_ns();
        let mut t1 = t0;
        while t1 - t0 < window_ns {
            black_box(counter::busy_loop(10_000));
            t1 = monotonic_raw_ns();
        }
        let cycles = c.stop();
        if cycles == 0 {
            return None;
        }
        if k > 0 {
            rates.push(cycles as f64 * 1e9 / (t1 - t0) as f64);
        }
    }
    ClockProbe::from_rates(rates)
}

// ---------------------------------------------------------------------------------------
// The counter the timing child would use

/// Counter chosen on `cpu` (pinned when possible), its rate and bracket overhead.
#[derive(Clone, Debug)]
pub struct CounterInfo {
    pub kind: CounterKind,
    pub hz: Option<f64>,
    /// (min, median) ticks of back-to-back start/stop.
    pub overhead: (u64, u64),
}

pub fn counter_info(cpu: u32) -> CounterInfo {
    let probe = || {
        let mut c = Counter::open_best();
        let overhead = counter::overhead(&mut c);
        CounterInfo {
            kind: c.kind(),
            hz: c.hz(),
            overhead,
        }
    };
    // An unusable CPU is reported by the checks; still describe the counter, unpinned.
    on_cpu(cpu, probe).unwrap_or_else(probe)
}

// ---------------------------------------------------------------------------------------
// Host facts and problems (§1.3)

/// Everything the host checks look at, gathered once; `problems_from_facts` is pure.
#[derive(Clone, Debug, PartialEq)]
pub struct HostFacts {
    pub cpu: u32,
    /// `uname -m`.
    pub arch: String,
    pub perf_event_paranoid: Option<String>,
    pub intel_pstate_no_turbo: Option<String>,
    pub cpufreq_boost: Option<String>,
    pub governor: Option<String>,
    pub scaling_min_freq: Option<String>,
    pub scaling_max_freq: Option<String>,
    pub thread_siblings_list: Option<String>,
    /// `/sys/devices/cpu_core/cpus` (Intel hybrid performance cores).
    pub cpu_core_cpus: Option<String>,
    /// sched_setaffinity to {cpu} succeeds.
    pub can_use_cpu: bool,
    /// Counter `Counter::open_best` picks on this CPU.
    pub counter: CounterKind,
    /// "hypervisor" in /proc/cpuinfo flags.
    pub virtualized: bool,
}

impl HostFacts {
    pub fn gather(cpu: u32) -> HostFacts {
        let cpu_dir = format!("/sys/devices/system/cpu/cpu{cpu}");
        let cpufreq = |f: &str| read_trim(format!("{cpu_dir}/cpufreq/{f}"));
        let can_use_cpu = on_cpu(cpu, || ()).is_some();
        HostFacts {
            cpu,
            arch: uname().machine,
            perf_event_paranoid: read_trim("/proc/sys/kernel/perf_event_paranoid"),
            intel_pstate_no_turbo: read_trim("/sys/devices/system/cpu/intel_pstate/no_turbo"),
            cpufreq_boost: read_trim("/sys/devices/system/cpu/cpufreq/boost"),
            governor: cpufreq("scaling_governor"),
            scaling_min_freq: cpufreq("scaling_min_freq"),
            scaling_max_freq: cpufreq("scaling_max_freq"),
            thread_siblings_list: read_trim(format!("{cpu_dir}/topology/thread_siblings_list")),
            cpu_core_cpus: read_trim("/sys/devices/cpu_core/cpus"),
            can_use_cpu,
            counter: on_cpu(cpu, || Counter::open_best().kind())
                .unwrap_or_else(|| Counter::open_best().kind()),
            virtualized: cpu_flags().iter().any(|f| f == "hypervisor"),
        }
    }
}

/// Problems in the reference order with its exact strings, plus ours (perf cycles that do
/// not count; virtual machine). `probe(attempt)` measures the clock; it is only called when
/// no cpufreq exists and no reference check failed, at most 3 times, until a steady result.
pub fn problems_from_facts(
    f: &HostFacts,
    mut probe: impl FnMut(u32) -> Option<ClockProbe>,
) -> Vec<String> {
    let n = f.cpu;
    let mut out = Vec::new();
    // Step 9 runs only when none of the reference checks failed; ours do not count.
    let mut reference = 0;
    let mut push_ref = |out: &mut Vec<String>, p: String| {
        reference += 1;
        out.push(p);
    };

    if f.arch != "x86_64" && f.arch != "aarch64" {
        push_ref(
            &mut out,
            format!("architecture {} has no guide configuration", f.arch),
        );
    }
    let paranoid_ok = f
        .perf_event_paranoid
        .as_deref()
        .and_then(|s| s.trim().parse::<i64>().ok())
        .is_some_and(|v| (-1..=2).contains(&v));
    if !paranoid_ok {
        push_ref(
            &mut out,
            "hardware cycle counter unavailable: set kernel.perf_event_paranoid=2".into(),
        );
    } else if f.counter != CounterKind::PerfCycles {
        out.push(format!(
            "hardware cycle counter not supported by this kernel/VM (perf_event_open cycles \
             failed); falling back to {}",
            f.counter.as_str()
        ));
    }
    if f.intel_pstate_no_turbo.as_deref() == Some("0") || f.cpufreq_boost.as_deref() == Some("1") {
        push_ref(&mut out, "turbo/boost is enabled".into());
    }
    if let Some(g) = &f.governor {
        if g != "performance" {
            push_ref(
                &mut out,
                format!("CPU {n} governor is {g}, not performance"),
            );
        }
        if f.arch == "aarch64" && f.scaling_min_freq != f.scaling_max_freq {
            let show = |v: &Option<String>| v.clone().unwrap_or_else(|| "None".into());
            push_ref(
                &mut out,
                format!(
                    "CPU {n} clock not pinned (scaling_min_freq {} != scaling_max_freq {})",
                    show(&f.scaling_min_freq),
                    show(&f.scaling_max_freq)
                ),
            );
        }
    }
    if let Some(list) = &f.thread_siblings_list
        && *list != n.to_string()
    {
        push_ref(
            &mut out,
            format!("CPU {n} shares its core with CPUs {list} (SMT on)"),
        );
    }
    if let Some(list) = &f.cpu_core_cpus
        && !parse_cpu_list(list).contains(&n)
    {
        push_ref(
            &mut out,
            format!("CPU {n} is not a performance core (cpu_core: {list})"),
        );
    }
    if !f.can_use_cpu {
        push_ref(
            &mut out,
            format!("CPU {n} cannot be used by this process (cpuset)"),
        );
    }
    if f.governor.is_none() && reference == 0 {
        let mut last = None;
        for attempt in 0..3 {
            last = probe(attempt);
            match &last {
                Some(p) if !p.is_steady() => continue,
                _ => break,
            }
        }
        match last {
            None => out.push(format!(
                "CPU {n}: no cpufreq and no cycle counter to measure the clock"
            )),
            Some(p) if !p.is_steady() => out.push(format!(
                "CPU {n} clock is not steady without cpufreq control ({:.3}-{:.3} GHz)",
                p.min_hz / 1e9,
                p.max_hz / 1e9
            )),
            Some(_) => {}
        }
    }
    if f.virtualized {
        out.push("virtual machine (hypervisor flag): timings are shared with other guests".into());
    }
    out
}

/// The host problems of `cpu` (empty = fixed host). May take a few seconds: without
/// cpufreq the clock is probed up to 3 times, 5 s apart.
pub fn host_problems(cpu: u32) -> Vec<String> {
    let facts = HostFacts::gather(cpu);
    problems_from_facts(&facts, |attempt| {
        if attempt > 0 {
            std::thread::sleep(Duration::from_secs(5));
        }
        clock_probe(cpu, 21, 50)
    })
}

/// Expands a kernel CPU list (`0-3,8,10-11`); malformed parts are skipped.
pub fn parse_cpu_list(list: &str) -> Vec<u32> {
    let mut cpus = Vec::new();
    for part in list
        .trim()
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
    {
        let bounds: Option<(u32, u32)> = match part.split_once('-') {
            Some((a, b)) => a.trim().parse().ok().zip(b.trim().parse().ok()),
            None => part.parse().ok().map(|a| (a, a)),
        };
        if let Some((a, b)) = bounds
            && b >= a
            && b - a < 1 << 16
        {
            cpus.extend(a..=b);
        }
    }
    cpus
}

// ---------------------------------------------------------------------------------------
// Environment snapshot (§1.5)

/// The environment snapshot of §1.5 (same keys, order and types) followed by our keys
/// `counter`, `counter_hz`, `tsc_constant`, `perf_cycles_available`. Core-clock keys are
/// probed only when a core cycle counter exists (else null). Takes about 1–2 s.
pub fn environment(cpu: u32) -> HostEnv {
    let u = uname();
    let cpuinfo = read_string("/proc/cpuinfo").unwrap_or_default();
    let flags = cpu_flags();
    let cpu_dir = format!("/sys/devices/system/cpu/cpu{cpu}");
    let cpufreq = |f: &str| EnvField::from_option(read_trim(format!("{cpu_dir}/cpufreq/{f}")));
    let sys = |path: &str| EnvField::from_option(read_trim(path));
    let info = counter_info(cpu);
    let perf = info.kind == CounterKind::PerfCycles;
    let probe = if perf { clock_probe(cpu, 21, 50) } else { None };
    let hz = |f: fn(&ClockProbe) -> f64| {
        EnvField::from_option(probe.as_ref().map(|p| f(p).round() as u64))
    };
    let has_flag = |name: &str| flags.iter().any(|f| f == name);
    HostEnv {
        hostname: EnvField::Value(u.nodename),
        architecture: EnvField::Value(u.machine),
        cpu_model: EnvField::Value(cpu_model(&cpuinfo)),
        machine: EnvField::from_option(machine()),
        cpu_number: EnvField::Value(u64::from(cpu)),
        logical_cpus_online: sys("/sys/devices/system/cpu/online"),
        virtualized: EnvField::Value(has_flag("hypervisor")),
        memory_total_kib: EnvField::from_option(
            read_string("/proc/meminfo").and_then(|m| mem_total_kib(&m)),
        ),
        os: EnvField::from_option(os_pretty_name()),
        kernel: EnvField::Value(u.release),
        compiler: EnvField::from_option(first_line_of(&["gcc", "--version"])),
        cmake: EnvField::from_option(first_line_of(&["cmake", "--version"])),
        python: EnvField::from_option(python_version()),
        perf_event_paranoid: sys("/proc/sys/kernel/perf_event_paranoid"),
        cpufreq_governor: cpufreq("scaling_governor"),
        cpufreq_driver: cpufreq("scaling_driver"),
        cpufreq_min_khz: cpufreq("scaling_min_freq"),
        cpufreq_max_khz: cpufreq("scaling_max_freq"),
        cpufreq_avg_khz: cpufreq("cpuinfo_avg_freq"),
        intel_pstate_no_turbo: sys("/sys/devices/system/cpu/intel_pstate/no_turbo"),
        cpufreq_boost: sys("/sys/devices/system/cpu/cpufreq/boost"),
        smt_control: sys("/sys/devices/system/cpu/smt/control"),
        core_clock_hz: hz(|p| p.hz),
        core_clock_min_hz: hz(|p| p.min_hz),
        core_clock_max_hz: hz(|p| p.max_hz),
        core_clock_mhz: EnvField::from_option(probe.as_ref().map(|p| core_clock_mhz(p.hz.round()))),
        counter: EnvField::Value(info.kind.clone()),
        counter_hz: EnvField::from_option(info.hz.map(|h| h.round() as u64)),
        tsc_constant: EnvField::Value(has_flag("constant_tsc") && has_flag("nonstop_tsc")),
        perf_cycles_available: EnvField::Value(perf),
        extra: Default::default(),
    }
}

/// 50 × round(hz / 50 MHz), with Python's round-half-to-even.
pub fn core_clock_mhz(hz: f64) -> u64 {
    (50.0 * (hz / 50e6).round_ties_even()) as u64
}

fn read_string(path: impl AsRef<Path>) -> Option<String> {
    std::fs::read(path)
        .ok()
        .map(|b| String::from_utf8_lossy(&b).into_owned())
}

/// File contents without surrounding whitespace (and trailing NULs, as in devicetree).
fn read_trim(path: impl AsRef<Path>) -> Option<String> {
    read_string(path).map(|s| {
        s.trim_matches(|c: char| c.is_whitespace() || c == '\0')
            .to_string()
    })
}

struct Uname {
    nodename: String,
    release: String,
    machine: String,
}

fn uname() -> Uname {
    // SAFETY: a zeroed utsname is valid; uname fills NUL-terminated fields.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    let ok = unsafe { libc::uname(&mut u) } == 0;
    let field = |f: &[libc::c_char]| {
        if !ok {
            return String::new();
        }
        let bytes: Vec<u8> = f
            .iter()
            .take_while(|&&c| c != 0)
            .map(|&c| c as u8)
            .collect();
        String::from_utf8_lossy(&bytes).into_owned()
    };
    Uname {
        nodename: field(&u.nodename),
        release: field(&u.release),
        machine: field(&u.machine),
    }
}

/// Value of the first `key : value` line of /proc/cpuinfo-style text.
fn cpuinfo_field(text: &str, key: &str) -> Option<String> {
    text.lines().find_map(|line| {
        let (k, v) = line.split_once(':')?;
        (k.trim() == key && !v.trim().is_empty()).then(|| v.trim().to_string())
    })
}

fn cpu_flags() -> Vec<String> {
    let text = read_string("/proc/cpuinfo").unwrap_or_default();
    cpuinfo_field(&text, "flags")
        .map(|f| f.split_whitespace().map(str::to_string).collect())
        .unwrap_or_default()
}

fn cpu_model(cpuinfo: &str) -> String {
    if let Some(m) = cpuinfo_field(cpuinfo, "model name") {
        return m;
    }
    if let Some(out) = command_stdout(&["lscpu"]) {
        let parts: Vec<String> = ["Vendor ID", "Model name"]
            .iter()
            .filter_map(|k| cpuinfo_field(&out, k))
            .collect();
        if !parts.is_empty() {
            return parts.join(" ");
        }
    }
    cpuinfo_field(cpuinfo, "Hardware")
        .or_else(|| cpuinfo_field(cpuinfo, "CPU part"))
        .unwrap_or_else(|| "unknown".into())
}

fn machine() -> Option<String> {
    [
        "/proc/device-tree/model",
        "/sys/firmware/devicetree/base/model",
        "/sys/class/dmi/id/product_name",
    ]
    .iter()
    .filter_map(read_trim)
    .find(|s| !s.is_empty())
}

fn mem_total_kib(meminfo: &str) -> Option<u64> {
    cpuinfo_field(meminfo, "MemTotal")?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

fn os_pretty_name() -> Option<String> {
    let text = read_string("/etc/os-release").or_else(|| read_string("/usr/lib/os-release"))?;
    text.lines().find_map(|l| {
        let v = l.strip_prefix("PRETTY_NAME=")?.trim();
        Some(v.trim_matches(|c| c == '"' || c == '\'').to_string())
    })
}

/// Stdout of a short-running tool (LC_ALL=C), or None if it is missing or fails.
fn command_stdout(argv: &[&str]) -> Option<String> {
    let out = Command::new(argv[0])
        .args(&argv[1..])
        .env("LC_ALL", "C")
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

fn first_line_of(argv: &[&str]) -> Option<String> {
    command_stdout(argv)?
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(str::to_string)
}

/// `python3 --version` → "3.11.7".
fn python_version() -> Option<String> {
    let line = first_line_of(&["python3", "--version"])?;
    let v = line.strip_prefix("Python ")?.trim();
    (!v.is_empty()).then(|| v.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_expand() {
        assert_eq!(parse_cpu_list("0-3,8,10-11\n"), vec![0, 1, 2, 3, 8, 10, 11]);
        assert_eq!(parse_cpu_list("5"), vec![5]);
        assert_eq!(parse_cpu_list(""), Vec::<u32>::new());
        assert_eq!(parse_cpu_list("x,3-1,2"), vec![2]);
    }

    #[test]
    fn load_average_parses_three_floats() {
        assert_eq!(
            parse_load_average("1.91 0.95 0.39 2/84 12141\n"),
            vec![1.91, 0.95, 0.39]
        );
        assert!(parse_load_average("garbage").is_empty());
        assert_eq!(load_average().len(), 3);
    }

    #[test]
    fn probe_statistics_use_the_reference_indices() {
        let p = ClockProbe::from_rates(vec![5.0, 1.0, 4.0, 2.0, 3.0]).unwrap();
        assert_eq!((p.hz, p.min_hz, p.max_hz, p.windows), (3.0, 1.0, 5.0, 5));
        assert_eq!(p.iqr_hz, 4.0 - 2.0); // hz[3] - hz[1]
        // Even count: the median is the upper middle value, hz[n/2].
        let p = ClockProbe::from_rates(vec![1.0, 2.0, 3.0, 4.0]).unwrap();
        assert_eq!(p.hz, 3.0);
        assert!(ClockProbe::from_rates(vec![]).is_none());
    }

    #[test]
    fn probe_argument_limits() {
        assert!(clock_probe(0, 0, 50).is_none());
        assert!(clock_probe(0, 10_001, 50).is_none());
        assert!(clock_probe(0, 21, 0).is_none());
    }

    #[test]
    fn probe_matches_perf_availability() {
        let perf = counter::perf_cycles_available();
        let p = clock_probe(0, 3, 5);
        assert_eq!(p.is_some(), perf);
        if let Some(p) = p {
            assert!(p.min_hz <= p.hz && p.hz <= p.max_hz && p.windows == 3);
        }
    }

    #[test]
    fn core_clock_mhz_rounds_half_to_even() {
        assert_eq!(core_clock_mhz(2_695_077_195.0), 2700);
        assert_eq!(core_clock_mhz(2_100_000_000.0), 2100);
        assert_eq!(core_clock_mhz(2_125_000_000.0), 2100); // 42.5 → 42
        assert_eq!(core_clock_mhz(2_175_000_000.0), 2200); // 43.5 → 44
    }

    #[test]
    fn cpuinfo_fields() {
        let text =
            "processor\t: 0\nmodel name\t: AMD EPYC\nflags\t\t: fpu tsc\n\nmodel name\t: other\n";
        assert_eq!(
            cpuinfo_field(text, "model name").as_deref(),
            Some("AMD EPYC")
        );
        assert_eq!(cpuinfo_field(text, "Hardware"), None);
        assert_eq!(
            mem_total_kib("MemTotal:       31295756 kB\n"),
            Some(31295756)
        );
    }

    #[test]
    fn pinning_an_impossible_cpu_fails_cleanly() {
        assert!(pin_to_cpu(100_000).is_err());
        assert!(on_cpu(100_000, || ()).is_none());
        assert_eq!(on_cpu(0, || 7), Some(7));
    }
}
