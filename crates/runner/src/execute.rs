//! The measured runs: for each planned slot, a fresh sandbox is started, the workload runs
//! (preload, warmup, measure), the server's usage is sampled around the measured window,
//! the sandbox is stopped and its logs kept. A fault marks that run invalid and the
//! experiment goes on; results are rewritten after every run.

use crate::data::{self, DataStore};
use crate::folder::{safe_name, write_results, Folder};
use crate::prepare::{ReadyVariant, Workloads};
use crate::probes::{self, ProbeHooks, ProbePlan};
use crate::schedule::{round_fits, Rounds, Slot};
use crate::{analyze, Observer, Options, RoundStatus};
use bakeoff_load::{Live, Measure, Phases, RunRecord};
use bakeoff_plan::{Loaded, MeasureFor};
use bakeoff_probe::{findings, profile};
use bakeoff_report::model::{Cell, Latency, MemoryError, Results, Run};
use bakeoff_sandbox::{Sandbox, SandboxSpec, Usage};
use bakeoff_workloads::workload::latency;
use bakeoff_workloads::{Outcome, RunContext, Server};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub struct Context<'a> {
    pub loaded: &'a Loaded,
    pub opts: &'a Options,
    pub folder: &'a Folder,
    pub configs: &'a Workloads,
    pub variants: &'a [ReadyVariant],
    pub data: &'a DataStore,
    pub cancel: Arc<AtomicBool>,
    pub probes: &'a ProbePlan,
}

/// One run and what came with it besides the figures.
struct Executed {
    run: Run,
    /// The analyzed profile, when this was a profiling run.
    profile: Option<profile::Profile>,
    /// Sanitizer or memcheck reports from the server's stderr.
    findings: Vec<MemoryError>,
}

