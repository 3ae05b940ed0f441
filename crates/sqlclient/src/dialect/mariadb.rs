//! MariaDB's SQL: the mysqld family's (`mysqld.rs`) with MariaDB's answers where the
//! family differs: SQL-level `PREPARE` with literal arguments, a `READ ONLY` snapshot,
//! `max_statement_time` in seconds.

use super::MysqldFork;

/// MariaDB (`Dialect::Mariadb`).
#[derive(Debug, Clone, Copy, Default)]
pub struct MariaDb;

impl MysqldFork for MariaDb {
    const SQL_PREPARE: bool = true;

    const PREPARES_TRANSACTION_CONTROL: bool = true;

    const READ_ONLY_SNAPSHOT: &'static [&'static str] = &[
        "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ",
        "START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY",
    ];

    /// MariaDB 10.1+: seconds, fractions allowed.
    fn statement_timeout(ms: u64) -> String {
        format!("SET SESSION max_statement_time = {}", ms as f64 / 1000.0)
    }
}
