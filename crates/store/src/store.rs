//! The SQLite file: opening (pragmas, schema), writing a record in one transaction, and
//! reading records back.

use crate::record::{CellEntry, Entry, Record, VariantEntry};
use crate::schema::{self, Migrated};
use crate::{Error, Result};
use rusqlite::{params, Connection, ErrorCode, OpenFlags, TransactionBehavior};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Above this many records, a read fetches all variants and cells in one query each.
const BULK: usize = 64;

/// How long a writer waits for another process's transaction before giving up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// An open history store.
pub struct Store {
    conn: Connection,
    path: PathBuf,
}

/// Which records [`Store::list`] returns.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// Only experiments with this name.
    pub name: Option<String>,
    /// At most this many (newest first); None = all.
    pub limit: Option<usize>,
}

/// An open write transaction. Dropped without [`Writer::commit`], it rolls back and
/// leaves the store as it was.
pub struct Writer<'a> {
    tx: rusqlite::Transaction<'a>,
    path: &'a Path,
}

fn sql_error(path: &Path) -> impl Fn(rusqlite::Error) -> Error + '_ {
    move |e| {
        if e.sqlite_error_code() == Some(ErrorCode::NotADatabase) {
            Error::NotAStore {
                path: path.to_path_buf(),
                reason: e.to_string(),
            }
        } else {
            Error::Sqlite {
                path: path.to_path_buf(),
                source: e,
            }
        }
    }
}

/// Checks, without writing, that an existing `path` is a store bakeoff created: a regular
/// file that is an SQLite database stamped with bakeoff's [`schema::APPLICATION_ID`] (or,
/// unstamped, one holding exactly bakeoff's tables and columns, from before the stamp) and
/// a schema version this bakeoff knows (an older one is migrated only by a writer). An
/// empty file, or an SQLite file with nothing in it, is a new store when `may_create`; for
/// a reader it holds nothing (false).
fn inspect(path: &Path, may_create: bool) -> Result<bool> {
    let not = |reason: &str| Error::NotAStore {
        path: path.to_path_buf(),
        reason: reason.to_string(),
    };
    let meta = std::fs::metadata(path).map_err(|e| Error::Io {
        path: path.to_path_buf(),
        source: e,
    })?;
    if !meta.is_file() {
        return Err(not("a directory, device or pipe, not a file"));
    }
    if meta.len() == 0 {
        return Ok(may_create);
    }
    let conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY)
        .map_err(|e| not(&e.to_string()))?;
    let sql = |e: rusqlite::Error| not(&e.to_string());
    let version = schema::user_version(&conn).map_err(sql)?;
    let app = schema::application_id(&conn).map_err(sql)?;
    let any: i64 = conn
        .query_row("SELECT count(*) FROM sqlite_master", [], |row| row.get(0))
        .map_err(sql)?;
    if app == 0 && version == 0 && any == 0 {
        // An SQLite file with nothing in it yet: a store another bakeoff is creating
        // right now (it migrates under the write lock), or an empty database.
        return Ok(may_create);
    }
    let ours = app == schema::APPLICATION_ID
        || (app == 0 && version == 1 && schema::has_v1_tables(&conn).map_err(sql)?);
    if !ours {
        return Err(not(&format!(
            "an SQLite database bakeoff did not create (application_id {app}, user_version {version}), another program's file"
        )));
    }
    if version > schema::SCHEMA_VERSION {
        return Err(Error::Newer {
            path: path.to_path_buf(),
            found: version,
        });
    }
    Ok(true)
}

/// INTEGER columns: SQLite's integers are i64.
fn int(x: usize) -> rusqlite::Result<i64> {
    i64::try_from(x).map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))
}

/// REAL columns: SQLite would store NaN as NULL anyway; say so explicitly.
fn finite(x: f64) -> Option<f64> {
    x.is_finite().then_some(x)
}

