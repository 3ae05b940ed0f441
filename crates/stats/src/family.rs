//! One place decides a family of comparisons: the experiment's (throughput, instruction
//! counts and capacities of every cell against the baseline's), tpcc's NOTPM, the SQL
//! suite's operations of a cell, `bakeoff compare`'s two folders. A caller builds the
//! family's members (the two sides' figures and how the metric reads them, or a
//! comparison made elsewhere that joins the family) and renders what comes back; how a
//! pair is compared and how the family is adjusted is decided here only.
//!
//! Each pair is compared as its samples allow: paired by round where the rule's pairing
//! and the rounds allow ([`compare_rounds`]), over code layouts where the caller asks
//! ([`compare_layouts`], falling back to rounds), or as two unpaired samples
//! ([`compare`]). Then every comparison of the family is decided together
//! ([`decide`]): Benjamini-Hochberg over their p-values, each interval at its
//! false-coverage-rate level, each verdict from its adjusted p and that interval.

use crate::{compare, compare_layouts, compare_rounds, decide, Comparison, Rule};

/// One side's figures.
#[derive(Debug, Clone, Copy)]
pub enum Sample<'a> {
    /// Figures numbered by the round they ran in (paired where both sides ran a round).
    Rounds(&'a [(usize, f64)]),
    /// Figures with no rounds to pair by (two experiments' runs, never side by side).
    Values(&'a [f64]),
}

/// A member of a family.
#[derive(Debug, Clone)]
pub enum Member<'a> {
    /// Two sides to compare.
    Pair {
        baseline: Sample<'a>,
        candidate: Sample<'a>,
        /// Compare over this many code-layout slots (one estimate per slot) where it can.
        layouts: Option<usize>,
        /// The smallest relative difference the metric resolves, where the caller knows
        /// it (throughput: the precision target; instruction counts: their spread).
        resolution: Option<f64>,
    },
    /// A comparison made elsewhere (a capacity's searches) that is decided with the rest.
    Made(Comparison),
}

impl<'a> Member<'a> {
    /// Two sides by round, nothing else asked.
    pub fn rounds(baseline: &'a [(usize, f64)], candidate: &'a [(usize, f64)]) -> Member<'a> {
        Member::Pair {
            baseline: Sample::Rounds(baseline),
            candidate: Sample::Rounds(candidate),
            layouts: None,
            resolution: None,
        }
    }

    /// The comparison of the two sides, before the family is decided.
    fn compared(self, rule: &Rule) -> Option<Comparison> {
        match self {
            Member::Made(k) => Some(k),
            Member::Pair {
                baseline,
                candidate,
                layouts,
                resolution,
            } => {
                let mut k = match (baseline, candidate) {
                    (Sample::Rounds(b), Sample::Rounds(c)) => layouts
                        .and_then(|n| compare_layouts(b, c, n, rule))
                        .or_else(|| compare_rounds(b, c, rule)),
                    (Sample::Values(b), Sample::Values(c)) => compare(b, c, rule),
                    (b, c) => compare(&values(b), &values(c), rule),
                }?;
                if let Some(r) = resolution {
                    k.resolution = r;
                }
                Some(k)
            }
        }
    }
}

fn values(s: Sample) -> Vec<f64> {
    match s {
        Sample::Rounds(r) => r.iter().map(|x| x.1).collect(),
        Sample::Values(v) => v.to_vec(),
    }
}

/// Decides a family: each member compared (None where it has nothing to compare, or no
/// member at all), then all the comparisons decided together under `rule` (its direction,
/// level, equivalence band and pairing: the metric). The result is in the members'
/// order.
pub fn decide_family(members: Vec<Option<Member>>, rule: &Rule) -> Vec<Option<Comparison>> {
    let mut found: Vec<Option<Comparison>> = members
        .into_iter()
        .map(|m| m.and_then(|m| m.compared(rule)))
        .collect();
    decide(found.iter_mut().flatten(), rule.alpha, rule.equivalence);
    found
}

