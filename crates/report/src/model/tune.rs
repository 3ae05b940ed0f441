//! results.json's `tune` (`bakeoff tune`'s search).

use super::Verdict;
use bakeoff_tune::{Conclusion, Effect, Excluded, StageRecord, Standing};
use serde::{Deserialize, Serialize};

/// results.json's `tune`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TuneRecord {
    /// The variant beaten (or not).
    pub baseline: String,
    /// The cell the race was run on (`workload xN`).
    pub cell: String,
    /// Every candidate, ranked: still in first, then dropped, then out.
    pub candidates: Vec<Standing>,
    /// Combinations of the space left out, with why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub excluded: Vec<Excluded>,
    pub stages: Vec<StageRecord>,
    pub winner: Option<Winner>,
    pub effects: Vec<Effect>,
    pub conclusion: Conclusion,
    /// The winner on the workloads it was not trained on: one line per cell where it
    /// is slower than the baseline (empty: it loses nowhere, or no check ran).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub overfitting: Vec<String>,
    /// Whether the overfitting check ran (PGO or BOLT in the space, other workloads).
    #[serde(default)]
    pub overfitting_checked: bool,
    /// Seconds the whole search took, builds included.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seconds: Option<f64>,
}

/// The winning candidate and its recipe as a `[[variant]]` block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Winner {
    pub name: String,
    pub ratio: Option<f64>,
    pub interval: Option<[f64; 2]>,
    pub verdict: Option<Verdict>,
    /// TOML, ready to paste into an experiment file.
    pub variant: String,
}
