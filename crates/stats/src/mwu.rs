//! The Mann-Whitney U test: exact null distribution for small samples without ties
//! (n, m <= 20), normal approximation with tie and continuity correction otherwise.

const EXACT_MAX: usize = 20;

/// Two-sided p-value that `a` and `b` come from the same distribution.
pub fn mann_whitney_u(a: &[f64], b: &[f64]) -> f64 {
    let a: Vec<f64> = a.iter().copied().filter(|x| x.is_finite()).collect();
    let b: Vec<f64> = b.iter().copied().filter(|x| x.is_finite()).collect();
    let (n1, n2) = (a.len(), b.len());
    if n1 == 0 || n2 == 0 {
        return 1.0;
    }
    let (u, tie_term) = u_statistic(&a, &b);
    let p = if tie_term == 0.0 && n1 <= EXACT_MAX && n2 <= EXACT_MAX {
        let dist = exact_distribution(n1, n2);
        let total: f64 = dist.iter().sum();
        let u = u.round() as usize;
        let lower: f64 = dist[..=u].iter().sum::<f64>() / total;
        let upper: f64 = dist[u..].iter().sum::<f64>() / total;
        2.0 * lower.min(upper)
    } else {
        let n = (n1 + n2) as f64;
        let mu = (n1 * n2) as f64 / 2.0;
        let var = (n1 * n2) as f64 / 12.0 * ((n + 1.0) - tie_term / (n * (n - 1.0)));
        if var <= 0.0 {
            return 1.0;
        }
        let z = ((u - mu).abs() - 0.5).max(0.0) / var.sqrt();
        2.0 * (1.0 - normal_cdf(z))
    };
    p.clamp(0.0, 1.0)
}

/// U for `a` (pairs where a's value ranks above b's, ties counting half) and the tie
/// correction term sum(t^3 - t).
fn u_statistic(a: &[f64], b: &[f64]) -> (f64, f64) {
    let mut all: Vec<(f64, bool)> = a
        .iter()
        .map(|x| (*x, true))
        .chain(b.iter().map(|x| (*x, false)))
        .collect();
    all.sort_by(|x, y| x.0.total_cmp(&y.0));
    let (mut rank_sum_a, mut tie_term, mut i) = (0.0, 0.0, 0);
    while i < all.len() {
        let mut j = i;
        while j + 1 < all.len() && all[j + 1].0 == all[i].0 {
            j += 1;
        }
        let avg_rank = (i + j) as f64 / 2.0 + 1.0;
        let t = (j - i + 1) as f64;
        tie_term += t * t * t - t;
        rank_sum_a += avg_rank * all[i..=j].iter().filter(|x| x.1).count() as f64;
        i = j + 1;
    }
    let n1 = a.len() as f64;
    (rank_sum_a - n1 * (n1 + 1.0) / 2.0, tie_term)
}

/// Counts of arrangements giving U = 0..=n1*n2 under the null hypothesis.
fn exact_distribution(n1: usize, n2: usize) -> Vec<f64> {
    // f[i][j] is the distribution for sizes (i, j), built up from smaller sizes:
    // the largest value belongs to the first sample (adds j to U) or to the second.
    let mut prev: Vec<Vec<f64>> = (0..=n2).map(|_| vec![1.0]).collect();
    for i in 1..=n1 {
        let mut cur: Vec<Vec<f64>> = Vec::with_capacity(n2 + 1);
        cur.push(vec![1.0]);
        for j in 1..=n2 {
            let mut d = vec![0.0; i * j + 1];
            for (u, c) in prev[j].iter().enumerate() {
                d[u + j] += c;
            }
            for (u, c) in cur[j - 1].iter().enumerate() {
                d[u] += c;
            }
            cur.push(d);
        }
        prev = cur;
    }
    prev.pop().unwrap_or_else(|| vec![1.0])
}

/// The largest k with P(U <= k - 1) <= `tail` (at least 0): the Hodges-Lehmann interval
/// is [d_(k), d_(N+1-k)] over the N = n1*n2 sorted pairwise differences.
pub fn critical_count(n1: usize, n2: usize, tail: f64) -> usize {
    if n1 <= EXACT_MAX && n2 <= EXACT_MAX {
        let dist = exact_distribution(n1, n2);
        let total: f64 = dist.iter().sum();
        let mut cdf = 0.0;
        for (u, c) in dist.iter().enumerate() {
            cdf += c / total;
            if cdf > tail {
                return u;
            }
        }
        return 0;
    }
    let mu = (n1 * n2) as f64 / 2.0;
    let sigma = ((n1 * n2 * (n1 + n2 + 1)) as f64 / 12.0).sqrt();
    (mu - 1.959_964 * sigma).floor().max(0.0) as usize
}

/// Standard normal CDF (Abramowitz-Stegun 7.1.26 erf, error < 1.5e-7).
pub fn normal_cdf(z: f64) -> f64 {
    let x = z.abs() / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.327_591_1 * x);
    let poly = t
        * (0.254_829_592
            + t * (-0.284_496_736
                + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    let erf = 1.0 - poly * (-x * x).exp();
    if z >= 0.0 {
        0.5 * (1.0 + erf)
    } else {
        0.5 * (1.0 - erf)
    }
}

/// The coverage of the Hodges-Lehmann interval cut at `k` (exact for small samples,
/// normal approximation otherwise): 1 - 2 P(U <= k - 1).
pub fn interval_coverage(n1: usize, n2: usize, k: usize) -> f64 {
    if k == 0 {
        return 1.0;
    }
    let tail = if n1 <= EXACT_MAX && n2 <= EXACT_MAX {
        let dist = exact_distribution(n1, n2);
        let total: f64 = dist.iter().sum();
        dist[..k.min(dist.len())].iter().sum::<f64>() / total
    } else {
        let mu = (n1 * n2) as f64 / 2.0;
        let sigma = ((n1 * n2 * (n1 + n2 + 1)) as f64 / 12.0).sqrt();
        normal_cdf((k as f64 - 0.5 - mu) / sigma)
    };
    (1.0 - 2.0 * tail).max(0.0)
}
