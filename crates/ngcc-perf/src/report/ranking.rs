//! Statistical ranks for the ordered pages. A figure is estimated from its record's trials
//! (each trial is its own process, so the per-trial means are independent samples); two
//! neighbours in the order are distinguishable when Welch's t-test on those samples rejects
//! equal means at α = 0.05 after Holm's correction over all adjacent pairs of the group.
//! Neighbours that are not distinguishable share a rank (`2–4`): the ranks are the runs of
//! the order between distinguishable pairs. A point value alone would read a 2 % difference
//! on a noisy record as a ranking; this does not.

use statrs::distribution::{ContinuousCDF, StudentsT};

/// Significance level of every test on the ordered pages.
pub const ALPHA: f64 = 0.05;

/// A figure with what its trials say about its noise.
#[derive(Clone, Debug, PartialEq)]
pub struct Estimate {
    /// Mean of the per-trial means (for a sum: the sum of the parts' means).
    pub mean: f64,
    /// Squared standard error of `mean`; infinite with fewer than two trials (one trial
    /// says nothing about noise, so such a figure is never distinguishable).
    pub se2: f64,
    /// Degrees of freedom (Welch–Satterthwaite for sums); 0 with fewer than two trials.
    pub df: f64,
    /// Trials of the smallest part.
    pub trials: usize,
}

impl Estimate {
    /// From one record's per-trial means (per call, in the figure's unit).
    pub fn from_trials(values: &[f64]) -> Option<Estimate> {
        let n = values.len();
        if n == 0 || values.iter().any(|v| !v.is_finite()) {
            return None;
        }
        let mean = values.iter().sum::<f64>() / n as f64;
        if n < 2 {
            return Some(Estimate {
                mean,
                se2: f64::INFINITY,
                df: 0.0,
                trials: n,
            });
        }
        let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        Some(Estimate {
            mean,
            se2: var / n as f64,
            df: (n - 1) as f64,
            trials: n,
        })
    }

    /// The sum of independent figures (KEM keygen + enc + dec, SIG sign + verify): means and
    /// squared standard errors add; the degrees of freedom are Welch–Satterthwaite's.
    pub fn sum(parts: &[Estimate]) -> Option<Estimate> {
        if parts.is_empty() {
            return None;
        }
        let mean = parts.iter().map(|p| p.mean).sum();
        let se2: f64 = parts.iter().map(|p| p.se2).sum();
        let trials = parts.iter().map(|p| p.trials).min().unwrap_or(0);
        let df = if !se2.is_finite() {
            0.0
        } else {
            satterthwaite(se2, parts.iter().map(|p| (p.se2, p.df)))
        };
        Some(Estimate {
            mean,
            se2,
            df,
            trials,
        })
    }

    /// The estimate divided by a constant (cycles per byte from cycles per call).
    pub fn scaled(&self, factor: f64) -> Estimate {
        Estimate {
            mean: self.mean * factor,
            se2: self.se2 * factor * factor,
            ..self.clone()
        }
    }

    /// The 95 % interval of the mean (Student's t); `None` with fewer than two trials. A
    /// cost is never negative: a wide interval of a noisy record is cut at 0.
    pub fn ci95(&self) -> Option<(f64, f64)> {
        if !self.se2.is_finite() || self.df <= 0.0 {
            return None;
        }
        let half = t_975(self.df) * self.se2.sqrt();
        Some(((self.mean - half).max(0.0), self.mean + half))
    }
}

/// Welch–Satterthwaite degrees of freedom of a sum of independent means.
fn satterthwaite(se2: f64, parts: impl Iterator<Item = (f64, f64)>) -> f64 {
    let den: f64 = parts
        .filter(|(s, _)| *s > 0.0)
        .map(|(s, df)| s * s / df)
        .sum();
    if den > 0.0 { se2 * se2 / den } else { 0.0 }
}

/// The 0.975 quantile of Student's t with `df` degrees of freedom.
fn t_975(df: f64) -> f64 {
    StudentsT::new(0.0, 1.0, df)
        .map(|t| t.inverse_cdf(0.975))
        .unwrap_or(f64::INFINITY)
}

/// Two-sided p-value of Welch's t-test for equal means. Figures without a noise estimate
/// give 1 (never distinguishable); two noiseless figures give 0 if they differ.
pub fn welch_p(a: &Estimate, b: &Estimate) -> f64 {
    let se2 = a.se2 + b.se2;
    if !se2.is_finite() {
        return 1.0;
    }
    if se2 == 0.0 {
        return if a.mean == b.mean { 1.0 } else { 0.0 };
    }
    let t = (a.mean - b.mean).abs() / se2.sqrt();
    let df = satterthwaite(se2, [(a.se2, a.df), (b.se2, b.df)].into_iter());
    if df <= 0.0 {
        return 1.0;
    }
    match StudentsT::new(0.0, 1.0, df) {
        Ok(dist) => (2.0 * (1.0 - dist.cdf(t))).clamp(0.0, 1.0),
        Err(_) => 1.0,
    }
}

