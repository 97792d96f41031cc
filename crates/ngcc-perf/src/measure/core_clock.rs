//! Core cycles per counter tick, estimated on the benchmark CPU. TSC and CNTVCT tick at a
//! fixed rate whatever the core's clock; pages of the reference count core cycles.
//!
//! The clock is a chain of dependent 64-bit `imul`s: each multiply needs the previous
//! product, and a multiply's latency is 3 cycles on Intel cores since Core 2 and AMD cores
//! since Zen; no renamer eliminates or fuses a multiply. A chain of dependent
//! add-immediates is not enough: Golden Cove and later Intel cores fold them in the renamer
//! and run several per cycle (this VM, a 2.6 GHz TSC: 6.45 adds but 1.61 × 3 multiply
//! cycles per tick, a 4.2 GHz core; the adds ran 4 per cycle, and the old add-chain figure
//! made a 16 GHz core of it).
//!
//! Every estimate is checked, and only a checked one converts anything:
//! - the add chain must not run slower than the multiplies imply (an add takes at most one
//!   cycle): if it does, multiplies take more than 3 cycles on this core (AMD K8 to
//!   Bulldozer, some Atoms) and the estimate is too high;
//! - the core clock it implies (cycles per tick × ticks per second) must lie in the CPU's
//!   nominal range: cpufreq's, else around the clock of the brand string, else 0.4–6.5 GHz.
//!
//! Otherwise the verdict is `unknown` with the reason, and `compare --reference-page` says
//! "core clock unknown" instead of converting. Each chain runs [`REPEATS`] short times and
//! the fastest run counts: a preemption only adds ticks, so the fastest is the least
//! disturbed (under a load of 14 on 2 cores the best of 40 agreed to 4 digits run to run).

use super::counter::Counter;
use crate::dataset::schema::{CoreClock, CoreClockVerdict, CounterKind, NoiseCheck, NominalSource};

/// Cycles one dependent 64-bit `imul` takes (see the module comment).
pub const MUL_LATENCY: f64 = 3.0;

/// Iterations of four dependent multiplies per run: about 3 M cycles, 1 ms at 3 GHz.
const MUL_ITERATIONS: u64 = 1 << 18;
/// Runs of each chain; the fastest counts.
const REPEATS: usize = 40;
/// The add chain may be this much slower than the multiplies imply before the multiply
/// latency is doubted (the two chains run at different moments).
const ADD_TOLERANCE: f64 = 0.9;
/// Every core clock on sale lies here.
const PLAUSIBLE_HZ: (f64, f64) = (0.4e9, 6.5e9);

/// Why a run has no checked core-clock estimate. A value (not text) so the comparison that
/// keeps it stays typed; `compare --reference-page` prints it with Display.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum NoCoreClock {
    /// The reason the run's check recorded (`CoreClock::why`).
    #[error("{0}")]
    Unchecked(String),
    #[error("the run has only add-chain estimates (an older version), which recent cores fold")]
    OnlyAddChain,
    #[error("the run has no core-clock estimate")]
    NoEstimate,
    #[error("the run has no noise check, where the core clock is estimated")]
    NoNoiseCheck,
}

/// The median of a run's checked estimates in core cycles per tick, or why there is none.
pub fn run_estimate(noise: &NoiseCheck) -> Result<f64, NoCoreClock> {
    let measured: Vec<f64> = noise
        .core_clock
        .iter()
        .filter(|c| c.verdict == CoreClockVerdict::Measured)
        .map(|c| c.mul_cycles_per_tick)
        .collect();
    if let Some(m) = super::stats::median(&measured) {
        return Ok(m);
    }
    Err(match noise.core_clock.iter().find_map(|c| c.why.clone()) {
        Some(why) => NoCoreClock::Unchecked(why),
        None if !noise.core_cycles_per_tick.is_empty() => NoCoreClock::OnlyAddChain,
        None => NoCoreClock::NoEstimate,
    })
}

