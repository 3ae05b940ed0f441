//! bakeoff-stats: what a set of repetitions says, and what two sets say against each other.
//!
//! - A cell's median with a distribution-free (order-statistic) 95% CI, and that interval's
//!   true coverage, which is coarse at small n (5 runs: [min, max], 93.75%).
//! - A comparison of a candidate with the baseline, **paired** by round when the rounds
//!   allow it (the Hodges-Lehmann estimate of the per-round log ratios, its CI from the
//!   Wilcoxon signed-rank test and that test's p-value) and **unpaired** otherwise (ratio of
//!   medians, the Hodges-Lehmann CI of all pairwise log differences, the Mann-Whitney U
//!   p-value). In both, the CI inverts the test, so they never disagree.
//! - Benjamini-Hochberg adjustment over all comparisons of an experiment, then one of four
//!   answers: faster, slower, equivalent (the whole CI inside +-equivalence) or
//!   inconclusive (neither), with the difference the CI could still hide and the rounds
//!   that would reach a target precision.
//! - Forecasts before the rounds are run: the paired interval's half-width at n rounds of
//!   a given spread, and the rounds a target half-width needs (`forecast.rs`).
//!
//! Pure functions; deterministic; non-finite inputs are ignored, never a panic.

mod changes;
mod family;
mod fdr;
mod forecast;
mod hiding;
mod mwu;
mod nested;
mod signed_rank;

use serde::{Deserialize, Serialize};
use std::fmt;

pub use changes::{change_points, ChangePoint};
pub use family::{decide_family, Family, Holds, Member, Sample};
pub use fdr::benjamini_hochberg;
pub use forecast::{fewest_rounds, predicted_half_width, rounds_to_reach};
pub use hiding::Hiding;
pub use mwu::mann_whitney_u;
pub use nested::{
    compare_layouts, layout_spread, t_interval, t_quantile, t_two_sided_p, variance_components,
    LayoutSpread,
};
pub use signed_rank::{hodges_lehmann, signed_rank_p, smallest_p};

/// Which way is better.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Direction {
    HigherIsBetter,
    LowerIsBetter,
}

/// The answer a comparison gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Significant after FDR control and the CI excludes 1, in the better direction.
    Faster,
    /// Significant after FDR control and the CI excludes 1, in the worse direction.
    Slower,
    /// Not significant, and the whole CI lies within +-equivalence: "the same within 1%".
    Equivalent,
    /// Neither: the CI is too wide to tell. Results written before the four answers
    /// existed said "same" for this.
    #[serde(alias = "same")]
    Inconclusive,
    /// The load, not the server, set the pace on a side whose figure the answer rests on:
    /// no answer about the server (what to do: more client threads, a client host, fewer
    /// connections per thread).
    #[serde(rename = "client-bound")]
    ClientBound,
    /// Other processes of the machine (or the hypervisor's other guests) took the CPU in
    /// too many of a side's runs: no answer about the server (what to do: quiet the
    /// machine, `[plan] cpus` to keep others off the measured CPUs, more rounds; never
    /// more client threads). `--fail-on` treats it as inconclusive.
    #[serde(rename = "machine-busy")]
    MachineBusy,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Faster => "faster",
            Verdict::Slower => "slower",
            Verdict::Equivalent => "equivalent",
            Verdict::Inconclusive => "inconclusive",
            Verdict::ClientBound => "client-bound",
            Verdict::MachineBusy => "machine-busy",
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How runs of the two sides are matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Pairing {
    /// Paired when at least `MIN_PAIRS` rounds pair and they hold at least three quarters
    /// of each side's runs; unpaired otherwise. Decided from counts alone, before any
    /// figure is looked at.
    #[default]
    Auto,
    /// Paired whenever at least two rounds pair.
    Paired,
    Unpaired,
}

impl Pairing {
    pub fn as_str(self) -> &'static str {
        match self {
            Pairing::Auto => "auto",
            Pairing::Paired => "paired",
            Pairing::Unpaired => "unpaired",
        }
    }
}

impl fmt::Display for Pairing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Fewest pairs for which the exact two-sided signed-rank test can reach p < 0.05
/// (6 pairs: 2/64 = 0.031; 5 pairs cannot go below 2/32 = 0.0625).
pub const MIN_PAIRS: usize = 6;

