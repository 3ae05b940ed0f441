//! Oracle's MySQL: the mysqld family's SQL (`mysqld.rs`) with MySQL's answers where the
//! family differs. MySQL's `EXECUTE ... USING` takes user variables only, never
//! literals, so a lookup is prepared through the protocol instead (`prepare` is None:
//! callers fall back to it). Its texts hold for 5.5 to 8.x alike. BEGIN and COMMIT
//! cannot be prepared on MySQL: loads send them as text.

use super::MysqldFork;

/// MySQL 5.5 to 8.x (`Dialect::Mysql`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Mysql;

impl MysqldFork for Mysql {
    const SQL_PREPARE: bool = false;

    /// MySQL answers a prepared BEGIN or COMMIT with error 1295 ("not supported in the
    /// prepared statement protocol yet").
    const PREPARES_TRANSACTION_CONTROL: bool = false;

    /// Without `READ ONLY`, which MySQL takes only from 5.6.5: one text for every version.
    const READ_ONLY_SNAPSHOT: &'static [&'static str] = &[
        "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ",
        "START TRANSACTION WITH CONSISTENT SNAPSHOT",
    ];

    /// MySQL 5.7.8+: milliseconds, SELECTs only.
    fn statement_timeout(ms: u64) -> String {
        format!("SET SESSION max_execution_time = {ms}")
    }
}
