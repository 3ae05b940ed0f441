//! sqlsuite's own records in results.json: per run its `operations` (beside the run's own
//! keys; sqlbench's runs write the same), per cell `"sqlsuite": {groups, operations}`. The
//! report crate keeps them as JSON (`bakeoff_report::figures`); this kind reads and writes
//! them typed.

use bakeoff_report::model::{Cell, RatioRecord};
use serde::{Deserialize, Serialize};

/// The cell record's key: the kind's name.
pub const KEY: &str = "sqlsuite";

pub use crate::shared::suite::{OperationRecord, SuiteRun};

/// A suite cell: per group and per operation, the median seconds over valid runs with a
/// 95% CI, and the time against the baseline's (ratio of medians: below 1 is faster).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct SuiteCell {
    pub groups: Vec<SuiteRow>,
    pub operations: Vec<SuiteRow>,
}

impl SuiteCell {
    /// The cell's suite record, if it has one.
    pub fn of(c: &Cell) -> Option<SuiteCell> {
        c.kinds.get(KEY)
    }

    /// Writes (or, with None, removes) the cell's suite record.
    pub fn put(s: Option<&SuiteCell>, c: &mut Cell) {
        c.kinds.set(KEY, s);
    }
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct SuiteRow {
    pub group: String,
    /// The operation (empty for a group's row).
    #[serde(default)]
    pub name: String,
    pub median_s: f64,
    pub ci95: [f64; 2],
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vs_baseline: Option<RatioRecord>,
}
