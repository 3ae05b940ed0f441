//! The Wilcoxon signed-rank test on paired differences, and the Hodges-Lehmann interval
//! that inverts it: the median of the Walsh averages (d_i + d_j) / 2, i <= j, cut at the
//! test's critical value. Exact null distribution for up to `EXACT_MAX` pairs without ties
//! or zeros; the normal approximation with tie and continuity correction otherwise.

use crate::mwu::normal_cdf;

const EXACT_MAX: usize = 60;

/// Counts of sign assignments giving W+ = 0..=n(n+1)/2 under the null hypothesis: each
/// rank r is positive or negative with probability 1/2, independently.
pub fn exact_distribution(n: usize) -> Vec<f64> {
    let mut dist = vec![1.0];
    for r in 1..=n {
        let mut next = vec![0.0; dist.len() + r];
        for (w, c) in dist.iter().enumerate() {
            next[w] += c;
            next[w + r] += c;
        }
        dist = next;
    }
    dist
}

/// P(W+ <= k) for n pairs (exact up to `EXACT_MAX`, normal otherwise).
fn lower_tail(n: usize, k: usize) -> f64 {
    if n <= EXACT_MAX {
        let dist = exact_distribution(n);
        let total: f64 = dist.iter().sum();
        dist[..=k.min(dist.len() - 1)].iter().sum::<f64>() / total
    } else {
        let (mu, sigma) = moments(n);
        normal_cdf((k as f64 + 0.5 - mu) / sigma)
    }
}

fn moments(n: usize) -> (f64, f64) {
    let n = n as f64;
    (
        n * (n + 1.0) / 4.0,
        (n * (n + 1.0) * (2.0 * n + 1.0) / 24.0).sqrt(),
    )
}

/// Two-sided p-value that the paired differences `d` are symmetric about 0. Zeros are
/// dropped (Wilcoxon's convention); fewer than one non-zero difference gives 1.
pub fn signed_rank_p(d: &[f64]) -> f64 {
    let mut nz: Vec<f64> = d
        .iter()
        .copied()
        .filter(|x| x.is_finite() && *x != 0.0)
        .collect();
    let n = nz.len();
    if n == 0 {
        return 1.0;
    }
    nz.sort_by(|a, b| a.abs().total_cmp(&b.abs()));
    // Average ranks of |d|, and the tie term sum(t^3 - t).
    let (mut w_plus, mut tie_term, mut i) = (0.0, 0.0, 0);
    while i < n {
        let mut j = i;
        while j + 1 < n && nz[j + 1].abs() == nz[i].abs() {
            j += 1;
        }
        let rank = (i + j) as f64 / 2.0 + 1.0;
        let t = (j - i + 1) as f64;
        tie_term += t * t * t - t;
        w_plus += rank * nz[i..=j].iter().filter(|x| **x > 0.0).count() as f64;
        i = j + 1;
    }
    let p = if tie_term == 0.0 && n <= EXACT_MAX {
        let w = w_plus.round() as usize;
        let max = n * (n + 1) / 2;
        2.0 * lower_tail(n, w.min(max - w))
    } else {
        let (mu, _) = moments(n);
        let nf = n as f64;
        let var = nf * (nf + 1.0) * (2.0 * nf + 1.0) / 24.0 - tie_term / 48.0;
        if var <= 0.0 {
            return 1.0;
        }
        let z = ((w_plus - mu).abs() - 0.5).max(0.0) / var.sqrt();
        2.0 * (1.0 - normal_cdf(z))
    };
    p.clamp(0.0, 1.0)
}

/// The smallest two-sided p-value `n` pairs can give: 2 / 2^n. Below 0.05 from 6 pairs on.
pub fn smallest_p(n: usize) -> f64 {
    (2.0 * 0.5f64.powi(n as i32)).min(1.0)
}

/// The largest k with P(W+ <= k - 1) <= `tail` (0 when even k = 1 is too wide).
pub fn critical_count(n: usize, tail: f64) -> usize {
    let max = n * (n + 1) / 2;
    if n > EXACT_MAX {
        let (mu, sigma) = moments(n);
        // P(W+ <= k - 1) ~ Phi((k - 0.5 - mu) / sigma) <= tail.
        let z = inverse_normal_tail(tail);
        return ((mu - z * sigma + 0.5).floor().max(0.0) as usize).min(max);
    }
    let dist = exact_distribution(n);
    let total: f64 = dist.iter().sum();
    let (mut k, mut cdf) = (0, 0.0);
    while k < max {
        cdf += dist[k] / total;
        if cdf > tail {
            break;
        }
        k += 1;
    }
    k
}

/// z with 1 - Phi(z) = tail, by bisection on `normal_cdf`.
pub(crate) fn inverse_normal_tail(tail: f64) -> f64 {
    let (mut lo, mut hi) = (0.0, 10.0);
    for _ in 0..60 {
        let mid = (lo + hi) / 2.0;
        if 1.0 - normal_cdf(mid) > tail {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    (lo + hi) / 2.0
}

/// The Hodges-Lehmann estimate of the centre of `d` (median of the Walsh averages), its
/// two-sided interval at `1 - alpha` and that interval's exact coverage. With too few
/// pairs for the level, the interval is [min, max] of the Walsh averages and the coverage
/// says how far it falls short (5 pairs: 93.75%). None for an empty input.
pub fn hodges_lehmann(d: &[f64], alpha: f64) -> Option<(f64, (f64, f64), f64)> {
    let d: Vec<f64> = d.iter().copied().filter(|x| x.is_finite()).collect();
    let n = d.len();
    if n == 0 {
        return None;
    }
    let mut walsh = Vec::with_capacity(n * (n + 1) / 2);
    for i in 0..n {
        for j in i..n {
            walsh.push((d[i] + d[j]) / 2.0);
        }
    }
    walsh.sort_by(f64::total_cmp);
    let m = walsh.len();
    let centre = if m % 2 == 1 {
        walsh[m / 2]
    } else {
        (walsh[m / 2 - 1] + walsh[m / 2]) / 2.0
    };
    let k = critical_count(n, alpha / 2.0).max(1);
    let coverage = if n == 1 {
        0.0
    } else {
        (1.0 - 2.0 * lower_tail(n, k - 1)).max(0.0)
    };
    Some((centre, (walsh[k - 1], walsh[m - k]), coverage))
}
