//! SQLite's SQL, as `bakeoff-sqlited` serves it over the PostgreSQL protocol: `$n`
//! markers, several statements per query, one table per `DROP TABLE`, `EXPLAIN QUERY
//! PLAN`; no `COPY` (loads are multi-row INSERTs), no SQL-level `PREPARE`, no session
//! `SET` (the target's options are PRAGMAs on every connection). sqlited rewrites
//! PostgreSQL's `BEGIN ISOLATION LEVEL ..` into SQLite's `BEGIN`.

use super::{numbered, BulkLoad, Setting, SqlDialect};

/// SQLite behind `bakeoff-sqlited` (`Dialect::Sqlite`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Sqlite;

impl SqlDialect for Sqlite {
    fn name(&self) -> &'static str {
        "sqlite"
    }

    fn placeholders(&self, sql: &str) -> String {
        numbered(sql)
    }

    fn multi_statement_queries(&self) -> bool {
        true
    }

    /// PostgreSQL's spelling, which sqlited turns into `BEGIN`: in WAL mode a deferred
    /// transaction reads one snapshot from its first read on.
    fn begin_read_only_snapshot(&self) -> &'static [&'static str] {
        &["BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY"]
    }

    /// Dates are text, `YYYY-MM-DD`, compared as strings.
    fn date_literal(&self, ymd: &str) -> String {
        format!("'{ymd}'")
    }

    fn explain(&self, sql: &str) -> String {
        format!("EXPLAIN QUERY PLAN {sql}")
    }

    fn prepare(&self, name: &str, sql: &str) -> Option<String> {
        let _ = (name, sql);
        None
    }

    fn execute(&self, name: &str, args: &[i64]) -> Option<String> {
        let _ = (name, args);
        None
    }

    fn deallocate(&self, name: &str) -> Option<String> {
        let _ = name;
        None
    }

    fn datetime_type(&self) -> &'static str {
        "timestamp"
    }

    fn auto_increment_integer(&self) -> &'static str {
        "SERIAL NOT NULL"
    }

    /// SQLite's `CREATE TABLE` takes no `KEY` clause.
    fn inline_index(&self, name: &str, columns: &str) -> Option<String> {
        let _ = (name, columns);
        None
    }

    /// SQLite drops one table per statement.
    fn drop_tables(&self, names: &[&str]) -> Vec<String> {
        names
            .iter()
            .map(|n| format!("DROP TABLE IF EXISTS {n}"))
            .collect()
    }

    /// SQLite's `ANALYZE` takes no column list.
    fn analyze(&self, table: &str, columns: &[&str]) -> String {
        let _ = columns;
        format!("ANALYZE {table}")
    }

    /// sqlited has no COPY.
    fn bulk_load(&self) -> BulkLoad {
        BulkLoad::MultiRowInsert
    }

    fn embedded_library(&self) -> bool {
        true
    }

    /// bakeoff-sqlited reads PostgreSQL's `SET statement_timeout` and stops a statement
    /// past it (a progress handler interrupts SQLite); the other settings have no
    /// SQLite equivalent.
    fn session_setting(&self, setting: Setting<'_>) -> Option<String> {
        match setting {
            Setting::StatementTimeoutMs(ms) => Some(format!("SET statement_timeout = {ms}")),
            _ => None,
        }
    }
}
