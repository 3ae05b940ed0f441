//! What an interval leaves open, in the words of its answer: "between 0.4% and 4.9%
//! faster", "between 2.0% slower and 3.1% faster". An interval that covers 1 can hide a
//! difference either way, and each way as far as its own end; one that does not cover 1
//! (an answer withheld for another reason, such as too little coverage or a client-bound
//! side) still names which way and how far.

use crate::Direction;
use std::fmt;

/// The range of true differences an interval allows, as signed relative differences in
/// the better direction (positive: the candidate is better, "faster"), lowest first.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hiding {
    pub from: f64,
    pub to: f64,
}

impl Hiding {
    /// From a ratio interval (candidate over baseline) and which way is better. None for
    /// an interval that is not finite and positive.
    pub fn new((lo, hi): (f64, f64), direction: Direction) -> Option<Hiding> {
        if !(lo.is_finite() && hi.is_finite() && lo > 0.0 && hi >= lo) {
            return None;
        }
        let (from, to) = match direction {
            Direction::HigherIsBetter => (lo - 1.0, hi - 1.0),
            Direction::LowerIsBetter => (1.0 - hi, 1.0 - lo),
        };
        Some(Hiding { from, to })
    }

    /// The larger distance from "no difference" either end reaches.
    pub fn largest(&self) -> f64 {
        self.from.abs().max(self.to.abs())
    }
}

impl fmt::Display for Hiding {
    /// "between 0.4% and 4.9% faster", "between 1.0% and 5.0% slower", or "between 2.0%
    /// slower and 3.1% faster".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pct = |x: f64| format!("{:.1}%", x.abs() * 100.0);
        if self.from >= 0.0 {
            write!(f, "between {} and {} faster", pct(self.from), pct(self.to))
        } else if self.to <= 0.0 {
            write!(f, "between {} and {} slower", pct(self.to), pct(self.from))
        } else {
            write!(
                f,
                "between {} slower and {} faster",
                pct(self.from),
                pct(self.to)
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(ci: (f64, f64), d: Direction) -> String {
        Hiding::new(ci, d).unwrap().to_string()
    }

    #[test]
    fn names_the_direction_and_both_bounds() {
        use Direction::*;
        for (ci, d, want) in [
            (
                (1.004, 1.049),
                HigherIsBetter,
                "between 0.4% and 4.9% faster",
            ),
            ((0.95, 0.99), HigherIsBetter, "between 1.0% and 5.0% slower"),
            (
                (0.98, 1.031),
                HigherIsBetter,
                "between 2.0% slower and 3.1% faster",
            ),
            // Times: a ratio below 1 is faster.
            ((0.95, 0.99), LowerIsBetter, "between 1.0% and 5.0% faster"),
        ] {
            assert_eq!(text(ci, d), want, "{ci:?} {d:?}");
        }
        assert!(
            (Hiding::new((0.98, 1.031), HigherIsBetter)
                .unwrap()
                .largest()
                - 0.031)
                .abs()
                < 1e-12
        );
        assert_eq!(Hiding::new((f64::NAN, 1.0), HigherIsBetter), None);
    }
}
