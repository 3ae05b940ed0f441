//! The TPC-H-derived figures over a cell's runs: per query its median seconds with a 95%
//! CI and, against the baseline's cell, the ratio of times (below 1: this variant took
//! less time) with its verdict, the cell's queries one family of comparisons decided
//! together; per run the geometric mean, the headline, compared as a family of its own
//! across the experiment's cells; the plans kept and every query whose plan differs from
//! the baseline's marked (between servers of one kind: each kind explains in its own
//! words). Pure: results in, results out.

use super::records::{TpchCell, TpchRun};
use bakeoff_report::figures::{CellFigures, RunFigures};
use bakeoff_report::model::{Cell, RatioRecord, Results};
use bakeoff_stats::{self as stats, Direction};
use std::collections::BTreeMap;

/// (round, seconds) per valid run, by query; a throughput run's streams by their median.
type Times = BTreeMap<u8, Vec<(usize, f64)>>;

fn valid_runs(c: &Cell) -> Vec<(usize, TpchRun)> {
    c.runs
        .iter()
        .filter(|x| x.valid && !x.instruction_run)
        .map(|x| (x.round, TpchRun::of(x)))
        .collect()
}

fn median(xs: &[f64]) -> f64 {
    stats::summarize(xs).map_or(0.0, |s| s.median)
}

fn times(c: &Cell) -> Times {
    let mut out: Times = BTreeMap::new();
    for (round, run) in valid_runs(c) {
        let mut by: BTreeMap<u8, Vec<f64>> = BTreeMap::new();
        for q in &run.queries {
            by.entry(q.query).or_default().push(q.seconds);
        }
        for (q, xs) in by {
            out.entry(q).or_default().push((round, median(&xs)));
        }
    }
    out
}

fn geomeans(c: &Cell) -> Vec<(usize, f64)> {
    valid_runs(c)
        .into_iter()
        .filter_map(|(round, r)| r.geomean_s.map(|g| (round, g)))
        .collect()
}

