//! `bakeoff compare`'s history of a cell's figure (results.json `history`).

use serde::{Deserialize, Serialize};

/// One cell's median ops/s over every recorded run of its experiment, oldest first, with
/// where it shifted.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct HistoryRecord {
    pub experiment: String,
    pub workload: String,
    pub connections: usize,
    pub variant: String,
    pub points: Vec<HistoryPoint>,
    /// Change points (e-divisive means with a permutation test at a 5% false-alarm rate).
    #[serde(default)]
    pub changes: Vec<HistoryChange>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct HistoryPoint {
    /// The history id.
    pub id: i64,
    pub time: String,
    pub median_ops_per_s: f64,
    pub ci95: [f64; 2],
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct HistoryChange {
    /// The first point after the shift (index into `points`).
    pub index: usize,
    pub before: f64,
    pub after: f64,
    pub p: f64,
}
