//! False-discovery-rate control over an experiment's comparisons (Benjamini-Hochberg
//! 1995): with m tests, the i-th smallest p-value is adjusted to min over j >= i of
//! m p_(j) / j, capped at 1. Calling a comparison significant when its adjusted p is
//! below alpha keeps the expected share of false discoveries among all discoveries at or
//! below alpha, for independent or positively dependent tests.

/// BH-adjusted p-values, in the input's order. Non-finite inputs count as 1.
pub fn benjamini_hochberg(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let clean: Vec<f64> = p
        .iter()
        .map(|x| {
            if x.is_finite() {
                x.clamp(0.0, 1.0)
            } else {
                1.0
            }
        })
        .collect();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|a, b| clean[*a].total_cmp(&clean[*b]));
    let mut adjusted = vec![1.0; m];
    let mut running = 1.0f64;
    for rank in (0..m).rev() {
        let i = order[rank];
        running = running.min(clean[i] * m as f64 / (rank + 1) as f64);
        adjusted[i] = running.min(1.0);
    }
    adjusted
}
