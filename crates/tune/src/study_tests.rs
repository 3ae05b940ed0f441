//! The tune search driven by `bakeoff_study::drive` against a scripted stage runner that
//! builds and starts nothing: six simulated candidates (gcc-12 and clang-16 at -O0, -O1
//! and -O2) with known effects on log throughput, each stage's rounds drawn with seeded
//! noise (a baseline run per round, shared by the round's candidates, and each
//! candidate's own), as many rounds as the stage's share of the budget allows, and a
//! clock of its own moved by each round.
//!
//! The figures are far from the race's thresholds: -O0 is 40% below -O2, -O1 12%, and
//! clang 6% above gcc at a per-run spread of 3% (a paired difference's spread of about
//! 4.2% per round), so every seed gives the same answer (the tests use fixed ones).

use super::*;
use bakeoff_study::drive;
use bakeoff_testkit::noise::SplitMix64;
use std::convert::Infallible;

fn space() -> Space {
    Space {
        compiler: vec!["gcc-12".into(), "clang-16".into()],
        opt: vec!["-O0".into(), "-O1".into(), "-O2".into()],
        ..Space::default()
    }
}

/// The true log ratio of a candidate over the baseline.
fn truth(r: &Recipe) -> f64 {
    let opt = match r.opt.as_str() {
        "-O0" => -0.40,
        "-O1" => -0.02,
        _ => 0.10,
    };
    opt + if r.compiler == "clang-16" { 0.06 } else { 0.0 }
}

/// Runs a stage as the runner would, from a script.
struct Scripted {
    run_sd: f64,
    /// Seconds one variant's run takes (a round runs the baseline and every candidate).
    run_s: f64,
    noise: SplitMix64,
    /// Seconds of rounds run so far.
    clock: f64,
    /// The steps asked for, in order.
    asked: Vec<TuneStep>,
}

impl Scripted {
    fn new(seed: u64) -> Scripted {
        Scripted {
            run_sd: 0.03,
            run_s: 1.0,
            noise: SplitMix64(seed),
            clock: 0.0,
            asked: Vec::new(),
        }
    }

    fn run(&mut self, step: &TuneStep) -> Result<TuneOutcome, Infallible> {
        self.asked.push(step.clone());
        let (candidates, budget_s) = match step {
            TuneStep::Stage {
                candidates,
                budget_s,
                ..
            } => (candidates, budget_s),
            TuneStep::Check { budget_s, .. } => {
                self.clock += budget_s.unwrap_or(0.0);
                return Ok(TuneOutcome::Checked { losses: Vec::new() });
            }
        };
        let round_s = (candidates.len() + 1) as f64 * self.run_s;
        // The rounds that fit (the runner stops before a round would overrun), at most 30.
        let rounds = budget_s.map_or(30, |b| ((b / round_s) as usize).min(30));
        let mut data = StageData::default();
        let base: Vec<f64> = (0..rounds)
            .map(|_| self.run_sd * self.noise.normal())
            .collect();
        for (name, recipe) in candidates {
            let ratios = (0..rounds)
                .map(|r| {
                    let own = truth(recipe) + self.run_sd * self.noise.normal();
                    (r, (own - base[r]).exp())
                })
                .collect();
            data.ratios.push((name.clone(), ratios));
        }
        let seconds = rounds as f64 * round_s;
        self.clock += seconds;
        Ok(TuneOutcome::Stage {
            data,
            seconds,
            rounds: Some(rounds),
        })
    }
}

/// Drives a search of the six candidates with `total_s` seconds: the answer, the
/// script (what it was asked) and the lines said.
fn tune(seed: u64, total_s: f64, check_overfit: bool) -> (Tuned, Scripted, Vec<String>) {
    let (cands, excluded) = space().candidates(|_| None);
    assert_eq!((cands.len(), excluded.len()), (6, 0));
    let mut script = Scripted::new(seed);
    let mut said = Vec::new();
    let race = Race::new(cands, Settings::default());
    let study = Tuning::new(race, Some(total_s), check_overfit, false, |l: &str| {
        said.push(l.to_string())
    });
    let mut runs = |step: &TuneStep| script.run(step);
    let tuned = drive(study, &mut runs).unwrap();
    (tuned, script, said)
}

