//! tpcb's figures over a cell's valid runs: TPS (median, 95% CI), the latency medians,
//! the runs whose balances held. The comparison with the baseline is the cell's own
//! (a tpcb run's ops/s is its TPS). Pure: results in, results out.

use super::records::{LatencyMs, TpcbCell, TpcbRun};
use bakeoff_report::figures::{CellFigures, RunFigures};
use bakeoff_report::model::{Cell, Results};

/// Fills every tpcb cell's record (cells get it, empty, when they are planned).
pub fn summarize_cells(r: &mut Results) {
    for c in r.cells.iter_mut() {
        if let Some(mut t) = TpcbCell::of(c) {
            summarize(&mut t, c);
            t.put(c);
        }
    }
}

fn summarize(t: &mut TpcbCell, c: &Cell) {
    let valid: Vec<_> = c
        .runs
        .iter()
        .filter(|x| x.valid && !x.instruction_run)
        .collect();
    let tps: Vec<f64> = valid.iter().map(|x| x.tps.unwrap_or(x.ops_per_s)).collect();
    let median = |xs: Vec<f64>| bakeoff_stats::summarize(&xs).map_or(0.0, |s| s.median);
    (t.median_tps, t.tps_ci95) = match bakeoff_stats::summarize(&tps) {
        Some(s) => (s.median, [s.ci95.0, s.ci95.1]),
        None => (0.0, [0.0, 0.0]),
    };
    let ms = |f: fn(&bakeoff_report::model::Latency) -> f64| {
        median(valid.iter().map(|x| f(&x.latency_us) / 1000.0).collect())
    };
    t.latency_ms = LatencyMs {
        mean: ms(|l| l.mean),
        p50: ms(|l| l.p50),
        p90: ms(|l| l.p90),
        p99: ms(|l| l.p99),
        max: valid
            .iter()
            .map(|x| x.latency_us.max / 1000.0)
            .fold(0.0, f64::max),
    };
    t.balanced_runs = valid
        .iter()
        .filter(|x| TpcbRun::of(**x).balances.as_deref() == Some("pass"))
        .count();
}

#[cfg(test)]
mod tests {
    use super::*;
    use bakeoff_report::model::{Latency, Run};

    fn run(tps: f64, p90_us: f64, pass: bool) -> Run {
        let mut x = Run {
            valid: true,
            ops_per_s: tps,
            tps: Some(tps),
            latency_us: Latency {
                mean: p90_us / 2.0,
                p50: p90_us / 3.0,
                p90: p90_us,
                p99: p90_us * 2.0,
                max: p90_us * 4.0,
                ..Latency::default()
            },
            ..Run::default()
        };
        TpcbRun {
            balances: Some(if pass { "pass" } else { "fail" }.into()),
            ..TpcbRun::default()
        }
        .put(&mut x);
        x
    }

    #[test]
    fn tps_latency_and_balances_over_the_valid_runs() {
        let mut c = Cell::new("tpcb", "a", 4, Vec::new());
        c.runs = (0..5)
            .map(|i| run(1000.0 + f64::from(i) * 10.0, 3000.0, i != 4))
            .collect();
        let mut bad = run(1.0, 1.0, true);
        bad.valid = false;
        c.runs.push(bad);
        TpcbCell {
            workload: "tpcb".into(),
            scale: 2,
            ..TpcbCell::default()
        }
        .put(&mut c);
        let mut r = Results {
            cells: vec![c, Cell::new("kv", "a", 4, Vec::new())],
            ..Results::default()
        };
        summarize_cells(&mut r);
        let t = TpcbCell::of(&r.cells[0]).unwrap();
        assert_eq!(t.median_tps, 1020.0);
        assert!(t.tps_ci95[0] <= 1020.0 && t.tps_ci95[1] >= 1020.0);
        assert_eq!(t.latency_ms.p90, 3.0);
        assert_eq!(t.latency_ms.max, 12.0);
        assert_eq!((t.balanced_runs, t.scale), (4, 2));
        assert!(TpcbCell::of(&r.cells[1]).is_none(), "another kind's cell");
        // Where results.json keeps them: the cell's under "tpcb", the run's beside its own.
        let json = serde_json::to_value(&r.cells[0]).unwrap();
        assert_eq!(json["tpcb"]["median_tps"], 1020.0);
        assert_eq!(json["runs"][0]["balances"], "pass");
        let back: Cell = serde_json::from_value(json).unwrap();
        assert_eq!(back, r.cells[0]);
    }
}
