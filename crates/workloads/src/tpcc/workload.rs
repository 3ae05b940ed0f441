//! tpcc as a [`Workload`]: a warehouse sweep becomes one workload per W (`<name>-w<W>`,
//! each with its own loaded data); a run drives the terminals, then checks the
//! specification's consistency conditions on the server it left, and records NOTPM and
//! the per-kind response times against their limits. A failed or impossible check makes
//! the run invalid.

use super::kind::{ThinkMode, TpccKeys, TERMINALS_PER_WAREHOUSE};
use super::records::{TpccCell, TpccRun, TransactionRecord};
use super::{Mix, Think, TpccConfig, TpccRecord};
use crate::workload::{invalidate, with_engine, Cells, Outcome, RunContext, Tables, Workload};
use bakeoff_report::figures::{CellFigures, RunFigures};
use bakeoff_report::model::{Cell, Results, Run};
use bakeoff_sqlclient::Db;

/// One point of a tpcc workload's warehouse sweep.
pub struct Tpcc {
    cells: Cells,
    cfg: TpccConfig,
    /// The workload's name in the file (the sweep's cells share it).
    workload: String,
    find_max_w: bool,
    unix_socket: bool,
}

impl Tpcc {
    /// The `[[workload]]` at index `i`, one per warehouse count of its sweep.
    pub fn from_plan(w: &bakeoff_plan::Workload, k: &TpccKeys) -> Vec<Tpcc> {
        let mix = if let Some(given) = &k.mix {
            let get = |kind: &str| given.get(kind).copied().unwrap_or(0);
            Mix {
                new_order: get("new_order"),
                payment: get("payment"),
                order_status: get("order_status"),
                delivery: get("delivery"),
                stock_level: get("stock_level"),
            }
        } else {
            Mix::default()
        };
        let spec_think = k.think == Some(ThinkMode::Spec);
        let sweep = k.warehouses_swept();
        let name = w.display_name();
        let d = TpccConfig::default();
        sweep
            .iter()
            .map(|&wh| {
                let connections = if spec_think {
                    vec![wh * TERMINALS_PER_WAREHOUSE]
                } else {
                    k.connections.to_vec()
                };
                let cfg = TpccConfig {
                    warehouses: wh as u32,
                    connections: connections[0],
                    think: if spec_think { Think::Spec } else { Think::None },
                    mix,
                    engine: k.engine.clone(),
                    max_retries: k.max_retries.unwrap_or(d.max_retries),
                    client_threads: k.client_threads.unwrap_or(d.client_threads),
                    load_connections: k.load_connections.unwrap_or(d.load_connections),
                };
                Tpcc {
                    cells: Cells {
                        name: if sweep.len() > 1 {
                            format!("{name}-w{wh}")
                        } else {
                            name.clone()
                        },
                        connections,
                    },
                    cfg,
                    workload: name.clone(),
                    find_max_w: k.find_max_w == Some(true),
                    unix_socket: k.transport == Some(bakeoff_plan::Transport::Unix),
                }
            })
            .collect()
    }

    fn for_engine(&self, engine: Option<&str>) -> TpccConfig {
        with_engine(&self.cfg, engine, |c| &mut c.engine)
    }
}

impl Workload for Tpcc {
    fn cells(&self) -> &Cells {
        &self.cells
    }

    fn tables(&self, engine: Option<&str>) -> Option<Box<dyn Tables>> {
        Some(Box::new(TpccTables(self.for_engine(engine))))
    }

    fn run(&self, ctx: &RunContext) -> Result<Outcome, String> {
        let mut cfg = self.for_engine(ctx.engine);
        cfg.connections = ctx.connections;
        cfg.client_threads = bakeoff_sqlclient::driver::client_threads_for(
            cfg.client_threads,
            ctx.connections,
            ctx.load_cpus,
        );
        let mut db = ctx.server.db()?;
        db.via_socket = self.unix_socket;
        let (rec, figures) =
            super::run(&db, &cfg, ctx.seed, &ctx.drive()).map_err(|e| e.to_string())?;
        // The consistency conditions, on the server the run left behind.
        let checked = consistency(&ctx.server.db(), &cfg);
        let warehouses = cfg.warehouses;
        Ok(Outcome {
            rec,
            extra: Box::new(move |run| record(run, warehouses, &figures, checked)),
        })
    }

