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

use crate::capacity_figures::{precision_of, summarize, MAX_SEARCHES, MAX_TRIALS};
use crate::context::{Context, Launch};
use crate::folder::write_results;
use crate::observer::Observer;
use crate::schedule::{Rounds, Slot};
use bakeoff_capacity::{Limit, Next, Search, Settings, Trial};
use bakeoff_engine::Live;
use bakeoff_plan::Slo;
use bakeoff_report::model::{CapacityRecord, CapacitySearch, CapacityTrial, Latency, Results, Run};
use std::sync::atomic::Ordering;
use std::sync::Arc;

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

/// A variant's search at one point, and the trials its cell has had.
struct Searching {
    variant: usize,
    search: Search,
    done: bool,
}

/// The capacity searches of every point in `points` (after the rounds); the reason they
/// stopped, or None when interrupted.
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
    for &point in points {
        let left = stop
            .budget
            .map(|b| b.as_secs_f64() - ctx.since(started).as_secs_f64());
        why = ctx.point_capacity(results, observer, point, stop, left, index)?;
    }
    Some(why)
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
        let settings = Settings::new(precision_of(e), MAX_TRIALS);
        let started = self.launcher.now();
        let indices: Vec<usize> = (0..self.variants.len()).collect();
        let mut order = Rounds::new(e.plan.seed ^ 0x6361_7061_6369_7479);
        // The closed-loop peak of each variant: a run of the rounds' kind, in its cell.
        for slot in order.next(0, &[(w, connections)], &indices) {
            self.peak_run(&slot, *index, results, observer)?;
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
            let elapsed = self.since(started).as_secs_f64();
            if s > 0 && budget_s.is_some_and(|b| elapsed + last_search_s > b) {
                return Some("budget".into());
            }
            let began = self.launcher.now();
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
            last_search_s = self.since(began).as_secs_f64();
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
            self.comparisons_precise(results, target, |k| {
                k.is_capacity() && k.workload == name && k.connections == connections
            })
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
                search,
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
