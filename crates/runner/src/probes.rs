//! The probes of one run, around its measured window: the /proc sampler always; perf stat
//! counters and a perf record profile when the experiment asks; callgrind's instruction
//! counts in `mode = "instructions"`. Probes never make a run invalid: what cannot be
//! measured becomes a note, said once per experiment.

use bakeoff_engine::PhaseHooks;
use bakeoff_plan::{Experiment, Mode, RunUnder, Sanitizer};
use bakeoff_probe::{callgrind, hotlines, others, perfstat, profile, sampler};
use bakeoff_report::model::{
    CountersRecord, CpuSample, FnDeltaRecord, FnInstructions, FnShareRecord, HotLineRecord,
    InstructionsRecord, LineDeltaRecord, OtherProcess, ProfileRecord, Run, SplitRecord,
    SystemRecord,
};
use bakeoff_sandbox::{Usage, Watch};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

/// What the experiment asks of every run, decided once (perf support is detected here).
#[derive(Debug, Clone)]
pub struct ProbePlan {
    pub interval: Duration,
    /// perf stat events that count on this machine (empty: counters off).
    pub events: Vec<String>,
    /// Events asked for that this machine cannot count.
    pub unsupported: Vec<String>,
    /// `[measure] counters = true` and perf is usable: every run carries a counters
    /// record, with what could not be counted listed in it.
    pub counters: bool,
    pub profile: bool,
    pub instructions: bool,
    /// The open-files limit valgrind leaves a server (memcached must be told it).
    pub valgrind_fd_limit: Option<u64>,
    /// Said once in the terminal and the report.
    pub notes: Vec<String>,
}

impl ProbePlan {
    /// The plan for `e`; `support` says which perf events count where the server runs
    /// (`perfstat::detect` here, or its host's agent), named `place` in the notes.
    pub fn new(
        e: &Experiment,
        place: &str,
        support: &dyn Fn() -> Result<perfstat::Support, String>,
    ) -> ProbePlan {
        let mut p = ProbePlan {
            interval: e.measure.interval_duration(),
            events: Vec::new(),
            unsupported: Vec::new(),
            counters: false,
            profile: e.measure.profile,
            instructions: e.plan.mode == Mode::Instructions,
            valgrind_fd_limit: None,
            notes: Vec::new(),
        };
        if e.plan.mode.counts_instructions() || e.variants.iter().any(|v| v.run_under.is_some()) {
            p.valgrind_fd_limit = callgrind::fd_limit_under_valgrind().ok();
        }
        if e.measure.counters {
            match support() {
                Ok(s) => {
                    if s.supported.is_empty() {
                        p.notes.push(format!(
                            "CPU counters are off: {place} counts none of {} (a virtual machine without a PMU, or perf too old for this CPU)",
                            s.unsupported.join(", ")
                        ));
                    } else if !s.unsupported.is_empty() {
                        p.notes.push(format!(
                            "CPU counters: {place} cannot count {}; those figures are left out",
                            s.unsupported.join(", ")
                        ));
                    }
                    p.events = s.supported;
                    p.unsupported = s.unsupported;
                    p.counters = true;
                }
                Err(why) => p.notes.push(format!("CPU counters are off: {why}")),
            }
        }
        p
    }
}

