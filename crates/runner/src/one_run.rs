//! One measured run, start to stop: a fresh sandbox (under valgrind or a sanitizer's
//! environment when the variant asks), the probes armed at the measured window's edges,
//! the workload driven through its seam, the sandbox stopped and its logs kept, the
//! engine's record and the workload's own figures turned into the run's record. Never
//! fails: a fault becomes an invalid run.

use crate::context::{Context, Executed, Launch, Launcher};
use crate::datadirs;
use crate::deadline::{Limits, Watchdog};
use crate::measured::{binary_changed, nothing_measured};
use crate::probes::{self, ProbeHooks, ServerWatch};
use crate::ready::ReadyVariant;
use crate::remote::RemoteServer;
use crate::schedule::Slot;
use crate::server_stats::StatsHooks;
use bakeoff_agent::protocol::LoadSpec;
use bakeoff_engine::{Live, Measure, PhaseHooks, Phases, RunRecord};
use bakeoff_plan::MeasureFor;
use bakeoff_probe::{findings, profile};
use bakeoff_report::model::{MemoryError, Run};
use bakeoff_sandbox::{Sandbox, SandboxSpec, Usage};
use bakeoff_workloads::workload::latency;
use bakeoff_workloads::{Outcome, RunContext, Server};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Instant;

/// The variable that pads a server's environment to the run's size.
const ENV_PAD: &str = "BAKEOFF_ENV_PAD";

/// A run's server, here or on its host.
pub(crate) enum Served {
    Local(Sandbox),
    Remote(RemoteServer),
}

impl Served {
    /// The sandbox, when the server runs here.
    fn local(&self) -> Option<&Sandbox> {
        match self {
            Served::Local(s) => Some(s),
            Served::Remote(_) => None,
        }
    }

    fn watch(&self) -> ServerWatch {
        match self {
            Served::Local(s) => ServerWatch::Local(s.watch()),
            Served::Remote(r) => r.watch(),
        }
    }

    /// Stops it and keeps its logs beside `logs`; why it had ended before, if it had.
    fn stop_and_collect(
        self,
        logs: &std::path::Path,
        callgrind: &std::path::Path,
    ) -> Result<Option<String>, String> {
        match self {
            Served::Local(mut s) => {
                let died = if s.is_alive() {
                    None
                } else {
                    Some(s.exit_detail().unwrap_or_default())
                };
                let _ = s.stop_and_collect(logs);
                Ok(died)
            }
            Served::Remote(r) => r.stop_and_collect(logs, callgrind),
        }
    }
}

/// The real launcher: each run in a fresh sandbox, driven by its workload.
pub(crate) struct Sandboxed;

impl Launcher for Sandboxed {
    fn launch(&self, ctx: &Context<'_>, slot: &Slot, live: &Arc<Live>, how: Launch) -> Executed {
        match how {
            Launch::Measured => ctx.execute(slot, live, false, None),
            Launch::Profiled => ctx.execute(slot, live, true, None),
            // One trial of a capacity search: its files named apart from the rounds'.
            Launch::At(rate) => ctx.execute(slot, live, false, Some(rate)),
        }
    }
}

/// The server's own counters (`stats`, read around the window) into `run`.
fn with_server_stats(run: &mut Run, stats: Run) {
    run.server_stats = stats.server_stats;
    run.server_stats_unavailable = stats.server_stats_unavailable;
    run.server_stats_s = stats.server_stats_s;
    run.server_statements = stats.server_statements;
    run.server_counters_read = stats.server_counters_read;
}

/// How a run's server starts ([`Context::start_spec`]).
struct Start {
    spec: SandboxSpec,
    /// Where callgrind writes (absolute).
    callgrind_dir: std::path::PathBuf,
    /// The code layout the round runs.
    layout: usize,
    /// The environment's padding, with `[plan] layouts` above 1.
    pad: Option<usize>,
    /// How many times longer start and stop may take (12 under valgrind).
    slow: u32,
}

