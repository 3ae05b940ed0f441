//! `sqlsuite`: named SQL operations in the spirit of MySQL's old sql-bench, each a fixed
//! amount of work timed on its own, run one after another on one connection (MariaDB
//! with InnoDB or MyISAM, PostgreSQL, and SQLite through `bakeoff-sqlited`).
//!
//! The suite is split into sql-bench's groups (alter-table, ATIS, big-tables, connect,
//! create, insert, select, transactions, wisconsin), run in that order. Every group
//! creates its own tables (all named `sb_...`), fills them untimed, times each of its
//! operations with a clock around the operation only, and drops its tables at the end
//! (and before it starts, in case an earlier run died): groups are independent and runs
//! repeatable. `scale` sizes the work: 1.0 is about sql-bench's full size (100,000 rows
//! inserted one by one in `insert`, 10,000 connections in `connect`, 10,000-row
//! Wisconsin tables); 0.01 runs the whole suite in a few seconds. The data and the keys
//! each operation uses are seeded, so two runs send the same statements.
//!
//! The SQL is text (no client-side prepared statements, except SQLite's
//! `once_prepared_select`, which has no SQL-level PREPARE); where the servers differ
//! (`DROP INDEX`, `PREPARE`, one table per `DROP TABLE` on SQLite) the server's
//! `SqlDialect` spells it.
//! On SQLite, whose library runs in bakeoff-sqlited behind a loopback round trip, loops of
//! independent statements are sent 100 to a round trip (`Ctx::batches`), so an operation
//! measures SQLite's work, as sql-bench (which ran SQLite in process) did. On MariaDB `engine` is added to every
//! `CREATE TABLE` (and set as the session's default engine).

mod data;
pub mod figures;
mod kind;
mod ops;
pub mod records;
mod section;
mod workload;

pub use data::{wisconsin_rows, wisconsin_string, WisconsinRow};
pub use kind::{SuiteKeys, SuiteKind};
pub use records::{OperationRecord, SuiteCell, SuiteRow, SuiteRun};
pub use workload::{Suite, VERIFY_SCALE};

use crate::verify;
use bakeoff_engine::rng::{mix, Rng};
use bakeoff_engine::{Live, LoadError};
use bakeoff_sqlclient::{Client, DbError, Param};
use bakeoff_sqlclient::{Db, Setting, SqlDialect};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// What to run: the size of the work, the groups (run in sql-bench's order whatever the
/// order here), and MariaDB's storage engine (None: the server's default; ignored on
/// PostgreSQL).
#[derive(Debug, Clone, PartialEq)]
pub struct SuiteConfig {
    pub scale: f64,
    pub groups: Vec<Group>,
    pub engine: Option<String>,
}

impl Default for SuiteConfig {
    fn default() -> Self {
        SuiteConfig {
            scale: 1.0,
            groups: Group::ALL.to_vec(),
            engine: None,
        }
    }
}

/// One of sql-bench's test files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Group {
    AlterTable,
    Atis,
    BigTables,
    Connect,
    Create,
    Insert,
    Select,
    Transactions,
    Wisconsin,
}

impl Group {
    /// All groups, in the order they run.
    pub const ALL: [Group; 9] = [
        Group::AlterTable,
        Group::Atis,
        Group::BigTables,
        Group::Connect,
        Group::Create,
        Group::Insert,
        Group::Select,
        Group::Transactions,
        Group::Wisconsin,
    ];

    /// sql-bench's name for the group.
    pub fn name(self) -> &'static str {
        match self {
            Group::AlterTable => "alter-table",
            Group::Atis => "ATIS",
            Group::BigTables => "big-tables",
            Group::Connect => "connect",
            Group::Create => "create",
            Group::Insert => "insert",
            Group::Select => "select",
            Group::Transactions => "transactions",
            Group::Wisconsin => "wisconsin",
        }
    }

    /// The group called `name` (case-insensitive; `_` may stand for `-`).
    pub fn from_name(name: &str) -> Option<Group> {
        let n = name.trim().replace('_', "-");
        Group::ALL
            .into_iter()
            .find(|g| g.name().eq_ignore_ascii_case(&n))
    }
}

