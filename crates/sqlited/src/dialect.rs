//! PostgreSQL transaction statements SQLite does not parse, rewritten before prepare:
//! `START TRANSACTION [modes]` and `BEGIN [WORK | TRANSACTION] [modes]` with PostgreSQL
//! modes (ISOLATION LEVEL ..., READ WRITE, READ ONLY, [NOT] DEFERRABLE) become `BEGIN`,
//! as tokio-postgres's `transaction()` sends `START TRANSACTION`. Also PostgreSQL's
//! `SET statement_timeout`, which the session applies itself ([`statement_timeout`]).

use crate::ffi::sqlite::{Connection, SqlError, Statement};
use crate::tag::{skip_blank, words};

/// `Connection::prepare` with the rewrites: the first statement of `sql` and the offset
/// of the rest.
pub fn prepare(db: &Connection, sql: &str) -> Result<(Option<Statement>, usize), SqlError> {
    match rewrite(sql) {
        Some((sqlite, len)) => Ok((db.prepare(sqlite)?.0, len)),
        None => db.prepare(sql),
    }
}

/// If the statement at the start of `sql` is one of those, SQLite's equivalent and how
/// many bytes of `sql` the statement takes (up to and including its `;`).
fn rewrite(sql: &str) -> Option<(&'static str, usize)> {
    let start = sql.len() - skip_blank(sql).len();
    let end = sql[start..].find(';').map_or(sql.len(), |n| start + n + 1);
    let statement = &sql[start..end];
    // Only plain words: a quote or comment means it is not one of these statements.
    if statement.contains(['\'', '"', '-', '/']) {
        return None;
    }
    let mut w = words(statement);
    let pg_only = match w.next()?.as_str() {
        "START" => w.next()? == "TRANSACTION",
        "BEGIN" => w.any(|x| {
            matches!(
                x.as_str(),
                "WORK" | "ISOLATION" | "READ" | "NOT" | "DEFERRABLE"
            )
        }),
        _ => false,
    };
    pg_only.then_some(("BEGIN", end))
}

/// If the statement at the start of `sql` is `SET [SESSION] statement_timeout {= | TO}
/// n` (milliseconds; 0 or `DEFAULT`: none), the milliseconds and how many bytes of `sql`
/// the statement takes (up to and including its `;`).
pub fn statement_timeout(sql: &str) -> Option<(u64, usize)> {
    let start = sql.len() - skip_blank(sql).len();
    let end = sql[start..].find(';').map_or(sql.len(), |n| start + n + 1);
    let statement = sql[start..end].trim_end_matches(';').replace('=', " = ");
    let mut w = statement.split_whitespace().map(str::to_ascii_uppercase);
    if w.next()? != "SET" {
        return None;
    }
    let mut name = w.next()?;
    if name == "SESSION" {
        name = w.next()?;
    }
    if name != "STATEMENT_TIMEOUT" || !matches!(w.next()?.as_str(), "=" | "TO") {
        return None;
    }
    let value = w.next()?;
    let ms = if value == "DEFAULT" {
        0
    } else {
        value.parse().ok()?
    };
    w.next().is_none().then_some((ms, end))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statement_timeouts_are_read_in_postgresqls_spellings() {
        assert_eq!(
            statement_timeout("SET statement_timeout = 2500"),
            Some((2500, 28))
        );
        assert_eq!(
            statement_timeout(" set session STATEMENT_TIMEOUT to 7; SELECT 1"),
            Some((7, 36))
        );
        assert_eq!(statement_timeout("SET statement_timeout=0;"), Some((0, 24)));
        assert_eq!(
            statement_timeout("SET statement_timeout TO DEFAULT"),
            Some((0, 32))
        );
        assert_eq!(statement_timeout("SET statement_timeout = '5s'"), None);
        assert_eq!(statement_timeout("SET statement_timeout = 5 6"), None);
        assert_eq!(statement_timeout("SET lock_timeout = 5"), None);
        assert_eq!(statement_timeout("SELECT 1"), None);
    }

    #[test]
    fn postgresql_begins_become_sqlite_begins() {
        assert_eq!(rewrite("START TRANSACTION"), Some(("BEGIN", 17)));
        assert_eq!(
            rewrite(" start transaction isolation level serializable; SELECT 1"),
            Some(("BEGIN", 48))
        );
        assert_eq!(rewrite("BEGIN READ WRITE"), Some(("BEGIN", 16)));
        assert_eq!(rewrite("BEGIN WORK;"), Some(("BEGIN", 11)));
        assert_eq!(rewrite("BEGIN"), None);
        assert_eq!(rewrite("BEGIN IMMEDIATE"), None);
        assert_eq!(rewrite("SELECT 1"), None);
        assert_eq!(rewrite("BEGIN IMMEDIATE; SELECT NOT 1"), None);
    }
}
