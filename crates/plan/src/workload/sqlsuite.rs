//! sqlsuite's keys and their checks: scale, groups, engine.

use crate::document::Loaded;
use crate::experiment::{Experiment, TargetKind, Workload};
use crate::key;
use crate::validate::{range, Check};

/// The keys a sqlsuite workload takes (besides `kind` and `name`).
pub(crate) const KEYS: &[&str] = &["scale", "groups", "engine"];

/// sqlsuite: a scale, known groups, an engine only on MariaDB.
pub(crate) fn check_sqlsuite(l: &Loaded, e: &Experiment, i: usize, w: &Workload) -> Check {
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
