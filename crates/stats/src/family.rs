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
}
