//! The capacity section (`[[workload]] slo`): per point, each variant's capacity at the
//! latency limit with its interval and its answer against the baseline's (the table the
//! terminal prints too), the curve of latency against offered load with the limit and
//! each capacity marked, and every trial listed.

use crate::document::{Block, Chart, Charts, Section};
use crate::index::Palette;
use crate::model::{CapacityRecord, Cell, ComparisonRecord, Results, Verdict};
use crate::summary::{micros, ops};
use crate::svg::{LineChart, Scale, Series};
use crate::table::{Table, Value};
use std::collections::HashMap;

/// "p99", "p99.9".
pub fn percentile_name(p: f64) -> String {
    format!("p{}", p)
}

/// The section, when some cell has a capacity.
pub fn section(r: &Results) -> Option<Section> {
    let cells: Vec<&Cell> = r.cells.iter().filter(|c| c.capacity.is_some()).collect();
    let first = cells.first()?.capacity.as_ref()?;
    let mut s = Section::new(
        "capacity",
        "Capacity",
        format!(
            "Capacity at {} ≤ {}",
            percentile_name(first.percentile),
            limit_text(first.limit_us)
        ),
    );
    s.push(Block::Table(table(r, &cells)).everywhere());
    s.push(Block::caption(
        "Capacity: the highest offered rate at which the percentile of the response time (from each request's intended send time) stays under the limit and the achieved rate keeps up (within 5%), found from short open-loop trials on fresh servers. Every variant is first bracketed at the same rates (the peaks' geometric mean times powers of 2); then each round bisects one shared window for every variant, one trial a probe, probing the variants in a shuffled order at each step (at the same rate while their answers agree), the window's cells moved by a fresh random share every round so that where a capacity falls inside its cell is a random error, not one that every round repeats. A search is one such round: it places each capacity in a cell, the highest rate it passed below the lowest it failed. The figure is the median over the searches with its 95% order-statistic interval (with too few searches: from the lowest lower bound to the highest upper bound); the ratio compares the searches paired by index, Student's t over their log ratios, its spread at least what the cells' widths allow.",
    ));
    let mut points: Vec<(&str, usize)> = Vec::new();
    let mut at: HashMap<(&str, usize), Vec<&Cell>> = HashMap::new();
    for c in &cells {
        let here = at.entry((c.workload.as_str(), c.connections)).or_default();
        if here.is_empty() {
            points.push((c.workload.as_str(), c.connections));
        }
        here.push(c);
    }
    let order = crate::document::variant_order(r);
    let palette = Palette::new(&order);
    let mut charts = Vec::new();
    for &(w, conns) in &points {
        let here = at.remove(&(w, conns)).unwrap_or_default();
        charts.extend(curve(&order, &palette, w, conns, &here).map(Chart::Line));
    }
    if !charts.is_empty() {
        s.push(Block::Charts(Charts {
            charts,
            caption: Some("Latency against offered load: each trial's percentile (median per offered rate), per variant; the flat dashed line is the limit, each variant's dashed upright its capacity. Log scales.".into()),
            ..Charts::default()
        }));
    }
    s.push(Block::Details {
        summary: "Every trial".into(),
        blocks: vec![Block::Table(trials(&cells))],
    });
    Some(s)
}

fn limit_text(us: f64) -> String {
    if us >= 1000.0 {
        format!("{} ms", us / 1000.0)
    } else {
        format!("{us} µs")
    }
}

/// The capacity table: one row per cell.
pub fn table(r: &Results, cells: &[&Cell]) -> Table {
    let mut t = Table::new(
        "capacity",
        &[
            "workload",
            "conns#",
            "variant",
            "capacity ops/s#",
            "95% CI",
            "peak ops/s#",
            "searches#",
            "trials#",
            "ratio#",
            "ratio CI",
            "verdict",
        ],
    );
    let mut by_cell: HashMap<(&str, usize, &str), &ComparisonRecord> = HashMap::new();
    for k in r.comparisons.iter().filter(|k| k.is_capacity()) {
        by_cell
            .entry((k.workload.as_str(), k.connections, k.variant.as_str()))
            .or_insert(k);
    }
    for c in cells {
        let Some(k) = &c.capacity else { continue };
        let cmp = by_cell
            .get(&(c.workload.as_str(), c.connections, c.variant.as_str()))
            .copied();
        let (ratio, ci, verdict) = match cmp {
            Some(k) => (
                format!("{:.3}", k.ratio),
                format!("[{:.3}, {:.3}]", k.ci95[0], k.ci95[1]),
                Value::Verdict(k.verdict, k.verdict.as_str().to_string()),
            ),
            None if c.variant == r.plan.baseline => {
                ("1.000".into(), String::new(), Value::Baseline)
            }
            None => (
                String::new(),
                String::new(),
                Value::Verdict(Verdict::Inconclusive, "no search paired".into()),
            ),
        };
        t.push(vec![
            Value::Text(c.workload.clone()),
            Value::Text(c.connections.to_string()),
            Value::Variant(c.variant.clone()),
            Value::Text(if k.ops_per_s > 0.0 {
                ops(k.ops_per_s)
            } else {
                "none".into()
            }),
            Value::Text(format!("[{}, {}]", ops(k.ci[0]), ops(k.ci[1]))),
            Value::Text(k.peak_ops_per_s.map_or(String::new(), ops)),
            Value::Text(k.searches.len().to_string()),
            Value::Text(k.trials.len().to_string()),
            Value::Text(ratio),
            Value::Text(ci),
            verdict,
        ]);
    }
    t
}

