//! The seam every workload kind sits behind. The runner knows a workload only through
//! [`Workload`]: its name and connection sweep, the tables it needs prepared
//! ([`Tables`]), the query set it offers for result verification ([`QuerySet`]), how one
//! measured run goes against a running server ([`Workload::run`]), and what that run adds
//! to its record. How a kind's cells are summarized over runs (NOTPM, per-operation
//! tables) lives in the kind's folder too, called from [`crate::summarize`].
//!
//! A plan's `[[workload]]` becomes workloads in one place, [`crate::from_plan`].

use crate::verify;
use bakeoff_engine::{Live, PhaseHooks, Phases, RunRecord};
use bakeoff_report::model::{Cell, KindRecord, Latency, Results, Run};
use bakeoff_sqlclient::driver::Drive;
use bakeoff_sqlclient::Db;
use std::net::SocketAddr;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// One workload of an experiment, ready to run (a tpcc warehouse sweep is one per W).
pub trait Workload: Send + Sync {
    /// Its name and connection sweep.
    fn cells(&self) -> &Cells;

    /// The name its cells and files carry.
    fn name(&self) -> &str {
        &self.cells().name
    }

    /// Its cells' connection counts.
    fn connections(&self) -> &[usize] {
        &self.cells().connections
    }

    /// Whether a run is a fixed amount of work whose length is its own (a suite), not a
    /// window on the plan's clock: the run's watchdog then gives its window no planned
    /// length and judges it by its progress (`RunContext::live`), which it must tell.
    fn fixed_work(&self) -> bool {
        false
    }

    /// Whether it speaks SQL (needs a SQL target and, usually, prepared tables).
    fn sql(&self) -> bool {
        true
    }

    /// The tables a variant needs loaded before its runs (`engine`: the variant's storage
    /// engine, over the workload's own). None: the workload needs no prepared data.
    fn tables(&self, _engine: Option<&str>) -> Option<Box<dyn Tables>> {
        None
    }

    /// The statements this workload offers for result verification, if any.
    fn queries(&self) -> Option<Box<dyn QuerySet>> {
        None
    }

    /// One measured run against `ctx.server`: preload, warmup and measure (calling the
    /// hooks at the measured window's edges), and any check on the server the run left.
    fn run(&self, ctx: &RunContext) -> Result<Outcome, String>;

    /// The build cache (the run's `--cache`) a workload fetches its own sources into,
    /// given before its first run; most fetch nothing.
    fn use_cache(&self, _root: &std::path::Path) {}

    /// What an agent on another host needs to run this workload there (`crate::for_agent`
    /// rebuilds it from `spec`); None: this kind loads only from this machine.
    fn agent_spec(&self) -> Option<AgentSpec> {
        None
    }

    /// The figures this workload adds to a run, from a record merged from several client
    /// hosts (its statements' counts and response times, its rates): what a run here
    /// adds from its own record. Applied after the first host's own additions.
    fn merged(&self, _rec: &RunRecord) -> Box<dyn FnOnce(&mut Run) + Send> {
        Box::new(|_| {})
    }

    /// Of a run's record, how many lookups should have found their key (reads of what the
    /// preload or the load wrote), for the runner's miss check: a run whose misses exceed
    /// [`MISS_SHARE`] of these measured something else (an evicting cache) and is invalid.
    /// None: this workload may miss by design (gets before sets, deletes in the mix) or
    /// counts no misses.
    fn expected_hits(&self, _rec: &RunRecord) -> Option<u64> {
        None
    }

    /// Fills a cell's kind-specific record when the cell is planned (tpcc's sweep point).
    fn plan_cell(&self, _cell: &mut Cell) {}

    /// Why the cell at `at` should get no more runs, if it should not (tpcc: a larger W
    /// after a smaller one failed).
    fn skip(&self, _results: &Results, _at: usize) -> Option<String> {
        None
    }
}

/// What a workload's cells are named by: its name and its connection sweep.
#[derive(Debug, Clone)]
pub struct Cells {
    /// The name its cells and files carry.
    pub name: String,
    /// Its cells' connection counts.
    pub connections: Vec<usize>,
}

impl Cells {
    /// `[[workload]]` `w`'s: its name in the file and its sweep.
    pub fn of(w: &bakeoff_plan::Workload) -> Cells {
        Cells {
            name: w.display_name(),
            connections: w.connections_swept(),
        }
    }
}

/// The share of expected hits that may miss before a run is invalid (see
/// [`Workload::expected_hits`]): 1%.
pub const MISS_SHARE: f64 = 0.01;

/// A workload as it travels to an agent on another host.
pub struct AgentSpec {
    /// Its kind and keys, read back by [`crate::for_agent`].
    pub spec: serde_json::Value,
    /// Whether a run starts by setting every key (done once, by the first host).
    pub preloads: bool,
}

/// A workload's tables: what makes two workloads' tables the same data, and how to load
/// them.
pub trait Tables: Send + Sync {
    /// Equal keys: the same tables (loaded once, shared between workloads).
    fn key(&self) -> String;
    /// A short description for progress lines ("2 table(s) x 10000 rows").
    fn describe(&self) -> String;
    /// Loads the tables; (rows, seconds of loading as the loader measured it, or 0).
    fn load(&self, db: &Db) -> Result<(u64, f64), String>;
    /// Roughly the bytes the loaded tables take on disk, rows and indexes (0: small), for
    /// the free-space check before anything is loaded.
    fn bytes(&self) -> u64 {
        0
    }
}