/// Holm's step-down correction: which of `p` are rejected at family-wise level `ALPHA`.
pub fn holm(p: &[f64]) -> Vec<bool> {
    let m = p.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&i, &j| p[i].total_cmp(&p[j]).then(i.cmp(&j)));
    let mut rejected = vec![false; m];
    for (k, &i) in order.iter().enumerate() {
        if p[i] <= ALPHA / (m - k) as f64 {
            rejected[i] = true;
        } else {
            break;
        }
    }
    rejected
}

/// The ranks of figures already in ascending order of their means.
#[derive(Clone, Debug, PartialEq)]
pub struct Ranks {
    /// Per figure, its rank span `(first, last)`, 1-based; equal when the rank is its own.
    pub spans: Vec<(usize, usize)>,
    /// Per adjacent pair `(i, i + 1)`: Welch's p-value, and whether Holm rejects it.
    pub p: Vec<f64>,
    pub distinguishable: Vec<bool>,
}

impl Ranks {
    pub fn distinguishable_pairs(&self) -> usize {
        self.distinguishable.iter().filter(|d| **d).count()
    }
}

/// Ranks of `sorted` (ascending means): runs between distinguishable neighbours share one
/// rank span.
pub fn rank(sorted: &[Estimate]) -> Ranks {
    let p: Vec<f64> = sorted.windows(2).map(|w| welch_p(&w[0], &w[1])).collect();
    let distinguishable = holm(&p);
    let mut spans = vec![(0, 0); sorted.len()];
    let mut start = 0;
    for i in 0..sorted.len() {
        let ends_run = i + 1 == sorted.len() || distinguishable[i];
        if ends_run {
            for s in &mut spans[start..=i] {
                *s = (start + 1, i + 1);
            }
            start = i + 1;
        }
    }
    Ranks {
        spans,
        p,
        distinguishable,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn est(v: &[f64]) -> Estimate {
        Estimate::from_trials(v).unwrap()
    }

    #[test]
    fn welch_against_a_worked_example() {
        // Two samples of five: means 10 and 12, variances 1 and 4 (by hand: t = 2/√1 = 2,
        // df = 1/((0.04/4)+(0.64/4)) = 5.882…, two-sided p ≈ 0.0935).
        let a = est(&[9.0, 10.0, 11.0, 9.0, 11.0]);
        assert!((a.se2 - 0.2).abs() < 1e-12);
        let b = est(&[10.0, 12.0, 14.0, 10.0, 14.0]);
        assert!((b.se2 - 0.8).abs() < 1e-12);
        let p = welch_p(&a, &b);
        assert!((p - 0.0935).abs() < 0.001, "{p}");
        let (lo, hi) = a.ci95().unwrap();
        // t(4, 0.975) = 2.776; half width 2.776 · √0.2 = 1.2415.
        assert!((hi - lo - 2.0 * 1.2415).abs() < 1e-3, "{lo} {hi}");
        assert_eq!(est(&[3.0]).ci95(), None);
        assert_eq!(est(&[0.1, 10.0]).ci95().unwrap().0, 0.0);
        assert_eq!(welch_p(&est(&[3.0]), &est(&[9.0, 9.1])), 1.0);
    }

    #[test]
    fn holm_steps_down_and_stops() {
        // m = 3: 0.01 ≤ 0.05/3, 0.02 ≤ 0.05/2, 0.04 ≤ 0.05/1.
        assert_eq!(holm(&[0.04, 0.01, 0.02]), [true, true, true]);
        // 0.03 > 0.05/2 stops the procedure: 0.04 is not rejected either.
        assert_eq!(holm(&[0.01, 0.03, 0.04]), [true, false, false]);
        assert!(holm(&[]).is_empty());
    }

    #[test]
    fn neighbours_within_noise_share_a_rank() {
        let tight = |m: f64| est(&[m - 0.1, m, m + 0.1, m - 0.05, m + 0.05]);
        let noisy = |m: f64| est(&[m - 5.0, m + 5.0, m, m - 3.0, m + 3.0]);
        // 10 < 20 ≈ 20.5 (noisy) < 40.
        let r = rank(&[tight(10.0), noisy(20.0), noisy(20.5), tight(40.0)]);
        assert_eq!(r.spans, [(1, 1), (2, 3), (2, 3), (4, 4)]);
        assert_eq!(r.distinguishable, [true, false, true]);
        assert_eq!(r.distinguishable_pairs(), 2);
        assert_eq!(rank(&[tight(5.0)]).spans, [(1, 1)]);
    }

    #[test]
    fn sums_add_means_and_errors() {
        let a = est(&[1.0, 2.0, 3.0]);
        let b = est(&[10.0, 10.0, 10.0]);
        let s = Estimate::sum(&[a.clone(), b]).unwrap();
        assert_eq!(s.mean, 12.0);
        assert_eq!(s.se2, a.se2);
        assert_eq!(s.df, 2.0);
        let c = a.scaled(0.5);
        assert_eq!((c.mean, c.se2), (1.0, a.se2 * 0.25));
    }
}
