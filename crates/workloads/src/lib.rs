//! bakeoff-workloads: what is sent to the server, one folder (or file) per workload kind,
//! each behind the [`Workload`] trait (`workload.rs`): `kv` (a key-value load over the
//! load engine in memcached's text protocol or Redis's RESP, seeded key and value
//! generators, every value read back checked; Redis's memory from INFO, `redis_info.rs`),
//! `ycsb` (the YCSB core workloads A-F on key-value and SQL targets), `oltp` (sysbench's
//! OLTP schema and tests over bakeoff's own lean SQL clients), `tpcc` (TPC-C from the
//! specification), `replay` (query logs at several concurrencies), `sqlsuite`
//! (sql-bench-style named operations), `tpcb` (pgbench's TPC-B-like scripts over
//! bakeoff's own SQL clients), `tpch` (analytic queries derived from TPC-H: 22 queries
//! over generated tables, answers and plans compared). Beside the native kinds, the tools users already
//! trust run as kinds of their own through `tool.rs` (child processes in their own
//! process group): `sysbench`, `mysqlslap` (MariaDB's mariadb-slap on a replay's
//! queries), `sqlbench` (the Perl sql-bench from MariaDB's source) and
//! `redis-benchmark`. `verify` hashes query results for result equivalence. The SQL kinds
//! talk to their servers through `bakeoff-sqlclient` (lean wire clients and the shared
//! driver).
//!
//! Every kind is listed once, in [`KINDS`] (here: lib.rs is the one module that names the
//! kinds), behind the [`Kind`] trait (`kinds.rs`): the plan reads a file with that
//! registry; [`from_plan`] asks each `[[workload]]`'s kind for its workloads;
//! [`summarize`] and [`warnings`] ask every kind for its statistics over saved results.
//! Kinds import no kinds: what they share is in `shared/` and the modules beside the
//! kind folders, or in a crate below (docs/ARCHITECTURE.md, "Shared load services").

mod kinds;
pub mod kv;
pub mod oltp;
pub mod redis_benchmark;
pub mod redis_info;
pub mod replay;
pub mod shared;
pub mod sqlbench;
pub mod sqlsuite;
mod tool;
pub mod tpcb;
pub mod tpcc;
pub mod tpch;
pub mod verify;
pub mod workload;
pub mod ycsb;

pub use workload::{
    AgentSpec, Cells, Outcome, QuerySet, RunContext, Server, Tables, Workload, MISS_SHARE,
};

pub use kinds::{Kind, Registry};

/// Every workload kind, in the order help texts list them.
pub static KINDS: Registry = Registry(&[
    &kv::KvKind,
    &oltp::OLTP,
    &oltp::SYSBENCH,
    &tpcc::TpccKind,
    &replay::REPLAY,
    &replay::MYSQLSLAP,
    &sqlsuite::SuiteKind,
    &sqlbench::SqlBenchKind,
    &redis_benchmark::RedisBenchmarkKind,
    &ycsb::YcsbKind,
    &tpcb::TpcbKind,
    &tpch::TpchKind,
]);

use bakeoff_plan::Loaded;
use bakeoff_report::model::Results;

/// The experiment's workloads, in file order (a tpcc warehouse sweep as one per W), each
/// made by its kind with what the file alone could not check: settings that must hold
/// together, tools a kind runs installed, log files parsed. An error is one line naming
/// the file, key and fix.
pub fn from_plan(l: &Loaded) -> Result<Vec<Box<dyn Workload>>, String> {
    let mut out = Vec::new();
    for (i, w) in l.experiment.workloads.iter().enumerate() {
        let kind = KINDS
            .kind(w.kind.name())
            .ok_or_else(|| format!("no workload kind {:?}", w.kind.name()))?;
        out.extend(kind.workloads(l, i)?);
    }
    Ok(out)
}

/// A workload rebuilt on an agent from its [`Workload::agent_spec`]; `preload_only`: a
/// run that only sets every key (the first host's, before the measured load).
pub fn for_agent(
    spec: &serde_json::Value,
    target: bakeoff_plan::TargetKind,
    preload_only: bool,
) -> Result<Box<dyn Workload>, String> {
    let name = spec["kind"].as_str().unwrap_or_default();
    match KINDS.kind(name) {
        Some(kind) => kind.for_agent(&kinds::AgentAsk {
            spec,
            target: &*bakeoff_sandbox::target_for(target),
            preload_only,
        }),
        None => Err(format!("this agent cannot run a {name:?} workload")),
    }
}

/// Every kind's own figures over the cells' saved runs (tpcc's NOTPM and response-time
/// check, sqlsuite's per-group and per-operation times). Pure: results in, results out.
pub fn summarize(r: &mut Results) {
    for kind in KINDS.all() {
        kind.summarize(r);
    }
}

/// A `[verify] queries` file (statements ended by `;`, read as a replay's SQL file) as
/// the query set result verification runs on every variant.
pub fn query_file(text: &str) -> Result<Box<dyn QuerySet>, String> {
    let statements = replay::parse(text, replay::LogFormat::SqlFile).map_err(|e| e.to_string())?;
    Ok(Box::new(replay::Statements(statements)))
}

/// What a reader must see first about a kind's cells.
pub fn warnings(r: &Results) -> Vec<String> {
    KINDS.all().iter().flat_map(|k| k.warnings(r)).collect()
}
