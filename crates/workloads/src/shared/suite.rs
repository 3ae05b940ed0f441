//! What a suite of timed operations records per run, shared by the kinds that time named
//! operations (sqlsuite runs them itself, sqlbench reads them from the real sql-bench):
//! per run its `operations`, beside the run's own keys in results.json. sqlsuite's cell
//! figures are built from these.

use bakeoff_report::figures::RunFigures;
use serde::{Deserialize, Serialize};

/// A suite run's figures: every operation's time, in the order they ran.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct SuiteRun {
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub operations: Vec<OperationRecord>,
}

impl RunFigures for SuiteRun {}

/// One timed operation of a suite run.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct OperationRecord {
    pub group: String,
    pub name: String,
    pub seconds: f64,
}
