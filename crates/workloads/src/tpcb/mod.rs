//! `tpcb`: pgbench's default benchmark, loosely TPC-B (the published MySQL study ran it as
//! "mysqlbench"): `pgbench_branches` (1 per scale), `pgbench_tellers` (10 per scale),
//! `pgbench_accounts` (100,000 per scale) and `pgbench_history`, and pgbench's built-in
//! scripts as transactions:
//!
//! - `tpcb-like` (default): BEGIN; UPDATE accounts (abalance += delta); SELECT abalance;
//!   UPDATE tellers; UPDATE branches; INSERT INTO history; COMMIT
//! - `simple-update` (`pgbench -N`): the tellers' and branches' updates left out
//! - `select-only` (`pgbench -S`): the SELECT alone, no transaction
//!
//! with `aid`, `bid`, `tid` uniform over their tables and `delta` uniform in
//! [-5000, 5000], as pgbench draws them. Statements go prepared, over the SQL driver's
//! lanes, from bakeoff's own clients; the tables are loaded once per variant
//! ([`Accounts`], a [`Tables`]) and every run starts on a copy. After each run the
//! balances are checked (TPC-B's consistency condition: the accounts', tellers' and
//! branches' balances each add up to the history's deltas); a failure makes the run
//! invalid.

mod figures;
mod kind;
pub mod records;
mod section;
mod workload;

pub use kind::{TpcbKeys, TpcbKind};
pub use records::{TpcbCell, TpcbRun};
pub use workload::Tpcb;

use crate::workload::Tables;
use bakeoff_engine::rng::Rng;
use bakeoff_engine::{LoadError, RunRecord};
use bakeoff_sqlclient::driver::{self, Drive};
use bakeoff_sqlclient::{Client, Db, DbError, Param};
use serde::{Deserialize, Serialize};
use std::rc::Rc;
use std::sync::Arc;
use std::time::Instant;

/// Rows per scale, as pgbench: branches, tellers, accounts.
pub const BRANCHES: u64 = 1;
pub const TELLERS: u64 = 10;
pub const ACCOUNTS: u64 = 100_000;

/// pgbench's built-in scripts (`pgbench -b NAME`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Builtin {
    #[default]
    TpcbLike,
    SimpleUpdate,
    SelectOnly,
}

impl Builtin {
    pub fn name(self) -> &'static str {
        match self {
            Builtin::TpcbLike => "tpcb-like",
            Builtin::SimpleUpdate => "simple-update",
            Builtin::SelectOnly => "select-only",
        }
    }
}

/// One run's settings.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    pub scale: u64,
    pub builtin: Builtin,
    /// MariaDB storage engine.
    pub engine: Option<String>,
}

/// The transaction's statements, in the order a tpcb-like transaction sends them.
const UPDATE_ACCOUNT: usize = 0;
const SELECT_BALANCE: usize = 1;
const UPDATE_TELLER: usize = 2;
const UPDATE_BRANCH: usize = 3;
const INSERT_HISTORY: usize = 4;
const STATEMENTS: [&str; 5] = [
    "UPDATE pgbench_accounts SET abalance = abalance + ? WHERE aid = ?",
    "SELECT abalance FROM pgbench_accounts WHERE aid = ?",
    "UPDATE pgbench_tellers SET tbalance = tbalance + ? WHERE tid = ?",
    "UPDATE pgbench_branches SET bbalance = bbalance + ? WHERE bid = ?",
    "INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (?, ?, ?, ?, CURRENT_TIMESTAMP)",
];
/// The statements' own keys in the prepared-statement cache, then BEGIN and COMMIT.
const BEGIN: usize = 5;
const COMMIT: usize = 6;

/// The one operation a run records: a transaction (select-only: the SELECT).
pub const COMMANDS: [&str; 1] = ["transaction"];

