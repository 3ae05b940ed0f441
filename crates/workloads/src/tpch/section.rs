//! The TPC-H-derived section: per workload first the geometric mean of each variant's
//! query times (the headline) with its comparison, then, per compared variant, each
//! query's ratio to the baseline with its 95% interval drawn (the report's interval
//! strips: 22 rows), its verdict and a mark where the query's plan differs from the
//! baseline's ("a 40% change that is a plan change is said to be one"); then each
//! variant's query times. The terminal shows the tables too.

use super::records::TpchCell;
use crate::shared::section::grouped;
use bakeoff_report::document::{Block, IntervalTable, Section};
use bakeoff_report::figures::CellFigures;
use bakeoff_report::format::{ratio_record_text, with_interval};
use bakeoff_report::model::{Cell, RatioRecord, Results, Verdict};
use bakeoff_report::svg::Interval;
use bakeoff_report::table::{Column, Table};

type Cells<'a> = Vec<(&'a Cell, TpchCell)>;

/// Each TPC-H-derived workload with its cells, by connections then variant order.
fn by_workload(r: &Results) -> Vec<(String, Cells<'_>)> {
    grouped(
        r.cells
            .iter()
            .filter_map(|c| TpchCell::of(c).map(|t| (t.workload.clone(), (c, t)))),
    )
}

fn secs(v: f64) -> String {
    if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.3}")
    }
}

fn ratio_text(k: Option<&RatioRecord>, baseline: bool) -> String {
    match k {
        None if baseline => "baseline".into(),
        k => ratio_record_text(k),
    }
}

/// The geometric means, one row per cell.
fn geomean_table(r: &Results, cells: &Cells<'_>) -> Table {
    let rows = cells
        .iter()
        .map(|(c, t)| {
            let timed_out: usize = t.queries.iter().map(|q| q.timed_out_runs).sum();
            vec![
                c.variant.clone(),
                c.connections.to_string(),
                if c.valid_runs > 0 {
                    with_interval(secs, t.geomean_s, t.geomean_ci95)
                } else {
                    "-".into()
                },
                ratio_text(t.geomean_vs_baseline.as_ref(), c.variant == r.plan.baseline),
                t.queries
                    .iter()
                    .filter(|q| q.plan_changed)
                    .count()
                    .to_string(),
                timed_out.to_string(),
                c.valid_runs.to_string(),
            ]
        })
        .collect();
    Table::of(
        "tpch-geomean",
        vec![
            Column::text("variant"),
            Column::figure("streams"),
            Column::figure("geometric mean s [95% CI]"),
            Column::figure(format!("/ {} [95% CI]", r.plan.baseline)),
            Column::figure("plans changed"),
            Column::figure("timed out"),
            Column::figure("runs"),
        ],
        rows,
    )
}

/// One compared variant's queries against the baseline's, with their intervals drawn.
fn query_ratios(r: &Results, c: &Cell, t: &TpchCell) -> Option<IntervalTable> {
    let rows: Vec<_> = t
        .queries
        .iter()
        .filter(|q| q.vs_baseline.is_some())
        .collect();
    if rows.is_empty() {
        return None;
    }
    let table = Table::of(
        "tpch-queries",
        vec![
            Column::text("query"),
            Column::figure("median s"),
            Column::figure(format!("/ {} [95% CI]", r.plan.baseline)),
            Column::text("plan"),
            Column::figure("timed out"),
        ],
        rows.iter()
            .map(|q| {
                vec![
                    format!("Q{}", q.query),
                    secs(q.median_s),
                    ratio_text(q.vs_baseline.as_ref(), false),
                    if q.plan_changed { "changed" } else { "" }.into(),
                    q.timed_out_runs.to_string(),
                ]
            })
            .collect(),
    );
    let verdicts: Vec<Verdict> = rows
        .iter()
        .map(|q| {
            q.vs_baseline
                .as_ref()
                .map_or(Verdict::Inconclusive, |k| k.verdict)
        })
        .collect();
    Some(IntervalTable {
        intervals: rows
            .iter()
            .map(|q| {
                let k = q.vs_baseline.as_ref().expect("filtered");
                Interval {
                    tip: format!(
                        "Q{} {} / {}: {:.3} [{:.3}, {:.3}]{}",
                        q.query,
                        c.variant,
                        r.plan.baseline,
                        k.ratio,
                        k.ci95[0],
                        k.ci95[1],
                        if q.plan_changed { ", plan changed" } else { "" }
                    ),
                    ..Interval::of_verdict(k.ratio, k.ci95, k.verdict)
                }
            })
            .collect(),
        at: 2,
        header: "time ratio with its 95% interval".into(),
        axis_label: format!(
            "query time, {} over {} (below 1: faster)",
            c.variant, r.plan.baseline
        ),
        reference: 1.0,
        verdicts,
        against: rows.iter().map(|_| r.plan.baseline.clone()).collect(),
        table,
    })
}

