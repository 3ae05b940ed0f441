//! The database every client connection opens: the loaded library, the file, and the
//! pragmas run on each new connection right after open (with the 30 s busy timeout);
//! then the connection is confined (`Connection::confine`: no `ATTACH` of a file, no
//! `VACUUM INTO`, no `load_extension`), so a client's SQL writes only the database.

use std::path::PathBuf;
use std::sync::Arc;

use crate::ffi::sqlite::{Connection, Library, SqlError};
use crate::stmtstats::StmtStats;

/// How long a connection waits for another's lock before SQLITE_BUSY.
pub const BUSY_TIMEOUT_MS: i32 = 30_000;

pub struct Database {
    pub library: Arc<Library>,
    pub path: PathBuf,
    /// `PRAGMA name=value` statements, in order.
    pub pragmas: Vec<String>,
    /// The statement counters, when kept (`--stmt-stats`).
    pub stats: Option<StmtStats>,
}

impl Database {
    /// A new connection with the pragmas applied; a pragma that fails is skipped (the
    /// first connection, [`Database::open_checked`], reports them).
    pub fn open(&self) -> Result<Connection, SqlError> {
        let conn = Connection::open(&self.library, &self.path, BUSY_TIMEOUT_MS)?;
        for pragma in &self.pragmas {
            let _ = run_to_end(&conn, pragma);
        }
        conn.confine()?;
        Ok(conn)
    }

    /// Like [`Database::open`], also returning each pragma that failed with its error.
    pub fn open_checked(&self) -> Result<(Connection, Vec<String>), SqlError> {
        let conn = Connection::open(&self.library, &self.path, BUSY_TIMEOUT_MS)?;
        let failed = self
            .pragmas
            .iter()
            .filter_map(|p| {
                run_to_end(&conn, p)
                    .err()
                    .map(|e| format!("{p}: {}", e.message))
            })
            .collect();
        conn.confine()?;
        Ok((conn, failed))
    }
}

/// Runs one statement, discarding any rows.
fn run_to_end(conn: &Connection, sql: &str) -> Result<(), SqlError> {
    if let (Some(mut stmt), _) = conn.prepare(sql)? {
        while stmt.step()? {}
    }
    Ok(())
}
