//! bakeoff-workloads: what is sent to the server, one folder (or file) per workload kind,
//! each behind the [`Workload`] trait (`workload.rs`): `kv` (memcached's text protocol
//! over the load engine, seeded key and value generators, every value read back checked),
//! `oltp` (sysbench's OLTP schema and tests over bakeoff's own lean SQL clients; also
//! run by the real `sysbench`), `tpcc` (TPC-C from the specification), `replay` (query
//! logs; also run by Debian's `mysqlslap`), `sqlsuite` (sql-bench-style named
//! operations). `verify` hashes query results for result equivalence. The SQL kinds talk
//! to their servers through `bakeoff-sqlclient` (lean wire clients and the shared driver).
//!
//! [`from_plan`] is the one place a plan's `[[workload]]` becomes workloads;
//! [`summarize`] and [`warnings`] are the kinds' statistics over saved results.

pub mod kv;
pub mod mysqlslap;
pub mod oltp;
pub mod redis_benchmark;
pub mod redis_info;
pub mod replay;
pub mod sqlsuite;
pub mod sysbench;
mod tool;
pub mod tpcc;
pub mod verify;
pub mod workload;

pub use workload::{AgentSpec, Outcome, QuerySet, RunContext, Server, Tables, Workload};

use bakeoff_plan::{key, Loaded, WorkloadKeys, WorkloadKind};
use bakeoff_report::model::Results;

/// The experiment's workloads, in file order (a tpcc warehouse sweep as one per W), with
/// what the file alone could not check: settings that must hold together, tools a kind
/// runs installed, log files parsed. An error is one line naming the file, key and fix.
pub fn from_plan(l: &Loaded) -> Result<Vec<Box<dyn Workload>>, String> {
    let mut out: Vec<Box<dyn Workload>> = Vec::new();
    for (i, w) in l.experiment.workloads.iter().enumerate() {
        let tool = |program: &str, package: &str| {
            if bakeoff_os::path::which(program).is_some() {
                Ok(())
            } else {
                Err(l
                    .error_at(
                        &key!["workload", i, "kind"],
                        format!("{program} is not installed; run scripts/setup.sh (apt-get install {package})"),
                    )
                    .to_string())
            }
        };
        match &w.keys {
            WorkloadKeys::Kv(k) => out.push(Box::new(kv::Kv::from_plan(l, i, k)?)),
            WorkloadKeys::Oltp(k) => {
                let sender = if w.kind == WorkloadKind::Sysbench {
                    tool("sysbench", "sysbench")?;
                    oltp::Sender::Sysbench
                } else {
                    oltp::Sender::Native
                };
                out.push(Box::new(oltp::Oltp::from_plan(w, k, sender)));
            }
            WorkloadKeys::Tpcc(k) => {
                for t in tpcc::Tpcc::from_plan(w, k) {
                    out.push(Box::new(t));
                }
            }
            WorkloadKeys::Replay(k) => {
                let sender = if w.kind == WorkloadKind::Mysqlslap {
                    tool("mariadb-slap", "mariadb-client")?;
                    replay::Sender::Mysqlslap
                } else {
                    replay::Sender::Native
                };
                out.push(Box::new(replay::Replay::from_plan(l, i, k, sender)?));
            }
            WorkloadKeys::Sqlsuite(k) => out.push(Box::new(sqlsuite::Suite::from_plan(w, k))),
            WorkloadKeys::RedisBenchmark(k) => {
                tool("redis-benchmark", "redis-tools")?;
                out.push(Box::new(redis_benchmark::RedisBenchmark::from_plan(w, k)));
            }
        }
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
    match spec["kind"].as_str() {
        Some("kv") => Ok(Box::new(
            kv::Kv::from_agent(spec, target)?.with_preload(preload_only),
        )),
        Some("oltp") => Ok(Box::new(oltp::Oltp::from_agent(spec)?)),
        other => Err(format!("this agent cannot run a {other:?} workload")),
    }
}

/// Every kind's own figures over the cells' saved runs (tpcc's NOTPM and response-time
/// check, sqlsuite's per-group and per-operation times). Pure: results in, results out.
pub fn summarize(r: &mut Results) {
    tpcc::figures::summarize_cells(r);
    sqlsuite::figures::summarize_cells(r);
}

/// What a reader must see first about a kind's cells.
pub fn warnings(r: &Results) -> Vec<String> {
    tpcc::figures::warnings(r)
}
