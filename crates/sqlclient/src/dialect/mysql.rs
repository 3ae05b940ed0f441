//! Oracle's MySQL: MariaDB's SQL (`mariadb.rs`) except where the two differ. MySQL's
//! `EXECUTE ... USING` takes user variables only, never literals, so a lookup is
//! prepared through the protocol instead (`prepare` is None: callers fall back to it).
//! Its texts hold for 5.5 to 8.x alike. BEGIN and COMMIT cannot be prepared on MySQL:
//! loads send them as text.

use super::{BulkLoad, MariaDb, Setting, SqlDialect};

/// MySQL 5.5 to 8.x (`Dialect::Mysql`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Mysql;

impl SqlDialect for Mysql {
    fn name(&self) -> &'static str {
        MariaDb.name()
    }

    fn placeholders(&self, sql: &str) -> String {
        MariaDb.placeholders(sql)
    }

    fn push_string_literal(&self, out: &mut Vec<u8>, s: &[u8]) {
        MariaDb.push_string_literal(out, s)
    }

    fn multi_statement_queries(&self) -> bool {
        MariaDb.multi_statement_queries()
    }

    /// Without `READ ONLY`, which MySQL takes only from 5.6.5: one text for every version.
    fn begin_read_only_snapshot(&self) -> &'static [&'static str] {
        &[
            "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ",
            "START TRANSACTION WITH CONSISTENT SNAPSHOT",
        ]
    }

    fn max_statement_bytes_query(&self) -> Option<&'static str> {
        MariaDb.max_statement_bytes_query()
    }

    fn prepare(&self, _name: &str, _sql: &str) -> Option<String> {
        None
    }

    fn execute(&self, _name: &str, _args: &[i64]) -> Option<String> {
        None
    }

    fn deallocate(&self, _name: &str) -> Option<String> {
        None
    }

    /// MySQL answers a prepared BEGIN or COMMIT with error 1295 ("not supported in the
    /// prepared statement protocol yet").
    fn prepares_transaction_control(&self) -> bool {
        false
    }

    fn datetime_type(&self) -> &'static str {
        MariaDb.datetime_type()
    }

    fn auto_increment_integer(&self) -> &'static str {
        MariaDb.auto_increment_integer()
    }

    fn inline_index(&self, name: &str, columns: &str) -> Option<String> {
        MariaDb.inline_index(name, columns)
    }

    fn storage_engine_clause(&self, engine: &str) -> Option<String> {
        MariaDb.storage_engine_clause(engine)
    }

    fn transactional_engine(&self) -> Option<&'static str> {
        MariaDb.transactional_engine()
    }

    fn drop_index(&self, index: &str, table: &str) -> String {
        MariaDb.drop_index(index, table)
    }

    fn analyze(&self, table: &str, columns: &[&str]) -> String {
        MariaDb.analyze(table, columns)
    }

    fn bulk_load(&self) -> BulkLoad {
        MariaDb.bulk_load()
    }

    fn session_setting(&self, setting: Setting<'_>) -> Option<String> {
        match setting {
            // MySQL 5.7.8+: milliseconds, SELECTs only.
            Setting::StatementTimeoutMs(ms) => {
                Some(format!("SET SESSION max_execution_time = {ms}"))
            }
            other => MariaDb.session_setting(other),
        }
    }
}