/// The wrapper command and environment a variant's server runs with.
pub fn server_launch(
    plan: &ProbePlan,
    sanitize: &[Sanitizer],
    run_under: Option<RunUnder>,
    callgrind_dir: &Path,
) -> (Vec<String>, Vec<(String, String)>) {
    let mut env = Vec::new();
    if !sanitize.is_empty() {
        // Servers exit without freeing what they hold, so leak reports at shutdown are
        // noise: leaks are not checked. Reports go to stderr, which the run keeps.
        env.push((
            "ASAN_OPTIONS".into(),
            "detect_leaks=0:halt_on_error=1:print_summary=1".into(),
        ));
        env.push((
            "UBSAN_OPTIONS".into(),
            "print_stacktrace=1:halt_on_error=0".into(),
        ));
        // Races are reported and the server keeps serving; both stacks of a
        // lock-order inversion.
        env.push((
            "TSAN_OPTIONS".into(),
            "halt_on_error=0:second_deadlock_stack=1:print_summary=1".into(),
        ));
    }
    let wrapper = if plan.instructions {
        callgrind::command_prefix(callgrind_dir)
    } else if run_under == Some(RunUnder::Memcheck) {
        [
            "valgrind",
            "--tool=memcheck",
            "--leak-check=no",
            "--error-limit=no",
            "--num-callers=20",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    } else if run_under == Some(RunUnder::Helgrind) {
        [
            "valgrind",
            "--tool=helgrind",
            "--error-limit=no",
            "--num-callers=20",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    } else {
        Vec::new()
    };
    (wrapper, env)
}

/// What the probes left after a run.
#[derive(Default)]
pub struct Collected {
    pub usage_start: Option<Usage>,
    pub usage_end: Option<Usage>,
    pub samples: Vec<sampler::Sample>,
    pub summary: Option<sampler::Summary>,
    pub counts: Option<perfstat::Counts>,
    /// perf record's data file, when this run was profiled and perf finished cleanly.
    pub perf_data: Option<PathBuf>,
    /// The profile, analyzed on the server's host when it runs there.
    pub profile: Option<profile::Profile>,
    /// Who else ran during the window on the server's machine (/proc at the window's
    /// edges, here or by the agent on the server's host).
    pub others: Option<others::Window>,
    pub errors: Vec<String>,
}

/// Where a run's server is, for its CPU and memory and the system around it: a
/// sandbox here, or a server on another host whose agent watches it.
#[derive(Clone)]
pub enum ServerWatch {
    Local(Watch),
    Remote(std::sync::Arc<dyn RemoteProbes>),
}

/// What an agent measures of a server on its host.
pub trait RemoteProbes: Send + Sync {
    /// Its CPU and memory now (zero when the host does not answer).
    fn usage(&self) -> Usage;
    /// Starts the /proc sampler on its host.
    fn start_sampler(&self, interval: Duration) -> Result<(), String>;
    /// Stops it: the samples, the window's summary, and who else ran on that host.
    fn stop_sampler(&self) -> Result<bakeoff_agent::protocol::Sampled, String>;
    /// Attaches perf stat (`events`, when any) and perf record (`profile`) to it there,
    /// and turns callgrind's counting on (`instrument`).
    fn start_perf(&self, events: &[String], profile: bool, instrument: bool) -> Result<(), String>;
    /// Stops them: the counts, and the profile as analyzed there.
    fn stop_perf(&self) -> Result<bakeoff_agent::protocol::Probed, String>;
}

impl ServerWatch {
    fn usage(&self) -> Usage {
        match self {
            ServerWatch::Local(w) => w.usage(),
            ServerWatch::Remote(r) => r.usage(),
        }
    }

    /// The server's processes here (none for a server elsewhere: counters, profiles and
    /// callgrind are refused there before anything runs).
    fn pids(&self) -> Vec<i32> {
        match self {
            ServerWatch::Local(w) => w.pids(),
            ServerWatch::Remote(_) => Vec::new(),
        }
    }
}

/// Starts and stops the probes at the measured window's edges.
pub struct ProbeHooks<'a> {
    pub plan: &'a ProbePlan,
    pub watch: ServerWatch,
    /// Where this run's perf record data goes, when it is the cell's profiled run.
    pub perf_data: Option<PathBuf>,
    state: Mutex<Running>,
    pub out: Mutex<Collected>,
}

#[derive(Default)]
struct Running {
    sampler: Option<sampler::Sampler>,
    /// /proc at the window's start, for who else ran.
    snapshot: Option<others::Snapshot>,
    counting: Option<perfstat::Counting>,
    recording: Option<profile::Recording>,
}

impl<'a> ProbeHooks<'a> {
    pub fn new(plan: &'a ProbePlan, watch: ServerWatch, perf_data: Option<PathBuf>) -> Self {
        ProbeHooks {
            plan,
            watch,
            perf_data,
            state: Mutex::new(Running::default()),
            out: Mutex::new(Collected::default()),
        }
    }

    /// Whether anything beyond the sampler attaches to a server on another host.
    fn remote_probes(&self) -> bool {
        !self.plan.events.is_empty() || self.perf_data.is_some() || self.plan.instructions
    }

    fn note(&self, e: String) {
        if let Ok(mut o) = self.out.lock() {
            o.errors.push(e);
        }
    }

    pub fn take(&self) -> Collected {
        self.out
            .lock()
            .map(|mut o| std::mem::take(&mut *o))
            .unwrap_or_default()
    }
}

impl PhaseHooks for ProbeHooks<'_> {
    fn measure_started(&self) {
        let w = self.watch.clone();
        let usage = w.usage();
        if let Ok(mut o) = self.out.lock() {
            o.usage_start = Some(usage);
        }
        let pids = w.pids();
        let mut st = match self.state.lock() {
            Ok(s) => s,
            Err(_) => return,
        };
        if self.plan.instructions && !pids.is_empty() {
            if let Err(e) = callgrind::set_instrumentation_all(&pids, true) {
                self.note(format!("callgrind: cannot start counting: {e}"));
            }
        }
        if let ServerWatch::Remote(r) = &w {
            let profile = self.perf_data.is_some();
            if self.remote_probes() {
                if let Err(e) = r.start_perf(&self.plan.events, profile, self.plan.instructions) {
                    self.note(format!("probes on the server's host: {e}"));
                }
            }
        }
        if !self.plan.events.is_empty() && !pids.is_empty() {
            match perfstat::Counting::start(&pids, &self.plan.events) {
                Ok(c) => st.counting = Some(c),
                Err(e) => self.note(format!("perf stat: {e}")),
            }
        }
        if let Some(data) = self.perf_data.as_ref().filter(|_| !pids.is_empty()) {
            match profile::Recording::start(&pids, data) {
                Ok(r) => st.recording = Some(r),
                Err(e) => self.note(format!("perf record: {e}")),
            }
        }
        if !pids.is_empty() {
            st.snapshot = Some(others::Snapshot::take(&pids));
        }
        match w {
            ServerWatch::Local(w) => {
                let server = Box::new(move || {
                    let u = w.usage();
                    (u.cpu_s, u.rss_kib)
                });
                st.sampler = Some(sampler::Sampler::start(server, self.plan.interval));
            }
            // The system that matters is the server's: sampled on its host.
            ServerWatch::Remote(r) => {
                if let Err(e) = r.start_sampler(self.plan.interval) {
                    self.note(format!("sampler on the server's host: {e}"));
                }
            }
        }
    }

    fn measure_ended(&self) {
        let mut st = match self.state.lock() {
            Ok(s) => s,
            Err(_) => return,
        };
        let mut others = st.snapshot.take().map(|a| {
            let b = others::Snapshot::take(&self.watch.pids());
            others::between(&a, &b, std::process::id() as i32)
        });
        let sampled = match &self.watch {
            ServerWatch::Local(_) => st.sampler.take().map(|s| s.stop()),
            // Who else ran is read on the server's host, by its agent.
            ServerWatch::Remote(r) => match r.stop_sampler() {
                Ok(got) => {
                    others = got.others;
                    Some((got.samples, got.summary))
                }
                Err(e) => {
                    self.note(format!("sampler on the server's host: {e}"));
                    None
                }
            },
        };
        let usage = self.watch.usage();
        let mut counts = st
            .counting
            .take()
            .map(|c| c.stop().map_err(|e| e.to_string()));
        let recorded = st.recording.take().map(|r| r.stop());
        let mut remote_profile = None;
        if let ServerWatch::Remote(r) = &self.watch {
            if self.remote_probes() {
                match r.stop_perf() {
                    Ok(p) => {
                        counts = p.counts;
                        remote_profile = p.profile;
                        if let Some(e) = p.instrument_error {
                            self.note(e);
                        }
                    }
                    Err(e) => self.note(format!("probes on the server's host: {e}")),
                }
            }
        }
        let pids = self.watch.pids();
        if self.plan.instructions && !pids.is_empty() {
            if let Err(e) = callgrind::set_instrumentation_all(&pids, false) {
                self.note(format!("callgrind: cannot stop counting: {e}"));
            }
        }
        let mut errors = Vec::new();
        let counts = match counts {
            Some(Ok(c)) => Some(c),
            Some(Err(e)) => {
                errors.push(format!("perf stat: {e}"));
                None
            }
            None => None,
        };
        let perf_data = match recorded {
            Some(Ok(())) => self.perf_data.clone(),
            Some(Err(e)) => {
                errors.push(format!("perf record: {e}"));
                None
            }
            None => None,
        };
        let profile = match remote_profile {
            Some(Ok(p)) => Some(p),
            Some(Err(e)) => {
                errors.push(format!("perf record on the server's host: {e}"));
                None
            }
            None => None,
        };
        if let Ok(mut o) = self.out.lock() {
            o.usage_end = Some(usage);
            if let Some((samples, summary)) = sampled {
                o.samples = samples;
                o.summary = Some(summary);
            }
            o.counts = counts;
            o.others = others;
            o.perf_data = perf_data;
            o.profile = profile;
            o.errors.extend(errors);
        }
    }
}