/// What held a pair's sides back: the load (client-bound: more than
/// [`crate::CLIENT_BOUND_SHARE`] of a side's runs) or other processes of the machine.
/// Applied once, after the family is decided ([`crate::bounded`], then [`crate::busy`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Holds {
    pub baseline_held: bool,
    pub candidate_held: bool,
    pub baseline_busy: bool,
    pub candidate_busy: bool,
}

impl Holds {
    /// Only the load's holds (a metric other processes do not move).
    pub fn held(baseline: bool, candidate: bool) -> Holds {
        Holds {
            baseline_held: baseline,
            candidate_held: candidate,
            ..Holds::default()
        }
    }

    /// The verdict once the holds are known.
    pub fn apply(self, verdict: crate::Verdict) -> crate::Verdict {
        crate::busy(
            crate::bounded(verdict, self.baseline_held, self.candidate_held),
            self.baseline_busy,
            self.candidate_busy,
        )
    }
}

/// The one comparison stage: the members of a family, each under the caller's tag (a
/// cell, an operation, a key), added as pairs of samples or as comparisons made
/// elsewhere, with what held their sides; [`Family::decide`] decides them together under
/// one rule and applies the holds once. Every caller (a run's analysis, two folders
/// compared, each kind's own figures, capacities) builds one of these.
#[derive(Debug, Clone)]
pub struct Family<'a, T> {
    members: Vec<(T, Option<Member<'a>>, Holds)>,
}

impl<T> Default for Family<'_, T> {
    fn default() -> Self {
        Family {
            members: Vec::new(),
        }
    }
}

impl<'a, T> Family<'a, T> {
    pub fn new() -> Self {
        Self::default()
    }

    /// A pair of samples, with the metric's resolution where the caller knows it and the
    /// code-layout slots to compare over where either side was built in several.
    pub fn pair(
        &mut self,
        tag: T,
        baseline: Sample<'a>,
        candidate: Sample<'a>,
        layouts: Option<usize>,
        resolution: Option<f64>,
        holds: Holds,
    ) -> &mut Self {
        let m = Member::Pair {
            baseline,
            candidate,
            layouts,
            resolution,
        };
        self.members.push((tag, Some(m), holds));
        self
    }

    /// A comparison made elsewhere (a capacity's searches), decided with the rest.
    pub fn made(&mut self, tag: T, k: Comparison, holds: Holds) -> &mut Self {
        self.members.push((tag, Some(Member::Made(k)), holds));
        self
    }

    /// A member, or a place with nothing to compare (None keeps the tag's place: it
    /// comes back as None).
    pub fn member(&mut self, tag: T, m: Option<Member<'a>>) -> &mut Self {
        self.members.push((tag, m, Holds::default()));
        self
    }

    pub fn len(&self) -> usize {
        self.members.len()
    }

    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    /// Every member decided together under `rule`, each verdict then under its holds; in
    /// the order they were added, None where a member had nothing to compare.
    pub fn decide_all(self, rule: &Rule) -> Vec<(T, Option<Comparison>)> {
        let (tags, rest): (Vec<T>, Vec<(Option<Member>, Holds)>) = self
            .members
            .into_iter()
            .map(|(t, m, h)| (t, (m, h)))
            .unzip();
        let (members, holds): (Vec<_>, Vec<_>) = rest.into_iter().unzip();
        let found = decide_family(members, rule);
        tags.into_iter()
            .zip(found)
            .zip(holds)
            .map(|((t, k), h)| {
                let k = k.map(|mut k| {
                    k.verdict = h.apply(k.verdict);
                    k
                });
                (t, k)
            })
            .collect()
    }

