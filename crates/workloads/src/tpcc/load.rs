//! The loader: the initial database of clause 4.3.3.1 for W warehouses.
//!
//! The data is cut into work units (the item table; per warehouse its row and its stock
//! in chunks; per district its row, customers with their history, and orders with their
//! lines and new-order rows). `load_connections` OS threads, each with a single-threaded
//! runtime and its own connection, take units from a shared counter. A unit's rows are
//! written straight into one reused buffer per table and shipped when it is full: COPY
//! FROM STDIN (text format) on PostgreSQL, multi-row INSERTs on MariaDB, one transaction
//! per unit. Every unit draws from its own seed, so the same W gives the same data
//! whatever the thread count (the dates aside: they are the time of the load).
//! The secondary indexes and the statistics come after the data.

use super::random::{self, Constants};
use super::schema;
use super::{LoadReport, TpccConfig};
use crate::oltp::Client;
use crate::sql::{Db, Dialect};
use bakeoff_load::rng::{mix, Rng};
use bakeoff_load::LoadError;
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
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
/// A table's buffer is shipped once it holds this much (a COPY or one INSERT).
const FLUSH_BYTES: usize = 1 << 20;

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
    /// `schema::create_indexes(..)[i]`.
    Index(usize),
    Analyze(&'static str),
}

impl fmt::Display for Unit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unit::Item => write!(f, "the item table"),
            Unit::Warehouse(w) => write!(f, "warehouse {w}"),
            Unit::Stock { w, first } => write!(f, "stock of warehouse {w} from item {first}"),
            Unit::District { w, d } => write!(f, "warehouse {w} district {d}"),
            Unit::Key(t) => write!(f, "the primary key of {t}"),
            Unit::Index(i) => write!(f, "secondary index {i}"),
            Unit::Analyze(t) => write!(f, "statistics of {t}"),
        }
    }
}

impl Unit {
    /// The unit's own seed: a function of what it loads only.
    fn seed(self) -> u64 {
        let (tag, a, b) = match self {
            Unit::Item => (1, 0, 0),
            Unit::Warehouse(w) => (2, w, 0),
            Unit::Stock { w, first } => (3, w, first),
            Unit::District { w, d } => (4, w, d),
            Unit::Key(_) | Unit::Index(_) | Unit::Analyze(_) => (0, 0, 0),
        };
        mix(0x7bcc_0000_0000_0000 ^ (tag << 56) ^ (u64::from(a) << 24) ^ u64::from(b))
    }
}

/// Drops and creates the nine tables, loads W warehouses, then builds the secondary
/// indexes and gathers statistics. The rows count every table's rows.
pub fn load(db: &Db, cfg: &TpccConfig) -> Result<LoadReport, LoadError> {
    if cfg.warehouses == 0 {
        return Err(LoadError::Settings(
            "tpcc needs at least 1 warehouse".into(),
        ));
    }
    let started = Instant::now();
    let now = timestamp(SystemTime::now());
    runtime()?.block_on(create(db, cfg))?;
    let t0 = Instant::now();
    let rows = parallel(db, cfg, &data_units(cfg.warehouses), &now)?;
    eprintln!(
        "TRACE data {:.2}s cpu {:.2}",
        t0.elapsed().as_secs_f64(),
        proc_cpu()
    );
    let finish = finish_units(db.dialect);
    let t0 = Instant::now();
    parallel(db, cfg, &finish, &now)?;
    eprintln!("TRACE finish {:.2}s", t0.elapsed().as_secs_f64());
    Ok(LoadReport {
        seconds: started.elapsed().as_secs_f64(),
        rows,
    })
}

fn runtime() -> Result<tokio::runtime::Runtime, LoadError> {
    tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .build()
        .map_err(LoadError::Io)
}

async fn create(db: &Db, cfg: &TpccConfig) -> Result<(), LoadError> {
    let mut c = Client::connect(db, 0, false)
        .await
        .map_err(|e| LoadError::Sql(format!("tpcc load: cannot connect: {}", e.message)))?;
    let keyed = !keys_after_data(db.dialect);
    let engine = cfg.engine.as_deref();
    let create: Vec<String> = schema::TABLES
        .iter()
        .map(|t| schema::create_table_keyed(db.dialect, engine, t, keyed))
        .collect();
    for sql in schema::drop_tables().iter().chain(&create) {
        c.simple(sql)
            .await
            .map_err(|e| LoadError::Sql(format!("tpcc load: {sql}: {}", e.message)))?;
    }
    c.close().await;
    Ok(())
}