/// Other processes named in a run, at most.
const OTHERS_NAMED: usize = 5;
/// Other processes below this share of the machine are not named.
const OTHERS_NAMED_PCT: f64 = 0.5;

/// Who else ran into the run; then whether the load set the pace, decided from both
/// sides.
pub fn attach_others(run: &mut Run, w: &others::Window) {
    run.others_cpu_pct = Some(w.others_cpu_pct());
    run.steal_pct = Some(w.steal_pct);
    run.machine_cpus = Some(w.cpus);
    run.others_top = w
        .others
        .iter()
        .map(|o| OtherProcess {
            name: o.name.clone(),
            cpu_pct: w.pct_of_machine(o.cpu_s),
        })
        .filter(|o| o.cpu_pct >= OTHERS_NAMED_PCT)
        .take(OTHERS_NAMED)
        .collect();
    run.server_thread_max_pct = w.server_thread_max_pct;
    run.server_wait_s = w.server_wait_s;
    run.client_bound = load_set_the_pace(run);
}

/// A server thread busy this share of the window (percent of one CPU) or more was
/// saturated: the server set the pace.
pub const SERVER_SATURATED_PCT: f64 = 90.0;

/// Whether the load engine, not the server, set a closed-loop run's pace: its own threads
/// saturated by its own work (running at least 90% of their window) while the server had
/// capacity left (no thread of it at 90% of a CPU, and all of it under 90% of the CPUs
/// it could use). A load that only waited for a CPU is not: behind another process that
/// is the machine's doing (`Run::machine_disturbance`), behind the server the server's.
/// Open-loop runs, and runs that do not say how many threads their load ran, keep what
/// their workload decided.
pub fn load_set_the_pace(run: &Run) -> bool {
    if run.offered_ops_per_s.is_some() {
        return run.client_bound;
    }
    let window = run.elapsed_s;
    let server_cpus = run
        .server_cpus
        .as_deref()
        .and_then(|c| bakeoff_os::cpus::CpuSet::parse(c).ok())
        .map(|c| c.len())
        .or(run.machine_cpus)
        .unwrap_or(1)
        .max(1);
    let server_saturated = run
        .server_thread_max_pct
        .is_some_and(|p| p >= SERVER_SATURATED_PCT)
        || (window > 0.0
            && run.server_cpu_s >= SERVER_SATURATED_PCT / 100.0 * server_cpus as f64 * window);
    let load_saturated = if run.client_threads > 0 && window > 0.0 {
        run.client_cpu_s >= bakeoff_engine::SATURATED * run.client_threads as f64 * window
    } else {
        run.client_bound
    };
    load_saturated && !server_saturated
}

