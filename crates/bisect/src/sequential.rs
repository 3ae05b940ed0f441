//! A step's rounds, used sequentially: after each round the command asks [`StepRule::call`]
//! whether to add rounds or decide. A step looks at its interval at a few planned round
//! counts ([`StepRule::looks`], geometric from the first count that can reach the level up to
//! the step's cap); at each look it decides as soon as the interval lies wholly on one
//! side of the halfway ratio, and at the last look (the cap, or the round at which its
//! share of the budget ran out) it decides whatever the interval says, inconclusive when it
//! still straddles. Each look's interval is the paired Hodges-Lehmann interval of the
//! per-round log ratios at `1 - ALPHA / looks` (Bonferroni over the looks), so a step that
//! looks several times is wrong no more often than one 95% interval would be.
//!
//! [`Budget`] shares the whole bisect's time between the steps still expected, and
//! [`smallest_change`] says up front which change that share can place on one side.

use crate::Judgement;
use bakeoff_stats::{hodges_lehmann, t_quantile, Verdict};

/// The chance a bisect may judge any step on an interval that misses its ratio, over all
/// its steps and looks together (each step gets its share: [`StepRule::new`]).
pub const ALPHA: f64 = 0.05;

/// The most looks a step takes (each costs the interval some width).
pub const MOST_LOOKS: usize = 3;

/// Whether an interval lies past the halfway ratio (moved), before it (did not move), or
/// straddles it.
pub fn side(direction: Verdict, halfway: f64, [lo, hi]: [f64; 2]) -> Judgement {
    let past = |x: f64| {
        if direction == Verdict::Faster {
            x > halfway
        } else {
            x < halfway
        }
    };
    match (past(lo), past(hi)) {
        (true, true) => Judgement::Moved,
        (false, false) => Judgement::DidNotMove,
        _ => Judgement::Inconclusive,
    }
}

/// The fewest rounds whose exact signed-rank interval reaches `1 - alpha` (one pair on
/// each side cut off: 2 / 2^n <= alpha).
pub fn fewest_rounds(alpha: f64) -> usize {
    (1..64)
        .find(|n| 2.0 / 2f64.powi(*n as i32) <= alpha)
        .unwrap_or(64)
}

/// The round counts a step of at most `cap` rounds looks at with an error of `alpha`
/// over its looks: up to [`MOST_LOOKS`], geometric from the fewest rounds that reach
/// `1 - alpha / looks`, the last at `cap`. Empty when not even one look fits.
pub fn looks_for(cap: usize, alpha: f64) -> Vec<usize> {
    for n in (1..=MOST_LOOKS).rev() {
        let first = fewest_rounds(alpha / n as f64);
        if first > cap {
            continue;
        }
        if n == 1 {
            return vec![cap];
        }
        let growth = (cap as f64 / first as f64).powf(1.0 / (n - 1) as f64);
        let mut looks: Vec<usize> = (0..n)
            .map(|j| (first as f64 * growth.powi(j as i32)).round() as usize)
            .collect();
        looks[n - 1] = cap;
        looks.dedup();
        if looks.len() == n {
            return looks;
        }
    }
    Vec::new()
}

/// What a step should do after a round.
#[derive(Debug, Clone, PartialEq)]
pub enum Call {
    /// Add a round.
    More,
    /// Stop: the step is judged.
    Decide(Decision),
}

/// How a step was judged.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    /// Moved, did not move, or inconclusive.
    pub judgement: Judgement,
    /// The interval the step was judged by (None when too few rounds came for one).
    pub interval: Option<[f64; 2]>,
    /// That interval's confidence level (`1 - alpha / looks`).
    pub level: f64,
    /// Rounds it was judged at.
    pub rounds: usize,
}

/// The sequential rule of one step: add rounds while the interval straddles the halfway
/// ratio, up to the step's cap.
#[derive(Debug, Clone, PartialEq)]
pub struct StepRule {
    direction: Verdict,
    halfway: f64,
    alpha: f64,
    looks: Vec<usize>,
}

impl StepRule {
    /// The rule for a step of at most `cap` rounds against `halfway`, for a change in
    /// `direction` (slower: a ratio below halfway moved; faster: above), wrong at most
    /// `alpha` of the time over its looks (a bisect of k steps gives each `ALPHA / k`).
    pub fn new(direction: Verdict, halfway: f64, cap: usize, alpha: f64) -> StepRule {
        StepRule {
            direction,
            halfway,
            alpha,
            looks: looks_for(cap, alpha),
        }
    }

    /// The round counts it looks at (empty: the cap is too small to judge anything).
    pub fn looks(&self) -> &[usize] {
        &self.looks
    }

    /// The most rounds it takes (0 when it cannot judge anything).
    pub fn cap(&self) -> usize {
        self.looks.last().copied().unwrap_or(0)
    }

    /// The confidence level of each look's interval.
    pub fn level(&self) -> f64 {
        1.0 - self.alpha / self.looks.len().max(1) as f64
    }

