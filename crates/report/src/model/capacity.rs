//! A cell's capacity at a latency limit (`[[workload]] slo`) and the searches that found
//! it.

use serde::{Deserialize, Serialize};

/// A cell's capacity at its workload's latency limit (`[[workload]] slo`): the highest
/// offered rate at which the percentile of the response time stays under the limit and
/// the achieved rate keeps up, found by repeated searches (bakeoff-capacity).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct CapacityRecord {
    /// The median of the searches' capacities, ops/s (0 when no search found one).
    pub ops_per_s: f64,
    /// Its 95% interval: the order-statistic interval of the median over the searches'
    /// capacities; with fewer searches than that needs, from the lowest search's lower
    /// bound to the highest search's upper bound.
    pub ci: [f64; 2],
    /// The interval's actual coverage (0 where it is the brackets' span).
    #[serde(default)]
    pub ci_coverage: f64,
    /// The percentile the limit is on (99: p99).
    pub percentile: f64,
    /// The limit, µs.
    pub limit_us: f64,
    /// The closed-loop peak the first search started from, ops/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_ops_per_s: Option<f64>,
    /// Each search: what it found and why it ended.
    #[serde(default)]
    pub searches: Vec<CapacitySearch>,
    /// Every trial, in the order run.
    #[serde(default)]
    pub trials: Vec<CapacityTrial>,
    /// More than a quarter of the failing trials at the searches' upper bounds could not
    /// offer their rate (client-bound): the capacity may be the load's.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub client_bound: bool,
    /// More than a quarter of the valid trials were disturbed by other processes of the
    /// server's machine: the capacity may be theirs.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub machine_busy: bool,
}

/// One search of a capacity.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct CapacitySearch {
    /// 0-based; searches of the same index of every variant ran interleaved (paired).
    pub search: usize,
    /// The lower bound: the highest rate that passed below the upper bound; None when
    /// none passed.
    pub capacity: Option<f64>,
    /// The lowest rate that failed; None when none failed.
    pub upper: Option<f64>,
    /// precision | budget | floor | ceiling.
    pub stop: String,
    /// Both bounds re-measured and held.
    pub confirmed: bool,
    pub trials: usize,
}

/// One trial of a capacity search: a short open-loop run at an offered rate.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct CapacityTrial {
    /// The search (a paired round) it belongs to; 0 for the bracket's trials.
    pub search: usize,
    /// A trial of the bracket that comes before the rounds (the same rates for every
    /// variant), not of a round.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub bracket: bool,
    /// ops/s offered and achieved.
    pub offered: f64,
    pub achieved: f64,
    /// Response times from the intended send time, µs.
    pub p50: f64,
    pub p99: f64,
    pub p999: f64,
    /// Under the limit and keeping up.
    pub pass: bool,
    #[serde(default = "yes")]
    pub valid: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub client_bound: bool,
    /// Other processes of the machine took CPU the server or the load waited for.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub machine_busy: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invalid_reason: Option<String>,
}

fn yes() -> bool {
    true
}
