//! The oltp workload: sysbench's OLTP schema and tests, natively over bakeoff's own lean
//! async wire clients (`mywire`, `pgwire`: results skipped, never decoded; a general
//! driver cost about twice sysbench's client CPU here). `client_threads` OS threads each run a single-threaded
//! tokio runtime; connections are tasks on them (1024 connections never mean 1024 OS
//! threads), each running transactions back to back (closed loop), or, given an offered
//! rate, at the intended times of its own schedule (open loop, response times from the
//! intended start). Every thread records
//! into its own recorder (transactions) and per-statement-kind histograms; nothing is
//! shared on the hot path except one counter for fixed-count runs.

mod config;
mod kind;
mod rand;
mod sql;
pub mod sysbench;
mod workload;

pub use config::{Distribution, OltpConfig, OltpTest};
pub use kind::{OltpKeys, OltpKind, RowDistribution, OLTP, SYSBENCH};
pub use rand::RowChooser;
pub use sql::{create_table, text, transaction, Stmt};
pub use workload::{Oltp, Sender};

use bakeoff_engine::rng::{mix, Rng};
use bakeoff_engine::{histogram, percentiles, KindStats, LoadError, Recorder, RunRecord};
use bakeoff_sqlclient::driver::{self, runtime, Drive, ThreadRec};
use bakeoff_sqlclient::Db;
use bakeoff_sqlclient::{Client, DbError, Param};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What a data load did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PrepareReport {
    pub seconds: f64,
    pub rows: u64,
}

/// Rows per INSERT statement while loading.
const LOAD_BATCH: u64 = 1000;
/// sysbench's select_random_ranges delta.
const RANDOM_RANGE_DELTA: i64 = 5;

/// Creates `sbtest1..N` (dropping old ones) and loads them, tables in parallel, with
/// multi-row INSERTs; then the secondary indexes (and ANALYZE on PostgreSQL).
pub fn prepare(db: &Db, cfg: &OltpConfig) -> Result<PrepareReport, LoadError> {
    let started = Instant::now();
    let rt = runtime()?;
    let local = tokio::task::LocalSet::new();
    let result = local.block_on(&rt, async {
        let mut handles = Vec::new();
        for t in 1..=cfg.tables {
            let (db, cfg) = (db.clone(), cfg.clone());
            handles.push(tokio::task::spawn_local(async move {
                load_table(&db, &cfg, t).await
            }));
        }
        let mut rows = 0;
        for h in handles {
            rows += h
                .await
                .map_err(|e| LoadError::Sql(format!("loading failed: {e}")))??;
        }
        Ok::<u64, LoadError>(rows)
    })?;
    Ok(PrepareReport {
        seconds: started.elapsed().as_secs_f64(),
        rows: result,
    })
}

async fn load_table(db: &Db, cfg: &OltpConfig, t: u32) -> Result<u64, LoadError> {
    let fail = |what: &str, e: DbError| LoadError::Sql(format!("{what} sbtest{t}: {}", e.message));
    let mut c = Client::connect(db, 0, false)
        .await
        .map_err(|e| fail("cannot connect to load", e))?;
    c.simple(&format!("DROP TABLE IF EXISTS sbtest{t}"))
        .await
        .map_err(|e| fail("cannot drop", e))?;
    let d = db.dialect.sql();
    c.simple(&sql::create_table(t, d, cfg))
        .await
        .map_err(|e| fail("cannot create", e))?;
    let mut rng = Rng::new(mix(0x5b7e57 ^ u64::from(t)));
    let (mut cbuf, mut padbuf) = (String::new(), String::new());
    let mut next = 1u64;
    while next <= cfg.table_size {
        let end = (next + LOAD_BATCH - 1).min(cfg.table_size);
        let mut stmt = if cfg.auto_inc {
            format!("INSERT INTO sbtest{t} (k, c, pad) VALUES ")
        } else {
            format!("INSERT INTO sbtest{t} (id, k, c, pad) VALUES ")
        };
        for id in next..=end {
            digits(&mut rng, &mut cbuf, 10);
            digits(&mut rng, &mut padbuf, 5);
            let k = 1 + rng.below(cfg.table_size.max(1));
            if id > next {
                stmt.push(',');
            }
            if cfg.auto_inc {
                stmt.push_str(&format!("({k},'{cbuf}','{padbuf}')"));
            } else {
                stmt.push_str(&format!("({id},{k},'{cbuf}','{padbuf}')"));
            }
        }
        c.simple(&stmt).await.map_err(|e| fail("cannot load", e))?;
        next = end + 1;
    }
    if cfg.create_secondary {
        c.simple(&format!("CREATE INDEX k_{t} ON sbtest{t}(k)"))
            .await
            .map_err(|e| fail("cannot index", e))?;
    }
    // The id index `CREATE TABLE` could not declare (PostgreSQL).
    if cfg.secondary && d.inline_index("xid", "id").is_none() {
        c.simple(&format!("CREATE INDEX xid_{t} ON sbtest{t}(id)"))
            .await
            .map_err(|e| fail("cannot index", e))?;
    }
    if d.statistics_after_load() {
        c.simple(&d.analyze(&format!("sbtest{t}"), &[]))
            .await
            .map_err(|e| fail("cannot analyze", e))?;
    }
    c.close().await;
    Ok(cfg.table_size)
}

