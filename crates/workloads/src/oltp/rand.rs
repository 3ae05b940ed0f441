//! Row id choice over `1..=n`, as sysbench's `--rand-type` generators define it: the
//! popular ids are the low ids (sysbench does not scramble), which is what makes
//! "special" touch few pages.

use super::config::Distribution;
use crate::kv::{KeyChooser, KeyDistribution};
use bakeoff_load::rng::Rng;

/// A seeded generator of row ids in `1..=n`.
#[derive(Debug, Clone)]
pub struct RowChooser {
    n: u64,
    kind: Kind,
}

#[derive(Debug, Clone)]
enum Kind {
    Uniform,
    Gaussian {
        iter: u32,
    },
    /// Ranked draws (special and zipfian) from the kv workload's generators.
    Ranked(KeyChooser),
    Pareto {
        power: f64,
    },
}

impl RowChooser {
    pub fn new(n: u64, d: Distribution) -> RowChooser {
        let n = n.max(1);
        let kind = match d {
            Distribution::Uniform => Kind::Uniform,
            Distribution::Gaussian { iter } => Kind::Gaussian { iter: iter.max(1) },
            Distribution::Special { pct, res } => {
                Kind::Ranked(KeyChooser::new(n, KeyDistribution::Special { pct, res }))
            }
            Distribution::Zipfian { exp } => Kind::Ranked(KeyChooser::new(
                n,
                KeyDistribution::Zipfian {
                    theta: exp.clamp(0.01, 0.99),
                },
            )),
            Distribution::Pareto { h } => Kind::Pareto {
                power: h.ln() / (1.0 - h).ln(),
            },
        };
        RowChooser { n, kind }
    }

    /// One id in `1..=n`.
    #[inline]
    pub fn next(&self, rng: &mut Rng) -> u64 {
        let zero_based = match &self.kind {
            Kind::Uniform => rng.below(self.n),
            Kind::Gaussian { iter } => {
                let sum: f64 = (0..*iter).map(|_| rng.unit()).sum();
                ((sum / f64::from(*iter)) * self.n as f64) as u64
            }
            Kind::Ranked(k) => k.next_rank(rng),
            Kind::Pareto { power } => (self.n as f64 * rng.unit().powf(*power)) as u64,
        };
        zero_based.min(self.n - 1) + 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn draws(d: Distribution, n: u64, count: usize) -> Vec<u64> {
        let c = RowChooser::new(n, d);
        let mut rng = Rng::new(7);
        let mut hist = vec![0u64; n as usize + 1];
        for _ in 0..count {
            let id = c.next(&mut rng);
            assert!((1..=n).contains(&id), "{id}");
            hist[id as usize] += 1;
        }
        hist
    }

    #[test]
    fn uniform_passes_chi_square() {
        let h = draws(Distribution::Uniform, 100, 200_000);
        let e = 2000.0;
        let chi: f64 = h[1..].iter().map(|&o| (o as f64 - e).powi(2) / e).sum();
        // 99 degrees of freedom: the 99.9% point is about 149.
        assert!(chi < 149.0, "chi-square {chi}");
    }

    #[test]
    fn special_sends_75_percent_to_the_lowest_1_percent() {
        let h = draws(
            Distribution::Special {
                pct: 1.0,
                res: 75.0,
            },
            10_000,
            1_000_000,
        );
        let hot: u64 = h[1..=100].iter().sum();
        let share = hot as f64 / 1e6;
        assert!((share - 0.75).abs() < 0.01, "hot share {share}");
    }

    #[test]
    fn zipfian_rank_ratio_follows_the_exponent() {
        let h = draws(Distribution::Zipfian { exp: 0.8 }, 1000, 1_000_000);
        let ratio = h[1] as f64 / h[2] as f64;
        assert!((ratio - 2f64.powf(0.8)).abs() < 0.1, "p(1)/p(2) = {ratio}");
        assert!(h[1] > h[10] && h[10] > h[500]);
    }

    #[test]
    fn gaussian_is_centred_with_the_sum_of_uniforms_spread() {
        let n = 10_000u64;
        let c = RowChooser::new(n, Distribution::Gaussian { iter: 12 });
        let mut rng = Rng::new(3);
        let xs: Vec<f64> = (0..200_000).map(|_| c.next(&mut rng) as f64).collect();
        let mean = xs.iter().sum::<f64>() / xs.len() as f64;
        let sd = (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / xs.len() as f64).sqrt();
        // Mean of 12 uniforms: sd = sqrt(1/12/12) = 1/12 of the range.
        assert!((mean / n as f64 - 0.5).abs() < 0.005, "mean {mean}");
        assert!((sd / n as f64 - 1.0 / 12.0).abs() < 0.003, "sd {sd}");
    }

    #[test]
    fn pareto_h_02_puts_80_percent_on_the_lowest_20_percent() {
        let h = draws(Distribution::Pareto { h: 0.2 }, 1000, 500_000);
        let low: u64 = h[1..=200].iter().sum();
        let share = low as f64 / 500_000.0;
        assert!((share - 0.8).abs() < 0.01, "share {share}");
    }
}
