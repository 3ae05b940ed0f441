//! What each choice is worth: the main effect of every factor's level against the
//! factor's reference level (its first choice), from the candidates measured on
//! throughput. A linear model on log throughput: each candidate contributes the mean of
//! its per-round log ratios over the baseline, fitted by least squares with an intercept
//! and one indicator per non-reference level; an effect's variance is the sum of the
//! candidates' own sampling variances weighted by the fit (so candidates raced for fewer
//! rounds count with their own, wider, spread), with Student's t at Welch-Satterthwaite
//! degrees of freedom. Shared baseline runs make the candidates' means positively
//! correlated, which the contrasts cancel: the interval errs on the wide side. Where a
//! factor's effect differs between the other factors' levels (an interaction), the
//! estimate is the average over the candidates measured.

use crate::entry::Entry;
use crate::stat::t_quantile;
use serde::{Deserialize, Serialize};

/// One level's effect against its factor's reference level.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Effect {
    pub factor: String,
    pub level: String,
    pub reference: String,
    /// Throughput with this level over the reference level's, all else equal.
    pub ratio: f64,
    /// Its two-sided interval at `level_of_confidence`.
    pub interval: [f64; 2],
    pub confidence: f64,
    /// Candidates at this level that the estimate drew on.
    pub candidates: usize,
}

/// The effects of every level of every factor with more than one level, from the
/// entries with at least two throughput rounds. Levels no measured candidate has, and
/// factors the measured candidates confound, are left out.
pub fn estimate(
    entries: &[Entry],
    factors: &[(&str, Vec<String>)],
    confidence: f64,
) -> Vec<Effect> {
    let used: Vec<&Entry> = entries.iter().filter(|e| e.throughput.len() >= 2).collect();
    // Columns: the intercept, then (factor, level) for each non-reference level present.
    let mut columns: Vec<(&str, &str, &str)> = Vec::new();
    for (f, levels) in factors {
        for level in levels.iter().skip(1) {
            if used.iter().any(|e| &e.recipe.level(f) == level) {
                columns.push((f, level, &levels[0]));
            }
        }
    }
    let p = columns.len() + 1;
    if used.len() < p {
        return Vec::new();
    }
    let x: Vec<Vec<f64>> = used
        .iter()
        .map(|e| {
            let mut row = vec![1.0];
            row.extend(
                columns
                    .iter()
                    .map(|(f, l, _)| f64::from(u8::from(&e.recipe.level(f) == l))),
            );
            row
        })
        .collect();
    let stats: Vec<(f64, f64, f64)> = used.iter().map(|e| mean_var(&e.throughput)).collect();
    let Some(inv) = invert(&gram(&x)) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (j, (f, level, reference)) in columns.iter().enumerate() {
        let j = j + 1;
        // Row j of (X'X)^-1 X': the weights of the candidates' means in beta_j.
        let a: Vec<f64> = x
            .iter()
            .map(|row| (0..p).map(|k| inv[j][k] * row[k]).sum())
            .collect();
        let beta: f64 = a.iter().zip(&stats).map(|(a, s)| a * s.0).sum();
        let var: f64 = a.iter().zip(&stats).map(|(a, s)| a * a * s.1).sum();
        let denom: f64 = a
            .iter()
            .zip(&stats)
            .map(|(a, s)| (a * a * s.1).powi(2) / s.2)
            .sum();
        let df = if denom > 0.0 {
            (var * var / denom).max(1.0)
        } else {
            1.0
        };
        let h = t_quantile(1.0 - (1.0 - confidence) / 2.0, df) * var.sqrt();
        out.push(Effect {
            factor: f.to_string(),
            level: level.to_string(),
            reference: reference.to_string(),
            ratio: beta.exp(),
            interval: [(beta - h).exp(), (beta + h).exp()],
            confidence,
            candidates: used.iter().filter(|e| &e.recipe.level(f) == level).count(),
        });
    }
    out
}

/// Mean, variance of the mean, and degrees of freedom of a candidate's log ratios.
fn mean_var(xs: &[(usize, f64)]) -> (f64, f64, f64) {
    let n = xs.len() as f64;
    let m = xs.iter().map(|x| x.1).sum::<f64>() / n;
    let s2 = xs.iter().map(|x| (x.1 - m).powi(2)).sum::<f64>() / (n - 1.0);
    (m, s2 / n, n - 1.0)
}

fn gram(x: &[Vec<f64>]) -> Vec<Vec<f64>> {
    let p = x[0].len();
    (0..p)
        .map(|i| {
            (0..p)
                .map(|j| x.iter().map(|r| r[i] * r[j]).sum())
                .collect()
        })
        .collect()
}

/// Gauss-Jordan with partial pivoting; None when singular.
fn invert(m: &[Vec<f64>]) -> Option<Vec<Vec<f64>>> {
    let n = m.len();
    let mut a: Vec<Vec<f64>> = m
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let mut row = r.clone();
            row.extend((0..n).map(|j| f64::from(u8::from(i == j))));
            row
        })
        .collect();
    for c in 0..n {
        let pivot = (c..n).max_by(|&i, &j| a[i][c].abs().total_cmp(&a[j][c].abs()))?;
        if a[pivot][c].abs() < 1e-9 {
            return None;
        }
        a.swap(c, pivot);
        let d = a[c][c];
        a[c].iter_mut().for_each(|v| *v /= d);
        for r in 0..n {
            if r != c {
                let k = a[r][c];
                if k != 0.0 {
                    let pivot_row = a[c].clone();
                    a[r].iter_mut()
                        .zip(&pivot_row)
                        .for_each(|(v, p)| *v -= k * p);
                }
            }
        }
    }
    Some(a.into_iter().map(|r| r[n..].to_vec()).collect())
}
