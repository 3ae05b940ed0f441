//! The tune search as a study (`bakeoff_study::Study`): the decisions between stages,
//! over the [`Race`] and the budget. Before each stage it gives the stage its share of
//! the time left (half while more than two candidates are in, the overfitting check's
//! quarter kept aside from the start), stops the race when a stage would not fit or
//! [`MAX_STAGES`] ran, and picks the stage's signal (a first screen on instruction counts
//! when the file asks for them); after each stage it feeds the race, keeps the pace and
//! the leader's spread, and says what the rest of the budget can still tell apart. Once
//! the race is over, with PGO or BOLT in the space, one more step: the winner on every
//! workload (the overfitting check). It runs nothing: what runs a stage (derive an
//! experiment, run it, read each candidate's round ratios) is the runner's
//! (`bakeoff_runner::study`), or a test's script (`study_tests.rs`).

use crate::race::{Conclusion, Next, Race, Signal, StageData, StageRecord};
use crate::space::Recipe;
use bakeoff_study::Study;

/// The most stages a search runs.
pub const MAX_STAGES: usize = 8;

/// The fewest rounds a stage is planned for (the plan's `DEFAULT_MIN_ROUNDS`, which the
/// plan's test checks against this one: the plan depends on this crate, not the reverse).
pub const MIN_ROUNDS: usize = 6;

/// What to run next.
#[derive(Debug, Clone, PartialEq)]
pub enum TuneStep {
    /// A stage: these candidates against the references on the race's cell.
    Stage {
        /// 1-based: names its folder (`stage-<n>`).
        n: usize,
        candidates: Vec<(String, Recipe)>,
        /// Seconds of rounds it may take (None: the file's own plan).
        budget_s: Option<f64>,
        signal: Signal,
    },
    /// The overfitting check: the winner against the references on every workload.
    Check {
        name: String,
        recipe: Recipe,
        budget_s: Option<f64>,
    },
}

/// What running a step read back.
#[derive(Debug, Clone, PartialEq)]
pub enum TuneOutcome {
    Stage {
        data: StageData,
        /// Seconds its rounds took.
        seconds: f64,
        /// The rounds a candidate was measured in (None: none was).
        rounds: Option<usize>,
    },
    /// The winner's cells on other workloads where it is slower than the baseline.
    Checked { losses: Vec<String> },
}

/// What the search found.
#[derive(Debug, Clone)]
pub struct Tuned {
    pub race: Race,
    pub conclusion: Conclusion,
    /// The overfitting check's losses (empty when it did not run).
    pub overfitting: Vec<String>,
    /// Whether the overfitting check ran.
    pub checked: bool,
}

/// The search's decisions between stages.
pub struct Tuning<'a> {
    race: Race,
    /// Seconds left for rounds (None: no time bound).
    left: Option<f64>,
    /// The overfitting check's share, kept aside from the start.
    reserve: f64,
    check_overfit: bool,
    /// A first stage on instruction counts.
    screens: bool,
    /// Seconds per round of a throughput stage.
    pace: Option<f64>,
    /// The leader's per-round spread of log ratios.
    spread: Option<f64>,
    conclusion: Option<Conclusion>,
    /// The overfitting check's losses, once it ran.
    losses: Option<Vec<String>>,
    asked_check: bool,
    say: Box<dyn FnMut(&str) + 'a>,
}

impl<'a> Tuning<'a> {
    /// A search: the race, `total_s` seconds of rounds in all (None: no bound), whether
    /// the overfitting check runs after the race and whether a first stage screens on
    /// instruction counts; progress lines go to `say`.
    pub fn new(
        race: Race,
        total_s: Option<f64>,
        check_overfit: bool,
        screens: bool,
        say: impl FnMut(&str) + 'a,
    ) -> Tuning<'a> {
        let reserve = total_s.map_or(0.0, |t| if check_overfit { t / 4.0 } else { 0.0 });
        Tuning {
            race,
            left: total_s,
            reserve,
            check_overfit,
            screens,
            pace: None,
            spread: None,
            conclusion: None,
            losses: None,
            asked_check: false,
            say: Box::new(say),
        }
    }

    pub fn race(&self) -> &Race {
        &self.race
    }

    /// The step after the race: the overfitting check of the winner, when wanted.
    fn check(&mut self) -> Vec<TuneStep> {
        if !self.check_overfit || self.asked_check {
            return Vec::new();
        }
        let Some(name) = self.conclusion.as_ref().and_then(|c| c.winner.clone()) else {
            return Vec::new();
        };
        let Some(recipe) = self
            .race
            .entries
            .iter()
            .find(|e| e.name == name)
            .map(|e| e.recipe.clone())
        else {
            return Vec::new();
        };
        self.asked_check = true;
        let budget_s = self
            .left
            .map(|l| l.max(self.reserve).max(self.pace.unwrap_or(5.0) * 6.0));
        (self.say)(&format!(
            "the winner {name} on every workload (the overfitting check)"
        ));
        vec![TuneStep::Check {
            name,
            recipe,
            budget_s,
        }]
    }

    /// After a stage: feeds the race, keeps the pace and the spread, says the line.
    fn stage_done(&mut self, signal: Signal, data: StageData, seconds: f64, rounds: Option<usize>) {
        if let Some(l) = self.left.as_mut() {
            *l -= seconds;
        }
        if let Some(r) = rounds.filter(|r| *r > 0 && signal == Signal::Throughput) {
            self.pace = Some(seconds / r as f64);
        }
        let rec = self.race.feed(signal, data).clone();
        if let Some(st) = self.race.stages.last_mut() {
            st.seconds = Some(seconds);
        }
        self.spread = leader_spread(&self.race).or(self.spread);
        let line = progress(
            &self.race,
            &rec,
            self.left.map(|l| l - self.reserve),
            self.pace,
            self.spread,
        );
        (self.say)(&line);
    }
}

