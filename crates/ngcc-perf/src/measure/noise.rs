//! The run-level noise figure: a fixed reference loop (our code: SM3 of a fixed 1 KiB message,
//! a fixed number of times) timed on the benchmark CPU at the start, middle and end of the
//! measure phase. Its spread says how much the host itself moved during the run, which the
//! per-record CVs cannot separate from the candidates.

use crate::dataset::schema::{CounterKind, NoiseCheck, NoisePoint, NoiseSample};

/// What the reference loop does (recorded with the samples).
pub const REFERENCE_WORK: &str = "SM3 (ngcc-iccs, Rust) of a fixed 1 KiB message, 2000 times";
const REFERENCE_CALLS: usize = 2000;
/// Samples at each point.
pub const SAMPLES_PER_POINT: usize = 3;

/// Seconds of one reference loop on `cpu`, run on a thread pinned there.
pub fn reference_loop(cpu: u32) -> f64 {
    std::thread::spawn(move || {
        // SAFETY: a zeroed cpu_set_t with one bit set, for the calling thread (pid 0).
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(cpu as usize, &mut set);
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
        }
        let msg: Vec<u8> = (0..1024u32).map(|i| (i * 131 % 251) as u8).collect();
        let t0 = std::time::Instant::now();
        let mut acc = 0u8;
        for _ in 0..REFERENCE_CALLS {
            acc ^= ngcc_iccs::sm3::sm3(std::hint::black_box(&msg))[0];
        }
        std::hint::black_box(acc);
        t0.elapsed().as_secs_f64()
    })
    .join()
    .unwrap_or(f64::NAN)
}

/// Appends [`SAMPLES_PER_POINT`] samples at `at` and recomputes the figure; also one
/// estimate of the core clock per tick of `counter`.
pub fn sample(check: &mut NoiseCheck, at: NoisePoint, cpu: u32, counter: Option<CounterKind>) {
    check.work = REFERENCE_WORK.into();
    if let Some(c) = crate::measure::core_clock::estimate(cpu, counter) {
        check.core_clock.push(c);
    }
    for _ in 0..SAMPLES_PER_POINT {
        check.samples.push(NoiseSample {
            at: at.clone(),
            seconds: reference_loop(cpu),
        });
    }
    let (spread, cv) = figure(&check.samples);
    check.spread = spread;
    check.cv = cv;
}

/// (max − min) / min and the sample CV of the samples' seconds; (0, 0) under two samples.
pub fn figure(samples: &[NoiseSample]) -> (f64, f64) {
    let v: Vec<f64> = samples.iter().map(|s| s.seconds).collect();
    if v.len() < 2 {
        return (0.0, 0.0);
    }
    let min = v.iter().copied().fold(f64::INFINITY, f64::min);
    let max = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    ((max - min) / min, crate::measure::stats::spread(&v).cv)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figure_of_samples() {
        let s = |at: NoisePoint, seconds: f64| NoiseSample { at, seconds };
        let v = [
            s(NoisePoint::Start, 0.1),
            s(NoisePoint::Middle, 0.11),
            s(NoisePoint::End, 0.12),
        ];
        let (spread, cv) = figure(&v);
        assert!((spread - 0.2).abs() < 1e-12);
        // sd 0.01, mean 0.11.
        assert!((cv - 0.01 / 0.11).abs() < 1e-12);
        assert_eq!(figure(&v[..1]), (0.0, 0.0));
        let mut c = NoiseCheck::default();
        sample(&mut c, NoisePoint::Start, 0, None);
        assert_eq!(c.samples.len(), SAMPLES_PER_POINT);
        assert!(c.samples.iter().all(|x| x.seconds > 0.0));
        assert_eq!((c.spread, c.cv), figure(&c.samples));
    }
}
