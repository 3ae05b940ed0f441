//! tpcb's own records in results.json: per run its `scale`, `builtin` and the balance
//! check (`balances`, `balance_violations`) beside the run's own keys (its TPS is the
//! run's `tps`, its latencies the run's `latency_us`); per cell `"tpcb": {...}`: TPS and
//! latency over the cell's valid runs.

use bakeoff_report::figures::{CellFigures, RunFigures};
use serde::{Deserialize, Serialize};

/// The cell record's key: the kind's name.
pub const KEY: &str = "tpcb";

/// A tpcb run's own figures.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct TpcbRun {
    /// The scale the tables were loaded at.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scale: Option<u64>,
    /// The script: tpcb-like, simple-update or select-only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub builtin: Option<String>,
    /// The balances after the run: "pass" or "fail" (a failure makes the run invalid).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub balances: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub balance_violations: Vec<String>,
}

impl RunFigures for TpcbRun {}

/// Milliseconds, as pgbench reports latencies.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct LatencyMs {
    pub mean: f64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub max: f64,
}

/// A tpcb cell: TPS over its valid runs (median, 95% CI), the transactions' latency
/// (medians of the runs' figures; max: the largest), the runs whose balances held.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct TpcbCell {
    /// The workload as the experiment names it.
    pub workload: String,
    pub scale: u64,
    pub builtin: String,
    pub median_tps: f64,
    pub tps_ci95: [f64; 2],
    pub latency_ms: LatencyMs,
    /// Valid runs whose balance check passed.
    pub balanced_runs: usize,
}

impl CellFigures for TpcbCell {
    const KEY: &'static str = KEY;
}
