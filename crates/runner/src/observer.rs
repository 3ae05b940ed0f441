//! Progress callbacks (the CLI draws bars from them) and where the rounds stand. A
//! leaf: every stage reports through it, it uses nothing of the runner.

use bakeoff_engine::Live;
use bakeoff_report::model::{BuildRecord, Forecast, Results, Run};
use std::sync::Arc;

/// Progress callbacks (the CLI draws bars from them). All optional.
pub trait Observer: Sync {
    /// A one-line notice (stale sandbox removed, source fetched, ...).
    fn notice(&self, _line: &str) {}
    fn builds_started(&self, _total: usize) {}
    fn build_started(&self, _variant: &str) {}
    fn build_finished(&self, _variant: &str, _outcome: Result<&BuildRecord, &str>) {}
    fn runs_started(&self, _total: usize, _seconds_each: f64) {}
    fn run_started(&self, _index: usize, _label: &str, _live: &Arc<Live>) {}
    fn run_finished(&self, _index: usize, _label: &str, _run: &Run) {}
    /// After every round of measured runs.
    fn round_finished(&self, _status: &RoundStatus) {}
    /// Whether the caller stops the rounds by its own rule ([`Observer::enough`]) instead
    /// of the precision target (bisect's steps); the budget and repetitions still bound
    /// them.
    fn own_rule(&self) -> bool {
        false
    }
    /// After every round, with the results so far: Some(why) stops the rounds there
    /// (`why` becomes `stopped_by`).
    fn enough(&self, _results: &Results) -> Option<String> {
        None
    }
}

/// Where the measured rounds stand after a round.
#[derive(Debug, Clone)]
pub struct RoundStatus {
    /// Rounds finished.
    pub rounds: usize,
    pub elapsed: std::time::Duration,
    /// What is left of `[plan] budget`, if there is one.
    pub budget_left: Option<std::time::Duration>,
    /// The widest comparison CI so far (relative half-width) and where it is.
    pub widest: Option<(f64, String)>,
    /// The precision target, if rounds stop on it.
    pub target: Option<f64>,
    /// Runs the remaining budget or repetitions allow, at the pace so far (an upper
    /// bound: points that reach the precision drop out).
    pub runs_left: usize,
    /// What the budget buys per comparison (where it is, its forecast), from the rounds
    /// so far; empty until the minimum rounds are in.
    pub forecasts: Vec<(String, Forecast)>,
}

/// An observer that shows nothing.
pub struct Quiet;
impl Observer for Quiet {}