/// sysbench's c/pad values: `groups` groups of 11 random digits joined by '-'.
fn digits(rng: &mut Rng, out: &mut String, groups: usize) {
    out.clear();
    for g in 0..groups {
        if g > 0 {
            out.push('-');
        }
        let mut v = rng.next_u64();
        for _ in 0..11 {
            out.push(char::from(b'0' + (v % 10) as u8));
            v /= 10;
        }
    }
}

/// The statements of a run, built once: texts per table and kind, and one transaction.
struct Plan {
    cfg: OltpConfig,
    txn: Vec<Stmt>,
    /// (driver text, `?` text) by `table_index * KINDS + kind`.
    texts: Vec<(String, String)>,
    rows: RowChooser,
    auto_insert: bool,
    /// BEGIN and COMMIT go through the protocol's prepared statements (false on MySQL,
    /// which refuses them there: they go as text).
    prepared_trx: bool,
}

const KINDS: usize = Stmt::ALL.len();

impl Plan {
    fn new(db: &Db, cfg: &OltpConfig) -> Plan {
        let auto_insert = cfg.test == OltpTest::Insert && cfg.auto_inc;
        let mut texts = Vec::new();
        for t in 1..=cfg.tables {
            for s in Stmt::ALL {
                let auto = s == Stmt::Insert && auto_insert;
                texts.push((
                    sql::text(s, t, db.dialect.sql(), cfg.random_points, auto),
                    sql::plain(s, t, cfg.random_points, auto),
                ));
            }
        }
        Plan {
            cfg: cfg.clone(),
            txn: sql::transaction(cfg),
            texts,
            rows: RowChooser::new(cfg.table_size, cfg.distribution),
            auto_insert,
            prepared_trx: db.dialect.sql().prepares_transaction_control(),
        }
    }
}

/// Runs the workload against `db`: connect every connection, warm up, measure.
pub fn run(db: &Db, cfg: &OltpConfig, seed: u64, d: &Drive) -> Result<RunRecord, LoadError> {
    let threads = driver::client_threads_for(
        cfg.client_threads,
        cfg.connections,
        bakeoff_os::cpus::unpinned_load_cpus(),
    );
    let plan = Arc::new(Plan::new(db, cfg));
    let w = driver::drive_lanes(
        cfg.connections,
        threads,
        d,
        db,
        &plan,
        |_| thread_rec(cfg),
        |conn, lane| {
            let seed = driver::connection_seed(seed, conn);
            async move { connection(conn, &lane, seed).await }
        },
    )?;
    let mut r = summarize(w.outs, (w.start, w.end), threads, cfg.rate);
    r.reconnects = w.reconnects;
    d.live.set_progress(r.ops, w.end);
    Ok(r)
}

/// A client thread's measurements before its run.
fn thread_rec(cfg: &OltpConfig) -> ThreadRec {
    let mut rec = ThreadRec::new(1, KINDS, 0);
    if cfg.rate.is_some() {
        // The open loop's recorder also keeps the service times (from the actual send).
        rec.rec = Recorder::new(1, true);
    }
    rec
}

type Lane = driver::Lane<Plan>;

/// One connection: open it, wait for the warmup, run transactions until the end: back to
/// back (closed loop), or at the intended times of its schedule when the run has an
/// offered rate (open loop).
async fn connection(conn: usize, lane: &Lane, seed: u64) {
    let plan = &*lane.work;
    let Some(mut client) = lane
        .open(
            conn,
            plan.cfg.connections,
            plan.texts.len(),
            plan.cfg.prepared,
        )
        .await
    else {
        return;
    };
    let mut w = Worker {
        rng: Rng::new(seed),
        cbuf: String::with_capacity(128),
        padbuf: String::with_capacity(64),
        timings: Vec::with_capacity(plan.txn.len()),
        insert_seq: 0,
        conn,
        trx_as_text: !plan.prepared_trx,
    };
    match plan.cfg.rate {
        None => closed_loop(lane, &mut client, &mut w).await,
        Some(rate) => open_loop(lane, &mut client, &mut w, rate).await,
    }
    lane.close(client).await;
}