/// The section, when the results hold TPC-H-derived cells.
pub fn section(r: &Results) -> Option<Section> {
    let workloads = by_workload(r);
    if workloads.is_empty() {
        return None;
    }
    let mut s = Section::new("tpch", "TPC-H-derived", "Analytic queries (TPC-H-derived)");
    for (w, cells) in &workloads {
        let t0 = &cells[0].1;
        s.push(
            Block::Heading(
                format!(
                    "{w}: TPC-H-derived {} run, scale {}, {} parameters",
                    if t0.streams > 1 {
                        "throughput"
                    } else {
                        "power"
                    },
                    t0.scale,
                    t0.params
                )
                .into(),
            )
            .everywhere(),
        );
        s.push(Block::Table(geomean_table(r, cells)).everywhere());
        for (c, t) in cells {
            if let Some(it) = query_ratios(r, c, t) {
                s.push(Block::Heading(format!("{w}: {} per query", c.variant).into()).everywhere());
                s.push(Block::Verdicts(Box::new(it)).everywhere());
            }
        }
        let base: Vec<_> = cells
            .iter()
            .filter(|(c, _)| c.variant == r.plan.baseline)
            .collect();
        if let Some((c, t)) = base.first() {
            let rows = t
                .queries
                .iter()
                .map(|q| {
                    vec![
                        format!("Q{}", q.query),
                        with_interval(secs, q.median_s, q.ci95),
                        q.timed_out_runs.to_string(),
                    ]
                })
                .collect();
            let table = Table::of(
                "tpch-baseline",
                vec![
                    Column::text("query"),
                    Column::figure("median s [95% CI]"),
                    Column::figure("timed out"),
                ],
                rows,
            )
            .titled(format!("{w}: {} (baseline) per query", c.variant));
            s.push(Block::Heading(table.title.clone().into()));
            s.push(Block::Table(table));
        }
    }
    s.push(Block::caption("Derived from TPC-H, not a TPC-H result: bakeoff's own generator and queries, no audit. Geometric mean: of a run's query times (a timed-out query counted at its timeout), median over the valid runs with a distribution-free 95% CI; its comparison with the baseline is one family across the experiment. Per query: median seconds over the runs, the time ratio to the baseline's (below 1: faster) with its interval, a cell's queries one family of comparisons (Benjamini-Hochberg). Plan: changed where the query's EXPLAIN, costs stripped, differs from the baseline's; a ratio beside a changed plan is a plan change before it is a code change."));
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::super::records::{QueryRow, TpchCell};
    use bakeoff_report::figures::CellFigures;
    use bakeoff_report::model::{Cell, RatioRecord, Results, Verdict};

    /// The baseline `a` and `b`, 0.6 of its time, Q1's plan changed.
    fn fixture() -> Results {
        let mut r = Results::default();
        r.plan.baseline = "a".into();
        for (v, geo) in [("a", 1.0), ("b", 0.6)] {
            let mut c = Cell::new("tpch", v, 1, Vec::new());
            c.valid_runs = 5;
            let k = |ratio: f64, verdict| RatioRecord {
                ratio,
                ci95: [ratio * 0.95, ratio * 1.05],
                verdict,
                ..RatioRecord::default()
            };
            TpchCell {
                geomean_s: geo,
                geomean_ci95: [geo * 0.9, geo * 1.1],
                geomean_vs_baseline: (v == "b").then(|| k(0.6, Verdict::Faster)),
                queries: vec![
                    QueryRow {
                        query: 1,
                        median_s: geo,
                        ci95: [geo, geo],
                        vs_baseline: (v == "b").then(|| k(0.6, Verdict::Faster)),
                        plan_changed: v == "b",
                        ..QueryRow::default()
                    },
                    QueryRow {
                        query: 6,
                        median_s: 0.2,
                        ci95: [0.2, 0.2],
                        vs_baseline: (v == "b").then(|| k(1.0, Verdict::Equivalent)),
                        ..QueryRow::default()
                    },
                ],
                ..TpchCell::small()
            }
            .put(&mut c);
            r.cells.push(c);
        }
        r
    }

    #[test]
    fn the_geometric_mean_first_then_each_query_with_its_plan_mark() {
        let r = fixture();
        let md = bakeoff_report::markdown::render_with(&r, &crate::KINDS);
        assert!(md.contains("## Analytic queries (TPC-H-derived)"), "{md}");
        assert!(
            md.contains("tpch: TPC-H-derived power run, scale 0.1, random parameters"),
            "{md}"
        );
        let geo = md.find(
            "| b | 1 | 0.600 \\[0.540, 0.660\\] | 0.600 \\[0.570, 0.630\\] faster | 1 | 0 | 5 |",
        );
        let q1 = md.find("| Q1 | 0.600 | 0.600 \\[0.570, 0.630\\] faster | changed | 0 |");
        assert!(geo.is_some() && q1.is_some() && geo < q1, "{md}");
        assert!(md.contains("not a TPC-H result"), "{md}");
        let html = bakeoff_report::html::render_with(&r, &crate::KINDS);
        assert!(
            html.contains("Q1 b / a: 0.600 [0.570, 0.630], plan changed"),
            "no strip tip"
        );
    }

    /// report.html in headless chromium: the section is there, the geometric means come
    /// before the per-query strips, and every compared query has its interval drawn,
    /// with Q1's plan change beside its ratio.
    #[test]
    fn the_section_draws_in_a_browser() {
        let page = bakeoff_report::html::render_with(&fixture(), &crate::KINDS);
        let Some(dom) = bakeoff_report::browser::dom(&page, "tpch") else {
            eprintln!("no chromium: the browser check is skipped");
            return;
        };
        let section = dom
            .find("Analytic queries (TPC-H-derived)")
            .expect("the section");
        let geo = dom[section..]
            .find("geometric mean s")
            .expect("the geometric means");
        let strips = dom[section..]
            .find("time ratio with its 95% interval")
            .expect("the strips");
        assert!(geo < strips, "the headline first");
        for tip in [
            "Q1 b / a: 0.600 [0.570, 0.630], plan changed",
            "Q6 b / a: 1.000 [0.950, 1.050]",
        ] {
            assert!(dom.contains(&format!("<title>{tip}</title>")), "{tip}");
        }
        assert!(dom[section..].contains(">changed<"), "the plan mark");
    }
}
