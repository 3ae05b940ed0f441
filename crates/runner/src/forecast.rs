//! What the budget buys, said early: per comparison, once the minimum rounds are in, the
//! noise measured (the spread of one round's ratio and the cells' run-to-run CV), the
//! half-width the whole budget should reach at that noise, and the rounds and time the
//! precision target needs (`bakeoff_stats::predicted_half_width`, `rounds_to_reach`).
//! Recomputed from the latest rounds after every round; results.json keeps the last one
//! per comparison (`forecast`). `bakeoff check --noise` makes the same forecast from the
//! baseline's runs alone.

use crate::analyze::round_seconds;
use bakeoff_plan::Loaded;
use bakeoff_report::model::{Cell, Forecast, Results};
use bakeoff_stats::{predicted_half_width, rounds_to_reach, Direction};

/// Runs of the baseline `bakeoff check --noise` measures: enough for a CV, few enough to
/// take a minute or two at the plan's windows.
pub const NOISE_RUNS: usize = 6;

/// The confidence level `bakeoff check --noise` forecasts for, before any comparison is
/// decided: that of an interval no comparison's selection has narrowed yet, 1 - alpha / m
/// over the experiment's m comparisons (the level an inconclusive one is shown at when
/// none is selected; see `bakeoff_stats::fcr_levels`).
fn planned_level(r: &Results, comparisons: usize) -> f64 {
    1.0 - r.rule(Direction::HigherIsBetter).alpha / comparisons.max(1) as f64
}

/// The forecast at a noise: what `budget_rounds` reach, what the target needs.
pub fn forecast(
    noise: f64,
    cv: [Option<f64>; 2],
    rounds: usize,
    round_s: f64,
    budget_rounds: Option<usize>,
    target: f64,
    level: f64,
) -> Forecast {
    let finite = |x: f64| x.is_finite().then_some(x);
    let rounds_for_target = rounds_to_reach(noise, target, level);
    Forecast {
        noise,
        cv,
        rounds,
        round_seconds: round_s,
        budget_rounds,
        reaches: budget_rounds.and_then(|n| finite(predicted_half_width(noise, n, level))),
        target,
        rounds_for_target,
        seconds_for_target: rounds_for_target.map(|n| n as f64 * round_s),
        level,
    }
}

/// Seconds a round takes now: every point still running rounds (every point when none
/// is), at the median wall time of each variant's runs there.
fn round_time(r: &Results) -> f64 {
    let open = |c: &&Cell| c.stop_reason.is_none();
    let any_open = r.cells.iter().any(|c| open(&c));
    let mut points: Vec<(&str, usize)> = r
        .cells
        .iter()
        .filter(|c| !any_open || open(c))
        .map(|c| (c.workload.as_str(), c.connections))
        .collect();
    points.sort();
    points.dedup();
    points.iter().map(|(w, c)| round_seconds(r, w, *c)).sum()
}

/// Rounds still to come by the plan: what fits in what is left of the budget at
/// `round_s` a round, capped by `repetitions`; None with neither.
fn rounds_left(r: &Results, round_s: f64) -> Option<usize> {
    let done = r.plan.rounds.len();
    let cap = r.plan.repetitions.map(|n| n.saturating_sub(done));
    match r.plan.budget_s {
        Some(b) => {
            let left = (b - r.rounds_s.unwrap_or(0.0)).max(0.0);
            let fit = (left / round_s.max(0.001)).floor() as usize;
            Some(cap.map_or(fit, |n| n.min(fit)))
        }
        None => cap,
    }
}

/// Recomputes the forecast of every comparison still running rounds from the rounds so
/// far (a point that stopped keeps its last one). Over code layouts, where rounds do not
/// narrow the layouts' part of the spread, no forecast is made.
pub fn update(r: &mut Results) {
    let round_s = round_time(r);
    let left = rounds_left(r, round_s);
    let target = r.plan.precision.unwrap_or(r.plan.equivalence);
    let mut made = Vec::new();
    for (i, k) in r.comparisons.iter().enumerate() {
        let cell = |v: &str| r.cell(&k.workload, v, k.connections);
        if k.layouts.is_some() || cell(&k.variant).is_some_and(|c| c.stop_reason.is_some()) {
            continue;
        }
        let Some(noise) = k.round_spread else {
            continue;
        };
        let cv = |v: &str| cell(v).map(|c| c.cv).filter(|x| *x > 0.0);
        made.push((
            i,
            forecast(
                noise,
                [cv(&k.baseline), cv(&k.variant)],
                k.rounds,
                round_s,
                left.map(|n| k.rounds + n),
                target,
                // The level its interval is decided at, adjusted for the comparisons
                // decided together.
                k.ci_level,
            ),
        ));
    }
    for (i, f) in made {
        r.comparisons[i].forecast = Some(f);
    }
}

