//! kv as a [`Workload`]: the plan's keys become a [`KvConfig`], checked at every connection
//! count of the sweep; a run drives the server's TCP address over the load engine.

use super::kind::{self, Arrival, KvKeys};
use super::{KeyDistribution, KvConfig, Mix, Protocol, ValueSize};
use crate::workload::{AgentSpec, Cells, Outcome, RunContext, Workload};
use bakeoff_engine::{Endpoint, Schedule};
use bakeoff_plan::{key, Loaded};

/// A kv workload of the experiment.
pub struct Kv {
    cells: Cells,
    cfg: KvConfig,
    /// Redis over its unix socket instead of loopback TCP.
    unix_socket: bool,
    /// The plan's keys, for an agent on another host.
    keys: KvKeys,
}

impl Kv {
    /// The `[[workload]]` at index `i`; an error names the key at fault.
    pub fn from_plan(l: &Loaded, i: usize, k: &KvKeys) -> Result<Kv, String> {
        let w = &l.experiment.workloads[i];
        let target = bakeoff_sandbox::target_for(l.experiment.target.kind);
        let kv = Kv::from_keys(w.display_name(), k, target.protocol());
        let cfg = kv.cfg.clone();
        for c in k.connections.to_vec() {
            let mut probe = cfg.clone();
            probe.connections = c;
            probe
                .validate()
                .map_err(|m| l.error_at(&key!["workload", i], m).to_string())?;
        }
        Ok(Kv {
            cells: Cells::of(w),
            ..kv
        })
    }

    /// The workload from its keys alone, as an agent on another host rebuilds it (the
    /// keys were checked where the experiment file was read).
    pub fn from_keys(name: String, k: &KvKeys, target: bakeoff_sandbox::Protocol) -> Kv {
        let protocol = if target == bakeoff_sandbox::Protocol::Resp {
            Protocol::Resp
        } else {
            Protocol::Memcached
        };
        Kv {
            cells: Cells {
                name,
                connections: k.connections.to_vec(),
            },
            cfg: config(k, protocol),
            unix_socket: k.transport == Some(bakeoff_plan::Transport::Unix),
            keys: k.clone(),
        }
    }

    /// [`Workload::agent_spec`] read back on the agent.
    pub fn from_agent(
        spec: &serde_json::Value,
        target: bakeoff_sandbox::Protocol,
    ) -> Result<Kv, String> {
        let name = spec["name"].as_str().unwrap_or("kv").to_string();
        let keys: KvKeys =
            serde_json::from_value(spec["keys"].clone()).map_err(|e| format!("kv keys: {e}"))?;
        Ok(Kv::from_keys(name, &keys, target))
    }

    /// The same workload without (or with only) the preload.
    pub fn with_preload(mut self, preload: bool) -> Kv {
        self.cfg.preload = preload;
        self
    }
}

impl Workload for Kv {
    fn cells(&self) -> &Cells {
        &self.cells
    }

    fn sql(&self) -> bool {
        false
    }

    fn agent_spec(&self) -> Option<AgentSpec> {
        Some(AgentSpec {
            spec: serde_json::json!({ "kind": "kv", "name": self.cells.name, "keys": self.keys }),
            preloads: self.cfg.preload,
        })
    }

    /// Gets and multiget keys after the preload wrote every key, when nothing in the mix
    /// removes a key or reads one that only another command writes (delete, incr, lists,
    /// hashes).
    fn expected_hits(&self, rec: &bakeoff_engine::RunRecord) -> Option<u64> {
        let m = &self.cfg.mix;
        let removes = m.delete + m.incr + m.lpush + m.lpop + m.hset + m.hget;
        let count = |c: &str| rec.by_command.get(c).copied().unwrap_or(0);
        (self.cfg.preload && removes == 0)
            .then(|| count("get") + count("multiget") * self.cfg.multiget_keys as u64)
    }

    fn run(&self, ctx: &RunContext) -> Result<Outcome, String> {
        let mut cfg = self.cfg.clone();
        cfg.connections = ctx.connections;
        cfg.client_threads =
            bakeoff_engine::event_loops_for(cfg.client_threads, ctx.connections, ctx.load_cpus);
        if let Some(rate) = ctx.rate {
            cfg.schedule = Schedule::OpenLoop {
                rate,
                poisson: self.keys.arrival == Arrival::Poisson,
            };
        }
        let addr = ctx.server.addr;
        let endpoint = match (&ctx.server.socket, self.unix_socket) {
            (Some(path), true) => Endpoint::Unix(path.clone()),
            (None, true) => return Err("the server has no unix socket".into()),
            _ => Endpoint::Tcp(addr),
        };
        let run = |hooks: &dyn bakeoff_engine::PhaseHooks| {
            super::run(
                endpoint.clone(),
                &cfg,
                ctx.phases,
                ctx.seed,
                hooks,
                ctx.live,
                ctx.cancel,
            )
        };
        match cfg.protocol {
            Protocol::Resp => crate::redis_info::around(addr, ctx.hooks, run),
            Protocol::Memcached => run(ctx.hooks)
                .map(Outcome::plain)
                .map_err(|e| e.to_string()),
        }
    }
}

fn config(k: &KvKeys, protocol: Protocol) -> KvConfig {
    let get = |c: &str| k.mix.get(c).copied().unwrap_or(0);
    KvConfig {
        keys: k.keys,
        key_distribution: match k.key_distribution {
            kind::KeyDistribution::Uniform => KeyDistribution::Uniform,
            kind::KeyDistribution::Zipfian => KeyDistribution::Zipfian {
                theta: k.zipf_theta,
            },
            kind::KeyDistribution::Special => KeyDistribution::Special {
                pct: k.special_pct,
                res: k.special_res,
            },
        },
        value_size: match k.value_size {
            kind::ValueSize::Fixed(n) => ValueSize::Fixed(n),
            kind::ValueSize::Around { mean } => ValueSize::Around { mean },
        },
        mix: Mix {
            get: get("get"),
            set: get("set"),
            add: get("add"),
            delete: get("delete"),
            multiget: get("multiget"),
            incr: get("incr"),
            lpush: get("lpush"),
            lpop: get("lpop"),
            hset: get("hset"),
            hget: get("hget"),
        },
        multiget_keys: k.multiget_keys,
        connections: k.connections.to_vec().first().copied().unwrap_or(1),
        client_threads: k.client_threads.unwrap_or(bakeoff_engine::AUTO_THREADS),
        schedule: match k.rate {
            Some(rate) => Schedule::OpenLoop {
                rate,
                poisson: k.arrival == Arrival::Poisson,
            },
            None => Schedule::ClosedLoop {
                pipeline: k.pipeline,
            },
        },
        preload: k.preload,
        protocol,
    }
}
