//! The bisect as a study (`bakeoff_study::Study`): the decisions between steps, over the
//! search ([`Search`]) and the whole bisect's [`Budget`]. Before each step it gives the
//! step its share of the time left and its sequential rule, or stops the search when the
//! share cannot judge anything; after each step it spends the step's time, feeds its
//! outcome and, after the bad revision's, says what the rest of the budget can localize
//! (the forecast). It runs nothing: what runs a step (derive an experiment, run it, read
//! its comparison into a [`StepRecord`]) is the runner's (`bakeoff_runner::study`), or a
//! test's script (`study_tests.rs`).

use crate::{
    fewest_rounds, short, smallest_change, Budget, Conclusion, Judgement, Next, NoCommits, Outcome,
    Search, StepRule, ALPHA,
};
use bakeoff_stats::Verdict;
use bakeoff_study::Study;
use serde::Serialize;

/// One step to run: the commit against the good revision.
#[derive(Debug, Clone, PartialEq)]
pub struct StepAsk {
    pub commit: String,
    /// Its time (seconds, with one round's slack) and the most rounds it may take; None
    /// without a time bound.
    pub share: Option<(f64, usize)>,
    /// The sequential rule its rounds stop by (None for the bad revision's step, which
    /// runs under the plan's own stopping rule).
    pub rule: Option<StepRule>,
}

/// One step's evidence, as bisect.json keeps it.
#[derive(Debug, Clone, Serialize)]
pub struct StepRecord {
    pub commit: String,
    pub subject: String,
    /// "measured", "does not build", or "failed".
    pub outcome: String,
    pub verdict: Option<Verdict>,
    pub ratio: Option<f64>,
    pub ci95: Option<[f64; 2]>,
    pub rounds: Option<usize>,
    /// Standard deviation of one round's log ratio.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spread: Option<f64>,
    /// Seconds its measured rounds took.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rounds_s: Option<f64>,
    /// The most rounds its share of the budget allowed (steps after the bad revision's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cap: Option<usize>,
    /// How the sequential rule judged it: "moved", "did not move" or "inconclusive".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub judged: Option<String>,
    /// The interval it was judged by and that interval's level (above 95%: it covers
    /// every look the step took, and the bisect's steps together).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interval: Option<[f64; 2]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub level: Option<f64>,
    pub folder: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl StepRecord {
    /// A step of `commit` that has not measured anything yet ("measured", no figures).
    pub fn new(commit: &str, subject: &str, cap: Option<usize>, folder: String) -> StepRecord {
        StepRecord {
            commit: commit.to_string(),
            subject: subject.to_string(),
            outcome: "measured".into(),
            verdict: None,
            ratio: None,
            ci95: None,
            rounds: None,
            spread: None,
            rounds_s: None,
            cap,
            judged: None,
            interval: None,
            level: None,
            folder,
            error: None,
        }
    }

    /// Takes how the step's sequential rule judged it.
    pub fn judged_by(&mut self, judgement: Judgement, interval: Option<[f64; 2]>, level: f64) {
        self.judged = Some(judged_text(judgement).into());
        self.interval = interval;
        self.level = Some(level);
    }
}

/// What the budget can resolve, said once the bad revision is measured.
#[derive(Debug, Clone, Serialize)]
pub struct Forecast {
    /// Standard deviation of one round's log ratio in the bad revision's step.
    pub spread: f64,
    /// Seconds one round took there.
    pub round_s: f64,
    /// Steps still expected, and the budget left for them.
    pub steps: usize,
    pub budget_left_s: Option<f64>,
    /// The most rounds each step can take.
    pub rounds: usize,
    /// The smallest change (relative) those rounds can place on one side of the halfway
    /// ratio; None when not even the fewest rounds fit.
    pub smallest: Option<f64>,
    /// The change measured between good and bad (relative).
    pub measured: f64,
    /// The forecast in words.
    pub text: String,
}

/// What the bisect found.
#[derive(Debug, Clone)]
pub struct Bisected {
    pub conclusion: Conclusion,
    /// The whole bisect's budget for the measured rounds, seconds (None: no time bound).
    pub budget_s: Option<f64>,
    pub forecast: Option<Forecast>,
    pub steps: Vec<StepRecord>,
}

/// The bisect's decisions between steps.
pub struct Bisect<'a> {
    search: Search,
    budget: Budget,
    /// The most rounds a step takes (the plan's `max_rounds`, else the runner's limit).
    most: usize,
    /// Seconds per round, from the bad revision's step.
    pace: Option<f64>,
    /// The steps recorded, in order.
    steps: Vec<StepRecord>,
    forecast: Option<Forecast>,
    /// Progress lines (a step's result, the forecast), said as they are known.
    say: Box<dyn FnMut(&str) + 'a>,
}

