//! The TPC-H-derived kind's records in results.json: per run (beside the run's own keys)
//! `queries` (each `{query, seconds, rows, timed_out}`, with `stream` in a throughput
//! run), `geomean_s` (the headline: the geometric mean of the queries' seconds, a timed-out
//! query counted at its timeout), and the parameters it ran at; per cell `"tpch": {...}`:
//! each query's median seconds with its interval and its comparison with the baseline,
//! the geometric mean's, and `plans` (query to plan text, this variant's; with the
//! queries whose plan differs from the baseline's marked).

use bakeoff_report::figures::{CellFigures, RunFigures};
use bakeoff_report::model::RatioRecord;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The cell record's key: the kind's name.
pub const KEY: &str = "tpch";

/// One query's execution in a run.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct QueryRecord {
    pub query: u8,
    pub seconds: f64,
    pub rows: u64,
    pub timed_out: bool,
    /// The stream that ran it (a throughput run; 0 in a power run).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub stream: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// A run's own figures.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct TpchRun {
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub queries: Vec<QueryRecord>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub geomean_s: Option<f64>,
    /// A throughput run's queries per hour over its wall time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub throughput_qph: Option<f64>,
    /// The plans this run's server chose (the first round's runs only).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub plans: BTreeMap<String, String>,
}

impl RunFigures for TpchRun {}

/// One query's row of a cell.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct QueryRow {
    pub query: u8,
    /// Median seconds over the valid runs (a throughput run counts its streams' median).
    pub median_s: f64,
    pub ci95: [f64; 2],
    /// Runs in which it timed out.
    #[serde(default)]
    pub timed_out_runs: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vs_baseline: Option<RatioRecord>,
    /// Its plan differs from the baseline's.
    #[serde(default)]
    pub plan_changed: bool,
}

/// A cell's figures.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct TpchCell {
    /// The workload as the experiment names it.
    pub workload: String,
    pub scale: f64,
    /// "random" or "validation".
    pub params: String,
    pub streams: usize,
    /// The per-query limit, seconds.
    pub timeout_s: f64,
    /// The geometric mean of a run's query times: median over valid runs, 95% CI.
    #[serde(default)]
    pub geomean_s: f64,
    #[serde(default)]
    pub geomean_ci95: [f64; 2],
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub geomean_vs_baseline: Option<RatioRecord>,
    #[serde(default)]
    pub queries: Vec<QueryRow>,
    /// Query ("Q1".."Q22") to plan text, from the first valid run that saved them.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub plans: BTreeMap<String, String>,
}

impl CellFigures for TpchCell {
    const KEY: &'static str = KEY;
}

#[cfg(test)]
impl TpchCell {
    /// A test run's cell: scale 0.1, random parameters, one stream, a 60 s timeout.
    pub(super) fn small() -> TpchCell {
        TpchCell {
            workload: "tpch".into(),
            scale: 0.1,
            params: "random".into(),
            streams: 1,
            timeout_s: 60.0,
            ..TpchCell::default()
        }
    }
}
