//! What a paired comparison's interval will be before the rounds are run: the relative
//! half-width of the Hodges-Lehmann interval at n rounds for per-round log ratios of
//! spread sigma, and the rounds that bring it to a target.
//!
//! Asymptotically, under normal noise of standard deviation sigma, the Hodges-Lehmann
//! estimate has variance pi sigma^2 / (3n) (its efficiency against the mean is 3/pi), and
//! the signed-rank interval that inverts the test is that estimate plus or minus
//! z_{1-a/2} of its standard error: a log half-width of z sigma sqrt(pi / (3n)). At the
//! round counts an experiment runs (6 to a few dozen) that is too narrow, for two reasons
//! the prediction corrects:
//!
//! - Discreteness: the exact interval cuts the Walsh averages at the signed-rank critical
//!   count k (`signed_rank::critical_count`), chosen so the coverage is at least the
//!   level. The k-th Walsh average lies (n(n+1)/4 - k + 1/2) / sd(W+) standard errors from
//!   the centre, which replaces z (and is larger where the exact coverage overshoots).
//! - Scale unknown: a rank interval estimates its scale from the same rounds, as Student's
//!   t does, so at small n it is wider by about t_{n-1, 1-a/2} / z_{1-a/2}.
//!
//! Simulated with normal noise (this crate's tests), the median half-width is within a
//! few percent of the corrected prediction from 8 rounds on (6 rounds: about 10% wider,
//! where the interval is the range of the rounds), where the uncorrected one is 10% too
//! narrow at 10 rounds and 50% at 6. The log half-width h is reported as a ratio's
//! relative half-width, sinh(h), as `Comparison::detectable` measures it.

use crate::nested::t_quantile;
use crate::signed_rank::{critical_count, inverse_normal_tail};

/// The most rounds a forecast names; beyond this, [`rounds_to_reach`] says None.
const MOST_ROUNDS: usize = 100_000_000;

/// A spread and a level a forecast can be made for.
fn usable(sigma: f64, level: f64) -> bool {
    sigma.is_finite() && sigma >= 0.0 && level > 0.0 && level < 1.0
}

/// The fewest rounds whose exact signed-rank interval reaches `level` (0.95: 6 rounds;
/// 0.983: 7). Fewer cannot give an interval at that level at all.
pub fn fewest_rounds(level: f64) -> usize {
    let tail = (1.0 - level.clamp(0.0, 1.0)) / 2.0;
    (1..64)
        .find(|&n| critical_count(n, tail) >= 1)
        .unwrap_or(64)
}

/// The relative half-width of the paired Hodges-Lehmann interval at `level` after
/// `rounds` rounds whose log ratios have standard deviation `sigma`, under normal noise
/// (see the module's comment). Infinite where `rounds` is below [`fewest_rounds`] or
/// sigma is not a finite non-negative number.
pub fn predicted_half_width(sigma: f64, rounds: usize, level: f64) -> f64 {
    if !usable(sigma, level) || rounds < fewest_rounds(level) {
        return f64::INFINITY;
    }
    let tail = (1.0 - level) / 2.0;
    let n = rounds as f64;
    let k = critical_count(rounds, tail).max(1) as f64;
    let mean_w = n * (n + 1.0) / 4.0;
    let sd_w = (n * (n + 1.0) * (2.0 * n + 1.0) / 24.0).sqrt();
    let z_exact = (mean_w - k + 0.5) / sd_w;
    let z = inverse_normal_tail(tail);
    let student = t_quantile(1.0 - tail, n - 1.0) / z;
    let log_half = z_exact * student * sigma * (std::f64::consts::PI / (3.0 * n)).sqrt();
    log_half.sinh()
}