impl<'a> Bisect<'a> {
    /// A bisect over `commits` (oldest first, the bad revision last), with `per_step`
    /// seconds of rounds for each step the commits need (None: no time bound), at most
    /// `most` rounds a step, saying its progress lines to `say`.
    pub fn new(
        commits: Vec<String>,
        per_step: Option<f64>,
        most: usize,
        say: impl FnMut(&str) + 'a,
    ) -> Result<Bisect<'a>, NoCommits> {
        let search = Search::new(commits)?;
        let budget =
            Budget::new(per_step.map_or(f64::INFINITY, |b| b * search.steps_left() as f64));
        Ok(Bisect {
            search,
            budget,
            most,
            pace: None,
            steps: Vec::new(),
            forecast: None,
            say: Box::new(say),
        })
    }

    pub fn search(&self) -> &Search {
        &self.search
    }

    pub fn budget(&self) -> &Budget {
        &self.budget
    }

    /// Once the bad revision is measured: the smallest change the rest of the budget
    /// can localize at the noise its step measured.
    fn forecast(&self, bad: &StepRecord) -> Option<Forecast> {
        let direction = self.search.direction()?;
        let spread = bad.spread?;
        let round_s = self.pace?;
        let steps = self.search.steps_left().max(1);
        let left = self.budget.left_s();
        let alpha = self.search.step_alpha();
        // As the steps will get it: their share, at least the fewest rounds while they last.
        let floor = round_s * fewest_rounds(alpha) as f64;
        let rounds = if left.is_finite() {
            ((self.budget.share_s(steps, floor) / round_s).floor() as usize).min(self.most)
        } else {
            self.most
        };
        let smallest = smallest_change(spread, rounds, alpha, direction);
        let ratio = bad.ratio?;
        let measured = (ratio - 1.0).abs();
        let how = if direction == Verdict::Faster {
            "faster"
        } else {
            "slower"
        };
        let budget_text = if left.is_finite() {
            format!("the {} left", seconds_text(left))
        } else {
            "the repetitions".to_string()
        };
        let text = match smallest {
            Some(x) => format!(
                "at this noise ({:.1}% per round) {budget_text} over ~{steps} step(s) of up to {rounds} rounds can localize a change of {:.1}% or more; this one measures {:.1}% {how}: {}",
                spread * 100.0,
                x * 100.0,
                measured * 100.0,
                if measured >= x {
                    "expect a commit"
                } else {
                    "expect a range, not a commit"
                }
            ),
            None => format!(
                "at this noise ({:.1}% per round) {budget_text} over ~{steps} step(s) allows {rounds} round(s) a step, fewer than a step needs to be judged: too small to localize anything",
                spread * 100.0
            ),
        };
        Some(Forecast {
            spread,
            round_s,
            steps,
            budget_left_s: left.is_finite().then_some(left),
            rounds,
            smallest,
            measured,
            text,
        })
    }
}

impl Study for Bisect<'_> {
    type Step = StepAsk;
    type Outcome = StepRecord;
    type Answer = Bisected;

    fn next(&mut self) -> Vec<StepAsk> {
        loop {
            let steps_left = self.search.steps_left();
            let commit = match self.search.next_step() {
                Next::Measure(commit) => commit.to_string(),
                Next::Done(_) => return Vec::new(),
            };
            let alpha = self.search.step_alpha();
            let floor = self.pace.map_or(0.0, |p| p * fewest_rounds(alpha) as f64);
            let share = self.budget.share_s(steps_left, floor);
            let cap = self
                .pace
                .map_or(self.most, |p| ((share / p).floor() as usize).min(self.most));
            let rule = self.search.rule(cap);
            if rule.as_ref().is_some_and(|r| r.cap() == 0) {
                self.search.stop(format!(
                    "the budget left ({}) allows {cap} round(s) for step {}, fewer than the {} a step needs to be judged; nothing more can be told apart (raise plan.budget)",
                    seconds_text(self.budget.left_s()),
                    self.steps.len() + 1,
                    fewest_rounds(alpha)
                ));
                continue;
            }
            // The rounds are bounded by the cap; the step's time gets one round's slack,
            // so a slow round does not cost the step its last look.
            let share = share
                .is_finite()
                .then_some((share + self.pace.unwrap_or(0.0), cap));
            return vec![StepAsk {
                commit,
                share,
                rule,
            }];
        }
    }

    fn record(&mut self, _step: &StepAsk, rec: StepRecord) {
        (self.say)(&step_line(&rec));
        self.budget.spend(rec.rounds_s.unwrap_or(0.0));
        self.search.feed(outcome_of(&rec));
        let first = self.pace.is_none();
        if first {
            self.pace = rec
                .rounds_s
                .zip(rec.rounds)
                .filter(|(_, n)| *n > 0)
                .map(|(s, n)| s / n as f64);
        }
        self.steps.push(rec);
        if first {
            self.forecast = self.forecast(&self.steps[0]);
            if let Some(f) = &self.forecast {
                (self.say)(&f.text);
            }
            if let Some(f) = self.forecast.as_ref().filter(|f| f.smallest.is_none()) {
                let why = format!(
                    "the budget left ({}) allows {} round(s) a step, fewer than the {} a step needs to be judged: too small to place any commit, so nothing is named (raise plan.budget)",
                    seconds_text(self.budget.left_s()),
                    f.rounds,
                    fewest_rounds(self.search.step_alpha())
                );
                self.search.stop(why);
            }
        }
    }

    fn answer(mut self) -> Bisected {
        // Done once `next` found nothing to measure: the conclusion is the search's.
        let conclusion = match self.search.next_step() {
            Next::Done(c) => c.clone(),
            Next::Measure(_) => unreachable!("answered before the search ended"),
        };
        let total = self.budget.total_s();
        Bisected {
            conclusion,
            budget_s: total.is_finite().then_some(total),
            forecast: self.forecast,
            steps: self.steps,
        }
    }
}