/// The curve of one point, each variant in its colour of `order`.
fn curve(
    order: &[String],
    palette: &Palette,
    w: &str,
    conns: usize,
    cells: &[&Cell],
) -> Option<LineChart> {
    let k0 = cells.first()?.capacity.as_ref()?;
    let color = |v: &str| palette.color(v);
    let mut series = Vec::new();
    let (mut xmin, mut xmax, mut ymin, mut ymax) = (f64::MAX, 0.0f64, f64::MAX, 0.0f64);
    for c in cells {
        let Some(k) = &c.capacity else { continue };
        let points = medians(k);
        for &(x, y) in &points {
            xmin = xmin.min(x);
            xmax = xmax.max(x);
            ymin = ymin.min(y);
            ymax = ymax.max(y);
        }
        series.push(Series {
            name: c.variant.clone(),
            color: color(&c.variant),
            points,
            ..Series::default()
        });
    }
    if xmax <= 0.0 {
        return None;
    }
    ymin = ymin.min(k0.limit_us);
    ymax = ymax.max(k0.limit_us);
    series.push(Series {
        name: format!("limit {}", limit_text(k0.limit_us)),
        color: order.len(),
        points: vec![(xmin, k0.limit_us), (xmax, k0.limit_us)],
        dashed: true,
        ..Series::default()
    });
    for c in cells {
        let Some(k) = &c.capacity else { continue };
        if k.ops_per_s > 0.0 {
            series.push(Series {
                name: format!("{} capacity {}", c.variant, ops(k.ops_per_s)),
                color: color(&c.variant),
                points: vec![(k.ops_per_s, ymin), (k.ops_per_s, ymax)],
                dashed: true,
                ..Series::default()
            });
        }
    }
    Some(LineChart {
        title: format!(
            "{w} ×{conns}: {} against offered load",
            percentile_name(k0.percentile)
        ),
        x_label: "offered ops/s".into(),
        y_label: format!("{} µs", percentile_name(k0.percentile)),
        x_scale: Scale::Log10,
        y_scale: Scale::Log10,
        markers: true,
        series,
        ..LineChart::default()
    })
}

/// Per offered rate, the median of its trials' percentile, in rate order.
fn medians(k: &CapacityRecord) -> Vec<(f64, f64)> {
    let mut rates: Vec<f64> = k.trials.iter().map(|t| t.offered).collect();
    rates.sort_by(f64::total_cmp);
    rates.dedup();
    rates
        .into_iter()
        .filter_map(|x| {
            let mut ys: Vec<f64> = k
                .trials
                .iter()
                .filter(|t| t.offered == x && t.valid)
                .map(|t| pick(k.percentile, t))
                .collect();
            ys.sort_by(f64::total_cmp);
            (!ys.is_empty()).then(|| (x, ys[ys.len() / 2]))
        })
        .collect()
}

fn pick(p: f64, t: &crate::model::CapacityTrial) -> f64 {
    if p >= 99.9 {
        t.p999
    } else if p >= 99.0 {
        t.p99
    } else {
        t.p50
    }
}

/// Every trial of every capacity cell.
fn trials(cells: &[&Cell]) -> Table {
    let mut t = Table::new(
        "trials",
        &[
            "variant",
            "search#",
            "offered ops/s#",
            "achieved ops/s#",
            "p50 µs#",
            "p99 µs#",
            "p99.9 µs#",
            "answer",
        ],
    );
    for c in cells {
        let Some(k) = &c.capacity else { continue };
        for x in &k.trials {
            let answer = match (x.pass, &x.invalid_reason) {
                (true, _) => "pass".to_string(),
                (false, Some(why)) => format!("fail: {why}"),
                (false, None) if x.client_bound => "fail (client-bound)".into(),
                (false, None) => "fail".into(),
            };
            t.push(vec![
                Value::Variant(c.variant.clone()),
                Value::Text(if x.bracket {
                    "bracket".to_string()
                } else {
                    (x.search + 1).to_string()
                }),
                Value::Text(ops(x.offered)),
                Value::Text(ops(x.achieved)),
                Value::Text(micros(x.p50)),
                Value::Text(micros(x.p99)),
                Value::Text(micros(x.p999)),
                Value::Long(answer),
            ]);
        }
    }
    t
}
