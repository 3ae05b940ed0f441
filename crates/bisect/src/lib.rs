//! bakeoff-bisect: the search of `bakeoff bisect` as a state machine over step outcomes.
//! It runs nothing: [`Search::next_step`] names the commit to measure, [`Search::feed`] takes
//! what the step found, until [`Next::Done`] carries the [`Conclusion`].
//!
//! The first step is always the bad revision: its verdict against the good one fixes
//! the direction, and its ratio the halfway point (geometric) between good (1) and bad.
//! A later step moved when its ratio's 95% CI lies past the halfway point, did not move
//! when the CI lies on the good side of it, and is inconclusive when it straddles it: a
//! step has to tell "like good" from "like bad", not to find a 1% difference. The
//! commits between the last that did not move and the first that moved are halved step
//! by step; one that does not build is skipped (as `git bisect skip`) and the next
//! nearest the middle is measured instead.
//!
//! A step uses its budget sequentially ([`StepRule`], `sequential.rs`): it adds rounds
//! while its interval straddles the halfway point, up to the cap its share of the whole
//! bisect's [`Budget`] allows, and stops as soon as the interval lies on one side.

use bakeoff_stats::Verdict;
/// The most rounds a step runs (the runner's own limit).
pub use bakeoff_stats::MAX_ROUNDS;

mod sequential;
mod study;
pub use sequential::{
    fewest_rounds, half_width, looks_for, side, smallest_change, steps_for, Budget, Call, Decision,
    StepRule, ALPHA, MOST_LOOKS,
};
pub use study::{
    outcome_of, seconds_text, step_line, Bisect, Bisected, Forecast, StepAsk, StepRecord,
};

/// What one step found (the CLI decides it from the step's experiment).
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// The step's comparison of the commit against the good revision.
    Measured {
        verdict: Verdict,
        /// The commit's figure over the good revision's.
        ratio: f64,
        /// The interval the step is judged by (with [`StepRule`], its interval over all
        /// its looks).
        ci95: [f64; 2],
    },
    /// The step ended without an interval that could be judged (too few rounds fitted in
    /// its share of the budget): inconclusive, for this reason.
    Undecided { why: String },
    /// The commit's variant could not be built.
    DoesNotBuild { error: String },
    /// The step gave no comparison (it failed, or none came out of it).
    Failed { error: String },
}

/// A measured step read against the halfway point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Judgement {
    /// Its CI lies past the halfway point: like the bad revision.
    Moved,
    /// Its CI lies on the good side of the halfway point: like the good revision.
    DidNotMove,
    /// Its CI straddles the halfway point.
    Inconclusive,
    DoesNotBuild,
    Failed,
}

/// What the search found.
#[derive(Debug, Clone, PartialEq)]
pub struct Conclusion {
    /// Slower or faster: the bad revision's verdict, when it is one of those.
    pub direction: Option<Verdict>,
    /// The ratio halfway (geometrically) between good and bad.
    pub halfway: Option<f64>,
    /// The first commit where the figure moved, when one is named.
    pub first: Option<String>,
    /// Otherwise why not.
    pub unresolved: Option<String>,
    /// The commits the change is among (the named one alone when there is one).
    pub candidates: Vec<String>,
}