/// What a step's record tells the search: with a sequential rule, the interval it was
/// judged by; the bad revision's step, its 95% CI.
pub fn outcome_of(rec: &StepRecord) -> Outcome {
    let error = || rec.error.clone().unwrap_or_default();
    if rec.outcome == "measured" && rec.judged.is_some() {
        return match (rec.verdict, rec.ratio, rec.interval) {
            (Some(verdict), Some(ratio), Some(ci95)) => Outcome::Measured {
                verdict,
                ratio,
                ci95,
            },
            _ => Outcome::Undecided {
                why: format!(
                    "only {} round(s) came within its share of the budget, too few for an interval at {:.1}%",
                    rec.rounds.unwrap_or(0),
                    rec.level.unwrap_or(0.95) * 100.0
                ),
            },
        };
    }
    let fewest = fewest_rounds(ALPHA);
    if rec.outcome == "measured" && rec.rounds.is_some_and(|n| n < fewest) {
        return Outcome::Undecided {
            why: format!(
                "the bad revision's step fitted {} round(s) in its share of the budget, fewer than the {fewest} a comparison needs to tell it from the good one",
                rec.rounds.unwrap_or(0)
            ),
        };
    }
    match (rec.outcome.as_str(), rec.verdict, rec.ratio, rec.ci95) {
        ("measured", Some(verdict), Some(ratio), Some(ci95)) => Outcome::Measured {
            verdict,
            ratio,
            ci95,
        },
        ("does not build", ..) => Outcome::DoesNotBuild { error: error() },
        _ => Outcome::Failed { error: error() },
    }
}

fn judged_text(j: Judgement) -> &'static str {
    match j {
        Judgement::Moved => "moved",
        Judgement::DidNotMove => "did not move",
        _ => "inconclusive",
    }
}

/// A step's progress line (after "bisect: ").
pub fn step_line(r: &StepRecord) -> String {
    match (r.verdict, r.ratio) {
        (Some(v), Some(x)) => format!(
            "{} {}: ratio {x:.3}, {}{}",
            short(&r.commit),
            r.subject,
            v.as_str(),
            match (&r.judged, r.interval, r.rounds) {
                (Some(j), Some(c), Some(n)) => format!(
                    "; {j} after {n} round(s) of up to {} ([{:.3}, {:.3}] at {:.1}%)",
                    r.cap.unwrap_or(n),
                    c[0],
                    c[1],
                    r.level.unwrap_or(0.95) * 100.0
                ),
                (Some(j), _, Some(n)) => format!("; {j} after {n} round(s)"),
                _ => String::new(),
            }
        ),
        _ => format!(
            "{} {}: {} ({})",
            short(&r.commit),
            r.subject,
            r.outcome,
            r.error.as_deref().unwrap_or("")
        ),
    }
}

/// Seconds as the plan writes durations ("45s", "2m30s").
pub fn seconds_text(s: f64) -> String {
    let s = s.round() as u64;
    match (s / 60, s % 60) {
        (0, s) => format!("{s}s"),
        (m, 0) => format!("{m}m"),
        (m, s) => format!("{m}m{s:02}s"),
    }
}