/// The forecast `bakeoff check --noise` prints for each comparison of the experiment
/// `loaded` at its first point, from `measured`: the results of the baseline alone run
/// there. Two independent runs of spread CV give a ratio whose log spreads about
/// sqrt(2) CV, the noise of one round before any pairing helps; a round takes the
/// experiment's runs per round at the baseline's median run time; the budget, the
/// repetitions and the target are the experiment's. Empty when the baseline has fewer
/// than two valid runs.
pub fn from_baseline(loaded: &Loaded, measured: &Results) -> Vec<(String, Forecast)> {
    let e = &loaded.experiment;
    let Some(cell) = measured.cells.iter().find(|c| c.valid_runs >= 2) else {
        return Vec::new();
    };
    let logs: Vec<f64> = cell
        .runs
        .iter()
        .filter(|x| x.valid && x.ops_per_s > 0.0)
        .map(|x| x.ops_per_s.ln())
        .collect();
    let spread = bakeoff_stats::summarize(&logs).map_or(0.0, |s| s.stddev);
    let noise = std::f64::consts::SQRT_2 * spread;
    let walls: Vec<f64> = cell
        .runs
        .iter()
        .map(|x| x.wall_s.unwrap_or(x.elapsed_s))
        .collect();
    let run_s = bakeoff_stats::summarize(&walls).map_or(0.0, |s| s.median);
    let round_s = run_s * e.runs_per_round() as f64;
    let stop = e.plan.stopping();
    let budget_rounds = match stop.budget {
        Some(b) => {
            let fit = (b.as_secs_f64() / round_s.max(0.001)).floor() as usize;
            Some(stop.max_rounds.map_or(fit, |n| n.min(fit)))
        }
        None => stop.max_rounds,
    };
    let target = stop.precision.unwrap_or_else(|| e.plan.equivalence_band());
    let variants = e.variants_run().max(1);
    let comparisons = (variants - 1) * (e.runs_per_round() / variants);
    let level = planned_level(measured, comparisons);
    let baseline = e.baseline();
    e.variants
        .iter()
        .filter(|v| v.name != baseline)
        .map(|v| {
            (
                format!("{} x{} {}", cell.workload, cell.connections, v.name),
                forecast(
                    noise,
                    [Some(cell.cv), None],
                    0,
                    round_s,
                    budget_rounds,
                    target,
                    level,
                ),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use bakeoff_report::model::{PlanRecord, Run};

    fn run(round: usize, ops: f64) -> Run {
        Run {
            round,
            ops_per_s: ops,
            valid: true,
            elapsed_s: 10.0,
            wall_s: Some(10.0),
            ..Run::default()
        }
    }

    fn cell(variant: &str, runs: Vec<Run>) -> Cell {
        Cell::new("w", variant, 16, runs)
    }

    /// Two variants at one point after `rounds` rounds of 20 s in a 600 s budget: the
    /// baseline steady, the candidate 3% faster, swinging +-`swing` (in logs) round by
    /// round.
    fn results(rounds: usize, swing: f64) -> Results {
        let candidate = (0..rounds)
            .map(|i| {
                let sign = if i % 2 == 0 { 1.0 } else { -1.0 };
                run(i, 100_000.0 * (0.03 + sign * swing).exp())
            })
            .collect();
        let mut r = Results {
            name: "t".into(),
            plan: PlanRecord {
                budget_s: Some(600.0),
                precision: Some(0.01),
                min_rounds: 6,
                baseline: "a".into(),
                rounds: vec![Vec::new(); rounds],
                ..PlanRecord::default()
            },
            cells: vec![
                cell("a", (0..rounds).map(|i| run(i, 100_000.0)).collect()),
                cell("b", candidate),
            ],
            rounds_s: Some(20.0 * rounds as f64),
            ..Results::default()
        };
        crate::analyze(&mut r);
        r
    }

    #[test]
    fn the_forecast_follows_the_noise_and_the_budget() {
        let mut r = results(8, 0.03);
        assert!(r.comparisons[0].forecast.is_none());
        update(&mut r);
        let f = r.comparisons[0].forecast.clone().expect("a forecast");
        // Log ratios 0.03 +- 0.03, four of each: sd 0.03 sqrt(8/7).
        let sd = 0.03 * (8.0f64 / 7.0).sqrt();
        assert!((f.noise - sd).abs() < 1e-9, "{f:?}");
        assert_eq!((f.rounds, f.round_seconds), (8, 20.0));
        assert_eq!(f.cv[0], None, "the steady baseline has no spread");
        assert!(f.cv[1].is_some_and(|cv| cv > 0.02 && cv < 0.04), "{f:?}");
        // 600 s budget, 160 s spent, 20 s a round: 22 rounds more.
        assert_eq!(f.budget_rounds, Some(30));
        let reaches = f.reaches.unwrap();
        assert!((reaches - predicted_half_width(sd, 30, 0.95)).abs() < 1e-12);
        assert!(reaches > 0.01 && reaches < 0.05, "{f:?}");
        let n = f.rounds_for_target.unwrap();
        assert!(n > 30 && predicted_half_width(sd, n, 0.95) <= 0.01, "{f:?}");
        assert!(predicted_half_width(sd, n - 1, 0.95) > 0.01, "{f:?}");
        assert_eq!(f.seconds_for_target, Some(n as f64 * 20.0));
        assert_eq!((f.target, f.level), (0.01, 0.95));
        // analyze keeps the forecast (it rebuilds the comparisons after every run).
        crate::analyze(&mut r);
        assert_eq!(r.comparisons[0].forecast.as_ref(), Some(&f));
        // A noisier experiment forecasts more rounds and a wider interval.
        let mut noisy = results(8, 0.06);
        update(&mut noisy);
        let g = noisy.comparisons[0].forecast.clone().unwrap();
        assert!(g.rounds_for_target.unwrap() > 3 * n && g.reaches.unwrap() > reaches);
        // A point that stopped keeps its last forecast.
        noisy.cells[1].stop_reason = Some("precision".into());
        noisy.rounds_s = Some(590.0);
        update(&mut noisy);
        assert_eq!(noisy.comparisons[0].forecast.as_ref(), Some(&g));
        // Past the budget: no more rounds, the forecast is what the rounds so far give.
        let mut late = results(8, 0.03);
        late.rounds_s = Some(700.0);
        update(&mut late);
        assert_eq!(
            late.comparisons[0].forecast.as_ref().unwrap().budget_rounds,
            Some(8)
        );
        // In results.json under `forecast`.
        let json = serde_json::to_value(&r).unwrap();
        assert_eq!(
            json["comparisons"][0]["forecast"]["budget_rounds"],
            serde_json::json!(30)
        );
    }
}