/// Keys (on PostgreSQL, biggest tables first), secondary indexes, then statistics.
fn finish_units(d: Dialect) -> Vec<Unit> {
    let mut units = Vec::new();
    if keys_after_data(d) {
        let biggest = ["order_line", "stock", "customer", "orders", "item", "new_order"];
        let rest = schema::TABLES.into_iter().filter(|t| !biggest.contains(t));
        let keyed = biggest.into_iter().chain(rest);
        units.extend(keyed.filter(|t| schema::add_primary_key(t).is_some()).map(Unit::Key));
    }
    units.extend((0..schema::create_indexes(d).len()).map(Unit::Index));
    // The indexed tables last: their ANALYZE would wait for the index builds anyway.
    let mut tables = schema::TABLES;
    tables.sort_by_key(|t| ["customer", "orders"].contains(t));
    units.extend(tables.into_iter().map(Unit::Analyze));
    units
}

/// PostgreSQL builds a primary key from the loaded heap much faster than it inserts each
/// row's key; an InnoDB table is its primary key, so adding one later rebuilds it.
fn keys_after_data(d: Dialect) -> bool {
    d == Dialect::Postgres
}

/// The data units, biggest first so that the small ones even out the threads' ends.
fn data_units(warehouses: u32) -> Vec<Unit> {
    let mut units = Vec::new();
    for w in 1..=warehouses {
        for first in (1..=ITEMS).step_by(STOCK_CHUNK as usize) {
            units.push(Unit::Stock { w, first });
        }
    }
    units.push(Unit::Item);
    for w in 1..=warehouses {
        units.push(Unit::Warehouse(w));
        for d in 1..=DISTRICTS {
            units.push(Unit::District { w, d });
        }
    }
    units
}

/// Runs `units` on `load_connections` threads (one per core when 0); the rows loaded.
/// The first failure stops the other threads after their current unit.
fn parallel(db: &Db, cfg: &TpccConfig, units: &[Unit], now: &str) -> Result<u64, LoadError> {
    let threads = match cfg.load_connections {
        0 => std::thread::available_parallelism().map_or(2, |n| n.get()),
        n => n,
    }
    .min(units.len())
    .max(1);
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let results: Vec<Result<u64, LoadError>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|_| s.spawn(|| worker_thread(db, units, &next, &failed, now)))
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    Err(LoadError::Sql("tpcc load: a loader thread panicked".into()))
                })
            })
            .collect()
    });
    results.into_iter().sum()
}

fn worker_thread(
    db: &Db,
    units: &[Unit],
    next: &AtomicUsize,
    failed: &AtomicBool,
    now: &str,
) -> Result<u64, LoadError> {
    let fail = |e: LoadError| {
        failed.store(true, Ordering::SeqCst);
        e
    };
    let rt = runtime().map_err(fail)?;
    rt.block_on(async {
        let mut w = Worker::connect(db, now).await.map_err(fail)?;
        while !failed.load(Ordering::SeqCst) {
            let Some(&unit) = units.get(next.fetch_add(1, Ordering::SeqCst)) else {
                break;
            };
            let t0 = Instant::now();
            w.run(unit).await.map_err(fail)?;
            eprintln!("TRACE {unit} {:.2}", t0.elapsed().as_secs_f64());
        }
        let rows = w.rows;
        w.c.close().await;
        Ok(rows)
    })
}

/// One loader connection and its per-table buffers.
struct Worker {
    c: Client,
    dialect: Dialect,
    sinks: Vec<Sink>,
    /// The load's date and time as SQL text (C_SINCE, H_DATE, O_ENTRY_D, OL_DELIVERY_D).
    now: String,
    rows: u64,
    /// The unit running, for error messages.
    unit: Unit,
}

impl Worker {
    async fn connect(db: &Db, now: &str) -> Result<Worker, LoadError> {
        let c = Client::connect(db, 0, false)
            .await
            .map_err(|e| LoadError::Sql(format!("tpcc load: cannot connect: {}", e.message)))?;
        let mut w = Worker {
            c,
            dialect: db.dialect,
            sinks: schema::TABLES
                .iter()
                .map(|t| Sink::new(db.dialect, t))
                .collect(),
            now: now.to_string(),
            rows: 0,
            unit: Unit::Item,
        };
        // Loading needs neither per-commit flushes nor per-row duplicate-key checks
        // against data not yet read in (the generated keys are unique by construction).
        let session = match db.dialect {
            Dialect::Postgres => "SET synchronous_commit = off; SET maintenance_work_mem = '256MB'",
            Dialect::Mysql => "SET unique_checks = 0, foreign_key_checks = 0",
        };
        w.exec(session).await?;
        Ok(w)
    }

