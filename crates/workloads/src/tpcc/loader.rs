//! The loader: the initial database of clause 4.3.3.1 for W warehouses.
//!
//! The data is cut into slices (per district its row, customers with their history, and
//! orders with their lines and new-order rows; the item table; per warehouse its row and
//! its stock in chunks), each generated from its own seed, so that the same W gives the
//! same data however it is loaded (the dates aside: they are the time of the load).
//! `load_connections` OS threads, each with a single-threaded runtime and its own
//! connection, take work units from a shared queue (`Plan`). A unit's rows are written
//! straight into one reused buffer per table and shipped when it is full, one
//! transaction per unit: binary COPY FROM STDIN on PostgreSQL, multi-row INSERTs on
//! MariaDB.
//!
//! On MariaDB, and on PostgreSQL with more than 3 connections, a unit is a slice. On
//! PostgreSQL with up to 3 (`whole_tables`), a unit is a `Part`: whole tables, created in
//! the transaction that fills them with `COPY .. FREEZE`, slice after slice (the
//! orders part takes up each district's random stream where the customers part left
//! it). Frozen rows spare the key and index builds and ANALYZE that read them next the
//! hint bits they would set on every page, and the page writes that follow.
//!
//! Once a table's data is in, its finishing steps are queued: on PostgreSQL its primary
//! key (the tables are created without one: a sorted build after the data costs far less
//! than a key insertion per row), then its secondary index, then its statistics. With
//! slices they go ahead of the remaining data, which they overlap; with parts after it,
//! bigger tables' first, and the connections share them at the end. On MariaDB the keys
//! are in CREATE TABLE (an InnoDB table is its primary key) and each unit inserts in key
//! order.

use super::random::{self, Constants};
use super::schema;
use super::{LoadReport, TpccConfig};
use crate::shared::runtime;
use bakeoff_engine::rng::{mix, Rng};
use bakeoff_engine::LoadError;
use bakeoff_proto::decimal::push_decimal;
use bakeoff_sqlclient::Client;
use bakeoff_sqlclient::{BulkLoad, Db, Setting, SqlDialect};
use std::collections::VecDeque;
use std::fmt;
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

const ITEMS: u32 = 100_000;
const DISTRICTS: u32 = 10;
const CUSTOMERS: u32 = 3_000;
const ORDERS: u32 = 3_000;
/// Orders from here on are undelivered: no carrier, and a new_order row.
const FIRST_NEW_ORDER: u32 = 2_101;
/// Stock rows per work unit (a warehouse's stock is its biggest piece: chunks balance
/// the threads' shares).
const STOCK_CHUNK: u32 = 25_000;
/// A table's buffer is shipped once it holds this much (a COPY or one INSERT): fewer,
/// bigger statements measured faster on both servers, up to about this size.
const FLUSH_BYTES: usize = 4 << 20;

/// Table positions in `schema::TABLES` (checked by a test).
const T_ITEM: usize = 0;
const T_WAREHOUSE: usize = 1;
const T_STOCK: usize = 2;
const T_DISTRICT: usize = 3;
const T_CUSTOMER: usize = 4;
const T_HISTORY: usize = 5;
const T_ORDERS: usize = 6;
const T_NEW_ORDER: usize = 7;
const T_ORDER_LINE: usize = 8;

/// One piece of the load, run by one connection.
#[derive(Debug, Clone, Copy)]
enum Unit {
    /// Whole tables, created and filled in one transaction (PostgreSQL).
    Tables(Part),
    Item,
    Warehouse(u32),
    /// Stock of warehouse `w` for items `first..first + STOCK_CHUNK`.
    Stock {
        w: u32,
        first: u32,
    },
    District {
        w: u32,
        d: u32,
    },
    /// The primary key of a table created without it (PostgreSQL).
    Key(&'static str),
    /// A table's secondary index.
    Index(&'static str),
    Analyze(&'static str),
}

impl fmt::Display for Unit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unit::Tables(p) => write!(f, "the {} tables", p.name()),
            Unit::Item => write!(f, "the item table"),
            Unit::Warehouse(w) => write!(f, "warehouse {w}"),
            Unit::Stock { w, first } => write!(f, "stock of warehouse {w} from item {first}"),
            Unit::District { w, d } => write!(f, "warehouse {w} district {d}"),
            Unit::Key(t) => write!(f, "the primary key of {t}"),
            Unit::Index(t) => write!(f, "the secondary index of {t}"),
            Unit::Analyze(t) => write!(f, "statistics of {t}"),
        }
    }
}

/// The order of the tables' finishing steps once the data is in (`PlanState::release`),
/// by table position in `schema::TABLES`: largest key, index and statistics work first
/// (order_line, customer, stock, orders, item, then the small tables).
const STEP_ORDER: [u8; 9] = {
    let mut order = [0; 9];
    order[T_ORDER_LINE] = 0;
    order[T_CUSTOMER] = 1;
    order[T_STOCK] = 2;
    order[T_ORDERS] = 3;
    order[T_ITEM] = 4;
    order[T_HISTORY] = 5;
    order[T_NEW_ORDER] = 6;
    order[T_DISTRICT] = 7;
    order[T_WAREHOUSE] = 8;
    order
};

impl Unit {
    /// The table of a finishing step (position in `schema::TABLES`); None for data.
    fn step_table(self) -> Option<usize> {
        match self {
            Unit::Key(t) | Unit::Index(t) | Unit::Analyze(t) => Some(table_pos(t)),
            _ => None,
        }
    }

    /// The tables a data unit fills (positions in `schema::TABLES`).
    fn fills(self) -> &'static [usize] {
        match self {
            Unit::Tables(p) => p.tables(),
            Unit::Item => &[T_ITEM],
            Unit::Warehouse(_) => &[T_WAREHOUSE],
            Unit::Stock { .. } => &[T_STOCK],
            Unit::District { .. } => &[
                T_DISTRICT,
                T_CUSTOMER,
                T_HISTORY,
                T_ORDERS,
                T_NEW_ORDER,
                T_ORDER_LINE,
            ],
            Unit::Key(_) | Unit::Index(_) | Unit::Analyze(_) => &[],
        }
    }

    /// The unit's own seed: a function of what it loads only.
    fn seed(self) -> u64 {
        let (tag, a, b) = match self {
            Unit::Item => (1, 0, 0),
            Unit::Warehouse(w) => (2, w, 0),
            Unit::Stock { w, first } => (3, w, first),
            Unit::District { w, d } => (4, w, d),
            Unit::Tables(_) | Unit::Key(_) | Unit::Index(_) | Unit::Analyze(_) => (0, 0, 0),
        };
        mix(0x7bcc_0000_0000_0000 ^ (tag << 56) ^ (u64::from(a) << 24) ^ u64::from(b))
    }
}

