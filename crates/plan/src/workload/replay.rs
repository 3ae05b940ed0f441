//! replay's and mysqlslap's keys and their checks: the log file, its setup script,
//! iterations.

use crate::document::Loaded;
use crate::experiment::{Experiment, OneOrMany, TargetKind, Transport, WorkloadKind};
use crate::key;
use crate::validate::{range, Check};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// The keys of a replay or mysqlslap workload.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ReplayKeys {
    /// The query log to replay (relative to the experiment file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<PathBuf>,
    /// A .sql file run once into the prepared data (tables the log needs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub setup: Option<PathBuf>,
    /// Concurrent connections, a sweep like connections (mysqlslap's --concurrency).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub concurrency: Option<OneOrMany>,
    /// Times each connection replays its statements (mysqlslap's --iterations).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iterations: Option<u32>,
    /// replay only: threads the connections share.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_threads: Option<usize>,
    /// replay only: loopback TCP or the server's unix socket.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transport: Option<Transport>,
    /// replay only: EXPLAIN the heaviest statement classes (how many; default 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explain: Option<usize>,
}

/// The replay keys mysqlslap (mariadb-slap) has no use for.
pub(crate) const NOT_MYSQLSLAP: &[&str] = &["client_threads", "transport", "explain"];

/// replay and mysqlslap: a file that exists, iterations, and mysqlslap's target.
pub(crate) fn check_replay(
    l: &Loaded,
    e: &Experiment,
    i: usize,
    kind: WorkloadKind,
    w: &ReplayKeys,
) -> Check {
    let at = |k: &'static str| key!["workload", i, k];
    let Some(file) = &w.file else {
        return Err(l.error_at(
            &key!["workload", i],
            format!(
                "a {} workload needs file = \"queries.sql\" (a .sql file, a MariaDB general log or a PostgreSQL csvlog)",
                kind.as_str()
            ),
        ));
    };
    for (k, f) in [("file", Some(file)), ("setup", w.setup.as_ref())] {
        let Some(f) = f else { continue };
        let path = l.resolve(f);
        if !path.is_file() {
            return Err(l.error_at(
                &at(k),
                format!("{} does not exist or is not a file; give a path relative to the experiment file", path.display()),
            ));
        }
    }
    if let Some(n) = w.iterations {
        range(l, &at("iterations"), n, 1.0, 1e6, "iterations")?;
    }
    if let Some(n) = w.explain {
        range(l, &at("explain"), n, 0.0, 50.0, "explain")?;
    }
    if kind == WorkloadKind::Mysqlslap && e.target.kind != TargetKind::Mariadb {
        return Err(l.error_at(
            &at("kind"),
            "mysqlslap (mariadb-slap) speaks to MariaDB only; use kind = \"replay\" for postgres",
        ));
    }
    Ok(())
}