impl Store {
    /// Opens the store at `path`, creating it (and its folder) when absent, and brings
    /// its schema up to date.
    pub fn open(path: &Path) -> Result<Store> {
        if path.exists() {
            // Another bakeoff creating the store this instant can show a file that is
            // SQLite but not yet a store: look again for a moment before saying so.
            let mut tries = 0;
            loop {
                match inspect(path, true) {
                    Err(Error::NotAStore { .. }) if tries < 20 => {
                        tries += 1;
                        std::thread::sleep(std::time::Duration::from_millis(50));
                    }
                    other => {
                        other?;
                        break;
                    }
                }
            }
        }
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| Error::Io {
                path: dir.to_path_buf(),
                source: e,
            })?;
        }
        let err = sql_error(path);
        let mut conn = Connection::open(path).map_err(&err)?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(&err)?;
        // WAL: readers never block the writer, and a kill -9 mid-write leaves the last
        // committed state. FULL: a committed record survives a power cut too. Where WAL
        // is not possible (some network file systems), SQLite keeps its rollback
        // journal, which is just as atomic.
        let _mode: String = conn
            .pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get(0))
            .map_err(&err)?;
        conn.pragma_update(None, "synchronous", "FULL")
            .map_err(&err)?;
        conn.pragma_update(None, "foreign_keys", "ON")
            .map_err(&err)?;
        match schema::migrate(&mut conn).map_err(&err)? {
            Migrated::Current => {}
            Migrated::Newer(found) => {
                return Err(Error::Newer {
                    path: path.to_path_buf(),
                    found,
                })
            }
        }
        Ok(Store {
            conn,
            path: path.to_path_buf(),
        })
    }

    /// For reading only: None when there is no store at `path` yet (nothing is created);
    /// otherwise the file is checked to be a bakeoff store of a schema this bakeoff knows
    /// and opened read-only, so a read never changes it (no journal mode, no migration).
    pub fn open_existing(path: &Path) -> Result<Option<Store>> {
        if !path.exists() {
            return Ok(None);
        }
        if !inspect(path, false)? {
            return Ok(None);
        }
        let err = sql_error(path);
        let conn =
            Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY).map_err(&err)?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(&err)?;
        Ok(Some(Store {
            conn,
            path: path.to_path_buf(),
        }))
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// `PRAGMA user_version`.
    pub fn schema_version(&self) -> Result<i64> {
        schema::user_version(&self.conn).map_err(sql_error(&self.path))
    }

    /// Starts a write transaction (taking the write lock now, waiting for other writers).
    pub fn begin(&mut self) -> Result<Writer<'_>> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(sql_error(&self.path))?;
        Ok(Writer {
            tx,
            path: &self.path,
        })
    }

    /// Records one experiment in one transaction; returns its id.
    pub fn record(&mut self, e: &Entry) -> Result<i64> {
        let mut w = self.begin()?;
        let id = w.insert(e)?;
        w.commit()?;
        Ok(id)
    }

    /// Records, newest first.
    pub fn list(&self, f: &Filter) -> Result<Vec<Record>> {
        let limit = f.limit.map_or(-1, |n| i64::try_from(n).unwrap_or(i64::MAX));
        self.query_records(
            "WHERE (?1 IS NULL OR name = ?1) ORDER BY started_utc DESC, id DESC LIMIT ?2",
            params![f.name, limit],
        )
    }

    /// How many records match `f` (its limit ignored).
    pub fn count(&self, f: &Filter) -> Result<usize> {
        self.conn
            .query_row(
                "SELECT count(*) FROM experiments WHERE (?1 IS NULL OR name = ?1)",
                params![f.name],
                |row| row.get::<_, i64>(0),
            )
            .map(|n| n.max(0) as usize)
            .map_err(sql_error(&self.path))
    }

    /// The record with this id.
    pub fn get(&self, id: i64) -> Result<Option<Record>> {
        Ok(self
            .query_records("WHERE id = ?1", params![id])?
            .into_iter()
            .next())
    }

    /// Every experiment name in the store, sorted.
    pub fn names(&self) -> Result<Vec<String>> {
        let err = sql_error(&self.path);
        let mut st = self
            .conn
            .prepare("SELECT DISTINCT name FROM experiments ORDER BY name")
            .map_err(&err)?;
        let names = st
            .query_map([], |row| row.get(0))
            .map_err(&err)?
            .collect::<rusqlite::Result<Vec<String>>>()
            .map_err(&err)?;
        Ok(names)
    }

    /// Every record of experiment `name`, oldest first.
    pub fn history_of(&self, name: &str) -> Result<Vec<Record>> {
        self.query_records("WHERE name = ?1 ORDER BY started_utc, id", params![name])
    }

    fn query_records(&self, tail: &str, args: impl rusqlite::Params) -> Result<Vec<Record>> {
        let err = sql_error(&self.path);
        let sql = format!(
            "SELECT id, recorded_utc, started_utc, finished_utc, name, status, baseline, \
             hostname, cpu_model, bakeoff_version, folder FROM experiments {tail}"
        );
        let mut st = self.conn.prepare(&sql).map_err(&err)?;
        let mut records = st
            .query_map(args, |row| {
                Ok(Record {
                    id: row.get(0)?,
                    recorded_utc: row.get(1)?,
                    entry: Entry {
                        started_utc: row.get(2)?,
                        finished_utc: row.get(3)?,
                        name: row.get(4)?,
                        status: row.get(5)?,
                        baseline: row.get(6)?,
                        hostname: row.get(7)?,
                        cpu_model: row.get(8)?,
                        bakeoff_version: row.get(9)?,
                        folder: PathBuf::from(row.get::<_, String>(10)?),
                        variants: Vec::new(),
                        cells: Vec::new(),
                    },
                })
            })
            .map_err(&err)?
            .collect::<rusqlite::Result<Vec<Record>>>()
            .map_err(&err)?;
        if records.len() > BULK {
            self.fill_all(&mut records).map_err(&err)?;
            return Ok(records);
        }
        for r in &mut records {
            r.entry.variants = self.variants_of(r.id).map_err(&err)?;
            r.entry.cells = self.cells_of(r.id).map_err(&err)?;
        }
        Ok(records)
    }

    /// Every record's variants and cells from one pass over each table (a history of
    /// thousands read in two queries rather than two per record).
    fn fill_all(&self, records: &mut [Record]) -> rusqlite::Result<()> {
        let at: std::collections::HashMap<i64, usize> =
            records.iter().enumerate().map(|(i, r)| (r.id, i)).collect();
        let mut st = self.conn.prepare(
            "SELECT experiment_id, name, status FROM variants ORDER BY experiment_id, position",
        )?;
        let mut rows = st.query([])?;
        while let Some(row) = rows.next()? {
            if let Some(&i) = at.get(&row.get::<_, i64>(0)?) {
                records[i].entry.variants.push(VariantEntry {
                    name: row.get(1)?,
                    status: row.get(2)?,
                });
            }
        }
        let mut st = self.conn.prepare(
            "SELECT experiment_id, workload, connections, variant, median_ops_per_s, ci95_low, \
             ci95_high, valid_runs, instructions_per_op FROM cells ORDER BY experiment_id, position",
        )?;
        let nan = |x: Option<f64>| x.unwrap_or(f64::NAN);
        let mut rows = st.query([])?;
        while let Some(row) = rows.next()? {
            if let Some(&i) = at.get(&row.get::<_, i64>(0)?) {
                records[i].entry.cells.push(CellEntry {
                    workload: row.get(1)?,
                    connections: row.get::<_, i64>(2)?.max(0) as usize,
                    variant: row.get(3)?,
                    median_ops_per_s: nan(row.get(4)?),
                    ci95: [nan(row.get(5)?), nan(row.get(6)?)],
                    valid_runs: row.get::<_, i64>(7)?.max(0) as usize,
                    instructions_per_op: row.get(8)?,
                });
            }
        }
        Ok(())
    }

    fn variants_of(&self, id: i64) -> rusqlite::Result<Vec<VariantEntry>> {
        let mut st = self.conn.prepare_cached(
            "SELECT name, status FROM variants WHERE experiment_id = ?1 ORDER BY position",
        )?;
        let rows = st.query_map([id], |row| {
            Ok(VariantEntry {
                name: row.get(0)?,
                status: row.get(1)?,
            })
        })?;
        rows.collect()
    }

    fn cells_of(&self, id: i64) -> rusqlite::Result<Vec<CellEntry>> {
        let mut st = self.conn.prepare_cached(
            "SELECT workload, connections, variant, median_ops_per_s, ci95_low, ci95_high, \
             valid_runs, instructions_per_op FROM cells WHERE experiment_id = ?1 ORDER BY position",
        )?;
        let nan = |x: Option<f64>| x.unwrap_or(f64::NAN);
        let rows = st.query_map([id], |row| {
            Ok(CellEntry {
                workload: row.get(0)?,
                connections: row.get::<_, i64>(1)?.max(0) as usize,
                variant: row.get(2)?,
                median_ops_per_s: nan(row.get(3)?),
                ci95: [nan(row.get(4)?), nan(row.get(5)?)],
                valid_runs: row.get::<_, i64>(6)?.max(0) as usize,
                instructions_per_op: row.get(7)?,
            })
        })?;
        rows.collect()
    }
}

