//! bakeoff-stats: what a set of repetitions says, and what two sets say against each other.
//!
//! - A cell's median with a distribution-free (order-statistic) 95% CI, and that interval's
//!   true coverage, which is coarse at small n (5 runs: [min, max], 93.75%).
//! - A comparison: ratio of medians, a 95% CI for the ratio from the Hodges-Lehmann
//!   construction on log values (the interval that inverts the Mann-Whitney test, so the
//!   CI and the p-value never disagree), the two-sided Mann-Whitney U p-value (exact for
//!   small samples without ties), and a verdict that is "same" unless p < 0.05 and the CI
//!   excludes 1.
//!
//! Pure functions; deterministic; non-finite inputs are ignored, never a panic.

mod mwu;

use serde::{Deserialize, Serialize};
use std::fmt;

pub use mwu::mann_whitney_u;

/// Which way is better.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Direction {
    HigherIsBetter,
    LowerIsBetter,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Faster,
    Slower,
    Same,
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Verdict::Faster => "faster",
            Verdict::Slower => "slower",
            Verdict::Same => "same",
        })
    }
}

/// A cell's repetitions, summarized.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub n: usize,
    pub median: f64,
    pub ci95: (f64, f64),
    /// The CI's actual coverage (order-statistic intervals come in steps).
    pub coverage: f64,
    pub mean: f64,
    pub stddev: f64,
    /// Coefficient of variation: stddev / mean.
    pub cv: f64,
    pub min: f64,
    pub max: f64,
}

/// A candidate against the baseline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// median(candidate) / median(baseline).
    pub ratio: f64,
    pub ci95: (f64, f64),
    /// The ratio CI's actual coverage: below 0.95 when there are too few runs for a 95%
    /// interval (e.g. 2 vs 2: 67%).
    pub ci_coverage: f64,
    pub p_value: f64,
    pub verdict: Verdict,
}

const ALPHA: f64 = 0.05;

fn finite_sorted(xs: &[f64]) -> Vec<f64> {
    let mut v: Vec<f64> = xs.iter().copied().filter(|x| x.is_finite()).collect();
    v.sort_by(f64::total_cmp);
    v
}

fn median_sorted(v: &[f64]) -> f64 {
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Binomial(n, 1/2) CDF at k.
fn binom_half_cdf(n: usize, k: usize) -> f64 {
    let mut term = 0.5f64.powi(n as i32);
    let mut sum = term;
    for i in 1..=k.min(n) {
        term *= (n + 1 - i) as f64 / i as f64;
        sum += term;
    }
    sum
}

/// Median, its order-statistic 95% CI, and spread. None when no finite value is given.
pub fn summarize(xs: &[f64]) -> Option<Summary> {
    let v = finite_sorted(xs);
    let n = v.len();
    if n == 0 {
        return None;
    }
    let mean = v.iter().sum::<f64>() / n as f64;
    let var = if n > 1 {
        v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64
    } else {
        0.0
    };
    let stddev = var.sqrt();
    // The widest-k interval [x_(k), x_(n+1-k)] (1-based) whose coverage is still >= 95%.
    let (mut k, mut coverage) = (
        1usize,
        if n > 1 {
            1.0 - 2.0 * binom_half_cdf(n, 0)
        } else {
            0.0
        },
    );
    while k < n.div_ceil(2) {
        let c = 1.0 - 2.0 * binom_half_cdf(n, k);
        if c < 0.95 {
            break;
        }
        k += 1;
        coverage = c;
    }
    Some(Summary {
        n,
        median: median_sorted(&v),
        ci95: (v[k - 1], v[n - k]),
        coverage,
        mean,
        stddev,
        cv: if mean != 0.0 {
            stddev / mean.abs()
        } else {
            0.0
        },
        min: v[0],
        max: v[n - 1],
    })
}

/// The CI's half-width relative to the median.
pub fn rel_half_width(s: &Summary) -> f64 {
    if s.median == 0.0 {
        return f64::INFINITY;
    }
    (s.ci95.1 - s.ci95.0) / 2.0 / s.median.abs()
}

/// Whether a cell's CI is already as tight as `target_rel_half_width` (stopping rule).
pub fn precise_enough(xs: &[f64], target_rel_half_width: f64) -> bool {
    summarize(xs).is_some_and(|s| s.n >= 2 && rel_half_width(&s) <= target_rel_half_width)
}

/// Compares `candidate` with `baseline`. None when either side is empty or the baseline's
/// median is not positive.
pub fn compare(
    baseline: &[f64],
    candidate: &[f64],
    direction: Direction,
    _seed: u64,
) -> Option<Comparison> {
    let b = finite_sorted(baseline);
    let c = finite_sorted(candidate);
    if b.is_empty() || c.is_empty() {
        return None;
    }
    let (mb, mc) = (median_sorted(&b), median_sorted(&c));
    if mb <= 0.0 {
        return None;
    }
    let ratio = mc / mb;
    if b.len() < 2 || c.len() < 2 {
        return Some(Comparison {
            ratio,
            ci95: (ratio, ratio),
            ci_coverage: 0.0,
            p_value: 1.0,
            verdict: Verdict::Same,
        });
    }
    let p_value = mann_whitney_u(&b, &c);
    let (ci95, ci_coverage) = ratio_ci(&b, &c, mb);
    let significant = p_value < ALPHA && (ci95.0 > 1.0 || ci95.1 < 1.0);
    let better = match direction {
        Direction::HigherIsBetter => ratio > 1.0,
        Direction::LowerIsBetter => ratio < 1.0,
    };
    let verdict = match (significant, better) {
        (false, _) => Verdict::Same,
        (true, true) => Verdict::Faster,
        (true, false) => Verdict::Slower,
    };
    Some(Comparison {
        ratio,
        ci95,
        ci_coverage,
        p_value,
        verdict,
    })
}

/// Hodges-Lehmann interval for the shift of log values (a ratio), from all pairwise
/// differences, cut at the Mann-Whitney critical value. Non-positive data fall back to
/// raw differences relative to the baseline median.
fn ratio_ci(b: &[f64], c: &[f64], mb: f64) -> ((f64, f64), f64) {
    let logs = b.iter().chain(c).all(|x| *x > 0.0);
    let mut d: Vec<f64> = Vec::with_capacity(b.len() * c.len());
    for x in b {
        for y in c {
            d.push(if logs { y.ln() - x.ln() } else { y - x });
        }
    }
    d.sort_by(f64::total_cmp);
    let k = mwu::critical_count(b.len(), c.len(), ALPHA / 2.0).max(1);
    let coverage = mwu::interval_coverage(b.len(), c.len(), k);
    let (lo, hi) = (d[k - 1], d[d.len() - k]);
    let ci = if logs {
        (lo.exp(), hi.exp())
    } else {
        (1.0 + lo / mb, 1.0 + hi / mb)
    };
    (ci, coverage)
}

#[cfg(test)]
mod tests;