/// One checked estimate for the counter `kind` (or the best counter) on `cpu`; `None`
/// without a counter or off x86-64.
pub fn estimate(cpu: u32, kind: Option<CounterKind>) -> Option<CoreClock> {
    super::host::on_cpu(cpu, move || {
        let mut c = kind
            .as_ref()
            .and_then(Counter::open)
            .unwrap_or_else(Counter::open_best);
        if c.kind() == CounterKind::None {
            return None;
        }
        // Warm the core up to its running clock first.
        mul_chain(MUL_ITERATIONS * 16)?;
        let (mut mul, mut add) = (0.0f64, 0.0f64);
        let (mut ticks, mut ns) = (0u64, 0u64);
        for _ in 0..REPEATS {
            let t0 = c.start_timed();
            mul_chain(MUL_ITERATIONS)?;
            let (t1, dt) = c.stop_timed();
            if dt > 0 {
                mul = mul.max(MUL_LATENCY * (4 * MUL_ITERATIONS) as f64 / dt as f64);
            }
            ticks += dt;
            ns += t1.saturating_sub(t0);
            // As many adds as the multiply chain has cycles: about the same duration
            // where adds take a cycle each, and never a shorter window to time.
            let adds = 3 * MUL_ITERATIONS;
            c.start();
            add_chain(adds)?;
            let dt = c.stop();
            if dt > 0 {
                add = add.max((4 * adds) as f64 / dt as f64);
            }
        }
        if mul == 0.0 || ns == 0 {
            return None;
        }
        let tick_hz = ticks as f64 / (ns as f64 * 1e-9);
        let nominal = nominal_range(cpu);
        Some(judge(mul, add, tick_hz, &nominal))
    })
    .flatten()
}

/// The verdict on a multiply-chain estimate `mul` (core cycles per tick) with the add
/// chain's `add` and the counter's `tick_hz`, against `nominal` (low Hz, high Hz, source).
pub fn judge(mul: f64, add: f64, tick_hz: f64, nominal: &(f64, f64, NominalSource)) -> CoreClock {
    let (low, high, source) = (nominal.0, nominal.1, nominal.2.clone());
    let core_hz = mul * tick_hz;
    let why = if !(low..=high).contains(&core_hz) {
        Some(format!(
            "the multiply chain implies a {:.2} GHz core, outside the nominal {:.2}–{:.2} GHz ({})",
            core_hz / 1e9,
            low / 1e9,
            high / 1e9,
            source
        ))
    } else if add < ADD_TOLERANCE * mul {
        Some(format!(
            "adds ran at {add:.3} per tick, slower than the {mul:.3} cycles per tick the \
             multiplies imply: multiplies take more than {MUL_LATENCY} cycles on this core"
        ))
    } else {
        None
    };
    CoreClock {
        mul_cycles_per_tick: mul,
        add_cycles_per_tick: add,
        tick_hz,
        nominal_low_hz: low,
        nominal_high_hz: high,
        nominal_source: source,
        verdict: if why.is_none() {
            CoreClockVerdict::Measured
        } else {
            CoreClockVerdict::Unknown
        },
        why,
    }
}

/// The core clock range of `cpu`: cpufreq's limits (±5 %), else half to 4.5 times the clock
/// in the brand string (base clocks: turbo reaches 4.3× on low-power laptop parts), capped
/// at 6.5 GHz, else the plausible range.
pub fn nominal_range(cpu: u32) -> (f64, f64, NominalSource) {
    let khz = |f: &str| {
        std::fs::read_to_string(format!("/sys/devices/system/cpu/cpu{cpu}/cpufreq/{f}"))
            .ok()
            .and_then(|s| s.trim().parse::<f64>().ok())
            .filter(|k| *k > 0.0)
    };
    if let (Some(lo), Some(hi)) = (khz("cpuinfo_min_freq"), khz("cpuinfo_max_freq")) {
        return (lo * 1e3 * 0.95, hi * 1e3 * 1.05, NominalSource::Cpufreq);
    }
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let brand = cpuinfo.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        (k.trim() == "model name").then(|| v.trim().to_string())
    });
    range_from_brand(brand.as_deref())
}

