//! oltp and sysbench as a [`Workload`]: the plan's keys (sysbench's names and defaults)
//! become an [`OltpConfig`]; the tables are sysbench's sbtest tables; a run goes through
//! bakeoff's own clients (`oltp`) or the real sysbench (`sysbench`), with the same
//! parameters.

use super::{Distribution, OltpConfig, OltpTest, AUTO_THREADS};
use crate::workload::{
    invalidate, sql_figures, with_engine, Outcome, RunContext, Tables, Workload,
};
use bakeoff_plan::RowDistribution;
use bakeoff_sqlclient::Db;

/// What sends the transactions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sender {
    /// bakeoff's own lean wire clients.
    Native,
    /// The real sysbench, its output parsed.
    Sysbench,
}

/// An oltp or sysbench workload of the experiment.
pub struct Oltp {
    name: String,
    connections: Vec<usize>,
    cfg: OltpConfig,
    sender: Sender,
}

impl Oltp {
    /// The `[[workload]]` `w`, sent by `sender`.
    pub fn from_plan(w: &bakeoff_plan::Workload, sender: Sender) -> Oltp {
        Oltp {
            name: w.display_name(),
            connections: w.connections_swept(),
            cfg: config(w),
            sender,
        }
    }

    fn for_engine(&self, engine: Option<&str>) -> OltpConfig {
        with_engine(&self.cfg, engine, |c| &mut c.engine)
    }
}

impl Workload for Oltp {
    fn name(&self) -> &str {
        &self.name
    }

    fn connections(&self) -> &[usize] {
        &self.connections
    }

    fn tables(&self, engine: Option<&str>) -> Option<Box<dyn Tables>> {
        Some(Box::new(SbTables(self.for_engine(engine))))
    }

    fn run(&self, ctx: &RunContext) -> Result<Outcome, String> {
        let mut cfg = self.for_engine(ctx.engine);
        cfg.connections = ctx.connections;
        cfg.client_threads = super::client_threads_for(cfg.client_threads, ctx.connections);
        let mut db = ctx.server.db()?;
        db.via_socket = cfg.unix_socket;
        let (phases, seed, hooks, live) = (ctx.phases, ctx.seed, ctx.hooks, ctx.live);
        let rec = match self.sender {
            Sender::Native => super::run(&db, &cfg, phases, seed, hooks, live, ctx.cancel),
            Sender::Sysbench => {
                crate::sysbench::run(&db, &cfg, phases, seed, hooks, live, ctx.cancel)
            }
        }
        .map_err(|e| e.to_string())?;
        let max = cfg.max_reconnects;
        let (reconnects, figures) = (rec.reconnects, rec.clone());
        Ok(Outcome {
            rec,
            extra: Box::new(move |run| {
                sql_figures(run, &figures, true);
                if reconnects > max {
                    invalidate(
                        run,
                        format!("{reconnects} connections lost and reopened (more than max_reconnects = {max})"),
                    );
                }
            }),
        })
    }
}

/// sysbench's sbtest tables.
struct SbTables(OltpConfig);

impl Tables for SbTables {
    fn key(&self) -> String {
        let c = &self.0;
        format!(
            "t{}-n{}-{}-ai{}-sec{}-cs{}",
            c.tables,
            c.table_size,
            c.engine.as_deref().unwrap_or("default"),
            c.auto_inc,
            c.secondary,
            c.create_secondary
        )
    }

    fn describe(&self) -> String {
        format!("{} table(s) x {} rows", self.0.tables, self.0.table_size)
    }

    fn load(&self, db: &Db) -> Result<(u64, f64), String> {
        super::prepare(db, &self.0)
            .map(|r| (r.rows, r.seconds))
            .map_err(|e| format!("loading the tables failed: {e}"))
    }
}

/// sysbench's defaults (see [`OltpConfig::default`]) under the file's keys.
fn config(w: &bakeoff_plan::Workload) -> OltpConfig {
    let d = OltpConfig::default();
    let distribution = match w.distribution {
        None | Some(RowDistribution::Special) => Distribution::Special {
            pct: w.special_pct,
            res: w.special_res,
            iter: w.gaussian_iter.unwrap_or(12),
        },
        Some(RowDistribution::Uniform) => Distribution::Uniform,
        Some(RowDistribution::Gaussian) => Distribution::Gaussian {
            iter: w.gaussian_iter.unwrap_or(12),
        },
        Some(RowDistribution::Pareto) => Distribution::Pareto {
            h: w.pareto_h.unwrap_or(0.2),
        },
        Some(RowDistribution::Zipfian) => Distribution::Zipfian {
            exp: w.zipfian_exp.unwrap_or(0.8),
        },
    };
    OltpConfig {
        test: w
            .test
            .as_deref()
            .and_then(OltpTest::from_name)
            .unwrap_or(d.test),
        tables: w.tables.unwrap_or(d.tables),
        table_size: w.table_size.unwrap_or(d.table_size),
        point_selects: w.point_selects.unwrap_or(d.point_selects),
        simple_ranges: w.simple_ranges.unwrap_or(d.simple_ranges),
        sum_ranges: w.sum_ranges.unwrap_or(d.sum_ranges),
        order_ranges: w.order_ranges.unwrap_or(d.order_ranges),
        distinct_ranges: w.distinct_ranges.unwrap_or(d.distinct_ranges),
        range_size: w.range_size.unwrap_or(d.range_size),
        index_updates: w.index_updates.unwrap_or(d.index_updates),
        non_index_updates: w.non_index_updates.unwrap_or(d.non_index_updates),
        delete_inserts: w.delete_inserts.unwrap_or(d.delete_inserts),
        random_points: w.random_points.unwrap_or(d.random_points),
        skip_trx: w.skip_trx.unwrap_or(d.skip_trx),
        auto_inc: w.auto_inc.unwrap_or(d.auto_inc),
        secondary: w.secondary.unwrap_or(d.secondary),
        create_secondary: w.create_secondary.unwrap_or(d.create_secondary),
        distribution,
        engine: w.engine.clone(),
        prepared: w.prepared.unwrap_or(d.prepared),
        connections: w.connections.to_vec().first().copied().unwrap_or(1),
        client_threads: w.client_threads.unwrap_or(AUTO_THREADS),
        unix_socket: w.transport == Some(bakeoff_plan::Transport::Unix),
        ignore_errors: w.ignore_errors.clone().unwrap_or(d.ignore_errors),
        max_reconnects: w.max_reconnects.unwrap_or(d.max_reconnects),
    }
}
