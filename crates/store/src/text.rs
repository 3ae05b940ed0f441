//! Terminal text: aligned tables, sparklines, and the `bakeoff history` listing.

use crate::record::{CellEntry, Record};
use bakeoff_report::summary::ops;

/// An aligned plain-text table with a dashed rule under the header. Columns listed in
/// `right` are right-aligned; trailing spaces are trimmed.
pub fn table(header: &[&str], rows: &[Vec<String>], right: &[usize]) -> String {
    let header: Vec<String> = header.iter().map(|h| h.to_string()).collect();
    bakeoff_report::sweep::aligned_table(&header, rows, |i| right.contains(&i))
}

/// One block character per value, scaled between the smallest and the largest; a gap
/// (`·`) where there is no value.
pub fn sparkline(values: &[Option<f64>]) -> String {
    const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
    let known: Vec<f64> = values
        .iter()
        .flatten()
        .copied()
        .filter(|v| v.is_finite())
        .collect();
    let lo = known.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = known.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    values
        .iter()
        .map(|v| match v {
            Some(v) if v.is_finite() => {
                if hi > lo {
                    let k = ((v - lo) / (hi - lo) * 7.0).round() as usize;
                    BARS[k.min(7)]
                } else {
                    BARS[3]
                }
            }
            _ => '·',
        })
        .collect()
}

/// A cell's median and CI: `51,234 [50,100, 52,000]`, or `-` without valid runs.
pub fn figure(c: &CellEntry) -> String {
    if c.valid_runs == 0 || !c.median_ops_per_s.is_finite() {
        return "-".into();
    }
    let mut s = format!(
        "{} [{}, {}]",
        ops(c.median_ops_per_s),
        ops(c.ci95[0]),
        ops(c.ci95[1])
    );
    if let Some(i) = c.instructions_per_op {
        s.push_str(&format!(" {i:.0} instr/op"));
    }
    s
}

/// `workload xN variant`, the way the reports name a cell.
pub fn cell_label(workload: &str, connections: usize, variant: &str) -> String {
    format!("{workload} x{connections} {variant}")
}

/// The `bakeoff history` table: one row per record, in the order given.
pub fn history_table(records: &[Record]) -> String {
    let rows: Vec<Vec<String>> = records
        .iter()
        .map(|r| {
            let e = &r.entry;
            let headline = e.headline().map_or("-".to_string(), |c| {
                format!(
                    "{} ({})",
                    ops(c.median_ops_per_s),
                    cell_label(&c.workload, c.connections, &c.variant)
                )
            });
            vec![
                r.id.to_string(),
                e.started_utc.clone(),
                e.name.clone(),
                e.status.clone(),
                e.variants_line(),
                e.cells.len().to_string(),
                headline,
                e.folder.display().to_string(),
            ]
        })
        .collect();
    table(
        &[
            "id",
            "time (UTC)",
            "name",
            "status",
            "variants",
            "cells",
            "headline ops/s",
            "folder",
        ],
        &rows,
        &[0, 5],
    )
}