/// One timed operation: its group, its name, the seconds it took and the statements it
/// sent (for `connect` and friends, the connections it opened).
#[derive(Debug, Clone, PartialEq)]
pub struct OpResult {
    pub group: &'static str,
    pub name: String,
    pub seconds: f64,
    pub statements: u64,
}

/// The names of the operations of `group`, in the order they run.
pub fn op_names(group: Group) -> Vec<&'static str> {
    ops::spec(group).ops.iter().map(|o| o.name).collect()
}

/// Runs the chosen groups on one connection; stops at the first failure (after dropping
/// the failed group's tables) or when `cancel` is set.
pub fn run(db: &Db, cfg: &SuiteConfig, cancel: &AtomicBool) -> Result<Vec<OpResult>, LoadError> {
    Ok(run_suite(db, cfg, cancel, false, None)?.0)
}

/// [`run`], telling `live` its progress: every statement sent counts, so that the run's
/// watchdog judges the suite (a fixed amount of work, whose length is its own) by what it
/// does rather than by the plan's clock.
pub fn run_live(
    db: &Db,
    cfg: &SuiteConfig,
    cancel: &AtomicBool,
    live: &Live,
) -> Result<Vec<OpResult>, LoadError> {
    Ok(run_suite(db, cfg, cancel, false, Some(live))?.0)
}

/// The suite as a verification query set: every statement it sends, with its result
/// reduced to a [`verify::Outcome`] (see crates/workloads/src/verify.rs), and at the end
/// of each group `SELECT * FROM t` for every table the group created and kept, so its
/// writes are checked through what they left. Results are compared as sets of rows: the
/// suite's ORDER BYs have ties. The query of each outcome starts with
/// `[group/operation]`. Timings are not kept.
pub fn capture(
    db: &Db,
    cfg: &SuiteConfig,
    cancel: &AtomicBool,
) -> Result<Vec<verify::Outcome>, LoadError> {
    Ok(run_suite(db, cfg, cancel, true, None)?.1)
}

type SuiteOutput = (Vec<OpResult>, Vec<verify::Outcome>);

fn run_suite(
    db: &Db,
    cfg: &SuiteConfig,
    cancel: &AtomicBool,
    capture: bool,
    live: Option<&Live>,
) -> Result<SuiteOutput, LoadError> {
    check(cfg)?;
    let rt = bakeoff_sqlclient::driver::runtime()?;
    let c = rt
        .block_on(Client::connect(db, 1, true))
        .map_err(|e| LoadError::Sql(format!("sqlsuite: cannot connect: {}", e.message)))?;
    let mut ctx = Ctx {
        rt,
        c: Some(c),
        db,
        sql: db.dialect.sql(),
        engine: (cfg.engine.as_deref()).and_then(|e| db.dialect.sql().storage_engine_clause(e)),
        scale: cfg.scale,
        cancel,
        statements: 0,
        live: live.map(|l| (l, Instant::now())),
        rng: Rng::new(0),
        capture: capture.then(Capture::default),
        current: String::new(),
        // As a verification query set, the lookups go as text with their values on
        // every server, so that every version sends the same statements.
        prepare_in_sql: !capture,
    };
    // Where the dialect prepares in SQL, whether this server's EXECUTE takes values
    // (asked once, outside the timed statements).
    if ctx.prepare_in_sql && ctx.sql.execute(PS_PROBE, &[1]).is_some() {
        let (rt, c) = (&ctx.rt, ctx.c.as_mut().expect("connection open"));
        if let Ok(rows) = rt.block_on(c.rows("SELECT VERSION()")) {
            let version = rows.rows.first().and_then(|r| r.first().cloned().flatten());
            ctx.prepare_in_sql = execute_takes_values(version.as_deref().unwrap_or(""));
        }
    }
    if let Some(set) =
        (cfg.engine.as_deref()).and_then(|e| ctx.sql.session_setting(Setting::StorageEngine(e)))
    {
        ctx.exec(&set)?;
    }
    let mut out = Vec::new();
    for g in Group::ALL.into_iter().filter(|g| cfg.groups.contains(g)) {
        let spec = ops::spec(g);
        ctx.rng = Rng::new(mix(0x5b_5eed ^ g as u64));
        (spec.cleanup)(&mut ctx).map_err(|e| context(g, "cleanup", e))?;
        let r = run_group(&mut ctx, g, &spec, &mut out);
        if r.is_err() && !cancel.load(Ordering::Relaxed) {
            // A failed transaction must end before PostgreSQL takes another statement.
            let _ = ctx.try_exec("ROLLBACK");
            let _ = (spec.cleanup)(&mut ctx);
        }
        r?;
        ctx.select_created(g)?;
        (spec.cleanup)(&mut ctx).map_err(|e| context(g, "cleanup", e))?;
    }
    if let Some(c) = ctx.c.take() {
        ctx.rt.block_on(c.close());
    }
    let outcomes = ctx.capture.map(|c| c.outcomes).unwrap_or_default();
    Ok((out, outcomes))
}