/// A PostgreSQL data unit: tables that one transaction creates and fills whole, so that
/// its COPYs may write the rows frozen (`COPY .. FREEZE`). Rows that are not frozen cost
/// every later reader of a fresh page (key and index builds, ANALYZE, the first
/// transactions) a lookup of the inserting transaction, hint bits and a rewrite of the
/// page; frozen pages are also marked all-visible. Each part generates the very rows of
/// the slices (`Unit::Stock`, `Unit::District`, ...), slice by slice with their seeds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    Items,
    Warehouses,
    Stock,
    /// Districts, customers and history: the start of each district's rows.
    Customers,
    /// Orders, new orders and order lines: the rest of each district's rows. Their draws
    /// follow the district's and customers' in the district's stream: this part takes
    /// the stream up from the customers part, or generates those rows too and drops them.
    Orders,
}

impl Part {
    /// The order the loader starts them in: the customers first, for the orders part
    /// takes up each district's random stream where they leave it (see `Plan::take_up`),
    /// then the largest first (about 55, 60 and 8 MB of rows per 2 warehouses).
    const ALL: [Part; 5] = [
        Part::Customers,
        Part::Orders,
        Part::Stock,
        Part::Items,
        Part::Warehouses,
    ];

    fn tables(self) -> &'static [usize] {
        match self {
            Part::Items => &[T_ITEM],
            Part::Warehouses => &[T_WAREHOUSE],
            Part::Stock => &[T_STOCK],
            Part::Customers => &[T_DISTRICT, T_CUSTOMER, T_HISTORY],
            Part::Orders => &[T_ORDERS, T_NEW_ORDER, T_ORDER_LINE],
        }
    }

    fn name(self) -> &'static str {
        match self {
            Part::Items => "item",
            Part::Warehouses => "warehouse",
            Part::Stock => "stock",
            Part::Customers => "district, customer and history",
            Part::Orders => "orders, new_order and order_line",
        }
    }
}

/// Drops and creates the nine tables, loads W warehouses, then builds the keys and
/// secondary indexes and gathers statistics. The rows count every table's rows.
pub fn load(db: &Db, cfg: &TpccConfig) -> Result<LoadReport, LoadError> {
    if cfg.warehouses == 0 {
        return Err(LoadError::Settings(
            "tpcc needs at least 1 warehouse".into(),
        ));
    }
    let started = Instant::now();
    let now = LoadTime::new(SystemTime::now());
    let threads = match cfg.load_connections {
        0 => std::thread::available_parallelism().map_or(2, |n| n.get()),
        n => n,
    };
    let frozen = whole_tables(db.dialect.sql(), threads);
    // Parts make their own tables.
    if !frozen {
        runtime()?.block_on(create(db, cfg))?;
    }
    let plan = Plan::new(db.dialect.sql(), cfg.warehouses, frozen);
    let threads = threads.clamp(1, plan.units);
    let rows = parallel(db, cfg, threads, &plan, &now)?;
    Ok(LoadReport {
        seconds: started.elapsed().as_secs_f64(),
        rows,
    })
}

async fn create(db: &Db, cfg: &TpccConfig) -> Result<(), LoadError> {
    let mut c = Client::connect(db, 0, false)
        .await
        .map_err(|e| LoadError::Sql(format!("tpcc load: cannot connect: {}", e.message)))?;
    let sql = db.dialect.sql();
    let keyed = !sql.primary_key_after_load();
    let engine = cfg.engine.as_deref();
    let create: Vec<String> = schema::TABLES
        .iter()
        .map(|t| schema::create_table_keyed(sql, engine, t, keyed))
        .collect();
    let mut statements: Vec<String> = schema::drop_tables().into_iter().chain(create).collect();
    // One commit that waits for no log flush (PostgreSQL: the loading transactions
    // empty the tables again anyway), and one round trip where a query may carry them all.
    if let Some(set) = sql.session_setting(Setting::NoCommitFlush) {
        statements.insert(0, set);
    }
    if sql.multi_statement_queries() {
        statements = vec![statements.join("; ")];
    }
    for sql in &statements {
        c.simple(sql)
            .await
            .map_err(|e| LoadError::Sql(format!("tpcc load: {sql}: {}", e.message)))?;
    }
    c.close().await;
    Ok(())
}

/// Whether to load in `Part`s (where the server writes rows frozen: PostgreSQL), each in one transaction that writes its rows
/// frozen, rather than in slices of at most a warehouse: up to 3 connections. The biggest
/// part (the stock or the orders) is about a third of the work, so more connections
/// would wait for it while slices keep them all busy.
fn whole_tables(d: &dyn SqlDialect, threads: usize) -> bool {
    d.copy_freeze() && threads <= 3
}

/// The data units: one per `Part` (`frozen`), in `Part::ALL` order; else slices of at
/// most a warehouse, districts first: they fill order_line, whose primary key
/// (PostgreSQL) or statistics take the longest, and that overlaps the loading of the
/// stock.
fn data_units(warehouses: u32, frozen: bool) -> Vec<Unit> {
    if frozen {
        return Part::ALL.into_iter().map(Unit::Tables).collect();
    }
    let mut units = Vec::new();
    for w in 1..=warehouses {
        units.push(Unit::Warehouse(w));
        for d in 1..=DISTRICTS {
            units.push(Unit::District { w, d });
        }
    }
    units.push(Unit::Item);
    for w in 1..=warehouses {
        for first in (1..=ITEMS).step_by(STOCK_CHUNK as usize) {
            units.push(Unit::Stock { w, first });
        }
    }
    units
}

