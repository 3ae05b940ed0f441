//! bakeoff-runner: the experiment engine. It takes a validated experiment and does the
//! whole path: stale sandboxes reaped, compilers checked, source fetched, variants built
//! (cached), then the planned runs in interleaved order, each in a fresh sandbox, with the
//! results folder rewritten after every run. It never reads CLI arguments; it reports
//! progress through an [`Observer`].

// Leaves, used by the stages and using none of them: what they hand each other.
mod context;
mod error;
mod observer;
mod options;
mod ready;

mod aa;
#[cfg(test)]
mod aa_tests;
mod analyze;
mod capacity;
mod capacity_figures;
mod checks;
mod counting;
mod datadirs;
mod deadline;
mod dist;
mod equivalence;
mod execute;
mod folder;
mod forecast;
mod host;
#[cfg(test)]
mod loop_tests;
mod measured;
#[cfg(test)]
mod noise_tests;
mod one_run;
mod placement;
mod probes;
mod profiling;
pub mod remote;
mod schedule;
mod server_changes;
mod server_stats;
mod settings;
mod statements;

pub mod study;
mod system;
mod training;
mod variants;

pub use analyze::analyze;
pub use bakeoff_engine::Live;
pub use capacity_figures::cost_lines as capacity_cost;
pub use capacity_figures::{wall_seconds_guess, wall_time_line};
pub use error::RunError;
pub use folder::{write_results, Folder, PURPOSE as RESULTS_PURPOSE};
pub use forecast::{from_baseline as baseline_forecast, NOISE_RUNS};
pub use observer::{Observer, Quiet, RoundStatus};
pub use options::Options;
pub use schedule::{plan_runs, Rounds, Slot};
pub use system::check_line as system_line;

use bakeoff_plan::Loaded;
use bakeoff_report::model::CpuPlacement;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// The experiment engine as a study's steps reach it (`study::Experiments`): each derived
/// experiment through [`run_experiment`].
pub struct Engine;

impl study::Experiments for Engine {
    fn run(
        &self,
        loaded: &Loaded,
        opts: &Options,
        observer: &dyn Observer,
        cancel: Arc<AtomicBool>,
    ) -> Result<(bakeoff_report::Results, PathBuf), RunError> {
        run_experiment(loaded, opts, observer, cancel).map(|o| (o.results, o.folder))
    }
}

/// A finished experiment: its folder and results.
pub struct Outcome {
    pub folder: PathBuf,
    pub results: bakeoff_report::Results,
}

/// Every check that needs the machine but starts nothing (the sandbox folder, compilers
/// and binaries found, tools, query and log files parsed, server argument lists), the
/// same `run` and `verify` make before anything runs, except that no program the file
/// names is run: a compiler is found on PATH, not asked for its `--version`. Returns
/// what each `[[host]]` is, having reached it with ssh (the command line it ran is in
/// [`remote::HostFacts::command`]).
pub fn check(
    loaded: &Loaded,
    sandbox_root: &std::path::Path,
) -> Result<Vec<remote::HostFacts>, RunError> {
    checks::sandbox_root(loaded, sandbox_root)?;
    checks::check_inputs(loaded, checks::Programs::Find)?;
    placement::resolve(loaded)?;
    remote::reach(loaded)
}

/// `bakeoff verify`: builds, prepared data and the result verification only, no
/// measured run. The results folder holds the verdicts (`verification`).
pub fn verify_experiment(
    loaded: &Loaded,
    opts: &Options,
    observer: &dyn Observer,
) -> Result<Outcome, RunError> {
    let mut o = open(loaded, opts, observer, Stage::Verify)?;
    let mut variants = o.variants(loaded, opts, observer)?;
    o.measured_only(loaded);
    let store = o.place_and_prepare(loaded, opts, &mut variants, observer);
    let mut verifying = loaded.clone();
    verifying.experiment.verify.enabled = true;
    o.verify_all(&verifying, opts, &variants, &store, observer);
    o.results.status = "complete".into();
    o.results.finished_utc = Some(folder::now_utc());
    analyze(&mut o.results);
    write_results(&o.folder, &o.results)?;
    Ok(Outcome {
        folder: o.folder.path.clone(),
        results: o.results,
    })
}

/// What `run` and `verify` hold once their common opening is done.
struct Opened {
    configs: ready::Workloads,
    placement: Option<placement::Placement>,
    facts: Vec<remote::HostFacts>,
    hosts: Arc<remote::Hosts>,
    folder: Folder,
    results: bakeoff_report::Results,
}

impl Opened {
    /// Every variant built or found (`variants::variants`), recorded in the results.
    fn variants(
        &mut self,
        loaded: &Loaded,
        opts: &Options,
        observer: &dyn Observer,
    ) -> Result<Vec<ready::ReadyVariant>, RunError> {
        variants::variants(
            loaded,
            opts,
            &self.configs,
            &self.folder,
            observer,
            &mut self.results,
            &self.hosts,
        )
    }

