//! MariaDB's SQL (and MySQL's, where they agree): `?` markers, storage engines, backslash
//! escapes in string literals, multi-row INSERTs for loads.

use super::{BulkLoad, Setting, SqlDialect};

/// MariaDB (`Dialect::Mariadb`).
#[derive(Debug, Clone, Copy, Default)]
pub struct MariaDb;

impl SqlDialect for MariaDb {
    fn name(&self) -> &'static str {
        "mysql"
    }

    fn placeholders(&self, sql: &str) -> String {
        sql.to_string()
    }

    /// A backslash starts an escape in MariaDB's literals (without the
    /// `NO_BACKSLASH_ESCAPES` mode): it is doubled, and a quote too.
    fn push_string_literal(&self, out: &mut Vec<u8>, s: &[u8]) {
        out.push(b'\'');
        for &b in s {
            match b {
                b'\\' => out.extend_from_slice(b"\\\\"),
                b'\'' => out.extend_from_slice(b"''"),
                _ => out.push(b),
            }
        }
        out.push(b'\'');
    }

    fn multi_statement_queries(&self) -> bool {
        false
    }

    fn begin_read_only_snapshot(&self) -> &'static [&'static str] {
        &[
            "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ",
            "START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY",
        ]
    }

    fn max_statement_bytes_query(&self) -> Option<&'static str> {
        Some("SELECT @@max_allowed_packet")
    }

    fn prepare(&self, name: &str, sql: &str) -> Option<String> {
        Some(format!("PREPARE {name} FROM {}", self.string_literal(sql)))
    }

    fn execute(&self, name: &str, args: &[i64]) -> Option<String> {
        let args: Vec<String> = args.iter().map(i64::to_string).collect();
        Some(format!("EXECUTE {name} USING {}", args.join(", ")))
    }

    fn deallocate(&self, name: &str) -> Option<String> {
        Some(format!("DEALLOCATE PREPARE {name}"))
    }

    fn datetime_type(&self) -> &'static str {
        "DATETIME"
    }

    fn auto_increment_integer(&self) -> &'static str {
        "INTEGER NOT NULL AUTO_INCREMENT"
    }

    fn inline_index(&self, name: &str, columns: &str) -> Option<String> {
        Some(format!("KEY {name} ({columns})"))
    }

    fn storage_engine_clause(&self, engine: &str) -> Option<String> {
        Some(format!(" ENGINE = {engine}"))
    }

    fn transactional_engine(&self) -> Option<&'static str> {
        Some("InnoDB")
    }

    fn drop_index(&self, index: &str, table: &str) -> String {
        format!("DROP INDEX {index} ON {table}")
    }

    /// `ANALYZE TABLE` reads the whole table (it takes no column list).
    fn analyze(&self, table: &str, columns: &[&str]) -> String {
        let _ = columns;
        format!("ANALYZE TABLE {table}")
    }

    fn bulk_load(&self) -> BulkLoad {
        BulkLoad::MultiRowInsert
    }

    fn session_setting(&self, setting: Setting<'_>) -> Option<String> {
        match setting {
            Setting::NoConstraintChecks => {
                Some("SET unique_checks = 0, foreign_key_checks = 0".into())
            }
            Setting::StorageEngine(e) => Some(format!("SET SESSION default_storage_engine = {e}")),
            // MariaDB 10.1+: seconds, fractions allowed.
            Setting::StatementTimeoutMs(ms) => Some(format!(
                "SET SESSION max_statement_time = {}",
                ms as f64 / 1000.0
            )),
            // innodb_flush_log_at_trx_commit and the sort buffers are global settings,
            // the server's options' business.
            Setting::NoCommitFlush
            | Setting::IndexBuildMemoryMb(_)
            | Setting::SerialIndexBuilds
            | Setting::StatisticsTarget(_) => None,
        }
    }
}
