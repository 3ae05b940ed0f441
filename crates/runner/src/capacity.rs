//! Capacity at a latency limit (`[[workload]] slo`): per point, a closed-loop run of each
//! variant (their peaks' geometric mean is where the search starts), then the paired
//! study of bakeoff-capacity (`paired::Paired`, driven by bakeoff-study's `drive`) whose
//! probes are short open-loop runs on a fresh server, through the same one-run path as the
//! rounds with the offered rate overridden (`RunContext::rate`; the kind says it honours
//! one, `KindSpec::open_loop`). [`Trials`] is the study's `Runs`: it runs each probe and
//! keeps it among the cell's trials.
//!
//! Every variant is bracketed at the same rates, then rounds bisect a shared window whose
//! cells move by a random share every round, each variant probed once per step in a
//! shuffled order (while their answers agree, at the same rate): each round places every
//! variant's capacity in a cell, and the rounds are the searches the comparisons pair by
//! index (`capacity_figures::comparisons`, used by `analyze`). The study plans its rounds
//! from the seconds a trial takes and the point's share of the budget, and stops at
//! `repetitions`, the budget, or once every capacity comparison at the point reaches
//! `[plan] precision`.

use crate::capacity_figures::{enough, precision_of, searches_of, summarize, MAX_SEARCHES};
use crate::context::{Context, Launch};
use crate::folder::write_results;
use crate::observer::Observer;
use crate::schedule::{Rounds, Slot};
use bakeoff_capacity::paired::{Measured, Paired, Plan, Probe};
use bakeoff_capacity::{Limit, Trial};
use bakeoff_engine::Live;
use bakeoff_plan::Slo;
use bakeoff_report::model::{CapacityRecord, CapacityTrial, Latency, Results, Run};
use bakeoff_study::Runs;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

/// The `slo` of the plan's workload named `name`.
pub(crate) fn slo_named<'a>(loaded: &'a bakeoff_plan::Loaded, name: &str) -> Option<&'a Slo> {
    loaded
        .experiment
        .workloads
        .iter()
        .find(|w| !w.train_only && w.display_name() == name)
        .and_then(|w| w.slo.as_ref())
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

/// The capacity searches of every point in `points` (after the rounds), each point given
/// an equal share of what is left of the budget; the reason they stopped, or None when
/// interrupted.
pub(crate) fn search(
    ctx: &Context<'_>,
    results: &mut Results,
    observer: &dyn Observer,
    points: &[(usize, usize)],
    stop: &bakeoff_plan::Stopping,
    index: &mut usize,
) -> Option<String> {
    let started = ctx.launcher.now();
    let mut why = String::from("precision");
    for (i, &point) in points.iter().enumerate() {
        let share = stop.budget.map(|b| {
            (b.as_secs_f64() - ctx.since(started).as_secs_f64()).max(0.0)
                / (points.len() - i) as f64
        });
        why = ctx.point_capacity(results, observer, point, stop, share, index)?;
    }
    Some(why)
}

/// The study's `Runs`: each probe a trial of its variant at its rate, kept in the cell's
/// capacity record; the seconds it reports are the clock's since the previous probe
/// ended (the trial and the results written after it).
struct Trials<'c, 'r> {
    ctx: &'c Context<'c>,
    results: &'r mut Results,
    observer: &'c dyn Observer,
    point: (usize, usize),
    limit: Limit,
    index: &'r mut usize,
    last: Instant,
}

/// A probe that could not run: the experiment was interrupted (or its results could not
/// be written).
struct Interrupted;

impl Runs<Paired<'_>> for Trials<'_, '_> {
    type Error = Interrupted;

    fn run(&mut self, probe: &Probe) -> Result<Measured, Interrupted> {
        let slot = Slot {
            round: 0,
            workload: self.point.0,
            connections: self.point.1,
            variant: probe.variant,
        };
        let trial = self
            .ctx
            .trial(
                self.results,
                self.observer,
                &slot,
                probe,
                &self.limit,
                self.index,
            )
            .ok_or(Interrupted)?;
        let now = self.ctx.launcher.now();
        let seconds = now.saturating_duration_since(self.last).as_secs_f64();
        self.last = now;
        Ok(Measured { trial, seconds })
    }
}

