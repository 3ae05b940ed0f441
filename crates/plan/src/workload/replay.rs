//! replay's and mysqlslap's keys and their checks: the log file, its setup script,
//! iterations.

use crate::document::Loaded;
use crate::experiment::{Experiment, TargetKind, Workload, WorkloadKind};
use crate::key;
use crate::validate::{range, Check};

/// The keys a replay workload takes (besides `kind` and `name`).
pub(crate) const REPLAY_KEYS: &[&str] = &[
    "file",
    "setup",
    "concurrency",
    "iterations",
    "client_threads",
    "transport",
    "explain",
];

/// The keys a mysqlslap workload takes (besides `kind` and `name`).
pub(crate) const MYSQLSLAP_KEYS: &[&str] = &["file", "setup", "concurrency", "iterations"];

/// replay and mysqlslap: a file that exists, iterations, and mysqlslap's target.
pub(crate) fn check_replay(l: &Loaded, e: &Experiment, i: usize, w: &Workload) -> Check {
    let at = |k: &'static str| key!["workload", i, k];
    let Some(file) = &w.file else {
        return Err(l.error_at(
            &key!["workload", i],
            format!(
                "a {} workload needs file = \"queries.sql\" (a .sql file, a MariaDB general log or a PostgreSQL csvlog)",
                w.kind.as_str()
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
        range(l, &at("iterations"), f64::from(n), 1.0, 1e6, "iterations")?;
    }
    if let Some(n) = w.explain {
        range(l, &at("explain"), n as f64, 0.0, 50.0, "explain")?;
    }
    if w.kind == WorkloadKind::Mysqlslap && e.target.kind != TargetKind::Mariadb {
        return Err(l.error_at(
            &at("kind"),
            "mysqlslap (mariadb-slap) speaks to MariaDB only; use kind = \"replay\" for postgres",
        ));
    }
    Ok(())
}
