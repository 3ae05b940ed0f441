//! TPC-C tables every exporter shows, built once as strings: NOTPM by warehouses and
//! connections per variant with its 95% CI and the verdict against the baseline, the
//! largest W that passes the response-time limits, per-kind response times against those
//! limits, and whether the server was CPU-bound or I/O-bound while it ran.

use super::records::TpccCell;
use crate::shared::section::{columns, grouped, variants};
use bakeoff_report::document::{Block, Chart, Charts, Inline, Media, Section, Span};
use bakeoff_report::figures::CellFigures;
use bakeoff_report::format::{ratio_record_text, with_interval};
use bakeoff_report::model::{self, Results};
use bakeoff_report::summary::ops;
use bakeoff_report::svg::{LineChart, Series};
use bakeoff_report::table::{Column, Table};
use std::collections::{HashMap, HashSet};

/// A cell with its tpcc record, read once.
pub struct Cell<'a> {
    cell: &'a model::Cell,
    pub tpcc: Option<TpccCell>,
}

impl<'a> Cell<'a> {
    pub fn new(cell: &'a model::Cell) -> Cell<'a> {
        Cell {
            cell,
            tpcc: TpccCell::of(cell),
        }
    }
}

impl std::ops::Deref for Cell<'_> {
    type Target = model::Cell;
    fn deref(&self) -> &model::Cell {
        self.cell
    }
}

/// Each tpcc workload (in results order) with its cells, by (W, connections), then
/// variant: one pass over the cells, however many workloads there are.
pub fn by_workload<'a>(cells: &'a [Cell<'a>]) -> Vec<(&'a str, Vec<&'a Cell<'a>>)> {
    let mut out = grouped(
        cells
            .iter()
            .filter_map(|c| c.tpcc.as_ref().map(|t| (t.workload.as_str(), c))),
    );
    for (_, cs) in &mut out {
        cs.sort_by_key(|c| (c.tpcc.as_ref().map_or(0, |t| t.warehouses), c.connections));
    }
    out
}

/// The (W, connections) points of a workload's cells ([`by_workload`]), in order.
pub fn points(cells: &[&Cell]) -> Vec<(u32, usize)> {
    let mut p: Vec<(u32, usize)> = cells
        .iter()
        .filter_map(|c| c.tpcc.as_ref().map(|t| (t.warehouses, c.connections)))
        .collect();
    p.dedup();
    p
}

/// A workload's cells by (variant, W, connections), the first of each.
fn cells_at<'a>(cells: &[&'a Cell<'a>]) -> HashMap<(&'a str, u32, usize), &'a Cell<'a>> {
    let mut at = HashMap::with_capacity(cells.len());
    for c in cells {
        if let Some(t) = &c.tpcc {
            at.entry((c.variant.as_str(), t.warehouses, c.connections))
                .or_insert(*c);
        }
    }
    at
}

/// NOTPM per point and variant, each candidate's ratio to the baseline with its CI and
/// verdict, and the response-time check of each variant; `cells` are the workload's
/// ([`by_workload`]).
pub fn notpm_table(r: &Results, w: &str, cells: &[&Cell]) -> Table {
    let vs = variants(r);
    let points = points(cells);
    // A grid far sparser than its cells would print points x variants figures for a
    // handful of runs: then one row per cell instead.
    if points.len() * vs.len() > 4 * cells.len() + 4096 {
        return notpm_rows(w, cells);
    }
    let index = cells_at(cells);
    let cell_at = |v: &str, at: (u32, usize)| index.get(&(v, at.0, at.1)).copied();
    let baseline = r.plan.baseline.as_str();
    let others: Vec<&str> = vs.iter().copied().filter(|v| *v != baseline).collect();
    let mut header = vec![Column::figure("W"), Column::figure("conns")];
    header.extend(
        vs.iter()
            .map(|v| Column::figure(format!("{v} NOTPM [95% CI]"))),
    );
    header.extend(
        others
            .iter()
            .map(|v| Column::figure(format!("{v} / {baseline}"))),
    );
    header.push(Column::text("response times"));
    let rows = points
        .into_iter()
        .map(|at| {
            let mut row = vec![at.0.to_string(), at.1.to_string()];
            for v in &vs {
                row.push(match cell_at(v, at).and_then(|c| c.tpcc.as_ref()) {
                    Some(t) if t.median_notpm > 0.0 => {
                        with_interval(ops, t.median_notpm, t.notpm_ci95)
                    }
                    _ => "-".into(),
                });
            }
            for v in &others {
                let k = cell_at(v, at)
                    .and_then(|c| c.tpcc.as_ref())
                    .and_then(|t| t.notpm_vs_baseline.as_ref());
                row.push(ratio_record_text(k));
            }
            let checks: Vec<String> = vs
                .iter()
                .filter_map(|v| cell_at(v, at))
                .filter(|c| c.valid_runs > 0)
                .map(|c| format!("{} {}", c.variant, check_word(c)))
                .collect();
            row.push(checks.join(", "));
            row
        })
        .collect();
    Table::of("sweep", header, rows).titled(format!("TPC-C {w}: NOTPM"))
}