/// The most rounds one experiment runs (`repetitions` at most, and a budget's rounds stop
/// there too), so the most runs a cell holds: what a results folder may carry, since the
/// interval computations grow faster than the runs.
pub const MAX_ROUNDS: usize = 1000;

/// How comparisons are decided.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rule {
    pub direction: Direction,
    /// Significance level after FDR control (0.05).
    pub alpha: f64,
    /// Half-width of the equivalence band around 1 (0.01: "within +-1%").
    pub equivalence: f64,
    pub pairing: Pairing,
}

impl Rule {
    pub fn new(direction: Direction) -> Rule {
        Rule {
            direction,
            alpha: ALPHA,
            equivalence: 0.01,
            pairing: Pairing::Auto,
        }
    }
}

/// A cell's repetitions, summarized.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub n: usize,
    pub median: f64,
    pub ci95: (f64, f64),
    /// The CI's actual coverage (order-statistic intervals come in steps).
    pub coverage: f64,
    pub mean: f64,
    pub stddev: f64,
    /// Coefficient of variation: stddev / mean.
    pub cv: f64,
    pub min: f64,
    pub max: f64,
}

/// A candidate against the baseline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// Candidate over baseline: paired, exp of the Hodges-Lehmann estimate of the per-round
    /// log ratios; unpaired, median(candidate) / median(baseline).
    pub ratio: f64,
    /// The interval the verdict is decided with: at 95% until [`decide`] runs, then at
    /// `ci_level`, the level adjusted for the comparisons decided together (see
    /// [`fcr_levels`]). The name stays for the results files that carry it.
    pub ci95: (f64, f64),
    /// The ratio CI's actual coverage: below its nominal level when there are too few runs
    /// for it (e.g. 2 vs 2 unpaired: 67%; 5 pairs: 93.75%).
    pub ci_coverage: f64,
    /// The nominal level of `ci95` (0.95 alone; above it once adjusted for multiplicity).
    #[serde(default = "default_level")]
    pub ci_level: f64,
    /// The plain 95% interval, before any adjustment.
    #[serde(default)]
    pub ci_unadjusted: (f64, f64),
    /// Two-sided p-value of the test the CI inverts.
    pub p_value: f64,
    /// `p_value` after Benjamini-Hochberg over the comparisons decided together (equal to
    /// `p_value` until `decide` runs).
    pub p_adjusted: f64,
    /// Whether the rounds were paired (signed-rank) or not (Mann-Whitney).
    pub paired: bool,
    /// Pairs used (paired) or the smaller side's runs (unpaired).
    pub rounds: usize,
    /// Runs on each side (baseline, candidate) that the test used.
    pub sizes: (usize, usize),
    /// Per-round log ratios (candidate over baseline) of the rounds where both sides have
    /// a run, in round order: the spread the CI summarizes.
    pub round_ratios: Vec<(usize, f64)>,
    pub direction: Direction,
    pub verdict: Verdict,
    /// Layout slots the comparison was made over (see [`compare_layouts`]); 0 when the
    /// variants were each one binary.
    #[serde(default)]
    pub layouts: usize,
    /// The smallest relative difference the metric resolves (0: none stated): a ratio
    /// whose estimate lies within `1 +- resolution` is never faster or slower, and a CI
    /// inside that band reads equivalent (see [`Comparison::verdict_at`]).
    #[serde(default)]
    pub resolution: f64,
    /// What the interval is computed from, so that [`decide`] can recompute it at the
    /// adjusted level.
    #[serde(skip)]
    pub basis: Basis,
}

/// The data a comparison's interval comes from, kept to recompute it at another level.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Basis {
    /// Nothing kept (a comparison read back from a file): the interval stays as it is.
    #[default]
    None,
    /// Per-round log ratios: the Hodges-Lehmann interval of the signed-rank test.
    Paired(Vec<f64>),
    /// Both sides' runs, sorted: the Hodges-Lehmann interval of the Mann-Whitney test.
    Unpaired {
        baseline: Vec<f64>,
        candidate: Vec<f64>,
    },
    /// The mean log ratio over layout slots, its standard error and degrees of freedom:
    /// Student's t.
    Slots { centre: f64, se: f64, df: f64 },
}