impl Context<'_> {
    fn execute(
        &self,
        slot: &Slot,
        live: &Arc<Live>,
        profiling: bool,
        rate: Option<f64>,
    ) -> Executed {
        let began = Instant::now();
        let v = &self.variants[slot.variant];
        let trial = if rate.is_some() { "+trial" } else { "" };
        let file = format!("{}{trial}", self.run_file(slot, profiling));
        let Start {
            spec,
            callgrind_dir,
            layout,
            pad,
            slow,
        } = match self.start_spec(slot, v, &file) {
            Ok(s) => s,
            Err(why) => return self.no_extras(invalid(slot, why)),
        };
        let host = self.loaded.experiment.server_host(&v.name);
        // The variant's machine settings, journalled and applied for this run only; put
        // back when `machine` is restored (or dropped, whatever happens below).
        let machine = match v.system.apply() {
            Ok(m) => m,
            Err(e) => return self.no_extras(invalid(slot, format!("system settings: {e}"))),
        };
        let served = match self.start_server(host, &spec) {
            Ok(s) => s,
            Err(e) => return self.no_extras(invalid(slot, format!("server did not start: {e}"))),
        };
        let read_back = |served: &Served| served.local().map(|s| v.system.read_back(s.pid()));
        let at_start = read_back(&served);
        let perf_data = profiling.then(|| self.perf_data(&file));
        let listens = served.local().map_or(Vec::new(), |s| s.listens().to_vec());
        // What the server runs with, read before the load and its probes start.
        let settings = Some(match (&served, host) {
            (Served::Local(s), _) => crate::settings::read(s),
            (Served::Remote(_), h) => crate::settings::not_here(h.unwrap_or("another host")),
        });
        let hooks = ProbeHooks::new(self.probes, served.watch(), perf_data);
        let dog = Watchdog::start(
            self.limits(slot, slow),
            served.local().map(|s| s.watch()),
            live.clone(),
            self.cancel.clone(),
        );
        let edges = dog.hooks(&hooks);
        let stats_hooks = StatsHooks::new(
            &edges,
            served.local(),
            self.loaded.experiment.server_stats_of(&v.name),
            self.probes.instructions,
            dog.cancel(),
        );
        let outcome = self.drive(slot, v, &served, &stats_hooks, live, rate, dog.cancel());
        let mut stats_run = Run::default();
        stats_hooks.record(&mut stats_run, host);
        let stalled = dog.finish();
        let at_end = read_back(&served);
        let got = hooks.take();
        let logs = self.folder.path.join("logs").join(&file);
        let died = served.stop_and_collect(&logs, &callgrind_dir);
        let put_back = machine.map_or(Ok(()), |m| m.restore());
        let stderr_rel = format!("logs/{file}.stderr");
        let mut run = match outcome {
            Ok(d) => {
                let mut run = self.to_run(slot, &d.rec, got.usage_start, got.usage_end, &file);
                let hits = self.workload(slot).expected_hits(&d.rec);
                (d.extra)(&mut run);
                if let Some(why) = run.valid.then(|| nothing_measured(&run, hits)).flatten() {
                    run.valid = false;
                    run.invalid_reason = Some(why);
                }
                run
            }
            Err(e) => invalid(slot, e),
        };
        run.server_log = Some(stderr_rel.clone());
        with_server_stats(&mut run, stats_run);
        if pad.is_some() {
            run.layout = Some(layout);
            run.env_pad = pad;
        }
        self.judge_stop(&mut run, died, stalled);
        self.placed(&mut run, v, host, listens);
        system_held(&mut run, at_start, at_end, put_back);
        let found = self.findings_in(&stderr_rel, v);
        let profile = self.attach_probes(&mut run, got, &file, &callgrind_dir, v);
        run.wall_s = Some(began.elapsed().as_secs_f64());
        run.instruction_run = self.instruction_run();
        Executed {
            run,
            profile,
            findings: found,
            settings,
        }
    }

    /// How slot's server starts: its sandbox (the binary of the round's layout, the
    /// probes' wrapper and environment, the variant's own, the layout's padding, its
    /// CPUs), or why the run is invalid: the binary changed since it was hashed.
    fn start_spec(&self, slot: &Slot, v: &ReadyVariant, file: &str) -> Result<Start, String> {
        let target = bakeoff_sandbox::target_for(v.kind);
        // Absolute: callgrind writes it from the server's own working directory.
        let callgrind_dir = self.folder.path.join("callgrind").join(file);
        let callgrind_dir = std::path::absolute(&callgrind_dir).unwrap_or(callgrind_dir);
        if self.probes.instructions {
            let _ = bakeoff_os::file::create_shared_dir(&callgrind_dir);
        }
        let (wrapper, mut env) =
            probes::server_launch(self.probes, &v.sanitize, v.run_under, &callgrind_dir);
        env.extend(v.env.iter().cloned());
        env.extend(v.system.server_env());
        let (layout, binary) = v.layout_for(slot.round);
        let hashed = v.layouts.get(layout).map_or("", |b| b.sha256.as_str());
        if self.loaded.experiment.server_host(&v.name).is_none() {
            if let Some(why) = binary_changed(binary, hashed) {
                return Err(why);
            }
        }
        let pad = self.env_pad(slot);
        if let Some(n) = pad {
            env.push((ENV_PAD.to_string(), "x".repeat(n)));
        }
        // valgrind runs a server 20-50 times slower: start and stop take longer.
        let slow = if wrapper.is_empty() { 1 } else { 12 };
        let args = if wrapper.is_empty() {
            v.args.clone()
        } else {
            target.valgrind_args(
                &v.args,
                self.probes.valgrind_fd_limit,
                self.probes.instructions,
            )
        };
        let spec = SandboxSpec {
            name: v.name.clone(),
            kind: v.kind,
            binary: binary.to_path_buf(),
            args,
            root: self.opts.sandbox_root.clone(),
            ready_timeout: slow * target.ready_timeout(),
            stop_grace: slow * target.stop_grace(),
            options: v.options.clone(),
            data: self.data.source(&v.name, slot.workload),
            wrapper,
            env,
            listen: bakeoff_sandbox::LOOPBACK,
            cpus: (v.system.cpus.clone()).or_else(|| self.placement.map(|p| p.server.clone())),
            stats: self.loaded.experiment.server_stats_of(&v.name),
        };
        Ok(Start {
            spec,
            callgrind_dir,
            layout,
            pad,
            slow,
        })
    }

    /// Where a profiling run's perf record writes (its folder made).
    fn perf_data(&self, file: &str) -> std::path::PathBuf {
        let dir = self.folder.path.join("profiles");
        let _ = std::fs::create_dir_all(&dir);
        dir.join(format!("{file}.perf.data"))
    }

    /// Where the run's server ran and listened, and the CPUs of the server and the load.
    fn placed(&self, run: &mut Run, v: &ReadyVariant, host: Option<&str>, listens: Vec<String>) {
        run.server_host = host.map(str::to_string);
        run.listens = listens;
        if let Some(p) = self.placement {
            run.server_cpus = Some(p.server.to_string());
            run.load_cpus = Some(p.load.to_string());
        }
        if let Some(c) = &v.system.cpus {
            run.server_cpus = Some(c.to_string());
        }
    }

    /// A run made invalid by how its server ended: bakeoff's own kill at an interrupt,
    /// an exit mid-run, a stop that failed, or a stall the watchdog saw.
    fn judge_stop(
        &self,
        run: &mut Run,
        died: Result<Option<String>, String>,
        stalled: Option<String>,
    ) {
        match died {
            Ok(Some(_)) if self.cancel.load(std::sync::atomic::Ordering::SeqCst) => {
                // bakeoff's own SIGKILL at the interrupt, not a crash.
                run.valid = false;
                run.invalid_reason =
                    Some("stopped by bakeoff: interrupted (SIGINT or SIGTERM)".into());
            }
            Ok(Some(detail)) => {
                run.valid = false;
                run.invalid_reason = Some(format!("server exited mid-run: {detail}"));
            }
            Ok(None) => {}
            Err(e) => {
                run.valid = false;
                run.invalid_reason
                    .get_or_insert(format!("the server could not be stopped: {e}"));
            }
        }
        if let Some(why) = stalled {
            run.valid = false;
            run.invalid_reason = Some(why);
        }
    }

    /// With `[plan] layouts` above 1, the bytes of padding this start's environment gets:
    /// drawn per run from the plan's seed and the slot, 0 to 4095 (the environment's size
    /// shifts the stack, which alone can move a benchmark by several percent).
    fn env_pad(&self, slot: &Slot) -> Option<usize> {
        let plan = &self.loaded.experiment.plan;
        if plan.layouts < 2 {
            return None;
        }
        let mix = [slot.round, slot.workload, slot.connections, slot.variant]
            .iter()
            .fold(plan.seed ^ 0x656e_7670_6164, |h, x| {
                (h ^ *x as u64).wrapping_mul(0x100_0000_01b3)
            });
        Some(bakeoff_engine::rng::Rng::new(mix).below(4096) as usize)
    }

    fn no_extras(&self, mut run: Run) -> Executed {
        run.instruction_run = self.instruction_run();
        Executed {
            run,
            profile: None,
            findings: Vec::new(),
            settings: None,
        }
    }

    /// The run's server: a sandbox here, or one on its variant's server host.
    fn start_server(&self, host: Option<&str>, spec: &SandboxSpec) -> Result<Served, String> {
        if let Some(host) = host {
            return self.remote.start_on(host, spec).map(Served::Remote);
        }
        Sandbox::start(spec)
            .map(Served::Local)
            .map_err(|e| e.to_string())
    }

    /// Runs the slot's workload against the server, from here or from its client hosts;
    /// `cancel` is the run's own flag (an interrupt's, or its deadline's).
    #[allow(clippy::too_many_arguments)]
    fn drive(
        &self,
        slot: &Slot,
        v: &ReadyVariant,
        served: &Served,
        hooks: &dyn PhaseHooks,
        live: &Arc<Live>,
        rate: Option<f64>,
        cancel: &AtomicBool,
    ) -> Result<Outcome, String> {
        let kind = v.kind;
        let server = match served {
            Served::Local(sandbox) => Server {
                addr: sandbox.addr(),
                socket: sandbox.socket(),
                db: datadirs::db_of(sandbox, kind),
            },
            Served::Remote(r) => Server {
                addr: r.addr,
                socket: None,
                db: r.db(),
            },
        };
        let workload = self.workload(slot);
        let name = workload.name();
        let e = &self.loaded.experiment;
        let clients = Some(e.load_hosts(&v.name, name)).filter(|c| !c.is_empty());
        if let Some(clients) = clients {
            let agent = workload
                .agent_spec()
                .ok_or("this workload kind loads only from this machine")?;
            let mut spec = LoadSpec {
                workload: serde_json::Value::Null,
                target: kind,
                server: server.addr,
                connections: slot.connections,
                warmup_ms: 0,
                measure_ms: None,
                measure_ops: None,
                seed: self.seed(slot),
                preload_only: false,
                start_at_ms: None,
                events: false,
                interval_ms: self.probes.interval.as_millis() as u64,
                login: match &served {
                    Served::Remote(r) => r.login(),
                    Served::Local(s) => s.login(),
                },
                engine: v.engine.clone(),
                beside_server: false,
            };
            spec.set_phases(&self.phases());
            let mut out = self.remote.load(
                (e.server_host(&v.name), &clients),
                &agent,
                spec,
                hooks,
                live,
                cancel,
            )?;
            // The workload's figures from the merged record, over the first host's own.
            let (first, merged) = (out.extra, workload.merged(&out.rec));
            out.extra = Box::new(move |run| {
                first(run);
                merged(run);
            });
            return Ok(out);
        }
        let ctx = RunContext {
            server: &server,
            connections: slot.connections,
            load_cpus: crate::placement::load_cpus(self.placement),
            engine: v.engine.as_deref(),
            phases: &self.phases(),
            seed: self.seed(slot),
            round: slot.round,
            hooks,
            live,
            cancel,
            rate,
        };
        workload.run(&ctx)
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
        if let Some(w) = &got.others {
            probes::attach_others(run, w);
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
        let analyzed = match (got.profile, got.perf_data) {
            // Analyzed where the server ran.
            (Some(p), _) => Ok(p),
            (None, Some(data)) => {
                let analyzed = profile::analyze(&data, &v.binary);
                let _ = std::fs::remove_file(&data);
                if analyzed.is_ok() {
                    // perf's own log matters only when it failed.
                    let _ = std::fs::remove_file(data.with_extension("log"));
                }
                analyzed
            }
            (None, None) => return None,
        };
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

    /// The run's deadline as `deadline.rs` reads it: its warmup, its window's planned
    /// length (none for a count of operations) and how much slower the server runs.
    /// The watchdog's limits for a run of `slot`: a fixed-work kind's window has no
    /// planned length (it is judged by the progress it tells).
    fn limits(&self, slot: &Slot, slow: u32) -> Limits {
        let p = self.phases();
        let window = match p.measure {
            Measure::Duration(_) if self.workload(slot).fixed_work() => None,
            Measure::Duration(d) => Some(d),
            Measure::Ops(_) => None,
        };
        Limits::new(p.warmup, window, slow)
    }

    fn phases(&self) -> Phases {
        let e = &self.loaded.experiment;
        let counted = e.instruction_ops().filter(|_| self.probes.instructions);
        Phases {
            warmup: e.warmup(),
            measure: match (counted, e.measure()) {
                (Some(n), _) => Measure::Ops(n),
                (None, MeasureFor::Time(d)) => Measure::Duration(d),
                (None, MeasureFor::Ops(n)) => Measure::Ops(n),
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
            client_wait_s: rec.client_wait_s,
            client_threads: rec.client_threads,
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
            run.invalid_reason = Some(
                nothing_measured(&run, None).unwrap_or_else(|| "no operation completed".into()),
            );
        }
        run
    }
}

/// Records what the server ran with (`system_applied`, the window's end's reading) and
/// makes the run invalid when a setting did not hold at either edge of the window or the
/// machine could not be put back after it.
fn system_held(
    run: &mut Run,
    at_start: Option<(std::collections::BTreeMap<String, String>, Vec<String>)>,
    at_end: Option<(std::collections::BTreeMap<String, String>, Vec<String>)>,
    put_back: Result<(), String>,
) {
    let mut wrong: Vec<String> = Vec::new();
    for (edge, read) in [("start", &at_start), ("end", &at_end)] {
        if let Some((_, w)) = read {
            wrong.extend(w.iter().map(|x| format!("{x} at the window's {edge}")));
        }
    }
    if let Some((got, _)) = at_end.or(at_start) {
        run.system_applied = got;
    }
    if let Err(e) = put_back {
        wrong.push(e);
    }
    if !wrong.is_empty() && run.valid {
        run.valid = false;
        run.invalid_reason = Some(format!(
            "a system setting did not hold: {}",
            wrong.join("; ")
        ));
    }
}

pub(crate) fn invalid(slot: &Slot, reason: String) -> Run {
    Run {
        round: slot.round,
        valid: false,
        invalid_reason: Some(reason),
        ..Run::default()
    }
}