/// See [`nominal_range`]; the brand string's part.
pub fn range_from_brand(brand: Option<&str>) -> (f64, f64, NominalSource) {
    match brand.and_then(brand_hz) {
        Some(hz) => (
            hz * 0.5,
            (hz * 4.5).min(PLAUSIBLE_HZ.1),
            NominalSource::BrandString,
        ),
        None => (PLAUSIBLE_HZ.0, PLAUSIBLE_HZ.1, NominalSource::Plausible),
    }
}

/// The clock a brand string names ("… CPU @ 3.20GHz", "… 2400 MHz"), in Hz.
pub fn brand_hz(brand: &str) -> Option<f64> {
    let words: Vec<&str> = brand.split_whitespace().collect();
    for (i, w) in words.iter().enumerate() {
        let lower = w.to_ascii_lowercase();
        for (unit, scale) in [("ghz", 1e9), ("mhz", 1e6)] {
            let Some(num) = lower.strip_suffix(unit) else {
                continue;
            };
            // "3.20GHz" in one word, or "3.20 GHz".
            let num = if num.is_empty() && i > 0 {
                words[i - 1]
            } else {
                num
            };
            if let Ok(v) = num.trim_start_matches('@').parse::<f64>()
                && v > 0.0
            {
                return Some(v * scale);
            }
        }
    }
    None
}

/// Runs `n` × 4 dependent 64-bit multiplies by 3 starting from 1; returns the product,
/// 3^(4n) mod 2^64 (the test checks it: every multiply used the one before), or `None` off
/// x86-64. Assembly, loop included: compiled Rust around the chain would put stack loads and
/// stores into it at opt-level 0.
#[allow(unreachable_code, unused_variables, unused_mut)]
fn mul_chain(n: u64) -> Option<u64> {
    if n == 0 {
        return Some(1);
    }
    let mut x = 1u64;
    // SAFETY: register arithmetic only; the loop counts `n` (≥ 1) down to zero.
    #[cfg(target_arch = "x86_64")]
    unsafe {
        core::arch::asm!(
            "2:",
            "imul {x}, {m}", "imul {x}, {m}", "imul {x}, {m}", "imul {x}, {m}",
            "sub {n}, 1",
            "jnz 2b",
            x = inout(reg) x, n = inout(reg) n => _, m = in(reg) 3u64,
            options(nomem, nostack)
        );
        return Some(x);
    }
    // AArch64 multiply latencies differ between cores (2 to 5 cycles) and we know no
    // instruction whose latency every core shares: no estimate there.
    None
}

