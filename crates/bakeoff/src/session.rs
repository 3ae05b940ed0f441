//! What the subcommands share: the experiment file loaded, the run's options, the
//! progress mode, the history record, a results folder read back, and the [`Failure`]
//! main turns into an exit status. Names neither the dispatch (`app.rs`) nor a
//! subcommand (`bisect.rs`, `tune.rs`), which all use it.

use crate::cli::{RunArgs, StoreArg};
use crate::progress::{Bars, Show};
use bakeoff_report::Results;
use bakeoff_runner::Options;
use bakeoff_store::{Entry, Side, Store};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

pub enum Failure {
    /// Bad input: exit status 2.
    BadInput(String),
    /// Could not finish: exit status 1.
    Failed(String),
    /// `--fail-on` was met: exit status 3.
    Threshold(String),
    /// The experiment finished, but a variant has a cell without one valid run (every
    /// run there failed to start, died or was invalid): exit status 4.
    NoValidRun(String),
    /// The experiment finished, but no comparison could be made: the baseline, or every
    /// variant compared with it, failed (build, fetch, start, data, verification): exit
    /// status 5.
    NoComparison(String),
    /// Ctrl-C or SIGTERM: exit status 130.
    Interrupted(String),
}

impl From<bakeoff_runner::study::StudyError> for Failure {
    fn from(e: bakeoff_runner::study::StudyError) -> Failure {
        use bakeoff_runner::study::StudyError;
        match e {
            StudyError::BadInput(m) => Failure::BadInput(m),
            StudyError::Failed(m) => Failure::Failed(m),
            StudyError::Interrupted(m) => Failure::Interrupted(m),
        }
    }
}

/// A study's steps (bisect, tune) as the command shows and keeps them: progress bars for
/// each step's experiment, and the history store for its results.
pub struct StudyHost<'a>(pub &'a RunArgs);

impl bakeoff_runner::study::Host for StudyHost<'_> {
    fn show(&self, f: &mut dyn FnMut(&dyn bakeoff_runner::Observer)) {
        let bars = Bars::new(progress_mode(self.0));
        f(&bars);
        bars.finish();
    }
    fn keep(&self, results: &Results, folder: &Path) {
        let _ = record(self.0, results, folder);
    }
}

pub fn load(path: &Path, set: &[String]) -> Result<bakeoff_plan::Loaded, Failure> {
    bakeoff_plan::load_with(path, set, &bakeoff_workloads::KINDS)
        .map_err(|e| Failure::BadInput(e.to_string()))
}

/// The run's options: the command line's, then the experiment's `[plan] sandbox_dir`
/// (relative to the file), then the defaults.
pub fn options(args: &RunArgs, loaded: &bakeoff_plan::Loaded) -> Options {
    Options {
        out: args.out.clone(),
        results_root: args.results_dir.clone(),
        cache_root: args
            .cache
            .clone()
            .unwrap_or_else(bakeoff_build::Cache::default_root),
        sandbox_root: sandbox_root(args.sandbox_dir.as_deref(), loaded),
        every_variant: false,
    }
}

/// The sandbox folder: `--sandbox-dir`, then the experiment's `[plan] sandbox_dir`
/// (relative to the file), then the default; made absolute against the working directory
/// here, once: servers start in their own sandbox folder, where a relative path (a data
/// dir, a socket, a log) would name something else.
pub fn sandbox_root(arg: Option<&Path>, loaded: &bakeoff_plan::Loaded) -> PathBuf {
    let root = arg
        .map(Path::to_path_buf)
        .or_else(|| {
            let dir = loaded.experiment.plan.sandbox_dir.as_ref()?;
            Some(loaded.resolve(Path::new(dir)))
        })
        .unwrap_or_else(bakeoff_sandbox::default_root);
    std::path::absolute(&root).unwrap_or(root)
}

/// Bars on a terminal, plain lines without one, nothing with --quiet.
pub fn progress_mode(args: &RunArgs) -> Show {
    match (args.quiet, std::io::stderr().is_terminal()) {
        (true, _) => Show::Quiet,
        (false, true) => Show::Bars,
        (false, false) => Show::Lines,
    }
}

