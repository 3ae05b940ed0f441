//! Change points in a series (a figure over an experiment's recorded runs): where the level
//! shifted. E-divisive means (Matteson and James 2014, as Hunter and Apache Otava use it):
//! the split that maximizes the energy distance between the two sides, accepted when a
//! permutation test puts its p-value below alpha (the stated false-alarm rate per test),
//! then the same on each side (binary segmentation), stopping at the first split that is
//! not significant. Seeded: the same series always gives the same answer.

use serde::{Deserialize, Serialize};

/// A shift: the series' level changes between `index - 1` and `index`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChangePoint {
    /// The first point after the shift.
    pub index: usize,
    /// The permutation test's p-value for this split.
    pub p: f64,
    /// Medians of the segment before and after.
    pub before: f64,
    pub after: f64,
}

/// Fewest points on each side of a split.
const MIN_SEGMENT: usize = 3;

/// Change points of `xs` (non-finite values are skipped, indices refer to `xs`), each
/// significant at `alpha` by `permutations` seeded permutations.
pub fn change_points(xs: &[f64], alpha: f64, permutations: usize, seed: u64) -> Vec<ChangePoint> {
    let idx: Vec<usize> = (0..xs.len()).filter(|i| xs[*i].is_finite()).collect();
    let vals: Vec<f64> = idx.iter().map(|i| xs[*i]).collect();
    let mut rng = seed | 1;
    let mut found = Vec::new();
    let mut todo = vec![(0, vals.len())];
    while let Some((lo, hi)) = todo.pop() {
        let seg = &vals[lo..hi];
        let Some((tau, q)) = best_split(seg) else {
            continue;
        };
        let mut shuffled = seg.to_vec();
        let mut at_least = 0usize;
        for _ in 0..permutations {
            shuffle(&mut shuffled, &mut rng);
            if best_split(&shuffled).is_some_and(|(_, qp)| qp >= q) {
                at_least += 1;
            }
        }
        let p = (at_least + 1) as f64 / (permutations + 1) as f64;
        if p >= alpha {
            continue;
        }
        found.push(ChangePoint {
            index: idx[lo + tau],
            p,
            before: median(&seg[..tau]),
            after: median(&seg[tau..]),
        });
        todo.push((lo, lo + tau));
        todo.push((lo + tau, hi));
    }
    found.sort_by_key(|c| c.index);
    found
}

/// The split of `x` with the largest energy statistic, and that statistic (the last such
/// split where several tie). Every split's statistic from running sums of the pairwise
/// distances, updated as the split moves right one point at a time: O(n^2) per series
/// where computing each split's [`energy`] afresh is O(n^3) (the site's trend pages run
/// it over every name's history with 199 permutations each).
fn best_split(x: &[f64]) -> Option<(usize, f64)> {
    let n = x.len();
    if n < 2 * MIN_SEGMENT {
        return None;
    }
    // Each point's distances to every point.
    let row: Vec<f64> = x
        .iter()
        .map(|a| x.iter().map(|b| (a - b).abs()).sum())
        .collect();
    // Sums over ordered pairs: within the left side, across, within the right side;
    // the left side starts empty.
    let (mut within_a, mut across, mut within_b) = (0.0, 0.0, row.iter().sum::<f64>());
    let mut best: Option<(usize, f64)> = None;
    for k in 0..n - MIN_SEGMENT {
        // Point k moves from the right side to the left.
        let to_left: f64 = x[..k].iter().map(|a| (a - x[k]).abs()).sum();
        let to_right = row[k] - to_left;
        within_a += 2.0 * to_left;
        across += to_right - to_left;
        within_b -= 2.0 * to_right;
        let tau = k + 1;
        if tau < MIN_SEGMENT {
            continue;
        }
        let (na, nb) = (tau as f64, (n - tau) as f64);
        let q = na * nb / (na + nb)
            * (2.0 * across / (na * nb) - within_a / (na * na) - within_b.max(0.0) / (nb * nb));
        if best.is_none_or(|(_, b)| q >= b) {
            best = Some((tau, q));
        }
    }
    best
}

/// The scaled energy distance between two samples (what [`best_split`] computes for every
/// split at once; kept as the definition its test checks against): (nm / (n + m)) * (2 E|X - Y| - E|X -
/// X'| - E|Y - Y'|).
#[cfg(test)]
fn energy(a: &[f64], b: &[f64]) -> f64 {
    let mean_abs = |u: &[f64], v: &[f64]| {
        let mut s = 0.0;
        for x in u {
            for y in v {
                s += (x - y).abs();
            }
        }
        s / (u.len() * v.len()) as f64
    };
    let (n, m) = (a.len() as f64, b.len() as f64);
    n * m / (n + m) * (2.0 * mean_abs(a, b) - mean_abs(a, a) - mean_abs(b, b))
}

fn shuffle(v: &mut [f64], rng: &mut u64) {
    for i in (1..v.len()).rev() {
        *rng ^= *rng << 13;
        *rng ^= *rng >> 7;
        *rng ^= *rng << 17;
        let j = (*rng % (i as u64 + 1)) as usize;
        v.swap(i, j);
    }
}

fn median(x: &[f64]) -> f64 {
    let mut v = x.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        f64::NAN
    } else if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

#[cfg(test)]
mod split_tests {
    use super::*;

    /// The running sums give every split's energy as computing it afresh does.
    #[test]
    fn best_split_is_the_split_of_largest_energy() {
        let mut rng = 7u64;
        for n in [6, 7, 10, 31, 100] {
            let mut x: Vec<f64> = (0..n)
                .map(|i| {
                    rng ^= rng << 13;
                    rng ^= rng >> 7;
                    rng ^= rng << 17;
                    let level = if i * 3 > n { 1.1e5 } else { 1.0e5 };
                    level + (rng % 5000) as f64
                })
                .collect();
            for _ in 0..3 {
                let (tau, q) = best_split(&x).unwrap();
                let fresh: Vec<f64> = (MIN_SEGMENT..=n - MIN_SEGMENT)
                    .map(|t| energy(&x[..t], &x[t..]))
                    .collect();
                let top = fresh.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                assert!(
                    (q - top).abs() <= 1e-9 * top.abs().max(1.0),
                    "n {n}: {q} vs {top}"
                );
                let at = fresh[tau - MIN_SEGMENT];
                assert!(
                    (at - top).abs() <= 1e-9 * top.abs().max(1.0),
                    "n {n}: split {tau}"
                );
                shuffle(&mut x, &mut rng);
            }
        }
        assert!(best_split(&[1.0; 5]).is_none());
    }
}
