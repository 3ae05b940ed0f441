//! What every run of the measured rounds reads: the experiment, its workloads and ready
//! variants, the prepared data, the probes, the other hosts and the CPUs, and the names a
//! run goes by (its label, its files, its cell). `execute.rs` runs the rounds on it,
//! `one_run.rs` one run and `profiling.rs` the profiling runs; the methods they share are
//! here, so those three modules reach each other only downwards.
//!
//! The seam between the rounds and a run is [`Launcher`]: the rounds, the capacity
//! searches and the profiling runs ask it for one run of a slot and read the time from
//! it. `one_run.rs` implements it for real (a sandbox, the workload, the probes); the
//! runner's loop tests give a scripted one (`loop_tests.rs`), so scheduling, stopping and
//! budgets are tested in milliseconds without a server.

use crate::datadirs::DataStore;
use crate::folder::{safe_name, Folder};
use crate::options::Options;
use crate::placement::Placement;
use crate::probes::ProbePlan;
use crate::ready::{ReadyVariant, Workloads};
use crate::remote::Hosts;
use crate::schedule::Slot;
use bakeoff_engine::Live;
use bakeoff_plan::Loaded;
use bakeoff_probe::profile;
use bakeoff_report::model::{MemoryError, Results, Run};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// One run and what came with it besides the figures.
pub struct Executed {
    pub run: Run,
    /// The analyzed profile, when this was a profiling run.
    pub profile: Option<profile::Profile>,
    /// Sanitizer or memcheck reports from the server's stderr.
    pub findings: Vec<MemoryError>,
    /// The settings its server read back before the load (None: it never became ready).
    pub settings: Option<SettingsRead>,
}

/// What one run read of its server's settings (`settings.rs`): the settings or why
/// not, and how long reading took.
#[derive(Debug, Clone)]
pub struct SettingsRead {
    pub settings: Result<std::collections::BTreeMap<String, String>, String>,
    pub ms: f64,
}

/// Which kind of run a slot gets.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Launch {
    /// A measured run of the rounds (or a capacity search's closed-loop peak).
    Measured,
    /// A profiling run: the server recorded with perf record over the measured window.
    Profiled,
    /// A capacity trial: an open loop at this offered rate (ops/s).
    At(f64),
}

/// What runs a slot, and the clock the rounds' budget is read on.
pub trait Launcher: Sync {
    /// One run of `slot`, start to stop. Never fails: a fault is an invalid run.
    fn launch(&self, ctx: &Context<'_>, slot: &Slot, live: &Arc<Live>, how: Launch) -> Executed;

    /// The time now (a scripted launcher's clock moves by its runs' scripted wall time).
    fn now(&self) -> Instant {
        Instant::now()
    }
}

pub struct Context<'a> {
    pub loaded: &'a Loaded,
    pub opts: &'a Options,
    pub folder: &'a Folder,
    pub configs: &'a Workloads,
    pub variants: &'a [ReadyVariant],
    pub data: &'a DataStore,
    pub cancel: Arc<AtomicBool>,
    pub probes: &'a ProbePlan,
    /// The agents on other hosts (none when all runs here).
    pub remote: &'a Arc<Hosts>,
    /// The server's and the load's CPUs here (None: neither pinned).
    pub placement: Option<&'a Placement>,
    /// The first failed write to the results folder: it stops the rounds at once.
    pub write_error: Mutex<Option<String>>,
    /// What runs each slot (`one_run::Sandboxed` for real).
    pub launcher: &'a dyn Launcher,
}

impl Context<'_> {
    /// One run of `slot` through the launcher.
    pub(crate) fn launch(&self, slot: &Slot, live: &Arc<Live>, how: Launch) -> Executed {
        self.launcher.launch(self, slot, live, how)
    }

    /// The workload a slot runs, as made for its variant's kind of server.
    pub(crate) fn workload(&self, slot: &Slot) -> &dyn bakeoff_workloads::Workload {
        self.configs
            .of_kind(self.variants[slot.variant].kind, slot.workload)
    }

    /// Seconds since `started` on the launcher's clock.
    pub(crate) fn since(&self, started: Instant) -> std::time::Duration {
        self.launcher.now().saturating_duration_since(started)
    }

    /// Memory-error reports go to the variant; any one fails its verification.
    pub(crate) fn record_findings(
        &self,
        results: &mut Results,
        slot: &Slot,
        found: Vec<MemoryError>,
    ) {
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

    /// Keeps the first write error for run_experiment to report.
    pub(crate) fn stop_on_write_error(&self, e: crate::error::RunError) {
        let mut first = self.write_error.lock().unwrap_or_else(|p| p.into_inner());
        first.get_or_insert(e.to_string());
    }

    /// Whether the comparisons of `results` that `keep` picks (those of one point) cover
    /// every variant but the baseline and each could detect a difference of `target`: the
    /// precision reached.
    pub(crate) fn comparisons_precise(
        &self,
        results: &Results,
        target: f64,
        keep: impl Fn(&bakeoff_report::model::ComparisonRecord) -> bool,
    ) -> bool {
        let ks: Vec<_> = results.comparisons.iter().filter(|k| keep(k)).collect();
        ks.len() + 1 == self.variants.len()
            && ks.iter().all(|k| k.detectable.is_some_and(|d| d <= target))
    }

    pub(crate) fn seconds_per_run(&self) -> f64 {
        self.loaded.experiment.run_seconds_guess()
    }

    pub(crate) fn cell_index(&self, r: &Results, s: &Slot) -> usize {
        let w = self.configs[s.workload].name();
        let v = &self.variants[s.variant].name;
        r.cells
            .iter()
            .position(|c| c.workload == w && &c.variant == v && c.connections == s.connections)
            .unwrap_or(0)
    }

    /// The name of a run's files in the results folder (logs, histogram, series,
    /// callgrind, perf data): each name made safe on its own and joined with '+', which
    /// `safe_name` never writes, so that distinct runs never share a file (the check
    /// refuses two variant or workload names that become one file name).
    pub(crate) fn run_file(&self, s: &Slot, profiling: bool) -> String {
        format!(
            "{}+{}+x{}+r{}{}{}",
            safe_name(&self.variants[s.variant].name),
            safe_name(self.configs[s.workload].name()),
            s.connections,
            s.round + 1,
            if profiling { "+profile" } else { "" },
            if self.instruction_run() {
                "+instructions"
            } else {
                ""
            }
        )
    }

    /// A run's name in the progress display and the order of runs; an instruction-count
    /// run of mode both says so ("instructions r2": its own rounds).
    pub fn label(&self, s: &Slot) -> String {
        format!(
            "{} {} x{} {}r{}",
            self.variants[s.variant].name,
            self.configs[s.workload].name(),
            s.connections,
            if self.instruction_run() {
                "instructions "
            } else {
                ""
            },
            s.round + 1
        )
    }

    /// Whether this context's runs are the instruction-count runs of mode both (the
    /// server under callgrind beside the wall-clock rounds; `counting.rs`).
    pub(crate) fn instruction_run(&self) -> bool {
        self.probes.instructions && self.loaded.experiment.plan.mode == bakeoff_plan::Mode::Both
    }
}