fn check(cfg: &SuiteConfig) -> Result<(), LoadError> {
    if !(cfg.scale.is_finite() && cfg.scale > 0.0 && cfg.scale <= 1000.0) {
        let m = format!("sqlsuite scale must be in (0, 1000], not {}", cfg.scale);
        return Err(LoadError::Settings(m));
    }
    if let Some(e) = &cfg.engine {
        if e.is_empty() || !e.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            let m = format!("sqlsuite engine {e:?} is not a storage engine name");
            return Err(LoadError::Settings(m));
        }
    }
    Ok(())
}

/// Setup (untimed), then each operation with its own clock.
fn run_group(
    ctx: &mut Ctx,
    g: Group,
    spec: &ops::Spec,
    out: &mut Vec<OpResult>,
) -> Result<(), LoadError> {
    ctx.current = format!("{}/setup", g.name());
    (spec.setup)(ctx).map_err(|e| context(g, "setup", e))?;
    for op in spec.ops {
        ctx.current = format!("{}/{}", g.name(), op.name);
        if let Some(prep) = op.prep {
            prep(ctx).map_err(|e| context(g, op.name, e))?;
        }
        let before = ctx.statements;
        let t = Instant::now();
        (op.run)(ctx).map_err(|e| context(g, op.name, e))?;
        let seconds = t.elapsed().as_secs_f64();
        out.push(OpResult {
            group: g.name(),
            name: op.name.to_string(),
            seconds,
            statements: ctx.statements - before,
        });
    }
    Ok(())
}

fn context(g: Group, what: &str, e: LoadError) -> LoadError {
    match e {
        LoadError::Sql(m) => LoadError::Sql(format!("sqlsuite {} {what}: {m}", g.name())),
        e => e,
    }
}

/// The suite's connection and state: what every operation gets.
pub(crate) struct Ctx<'a> {
    rt: tokio::runtime::Runtime,
    /// Always Some between statements (taken only to close it).
    c: Option<Client>,
    pub db: &'a Db,
    /// The server's SQL.
    pub sql: &'static dyn SqlDialect,
    /// The storage engine clause for `CREATE TABLE` (where the server has storage
    /// engines: MariaDB).
    pub engine: Option<String>,
    pub scale: f64,
    cancel: &'a AtomicBool,
    /// Statements sent so far (connections opened count as statements).
    pub statements: u64,
    /// Where the run's progress is told (the statements sent), and when it began.
    live: Option<(&'a Live, Instant)>,
    /// Seeded per group.
    pub rng: Rng,
    /// Set when the suite runs as a verification query set ([`capture`]).
    capture: Option<Capture>,
    /// `group/operation` now running (names the captured statements).
    current: String,
    /// The lookups are prepared in SQL (PREPARE, EXECUTE ... USING values) where the
    /// dialect does; false where this server's EXECUTE takes user variables only (MariaDB
    /// before 10.2.3): there they are prepared through the protocol, as on MySQL. False
    /// when capturing (the statements as text, alike on every version).
    prepare_in_sql: bool,
}

/// A statement name for asking the dialect whether it prepares in SQL.
const PS_PROBE: &str = "sb_probe";

