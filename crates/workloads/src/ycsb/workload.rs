//! ycsb as a [`Workload`]: its keys (checked where the file is read, [`super::check`])
//! and the target's protocol become a run over the load engine (memcached, Redis: every
//! record preloaded in the engine's preload phase, as kv) or over the SQL driver (the
//! usertable loaded once per variant through [`Tables`], copied per run, as oltp).

use super::gen::{Chooser, Inserts};
use super::{kvs, sql, Config, Protocol, YcsbKeys};
use crate::workload::{sql_figures, AgentSpec, Cells, Outcome, RunContext, Tables, Workload};
use bakeoff_engine::{Phases, RunRecord, Schedule, Settings};
use bakeoff_report::model::Run;
use bakeoff_sqlclient::driver::Drive;
use std::sync::Arc;

/// A ycsb workload of the experiment.
pub struct Ycsb {
    cells: Cells,
    keys: YcsbKeys,
    protocol: Protocol,
    cfg: Config,
    /// memcached and Redis: set every record before the warmup.
    preload: bool,
}

impl Ycsb {
    /// The workload named `name` from its keys (checked already) for a target speaking
    /// `protocol` ([`Protocol::for_target`]).
    pub fn new(name: String, keys: &YcsbKeys, protocol: Protocol) -> Ycsb {
        Ycsb {
            cells: Cells {
                name,
                connections: keys.connections.to_vec(),
            },
            keys: keys.clone(),
            protocol,
            cfg: Config::from_keys(keys),
            preload: protocol != Protocol::Sql,
        }
    }

    /// [`Workload::agent_spec`] read back on an agent.
    pub fn from_agent(spec: &serde_json::Value) -> Result<Ycsb, String> {
        let keys: YcsbKeys =
            serde_json::from_value(spec["keys"].clone()).map_err(|e| format!("ycsb keys: {e}"))?;
        let protocol: Protocol = serde_json::from_value(spec["protocol"].clone())
            .map_err(|e| format!("ycsb protocol: {e}"))?;
        let name = spec["name"].as_str().unwrap_or("ycsb").to_string();
        Ok(Ycsb::new(name, &keys, protocol))
    }

    /// The same workload without (or with only) the preload (memcached, Redis).
    pub fn with_preload(mut self, preload: bool) -> Ycsb {
        self.preload = preload && self.protocol != Protocol::Sql;
        self
    }

    pub fn config(&self) -> &Config {
        &self.cfg
    }

    fn run_kv(&self, ctx: &RunContext, phases: &Phases) -> Result<Outcome, String> {
        let resp = self.protocol == Protocol::Resp;
        let asked = self
            .keys
            .client_threads
            .unwrap_or(bakeoff_engine::AUTO_THREADS);
        let factory = kvs::Factory {
            plan: Arc::new(kvs::Plan::new(&self.cfg, resp)),
            inserts: Arc::new(Inserts::new(self.cfg.records)),
            chooser: Chooser::new(self.cfg.distribution, self.cfg.records),
        };
        let settings = Settings {
            connections: ctx.connections,
            threads: bakeoff_engine::event_loops_for(asked, ctx.connections, ctx.load_cpus),
            // YCSB's client threads are synchronous: one request in flight each.
            schedule: Schedule::ClosedLoop { pipeline: 1 },
            phases: *phases,
            seed: ctx.seed,
            preload: self.preload,
        };
        let addr = ctx.server.addr;
        let run = |hooks: &dyn bakeoff_engine::PhaseHooks| {
            bakeoff_engine::run(addr, &factory, &settings, hooks, ctx.live, ctx.cancel)
        };
        if resp {
            crate::redis_info::around(addr, ctx.hooks, run)
        } else {
            run(ctx.hooks)
                .map(Outcome::plain)
                .map_err(|e| e.to_string())
        }
    }

