//! Each workload kind's keys and their checks, one file per kind; here the checks every
//! kind shares (keys allowed, the target it fits, connections) and the one match that
//! picks a kind's checks.

mod kv;
mod oltp;
mod replay;
mod sqlsuite;
mod tpcc;

use crate::document::Loaded;
use crate::experiment::{Experiment, TargetKind, ThinkMode, Workload, WorkloadKind};
use crate::validate::{range, Check, MAX_SWEEP_POINTS};
use crate::{key, MAX_CONNECTIONS, TERMINALS_PER_WAREHOUSE};
use std::collections::BTreeSet;

/// The keys each workload kind takes (besides `kind` and `name`).
pub fn workload_keys(kind: WorkloadKind) -> &'static [&'static str] {
    match kind {
        WorkloadKind::Kv => kv::KEYS,
        WorkloadKind::Oltp | WorkloadKind::Sysbench => oltp::KEYS,
        WorkloadKind::Replay => replay::REPLAY_KEYS,
        WorkloadKind::Mysqlslap => replay::MYSQLSLAP_KEYS,
        WorkloadKind::Sqlsuite => sqlsuite::KEYS,
        WorkloadKind::Tpcc => tpcc::KEYS,
    }
}

/// Workload `i`'s keys: those every kind shares, then its kind's own.
pub(crate) fn check(l: &Loaded, e: &Experiment, i: usize, w: &Workload) -> Check {
    check_workload_keys(l, i, w)?;
    check_workload_target(l, e, i, w)?;
    check_connections(l, i, w)?;
    match w.kind {
        WorkloadKind::Kv => kv::check_kv(l, i, w),
        WorkloadKind::Oltp | WorkloadKind::Sysbench => oltp::check_sql(l, e, i, w),
        WorkloadKind::Tpcc => tpcc::check_tpcc(l, e, i, w),
        WorkloadKind::Replay | WorkloadKind::Mysqlslap => replay::check_replay(l, e, i, w),
        WorkloadKind::Sqlsuite => sqlsuite::check_sqlsuite(l, e, i, w),
    }
}

/// Each kind takes its own keys: a kv key in an oltp workload is a mistake, not a default.
pub(crate) fn check_workload_keys(l: &Loaded, i: usize, w: &Workload) -> Check {
    let allowed = workload_keys(w.kind);
    for k in l.keys_in(&key!["workload", i]) {
        if k == "kind" || k == "name" || allowed.contains(&k.as_str()) {
            continue;
        }
        let owner = [WorkloadKind::Kv, WorkloadKind::Oltp]
            .into_iter()
            .find(|o| workload_keys(*o).contains(&k.as_str()));
        let hint = match owner {
            Some(o) => format!("{k} is a key of {} workloads", o.as_str()),
            None => format!("unknown key {k}"),
        };
        let at = key!["workload", i, k.clone()];
        return Err(l.error_at(
            &at,
            format!(
                "{hint}; {} {} workload takes: {} (see docs/experiment-file.md)",
                if w.kind == WorkloadKind::Oltp {
                    "an"
                } else {
                    "a"
                },
                w.kind.as_str(),
                allowed.join(", ")
            ),
        ));
    }
    Ok(())
}

/// What a sqlite target runs: single-file workloads whose SQL SQLite speaks.
const SQLITE_WORKLOADS: &[WorkloadKind] = &[WorkloadKind::Sqlsuite, WorkloadKind::Replay];

pub(crate) fn check_workload_target(l: &Loaded, e: &Experiment, i: usize, w: &Workload) -> Check {
    let kind = e.target.kind;
    let fits = if w.kind.is_sql() {
        kind.is_sql()
    } else {
        kind == TargetKind::Memcached
    };
    if kind == TargetKind::Sqlite && fits && !SQLITE_WORKLOADS.contains(&w.kind) {
        return Err(l.error_at(
            &key!["workload", i, "kind"],
            format!(
                "kind = \"{}\" runs on mariadb and postgres; a sqlite target runs sqlsuite and replay",
                w.kind.as_str()
            ),
        ));
    }
    if fits {
        return Ok(());
    }
    let want = if SQLITE_WORKLOADS.contains(&w.kind) {
        "a mariadb, postgres or sqlite target"
    } else if w.kind.is_sql() {
        "a mariadb or postgres target"
    } else {
        "a memcached target"
    };
    Err(l.error_at(
        &key!["workload", i, "kind"],
        format!(
            "{} {} workload needs {want}, but [target] kind is {}; change one of them",
            if w.kind == WorkloadKind::Oltp {
                "an"
            } else {
                "a"
            },
            w.kind.as_str(),
            kind.as_str()
        ),
    ))
}

/// connections and client_threads, for every kind.
pub(crate) fn check_connections(l: &Loaded, i: usize, w: &Workload) -> Check {
    let at = |k: &'static str| key!["workload", i, k];
    let conns = w.connections_swept();
    let field = if w.concurrency.is_some() {
        "concurrency"
    } else {
        "connections"
    };
    if conns.is_empty() {
        return Err(l.error_at(
            &at(field),
            "connections is empty; give at least one, e.g. [1, 16, 64]",
        ));
    }
    let terminals = w.kind == WorkloadKind::Tpcc && w.think == Some(ThinkMode::Spec);
    if let Some(c) = conns.iter().find(|c| !(1..=MAX_CONNECTIONS).contains(*c)) {
        if terminals {
            return Err(l.error_at(
                &at("warehouses"),
                format!(
                    "with think = \"spec\" each warehouse has {TERMINALS_PER_WAREHOUSE} terminals (connections), so warehouses must be at most {}",
                    MAX_CONNECTIONS / TERMINALS_PER_WAREHOUSE
                ),
            ));
        }
        return Err(l.error_at(
            &at(field),
            format!("{field} must be 1..={MAX_CONNECTIONS}, got {c}"),
        ));
    }
    if conns.len() > MAX_SWEEP_POINTS {
        return Err(l.error_at(
            &at(field),
            format!(
                "{field} has {} points; a sweep takes at most {MAX_SWEEP_POINTS}",
                conns.len()
            ),
        ));
    }
    let mut seen = BTreeSet::new();
    if let Some(c) = conns.iter().find(|c| !seen.insert(**c)) {
        return Err(l.error_at(
            &at(field),
            format!("{field} lists {c} twice; each point of a sweep once"),
        ));
    }
    let min_conns = conns.iter().copied().min().unwrap_or(1);
    let Some(threads) = w.client_threads else {
        return Ok(());
    };
    range(
        l,
        &at("client_threads"),
        threads as f64,
        1.0,
        64.0,
        "client_threads",
    )?;
    if threads > min_conns {
        return Err(l.error_at(
            &at("client_threads"),
            format!("client_threads ({threads}) exceeds the smallest connections value ({min_conns}); lower it"),
        ));
    }
    Ok(())
}