/// A table's steps after its data: primary key (PostgreSQL), secondary index, statistics.
/// (PostgreSQL builds a primary key from the loaded heap much faster than it inserts each
/// row's key; an InnoDB table is its primary key, so adding one later rebuilds it:
/// the dialect's `primary_key_after_load`.)
fn finishing_steps(d: &dyn SqlDialect, table: &'static str) -> VecDeque<Unit> {
    let mut steps = VecDeque::new();
    if d.primary_key_after_load() && schema::add_primary_key(table).is_some() {
        steps.push_back(Unit::Key(table));
    }
    if schema::secondary_index(table).is_some() {
        steps.push_back(Unit::Index(table));
    }
    steps.push_back(Unit::Analyze(table));
    steps
}

/// The work queue shared by the loader threads. A table's finishing steps are queued one
/// after the other once its last data unit is done, ahead of the remaining data, so that
/// index builds overlap the rest of the load instead of trailing it.
struct Plan {
    state: Mutex<PlanState>,
    wake: Condvar,
    units: usize,
    /// Whether the data units are `Part`s.
    frozen: bool,
}

struct PlanState {
    queue: VecDeque<Unit>,
    /// Data units not yet done, by table position in `schema::TABLES`.
    loading: [usize; 9],
    /// Each table's finishing steps not yet queued.
    steps: Vec<VecDeque<Unit>>,
    /// Whether released steps go ahead of the data units left, or after them (and then
    /// the steps of bigger tables first: see `release`).
    steps_first: bool,
    /// Each district's random stream where the customers part left it, for the orders
    /// part (by `district_index`).
    streams: Vec<Option<Rng>>,
    running: usize,
    failed: bool,
}

impl Plan {
    fn new(d: &dyn SqlDialect, warehouses: u32, frozen: bool) -> Plan {
        let queue: VecDeque<Unit> = data_units(warehouses, frozen).into();
        let mut loading = [0; 9];
        for u in &queue {
            for &t in u.fills() {
                loading[t] += 1;
            }
        }
        let steps: Vec<_> = schema::TABLES
            .iter()
            .map(|t| finishing_steps(d, t))
            .collect();
        let units = queue.len() + steps.iter().map(VecDeque::len).sum::<usize>();
        let state = PlanState {
            queue,
            loading,
            steps,
            // Parts are few and long: a connection that is done with one starts the next
            // (whose own finishing steps then come out earlier) rather than the steps,
            // which the connections share at the end.
            steps_first: !frozen,
            streams: match frozen {
                true => vec![None; district_index(warehouses, DISTRICTS) + 1],
                false => Vec::new(),
            },
            running: 0,
            failed: false,
        };
        Plan {
            state: Mutex::new(state),
            wake: Condvar::new(),
            units,
            frozen,
        }
    }

    fn lock(&self) -> MutexGuard<'_, PlanState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The next unit to run; None once all are done or one failed. Waits while the queue
    /// is empty but running units may still release finishing steps.
    fn next(&self) -> Option<Unit> {
        let mut st = self.lock();
        loop {
            if st.failed {
                return None;
            }
            if let Some(u) = st.queue.pop_front() {
                st.running += 1;
                return Some(u);
            }
            if st.running == 0 {
                return None;
            }
            st = self.wake.wait(st).unwrap_or_else(PoisonError::into_inner);
        }
    }

    /// Marks `u` done and queues the finishing steps it releases.
    fn done(&self, u: Unit) {
        let mut st = self.lock();
        st.running -= 1;
        match u {
            Unit::Key(t) | Unit::Index(t) => st.release(table_pos(t)),
            Unit::Analyze(_) => {}
            _ => {
                for &t in u.fills() {
                    st.loading[t] -= 1;
                    if st.loading[t] == 0 {
                        st.release(t);
                    }
                }
            }
        }
        self.wake.notify_all();
    }

    fn fail(&self) {
        self.lock().failed = true;
        self.wake.notify_all();
    }

    /// Keeps district (w, d)'s random stream as the customers part leaves it.
    fn pass_on(&self, w: u32, d: u32, rng: &Rng) {
        self.lock().streams[district_index(w, d)] = Some(rng.clone());
    }

    /// District (w, d)'s random stream after its customers, if the customers part has
    /// got that far: the orders part then need not generate them again.
    fn take_up(&self, w: u32, d: u32) -> Option<Rng> {
        self.lock().streams[district_index(w, d)].take()
    }
}

fn district_index(w: u32, d: u32) -> usize {
    ((w - 1) * DISTRICTS + d - 1) as usize
}

impl PlanState {
    /// Queues table `t`'s next finishing step: first in line, or after the data units
    /// and the steps of bigger tables (whose remaining steps take longer: started first,
    /// they end with the others').
    fn release(&mut self, t: usize) {
        let Some(step) = self.steps[t].pop_front() else {
            return;
        };
        if self.steps_first {
            return self.queue.push_front(step);
        }
        let at = self
            .queue
            .iter()
            .position(|u| {
                u.step_table()
                    .is_some_and(|o| STEP_ORDER[o] > STEP_ORDER[t])
            })
            .unwrap_or(self.queue.len());
        self.queue.insert(at, step);
    }
}

struct FailOnPanic<'a>(&'a Plan);

impl Drop for FailOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.fail();
        }
    }
}

fn table_pos(table: &str) -> usize {
    schema::TABLES
        .iter()
        .position(|t| *t == table)
        .expect("a tpcc table")
}

/// Runs the plan on `threads` threads; the rows loaded. The first failure stops the other
/// threads after their current unit.
fn parallel(
    db: &Db,
    cfg: &TpccConfig,
    threads: usize,
    plan: &Plan,
    now: &LoadTime,
) -> Result<u64, LoadError> {
    let results: Vec<Result<u64, LoadError>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|_| s.spawn(|| worker_thread(db, cfg.warehouses, plan.frozen, plan, now)))
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    plan.fail();
                    Err(LoadError::Sql("tpcc load: a loader thread panicked".into()))
                })
            })
            .collect()
    });
    results.into_iter().sum()
}

