//! What the store keeps of one experiment: enough to list, find and trend it; the full
//! story stays in its results folder.

use bakeoff_report::Results;
use std::path::{Path, PathBuf};

/// One experiment as recorded (before it has an id).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Entry {
    /// RFC 3339 UTC, from results.json.
    pub started_utc: String,
    pub finished_utc: Option<String>,
    pub name: String,
    /// complete | interrupted (as results.json says).
    pub status: String,
    pub baseline: String,
    pub hostname: String,
    pub cpu_model: String,
    pub bakeoff_version: String,
    /// The results folder, absolute.
    pub folder: PathBuf,
    pub variants: Vec<VariantEntry>,
    /// In the experiment's order.
    pub cells: Vec<CellEntry>,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct VariantEntry {
    pub name: String,
    /// ok | failed
    pub status: String,
}

/// A cell's headline figures.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct CellEntry {
    pub workload: String,
    pub connections: usize,
    pub variant: String,
    /// Median over valid runs (0 when there are none).
    pub median_ops_per_s: f64,
    pub ci95: [f64; 2],
    pub valid_runs: usize,
    /// mode = "instructions": median instructions per operation.
    pub instructions_per_op: Option<f64>,
}

/// A recorded experiment.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Record {
    pub id: i64,
    /// When it was written to the store (RFC 3339 UTC).
    pub recorded_utc: String,
    pub entry: Entry,
}

impl Entry {
    /// The variants as a line: `a, b (failed)` (a variant's status where it is not ok).
    pub fn variants_line(&self) -> String {
        self.variants
            .iter()
            .map(|v| {
                if v.status == "ok" {
                    v.name.clone()
                } else {
                    format!("{} ({})", v.name, v.status)
                }
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The record of `r`, whose results folder is `folder` (made absolute here).
    pub fn from_results(r: &Results, folder: &Path) -> Entry {
        let folder = std::fs::canonicalize(folder)
            .or_else(|_| std::path::absolute(folder))
            .unwrap_or_else(|_| folder.to_path_buf());
        Entry {
            started_utc: r.started_utc.clone(),
            finished_utc: r.finished_utc.clone(),
            name: r.name.clone(),
            status: r.status.clone(),
            baseline: r.plan.baseline.clone(),
            hostname: r.host.hostname.clone(),
            cpu_model: r.host.cpu_model.clone(),
            bakeoff_version: r.bakeoff_version.clone(),
            folder,
            variants: r
                .variants
                .iter()
                .map(|v| VariantEntry {
                    name: v.name.clone(),
                    status: v.status.clone(),
                })
                .collect(),
            cells: r
                .cells
                .iter()
                .map(|c| CellEntry {
                    workload: c.workload.clone(),
                    connections: c.connections,
                    variant: c.variant.clone(),
                    median_ops_per_s: c.median_ops_per_s,
                    ci95: c.ci95,
                    valid_runs: c.valid_runs,
                    instructions_per_op: c.instructions_per_op,
                })
                .collect(),
        }
    }

    /// The figure `bakeoff history` shows: the baseline's first cell with valid runs,
    /// else any cell with valid runs.
    pub fn headline(&self) -> Option<&CellEntry> {
        let with_data = |c: &&CellEntry| c.valid_runs > 0;
        self.cells
            .iter()
            .filter(with_data)
            .find(|c| c.variant == self.baseline)
            .or_else(|| self.cells.iter().find(with_data))
    }
}
