//! The errors sent to clients (`PgError`: SQLSTATE, message, whether the connection
//! ends) and the mapping from SQLite's extended result codes to SQLSTATEs.

use crate::ffi::sqlite::SqlError;

/// An error for an ErrorResponse. `fatal` ones are sent as FATAL and close the
/// connection (protocol violations); the others leave it usable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PgError {
    pub code: &'static str,
    pub message: String,
    pub fatal: bool,
}

impl PgError {
    pub fn new(code: &'static str, message: impl Into<String>) -> PgError {
        PgError {
            code,
            message: message.into(),
            fatal: false,
        }
    }

    /// A malformed or unexpected message: 08P01, and the connection is closed.
    pub fn protocol(message: impl Into<String>) -> PgError {
        PgError {
            fatal: true,
            ..PgError::new("08P01", message)
        }
    }
}

impl From<SqlError> for PgError {
    fn from(e: SqlError) -> PgError {
        PgError::new(sqlstate(e.code), e.message)
    }
}

/// The SQLSTATE for an SQLite (extended) result code, following PostgreSQL's meanings:
/// unique and primary-key violations 23505, NOT NULL 23502, foreign key 23503, CHECK
/// 23514, other constraints 23000; a stale WAL snapshot (SQLITE_BUSY_SNAPSHOT, the
/// transaction must restart) 40001; other busy or locked 55P03; interrupt 57014; disk full
/// 53100; out of memory 53200; too big 54000; type mismatch 42804; read-only 25006;
/// permission 42501; I/O errors 58030; corruption or not a database XX001; other
/// internal failures (CANTOPEN, PROTOCOL, INTERNAL, MISUSE) XX000; everything else
/// (SQLITE_ERROR: syntax, unknown table or column, ...) 42000.
pub fn sqlstate(code: i32) -> &'static str {
    match code {
        1555 | 2067 => return "23505", // CONSTRAINT_PRIMARYKEY, CONSTRAINT_UNIQUE
        1299 => return "23502",        // CONSTRAINT_NOTNULL
        787 => return "23503",         // CONSTRAINT_FOREIGNKEY
        275 => return "23514",         // CONSTRAINT_CHECK
        517 => return "40001",         // BUSY_SNAPSHOT
        _ => {}
    }
    match code & 0xff {
        19 => "23000",               // CONSTRAINT
        5 | 6 => "55P03",            // BUSY, LOCKED
        9 => "57014",                // INTERRUPT
        13 => "53100",               // FULL
        7 => "53200",                // NOMEM
        18 => "54000",               // TOOBIG
        20 => "42804",               // MISMATCH
        8 => "25006",                // READONLY
        3 | 23 => "42501",           // PERM, AUTH
        10 => "58030",               // IOERR
        11 | 26 => "XX001",          // CORRUPT, NOTADB
        2 | 14 | 15 | 21 => "XX000", // INTERNAL, CANTOPEN, PROTOCOL, MISUSE
        _ => "42000",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn result_codes_map_to_sqlstates() {
        assert_eq!(sqlstate(1555), "23505");
        assert_eq!(sqlstate(2067), "23505");
        assert_eq!(sqlstate(19), "23000");
        assert_eq!(sqlstate(2323), "23000"); // CONSTRAINT_TRIGGER
        assert_eq!(sqlstate(5), "55P03");
        assert_eq!(sqlstate(262), "55P03"); // LOCKED_SHAREDCACHE
        assert_eq!(sqlstate(517), "40001");
        assert_eq!(sqlstate(1), "42000");
        assert_eq!(sqlstate(266), "58030"); // IOERR_READ
        assert_eq!(sqlstate(11), "XX001");
    }
}
