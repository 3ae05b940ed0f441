//! A bisect step (`bakeoff_bisect::StepAsk`) run for real: the template build at the good
//! revision against the same build at the step's commit, on the one cell, as an
//! experiment of its own in `step-<n>-<commit>` (`bakeoff_plan::derive::bisect_step`),
//! its rounds stopped by the step's sequential rule; its comparison read into the
//! `StepRecord` bisect.json keeps.

use super::{Derived, Deriving, Ran, StudyError};
use bakeoff_bisect::{short, Bisect, Call, StepAsk, StepRecord, StepRule};
use bakeoff_plan::derive::{bisect_step, Step};
use bakeoff_plan::derived::DerivedError;
use bakeoff_report::model::Results;
use bakeoff_study::Runs;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// What every step of a bisect needs, resolved once before the first.
pub struct BisectSteps<'a> {
    pub deriving: Deriving<'a>,
    /// The variant built at each commit (the first built from source).
    pub template: usize,
    /// The cell: the workload and its one connection count.
    pub workload: usize,
    pub connections: usize,
    /// The good revision.
    pub good: String,
    /// A commit's subject line.
    pub subject: &'a dyn Fn(&str) -> String,
}

impl Runs<Bisect<'_>> for BisectSteps<'_> {
    type Error = StudyError;

    fn run(&mut self, ask: &StepAsk) -> Result<StepRecord, StudyError> {
        let loaded = self.deriving.loaded;
        let n = steps_len_hint(&self.deriving.folder);
        let name = short(&ask.commit);
        let connections_key = loaded.experiment.workloads[self.workload]
            .keys
            .connections_key();
        let text = bisect_step(
            &loaded.text,
            &Step {
                template: self.template,
                good: (&self.good, "good"),
                candidate: (&ask.commit, &name),
                workload: self.workload,
                connections: Some((connections_key, self.connections)),
                share: ask.share,
            },
        )
        .map_err(|m| StudyError::Failed(format!("cannot write step {n}: {m}")))?;
        let dir: PathBuf = self.deriving.folder.join(format!("step-{n}-{name}"));
        let decision = Mutex::new(None);
        let enough = |results: &Results| -> Option<String> {
            let Call::Decide(d) = ask.rule.as_ref()?.call(&ratios(results, &name), false) else {
                return None;
            };
            if let Ok(mut slot) = decision.lock() {
                *slot = Some(d);
            }
            Some("decided".into())
        };
        let ran = self.deriving.run(Derived {
            text,
            tag: format!("bisect-{name}"),
            dir: dir.clone(),
            every_variant: true,
            enough: ask.rule.is_some().then_some(&enough),
            keep_finished: true,
            load_failed: bad_input,
        })?;
        let subject = (self.subject)(&ask.commit);
        let mut rec = StepRecord::new(
            &ask.commit,
            subject.trim(),
            ask.rule.as_ref().map(StepRule::cap),
            dir.display().to_string(),
        );
        match ran {
            Ran::Finished(results) => {
                rec.rounds_s = results.rounds_s;
                match results.headline_comparisons().find(|k| k.variant == name) {
                    Some(k) => {
                        rec.verdict = Some(k.verdict);
                        rec.ratio = Some(k.ratio);
                        rec.ci95 = Some(k.ci95);
                        rec.rounds = Some(k.rounds);
                        rec.spread = k.round_spread;
                        if let Some(rule) = &ask.rule {
                            // Decided after a round, or the budget ended first: its last look.
                            let decided = decision.lock().map(|d| d.clone()).ok().flatten();
                            let d = decided.unwrap_or_else(|| {
                                match rule.call(&ratios(&results, &name), true) {
                                    Call::Decide(d) => d,
                                    Call::More => unreachable!("a last look decides"),
                                }
                            });
                            rec.judged_by(d.judgement, d.interval, d.level);
                            rec.rounds = Some(d.rounds);
                        }
                    }
                    None => {
                        rec.outcome = "failed".into();
                        rec.error = Some("no comparison came out of the step".into());
                    }
                }
            }
            Ran::Failed { error, results } => {
                let unbuilt = results.is_some_and(|r| {
                    r.variants
                        .iter()
                        .any(|v| v.name == name && v.status != "ok")
                });
                rec.outcome = if unbuilt { "does not build" } else { "failed" }.into();
                rec.error = Some(error);
            }
        }
        Ok(rec)
    }
}

/// A derived step the checks refuse is bad input: the user's file derives it.
fn bad_input(e: DerivedError) -> StudyError {
    match e {
        DerivedError::Write(m) => StudyError::Failed(m),
        DerivedError::Load(err) => StudyError::BadInput(err.to_string()),
    }
}

/// The candidate's per-round ratios over good, in round order.
fn ratios(results: &Results, name: &str) -> Vec<f64> {
    results
        .comparisons
        .iter()
        .find(|k| k.variant == name)
        .map(|k| k.round_ratios.iter().map(|r| r.ratio).collect())
        .unwrap_or_default()
}

/// How many steps the folder holds (names the next one).
fn steps_len_hint(folder: &Path) -> usize {
    std::fs::read_dir(folder)
        .map(|d| {
            d.flatten()
                .filter(|e| e.file_name().to_string_lossy().starts_with("step-"))
                .count()
        })
        .unwrap_or(0)
        + 1
}
