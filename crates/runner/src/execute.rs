//! The measured rounds: round after round in a seeded order, until the plan's stopping
//! rule says so (precision per point, budget, repetitions); each slot is one run
//! (`one_run.rs`), recorded into its cell, the statistics recomputed and the results
//! folder rewritten after every run. A fault marks that run invalid and the experiment
//! goes on. With `[measure] profile`, the profiling runs follow (`profiling.rs`).

use crate::analyze;
use crate::context::{Context, Launch};
use crate::folder::write_results;
use crate::observer::{Observer, RoundStatus};
use crate::schedule::{round_fits, Rounds, Slot};
use bakeoff_engine::Live;
use bakeoff_report::model::{Cell, Results};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

/// Runs rounds until the plan's stopping rule says so (see `bakeoff_plan::Stopping`),
/// then the profiling runs; false if interrupted.
pub fn run_all(ctx: &Context<'_>, results: &mut Results, observer: &dyn Observer) -> bool {
    ctx.rounds(results, observer)
}

impl Context<'_> {
    /// Runs rounds until the plan's stopping rule says so (see `bakeoff_plan::Stopping`):
    /// a point (workload x connections) whose comparisons all reached the precision target
    /// gets no more rounds; a round starts only if it fits in what is left of the budget.
    /// False if interrupted.
    fn rounds(&self, results: &mut Results, observer: &dyn Observer) -> bool {
        let e = &self.loaded.experiment;
        let mut stop = e.plan.stopping();
        if observer.own_rule() {
            stop.precision = None;
        }
        let every: Vec<(usize, usize)> = self
            .configs
            .iter()
            .enumerate()
            .flat_map(|(i, w)| w.connections().iter().map(move |c| (i, *c)))
            .collect();
        let indices: Vec<usize> = (0..self.variants.len()).collect();
        results.cells = self.empty_cells(&every);
        // Points with an `slo` search their capacities after the rounds (capacity.rs).
        let (searched, points): (Vec<_>, Vec<_>) = every.iter().partition(|(w, _)| {
            crate::capacity::slo_named(self.loaded, self.configs[*w].name()).is_some()
        });
        let guess = self.seconds_per_run();
        let per_round = points.len() * indices.len();
        // Mode both: the instruction-count runs beside the rounds (counting.rs).
        let mut counting = crate::counting::Counting::new(self, &stop);
        observer.runs_started(
            expected_rounds(&stop, guess * per_round as f64) * per_round
                + counting.as_ref().map_or(0, |c| c.expected(per_round)),
            guess,
        );
        let mut order = Rounds::new(e.plan.seed);
        let started = self.launcher.now();
        let (mut index, mut round) = (0, 0);
        let stopped_by: String = loop {
            if round >= stop.max_rounds.unwrap_or(bakeoff_stats::MAX_ROUNDS) {
                break "repetitions".into();
            }
            let open: Vec<(usize, usize)> = points
                .iter()
                .copied()
                .filter(|p| !self.point_done(results, *p, round, &stop))
                .collect();
            let counted = match &counting {
                Some(c) => c.open(self, results, &points, &stop),
                None => Vec::new(),
            };
            if open.is_empty() && counted.is_empty() {
                break "precision".into();
            }
            let next = self.round_estimate(results, &open, guess)
                + counting
                    .as_ref()
                    .map_or(0.0, |c| c.estimate(self, results, &counted));
            let budget = stop.budget.map(|b| b.as_secs_f64());
            if !round_fits(round, self.since(started).as_secs_f64(), next, budget) {
                break "budget".into();
            }
            let slots = order.next(round, &open, &indices);
            results
                .plan
                .rounds
                .push(slots.iter().map(|s| self.label(s)).collect());
            for slot in &slots {
                if !self.run_slot(slot, index, results, observer) {
                    return false;
                }
                index += 1;
            }
            if let Some(c) = counting.as_mut().filter(|_| !counted.is_empty()) {
                let slots = c.next(&counted, &indices);
                let sub = c.context(self);
                if let Some(round) = results.plan.rounds.last_mut() {
                    round.extend(slots.iter().map(|s| sub.label(s)));
                }
                for slot in &slots {
                    if !sub.run_slot(slot, index, results, observer) {
                        crate::counting::Counting::hand_back(sub, self);
                        return false;
                    }
                    index += 1;
                }
                crate::counting::Counting::hand_back(sub, self);
            }
            round += 1;
            results.rounds_s = Some(self.since(started).as_secs_f64());
            if round >= stop.min_rounds {
                crate::forecast::update(results);
            }
            observer.round_finished(&self.status(results, round, started, &stop, &points));
            if let Some(why) = observer.enough(results) {
                break why;
            }
        };
        let stopped_by = if searched.is_empty() {
            stopped_by
        } else {
            let mut left = stop;
            left.budget = stop.budget.map(|b| b.saturating_sub(self.since(started)));
            match crate::capacity::search(self, results, observer, &searched, &left, &mut index) {
                Some(why) if points.is_empty() => why,
                Some(_) => stopped_by,
                None => return false,
            }
        };
        results.stopped_by = Some(stopped_by.clone());
        results.rounds_s = Some(self.since(started).as_secs_f64());
        for c in results.cells.iter_mut().filter(|c| c.stop_reason.is_none()) {
            c.stop_reason = Some(stopped_by.clone());
        }
        if let Err(e) = write_results(self.folder, results) {
            self.stop_on_write_error(e);
            return false;
        }
        if self.probes.profile {
            return crate::profiling::profile_cells(self, results, &points, observer);
        }
        true
    }

    /// One planned run, recorded and analyzed; false if interrupted.
    fn run_slot(
        &self,
        slot: &Slot,
        index: usize,
        results: &mut Results,
        observer: &dyn Observer,
    ) -> bool {
        if self.cancel.load(Ordering::SeqCst) {
            return false;
        }
        let label = self.label(slot);
        let cell_at = self.cell_index(results, slot);
        if let Some(reason) = self.configs[slot.workload].skip(results, cell_at) {
            results.cells[cell_at].stop_reason = Some(reason);
            return true;
        }
        let live = Arc::new(Live::default());
        observer.run_started(index, &label, &live);
        let done = self.launch(slot, &live, Launch::Measured);
        let run = done.run;
        observer.run_finished(index, &label, &run);
        self.record_findings(results, slot, done.findings);
        crate::settings::record(self, results, slot, done.settings, run.valid);
        let mut run = run;
        crate::server_changes::keep_counters(results, self.variants[slot.variant].record, &mut run);
        let interrupted = self.cancel.load(Ordering::SeqCst);
        if !interrupted {
            results.cells[cell_at].runs.push(run);
        }
        analyze(results);
        // The first failed write stops the experiment: runs measured after it would be
        // lost with the rest (a full disk is found now, not at the end).
        if let Err(e) = write_results(self.folder, results) {
            self.stop_on_write_error(e);
            return false;
        }
        // A host lost for good ends the experiment after this (invalid) run.
        !interrupted && self.remote.gone().is_none()
    }

    /// Whether a point needs no more rounds: every comparison there (or, with a single
    /// variant, the cell itself) has reached the precision target, after the minimum
    /// rounds. Marks its cells "precision" when so.
    fn point_done(
        &self,
        results: &mut Results,
        (w, connections): (usize, usize),
        round: usize,
        stop: &bakeoff_plan::Stopping,
    ) -> bool {
        let Some(target) = stop.precision else {
            return false;
        };
        if round < stop.min_rounds {
            return false;
        }
        let name = self.configs[w].name();
        let at = |workload: &str, c: usize| workload == name && c == connections;
        let done = if self.variants.len() > 1 {
            // In mode both, the instruction-count records stop their own runs (counting.rs).
            let both = self.loaded.experiment.plan.mode == bakeoff_plan::Mode::Both;
            self.comparisons_precise(results, target, |k| {
                at(&k.workload, k.connections) && !(both && k.is_instructions())
            })
        } else {
            results
                .cells
                .iter()
                .filter(|c| at(&c.workload, c.connections))
                .all(|c| {
                    c.valid_runs >= 2
                        && c.median_ops_per_s > 0.0
                        && (c.ci95[1] - c.ci95[0]) / 2.0 / c.median_ops_per_s <= target
                })
        };
        if done {
            for c in results
                .cells
                .iter_mut()
                .filter(|c| at(&c.workload, c.connections))
            {
                c.stop_reason = Some("precision".into());
            }
        }
        done
    }

    /// Seconds the next round over `open` points should take, from the runs so far (the
    /// plan's guess before there are any).
    fn round_estimate(&self, results: &Results, open: &[(usize, usize)], guess: f64) -> f64 {
        open.iter()
            .map(|&(w, c)| {
                let measured = crate::analyze::round_seconds(results, self.configs[w].name(), c);
                if measured > 0.0 {
                    measured
                } else {
                    guess * self.variants.len() as f64
                }
            })
            .sum()
    }

    /// Where the experiment stands after a round, for the progress display.
    fn status(
        &self,
        results: &Results,
        rounds: usize,
        started: Instant,
        stop: &bakeoff_plan::Stopping,
        points: &[(usize, usize)],
    ) -> RoundStatus {
        let elapsed = self.since(started);
        let widest = results
            .comparisons
            .iter()
            .filter_map(|k| k.detectable.map(|d| (d, k)))
            .max_by(|a, b| a.0.total_cmp(&b.0))
            .map(|(d, k)| {
                (
                    d,
                    format!(
                        "{} x{} {}{}",
                        k.workload,
                        k.connections,
                        k.variant,
                        if k.is_instructions() {
                            " instructions"
                        } else {
                            ""
                        }
                    ),
                )
            });
        let next = self.round_estimate(results, points, self.seconds_per_run());
        let runs_left = match (stop.budget, stop.max_rounds) {
            (Some(b), cap) => {
                let left = b.saturating_sub(elapsed).as_secs_f64();
                let fit = (left / next.max(0.001)).floor() as usize;
                cap.map_or(fit, |n| fit.min(n.saturating_sub(rounds)))
            }
            (None, Some(n)) => n.saturating_sub(rounds),
            (None, None) => 0,
        } * points.len()
            * self.variants.len();
        RoundStatus {
            rounds,
            elapsed,
            budget_left: stop.budget.map(|b| b.saturating_sub(elapsed)),
            widest,
            target: stop.precision,
            runs_left,
            forecasts: results
                .comparisons
                .iter()
                .filter_map(|k| {
                    let at = format!("{} x{} {}", k.workload, k.connections, k.variant);
                    k.forecast.clone().map(|f| (at, f))
                })
                .collect(),
        }
    }

    fn empty_cells(&self, points: &[(usize, usize)]) -> Vec<Cell> {
        let mut cells = Vec::new();
        for &(w, connections) in points {
            for v in self.variants {
                let mut cell = Cell::new(self.configs[w].name(), &v.name, connections, Vec::new());
                self.configs[w].plan_cell(&mut cell);
                cells.push(cell);
            }
        }
        cells
    }
}

/// Rounds the plan should run, before any has: `repetitions`, or what fits in the budget
/// at the guessed round time (capped by `repetitions`).
fn expected_rounds(stop: &bakeoff_plan::Stopping, round_s: f64) -> usize {
    match (stop.max_rounds, stop.budget) {
        (Some(n), None) => n,
        (cap, Some(b)) => {
            let fit = (b.as_secs_f64() / round_s.max(0.001)).ceil() as usize;
            cap.unwrap_or(usize::MAX).min(fit.max(1))
        }
        (None, None) => 1,
    }
}
