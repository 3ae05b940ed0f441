//! Each workload kind's keys (a struct per kind) and their checks, one file per kind; here
//! what every kind shares: reading a `[[workload]]` table once its kind is known, the keys
//! a kind takes (its struct's fields), the target it fits, connections, and the one match
//! that picks a kind's struct and checks.

mod kv;
mod oltp;
mod redis_benchmark;
mod replay;
mod sqlsuite;
mod tpcc;

pub use kv::KvKeys;
pub use oltp::OltpKeys;
pub use redis_benchmark::RedisBenchmarkKeys;
pub use replay::ReplayKeys;
pub use sqlsuite::SuiteKeys;
pub use tpcc::TpccKeys;

use crate::document::Loaded;
use crate::experiment::{
    Experiment, OneOrMany, TargetKind, ThinkMode, Workload, WorkloadHead, WorkloadKeys,
    WorkloadKind,
};
use crate::validate::{range, Check, MAX_SWEEP_POINTS};
use crate::{key, MAX_CONNECTIONS, TERMINALS_PER_WAREHOUSE};
use serde::de::{DeserializeOwned, IntoDeserializer};
use serde::Deserialize;
use std::collections::BTreeSet;

/// Reads one `[[workload]]` table: its kind and name, then the kind's keys into the kind's
/// struct. Read from the document (not through serde's flattening), so an error keeps the
/// span of the value at fault.
pub(crate) fn read(table: toml_edit::Value) -> Result<Workload, toml_edit::de::Error> {
    let head = WorkloadHead::deserialize(table.clone().into_deserializer())?;
    let d = table.into_deserializer();
    let keys = match head.kind {
        WorkloadKind::Kv => WorkloadKeys::Kv(KvKeys::deserialize(d)?),
        WorkloadKind::Oltp | WorkloadKind::Sysbench => {
            WorkloadKeys::Oltp(OltpKeys::deserialize(d)?)
        }
        WorkloadKind::Tpcc => WorkloadKeys::Tpcc(TpccKeys::deserialize(d)?),
        WorkloadKind::Replay | WorkloadKind::Mysqlslap => {
            WorkloadKeys::Replay(ReplayKeys::deserialize(d)?)
        }
        WorkloadKind::Sqlsuite => WorkloadKeys::Sqlsuite(SuiteKeys::deserialize(d)?),
        WorkloadKind::RedisBenchmark => {
            WorkloadKeys::RedisBenchmark(RedisBenchmarkKeys::deserialize(d)?)
        }
    };
    Ok(Workload {
        kind: head.kind,
        name: head.name,
        keys,
        train_only: head.train_only,
        clients: head.clients,
    })
}

/// The keys each workload kind takes (besides `kind` and `name`): its struct's fields.
pub fn workload_keys(kind: WorkloadKind) -> Vec<&'static str> {
    let fields = match kind {
        WorkloadKind::Kv => fields_of::<KvKeys>(),
        WorkloadKind::Oltp | WorkloadKind::Sysbench => fields_of::<OltpKeys>(),
        WorkloadKind::Tpcc => fields_of::<TpccKeys>(),
        WorkloadKind::Replay | WorkloadKind::Mysqlslap => fields_of::<ReplayKeys>(),
        WorkloadKind::Sqlsuite => fields_of::<SuiteKeys>(),
        WorkloadKind::RedisBenchmark => fields_of::<RedisBenchmarkKeys>(),
    };
    fields
        .iter()
        .copied()
        .filter(|k| kind != WorkloadKind::Mysqlslap || !replay::NOT_MYSQLSLAP.contains(k))
        .collect()
}

/// A struct's field names, as its derived `Deserialize` states them: one list, so the keys
/// a kind accepts can never drift from the keys it reads.
fn fields_of<T: DeserializeOwned>() -> &'static [&'static str] {
    struct Probe(&'static [&'static str]);
    #[derive(Debug)]
    struct Stop;
    impl std::fmt::Display for Stop {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("fields read")
        }
    }
    impl std::error::Error for Stop {}
    impl serde::de::Error for Stop {
        fn custom<M: std::fmt::Display>(_: M) -> Self {
            Stop
        }
    }
    impl<'de> serde::Deserializer<'de> for &mut Probe {
        type Error = Stop;
        fn deserialize_any<V: serde::de::Visitor<'de>>(self, _: V) -> Result<V::Value, Stop> {
            Err(Stop)
        }
        fn deserialize_struct<V: serde::de::Visitor<'de>>(
            self,
            _: &'static str,
            fields: &'static [&'static str],
            _: V,
        ) -> Result<V::Value, Stop> {
            self.0 = fields;
            Err(Stop)
        }
        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes
            byte_buf option unit unit_struct newtype_struct seq tuple tuple_struct map enum
            identifier ignored_any
        }
    }
    let mut probe = Probe(&[]);
    let _ = T::deserialize(&mut probe);
    probe.0
}

impl Workload {
    /// The name results use for this workload.
    pub fn display_name(&self) -> String {
        self.name
            .clone()
            .unwrap_or_else(|| self.kind.as_str().to_string())
    }

    pub fn kv(&self) -> Option<&KvKeys> {
        match &self.keys {
            WorkloadKeys::Kv(k) => Some(k),
            _ => None,
        }
    }

    pub fn oltp(&self) -> Option<&OltpKeys> {
        match &self.keys {
            WorkloadKeys::Oltp(k) => Some(k),
            _ => None,
        }
    }

    pub fn tpcc(&self) -> Option<&TpccKeys> {
        match &self.keys {
            WorkloadKeys::Tpcc(k) => Some(k),
            _ => None,
        }
    }