/// Whether `EXECUTE ... USING` takes values on the server whose `SELECT VERSION()` is
/// `version`: MariaDB from 10.2.3 (before it, user variables only, as MySQL's in every
/// version); any other server, or a version that does not parse, is taken to.
fn execute_takes_values(version: &str) -> bool {
    if !version.contains("MariaDB") {
        return true;
    }
    // "10.1.23-MariaDB", or behind MySQL's "5.5.5-" prefix of old handshakes.
    let v = version.strip_prefix("5.5.5-").unwrap_or(version);
    let parts: Vec<u32> = v
        .split(|c: char| !c.is_ascii_digit())
        .take(3)
        .map_while(|p| p.parse().ok())
        .collect();
    match parts.as_slice() {
        [a, b, c] => (*a, *b, *c) >= (10, 2, 3),
        _ => true,
    }
}

/// What [`capture`] collects.
#[derive(Default)]
struct Capture {
    outcomes: Vec<verify::Outcome>,
    /// Tables created by the current group, in order.
    created: Vec<String>,
}

/// The tables a `DROP TABLE [IF EXISTS] a, b` statement drops (none for any other).
fn dropped_tables(sql: &str) -> Vec<String> {
    let words: Vec<&str> = sql.split_whitespace().collect();
    let is_drop = words.len() > 2
        && words[0].eq_ignore_ascii_case("drop")
        && words[1].eq_ignore_ascii_case("table");
    if !is_drop {
        return Vec::new();
    }
    let mut rest = &words[2..];
    if rest.len() > 2
        && rest[0].eq_ignore_ascii_case("if")
        && rest[1].eq_ignore_ascii_case("exists")
    {
        rest = &rest[2..];
    }
    rest.join(" ")
        .split(',')
        .map(|t| t.trim().to_string())
        .filter(|t| !t.is_empty())
        .collect()
}

/// The table a `CREATE TABLE` statement creates (None for any other statement).
fn created_table(sql: &str) -> Option<String> {
    let mut words = sql.split_whitespace();
    let create = words.next()?.eq_ignore_ascii_case("create");
    let table = words.next()?.eq_ignore_ascii_case("table");
    let name = words.next()?;
    let name = name.split('(').next().unwrap_or(name);
    (create && table && !name.is_empty()).then(|| name.to_string())
}

