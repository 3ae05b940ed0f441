//! The instruction-count runs of `mode = "both"`: beside the wall-clock rounds, rounds of
//! runs with the server under callgrind for `[plan] ops` operations, one per variant and
//! point in a seeded shuffled order (so they pair by their own round, as the wall-clock
//! runs do), as many as their own comparisons need: at least the plan's fewest rounds,
//! then more while a comparison of instruction counts is wider than the precision target
//! or has too few pairs to be decided in the experiment's false-discovery-rate family, up
//! to `MAX_INSTRUCTION_RUNS`. Instruction counts repeat closely, so that is few runs.
//! The rounds' budget covers them: `execute.rs` adds their time to each round's estimate.

use crate::context::Context;
use crate::probes::ProbePlan;
use crate::schedule::{Rounds, Slot};
use bakeoff_plan::{Mode, Stopping};
use bakeoff_report::model::{ComparisonRecord, Results, MAX_INSTRUCTION_RUNS};
use std::collections::BTreeMap;
use std::sync::Mutex;

/// What an instruction-count run takes before one has run: valgrind starts a server many
/// times slower, and `ops` at callgrind's pace is guessed at a few seconds.
const GUESS_S: f64 = 8.0;

/// The instruction-count runs of one experiment in mode both: which points still need
/// them and in what order, and the probes they run with.
pub(crate) struct Counting {
    /// The experiment's probes with callgrind on and the counters and profile off (they
    /// would measure valgrind).
    probes: ProbePlan,
    order: Rounds,
    /// Instruction rounds run per point (workload, connections).
    done: BTreeMap<(usize, usize), usize>,
    /// Fewest instruction rounds per point.
    min: usize,
}

impl Counting {
    /// The plan for `ctx`'s experiment; None unless it is in mode both.
    pub(crate) fn new(ctx: &Context<'_>, stop: &Stopping) -> Option<Counting> {
        let plan = &ctx.loaded.experiment.plan;
        if plan.mode != Mode::Both {
            return None;
        }
        let mut probes = ctx.probes.clone();
        probes.instructions = true;
        probes.counters = false;
        probes.events.clear();
        probes.profile = false;
        probes.notes.clear();
        Some(Counting {
            probes,
            // A sequence of its own, so the wall-clock rounds keep the order the seed
            // gives them in mode time.
            order: Rounds::new(plan.seed ^ 0x696e_7374_7275_6374),
            done: BTreeMap::new(),
            min: stop.min_rounds.clamp(2, MAX_INSTRUCTION_RUNS),
        })
    }

    /// Runs the plan expects before any has run: the fewest rounds at every point.
    pub(crate) fn expected(&self, runs_per_round: usize) -> usize {
        self.min * runs_per_round
    }

    /// The context instruction-count runs execute in: `ctx` with these probes. Its first
    /// write error is handed back with `hand_back`.
    pub(crate) fn context<'a>(&'a self, ctx: &Context<'a>) -> Context<'a> {
        Context {
            loaded: ctx.loaded,
            opts: ctx.opts,
            folder: ctx.folder,
            configs: ctx.configs,
            variants: ctx.variants,
            data: ctx.data,
            cancel: ctx.cancel.clone(),
            probes: &self.probes,
            remote: ctx.remote,
            placement: ctx.placement,
            write_error: Mutex::new(None),
            launcher: ctx.launcher,
        }
    }

    /// Moves `sub`'s first write error (if any) to `ctx`.
    pub(crate) fn hand_back(sub: Context<'_>, ctx: &Context<'_>) {
        let lost = sub
            .write_error
            .into_inner()
            .unwrap_or_else(|p| p.into_inner());
        if let Some(e) = lost {
            let mut first = ctx.write_error.lock().unwrap_or_else(|p| p.into_inner());
            first.get_or_insert(e);
        }
    }