    fn plan_cell(&self, cell: &mut Cell) {
        TpccCell {
            workload: self.workload.clone(),
            warehouses: self.cfg.warehouses,
            think: match self.cfg.think {
                Think::None => "none",
                Think::Spec => "spec",
            }
            .into(),
            find_max_w: self.find_max_w,
            ..TpccCell::default()
        }
        .put(cell);
    }

    fn skip(&self, results: &Results, at: usize) -> Option<String> {
        super::figures::beyond_a_failed_w(results, at).then(|| "smallest W failed".into())
    }
}

/// The TPC-C tables at one warehouse count.
struct TpccTables(TpccConfig);

impl Tables for TpccTables {
    fn key(&self) -> String {
        let c = &self.0;
        format!(
            "tpcc-w{}-{}",
            c.warehouses,
            c.engine.as_deref().unwrap_or("default")
        )
    }

    fn describe(&self) -> String {
        format!("TPC-C, {} warehouse(s)", self.0.warehouses)
    }

    /// About 100 MB per warehouse with indexes (the specification's ~500,000 rows).
    fn bytes(&self) -> u64 {
        u64::from(self.0.warehouses) * 100 * 1024 * 1024
    }

    fn load(&self, db: &Db) -> Result<(u64, f64), String> {
        super::load(db, &self.0)
            .map(|r| (r.rows, r.seconds))
            .map_err(|e| format!("loading the TPC-C tables failed: {e}"))
    }
}

/// The violated conditions (Err: the check could not run).
fn consistency(db: &Result<Db, String>, cfg: &TpccConfig) -> Result<Vec<String>, String> {
    let db = db.as_ref().map_err(|e| e.clone())?;
    super::check(db, cfg)
        .map(|vs| {
            vs.into_iter()
                .map(|x| format!("condition {}: {}", x.condition, x.detail))
                .collect()
        })
        .map_err(|e| e.to_string())
}

/// NOTPM, per-kind response times against their limits, and the consistency check, into
/// the run.
fn record(
    run: &mut Run,
    warehouses: u32,
    figures: &TpccRecord,
    checked: Result<Vec<String>, String>,
) {
    let mut t = TpccRun {
        warehouses: Some(warehouses),
        notpm: Some(figures.notpm),
        tpm: Some(figures.tpm),
        ..TpccRun::default()
    };
    t.transactions = figures
        .kinds
        .iter()
        .map(|(k, r)| {
            let ms = |us: f64| us / 1000.0;
            let limit_ms = k.limit_ms();
            let rec = TransactionRecord {
                count: r.count,
                mean_ms: ms(r.latency_us.mean),
                p50_ms: ms(r.latency_us.p50),
                p90_ms: ms(r.latency_us.p90),
                p99_ms: ms(r.latency_us.p99),
                max_ms: ms(r.latency_us.max),
                limit_ms,
                pass: ms(r.latency_us.p90) <= limit_ms,
                rollbacks: r.rollbacks,
                retries: r.retries,
                errors: r.errors,
            };
            (k.name().to_string(), rec)
        })
        .collect();
    t.consistency = Some(if matches!(&checked, Ok(v) if v.is_empty()) {
        "pass".into()
    } else {
        "fail".into()
    });
    match checked {
        Ok(v) if v.is_empty() => {}
        Ok(v) => {
            let more = if v.len() > 1 {
                format!(" (and {} more)", v.len() - 1)
            } else {
                String::new()
            };
            invalidate(
                run,
                format!("TPC-C consistency check failed: {}{more}", v[0]),
            );
            t.consistency_violations = v;
        }
        Err(e) => {
            t.consistency_violations = vec![format!("the check could not run: {e}")];
            invalidate(run, format!("TPC-C consistency check could not run: {e}"));
        }
    }
    t.put(run);
}