impl Context<'_> {
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
        let started = self.launcher.now();
        let indices: Vec<usize> = (0..self.variants.len()).collect();
        let mut order = Rounds::new(e.plan.seed ^ 0x6361_7061_6369_7479);
        // The closed-loop peak of each variant: a run of the rounds' kind, in its cell.
        for slot in order.next(0, &[(w, connections)], &indices) {
            self.peak_run(&slot, *index, results, observer)?;
            *index += 1;
        }
        let cells: Vec<usize> = indices
            .iter()
            .map(|&v| {
                let slot = Slot {
                    round: 0,
                    workload: w,
                    connections,
                    variant: v,
                };
                self.cell_index(results, &slot)
            })
            .collect();
        let peaks: Vec<Option<f64>> = cells
            .iter()
            .map(|&at| {
                let c = &results.cells[at];
                c.runs.iter().find(|x| x.valid).map(|x| x.ops_per_s)
            })
            .collect();
        for (&at, peak) in cells.iter().zip(&peaks) {
            results.cells[at].capacity = Some(CapacityRecord {
                percentile: slo.percentile,
                limit_us: limit.latency_us,
                peak_ops_per_s: *peak,
                ..CapacityRecord::default()
            });
        }
        let valid: Vec<f64> = peaks
            .iter()
            .flatten()
            .copied()
            .filter(|p| *p > 0.0)
            .collect();
        if valid.is_empty() {
            return Some("no valid closed-loop run to start from".into());
        }
        let anchor = (valid.iter().map(|p| p.ln()).sum::<f64>() / valid.len() as f64).exp();
        let (lowest, highest) = valid.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), p| {
            (lo.min(*p), hi.max(*p))
        });
        let baseline = self
            .variants
            .iter()
            .position(|v| v.name == results.plan.baseline)
            .unwrap_or(0);
        let rule = results.rule(bakeoff_stats::Direction::HigherIsBetter);
        let target = stop.precision;
        let plan = Plan {
            limit,
            variants: self.variants.len(),
            anchor,
            floor: lowest * bakeoff_capacity::FLOOR,
            ceiling: highest * bakeoff_capacity::CEILING,
            precision: precision_of(e),
            budget_s: budget_s.map(|b| (b - self.since(started).as_secs_f64()).max(0.0)),
            max_rounds: stop.max_rounds.unwrap_or(MAX_SEARCHES).min(MAX_SEARCHES),
            min_rounds: stop.min_rounds,
            seed: e.plan.seed,
        };
        let study = Paired::new(plan, |rounds| {
            target.is_some_and(|t| enough(rounds, baseline, &rule, t))
        });
        let mut trials = Trials {
            ctx: self,
            results,
            observer,
            point: (w, connections),
            limit,
            index,
            last: self.launcher.now(),
        };
        let answer = bakeoff_study::drive(study, &mut trials).ok()?;
        for (v, &at) in cells.iter().enumerate() {
            if let Some(k) = results.cells[at].capacity.as_mut() {
                k.searches = searches_of(&answer, v);
                summarize(k);
            }
        }
        crate::analyze(results);
        if let Err(e) = write_results(self.folder, results) {
            self.stop_on_write_error(e);
            return None;
        }
        observer.notice(&self.capacity_line(results, w, connections, &answer));
        Some(answer.stop.as_str().into())
    }

    /// The point's line for the progress display: each variant's capacity, the rounds
    /// run of those planned, the seconds spent.
    fn capacity_line(
        &self,
        results: &Results,
        w: usize,
        connections: usize,
        answer: &bakeoff_capacity::paired::Answer,
    ) -> String {
        let name = self.configs[w].name();
        let parts: Vec<String> = results
            .cells
            .iter()
            .filter(|c| c.workload == name && c.connections == connections)
            .filter_map(|c| {
                let k = c.capacity.as_ref()?;
                Some(format!("{} {:.0}/s", c.variant, k.ops_per_s))
            })
            .collect();
        format!(
            "capacity of {name} x{connections}: {}; {} round(s){} in {:.0} s ({} trials), stopped by {}",
            parts.join(", "),
            answer.rounds.len(),
            answer
                .planned_rounds
                .map_or(String::new(), |p| format!(" of {p} planned")),
            answer.spent_s,
            answer.trials,
            answer.stop.as_str()
        )
    }

    /// The closed-loop run a search starts from, kept among the cell's runs (as the
    /// rounds keep theirs); None when interrupted.
    fn peak_run(
        &self,
        slot: &Slot,
        index: usize,
        results: &mut Results,
        observer: &dyn Observer,
    ) -> Option<()> {
        if self.cancel.load(Ordering::SeqCst) {
            return None;
        }
        let label = format!("{} peak", self.label(slot));
        let live = Arc::new(Live::default());
        observer.run_started(index, &label, &live);
        let done = self.launch(slot, &live, Launch::Measured);
        observer.run_finished(index, &label, &done.run);
        if self.cancel.load(Ordering::SeqCst) {
            return None;
        }
        self.record_findings(results, slot, done.findings);
        crate::settings::record(self, results, slot, done.settings, done.run.valid);
        let at = self.cell_index(results, slot);
        results.cells[at].runs.push(done.run);
        crate::analyze(results);
        if let Err(e) = write_results(self.folder, results) {
            self.stop_on_write_error(e);
            return None;
        }
        Some(())
    }

    /// One trial: an open-loop run at the probe's rate on a fresh server, kept in the
    /// cell's capacity record (not among its runs). None when interrupted.
    fn trial(
        &self,
        results: &mut Results,
        observer: &dyn Observer,
        slot: &Slot,
        probe: &Probe,
        limit: &Limit,
        index: &mut usize,
    ) -> Option<Trial> {
        if self.cancel.load(Ordering::SeqCst) {
            return None;
        }
        let rate = probe.rate;
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
        let done = self.launch(&slot, &live, Launch::At(rate));
        observer.run_finished(*index, &label, &done.run);
        *index += 1;
        if self.cancel.load(Ordering::SeqCst) {
            return None;
        }
        self.record_findings(results, &slot, done.findings);
        crate::settings::record(self, results, &slot, done.settings, done.run.valid);
        let t = to_trial(&done.run, rate, results.cells[at].capacity.as_ref());
        let pass = limit.passes(&t);
        if let Some(k) = results.cells[at].capacity.as_mut() {
            k.trials.push(CapacityTrial {
                search: probe.round.unwrap_or(0),
                bracket: probe.round.is_none(),
                offered: rate,
                achieved: done.run.ops_per_s,
                p50: done.run.latency_us.p50,
                p99: done.run.latency_us.p99,
                p999: done.run.latency_us.p999,
                pass,
                valid: done.run.valid,
                client_bound: load_set_the_pace(&done.run),
                machine_busy: done.run.machine_disturbance().is_some(),
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

/// Whether the load, not the server, set a trial's pace: its threads saturated by their
/// own work. Not the engine's open-loop `client_bound`, which also counts a rate the server
/// could not answer (a failing trial above the capacity, which is the server's).
fn load_set_the_pace(run: &Run) -> bool {
    bakeoff_engine::load_set_the_pace(run.client_cpu_s, run.client_threads, run.elapsed_s)
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
