//! redis-benchmark as a [`Workload`]: the plan's keys become a [`Config`]; a run drives
//! the sandbox's TCP address.

use super::Config;
use crate::workload::{Outcome, RunContext, Workload};

/// A redis-benchmark workload of the experiment.
pub struct RedisBenchmark {
    name: String,
    connections: Vec<usize>,
    cfg: Config,
}

impl RedisBenchmark {
    /// The `[[workload]]` `w` with its keys `k`.
    pub fn from_plan(w: &bakeoff_plan::Workload, k: &super::RedisBenchmarkKeys) -> Self {
        RedisBenchmark {
            name: w.display_name(),
            connections: w.connections_swept(),
            cfg: Config {
                connections: 1,
                pipeline: k.pipeline,
                tests: k.test_list(),
                keys: k.keys,
                value_size: k.value_size,
            },
        }
    }
}

impl Workload for RedisBenchmark {
    fn name(&self) -> &str {
        &self.name
    }

    fn connections(&self) -> &[usize] {
        &self.connections
    }

    fn sql(&self) -> bool {
        false
    }

    fn run(&self, ctx: &RunContext) -> Result<Outcome, String> {
        let mut cfg = self.cfg.clone();
        cfg.connections = ctx.connections;
        let addr = ctx.server.addr;
        crate::redis_info::around(addr, ctx.hooks, |hooks| {
            super::run(addr, &cfg, ctx.phases, hooks, ctx.live, ctx.cancel)
        })
    }
}