/// The tables, as pgbench creates them (keys first: no index is built after the load).
pub fn create_tables(db: &Db, engine: Option<&str>) -> Vec<String> {
    let clause = engine
        .and_then(|e| db.dialect.sql().storage_engine_clause(e))
        .unwrap_or_default();
    [
        "pgbench_branches (bid INTEGER NOT NULL PRIMARY KEY, bbalance INTEGER, filler CHAR(88))",
        "pgbench_tellers (tid INTEGER NOT NULL PRIMARY KEY, bid INTEGER, tbalance INTEGER, filler CHAR(84))",
        "pgbench_accounts (aid INTEGER NOT NULL PRIMARY KEY, bid INTEGER, abalance INTEGER, filler CHAR(84))",
        "pgbench_history (tid INTEGER, bid INTEGER, aid INTEGER, delta INTEGER, mtime TIMESTAMP, filler CHAR(22))",
    ]
    .iter()
    .map(|t| format!("CREATE TABLE {t}{clause}"))
    .collect()
}

/// The four tables at a scale, loaded once per variant.
pub struct Accounts(pub Config);

impl Tables for Accounts {
    fn key(&self) -> String {
        format!(
            "tpcb-s{}-{}",
            self.0.scale,
            self.0.engine.as_deref().unwrap_or("default")
        )
    }

    fn describe(&self) -> String {
        format!("pgbench tables, scale {}", self.0.scale)
    }

    /// About 15 MB per scale with the index (pgbench's figure), with room.
    fn bytes(&self) -> u64 {
        self.0.scale * 20 * 1024 * 1024
    }

    fn load(&self, db: &Db) -> Result<(u64, f64), String> {
        let started = Instant::now();
        let rt = driver::runtime().map_err(|e| e.to_string())?;
        rt.block_on(load(db, &self.0))
            .map(|rows| (rows, started.elapsed().as_secs_f64()))
            .map_err(|e| format!("loading the pgbench tables failed: {}", e.message))
    }
}

/// One row's values: its number (from 1) and the rows per scale.
type Row = fn(u64, u64) -> String;

/// Drops and creates the tables, then inserts every row with multi-row INSERTs (balances
/// 0; the accounts' filler '' as pgbench's, the others' NULL).
pub async fn load(db: &Db, c: &Config) -> Result<u64, DbError> {
    let mut client = Client::connect(db, 0, false).await?;
    let names = [
        "pgbench_history",
        "pgbench_accounts",
        "pgbench_tellers",
        "pgbench_branches",
    ];
    for drop in db.dialect.sql().drop_tables(&names) {
        client.simple(&drop).await?;
    }
    for create in create_tables(db, c.engine.as_deref()) {
        client.simple(&create).await?;
    }
    let mut rows = 0;
    let tables: [(&str, u64, Row); 3] = [
        ("pgbench_branches (bid, bbalance)", BRANCHES, |i, _| {
            format!("({i}, 0)")
        }),
        ("pgbench_tellers (tid, bid, tbalance)", TELLERS, |i, per| {
            format!("({i}, {}, 0)", (i - 1) / per + 1)
        }),
        (
            "pgbench_accounts (aid, bid, abalance, filler)",
            ACCOUNTS,
            |i, per| format!("({i}, {}, 0, '')", (i - 1) / per + 1),
        ),
    ];
    for (table, per, row) in tables {
        let n = per * c.scale;
        let mut next = 1;
        while next <= n {
            let end = (next + 1000).min(n + 1);
            let values: Vec<String> = (next..end).map(|i| row(i, per)).collect();
            let sql = format!("INSERT INTO {table} VALUES {}", values.join(","));
            client.simple(&sql).await?;
            next = end;
        }
        rows += n;
    }
    for (t, col) in [
        ("pgbench_branches", "bid"),
        ("pgbench_tellers", "tid"),
        ("pgbench_accounts", "aid"),
    ] {
        client.simple(&db.dialect.sql().analyze(t, &[col])).await?;
    }
    client.close().await;
    Ok(rows)
}