/// What to do next.
#[derive(Debug, Clone, PartialEq)]
pub enum Next<'a> {
    /// Measure this commit and feed its outcome.
    Measure(&'a str),
    Done(&'a Conclusion),
}

/// Why a search cannot start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoCommits;

/// The search over the commits after good up to bad (oldest first, bad last).
#[derive(Debug, Clone)]
pub struct Search {
    commits: Vec<String>,
    /// Steps fed so far (the bad revision's counted).
    steps: usize,
    state: State,
}

#[derive(Debug, Clone)]
enum State {
    /// The bad revision is measured first.
    Bad,
    Narrowing(Narrowing),
    Done(Conclusion),
}

/// Invariant: `commits[..=lo]` did not move (`lo = -1`: only good), `commits[hi]` moved.
#[derive(Debug, Clone)]
struct Narrowing {
    direction: Verdict,
    halfway: f64,
    lo: isize,
    hi: isize,
    skipped: Vec<isize>,
    /// Steps the halving needed when it began (the error is shared among them).
    planned: usize,
    /// The commit being measured.
    pending: Option<isize>,
}

impl Search {
    /// A search over `commits` (oldest first; the last is the bad revision).
    pub fn new(commits: Vec<String>) -> Result<Search, NoCommits> {
        if commits.is_empty() {
            return Err(NoCommits);
        }
        Ok(Search {
            commits,
            steps: 0,
            state: State::Bad,
        })
    }

    /// The commit to measure next, or the conclusion.
    pub fn next_step(&mut self) -> Next<'_> {
        if let State::Narrowing(n) = &mut self.state {
            match n.pick() {
                Some(i) => n.pending = Some(i),
                None => {
                    let c = n.conclude(&self.commits, None);
                    self.state = State::Done(c);
                }
            }
        }
        match &self.state {
            State::Bad => Next::Measure(self.commits.last().map_or("", String::as_str)),
            State::Narrowing(n) => Next::Measure(&self.commits[n.pending.unwrap_or(n.hi) as usize]),
            State::Done(c) => Next::Done(c),
        }
    }

    /// How a step with this outcome reads (before the bad revision is measured, every
    /// measured step reads as inconclusive: there is no halfway point yet).
    pub fn judge(&self, outcome: &Outcome) -> Judgement {
        match (&self.state, outcome) {
            (_, Outcome::DoesNotBuild { .. }) => Judgement::DoesNotBuild,
            (_, Outcome::Failed { .. }) => Judgement::Failed,
            (_, Outcome::Undecided { .. }) => Judgement::Inconclusive,
            (State::Narrowing(n), Outcome::Measured { ci95, .. }) => n.side(*ci95),
            (_, Outcome::Measured { .. }) => Judgement::Inconclusive,
        }
    }

    /// Takes the outcome of the step [`Search::next_step`] named. Ignored once done.
    pub fn feed(&mut self, outcome: Outcome) {
        if matches!(self.state, State::Done(_)) {
            return;
        }
        self.steps += 1;
        let judged = self.judge(&outcome);
        let state = std::mem::replace(&mut self.state, State::Bad);
        self.state = match state {
            State::Bad => self.after_bad(outcome),
            State::Narrowing(mut n) => {
                let Some(mid) = n.pending.take() else {
                    // Fed without a step named: nothing to place it on.
                    self.steps -= 1;
                    self.state = State::Narrowing(n);
                    return;
                };
                let commit = short(&self.commits[mid as usize]);
                let why = match (judged, &outcome) {
                    (Judgement::DoesNotBuild, _) => {
                        n.skipped.push(mid);
                        None
                    }
                    (Judgement::Moved, _) => {
                        n.hi = mid;
                        None
                    }
                    (Judgement::DidNotMove, _) => {
                        n.lo = mid;
                        None
                    }
                    (Judgement::Inconclusive, Outcome::Undecided { why }) => Some(format!(
                        "step {} ({commit}): {why}; the change is among the commits listed (raise plan.budget, or give --cell a steadier cell)",
                        self.steps
                    )),
                    (Judgement::Inconclusive, _) => Some(format!(
                        "step {} ({commit}): its CI still straddles the halfway ratio {:.3} after its share of the budget, so it is neither like good nor like bad; the change is among the commits listed (raise plan.budget, or give --cell a steadier cell)",
                        self.steps, n.halfway
                    )),
                    (Judgement::Failed, o) => Some(format!(
                        "step {} ({commit}) failed: {}",
                        self.steps,
                        match o {
                            Outcome::Failed { error } => error.as_str(),
                            _ => "?",
                        }
                    )),
                };
                match why {
                    Some(why) => State::Done(n.conclude(&self.commits, Some(why))),
                    None => State::Narrowing(n),
                }
            }
            done @ State::Done(_) => done,
        };
    }

    /// The state after the bad revision's step: its verdict gives the direction.
    fn after_bad(&self, outcome: Outcome) -> State {
        let why = match outcome {
            Outcome::Measured {
                verdict: direction @ (Verdict::Slower | Verdict::Faster),
                ratio,
                ci95: [lo, hi],
            } => {
                return State::Narrowing(Narrowing {
                    direction,
                    halfway: halfway(direction, ratio, [lo, hi]),
                    lo: -1,
                    hi: self.commits.len() as isize - 1,
                    skipped: Vec::new(),
                    planned: steps_for(self.commits.len()),
                    pending: None,
                })
            }
            Outcome::Measured {
                verdict: Verdict::Inconclusive,
                ratio,
                ci95: [lo, hi],
            } => format!(
                "the budget is too small to measure the ends: the bad revision could not be told from the good one (ratio {ratio:.3}, CI [{lo:.3}, {hi:.3}]), so no commit can be judged against them; nothing is named (raise plan.budget)"
            ),
            Outcome::Measured {
                verdict: Verdict::MachineBusy,
                ..
            } => "the machine was busy while the ends were measured: other processes took the CPU, so nothing can be judged; nothing is named (quiet the machine, or give the server and the load CPUs of their own with [plan] cpus)".to_string(),
            Outcome::Measured { verdict, .. } => format!(
                "the bad revision is {} against the good one: nothing moved to look for",
                verdict.as_str()
            ),
            Outcome::DoesNotBuild { error } | Outcome::Failed { error } => {
                format!("the bad revision could not be measured: {error}")
            }
            Outcome::Undecided { why } => format!(
                "the budget is too small to measure the ends: {why}; nothing is named (raise plan.budget)"
            ),
        };
        State::Done(Conclusion {
            direction: None,
            halfway: None,
            first: None,
            unresolved: Some(why),
            candidates: Vec::new(),
        })
    }

    /// The conclusion, once [`Search::next_step`] returned [`Next::Done`].
    pub fn conclusion(&self) -> Option<&Conclusion> {
        match &self.state {
            State::Done(c) => Some(c),
            _ => None,
        }
    }

    /// The ratio halfway (geometrically) between good and bad, once the bad revision
    /// moved.
    pub fn halfway(&self) -> Option<f64> {
        match &self.state {
            State::Narrowing(n) => Some(n.halfway),
            State::Done(c) => c.halfway,
            State::Bad => None,
        }
    }

    /// Steps still expected before a commit is named: the bad revision's (until it is
    /// measured) and one per halving of the commits left; 0 once done.
    pub fn steps_left(&self) -> usize {
        match &self.state {
            State::Bad => 1 + steps_for(self.commits.len()),
            State::Narrowing(n) => steps_for((n.hi - n.lo) as usize),
            State::Done(_) => 0,
        }
    }

    /// The sequential rule for the next step, at most `cap` rounds (None before the bad
    /// revision fixed the direction and the halfway point). Each step may be wrong
    /// [`Search::step_alpha`] of the time, so the whole search [`ALPHA`].
    pub fn rule(&self, cap: usize) -> Option<StepRule> {
        match &self.state {
            State::Narrowing(n) => Some(StepRule::new(
                n.direction,
                n.halfway,
                cap,
                self.step_alpha(),
            )),
            _ => None,
        }
    }

    /// The error each step after the bad revision's is allowed: [`ALPHA`] over the steps
    /// the commits needed when the halving began (at least one).
    pub fn step_alpha(&self) -> f64 {
        let steps = match &self.state {
            State::Narrowing(n) => n.planned,
            _ => steps_for(self.commits.len()),
        };
        ALPHA / steps.max(1) as f64
    }

    /// Ends the search now, for `why` (the budget cannot judge a step): no commit is
    /// named, the range left is the candidates.
    pub fn stop(&mut self, why: String) {
        self.state = match std::mem::replace(&mut self.state, State::Bad) {
            State::Narrowing(n) => State::Done(n.conclude(&self.commits, Some(why))),
            State::Bad => State::Done(Conclusion {
                direction: None,
                halfway: None,
                first: None,
                unresolved: Some(why),
                candidates: self.commits.clone(),
            }),
            done @ State::Done(_) => done,
        };
    }

    /// The direction the bad revision fixed (once it is measured and moved).
    pub fn direction(&self) -> Option<Verdict> {
        match &self.state {
            State::Narrowing(n) => Some(n.direction),
            State::Done(c) => c.direction,
            State::Bad => None,
        }
    }
}

