//! YCSB on SQL servers, as YCSB's JDBC binding: a `usertable` with a `YCSB_KEY`
//! VARCHAR primary key and `FIELD0..FIELDn-1`; read is a SELECT by key, update sets one
//! field, insert adds a row, scan is `WHERE YCSB_KEY >= ? ORDER BY YCSB_KEY LIMIT ?`, a
//! read-modify-write a read then an update. The table is loaded once per variant
//! ([`UserTable`], a [`Tables`]) and every run starts on a copy of it.
//!
//! Writes go as prepared statements; reads and scans go as text, since bakeoff's lean
//! clients decode rows only there, and every field read back is checked
//! ([`super::value`]). Connections run over the SQL driver's lanes as oltp's do.

use super::gen::{key_name, Chooser, Inserts};
use super::value;
use super::{Config, COMMANDS, INSERT, RMW, SCAN, UPDATE};
use crate::workload::Tables;
use bakeoff_engine::rng::Rng;
use bakeoff_engine::{LoadError, RunRecord};
use bakeoff_sqlclient::driver::{self, Drive};
use bakeoff_sqlclient::{inline, Client, Db, DbError, Param, Rows, SqlDialect};
use std::rc::Rc;
use std::sync::Arc;
use std::time::Instant;

fn columns(fields: usize) -> String {
    let mut s = String::from("YCSB_KEY");
    for f in 0..fields {
        s.push_str(&format!(", FIELD{f}"));
    }
    s
}

/// `CREATE TABLE usertable`, with the variant's storage engine where it names one and
/// the server has engines.
pub fn create_table(dialect: &dyn SqlDialect, fields: usize, engine: Option<&str>) -> String {
    let mut s = String::from("CREATE TABLE usertable (YCSB_KEY VARCHAR(255) PRIMARY KEY");
    for f in 0..fields {
        s.push_str(&format!(", FIELD{f} TEXT"));
    }
    s.push(')');
    if let Some(clause) = engine.and_then(|e| dialect.storage_engine_clause(e)) {
        s.push_str(&clause);
    }
    s
}

/// The usertable of `records` records, loaded once per variant.
pub struct UserTable {
    pub cfg: Config,
    pub engine: Option<String>,
}

impl Tables for UserTable {
    fn key(&self) -> String {
        let c = &self.cfg;
        format!(
            "ycsb-r{}-f{}-l{}-{}",
            c.records,
            c.fields,
            c.field_length,
            self.engine.as_deref().unwrap_or("default")
        )
    }

    fn describe(&self) -> String {
        format!(
            "usertable x {} records of {} x {} bytes",
            self.cfg.records, self.cfg.fields, self.cfg.field_length
        )
    }

    /// A row, its key and its share of the primary key's index, with room for the
    /// storage's overhead.
    fn bytes(&self) -> u64 {
        self.cfg.records * (self.cfg.record_bytes() as u64 + 100) * 3 / 2
    }

    fn load(&self, db: &Db) -> Result<(u64, f64), String> {
        let started = Instant::now();
        let rt = driver::runtime().map_err(|e| e.to_string())?;
        rt.block_on(load(db, &self.cfg, self.engine.as_deref()))
            .map(|rows| (rows, started.elapsed().as_secs_f64()))
            .map_err(|e| format!("loading the usertable failed: {}", e.message))
    }
}

