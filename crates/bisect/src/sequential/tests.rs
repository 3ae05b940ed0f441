use super::*;
use crate::{Next, Outcome, Search};

/// A small seeded generator (xorshift64*) with normal draws (Box-Muller): the tests'
/// noise, the same on every run.
struct Noise(u64);

impl Noise {
    fn unit(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        ((self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }

    fn normal(&mut self) -> f64 {
        let (u, v) = (self.unit(), self.unit());
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }

    /// One round's ratio: the true ratio times log-normal noise of `spread`.
    fn round(&mut self, ratio: f64, spread: f64) -> f64 {
        (ratio.ln() + spread * self.normal()).exp()
    }
}

/// Rounds of one step under the rule until it decides.
fn run_step(rule: &StepRule, ratio: f64, spread: f64, noise: &mut Noise) -> Decision {
    let mut ratios = Vec::new();
    loop {
        ratios.push(noise.round(ratio, spread));
        if let Call::Decide(d) = rule.call(&ratios, false) {
            return d;
        }
        assert!(ratios.len() <= rule.cap().max(1), "past the cap");
    }
}

#[test]
fn looks_reach_their_level_and_end_at_the_cap() {
    assert_eq!(fewest_rounds(0.05), 6);
    assert_eq!(fewest_rounds(0.05 / 3.0), 7);
    assert!(looks_for(5, ALPHA).is_empty(), "5 rounds cannot reach 95%");
    assert_eq!(looks_for(6, ALPHA), [6]);
    for cap in 7..200 {
        let looks = looks_for(cap, ALPHA);
        assert_eq!(looks.last(), Some(&cap));
        assert!(looks.len() <= MOST_LOOKS);
        assert!(looks.windows(2).all(|w| w[0] < w[1]), "{looks:?}");
        assert!(
            looks[0] >= fewest_rounds(ALPHA / looks.len() as f64),
            "{cap}: {looks:?}"
        );
    }
    assert_eq!(looks_for(40, ALPHA).len(), 3);
    assert_eq!(looks_for(40, ALPHA)[0], 7);
}

#[test]
fn a_clear_side_decides_at_the_first_look() {
    // Halfway 0.707 (a bad revision at 0.5); a good commit measured at 1.00 +- 1%.
    let rule = StepRule::new(Verdict::Slower, 0.5f64.sqrt(), 40, ALPHA);
    let first = rule.looks()[0];
    let mut noise = Noise(7);
    let good: Vec<f64> = (0..40).map(|_| noise.round(1.0, 0.01)).collect();
    for n in 1..first {
        assert_eq!(rule.call(&good[..n], false), Call::More, "{n} rounds");
    }
    match rule.call(&good[..first], false) {
        Call::Decide(d) => {
            assert_eq!(d.judgement, Judgement::DidNotMove);
            assert_eq!(d.rounds, first);
            assert!(d.interval.unwrap()[0] > 0.707, "{d:?}");
            assert!((d.level - (1.0 - ALPHA / 3.0)).abs() < 1e-12);
        }
        more => panic!("{more:?}"),
    }
    let bad: Vec<f64> = (0..40).map(|_| noise.round(0.5, 0.01)).collect();
    match rule.call(&bad[..first], false) {
        Call::Decide(d) => assert_eq!(d.judgement, Judgement::Moved),
        more => panic!("{more:?}"),
    }
    // Faster: the same reading mirrored.
    let rule = StepRule::new(Verdict::Faster, 2f64.sqrt(), 40, ALPHA);
    let fast: Vec<f64> = (0..first).map(|_| noise.round(2.0, 0.01)).collect();
    match rule.call(&fast, false) {
        Call::Decide(d) => assert_eq!(d.judgement, Judgement::Moved),
        more => panic!("{more:?}"),
    }
}

#[test]
fn straddling_adds_rounds_up_to_the_cap_and_no_further() {
    // A commit measured right at the halfway ratio: its interval straddles at every look.
    let halfway = 0.9;
    let rule = StepRule::new(Verdict::Slower, halfway, 30, ALPHA);
    let mut noise = Noise(11);
    let mut ratios = Vec::new();
    for n in 1..30 {
        ratios.push(noise.round(halfway, 0.05));
        assert_eq!(rule.call(&ratios, false), Call::More, "{n} rounds");
    }
    ratios.push(noise.round(halfway, 0.05));
    match rule.call(&ratios, false) {
        Call::Decide(d) => {
            assert_eq!(d.judgement, Judgement::Inconclusive);
            assert_eq!(d.rounds, 30);
            let [lo, hi] = d.interval.unwrap();
            assert!(lo < halfway && halfway < hi);
        }
        more => panic!("{more:?}"),
    }
    // The budget ending early is the last look, whatever the count.
    match rule.call(&ratios[..12], true) {
        Call::Decide(d) => assert_eq!((d.judgement, d.rounds), (Judgement::Inconclusive, 12)),
        more => panic!("{more:?}"),
    }
    // Too few rounds for any interval: inconclusive, without one.
    match rule.call(&ratios[..3], true) {
        Call::Decide(d) => assert_eq!((d.judgement, d.interval), (Judgement::Inconclusive, None)),
        more => panic!("{more:?}"),
    }
    // A cap below what 95% needs judges nothing.
    let tiny = StepRule::new(Verdict::Slower, halfway, 4, ALPHA);
    assert_eq!(tiny.cap(), 0);
    match tiny.call(&[0.5, 0.5, 0.5, 0.5], true) {
        Call::Decide(d) => assert_eq!(d.judgement, Judgement::Inconclusive),
        more => panic!("{more:?}"),
    }
}

#[test]
fn the_budget_is_shared_over_the_steps_left() {
    let mut b = Budget::new(100.0);
    assert_eq!(b.share_s(4, 5.0), 25.0);
    b.spend(10.0);
    // A step that decided early leaves its time to the others.
    assert_eq!(b.share_s(3, 5.0), 30.0);
    b.spend(85.0);
    assert_eq!(b.share_s(3, 4.0), 4.0, "the floor");
    assert_eq!(b.share_s(3, 9.0), 5.0, "never more than is left");
    assert_eq!(b.left_s(), 5.0);
    assert_eq!(steps_for(1), 0);
    assert_eq!(steps_for(2), 1);
    assert_eq!(steps_for(8), 3);
    assert_eq!(steps_for(9), 4);
}

#[test]
fn the_search_counts_the_steps_left_and_stops_when_told() {
    let commits: Vec<String> = (0..8).map(|i| format!("c{i}")).collect();
    let mut s = Search::new(commits.clone()).unwrap();
    assert_eq!(s.steps_left(), 4);
    assert!(s.rule(20).is_none(), "no halfway before the bad revision");
    s.next_step();
    s.feed(Outcome::Measured {
        verdict: Verdict::Slower,
        ratio: 0.5,
        ci95: [0.45, 0.55],
    });
    assert_eq!(s.steps_left(), 3);
    assert_eq!(s.rule(20).unwrap().cap(), 20);
    s.stop("too little budget".into());
    let c = s.conclusion().unwrap();
    assert_eq!(c.first, None);
    assert_eq!(c.candidates, commits);
    assert_eq!(c.unresolved.as_deref(), Some("too little budget"));
    assert_eq!(s.steps_left(), 0);
}

/// A whole bisect over a history of `n` commits whose ratio moved to `ratio` at
/// `culprit`, each round's ratio off by `spread`, the whole budget `rounds` rounds.
/// The bad revision is measured as the runner does (its share of rounds, its 95% CI);
/// every later step under the sequential rule with its share of what is left.
fn bisect(
    n: usize,
    culprit: usize,
    ratio: f64,
    spread: f64,
    rounds: f64,
    seed: u64,
) -> crate::Conclusion {
    let commits: Vec<String> = (0..n).map(|i| format!("c{i:03}")).collect();
    let mut noise = Noise(seed);
    let mut s = Search::new(commits.clone()).unwrap();
    let mut budget = Budget::new(rounds);
    loop {
        let share = budget.share_s(s.steps_left(), 6.0).floor() as usize;
        let i = match s.next_step() {
            Next::Done(c) => return c.clone(),
            Next::Measure(c) => commits.iter().position(|x| x == c).unwrap(),
        };
        let truth = if i >= culprit { ratio } else { 1.0 };
        let outcome = match s.rule(share) {
            None => {
                let logs: Vec<f64> = (0..share.max(1))
                    .map(|_| noise.round(truth, spread).ln())
                    .collect();
                budget.spend(logs.len() as f64);
                let (centre, (lo, hi), _) = hodges_lehmann(&logs, 0.05).unwrap();
                let verdict = match (lo.exp(), hi.exp()) {
                    (_, hi) if hi < 1.0 && logs.len() >= 6 => Verdict::Slower,
                    (lo, _) if lo > 1.0 && logs.len() >= 6 => Verdict::Faster,
                    _ => Verdict::Inconclusive,
                };
                Outcome::Measured {
                    verdict,
                    ratio: centre.exp(),
                    ci95: [lo.exp(), hi.exp()],
                }
            }
            Some(rule) if rule.cap() == 0 => {
                s.stop("no step fits".into());
                continue;
            }
            Some(rule) => {
                let d = run_step(&rule, truth, spread, &mut noise);
                budget.spend(d.rounds as f64);
                match d.interval {
                    Some(ci) => Outcome::Measured {
                        verdict: Verdict::Inconclusive,
                        ratio: (ci[0] * ci[1]).sqrt(),
                        ci95: ci,
                    },
                    None => Outcome::Undecided {
                        why: "too few".into(),
                    },
                }
            }
        };
        s.feed(outcome);
    }
}

#[test]
fn never_a_wrong_commit_over_many_seeds() {
    let (mut named, mut ranges) = (0, 0);
    let mut seed = 1u64;
    for n in [3usize, 8, 13, 30] {
        for ratio in [0.5, 0.8, 0.926, 0.97, 1.08] {
            for spread in [0.02, 0.06, 0.12] {
                for budget in [60.0, 200.0] {
                    for _ in 0..reps() {
                        seed += 1;
                        let culprit = (seed as usize * 7919) % n;
                        let c = bisect(n, culprit, ratio, spread, budget, seed);
                        let right = &format!("c{culprit:03}");
                        match &c.first {
                            Some(first) => {
                                assert_eq!(first, right, "n {n} ratio {ratio} spread {spread} budget {budget} seed {seed}: {c:?}");
                                named += 1;
                            }
                            None if c.direction.is_some() => {
                                assert!(
                                    c.candidates.contains(right),
                                    "the range lost the culprit: {c:?}"
                                );
                                ranges += 1;
                            }
                            // The ends themselves could not be told apart.
                            None => {}
                        }
                    }
                }
            }
        }
    }
    // Both kinds of answer came up: the test saw clear and too-noisy cases.
    assert!(named > 200, "{named} named");
    assert!(ranges > 20, "{ranges} ranges");
}

/// Of `trials` steps at 6% per round, alternately at a good commit and a bad one whose
/// change is `change`, the share judged on the right side (a wrong side stays within the
/// step's error).
fn decided(cap: usize, alpha: f64, change: f64, seed: u64) -> f64 {
    let bad = 1.0 - change;
    let rule = StepRule::new(Verdict::Slower, bad.sqrt(), cap, alpha);
    let mut noise = Noise(seed);
    let (mut right, mut wrong) = (0, 0);
    let trials = 1000;
    for i in 0..trials {
        let truth = if i % 2 == 0 { 1.0 } else { bad };
        let (expected, opposite) = if truth < 1.0 {
            (Judgement::Moved, Judgement::DidNotMove)
        } else {
            (Judgement::DidNotMove, Judgement::Moved)
        };
        let d = run_step(&rule, truth, 0.06, &mut noise);
        right += usize::from(d.judgement == expected);
        wrong += usize::from(d.judgement == opposite);
    }
    assert!(
        (wrong as f64) <= alpha / 2.0 * trials as f64,
        "{wrong} wrong sides in {trials} steps"
    );
    right as f64 / trials as f64
}

#[test]
fn the_forecast_matches_what_steps_manage() {
    // Steps in a bisect of three: the forecast's smallest change, then steps at 1.5 times
    // it (they should mostly decide, on both sides) and at half of it (mostly not), for a
    // short cap (one look over the whole range of the rounds) and a longer one.
    let alpha = ALPHA / 3.0;
    for cap in [7, 24] {
        let smallest = smallest_change(0.06, cap, alpha, Verdict::Slower).unwrap();
        let above = decided(cap, alpha, 1.0 - (1.0 - smallest).powf(1.5), 3);
        let below = decided(cap, alpha, 1.0 - (1.0 - smallest).powf(0.5), 5);
        assert!(
            above >= 0.8,
            "cap {cap}, 1.5x the forecast {smallest}: {above}"
        );
        assert!(
            below <= 0.5,
            "cap {cap}, 0.5x the forecast {smallest}: {below}"
        );
    }
    // Past the simulated counts, the formula: z = 2.7729 at 1 - 0.05 / 9 / 2 (three looks
    // of a three-step bisect), worked out apart from this code:
    // 1 - exp(-2 * z * 0.06 * sqrt(pi / 600)) = 0.02379 at 200 rounds.
    let long = smallest_change(0.06, 200, alpha, Verdict::Slower).unwrap();
    assert!((long - 0.02379).abs() < 0.0002, "{long}");
    // The simulation and the formula meet where one hands over to the other.
    let (sim, formula) = (
        half_width(60, 0.01),
        half_width(61, 0.01) * (61.0f64 / 60.0).sqrt(),
    );
    assert!((sim / formula - 1.0).abs() < 0.1, "{sim} against {formula}");
    // Faster mirrors it; and no step fits below the fewest rounds.
    let slower = smallest_change(0.06, 24, alpha, Verdict::Slower).unwrap();
    let faster = smallest_change(0.06, 24, alpha, Verdict::Faster).unwrap();
    assert!(((1.0 + faster) * (1.0 - slower) - 1.0).abs() < 1e-9);
    assert_eq!(smallest_change(0.06, 5, alpha, Verdict::Slower), None);
}

/// Bisects per setting (`REPS=60` for a longer run: 7200 bisects).
fn reps() -> usize {
    std::env::var("REPS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(6)
}