    /// [`Family::decide_all`] without the members that had nothing to compare.
    pub fn decide(self, rule: &Rule) -> Vec<(T, Comparison)> {
        self.decide_all(rule)
            .into_iter()
            .filter_map(|(t, k)| Some((t, k?)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Direction, Pairing, Verdict};

    fn rounds(base: f64, step: f64) -> Vec<(usize, f64)> {
        (0..8).map(|i| (i, base + step * i as f64)).collect()
    }

    /// The family gives what the callers got by hand: each pair compared, then decided
    /// together.
    #[test]
    fn a_family_is_the_comparisons_decided_together() {
        let rule = Rule::new(Direction::HigherIsBetter);
        let (a, b, c) = (rounds(100.0, 1.0), rounds(130.0, 1.0), rounds(100.5, 1.0));
        let got = decide_family(
            vec![
                Some(Member::rounds(&a, &b)),
                None,
                Some(Member::rounds(&a, &c)),
            ],
            &rule,
        );
        let mut want = [
            compare_rounds(&a, &b, &rule).unwrap(),
            compare_rounds(&a, &c, &rule).unwrap(),
        ];
        decide(want.iter_mut(), rule.alpha, rule.equivalence);
        assert!(got[1].is_none());
        assert_eq!(got[0].as_ref(), Some(&want[0]));
        assert_eq!(got[2].as_ref(), Some(&want[1]));
        assert_eq!(want[0].verdict, Verdict::Faster);
        assert!(want[0].p_adjusted >= want[0].p_value);
    }

    #[test]
    fn values_resolution_and_made_comparisons() {
        let rule = Rule {
            pairing: Pairing::Unpaired,
            ..Rule::new(Direction::HigherIsBetter)
        };
        let (a, b) = ([100.0, 101.0, 99.0, 100.5], [100.2, 100.8, 99.5, 100.1]);
        let made = compare(&a, &b, &rule).unwrap();
        let got = decide_family(
            vec![
                Some(Member::Pair {
                    baseline: Sample::Values(&a),
                    candidate: Sample::Values(&b),
                    layouts: None,
                    resolution: Some(0.05),
                }),
                Some(Member::Made(made.clone())),
            ],
            &rule,
        );
        let mut want = [compare(&a, &b, &rule).unwrap(), made];
        want[0].resolution = 0.05;
        decide(want.iter_mut(), rule.alpha, rule.equivalence);
        assert_eq!(got[0].as_ref(), Some(&want[0]));
        assert_eq!(got[1].as_ref(), Some(&want[1]));
    }

    /// The builder decides as `decide_family` does, and applies the holds once: a
    /// client-bound candidate keeps "faster", a busy side makes any verdict machine-busy.
    #[test]
    fn the_builder_decides_the_family_and_applies_the_holds() {
        let rule = Rule::new(Direction::HigherIsBetter);
        let (a, b) = (rounds(100.0, 1.0), rounds(130.0, 1.0));
        let made = compare_rounds(&a, &b, &rule).unwrap();
        let mut f = Family::new();
        f.pair(
            "held",
            Sample::Rounds(&a),
            Sample::Rounds(&b),
            None,
            None,
            Holds::held(false, true),
        );
        f.member("none", None);
        f.pair(
            "busy",
            Sample::Rounds(&a),
            Sample::Rounds(&b),
            None,
            None,
            Holds {
                baseline_busy: true,
                ..Holds::default()
            },
        );
        f.made("made", made.clone(), Holds::held(true, false));
        let got = f.decide(&rule);
        let tags: Vec<&str> = got.iter().map(|x| x.0).collect();
        assert_eq!(tags, ["held", "busy", "made"]);
        let plain = decide_family(
            vec![
                Some(Member::rounds(&a, &b)),
                Some(Member::rounds(&a, &b)),
                Some(Member::Made(made)),
            ],
            &rule,
        );
        assert_eq!(got[0].1.verdict, Verdict::Faster);
        assert_eq!(got[1].1.verdict, Verdict::MachineBusy);
        assert_eq!(got[2].1.verdict, Verdict::ClientBound);
        assert_eq!(got[0].1.p_adjusted, plain[0].as_ref().unwrap().p_adjusted);
    }
}
