use super::*;
use std::collections::BTreeSet;

fn commits(n: usize) -> Vec<String> {
    (0..n)
        .map(|i| format!("c{i:02}{}", "0".repeat(38)))
        .collect()
}

/// A history of `n` commits where the figure moved at `culprit` (slower: ratio 0.8),
/// with commits that do not build, steps that stay inconclusive, and steps that fail.
struct History {
    n: usize,
    culprit: usize,
    direction: Verdict,
    unbuildable: BTreeSet<usize>,
    inconclusive: BTreeSet<usize>,
    failing: BTreeSet<usize>,
}

impl History {
    fn new(n: usize, culprit: usize) -> History {
        History {
            n,
            culprit,
            direction: Verdict::Slower,
            unbuildable: BTreeSet::new(),
            inconclusive: BTreeSet::new(),
            failing: BTreeSet::new(),
        }
    }

    fn outcome(&self, i: usize) -> Outcome {
        if self.unbuildable.contains(&i) {
            return Outcome::DoesNotBuild {
                error: format!("variant c{i} failed: make: error"),
            };
        }
        if self.failing.contains(&i) {
            return Outcome::Failed {
                error: "boom".into(),
            };
        }
        let moved = if self.direction == Verdict::Slower {
            0.8
        } else {
            1.25
        };
        if self.inconclusive.contains(&i) {
            // Straddles the halfway point (sqrt(0.824) = 0.908, sqrt(1.2125) = 1.101).
            let ci: [f64; 2] = if self.direction == Verdict::Slower {
                [0.85, 0.95]
            } else {
                [1.05, 1.2]
            };
            return Outcome::Measured {
                verdict: Verdict::Inconclusive,
                ratio: (ci[0] * ci[1]).sqrt(),
                ci95: ci,
            };
        }
        if i >= self.culprit {
            Outcome::Measured {
                verdict: self.direction,
                ratio: moved,
                ci95: [moved * 0.97, moved * 1.03],
            }
        } else {
            Outcome::Measured {
                verdict: Verdict::Equivalent,
                ratio: 1.0,
                ci95: [0.98, 1.02],
            }
        }
    }

    /// Runs the search to its end: the indices measured, in order, and the conclusion.
    fn bisect(&self) -> (Vec<usize>, Conclusion) {
        let all = commits(self.n);
        let mut s = Search::new(all.clone()).unwrap();
        let mut measured = Vec::new();
        loop {
            let i = match s.next_step() {
                Next::Done(c) => return (measured, c.clone()),
                Next::Measure(c) => all.iter().position(|x| x == c).unwrap(),
            };
            assert!(measured.len() <= self.n, "the search does not end");
            measured.push(i);
            s.feed(self.outcome(i));
        }
    }
}

fn c(i: usize) -> String {
    commits(i + 1).pop().unwrap()
}

#[test]
fn no_commits_is_no_search() {
    assert_eq!(Search::new(Vec::new()).unwrap_err(), NoCommits);
}

#[test]
fn the_bad_revision_is_measured_first() {
    let mut s = Search::new(commits(5)).unwrap();
    assert_eq!(s.next_step(), Next::Measure(c(4).as_str()));
    // Asking again names the same commit.
    assert_eq!(s.next_step(), Next::Measure(c(4).as_str()));
}

#[test]
fn one_commit_is_the_answer_after_one_step() {
    let (measured, found) = History::new(1, 0).bisect();
    assert_eq!(measured, [0]);
    assert_eq!(found.first, Some(c(0)));
    assert_eq!(found.candidates, [c(0)]);
    assert_eq!(found.unresolved, None);
    assert_eq!(found.direction, Some(Verdict::Slower));
}

#[test]
fn the_first_commit_is_found() {
    let (measured, found) = History::new(8, 0).bisect();
    assert_eq!(found.first, Some(c(0)));
    assert_eq!(found.candidates, [c(0)]);
    assert_eq!(measured, [7, 3, 1, 0]);
}

