//! A tune step (`bakeoff_tune::TuneStep`) run for real: a stage is the candidates still in
//! against the file's variants on the race's cell, the overfitting check the winner on
//! every workload, each an experiment derived by `bakeoff_plan::tune::stage_text` in
//! `stage-<n>` or `check`; each candidate's per-round ratios over the baseline read back
//! (`StageData`), and the results the search's folder will be made of kept.

use super::{Derived, Deriving, Ran, StudyError};
use bakeoff_plan::derived::DerivedError;
use bakeoff_plan::tune::{stage_text, Measured, Stage};
use bakeoff_plan::Tune;
use bakeoff_report::model::{Results, Verdict};
use bakeoff_study::Runs;
use bakeoff_tune::{Signal, StageData, TuneOutcome, TuneStep, Tuning};
use std::path::{Path, PathBuf};

/// What every stage of a search needs.
pub struct TuneStages<'a> {
    pub deriving: Deriving<'a>,
    pub tune: &'a Tune,
    pub baseline: String,
    /// The race's cell: workload index, its connections key, the count.
    pub cell: (usize, &'static str, usize),
    /// The results the search's folder is made of, with the folder they came from: the
    /// overfitting check's, else the last throughput stage's.
    pub kept: Option<(Results, PathBuf)>,
}

impl Runs<Tuning<'_>> for TuneStages<'_> {
    type Error = StudyError;

    fn run(&mut self, step: &TuneStep) -> Result<TuneOutcome, StudyError> {
        match step {
            TuneStep::Stage {
                n,
                candidates,
                budget_s,
                signal,
            } => {
                let (w, key, conns) = self.cell;
                let stage = Stage {
                    candidates,
                    baseline: &self.baseline,
                    measured: Measured::Cell(w, key, conns),
                    budget_s: *budget_s,
                    mode: match signal {
                        Signal::Instructions => "instructions",
                        Signal::Throughput => "time",
                    },
                };
                let dir = self.deriving.folder.join(format!("stage-{n}"));
                let (results, seconds) = self.derived(&stage, &dir)?;
                let names: Vec<&str> = candidates.iter().map(|(n, _)| n.as_str()).collect();
                let data = self.stage_data(&results, &names, *signal);
                let rounds = results
                    .comparisons
                    .iter()
                    .find(|k| names.contains(&k.variant.as_str()) && !k.round_ratios.is_empty())
                    .map(|k| k.round_ratios.len());
                if *signal == Signal::Throughput {
                    self.kept = Some((results, dir));
                }
                Ok(TuneOutcome::Stage {
                    data,
                    seconds,
                    rounds,
                })
            }
            TuneStep::Check {
                name,
                recipe,
                budget_s,
            } => {
                let candidates = vec![(name.clone(), recipe.clone())];
                let stage = Stage {
                    candidates: &candidates,
                    baseline: &self.baseline,
                    measured: Measured::All,
                    budget_s: *budget_s,
                    mode: "time",
                };
                let dir = self.deriving.folder.join("check");
                let (results, _) = self.derived(&stage, &dir)?;
                let losses = self.losses(&results, name);
                self.kept = Some((results, dir));
                Ok(TuneOutcome::Checked { losses })
            }
        }
    }
}

impl TuneStages<'_> {
    /// One derived experiment through the runner: its results and the seconds its
    /// rounds took.
    fn derived(&self, stage: &Stage, dir: &Path) -> Result<(Results, f64), StudyError> {
        let text = stage_text(&self.deriving.loaded.text, self.tune, stage)
            .map_err(|m| StudyError::Failed(format!("cannot write a stage: {m}")))?;
        let tag = dir
            .file_name()
            .map_or("x".into(), |n| n.to_string_lossy().to_string());
        let ran = self.deriving.run(Derived {
            text,
            tag: format!("tune-{tag}"),
            dir: dir.to_path_buf(),
            every_variant: false,
            enough: None,
            keep_finished: false,
            load_failed: failed,
        })?;
        match ran {
            Ran::Finished(r) => {
                let secs = r.rounds_s.unwrap_or(0.0);
                Ok((r, secs))
            }
            // Every candidate failed to build, or none ran: the race takes them out.
            Ran::Failed {
                results: Some(r), ..
            } => Ok((r, 0.0)),
            Ran::Failed { error, .. } => Err(StudyError::Failed(error)),
        }
    }

    /// The stage's per-round ratios of each candidate, and the candidates that failed
    /// (build, verification, no valid run) with why.
    fn stage_data(&self, r: &Results, names: &[&str], signal: Signal) -> StageData {
        let mut data = StageData::default();
        for &name in names {
            if let Some(v) = r
                .variants
                .iter()
                .find(|v| v.name == name && v.status != "ok")
            {
                data.failed.push((
                    name.to_string(),
                    v.error.clone().unwrap_or_else(|| v.status.clone()),
                ));
                continue;
            }
            let k = r.comparisons.iter().find(|k| {
                k.variant == name
                    && k.baseline == self.baseline
                    && k.is_instructions() == (signal == Signal::Instructions)
                    && !k.is_capacity()
            });
            match k {
                Some(k) if !k.round_ratios.is_empty() => data.ratios.push((
                    name.to_string(),
                    k.round_ratios
                        .iter()
                        .enumerate()
                        .map(|(i, x)| (i, x.ratio))
                        .collect(),
                )),
                _ => data.failed.push((name.to_string(), "no valid run".into())),
            }
        }
        data
    }

    /// The winner's cells on other workloads where it is slower than the baseline.
    fn losses(&self, r: &Results, name: &str) -> Vec<String> {
        r.comparisons
            .iter()
            .filter(|k| {
                k.variant == name
                    && k.baseline == self.baseline
                    && !k.is_instructions()
                    && k.verdict == Verdict::Slower
            })
            .map(|k| {
                format!(
                    "{} x{}: ratio {:.3}, CI [{:.3}, {:.3}], slower than {}",
                    k.workload, k.connections, k.ratio, k.ci95[0], k.ci95[1], k.baseline
                )
            })
            .collect()
    }
}

/// A stage that does not load failed (the stage text is the tune's, not the user's).
fn failed(e: DerivedError) -> StudyError {
    match e {
        DerivedError::Write(m) => StudyError::Failed(m),
        DerivedError::Load(err) => {
            StudyError::Failed(format!("a derived stage does not load: {err}"))
        }
    }
}
