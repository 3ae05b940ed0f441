//! bakeoff-capacity: the searches behind `[[workload]] slo` as state machines over trial
//! outcomes; they run nothing. What the runner runs is [`paired`]: every variant of a point
//! searched together in paired rounds, a bakeoff-study `Study` (its comment says why).
//! Below, [`Search`] is the earlier single-variant search, kept with its tests:
//! [`Search::next_step`] names the offered rate of the next trial, [`Search::feed`] takes
//! what the trial measured, until [`Next::Done`] carries what was [`Found`].
//!
//! The capacity is the highest offered rate at which a trial passes: the percentile of the
//! response time (measured from each request's intended send time) is at most the limit,
//! and the achieved rate keeps up with the offered one within [`KEEP_UP`] ([`Limit`]).
//! The search, after FD.io's MLRsearch:
//!
//! - **Rates are decided, not trials.** A rate gets a batch of
//!   [`Settings::trials_per_rate`] short trials; it fails when more than the exceed ratio
//!   of them fail (0.5 of 3: two fails), and the batch ends as soon as its answer is
//!   known, so one noisy trial never moves a bound.
//! - **Bracket, then narrow.** The first rate is the closed-loop peak (or, for a repeated
//!   search, the previous search's bracket); from there the search doubles up or halves
//!   down until it holds a passing rate below a failing one, then halves the bracket
//!   geometrically until `upper / lower - 1` is at most [`Settings::precision`].
//! - **Bounds are re-measured before they are final.** Once the bracket is narrow enough,
//!   each bound gets a second batch; a bound whose second batch disagrees gets a third, and
//!   the majority of its batches classifies it. A bound a re-check overturns is not a bound
//!   any more: the bracket is recomputed and the search goes on (latency is not always
//!   monotone in load, memtier #243).
//! - **The bracket.** The upper bound is the lowest rate classified failing; the lower
//!   bound the highest rate classified passing below it (MLRsearch's relevant bounds). A
//!   failing region below every rate tried is not seen: the capacity is "the most load
//!   below the first failure found", with the bracket it was found in.
//! - **The budget.** At [`Settings::max_trials`] the search stops with the bracket it has.

/// The share of a rate's trials that may fail while the rate passes.
pub const EXCEED_RATIO: f64 = 0.5;
/// Trials per batch (a rate's decision).
pub const TRIALS_PER_RATE: usize = 3;
/// How far the achieved rate may fall short of the offered one in a passing trial (0.05:
/// it keeps up when it reaches 95% of the offered rate).
pub const KEEP_UP: f64 = 0.05;
/// The highest rate the search offers, as a multiple of the closed-loop peak.
pub const CEILING: f64 = 4.0;
/// The lowest rate the search offers, as a share of the closed-loop peak.
pub const FLOOR: f64 = 1.0 / 1024.0;

/// What a trial must meet to pass.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limit {
    /// The response-time limit on the chosen percentile, in microseconds.
    pub latency_us: f64,
    /// See [`KEEP_UP`].
    pub keep_up: f64,
}

impl Limit {
    /// A limit with the default [`KEEP_UP`].
    pub fn new(latency_us: f64) -> Limit {
        Limit {
            latency_us,
            keep_up: KEEP_UP,
        }
    }

    /// Whether a trial passes: valid, under the latency limit, keeping up.
    pub fn passes(&self, t: &Trial) -> bool {
        t.valid
            && t.latency_us.is_finite()
            && t.latency_us <= self.latency_us
            && t.achieved >= t.offered * (1.0 - self.keep_up)
    }
}

/// What one trial measured.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Trial {
    /// The rate it offered, ops/s.
    pub offered: f64,
    /// The rate the server answered, ops/s.
    pub achieved: f64,
    /// The limit's percentile of the response time from the intended send time, µs.
    pub latency_us: f64,
    /// False when the run failed or was marked invalid: it counts as a failing trial.
    pub valid: bool,
}

/// How the search runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settings {
    /// The bracket's goal width, relative: stop when `upper / lower - 1` is at most this.
    pub precision: f64,
    /// Trials per batch.
    pub trials_per_rate: usize,
    /// See [`EXCEED_RATIO`].
    pub exceed_ratio: f64,
    /// The most trials this search may run.
    pub max_trials: usize,
}

impl Settings {
    /// The defaults with a precision and a trial budget.
    pub fn new(precision: f64, max_trials: usize) -> Settings {
        Settings {
            precision,
            trials_per_rate: TRIALS_PER_RATE,
            exceed_ratio: EXCEED_RATIO,
            max_trials,
        }
    }