/// The NOTPM table as one row per cell (a grid too sparse to print as one).
fn notpm_rows(w: &str, cells: &[&Cell]) -> Table {
    let mut t = Table::new(
        "sweep",
        &[
            "W#",
            "conns#",
            "variant",
            "NOTPM [95% CI]#",
            "vs baseline#",
            "response times",
        ],
    )
    .titled(format!("TPC-C {w}: NOTPM"));
    for c in cells {
        let Some(k) = &c.tpcc else { continue };
        t.push(vec![
            k.warehouses.to_string().into(),
            c.connections.to_string().into(),
            bakeoff_report::table::Value::Variant(c.variant.clone()),
            if k.median_notpm > 0.0 {
                with_interval(ops, k.median_notpm, k.notpm_ci95)
            } else {
                "-".into()
            }
            .into(),
            ratio_record_text(k.notpm_vs_baseline.as_ref()).into(),
            if c.valid_runs > 0 {
                check_word(c)
            } else {
                "-".into()
            }
            .into(),
        ]);
    }
    t
}

/// "pass", or "FAIL (kinds over their limit)".
fn check_word(c: &Cell) -> String {
    let Some(t) = &c.tpcc else {
        return "-".into();
    };
    if t.pass {
        return "pass".into();
    }
    let over: Vec<&str> = t
        .transactions
        .iter()
        .filter(|(_, x)| !x.pass)
        .map(|(k, _)| k.as_str())
        .collect();
    format!("FAIL ({})", over.join(", "))
}

/// find_max_w: one line per variant (and connection count) with the largest passing W.
pub fn max_w_lines(r: &Results, cells: &[&Cell]) -> Vec<String> {
    let mut out = Vec::new();
    let mut of: HashMap<&str, Vec<&Cell>> = HashMap::new();
    for c in cells {
        of.entry(c.variant.as_str()).or_default().push(c);
    }
    for v in variants(r) {
        let mut seen: HashSet<(usize, u32)> = HashSet::new();
        for c in of.remove(v).unwrap_or_default() {
            let Some(t) = &c.tpcc else { continue };
            let Some(m) = t.max_passing_warehouses else {
                continue;
            };
            let conns = if t.think == "spec" { 0 } else { c.connections };
            if !seen.insert((conns, m)) {
                continue;
            }
            let at = if t.think == "spec" {
                "with the specification's think times (10 terminals per warehouse)".to_string()
            } else {
                format!("at {} connections", c.connections)
            };
            out.push(if m == 0 {
                format!("{v}: no W passes {at}")
            } else {
                format!("{v}: W = {m} is the largest that passes {at}")
            });
        }
    }
    out
}

/// Per cell and transaction kind: counts, response times (ms), the limit and the check.
pub fn response_table(w: &str, cells: &[&Cell]) -> Table {
    let text = ["variant", "kind", "p90 check"];
    let header = columns(
        &[
            "variant",
            "W",
            "conns",
            "kind",
            "count",
            "mean",
            "p50",
            "p90",
            "p99",
            "max",
            "limit",
            "p90 check",
            "rollbacks",
            "retries",
            "errors",
        ],
        &text,
    );
    let ms = |v: f64| {
        if v >= 100.0 {
            format!("{v:.0}")
        } else {
            format!("{v:.2}")
        }
    };
    let mut rows = Vec::new();
    for c in cells {
        let Some(t) = &c.tpcc else { continue };
        for (k, x) in &t.transactions {
            rows.push(vec![
                c.variant.clone(),
                t.warehouses.to_string(),
                c.connections.to_string(),
                k.clone(),
                x.count.to_string(),
                ms(x.mean_ms),
                ms(x.p50_ms),
                ms(x.p90_ms),
                ms(x.p99_ms),
                ms(x.max_ms),
                ms(x.limit_ms),
                if x.pass { "pass" } else { "FAIL" }.into(),
                x.rollbacks.to_string(),
                x.retries.to_string(),
                x.errors.to_string(),
            ]);
        }
    }
    Table::of("kinds", header, rows).titled(format!(
        "TPC-C {w}: response times (ms, medians over valid runs; max: largest)"
    ))
}