/// Records a finished (or interrupted) experiment in the history store. A store that
/// cannot be written is a warning, never a failed run. Returns the id and the store.
pub fn record(args: &RunArgs, results: &Results, folder: &Path) -> Option<(i64, PathBuf)> {
    if args.no_history {
        return None;
    }
    let Some(path) = args
        .store
        .store
        .clone()
        .or_else(bakeoff_store::default_path)
    else {
        eprintln!(
            "warning: not recorded in the history: no store location ($HOME is not set); pass --store FILE"
        );
        return None;
    };
    let entry = Entry::from_results(results, folder);
    match Store::open(&path).and_then(|mut s| s.record(&entry)) {
        Ok(id) => Some((id, path)),
        Err(e) => {
            eprintln!("warning: not recorded in the history: {e}");
            None
        }
    }
}

/// A results folder's results.json, or one line saying why not.
pub fn read_results(dir: &Path) -> Result<Results, String> {
    let path = dir.join("results.json");
    let text = bakeoff_plan::read_input(&path, "results file").map_err(|e| {
        format!(
            "{}: {e}; give a folder written by `bakeoff run`",
            path.display()
        )
    })?;
    Results::from_json(&text).map_err(|m| format!("{}: {m}", path.display()))
}

/// A derived experiment that could not be loaded: a file not written is a failure, one
/// the checks refuse is bad input (the user's file derives it).
pub fn derived_failure(e: bakeoff_plan::derived::DerivedError) -> Failure {
    match e {
        bakeoff_plan::derived::DerivedError::Write(m) => Failure::Failed(m),
        bakeoff_plan::derived::DerivedError::Load(err) => Failure::BadInput(err.to_string()),
    }
}

/// The store's path: --store, else the default location.
pub fn store_path(arg: &StoreArg) -> Result<PathBuf, Failure> {
    arg.store
        .clone()
        .or_else(bakeoff_store::default_path)
        .ok_or_else(|| {
            Failure::BadInput(
                "no history store: $HOME is not set; pass --store FILE or set $BAKEOFF_STORE"
                    .into(),
            )
        })
}

pub fn store_failure(e: bakeoff_store::Error) -> Failure {
    if e.is_bad_input() {
        Failure::BadInput(e.to_string())
    } else {
        Failure::Failed(e.to_string())
    }
}

/// A compare argument: a results folder (or its results.json), else a history id.
pub fn side(arg: &str, store: &StoreArg) -> Result<Side, Failure> {
    let p = Path::new(arg);
    let folder = if p.is_file() && p.file_name().is_some_and(|n| n == "results.json") {
        p.parent().map(Path::to_path_buf)
    } else if p.is_dir() {
        Some(p.to_path_buf())
    } else {
        None
    };
    if let Some(folder) = folder {
        let results = read_results(&folder).map_err(Failure::BadInput)?;
        let folder = std::fs::canonicalize(&folder).unwrap_or(folder);
        return Ok(Side {
            results,
            folder,
            id: None,
        });
    }
    let Ok(id) = arg.parse::<i64>() else {
        return Err(Failure::BadInput(format!(
            "{arg}: no such results folder (and not a history id)"
        )));
    };
    let path = store_path(store)?;
    let Some(store) = Store::open_existing(&path).map_err(store_failure)? else {
        return Err(Failure::BadInput(format!(
            "{arg}: no such results folder, and no history store at {} to look up an id in",
            path.display()
        )));
    };
    let Some(rec) = store.get(id).map_err(store_failure)? else {
        return Err(Failure::BadInput(format!(
            "{arg}: no such results folder, and no experiment #{id} in the history ({}); `bakeoff history` lists them",
            path.display()
        )));
    };
    let results = read_results(&rec.entry.folder)
        .map_err(|m| Failure::BadInput(format!("history #{id}: {m}")))?;
    Ok(Side {
        results,
        folder: rec.entry.folder,
        id: Some(id),
    })
}
