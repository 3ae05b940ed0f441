//! The sweep picture as a table: for a workload run at several connection counts, one row
//! per count and one column per variant (median TPS or ops/s), then each candidate's
//! ratio to the baseline with its verdict, the way scalability results are usually read.

use crate::format::ops;
use crate::index::Index;
use crate::model::{Cell, Results};
use crate::table::{Column, Table};
use std::collections::HashMap;

/// How many figures a sweep table may hold beyond four per cell of its workload.
const MAX_SPARSE: usize = 4096;

/// One workload's throughput by connections.
#[derive(Debug, Clone, PartialEq)]
pub struct Sweep {
    pub workload: String,
    /// "TPS" for SQL workloads (transactions), else "ops/s".
    pub unit: &'static str,
    /// One row per connection count: each variant's median, then each candidate's ratio
    /// to the baseline with its verdict.
    pub table: Table,
}

/// A sweep per workload that ran at more than one connection count, in experiment order.
pub fn sweeps(r: &Results) -> Vec<Sweep> {
    let mut workloads: Vec<&str> = Vec::new();
    let mut by_workload: HashMap<&str, Vec<&Cell>> = HashMap::new();
    for c in &r.cells {
        let cells = by_workload.entry(c.workload.as_str()).or_default();
        if cells.is_empty() {
            workloads.push(&c.workload);
        }
        cells.push(c);
    }
    let index = Index::new(r);
    let baseline = r.plan.baseline.as_str();
    let variants: Vec<&str> = r
        .variants
        .iter()
        .filter(|v| v.status == "ok")
        .map(|v| v.name.as_str())
        .collect();
    let mut out = Vec::new();
    for w in workloads {
        let cells = by_workload.remove(w).unwrap_or_default();
        let mut conns: Vec<usize> = cells.iter().map(|c| c.connections).collect();
        conns.sort_unstable();
        conns.dedup();
        // A grid far sparser than its cells (every variant at counts of its own) would
        // print conns x variants figures for a handful of runs: the cells table has them.
        if conns.len() < 2 || conns.len() * variants.len() > 4 * cells.len() + MAX_SPARSE {
            continue;
        }
        let sql = cells
            .iter()
            .any(|c| c.runs.iter().any(|run| run.tps.is_some()));
        let mut header = vec![Column::figure("conns")];
        header.extend(variants.iter().map(|v| Column::figure(*v)));
        let others: Vec<&str> = variants
            .iter()
            .copied()
            .filter(|v| *v != baseline)
            .collect();
        header.extend(
            others
                .iter()
                .map(|v| Column::figure(format!("{v} / {baseline}"))),
        );
        let rows = conns
            .iter()
            .map(|&n| {
                let mut row = vec![n.to_string()];
                for v in &variants {
                    row.push(match index.cell(w, v, n) {
                        Some(c) if c.valid_runs > 0 => ops(c.median_ops_per_s),
                        _ => "-".into(),
                    });
                }
                for v in &others {
                    row.push(match index.comparison(w, v, n) {
                        Some(k) => format!("{:.3} {}", k.ratio, k.verdict.as_str()),
                        None => "-".into(),
                    });
                }
                row
            })
            .collect();
        out.push(Sweep {
            workload: w.to_string(),
            unit: if sql { "TPS" } else { "ops/s" },
            table: Table::of("sweep", header, rows),
        });
    }
    out
}

/// An aligned plain-text table with a dashed rule under the header; columns for which
/// `right` holds are right-aligned; trailing spaces are trimmed.
pub fn aligned_table(
    header: &[String],
    rows: &[Vec<String>],
    right: impl Fn(usize) -> bool,
) -> String {
    // Cells may hold names read from a store or a results folder: never sent raw.
    let header: Vec<String> = header.iter().map(|c| crate::format::printable(c)).collect();
    let rows: Vec<Vec<String>> = rows
        .iter()
        .map(|r| r.iter().map(|c| crate::format::printable(c)).collect())
        .collect();
    let (header, rows) = (&header[..], &rows[..]);
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for r in rows {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |cells: &[String]| {
        let parts: Vec<String> = cells
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(i, (c, w))| {
                if right(i) {
                    format!("{c:>w$}")
                } else {
                    format!("{c:<w$}")
                }
            })
            .collect();
        parts.join("  ").trim_end().to_string() + "\n"
    };
    let mut out = line(header);
    out.push_str(&line(
        &widths.iter().map(|w| "-".repeat(*w)).collect::<Vec<_>>(),
    ));
    for r in rows {
        out.push_str(&line(r));
    }
    out
}

#[cfg(test)]
mod tests {
    /// A name from a crafted history store or results folder (an escape sequence that
    /// clears the screen, a bidi override) reaches the terminal escaped, and the columns
    /// still line up.
    #[test]
    fn regression_table_cells_from_a_store_are_never_sent_raw() {
        let header = vec!["variant".to_string(), "ops/s".to_string()];
        let rows = vec![
            vec!["a\u{1b}[2J\u{1b}]0;owned\u{7}".to_string(), "1".to_string()],
            vec!["b\u{202e}".to_string(), "22".to_string()],
        ];
        let t = super::aligned_table(&header, &rows, |i| i == 1);
        assert!(!t.chars().any(|c| c.is_control() && c != '\n'), "{t:?}");
        assert!(!t.contains('\u{202e}'), "{t:?}");
        assert!(t.contains("a\\u{1b}[2J") && t.contains("b\\u{202e}"), "{t}");
        let widths: Vec<usize> = t.lines().map(|l| l.chars().count()).collect();
        assert_eq!(widths[2], widths[3], "{t}");
    }
}
