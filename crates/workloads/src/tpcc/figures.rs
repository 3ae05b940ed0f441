//! tpcc's figures over a cell's runs: NOTPM's median and CI, NOTPM against the baseline,
//! the response-time check per transaction kind, and, for a warehouse sweep with
//! `find_max_w`, the largest W that passes. Pure: results in, results out.

use super::records::{TpccCell, TpccRun, TransactionRecord};
use bakeoff_report::figures::{CellFigures, RunFigures};
use bakeoff_report::model::{Cell, RatioRecord, Results};
use bakeoff_stats::{self as stats, Direction};
use std::collections::BTreeMap;

/// Fills every tpcc cell's `tpcc` record (cells get it, empty, when they are planned).
pub fn summarize_cells(r: &mut Results) {
    for c in r.cells.iter_mut() {
        summarize(c);
    }
    let baseline = r.plan.baseline.clone();
    let rule = r.rule(Direction::HigherIsBetter);
    let notpm_of = |c: &Cell| -> Vec<(usize, f64)> {
        c.runs
            .iter()
            .filter(|x| x.valid)
            .filter_map(|x| TpccRun::of(x).notpm.map(|n| (x.round, n)))
            .collect()
    };
    let index = bakeoff_report::index::Index::new(r);
    type Rounds = Vec<(usize, f64)>;
    let sides: Vec<Option<(Rounds, Rounds)>> = r
        .cells
        .iter()
        .map(|c| {
            TpccCell::of(c)?;
            if c.variant == baseline {
                return None;
            }
            let b = index.cell(&c.workload, &baseline, c.connections)?;
            Some((notpm_of(b), notpm_of(c)))
        })
        .collect();
    // The TPC-C comparisons are one family.
    let mut family = stats::Family::new();
    for s in &sides {
        family.member((), s.as_ref().map(|(b, c)| stats::Member::rounds(b, c)));
    }
    let against: Vec<Option<RatioRecord>> = family
        .decide_all(&rule)
        .iter()
        .map(|(_, k)| k.as_ref().map(RatioRecord::new))
        .collect();
    for (c, k) in r.cells.iter_mut().zip(against) {
        TpccCell::update(c, |t, _| t.notpm_vs_baseline = k);
    }
    max_passing(r);
}

/// One cell: NOTPM, per-kind medians of the runs' p90 (max of their max), the check.
fn summarize(c: &mut Cell) {
    TpccCell::update(c, summarize_into);
}

fn summarize_into(t: &mut TpccCell, c: &Cell) {
    let valid: Vec<TpccRun> = c.runs.iter().filter(|x| x.valid).map(TpccRun::of).collect();
    let notpm: Vec<f64> = valid.iter().filter_map(|x| x.notpm).collect();
    match stats::summarize(&notpm) {
        Some(s) => {
            t.median_notpm = s.median;
            t.notpm_ci95 = [s.ci95.0, s.ci95.1];
        }
        None => {
            t.median_notpm = 0.0;
            t.notpm_ci95 = [0.0, 0.0];
        }
    }
    let mut kinds: BTreeMap<String, Vec<&TransactionRecord>> = BTreeMap::new();
    for run in &valid {
        for (k, x) in &run.transactions {
            kinds.entry(k.clone()).or_default().push(x);
        }
    }
    let median = |xs: Vec<f64>| stats::summarize(&xs).map_or(0.0, |s| s.median);
    t.transactions = kinds
        .into_iter()
        .map(|(k, xs)| {
            let limit_ms = xs[0].limit_ms;
            let p90_ms = median(xs.iter().map(|x| x.p90_ms).collect());
            let rec = TransactionRecord {
                count: xs.iter().map(|x| x.count).sum(),
                mean_ms: median(xs.iter().map(|x| x.mean_ms).collect()),
                p50_ms: median(xs.iter().map(|x| x.p50_ms).collect()),
                p90_ms,
                p99_ms: median(xs.iter().map(|x| x.p99_ms).collect()),
                max_ms: xs.iter().map(|x| x.max_ms).fold(0.0, f64::max),
                limit_ms,
                pass: p90_ms <= limit_ms,
                rollbacks: xs.iter().map(|x| x.rollbacks).sum(),
                retries: xs.iter().map(|x| x.retries).sum(),
                errors: xs.iter().map(|x| x.errors).sum(),
            };
            (k, rec)
        })
        .collect();
    t.pass = !valid.is_empty() && t.transactions.values().all(|x| x.pass);
    t.consistent_runs = valid
        .iter()
        .filter(|x| x.consistency.as_deref() == Some("pass"))
        .count();
}