/// Statements run on every variant, each result hashed and compared with the baseline's.
pub trait QuerySet: Send + Sync {
    /// How many statements, where known before running (a suite's count is not).
    fn count(&self) -> Option<usize>;
    /// Runs the set; `engine` is the variant's storage engine, if it sets one.
    fn run(&self, db: &Db, engine: Option<&str>) -> Result<Vec<verify::Outcome>, String>;
}

/// Where a running server listens.
#[derive(Debug, Clone)]
pub struct Server {
    /// Its TCP address on loopback.
    pub addr: SocketAddr,
    /// Its unix socket, where it has one.
    pub socket: Option<std::path::PathBuf>,
    /// How SQL clients log in (SQL targets only).
    pub db: Option<Db>,
}

impl Server {
    /// The SQL login, or the error a run reports without one.
    pub fn db(&self) -> Result<Db, String> {
        self.db
            .clone()
            .ok_or_else(|| "the sandbox has no login".into())
    }
}

/// Everything one run needs besides the workload itself.
pub struct RunContext<'a> {
    pub server: &'a Server,
    pub connections: usize,
    /// CPUs the load may keep busy: the load's pinned set, else half of this machine's
    /// (at least one). Client threads default from it.
    pub load_cpus: usize,
    /// The variant's storage engine, over the workload's own.
    pub engine: Option<&'a str>,
    pub phases: &'a Phases,
    /// The same for every variant of a round, new each round.
    pub seed: u64,
    pub round: usize,
    pub hooks: &'a dyn PhaseHooks,
    pub live: &'a Arc<Live>,
    pub cancel: &'a AtomicBool,
    /// An offered rate (ops/s) over the workload's own schedule: a capacity search's
    /// trial. Only kinds whose `KindSpec::open_loop` is true are given one.
    pub rate: Option<f64>,
}

impl RunContext<'_> {
    /// What a SQL load is driven through: this run's phases, hooks, progress and cancel.
    pub fn drive(&self) -> Drive<'_> {
        Drive {
            phases: self.phases,
            hooks: self.hooks,
            live: self.live,
            cancel: self.cancel,
        }
    }
}

/// A finished run: the load engine's record, and what the workload adds to the run's
/// record (its own figures; it may also mark the run invalid).
pub struct Outcome {
    pub rec: RunRecord,
    pub extra: Box<dyn FnOnce(&mut Run) + Send>,
}

impl Outcome {
    /// A run with nothing of the workload's own.
    pub fn plain(rec: RunRecord) -> Outcome {
        Outcome {
            rec,
            extra: Box::new(|_| {}),
        }
    }
}

/// The figures every SQL workload's run carries: queries per second, reconnects and the
/// per-statement-kind table; transactions per second when its operations are
/// transactions (a replay's are statements, a suite's named operations).
pub fn sql_figures(run: &mut Run, rec: &RunRecord, transactions: bool) {
    run.tps = transactions.then_some(rec.ops_per_s);
    run.qps = Some(rec.queries as f64 / rec.elapsed_s.max(1e-9));
    run.client_cpu_us_per_txn = Some(run.client_cpu_us_per_op);
    run.reconnects = rec.reconnects;
    run.statements = rec
        .kinds
        .iter()
        .map(|(k, v)| {
            let r = KindRecord {
                count: v.count,
                latency_us: latency(&v.latency_us),
            };
            (k.clone(), r)
        })
        .collect();
}

/// The load engine's percentiles as the results model keeps them.
pub fn latency(p: &bakeoff_engine::Percentiles) -> Latency {
    Latency {
        p50: p.p50,
        p90: p.p90,
        p99: p.p99,
        p999: p.p999,
        max: p.max,
        mean: p.mean,
    }
}

/// Marks a run invalid (keeping the first reason).
pub fn invalidate(run: &mut Run, reason: String) {
    if run.valid {
        run.valid = false;
        run.invalid_reason = Some(reason);
    }
}

/// Tables made by running a script once (possibly empty: the workload runs on an empty
/// database).
pub struct Script {
    /// The file the statements came from, for progress lines.
    pub file: Option<std::path::PathBuf>,
    pub statements: Vec<String>,
}

impl Script {
    /// No tables: the workload runs on an empty database.
    pub const EMPTY: Script = Script {
        file: None,
        statements: Vec::new(),
    };
}

impl Tables for Script {
    fn key(&self) -> String {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        self.statements.hash(&mut h);
        format!("script-{:016x}", h.finish())
    }

    fn describe(&self) -> String {
        match &self.file {
            Some(f) => format!("{} ({} statements)", f.display(), self.statements.len()),
            None => "an empty database".to_string(),
        }
    }

    fn load(&self, db: &Db) -> Result<(u64, f64), String> {
        let started = std::time::Instant::now();
        bakeoff_sqlclient::run_script(db, &self.statements)
            .map(|n| (n as u64, started.elapsed().as_secs_f64()))
            .map_err(|e| format!("the setup script failed: {e}"))
    }
}

/// `cfg` with the variant's storage engine over its own (`slot` picks the config's
/// engine field), when the variant sets one.
pub fn with_engine<C: Clone>(
    cfg: &C,
    engine: Option<&str>,
    slot: fn(&mut C) -> &mut Option<String>,
) -> C {
    let mut c = cfg.clone();
    if let Some(e) = engine {
        *slot(&mut c) = Some(e.to_string());
    }
    c
}
