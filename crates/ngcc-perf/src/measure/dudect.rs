//! dudect's statistics (Reparaz, Balasch, Verbauwhede, DATE 2017) over raw timings of two
//! input classes: Welch's t on all timings, on timings below each of 100 percentile
//! thresholds (dudect's crop: p_k = 1 - 0.5^(10(k+1)/100), so most crops cut the fat upper
//! tail only), and a second-order test (squared distances to the class mean). The thresholds
//! are taken from all timings of the run (dudect takes them from its first batch).

use crate::dataset::schema::{CT_MIN_CLASS_N, CtClassStats, CtTest};

/// Crop thresholds, as dudect.
pub const CROPS: usize = 100;

/// Welch's t of two classes from their summary statistics (0 when undefined).
pub fn welch_t(a: &CtClassStats, b: &CtClassStats) -> f64 {
    if a.n < 2 || b.n < 2 {
        return 0.0;
    }
    let se = (a.var / a.n as f64 + b.var / b.n as f64).sqrt();
    if se == 0.0 || !se.is_finite() {
        return 0.0;
    }
    (a.mean - b.mean) / se
}

/// Count, mean and sample variance (Welford).
pub fn stats(values: impl Iterator<Item = f64>) -> CtClassStats {
    let (mut n, mut mean, mut m2) = (0u64, 0.0f64, 0.0f64);
    for x in values {
        n += 1;
        let d = x - mean;
        mean += d / n as f64;
        m2 += d * (x - mean);
    }
    CtClassStats {
        n,
        mean,
        var: if n > 1 { m2 / (n - 1) as f64 } else { 0.0 },
    }
}

/// The value at quantile `q` of sorted `v` (nearest rank below, as dudect's percentile).
fn quantile(sorted: &[u64], q: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let i = ((sorted.len() as f64) * q) as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn test(name: String, below: Option<u64>, f: CtClassStats, r: CtClassStats) -> CtTest {
    let t = welch_t(&f, &r);
    CtTest {
        name,
        below_ticks: below,
        fixed: f,
        random: r,
        t,
    }
}

/// Every test over `ticks` with `classes` (0 fixed, 1 random), in a fixed order.
pub fn tests(ticks: &[u64], classes: &[u8]) -> Vec<CtTest> {
    let of = |c: u8, limit: Option<u64>| {
        ticks
            .iter()
            .zip(classes)
            .filter(move |(t, k)| **k == c && limit.is_none_or(|l| **t < l))
            .map(|(t, _)| *t as f64)
    };
    let mut out = vec![test(
        "raw".into(),
        None,
        stats(of(0, None)),
        stats(of(1, None)),
    )];
    let mut sorted = ticks.to_vec();
    sorted.sort_unstable();
    for k in 0..CROPS {
        let q = 1.0 - 0.5f64.powf(10.0 * (k + 1) as f64 / CROPS as f64);
        let limit = quantile(&sorted, q);
        out.push(test(
            format!("crop{k}"),
            Some(limit),
            stats(of(0, Some(limit))),
            stats(of(1, Some(limit))),
        ));
    }
    let (m0, m1) = (out[0].fixed.mean, out[0].random.mean);
    let sq = |c: u8, m: f64| of(c, None).map(move |x| (x - m) * (x - m));
    out.push(test(
        "second_order".into(),
        None,
        stats(sq(0, m0)),
        stats(sq(1, m1)),
    ));
    out
}

/// The largest |t| over tests with enough timings in both classes.
pub fn max_abs_t(tests: &[CtTest]) -> f64 {
    tests
        .iter()
        .filter(|t| t.fixed.n >= CT_MIN_CLASS_N && t.random.n >= CT_MIN_CLASS_N)
        .map(|t| t.t.abs())
        .fold(0.0, f64::max)
}

/// The verdict: too few timings when no test counts, else by max |t|.
pub fn verdict(
    tests: &[CtTest],
    op: &crate::dataset::schema::Op,
) -> crate::dataset::schema::CtVerdict {
    use crate::dataset::schema::CtVerdict;
    if !tests
        .iter()
        .any(|t| t.fixed.n >= CT_MIN_CLASS_N && t.random.n >= CT_MIN_CLASS_N)
    {
        return CtVerdict::TooFewTimings;
    }
    CtVerdict::of(max_abs_t(tests), op)
}

/// Parses a dudect timings file: n little-endian u64 ticks, then n class bytes.
pub fn parse_timings(bytes: &[u8]) -> Option<(Vec<u64>, Vec<u8>)> {
    if !bytes.len().is_multiple_of(9) {
        return None;
    }
    let n = bytes.len() / 9;
    let ticks = bytes[..8 * n]
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap_or_default()))
        .collect();
    let classes = bytes[8 * n..].to_vec();
    classes.iter().all(|c| *c <= 1).then_some((ticks, classes))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `leak` only where the key is fixed and a public input varies (dec, sign); where the
    /// classes vary the seed the words say the timing depends on the seed.
    #[test]
    fn verdict_words_follow_what_the_classes_vary() {
        use crate::dataset::schema::{CtVerdict, Op};
        let words = |op: Op| [0.5, 6.0, 343.0].map(|t| CtVerdict::of(t, &op).as_str().to_string());
        for op in [Op::Dec, Op::Sign] {
            assert_eq!(words(op), ["no_leak_found", "suspicious", "leak"]);
        }
        for op in [Op::Keygen, Op::Enc, Op::Exchange] {
            assert_eq!(
                words(op),
                [
                    "no_seed_dependence_found",
                    "maybe_seed_dependent",
                    "seed_dependent"
                ]
            );
        }
    }

    #[test]
    fn welch_t_of_known_samples() {
        // Class means 2 and 5, variances 1 and 1, n 3 each: t = -3 / sqrt(2/3).
        let a = stats([1.0, 2.0, 3.0].into_iter());
        let b = stats([4.0, 5.0, 6.0].into_iter());
        assert_eq!((a.n, a.mean, a.var), (3, 2.0, 1.0));
        let t = welch_t(&a, &b);
        assert!((t - (-3.0 / (2.0f64 / 3.0).sqrt())).abs() < 1e-12);
    }

    #[test]
    fn a_shift_is_found_and_equal_classes_are_not() {
        let mut ticks = Vec::new();
        let mut classes = Vec::new();
        for i in 0..4000u64 {
            let c = (i * 7 % 3 == 0) as u8;
            classes.push(c);
            ticks.push(1000 + (i * 13 % 50) + if c == 1 { 30 } else { 0 });
        }
        assert!(max_abs_t(&tests(&ticks, &classes)) > 10.0);
        // Timings and classes from two independent generators: no relation to find.
        let lcg = |seed: u64| {
            let mut x = seed;
            move || {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                x >> 33
            }
        };
        let (mut a, mut b) = (lcg(1), lcg(99));
        let same: Vec<u64> = (0..4000).map(|_| 1000 + a() % 50).collect();
        let alt: Vec<u8> = (0..4000).map(|_| (b() & 1) as u8).collect();
        assert!(max_abs_t(&tests(&same, &alt)) < 4.5);
        let bytes: Vec<u8> = same
            .iter()
            .flat_map(|t| t.to_le_bytes())
            .chain(alt.iter().copied())
            .collect();
        assert_eq!(parse_timings(&bytes), Some((same, alt)));
    }
}