/// The sweep a cell belongs to: (variant, workload, connections); with the
/// specification's think times connections grow with W, so they do not split the sweep.
fn sweep_key(c: &Cell) -> Option<(String, String, usize)> {
    let t = TpccCell::of(c)?;
    let conns = if t.think == "spec" { 0 } else { c.connections };
    Some((c.variant.clone(), t.workload, conns))
}

/// For sweeps with find_max_w: the largest W where it and every smaller W pass.
fn max_passing(r: &mut Results) {
    let mut sweeps: BTreeMap<(String, String, usize), Vec<(u32, bool)>> = BTreeMap::new();
    for c in &r.cells {
        if let (Some(k), Some(t)) = (sweep_key(c), TpccCell::of(c)) {
            if t.find_max_w {
                sweeps.entry(k).or_default().push((t.warehouses, t.pass));
            }
        }
    }
    // The largest W before the first that fails, once per sweep.
    let best: BTreeMap<_, u32> = sweeps
        .into_iter()
        .map(|(k, mut points)| {
            points.sort_unstable();
            let w = points
                .iter()
                .take_while(|(_, pass)| *pass)
                .map(|(w, _)| *w)
                .last()
                .unwrap_or(0);
            (k, w)
        })
        .collect();
    for c in r.cells.iter_mut() {
        let Some(&best) = sweep_key(c).and_then(|k| best.get(&k)) else {
            continue;
        };
        TpccCell::update(c, |t, _| t.max_passing_warehouses = Some(best));
    }
}

/// find_max_w: true when the cell at `at` belongs to a sweep whose smallest W has run
/// and missed a response-time limit in every valid run so far; larger W cannot pass.
pub fn beyond_a_failed_w(r: &Results, at: usize) -> bool {
    let c = &r.cells[at];
    let Some(t) = TpccCell::of(c).filter(|t| t.find_max_w) else {
        return false;
    };
    let key = sweep_key(c);
    let smallest = r
        .cells
        .iter()
        .filter(|o| sweep_key(o) == key)
        .filter_map(|o| TpccCell::of(o).map(|t| (t.warehouses, o)))
        .min_by_key(|(w, _)| *w);
    let Some((w, first)) = smallest else {
        return false;
    };
    let valid: Vec<_> = first.runs.iter().filter(|x| x.valid).collect();
    w < t.warehouses
        && !valid.is_empty()
        && valid
            .iter()
            .all(|x| TpccRun::of(*x).transactions.values().any(|k| !k.pass))
}

