//! replay's own records in results.json, beside each run's own keys: `classes` (per
//! statement class) and `explains` (the plans of the heaviest classes, in the first
//! round's run of each cell). The report crate keeps them as JSON
//! (`bakeoff_report::figures`); this kind reads and writes them typed.

use bakeoff_report::figures::RunFigures;
use serde::{Deserialize, Serialize};

/// A replay run's figures.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct ReplayRun {
    /// Per statement class (literals normalized), heaviest first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub classes: Vec<ClassRecord>,
    /// EXPLAIN of the heaviest classes (the first round's run of each cell).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub explains: Vec<ExplainRecord>,
}

impl RunFigures for ReplayRun {}

/// One statement class of a replay run.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ClassRecord {
    pub fingerprint: String,
    /// A short stable id of the fingerprint.
    pub class: String,
    pub count: u64,
    pub total_s: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    #[serde(default)]
    pub errors: u64,
}

/// The plan a server chose for one statement class.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ExplainRecord {
    pub class: String,
    pub fingerprint: String,
    pub plan: String,
}