    /// The points among `points` that need another instruction round.
    pub(crate) fn open(
        &self,
        ctx: &Context<'_>,
        results: &Results,
        points: &[(usize, usize)],
        stop: &Stopping,
    ) -> Vec<(usize, usize)> {
        points
            .iter()
            .copied()
            .filter(|p| {
                let done = self.done.get(p).copied().unwrap_or(0);
                let name = ctx.configs[p.0].name();
                // A variant none of whose instruction runs was valid after the fewest
                // rounds (valgrind refusing the build: SIGILL on -march=native code)
                // leaves nothing to compare: no more runs there.
                let hopeless = results
                    .cells
                    .iter()
                    .filter(|c| c.workload == name && c.connections == p.1)
                    .any(|c| !c.runs.iter().any(|x| x.instruction_run && x.valid));
                done < self.min
                    || (done < MAX_INSTRUCTION_RUNS
                        && !hopeless
                        && ctx.variants.len() > 1
                        && !decidable(
                            &results.comparisons,
                            (name, p.1),
                            ctx.variants.len(),
                            stop.precision.unwrap_or(results.plan.equivalence),
                        ))
            })
            .collect()
    }

    /// Seconds the next instruction round over `open` should take.
    pub(crate) fn estimate(
        &self,
        ctx: &Context<'_>,
        results: &Results,
        open: &[(usize, usize)],
    ) -> f64 {
        open.iter()
            .map(|&(w, c)| {
                let measured =
                    crate::analyze::instruction_round_seconds(results, ctx.configs[w].name(), c);
                if measured > 0.0 {
                    measured
                } else {
                    GUESS_S * ctx.variants.len() as f64
                }
            })
            .sum()
    }

    /// The next instruction round's runs over `open`, each point's variants shuffled and
    /// numbered by that point's own instruction rounds.
    pub(crate) fn next(&mut self, open: &[(usize, usize)], variants: &[usize]) -> Vec<Slot> {
        let mut slots = Vec::new();
        for p in open {
            let round = self.done.entry(*p).or_insert(0);
            slots.extend(self.order.next(*round, &[*p], variants));
            *round += 1;
        }
        slots
    }
}

/// Whether every instruction-count comparison at a point (workload, connections) is
/// precise enough and has enough pairs to be decided: its CI within `target`, and its
/// smallest possible p-value small enough to pass the false-discovery-rate control over
/// all `comparisons` (Bonferroni's bound, the strictest that control can be: a count of
/// runs, never a look at the p-value itself). `variants`: the variants at the point.
fn decidable(
    comparisons: &[ComparisonRecord],
    (workload, connections): (&str, usize),
    variants: usize,
    target: f64,
) -> bool {
    let family = comparisons.len().max(1) as f64;
    let alpha = bakeoff_stats::Rule::new(bakeoff_stats::Direction::HigherIsBetter).alpha;
    let ks: Vec<_> = comparisons
        .iter()
        .filter(|k| k.is_instructions() && k.workload == workload && k.connections == connections)
        .collect();
    ks.len() + 1 == variants
        && ks
            .iter()
            .all(|k| k.detectable.is_some_and(|d| d <= target) && k.smallest_p * family <= alpha)
}

#[cfg(test)]
mod tests {
    use super::*;
    use bakeoff_report::model::{INSTRUCTIONS, THROUGHPUT};

    fn record(metric: &str, detectable: f64, smallest_p: f64) -> ComparisonRecord {
        ComparisonRecord {
            workload: "kv".into(),
            connections: 8,
            variant: "b".into(),
            baseline: "a".into(),
            cross_kind: false,
            detectable: Some(detectable),
            smallest_p,
            metric: metric.into(),
            ..ComparisonRecord::default()
        }
    }

    #[test]
    fn a_point_is_decidable_once_precise_with_enough_pairs_for_the_family() {
        let at = ("kv", 8);
        // 6 pairs: smallest p 2/64; with a throughput record too (family 2), not enough.
        let mut ks = vec![
            record(THROUGHPUT, 0.05, 0.03125),
            record(INSTRUCTIONS, 0.001, 0.03125),
        ];
        assert!(!decidable(&ks, at, 2, 0.01));
        // 7 pairs: 2/128 x 2 < 0.05.
        ks[1].smallest_p = 2.0 / 128.0;
        assert!(decidable(&ks, at, 2, 0.01));
        // Precise enough only within the target.
        ks[1].detectable = Some(0.02);
        assert!(!decidable(&ks, at, 2, 0.01));
        assert!(decidable(&ks, at, 2, 0.05));
        // A variant without its instruction record yet: not decidable.
        assert!(!decidable(&ks, at, 3, 0.05));
        ks.pop();
        assert!(!decidable(&ks, at, 2, 0.05));
    }
}
