//! bakeoff-capacity: the search behind `[[workload]] slo` as a state machine over trial
//! outcomes; it runs nothing. [`paired`] searches every variant of a point together in
//! paired rounds, a bakeoff-study `Study` (its comment says how and why); the runner runs
//! its trials. Here: what a trial is ([`Trial`]), what it must meet to pass ([`Limit`]),
//! and why a search ends ([`Stop`]).
//!
//! The capacity is the highest offered rate at which a trial passes: the percentile of the
//! response time (measured from each request's intended send time) is at most the limit,
//! and the achieved rate keeps up with the offered one within [`KEEP_UP`].

/// How far the achieved rate may fall short of the offered one in a passing trial (0.05:
/// it keeps up when it reaches 95% of the offered rate).
pub const KEEP_UP: f64 = 0.05;
/// The highest rate the search offers, as a multiple of the highest closed-loop peak.
pub const CEILING: f64 = 4.0;
/// The lowest rate the search offers, as a share of the lowest closed-loop peak.
pub const FLOOR: f64 = 1.0 / 1024.0;

/// What a trial must meet to pass.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limit {
    /// The response-time limit on the chosen percentile, in microseconds.
    pub latency_us: f64,
    /// See [`KEEP_UP`].
    pub keep_up: f64,
}

impl Limit {
    /// A limit with the default [`KEEP_UP`].
    pub fn new(latency_us: f64) -> Limit {
        Limit {
            latency_us,
            keep_up: KEEP_UP,
        }
    }

    /// Whether a trial passes: valid, under the latency limit, keeping up.
    pub fn passes(&self, t: &Trial) -> bool {
        t.valid
            && t.latency_us.is_finite()
            && t.latency_us <= self.latency_us
            && t.achieved >= t.offered * (1.0 - self.keep_up)
    }
}

/// What one trial measured.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Trial {
    /// The rate it offered, ops/s.
    pub offered: f64,
    /// The rate the server answered, ops/s.
    pub achieved: f64,
    /// The limit's percentile of the response time from the intended send time, µs.
    pub latency_us: f64,
    /// False when the run failed or was marked invalid: it counts as a failing trial.
    pub valid: bool,
}

/// Why a search ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// The comparisons reached the precision (the caller's `enough`).
    Precision,
    /// The budget ran out first.
    Budget,
    /// Even the lowest rate failed: no capacity under the limit.
    Floor,
    /// The highest rate passed: the capacity is at least that (the load may be what
    /// could not go higher).
    Ceiling,
    /// The paired rounds reached their most (`repetitions`).
    Rounds,
}

impl Stop {
    /// The word results and reports use.
    pub fn as_str(self) -> &'static str {
        match self {
            Stop::Precision => "precision",
            Stop::Budget => "budget",
            Stop::Floor => "floor",
            Stop::Ceiling => "ceiling",
            Stop::Rounds => "repetitions",
        }
    }
}

pub mod paired;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trial_that_does_not_keep_up_or_failed_fails() {
        let l = Limit::new(1000.0);
        let ok = Trial {
            offered: 100.0,
            achieved: 96.0,
            latency_us: 900.0,
            valid: true,
        };
        assert!(l.passes(&ok));
        for bad in [
            Trial {
                achieved: 94.0,
                ..ok
            },
            Trial {
                latency_us: 1001.0,
                ..ok
            },
            Trial { valid: false, ..ok },
            Trial {
                latency_us: f64::NAN,
                ..ok
            },
        ] {
            assert!(!l.passes(&bad), "{bad:?}");
        }
    }
}