    /// Training-only workloads served the builds; the rest of the experiment measures.
    fn measured_only(&mut self, loaded: &Loaded) {
        self.configs = checks::measured(loaded, std::mem::take(&mut self.configs));
    }

    /// Puts the servers on their host (when the experiment has one), then makes every
    /// variant's prepared data where its server runs.
    fn place_and_prepare(
        &mut self,
        loaded: &Loaded,
        opts: &Options,
        variants: &mut Vec<ready::ReadyVariant>,
        observer: &dyn Observer,
    ) -> datadirs::DataStore {
        let (configs, results, hosts) = (&self.configs, &mut self.results, &self.hosts);
        hosts.stage(loaded, variants, results, observer);
        let (place, root) = hosts.data_place().unwrap_or_else(|| {
            let here: Arc<dyn datadirs::DataPlace> = Arc::new(datadirs::Here);
            let root = datadirs::local_root(opts);
            datadirs::make_local_root(&root);
            (here, root)
        });
        datadirs::prepare(
            loaded, opts, configs, variants, results, observer, place, root,
        )
    }

    /// The result verification of every variant (`equivalence::verify_all`).
    fn verify_all(
        &mut self,
        loaded: &Loaded,
        opts: &Options,
        variants: &[ready::ReadyVariant],
        store: &datadirs::DataStore,
        observer: &dyn Observer,
    ) {
        equivalence::verify_all(
            loaded,
            opts,
            &self.configs,
            variants,
            store,
            &mut self.results,
            observer,
        );
    }
}

/// Which command opens.
#[derive(PartialEq)]
enum Stage {
    Run,
    Verify,
}

/// The opening `run` and `verify` share: the sandbox folder checked (and, for verify,
/// the target: verify compares SQL results) and claimed (stale sandboxes and data of a
/// killed bakeoff reaped), the build cache claimed, inputs, space, CPUs and hosts
/// checked, the agents on other hosts started, the results folder created with its first
/// results.
fn open(
    loaded: &Loaded,
    opts: &Options,
    observer: &dyn Observer,
    stage: Stage,
) -> Result<Opened, RunError> {
    checks::sandbox_root(loaded, &opts.sandbox_root)?;
    let not_sql = loaded
        .experiment
        .variant_kinds()
        .into_iter()
        .find(|k| !k.is_sql());
    if let (Stage::Verify, Some(kind)) = (&stage, not_sql) {
        return Err(RunError::BadInput(format!(
            "{}: bakeoff verify compares SQL results; this experiment's target is {}",
            loaded.path.display(),
            kind.as_str()
        )));
    }
    checks::claim_sandbox_root(loaded, &opts.sandbox_root)?;
    checks::claim_cache(&opts.cache_root)?;
    for stale in bakeoff_sandbox::reap_stale(&opts.sandbox_root) {
        observer.notice(&stale.to_string());
    }
    for stale in datadirs::reap_stale(&opts.sandbox_root) {
        observer.notice(&stale);
    }
    if !loaded.experiment.hosts.is_empty() {
        for stale in remote::reap_stale_sockets() {
            observer.notice(&stale);
        }
    }
    let configs = checks::check_inputs(loaded, checks::Programs::Run)?;
    let sandbox_fs = checks::sandbox_space(loaded, &configs, &opts.sandbox_root)?;
    let placement = placement::resolve(loaded)?;
    let facts = remote::reach(loaded)?;
    let hosts = Arc::new(remote::Hosts::connect(loaded, observer)?);
    let folder = Folder::create(loaded, opts)?;
    let mut results = folder::initial_results(loaded);
    settings::mask_experiment(loaded, &mut results.experiment);
    checks::record_sandbox(&mut results.host, &opts.sandbox_root, sandbox_fs);
    Ok(Opened {
        configs,
        placement,
        facts,
        hosts,
        folder,
        results,
    })
}

/// The probes of every run: CPU counters that count wherever a variant serves (this
/// machine, `[target] host`, variants' own hosts), the events all of them count.
fn probe_plan(loaded: &Loaded, hosts: &remote::Hosts) -> probes::ProbePlan {
    let e = &loaded.experiment;
    let mut places: Vec<Option<&str>> = Vec::new();
    for v in &e.variants {
        let p = e.server_host(&v.name);
        if !places.contains(&p) {
            places.push(p);
        }
    }
    let name = |p: &Option<&str>| p.map_or("this machine".to_string(), |h| format!("host {h}"));
    let support = |p: &Option<&str>| match p {
        Some(h) => hosts.perf_support(h),
        None => bakeoff_probe::perfstat::detect(),
    };
    let place = places.iter().map(name).collect::<Vec<_>>().join(" and ");
    probes::ProbePlan::new(e, &place, &|| {
        // An event is counted only where every server counts it.
        let mut all: Option<bakeoff_probe::perfstat::Support> = None;
        for p in &places {
            let s = support(p)?;
            all = Some(match all {
                None => s,
                Some(mut a) => {
                    a.supported.retain(|x| s.supported.contains(x));
                    for u in s.unsupported {
                        if !a.unsupported.contains(&u) {
                            a.unsupported.push(u);
                        }
                    }
                    a.supported.retain(|x| !a.unsupported.contains(x));
                    a
                }
            });
        }
        all.ok_or_else(|| "no variant to count on".to_string())
    })
}

