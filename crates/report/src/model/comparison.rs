//! A comparison against the baseline (`comparisons[]`): ratios, verdicts, forecasts, server
//! counters that moved, and which comparisons are the headline ones.

use serde::{Deserialize, Serialize};

/// A server counter that moved between the two sides of a comparison, per operation.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ServerChange {
    pub name: String,
    pub base_per_op: f64,
    pub other_per_op: f64,
    /// other / base; None when the baseline's is 0 (it did not move there, or that
    /// server does not have it).
    pub ratio: Option<f64>,
    /// The ratio's 95% interval from the rounds (paired where both sides ran in the
    /// round), when there are enough of them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci95: Option<[f64; 2]>,
    /// The counter's rate per second did not move beyond the noise: it follows the
    /// clock (a background thread's rounds, time spent), and per operation it only
    /// mirrors the throughput. Listed after the changes in work per operation.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub paced_by_time: bool,
}

/// A statement both sides' servers ran (matched by normalised text), per call.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct StatementChange {
    /// The baseline server's own normalised text.
    pub text: String,
    /// Mean time per call in microseconds on each side (median over the runs).
    pub base_mean_us: f64,
    pub other_mean_us: f64,
    /// other / base.
    pub ratio: f64,
    /// The ratio's 95% interval from the rounds, when there are enough of them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci95: Option<[f64; 2]>,
    /// Calls per operation of the load on each side.
    pub base_calls_per_op: f64,
    pub other_calls_per_op: f64,
    /// The time per call moved beyond the noise (the runs do not overlap, the ratio is
    /// beyond the floor, its interval excludes 1); false: it did not move.
    pub moved: bool,
}

/// A ratio of medians against the baseline with its CI, p-value and verdict.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RatioRecord {
    pub ratio: f64,
    /// The interval the verdict was decided with, at `ci_level` (adjusted over the
    /// comparisons of its kind, as for throughput).
    pub ci95: [f64; 2],
    #[serde(default = "ninety_five")]
    pub ci_level: f64,
    pub p_value: f64,
    pub verdict: Verdict,
    /// `p_value` after Benjamini-Hochberg over the comparisons of its kind.
    #[serde(default)]
    pub p_adjusted: f64,
    #[serde(default)]
    pub paired: bool,
}

impl Default for RatioRecord {
    fn default() -> Self {
        RatioRecord {
            ratio: 1.0,
            ci95: [1.0, 1.0],
            ci_level: 0.95,
            p_value: 1.0,
            verdict: Verdict::Inconclusive,
            p_adjusted: 1.0,
            paired: false,
        }
    }
}

impl RatioRecord {
    pub fn new(k: &bakeoff_stats::Comparison) -> RatioRecord {
        RatioRecord {
            ratio: k.ratio,
            ci95: [k.ci95.0, k.ci95.1],
            ci_level: k.ci_level,
            p_value: k.p_value,
            verdict: k.verdict,
            p_adjusted: k.p_adjusted,
            paired: k.paired,
        }
    }
}