fn worker_thread(
    db: &Db,
    warehouses: u32,
    frozen: bool,
    plan: &Plan,
    now: &LoadTime,
) -> Result<u64, LoadError> {
    let fail = |e: LoadError| {
        plan.fail();
        e
    };
    // A panicking unit never reports done: without this the other threads would wait
    // for it forever instead of stopping.
    let _guard = FailOnPanic(plan);
    let rt = runtime().map_err(fail)?;
    rt.block_on(async {
        let mut w = Worker::connect(db, warehouses, frozen, now)
            .await
            .map_err(fail)?;
        while let Some(unit) = plan.next() {
            w.run(unit, plan).await.map_err(fail)?;
            plan.done(unit);
        }
        let rows = w.rows;
        w.c.close().await;
        Ok(rows)
    })
}

/// One loader connection and its per-table buffers.
struct Worker {
    c: Client,
    sql: &'static dyn SqlDialect,
    sinks: Vec<Sink>,
    /// `FLUSH_BYTES`, or less when MariaDB's max_allowed_packet would refuse that much.
    flush_bytes: usize,
    rows: u64,
    warehouses: u32,
    /// The unit running, for error messages.
    unit: Unit,
    /// The tables the running unit loads (by position in `schema::TABLES`): the rows
    /// generated for the others are dropped.
    keep: [bool; 9],
}

impl Worker {
    async fn connect(
        db: &Db,
        warehouses: u32,
        frozen: bool,
        now: &LoadTime,
    ) -> Result<Worker, LoadError> {
        let mut c = Client::connect(db, 0, false)
            .await
            .map_err(|e| LoadError::Sql(format!("tpcc load: cannot connect: {}", e.message)))?;
        let sql = db.dialect.sql();
        // The thread owns only this connection: blocking calls spare the poller (measured
        // with PostgreSQL's COPY streams).
        if sql.bulk_load() == BulkLoad::Copy {
            c.make_blocking().map_err(|e| {
                LoadError::Sql(format!("tpcc load: blocking socket: {}", e.message))
            })?;
        }
        let mut w = Worker {
            c,
            sql,
            sinks: schema::TABLES
                .iter()
                .map(|t| Sink::new(sql, t, frozen, now))
                .collect(),
            flush_bytes: FLUSH_BYTES,
            rows: 0,
            warehouses,
            unit: Unit::Item,
            keep: [true; 9],
        };
        // A load needs no WAL flush per commit (PostgreSQL) nor per-row unique checks
        // (MariaDB: the generated keys are unique by construction). PostgreSQL sorts the
        // keys and indexes it builds in memory up to 256 MB, in this backend alone: the
        // other loader connections keep the cores busy, and parallel workers measured
        // slower (their start and the merge of their sorts cost more CPU than they
        // saved). Its ANALYZE samples 3,000 rows a table instead of 30,000: it costs per
        // row sampled (and visits every row of a table of fewer blocks than that), it
        // was a sixth of the server's work at W = 2 and now a twentieth, and the
        // transactions' plans (key lookups and ranges) are the same; autovacuum
        // analyzes again with the server's setting once a run has changed a tenth.
        let session: Vec<String> = [
            Setting::NoCommitFlush,
            Setting::NoConstraintChecks,
            Setting::IndexBuildMemoryMb(256),
            Setting::SerialIndexBuilds,
            Setting::StatisticsTarget(10),
        ]
        .into_iter()
        .filter_map(|s| sql.session_setting(s))
        .collect();
        if !session.is_empty() {
            w.exec(&session.join("; ")).await?;
        }
        if let Some(query) = sql.max_statement_bytes_query() {
            let max = w.c.rows(query).await.map_err(|e| {
                LoadError::Sql(format!(
                    "tpcc load: reading max_allowed_packet: {}",
                    e.message
                ))
            })?;
            // Half of it: a statement may pass the threshold by a few rows.
            let half = max.int(0).map_or(FLUSH_BYTES, |m| m.max(0) as usize / 2);
            w.flush_bytes = FLUSH_BYTES.min(half).max(64 << 10);
        }
        Ok(w)
    }

    async fn exec(&mut self, sql: &str) -> Result<(), LoadError> {
        self.c
            .simple(sql)
            .await
            .map_err(|e| LoadError::Sql(format!("tpcc load ({}): {sql}: {}", self.unit, e.message)))
    }

    async fn run(&mut self, unit: Unit, plan: &Plan) -> Result<(), LoadError> {
        self.unit = unit;
        let mut rng = Rng::new(unit.seed());
        match unit {
            Unit::Key(t) => {
                let sql = schema::add_primary_key(t).expect("only keyed tables get Key units");
                return self.exec(&sql).await;
            }
            Unit::Index(t) => {
                let sql = schema::secondary_index(t).expect("an indexed table");
                return self.exec(&sql).await;
            }
            Unit::Analyze(t) => return self.exec(&schema::analyze(self.sql, t)).await,
            _ => {}
        }
        let fills = unit.fills();
        self.keep = [false; 9];
        for &t in fills {
            self.keep[t] = true;
        }
        match unit {
            // Created in the loading transaction: the condition of COPY FREEZE.
            Unit::Tables(_) => {
                let mut sql = vec!["BEGIN".to_string()];
                for &t in fills {
                    let t = schema::TABLES[t];
                    sql.push(format!("DROP TABLE IF EXISTS {t}"));
                    sql.push(schema::create_table_keyed(self.sql, None, t, false));
                }
                self.exec(&sql.join("; ")).await?
            }
            _ => self.exec("BEGIN").await?,
        }
        match unit {
            Unit::Tables(part) => self.part(part, plan).await?,
            Unit::Item => self.items(&mut rng).await?,
            Unit::Warehouse(w) => self.warehouse(&mut rng, w),
            Unit::Stock { w, first } => self.stock(&mut rng, w, first).await?,
            Unit::District { w, d } => {
                self.district(&mut rng, w, d);
                self.customers(&mut rng, w, d).await?;
                self.orders(&mut rng, w, d).await?;
            }
            Unit::Key(_) | Unit::Index(_) | Unit::Analyze(_) => {}
        }
        for &t in fills {
            self.flush(t).await?;
        }
        self.exec("COMMIT").await
    }

