//! Core cycles per counter tick, estimated on the benchmark CPU. TSC and CNTVCT tick at a
//! fixed rate whatever the core's clock; pages of the reference count core cycles. A chain of
//! dependent adds retires one add per core cycle on every x86-64 and AArch64 core we know,
//! so adds / ticks over a long chain is the core's clock in counter ticks (this VM: 1.65,
//! a 2.6 GHz TSC under a core boosting to ~4.3 GHz). An estimate, labelled as such.

use super::counter::Counter;
use crate::dataset::schema::{CounterKind, NoiseCheck};

/// The median of a run's estimates (`noise.core_cycles_per_tick`), if any was taken.
pub fn run_estimate(noise: &NoiseCheck) -> Option<f64> {
    super::stats::median(&noise.core_cycles_per_tick)
}

/// Iterations of four dependent adds: ~60 ms at 4 GHz.
const CHAIN_ITERATIONS: u64 = 1 << 26;

/// Core cycles per tick of `kind` (or the best counter) on `cpu`, from one add chain; `None`
/// without a counter or on an architecture we have no chain for.
pub fn core_cycles_per_tick(cpu: u32, kind: Option<CounterKind>) -> Option<f64> {
    super::host::on_cpu(cpu, move || {
        let mut c = kind
            .as_ref()
            .and_then(Counter::open)
            .unwrap_or_else(Counter::open_best);
        if c.kind() == CounterKind::None {
            return None;
        }
        // Warm the core up to its running clock first.
        add_chain(CHAIN_ITERATIONS / 4)?;
        c.start();
        let adds = add_chain(CHAIN_ITERATIONS)?;
        let ticks = c.stop();
        (ticks > 0).then(|| adds as f64 / ticks as f64)
    })
    .flatten()
}

/// Runs `n` × 4 dependent adds; the number of adds, or `None` off x86-64/AArch64. The loop
/// is assembly too: compiled Rust around the adds would put stack loads and stores into the
/// chain at opt-level 0.
#[allow(unreachable_code)]
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
    }
    #[cfg(target_arch = "aarch64")]
    unsafe {
        core::arch::asm!(
            "2:",
            "add {x}, {x}, #1", "add {x}, {x}, #1", "add {x}, {x}, #1", "add {x}, {x}, #1",
            "subs {n}, {n}, #1",
            "b.ne 2b",
            x = inout(reg) x, n = inout(reg) n => _, options(nomem, nostack)
        );
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    return None;
    // The adds themselves say how many ran.
    Some(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_chain_runs_and_the_estimate_is_a_plausible_clock_ratio() {
        assert_eq!(add_chain(10), Some(40));
        assert_eq!(add_chain(0), Some(0));
        // Any counter between 1/8 and 8 core cycles per tick is plausible; `none` gives None.
        if let Some(f) = core_cycles_per_tick(0, None) {
            assert!((0.125..8.0).contains(&f), "{f}");
        }
    }
}
