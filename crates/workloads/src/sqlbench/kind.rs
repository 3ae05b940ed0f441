//! sql-bench as a kind: its keys (`tests`, `args`, `dir`) and their checks, the targets it
//! fits (MariaDB and PostgreSQL servers), and its figures: the same per-group and
//! per-operation seconds as sqlsuite's (`sqlsuite/figures.rs` summarizes every cell with
//! timed operations, and the report's SQL suite section shows them).

use super::{refused_args, SqlBench, TESTS};
use crate::kinds::{installed, keys_of, named_with_keys, Kind};
use crate::Workload;
use bakeoff_plan::{key, Check, Experiment, KindKeys, KindSpec, Loaded};
use bakeoff_sandbox::Target;
use bakeoff_sqlclient::Dialect;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// The kind in the registry.
pub struct SqlBenchKind;

impl KindSpec for SqlBenchKind {
    named_with_keys!("sql-bench", SqlBenchKeys);

    /// MariaDB (`--server=mysql`) and PostgreSQL (`--server=Pg`) servers.
    fn fits(&self, target: &dyn Target) -> Result<(), String> {
        match target.dialect() {
            Some(Dialect::Mariadb | Dialect::Mysql | Dialect::Postgres) => Ok(()),
            _ => Err(
                "sql-bench runs against MariaDB (--server=mysql) or PostgreSQL (--server=Pg) only"
                    .into(),
            ),
        }
    }
}

impl Kind for SqlBenchKind {
    fn workloads(&self, l: &Loaded, i: usize) -> Result<Vec<Box<dyn Workload>>, String> {
        installed(l, i, "perl", "perl")?;
        let module = match bakeoff_sandbox::target_for(l.experiment.target.kind).dialect() {
            Some(Dialect::Postgres) => ("DBD::Pg", "libdbd-pg-perl"),
            _ => ("DBD::MariaDB", "libdbd-mariadb-perl"),
        };
        let has = std::process::Command::new("perl")
            .arg(format!("-M{}", module.0))
            .arg("-e1")
            .output()
            .is_ok_and(|o| o.status.success());
        if !has {
            return Err(l
                .error_at(
                    &key!["workload", i, "kind"],
                    format!(
                        "sql-bench needs Perl's {}, which is not installed; run scripts/setup.sh (apt-get install {})",
                        module.0, module.1
                    ),
                )
                .to_string());
        }
        let w = &l.experiment.workloads[i];
        Ok(vec![Box::new(SqlBench::from_plan(
            l,
            i,
            w,
            keys_of::<SqlBenchKeys>(l, i),
        )?)])
    }
}

/// `tests`: "all" (sql-bench's run-all-tests) or a list of its tests.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum Tests {
    /// "all".
    All(String),
    /// Test names, each run as `test-NAME`.
    List(Vec<String>),
}

/// A sql-bench workload's keys (it runs on one connection).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SqlBenchKeys {
    /// "all" (default: run-all-tests) or a list such as ["insert", "select"].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tests: Option<Tests>,
    /// sql-bench's own options, passed through, e.g. ["--small-test"].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// A sql-bench folder to use instead of the target's source's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dir: Option<PathBuf>,
}

impl KindKeys for SqlBenchKeys {
    fn check(&self, l: &Loaded, _e: &Experiment, i: usize) -> Check {
        let at = |k: &'static str| key!["workload", i, k];
        match &self.tests {
            Some(Tests::All(s)) if s != "all" => {
                return Err(l.error_at(
                    &at("tests"),
                    format!("tests = {s:?}: give \"all\" or a list of sql-bench's tests such as [\"insert\", \"select\"]"),
                ))
            }
            Some(Tests::List(v)) if v.is_empty() => {
                return Err(l.error_at(
                    &at("tests"),
                    "tests is empty; leave it out (or give \"all\") to run every test",
                ))
            }
            Some(Tests::List(v)) if self.dir.is_none() => {
                if let Some(t) = v.iter().find(|t| !TESTS.contains(&t.as_str())) {
                    return Err(l.error_at(
                        &at("tests"),
                        format!(
                            "sql-bench has no test {t:?}; its tests are {}",
                            TESTS.join(", ")
                        ),
                    ));
                }
            }
            _ => {}
        }
        if let Some(why) = refused_args(&self.args) {
            return Err(l.error_at(&at("args"), format!("args: {why}")));
        }
        Ok(())
    }

    /// One connection: sql-bench's tests run one after another.
    fn connections_swept(&self) -> Vec<usize> {
        vec![1]
    }

    bakeoff_plan::kind_keys_boilerplate!();
}
