//! sqlsuite's keys and their checks: scale, groups, engine.

use crate::document::Loaded;
use crate::experiment::{Experiment, TargetKind};
use crate::key;
use crate::validate::{range, Check};
use serde::{Deserialize, Serialize};

/// A sqlsuite workload's keys (it runs on one connection).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SuiteKeys {
    /// Row and loop counts: 1.0 is sql-bench's size; CI uses 0.01.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale: Option<f64>,
    /// The groups to run (default all), e.g. ["insert", "select"].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub groups: Option<Vec<String>>,
    /// MariaDB storage engine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine: Option<String>,
}

/// sqlsuite: a scale, known groups, an engine only on MariaDB.
pub(crate) fn check_sqlsuite(l: &Loaded, e: &Experiment, i: usize, w: &SuiteKeys) -> Check {
    let at = |k: &'static str| key!["workload", i, k];
    if let Some(x) = w.scale {
        range(l, &at("scale"), x, 0.001, 100.0, "scale")?;
    }
    for g in w.groups.iter().flatten() {
        let known = crate::SQLSUITE_GROUPS
            .iter()
            .any(|k| k.eq_ignore_ascii_case(&g.replace('_', "-")));
        if !known {
            return Err(l.error_at(
                &at("groups"),
                format!(
                    "unknown group {g:?}; the sqlsuite groups are {}",
                    crate::SQLSUITE_GROUPS.join(", ")
                ),
            ));
        }
    }
    if w.groups.as_ref().is_some_and(Vec::is_empty) {
        return Err(l.error_at(
            &at("groups"),
            "groups is empty; leave it out to run every group",
        ));
    }
    if w.engine.is_some() && e.target.kind != TargetKind::Mariadb {
        return Err(l.error_at(
            &at("engine"),
            "engine (a storage engine) is for mariadb targets only; remove it",
        ));
    }
    Ok(())
}
