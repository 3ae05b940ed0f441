//! tpcb as a [`Workload`]: the pgbench tables loaded once per variant ([`Accounts`]),
//! each run the script over the SQL driver, then the balance check on the tables the run
//! left.

use super::records::{TpcbCell, TpcbRun};
use super::{check_balances, run, Accounts, Config, TpcbKeys};
use crate::workload::{
    invalidate, sql_figures, with_engine, Cells, Outcome, RunContext, Tables, Workload,
};
use bakeoff_report::figures::{CellFigures, RunFigures};
use bakeoff_report::model::Cell;

/// A tpcb workload of the experiment.
pub struct Tpcb {
    cells: Cells,
    client_threads: usize,
    cfg: Config,
}

impl Tpcb {
    /// The workload named `name` from its keys (checked already).
    pub fn new(name: String, k: &TpcbKeys) -> Tpcb {
        Tpcb {
            cells: Cells {
                name,
                connections: k.connections.to_vec(),
            },
            client_threads: k.client_threads.unwrap_or(bakeoff_engine::AUTO_THREADS),
            cfg: Config {
                scale: k.scale.unwrap_or(1),
                builtin: k.script(),
                engine: k.engine.clone(),
            },
        }
    }

    pub fn config(&self) -> &Config {
        &self.cfg
    }
}

impl Workload for Tpcb {
    fn cells(&self) -> &Cells {
        &self.cells
    }

    fn tables(&self, engine: Option<&str>) -> Option<Box<dyn Tables>> {
        Some(Box::new(Accounts(with_engine(&self.cfg, engine, |c| {
            &mut c.engine
        }))))
    }

    fn run(&self, ctx: &RunContext) -> Result<Outcome, String> {
        let db = ctx.server.db()?;
        let threads = bakeoff_sqlclient::driver::client_threads_for(
            self.client_threads,
            ctx.connections,
            ctx.load_cpus,
        );
        let rec = run(
            &db,
            &self.cfg,
            ctx.connections,
            threads,
            ctx.seed,
            &ctx.drive(),
        )
        .map_err(|e| e.to_string())?;
        let checked = bakeoff_sqlclient::driver::runtime()
            .map_err(|e| e.to_string())
            .and_then(|rt| {
                rt.block_on(check_balances(&db, self.cfg.builtin))
                    .map_err(|e| e.message)
            });
        let counted = rec.clone();
        let mut own = TpcbRun {
            scale: Some(self.cfg.scale),
            builtin: Some(self.cfg.builtin.name().into()),
            ..TpcbRun::default()
        };
        Ok(Outcome {
            rec,
            extra: Box::new(move |run| {
                sql_figures(run, &counted, true);
                let why = match checked {
                    Ok(v) if v.is_empty() => None,
                    Ok(v) => Some(v),
                    Err(e) => Some(vec![format!("the check could not run: {e}")]),
                };
                own.balances = Some(if why.is_none() { "pass" } else { "fail" }.into());
                if let Some(v) = why {
                    invalidate(run, format!("pgbench balances do not add up: {}", v[0]));
                    own.balance_violations = v;
                }
                own.put(run);
            }),
        })
    }

    fn plan_cell(&self, cell: &mut Cell) {
        TpcbCell {
            workload: self.cells.name.clone(),
            scale: self.cfg.scale,
            builtin: self.cfg.builtin.name().into(),
            ..TpcbCell::default()
        }
        .put(cell);
    }
}