/// What held the server back: CPU modes, I/O wait and disk writes during the measured
/// windows (the sampler's means), and the consistency checks that passed.
pub fn bound_table(w: &str, cells: &[&Cell]) -> Option<Table> {
    let text = ["variant", "bound by"];
    let header = columns(
        &[
            "variant",
            "W",
            "conns",
            "user %",
            "system %",
            "iowait %",
            "idle %",
            "disk writes MB/s",
            "disk util max %",
            "bound by",
            "consistent runs",
        ],
        &text,
    );
    let mut rows = Vec::new();
    for c in cells {
        let (Some(t), Some(s)) = (&c.tpcc, &c.system) else {
            continue;
        };
        let valid: Vec<_> = c.runs.iter().filter(|x| x.valid).collect();
        let secs = valid.iter().map(|x| x.elapsed_s).sum::<f64>() / valid.len().max(1) as f64;
        let mbps = s.disk_write_bytes as f64 / secs.max(1e-9) / 1e6;
        rows.push(vec![
            c.variant.clone(),
            t.warehouses.to_string(),
            c.connections.to_string(),
            format!("{:.0}", s.cpu_user_pct),
            format!("{:.0}", s.cpu_system_pct),
            format!("{:.0}", s.cpu_iowait_pct),
            format!("{:.0}", s.cpu_idle_pct),
            format!("{mbps:.1}"),
            format!("{:.0}", s.disk_util_pct_max),
            bound_by(s.cpu_iowait_pct, s.cpu_idle_pct, s.disk_util_pct_max).into(),
            format!("{}/{}", t.consistent_runs, c.valid_runs),
        ]);
    }
    (!rows.is_empty()).then(|| {
        Table::of("bound", header, rows).titled(format!("TPC-C {w}: CPU-bound or I/O-bound?"))
    })
}

/// The seed study's question in one word: I/O when the CPUs wait on the disk (or the
/// disk is near saturation), CPU when they have no idle time left, else neither (the
/// terminals, locks or think times set the pace).
pub fn bound_by(iowait_pct: f64, idle_pct: f64, disk_util_max_pct: f64) -> &'static str {
    if iowait_pct >= 20.0 || disk_util_max_pct >= 80.0 {
        "I/O"
    } else if idle_pct < 15.0 {
        "CPU"
    } else {
        "neither"
    }
}

/// NOTPM by warehouses per variant (one line per connection count), drawn.
fn notpm_chart(r: &Results, w: &str, cells: &[&Cell]) -> Chart {
    let spec = cells
        .iter()
        .any(|c| c.tpcc.as_ref().is_some_and(|k| k.think == "spec"));
    let order = bakeoff_report::document::variant_order(r);
    let palette = bakeoff_report::index::Palette::new(&order);
    let mut of: HashMap<&str, Vec<&Cell>> = HashMap::new();
    for c in cells {
        of.entry(c.variant.as_str()).or_default().push(c);
    }
    let mut series: Vec<Series> = Vec::new();
    for v in order {
        let Some(vcells) = of.remove(v.as_str()) else {
            continue;
        };
        // Each group of this variant's cells (one per connection count, or all of them
        // with the specification's think times), in connection order.
        let mut groups: Vec<(Option<usize>, Vec<&Cell>)> = Vec::new();
        if spec {
            groups.push((None, vcells));
        } else {
            let mut by_conns: std::collections::BTreeMap<usize, Vec<&Cell>> = Default::default();
            for c in vcells {
                by_conns.entry(c.connections).or_default().push(c);
            }
            groups.extend(by_conns.into_iter().map(|(n, cs)| (Some(n), cs)));
        }
        let many = groups.len() > 1;
        for (g, gcells) in groups {
            let mine: Vec<_> = gcells
                .iter()
                .filter_map(|c| c.tpcc.as_ref().filter(|k| k.median_notpm > 0.0))
                .collect();
            if mine.is_empty() {
                continue;
            }
            series.push(Series {
                name: match (many, g) {
                    (true, Some(n)) => format!("{v} x{n}"),
                    _ => v.to_string(),
                },
                color: palette.color(&v),
                points: mine
                    .iter()
                    .map(|k| (f64::from(k.warehouses), k.median_notpm))
                    .collect(),
                band: Some(
                    mine.iter()
                        .map(|k| (f64::from(k.warehouses), k.notpm_ci95[0], k.notpm_ci95[1]))
                        .collect(),
                ),
                ..Series::default()
            });
        }
    }
    Chart::Line(LineChart {
        title: format!("{w}: NOTPM by warehouses"),
        x_label: "warehouses (W)".into(),
        y_label: "NOTPM".into(),
        y_zero: true,
        series,
        ..LineChart::default()
    })
}