impl Opened {
    /// What the results say before any build: where the server and the load run, the
    /// hosts, and the warnings known from the start (analyze says them again with the
    /// rest).
    fn before_builds(&mut self, loaded: &Loaded) {
        self.results.host.cpus = self.placement.as_ref().map(|p| CpuPlacement {
            server: p.server.to_string(),
            load: p.load.to_string(),
            by: if p.asked { "plan" } else { "split" }.into(),
        });
        self.results.hosts = remote::records(loaded, &self.facts);
        self.hosts.machines_into(&mut self.results.hosts);
        let said = analyze::warnings(&self.results);
        self.results.set_warnings(said);
    }
}

/// The experiment stopped before its end (results unwritable, a host gone): failed, with
/// `why` as a warning, analyzed as far as it got.
fn stopped(results: &mut bakeoff_report::Results, why: &str) {
    results.status = "failed".into();
    results.finished_utc = Some(folder::now_utc());
    results.warn(bakeoff_report::warning::Warning::new(
        bakeoff_report::warning::WarningCode::RunStopped,
        why,
    ));
    analyze(results);
}

/// Runs the whole experiment. `cancel` is set by the signal handler.
pub fn run_experiment(
    loaded: &Loaded,
    opts: &Options,
    observer: &dyn Observer,
    cancel: Arc<AtomicBool>,
) -> Result<Outcome, RunError> {
    let mut o = open(loaded, opts, observer, Stage::Run)?;
    o.before_builds(loaded);
    write_results(&o.folder, &o.results)?;
    if let Some(line) = capacity_figures::wall_time_line(loaded) {
        observer.notice(&line);
    }
    let mut variants = o.variants(loaded, opts, observer)?;
    aa::add(loaded, &mut variants, &mut o.results, observer);
    o.measured_only(loaded);
    write_results(&o.folder, &o.results)?;
    if opts.every_variant {
        if let Some(v) = o.results.variants.iter().find(|v| v.status != "ok") {
            return Err(RunError::Failed(format!(
                "variant {} failed: {}",
                v.name,
                v.error.as_deref().unwrap_or("?")
            )));
        }
    }
    let store = o.place_and_prepare(loaded, opts, &mut variants, observer);
    write_results(&o.folder, &o.results)?;
    if variants.is_empty() {
        return Err(RunError::Failed(
            "no variant is left to run (its build, data load or first start failed); see the errors above".into(),
        ));
    }
    o.verify_all(loaded, opts, &variants, &store, observer);
    let Opened {
        configs,
        placement,
        hosts,
        folder,
        mut results,
        ..
    } = o;
    write_results(&folder, &results)?;
    let probe_plan = probe_plan(loaded, &hosts);
    probe_plan.notes.iter().for_each(|n| observer.notice(n));
    results.notes.extend(probe_plan.notes.iter().cloned());
    let ctx = context::Context {
        loaded,
        opts,
        folder: &folder,
        configs: &configs,
        variants: &variants,
        data: &store,
        cancel,
        probes: &probe_plan,
        remote: &hosts,
        placement: placement.as_ref(),
        write_error: std::sync::Mutex::new(None),
        launcher: &one_run::Sandboxed,
    };
    let finished = {
        let _pinned = placement.as_ref().map(|p| p.pin_load()).transpose()?;
        execute::run_all(&ctx, &mut results, observer)
    };
    let write_error = ctx
        .write_error
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .take();
    if let Some(why) = write_error {
        stopped(&mut results, &why);
        let runs: usize = results.cells.iter().map(|c| c.runs.len()).sum();
        return Err(RunError::Unwritable {
            message: format!(
                "{why}; the experiment stopped after {runs} run(s): results.json there holds the runs written before (free space and run again, or `bakeoff report {}`)",
                folder.path.display()
            ),
            results: Box::new(results),
        });
    }
    if let Some(why) = hosts.gone() {
        stopped(&mut results, &why);
        write_results(&folder, &results)?;
        return Err(RunError::Failed(format!(
            "{why}; the runs so far are in {}",
            folder.path.display()
        )));
    }
    results.status = if finished { "complete" } else { "interrupted" }.to_string();
    results.finished_utc = Some(folder::now_utc());
    analyze(&mut results);
    write_results(&folder, &results)?;
    if !finished {
        return Err(RunError::Interrupted(folder.path.clone()));
    }
    Ok(Outcome {
        folder: folder.path.clone(),
        results,
    })
}
