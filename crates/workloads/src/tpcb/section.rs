//! The pgbench TPC-B section: per tpcb workload one row per connection count and
//! variant, as pgbench reports a run (TPS, latency average) with the percentiles, the
//! TPS's 95% CI, the cell's comparison with the baseline and the runs whose balances
//! held. The terminal shows it too.

use super::records::TpcbCell;
use crate::shared::section::grouped;
use bakeoff_report::document::{Block, Section};
use bakeoff_report::figures::CellFigures;
use bakeoff_report::format::with_interval;
use bakeoff_report::model::Results;
use bakeoff_report::summary::ops;
use bakeoff_report::table::{Column, Table};

/// Each tpcb workload (in results order) with its cells' records, by connections then
/// variant order.
fn by_workload(r: &Results) -> Vec<(String, Vec<(&bakeoff_report::model::Cell, TpcbCell)>)> {
    let mut out = grouped(
        r.cells
            .iter()
            .filter_map(|c| TpcbCell::of(c).map(|t| (t.workload.clone(), (c, t)))),
    );
    for (_, cells) in &mut out {
        cells.sort_by_key(|(c, _)| c.connections);
    }
    out
}

/// One workload's table.
pub fn table(r: &Results, w: &str, cells: &[(&bakeoff_report::model::Cell, TpcbCell)]) -> Table {
    let ms = |v: f64| format!("{v:.3}");
    let rows = cells
        .iter()
        .map(|(c, t)| {
            let vs = match r.comparison(&c.workload, &c.variant, c.connections) {
                Some(k) => format!("{:.3} {}", k.ratio, k.verdict.as_str()),
                None if c.variant == r.plan.baseline => "baseline".into(),
                None => "-".into(),
            };
            let valid = c.valid_runs;
            vec![
                c.connections.to_string(),
                c.variant.clone(),
                if valid > 0 {
                    with_interval(ops, t.median_tps, t.tps_ci95)
                } else {
                    "-".into()
                },
                ms(t.latency_ms.mean),
                ms(t.latency_ms.p50),
                ms(t.latency_ms.p90),
                ms(t.latency_ms.p99),
                vs,
                format!("{}/{valid}", t.balanced_runs),
            ]
        })
        .collect();
    let header = vec![
        Column::figure("clients"),
        Column::text("variant"),
        Column::figure("TPS [95% CI]"),
        Column::figure("latency avg ms"),
        Column::figure("p50 ms"),
        Column::figure("p90 ms"),
        Column::figure("p99 ms"),
        Column::figure(format!("/ {}", r.plan.baseline)),
        Column::figure("balanced"),
    ];
    let (scale, script) = cells
        .first()
        .map(|(_, t)| (t.scale, t.builtin.clone()))
        .unwrap_or_default();
    Table::of("tpcb", header, rows).titled(format!("{w}: pgbench {script}, scale {scale}"))
}

/// The section, when the results hold tpcb cells.
pub fn section(r: &Results) -> Option<Section> {
    let workloads = by_workload(r);
    if workloads.is_empty() {
        return None;
    }
    let mut s = Section::new("tpcb", "TPC-B", "pgbench TPC-B");
    for (w, cells) in &workloads {
        let t = table(r, w, cells);
        s.push(Block::Heading(t.title.clone().into()).everywhere());
        s.push(Block::Table(t).everywhere());
    }
    s.push(Block::caption("TPS: transactions per second, median over valid runs with a distribution-free 95% CI (the cell's throughput, compared with the baseline's as every cell is). Latency: each run's transaction latency, median over the runs. Balanced: valid runs after which the accounts', tellers' and branches' balances each added up to the history's deltas."));
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::super::records::{LatencyMs, TpcbCell};
    use bakeoff_report::figures::CellFigures;
    use bakeoff_report::model::{Cell, ComparisonRecord, Results, Verdict};

    #[test]
    fn a_row_per_cell_with_its_tps_latency_and_comparison() {
        let mut r = Results::default();
        r.plan.baseline = "a".into();
        for (v, tps) in [("a", 1000.0), ("b", 1500.0)] {
            let mut c = Cell::new("tpcb", v, 4, Vec::new());
            c.valid_runs = 3;
            TpcbCell {
                workload: "tpcb".into(),
                scale: 10,
                builtin: "tpcb-like".into(),
                median_tps: tps,
                tps_ci95: [tps * 0.9, tps * 1.1],
                latency_ms: LatencyMs {
                    mean: 4.0,
                    p50: 3.0,
                    p90: 6.5,
                    p99: 12.0,
                    max: 40.0,
                },
                balanced_runs: 3,
            }
            .put(&mut c);
            r.cells.push(c);
        }
        r.comparisons.push(ComparisonRecord {
            workload: "tpcb".into(),
            connections: 4,
            variant: "b".into(),
            baseline: "a".into(),
            cross_kind: false,
            ratio: 1.5,
            verdict: Verdict::Faster,
            ..Default::default()
        });
        let md = bakeoff_report::markdown::render_with(&r, &crate::KINDS);
        assert!(
            md.contains("## pgbench TPC-B\n\n### tpcb: pgbench tpcb-like, scale 10"),
            "{md}"
        );
        assert!(md.contains("| 4 | b | 1,500 \\[1,350, 1,650\\] | 4.000 | 3.000 | 6.500 | 12.000 | 1.500 faster | 3/3 |"), "{md}");
        assert!(md.contains("| 4 | a | 1,000 \\[900, 1,100\\] | 4.000 | 3.000 | 6.500 | 12.000 | baseline | 3/3 |"), "{md}");
        let term = bakeoff_report::terminal_with(&r, false, &crate::KINDS);
        assert!(
            term.contains("tpcb: pgbench tpcb-like, scale 10\n"),
            "{term}"
        );
    }
}
