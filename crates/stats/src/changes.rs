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

/// The split of `x` with the largest energy statistic, and that statistic.
fn best_split(x: &[f64]) -> Option<(usize, f64)> {
    let n = x.len();
    if n < 2 * MIN_SEGMENT {
        return None;
    }
    (MIN_SEGMENT..=n - MIN_SEGMENT)
        .map(|tau| (tau, energy(&x[..tau], &x[tau..])))
        .max_by(|a, b| a.1.total_cmp(&b.1))
}

/// The scaled energy distance between two samples: (nm / (n + m)) * (2 E|X - Y| - E|X -
/// X'| - E|Y - Y'|).
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