/// The fewest rounds at which [`predicted_half_width`] is at most `target` (a relative
/// half-width, 0.01 for +-1%). None for a target that is not positive, a sigma that is not
/// finite, or more than a hundred million rounds.
pub fn rounds_to_reach(sigma: f64, target: f64, level: f64) -> Option<usize> {
    if !usable(sigma, level) || target.is_nan() || target <= 0.0 {
        return None;
    }
    let reaches = |n: usize| predicted_half_width(sigma, n, level) <= target;
    let mut lo = fewest_rounds(level);
    if reaches(lo) {
        return Some(lo);
    }
    // The half-width falls about as 1/sqrt(n): double until it reaches, then bisect.
    let mut hi = lo * 2;
    while !reaches(hi) {
        if hi >= MOST_ROUNDS {
            return None;
        }
        lo = hi;
        hi = (hi * 2).min(MOST_ROUNDS);
    }
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if reaches(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Some(hi)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hodges_lehmann;
    use bakeoff_engine::rng::Rng;

    fn normal(rng: &mut Rng) -> f64 {
        // Box-Muller.
        let (u1, u2) = (1.0 - rng.unit(), rng.unit());
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    }

    fn median(mut v: Vec<f64>) -> f64 {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    }

    /// The median relative half-width of the Hodges-Lehmann interval over the first `n`
    /// rounds of every simulated experiment: the Walsh averages cut at the exact
    /// critical count, found once per n (the first experiment's interval is checked
    /// against `hodges_lehmann` itself).
    fn simulated_half_width(experiments: &[Vec<f64>], n: usize, level: f64) -> f64 {
        let k = critical_count(n, (1.0 - level) / 2.0).max(1);
        let interval = |d: &[f64]| {
            let mut walsh = Vec::with_capacity(n * (n + 1) / 2);
            for i in 0..n {
                for j in i..n {
                    walsh.push((d[i] + d[j]) / 2.0);
                }
            }
            // Order statistics by selection: the same values a sort gives, faster.
            let m = walsh.len();
            let mut at = |i: usize| *walsh.select_nth_unstable_by(i, f64::total_cmp).1;
            let centre = (at((m - 1) / 2) + at(m / 2)) / 2.0;
            (centre, (at(k - 1), at(m - k)))
        };
        let (c, ci, _) = hodges_lehmann(&experiments[0][..n], 1.0 - level).unwrap();
        assert_eq!((c, ci), interval(&experiments[0][..n]));
        median(
            experiments
                .iter()
                .map(|d| {
                    let (c, (lo, hi)) = interval(&d[..n]);
                    (hi.exp() - lo.exp()) / 2.0 / c.exp()
                })
                .collect(),
        )
    }

    #[test]
    fn predicted_rounds_match_a_simulation_within_30_percent() {
        // (sigma of the per-round log ratios, target half-width, level).
        let cases = [
            (0.03, 0.02, 0.95),
            (0.05, 0.02, 0.95),
            (0.10, 0.03, 0.95),
            (0.06, 0.03, 0.983),
            (0.02, 0.006, 0.95),
        ];
        let mut rng = Rng::new(2030);
        for (sigma, target, level) in cases {
            let predicted = rounds_to_reach(sigma, target, level).unwrap();
            // The same experiments at every n (common random numbers), so the median
            // half-width falls steadily with n and a bisection finds where it crosses.
            let most = 2 * predicted;
            let experiments: Vec<Vec<f64>> = (0..101)
                .map(|_| (0..most).map(|_| 0.01 + sigma * normal(&mut rng)).collect())
                .collect();
            let (mut lo, mut hi) = (fewest_rounds(level).max(predicted / 2), most);
            assert!(
                simulated_half_width(&experiments, hi, level) <= target,
                "{sigma} {target}: not reached at {hi} rounds"
            );
            if simulated_half_width(&experiments, lo, level) <= target {
                hi = lo;
            }
            while hi - lo > 1 {
                let mid = (lo + hi) / 2;
                if simulated_half_width(&experiments, mid, level) <= target {
                    hi = mid;
                } else {
                    lo = mid;
                }
            }
            let off = (predicted as f64 - hi as f64).abs() / hi as f64;
            eprintln!("sigma {sigma} target {target} level {level}: predicted {predicted} rounds, simulated {hi} ({:.0}% off)", off * 100.0);
            assert!(
                off <= 0.30,
                "sigma {sigma}, target {target}, level {level}: predicted {predicted} rounds, the simulation needs {hi}"
            );
        }
    }

    #[test]
    fn large_n_is_the_asymptotic_formula() {
        let (sigma, n) = (0.05, 20_000);
        let z = 1.959_964;
        let asymptotic = z * sigma * (std::f64::consts::PI / (3.0 * n as f64)).sqrt();
        let got = predicted_half_width(sigma, n, 0.95);
        assert!(
            (got / asymptotic - 1.0).abs() < 0.005,
            "{got} vs {asymptotic}"
        );
    }

    #[test]
    fn edges_and_shape() {
        assert_eq!(fewest_rounds(0.95), 6);
        assert_eq!(fewest_rounds(0.983), 7);
        assert!(predicted_half_width(0.05, 5, 0.95).is_infinite());
        assert!(predicted_half_width(f64::NAN, 20, 0.95).is_infinite());
        assert_eq!(predicted_half_width(0.0, 20, 0.95), 0.0);
        assert_eq!(rounds_to_reach(0.0, 0.01, 0.95), Some(6));
        assert_eq!(rounds_to_reach(0.05, 0.0, 0.95), None);
        assert_eq!(rounds_to_reach(0.05, f64::NAN, 0.95), None);
        assert_eq!(rounds_to_reach(f64::INFINITY, 0.01, 0.95), None);
        assert_eq!(rounds_to_reach(10.0, 1e-9, 0.95), None);
        // Wider at a stricter level, narrower with more rounds; four times the rounds
        // about halve it.
        let hw = |n| predicted_half_width(0.05, n, 0.95);
        assert!(predicted_half_width(0.05, 30, 0.983) > hw(30));
        assert!(hw(12) > hw(13) && hw(100) > hw(101));
        assert!((hw(400) / hw(1600) - 2.0).abs() < 0.01);
        // The rounds found are the fewest that reach the target.
        let n = rounds_to_reach(0.08, 0.01, 0.95).unwrap();
        assert!(hw(n) <= 0.01 || predicted_half_width(0.08, n, 0.95) <= 0.01);
        assert!(predicted_half_width(0.08, n - 1, 0.95) > 0.01);
    }
}
