//! oltp and sysbench as a [`Workload`]: the plan's keys (sysbench's names and defaults)
//! become an [`OltpConfig`]; the tables are sysbench's sbtest tables; a run goes through
//! bakeoff's own clients (`oltp`) or the real sysbench (`sysbench`), with the same
//! parameters.

use super::kind::{OltpKeys, RowDistribution};
use super::{Distribution, OltpConfig, OltpTest};
use crate::workload::{
    invalidate, sql_figures, with_engine, AgentSpec, Cells, Outcome, RunContext, Tables, Workload,
};
use bakeoff_engine::{RunRecord, AUTO_THREADS};
use bakeoff_report::model::Run;
use bakeoff_sqlclient::{driver, Db};

/// What sends the transactions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Sender {
    /// bakeoff's own lean wire clients.
    #[default]
    Native,
    /// The real sysbench, its output parsed.
    Sysbench,
}

/// An oltp or sysbench workload of the experiment.
pub struct Oltp {
    cells: Cells,
    cfg: OltpConfig,
    sender: Sender,
    /// The plan's keys, as an agent on another host rebuilds the workload from them.
    keys: OltpKeys,
}

impl Oltp {
    /// The `[[workload]]` `w` with its keys `k`, sent by `sender`.
    pub fn from_plan(w: &bakeoff_plan::Workload, k: &OltpKeys, sender: Sender) -> Oltp {
        Oltp {
            cells: Cells::of(w),
            cfg: config(k),
            sender,
            keys: k.clone(),
        }
    }

    /// The oltp workload an agent runs from its [`Workload::agent_spec`].
    pub fn from_agent(spec: &serde_json::Value) -> Result<Oltp, String> {
        let keys: OltpKeys =
            serde_json::from_value(spec["keys"].clone()).map_err(|e| format!("oltp keys: {e}"))?;
        Ok(Oltp {
            cells: Cells {
                name: spec["name"].as_str().unwrap_or("oltp").to_string(),
                connections: keys.connections.to_vec(),
            },
            cfg: config(&keys),
            sender: Sender::Native,
            keys,
        })
    }

    fn for_engine(&self, engine: Option<&str>) -> OltpConfig {
        with_engine(&self.cfg, engine, |c| &mut c.engine)
    }
}

impl Workload for Oltp {
    fn cells(&self) -> &Cells {
        &self.cells
    }

    fn tables(&self, engine: Option<&str>) -> Option<Box<dyn Tables>> {
        Some(Box::new(SbTables(self.for_engine(engine))))
    }

    fn run(&self, ctx: &RunContext) -> Result<Outcome, String> {
        let mut cfg = self.for_engine(ctx.engine);
        cfg.connections = ctx.connections;
        cfg.rate = ctx.rate;
        cfg.client_threads =
            driver::client_threads_for(cfg.client_threads, ctx.connections, ctx.load_cpus);
        let mut db = ctx.server.db()?;
        db.via_socket = cfg.unix_socket;
        let send = match self.sender {
            Sender::Native => super::run,
            Sender::Sysbench => super::sysbench::run,
        };
        let rec = send(&db, &cfg, ctx.seed, &ctx.drive()).map_err(|e| e.to_string())?;
        let extra = figures(&rec, cfg.max_reconnects);
        Ok(Outcome { rec, extra })
    }

    /// bakeoff's own clients run on other hosts too (sysbench would have to be there).
    fn agent_spec(&self) -> Option<AgentSpec> {
        (self.sender == Sender::Native).then(|| AgentSpec {
            spec: serde_json::json!({ "kind": "oltp", "name": self.cells.name, "keys": self.keys }),
            preloads: false,
        })
    }

    fn merged(&self, rec: &RunRecord) -> Box<dyn FnOnce(&mut Run) + Send> {
        figures(rec, self.cfg.max_reconnects)
    }
}

/// What a run adds from its record: the SQL figures, and invalid when more connections
/// were lost than `max` allows.
fn figures(rec: &RunRecord, max: u64) -> Box<dyn FnOnce(&mut Run) + Send> {
    let (reconnects, figures) = (rec.reconnects, rec.clone());
    Box::new(move |run| {
        sql_figures(run, &figures, true);
        if reconnects > max {
            invalidate(
                run,
                format!(
                    "{reconnects} connections lost and reopened (more than max_reconnects = {max})"
                ),
            );
        }
    })
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

    /// An sbtest row (two ints, char(120), char(60)) with its primary key and the index on
    /// k: about 250 bytes in InnoDB and in PostgreSQL.
    fn bytes(&self) -> u64 {
        u64::from(self.0.tables) * self.0.table_size * 250
    }

    fn load(&self, db: &Db) -> Result<(u64, f64), String> {
        super::prepare(db, &self.0)
            .map(|r| (r.rows, r.seconds))
            .map_err(|e| format!("loading the tables failed: {e}"))
    }
}

/// sysbench's defaults (see [`OltpConfig::default`]) under the file's keys.
fn config(k: &OltpKeys) -> OltpConfig {
    let d = OltpConfig::default();
    let distribution = match k.distribution {
        None | Some(RowDistribution::Special) => Distribution::Special {
            pct: k.special_pct,
            res: k.special_res,
            iter: k.gaussian_iter.unwrap_or(12),
        },
        Some(RowDistribution::Uniform) => Distribution::Uniform,
        Some(RowDistribution::Gaussian) => Distribution::Gaussian {
            iter: k.gaussian_iter.unwrap_or(12),
        },
        Some(RowDistribution::Pareto) => Distribution::Pareto {
            h: k.pareto_h.unwrap_or(0.2),
        },
        Some(RowDistribution::Zipfian) => Distribution::Zipfian {
            exp: k.zipfian_exp.unwrap_or(0.8),
        },
    };
    OltpConfig {
        test: k
            .test
            .as_deref()
            .and_then(OltpTest::from_name)
            .unwrap_or(d.test),
        tables: k.tables.unwrap_or(d.tables),
        table_size: k.table_size.unwrap_or(d.table_size),
        point_selects: k.point_selects.unwrap_or(d.point_selects),
        simple_ranges: k.simple_ranges.unwrap_or(d.simple_ranges),
        sum_ranges: k.sum_ranges.unwrap_or(d.sum_ranges),
        order_ranges: k.order_ranges.unwrap_or(d.order_ranges),
        distinct_ranges: k.distinct_ranges.unwrap_or(d.distinct_ranges),
        range_size: k.range_size.unwrap_or(d.range_size),
        index_updates: k.index_updates.unwrap_or(d.index_updates),
        non_index_updates: k.non_index_updates.unwrap_or(d.non_index_updates),
        delete_inserts: k.delete_inserts.unwrap_or(d.delete_inserts),
        random_points: k.random_points.unwrap_or(d.random_points),
        skip_trx: k.skip_trx.unwrap_or(d.skip_trx),
        auto_inc: k.auto_inc.unwrap_or(d.auto_inc),
        secondary: k.secondary.unwrap_or(d.secondary),
        create_secondary: k.create_secondary.unwrap_or(d.create_secondary),
        distribution,
        engine: k.engine.clone(),
        prepared: k.prepared.unwrap_or(d.prepared),
        connections: k.connections.to_vec().first().copied().unwrap_or(1),
        client_threads: k.client_threads.unwrap_or(AUTO_THREADS),
        unix_socket: k.transport == Some(bakeoff_plan::Transport::Unix),
        ignore_errors: k.ignore_errors.clone().unwrap_or(d.ignore_errors),
        max_reconnects: k.max_reconnects.unwrap_or(d.max_reconnects),
        rate: None,
    }
}