/// Creates the usertable (dropping an old one) and inserts records 0..records with
/// multi-row INSERTs of about 1 MB.
async fn load(db: &Db, c: &Config, engine: Option<&str>) -> Result<u64, DbError> {
    let mut client = Client::connect(db, 0, false).await?;
    client.simple("DROP TABLE IF EXISTS usertable").await?;
    client
        .simple(&create_table(db.dialect.sql(), c.fields, engine))
        .await?;
    let per_batch = (1_000_000 / (c.record_bytes() + 64)).clamp(1, 1000) as u64;
    let head = format!("INSERT INTO usertable ({}) VALUES ", columns(c.fields));
    let mut rng = Rng::new(0x9c5b);
    let mut field = Vec::with_capacity(c.field_length);
    let mut next = 0;
    while next < c.records {
        let end = (next + per_batch).min(c.records);
        let mut stmt =
            String::with_capacity(head.len() + (end - next) as usize * (c.record_bytes() + 64));
        stmt.push_str(&head);
        for key in next..end {
            if key > next {
                stmt.push(',');
            }
            stmt.push_str("('");
            stmt.push_str(key_name(key).as_str());
            stmt.push('\'');
            let gen = rng.next_u64() as u16;
            for f in 0..c.fields {
                field.clear();
                value::write_field(&mut field, key, f, gen, c.field_length);
                stmt.push_str(",'");
                stmt.push_str(std::str::from_utf8(&field).unwrap_or_default());
                stmt.push('\'');
            }
            stmt.push(')');
        }
        client.simple(&stmt).await?;
        next = end;
    }
    client.close().await;
    Ok(c.records)
}

/// The statements of a run and what every connection shares.
struct Plan {
    cfg: Config,
    connections: usize,
    /// Text (`?`) forms, inlined: reads and scans.
    read: String,
    scan: String,
    /// (server form, `?` form) of each field's update, then the insert.
    writes: Vec<(String, String)>,
    inserts: Arc<Inserts>,
    chooser: Chooser,
}

impl Plan {
    fn new(db: &Db, cfg: &Config, connections: usize) -> Plan {
        let cols = columns(cfg.fields);
        let mut writes: Vec<String> = (0..cfg.fields)
            .map(|f| format!("UPDATE usertable SET FIELD{f} = ? WHERE YCSB_KEY = ?"))
            .collect();
        writes.push(format!(
            "INSERT INTO usertable ({cols}) VALUES (?{})",
            ", ?".repeat(cfg.fields)
        ));
        Plan {
            cfg: cfg.clone(),
            connections,
            read: format!("SELECT {cols} FROM usertable WHERE YCSB_KEY = ?"),
            scan: format!(
                "SELECT {cols} FROM usertable WHERE YCSB_KEY >= ? ORDER BY YCSB_KEY LIMIT ?"
            ),
            writes: writes
                .into_iter()
                .map(|w| (db.dialect.sql().placeholders(&w), w))
                .collect(),
            inserts: Arc::new(Inserts::new(cfg.records)),
            chooser: Chooser::new(cfg.distribution, cfg.records),
        }
    }
}

/// Runs the mix against `db` over `connections` connections from `threads` threads.
pub fn run(
    db: &Db,
    cfg: &Config,
    connections: usize,
    threads: usize,
    seed: u64,
    d: &Drive,
) -> Result<RunRecord, LoadError> {
    let plan = Arc::new(Plan::new(db, cfg, connections));
    let spread = (connections, threads);
    driver::drive_commands(spread, d, db, &plan, seed, &COMMANDS, connection)
}

type Lane = driver::Lane<Plan>;

/// Errors a run counts and goes on after (as oltp's default ignore list).
const RETRIED: [&str; 4] = [
    "deadlock",
    "lock_wait_timeout",
    "serialization",
    "duplicate_key",
];

/// One connection: open it, then operations back to back until the run ends.
async fn connection(conn: usize, lane: Rc<Lane>, seed: u64) {
    let (plan, sh, st) = (&*lane.work, &*lane.sh, &*lane.st);
    let Some(mut client) = lane
        .open(conn, plan.connections, plan.writes.len(), true)
        .await
    else {
        return;
    };
    let mut w = Worker {
        rng: Rng::new(seed),
        chooser: plan.chooser.clone(),
        buf: Vec::with_capacity(plan.cfg.record_bytes()),
        tally: Tally::default(),
    };
    while !sh.stopped() {
        if lane.blocking {
            lane.tick();
        }
        let measuring = st.borrow().measuring;
        let op = plan.cfg.mix.pick(w.rng.below(1000));
        let started = Instant::now();
        w.tally = Tally::default();
        match w.op(&mut client, plan, op).await {
            Ok(()) => {
                if measuring && st.borrow().measuring {
                    let ns = started.elapsed().as_nanos() as u64;
                    let mut s = st.borrow_mut();
                    s.rec.misses += u64::from(w.tally.misses);
                    s.rec.verify_failures += u64::from(w.tally.failures);
                    drop(s);
                    lane.record(op, ns, u64::from(w.tally.queries));
                }
            }
            Err(e) => {
                if sh.stopped() {
                    break;
                }
                if RETRIED.contains(&e.kind) {
                    if measuring {
                        st.borrow_mut().rec.error(e.kind);
                    }
                    continue;
                }
                sh.fail(format!(
                    "ycsb {} failed: {} [{}]",
                    COMMANDS[op as usize], e.message, e.kind
                ));
                break;
            }
        }
    }
    lane.close(client).await;
}