impl Narrowing {
    /// The open commit nearest the middle of (lo, hi), skipped ones left out; on a tie the
    /// older one.
    fn pick(&self) -> Option<isize> {
        let middle = (self.lo + self.hi) / 2;
        (self.lo + 1..self.hi)
            .filter(|i| !self.skipped.contains(i))
            .min_by_key(|i| (*i - middle).abs())
    }

    fn side(&self, ci: [f64; 2]) -> Judgement {
        side(self.direction, self.halfway, ci)
    }

    /// The commits from the first not known unmoved to the first known moved; one alone
    /// is the answer, unless the search stopped for `why`.
    fn conclude(&self, commits: &[String], why: Option<String>) -> Conclusion {
        let range: Vec<String> = ((self.lo + 1)..=self.hi)
            .map(|i| commits[i as usize].clone())
            .collect();
        let (first, unresolved) = match why {
            Some(why) => (None, Some(why)),
            None if range.len() == 1 => (Some(range[0].clone()), None),
            None => (
                None,
                Some(format!(
                    "{} commit(s) before {} do not build: the change is one of them or it",
                    range.len() - 1,
                    short(&commits[self.hi as usize])
                )),
            ),
        };
        Conclusion {
            direction: Some(self.direction),
            halfway: Some(self.halfway),
            first,
            unresolved,
            candidates: range,
        }
    }
}

/// The ratio a step is judged against: geometrically halfway between good (1) and the
/// bad revision's `ratio`, unless the bad revision's own CI reaches past that point (a
/// noisy measurement of the bad end): then the CI's edge nearest 1, so that every ratio
/// the bad revision may have lies past it and a commit like the bad one is never read
/// as like the good one.
pub fn halfway(direction: Verdict, ratio: f64, [lo, hi]: [f64; 2]) -> f64 {
    if direction == Verdict::Faster {
        ratio.sqrt().min(lo.sqrt())
    } else {
        ratio.sqrt().max(hi.sqrt())
    }
}

/// A commit's first ten characters, as messages name it.
pub fn short(commit: &str) -> String {
    commit.chars().take(10).collect()
}

#[cfg(test)]
mod study_tests;
#[cfg(test)]
mod tests;