#[test]
fn six_candidates_race_to_the_best_within_the_budget() {
    for seed in 1..=10 {
        let (tuned, script, said) = tune(seed, 120.0, false);
        let c = &tuned.conclusion;
        assert!(c.decided, "seed {seed}: {c:?}");
        assert_eq!(
            c.winner.as_deref(),
            Some("clang-16.O2"),
            "seed {seed}: {c:?}"
        );
        // The losers are out by the race's rule: decided below the leader after a stage,
        // each drop read from its paired interval, none of them better than the winner.
        let best = truth(
            &tuned
                .race
                .entries
                .iter()
                .find(|e| e.name == "clang-16.O2")
                .unwrap()
                .recipe,
        );
        for e in tuned
            .race
            .entries
            .iter()
            .filter(|e| e.name != "clang-16.O2")
        {
            match &e.status {
                Status::Dropped { reason, .. } => {
                    assert!(
                        reason.starts_with("throughput ") && reason.contains("% below "),
                        "{reason}"
                    );
                    assert!(truth(&e.recipe) < best, "{}", e.name);
                }
                other => panic!("seed {seed}: {} is {other:?}", e.name),
            }
        }
        // -O0 is dropped in the first stage, with every candidate measured there.
        let first = &tuned.race.stages[0];
        assert_eq!(first.entered, 6);
        for name in ["gcc-12.O0", "clang-16.O0"] {
            assert!(
                first.dropped.contains(&name.to_string()),
                "seed {seed}: {first:?}"
            );
        }
        // The budget: each stage's share of what is left, never more in all.
        assert!(script.clock <= 120.0, "seed {seed}: {} s", script.clock);
        let recorded: f64 = tuned.race.stages.iter().filter_map(|s| s.seconds).sum();
        assert_eq!(recorded, script.clock);
        match &script.asked[0] {
            TuneStep::Stage {
                n: 1,
                budget_s: Some(b),
                candidates,
                signal: Signal::Throughput,
            } => {
                assert_eq!(*b, 60.0, "half the budget while more than two are in");
                assert_eq!(candidates.len(), 6);
            }
            other => panic!("{other:?}"),
        }
        // A line before each stage and one after it.
        assert_eq!(said.len(), 2 * tuned.race.stages.len(), "{said:?}");
        assert!(
            said[0].starts_with("stage 1: 6 candidates, up to 1m of rounds"),
            "{said:?}"
        );
        assert!(said[1].starts_with("stage 1 done ("), "{said:?}");
        assert!(!tuned.checked);
    }
}

#[test]
fn the_overfitting_check_runs_once_on_the_winner_from_the_kept_quarter() {
    let (tuned, script, said) = tune(5, 160.0, true);
    let winner = tuned.conclusion.winner.clone().expect("a winner");
    let stages: f64 = tuned.race.stages.iter().filter_map(|s| s.seconds).sum();
    assert!(
        stages <= 120.0,
        "the stages kept the check's 40 s: {stages}"
    );
    match script.asked.last() {
        Some(TuneStep::Check {
            name,
            budget_s: Some(b),
            ..
        }) => {
            assert_eq!(name, &winner);
            assert!(*b >= 40.0, "{b}");
        }
        other => panic!("{other:?}"),
    }
    let checks = script
        .asked
        .iter()
        .filter(|s| matches!(s, TuneStep::Check { .. }))
        .count();
    assert_eq!(checks, 1);
    assert!(tuned.checked);
    assert_eq!(
        said.last().map(String::as_str),
        Some(format!("the winner {winner} on every workload (the overfitting check)").as_str())
    );
}

#[test]
fn a_budget_too_small_for_a_stage_stops_the_race_and_says_why() {
    let (tuned, script, _) = tune(2, 15.0, false);
    assert!(script.asked.is_empty(), "{:?}", script.asked);
    assert!(!tuned.conclusion.decided);
    assert!(
        tuned.conclusion.why.starts_with("the budget is spent (this stage's share is 8s of the 15s left, a stage needs about 10s)"),
        "{}",
        tuned.conclusion.why
    );
}