impl Study for Tuning<'_> {
    type Step = TuneStep;
    type Outcome = TuneOutcome;
    type Answer = Tuned;

    fn next(&mut self) -> Vec<TuneStep> {
        if self.conclusion.is_some() {
            return self.check();
        }
        loop {
            let names = match self.race.next() {
                Next::Done(c) => {
                    self.conclusion = Some(c);
                    return self.check();
                }
                Next::Stage(names) => names,
            };
            if self.race.stages.len() >= MAX_STAGES {
                self.race.stop(format!("{MAX_STAGES} stages ran"));
                continue;
            }
            let share = self.left.map(|l| {
                let usable = l - self.reserve;
                if names.len() > 2 {
                    usable / 2.0
                } else {
                    usable
                }
            });
            let floor = self.pace.map_or(10.0, |p| p * MIN_ROUNDS as f64);
            if share.is_some_and(|s| s < floor) {
                let why = format!(
                    "the budget is spent (this stage's share is {} of the {} left, a stage needs about {})",
                    seconds_text(share.unwrap_or(0.0)),
                    seconds_text(self.left.unwrap_or(0.0) - self.reserve),
                    seconds_text(floor)
                );
                self.race.stop(why);
                continue;
            }
            let n = self.race.stages.len() + 1;
            // With `[plan] mode = "both"`, the first stage screens on instruction counts.
            let signal = if n == 1 && self.screens && names.len() > 1 {
                Signal::Instructions
            } else {
                Signal::Throughput
            };
            let candidates: Vec<(String, Recipe)> = names
                .iter()
                .filter_map(|name| self.race.entries.iter().find(|e| &e.name == name))
                .map(|e| (e.name.clone(), e.recipe.clone()))
                .collect();
            (self.say)(&format!(
                "stage {n}: {} candidates{}{}",
                candidates.len(),
                if signal == Signal::Instructions {
                    ", screened on instruction counts"
                } else {
                    ""
                },
                share.map_or(String::new(), |b| format!(
                    ", up to {} of rounds",
                    seconds_text(b)
                ))
            ));
            return vec![TuneStep::Stage {
                n,
                candidates,
                budget_s: share,
                signal,
            }];
        }
    }

    fn record(&mut self, step: &TuneStep, outcome: TuneOutcome) {
        match (step, outcome) {
            (
                TuneStep::Stage { signal, .. },
                TuneOutcome::Stage {
                    data,
                    seconds,
                    rounds,
                },
            ) => self.stage_done(*signal, data, seconds, rounds),
            (_, TuneOutcome::Checked { losses }) => self.losses = Some(losses),
            (TuneStep::Check { .. }, TuneOutcome::Stage { .. }) => {}
        }
    }

    fn answer(self) -> Tuned {
        let conclusion = self.conclusion.unwrap_or_else(|| match self.race.next() {
            Next::Done(c) => c,
            Next::Stage(_) => Conclusion {
                winner: None,
                decided: false,
                why: "the search stopped before the race ended".into(),
            },
        });
        Tuned {
            race: self.race,
            conclusion,
            checked: self.losses.is_some(),
            overfitting: self.losses.unwrap_or_default(),
        }
    }
}

/// Standard deviation of the leader's per-round log ratios.
fn leader_spread(race: &Race) -> Option<f64> {
    let l = race.leader()?;
    let xs: Vec<f64> = l.throughput.iter().map(|x| x.1).collect();
    if xs.len() < 2 {
        return None;
    }
    let m = xs.iter().sum::<f64>() / xs.len() as f64;
    Some((xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (xs.len() - 1) as f64).sqrt())
}

/// The line after a stage: candidates left, the leader, what the rest of the budget can
/// still resolve between two candidates.
fn progress(
    race: &Race,
    st: &StageRecord,
    left: Option<f64>,
    pace: Option<f64>,
    spread: Option<f64>,
) -> String {
    let leader = race.leader().map(|l| {
        let m = l.throughput.iter().map(|x| x.1).sum::<f64>() / l.throughput.len().max(1) as f64;
        format!("{} (ratio {:.3})", l.name, m.exp())
    });
    let resolve = match (left, pace, spread) {
        (Some(l), Some(p), Some(s)) if l > 0.0 && p > 0.0 => {
            let n = (l / p).floor();
            if n >= 2.0 {
                // Two candidates paired by round: sd of a difference ~ sqrt(2) s.
                format!(
                    "; the {} left (~{} rounds) can tell apart candidates about {:.1}% apart",
                    seconds_text(l),
                    n as usize,
                    (2.0 * (2.0f64).sqrt() * s / n.sqrt()) * 100.0
                )
            } else {
                "; the budget allows no more stages".into()
            }
        }
        _ => String::new(),
    };
    format!(
        "stage {} done ({} rounds): {} left, leader {}; dropped {}{}{}",
        st.stage,
        st.rounds,
        race.alive().len(),
        leader.unwrap_or_else(|| "-".into()),
        st.dropped.len(),
        if st.out.is_empty() {
            String::new()
        } else {
            format!(", out {}", st.out.join(", "))
        },
        resolve
    )
}

/// Seconds as the plan writes durations ("45s", "2m30s").
pub fn seconds_text(s: f64) -> String {
    let s = s.max(0.0).round() as u64;
    match (s / 60, s % 60) {
        (0, s) => format!("{s}s"),
        (m, 0) => format!("{m}m"),
        (m, s) => format!("{m}m{s:02}s"),
    }
}