/// What a reader must see first: a max-W search that found nothing because the smallest
/// W already misses a limit.
pub fn warnings(r: &Results) -> Vec<String> {
    let mut out = Vec::new();
    let mut said = std::collections::HashSet::new();
    // Each sweep's cell at its smallest W (the first such), in one pass.
    let mut smallest: BTreeMap<_, (u32, &Cell)> = BTreeMap::new();
    for o in &r.cells {
        if let Some(t) = TpccCell::of(o) {
            let at = smallest.entry(sweep_key(o)).or_insert((t.warehouses, o));
            if t.warehouses < at.0 {
                *at = (t.warehouses, o);
            }
        }
    }
    for c in &r.cells {
        let Some(t) = TpccCell::of(c) else { continue };
        if t.max_passing_warehouses != Some(0) || c.valid_runs == 0 {
            continue;
        }
        let key = sweep_key(c);
        let Some(&(w, cell)) = smallest.get(&key) else {
            continue;
        };
        if !said.insert(key) {
            continue;
        }
        let failing: Vec<String> = TpccCell::of(cell)
            .iter()
            .flat_map(|t| t.transactions.clone())
            .filter(|(_, x)| !x.pass)
            .map(|(k, x)| format!("{k} p90 {:.0} ms > {:.0} ms", x.p90_ms, x.limit_ms))
            .collect();
        out.push(format!(
            "{} {} x{}: find_max_w found no passing W: already at W = {w} {}; larger W were not run (fewer connections or a faster server may pass)",
            c.variant,
            t.workload,
            c.connections,
            if failing.is_empty() {
                "no run was valid".to_string()
            } else {
                failing.join(", ")
            }
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use bakeoff_report::model::Verdict;
    use bakeoff_report::model::{PlanRecord, Run};

    fn run(notpm: f64, new_order_p90_ms: f64) -> Run {
        let k = TransactionRecord {
            count: 100,
            p90_ms: new_order_p90_ms,
            max_ms: new_order_p90_ms * 2.0,
            limit_ms: 5000.0,
            pass: new_order_p90_ms <= 5000.0,
            ..TransactionRecord::default()
        };
        let mut x = Run {
            valid: true,
            ops_per_s: notpm / 27.0,
            ..Run::default()
        };
        TpccRun {
            notpm: Some(notpm),
            consistency: Some("pass".into()),
            transactions: [("new_order".to_string(), k)].into_iter().collect(),
            ..TpccRun::default()
        }
        .put(&mut x);
        x
    }

    fn cell(variant: &str, w: u32, runs: Vec<Run>) -> Cell {
        let mut c = Cell {
            workload: format!("tpcc-w{w}"),
            variant: variant.into(),
            connections: 8,
            valid_runs: runs.len(),
            runs,
            ..Default::default()
        };
        TpccCell {
            workload: "tpcc".into(),
            warehouses: w,
            think: "none".into(),
            find_max_w: true,
            ..TpccCell::default()
        }
        .put(&mut c);
        c
    }

    fn results(cells: Vec<Cell>) -> Results {
        Results {
            name: "t".into(),
            bakeoff_version: "0".into(),
            plan: PlanRecord {
                repetitions: Some(5),
                warmup_s: 0.0,
                duration_s: Some(1.0),
                ops: None,
                seed: 1,
                baseline: "a".into(),
                rounds: vec![],
                ..PlanRecord::default()
            },
            cells,
            ..Results::default()
        }
    }

    fn five(notpm: f64, p90: f64) -> Vec<Run> {
        (0..5).map(|i| run(notpm + f64::from(i), p90)).collect()
    }

    #[test]
    fn notpm_verdicts_and_the_largest_passing_w() {
        let mut r = results(vec![
            cell("a", 1, five(1000.0, 20.0)),
            cell("b", 1, five(1300.0, 20.0)),
            cell("a", 2, five(1800.0, 40.0)),
            cell("b", 2, five(2400.0, 6000.0)),
            cell("a", 5, five(2000.0, 4000.0)),
            cell("b", 5, five(2500.0, 30.0)),
        ]);
        summarize_cells(&mut r);
        let t = |v: &str, w: u32| {
            r.cells
                .iter()
                .filter(|c| c.variant == v)
                .filter_map(TpccCell::of)
                .find(|t| t.warehouses == w)
                .unwrap()
        };
        assert_eq!(t("a", 1).median_notpm, 1002.0);
        let k = t("b", 1).notpm_vs_baseline.unwrap();
        assert_eq!(k.verdict, Verdict::Faster);
        assert!((k.ratio - 1.3).abs() < 0.01, "{}", k.ratio);
        assert!(t("a", 1).notpm_vs_baseline.is_none());
        assert_eq!(t("a", 5).max_passing_warehouses, Some(5));
        // b fails at W = 2, so W = 5 passing does not count.
        assert!(!t("b", 2).pass);
        assert_eq!(t("b", 5).max_passing_warehouses, Some(1));
        assert_eq!(t("b", 2).transactions["new_order"].p90_ms, 6000.0);
        assert_eq!(t("a", 1).consistent_runs, 5);
        assert!(warnings(&r).is_empty());
    }

    #[test]
    fn a_failing_smallest_w_stops_the_search_and_says_so() {
        let mut r = results(vec![
            cell("a", 1, vec![run(900.0, 7000.0)]),
            cell("a", 2, vec![]),
        ]);
        summarize_cells(&mut r);
        assert!(beyond_a_failed_w(&r, 1));
        assert!(!beyond_a_failed_w(&r, 0));
        let w = warnings(&r);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(
            w[0].contains("already at W = 1 new_order p90 7000 ms > 5000 ms"),
            "{w:?}"
        );
    }
}
