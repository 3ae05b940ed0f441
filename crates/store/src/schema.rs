//! The schema and its migrations. `PRAGMA user_version` holds the version; migration `i`
//! takes a store from version `i` to `i + 1`, all of them in one immediate transaction so
//! that two processes opening a new store at once create it once.

use rusqlite::{Connection, TransactionBehavior};

/// The schema version this bakeoff writes.
pub const SCHEMA_VERSION: i64 = 1;

/// `PRAGMA application_id` of every store bakeoff creates ("bkof"): what tells a bakeoff
/// store from another program's SQLite file before anything is written to it.
pub const APPLICATION_ID: i64 = 0x626B_6F66;

/// The tables and columns of schema version 1, in order: how a store created before
/// bakeoff stamped [`APPLICATION_ID`] is recognised (and then stamped by a writer).
const V1_TABLES: [(&str, &[&str]); 3] = [
    (
        "experiments",
        &[
            "id",
            "recorded_utc",
            "started_utc",
            "finished_utc",
            "name",
            "status",
            "baseline",
            "hostname",
            "cpu_model",
            "bakeoff_version",
            "folder",
        ],
    ),
    ("variants", &["experiment_id", "position", "name", "status"]),
    (
        "cells",
        &[
            "experiment_id",
            "position",
            "workload",
            "connections",
            "variant",
            "median_ops_per_s",
            "ci95_low",
            "ci95_high",
            "valid_runs",
            "instructions_per_op",
        ],
    ),
];

const MIGRATIONS: [&str; SCHEMA_VERSION as usize] = [
    // 0 -> 1: experiments, their variants and their cells' headline figures.
    "CREATE TABLE experiments (
        id INTEGER PRIMARY KEY,
        recorded_utc TEXT NOT NULL,
        started_utc TEXT NOT NULL,
        finished_utc TEXT,
        name TEXT NOT NULL,
        status TEXT NOT NULL,
        baseline TEXT NOT NULL,
        hostname TEXT NOT NULL,
        cpu_model TEXT NOT NULL,
        bakeoff_version TEXT NOT NULL,
        folder TEXT NOT NULL
    );
    CREATE INDEX experiments_by_time ON experiments (started_utc, id);
    CREATE INDEX experiments_by_name ON experiments (name, started_utc, id);
    CREATE TABLE variants (
        experiment_id INTEGER NOT NULL REFERENCES experiments (id) ON DELETE CASCADE,
        position INTEGER NOT NULL,
        name TEXT NOT NULL,
        status TEXT NOT NULL,
        PRIMARY KEY (experiment_id, position)
    );
    CREATE TABLE cells (
        experiment_id INTEGER NOT NULL REFERENCES experiments (id) ON DELETE CASCADE,
        position INTEGER NOT NULL,
        workload TEXT NOT NULL,
        connections INTEGER NOT NULL,
        variant TEXT NOT NULL,
        median_ops_per_s REAL,
        ci95_low REAL,
        ci95_high REAL,
        valid_runs INTEGER NOT NULL,
        instructions_per_op REAL,
        PRIMARY KEY (experiment_id, position)
    );",
];

/// What [`migrate`] found.
pub(crate) enum Migrated {
    /// At [`SCHEMA_VERSION`] (now, or already).
    Current,
    /// A newer schema than this bakeoff knows.
    Newer(i64),
}

pub(crate) fn user_version(conn: &Connection) -> rusqlite::Result<i64> {
    conn.pragma_query_value(None, "user_version", |row| row.get(0))
}

pub(crate) fn application_id(conn: &Connection) -> rusqlite::Result<i64> {
    conn.pragma_query_value(None, "application_id", |row| row.get(0))
}

/// True when the database holds exactly bakeoff's version 1 tables, each with exactly its
/// columns: a store an earlier bakeoff created before it stamped [`APPLICATION_ID`].
pub(crate) fn has_v1_tables(conn: &Connection) -> rusqlite::Result<bool> {
    let mut stmt = conn.prepare(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
    )?;
    let tables: Vec<String> = stmt
        .query_map([], |row| row.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    let mut wanted: Vec<&str> = V1_TABLES.iter().map(|(t, _)| *t).collect();
    wanted.sort_unstable();
    if tables != wanted {
        return Ok(false);
    }
    for (table, columns) in V1_TABLES {
        let mut stmt = conn.prepare("SELECT name FROM pragma_table_info(?1) ORDER BY cid")?;
        let found: Vec<String> = stmt
            .query_map([table], |row| row.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        if found != columns {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Brings the schema to [`SCHEMA_VERSION`].
pub(crate) fn migrate(conn: &mut Connection) -> rusqlite::Result<Migrated> {
    let found = user_version(conn)?;
    if found == SCHEMA_VERSION && application_id(conn)? == APPLICATION_ID {
        return Ok(Migrated::Current);
    }
    if found > SCHEMA_VERSION {
        return Ok(Migrated::Newer(found));
    }
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    // Another process may have migrated while this one waited for the write lock.
    let found = user_version(&tx)?;
    if found > SCHEMA_VERSION {
        return Ok(Migrated::Newer(found));
    }
    for sql in MIGRATIONS.iter().skip(found.max(0) as usize) {
        tx.execute_batch(sql)?;
    }
    // A new store, or one from before the stamp (recognised by its tables in `inspect`).
    tx.pragma_update(None, "application_id", APPLICATION_ID)?;
    tx.pragma_update(None, "user_version", SCHEMA_VERSION)?;
    tx.commit()?;
    Ok(Migrated::Current)
}