    fn run_sql(&self, ctx: &RunContext, phases: &Phases) -> Result<Outcome, String> {
        let db = ctx.server.db()?;
        let asked = self
            .keys
            .client_threads
            .unwrap_or(bakeoff_engine::AUTO_THREADS);
        let threads =
            bakeoff_sqlclient::driver::client_threads_for(asked, ctx.connections, ctx.load_cpus);
        let rec = sql::run(
            &db,
            &self.cfg,
            ctx.connections,
            threads,
            ctx.seed,
            &Drive {
                phases,
                ..ctx.drive()
            },
        )
        .map_err(|e| e.to_string())?;
        let extra = self.merged(&rec);
        Ok(Outcome { rec, extra })
    }
}

impl Workload for Ycsb {
    fn cells(&self) -> &Cells {
        &self.cells
    }

    fn sql(&self) -> bool {
        self.protocol == Protocol::Sql
    }

    fn tables(&self, engine: Option<&str>) -> Option<Box<dyn Tables>> {
        (self.protocol == Protocol::Sql).then(|| {
            Box::new(sql::UserTable {
                cfg: self.cfg.clone(),
                engine: engine.map(str::to_string),
            }) as Box<dyn Tables>
        })
    }

    /// Reads, read-modify-writes and scans of records the load wrote (SQL's tables, the
    /// preload of memcached and Redis).
    fn expected_hits(&self, rec: &RunRecord) -> Option<u64> {
        let count = |c: &str| rec.by_command.get(c).copied().unwrap_or(0);
        (self.preload || self.protocol == Protocol::Sql)
            .then(|| count("read") + count("read_modify_write") + count("scan"))
    }

    fn run(&self, ctx: &RunContext) -> Result<Outcome, String> {
        match self.protocol {
            Protocol::Sql => self.run_sql(ctx, ctx.phases),
            Protocol::Memcached | Protocol::Resp => self.run_kv(ctx, ctx.phases),
        }
    }

    /// Rebuilt by [`Ycsb::from_agent`] (the protocol travels with the keys). With several
    /// client hosts each host counts its own inserts from `records`, so in D and E the
    /// hosts insert the same key numbers (memcached and SQL count the duplicates as
    /// errors) and `latest` follows only the host's own inserts.
    fn agent_spec(&self) -> Option<AgentSpec> {
        Some(AgentSpec {
            spec: serde_json::json!({
                "kind": "ycsb",
                "name": self.cells.name,
                "keys": self.keys,
                "protocol": self.protocol,
            }),
            preloads: self.preload,
        })
    }

    fn merged(&self, rec: &RunRecord) -> Box<dyn FnOnce(&mut Run) + Send> {
        if self.protocol != Protocol::Sql {
            return Box::new(|_| {});
        }
        let figures = rec.clone();
        Box::new(move |run| sql_figures(run, &figures, false))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ycsb::CoreWorkload;

    #[test]
    fn agent_spec_rebuilds_the_same_workload() {
        let keys = YcsbKeys {
            workload: CoreWorkload::E,
            records: 500,
            connections: bakeoff_plan::OneOrMany::Many(vec![2, 8]),
            ..YcsbKeys::default()
        };
        for protocol in [Protocol::Memcached, Protocol::Resp, Protocol::Sql] {
            let w = Ycsb::new("y".into(), &keys, protocol);
            let spec = w.agent_spec().unwrap();
            assert_eq!(spec.preloads, protocol != Protocol::Sql);
            let back = Ycsb::from_agent(&spec.spec).unwrap();
            assert_eq!((back.name(), back.connections()), ("y", &[2, 8][..]));
            assert_eq!((back.protocol, back.config()), (protocol, w.config()));
            assert_eq!(back.sql(), protocol == Protocol::Sql);
            assert_eq!(back.tables(None).is_some(), protocol == Protocol::Sql);
        }
        assert!(Ycsb::from_agent(&serde_json::json!({"keys": {}})).is_err());
    }

    #[test]
    fn the_protocol_follows_the_target() {
        use bakeoff_sandbox::Protocol as P;
        assert_eq!(Protocol::for_target(P::Resp), Protocol::Resp);
        assert!(!Protocol::for_target(P::Memcached).scans());
        assert_eq!(Protocol::for_target(P::Sql), Protocol::Sql);
    }
}
