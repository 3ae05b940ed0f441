//! A candidate through the race: its recipe, where it stands and every round it was
//! measured in. A leaf: the race (`race.rs`) keeps the entries, the effect estimates
//! (`effects.rs`) read them.

use crate::space::Recipe;
use serde::{Deserialize, Serialize};

/// Where a candidate stands.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "lowercase")]
pub enum Status {
    /// Still racing (or the winner).
    Alive,
    /// Decided worse than the leader after this stage (1-based).
    Dropped { stage: usize, reason: String },
    /// Did not build, failed verification, crashed, or gave no valid run.
    Out { stage: usize, reason: String },
}

/// One candidate through the race, with every round it was measured in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    pub name: String,
    pub recipe: Recipe,
    pub status: Status,
    /// (round id across stages, log of throughput over the baseline's in that round).
    pub throughput: Vec<(usize, f64)>,
    /// (round id, minus the log of instructions over the baseline's): more is better.
    pub instructions: Vec<(usize, f64)>,
}