    /// The rows of a PostgreSQL part: the MariaDB slices' rows, each slice from its seed.
    async fn part(&mut self, part: Part, plan: &Plan) -> Result<(), LoadError> {
        let warehouses = 1..=self.warehouses;
        match part {
            Part::Items => self.items(&mut Rng::new(Unit::Item.seed())).await?,
            Part::Warehouses => {
                for w in warehouses {
                    self.warehouse(&mut Rng::new(Unit::Warehouse(w).seed()), w);
                }
            }
            Part::Stock => {
                for w in warehouses {
                    for first in (1..=ITEMS).step_by(STOCK_CHUNK as usize) {
                        let mut rng = Rng::new(Unit::Stock { w, first }.seed());
                        self.stock(&mut rng, w, first).await?;
                    }
                }
            }
            Part::Customers => {
                for w in warehouses {
                    for d in 1..=DISTRICTS {
                        let mut rng = Rng::new(Unit::District { w, d }.seed());
                        self.district(&mut rng, w, d);
                        self.customers(&mut rng, w, d).await?;
                        plan.pass_on(w, d, &rng);
                    }
                }
            }
            Part::Orders => {
                for w in warehouses {
                    for d in 1..=DISTRICTS {
                        let mut rng = match plan.take_up(w, d) {
                            Some(rng) => rng,
                            // Not there yet: this district's first rows, made and dropped.
                            None => {
                                let mut rng = Rng::new(Unit::District { w, d }.seed());
                                self.district(&mut rng, w, d);
                                self.customers(&mut rng, w, d).await?;
                                self.drop_unkept();
                                rng
                            }
                        };
                        self.orders(&mut rng, w, d).await?;
                    }
                }
            }
        }
        Ok(())
    }

    /// Drops the rows generated for tables the running unit does not load.
    fn drop_unkept(&mut self) {
        for (s, keep) in self.sinks.iter_mut().zip(self.keep) {
            if !keep && s.rows > 0 {
                s.reset();
            }
        }
    }

    /// Ships table `t`'s buffered rows, if any.
    async fn flush(&mut self, t: usize) -> Result<(), LoadError> {
        let s = &mut self.sinks[t];
        if s.rows == 0 {
            return Ok(());
        }
        s.seal();
        let data = &s.buf;

        let sent = match s.format {
            BulkLoad::Copy => match self.c.copy_in(&s.head, data).await {
                Some(r) => r.map(|_| ()),
                None => unreachable!("COPY on a PostgreSQL connection"),
            },
            BulkLoad::MultiRowInsert => {
                let sql = std::str::from_utf8(data).expect("generated rows are ASCII");
                self.c.simple(sql).await
            }
        };
        sent.map_err(|e| {
            let table = schema::TABLES[t];
            LoadError::Sql(format!(
                "tpcc load ({}): loading {table}: {}",
                self.unit, e.message
            ))
        })?;
        self.rows += s.rows;
        s.reset();
        Ok(())
    }

    /// Ships table `t` once its buffer is full.
    async fn spill(&mut self, t: usize) -> Result<(), LoadError> {
        if self.keep[t] && self.sinks[t].buf.len() >= self.flush_bytes {
            self.flush(t).await?;
        }
        Ok(())
    }

    async fn items(&mut self, rng: &mut Rng) -> Result<(), LoadError> {
        for i in 1..=ITEMS {
            let s = &mut self.sinks[T_ITEM];
            s.int(i.into());
            s.int(random::uniform(rng, 1, 10_000));
            s.gen(|b| random::push_a_string(rng, b, 14, 24));
            s.money(random::uniform(rng, 100, 10_000) as i64);
            s.gen(|b| random::push_data(rng, b, 26, 50));
            s.end();
            self.spill(T_ITEM).await?;
        }
        Ok(())
    }

    fn warehouse(&mut self, rng: &mut Rng, w: u32) {
        let s = &mut self.sinks[T_WAREHOUSE];
        s.int(w.into());
        address(s, rng);
        s.frac4(random::uniform(rng, 0, 2_000));
        s.money(300_000 * 100);
        s.end();
    }

    async fn stock(&mut self, rng: &mut Rng, w: u32, first: u32) -> Result<(), LoadError> {
        for i in first..(first + STOCK_CHUNK).min(ITEMS + 1) {
            let s = &mut self.sinks[T_STOCK];
            s.int(i.into());
            s.int(w.into());
            s.int(random::uniform(rng, 10, 100));
            for _ in 0..10 {
                s.gen(|b| random::push_a_string(rng, b, 24, 24));
            }
            s.int(0);
            s.int(0);
            s.int(0);
            s.gen(|b| random::push_data(rng, b, 26, 50));
            s.end();
            self.spill(T_STOCK).await?;
        }
        Ok(())
    }

    fn district(&mut self, rng: &mut Rng, w: u32, d: u32) {
        let s = &mut self.sinks[T_DISTRICT];
        s.int(d.into());
        s.int(w.into());
        address(s, rng);
        s.frac4(random::uniform(rng, 0, 2_000));
        s.money(30_000 * 100);
        s.int(ORDERS as u64 + 1);
        s.end();
    }

    /// A district's customers, each with its history row.
    async fn customers(&mut self, rng: &mut Rng, w: u32, d: u32) -> Result<(), LoadError> {
        for c in 1..=CUSTOMERS {
            let s = &mut self.sinks[T_CUSTOMER];
            s.int(c.into());
            s.int(d.into());
            s.int(w.into());
            s.gen(|b| random::push_a_string(rng, b, 8, 16));
            s.text(b"OE");
            // The first 1000 customers take each last name once, the rest NURand's.
            let name = match c {
                1..=1000 => u64::from(c - 1),
                _ => Constants::LOAD.last_name_number(rng),
            };
            s.gen(|b| random::push_last_name(b, name));
            street_and_city(s, rng);
            state_and_zip(s, rng);
            s.gen(|b| random::push_n_string(rng, b, 16, 16));
            s.date();
            s.text(random::credit(rng).as_bytes());
            s.money(50_000 * 100);
            s.frac4(random::uniform(rng, 0, 5_000));
            s.money(-10 * 100);
            s.money(10 * 100);
            s.int(1);
            s.int(0);
            s.gen(|b| random::push_a_string(rng, b, 300, 500));
            s.end();
            let h = &mut self.sinks[T_HISTORY];
            for id in [c, d, w, d, w] {
                h.int(id.into());
            }
            h.date();
            h.money(10 * 100);
            h.gen(|b| random::push_a_string(rng, b, 12, 24));
            h.end();
            self.spill(T_CUSTOMER).await?;
            self.spill(T_HISTORY).await?;
        }
        Ok(())
    }