fn default_level() -> f64 {
    1.0 - ALPHA
}

const ALPHA: f64 = 0.05;

/// Lowest CI coverage for which a verdict other than inconclusive is given.
const MIN_COVERAGE: f64 = 0.9;

fn finite_sorted(xs: &[f64]) -> Vec<f64> {
    let mut v: Vec<f64> = xs.iter().copied().filter(|x| x.is_finite()).collect();
    v.sort_by(f64::total_cmp);
    v
}

fn median_sorted(v: &[f64]) -> f64 {
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Binomial(n, 1/2) CDF at k.
fn binom_half_cdf(n: usize, k: usize) -> f64 {
    let mut term = 0.5f64.powi(n as i32);
    let mut sum = term;
    for i in 1..=k.min(n) {
        term *= (n + 1 - i) as f64 / i as f64;
        sum += term;
    }
    sum
}

/// Median, its order-statistic 95% CI, and spread. None when no finite value is given.
pub fn summarize(xs: &[f64]) -> Option<Summary> {
    let v = finite_sorted(xs);
    let n = v.len();
    if n == 0 {
        return None;
    }
    let mean = v.iter().sum::<f64>() / n as f64;
    let var = if n > 1 {
        v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64
    } else {
        0.0
    };
    let stddev = var.sqrt();
    // The widest-k interval [x_(k), x_(n+1-k)] (1-based) whose coverage is still >= 95%.
    let (mut k, mut coverage) = (
        1usize,
        if n > 1 {
            1.0 - 2.0 * binom_half_cdf(n, 0)
        } else {
            0.0
        },
    );
    while k < n.div_ceil(2) {
        let c = 1.0 - 2.0 * binom_half_cdf(n, k);
        if c < 0.95 {
            break;
        }
        k += 1;
        coverage = c;
    }
    Some(Summary {
        n,
        median: median_sorted(&v),
        ci95: (v[k - 1], v[n - k]),
        coverage,
        mean,
        stddev,
        cv: if mean != 0.0 {
            stddev / mean.abs()
        } else {
            0.0
        },
        min: v[0],
        max: v[n - 1],
    })
}

/// Compares `candidate` with `baseline`, unpaired. None when either side is empty or the
/// baseline's median is not positive.
pub fn compare(baseline: &[f64], candidate: &[f64], rule: &Rule) -> Option<Comparison> {
    let b = finite_sorted(baseline);
    let c = finite_sorted(candidate);
    if b.is_empty() || c.is_empty() {
        return None;
    }
    let (mb, mc) = (median_sorted(&b), median_sorted(&c));
    if mb <= 0.0 {
        return None;
    }
    let ratio = mc / mb;
    let (p_value, ci95, ci_coverage) = if b.len() < 2 || c.len() < 2 {
        (1.0, (ratio, ratio), 0.0)
    } else {
        let (ci, coverage) = ratio_ci(&b, &c, mb);
        (mann_whitney_u(&b, &c), ci, coverage)
    };
    let basis = if b.len() < 2 || c.len() < 2 {
        Basis::None
    } else {
        Basis::Unpaired {
            baseline: b.clone(),
            candidate: c.clone(),
        }
    };
    Some(finish(
        Comparison {
            ratio,
            ci95,
            ci_coverage,
            ci_level: 1.0 - ALPHA,
            ci_unadjusted: ci95,
            p_value,
            p_adjusted: p_value,
            paired: false,
            rounds: b.len().min(c.len()),
            sizes: (b.len(), c.len()),
            round_ratios: Vec::new(),
            direction: rule.direction,
            verdict: Verdict::Inconclusive,
            layouts: 0,
            resolution: 0.0,
            basis,
        },
        rule,
    ))
}

/// Compares runs tagged with their round: paired by round when `rule.pairing` says so
/// (see `Pairing::Auto`), unpaired otherwise. Either way the per-round ratios are kept.
pub fn compare_rounds(
    baseline: &[(usize, f64)],
    candidate: &[(usize, f64)],
    rule: &Rule,
) -> Option<Comparison> {
    let ok = |x: &&(usize, f64)| x.1.is_finite() && x.1 > 0.0;
    let b: Vec<(usize, f64)> = baseline.iter().filter(ok).copied().collect();
    let c: Vec<(usize, f64)> = candidate.iter().filter(ok).copied().collect();
    let mut logs: Vec<(usize, f64)> = Vec::new();
    for &(round, y) in &c {
        if let Some(&(_, x)) = b.iter().find(|(r, _)| *r == round) {
            logs.push((round, y.ln() - x.ln()));
        }
    }
    logs.sort_by_key(|x| x.0);
    let pairs = logs.len();
    let paired = match rule.pairing {
        Pairing::Unpaired => false,
        Pairing::Paired => pairs >= 2,
        Pairing::Auto => pairs >= MIN_PAIRS && 4 * pairs >= 3 * b.len().max(c.len()),
    };
    if !paired {
        let values = |v: &[(usize, f64)]| v.iter().map(|x| x.1).collect::<Vec<f64>>();
        let mut k = compare(&values(&b), &values(&c), rule)?;
        k.round_ratios = logs.iter().map(|(r, d)| (*r, d.exp())).collect();
        return Some(k);
    }
    let d: Vec<f64> = logs.iter().map(|x| x.1).collect();
    let (centre, (lo, hi), ci_coverage) = hodges_lehmann(&d, ALPHA)?;
    let p_value = signed_rank_p(&d);
    Some(finish(
        Comparison {
            ratio: centre.exp(),
            ci95: (lo.exp(), hi.exp()),
            ci_coverage,
            ci_level: 1.0 - ALPHA,
            ci_unadjusted: (lo.exp(), hi.exp()),
            p_value,
            p_adjusted: p_value,
            paired: true,
            rounds: pairs,
            sizes: (pairs, pairs),
            round_ratios: logs.iter().map(|(r, d)| (*r, d.exp())).collect(),
            direction: rule.direction,
            verdict: Verdict::Inconclusive,
            layouts: 0,
            resolution: 0.0,
            basis: Basis::Paired(d),
        },
        rule,
    ))
}

fn finish(mut k: Comparison, rule: &Rule) -> Comparison {
    k.verdict = k.verdict_at(k.p_adjusted, rule.alpha, rule.equivalence);
    k
}

/// Adjusts the p-values of comparisons decided together (Benjamini-Hochberg), recomputes
/// each interval at its false-coverage-rate level ([`fcr_levels`]) and gives each its
/// answer from that interval: the interval shown beside a verdict is the one it was
/// decided with, so one that excludes 1 never sits beside "inconclusive".
pub fn decide<'a>(
    comparisons: impl IntoIterator<Item = &'a mut Comparison>,
    alpha: f64,
    equivalence: f64,
) {
    let mut ks: Vec<&mut Comparison> = comparisons.into_iter().collect();
    let p: Vec<f64> = ks.iter().map(|k| k.p_value).collect();
    let adjusted = benjamini_hochberg(&p);
    let levels = fcr_levels(&adjusted, alpha);
    for ((k, adj), level) in ks.iter_mut().zip(adjusted).zip(levels) {
        k.p_adjusted = adj;
        k.adjust_interval(level);
        k.verdict = k.verdict_at(adj, alpha, equivalence);
    }
}

