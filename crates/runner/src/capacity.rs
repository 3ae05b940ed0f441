//! Capacity at a latency limit (`[[workload]] slo`): per point, a closed-loop run of each
//! variant (its peak, where the first search starts), then searches (bakeoff-capacity)
//! whose trials are short open-loop runs on a fresh server, through the same one-run path
//! as the rounds with the offered rate overridden (`RunContext::rate`; the kind says it
//! honours one, `KindSpec::open_loop`). The variants' searches interleave trial by trial,
//! in a seeded shuffled order, so a trial of each runs close in time to the others'.
//!
//! A search ends at `[plan] precision` (its bracket's relative width) or its trial cap;
//! searches repeat, each from its previous bracket, until the budget or `repetitions`
//! ends them or every capacity comparison at the point reaches the precision; each starts
//! afresh from the peak, so the searches are independent replicates. A cell's capacity is
//! the median of its searches' capacities with the median's order-statistic interval;
//! comparisons pair the searches by index (`comparisons`, used by `analyze`), as rounds
//! pair runs.

use crate::context::Context;
use crate::folder::write_results;
use crate::observer::Observer;
use crate::schedule::{Rounds, Slot};
use bakeoff_capacity::{Limit, Next, Search, Settings, Trial};
use bakeoff_engine::Live;
use bakeoff_plan::Slo;
use bakeoff_report::model::{
    CapacityRecord, CapacitySearch, CapacityTrial, Cell, Latency, Results, Run,
};
use bakeoff_stats as stats;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

/// The bracket's width when the plan sets no precision.
pub const DEFAULT_PRECISION: f64 = 0.05;
/// The 95% intervals of the comparisons before their adjustment.
const ALPHA: f64 = 0.05;
/// The most trials one search runs.
pub const MAX_TRIALS: usize = 60;
/// The most searches per point.
pub const MAX_SEARCHES: usize = 30;

/// The `slo` of the plan's workload named `name`.
pub(crate) fn slo_named<'a>(loaded: &'a bakeoff_plan::Loaded, name: &str) -> Option<&'a Slo> {
    loaded
        .experiment
        .workloads
        .iter()
        .find(|w| !w.train_only && w.display_name() == name)
        .and_then(|w| w.slo.as_ref())
}

/// The bracket's goal width the plan asks for.
pub fn precision_of(e: &bakeoff_plan::Experiment) -> f64 {
    e.plan.precision.unwrap_or(DEFAULT_PRECISION)
}

/// The percentile an `slo` names, from a run's response times.
fn percentile(l: &Latency, p: f64) -> f64 {
    match p {
        50.0 => l.p50,
        90.0 => l.p90,
        99.9 => l.p999,
        _ => l.p99,
    }
}

/// The capacities compared with the baseline's, paired by search: Student's t over the
/// per-search log ratios (df = searches - 1), its standard error at least what the
/// brackets' widths imply (a search's capacity is known only to its bracket: a uniform
/// spread over it, variance ln(upper/lower)^2 / 12 per side), so searches that land on
/// the same rates never pass for more precision than their brackets hold. With a single
/// search, the interval is the brackets' ([lower / baseline's upper, upper / baseline's
/// lower]) and no verdict other than inconclusive.
pub(crate) fn comparisons<'a>(
    r: &'a Results,
    rule: &stats::Rule,
) -> Vec<(&'a Cell, stats::Comparison)> {
    let mut out = Vec::new();
    for c in r
        .cells
        .iter()
        .filter(|c| c.variant != r.plan.baseline && c.capacity.is_some())
    {
        let Some(b) = r.cell(&c.workload, &r.plan.baseline, c.connections) else {
            continue;
        };
        let (Some(kb), Some(kc)) = (&b.capacity, &c.capacity) else {
            continue;
        };
        if let Some(k) = compare_searches(&kb.searches, &kc.searches, rule) {
            out.push((c, k));
        }
    }
    out
}