/// What every connection shares: the statements in the server's form and as `?` text.
struct Plan {
    cfg: Config,
    connections: usize,
    statements: Vec<(String, String)>,
}

/// Runs the script against `db` over `connections` connections from `threads` threads.
pub fn run(
    db: &Db,
    cfg: &Config,
    connections: usize,
    threads: usize,
    seed: u64,
    d: &Drive,
) -> Result<RunRecord, LoadError> {
    let mut statements: Vec<(String, String)> = STATEMENTS
        .iter()
        .map(|s| (db.dialect.sql().placeholders(s), s.to_string()))
        .collect();
    for s in ["BEGIN", "COMMIT"] {
        statements.push((s.to_string(), s.to_string()));
    }
    let plan = Arc::new(Plan {
        cfg: cfg.clone(),
        connections,
        statements,
    });
    let spread = (connections, threads);
    driver::drive_commands(spread, d, db, &plan, seed, &COMMANDS, connection)
}

type Lane = driver::Lane<Plan>;

/// Errors a transaction is rolled back after, counted, and the run goes on (pgbench's
/// `--max-tries` retries the same ones).
const RETRIED: [&str; 3] = ["deadlock", "lock_wait_timeout", "serialization"];

/// One draw of pgbench's variables.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Draw {
    pub aid: i64,
    pub bid: i64,
    pub tid: i64,
    pub delta: i64,
}

/// `aid`, `bid`, `tid` uniform over their tables and `delta` uniform in [-5000, 5000].
pub fn draw(rng: &mut Rng, scale: u64) -> Draw {
    let uniform = |rng: &mut Rng, n: u64| 1 + rng.below(n) as i64;
    Draw {
        aid: uniform(rng, ACCOUNTS * scale),
        bid: uniform(rng, BRANCHES * scale),
        tid: uniform(rng, TELLERS * scale),
        delta: rng.below(10_001) as i64 - 5000,
    }
}

/// One connection: transactions back to back until the run ends.
async fn connection(conn: usize, lane: Rc<Lane>, seed: u64) {
    let (plan, sh, st) = (&*lane.work, &*lane.sh, &*lane.st);
    let Some(mut client) = lane
        .open(conn, plan.connections, plan.statements.len(), true)
        .await
    else {
        return;
    };
    let mut rng = Rng::new(seed);
    while !sh.stopped() {
        if lane.blocking {
            lane.tick();
        }
        let measuring = st.borrow().measuring;
        let d = draw(&mut rng, plan.cfg.scale);
        let started = Instant::now();
        match transaction(&mut client, plan, d).await {
            Ok(queries) => {
                if measuring && st.borrow().measuring {
                    lane.record(0, started.elapsed().as_nanos() as u64, queries);
                }
            }
            Err(e) => {
                if sh.stopped() {
                    break;
                }
                if RETRIED.contains(&e.kind) {
                    let _ = client.simple("ROLLBACK").await;
                    if measuring {
                        st.borrow_mut().rec.error(e.kind);
                    }
                    continue;
                }
                sh.fail(format!(
                    "tpcb {} failed: {} [{}]",
                    plan.cfg.builtin.name(),
                    e.message,
                    e.kind
                ));
                break;
            }
        }
    }
    lane.close(client).await;
}