impl Context<'_> {
    /// Runs rounds until the plan's stopping rule says so (see `bakeoff_plan::Stopping`):
    /// a point (workload x connections) whose comparisons all reached the precision target
    /// gets no more rounds; a round starts only if it fits in what is left of the budget.
    /// False if interrupted.
    pub fn run_all(&self, results: &mut Results, observer: &dyn Observer) -> bool {
        let e = &self.loaded.experiment;
        let stop = e.plan.stopping();
        let points: Vec<(usize, usize)> = self
            .configs
            .iter()
            .enumerate()
            .flat_map(|(i, w)| w.connections().iter().map(move |c| (i, *c)))
            .collect();
        let indices: Vec<usize> = (0..self.variants.len()).collect();
        results.cells = self.empty_cells(&points);
        let guess = self.seconds_per_run();
        let per_round = points.len() * indices.len();
        observer.runs_started(
            expected_rounds(&stop, guess * per_round as f64) * per_round,
            guess,
        );
        let mut order = Rounds::new(e.plan.seed);
        let started = Instant::now();
        let (mut index, mut round) = (0, 0);
        let stopped_by = loop {
            if stop.max_rounds.is_some_and(|n| round >= n) {
                break "repetitions";
            }
            let open: Vec<(usize, usize)> = points
                .iter()
                .copied()
                .filter(|p| !self.point_done(results, *p, round, &stop))
                .collect();
            if open.is_empty() {
                break "precision";
            }
            let next = self.round_estimate(results, &open, guess);
            let budget = stop.budget.map(|b| b.as_secs_f64());
            if !round_fits(round, started.elapsed().as_secs_f64(), next, budget) {
                break "budget";
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
            round += 1;
            results.rounds_s = Some(started.elapsed().as_secs_f64());
            observer.round_finished(&self.status(results, round, started, &stop, &points));
        };
        results.stopped_by = Some(stopped_by.into());
        results.rounds_s = Some(started.elapsed().as_secs_f64());
        for c in results.cells.iter_mut().filter(|c| c.stop_reason.is_none()) {
            c.stop_reason = Some(stopped_by.into());
        }
        let _ = write_results(self.folder, results);
        if self.probes.profile {
            return self.profile_cells(results, &points, observer);
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
        let done = self.execute(slot, &label, &live, false);
        let run = done.run;
        observer.run_finished(index, &label, &run);
        self.record_findings(results, slot, done.findings);
        let interrupted = self.cancel.load(Ordering::SeqCst);
        if !interrupted {
            results.cells[cell_at].runs.push(run);
        }
        analyze(results);
        // A write failure here is not fatal: the next run tries again, and the
        // final write reports it.
        let _ = write_results(self.folder, results);
        !interrupted
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
            let ks: Vec<_> = results
                .comparisons
                .iter()
                .filter(|k| at(&k.workload, k.connections))
                .collect();
            ks.len() + 1 == self.variants.len()
                && ks.iter().all(|k| k.detectable.is_some_and(|d| d <= target))
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
        let elapsed = started.elapsed();
        let widest = results
            .comparisons
            .iter()
            .filter_map(|k| k.detectable.map(|d| (d, k)))
            .max_by(|a, b| a.0.total_cmp(&b.0))
            .map(|(d, k)| {
                (
                    d,
                    format!("{} x{} {}", k.workload, k.connections, k.variant),
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
        }
    }

    /// One extra run per cell under perf record, after the measured rounds; its figures
    /// never enter the statistics (recording costs the server a little).
    fn profile_cells(
        &self,
        results: &mut Results,
        points: &[(usize, usize)],
        observer: &dyn Observer,
    ) -> bool {
        let mut kept: HashMap<(usize, usize, usize), (profile::Profile, u64)> = HashMap::new();
        let total = points.len() * self.variants.len();
        observer.runs_started(total, self.seconds_per_run());
        let mut i = 0;
        for &(workload, connections) in points {
            for variant in 0..self.variants.len() {
                if self.cancel.load(Ordering::SeqCst) {
                    return false;
                }
                let slot = Slot {
                    round: results.plan.rounds.len(),
                    workload,
                    connections,
                    variant,
                };
                let label = format!("{} (profile)", self.label(&slot));
                let live = Arc::new(Live::default());
                observer.run_started(i, &label, &live);
                let done = self.execute(&slot, &label, &live, true);
                observer.run_finished(i, &label, &done.run);
                i += 1;
                self.record_findings(results, &slot, done.findings);
                let at = self.cell_index(results, &slot);
                match done.profile {
                    Some(p) => {
                        let name = format!(
                            "{}-{}-x{connections}",
                            self.variants[variant].name,
                            self.configs[workload].name()
                        );
                        let file = format!("profiles/{}.svg", safe_name(&name));
                        let svg = profile::flamegraph(&p.folded, &label);
                        let written = svg.and_then(|b| self.folder.write(&file, &b));
                        let path = if written.is_ok() { file } else { String::new() };
                        results.cells[at].profile =
                            Some(probes::profile_record(&p, path, slot.round));
                        kept.insert((workload, connections, variant), (p, done.run.ops));
                    }
                    None => results.notes.push(format!(
                        "{label}: no profile ({})",
                        done.run
                            .invalid_reason
                            .as_deref()
                            .unwrap_or("perf record failed")
                    )),
                }
                let _ = write_results(self.folder, results);
            }
        }
        self.profile_diffs(results, &kept);
        true
    }

    /// Each profiled cell against the baseline variant's profile of the same point.
    fn profile_diffs(
        &self,
        results: &mut Results,
        kept: &HashMap<(usize, usize, usize), (profile::Profile, u64)>,
    ) {
        let baseline = &results.plan.baseline;
        let Some(b) = self.variants.iter().position(|v| &v.name == baseline) else {
            return;
        };
        for (&(w, c, v), (p, ops)) in kept {
            let Some((bp, bops)) = kept.get(&(w, c, b)).filter(|_| v != b) else {
                continue;
            };
            let slot = Slot {
                round: 0,
                workload: w,
                connections: c,
                variant: v,
            };
            let at = self.cell_index(results, &slot);
            if let Some(rec) = results.cells[at].profile.as_mut() {
                rec.diff = probes::diff_records(bp, *bops, p, *ops);
            }
        }
    }

    /// Memory-error reports go to the variant; any one fails its verification.
    fn record_findings(&self, results: &mut Results, slot: &Slot, found: Vec<MemoryError>) {
        let at = self.variants[slot.variant].record;
        if let Some(v) = results.variants.get_mut(at) {
            for f in found {
                let seen = v
                    .memory_errors
                    .iter()
                    .any(|g| g.kind == f.kind && g.stack.first() == f.stack.first());
                if !seen {
                    v.memory_errors.push(f);
                }
            }
        }
    }

    fn seconds_per_run(&self) -> f64 {
        self.loaded.experiment.run_seconds_guess()
    }

    fn empty_cells(&self, points: &[(usize, usize)]) -> Vec<Cell> {
        let mut cells = Vec::new();
        for &(w, connections) in points {
            for v in self.variants {
                let mut cell = Cell {
                    workload: self.configs[w].name().to_string(),
                    variant: v.name.clone(),
                    connections,
                    runs: Vec::new(),
                    median_ops_per_s: 0.0,
                    ci95: [0.0, 0.0],
                    ci_coverage: 0.0,
                    cv: 0.0,
                    valid_runs: 0,
                    latency_us: Latency::default(),
                    client_bound_runs: 0,
                    verify_failures: 0,
                    stop_reason: None,
                    system: None,
                    instructions_per_op: None,
                    profile: None,
                    tpcc: None,
                    sqlsuite: None,
                };
                self.configs[w].plan_cell(&mut cell);
                cells.push(cell);
            }
        }
        cells
    }

    fn cell_index(&self, r: &Results, s: &Slot) -> usize {
        let w = self.configs[s.workload].name();
        let v = &self.variants[s.variant].name;
        r.cells
            .iter()
            .position(|c| &c.workload == w && &c.variant == v && c.connections == s.connections)
            .unwrap_or(0)
    }

    pub fn label(&self, s: &Slot) -> String {
        format!(
            "{} {} x{} r{}",
            self.variants[s.variant].name,
            self.configs[s.workload].name(),
            s.connections,
            s.round + 1
        )
    }

    /// One run, start to stop. Never fails: a fault becomes an invalid run. `profiling`:
    /// the server is recorded with perf record over the measured window.
    fn execute(&self, slot: &Slot, label: &str, live: &Arc<Live>, profiling: bool) -> Executed {
        let began = Instant::now();
        let v = &self.variants[slot.variant];
        let file = safe_name(&label.replace(' ', "-"));
        let target = self.loaded.experiment.target.kind;
        let sql = target.is_sql();
        let callgrind_dir = self.folder.path.join("callgrind").join(&file);
        if self.probes.instructions {
            let _ = open_dir(&callgrind_dir);
        }
        let (wrapper, env) =
            probes::server_launch(self.probes, &v.sanitize, v.run_under, &callgrind_dir);
        // valgrind runs a server 20-50 times slower: start and stop take longer.
        let slow = if wrapper.is_empty() { 1 } else { 12 };
        let args = if wrapper.is_empty() {
            v.args.clone()
        } else {
            probes::valgrind_args(
                self.probes,
                target == bakeoff_plan::TargetKind::Memcached,
                &v.args,
            )
        };
        let spec = SandboxSpec {
            name: v.name.clone(),
            kind: data::sandbox_kind(target),
            binary: v.binary.clone(),
            args,
            root: self.opts.sandbox_root.clone(),
            ready_timeout: slow
                * if sql {
                    data::SQL_READY_TIMEOUT
                } else {
                    Duration::from_secs(10)
                },
            stop_grace: slow
                * if sql {
                    data::SQL_STOP_GRACE
                } else {
                    Duration::from_secs(5)
                },
            options: v.options.clone(),
            data: self.data.source(&v.name, slot.workload),
            wrapper,
            env,
        };
        let mut sandbox = match Sandbox::start(&spec) {
            Ok(s) => s,
            Err(e) => return self.no_extras(invalid(slot, format!("server did not start: {e}"))),
        };
        let perf_data = profiling.then(|| {
            let dir = self.folder.path.join("profiles");
            let _ = std::fs::create_dir_all(&dir);
            dir.join(format!("{file}.perf.data"))
        });
        let hooks = ProbeHooks::new(self.probes, sandbox.watch(), perf_data);
        let outcome = self.drive(slot, v, &sandbox, &hooks, live);
        let got = hooks.take();
        let died = if sandbox.is_alive() {
            None
        } else {
            Some(sandbox.exit_detail().unwrap_or_default())
        };
        let logs = self.folder.path.join("logs").join(&file);
        let _ = sandbox.stop_and_collect(&logs);
        let stderr_rel = format!("logs/{file}.stderr");
        let mut run = match outcome {
            Ok(d) => {
                let mut run = self.to_run(slot, &d.rec, got.usage_start, got.usage_end, &file);
                (d.extra)(&mut run);
                run
            }
            Err(e) => invalid(slot, e),
        };
        run.server_log = Some(stderr_rel.clone());
        if let Some(detail) = died {
            run.valid = false;
            run.invalid_reason = Some(format!("server exited mid-run: {detail}"));
        }
        let found = self.findings_in(&stderr_rel, v);
        let profile = self.attach_probes(&mut run, got, &file, &callgrind_dir, v);
        run.wall_s = Some(began.elapsed().as_secs_f64());
        Executed {
            run,
            profile,
            findings: found,
        }
    }

    fn no_extras(&self, run: Run) -> Executed {
        Executed {
            run,
            profile: None,
            findings: Vec::new(),
        }
    }

    /// Runs the slot's workload against the sandbox.
    fn drive(
        &self,
        slot: &Slot,
        v: &ReadyVariant,
        sandbox: &Sandbox,
        hooks: &ProbeHooks,
        live: &Arc<Live>,
    ) -> Result<Outcome, String> {
        let server = Server {
            addr: sandbox.addr(),
            db: data::db_of(sandbox, self.loaded.experiment.target.kind),
        };
        let ctx = RunContext {
            server: &server,
            connections: slot.connections,
            engine: v.engine.as_deref(),
            phases: &self.phases(),
            seed: self.seed(slot),
            round: slot.round,
            hooks,
            live,
            cancel: &self.cancel,
        };
        self.configs[slot.workload].run(&ctx)
    }

    /// Sanitizer and memcheck reports in the run's server log, for checked variants.
    fn findings_in(&self, stderr_rel: &str, v: &ReadyVariant) -> Vec<MemoryError> {
        if v.sanitize.is_empty() && v.run_under.is_none() {
            return Vec::new();
        }
        let text = std::fs::read(self.folder.path.join(stderr_rel)).unwrap_or_default();
        findings::parse(&String::from_utf8_lossy(&text))
            .into_iter()
            .map(|f| MemoryError {
                kind: f.kind,
                tool: f.tool,
                message: f.message,
                stack: f.stack,
                log: Some(stderr_rel.to_string()),
            })
            .collect()
    }

    /// The sampler's, the counters' and callgrind's figures into the run; the profile
    /// analyzed (when recorded).
    fn attach_probes(
        &self,
        run: &mut Run,
        got: probes::Collected,
        file: &str,
        callgrind_dir: &std::path::Path,
        v: &ReadyVariant,
    ) -> Option<profile::Profile> {
        if let Some(summary) = &got.summary {
            let rel = format!("series/{file}.json");
            let series = serde_json::to_vec(&got.samples)
                .ok()
                .and_then(|b| self.folder.write(&rel, &b).ok())
                .map(|_| rel);
            run.system = Some(probes::system_record(
                summary,
                &got.samples,
                run.ops,
                series,
            ));
        }
        if let Some(c) = &got.counts {
            run.counters = Some(probes::counters_record(c, run.ops, self.probes));
        } else if self.probes.counters && self.probes.events.is_empty() {
            let none = bakeoff_probe::perfstat::Counts::default();
            run.counters = Some(probes::counters_record(&none, run.ops, self.probes));
        }
        if self.probes.instructions && run.valid {
            match probes::instructions_record(callgrind_dir, run.ops) {
                Ok(i) => run.instructions = Some(i),
                Err(e) => {
                    run.valid = false;
                    run.invalid_reason = Some(e);
                }
            }
        }
        if !got.errors.is_empty() {
            run.probe_errors = got.errors;
        }
        let data = got.perf_data?;
        let analyzed = profile::analyze(&data, &v.binary);
        let _ = std::fs::remove_file(&data);
        if analyzed.is_ok() {
            // perf's own log matters only when it failed.
            let _ = std::fs::remove_file(data.with_extension("log"));
        }
        match analyzed {
            Ok(p) if p.samples > 0 => Some(p),
            Ok(_) => {
                run.probe_errors.push("perf record: no samples".into());
                None
            }
            Err(e) => {
                run.probe_errors.push(format!("perf script: {e}"));
                None
            }
        }
    }

    fn phases(&self) -> Phases {
        let e = &self.loaded.experiment;
        Phases {
            warmup: e.warmup(),
            measure: match e.measure() {
                MeasureFor::Time(d) => Measure::Duration(d),
                MeasureFor::Ops(n) => Measure::Ops(n),
            },
        }
    }

    /// The same request stream for every variant of a round; a new one each round.
    fn seed(&self, s: &Slot) -> u64 {
        let base = self.loaded.experiment.plan.seed;
        let mix =
            (s.round as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ ((s.workload as u64) << 32);
        base ^ mix ^ (s.connections as u64)
    }

    fn to_run(
        &self,
        slot: &Slot,
        rec: &RunRecord,
        start: Option<Usage>,
        end: Option<Usage>,
        file: &str,
    ) -> Run {
        let ops = rec.ops.max(1) as f64;
        let server_cpu_s = match (&start, &end) {
            (Some(a), Some(b)) => (b.cpu_s - a.cpu_s).max(0.0),
            _ => 0.0,
        };
        let hdr = format!("hdr/{file}.hlog");
        let hdr_saved =
            self.folder.write(&hdr, rec.hdr_log.as_bytes()).is_ok() && !rec.hdr_log.is_empty();
        let errors: u64 = rec.errors.values().sum();
        let mut run = Run {
            round: slot.round,
            ops_per_s: rec.ops_per_s,
            ops: rec.ops,
            elapsed_s: rec.elapsed_s,
            latency_us: latency(&rec.latency_us),
            service_us: rec.service_us.as_ref().map(latency),
            errors,
            errors_by_kind: rec.errors.clone(),
            misses: rec.misses,
            verify_failures: rec.verify_failures,
            client_cpu_s: rec.client_cpu_s,
            client_rss_kib: rec.client_rss_kib,
            client_cpu_us_per_op: rec.client_cpu_s * 1e6 / ops,
            server_cpu_s,
            server_rss_kib: end.map_or(0, |u| u.peak_rss_kib),
            server_cpu_us_per_op: server_cpu_s * 1e6 / ops,
            client_bound: rec.client_bound,
            offered_ops_per_s: rec.offered_ops_per_s,
            late: rec.late,
            valid: true,
            invalid_reason: None,
            interval_ops_per_s: rec.intervals.iter().map(|i| i.ops_per_s).collect(),
            hdr_log: hdr_saved.then_some(hdr),
            server_log: None,
            ..Run::default()
        };
        if rec.verify_failures > 0 {
            run.valid = false;
            run.invalid_reason = Some(format!(
                "{} gets returned a value bakeoff never wrote",
                rec.verify_failures
            ));
        } else if rec.ops == 0 {
            run.valid = false;
            run.invalid_reason = Some("no operation completed".into());
        }
        run
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

fn invalid(slot: &Slot, reason: String) -> Run {
    Run {
        round: slot.round,
        valid: false,
        invalid_reason: Some(reason),
        ..Run::default()
    }
}

/// Creates `dir` writable by anyone: a SQL server running as the unprivileged server
/// user writes its callgrind files there.
fn open_dir(dir: &std::path::Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(dir)?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o777))
}