/// The sampler's summary, per operation where it makes sense, with the CPU part of the
/// series inline.
pub fn system_record(
    s: &sampler::Summary,
    samples: &[sampler::Sample],
    ops: u64,
    series: Option<String>,
) -> SystemRecord {
    let ops = ops.max(1) as f64;
    let cpu_series = cpu_series(samples);
    SystemRecord {
        cpu_user_pct: s.cpu_user_pct,
        cpu_system_pct: s.cpu_system_pct,
        cpu_idle_pct: s.cpu_idle_pct,
        cpu_iowait_pct: s.cpu_iowait_pct,
        cpu_softirq_pct: s.cpu_softirq_pct,
        cpu_steal_pct: s.cpu_steal_pct,
        server_cpu_pct_mean: s.server_cpu_pct_mean,
        server_cpu_pct_max: s.server_cpu_pct_max,
        server_rss_kib_max: s.server_rss_kib_max,
        ctx_switches_per_op: s.ctx_switches as f64 / ops,
        disk_read_bytes: s.disk_read_bytes,
        disk_write_bytes: s.disk_write_bytes,
        disk_util_pct_max: s.disk_util_pct_max,
        loopback_bytes_per_op: s.loopback_bytes as f64 / ops,
        series,
        cpu_series,
    }
}