/// One capacity comparison from the two sides' searches (see [`comparisons`]).
pub fn compare_searches(
    baseline: &[CapacitySearch],
    candidate: &[CapacitySearch],
    rule: &stats::Rule,
) -> Option<stats::Comparison> {
    let width = |s: &CapacitySearch| match (s.capacity, s.upper) {
        (Some(lo), Some(hi)) if hi > lo => (hi / lo).ln(),
        _ => 0.0,
    };
    // (search, log ratio, the pair's bracket variance)
    let pairs: Vec<(usize, f64, f64)> = candidate
        .iter()
        .filter_map(|c| {
            let b = baseline.iter().find(|b| b.search == c.search)?;
            let (x, y) = (b.capacity?, c.capacity?);
            (x > 0.0 && y > 0.0).then(|| {
                let v = (width(b).powi(2) + width(c).powi(2)) / 12.0;
                (c.search, y.ln() - x.ln(), v)
            })
        })
        .collect();
    let n = pairs.len();
    if n == 0 {
        return None;
    }
    let d: Vec<f64> = pairs.iter().map(|x| x.1).collect();
    let mean = d.iter().sum::<f64>() / n as f64;
    let round_ratios: Vec<(usize, f64)> = pairs.iter().map(|x| (x.0, x.1.exp())).collect();
    let mut k = stats::Comparison {
        ratio: mean.exp(),
        ci95: (mean.exp(), mean.exp()),
        ci_coverage: 0.0,
        ci_level: 1.0 - ALPHA,
        ci_unadjusted: (mean.exp(), mean.exp()),
        p_value: 1.0,
        p_adjusted: 1.0,
        paired: true,
        rounds: n,
        sizes: (n, n),
        round_ratios,
        direction: rule.direction,
        verdict: stats::Verdict::Inconclusive,
        layouts: 0,
        basis: stats::Basis::None,
    };
    if n == 1 {
        let (b, c) = (
            baseline.iter().find(|b| b.search == pairs[0].0)?,
            candidate.iter().find(|c| c.search == pairs[0].0)?,
        );
        let (bl, cl) = (b.capacity?, c.capacity?);
        let (bu, cu) = (b.upper.unwrap_or(bl), c.upper.unwrap_or(cl));
        k.ci95 = (cl / bu, cu / bl);
        k.ci_unadjusted = k.ci95;
        return Some(k);
    }
    let df = (n - 1) as f64;
    let spread = d.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / df;
    let floor = pairs.iter().map(|x| x.2).sum::<f64>() / n as f64;
    let se = (spread.max(floor) / n as f64).sqrt();
    let (half, p) = if se > 0.0 {
        (
            stats::t_quantile(1.0 - ALPHA / 2.0, df) * se,
            stats::t_two_sided_p(mean / se, df),
        )
    } else {
        (0.0, if mean == 0.0 { 1.0 } else { 0.0 })
    };
    k.ci95 = ((mean - half).exp(), (mean + half).exp());
    k.ci_unadjusted = k.ci95;
    k.ci_coverage = 1.0 - ALPHA;
    k.p_value = p;
    k.p_adjusted = p;
    k.basis = stats::Basis::Slots {
        centre: mean,
        se,
        df,
    };
    k.verdict = k.verdict_at(p, rule.alpha, rule.equivalence);
    Some(k)
}

/// A capacity's figure and interval from its searches: the median of their capacities
/// with its order-statistic 95% interval; where too few searches give none at 95%, the
/// span from the lowest lower bound to the highest upper bound, coverage 0.
pub fn summarize(k: &mut CapacityRecord) {
    let caps: Vec<f64> = k.searches.iter().filter_map(|s| s.capacity).collect();
    let Some(s) = stats::summarize(&caps) else {
        k.ops_per_s = 0.0;
        k.ci = [0.0, 0.0];
        k.ci_coverage = 0.0;
        return;
    };
    k.ops_per_s = s.median;
    if s.coverage >= 0.95 {
        k.ci = [s.ci95.0, s.ci95.1];
        k.ci_coverage = s.coverage;
    } else {
        let lo = caps.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = k
            .searches
            .iter()
            .filter_map(|s| s.upper.or(s.capacity))
            .fold(0.0, f64::max);
        k.ci = [lo, hi.max(lo)];
        k.ci_coverage = 0.0;
    }
    // Client-bound: most failing trials at the searches' upper bounds could not offer.
    let at_upper: Vec<&CapacityTrial> = k
        .trials
        .iter()
        .filter(|t| {
            !t.pass
                && k.searches
                    .iter()
                    .any(|s| s.search == t.search && s.upper == Some(t.offered))
        })
        .collect();
    let bound = at_upper.iter().filter(|t| t.client_bound).count();
    k.client_bound =
        !at_upper.is_empty() && bound as f64 > stats::CLIENT_BOUND_SHARE * at_upper.len() as f64;
}

/// A variant's search at one point, and the trials its cell has had.
struct Searching {
    variant: usize,
    search: Search,
    done: bool,
}