    /// A district's orders with their lines; the last 900 are new (undelivered) orders.
    async fn orders(&mut self, rng: &mut Rng, w: u32, d: u32) -> Result<(), LoadError> {
        let customers = random::permutation(rng, CUSTOMERS);
        for (o, &c) in (1..=ORDERS).zip(&customers) {
            let delivered = o < FIRST_NEW_ORDER;
            let lines = random::uniform(rng, 5, 15);
            let s = &mut self.sinks[T_ORDERS];
            for id in [o, d, w, c] {
                s.int(id.into());
            }
            s.date();
            match delivered {
                true => s.int(random::uniform(rng, 1, 10)),
                false => s.null(),
            }
            s.int(lines);
            s.int(1);
            s.end();
            for n in 1..=lines {
                self.order_line(rng, [o, d, w], n, delivered);
            }
            if !delivered {
                let s = &mut self.sinks[T_NEW_ORDER];
                for id in [o, d, w] {
                    s.int(id.into());
                }
                s.end();
            }
            for t in [T_ORDERS, T_ORDER_LINE, T_NEW_ORDER] {
                self.spill(t).await?;
            }
        }
        Ok(())
    }

    fn order_line(&mut self, rng: &mut Rng, [o, d, w]: [u32; 3], n: u64, delivered: bool) {
        let s = &mut self.sinks[T_ORDER_LINE];
        for id in [o, d, w] {
            s.int(id.into());
        }
        s.int(n);
        s.int(random::uniform(rng, 1, ITEMS.into()));
        s.int(w.into());
        if delivered {
            s.date();
        } else {
            s.null();
        }
        s.int(5);
        s.money(match delivered {
            true => 0,
            false => random::uniform(rng, 1, 999_999) as i64,
        });
        s.gen(|b| random::push_a_string(rng, b, 24, 24));
        s.end();
    }
}

/// Name, streets, city, state and zip of a warehouse or district.
fn address(s: &mut Sink, rng: &mut Rng) {
    s.gen(|b| random::push_a_string(rng, b, 6, 10));
    street_and_city(s, rng);
    state_and_zip(s, rng);
}

fn street_and_city(s: &mut Sink, rng: &mut Rng) {
    for _ in 0..3 {
        s.gen(|b| random::push_a_string(rng, b, 10, 20));
    }
}

fn state_and_zip(s: &mut Sink, rng: &mut Rng) {
    s.gen(|b| random::push_letters(rng, b, 2));
    s.gen(|b| random::push_zip(rng, b));
}

/// The load's date and time (C_SINCE, H_DATE, O_ENTRY_D, OL_DELIVERY_D) in both forms.
#[derive(Debug, Clone)]
struct LoadTime {
    /// `YYYY-MM-DD HH:MM:SS` for SQL text.
    text: String,
    /// PostgreSQL's binary timestamp: microseconds since 2000-01-01 00:00:00.
    pg_micros: i64,
}

impl LoadTime {
    fn new(t: SystemTime) -> LoadTime {
        let secs = t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
        LoadTime {
            text: timestamp(secs),
            pg_micros: (secs as i64 - PG_EPOCH) * 1_000_000,
        }
    }
}

/// 2000-01-01 00:00:00 UTC in Unix seconds.
const PG_EPOCH: i64 = 946_684_800;

/// The start of a binary COPY stream: signature, flags, header extension length.
const COPY_HEADER: &[u8] = b"PGCOPY\n\xff\r\n\0\0\0\0\0\0\0\0\0";

/// One table's pending rows: a binary COPY stream on PostgreSQL (the server parses no
/// numbers or dates: a third less work than text COPY for these rows), one multi-row
/// INSERT statement on MariaDB.
struct Sink {
    /// How the rows travel: the dialect's `bulk_load`.
    format: BulkLoad,
    /// String literals are the dialect's.
    sql: &'static dyn SqlDialect,
    /// `COPY t (..) FROM STDIN (FORMAT binary[, FREEZE])` on PostgreSQL; the INSERT's start
    /// on MariaDB.
    head: String,
    buf: Vec<u8>,
    rows: u64,
    /// The table's column count and the fields written in the current row.
    columns: usize,
    field: usize,
    now: LoadTime,
}

impl Sink {
    /// `frozen`: the rows go in the transaction that created their table, as frozen rows.
    fn new(sql: &'static dyn SqlDialect, table: &str, frozen: bool, now: &LoadTime) -> Sink {
        let columns = schema::columns(table);
        let list = columns.join(", ");
        let format = sql.bulk_load();
        let head = match format {
            BulkLoad::Copy => {
                let freeze = if frozen { ", FREEZE" } else { "" };
                format!("COPY {table} ({list}) FROM STDIN (FORMAT binary{freeze})")
            }
            BulkLoad::MultiRowInsert => format!("INSERT INTO {table} ({list}) VALUES "),
        };
        let mut s = Sink {
            format,
            sql,
            head,
            buf: Vec::with_capacity(FLUSH_BYTES + 4096),
            rows: 0,
            columns: columns.len(),
            field: 0,
            now: now.clone(),
        };
        s.reset();
        s
    }

    fn reset(&mut self) {
        self.buf.clear();
        self.rows = 0;
        self.field = 0;
        match self.format {
            BulkLoad::Copy => self.buf.extend_from_slice(COPY_HEADER),
            BulkLoad::MultiRowInsert => self.buf.extend_from_slice(self.head.as_bytes()),
        }
    }

    /// Completes `buf` for sending: the binary COPY stream's trailer.
    fn seal(&mut self) {
        if self.format == BulkLoad::Copy {
            self.buf.extend_from_slice(&(-1i16).to_be_bytes());
        }
    }