/// Transactions back to back; each one's response time from its start.
async fn closed_loop(lane: &Lane, client: &mut Client, w: &mut Worker) {
    let (plan, sh, st) = (&*lane.work, &*lane.sh, &*lane.st);
    while !sh.stopped() {
        if lane.blocking {
            lane.tick();
        }
        let measuring = st.borrow().measuring;
        let started = Instant::now();
        match w.transaction(client, plan).await {
            Ok(()) => {
                if measuring && st.borrow().measuring {
                    let ns = started.elapsed().as_nanos() as u64;
                    completed(lane, w, ns, ns);
                }
            }
            Err((stmt, e)) => {
                if !recover(lane, client, stmt, e, measuring).await {
                    break;
                }
            }
        }
    }
}

/// Transactions at this connection's intended times: `rate` over all connections, so
/// one every `connections / rate` seconds here, at fixed intervals (as kv's default
/// `arrival = "uniform"`), the connections' schedules staggered evenly over one interval.
/// A transaction's response time runs from its intended start, so one that waits behind
/// a slow one (a backlog) counts its wait: no coordinated omission. The schedule never
/// waits for the server: behind it, transactions go back to back until it is caught up.
async fn open_loop(lane: &Lane, client: &mut Client, w: &mut Worker, rate: f64) {
    let (plan, sh, st) = (&*lane.work, &*lane.sh, &*lane.st);
    let connections = plan.cfg.connections.max(1) as f64;
    let interval = 1e9 * connections / rate.max(1e-9);
    let mut due = sh.now_ns() as f64 + interval * w.conn as f64 / connections;
    while !sh.stopped() {
        let intended = due as u64;
        due += interval;
        if !pace(lane, intended).await {
            break;
        }
        let measuring = st.borrow().measuring;
        let sent = sh.now_ns();
        match w.transaction(client, plan).await {
            Ok(()) => {
                if measuring && st.borrow().measuring {
                    let now = sh.now_ns();
                    completed(lane, w, now.saturating_sub(intended), now - sent);
                    if sent.saturating_sub(intended) > LATE_NS {
                        st.borrow_mut().rec.late += 1;
                    }
                }
            }
            Err((stmt, e)) => {
                if !recover(lane, client, stmt, e, measuring).await {
                    break;
                }
            }
        }
    }
}

/// Open loop: a transaction sent more than this after its intended time is late (as the
/// kv engine counts).
const LATE_NS: u64 = 1_000_000;

/// Waits until `intended` (ns since the run's epoch); false if the run stopped first. A
/// connection that owns its thread (blocking mode) sleeps the thread, to the tens of
/// microseconds, and ticks the thread's window itself; connections sharing a thread sleep
/// on the runtime's timer, whose resolution is 1 ms (a send up to 1 ms after its intended
/// time, which its response time includes).
async fn pace(lane: &Lane, intended: u64) -> bool {
    let sh = &*lane.sh;
    loop {
        if lane.blocking {
            lane.tick();
        }
        if sh.stopped() {
            return false;
        }
        let now = sh.now_ns();
        if now >= intended {
            return true;
        }
        let wait = Duration::from_nanos(intended - now);
        if lane.blocking {
            // In steps, so the window's ticks and the run's end are seen.
            std::thread::sleep(wait.min(Duration::from_millis(10)));
        } else if !sh.sleep(wait).await {
            return false;
        }
    }
}

/// Records a completed transaction of the measured window: its response and service
/// times (equal in the closed loop), its statements' counts and times.
#[inline]
fn completed(lane: &Lane, w: &Worker, response_ns: u64, service_ns: u64) {
    let mut s = lane.st.borrow_mut();
    s.rec.record(0, response_ns, service_ns);
    s.queries += w.timings.len() as u64;
    for (k, t) in &w.timings {
        s.kinds[*k].saturating_record((*t).max(1));
    }
    drop(s);
    lane.sh.measured.fetch_add(1, Ordering::Relaxed);
}