/// The sampler's intervals as the results keep them.
pub fn cpu_series(samples: &[sampler::Sample]) -> Vec<CpuSample> {
    samples
        .iter()
        .map(|x| CpuSample {
            t_s: x.t_s,
            user: x.cpu_user_pct + x.cpu_nice_pct,
            system: x.cpu_system_pct + x.cpu_irq_pct + x.cpu_softirq_pct,
            iowait: x.cpu_iowait_pct,
            idle: x.cpu_idle_pct,
            server: x.server_cpu_pct,
        })
        .collect()
}

pub fn counters_record(c: &perfstat::Counts, ops: u64, plan: &ProbePlan) -> CountersRecord {
    let d = perfstat::derive(c, ops);
    let mut unsupported = plan.unsupported.clone();
    for u in d.unsupported {
        if !unsupported.contains(&u) {
            unsupported.push(u);
        }
    }
    CountersRecord {
        instructions_per_op: d.instructions_per_op,
        cycles_per_op: d.cycles_per_op,
        ipc: d.ipc,
        cache_misses_per_kinstr: d.cache_misses_per_kinstr,
        branch_misses_per_kinstr: d.branch_misses_per_kinstr,
        itlb_misses_per_kinstr: d.itlb_misses_per_kinstr,
        l1i_misses_per_kinstr: d.l1i_misses_per_kinstr,
        unsupported,
    }
}

/// Functions shown per profile and per diff.
const TOP: usize = 25;

/// A profile's record (the flamegraph is written by the caller at `flamegraph`): the
/// [`TOP`] functions, and after them any further function whose lines were resolved (the
/// server's own hottest functions, [`hotlines::FUNCTIONS`] at most), so that a machine
/// whose kernel or other programs took the top places still shows the server's lines.
pub fn profile_record(p: &profile::Profile, flamegraph: String, round: usize) -> ProfileRecord {
    ProfileRecord {
        flamegraph,
        event: p.event.clone(),
        samples: p.samples,
        round,
        top: p
            .top
            .iter()
            .enumerate()
            .filter(|(i, f)| *i < TOP || !f.lines.is_empty())
            .map(|(_, f)| FnShareRecord {
                function: f.function.clone(),
                dso: f.dso.clone(),
                self_pct: f.self_pct,
                children_pct: f.children_pct,
                lines: f
                    .lines
                    .iter()
                    .map(|l| HotLineRecord {
                        place: l.place.clone(),
                        instruction: l.instruction.clone(),
                        pct: l.pct,
                    })
                    .collect(),
            })
            .collect(),
        split: SplitRecord {
            server_pct: p.split.server_pct,
            kernel_pct: p.split.kernel_pct,
            libraries_pct: p.split.libraries_pct,
            other_pct: p.split.other_pct,
        },
        diff: Vec::new(),
        line_diff: Vec::new(),
        lines_ms: p.lines_ms,
    }
}