    /// What goes before a field: the row's start (binary: its field count) or the
    /// separator.
    fn sep(&mut self) {
        match (self.format, self.field) {
            (BulkLoad::Copy, 0) => {
                let n = self.columns as i16;
                self.buf.extend_from_slice(&n.to_be_bytes());
            }
            (BulkLoad::Copy, _) => {}
            (BulkLoad::MultiRowInsert, 0) if self.rows > 0 => self.buf.extend_from_slice(b",("),
            (BulkLoad::MultiRowInsert, 0) => self.buf.push(b'('),
            (BulkLoad::MultiRowInsert, _) => self.buf.push(b','),
        }
        self.field += 1;
    }

    fn end(&mut self) {
        debug_assert_eq!(self.field, self.columns, "a row of {}", self.head);
        if self.format == BulkLoad::MultiRowInsert {
            self.buf.push(b')');
        }
        self.rows += 1;
        self.field = 0;
    }

    /// A binary field's length.
    fn len(&mut self, n: usize) {
        self.buf.extend_from_slice(&(n as i32).to_be_bytes());
    }

    /// An `int` column's value.
    fn int(&mut self, v: u64) {
        self.sep();
        match self.format {
            BulkLoad::Copy => {
                let v = i32::try_from(v).expect("int columns hold 32-bit values");
                // The length (4) and the value in one store.
                let field = (4u64 << 32) | u64::from(v as u32);
                self.buf.extend_from_slice(&field.to_be_bytes());
            }
            BulkLoad::MultiRowInsert => push_decimal(&mut self.buf, v),
        }
    }

    /// An amount in cents, as a decimal with two places.
    fn money(&mut self, cents: i64) {
        self.sep();
        match self.format {
            BulkLoad::Copy => self.numeric(cents, 2),
            BulkLoad::MultiRowInsert => {
                if cents < 0 {
                    self.buf.push(b'-');
                }
                let c = cents.unsigned_abs();
                push_decimal(&mut self.buf, c / 100);
                self.buf.push(b'.');
                push_digits(&mut self.buf, c % 100, 2);
            }
        }
    }

    /// `v` ten-thousandths (v < 10000), as `0.dddd`: taxes and discounts.
    fn frac4(&mut self, v: u64) {
        debug_assert!(v < 10_000);
        self.sep();
        match self.format {
            BulkLoad::Copy => self.numeric(v as i64, 4),
            BulkLoad::MultiRowInsert => {
                self.buf.extend_from_slice(b"0.");
                push_digits(&mut self.buf, v, 4);
            }
        }
    }

    /// PostgreSQL's binary numeric for `v / 10^scale` (scale 2 or 4): base-10000 digits,
    /// most significant first, the weight of the first, the sign and the display scale.
    fn numeric(&mut self, v: i64, scale: u16) {
        let a = v.unsigned_abs();
        let unit = 10u64.pow(u32::from(scale));
        let (int, frac) = (a / unit, a % unit * (10_000 / unit));
        let mut digits = [0u16; 6];
        let mut n = 0;
        let mut rest = int;
        while rest > 0 {
            digits[n] = (rest % 10_000) as u16;
            rest /= 10_000;
            n += 1;
        }
        digits[..n].reverse();
        let weight = n as i16 - 1;
        if frac > 0 {
            digits[n] = frac as u16;
            n += 1;
        }
        let sign: u16 = if v < 0 { 0x4000 } else { 0 };
        let weight = if n == 0 { 0 } else { weight };
        self.len(8 + 2 * n);
        for h in [n as u16, weight as u16, sign, scale] {
            self.buf.extend_from_slice(&h.to_be_bytes());
        }
        for d in &digits[..n] {
            self.buf.extend_from_slice(&d.to_be_bytes());
        }
    }

    /// The load's date and time.
    fn date(&mut self) {
        match self.format {
            BulkLoad::Copy => {
                self.sep();
                self.len(8);
                let us = self.now.pg_micros;
                self.buf.extend_from_slice(&us.to_be_bytes());
            }
            BulkLoad::MultiRowInsert => {
                let text = std::mem::take(&mut self.now.text);
                self.text(text.as_bytes());
                self.now.text = text;
            }
        }
    }

    fn null(&mut self) {
        self.sep();
        match self.format {
            BulkLoad::Copy => self.buf.extend_from_slice(&(-1i32).to_be_bytes()),
            BulkLoad::MultiRowInsert => self.buf.extend_from_slice(b"NULL"),
        }
    }

    /// A text value: raw in binary COPY, quoted and escaped in SQL.
    fn text(&mut self, s: &[u8]) {
        self.sep();
        match self.format {
            BulkLoad::Copy => {
                self.len(s.len());
                self.buf.extend_from_slice(s);
            }
            BulkLoad::MultiRowInsert => self.sql.push_string_literal(&mut self.buf, s),
        }
    }

    /// A text value `f` generates in place: letters and digits only, so SQL needs no
    /// escaping (checked in debug builds); binary COPY gets its length afterwards.
    fn gen(&mut self, f: impl FnOnce(&mut Vec<u8>)) {
        self.sep();
        let at = self.buf.len();
        match self.format {
            BulkLoad::Copy => self.len(0),
            BulkLoad::MultiRowInsert => self.buf.push(b'\''),
        }
        let start = self.buf.len();
        f(&mut self.buf);
        debug_assert!(self.buf[start..].iter().all(u8::is_ascii_alphanumeric));
        match self.format {
            BulkLoad::Copy => {
                let n = (self.buf.len() - start) as i32;
                self.buf[at..start].copy_from_slice(&n.to_be_bytes());
            }
            BulkLoad::MultiRowInsert => self.buf.push(b'\''),
        }
    }
}

/// `v` as exactly `width` decimal digits (zero-padded).
fn push_digits(buf: &mut Vec<u8>, v: u64, width: u32) {
    for p in (0..width).rev() {
        buf.push(b'0' + (v / 10u64.pow(p) % 10) as u8);
    }
}

