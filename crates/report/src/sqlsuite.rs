//! The sql-bench-style tables: per group, seconds per variant side by side with their 95%
//! CIs and each candidate's time relative to the baseline (= 1.00; below 1 took less
//! time) with its CI and verdict; per operation the same, the largest change first.

use crate::document::{Block, Section};
use crate::model::{Results, SuiteRow};
use crate::table::{Column, Table};

/// The sqlsuite workloads, in results order.
pub fn workloads(r: &Results) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for c in r.cells.iter().filter(|c| c.sqlsuite.is_some()) {
        if !out.contains(&c.workload) {
            out.push(c.workload.clone());
        }
    }
    out
}

fn variants(r: &Results) -> Vec<&str> {
    r.variants
        .iter()
        .filter(|v| v.status == "ok")
        .map(|v| v.name.as_str())
        .collect()
}

fn seconds(x: &SuiteRow) -> String {
    format!("{:.3} [{:.3}, {:.3}]", x.median_s, x.ci95[0], x.ci95[1])
}

/// Groups (`ops = false`) or operations (`ops = true`) of workload `w`.
pub fn table(r: &Results, w: &str, ops: bool) -> Table {
    let vs = variants(r);
    let baseline = r.plan.baseline.as_str();
    let others: Vec<&str> = vs.iter().copied().filter(|v| *v != baseline).collect();
    let rows_of = |v: &str| -> Vec<SuiteRow> {
        r.cells
            .iter()
            .find(|c| c.workload == w && c.variant == v)
            .and_then(|c| c.sqlsuite.as_ref())
            .map(|s| {
                if ops {
                    s.operations.clone()
                } else {
                    s.groups.clone()
                }
            })
            .unwrap_or_default()
    };
    let per: Vec<Vec<SuiteRow>> = vs.iter().map(|v| rows_of(v)).collect();
    let mut keys: Vec<(String, String)> = Vec::new();
    for rows in &per {
        for x in rows {
            let k = (x.group.clone(), x.name.clone());
            if !keys.contains(&k) {
                keys.push(k);
            }
        }
    }
    let find =
        |i: usize, k: &(String, String)| per[i].iter().find(|x| x.group == k.0 && x.name == k.1);
    let change = |k: &(String, String)| -> f64 {
        (0..vs.len())
            .filter_map(|i| find(i, k)?.vs_baseline.as_ref().map(|b| b.ratio.ln().abs()))
            .fold(0.0, f64::max)
    };
    if ops {
        keys.sort_by(|a, b| change(b).total_cmp(&change(a)));
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
            let mut row = vec![k.0.clone()];
            if ops {
                row.push(k.1.clone());
            }
            for i in 0..vs.len() {
                row.push(find(i, k).map_or("-".into(), seconds));
            }
            for v in &others {
                let i = vs.iter().position(|x| x == v).unwrap_or(0);
                row.push(match find(i, k).and_then(|x| x.vs_baseline.as_ref()) {
                    Some(b) => format!(
                        "{:.2} [{:.2}, {:.2}] {}",
                        b.ratio,
                        b.ci95[0],
                        b.ci95[1],
                        b.verdict.as_str()
                    ),
                    None => "-".into(),
                });
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
    let workloads = workloads(r);
    if workloads.is_empty() {
        return None;
    }
    let mut s = Section::new("sqlsuite", "SQL suite", "SQL suite");
    for w in &workloads {
        for ops in [false, true] {
            let t = table(r, w, ops);
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
