//! The checks before any figure: result equivalence per variant (`verification`) and the
//! machine's A/A check (`aa`).

use super::Verdict;
use serde::{Deserialize, Serialize};

/// The A/A check in one record: the A/A variant against the baseline, its comparison
/// furthest from "no difference" (the first that came out faster or slower, when any did).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct AaRecord {
    /// The A/A variant: the baseline's binary and options in a sandbox of its own.
    pub variant: String,
    pub baseline: String,
    /// Where that comparison was: its workload and connections.
    pub workload: String,
    pub connections: usize,
    /// Its ratio, CI and verdict (same meaning as a
    /// [`ComparisonRecord`](super::ComparisonRecord)'s).
    pub ratio: f64,
    pub ci95: [f64; 2],
    pub verdict: Verdict,
    /// The CI's relative half-width: the smallest difference this machine could tell
    /// from none here, its noise floor for this budget.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detectable: Option<f64>,
    /// A/A comparisons in all (one per point) and those that came out faster or slower.
    pub comparisons: usize,
    pub differ: usize,
}

impl AaRecord {
    /// True when two sandboxes of one binary came out faster or slower somewhere: every
    /// verdict of the experiment is suspect.
    pub fn differs(&self) -> bool {
        self.differ > 0
    }
}

/// Result equivalence of one variant against the baseline: every query's result hash.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct VerificationRecord {
    pub variant: String,
    /// same | different | skipped
    pub status: String,
    /// Queries run (including the follow-up selects of written tables).
    pub queries: usize,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub differences: Vec<DifferenceRecord>,
    /// Queries whose results were not identical as sent but were treated as equal, each
    /// with the rows and the reason (rows in another order for a query without ORDER BY;
    /// between servers of different kinds, numbers printed differently).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub explained: Vec<ExplainedRecord>,
    /// Whether the variant's server is of another kind than the baseline's (its results
    /// were compared in the canonical form across kinds).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cross_kind: bool,
    /// Why it was skipped or could not run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// A query whose result differs from the baseline's.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct DifferenceRecord {
    pub query: String,
    /// Line in the query file (0: a follow-up select bakeoff added).
    #[serde(default)]
    pub line: usize,
    pub hash: String,
    pub baseline_hash: String,
    /// The first rows found in this variant's result and not the baseline's, and back.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rows: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub baseline_rows: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline_error: Option<String>,
    /// Why the results count as different ("the rows differ", "the same rows in another
    /// order: the query has an ORDER BY, so order counts", ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// A query whose results were treated as equal to the baseline's only in a canonical
/// form, with the rows as each side sent them and why.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ExplainedRecord {
    pub query: String,
    #[serde(default)]
    pub line: usize,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rows: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub baseline_rows: Vec<String>,
    pub reason: String,
}
