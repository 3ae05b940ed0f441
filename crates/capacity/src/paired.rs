//! Capacities compared in paired rounds: the study behind `[[workload]] slo` when every
//! variant of a point is searched together (a [`Study`] of bakeoff-study; the runner runs
//! its probes).
//!
//! - **A shared bracket.** From the anchor (the geometric mean of the variants' closed-loop
//!   peaks) every variant is probed at the same rates, `anchor x 2^j`, going down while a
//!   variant has passed nothing and up while one has failed nothing, one trial a rate.
//!   The window of the rounds spans the variants' brackets with a margin of [`MARGIN`] on
//!   each side.
//! - **Rounds of equal cost.** A round bisects the window `K` times for every variant,
//!   one trial a probe, `K` the fewest halvings that make a cell at most the precision
//!   wide. The cells' edges move by a fresh random share of a cell every round (a
//!   dither) and are the same for every variant within the round, so a capacity's
//!   position inside its cell is a random error, unbiased and independent between
//!   rounds, instead of a fixed offset that every round repeats. At step `k` of a round
//!   each variant gets its `k`-th probe, in a shuffled order: while the variants'
//!   answers agree they are probed at the same rate (each such rate a pair, run back to
//!   back), and where they part, the rates part too.
//! - **What a round gives.** Per variant the cell its bisection ended in ([`Placed`]):
//!   the lower edge is the highest rate it passed (or the window's floor), the upper the
//!   lowest it failed (or the window's ceiling). The rounds are independent replicates
//!   paired by index: the runner compares their per-round log ratios (Student's t over
//!   the rounds, df = rounds - 1). A round that ends at the window's edge widens the
//!   window for the next rounds.
//! - **The budget, planned.** A round costs `K x variants` trials; before each round the
//!   study starts it only when that many trials at the observed seconds per trial (the
//!   larger of the mean so far and the last round's) fit in what is left; a round that
//!   would end more than [`SLACK`] past the budget (the machine slowed down mid-round)
//!   is dropped where it stands. Rounds also end at `max_rounds` or when the caller's
//!   `enough` says the comparisons are precise.

use crate::{Limit, Stop, Trial};
use bakeoff_study::Study;

/// The window's margin beyond the variants' brackets, each side (a factor).
pub const MARGIN: f64 = 1.25;
/// How far past the budget a round in progress may be expected to end before it is
/// dropped (a share of the budget).
pub const SLACK: f64 = 0.05;
/// The fewest and most probes a round gives each variant.
pub const MIN_PROBES: u32 = 2;
pub const MAX_PROBES: u32 = 8;

/// The window a bracket usually gives: one doubling between a pass and a fail, with the
/// margin on each side (for forecasts).
pub const TYPICAL_WINDOW: f64 = 2.0 * MARGIN * MARGIN;
/// The bracket's trials per variant when the capacity lies within a doubling of the
/// anchor: the anchor, then one step down or up (for forecasts).
pub const TYPICAL_BRACKET: usize = 2;

/// The probes per variant that make a round's cells at most `precision` wide over a
/// window whose upper edge is `ratio` times its lower.
pub fn probes_for(ratio: f64, precision: f64) -> u32 {
    let cells = ratio.max(1.0).ln() / (1.0 + precision.max(1e-3)).ln();
    let mut k = MIN_PROBES;
    while k < MAX_PROBES && ((1u64 << k) as f64) - 1.0 < cells {
        k += 1;
    }
    k
}

/// One trial the study asks for: `variant` at `rate` ops/s, in `round` (None: the
/// bracket).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Probe {
    pub round: Option<usize>,
    pub variant: usize,
    pub rate: f64,
}

/// What a probe's trial measured, and the seconds it took (the trial and everything
/// around it since the previous one: what the budget is spent on).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Measured {
    pub trial: Trial,
    pub seconds: f64,
}

/// Where one round placed one variant's capacity: in `[lower, upper)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Placed {
    pub lower: f64,
    pub upper: f64,
    /// `Floor` when every probe failed (the lower edge was never passed), `Ceiling` when
    /// every probe passed (the upper edge was never failed); None inside the window.
    pub edge: Option<Stop>,
    pub probes: u32,
}