/// Fills every TPC-H-derived cell's record (cells get it, with its settings, when they
/// are planned).
pub fn summarize_cells(r: &mut Results) {
    let baseline = r.plan.baseline.clone();
    let rule = r.rule(Direction::LowerIsBetter);
    let index = bakeoff_report::index::Index::new(r);
    let base_of = |c: &Cell| -> Option<usize> {
        if c.variant == baseline {
            return None;
        }
        let b = index.cell(&c.workload, &baseline, c.connections)?;
        r.cells.iter().position(|x| std::ptr::eq(x, b))
    };
    let bases: Vec<Option<usize>> = r.cells.iter().map(base_of).collect();
    // Plans are compared between servers of one kind only (each kind explains in its
    // own words).
    let same_kind: Vec<bool> = r
        .cells
        .iter()
        .map(|c| r.kind_of(&c.variant) == r.kind_of(&baseline))
        .collect();
    let all_times: Vec<Times> = r.cells.iter().map(times).collect();
    let all_geo: Vec<Vec<(usize, f64)>> = r.cells.iter().map(geomeans).collect();
    // The geometric means: one family over the experiment's TPC-H-derived cells.
    let geo_found = stats::decide_family(
        r.cells
            .iter()
            .zip(&bases)
            .enumerate()
            .map(|(i, (c, b))| {
                TpchCell::of(c)?;
                let b = (*b)?;
                Some(stats::Member::rounds(&all_geo[b], &all_geo[i]))
            })
            .collect(),
        &rule,
    );
    let plans: Vec<BTreeMap<String, String>> = r
        .cells
        .iter()
        .map(|c| {
            valid_runs(c)
                .into_iter()
                .map(|(_, x)| x.plans)
                .find(|p| !p.is_empty())
                .unwrap_or_default()
        })
        .collect();
    let mut records: Vec<Option<TpchCell>> = Vec::new();
    for (i, c) in r.cells.iter().enumerate() {
        let Some(mut t) = TpchCell::of(c) else {
            records.push(None);
            continue;
        };
        let g = all_geo[i].iter().map(|x| x.1).collect::<Vec<_>>();
        (t.geomean_s, t.geomean_ci95) = match stats::summarize(&g) {
            Some(s) => (s.median, [s.ci95.0, s.ci95.1]),
            None => (0.0, [0.0, 0.0]),
        };
        t.geomean_vs_baseline = geo_found[i].as_ref().map(RatioRecord::new);
        t.plans = plans[i].clone();
        let base = bases[i];
        let timed_out = |q: u8| {
            valid_runs(c)
                .iter()
                .filter(|(_, x)| x.queries.iter().any(|e| e.query == q && e.timed_out))
                .count()
        };
        let mut rows = Vec::new();
        let mut members = Vec::new();
        for (q, xs) in &all_times[i] {
            let values: Vec<f64> = xs.iter().map(|x| x.1).collect();
            let Some(s) = stats::summarize(&values) else {
                continue;
            };
            let key = format!("Q{q}");
            let plan_changed = same_kind[i] && base.is_some_and(|b| {
                matches!((plans[b].get(&key), plans[i].get(&key)), (Some(x), Some(y)) if x != y)
            });
            members.push(
                base.and_then(|b| all_times[b].get(q))
                    .map(|bx| stats::Member::rounds(bx, xs)),
            );
            rows.push(super::records::QueryRow {
                query: *q,
                median_s: s.median,
                ci95: [s.ci95.0, s.ci95.1],
                timed_out_runs: timed_out(*q),
                vs_baseline: None,
                plan_changed,
            });
        }
        // The cell's queries against the baseline's: one family.
        for (row, k) in rows.iter_mut().zip(stats::decide_family(members, &rule)) {
            row.vs_baseline = k.as_ref().map(RatioRecord::new);
        }
        t.queries = rows;
        records.push(Some(t));
    }
    for (c, t) in r.cells.iter_mut().zip(records) {
        if let Some(t) = t {
            t.put(c);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::records::QueryRecord;
    use super::*;
    use bakeoff_report::model::{Run, Verdict};

    fn run(round: usize, q1: f64, q6: f64, plan: &str) -> Run {
        let mut x = Run {
            valid: true,
            round,
            ..Run::default()
        };
        let rec = |query, seconds| QueryRecord {
            query,
            seconds,
            rows: 4,
            ..QueryRecord::default()
        };
        TpchRun {
            queries: vec![rec(1, q1), rec(6, q6)],
            geomean_s: Some((q1 * q6).sqrt()),
            throughput_qph: None,
            plans: [
                ("Q1".to_string(), plan.to_string()),
                ("Q6".to_string(), "Seq Scan".to_string()),
            ]
            .into_iter()
            .collect(),
        }
        .put(&mut x);
        x
    }

    #[test]
    fn queries_and_the_geometric_mean_against_the_baseline_with_plan_marks() {
        let mut r = Results::default();
        r.plan.baseline = "a".into();
        for (v, slow, plan) in [("a", 1.0, "Hash Join"), ("b", 2.0, "Nested Loop")] {
            let mut c = Cell::new("tpch", v, 1, Vec::new());
            c.runs = (0..8)
                .map(|i| {
                    let noise = 1.0 + f64::from(i as u32) * 0.001;
                    run(i, slow * noise, 0.5 * noise, plan)
                })
                .collect();
            TpchCell::small().put(&mut c);
            r.cells.push(c);
        }
        summarize_cells(&mut r);
        let b = TpchCell::of(&r.cells[1]).unwrap();
        let q1 = &b.queries[0];
        assert_eq!(q1.query, 1);
        assert!(q1.plan_changed && !b.queries[1].plan_changed);
        let k = q1.vs_baseline.as_ref().unwrap();
        assert!((k.ratio - 2.0).abs() < 0.01, "{}", k.ratio);
        assert_eq!(k.verdict, Verdict::Slower);
        assert_eq!(
            b.queries[1].vs_baseline.as_ref().unwrap().verdict,
            Verdict::Equivalent
        );
        let g = b.geomean_vs_baseline.as_ref().unwrap();
        assert!((g.ratio - 2f64.sqrt()).abs() < 0.01, "{}", g.ratio);
        assert_eq!(g.verdict, Verdict::Slower);
        assert_eq!(b.plans["Q1"], "Nested Loop");
        // Servers of different kinds explain differently: no plan is marked changed.
        let mut cross = r.clone();
        for (name, kind) in [("a", "sqlite"), ("b", "mysql")] {
            cross.variants.push(bakeoff_report::model::VariantRecord {
                name: name.into(),
                kind: Some(kind.into()),
                ..Default::default()
            });
        }
        summarize_cells(&mut cross);
        let t = TpchCell::of(&cross.cells[1]).unwrap();
        assert!(t.queries.iter().all(|q| !q.plan_changed));
        let a = TpchCell::of(&r.cells[0]).unwrap();
        assert!(a.geomean_vs_baseline.is_none() && (a.geomean_s - 0.7078).abs() < 0.01);
        let json = serde_json::to_value(&r.cells[1]).unwrap();
        assert_eq!(json["tpch"]["queries"][0]["plan_changed"], true);
        assert_eq!(json["runs"][0]["queries"][0]["query"], 1);
        assert!((json["runs"][0]["geomean_s"].as_f64().unwrap() - 1.0).abs() < 0.01);
    }
}