/// Each comparison's interval level, from the BH-adjusted p-values of the m comparisons
/// decided together: with R of them selected (adjusted p below `alpha`), a selected one's
/// interval is at 1 - R alpha / m, Benjamini and Yekutieli's (2005) false-coverage-rate
/// interval, which keeps the expected share of selected intervals that miss their true
/// ratio at or below alpha. An unselected one's is at 1 - (R + 1) alpha / m: the level at
/// which it would have been the next selected, so BH's step-up rule puts its p-value at
/// or above that alpha and its interval covers 1, and it can only widen with m. With one
/// comparison both are the plain 1 - alpha.
pub fn fcr_levels(adjusted: &[f64], alpha: f64) -> Vec<f64> {
    let m = adjusted.len().max(1) as f64;
    let selected = adjusted.iter().filter(|p| **p < alpha).count() as f64;
    adjusted
        .iter()
        .map(|p| {
            let share = if *p < alpha { selected } else { selected + 1.0 };
            1.0 - share.min(m) * alpha / m
        })
        .collect()
}

/// Share of a side's runs above which it counts as client-bound.
pub const CLIENT_BOUND_SHARE: f64 = 0.25;

/// Share of a side's runs disturbed by the machine (other processes, steal) above which
/// the comparison gives no answer about the server.
pub const MACHINE_BUSY_SHARE: f64 = 0.25;