/// One prepared statement of the script.
async fn exec(c: &mut Client, p: &Plan, i: usize, params: &[Param<'_>]) -> Result<(), DbError> {
    let (text, plain) = &p.statements[i];
    c.exec(i, text, plain, params).await
}

/// One transaction of the script; the statements it sent.
async fn transaction(c: &mut Client, p: &Plan, d: Draw) -> Result<u64, DbError> {
    let (aid, bid, tid, delta) = (
        Param::Int(d.aid),
        Param::Int(d.bid),
        Param::Int(d.tid),
        Param::Int(d.delta),
    );
    if p.cfg.builtin == Builtin::SelectOnly {
        exec(c, p, SELECT_BALANCE, &[aid]).await?;
        return Ok(1);
    }
    c.simple(&p.statements[BEGIN].1).await?;
    exec(c, p, UPDATE_ACCOUNT, &[delta, aid]).await?;
    exec(c, p, SELECT_BALANCE, &[aid]).await?;
    let mut sent = 4;
    if p.cfg.builtin == Builtin::TpcbLike {
        exec(c, p, UPDATE_TELLER, &[delta, tid]).await?;
        exec(c, p, UPDATE_BRANCH, &[delta, bid]).await?;
        sent += 2;
    }
    exec(c, p, INSERT_HISTORY, &[tid, bid, aid, delta]).await?;
    c.simple(&p.statements[COMMIT].1).await?;
    Ok(sent)
}

/// `SELECT SUM(column) FROM table` (0 for no rows).
async fn sum(c: &mut Client, column: &str, table: &str) -> Result<i64, DbError> {
    let rows = c
        .rows(&format!("SELECT SUM({column}) FROM {table}"))
        .await?;
    Ok(rows
        .rows
        .first()
        .and_then(|r| r.first().cloned().flatten())
        .and_then(|v| v.parse::<f64>().ok())
        .map_or(0, |v| v as i64))
}

/// TPC-B's consistency condition on the tables a run left: the accounts', tellers' and
/// branches' balances each add up to the history's deltas (simple-update moves no
/// teller or branch; select-only moves nothing). The violated sums, in words; Err: the
/// check could not run.
pub async fn check_balances(db: &Db, builtin: Builtin) -> Result<Vec<String>, DbError> {
    let mut c = Client::connect(db, 0, false).await?;
    let history = sum(&mut c, "delta", "pgbench_history").await?;
    let mut sums = vec![(
        "accounts",
        sum(&mut c, "abalance", "pgbench_accounts").await?,
    )];
    if builtin == Builtin::TpcbLike {
        sums.push(("tellers", sum(&mut c, "tbalance", "pgbench_tellers").await?));
        sums.push((
            "branches",
            sum(&mut c, "bbalance", "pgbench_branches").await?,
        ));
    }
    c.close().await;
    Ok(sums
        .into_iter()
        .filter(|(_, s)| *s != history)
        .map(|(t, s)| format!("the {t}' balances add up to {s}, the history's deltas to {history}"))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use bakeoff_sqlclient::Dialect;

    #[test]
    fn draws_cover_pgbench_ranges() {
        let mut rng = Rng::new(3);
        let (mut lo, mut hi) = (0i64, 0i64);
        for _ in 0..20_000 {
            let d = draw(&mut rng, 2);
            assert!((1..=200_000).contains(&d.aid), "{d:?}");
            assert!(
                (1..=2).contains(&d.bid) && (1..=20).contains(&d.tid),
                "{d:?}"
            );
            assert!((-5000..=5000).contains(&d.delta), "{d:?}");
            lo = lo.min(d.delta);
            hi = hi.max(d.delta);
        }
        assert!(lo < -4900 && hi > 4900, "{lo} {hi}");
    }

    #[test]
    fn tables_follow_the_dialect() {
        let db = |dialect: Dialect| Db {
            dialect,
            addr: "127.0.0.1:1".parse().unwrap(),
            socket: None,
            user: String::new(),
            password: String::new(),
            database: String::new(),
            via_socket: false,
        };
        let my = create_tables(&db(Dialect::Mariadb), Some("MyISAM"));
        assert_eq!(my.len(), 4);
        assert!(
            my[2].starts_with("CREATE TABLE pgbench_accounts (aid INTEGER NOT NULL PRIMARY KEY")
        );
        assert!(my[2].ends_with("ENGINE = MyISAM"), "{}", my[2]);
        let pg = create_tables(&db(Dialect::Postgres), Some("MyISAM"));
        assert!(pg[3].ends_with("filler CHAR(22))"), "{}", pg[3]);
        assert_eq!(Builtin::default().name(), "tpcb-like");
    }
}
