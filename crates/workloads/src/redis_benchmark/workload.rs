//! redis-benchmark as a [`Workload`]: the plan's keys become a [`Config`]; a run drives
//! the sandbox's TCP address.

use super::Config;
use crate::workload::{Cells, Outcome, RunContext, Workload};

/// A redis-benchmark workload of the experiment.
pub struct RedisBenchmark {
    cells: Cells,
    cfg: Config,
}

impl RedisBenchmark {
    /// The `[[workload]]` `w` with its keys `k`.
    pub fn from_plan(w: &bakeoff_plan::Workload, k: &super::RedisBenchmarkKeys) -> Self {
        RedisBenchmark {
            cells: Cells::of(w),
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
    fn cells(&self) -> &Cells {
        &self.cells
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