/// The answer once it is known which sides the machine disturbed (more than
/// [`MACHINE_BUSY_SHARE`] of their runs): `MachineBusy` whatever the figures said, since
/// they measured the server sharing its CPUs with something else, and an identical
/// build must never come out faster or slower because a neighbour woke up.
pub fn busy(verdict: Verdict, baseline_busy: bool, candidate_busy: bool) -> Verdict {
    if baseline_busy || candidate_busy {
        Verdict::MachineBusy
    } else {
        verdict
    }
}

/// The answer once it is known which sides the load held back (more than
/// [`CLIENT_BOUND_SHARE`] of their runs client-bound). A held-back side's true figure is at
/// least what was measured, so "faster" stands when only the candidate was held back and
/// "slower" when only the baseline was: rerun with more load, the difference can only
/// grow. Anything else, equivalent and inconclusive included, is `ClientBound`: it would
/// compare the load engine with itself.
pub fn bounded(verdict: Verdict, baseline_held: bool, candidate_held: bool) -> Verdict {
    match (verdict, baseline_held, candidate_held) {
        (v, false, false) => v,
        (Verdict::Faster, false, true) | (Verdict::Slower, true, false) => verdict,
        _ => Verdict::ClientBound,
    }
}

impl Comparison {
    /// The interval at confidence `level` and its actual coverage, from the comparison's
    /// basis; None when no basis was kept.
    pub fn interval_at(&self, level: f64) -> Option<((f64, f64), f64)> {
        let alpha = (1.0 - level).clamp(1e-12, 1.0);
        match &self.basis {
            Basis::None => None,
            Basis::Paired(d) => {
                let (_, (lo, hi), coverage) = hodges_lehmann(d, alpha)?;
                Some(((lo.exp(), hi.exp()), coverage))
            }
            Basis::Unpaired {
                baseline,
                candidate,
            } => {
                let mb = median_sorted(baseline);
                Some(ratio_ci_at(baseline, candidate, mb, alpha))
            }
            Basis::Slots { centre, se, df } => {
                let half = t_quantile(1.0 - alpha / 2.0, *df) * se;
                Some((((centre - half).exp(), (centre + half).exp()), level))
            }
        }
    }

    /// Replaces the interval with the one at `level` (a no-op at the level it has, or
    /// without a basis).
    pub fn adjust_interval(&mut self, level: f64) {
        if (level - self.ci_level).abs() < 1e-12 {
            return;
        }
        if let Some((ci, coverage)) = self.interval_at(level) {
            self.ci95 = ci;
            self.ci_coverage = coverage;
            self.ci_level = level;
        }
    }

    /// The answer at an (adjusted) p-value: faster or slower when significant, the CI
    /// excludes 1 and the estimate lies beyond the metric's `resolution`; equivalent when
    /// the whole CI lies within 1 +- the larger of `equivalence` and the resolution;
    /// inconclusive otherwise, and always when the CI covers less than 90%.
    pub fn verdict_at(&self, p: f64, alpha: f64, equivalence: f64) -> Verdict {
        let (lo, hi) = self.ci95;
        if self.ci_coverage < MIN_COVERAGE {
            return Verdict::Inconclusive;
        }
        let resolution = if self.resolution.is_finite() {
            self.resolution.max(0.0)
        } else {
            0.0
        };
        let resolved = self.ratio.ln().abs() > (1.0 + resolution).ln();
        if p < alpha && (lo > 1.0 || hi < 1.0) && resolved {
            let better = match self.direction {
                Direction::HigherIsBetter => self.ratio > 1.0,
                Direction::LowerIsBetter => self.ratio < 1.0,
            };
            return if better {
                Verdict::Faster
            } else {
                Verdict::Slower
            };
        }
        let band = equivalence.max(resolution);
        if lo >= 1.0 - band && hi <= 1.0 + band {
            Verdict::Equivalent
        } else {
            Verdict::Inconclusive
        }
    }

