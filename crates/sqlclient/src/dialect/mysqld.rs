//! The mysqld family's SQL, written once. MariaDB (`mariadb.rs`) and Oracle's MySQL
//! (`mysql.rs`) speak one SQL but for a few texts: each is a [`MysqldFork`], the few
//! answers where they differ, and every [`SqlDialect`] method is the family's
//! (`impl<F: MysqldFork> SqlDialect for F` below), so no member forwards a method to
//! another by hand.
//!
//! Adding a method to [`SqlDialect`]: it is written here once for the whole family (or
//! the trait's default holds for the whole family). Where the members must answer
//! differently, the answer becomes an item of [`MysqldFork`]; its items have no
//! defaults, so the compiler asks every member for its own. The family's common texts:
//! `?` markers, storage engines, backslash escapes in string literals, multi-row
//! INSERTs for loads.

use super::{BulkLoad, Setting, SqlDialect};

/// What a member of the mysqld family answers where MariaDB and MySQL differ. Every
/// item is required: a new difference is decided for every member.
pub trait MysqldFork: Sync {
    /// Whether `EXECUTE ... USING` takes literals, so SQL-level `PREPARE` is offered
    /// (MariaDB); without (MySQL takes user variables only), `prepare`, `execute` and
    /// `deallocate` are None and callers prepare through the protocol.
    const SQL_PREPARE: bool;

    /// Whether BEGIN and COMMIT can be prepared through the protocol
    /// ([`SqlDialect::prepares_transaction_control`]).
    const PREPARES_TRANSACTION_CONTROL: bool;

    /// [`SqlDialect::begin_read_only_snapshot`]'s statements.
    const READ_ONLY_SNAPSHOT: &'static [&'static str];

    /// The session setting that stops a statement after `ms` milliseconds.
    fn statement_timeout(ms: u64) -> String;
}

impl<F: MysqldFork> SqlDialect for F {
    fn name(&self) -> &'static str {
        "mysql"
    }

    fn placeholders(&self, sql: &str) -> String {
        sql.to_string()
    }

    /// A backslash starts an escape in the family's literals (without the
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
        F::READ_ONLY_SNAPSHOT
    }

    fn max_statement_bytes_query(&self) -> Option<&'static str> {
        Some("SELECT @@max_allowed_packet")
    }

    fn prepare(&self, name: &str, sql: &str) -> Option<String> {
        F::SQL_PREPARE.then(|| format!("PREPARE {name} FROM {}", self.string_literal(sql)))
    }

    fn execute(&self, name: &str, args: &[i64]) -> Option<String> {
        F::SQL_PREPARE.then(|| {
            let args: Vec<String> = args.iter().map(i64::to_string).collect();
            format!("EXECUTE {name} USING {}", args.join(", "))
        })
    }

    fn deallocate(&self, name: &str) -> Option<String> {
        F::SQL_PREPARE.then(|| format!("DEALLOCATE PREPARE {name}"))
    }

    fn prepares_transaction_control(&self) -> bool {
        F::PREPARES_TRANSACTION_CONTROL
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
            Setting::StatementTimeoutMs(ms) => Some(F::statement_timeout(ms)),
            // innodb_flush_log_at_trx_commit and the sort buffers are global settings,
            // the server's options' business.
            Setting::NoCommitFlush
            | Setting::IndexBuildMemoryMb(_)
            | Setting::SerialIndexBuilds
            | Setting::StatisticsTarget(_) => None,
        }
    }
}