/// A failed transaction: an error `ignore_errors` names is counted (when `measuring`)
/// and rolled back; a lost connection is reopened (up to `max_reconnects`); anything else
/// fails the run. False when the connection must stop.
async fn recover(
    lane: &Lane,
    client: &mut Client,
    stmt: Stmt,
    e: DbError,
    measuring: bool,
) -> bool {
    let (db, plan, sh, st) = (&lane.db, &*lane.work, &*lane.sh, &*lane.st);
    if sh.stopped() {
        return false;
    }
    if plan.cfg.ignore_errors.iter().any(|k| k == e.kind) {
        if measuring {
            st.borrow_mut().rec.error(e.kind);
        }
        let _ = client.simple("ROLLBACK").await;
        return true;
    }
    if e.kind == "lost_connection" {
        let lost = sh.reconnects.fetch_add(1, Ordering::SeqCst) + 1;
        if lost > plan.cfg.max_reconnects {
            sh.fail(format!(
                "{lost} connections lost mid-run (more than max_reconnects = {}); last: {}",
                plan.cfg.max_reconnects, e.message
            ));
            return false;
        }
        st.borrow_mut().rec.error("lost_connection");
        let reopened = Client::connect(db, plan.texts.len(), plan.cfg.prepared).await;
        return match reopened.and_then(|mut c| {
            if lane.blocking {
                c.make_blocking()?;
            }
            Ok(c)
        }) {
            Ok(c) => {
                *client = c;
                true
            }
            Err(e) => {
                sh.fail(format!("reconnecting failed: {}", e.message));
                false
            }
        };
    }
    let hint = match e.kind {
        "too_many_connections" => "; raise max_connections",
        "max_prepared_stmt_count" => "; raise max_prepared_stmt_count or set prepared = false",
        _ => "",
    };
    sh.fail(format!(
        "{} failed: {} [{}]{hint}",
        stmt.name(),
        e.message,
        e.kind
    ));
    false
}

/// Per-connection generator state.
struct Worker {
    rng: Rng,
    cbuf: String,
    padbuf: String,
    /// (kind index, ns) of the statements of the last transaction.
    timings: Vec<(usize, u64)>,
    insert_seq: u64,
    conn: usize,
    /// BEGIN and COMMIT go as text: the dialect says the server cannot prepare them, or
    /// this server refused to (MariaDB before 10.3: error 1295), as sysbench's MySQL
    /// driver falls back on that error.
    trx_as_text: bool,
}

/// The MySQL protocol's "This command is not supported in the prepared statement
/// protocol yet".
fn cannot_prepare(e: &DbError) -> bool {
    e.message.ends_with("(error 1295)")
}

impl Worker {
    /// The id an INSERT without `auto_inc` gives: the row this transaction deleted, else
    /// (oltp_insert) an id above the table, unique per connection.
    fn insert_id(&mut self, cfg: &OltpConfig, deleted: i64) -> i64 {
        if deleted > 0 {
            return deleted;
        }
        self.insert_seq += 1;
        (cfg.table_size + 1 + self.conn as u64 + self.insert_seq * cfg.connections as u64) as i64
    }

