//! A figure over time: for one experiment name, each matching cell's median ops/s (with
//! its CI) in every recorded run of it, oldest first.

use crate::compare::CellKey;
use crate::record::{CellEntry, Record};
use crate::text::{figure, sparkline, table};
use bakeoff_report::summary::{ops, printable};

/// The trend of one experiment.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Trend {
    pub name: String,
    /// The cells followed, in order of first appearance.
    pub columns: Vec<CellKey>,
    /// One per record, oldest first.
    pub rows: Vec<TrendRow>,
    /// Per column, where its median ops/s shifted (e-divisive means, permutation test at
    /// [`CHANGE_ALPHA`]); `index` counts rows.
    pub changes: Vec<Vec<bakeoff_stats::ChangePoint>>,
}

/// The false-alarm rate of each change-point test: a flat series is marked in at most
/// about 5% of trends.
pub const CHANGE_ALPHA: f64 = 0.05;

/// How many of the most recent records the change-point test looks at.
pub const CHANGE_WINDOW: usize = 100;

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct TrendRow {
    pub id: i64,
    pub time: String,
    pub status: String,
    /// One per column; None where this record has no such cell.
    pub cells: Vec<Option<CellEntry>>,
}

/// The trend over `records` (oldest first) of the cells whose variant and workload match
/// the filters (None = any).
pub fn trend(
    name: &str,
    records: &[Record],
    variant: Option<&str>,
    workload: Option<&str>,
) -> Trend {
    let matches = |c: &CellEntry| {
        variant.is_none_or(|v| c.variant == v) && workload.is_none_or(|w| c.workload == w)
    };
    let mut columns: Vec<CellKey> = Vec::new();
    for r in records {
        for c in r.entry.cells.iter().filter(|c| matches(c)) {
            let k = CellKey::of_entry(c);
            if !columns.contains(&k) {
                columns.push(k);
            }
        }
    }
    let rows = records
        .iter()
        .map(|r| TrendRow {
            id: r.id,
            time: r.entry.started_utc.clone(),
            status: r.entry.status.clone(),
            cells: columns
                .iter()
                .map(|k| r.entry.cells.iter().find(|c| k.is_entry(c)).cloned())
                .collect(),
        })
        .collect::<Vec<TrendRow>>();
    let changes = (0..columns.len())
        .map(|i| {
            let series: Vec<f64> = rows
                .iter()
                .map(|r| {
                    r.cells[i]
                        .as_ref()
                        .filter(|c| c.valid_runs > 0)
                        .map_or(f64::NAN, |c| c.median_ops_per_s)
                })
                .collect();
            // The most recent records only: the test's cost grows as n^3 per permutation.
            let from = series.len().saturating_sub(CHANGE_WINDOW);
            let mut found = bakeoff_stats::change_points(&series[from..], CHANGE_ALPHA, 199, 42);
            for c in &mut found {
                c.index += from;
            }
            found
        })
        .collect();
    Trend {
        name: name.to_string(),
        columns,
        rows,
        changes,
    }
}

/// Each cell of `keys` over `records` (one experiment's history, oldest first), for a
/// comparison's report; cells the history does not hold are left out.
pub fn histories(
    name: &str,
    records: &[Record],
    keys: &[CellKey],
) -> Vec<bakeoff_report::model::HistoryRecord> {
    use bakeoff_report::model::{HistoryChange, HistoryPoint, HistoryRecord};
    let t = trend(name, records, None, None);
    keys.iter()
        .filter_map(|k| {
            let col = t.columns.iter().position(|c| c == k)?;
            let mut points = Vec::new();
            let mut index_of = Vec::new();
            for (row, r) in t.rows.iter().enumerate() {
                let Some(c) = r.cells[col].as_ref().filter(|c| c.valid_runs > 0) else {
                    continue;
                };
                index_of.push(row);
                points.push(HistoryPoint {
                    id: r.id,
                    time: r.time.clone(),
                    median_ops_per_s: c.median_ops_per_s,
                    ci95: c.ci95,
                });
            }
            if points.len() < 2 {
                return None;
            }
            let changes = t.changes[col]
                .iter()
                .filter_map(|c| {
                    Some(HistoryChange {
                        index: index_of.iter().position(|r| *r >= c.index)?,
                        before: c.before,
                        after: c.after,
                        p: c.p,
                    })
                })
                .collect();
            Some(HistoryRecord {
                experiment: name.to_string(),
                workload: k.workload.clone(),
                connections: k.connections,
                variant: k.variant.clone(),
                points,
                changes,
            })
        })
        .collect()
}

