//! sqlsuite as a kind: its keys and checks (scale, groups, engine), the targets it fits
//! (any SQL target), and its figures (seconds per group and operation: `figures.rs`).

use super::{figures, Group, Suite};
use crate::kinds::{keys_of, named_with_keys, speaks_sql, Kind};
use crate::Workload;
use bakeoff_plan::{key, range, Check, Experiment, KindKeys, KindSpec, Loaded};
use bakeoff_report::model::Results;
use bakeoff_sandbox::{target_for, Target};
use serde::{Deserialize, Serialize};

/// The kind in the registry.
pub struct SuiteKind;

impl KindSpec for SuiteKind {
    named_with_keys!("sqlsuite", SuiteKeys);

    fn fits(&self, target: &dyn Target) -> Result<(), String> {
        speaks_sql(target)
    }
}

impl Kind for SuiteKind {
    fn workloads(&self, l: &Loaded, i: usize) -> Result<Vec<Box<dyn Workload>>, String> {
        let w = &l.experiment.workloads[i];
        Ok(vec![Box::new(Suite::from_plan(
            w,
            keys_of::<SuiteKeys>(l, i),
        ))])
    }

    fn summarize(&self, r: &mut Results) {
        figures::summarize_cells(r);
    }

    fn sections(&self, r: &Results) -> Vec<bakeoff_report::Section> {
        super::section::section(r).into_iter().collect()
    }
}

impl KindKeys for SuiteKeys {
    fn check(&self, l: &Loaded, e: &Experiment, i: usize) -> Check {
        check_sqlsuite(l, e, i, self)
    }

    /// One connection: operations are timed one after another.
    fn connections_swept(&self) -> Vec<usize> {
        vec![1]
    }

    bakeoff_plan::kind_keys_boilerplate!();
}

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
fn check_sqlsuite(l: &Loaded, e: &Experiment, i: usize, w: &SuiteKeys) -> Check {
    let at = |k: &'static str| key!["workload", i, k];
    if let Some(x) = w.scale {
        range(l, &at("scale"), x, 0.001, 100.0, "scale")?;
    }
    for g in w.groups.iter().flatten() {
        if Group::from_name(g).is_none() {
            let names: Vec<&str> = Group::ALL.iter().map(|g| g.name()).collect();
            return Err(l.error_at(
                &at("groups"),
                format!(
                    "unknown group {g:?}; the sqlsuite groups are {}",
                    names.join(", ")
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
    if w.engine.is_some() && !target_for(e.target.kind).has_storage_engines() {
        return Err(l.error_at(
            &at("engine"),
            "engine (a storage engine) is for mariadb targets only; remove it",
        ));
    }
    Ok(())
}