impl Writer<'_> {
    /// Inserts one experiment with its variants and cells; returns its id. Nothing is
    /// visible to others until [`Writer::commit`].
    pub fn insert(&mut self, e: &Entry) -> Result<i64> {
        let err = sql_error(self.path);
        self.tx
            .execute(
                "INSERT INTO experiments (recorded_utc, started_utc, finished_utc, name, status, \
                 baseline, hostname, cpu_model, bakeoff_version, folder) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                params![
                    crate::now_utc(),
                    e.started_utc,
                    e.finished_utc,
                    e.name,
                    e.status,
                    e.baseline,
                    e.hostname,
                    e.cpu_model,
                    e.bakeoff_version,
                    e.folder.to_string_lossy(),
                ],
            )
            .map_err(&err)?;
        let id = self.tx.last_insert_rowid();
        {
            let mut st = self
                .tx
                .prepare_cached(
                    "INSERT INTO variants (experiment_id, position, name, status) \
                     VALUES (?1, ?2, ?3, ?4)",
                )
                .map_err(&err)?;
            for (i, v) in e.variants.iter().enumerate() {
                st.execute(params![id, int(i).map_err(&err)?, v.name, v.status])
                    .map_err(&err)?;
            }
        }
        let mut st = self
            .tx
            .prepare_cached(
                "INSERT INTO cells (experiment_id, position, workload, connections, variant, \
                 median_ops_per_s, ci95_low, ci95_high, valid_runs, instructions_per_op) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            )
            .map_err(&err)?;
        for (i, c) in e.cells.iter().enumerate() {
            st.execute(params![
                id,
                int(i).map_err(&err)?,
                c.workload,
                int(c.connections).map_err(&err)?,
                c.variant,
                finite(c.median_ops_per_s),
                finite(c.ci95[0]),
                finite(c.ci95[1]),
                int(c.valid_runs).map_err(&err)?,
                c.instructions_per_op.and_then(finite),
            ])
            .map_err(&err)?;
        }
        Ok(id)
    }

    /// Makes everything inserted visible, durably.
    pub fn commit(self) -> Result<()> {
        self.tx.commit().map_err(sql_error(self.path))
    }
}

/// Used by tests: a record's rows, counted directly.
#[cfg(test)]
impl Store {
    pub(crate) fn rows(&self, table: &str) -> i64 {
        self.conn
            .query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))
            .unwrap_or(-1)
    }
}