    /// The fails a batch may hold and still pass.
    fn allowed_fails(&self) -> usize {
        (self.exceed_ratio * self.trials_per_rate as f64).floor() as usize
    }

    /// The trials one search takes at most when nothing is overturned, starting from the
    /// peak with a capacity between `FLOOR` and `CEILING` times it: a batch per halving of
    /// the bracket to the precision, the expansion there, two re-checks. A forecast for
    /// `bakeoff check`, not a limit.
    pub fn expected_trials(&self, warm: bool) -> usize {
        let halvings = |from: f64| {
            let goal = (1.0 + self.precision.max(1e-6)).ln();
            (from.ln() / goal).log2().ceil().max(0.0) as usize
        };
        let batches = if warm {
            // The previous bracket, probed at both ends, then re-checked.
            2 + 2
        } else {
            // Up or down from the peak once or twice, then the halvings of a 2x bracket.
            2 + halvings(2.0) + 2
        };
        batches * self.trials_per_rate
    }
}

/// Why a search ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// The bracket reached the precision, both bounds confirmed.
    Precision,
    /// The trial budget ran out first.
    Budget,
    /// Even the lowest rate failed: no capacity under the limit.
    Floor,
    /// The highest rate passed: the capacity is at least that (the load may be what
    /// could not go higher).
    Ceiling,
    /// The paired rounds reached their most (`repetitions`).
    Rounds,
}

impl Stop {
    /// The word results and reports use.
    pub fn as_str(self) -> &'static str {
        match self {
            Stop::Precision => "precision",
            Stop::Budget => "budget",
            Stop::Floor => "floor",
            Stop::Ceiling => "ceiling",
            Stop::Rounds => "repetitions",
        }
    }
}

/// What a search found.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Found {
    /// The capacity: the lower bound (the highest rate classified passing below the upper
    /// bound). None when no rate passed.
    pub capacity: Option<f64>,
    /// The upper bound: the lowest rate classified failing. None when none failed.
    pub upper: Option<f64>,
    pub stop: Stop,
    /// Whether both bounds (those there are) were re-measured and held.
    pub confirmed: bool,
    /// Trials used.
    pub trials: usize,
}

/// What to do next.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Next {
    /// Run a trial at this offered rate and [`Search::feed`] it.
    Trial(f64),
    Done(Found),
}

/// A rate's batches so far.
#[derive(Debug, Clone, PartialEq)]
pub struct RateRecord {
    pub rate: f64,
    /// Each finished batch's answer (true: passed).
    pub batches: Vec<bool>,
    /// The batch in progress: passes, fails.
    open: (usize, usize),
}

/// A rate's classification from its batches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    Pass,
    Fail,
    /// As many batches passed as failed: another batch decides.
    Tie,
}

impl RateRecord {
    /// The majority of its batches.
    pub fn class(&self) -> Class {
        let pass = self.batches.iter().filter(|b| **b).count();
        let fail = self.batches.len() - pass;
        match pass.cmp(&fail) {
            std::cmp::Ordering::Greater => Class::Pass,
            std::cmp::Ordering::Less => Class::Fail,
            std::cmp::Ordering::Equal => Class::Tie,
        }
    }

    /// Re-measured and held: two batches that agree, or a majority of three or more.
    pub fn confirmed(&self) -> bool {
        self.batches.len() >= 2 && self.class() != Class::Tie
    }
}

/// One capacity search.
#[derive(Debug, Clone)]
pub struct Search {
    limit: Limit,
    settings: Settings,
    peak: f64,
    start: Option<(f64, f64)>,
    rates: Vec<RateRecord>,
    trials: Vec<(Trial, bool)>,
    pending: Option<usize>,
    done: Option<Found>,
}

impl Search {
    /// A search starting from the closed-loop `peak` (ops/s).
    pub fn new(limit: Limit, settings: Settings, peak: f64) -> Search {
        Search {
            limit,
            settings,
            peak: if peak.is_finite() && peak > 0.0 {
                peak
            } else {
                1.0
            },
            start: None,
            rates: Vec::new(),
            trials: Vec::new(),
            pending: None,
            done: None,
        }
    }

    /// A repeated search starting from a previous search's bracket (lower, upper): it
    /// probes both ends first, so a bracket that still holds costs four batches.
    pub fn resume(limit: Limit, settings: Settings, peak: f64, bracket: (f64, f64)) -> Search {
        let mut s = Search::new(limit, settings, peak);
        if bracket.0 > 0.0 && bracket.1 > bracket.0 {
            s.start = Some(bracket);
        }
        s
    }

