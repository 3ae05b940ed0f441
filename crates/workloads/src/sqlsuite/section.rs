//! The sql-bench-style tables: per group, seconds per variant side by side with their 95%
//! CIs and each candidate's time relative to the baseline (= 1.00; below 1 took less
//! time) with its CI and verdict; per operation the same, the largest change first.

use super::records::{SuiteCell, SuiteRow};
use crate::shared::section::{grouped, variants};
use bakeoff_report::document::{Block, Section};
use bakeoff_report::model::{self, Results};
use bakeoff_report::table::{Column, Table};
use std::collections::{HashMap, HashSet};

/// A cell with its suite record, read once.
pub struct Cell<'a> {
    cell: &'a model::Cell,
    pub sqlsuite: Option<SuiteCell>,
}

impl std::ops::Deref for Cell<'_> {
    type Target = model::Cell;
    fn deref(&self) -> &model::Cell {
        self.cell
    }
}

fn cells(r: &Results) -> Vec<Cell<'_>> {
    r.cells
        .iter()
        .map(|cell| Cell {
            cell,
            sqlsuite: SuiteCell::of(cell),
        })
        .collect()
}

/// Each sqlsuite workload (in results order) with its cells, in one pass.
fn by_workload<'a>(all: &'a [Cell<'a>]) -> Vec<(&'a str, Vec<&'a Cell<'a>>)> {
    grouped(
        all.iter()
            .filter(|c| c.sqlsuite.is_some())
            .map(|c| (c.workload.as_str(), c)),
    )
}

fn seconds(x: &SuiteRow) -> String {
    format!("{:.3} [{:.3}, {:.3}]", x.median_s, x.ci95[0], x.ci95[1])
}

/// A row's time against the baseline's, with its CI and verdict ("-" without one).
fn ratio(x: &SuiteRow) -> String {
    match &x.vs_baseline {
        Some(b) => format!(
            "{:.2} [{:.2}, {:.2}] {}",
            b.ratio,
            b.ci95[0],
            b.ci95[1],
            b.verdict.as_str()
        ),
        None => "-".into(),
    }
}

/// The table as one row per variant and group (or operation): a grid too sparse to
/// print as one (every variant with operations of its own).
fn long_table(
    r: &Results,
    w: &str,
    vs: &[&str],
    per: &[HashMap<(&str, &str), &SuiteRow>],
    ops: bool,
) -> Table {
    let mut header = vec![Column::text("group")];
    if ops {
        header.push(Column::text("operation"));
    }
    header.extend([
        Column::text("variant"),
        Column::figure("s [95% CI]"),
        Column::figure(format!("/ {}", r.plan.baseline)),
    ]);
    let mut rows = Vec::new();
    for (v, m) in vs.iter().zip(per) {
        let mut mine: Vec<&&SuiteRow> = m.values().collect();
        mine.sort_by(|a, b| (&a.group, &a.name).cmp(&(&b.group, &b.name)));
        for x in mine {
            let mut row = vec![x.group.clone()];
            if ops {
                row.push(x.name.clone());
            }
            row.extend([v.to_string(), seconds(x), ratio(x)]);
            rows.push(row);
        }
    }
    Table::of("suite", header, rows).titled(format!(
        "{w}: seconds per {} (baseline {} = 1.00)",
        if ops { "operation" } else { "group" },
        r.plan.baseline
    ))
}

/// Groups (`ops = false`) or operations (`ops = true`) of workload `w`, whose cells
/// are `cells`.
pub fn table(r: &Results, w: &str, cells: &[&Cell], ops: bool) -> Table {
    let vs = variants(r);
    let baseline = r.plan.baseline.as_str();
    let others: Vec<&str> = vs.iter().copied().filter(|v| *v != baseline).collect();
    let mut first: HashMap<&str, &Cell> = HashMap::new();
    for c in cells {
        first.entry(c.variant.as_str()).or_insert(c);
    }
    let rows_of = |v: &str| -> &[SuiteRow] {
        first
            .get(v)
            .and_then(|c| c.sqlsuite.as_ref())
            .map_or(&[], |s| if ops { &s.operations } else { &s.groups })
    };
    // Per variant, its rows by (group, name): the first of each.
    let per: Vec<HashMap<(&str, &str), &SuiteRow>> = vs
        .iter()
        .map(|v| {
            let mut m = HashMap::new();
            for x in rows_of(v) {
                m.entry((x.group.as_str(), x.name.as_str())).or_insert(x);
            }
            m
        })
        .collect();
    let mut keys: Vec<(&str, &str)> = Vec::new();
    let mut seen = HashSet::new();
    for v in &vs {
        for x in rows_of(v) {
            let k = (x.group.as_str(), x.name.as_str());
            if seen.insert(k) {
                keys.push(k);
            }
        }
    }
    let find = |i: usize, k: &(&str, &str)| per[i].get(k).copied();
    let n_rows: usize = per.iter().map(HashMap::len).sum();
    if keys.len() * vs.len() > 4 * n_rows + 4096 {
        return long_table(r, w, &vs, &per, ops);
    }
    if ops {
        let change = |k: &(&str, &str)| -> f64 {
            (0..vs.len())
                .filter_map(|i| find(i, k)?.vs_baseline.as_ref().map(|b| b.ratio.ln().abs()))
                .fold(0.0, f64::max)
        };
        let mut keyed: Vec<(f64, (&str, &str))> = keys.iter().map(|k| (change(k), *k)).collect();
        keyed.sort_by(|a, b| b.0.total_cmp(&a.0));
        keys = keyed.into_iter().map(|(_, k)| k).collect();
    }
    let mut header = vec![Column::text("group")];
    if ops {
        header.push(Column::text("operation"));
    }
    header.extend(vs.iter().map(|v| Column::figure(format!("{v} s [95% CI]"))));
    header.extend(
        others
            .iter()
            .map(|v| Column::figure(format!("{v} / {baseline}"))),
    );
    let rows = keys
        .iter()
        .map(|k| {
            let mut row = vec![k.0.to_string()];
            if ops {
                row.push(k.1.to_string());
            }
            for i in 0..vs.len() {
                row.push(find(i, k).map_or("-".into(), seconds));
            }
            for (i, v) in vs.iter().enumerate() {
                if *v == baseline {
                    continue;
                }
                row.push(find(i, k).map_or("-".into(), ratio));
            }
            row
        })
        .collect();
    Table::of("suite", header, rows).titled(format!(
        "{w}: seconds per {} (baseline {baseline} = 1.00)",
        if ops { "operation" } else { "group" }
    ))
}

/// The SQL suite section: per sqlsuite workload the group table (the terminal shows it
/// too) and the operation table.
pub fn section(r: &Results) -> Option<Section> {
    let all = cells(r);
    let workloads = by_workload(&all);
    if workloads.is_empty() {
        return None;
    }
    let mut s = Section::new("sqlsuite", "SQL suite", "SQL suite");
    for (w, cells) in &workloads {
        for ops in [false, true] {
            let t = table(r, w, cells, ops);
            let heading = Block::Heading(t.title.clone().into());
            let t = Block::Table(t);
            if ops {
                s.push(heading);
                s.push(t);
            } else {
                s.push(heading.everywhere());
                s.push(t.everywhere());
            }
        }
    }
    s.push(Block::caption("Seconds: medians over valid runs with a distribution-free 95% CI. Ratio: this variant's median time / the baseline's (below 1 took less time), Hodges-Lehmann CI at the level adjusted over all the suite's comparisons (false-coverage-rate intervals, as for throughput); faster/slower when the adjusted p < 0.05 and that CI excludes 1. Operations: largest change first."));
    Some(s)
}
