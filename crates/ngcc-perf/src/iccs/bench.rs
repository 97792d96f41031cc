//! `ngcc-perf iccs bench`: SM3 cost of the embedded C helper per byte, next to `openssl speed`.
//! A rough guide, not a test: the host may be busy and is not fixed.

use super::ffi;
use ngcc_iccs::sm3;
use std::hint::black_box;
use std::process::{Command, ExitCode};
use std::time::Instant;

const SIZES: [usize; 7] = [32, 128, 512, 1024, 4096, 16384, 65536];
const BATCHES: usize = 15;
/// Short batches, so one that the scheduler interrupts is an outlier the median drops.
const BATCH_NS: f64 = 2e6;

/// Medians per byte: wall-clock ns and TSC ticks (where there is a TSC).
struct Cost {
    ns: f64,
    tsc: Option<f64>,
}

fn tsc() -> Option<u64> {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: rdtsc has no preconditions on x86-64.
        Some(unsafe { core::arch::x86_64::_rdtsc() })
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        None
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn measure(size: usize, mut hash: impl FnMut(&[u8])) -> Cost {
    let msg: Vec<u8> = (0..size).map(|i| (i * 131 + 7) as u8).collect();
    let mut run = |iters: u64| {
        let (t0, c0) = (Instant::now(), tsc());
        for _ in 0..iters {
            hash(black_box(&msg));
        }
        let (c1, ns) = (tsc(), t0.elapsed().as_nanos() as f64);
        (ns, c0.zip(c1).map(|(a, b)| b.wrapping_sub(a) as f64))
    };
    let mut iters = 1u64;
    loop {
        let (ns, _) = run(iters);
        if ns >= BATCH_NS / 8.0 || iters >= 1 << 24 {
            iters = ((iters as f64 * BATCH_NS / ns.max(1.0)) as u64).max(1);
            break;
        }
        iters *= 2;
    }
    let bytes = (iters * size as u64) as f64;
    let (mut ns, mut ticks) = (Vec::new(), Vec::new());
    for _ in 0..BATCHES {
        let (t, c) = run(iters);
        ns.push(t / bytes);
        ticks.extend(c.map(|c| c / bytes));
    }
    Cost {
        ns: median(ns),
        tsc: (!ticks.is_empty()).then(|| median(ticks)),
    }
}

/// ns/byte of `openssl speed -evp sm3 -bytes N -seconds 1` (its default: user CPU time).
/// The errors are one-line messages: the table shows one as a note and decides nothing on it.
fn openssl_ns_per_byte(size: usize) -> anyhow::Result<f64> {
    use anyhow::{anyhow, bail};
    let out = Command::new("openssl")
        .args(["speed", "-mr", "-evp", "sm3", "-seconds", "1", "-bytes"])
        .arg(size.to_string())
        .output()
        .map_err(|e| anyhow!("cannot run openssl: {e}"))?;
    // Machine-readable result line (on stderr in OpenSSL 3): +R:<count>:sm3:<seconds>
    let text = [out.stdout, out.stderr].concat();
    let text = String::from_utf8_lossy(&text);
    let line = text
        .lines()
        .find(|l| l.starts_with("+R:"))
        .ok_or_else(|| anyhow!("no +R: line in openssl speed output ({})", out.status))?;
    let f: Vec<&str> = line.split(':').collect();
    let count: f64 = f
        .get(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| anyhow!("bad +R: count"))?;
    let secs: f64 = f
        .get(3)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| anyhow!("bad +R: time"))?;
    if count <= 0.0 || secs <= 0.0 {
        bail!("unusable openssl result {line:?}");
    }
    Ok(secs * 1e9 / (count * size as f64))
}

fn openssl_version() -> Option<String> {
    let out = Command::new("openssl").arg("version").output().ok()?;
    out.status.success().then(|| {
        let v = String::from_utf8_lossy(&out.stdout);
        // "OpenSSL 3.0.19 27 Jan 2026 (Library: …)": keep the part before the library note.
        v.split(" (").next().unwrap_or("").trim().to_string()
    })
}

fn size_label(n: usize) -> String {
    if n >= 1024 {
        format!("{} KiB", n / 1024)
    } else {
        format!("{n} B")
    }
}

fn opt(v: Option<f64>, prec: usize) -> String {
    v.map_or("-".into(), |v| format!("{v:.prec$}"))
}

pub fn run() -> anyhow::Result<ExitCode> {
    let openssl = openssl_version();
    crate::util::out!(
        "SM3 cost per byte: sm3hash(256, msg, 8*size) of the embedded C helper (-std=c99 -O2),"
    );
    crate::util::out!(
        "median of {BATCHES} batches of ~{} ms, wall clock; the Rust model for reference.",
        BATCH_NS / 1e6
    );
    crate::util::out!(
        "TSC = TSC reference cycles (constant rate, not core cycles); '-' = no TSC on this CPU."
    );
    match &openssl {
        Some(v) => crate::util::out!(
            "OpenSSL: `openssl speed -evp sm3 -bytes N -seconds 1` ({v}), user CPU time; \
             its TSC/B is its ns/B at the TSC rate measured here."
        ),
        None => crate::util::out!("OpenSSL: not on PATH, skipped."),
    }
    crate::util::out!(
        "Host not fixed (frequency scaling, other load): a rough guide, not a publishable figure."
    );
    crate::util::out!();
    crate::util::out!(
        "{:>8} {:>8} {:>8} {:>11} {:>12} {:>13} {:>10}",
        "size",
        "C ns/B",
        "C TSC/B",
        "model ns/B",
        "OpenSSL ns/B",
        "OpenSSL TSC/B",
        "C/OpenSSL"
    );
    for size in SIZES {
        let c = measure(size, |m| {
            black_box(ffi::c_sm3(m, 8 * m.len() as u64));
        });
        let model = measure(size, |m| {
            black_box(sm3::sm3(m));
        });
        let tsc_per_ns = c.tsc.map(|t| t / c.ns);
        let (ossl_ns, note) = match &openssl {
            Some(_) => match openssl_ns_per_byte(size) {
                Ok(ns) => (Some(ns), None),
                Err(e) => (None, Some(e.to_string())),
            },
            None => (None, None),
        };
        crate::util::out!(
            "{:>8} {:>8.2} {:>8} {:>11.2} {:>12} {:>13} {:>10}",
            size_label(size),
            c.ns,
            opt(c.tsc, 2),
            model.ns,
            opt(ossl_ns, 2),
            opt(ossl_ns.zip(tsc_per_ns).map(|(n, r)| n * r), 2),
            opt(ossl_ns.map(|o| c.ns / o), 2),
        );
        if let Some(e) = note {
            crate::util::out!("         openssl: {e}");
        }
    }
    Ok(ExitCode::SUCCESS)
}