pub use bakeoff_stats::{Pairing, Verdict};

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ComparisonRecord {
    pub workload: String,
    pub connections: usize,
    pub variant: String,
    pub baseline: String,
    /// Whether the two sides are servers of different kinds (`[[variant]] kind`): a
    /// cross-server comparison, decided like any other and marked in every output.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cross_kind: bool,
    /// Candidate over baseline (paired: the Hodges-Lehmann estimate of the per-round
    /// ratios; unpaired: the ratio of medians).
    pub ratio: f64,
    /// The ratio's CI the verdict was decided with (also written as `ci`): at `ci_level`,
    /// which is 95% for a lone comparison and adjusted for the comparisons decided
    /// together otherwise (false-coverage-rate intervals, Benjamini and Yekutieli 2005).
    /// The name stays for the files that carry it.
    pub ci95: [f64; 2],
    /// The ratio CI's actual coverage; below `ci_level` when there are too few runs.
    #[serde(default)]
    pub ci_coverage: f64,
    /// The nominal level of `ci95`.
    #[serde(default = "ninety_five")]
    pub ci_level: f64,
    /// The plain 95% interval, where it differs from `ci95`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci95_unadjusted: Option<[f64; 2]>,
    /// The test's two-sided p-value, before FDR control (also written as `p`).
    pub p_value: f64,
    pub verdict: Verdict,
    /// Same as `ci95`.
    #[serde(default)]
    pub ci: [f64; 2],
    /// Same as `p_value`.
    #[serde(default)]
    pub p: f64,
    /// `p` after Benjamini-Hochberg over all comparisons of the experiment; the verdict
    /// is decided on it.
    #[serde(default)]
    pub p_adjusted: f64,
    /// Whether rounds were paired (Wilcoxon signed-rank) or not (Mann-Whitney).
    #[serde(default)]
    pub paired: bool,
    /// Pairs used (paired) or the smaller side's valid runs (unpaired).
    #[serde(default)]
    pub rounds: usize,
    /// The CI's half-width relative to the ratio: the smallest difference this
    /// comparison could detect. None without a usable CI.
    #[serde(default)]
    pub detectable: Option<f64>,
    /// The largest difference from 1 the CI still allows (what an inconclusive answer
    /// could hide).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hiding: Option<f64>,
    /// More rounds that would bring the CI to the precision target, at the spread
    /// measured; and roughly how long they would take.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub more_rounds: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub more_seconds: Option<f64>,
    /// Standard deviation of the per-round log ratios (the spread of one round's ratio).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round_spread: Option<f64>,
    /// Candidate over baseline in each round where both ran validly.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub round_ratios: Vec<RoundRatio>,
    /// The smallest p-value this many runs could give (at or above 0.05: this comparison
    /// could never be faster or slower).
    #[serde(default)]
    pub smallest_p: f64,
    /// Layout slots the comparison was made over (Student's t over one estimate per
    /// slot); absent when each variant was one binary.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layouts: Option<usize>,
    /// The difference is no larger than the spread between the layouts of one of the two
    /// variants: it may be where the linker put the code, not the change.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub within_layout_spread: bool,
    /// The A/A check (`[plan] aa`): two sandboxes of the baseline's binary compared, the
    /// machine's false-difference check, not a candidate.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub aa: bool,
    /// The experiment's A/A check came out faster or slower: this verdict is suspect
    /// (see `Results::aa` and the warning).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub suspect: bool,
    /// What the budget can resolve at the noise measured, said once the minimum rounds
    /// are in and updated after every round (the last one is kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forecast: Option<Forecast>,
    /// What was compared: `throughput` (the wall-clock runs) or `instructions`
    /// (operations per billion instructions, from callgrind's runs; faster: fewer
    /// instructions per operation). Results written before the key compared throughput.
    #[serde(default = "throughput")]
    pub metric: String,
    /// On a throughput record in `mode = "both"`: why its answer and the instruction
    /// count's point opposite ways (where the cost lies then).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disagrees: Option<String>,
    /// The smallest relative difference this metric resolves, as the verdict used it
    /// (throughput: the precision target; instructions: 2.5 times the run-to-run spread
    /// of the two sides' counts, at least 1.25%): an estimate within it is never faster
    /// or slower, a CI within it reads equivalent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolution: Option<f64>,
    /// The server counters that moved most per operation between the two sides, above
    /// their run-to-run spread (and the A/A's, where the experiment has one), largest
    /// first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub server_changes: Vec<ServerChange>,
    /// The statements both sides' servers ran (their digests matched by normalised
    /// text), the most time per operation first: time per call on each side, its
    /// ratio, and whether it moved.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub statement_changes: Vec<StatementChange>,
}

/// The `metric` of a comparison of wall-clock throughput.
pub const THROUGHPUT: &str = "throughput";

/// The `metric` of a comparison of instruction counts per operation.
pub const INSTRUCTIONS: &str = "instructions";

/// The `metric` of a comparison of capacities at a latency limit (`[[workload]] slo`).
pub const CAPACITY: &str = "capacity";

fn throughput() -> String {
    THROUGHPUT.to_string()
}

/// The most instruction-count runs one cell holds in `mode = "both"` (the runner's cap
/// per variant and point).
pub const MAX_INSTRUCTION_RUNS: usize = 12;

impl ComparisonRecord {
    /// Whether this compares instruction counts (not wall-clock throughput).
    pub fn is_instructions(&self) -> bool {
        self.metric == INSTRUCTIONS
    }

    /// Whether this compares capacities at a latency limit.
    pub fn is_capacity(&self) -> bool {
        self.metric == CAPACITY
    }

    /// Whether `other` compares the same cell (workload, connections, variant, baseline).
    pub fn same_cell(&self, other: &ComparisonRecord) -> bool {
        self.workload == other.workload
            && self.connections == other.connections
            && self.variant == other.variant
            && self.baseline == other.baseline
    }
}