#[test]
fn the_last_commit_is_found() {
    let (measured, found) = History::new(8, 7).bisect();
    assert_eq!(found.first, Some(c(7)));
    assert_eq!(measured, [7, 3, 5, 6]);
}

#[test]
fn the_steps_halve_the_range_the_way_they_always_have() {
    // lo = -1, hi = 7: the middle is 3, then 5, then 4.
    let (measured, found) = History::new(8, 5).bisect();
    assert_eq!(measured, [7, 3, 5, 4]);
    assert_eq!(found.first, Some(c(5)));
    // Halfway between good and the bad revision's CI edge nearest 1.
    assert_eq!(found.halfway, Some((0.8f64 * 1.03).sqrt()));
}

#[test]
fn every_culprit_is_found_in_logarithmically_many_steps() {
    for n in 1..=17 {
        for culprit in 0..n {
            let (measured, found) = History::new(n, culprit).bisect();
            assert_eq!(found.first, Some(c(culprit)), "n {n}, culprit {culprit}");
            assert_eq!(found.unresolved, None);
            let bound = 1 + (usize::BITS - n.leading_zeros()) as usize;
            assert!(
                measured.len() <= bound,
                "n {n}, culprit {culprit}: {} steps",
                measured.len()
            );
            let distinct: BTreeSet<_> = measured.iter().collect();
            assert_eq!(distinct.len(), measured.len(), "a commit measured twice");
        }
    }
}

#[test]
fn the_faster_direction_is_found_too() {
    for culprit in 0..6 {
        let mut h = History::new(6, culprit);
        h.direction = Verdict::Faster;
        let (_, found) = h.bisect();
        assert_eq!(found.first, Some(c(culprit)));
        assert_eq!(found.direction, Some(Verdict::Faster));
        assert_eq!(found.halfway, Some((1.25f64 * 0.97).sqrt()));
    }
}

#[test]
fn the_halfway_point_leaves_every_ratio_the_bad_revision_may_have_past_it() {
    // A precise bad revision: about the geometric midpoint of its ratio and 1.
    let h = halfway(Verdict::Slower, 0.5, [0.49, 0.51]);
    assert!((h - 0.51f64.sqrt()).abs() < 1e-12 && (h - 0.5f64.sqrt()).abs() < 0.01);
    // A noisy one (ratio 0.90, CI up to 0.99): the point moves towards 1, past 0.99.
    let h = halfway(Verdict::Slower, 0.9, [0.8, 0.99]);
    assert!(h > 0.99 && h < 1.0, "{h}");
    let h = halfway(Verdict::Faster, 1.2, [1.01, 1.4]);
    assert!(h > 1.0 && h < 1.01, "{h}");
}

#[test]
fn a_step_is_judged_by_its_ci_against_the_halfway_point_not_by_its_verdict() {
    let mut s = Search::new(commits(4)).unwrap();
    let measured = |verdict, lo: f64, hi: f64| Outcome::Measured {
        verdict,
        ratio: (lo * hi).sqrt(),
        ci95: [lo, hi],
    };
    // Before the bad revision there is no halfway point.
    assert_eq!(
        s.judge(&measured(Verdict::Slower, 0.5, 0.6)),
        Judgement::Inconclusive
    );
    s.next_step();
    s.feed(Outcome::Measured {
        verdict: Verdict::Slower,
        ratio: 0.64,
        ci95: [0.62, 0.66],
    });
    // Halfway between good and the least slowdown the bad revision's CI allows.
    let halfway = s.halfway().unwrap();
    assert!((halfway - 0.66f64.sqrt()).abs() < 1e-12);
    let j = |v, lo, hi| s.judge(&measured(v, lo, hi));
    assert_eq!(j(Verdict::Inconclusive, 0.7, 0.79), Judgement::Moved);
    assert_eq!(j(Verdict::Slower, 0.82, 0.9), Judgement::DidNotMove);
    // Faster than good is still on good's side of a slowdown.
    assert_eq!(j(Verdict::Faster, 1.1, 1.2), Judgement::DidNotMove);
    assert_eq!(j(Verdict::Slower, 0.7, 0.9), Judgement::Inconclusive);
    // The halfway point itself is not past it.
    assert_eq!(j(Verdict::Slower, 0.7, halfway), Judgement::Inconclusive);
    assert_eq!(
        s.judge(&Outcome::DoesNotBuild { error: "x".into() }),
        Judgement::DoesNotBuild
    );
    assert_eq!(
        s.judge(&Outcome::Failed { error: "x".into() }),
        Judgement::Failed
    );
}