pub fn diff_records(
    base: &profile::Profile,
    base_ops: u64,
    other: &profile::Profile,
    other_ops: u64,
) -> Vec<FnDeltaRecord> {
    profile::diff(base, base_ops, other, other_ops, TOP)
        .into_iter()
        .map(|d| FnDeltaRecord {
            function: d.function,
            base_per_mop: d.base_per_mop,
            other_per_mop: d.other_per_mop,
            change: d.change,
        })
        .collect()
}

/// Hot lines against the baseline's ([`hotlines::diff_lines`]).
pub fn line_diff_records(
    base: &profile::Profile,
    base_ops: u64,
    other: &profile::Profile,
    other_ops: u64,
) -> Vec<LineDeltaRecord> {
    hotlines::diff_lines(base, base_ops, other, other_ops, TOP)
        .into_iter()
        .map(|d| LineDeltaRecord {
            function: d.function,
            place: d.place,
            base_per_mop: d.base_per_mop,
            other_per_mop: d.other_per_mop,
            change: d.change,
        })
        .collect()
}

/// callgrind's counts of one run, per operation.
pub fn instructions_record(dir: &Path, ops: u64) -> Result<InstructionsRecord, String> {
    let c = callgrind::read_dir(dir).map_err(|e| format!("callgrind output: {e}"))?;
    if c.instructions == 0 {
        return Err("callgrind counted no instructions in the measured window".into());
    }
    let ops_f = ops.max(1) as f64;
    let total = c.instructions as f64;
    Ok(InstructionsRecord {
        instructions: c.instructions,
        instructions_per_op: total / ops_f,
        top: c
            .functions
            .iter()
            .take(TOP)
            .map(|f| FnInstructions {
                function: f.function.clone(),
                instructions_per_op: f.instructions as f64 / ops_f,
                pct: 100.0 * f.instructions as f64 / total,
            })
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(instructions: bool) -> ProbePlan {
        ProbePlan {
            interval: Duration::from_secs(1),
            events: Vec::new(),
            unsupported: Vec::new(),
            counters: false,
            profile: false,
            instructions,
            valgrind_fd_limit: Some(1000),
            notes: Vec::new(),
        }
    }

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn sanitized_servers_get_report_options_and_valgrind_wraps_memcheck() {
        let (w, env) = server_launch(&plan(false), &[Sanitizer::Address], None, Path::new("/x"));
        assert!(w.is_empty());
        assert!(env
            .iter()
            .any(|(k, v)| k == "ASAN_OPTIONS" && v.contains("detect_leaks=0")));
        let (w, env) = server_launch(&plan(false), &[], Some(RunUnder::Memcheck), Path::new("/x"));
        assert_eq!(w[..2], strings(&["valgrind", "--tool=memcheck"]));
        assert!(env.is_empty());
        let (w, _) = server_launch(&plan(true), &[], None, Path::new("/x"));
        assert!(w.iter().any(|a| a == "--tool=callgrind"), "{w:?}");
    }

    #[test]
    fn thread_sanitizer_keeps_serving_and_helgrind_wraps_the_server() {
        let (w, env) = server_launch(&plan(false), &[Sanitizer::Thread], None, Path::new("/x"));
        assert!(w.is_empty());
        assert!(env
            .iter()
            .any(|(k, v)| k == "TSAN_OPTIONS" && v.contains("halt_on_error=0")));
        let (w, env) = server_launch(&plan(false), &[], Some(RunUnder::Helgrind), Path::new("/x"));
        assert_eq!(w[..2], strings(&["valgrind", "--tool=helgrind"]));
        assert!(env.is_empty());
    }
}