    pub fn replay(&self) -> Option<&ReplayKeys> {
        match &self.keys {
            WorkloadKeys::Replay(k) => Some(k),
            _ => None,
        }
    }

    pub fn redis_benchmark(&self) -> Option<&RedisBenchmarkKeys> {
        match &self.keys {
            WorkloadKeys::RedisBenchmark(k) => Some(k),
            _ => None,
        }
    }

    pub fn sqlsuite(&self) -> Option<&SuiteKeys> {
        match &self.keys {
            WorkloadKeys::Sqlsuite(k) => Some(k),
            _ => None,
        }
    }

    /// The connection counts this workload opens at each point of its sweep: replay's
    /// concurrency, sqlsuite's one, tpcc's 10 terminals per warehouse with spec think times.
    pub fn connections_swept(&self) -> Vec<usize> {
        match &self.keys {
            WorkloadKeys::Kv(k) => k.connections.to_vec(),
            WorkloadKeys::Oltp(k) => k.connections.to_vec(),
            WorkloadKeys::Tpcc(k) if k.think == Some(ThinkMode::Spec) => k
                .warehouses_swept()
                .into_iter()
                .map(|w| w.saturating_mul(TERMINALS_PER_WAREHOUSE))
                .collect(),
            WorkloadKeys::Tpcc(k) => k.connections.to_vec(),
            WorkloadKeys::Replay(k) => k
                .concurrency
                .as_ref()
                .map_or_else(|| vec![1], OneOrMany::to_vec),
            WorkloadKeys::Sqlsuite(_) => vec![1],
            WorkloadKeys::RedisBenchmark(k) => k.connections.to_vec(),
        }
    }

    /// The key that sets the connections (`concurrency` for replay and mysqlslap).
    fn connections_key(&self) -> &'static str {
        match &self.keys {
            WorkloadKeys::Replay(_) => "concurrency",
            _ => "connections",
        }
    }

    /// Client threads, where the kind takes them.
    fn client_threads(&self) -> Option<usize> {
        match &self.keys {
            WorkloadKeys::Kv(k) => k.client_threads,
            WorkloadKeys::Oltp(k) => k.client_threads,
            WorkloadKeys::Tpcc(k) => k.client_threads,
            WorkloadKeys::Replay(k) => k.client_threads,
            WorkloadKeys::Sqlsuite(_) | WorkloadKeys::RedisBenchmark(_) => None,
        }
    }
}

/// Workload `i`'s keys: those every kind shares, then its kind's own.
pub(crate) fn check(l: &Loaded, e: &Experiment, i: usize, w: &Workload) -> Check {
    check_workload_keys(l, i, w)?;
    check_workload_target(l, e, i, w)?;
    check_connections(l, i, w)?;
    match &w.keys {
        WorkloadKeys::Kv(k) => kv::check_kv(l, e, i, k),
        WorkloadKeys::Oltp(k) => oltp::check_sql(l, e, i, w.kind, k),
        WorkloadKeys::Tpcc(k) => tpcc::check_tpcc(l, e, i, k),
        WorkloadKeys::Replay(k) => replay::check_replay(l, e, i, w.kind, k),
        WorkloadKeys::Sqlsuite(k) => sqlsuite::check_sqlsuite(l, e, i, k),
        WorkloadKeys::RedisBenchmark(k) => redis_benchmark::check(l, e, i, k),
    }
}

/// Each kind takes its own keys: a kv key in an oltp workload is a mistake, not a default.
pub(crate) fn check_workload_keys(l: &Loaded, i: usize, w: &Workload) -> Check {
    let allowed = workload_keys(w.kind);
    for k in l.keys_in(&key!["workload", i]) {
        if ["kind", "name", "train_only", "clients"].contains(&k.as_str())
            || allowed.contains(&k.as_str())
        {
            continue;
        }
        let owner = [WorkloadKind::Kv, WorkloadKind::Oltp, WorkloadKind::Tpcc]
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

/// The targets a workload kind runs on, as the error names them.
fn targets_for(kind: WorkloadKind) -> (&'static [TargetKind], &'static str) {
    use TargetKind::*;
    match kind {
        WorkloadKind::Kv => (&[Memcached, Redis], "a memcached or redis target"),
        WorkloadKind::RedisBenchmark => (&[Redis], "a redis target"),
        // Single-file workloads whose SQL SQLite speaks.
        WorkloadKind::Sqlsuite | WorkloadKind::Replay => (
            &[Mariadb, Postgres, Sqlite],
            "a mariadb, postgres or sqlite target",
        ),
        WorkloadKind::Oltp
        | WorkloadKind::Sysbench
        | WorkloadKind::Tpcc
        | WorkloadKind::Mysqlslap => (&[Mariadb, Postgres], "a mariadb or postgres target"),
    }
}

pub(crate) fn check_workload_target(l: &Loaded, e: &Experiment, i: usize, w: &Workload) -> Check {
    let kind = e.target.kind;
    let (fits, want) = targets_for(w.kind);
    if fits.contains(&kind) {
        return Ok(());
    }
    if kind == TargetKind::Sqlite && w.kind.is_sql() {
        return Err(l.error_at(
            &key!["workload", i, "kind"],
            format!(
                "kind = \"{}\" runs on mariadb and postgres; a sqlite target runs sqlsuite and replay",
                w.kind.as_str()
            ),
        ));
    }
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
    let field = w.connections_key();
    if conns.is_empty() {
        return Err(l.error_at(
            &at(field),
            "connections is empty; give at least one, e.g. [1, 16, 64]",
        ));
    }
    let terminals = w.tpcc().is_some_and(|t| t.think == Some(ThinkMode::Spec));
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
    let Some(threads) = w.client_threads() else {
        return Ok(());
    };
    range(
        l,
        &at("client_threads"),
        threads,
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