/// Sorted distinct values of a cell field over `records` (for "known: ..." messages).
pub fn known_values(records: &[Record], field: fn(&CellEntry) -> &str) -> Vec<String> {
    let mut v: Vec<String> = records
        .iter()
        .flat_map(|r| r.entry.cells.iter().map(|c| field(c).to_string()))
        .collect();
    v.sort();
    v.dedup();
    v
}

impl Trend {
    /// The table (one row per record) and a sparkline per cell.
    pub fn render(&self) -> String {
        let mut header: Vec<String> = vec!["id".into(), "time (UTC)".into(), "status".into()];
        header.extend(self.columns.iter().map(|k| k.to_string()));
        let rows: Vec<Vec<String>> = self
            .rows
            .iter()
            .map(|r| {
                let mut row = vec![r.id.to_string(), r.time.clone(), r.status.clone()];
                row.extend(
                    r.cells
                        .iter()
                        .map(|c| c.as_ref().map_or("-".to_string(), figure)),
                );
                row
            })
            .collect();
        let right: Vec<usize> = std::iter::once(0).chain(3..header.len()).collect();
        let header_refs: Vec<&str> = header.iter().map(String::as_str).collect();
        // Names come from the store, which anyone may have written: text, never
        // terminal controls (as the tables and `history` show them).
        let mut out = format!(
            "{}: median ops/s [95% CI] per cell, oldest first\n\n",
            printable(&self.name)
        );
        out.push_str(&table(&header_refs, &rows, &right));
        out.push('\n');
        let label = |k: &CellKey| printable(&k.to_string());
        let width = self
            .columns
            .iter()
            .map(|k| label(k).chars().count())
            .max()
            .unwrap_or(0);
        for (i, k) in self.columns.iter().enumerate() {
            let values: Vec<Option<f64>> = self
                .rows
                .iter()
                .map(|r| {
                    r.cells[i]
                        .as_ref()
                        .filter(|c| c.valid_runs > 0)
                        .map(|c| c.median_ops_per_s)
                })
                .collect();
            let known: Vec<f64> = values.iter().flatten().copied().collect();
            let change = match (known.first(), known.last()) {
                (Some(a), Some(b)) if known.len() > 1 && *a > 0.0 => format!(
                    "  {} -> {} ({:+.1}%)",
                    ops(*a),
                    ops(*b),
                    (b / a - 1.0) * 100.0
                ),
                (Some(a), _) => format!("  {}", ops(*a)),
                _ => String::new(),
            };
            out.push_str(&format!(
                "{:<width$}  {}{change}\n",
                label(k),
                sparkline(&values)
            ));
            for c in &self.changes[i] {
                let id = self.rows.get(c.index).map_or(0, |r| r.id);
                out.push_str(&format!(
                    "{:<width$}  shift at #{id}: {} -> {} ({:+.1}%), p = {:.3}\n",
                    "",
                    ops(c.before),
                    ops(c.after),
                    (c.after / c.before - 1.0) * 100.0,
                    c.p
                ));
            }
        }
        if self.changes.iter().any(|c| !c.is_empty()) {
            out.push_str(&format!(
                "shifts: e-divisive means, each split kept at permutation p < {CHANGE_ALPHA} (the false-alarm rate per test)\n"
            ));
        }
        out
    }
}