/// What a comparison's budget buys, forecast from the noise measured so far: the
/// half-width the whole budget should reach, and the rounds and time the precision target
/// needs (`bakeoff_stats::predicted_half_width`, `rounds_to_reach`). Half-widths are
/// relative, as `detectable` is.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Forecast {
    /// Spread of one round's ratio: the standard deviation of the per-round log ratios
    /// (from `bakeoff check --noise`: sqrt(2) times the baseline's run-to-run CV, the
    /// spread of the ratio of two independent runs).
    pub noise: f64,
    /// Run-to-run coefficient of variation of the baseline's and the candidate's cells
    /// (the candidate's is absent from `bakeoff check --noise`, which runs the baseline).
    pub cv: [Option<f64>; 2],
    /// Rounds measured when the forecast was made.
    pub rounds: usize,
    /// Seconds one round of the experiment takes at the pace so far.
    pub round_seconds: f64,
    /// Rounds the whole budget (or `repetitions`) allows, those measured included.
    pub budget_rounds: Option<usize>,
    /// The half-width those rounds should reach; None where they are too few for an
    /// interval at the level.
    pub reaches: Option<f64>,
    /// The precision target (`[plan] precision`, else the equivalence band).
    pub target: f64,
    /// Rounds in all that bring the half-width to the target, and their time from the
    /// first round on; None when out of reach (more than a hundred million rounds).
    pub rounds_for_target: Option<usize>,
    pub seconds_for_target: Option<f64>,
    /// The interval's confidence level the forecast is made for.
    pub level: f64,
}

impl Default for ComparisonRecord {
    fn default() -> Self {
        ComparisonRecord {
            workload: String::new(),
            connections: 0,
            variant: String::new(),
            baseline: String::new(),
            cross_kind: false,
            ratio: 1.0,
            ci95: [1.0, 1.0],
            ci_coverage: 0.0,
            ci_level: 0.95,
            ci95_unadjusted: None,
            p_value: 1.0,
            verdict: Verdict::Inconclusive,
            ci: [1.0, 1.0],
            p: 1.0,
            p_adjusted: 1.0,
            paired: false,
            rounds: 0,
            detectable: None,
            hiding: None,
            more_rounds: None,
            more_seconds: None,
            round_spread: None,
            round_ratios: Vec::new(),
            smallest_p: 0.0,
            layouts: None,
            within_layout_spread: false,
            aa: false,
            suspect: false,
            forecast: None,
            metric: throughput(),
            disagrees: None,
            resolution: None,
            server_changes: Vec::new(),
            statement_changes: Vec::new(),
        }
    }
}

fn ninety_five() -> f64 {
    0.95
}

impl ComparisonRecord {
    /// The record of a decided comparison (`more_seconds` is left for the caller, who
    /// knows how long a round takes).
    pub fn new(
        workload: &str,
        connections: usize,
        variant: &str,
        baseline: &str,
        k: &bakeoff_stats::Comparison,
        precision: f64,
    ) -> ComparisonRecord {
        let finite = |x: f64| x.is_finite().then_some(x);
        let ci = [k.ci95.0, k.ci95.1];
        ComparisonRecord {
            workload: workload.to_string(),
            connections,
            variant: variant.to_string(),
            baseline: baseline.to_string(),
            cross_kind: false,
            ratio: k.ratio,
            ci95: ci,
            ci_coverage: k.ci_coverage,
            ci_level: k.ci_level,
            ci95_unadjusted: (k.ci_unadjusted != k.ci95)
                .then_some([k.ci_unadjusted.0, k.ci_unadjusted.1]),
            p_value: k.p_value,
            verdict: k.verdict,
            ci,
            p: k.p_value,
            p_adjusted: k.p_adjusted,
            paired: k.paired,
            rounds: k.rounds,
            detectable: finite(k.detectable()),
            hiding: finite(k.hiding()),
            more_rounds: k.more_rounds_for(precision),
            more_seconds: None,
            round_spread: k.round_spread(),
            round_ratios: k
                .round_ratios
                .iter()
                .map(|&(round, ratio)| RoundRatio { round, ratio })
                .collect(),
            smallest_p: k.smallest_p(),
            layouts: (k.layouts > 0).then_some(k.layouts),
            resolution: (k.resolution > 0.0).then_some(k.resolution),
            ..ComparisonRecord::default()
        }
    }
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct RoundRatio {
    /// 0-based.
    pub round: usize,
    pub ratio: f64,
}

/// A comparison's cell: workload, connections, variant, baseline
/// ([`ComparisonRecord::same_cell`]).
pub(crate) type CompKey<'a> = (&'a str, usize, &'a str, &'a str);

pub(crate) fn comp_key(k: &ComparisonRecord) -> CompKey<'_> {
    (&k.workload, k.connections, &k.variant, &k.baseline)
}

/// The comparisons that answer for their cell
/// ([`Results::headline_comparisons`](super::Results::headline_comparisons)), in results
/// order, in one pass over the comparisons.
pub fn headline(comparisons: &[ComparisonRecord]) -> impl Iterator<Item = &ComparisonRecord> {
    let throughput: std::collections::HashSet<CompKey<'_>> = comparisons
        .iter()
        .filter(|k| !k.is_instructions())
        .map(comp_key)
        .collect();
    comparisons
        .iter()
        .filter(move |k| !k.is_instructions() || !throughput.contains(&comp_key(k)))
}
