//! The real steps of a study (`bakeoff_study::Runs`): each step an experiment derived
//! from the user's file, run by the runner, its results read back. The studies decide
//! (`bakeoff_bisect::Bisect`, `bakeoff_tune::Tuning`); this module runs what they ask
//! and names every folder, once: the study's own (`folder`), and each step's inside it
//! (`step-<n>-<commit>`, `stage-<n>`, `check`). The command around it supplies what only
//! it has (`Host`: the progress display of each experiment, the history store) and the
//! experiment engine (`Experiments`: lib.rs's `Engine`, which runs `run_experiment`; a
//! module may not name lib.rs's items).

mod bisect;
#[cfg(test)]
mod tests;
mod tune;

pub use bisect::BisectSteps;
pub use tune::TuneStages;

use crate::error::RunError;
use crate::observer::{Observer, RoundStatus};
use crate::options::Options;
use bakeoff_engine::Live;
use bakeoff_plan::derived::DerivedError;
use bakeoff_plan::Loaded;
use bakeoff_report::model::{BuildRecord, Results, Run};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// What the command adds around each derived experiment.
pub trait Host {
    /// Runs `f` with the progress display of one experiment (made before, finished
    /// after).
    fn show(&self, f: &mut dyn FnMut(&dyn Observer));
    /// Keeps a finished (or interrupted) experiment's results: the history store.
    fn keep(&self, results: &Results, folder: &Path);
}

/// Runs one experiment: the runner's `run_experiment` (lib.rs's `Engine`).
pub trait Experiments {
    fn run(
        &self,
        loaded: &Loaded,
        opts: &Options,
        observer: &dyn Observer,
        cancel: Arc<AtomicBool>,
    ) -> Result<(Results, PathBuf), RunError>;
}

/// Why a study stopped where it was.
#[derive(Debug, Clone, PartialEq)]
pub enum StudyError {
    /// The user's file derives a step the checks refuse, or the runner found bad input.
    BadInput(String),
    /// A step could not be written, loaded or read.
    Failed(String),
    /// Ctrl-C or SIGTERM; what finished is kept.
    Interrupted(String),
}

/// The study's results folder, created: `out`, else
/// `<results_dir>/<study>-<experiment>-<stamp>`.
pub fn folder(
    out: Option<&Path>,
    results_dir: &Path,
    study: &str,
    experiment: &str,
) -> Result<PathBuf, String> {
    let folder = match out {
        Some(out) => out.to_path_buf(),
        None => {
            let stamp: String = crate::folder::now_utc()
                .chars()
                .filter(|c| c.is_ascii_alphanumeric())
                .collect();
            results_dir.join(format!(
                "{study}-{}-{stamp}",
                bakeoff_os::path::safe_name(experiment)
            ))
        }
    };
    std::fs::create_dir_all(&folder)
        .map_err(|err| format!("cannot create {}: {err}", folder.display()))?;
    Ok(folder)
}

/// A rule of the step's own that ends its rounds (`Observer::enough`).
pub type Enough<'a> = dyn Fn(&Results) -> Option<String> + Sync + 'a;

/// What every step of a study shares: the user's experiment, the options, the command's
/// side, the engine, the study's folder.
pub struct Deriving<'a> {
    pub loaded: &'a Loaded,
    pub opts: Options,
    pub host: &'a dyn Host,
    pub engine: &'a dyn Experiments,
    pub cancel: Arc<AtomicBool>,
    /// The study's folder; each step's folder is made inside it.
    pub folder: PathBuf,
}

/// One step's experiment, derived.
struct Derived<'a> {
    text: String,
    /// The derived file's name (written beside the user's, then removed).
    tag: String,
    dir: PathBuf,
    /// Keep every variant's runs even when one fails (bisect: the step's failure is
    /// an outcome).
    every_variant: bool,
    enough: Option<&'a Enough<'a>>,
    /// Keep finished results in the history store (interrupted ones always are).
    keep_finished: bool,
    load_failed: fn(DerivedError) -> StudyError,
}

/// How a step's experiment ended.
enum Ran {
    Finished(Results),
    /// It stopped with this error; the folder's results, when it wrote any.
    Failed {
        error: String,
        results: Option<Results>,
    },
}

impl Deriving<'_> {
    /// Derive, run, read: the one path every step takes.
    fn run(&self, d: Derived<'_>) -> Result<Ran, StudyError> {
        let loaded = bakeoff_plan::derived::load_derived(
            &self.loaded.path,
            &d.tag,
            &d.text,
            &bakeoff_workloads::KINDS,
        )
        .map_err(d.load_failed)?;
        let mut opts = self.opts.clone();
        opts.out = Some(d.dir.clone());
        opts.every_variant |= d.every_variant;
        let mut outcome = None;
        self.host.show(&mut |shown| {
            let ruled;
            let observer: &dyn Observer = match d.enough {
                Some(enough) => {
                    ruled = RuledBy { shown, enough };
                    &ruled
                }
                None => shown,
            };
            outcome = Some(
                self.engine
                    .run(&loaded, &opts, observer, self.cancel.clone()),
            );
        });
        let outcome = outcome
            .unwrap_or_else(|| Err(RunError::Failed("the step's experiment was not run".into())));
        match outcome {
            Ok((results, folder)) => {
                if d.keep_finished {
                    self.host.keep(&results, &folder);
                }
                Ok(Ran::Finished(results))
            }
            Err(RunError::Interrupted(f)) => {
                if let Some(r) = read_results(&f) {
                    self.host.keep(&r, &f);
                }
                Err(StudyError::Interrupted(
                    RunError::Interrupted(f).to_string(),
                ))
            }
            Err(RunError::BadInput(m)) => Err(StudyError::BadInput(m)),
            Err(err) => Ok(Ran::Failed {
                error: err.to_string(),
                results: read_results(&d.dir),
            }),
        }
    }
}

/// A folder's results.json, when it reads.
fn read_results(dir: &Path) -> Option<Results> {
    let text = bakeoff_plan::read_input(&dir.join("results.json"), "results file").ok()?;
    Results::from_json(&text).ok()
}

/// The command's observer, plus a step's own rule: rounds stop once it decides.
struct RuledBy<'a> {
    shown: &'a dyn Observer,
    enough: &'a Enough<'a>,
}

impl Observer for RuledBy<'_> {
    fn notice(&self, line: &str) {
        self.shown.notice(line)
    }
    fn builds_started(&self, total: usize) {
        self.shown.builds_started(total)
    }
    fn build_started(&self, variant: &str) {
        self.shown.build_started(variant)
    }
    fn build_finished(&self, variant: &str, outcome: Result<&BuildRecord, &str>) {
        self.shown.build_finished(variant, outcome)
    }
    fn runs_started(&self, total: usize, seconds_each: f64) {
        self.shown.runs_started(total, seconds_each)
    }
    fn run_started(&self, index: usize, label: &str, live: &Arc<Live>) {
        self.shown.run_started(index, label, live)
    }
    fn run_finished(&self, index: usize, label: &str, run: &Run) {
        self.shown.run_finished(index, label, run)
    }
    fn round_finished(&self, status: &RoundStatus) {
        self.shown.round_finished(status)
    }
    fn own_rule(&self) -> bool {
        true
    }
    fn enough(&self, results: &Results) -> Option<String> {
        (self.enough)(results)
    }
}
