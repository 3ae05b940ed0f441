//! The bisect driven by `bakeoff_study::drive` against a scripted step runner that starts
//! nothing: eight simulated commits, one of them the regression, each step's rounds
//! drawn with seeded noise, its sequential rule honoured round by round as the runner's
//! observer does, and a clock of its own moved by each round, so a budget of minutes is
//! spent in microseconds.
//!
//! The regression halves nothing here but takes 40% off (ratio 0.6) at a per-round
//! spread of 5%: the halfway ratio (0.775) lies about five spreads from either end per
//! round, so every seed gives the same answer (the tests use fixed ones).

use super::*;
use bakeoff_study::drive;
use bakeoff_testkit::noise::SplitMix64;
use std::convert::Infallible;

fn commits(n: usize) -> Vec<String> {
    (0..n)
        .map(|i| format!("{i:02}{}", "c".repeat(38)))
        .collect()
}

/// Runs a step as the runner would, from a script: the commit's true ratio over good,
/// rounds of `round_s` seconds each with seeded noise, as many as its share allows.
struct Scripted {
    commits: Vec<String>,
    /// The first commit whose figure moved, and by how much.
    culprit: usize,
    moved: f64,
    unbuildable: Vec<usize>,
    /// Standard deviation of one round's log ratio.
    spread: f64,
    round_s: f64,
    /// Rounds the bad revision's step runs under the plan's own rule, time allowing.
    plan_rounds: usize,
    noise: SplitMix64,
    /// Seconds of rounds run so far.
    clock: f64,
    /// The commits run, by index.
    ran: Vec<usize>,
}

impl Scripted {
    fn new(seed: u64, culprit: usize) -> Scripted {
        Scripted {
            commits: commits(8),
            culprit,
            moved: 0.6,
            unbuildable: Vec::new(),
            spread: 0.05,
            round_s: 1.0,
            plan_rounds: 10,
            noise: SplitMix64(seed),
            clock: 0.0,
            ran: Vec::new(),
        }
    }

    fn run(&mut self, ask: &StepAsk) -> Result<StepRecord, Infallible> {
        let i = self.commits.iter().position(|c| c == &ask.commit).unwrap();
        self.ran.push(i);
        let folder = format!("step-{}-{}", self.ran.len(), short(&ask.commit));
        let mut rec = StepRecord::new(
            &ask.commit,
            &format!("commit {i}"),
            ask.rule.as_ref().map(StepRule::cap),
            folder,
        );
        if self.unbuildable.contains(&i) {
            rec.outcome = "does not build".into();
            rec.error = Some(format!("variant c{i} failed: make: error"));
            return Ok(rec);
        }
        let truth = if i >= self.culprit { self.moved } else { 1.0 };
        // The rounds its time allows (the runner stops at the round that would overrun).
        let by_time = ask
            .share
            .map_or(usize::MAX, |(s, _)| (s / self.round_s) as usize);
        let most = match &ask.rule {
            Some(rule) => rule.cap().min(by_time),
            None => self.plan_rounds.min(by_time),
        };
        let mut ratios = Vec::new();
        let mut decided = None;
        while ratios.len() < most {
            ratios.push(truth * (self.spread * self.noise.normal()).exp());
            if let Some(Call::Decide(d)) = ask.rule.as_ref().map(|r| r.call(&ratios, false)) {
                decided = Some(d);
                break;
            }
        }
        let rounds_s = ratios.len() as f64 * self.round_s;
        self.clock += rounds_s;
        rec.rounds_s = Some(rounds_s);
        let logs: Vec<f64> = ratios.iter().map(|r| r.ln()).collect();
        let Some((est, (lo, hi), _)) = bakeoff_stats::hodges_lehmann(&logs, 0.05) else {
            rec.outcome = "failed".into();
            rec.error = Some("no comparison came out of the step".into());
            return Ok(rec);
        };
        rec.ratio = Some(est.exp());
        rec.ci95 = Some([lo.exp(), hi.exp()]);
        rec.rounds = Some(ratios.len());
        rec.verdict = Some(if hi < 0.0 {
            Verdict::Slower
        } else if lo > 0.0 {
            Verdict::Faster
        } else {
            Verdict::Inconclusive
        });
        let mean = logs.iter().sum::<f64>() / logs.len() as f64;
        rec.spread = (logs.len() > 1).then(|| {
            (logs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (logs.len() - 1) as f64).sqrt()
        });
        if let Some(rule) = &ask.rule {
            let d = decided.unwrap_or_else(|| match rule.call(&ratios, true) {
                Call::Decide(d) => d,
                Call::More => unreachable!("a last look decides"),
            });
            rec.judged_by(d.judgement, d.interval, d.level);
            rec.rounds = Some(d.rounds);
        }
        Ok(rec)
    }
}