    /// The interval of the ratio from per-round ratios (candidate over good), at
    /// [`StepRule::level`]; None when they are too few to reach it.
    pub fn interval(&self, ratios: &[f64]) -> Option<[f64; 2]> {
        let logs: Vec<f64> = ratios
            .iter()
            .filter(|r| r.is_finite() && **r > 0.0)
            .map(|r| r.ln())
            .collect();
        let alpha = 1.0 - self.level();
        let (_, (lo, hi), coverage) = hodges_lehmann(&logs, alpha)?;
        (!self.looks.is_empty() && coverage >= 1.0 - alpha - 1e-9).then(|| [lo.exp(), hi.exp()])
    }

    /// After a round, with every round's ratio so far: more rounds, or the judgement.
    /// `ended`: no more rounds will come (its share of the budget is spent), so this is
    /// its last look whatever the count.
    pub fn call(&self, ratios: &[f64], ended: bool) -> Call {
        let rounds = ratios.len();
        let last = ended || rounds >= self.cap();
        if !last && !self.looks.contains(&rounds) {
            return Call::More;
        }
        let interval = self.interval(ratios);
        let judgement = interval.map_or(Judgement::Inconclusive, |i| {
            side(self.direction, self.halfway, i)
        });
        if judgement == Judgement::Inconclusive && !last {
            return Call::More;
        }
        Call::Decide(Decision {
            judgement,
            interval,
            level: self.level(),
            rounds,
        })
    }
}

/// The whole bisect's time, shared between its steps.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Budget {
    total_s: f64,
    spent_s: f64,
}

impl Budget {
    pub fn new(total_s: f64) -> Budget {
        Budget {
            total_s,
            spent_s: 0.0,
        }
    }

    pub fn spend(&mut self, seconds: f64) {
        self.spent_s += seconds.max(0.0);
    }

    pub fn total_s(&self) -> f64 {
        self.total_s
    }

    pub fn left_s(&self) -> f64 {
        (self.total_s - self.spent_s).max(0.0)
    }

    /// The time the next step may take: what is left over the steps still expected (this
    /// one included), at least `floor_s` while that much is left. A step that decides
    /// early leaves its time to the ones after it.
    pub fn share_s(&self, steps_left: usize, floor_s: f64) -> f64 {
        let left = self.left_s();
        (left / steps_left.max(1) as f64).max(floor_s).min(left)
    }
}

/// The smallest change (relative: 0.09 for 9%) a step of at most `cap` rounds, wrong at
/// most `alpha` of the time, can place on one side of the halfway ratio, at `spread`
/// (the standard deviation of one round's log ratio): the halfway ratio sits half the
/// change's log from either end, so the change must exceed twice the half-width of the
/// last look's interval ([`half_width`]). None when no look fits.
pub fn smallest_change(spread: f64, cap: usize, alpha: f64, direction: Verdict) -> Option<f64> {
    let looks = looks_for(cap, alpha);
    let n = *looks.last()?;
    let half = spread * half_width(n, alpha / looks.len() as f64);
    Some(if direction == Verdict::Faster {
        (2.0 * half).exp() - 1.0
    } else {
        1.0 - (-2.0 * half).exp()
    })
}

/// Rounds past which [`half_width`] uses the large-sample formula.
const SIMULATED_UP_TO: usize = 60;

/// The typical half-width of the paired Hodges-Lehmann interval at `1 - alpha` over `n`
/// rounds of unit spread: past [`SIMULATED_UP_TO`] rounds z * sqrt(pi / (3 n)); below,
/// where the exact interval is much wider than that (7 rounds at 98%: the whole range of
/// the rounds), the median over 401 simulated steps of normal rounds (seeded: the same
/// every time).
pub fn half_width(n: usize, alpha: f64) -> f64 {
    if n > SIMULATED_UP_TO {
        let z = t_quantile(1.0 - alpha / 2.0, 1e9);
        return z * (std::f64::consts::PI / (3.0 * n as f64)).sqrt();
    }
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut unit = move || {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        ((state.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    };
    let mut widths: Vec<f64> = (0..401)
        .filter_map(|_| {
            let d: Vec<f64> = (0..n)
                .map(|_| {
                    let (u, v) = (unit(), unit());
                    (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
                })
                .collect();
            hodges_lehmann(&d, alpha).map(|(_, (lo, hi), _)| (hi - lo) / 2.0)
        })
        .collect();
    widths.sort_by(f64::total_cmp);
    widths
        .get(widths.len() / 2)
        .copied()
        .unwrap_or(f64::INFINITY)
}

/// Steps a range of `candidates` commits still needs (each halves it): ceil(log2).
pub fn steps_for(candidates: usize) -> usize {
    let mut steps = 0;
    while (1usize << steps) < candidates {
        steps += 1;
    }
    steps
}

#[cfg(test)]
mod tests;
