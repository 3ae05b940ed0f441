//! One cell (workload, variant, connections): its runs and what is summarized over them.

use super::{CapacityRecord, Latency, OtherProcess, ProfileRecord, Run, SystemRecord, STEAL_PCT};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// How a variant's runs in one cell spread within and between its layouts (relative, as
/// standard deviations of the log figure).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct LayoutSpreadRecord {
    pub layouts: usize,
    /// Between runs of one binary (pooled within layouts).
    pub between_runs: f64,
    /// Between the layouts' levels (random-effects estimate; 0 when the runs explain it).
    pub between_layouts: f64,
    /// Largest over smallest layout median, minus 1.
    pub range: f64,
    /// Median figure per layout index.
    pub medians: Vec<f64>,
}

/// A cell's figure for one server counter: per operation over its valid runs.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ServerStatCell {
    /// The median over runs of the run's delta divided by its operations.
    pub per_op: f64,
    /// The smallest and largest per-operation figure of the runs (the spread).
    pub range: [f64; 2],
    /// Runs that counted it (a run where it did not move counts 0).
    pub runs: usize,
}

/// A cell's figure for one statement (its digests matched by normalised text).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct StatementCell {
    /// The server's own normalised text, as its first run had it.
    pub text: String,
    /// The text bakeoff matches statements by across variants.
    pub key: String,
    /// Median over runs of the mean time per call, microseconds.
    pub mean_us: f64,
    /// The smallest and largest per-run mean.
    pub range: [f64; 2],
    /// Median calls per operation of the load.
    pub calls_per_op: f64,
    pub runs: usize,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(remote = "Self")]
pub struct Cell {
    pub workload: String,
    pub variant: String,
    pub connections: usize,
    pub runs: Vec<Run>,
    /// Over valid runs only; 0 when there are none.
    pub median_ops_per_s: f64,
    pub ci95: [f64; 2],
    /// The CI's actual coverage (order-statistic intervals are coarse at small n).
    #[serde(default)]
    pub ci_coverage: f64,
    #[serde(default)]
    pub cv: f64,
    pub valid_runs: usize,
    /// Medians over valid runs of each run's percentiles.
    #[serde(default)]
    pub latency_us: Latency,
    #[serde(default)]
    pub client_bound_runs: usize,
    /// Valid wall-clock runs the machine disturbed (`Run::machine_disturbance`).
    #[serde(default, skip_serializing_if = "is_zero_usize")]
    pub machine_busy_runs: usize,
    #[serde(default)]
    pub verify_failures: u64,
    /// Why the cell stopped: repetitions | precision | budget.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
    /// Means (and maxima) of the valid runs' sampler summaries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system: Option<SystemRecord>,
    /// mode = "instructions": median instructions per operation over valid runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions_per_op: Option<f64>,
    /// [measure] profile = true: the hotspot profile of one run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<ProfileRecord>,
    /// `[plan] layouts` above 1: the spread between runs and between layouts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layouts: Option<LayoutSpreadRecord>,
    /// `[[workload]] slo`: the capacity at the latency limit, its searches and trials.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<CapacityRecord>,
    /// `[plan] server_stats`: each server counter per operation (median and spread over
    /// the valid runs).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub server_stats: BTreeMap<String, ServerStatCell>,
    /// `[plan] server_stats`: each statement the server's digests counted, per call and
    /// per operation, the most time per operation first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub server_statements: Vec<StatementCell>,
    /// Each kind's own figures for the cell, under the kind's name (`"<kind>": {...}`):
    /// read and written by the kind (`crate::figures`).
    #[serde(flatten, skip_deserializing)]
    pub kinds: crate::figures::Figures,
}

impl Cell {
    /// Whether the load held this cell back: more than a quarter of its valid runs
    /// client-bound ([`bakeoff_stats::CLIENT_BOUND_SHARE`]). Instruction counts do not
    /// depend on the pace, so a counted cell never is.
    pub fn held_back(&self) -> bool {
        // Mode both's instruction-count runs (under callgrind) say nothing of the load.
        let valid: Vec<&Run> = self
            .runs
            .iter()
            .filter(|x| x.valid && !x.instruction_run)
            .collect();
        let bound = valid.iter().filter(|x| x.client_bound).count();
        let counted = valid.iter().any(|x| x.instructions.is_some());
        !counted && bound as f64 > bakeoff_stats::CLIENT_BOUND_SHARE * valid.len() as f64
    }
}

impl Cell {
    /// Whether the machine disturbed this cell: more than a quarter of its valid
    /// wall-clock runs ([`bakeoff_stats::MACHINE_BUSY_SHARE`]).
    pub fn machine_busy(&self) -> bool {
        let valid: Vec<&Run> = self
            .runs
            .iter()
            .filter(|x| x.valid && !x.instruction_run)
            .collect();
        let busy = valid
            .iter()
            .filter(|x| x.machine_disturbance().is_some())
            .count();
        busy as f64 > bakeoff_stats::MACHINE_BUSY_SHARE * valid.len() as f64
    }

    /// What took the CPU in this cell's disturbed runs: each other process's mean share of
    /// the machine over those runs, most first (and the mean steal, when there was any).
    pub fn busiest_others(&self) -> Vec<OtherProcess> {
        let runs: Vec<&Run> = self
            .runs
            .iter()
            .filter(|x| x.valid && x.machine_disturbance().is_some())
            .collect();
        let n = runs.len().max(1) as f64;
        let mut sum: BTreeMap<String, f64> = BTreeMap::new();
        for o in runs.iter().flat_map(|x| &x.others_top) {
            *sum.entry(o.name.clone()).or_default() += o.cpu_pct / n;
        }
        let steal: f64 = runs.iter().filter_map(|x| x.steal_pct).sum::<f64>() / n;
        if steal > STEAL_PCT {
            sum.insert("steal (the VM's neighbours)".into(), steal);
        }
        let mut out: Vec<OtherProcess> = sum
            .into_iter()
            .map(|(name, cpu_pct)| OtherProcess { name, cpu_pct })
            .collect();
        out.sort_by(|a, b| b.cpu_pct.total_cmp(&a.cpu_pct).then(a.name.cmp(&b.name)));
        out
    }
}

impl Cell {
    /// The cell of (workload, variant, connections) with its runs and nothing summarized
    /// yet (the analysis fills in the figures).
    pub fn new(workload: &str, variant: &str, connections: usize, runs: Vec<Run>) -> Cell {
        Cell {
            workload: workload.to_string(),
            variant: variant.to_string(),
            connections,
            runs,
            ..Cell::default()
        }
    }
}

fn is_zero_usize(n: &usize) -> bool {
    *n == 0
}