/// What the study is asked.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Plan {
    pub limit: Limit,
    pub variants: usize,
    /// Where the bracket starts, ops/s.
    pub anchor: f64,
    /// The lowest and highest rates the bracket may offer, ops/s (it offers `anchor x
    /// 2^j` between them).
    pub floor: f64,
    pub ceiling: f64,
    /// The widest a round's cell may be, relative (`upper / lower - 1`).
    pub precision: f64,
    /// Seconds the study may spend; None: rounds until `max_rounds` or `enough`.
    pub budget_s: Option<f64>,
    pub max_rounds: usize,
    /// Rounds before `enough` is asked (at least 2).
    pub min_rounds: usize,
    pub seed: u64,
}

/// What the study found.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// Per round, per variant.
    pub rounds: Vec<Vec<Placed>>,
    /// Per variant, the bracket's highest passing and lowest failing rate, and its
    /// trials.
    pub bracket: Vec<(Option<f64>, Option<f64>)>,
    pub bracket_trials: Vec<usize>,
    /// Why the rounds ended: `Precision` (`enough`), `Budget`, `Rounds` (`max_rounds`),
    /// `Floor`/`Ceiling` (the bracket found no passing or no failing rate for a
    /// variant between the plan's floor and ceiling).
    pub stop: Stop,
    /// The rounds that fit the budget when the first began (None without a budget).
    pub planned_rounds: Option<usize>,
    pub trials: usize,
    pub spent_s: f64,
}

/// A variant's bracket so far: the exponents `j` it passed and failed.
#[derive(Debug, Clone, Default)]
struct Bracket {
    passed: Vec<i32>,
    failed: Vec<i32>,
}

impl Bracket {
    /// The highest passing rate below the lowest failing one (else the lowest pass),
    /// and the lowest failing one, as exponents.
    fn bounds(&self) -> (Option<i32>, Option<i32>) {
        let hi = self.failed.iter().copied().min();
        let below = self
            .passed
            .iter()
            .copied()
            .filter(|j| hi.is_none_or(|h| *j < h))
            .max();
        (below.or_else(|| self.passed.iter().copied().min()), hi)
    }
}

/// The round in progress.
#[derive(Debug, Clone)]
struct Round {
    /// The window's lower edge this round (log ops/s, dithered) and a cell's width.
    base: f64,
    cell: f64,
    probes: u32,
    /// Probes handed out so far, per variant.
    step: u32,
    /// Per variant, the cells [a, b) its capacity lies in so far.
    cells: Vec<(u32, u32)>,
}

/// The caller's stopping rule over the rounds so far (per round, per variant).
type Enough<'a> = Box<dyn Fn(&[Vec<Placed>]) -> bool + 'a>;

/// The study: see the module's comment.
pub struct Paired<'a> {
    plan: Plan,
    enough: Enough<'a>,
    rng: u64,
    /// Seconds of each trial, in order.
    seconds: Vec<f64>,
    brackets: Vec<Bracket>,
    /// The bracket's exponent being probed, and the lowest and highest tried.
    at: i32,
    tried: Option<(i32, i32)>,
    /// The rounds' window (log ops/s), once the bracket is done.
    window: Option<(f64, f64)>,
    round: Option<Round>,
    rounds: Vec<Vec<Placed>>,
    planned: Option<usize>,
    stop: Option<Stop>,
}