/// The TPC-C section: per tpcc workload, NOTPM against warehouses (drawn and as a table
/// with verdicts; the terminal shows the table), the largest passing W, response times
/// against their limits, and what bound the server.
pub fn section(r: &Results) -> Option<Section> {
    let all: Vec<Cell> = r.cells.iter().map(Cell::new).collect();
    let workloads = by_workload(&all);
    if workloads.is_empty() {
        return None;
    }
    let mut s = Section::new("tpcc", "TPC-C", "TPC-C");
    for (w, cells) in &workloads {
        s.push(Block::Heading(format!("{w}: NOTPM").into()).everywhere());
        s.push(Block::Charts(Charts {
            charts: vec![notpm_chart(r, w, cells)],
            caption: Some("Lines: medians over valid runs; shaded: their 95% CI.".into()),
            ..Charts::default()
        }));
        s.push(Block::Table(notpm_table(r, w, cells)).everywhere());
        s.push(Block::caption("NOTPM: New-Order transactions committed per minute, median over valid runs with a distribution-free 95% CI; ratio: Hodges-Lehmann CI at the level adjusted over the TPC-C comparisons, verdict as for throughput. Response times pass when every kind's 90th percentile is within its limit (5 s; Stock-Level 20 s)."));
        let lines = max_w_lines(r, cells);
        if !lines.is_empty() {
            s.push(Block::Only(
                Media::ALL,
                vec![
                    Block::text("Largest passing W:"),
                    Block::bullets(
                        lines
                            .into_iter()
                            .map(|l| Inline(vec![Span::Strong(l)]))
                            .collect(),
                    ),
                ],
            ));
        }
        s.push(Block::Heading(format!("{w}: response times").into()));
        s.push(Block::Table(response_table(w, cells)));
        if let Some(b) = bound_table(w, cells) {
            s.push(Block::Heading(
                format!("{w}: CPU-bound or I/O-bound?").into(),
            ));
            s.push(Block::Table(b));
            s.push(Block::caption("bound by: I/O when iowait >= 20% or the disk was >= 80% busy at some second, CPU when idle < 15%, else neither (locks, terminals or think times set the pace)."));
        }
    }
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::bound_by;

    #[test]
    fn bound_by_reads_iowait_idle_and_disk() {
        assert_eq!(bound_by(35.0, 5.0, 40.0), "I/O");
        assert_eq!(bound_by(2.0, 30.0, 95.0), "I/O");
        assert_eq!(bound_by(1.0, 3.0, 10.0), "CPU");
        assert_eq!(bound_by(1.0, 60.0, 10.0), "neither");
    }

    /// The report crate's tpcc sample (its `tpcc_sample_is_the_kind_fixture` keeps the
    /// file equal to it), shown by the registry in every exporter.
    #[test]
    fn tpcc_sections_in_every_exporter() {
        use bakeoff_report::{html, markdown, terminal_with, Results};
        let text = include_str!("../../tests/fixtures/kinds/tpcc_sample.json");
        let r = Results::from_json(text).unwrap();
        let kinds = &crate::KINDS;
        let md = markdown::render_with(&r, kinds);
        assert!(md.contains("## TPC-C\n\n### tpcc: NOTPM"), "{md}");
        assert!(md.contains("| 2 | 8 | 5,200 \\[5,044, 5,356\\] | 5,720 \\[5,548, 5,892\\] | 1.100 \\[1.040, 1.160\\] faster | gcc-O2 pass, clang-O3 FAIL (new_order) |"), "{md}");
        assert!(
            md.contains("- **gcc-O2: W = 2 is the largest that passes at 8 connections**"),
            "{md}"
        );
        assert!(
            md.contains("- **clang-O3: W = 1 is the largest that passes at 8 connections**"),
            "{md}"
        );
        assert!(md.contains("| clang-O3 | 2 | 8 | new_order | 900 | 3050 | 2033 | 6100 | 12200 | 24400 | 5000 | FAIL |"), "{md}");
        assert!(
            md.contains("| gcc-O2 | 1 | 8 | 60 | 30 | 2 | 8 | 20.0 | 35 | CPU | 1/1 |"),
            "{md}"
        );
        let term = terminal_with(&r, false, kinds);
        assert!(term.contains("\ntpcc: NOTPM\n"), "{term}");
        assert!(
            term.contains("Largest passing W:\n- gcc-O2: W = 2 is the largest that passes at 8 connections\n- clang-O3: W = 1"),
            "{term}"
        );
        let html = html::render_with(&r, kinds);
        assert!(html.contains("<section id=\"tpcc\">"), "{html}");
        assert!(html.contains("NOTPM by warehouses"), "{html}");
    }
}