#[test]
fn an_unbuildable_commit_is_skipped_for_the_nearest_one() {
    // The middle (3) does not build: 2 and 4 are as near; the older one is measured.
    let mut h = History::new(8, 5);
    h.unbuildable.insert(3);
    let (measured, found) = h.bisect();
    assert_eq!(measured[..3], [7, 3, 2]);
    assert_eq!(found.first, Some(c(5)));
}

/// What the search concludes over `n` commits changed at `culprit` when commit
/// `unbuildable` does not build.
fn found_skipping(n: usize, culprit: usize, unbuildable: usize) -> Conclusion {
    let mut h = History::new(n, culprit);
    h.unbuildable.insert(unbuildable);
    h.bisect().1
}

#[test]
fn a_skip_just_before_the_culprit_leaves_two_candidates() {
    let found = found_skipping(8, 4, 3);
    assert_eq!(found.first, None);
    assert_eq!(found.candidates, [c(3), c(4)]);
    assert_eq!(
        found.unresolved.as_deref(),
        Some(
            format!(
                "1 commit(s) before {} do not build: the change is one of them or it",
                short(&c(4))
            )
            .as_str()
        )
    );
}

#[test]
fn a_skip_just_after_the_culprit_still_names_it() {
    let found = found_skipping(8, 4, 5);
    assert_eq!(found.first, Some(c(4)));
}

#[test]
fn an_unbuildable_culprit_is_among_the_candidates() {
    let found = found_skipping(8, 4, 4);
    assert_eq!(found.first, None);
    assert_eq!(found.candidates, [c(4), c(5)]);
}

#[test]
fn skips_on_both_sides_of_the_culprit_widen_the_candidates() {
    let mut h = History::new(10, 5);
    h.unbuildable.extend([3, 4, 5, 6]);
    let (measured, found) = h.bisect();
    assert_eq!(found.candidates, [c(3), c(4), c(5), c(6), c(7)]);
    assert!(found
        .unresolved
        .unwrap()
        .starts_with("4 commit(s) before c07"));
    // Each unbuildable commit is tried once at most.
    for i in [3, 4, 5, 6] {
        assert!(measured.iter().filter(|m| **m == i).count() <= 1);
    }
}

#[test]
fn nothing_buildable_before_bad_leaves_every_commit_a_candidate() {
    let mut h = History::new(6, 2);
    h.unbuildable.extend(0..5);
    let (measured, found) = h.bisect();
    assert_eq!(measured.len(), 6, "bad, then each commit once");
    assert_eq!(found.first, None);
    assert_eq!(found.candidates, commits(6));
    assert_eq!(
        found.unresolved.as_deref(),
        Some("5 commit(s) before c050000000 do not build: the change is one of them or it")
    );
}

#[test]
fn an_inconclusive_step_stops_the_search_with_the_range_left() {
    let mut h = History::new(8, 5);
    h.inconclusive.insert(5);
    let (measured, found) = h.bisect();
    assert_eq!(measured, [7, 3, 5]);
    assert_eq!(found.first, None);
    assert_eq!(found.candidates, [c(4), c(5), c(6), c(7)]);
    assert_eq!(
        found.unresolved.as_deref(),
        Some(
            "step 3 (c050000000): its CI still straddles the halfway ratio 0.908 after its share of the budget, so it is neither like good nor like bad; the change is among the commits listed (raise plan.budget, or give --cell a steadier cell)"
        )
    );
}