    async fn exec(&mut self, sql: &str) -> Result<(), LoadError> {
        self.c
            .simple(sql)
            .await
            .map_err(|e| LoadError::Sql(format!("tpcc load ({}): {sql}: {}", self.unit, e.message)))
    }

    async fn run(&mut self, unit: Unit) -> Result<(), LoadError> {
        self.unit = unit;
        let mut rng = Rng::new(unit.seed());
        match unit {
            Unit::Key(t) => {
                let sql = schema::add_primary_key(t).expect("only keyed tables get Key units");
                return self.exec(&sql).await;
            }
            Unit::Index(i) => return self.exec(&schema::create_indexes(self.dialect)[i]).await,
            Unit::Analyze(t) => {
                let sql = match self.dialect {
                    Dialect::Postgres => format!("ANALYZE {t}"),
                    Dialect::Mysql => format!("ANALYZE TABLE {t}"),
                };
                return self.exec(&sql).await;
            }
            _ => self.exec("BEGIN").await?,
        }
        match unit {
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
        for t in 0..self.sinks.len() {
            self.flush(t).await?;
        }
        self.exec("COMMIT").await
    }

    /// Ships table `t`'s buffered rows, if any.
    async fn flush(&mut self, t: usize) -> Result<(), LoadError> {
        let s = &mut self.sinks[t];
        if s.rows == 0 {
            return Ok(());
        }
        let sent = match self.dialect {
            Dialect::Postgres => match self.c.copy_in(&s.head, &s.buf).await {
                Some(r) => r.map(|_| ()),
                None => unreachable!("COPY on a PostgreSQL connection"),
            },
            Dialect::Mysql => {
                let sql = std::str::from_utf8(&s.buf).expect("generated rows are ASCII");
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
        if self.sinks[t].buf.len() >= FLUSH_BYTES {
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
        s.money(300_000_00);
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
        s.money(30_000_00);
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
            s.text(self.now.as_bytes());
            s.text(random::credit(rng).as_bytes());
            s.money(50_000_00);
            s.frac4(random::uniform(rng, 0, 5_000));
            s.money(-10_00);
            s.money(10_00);
            s.int(1);
            s.int(0);
            s.gen(|b| random::push_a_string(rng, b, 300, 500));
            s.end();
            let h = &mut self.sinks[T_HISTORY];
            for id in [c, d, w, d, w] {
                h.int(id.into());
            }
            h.text(self.now.as_bytes());
            h.money(10_00);
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
            s.text(self.now.as_bytes());
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
            s.text(self.now.as_bytes());
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

/// One table's pending rows, as COPY text (PostgreSQL) or an INSERT statement (MariaDB).
struct Sink {
    dialect: Dialect,
    /// `COPY t (..) FROM STDIN` on PostgreSQL; the INSERT's start on MariaDB.
    head: String,
    buf: Vec<u8>,
    rows: u64,
    /// Fields written in the current row.
    field: usize,
}

impl Sink {
    fn new(dialect: Dialect, table: &str) -> Sink {
        let cols = schema::columns(table).join(", ");
        let head = match dialect {
            Dialect::Postgres => format!("COPY {table} ({cols}) FROM STDIN"),
            Dialect::Mysql => format!("INSERT INTO {table} ({cols}) VALUES "),
        };
        let mut s = Sink {
            dialect,
            head,
            buf: Vec::with_capacity(FLUSH_BYTES + 4096),
            rows: 0,
            field: 0,
        };
        s.reset();
        s
    }

    fn reset(&mut self) {
        self.buf.clear();
        self.rows = 0;
        self.field = 0;
        if self.dialect == Dialect::Mysql {
            self.buf.extend_from_slice(self.head.as_bytes());
        }
    }

    /// What goes before a field: the row's start or the separator.
    fn sep(&mut self) {
        match (self.dialect, self.field) {
            (Dialect::Postgres, 0) => {}
            (Dialect::Postgres, _) => self.buf.push(b'\t'),
            (Dialect::Mysql, 0) if self.rows > 0 => self.buf.extend_from_slice(b",("),
            (Dialect::Mysql, 0) => self.buf.push(b'('),
            (Dialect::Mysql, _) => self.buf.push(b','),
        }
        self.field += 1;
    }

    fn end(&mut self) {
        self.buf.push(match self.dialect {
            Dialect::Postgres => b'\n',
            Dialect::Mysql => b')',
        });
        self.rows += 1;
        self.field = 0;
    }

    fn int(&mut self, v: u64) {
        self.sep();
        push_uint(&mut self.buf, v);
    }

    /// An amount in cents, as a decimal with two places.
    fn money(&mut self, cents: i64) {
        self.sep();
        if cents < 0 {
            self.buf.push(b'-');
        }
        let c = cents.unsigned_abs();
        push_uint(&mut self.buf, c / 100);
        self.buf.push(b'.');
        self.buf.push(b'0' + (c / 10 % 10) as u8);
        self.buf.push(b'0' + (c % 10) as u8);
    }

    /// `v` ten-thousandths (v < 10000), as `0.dddd`: taxes and discounts.
    fn frac4(&mut self, v: u64) {
        self.sep();
        self.buf.extend_from_slice(b"0.");
        for div in [1000, 100, 10, 1] {
            self.buf.push(b'0' + (v / div % 10) as u8);
        }
    }

    fn null(&mut self) {
        self.sep();
        self.buf.extend_from_slice(match self.dialect {
            Dialect::Postgres => b"\\N",
            Dialect::Mysql => b"NULL",
        });
    }

    /// A text value, escaped for COPY's text format or quoted for SQL.
    fn text(&mut self, s: &[u8]) {
        self.sep();
        if self.dialect == Dialect::Mysql {
            self.buf.push(b'\'');
        }
        for &b in s {
            match (self.dialect, b) {
                (Dialect::Postgres, b'\\') => self.buf.extend_from_slice(b"\\\\"),
                (Dialect::Postgres, b'\t') => self.buf.extend_from_slice(b"\\t"),
                (Dialect::Postgres, b'\n') => self.buf.extend_from_slice(b"\\n"),
                (Dialect::Postgres, b'\r') => self.buf.extend_from_slice(b"\\r"),
                (Dialect::Mysql, b'\\') => self.buf.extend_from_slice(b"\\\\"),
                (Dialect::Mysql, b'\'') => self.buf.extend_from_slice(b"''"),
                _ => self.buf.push(b),
            }
        }
        if self.dialect == Dialect::Mysql {
            self.buf.push(b'\'');
        }
    }

    /// A text value `f` generates in place: letters and digits only, so it needs no
    /// escaping (checked in debug builds).
    fn gen(&mut self, f: impl FnOnce(&mut Vec<u8>)) {
        self.sep();
        let quote = self.dialect == Dialect::Mysql;
        if quote {
            self.buf.push(b'\'');
        }
        let start = self.buf.len();
        f(&mut self.buf);
        debug_assert!(self.buf[start..].iter().all(u8::is_ascii_alphanumeric));
        if quote {
            self.buf.push(b'\'');
        }
    }
}

fn push_uint(buf: &mut Vec<u8>, mut v: u64) {
    let mut tmp = [0u8; 20];
    let mut i = tmp.len();
    loop {
        i -= 1;
        tmp[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    buf.extend_from_slice(&tmp[i..]);
}

/// `t` (UTC, whole seconds) as `YYYY-MM-DD HH:MM:SS`, which both servers read as a
/// date and time.
fn timestamp(t: SystemTime) -> String {
    let secs = t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
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
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}

#[cfg(test)]
mod tests {
    use super::*;
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
    fn dates_in_sql_text() {
        assert_eq!(timestamp(UNIX_EPOCH), "1970-01-01 00:00:00");
        // 2024-02-29 13:05:09 UTC: a leap day.
        let t = UNIX_EPOCH + Duration::from_secs(1_709_211_909);
        assert_eq!(timestamp(t), "2024-02-29 13:05:09");
        let t = UNIX_EPOCH + Duration::from_secs(1_735_689_599);
        assert_eq!(timestamp(t), "2024-12-31 23:59:59");
    }

    #[test]
    fn rows_in_both_formats() {
        let mut pg = Sink::new(Dialect::Postgres, "new_order");
        let mut my = Sink::new(Dialect::Mysql, "new_order");
        for s in [&mut pg, &mut my] {
            s.int(2101);
            s.money(-10_05);
            s.null();
            s.end();
            s.frac4(42);
            s.text(b"a\tb'c\\");
            s.end();
        }
        assert_eq!(pg.buf, b"2101\t-10.05\t\\N\n0.0042\ta\\tb'c\\\\\n");
        let sql = String::from_utf8(my.buf).unwrap();
        assert!(sql.starts_with("INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES "));
        assert!(
            sql.ends_with("VALUES (2101,-10.05,NULL),(0.0042,'a\tb''c\\\\')"),
            "{sql}"
        );
    }

    #[test]
    fn units_cover_every_warehouse_and_district() {
        let units = data_units(2);
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
}

fn proc_cpu() -> f64 {
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    tv(u.ru_utime) + tv(u.ru_stime)
}