impl Context<'_> {
    /// The capacity searches of every point in `points`; the reason they stopped, or None
    /// when interrupted.
    pub(crate) fn capacities(
        &self,
        results: &mut Results,
        observer: &dyn Observer,
        points: &[(usize, usize)],
        stop: &bakeoff_plan::Stopping,
        index: &mut usize,
    ) -> Option<String> {
        let started = Instant::now();
        let mut why = String::from("precision");
        for &point in points {
            let left = stop
                .budget
                .map(|b| b.as_secs_f64() - started.elapsed().as_secs_f64());
            why = self.point_capacity(results, observer, point, stop, left, index)?;
        }
        Some(why)
    }

    fn point_capacity(
        &self,
        results: &mut Results,
        observer: &dyn Observer,
        (w, connections): (usize, usize),
        stop: &bakeoff_plan::Stopping,
        budget_s: Option<f64>,
        index: &mut usize,
    ) -> Option<String> {
        let e = &self.loaded.experiment;
        let name = self.configs[w].name();
        let slo = slo_named(self.loaded, name)?.clone();
        let limit = Limit::new(slo.limit_us());
        let settings = Settings::new(precision_of(e), MAX_TRIALS);
        let started = Instant::now();
        let indices: Vec<usize> = (0..self.variants.len()).collect();
        let mut order = Rounds::new(e.plan.seed ^ 0x6361_7061_6369_7479);
        // The closed-loop peak of each variant: a run of the rounds' kind, in its cell.
        for slot in order.next(0, &[(w, connections)], &indices) {
            if !self.run_slot(&slot, *index, results, observer) {
                return None;
            }
            *index += 1;
        }
        let peak = |results: &Results, v: usize| {
            let slot = Slot {
                round: 0,
                workload: w,
                connections,
                variant: v,
            };
            let c = &results.cells[self.cell_index(results, &slot)];
            c.runs.iter().find(|x| x.valid).map(|x| x.ops_per_s)
        };
        for v in &indices {
            let slot = Slot {
                round: 0,
                workload: w,
                connections,
                variant: *v,
            };
            let at = self.cell_index(results, &slot);
            results.cells[at].capacity = Some(CapacityRecord {
                percentile: slo.percentile,
                limit_us: limit.latency_us,
                peak_ops_per_s: peak(results, *v),
                ..CapacityRecord::default()
            });
        }
        let max_searches = stop.max_rounds.unwrap_or(MAX_SEARCHES).min(MAX_SEARCHES);
        let mut last_search_s = 0.0;
        for s in 0..max_searches {
            let elapsed = started.elapsed().as_secs_f64();
            if s > 0 && budget_s.is_some_and(|b| elapsed + last_search_s > b) {
                return Some("budget".into());
            }
            let began = Instant::now();
            let mut searching: Vec<Searching> = indices
                .iter()
                .filter_map(|&v| {
                    // Each search starts afresh from the peak: the searches are
                    // independent replicates, which the interval over them needs.
                    let search = Search::new(limit, settings, peak(results, v)?);
                    Some(Searching {
                        variant: v,
                        search,
                        done: false,
                    })
                })
                .collect();
            if searching.is_empty() {
                return Some("no valid closed-loop run to start from".into());
            }
            let mut pass = 0;
            while searching.iter().any(|x| !x.done) {
                let order: Vec<usize> = order
                    .next(pass, &[(w, 0)], &(0..searching.len()).collect::<Vec<_>>())
                    .iter()
                    .map(|slot| slot.variant)
                    .collect();
                pass += 1;
                for i in order {
                    let x = &mut searching[i];
                    if x.done {
                        continue;
                    }
                    match x.search.next_step() {
                        Next::Trial(rate) => {
                            let slot = Slot {
                                round: 0,
                                workload: w,
                                connections,
                                variant: x.variant,
                            };
                            let trial =
                                self.trial(results, observer, &slot, s, rate, &limit, index)?;
                            x.search.feed(trial);
                        }
                        Next::Done(found) => {
                            x.done = true;
                            let slot = Slot {
                                round: 0,
                                workload: w,
                                connections,
                                variant: x.variant,
                            };
                            let at = self.cell_index(results, &slot);
                            if let Some(k) = results.cells[at].capacity.as_mut() {
                                k.searches.push(CapacitySearch {
                                    search: s,
                                    capacity: found.capacity,
                                    upper: found.upper,
                                    stop: found.stop.as_str().into(),
                                    confirmed: found.confirmed,
                                    trials: found.trials,
                                });
                                summarize(k);
                            }
                        }
                    }
                }
            }
            last_search_s = began.elapsed().as_secs_f64();
            crate::analyze(results);
            if let Err(e) = write_results(self.folder, results) {
                self.stop_on_write_error(e);
                return None;
            }
            observer.notice(&self.capacity_line(results, w, connections, s));
            if s + 1 >= stop.min_rounds && self.capacity_precise(results, w, connections, stop) {
                return Some("precision".into());
            }
        }
        Some("repetitions".into())
    }

    /// Whether every capacity comparison at the point has reached the precision (with a
    /// single variant: the capacity's own interval).
    fn capacity_precise(
        &self,
        results: &Results,
        w: usize,
        connections: usize,
        stop: &bakeoff_plan::Stopping,
    ) -> bool {
        let Some(target) = stop.precision else {
            return false;
        };
        let name = self.configs[w].name();
        if self.variants.len() > 1 {
            let ks: Vec<_> = results
                .comparisons
                .iter()
                .filter(|k| k.is_capacity() && k.workload == name && k.connections == connections)
                .collect();
            ks.len() + 1 == self.variants.len()
                && ks.iter().all(|k| k.detectable.is_some_and(|d| d <= target))
        } else {
            results
                .cells
                .iter()
                .filter(|c| c.workload == name && c.connections == connections)
                .filter_map(|c| c.capacity.as_ref())
                .all(|k| {
                    k.ci_coverage >= 0.95
                        && k.ops_per_s > 0.0
                        && (k.ci[1] - k.ci[0]) / 2.0 / k.ops_per_s <= target
                })
        }
    }

    /// One line per search for the progress display.
    fn capacity_line(&self, results: &Results, w: usize, connections: usize, s: usize) -> String {
        let name = self.configs[w].name();
        let parts: Vec<String> = results
            .cells
            .iter()
            .filter(|c| c.workload == name && c.connections == connections)
            .filter_map(|c| {
                let k = c.capacity.as_ref()?;
                let last = k.searches.last()?;
                Some(format!(
                    "{} {}",
                    c.variant,
                    last.capacity
                        .map_or("none".to_string(), |x| format!("{x:.0}/s"))
                ))
            })
            .collect();
        format!(
            "capacity search {} of {name} x{connections}: {}",
            s + 1,
            parts.join(", ")
        )
    }

    /// One trial: an open-loop run at `rate` on a fresh server, kept in the cell's
    /// capacity record (not among its runs). None when interrupted.
    #[allow(clippy::too_many_arguments)]
    fn trial(
        &self,
        results: &mut Results,
        observer: &dyn Observer,
        slot: &Slot,
        search: usize,
        rate: f64,
        limit: &Limit,
        index: &mut usize,
    ) -> Option<Trial> {
        if self.cancel.load(Ordering::SeqCst) {
            return None;
        }
        let at = self.cell_index(results, slot);
        let n = results.cells[at]
            .capacity
            .as_ref()
            .map_or(0, |k| k.trials.len());
        let slot = Slot {
            round: n,
            ..slot.clone()
        };
        let label = format!(
            "{} {} x{} trial {} at {rate:.0}/s",
            self.variants[slot.variant].name,
            self.configs[slot.workload].name(),
            slot.connections,
            n + 1
        );
        let live = Arc::new(Live::default());
        observer.run_started(*index, &label, &live);
        let done = crate::one_run::execute_at(self, &slot, &live, rate);
        observer.run_finished(*index, &label, &done.run);
        *index += 1;
        if self.cancel.load(Ordering::SeqCst) {
            return None;
        }
        self.record_findings(results, &slot, done.findings);
        let t = to_trial(&done.run, rate, results.cells[at].capacity.as_ref());
        let pass = limit.passes(&t);
        if let Some(k) = results.cells[at].capacity.as_mut() {
            k.trials.push(CapacityTrial {
                search,
                offered: rate,
                achieved: done.run.ops_per_s,
                p50: done.run.latency_us.p50,
                p99: done.run.latency_us.p99,
                p999: done.run.latency_us.p999,
                pass,
                valid: done.run.valid,
                client_bound: done.run.client_bound,
                invalid_reason: done.run.invalid_reason.clone(),
            });
        }
        if let Err(e) = write_results(self.folder, results) {
            self.stop_on_write_error(e);
            return None;
        }
        Some(t)
    }
}

/// What the search reads of a trial's run.
fn to_trial(run: &Run, rate: f64, k: Option<&CapacityRecord>) -> Trial {
    Trial {
        offered: rate,
        achieved: run.ops_per_s,
        latency_us: percentile(&run.latency_us, k.map_or(99.0, |k| k.percentile)),
        valid: run.valid,
    }
}