#[test]
fn a_failed_step_stops_the_search_and_says_why() {
    let mut h = History::new(8, 5);
    h.failing.insert(3);
    let (measured, found) = h.bisect();
    assert_eq!(measured, [7, 3]);
    assert_eq!(
        found.unresolved.as_deref(),
        Some("step 2 (c030000000) failed: boom")
    );
    assert_eq!(found.candidates, commits(8));
    assert_eq!(found.direction, Some(Verdict::Slower));
}

#[test]
fn a_bad_revision_that_did_not_move_ends_the_search() {
    let mut s = Search::new(commits(4)).unwrap();
    s.next_step();
    s.feed(Outcome::Measured {
        verdict: Verdict::Equivalent,
        ratio: 1.0,
        ci95: [0.99, 1.01],
    });
    let Next::Done(found) = s.next_step() else {
        panic!("not done")
    };
    assert_eq!(
        found.unresolved.as_deref(),
        Some("the bad revision is equivalent against the good one: nothing moved to look for")
    );
    assert_eq!(found.direction, None);
    assert_eq!(found.halfway, None);
    assert!(found.candidates.is_empty());
    // Too few rounds for the bad revision: the budget cannot measure the ends.
    let mut s = Search::new(commits(2)).unwrap();
    s.next_step();
    s.feed(Outcome::Undecided {
        why: "2 rounds".into(),
    });
    assert_eq!(
        s.conclusion().unwrap().unresolved.as_deref(),
        Some("the budget is too small to measure the ends: 2 rounds; nothing is named (raise plan.budget)")
    );
    // A client-bound or inconclusive bad revision gives no direction either.
    for verdict in [
        Verdict::Inconclusive,
        Verdict::ClientBound,
        Verdict::MachineBusy,
    ] {
        let mut s = Search::new(commits(2)).unwrap();
        s.next_step();
        s.feed(Outcome::Measured {
            verdict,
            ratio: 0.5,
            ci95: [0.4, 0.6],
        });
        assert_eq!(s.direction(), None);
        let why = s.conclusion().unwrap().unresolved.clone().unwrap();
        assert_eq!(
            why.starts_with("the budget is too small to measure the ends"),
            verdict == Verdict::Inconclusive,
            "{why}"
        );
        assert_eq!(
            why.starts_with("the machine was busy"),
            verdict == Verdict::MachineBusy,
            "{why}"
        );
    }
}

#[test]
fn a_bad_revision_that_cannot_be_measured_ends_the_search() {
    for outcome in [
        Outcome::DoesNotBuild {
            error: "variant c3 failed: build".into(),
        },
        Outcome::Failed {
            error: "no comparison came out of the step".into(),
        },
    ] {
        let mut s = Search::new(commits(4)).unwrap();
        s.next_step();
        let error = match &outcome {
            Outcome::DoesNotBuild { error } | Outcome::Failed { error } => error.clone(),
            Outcome::Measured { .. } | Outcome::Undecided { .. } => unreachable!(),
        };
        s.feed(outcome);
        let Next::Done(found) = s.next_step() else {
            panic!("not done")
        };
        assert_eq!(
            found.unresolved,
            Some(format!("the bad revision could not be measured: {error}"))
        );
    }
}

#[test]
fn feeding_after_the_end_or_before_a_step_is_named_changes_nothing() {
    let mut s = Search::new(commits(3)).unwrap();
    s.next_step();
    s.feed(History::new(3, 1).outcome(2));
    // Fed again without asking: no step is pending, so nothing moves.
    s.feed(History::new(3, 1).outcome(0));
    assert_eq!(s.next_step(), Next::Measure(c(0).as_str()));
    s.feed(History::new(3, 1).outcome(0));
    assert_eq!(s.next_step(), Next::Measure(c(1).as_str()));
    s.feed(History::new(3, 1).outcome(1));
    let done = s.next_step();
    let Next::Done(found) = done else {
        panic!("not done")
    };
    let found = found.clone();
    s.feed(Outcome::Failed { error: "x".into() });
    assert_eq!(s.conclusion(), Some(&found));
    assert_eq!(found.first, Some(c(1)));
}
