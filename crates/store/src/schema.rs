//! The schema and its migrations. `PRAGMA user_version` holds the version; migration `i`
//! takes a store from version `i` to `i + 1`, all of them in one immediate transaction so
//! that two processes opening a new store at once create it once.

use rusqlite::{Connection, TransactionBehavior};

/// The schema version this bakeoff writes.
pub const SCHEMA_VERSION: i64 = 1;

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

/// Brings the schema to [`SCHEMA_VERSION`].
pub(crate) fn migrate(conn: &mut Connection) -> rusqlite::Result<Migrated> {
    let found = user_version(conn)?;
    if found == SCHEMA_VERSION {
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
    tx.pragma_update(None, "user_version", SCHEMA_VERSION)?;
    tx.commit()?;
    Ok(Migrated::Current)
}
