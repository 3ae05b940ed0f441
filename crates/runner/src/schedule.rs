//! The order of runs: every cell (workload x connections) gets one run per variant per
//! round, and within each round the variants' order is shuffled with the experiment's
//! seed, so slow drifts of a noisy machine spread over all variants instead of one.

use bakeoff_engine::rng::Rng;

/// One planned run: which variant, workload and connections, in which round.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Slot {
    pub round: usize,
    pub workload: usize,
    pub connections: usize,
    pub variant: usize,
}

/// The order of runs, one round at a time: each round runs every open point
/// (workload x connections) once per variant, the variants shuffled per point with one
/// seeded generator (the project's own, `bakeoff_engine::rng`, whose sequence is fixed), so a
/// fixed number of rounds always gives the same order, in this version and the next.
pub struct Rounds {
    rng: Rng,
}

impl Rounds {
    pub fn new(seed: u64) -> Rounds {
        Rounds {
            rng: Rng::new(seed),
        }
    }

    /// Round `round`'s runs over `points` (workload index, connections) for `variants`.
    pub fn next(
        &mut self,
        round: usize,
        points: &[(usize, usize)],
        variants: &[usize],
    ) -> Vec<Slot> {
        let mut out = Vec::with_capacity(points.len() * variants.len());
        for &(workload, connections) in points {
            let mut order = variants.to_vec();
            self.rng.shuffle(&mut order);
            out.extend(order.into_iter().map(|variant| Slot {
                round,
                workload,
                connections,
                variant,
            }));
        }
        out
    }
}

/// Whether round `round` (0-based) may start: the first always does; a later one only if
/// the time spent so far plus the next round's estimate fits in the budget. So the rounds
/// end within the budget, or past it by at most one round's misestimate (never more than
/// one round).
pub fn round_fits(round: usize, elapsed_s: f64, next_round_s: f64, budget_s: Option<f64>) -> bool {
    match budget_s {
        Some(b) => round == 0 || elapsed_s + next_round_s <= b,
        None => true,
    }
}

/// The runs of `rounds` full rounds in execution order.
pub fn plan_runs(
    rounds: usize,
    points: &[(usize, usize)],
    variants: &[usize],
    seed: u64,
) -> Vec<Slot> {
    let mut r = Rounds::new(seed);
    (0..rounds)
        .flat_map(|i| r.next(i, points, variants))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_variant_once_per_round_and_point() {
        let slots = plan_runs(4, &[(0, 1), (0, 16)], &[0, 1, 2], 7);
        assert_eq!(slots.len(), 4 * 2 * 3);
        for chunk in slots.chunks(3) {
            let mut v: Vec<_> = chunk.iter().map(|s| s.variant).collect();
            v.sort();
            assert_eq!(v, vec![0, 1, 2]);
            assert!(chunk
                .iter()
                .all(|s| s.round == chunk[0].round && s.connections == chunk[0].connections));
        }
    }

    #[test]
    fn rounds_never_overrun_the_budget_by_more_than_one_round() {
        let mut rng = Rng::new(3);
        let mut between = |lo: f64, hi: f64| lo + (hi - lo) * rng.unit();
        for _ in 0..500 {
            let budget = between(5.0, 300.0);
            let typical = between(1.0, 40.0);
            let (mut elapsed, mut longest, mut done) = (0.0f64, 0.0f64, Vec::<f64>::new());
            loop {
                // The estimate is the mean of the rounds so far (the plan's guess first);
                // each round's real length is off by up to +-40%.
                let estimate = if done.is_empty() {
                    typical
                } else {
                    done.iter().sum::<f64>() / done.len() as f64
                };
                if !round_fits(done.len(), elapsed, estimate, Some(budget)) {
                    break;
                }
                let took = typical * between(0.6, 1.4);
                elapsed += took;
                longest = longest.max(took);
                done.push(took);
            }
            assert!(
                elapsed <= budget + longest,
                "{elapsed} > {budget} + {longest}"
            );
            // And it does not stop early: the next round would not have fitted.
            assert!(
                elapsed + 1.4 * typical > budget,
                "stopped early: {elapsed} of {budget}"
            );
        }
        assert!(
            round_fits(0, 100.0, 50.0, Some(10.0)),
            "the first round always runs"
        );
        assert!(round_fits(7, 1e9, 1e9, None));
    }

    #[test]
    fn order_is_seeded_and_interleaved() {
        let a = plan_runs(6, &[(0, 16)], &[0, 1, 2], 42);
        assert_eq!(a, plan_runs(6, &[(0, 16)], &[0, 1, 2], 42));
        assert_ne!(a, plan_runs(6, &[(0, 16)], &[0, 1, 2], 43));
        // Not all of A then all of B: the first variant of each round varies.
        let firsts: std::collections::BTreeSet<_> = a.chunks(3).map(|c| c[0].variant).collect();
        assert!(
            firsts.len() > 1,
            "the shuffle never changed the first variant"
        );
    }

    #[test]
    fn a_seed_replays_the_same_order_in_every_version() {
        // Pinned: the order a plan's seed gives must not move with a dependency's update.
        let order: Vec<usize> = plan_runs(3, &[(0, 16)], &[0, 1, 2], 42)
            .iter()
            .map(|s| s.variant)
            .collect();
        assert_eq!(order, [0, 2, 1, 0, 2, 1, 2, 1, 0]);
    }
}
