//! PostgreSQL transaction statements SQLite does not parse, rewritten before prepare:
//! `START TRANSACTION [modes]` and `BEGIN [WORK | TRANSACTION] [modes]` with PostgreSQL
//! modes (ISOLATION LEVEL ..., READ WRITE, READ ONLY, [NOT] DEFERRABLE) become `BEGIN`,
//! as tokio-postgres's `transaction()` sends `START TRANSACTION`.

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

#[cfg(test)]
mod tests {
    use super::*;

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