impl Ctx<'_> {
    /// `full` (the count at scale 1) times the scale, at least `min`.
    pub fn n(&self, full: u64, min: u64) -> u64 {
        ((full as f64 * self.scale).round() as u64).max(min)
    }

    /// Counts `n` statements sent, and tells the run's progress.
    fn sent(&mut self, n: u64) {
        self.statements += n;
        if let Some((live, began)) = self.live {
            live.set_progress(self.statements, 1 + began.elapsed().as_nanos() as u64);
        }
    }

    /// Sends one statement; the server's error is the caller's to judge.
    pub fn try_exec(&mut self, sql: &str) -> Result<Result<(), DbError>, LoadError> {
        if self.cancel.load(Ordering::Relaxed) {
            return Err(LoadError::Cancelled);
        }
        self.sent(1);
        let (rt, c) = (&self.rt, self.c.as_mut().expect("connection open"));
        if self.capture.is_none() {
            return Ok(rt.block_on(c.simple(sql)));
        }
        let got = rt.block_on(c.rows(sql));
        self.record(sql, &got);
        Ok(got.map(|_| ()))
    }

    /// Keeps a statement's outcome when capturing.
    fn record(&mut self, sql: &str, got: &Result<bakeoff_sqlclient::Rows, DbError>) {
        let Some(cap) = self.capture.as_mut() else {
            return;
        };
        if let Some(t) = created_table(sql) {
            cap.created.push(t);
        }
        let dropped = dropped_tables(sql);
        cap.created.retain(|t| !dropped.contains(t));
        // sql-bench's ORDER BYs have ties by design (order_by_big_key_prefix sorts on a
        // key prefix): which of the tied rows comes first is the engine's business.
        let mut o = verify::outcome(sql, self.statements as usize, got, false);
        o.query = format!("[{}] {sql}", self.current);
        cap.outcomes.push(o);
    }

    /// When capturing: `SELECT * FROM t` for each table the group created and has not
    /// dropped, so the group's writes are compared through what they left.
    fn select_created(&mut self, g: Group) -> Result<(), LoadError> {
        let Some(cap) = self.capture.as_mut() else {
            return Ok(());
        };
        let mut tables = std::mem::take(&mut cap.created);
        tables.dedup();
        self.current = format!("{}/after the group", g.name());
        for t in tables {
            // An error is an outcome like any other, compared between variants.
            let _ = self.try_exec(&format!("SELECT * FROM {t}"))?;
        }
        if let Some(cap) = self.capture.as_mut() {
            cap.created.clear();
        }
        Ok(())
    }

    /// Whether loops of independent statements go [`ops::BATCH`] to a round trip: on an
    /// embedded library (SQLite, except when capturing), which runs in bakeoff-sqlited
    /// behind a loopback round trip that costs ten times a primary-key lookup
    /// (bench/RESULTS.md). sql-bench ran SQLite in process; batching keeps the suite
    /// measuring SQLite's work.
    pub fn batches(&self) -> bool {
        self.sql.embedded_library() && self.capture.is_none()
    }

    /// Sends `count` statements as one multi-statement text (see [`Ctx::batches`]); the
    /// first that fails fails the suite.
    pub fn exec_batch(&mut self, sql: &str, count: u64) -> Result<(), LoadError> {
        self.exec(sql)?;
        self.sent(count - 1);
        Ok(())
    }

    /// Sends one statement, reading and dropping any rows; an error fails the suite.
    pub fn exec(&mut self, sql: &str) -> Result<(), LoadError> {
        self.try_exec(sql)?.map_err(|e| failed(sql, e))
    }

    /// The dialect's `PREPARE`, where this server runs it as the suite sends it (see
    /// `prepare_in_sql`); None: prepare through the protocol.
    pub fn sql_prepare(&self, name: &str, sql: &str) -> Option<String> {
        self.prepare_in_sql
            .then(|| self.sql.prepare(name, sql))
            .flatten()
    }

    /// The dialect's `EXECUTE` of what [`Ctx::sql_prepare`] made.
    pub fn sql_execute(&self, name: &str, args: &[i64]) -> Option<String> {
        self.prepare_in_sql
            .then(|| self.sql.execute(name, args))
            .flatten()
    }

    /// The dialect's `DEALLOCATE` of what [`Ctx::sql_prepare`] made.
    pub fn sql_deallocate(&self, name: &str) -> Option<String> {
        self.prepare_in_sql
            .then(|| self.sql.deallocate(name))
            .flatten()
    }

    /// Runs the one statement prepared through the protocol (`$n` parameters): parsed on
    /// first use, then only bound and executed.
    /// `plain` is the `?` form, sent as text with the values inlined when capturing.
    pub fn exec_prepared(
        &mut self,
        sql: &str,
        plain: &str,
        params: &[Param<'_>],
    ) -> Result<(), LoadError> {
        if self.capture.is_some() {
            return self.exec(&bakeoff_sqlclient::inline(plain, params));
        }
        if self.cancel.load(Ordering::Relaxed) {
            return Err(LoadError::Cancelled);
        }
        self.sent(1);
        let (rt, c) = (&self.rt, self.c.as_mut().expect("connection open"));
        rt.block_on(c.exec(0, sql, sql, params))
            .map_err(|e| failed(sql, e))
    }

    /// Opens a new connection (counted as a statement).
    pub fn connect(&mut self) -> Result<Client, LoadError> {
        if self.cancel.load(Ordering::Relaxed) {
            return Err(LoadError::Cancelled);
        }
        self.sent(1);
        self.rt
            .block_on(Client::connect(self.db, 0, false))
            .map_err(|e| LoadError::Sql(format!("cannot connect: {}", e.message)))
    }

    /// Runs `sql` on another connection `c`, dropping its rows.
    pub fn exec_on(&mut self, c: &mut Client, sql: &str) -> Result<(), LoadError> {
        self.sent(1);
        if self.capture.is_none() {
            return self.rt.block_on(c.simple(sql)).map_err(|e| failed(sql, e));
        }
        let got = self.rt.block_on(c.rows(sql));
        self.record(sql, &got);
        got.map(|_| ()).map_err(|e| failed(sql, e))
    }

    /// Closes another connection.
    pub fn close(&mut self, c: Client) {
        self.rt.block_on(c.close());
    }

    /// PostgreSQL's COPY of text-format `data`.
    pub fn copy(&mut self, sql: &str, data: &[u8]) -> Result<(), LoadError> {
        self.sent(1);
        let (rt, c) = (&self.rt, self.c.as_mut().expect("connection open"));
        match rt.block_on(c.copy_in(sql, data)) {
            Some(r) => {
                let got = r.map(|affected| bakeoff_sqlclient::Rows {
                    affected,
                    ..Default::default()
                });
                self.record(sql, &got);
                got.map(|_| ()).map_err(|e| failed(sql, e))
            }
            None => Err(LoadError::Sql(format!("{sql}: COPY needs PostgreSQL"))),
        }
    }

    /// `CREATE TABLE name (body)` with the engine clause where there is one (MariaDB).
    pub fn create(&mut self, name: &str, body: &str) -> Result<(), LoadError> {
        let sql = self.create_sql(name, body);
        self.exec(&sql)
    }

    pub fn create_sql(&self, name: &str, body: &str) -> String {
        let engine = self.engine.as_deref().unwrap_or_default();
        format!("CREATE TABLE {name} ({body}){engine}")
    }

    /// Drops the tables that exist of `names`.
    pub fn drop_tables(&mut self, names: &[&str]) -> Result<(), LoadError> {
        if names.is_empty() {
            return Ok(());
        }
        // One statement for all, or (SQLite) one per table.
        for sql in self.sql.drop_tables(names) {
            self.exec(&sql)?;
        }
        Ok(())
    }

    /// A uniform draw in 0..n (n > 0).
    pub fn below(&mut self, n: u64) -> i64 {
        self.rng.below(n.max(1)) as i64
    }
}

