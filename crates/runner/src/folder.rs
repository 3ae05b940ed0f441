//! The results folder: created once, rewritten after every run. Every file is written with
//! `bakeoff_os::file::write_atomic` (a synced temporary name renamed into place), so a
//! crash or kill -9 leaves the previous complete version, never a half-written one.

use crate::error::RunError;
use crate::host;
use crate::options::Options;
use bakeoff_plan::{Loaded, MeasureFor};
use bakeoff_report::model::{ExperimentRecord, PlanRecord, Results, SCHEMA};
use std::path::PathBuf;

pub struct Folder {
    pub path: PathBuf,
}

impl Folder {
    /// Creates `--out DIR` (which must be empty or absent) or a new timestamped folder.
    pub fn create(loaded: &Loaded, opts: &Options) -> Result<Folder, RunError> {
        let path = match &opts.out {
            Some(p) => p.clone(),
            None => {
                let stamp: String = now_utc()
                    .chars()
                    .filter(|c| c.is_ascii_alphanumeric())
                    .collect();
                opts.results_root
                    .join(format!("{}-{stamp}", safe_name(&loaded.experiment.name)))
            }
        };
        if path.is_dir()
            && std::fs::read_dir(&path)
                .map(|mut d| d.next().is_some())
                .unwrap_or(false)
        {
            return Err(RunError::BadInput(format!(
                "results folder {} already exists and is not empty; choose another --out",
                path.display()
            )));
        }
        std::fs::create_dir_all(path.join("logs"))
            .and_then(|_| std::fs::create_dir_all(path.join("hdr")))
            .map_err(|e| {
                RunError::BadInput(format!(
                    "cannot create results folder {}: {e}; check permissions or pass --out",
                    path.display()
                ))
            })?;
        Ok(Folder { path })
    }

    /// Writes `bytes` to `rel` inside the folder atomically.
    pub fn write(&self, rel: &str, bytes: &[u8]) -> std::io::Result<()> {
        let path = self.path.join(rel);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        bakeoff_os::file::write_atomic(&path, bytes)
    }
}

/// Writes every exporter's file into the folder.
pub fn write_results(folder: &Folder, r: &Results) -> Result<(), RunError> {
    for ex in bakeoff_report::exporters_with(&bakeoff_workloads::KINDS) {
        folder.write(ex.file_name(), &ex.render(r)).map_err(|e| {
            RunError::Failed(format!(
                "cannot write {} in {}: {e}",
                ex.file_name(),
                folder.path.display()
            ))
        })?;
    }
    Ok(())
}

/// Now, as RFC 3339 UTC with seconds.
pub fn now_utc() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()
}

pub use bakeoff_os::path::safe_name;

/// The results as they stand before anything ran.
pub fn initial_results(l: &Loaded) -> Results {
    let e = &l.experiment;
    let (duration_s, ops) = match e.measure() {
        // In mode both, ops is what each instruction-count run measures.
        MeasureFor::Time(d) => (Some(d.as_secs_f64()), e.instruction_ops()),
        MeasureFor::Ops(n) => (None, Some(n)),
    };
    let stop = e.plan.stopping();
    Results {
        schema: SCHEMA.to_string(),
        name: e.name.clone(),
        description: e.description.clone(),
        status: "running".into(),
        bakeoff_version: env!("CARGO_PKG_VERSION").to_string(),
        started_utc: now_utc(),
        finished_utc: None,
        host: host::facts(),
        experiment: ExperimentRecord {
            file: l.path.display().to_string(),
            text: l.text.clone(),
            resolved: serde_json::to_value(e).unwrap_or_default(),
        },
        plan: PlanRecord {
            repetitions: stop.max_rounds,
            warmup_s: e.warmup().as_secs_f64(),
            duration_s,
            ops,
            seed: e.plan.seed,
            baseline: e.baseline().to_string(),
            budget_s: stop.budget.map(|b| b.as_secs_f64()),
            precision: stop.precision,
            equivalence: e.plan.equivalence_band(),
            pairing: e.plan.pairing,
            min_rounds: stop.min_rounds,
            layouts: e.plan.layouts,
            rounds: Vec::new(),
        },
        ..Results::default()
    }
}