/// Unix time `secs` (UTC) as `YYYY-MM-DD HH:MM:SS`, which MariaDB reads as a DATETIME.
fn timestamp(secs: u64) -> String {
    let (mut days, rem) = (secs / 86_400, secs % 86_400);
    let mut year = 1970;
    loop {
        let len = if is_leap(year) { 366 } else { 365 };
        if days < len {
            break;
        }
        days -= len;
        year += 1;
    }
    let feb = if is_leap(year) { 29 } else { 28 };
    let months = [31, feb, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
    let mut month = 0;
    while days >= months[month] {
        days -= months[month];
        month += 1;
    }
    format!(
        "{year:04}-{:02}-{:02} {:02}:{:02}:{:02}",
        month + 1,
        days + 1,
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

fn is_leap(y: u64) -> bool {
    (y.is_multiple_of(4) && !y.is_multiple_of(100)) || y.is_multiple_of(400)
}

#[cfg(test)]
mod tests {
    use super::*;
    use bakeoff_sqlclient::Dialect;
    use std::time::Duration;

    #[test]
    fn table_positions_match_the_schema() {
        let at = |i: usize| schema::TABLES[i];
        assert_eq!(
            [T_ITEM, T_WAREHOUSE, T_STOCK, T_DISTRICT, T_CUSTOMER].map(at),
            ["item", "warehouse", "stock", "district", "customer"]
        );
        assert_eq!(
            [T_HISTORY, T_ORDERS, T_NEW_ORDER, T_ORDER_LINE].map(at),
            ["history", "orders", "new_order", "order_line"]
        );
    }

    #[test]
    fn dates_in_both_forms() {
        assert_eq!(timestamp(0), "1970-01-01 00:00:00");
        // 2024-02-29 13:05:09 UTC: a leap day.
        assert_eq!(timestamp(1_709_211_909), "2024-02-29 13:05:09");
        assert_eq!(timestamp(1_735_689_599), "2024-12-31 23:59:59");
        let t = LoadTime::new(UNIX_EPOCH + Duration::from_secs(946_684_801));
        assert_eq!(
            (t.text.as_str(), t.pg_micros),
            ("2000-01-01 00:00:01", 1_000_000)
        );
    }

    #[test]
    fn rows_in_both_formats() {
        let now = LoadTime::new(UNIX_EPOCH);
        let mut pg = Sink::new(Dialect::Postgres.sql(), "new_order", false, &now);
        let mut my = Sink::new(Dialect::Mariadb.sql(), "new_order", false, &now);
        for s in [&mut pg, &mut my] {
            s.int(2101);
            s.money(-10_05);
            s.null();
            s.end();
            s.frac4(42);
            s.text(b"a\tb'c\\");
            s.gen(|b| b.extend_from_slice(b"xyz"));
            s.end();
        }
        let mut want = COPY_HEADER.to_vec();
        let parts: [&[u8]; 11] = [
            &[0, 3],
            &[0, 0, 0, 4, 0, 0, 8, 0x35],
            // -10.05: 2 digits (10, 0500), weight 0, negative, scale 2.
            &[0, 0, 0, 12, 0, 2, 0, 0, 0x40, 0, 0, 2, 0, 10, 0x01, 0xf4],
            &[0xff, 0xff, 0xff, 0xff],
            &[0, 3],
            // 0.0042: 1 digit (42), weight -1, scale 4.
            &[0, 0, 0, 10, 0, 1, 0xff, 0xff, 0, 0, 0, 4, 0, 42],
            &[0, 0, 0, 6],
            b"a\tb'c\\",
            &[0, 0, 0, 3],
            b"xyz",
            &[0xff, 0xff],
        ];
        for p in parts {
            want.extend_from_slice(p);
        }
        pg.seal();
        assert_eq!(pg.buf, want);
        my.seal();
        let sql = String::from_utf8(my.buf).unwrap();
        assert!(sql.starts_with("INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES "));
        assert!(
            sql.ends_with("VALUES (2101,-10.05,NULL),(0.0042,'a\tb''c\\\\','xyz')"),
            "{sql}"
        );
    }

    #[test]
    fn units_cover_every_warehouse_and_district() {
        let units = data_units(2, false);
        let stock = units
            .iter()
            .filter(|u| matches!(u, Unit::Stock { .. }))
            .count();
        let districts = units
            .iter()
            .filter(|u| matches!(u, Unit::District { .. }))
            .count();
        assert_eq!((stock, districts), (2 * (ITEMS / STOCK_CHUNK) as usize, 20));
        assert_ne!(
            Unit::District { w: 1, d: 2 }.seed(),
            Unit::District { w: 2, d: 1 }.seed()
        );
    }

    #[test]
    fn parts_fill_every_table_once() {
        let mut filled = [0; 9];
        for u in data_units(3, true) {
            for &t in u.fills() {
                filled[t] += 1;
            }
        }
        assert_eq!(filled, [1; 9]);
        assert!(
            whole_tables(Dialect::Postgres.sql(), 2) && whole_tables(Dialect::Postgres.sql(), 3)
        );
        assert!(
            !whole_tables(Dialect::Postgres.sql(), 4) && !whole_tables(Dialect::Mariadb.sql(), 1)
        );
    }

    /// With parts, finishing steps queue after the data left and bigger tables' first;
    /// the orders part takes up the streams the customers part passes on, once.
    #[test]
    fn parts_plan_data_first_then_big_tables_steps() {
        let plan = Plan::new(Dialect::Postgres.sql(), 2, true);
        let customers = plan.next().unwrap();
        assert!(matches!(customers, Unit::Tables(Part::Customers)));
        let orders = plan.next().unwrap();
        plan.done(customers);
        plan.done(orders);
        let queue: Vec<String> = plan.lock().queue.iter().map(|u| u.to_string()).collect();
        assert_eq!(
            queue[..5],
            [
                "the stock tables",
                "the item tables",
                "the warehouse tables",
                "the primary key of order_line",
                "the primary key of customer",
            ]
        );
        let rng = Rng::new(7);
        plan.pass_on(2, 10, &rng);
        assert!(plan.take_up(2, 9).is_none());
        assert_eq!(
            plan.take_up(2, 10).map(|mut r| r.next_u64()),
            Some(Rng::new(7).next_u64())
        );
        assert!(plan.take_up(2, 10).is_none());
    }
}