fn failed(sql: &str, e: DbError) -> LoadError {
    let short: String = sql.chars().take(120).collect();
    LoadError::Sql(format!("{short}: {}", e.message))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_in_execute_from_mariadb_10_2_3() {
        assert!(!execute_takes_values("10.1.23-MariaDB"));
        assert!(!execute_takes_values("5.5.5-10.1.23-MariaDB"));
        assert!(!execute_takes_values("10.2.2-MariaDB-log"));
        assert!(execute_takes_values("10.2.11-MariaDB"));
        assert!(execute_takes_values("10.11.6-MariaDB-0+deb12u1"));
        assert!(execute_takes_values("11.4.5-MariaDB"));
        assert!(execute_takes_values(
            "PostgreSQL 9.6.24 on x86_64-pc-linux-gnu, compiled by gcc 4.4.7"
        ));
        assert!(execute_takes_values(""));
    }

    #[test]
    fn group_names_round_trip() {
        for g in Group::ALL {
            assert_eq!(Group::from_name(g.name()), Some(g));
        }
        assert_eq!(Group::from_name("atis"), Some(Group::Atis));
        assert_eq!(Group::from_name("alter_table"), Some(Group::AlterTable));
        assert_eq!(Group::from_name("nope"), None);
    }

    #[test]
    fn created_table_names_the_table() {
        assert_eq!(
            created_table("CREATE TABLE sb_a (id int)").as_deref(),
            Some("sb_a")
        );
        assert_eq!(
            created_table("create table sb_b(id int)").as_deref(),
            Some("sb_b")
        );
        assert_eq!(created_table("CREATE INDEX i ON t (a)"), None);
        assert_eq!(
            dropped_tables("DROP TABLE IF EXISTS sb_a, sb_b"),
            ["sb_a", "sb_b"]
        );
        assert_eq!(dropped_tables("DROP TABLE sb_c"), ["sb_c"]);
        assert!(dropped_tables("DROP INDEX i").is_empty());
        assert_eq!(created_table("SELECT 1"), None);
    }

    #[test]
    fn op_names_are_unique_within_groups() {
        for g in Group::ALL {
            let names = op_names(g);
            assert!(!names.is_empty(), "{}", g.name());
            let mut sorted = names.clone();
            sorted.sort();
            sorted.dedup();
            assert_eq!(sorted.len(), names.len(), "{}", g.name());
        }
    }
}