    /// Every trial fed, with whether it passed.
    pub fn trials(&self) -> &[(Trial, bool)] {
        &self.trials
    }

    /// Every rate tried, with its batches.
    pub fn rates(&self) -> &[RateRecord] {
        &self.rates
    }

    /// The current bracket: (lower, upper), see the module's comment.
    pub fn bracket(&self) -> (Option<f64>, Option<f64>) {
        let upper = self
            .rates
            .iter()
            .filter(|r| r.class() == Class::Fail)
            .map(|r| r.rate)
            .min_by(f64::total_cmp);
        let lower = self
            .rates
            .iter()
            .filter(|r| r.class() == Class::Pass && upper.is_none_or(|u| r.rate < u))
            .map(|r| r.rate)
            .max_by(f64::total_cmp);
        (lower, upper)
    }

    /// What to do next.
    pub fn next_step(&mut self) -> Next {
        if let Some(found) = self.done {
            return Next::Done(found);
        }
        if let Some(i) = self.pending {
            return Next::Trial(self.rates[i].rate);
        }
        match self.decide() {
            Ok(rate) => {
                let i = match self.rates.iter().position(|r| r.rate == rate) {
                    Some(i) => i,
                    None => {
                        self.rates.push(RateRecord {
                            rate,
                            batches: Vec::new(),
                            open: (0, 0),
                        });
                        self.rates.len() - 1
                    }
                };
                self.pending = Some(i);
                Next::Trial(rate)
            }
            Err(stop) => {
                let found = self.found(stop);
                self.done = Some(found);
                Next::Done(found)
            }
        }
    }

    /// Takes the outcome of the trial [`Search::next_step`] asked for.
    pub fn feed(&mut self, trial: Trial) {
        let Some(i) = self.pending else {
            return;
        };
        let pass = self.limit.passes(&trial);
        self.trials.push((trial, pass));
        let allowed = self.settings.allowed_fails();
        let n = self.settings.trials_per_rate.max(1);
        let r = &mut self.rates[i];
        if pass {
            r.open.0 += 1;
        } else {
            r.open.1 += 1;
        }
        let answer = if r.open.1 > allowed {
            Some(false)
        } else if r.open.0 >= n.saturating_sub(allowed).max(1) {
            Some(true)
        } else {
            None
        };
        if let Some(a) = answer {
            r.batches.push(a);
            r.open = (0, 0);
            self.pending = None;
        }
    }

    /// The next rate to measure, or why the search ends.
    fn decide(&self) -> Result<f64, Stop> {
        if self.trials.len() >= self.settings.max_trials {
            return Err(Stop::Budget);
        }
        // A tie decides nothing: settle it first.
        if let Some(r) = self.rates.iter().find(|r| r.class() == Class::Tie) {
            return Ok(r.rate);
        }
        let unconfirmed = |rate: f64| {
            self.rates
                .iter()
                .find(|r| r.rate == rate)
                .is_some_and(|r| !r.confirmed())
        };
        let top = CEILING * self.peak;
        let bottom = FLOOR * self.peak;
        match self.bracket() {
            (None, None) => Ok(self.start.map_or(self.peak, |s| s.0)),
            (Some(lo), None) => match self.start {
                Some((_, hi)) if hi > lo => Ok(hi),
                _ if lo < top => Ok((lo * 2.0).min(top)),
                _ if unconfirmed(lo) => Ok(lo),
                _ => Err(Stop::Ceiling),
            },
            (None, Some(hi)) => match self.start {
                Some((lo, _)) if lo < hi => Ok(lo),
                _ if hi > bottom => Ok((hi / 2.0).max(bottom)),
                _ if unconfirmed(hi) => Ok(hi),
                _ => Err(Stop::Floor),
            },
            (Some(lo), Some(hi)) => {
                if hi / lo - 1.0 > self.settings.precision {
                    Ok((lo * hi).sqrt())
                } else if unconfirmed(hi) {
                    Ok(hi)
                } else if unconfirmed(lo) {
                    Ok(lo)
                } else {
                    Err(Stop::Precision)
                }
            }
        }
    }

    fn found(&self, stop: Stop) -> Found {
        let (lower, upper) = self.bracket();
        let held = |rate: Option<f64>| {
            rate.is_none_or(|x| self.rates.iter().any(|r| r.rate == x && r.confirmed()))
        };
        Found {
            capacity: lower,
            upper,
            stop,
            confirmed: held(lower) && held(upper),
            trials: self.trials.len(),
        }
    }
}

pub mod paired;

#[cfg(test)]
mod tests;