/// Drives a bisect of the script's commits with `per_step` seconds a step: its answer
/// and the lines it said.
fn bisect(script: &mut Scripted, per_step: f64) -> (Bisected, Vec<String>) {
    let mut said = Vec::new();
    let study = Bisect::new(
        script.commits.clone(),
        Some(per_step),
        MAX_ROUNDS,
        |l: &str| said.push(l.to_string()),
    )
    .unwrap();
    let mut runs = |ask: &StepAsk| script.run(ask);
    let found = drive(study, &mut runs).unwrap();
    (found, said)
}

#[test]
fn eight_commits_name_the_regression_in_four_steps_within_the_budget() {
    for seed in 1..=5 {
        let mut script = Scripted::new(seed, 4);
        let (found, said) = bisect(&mut script, 20.0);
        let c = &found.conclusion;
        assert_eq!(c.direction, Some(Verdict::Slower), "seed {seed}");
        assert_eq!(
            c.first.as_deref(),
            Some(script.commits[4].as_str()),
            "seed {seed}: {c:?}"
        );
        // The bad revision, then one step per halving of eight commits.
        assert_eq!(script.ran, vec![7, 3, 5, 4], "seed {seed}");
        assert_eq!(found.steps.len(), 4);
        // The whole bisect's budget: 20 s for each of the four steps, never overrun.
        assert_eq!(found.budget_s, Some(80.0));
        let spent: f64 = found.steps.iter().filter_map(|s| s.rounds_s).sum();
        assert!(spent <= 80.0, "seed {seed}: {spent} s");
        assert_eq!(spent, script.clock);
        // Every step after the bad revision's judged sequentially within its cap.
        for s in &found.steps[1..] {
            assert!(s.judged.is_some(), "{s:?}");
            assert!(s.rounds.unwrap() <= s.cap.unwrap(), "{s:?}");
        }
        // A step's line, then the forecast, before the second step's.
        assert!(said[0].starts_with(&short(&script.commits[7])), "{said:?}");
        let fc = found.forecast.as_ref().expect("a forecast");
        assert_eq!(said[1], fc.text);
        assert!(fc.text.contains("expect a commit"), "{}", fc.text);
        assert_eq!(said.len(), 5);
    }
}

#[test]
fn a_commit_that_does_not_build_beside_the_regression_is_skipped() {
    let mut script = Scripted::new(7, 4);
    script.unbuildable = vec![5];
    let (found, said) = bisect(&mut script, 20.0);
    assert_eq!(
        found.conclusion.first.as_deref(),
        Some(script.commits[4].as_str())
    );
    assert_eq!(script.ran, vec![7, 3, 5, 4]);
    assert_eq!(found.steps[2].outcome, "does not build");
    assert!(
        said[3].contains("does not build (variant c5 failed"),
        "{said:?}"
    );
}

#[test]
fn a_budget_too_small_to_measure_the_ends_names_nothing() {
    let mut script = Scripted::new(3, 4);
    let (found, _) = bisect(&mut script, 1.0);
    let c = &found.conclusion;
    assert_eq!(c.first, None);
    assert!(
        c.unresolved
            .as_deref()
            .unwrap_or_default()
            .starts_with("the budget is too small to measure the ends"),
        "{c:?}"
    );
    assert_eq!(script.ran, vec![7]);
    assert!(script.clock <= 4.0);
}

#[test]
fn a_faster_change_is_found_the_same_way() {
    let mut script = Scripted::new(11, 2);
    script.moved = 1.5;
    let (found, _) = bisect(&mut script, 20.0);
    assert_eq!(found.conclusion.direction, Some(Verdict::Faster));
    assert_eq!(
        found.conclusion.first.as_deref(),
        Some(script.commits[2].as_str())
    );
}