#[derive(Debug, Default)]
struct Tally {
    misses: u32,
    failures: u32,
    queries: u32,
}

struct Worker {
    rng: Rng,
    chooser: Chooser,
    /// One record's field values, written per operation into the same buffer.
    buf: Vec<u8>,
    tally: Tally,
}

impl Worker {
    async fn op(&mut self, c: &mut Client, p: &Plan, op: u8) -> Result<(), DbError> {
        if op == INSERT {
            let key = p.inserts.take();
            let r = self.insert(c, p, key).await;
            p.inserts.acknowledge(key);
            return r;
        }
        let key = self.chooser.next(&mut self.rng, &p.inserts);
        match op {
            UPDATE => self.update(c, p, key).await,
            SCAN => {
                let n = 1 + self.rng.below(p.cfg.max_scan_length);
                let name = key_name(key);
                let sql = inline(&p.scan, &[Param::Text(name.as_str()), Param::Int(n as i64)]);
                self.tally.queries += 1;
                let rows = c.rows(&sql).await?;
                self.check_scan(&rows, &p.cfg);
                Ok(())
            }
            RMW => {
                self.read(c, p, key).await?;
                self.update(c, p, key).await
            }
            _ => self.read(c, p, key).await,
        }
    }

    async fn read(&mut self, c: &mut Client, p: &Plan, key: u64) -> Result<(), DbError> {
        let name = key_name(key);
        let sql = inline(&p.read, &[Param::Text(name.as_str())]);
        self.tally.queries += 1;
        let rows = c.rows(&sql).await?;
        match rows.rows.first() {
            None => self.tally.misses += 1,
            Some(row) => {
                if rows.rows.len() != 1 || !check_row(row, Some(key), &p.cfg) {
                    self.tally.failures += 1;
                }
            }
        }
        Ok(())
    }

    /// One field, as YCSB's default (writeallfields=false).
    async fn update(&mut self, c: &mut Client, p: &Plan, key: u64) -> Result<(), DbError> {
        let f = self.rng.below(p.cfg.fields as u64) as usize;
        let gen = self.rng.next_u64() as u16;
        self.buf.clear();
        value::write_field(&mut self.buf, key, f, gen, p.cfg.field_length);
        let name = key_name(key);
        let v = std::str::from_utf8(&self.buf).unwrap_or_default();
        let (text, plain) = &p.writes[f];
        self.tally.queries += 1;
        c.exec(
            f,
            text,
            plain,
            &[Param::Text(v), Param::Text(name.as_str())],
        )
        .await
    }

    async fn insert(&mut self, c: &mut Client, p: &Plan, key: u64) -> Result<(), DbError> {
        let (fields, len) = (p.cfg.fields, p.cfg.field_length);
        let gen = self.rng.next_u64() as u16;
        self.buf.clear();
        value::write_record(&mut self.buf, key, fields, len, gen);
        let name = key_name(key);
        let all = std::str::from_utf8(&self.buf).unwrap_or_default();
        let mut params = Vec::with_capacity(fields + 1);
        params.push(Param::Text(name.as_str()));
        params.extend((0..fields).map(|f| Param::Text(&all[f * len..(f + 1) * len])));
        let (text, plain) = &p.writes[fields];
        self.tally.queries += 1;
        c.exec(fields, text, plain, &params).await
    }

