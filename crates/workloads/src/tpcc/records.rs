//! tpcc's own records in results.json: per run (`warehouses`, `notpm`, `tpm`,
//! `transactions`, `consistency`, `consistency_violations`, beside the run's own keys) and
//! per cell (`"tpcc": {...}`). The report crate keeps them as JSON
//! (`bakeoff_report::figures`); this kind reads and writes them typed.

use bakeoff_report::figures::{CellFigures, RunFigures};
use bakeoff_report::model::{Cell, RatioRecord};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The cell record's key: the kind's name.
pub const KEY: &str = "tpcc";

/// A tpcc run's figures.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct TpccRun {
    /// Warehouses loaded for this run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warehouses: Option<u32>,
    /// New-Order transactions committed per minute.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notpm: Option<f64>,
    /// Transactions of every kind per minute.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tpm: Option<f64>,
    /// Per kind (new_order, payment, order_status, delivery, stock_level).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub transactions: BTreeMap<String, TransactionRecord>,
    /// The consistency conditions after the run, "pass" or "fail" (a failure makes the
    /// run invalid).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub consistency: Option<String>,
    /// The violated conditions, when consistency is "fail".
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub consistency_violations: Vec<String>,
}

impl RunFigures for TpccRun {}

/// One tpcc transaction kind in one run: counts, response times and the 90th-percentile
/// check against the specification's limit.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct TransactionRecord {
    pub count: u64,
    pub mean_ms: f64,
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
    pub limit_ms: f64,
    /// p90_ms <= limit_ms.
    pub pass: bool,
    #[serde(default)]
    pub rollbacks: u64,
    #[serde(default)]
    pub retries: u64,
    #[serde(default)]
    pub errors: u64,
}

/// A tpcc cell's figures: NOTPM with its CI and verdict, the response-time check, and the
/// largest passing warehouse count of its sweep.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct TpccCell {
    /// The workload as the experiment names it (cells of a warehouse sweep are named
    /// `<workload>-w<W>`).
    pub workload: String,
    pub warehouses: u32,
    /// "none" (back to back) or "spec" (keying and think times).
    pub think: String,
    /// The experiment asked for the largest passing W.
    #[serde(default)]
    pub find_max_w: bool,
    pub median_notpm: f64,
    pub notpm_ci95: [f64; 2],
    /// NOTPM against the baseline's cell (absent for the baseline).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notpm_vs_baseline: Option<RatioRecord>,
    /// Per kind: median over valid runs of each run's p90 and max, and the check.
    pub transactions: BTreeMap<String, TransactionRecord>,
    /// Every kind's median p90 within its limit.
    pub pass: bool,
    /// Valid runs whose consistency check passed, and all valid runs.
    pub consistent_runs: usize,
    /// find_max_w: the largest W of the sweep at these connections where this W and
    /// every smaller one pass (0: not even the smallest).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_passing_warehouses: Option<u32>,
}

impl CellFigures for TpccCell {
    const KEY: &'static str = KEY;
}

impl TpccCell {
    /// Changes the cell's record, if it has one.
    pub fn update(c: &mut Cell, f: impl FnOnce(&mut TpccCell, &Cell)) {
        if let Some(mut t) = TpccCell::of(c) {
            f(&mut t, c);
            t.put(c);
        }
    }
}
