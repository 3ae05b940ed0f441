//! The measured runs: for each planned slot, a fresh sandbox is started, the workload runs
//! (preload, warmup, measure), the server's usage is sampled around the measured window,
//! the sandbox is stopped and its logs kept. A fault marks that run invalid and the
//! experiment goes on; results are rewritten after every run.

use crate::data::{self, DataStore};
use crate::folder::{safe_name, write_results, Folder};
use crate::prepare::{ReadyVariant, WorkloadConfig};
use crate::schedule::{plan_runs, Slot};
use crate::{analyze, Observer, Options};
use bakeoff_load::{Live, Measure, PhaseHooks, Phases, RunRecord};
use bakeoff_plan::{Loaded, MeasureFor};
use bakeoff_report::model::{Cell, KindRecord, Latency, Results, Run};
use bakeoff_sandbox::{Sandbox, SandboxSpec, Usage};
use bakeoff_workloads::{kv, oltp, sysbench};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub struct Context<'a> {
    pub loaded: &'a Loaded,
    pub opts: &'a Options,
    pub folder: &'a Folder,
    pub configs: &'a [WorkloadConfig],
    pub variants: &'a [ReadyVariant],
    pub data: &'a DataStore,
    pub cancel: Arc<AtomicBool>,
}

impl Context<'_> {
    /// Runs every planned slot; false if interrupted.
    pub fn run_all(&self, results: &mut Results, observer: &dyn Observer) -> bool {
        let e = &self.loaded.experiment;
        let points: Vec<(usize, usize)> = e
            .workloads
            .iter()
            .enumerate()
            .flat_map(|(i, w)| w.connections.to_vec().into_iter().map(move |c| (i, c)))
            .collect();
        let indices: Vec<usize> = (0..self.variants.len()).collect();
        let slots = plan_runs(e.plan.repetitions, &points, &indices, e.plan.seed);
        results.plan.rounds = rounds_of(&slots, self);
        results.cells = self.empty_cells(&points);
        let per_run = self.seconds_per_run();
        observer.runs_started(slots.len(), per_run);
        for (i, slot) in slots.iter().enumerate() {
            if self.cancel.load(Ordering::SeqCst) {
                return false;
            }
            let label = self.label(slot);
            let cell_at = self.cell_index(results, slot);
            if self.precise_enough(&results.cells[cell_at]) {
                results.cells[cell_at].stop_reason = Some("precision".into());
                continue;
            }
            let live = Arc::new(Live::default());
            observer.run_started(i, &label, &live);
            let run = self.execute(slot, &label, &live);
            observer.run_finished(i, &label, &run);
            let interrupted = self.cancel.load(Ordering::SeqCst);
            if !interrupted {
                results.cells[cell_at].runs.push(run);
                results.cells[cell_at]
                    .stop_reason
                    .get_or_insert_with(|| "repetitions".into());
            }
            analyze(results);
            // A write failure here is not fatal: the next run tries again, and the
            // final write reports it.
            let _ = write_results(self.folder, results);
            if interrupted {
                return false;
            }
        }
        true
    }

    fn precise_enough(&self, cell: &Cell) -> bool {
        let plan = &self.loaded.experiment.plan;
        let Some(target) = plan.target_ci else {
            return false;
        };
        let ops: Vec<f64> = cell
            .runs
            .iter()
            .filter(|r| r.valid)
            .map(|r| r.ops_per_s)
            .collect();
        ops.len() >= plan.min_repetitions && bakeoff_stats::precise_enough(&ops, target)
    }

    fn seconds_per_run(&self) -> f64 {
        let plan = &self.loaded.experiment.plan;
        let measure = match plan.measure() {
            MeasureFor::Time(d) => d.as_secs_f64(),
            MeasureFor::Ops(_) => 5.0,
        };
        plan.warmup_duration().as_secs_f64() + measure + 1.0
    }

    fn empty_cells(&self, points: &[(usize, usize)]) -> Vec<Cell> {
        let e = &self.loaded.experiment;
        let mut cells = Vec::new();
        for &(w, connections) in points {
            for v in self.variants {
                cells.push(Cell {
                    workload: e.workloads[w].display_name(),
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
                });
            }
        }
        cells
    }

    fn cell_index(&self, r: &Results, s: &Slot) -> usize {
        let w = self.loaded.experiment.workloads[s.workload].display_name();
        let v = &self.variants[s.variant].name;
        r.cells
            .iter()
            .position(|c| c.workload == w && &c.variant == v && c.connections == s.connections)
            .unwrap_or(0)
    }

    pub fn label(&self, s: &Slot) -> String {
        format!(
            "{} {} x{} r{}",
            self.variants[s.variant].name,
            self.loaded.experiment.workloads[s.workload].display_name(),
            s.connections,
            s.round + 1
        )
    }

    /// One run, start to stop. Never fails: a fault becomes an invalid run.
    fn execute(&self, slot: &Slot, label: &str, live: &Arc<Live>) -> Run {
        let v = &self.variants[slot.variant];
        let file = safe_name(&label.replace(' ', "-"));
        let target = self.loaded.experiment.target.kind;
        let sql = target.is_sql();
        let spec = SandboxSpec {
            name: v.name.clone(),
            kind: data::sandbox_kind(target),
            binary: v.binary.clone(),
            args: v.args.clone(),
            root: self.opts.sandbox_root.clone(),
            ready_timeout: if sql {
                data::SQL_READY_TIMEOUT
            } else {
                Duration::from_secs(10)
            },
            stop_grace: if sql {
                data::SQL_STOP_GRACE
            } else {
                Duration::from_secs(5)
            },
            options: v.options.clone(),
            data: self.data.source(&v.name, slot.workload),
        };
        let mut sandbox = match Sandbox::start(&spec) {
            Ok(s) => s,
            Err(e) => return invalid(slot, format!("server did not start: {e}")),
        };
        let hooks = UsageHooks {
            sandbox: &sandbox,
            start: Mutex::new(None),
            end: Mutex::new(None),
        };
        let (phases, seed) = (self.phases(), self.seed(slot));
        let outcome = match &self.configs[slot.workload] {
            WorkloadConfig::Kv(c) => {
                let mut cfg = c.clone();
                cfg.connections = slot.connections;
                kv::run(
                    sandbox.addr(),
                    &cfg,
                    &phases,
                    seed,
                    &hooks,
                    live,
                    &self.cancel,
                )
                .map_err(|e| e.to_string())
            }
            WorkloadConfig::Oltp(c) | WorkloadConfig::Sysbench(c) => {
                let mut cfg = data::for_variant(c, v);
                cfg.connections = slot.connections;
                cfg.client_threads = oltp::client_threads_for(cfg.client_threads, slot.connections);
                let native = matches!(self.configs[slot.workload], WorkloadConfig::Oltp(_));
                match data::db_of(&sandbox, target) {
                    None => Err("the sandbox has no login".to_string()),
                    Some(db) if native => {
                        oltp::run(&db, &cfg, &phases, seed, &hooks, live, &self.cancel)
                            .map_err(|e| e.to_string())
                    }
                    Some(db) => sysbench::run(&db, &cfg, &phases, seed, &hooks, live, &self.cancel)
                        .map_err(|e| e.to_string()),
                }
            }
        };
        let (start, end) = (take(&hooks.start), take(&hooks.end));
        let died = if sandbox.is_alive() {
            None
        } else {
            Some(sandbox.exit_detail().unwrap_or_default())
        };
        let logs = self.folder.path.join("logs").join(&file);
        let _ = sandbox.stop_and_collect(&logs);
        let mut run = match outcome {
            Ok(rec) => self.to_run(slot, &rec, start, end, &file),
            Err(e) => invalid(slot, e),
        };
        run.server_log = Some(format!("logs/{file}.stderr"));
        if let Some(detail) = died {
            run.valid = false;
            run.invalid_reason = Some(format!("server exited mid-run: {detail}"));
        }
        run
    }

    fn phases(&self) -> Phases {
        let plan = &self.loaded.experiment.plan;
        Phases {
            warmup: plan.warmup_duration(),
            measure: match plan.measure() {
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
        if self.configs[slot.workload].sql().is_some() {
            run.tps = Some(rec.ops_per_s);
            run.qps = Some(rec.queries as f64 / rec.elapsed_s.max(1e-9));
            run.client_cpu_us_per_txn = Some(run.client_cpu_us_per_op);
            run.reconnects = rec.reconnects;
            run.statements = rec
                .kinds
                .iter()
                .map(|(k, v)| {
                    let r = KindRecord {
                        count: v.count,
                        latency_us: latency(&v.latency_us),
                    };
                    (k.clone(), r)
                })
                .collect();
        }
        if rec.verify_failures > 0 {
            run.valid = false;
            run.invalid_reason = Some(format!(
                "{} gets returned a value bakeoff never wrote",
                rec.verify_failures
            ));
        } else if rec.ops == 0 {
            run.valid = false;
            run.invalid_reason = Some("no operation completed".into());
        } else if rec.reconnects > 0 && self.configs[slot.workload].sql().is_some() {
            let max = self.configs[slot.workload]
                .sql()
                .map_or(0, |c| c.max_reconnects);
            if rec.reconnects > max {
                run.valid = false;
                run.invalid_reason = Some(format!(
                    "{} connections lost and reopened (more than max_reconnects = {max})",
                    rec.reconnects
                ));
            }
        }
        run
    }
}

fn rounds_of(slots: &[Slot], ctx: &Context) -> Vec<Vec<String>> {
    let mut rounds: Vec<Vec<String>> = Vec::new();
    for s in slots {
        if rounds.len() <= s.round {
            rounds.resize(s.round + 1, Vec::new());
        }
        rounds[s.round].push(ctx.label(s));
    }
    rounds
}

fn invalid(slot: &Slot, reason: String) -> Run {
    Run {
        round: slot.round,
        valid: false,
        invalid_reason: Some(reason),
        ..Run::default()
    }
}

fn latency(p: &bakeoff_load::Percentiles) -> Latency {
    Latency {
        p50: p.p50,
        p90: p.p90,
        p99: p.p99,
        p999: p.p999,
        max: p.max,
        mean: p.mean,
    }
}

fn take(m: &Mutex<Option<Usage>>) -> Option<Usage> {
    m.lock().ok().and_then(|mut g| g.take())
}

/// Samples the server's CPU and memory exactly at the measured window's edges.
struct UsageHooks<'a> {
    sandbox: &'a Sandbox,
    start: Mutex<Option<Usage>>,
    end: Mutex<Option<Usage>>,
}

impl PhaseHooks for UsageHooks<'_> {
    fn measure_started(&self) {
        if let Ok(mut g) = self.start.lock() {
            *g = Some(self.sandbox.usage());
        }
    }
    fn measure_ended(&self) {
        if let Ok(mut g) = self.end.lock() {
            *g = Some(self.sandbox.usage());
        }
    }
}