/// Runs `n` × 4 dependent add-immediates; the number of adds, or `None` off x86-64. Only the
/// check of the multiply chain uses it.
#[allow(unreachable_code, unused_variables, unused_mut)]
fn add_chain(n: u64) -> Option<u64> {
    if n == 0 {
        return Some(0);
    }
    let mut x = 0u64;
    // SAFETY: register arithmetic only; the loop counts `n` (≥ 1) down to zero.
    #[cfg(target_arch = "x86_64")]
    unsafe {
        core::arch::asm!(
            "2:",
            "add {x}, 1", "add {x}, 1", "add {x}, 1", "add {x}, 1",
            "sub {n}, 1",
            "jnz 2b",
            x = inout(reg) x, n = inout(reg) n => _, options(nomem, nostack)
        );
        return Some(x);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The chain's shape: 4 multiplies per iteration, each by 3 and each on the previous
    /// product (a product that skipped or reordered one, or an independent chain, would not
    /// be 3^(4n) mod 2^64).
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn the_multiply_chain_is_four_dependent_multiplies_per_iteration() {
        for n in [1u64, 2, 10, 1000] {
            assert_eq!(mul_chain(n), Some(3u64.wrapping_pow((4 * n) as u32)), "{n}");
        }
        assert_eq!(mul_chain(0), Some(1));
        assert_eq!(add_chain(10), Some(40));
    }

    #[test]
    fn the_verdict_needs_a_nominal_clock_and_adds_no_slower_than_the_multiplies() {
        let plausible = range_from_brand(None);
        assert_eq!(plausible.2, NominalSource::Plausible);
        // This VM (Intel Xeon, 2.6 GHz TSC): adds folded 4 per cycle, multiplies say 4.19 GHz.
        let c = judge(1.612, 6.447, 2.6e9, &plausible);
        assert_eq!(c.verdict, CoreClockVerdict::Measured, "{:?}", c.why);
        // The add chain alone said 6.3 cycles per tick, a 16 GHz core: refused.
        let c = judge(6.321, 6.321, 2.6e9, &plausible);
        assert_eq!(c.verdict, CoreClockVerdict::Unknown);
        assert!(c.why.unwrap().contains("16.43 GHz core, outside"));
        // Multiplies of latency 4 (AMD K8): the add chain runs slower than they imply.
        let c = judge(1.333, 1.0, 2.6e9, &plausible);
        assert_eq!(c.verdict, CoreClockVerdict::Unknown);
        assert!(c.why.unwrap().contains("more than 3 cycles"));
        // Against a brand string's clock.
        let brand = range_from_brand(Some("Intel(R) Core(TM) i7-8700 CPU @ 3.20GHz"));
        assert_eq!(brand, (1.6e9, 6.5e9, NominalSource::BrandString));
        assert_eq!(
            judge(0.4, 0.4, 3.2e9, &brand).verdict,
            CoreClockVerdict::Unknown
        );
        assert_eq!(
            judge(1.3, 1.3, 3.2e9, &brand).verdict,
            CoreClockVerdict::Measured
        );
    }

    #[test]
    fn brand_strings_give_their_clock() {
        assert_eq!(
            brand_hz("Intel(R) Xeon(R) CPU E5-2690 v4 @ 2.60GHz"),
            Some(2.6e9)
        );
        assert_eq!(brand_hz("Some CPU 2400 MHz"), Some(2.4e9));
        assert_eq!(brand_hz("Intel(R) Xeon(R) Processor"), None);
        assert_eq!(brand_hz("AMD EPYC 7763 64-Core Processor"), None);
    }

    /// On this machine's CPU: a measured estimate lies in its nominal range and the adds kept
    /// up with it; an unknown one says why. A loaded machine only lowers the estimate.
    #[test]
    fn the_estimate_on_this_cpu_is_checked() {
        let Some(c) = estimate(0, None) else {
            return;
        };
        let hz = c.mul_cycles_per_tick * c.tick_hz;
        match c.verdict {
            CoreClockVerdict::Measured => {
                assert!(
                    (c.nominal_low_hz..=c.nominal_high_hz).contains(&hz),
                    "{c:?}"
                );
                assert!(c.add_cycles_per_tick >= ADD_TOLERANCE * c.mul_cycles_per_tick);
                assert!(c.why.is_none());
            }
            _ => assert!(c.why.is_some(), "{c:?}"),
        }
        // A core that folds add-immediates (this VM's Intel Xeon: 4 per cycle) is the case
        // the multiply chain exists for: there it must give a clock, not "unknown".
        if c.add_cycles_per_tick > 1.5 * c.mul_cycles_per_tick {
            assert_eq!(c.verdict, CoreClockVerdict::Measured, "{c:?}");
        }
        crate::util::say!(
            "core clock: {:.3} cycles per tick by multiplies ({:.2} GHz), {:.3} by adds, {:?}",
            c.mul_cycles_per_tick,
            hz / 1e9,
            c.add_cycles_per_tick,
            c.verdict
        );
    }
}