    async fn transaction(&mut self, c: &mut Client, p: &Plan) -> Result<(), (Stmt, DbError)> {
        self.timings.clear();
        let cfg = &p.cfg;
        let mut base = 0;
        let mut last = None;
        let mut deleted = 0i64;
        for &s in &p.txn {
            if new_group(last, s) {
                // As sysbench: each group of statements of one kind picks its table.
                base = self.rng.below(u64::from(cfg.tables.max(1))) as usize * KINDS;
            }
            last = Some(s);
            let (text, plain) = &p.texts[base + s.index()];
            let id = p.rows.next(&mut self.rng) as i64;
            let range_end = id + i64::from(cfg.range_size) - 1;
            let t0 = Instant::now();
            let r = match s {
                // Prepared like sysbench's; one statement for all tables (as text
                // where the server cannot prepare them).
                Stmt::Begin | Stmt::Commit if !self.trx_as_text => {
                    match c.exec(s.index(), text, plain, &[]).await {
                        Err(e) if cannot_prepare(&e) => {
                            self.trx_as_text = true;
                            c.simple(plain).await
                        }
                        r => r,
                    }
                }
                Stmt::Begin | Stmt::Commit => c.simple(plain).await,
                Stmt::PointSelect | Stmt::IndexUpdate => {
                    c.exec(base + s.index(), text, plain, &[Param::Int(id)])
                        .await
                }
                Stmt::Delete => {
                    deleted = id;
                    c.exec(base + s.index(), text, plain, &[Param::Int(id)])
                        .await
                }
                Stmt::SimpleRange | Stmt::SumRange | Stmt::OrderRange | Stmt::DistinctRange => {
                    let ps = [Param::Int(id), Param::Int(range_end)];
                    c.exec(base + s.index(), text, plain, &ps).await
                }
                Stmt::NonIndexUpdate => {
                    digits(&mut self.rng, &mut self.cbuf, 10);
                    let ps = [Param::Text(&self.cbuf), Param::Int(id)];
                    c.exec(base + s.index(), text, plain, &ps).await
                }
                Stmt::Insert => {
                    digits(&mut self.rng, &mut self.cbuf, 10);
                    digits(&mut self.rng, &mut self.padbuf, 5);
                    let k = p.rows.next(&mut self.rng) as i64;
                    if p.auto_insert {
                        let ps = [
                            Param::Int(k),
                            Param::Text(&self.cbuf),
                            Param::Text(&self.padbuf),
                        ];
                        c.exec(base + s.index(), text, plain, &ps).await
                    } else {
                        let new_id = self.insert_id(cfg, deleted);
                        let ps = [
                            Param::Int(new_id),
                            Param::Int(k),
                            Param::Text(&self.cbuf),
                            Param::Text(&self.padbuf),
                        ];
                        c.exec(base + s.index(), text, plain, &ps).await
                    }
                }
                Stmt::RandomPoints => {
                    let ps: Vec<Param> = (0..cfg.random_points.max(1))
                        .map(|_| Param::Int(p.rows.next(&mut self.rng) as i64))
                        .collect();
                    c.exec(base + s.index(), text, plain, &ps).await
                }
                Stmt::RandomRanges => {
                    let ps: Vec<Param> = (0..cfg.random_points.max(1))
                        .flat_map(|_| {
                            let lo = p.rows.next(&mut self.rng) as i64;
                            [Param::Int(lo), Param::Int(lo + RANDOM_RANGE_DELTA)]
                        })
                        .collect();
                    c.exec(base + s.index(), text, plain, &ps).await
                }
            };
            r.map_err(|e| (s, e))?;
            self.timings
                .push((s.index(), t0.elapsed().as_nanos() as u64));
        }
        Ok(())
    }
}

/// Whether `s` starts a new group of statements (sysbench's `execute_point_selects`,
/// `execute_simple_ranges`, ...): a change of kind, except an insert that completes its
/// delete-insert pair or follows one.
fn new_group(last: Option<Stmt>, s: Stmt) -> bool {
    match (last, s) {
        (None, _) => true,
        (Some(Stmt::Delete), Stmt::Insert) | (Some(Stmt::Insert), Stmt::Delete) => false,
        (Some(l), s) => l != s,
    }
}

/// The threads' measurements as one record; at an offered `rate` (open loop) with the
/// service times, the late sends and the offered rate, and client-bound when the achieved
/// rate fell more than 5% short of it (as the kv engine says).
fn summarize(
    outs: Vec<ThreadRec>,
    window: (u64, u64),
    threads: usize,
    rate: Option<f64>,
) -> RunRecord {
    let mut service = histogram();
    let mut late = 0;
    for t in &outs {
        if let Some(h) = &t.rec.service {
            let _ = service.add(h);
        }
        late += t.rec.late;
    }
    let (mut r, kinds, _) = driver::merge(outs, window, threads, KINDS, 0);
    if let Some(rate) = rate {
        r.service_us = Some(percentiles(&service));
        r.service_hist = bakeoff_engine::serialize_histogram(&service);
        r.offered_ops_per_s = Some(rate);
        r.late = late;
        r.client_bound = r.client_bound || r.ops_per_s < 0.95 * rate;
    }
    r.by_command.insert("transaction".into(), r.ops);
    r.kinds.insert(
        "transaction".into(),
        KindStats {
            count: r.ops,
            latency_us: r.latency_us.clone(),
            hist: Vec::new(),
        },
    );
    for s in Stmt::ALL {
        let h = &kinds[s.index()];
        if !h.is_empty() {
            r.kinds.insert(s.name().into(), driver::kind_stats(h));
        }
    }
    r
}

#[cfg(test)]
mod trx_tests {
    use super::*;

    #[test]
    fn a_begin_the_server_cannot_prepare_goes_as_text() {
        let refused = DbError {
            kind: "server_error",
            message:
                "This command is not supported in the prepared statement protocol yet (error 1295)"
                    .into(),
        };
        assert!(cannot_prepare(&refused));
        let deadlock = DbError {
            kind: "deadlock",
            message: "Deadlock found when trying to get lock (error 1213)".into(),
        };
        assert!(!cannot_prepare(&deadlock));
    }
}