    /// The smallest two-sided p-value this design can give at all: paired, 2 / 2^n; unpaired,
    /// 2 / C(n + m, n). At or above alpha, no answer can be faster or slower.
    pub fn smallest_p(&self) -> f64 {
        if self.paired {
            return smallest_p(self.rounds);
        }
        let (n, m) = (
            self.sizes.0.min(self.sizes.1),
            self.sizes.0.max(self.sizes.1),
        );
        let mut c = 1.0f64;
        for i in 1..=n {
            c = c * (m + i) as f64 / i as f64;
        }
        (2.0 / c).min(1.0)
    }

    /// Half-width of the ratio's CI relative to the ratio: the smallest relative
    /// difference this comparison could tell from none. Infinite without a usable CI.
    pub fn detectable(&self) -> f64 {
        if self.ci_coverage < MIN_COVERAGE || self.ratio <= 0.0 {
            return f64::INFINITY;
        }
        (self.ci95.1 - self.ci95.0) / 2.0 / self.ratio
    }

    /// The largest difference from 1 the CI still allows, either way: what could hide
    /// behind an inconclusive answer.
    pub fn hiding(&self) -> f64 {
        if self.ci_coverage < MIN_COVERAGE {
            return f64::INFINITY;
        }
        (1.0 - self.ci95.0).abs().max((self.ci95.1 - 1.0).abs())
    }

    /// Whether the plain 95% interval excludes 1 while the decided one does not: the
    /// difference looks real alone and is not, over the comparisons decided together.
    pub fn excluded_only_unadjusted(&self) -> bool {
        let excludes = |(lo, hi): (f64, f64)| lo > 1.0 || hi < 1.0;
        excludes(self.ci_unadjusted) && !excludes(self.ci95)
    }

    /// Rounds beyond `rounds` that would bring the CI's half-width to `target`, at the
    /// spread measured so far (the half-width shrinks as 1/sqrt(n)). None without a CI.
    pub fn more_rounds_for(&self, target: f64) -> Option<usize> {
        let hw = self.detectable();
        // Over layouts, rounds do not shrink the layouts' part of the spread.
        if !hw.is_finite() || target <= 0.0 || self.layouts > 0 {
            return None;
        }
        if hw <= target {
            return Some(0);
        }
        let n = self.rounds.max(2) as f64;
        let need = (n * (hw / target).powi(2)).ceil() as usize;
        Some(need.saturating_sub(self.rounds).max(1))
    }

    /// Standard deviation of the per-round log ratios (about the relative spread of one
    /// round's ratio); None with fewer than two.
    pub fn round_spread(&self) -> Option<f64> {
        let n = self.round_ratios.len();
        if n < 2 {
            return None;
        }
        let logs: Vec<f64> = self.round_ratios.iter().map(|x| x.1.ln()).collect();
        let mean = logs.iter().sum::<f64>() / n as f64;
        let var = logs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        Some(var.sqrt())
    }
}

/// Hodges-Lehmann interval for the shift of log values (a ratio), from all pairwise
/// differences, cut at the Mann-Whitney critical value. Non-positive data fall back to
/// raw differences relative to the baseline median.
fn ratio_ci(b: &[f64], c: &[f64], mb: f64) -> ((f64, f64), f64) {
    ratio_ci_at(b, c, mb, ALPHA)
}

/// [`ratio_ci`] at level `1 - alpha`.
fn ratio_ci_at(b: &[f64], c: &[f64], mb: f64, alpha: f64) -> ((f64, f64), f64) {
    let logs = b.iter().chain(c).all(|x| *x > 0.0);
    let mut d: Vec<f64> = Vec::with_capacity(b.len() * c.len());
    for x in b {
        for y in c {
            d.push(if logs { y.ln() - x.ln() } else { y - x });
        }
    }
    d.sort_by(f64::total_cmp);
    let k = mwu::critical_count(b.len(), c.len(), alpha / 2.0).max(1);
    let coverage = mwu::interval_coverage(b.len(), c.len(), k);
    let (lo, hi) = (d[k - 1], d[d.len() - k]);
    let ci = if logs {
        (lo.exp(), hi.exp())
    } else {
        (1.0 + lo / mb, 1.0 + hi / mb)
    };
    (ci, coverage)
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod fcr_tests;
