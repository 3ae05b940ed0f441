//! The intervals the race and the effects use: Student's t on per-round log ratios.

use std::cell::RefCell;
use std::collections::HashMap;

thread_local! {
    static QUANTILES: RefCell<HashMap<(u64, u64), f64>> = RefCell::new(HashMap::new());
}

/// Student's t quantile, remembered: the race asks the same few many times.
pub fn t_quantile(q: f64, df: f64) -> f64 {
    QUANTILES.with(|m| {
        *m.borrow_mut()
            .entry((q.to_bits(), df.to_bits()))
            .or_insert_with(|| bakeoff_stats::t_quantile(q, df))
    })
}

/// Mean of the samples' values and its two-sided `1 - alpha` t interval; None below two
/// samples.
pub fn mean_interval(xs: &[(usize, f64)], alpha: f64) -> Option<(f64, f64, f64)> {
    let v: Vec<f64> = xs.iter().map(|x| x.1).collect();
    t_of(&v, alpha)
}

/// The mean of `a - b` over the rounds both were measured in, with its two-sided
/// `1 - alpha` t interval (paired by round); None below two shared rounds.
pub fn paired(a: &[(usize, f64)], b: &[(usize, f64)], alpha: f64) -> Option<(f64, f64, f64)> {
    let d: Vec<f64> = a
        .iter()
        .filter_map(|&(r, x)| b.iter().find(|y| y.0 == r).map(|y| x - y.1))
        .collect();
    t_of(&d, alpha)
}

fn t_of(v: &[f64], alpha: f64) -> Option<(f64, f64, f64)> {
    if v.len() < 2 {
        return None;
    }
    let n = v.len() as f64;
    let m = v.iter().sum::<f64>() / n;
    let var = v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1.0);
    let h = t_quantile(1.0 - alpha / 2.0, n - 1.0) * (var / n).sqrt();
    Some((m, m - h, m + h))
}