impl<'a> Paired<'a> {
    /// A study of `plan`; `enough` is asked after each round from `min_rounds` on.
    pub fn new(plan: Plan, enough: impl Fn(&[Vec<Placed>]) -> bool + 'a) -> Paired<'a> {
        let anchor = if plan.anchor.is_finite() && plan.anchor > 0.0 {
            plan.anchor
        } else {
            1.0
        };
        Paired {
            plan: Plan {
                anchor,
                variants: plan.variants.max(1),
                min_rounds: plan.min_rounds.max(2),
                ..plan
            },
            enough: Box::new(enough),
            rng: plan.seed ^ 0x7061_6972_6564,
            seconds: Vec::new(),
            brackets: vec![Bracket::default(); plan.variants.max(1)],
            at: 0,
            tried: None,
            window: None,
            round: None,
            rounds: Vec::new(),
            planned: None,
            stop: None,
        }
    }

    /// The rounds finished so far.
    pub fn rounds(&self) -> &[Vec<Placed>] {
        &self.rounds
    }

    /// Seconds spent so far.
    pub fn spent_s(&self) -> f64 {
        self.seconds.iter().sum()
    }

    /// splitmix64: the dither and the order of each step.
    fn draw(&mut self) -> u64 {
        self.rng = self.rng.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.rng;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn uniform(&mut self) -> f64 {
        (self.draw() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// `variants` in a shuffled order (Fisher-Yates).
    fn shuffled(&mut self, mut variants: Vec<usize>) -> Vec<usize> {
        for i in (1..variants.len()).rev() {
            let j = (self.draw() % (i as u64 + 1)) as usize;
            variants.swap(i, j);
        }
        variants
    }

    /// Seconds a trial is expected to take: the larger of the mean so far and the mean
    /// of the last round's worth of trials (a machine that slows down is seen at once).
    fn per_trial_s(&self) -> f64 {
        let n = self.seconds.len();
        if n == 0 {
            return 0.0;
        }
        let mean = self.seconds.iter().sum::<f64>() / n as f64;
        let last = self.round_probes() as usize * self.plan.variants;
        let recent = &self.seconds[n.saturating_sub(last.max(1))..];
        mean.max(recent.iter().sum::<f64>() / recent.len() as f64)
    }

    /// Probes per variant in a round over the current window.
    fn round_probes(&self) -> u32 {
        let Some((lo, hi)) = self.window else {
            return MIN_PROBES;
        };
        probes_for((hi - lo).exp(), self.plan.precision)
    }

    fn rate(&self, j: i32) -> f64 {
        self.plan.anchor * 2f64.powi(j)
    }

    /// The bracket's lowest and highest exponents: its rates within floor and ceiling.
    fn j_range(&self) -> (i32, i32) {
        let j = |x: f64| (x / self.plan.anchor).log2();
        let lo = if self.plan.floor > 0.0 {
            j(self.plan.floor).ceil() as i32
        } else {
            -10
        };
        let hi = if self.plan.ceiling.is_finite() && self.plan.ceiling > 0.0 {
            j(self.plan.ceiling).floor() as i32
        } else {
            2
        };
        (lo.min(0), hi.max(0))
    }

    /// The bracket's next rate and the variants it is for, or what ends the bracket.
    fn next_bracket(&mut self) -> Result<Vec<Probe>, Option<Stop>> {
        let (low, high) = match self.tried {
            None => {
                self.at = 0;
                return Ok(self.bracket_probes((0..self.plan.variants).collect()));
            }
            Some(t) => t,
        };
        let down: Vec<usize> = (0..self.plan.variants)
            .filter(|&v| self.brackets[v].passed.is_empty())
            .collect();
        let up: Vec<usize> = (0..self.plan.variants)
            .filter(|&v| self.brackets[v].failed.is_empty())
            .collect();
        let (j_min, j_max) = self.j_range();
        if !down.is_empty() {
            if low - 1 < j_min {
                return Err(Some(Stop::Floor));
            }
            self.at = low - 1;
            return Ok(self.bracket_probes(down));
        }
        if !up.is_empty() {
            if high + 1 > j_max {
                return Err(Some(Stop::Ceiling));
            }
            self.at = high + 1;
            return Ok(self.bracket_probes(up));
        }
        Err(None)
    }

    fn bracket_probes(&mut self, variants: Vec<usize>) -> Vec<Probe> {
        let rate = self.rate(self.at);
        self.shuffled(variants)
            .into_iter()
            .map(|variant| Probe {
                round: None,
                variant,
                rate,
            })
            .collect()
    }

    /// The window from the variants' brackets, with the margin.
    fn window_from_brackets(&self) -> (f64, f64) {
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        for b in &self.brackets {
            let (p, f) = b.bounds();
            if let Some(p) = p {
                lo = lo.min(self.rate(p).ln());
            }
            if let Some(f) = f {
                hi = hi.max(self.rate(f).ln());
            }
        }
        let m = MARGIN.ln();
        let (lo, hi) = (lo - m, hi + m);
        (lo, hi.max(lo + 2f64.ln()))
    }

    /// Starts the next round, or says why there is none.
    fn begin_round(&mut self) -> Result<(), Stop> {
        let done = self.rounds.len();
        if done >= self.plan.max_rounds {
            return Err(Stop::Rounds);
        }
        if done >= self.plan.min_rounds && (self.enough)(&self.rounds) {
            return Err(Stop::Precision);
        }
        let probes = self.round_probes();
        let cost = probes as f64 * self.plan.variants as f64 * self.per_trial_s();
        if let Some(budget) = self.plan.budget_s {
            let left = budget - self.spent_s();
            if self.planned.is_none() {
                let fit = if cost > 0.0 {
                    (left / cost).floor().max(0.0) as usize
                } else {
                    self.plan.max_rounds
                };
                self.planned = Some(fit.min(self.plan.max_rounds));
            }
            if cost > left {
                return Err(Stop::Budget);
            }
        }
        let (lo, hi) = self.window.expect("the bracket set the window");
        let cell = (hi - lo) / (((1u64 << probes) - 1) as f64);
        let base = lo - self.uniform() * cell;
        self.round = Some(Round {
            base,
            cell,
            probes,
            step: 0,
            cells: vec![(0, 1 << probes); self.plan.variants],
        });
        Ok(())
    }

    /// Closes the round in progress: each variant's cell, the window widened where a
    /// variant ended at its edge.
    fn end_round(&mut self, round: Round) {
        let top = (1u32 << round.probes) - 1;
        let placed: Vec<Placed> = round
            .cells
            .iter()
            .map(|&(a, _)| Placed {
                lower: (round.base + a as f64 * round.cell).exp(),
                upper: (round.base + (a + 1) as f64 * round.cell).exp(),
                edge: if a == 0 {
                    Some(Stop::Floor)
                } else if a == top {
                    Some(Stop::Ceiling)
                } else {
                    None
                },
                probes: round.probes,
            })
            .collect();
        let (j_min, j_max) = self.j_range();
        let floor = self.plan.anchor.ln() + j_min as f64 * 2f64.ln();
        let ceiling = self.plan.anchor.ln() + j_max as f64 * 2f64.ln() + MARGIN.ln();
        if let Some((lo, hi)) = self.window.as_mut() {
            if placed.iter().any(|p| p.edge == Some(Stop::Floor)) {
                *lo = (*lo - 2f64.ln()).max(floor);
            }
            if placed.iter().any(|p| p.edge == Some(Stop::Ceiling)) {
                *hi = (*hi + 2f64.ln()).min(ceiling.max(*lo + 2f64.ln()));
            }
        }
        self.rounds.push(placed);
    }

    fn next_round_step(&mut self) -> Result<Vec<Probe>, Stop> {
        if self.round.as_ref().is_some_and(|r| r.step >= r.probes) {
            let round = self.round.take().expect("a round in progress");
            self.end_round(round);
        }
        if self.round.is_none() {
            self.begin_round()?;
        }
        let variants = self.plan.variants;
        let per_trial = self.per_trial_s();
        let round = self.round.as_ref().expect("a round in progress");
        if let Some(budget) = self.plan.budget_s {
            let left_trials = (round.probes - round.step) as f64 * variants as f64;
            if self.spent_s() + left_trials * per_trial > budget * (1.0 + SLACK) {
                self.round = None;
                return Err(Stop::Budget);
            }
        }
        let index = self.rounds.len();
        let order = self.shuffled((0..variants).collect());
        let round = self.round.as_mut().expect("a round in progress");
        round.step += 1;
        Ok(order
            .into_iter()
            .map(|variant| {
                let (a, b) = round.cells[variant];
                let m = (a + b) / 2;
                Probe {
                    round: Some(index),
                    variant,
                    rate: (round.base + m as f64 * round.cell).exp(),
                }
            })
            .collect())
    }
}

impl Study for Paired<'_> {
    type Step = Probe;
    type Outcome = Measured;
    type Answer = Answer;

    fn next(&mut self) -> Vec<Probe> {
        if self.stop.is_some() {
            return Vec::new();
        }
        if self.window.is_none() {
            let over = self.plan.budget_s.is_some_and(|b| {
                self.spent_s() + self.plan.variants as f64 * self.per_trial_s() > b * (1.0 + SLACK)
            });
            if over {
                self.stop = Some(Stop::Budget);
                return Vec::new();
            }
            match self.next_bracket() {
                Ok(probes) => return probes,
                Err(Some(stop)) => {
                    self.stop = Some(stop);
                    return Vec::new();
                }
                Err(None) => self.window = Some(self.window_from_brackets()),
            }
        }
        match self.next_round_step() {
            Ok(probes) => probes,
            Err(stop) => {
                self.stop = Some(stop);
                Vec::new()
            }
        }
    }

    fn record(&mut self, probe: &Probe, measured: Measured) {
        self.seconds.push(measured.seconds.max(0.0));
        let pass = self.plan.limit.passes(&measured.trial);
        let Some(v) = (probe.variant < self.plan.variants).then_some(probe.variant) else {
            return;
        };
        match (probe.round, self.round.as_mut()) {
            (None, _) => {
                let b = &mut self.brackets[v];
                if pass {
                    b.passed.push(self.at);
                } else {
                    b.failed.push(self.at);
                }
                let (lo, hi) = self.tried.unwrap_or((self.at, self.at));
                self.tried = Some((lo.min(self.at), hi.max(self.at)));
            }
            (Some(_), Some(round)) => {
                let (a, b) = &mut round.cells[v];
                let m = (*a + *b) / 2;
                if pass {
                    *a = m;
                } else {
                    *b = m;
                }
            }
            (Some(_), None) => {}
        }
    }

    fn answer(self) -> Answer {
        let bracket = self
            .brackets
            .iter()
            .map(|b| {
                let (p, f) = b.bounds();
                (p.map(|j| self.rate(j)), f.map(|j| self.rate(j)))
            })
            .collect();
        Answer {
            rounds: self.rounds.clone(),
            bracket,
            bracket_trials: self
                .brackets
                .iter()
                .map(|b| b.passed.len() + b.failed.len())
                .collect(),
            stop: self.stop.unwrap_or(Stop::Budget),
            planned_rounds: self.planned,
            trials: self.seconds.len(),
            spent_s: self.spent_s(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bakeoff_study::drive;

    fn plan(variants: usize, budget_s: Option<f64>) -> Plan {
        Plan {
            limit: Limit::new(1000.0),
            variants,
            anchor: 1000.0,
            floor: 1000.0 / 1024.0,
            ceiling: 4000.0,
            precision: 0.05,
            budget_s,
            max_rounds: 30,
            min_rounds: 2,
            seed: 3,
        }
    }

    /// A quiet server of `capacity` ops/s: passes at or below it, a trial `seconds` long.
    fn quiet(p: &Probe, capacities: &[f64], seconds: f64) -> Measured {
        let pass = p.rate <= capacities[p.variant];
        Measured {
            trial: Trial {
                offered: p.rate,
                achieved: p.rate,
                latency_us: if pass { 100.0 } else { 5000.0 },
                valid: true,
            },
            seconds,
        }
    }

    #[test]
    fn identical_variants_are_probed_at_the_same_rates_and_placed_in_the_same_cell() {
        let mut ran: Vec<Probe> = Vec::new();
        let mut runs = |p: &Probe| -> Result<Measured, ()> {
            ran.push(*p);
            Ok(quiet(p, &[1700.0, 1700.0], 1.0))
        };
        let answer = drive(Paired::new(plan(2, None), |_| false), &mut runs).unwrap();
        assert_eq!(answer.stop, Stop::Rounds);
        assert_eq!(answer.rounds.len(), 30);
        // Every step is a pair: both variants at one rate, back to back.
        for pair in ran.chunks(2) {
            assert_eq!(pair[0].rate, pair[1].rate, "{pair:?}");
            assert_ne!(pair[0].variant, pair[1].variant);
        }
        for round in &answer.rounds {
            assert_eq!(round[0], round[1]);
            let p = round[0];
            assert!(p.lower <= 1700.0 && 1700.0 < p.upper, "{p:?}");
            assert!(p.upper / p.lower - 1.0 <= 0.05 + 1e-9, "{p:?}");
        }
        // The dither: the cells' edges differ from round to round.
        assert_ne!(answer.rounds[0][0].lower, answer.rounds[1][0].lower);
    }

    #[test]
    fn the_bracket_goes_down_and_up_from_the_anchor_and_spans_both_variants() {
        let mut ran: Vec<Probe> = Vec::new();
        let mut runs = |p: &Probe| -> Result<Measured, ()> {
            ran.push(*p);
            Ok(quiet(p, &[3000.0, 300.0], 1.0))
        };
        let mut p = plan(2, None);
        p.max_rounds = 3;
        let answer = drive(Paired::new(p, |_| false), &mut runs).unwrap();
        assert_eq!(
            answer.bracket,
            vec![(Some(2000.0), Some(4000.0)), (Some(250.0), Some(500.0))]
        );
        let bracket: Vec<f64> = ran
            .iter()
            .filter(|p| p.round.is_none())
            .map(|p| p.rate)
            .collect();
        // The anchor for both, then down for the one that failed it, then up.
        assert_eq!(&bracket[..2], &[1000.0, 1000.0]);
        for round in &answer.rounds {
            assert!(round[0].lower <= 3000.0 && 3000.0 < round[0].upper);
            assert!(round[1].lower <= 300.0 && 300.0 < round[1].upper);
            assert!(round.iter().all(|p| p.edge.is_none()));
        }
    }

    #[test]
    fn rounds_are_planned_to_the_budget_and_a_slowed_round_is_dropped() {
        // 1 s trials, 2 variants, 240 s: the study plans its rounds up front and keeps
        // the budget.
        let mut runs = |p: &Probe| -> Result<Measured, ()> { Ok(quiet(p, &[1700.0, 1500.0], 1.0)) };
        let answer = drive(Paired::new(plan(2, Some(240.0)), |_| false), &mut runs).unwrap();
        assert_eq!(answer.stop, Stop::Budget);
        assert!(answer.spent_s <= 240.0, "{answer:?}");
        assert_eq!(Some(answer.rounds.len()), answer.planned_rounds);
        // Trials that take three times as long from the 60th on: the round then in
        // progress is dropped once it would end past the budget's slack, and no other
        // begins.
        let mut n = 0;
        let mut runs = |p: &Probe| -> Result<Measured, ()> {
            n += 1;
            Ok(quiet(p, &[1700.0, 1500.0], if n >= 60 { 3.0 } else { 1.0 }))
        };
        let answer = drive(Paired::new(plan(2, Some(100.0)), |_| false), &mut runs).unwrap();
        assert_eq!(answer.stop, Stop::Budget);
        assert!(answer.spent_s <= 100.0 * (1.0 + SLACK) + 3.0, "{answer:?}");
        // No round fits at all: the bracket is what the study has.
        let mut runs = |p: &Probe| -> Result<Measured, ()> { Ok(quiet(p, &[1700.0, 1500.0], 1.0)) };
        let answer = drive(Paired::new(plan(2, Some(8.0)), |_| false), &mut runs).unwrap();
        assert!(
            answer.rounds.is_empty() && answer.stop == Stop::Budget,
            "{answer:?}"
        );
        assert_eq!(answer.bracket[0], (Some(1000.0), Some(2000.0)));
    }

    #[test]
    fn enough_ends_the_rounds_and_a_capacity_beyond_the_bracket_ends_the_study() {
        let mut runs = |p: &Probe| -> Result<Measured, ()> { Ok(quiet(p, &[1700.0], 1.0)) };
        let answer = drive(Paired::new(plan(1, None), |r| r.len() >= 4), &mut runs).unwrap();
        assert_eq!((answer.stop, answer.rounds.len()), (Stop::Precision, 4));
        let mut runs = |p: &Probe| -> Result<Measured, ()> { Ok(quiet(p, &[1e9], 1.0)) };
        let answer = drive(Paired::new(plan(1, None), |_| false), &mut runs).unwrap();
        assert_eq!(answer.stop, Stop::Ceiling);
        let mut runs = |p: &Probe| -> Result<Measured, ()> { Ok(quiet(p, &[1e-3], 1.0)) };
        let answer = drive(Paired::new(plan(1, None), |_| false), &mut runs).unwrap();
        assert_eq!(
            (answer.stop, answer.bracket[0]),
            (Stop::Floor, (None, Some(1000.0 / 1024.0)))
        );
    }
}