    /// Every row a record bakeoff wrote (their order is the server's collation's, so it
    /// is not checked).
    fn check_scan(&mut self, rows: &Rows, c: &Config) {
        if rows.rows.is_empty() {
            self.tally.misses += 1;
        }
        for row in &rows.rows {
            if !check_row(row, None, c) {
                self.tally.failures += 1;
            }
        }
    }
}

/// A row read back (`YCSB_KEY`, then every field): the record `key` (a scan: whichever
/// record its key names), every field one bakeoff wrote for it.
fn check_row(row: &[Option<String>], key: Option<u64>, c: &Config) -> bool {
    if row.len() != 1 + c.fields {
        return false;
    }
    let Some(Some(name)) = row.first() else {
        return false;
    };
    let first = row[1].as_deref().map(str::as_bytes);
    let Some(k) = key.or_else(|| first.and_then(value::field_key)) else {
        return false;
    };
    key_name(k).as_bytes() == name.as_bytes()
        && row[1..].iter().enumerate().all(|(f, v)| {
            v.as_deref()
                .is_some_and(|v| value::check_field(v.as_bytes(), k, f, c.field_length))
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ycsb::YcsbKeys;
    use bakeoff_sqlclient::Dialect;

    fn cfg() -> Config {
        Config::from_keys(&YcsbKeys {
            fields: 3,
            field_length: 20,
            ..YcsbKeys::default()
        })
    }

    fn row(key: u64, gen: u16) -> Vec<Option<String>> {
        let mut r = vec![Some(key_name(key).as_str().to_string())];
        for f in 0..3 {
            let mut v = Vec::new();
            value::write_field(&mut v, key, f, gen, 20);
            r.push(Some(String::from_utf8(v).unwrap()));
        }
        r
    }

    #[test]
    fn rows_are_checked_and_a_corrupted_one_is_caught() {
        let c = cfg();
        assert!(check_row(&row(7, 1), Some(7), &c));
        assert!(
            check_row(&row(7, 1), None, &c),
            "a scan's row names its record"
        );
        assert!(!check_row(&row(7, 1), Some(8), &c), "another record");
        let mut bad = row(7, 1);
        let f = bad[2].as_mut().unwrap();
        f.replace_range(18..19, if &f[18..19] == "A" { "B" } else { "A" });
        assert!(!check_row(&bad, Some(7), &c), "a changed byte");
        let mut renamed = row(7, 1);
        renamed[0] = Some(key_name(9).as_str().to_string());
        assert!(!check_row(&renamed, None, &c), "a record under another key");
        let mut short = row(7, 1);
        short.pop();
        assert!(!check_row(&short, Some(7), &c));
        let mut null = row(7, 1);
        null[3] = None;
        assert!(!check_row(&null, Some(7), &c));
    }

    #[test]
    fn scans_check_every_row_and_count_empty_results() {
        let c = cfg();
        let mut w = Worker {
            rng: Rng::new(1),
            chooser: Chooser::new(c.distribution, c.records),
            buf: Vec::new(),
            tally: Tally::default(),
        };
        let mut r = Rows {
            rows: (0..5).map(|k| row(k, 2)).collect(),
            ..Rows::default()
        };
        w.check_scan(&r, &c);
        assert_eq!((w.tally.failures, w.tally.misses), (0, 0));
        r.rows[3][2] = r.rows[4][2].clone();
        w.check_scan(&r, &c);
        assert_eq!(w.tally.failures, 1, "a field of another record");
        w.check_scan(&Rows::default(), &c);
        assert_eq!(w.tally.misses, 1);
    }

    #[test]
    fn statements() {
        assert_eq!(
            create_table(Dialect::Mariadb.sql(), 2, Some("MyISAM")),
            "CREATE TABLE usertable (YCSB_KEY VARCHAR(255) PRIMARY KEY, FIELD0 TEXT, FIELD1 TEXT) ENGINE = MyISAM"
        );
        assert_eq!(
            create_table(Dialect::Postgres.sql(), 1, Some("MyISAM")),
            "CREATE TABLE usertable (YCSB_KEY VARCHAR(255) PRIMARY KEY, FIELD0 TEXT)"
        );
    }
}
