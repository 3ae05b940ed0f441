//! sqlsuite as a [`Workload`]: the suite runs on a fresh database (its groups make and drop
//! their own tables); one run is the whole suite, all of it the measured window, its
//! operations counted as ops over their summed time; as a verification query set it runs
//! at a scale of at most [`VERIFY_SCALE`], every statement's result hashed.

use super::records::{OperationRecord, SuiteRun};
use super::{Group, OpResult, SuiteConfig};
use crate::verify;
use crate::workload::{
    sql_figures, with_engine, Cells, Outcome, QuerySet, RunContext, Script, Tables, Workload,
};
use bakeoff_engine::RunRecord;
use bakeoff_report::figures::RunFigures;
use bakeoff_sqlclient::Db;
use std::sync::atomic::AtomicBool;

/// The largest scale the suite runs at as a query set: the statements have the same
/// shapes at any scale, and verification must stay short beside the measured runs.
pub const VERIFY_SCALE: f64 = 0.05;

/// A sqlsuite workload of the experiment.
pub struct Suite {
    cells: Cells,
    cfg: SuiteConfig,
}

impl Suite {
    /// The `[[workload]]` `w` with its keys `k`.
    pub fn from_plan(w: &bakeoff_plan::Workload, k: &super::SuiteKeys) -> Suite {
        Suite {
            cells: Cells::of(w),
            cfg: SuiteConfig {
                scale: k.scale.unwrap_or(1.0),
                groups: match &k.groups {
                    Some(g) => g.iter().filter_map(|n| Group::from_name(n)).collect(),
                    None => Group::ALL.to_vec(),
                },
                engine: k.engine.clone(),
            },
        }
    }
}

fn for_engine(cfg: &SuiteConfig, engine: Option<&str>) -> SuiteConfig {
    with_engine(cfg, engine, |c| &mut c.engine)
}

impl Workload for Suite {
    fn cells(&self) -> &Cells {
        &self.cells
    }

    fn tables(&self, _engine: Option<&str>) -> Option<Box<dyn Tables>> {
        Some(Box::new(Script::EMPTY))
    }

    fn queries(&self) -> Option<Box<dyn QuerySet>> {
        Some(Box::new(Capture(SuiteConfig {
            scale: self.cfg.scale.min(VERIFY_SCALE),
            ..self.cfg.clone()
        })))
    }

    /// The suite is a fixed amount of work: its length is its own, not the plan's.
    fn fixed_work(&self) -> bool {
        true
    }

    fn run(&self, ctx: &RunContext) -> Result<Outcome, String> {
        let db = ctx.server.db()?;
        let cfg = for_engine(&self.cfg, ctx.engine);
        ctx.hooks.measure_started();
        let got = super::run_live(&db, &cfg, ctx.cancel, ctx.live);
        ctx.hooks.measure_ended();
        let ops = got.map_err(|e| e.to_string())?;
        Ok(outcome(&ops))
    }
}

/// A suite run as a record: its operations count as ops over their summed time.
fn outcome(ops: &[OpResult]) -> Outcome {
    let elapsed_s: f64 = ops.iter().map(|o| o.seconds).sum();
    let rec = RunRecord {
        ops: ops.len() as u64,
        elapsed_s,
        ops_per_s: ops.len() as f64 / elapsed_s.max(1e-9),
        queries: ops.iter().map(|o| o.statements).sum(),
        ..RunRecord::default()
    };
    let operations: Vec<OperationRecord> = ops
        .iter()
        .map(|o| OperationRecord {
            group: o.group.to_string(),
            name: o.name.clone(),
            seconds: o.seconds,
        })
        .collect();
    let counted = rec.clone();
    Outcome {
        rec,
        extra: Box::new(move |run| {
            sql_figures(run, &counted, false);
            SuiteRun { operations }.put(run);
        }),
    }
}

/// Every statement the suite sends, as a verification query set.
struct Capture(SuiteConfig);

impl QuerySet for Capture {
    fn count(&self) -> Option<usize> {
        None
    }

    fn run(&self, db: &Db, engine: Option<&str>) -> Result<Vec<verify::Outcome>, String> {
        let cfg = for_engine(&self.0, engine);
        let mut db = db.clone();
        db.via_socket = false;
        super::capture(&db, &cfg, &AtomicBool::new(false)).map_err(|e| e.to_string())
    }
}
