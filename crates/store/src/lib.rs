//! bakeoff-store: experiment history. Every finished (or interrupted) experiment is
//! recorded in an embedded SQLite file: when it ran, its name, status, variants, each
//! cell's headline figures, and where its results folder is. On top of that store:
//! listing ([`history_table`]), a figure over time ([`trend`]), and comparing two saved
//! results folders cell by cell ([`compare`]) with the statistics a run uses.
//!
//! The store is an index, never the data: a results folder is read from its results.json
//! alone, and a store that cannot be written costs a warning, not a run. Each record is
//! written in one transaction in WAL mode with `synchronous=FULL`, so a kill -9 at any
//! point leaves whole records or none. The schema carries its version in
//! `PRAGMA user_version` and is migrated forward on open ([`SCHEMA_VERSION`]); a store is
//! told from another program's SQLite file by `PRAGMA application_id`
//! ([`APPLICATION_ID`]), checked before anything is written to it.

mod compare;
mod record;
mod schema;
mod store;
pub mod text;
mod trend;

pub use compare::{compare, folder_name, CellKey, Compared, Side};
pub use record::{CellEntry, Entry, Record, VariantEntry};
pub use schema::{APPLICATION_ID, SCHEMA_VERSION};
pub use store::{Filter, Store, Writer};
pub use text::history_table;
pub use trend::{histories, known_values, trend, Trend, TrendRow, CHANGE_ALPHA};

use std::ffi::OsString;
use std::path::PathBuf;

/// What can go wrong with the store.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The path exists but is not a store bakeoff created (not a regular file, not an
    /// SQLite database, or another program's database). Nothing was written to it.
    #[error("{}: not a bakeoff history store ({reason}); it was left untouched: give --store a file bakeoff created, or a new path", .path.display())]
    NotAStore { path: PathBuf, reason: String },
    /// A later bakeoff wrote it; this one does not know its schema.
    #[error("{}: written by a newer bakeoff (schema version {found}, this bakeoff knows up to {SCHEMA_VERSION}); use that bakeoff or another --store", .path.display())]
    Newer { path: PathBuf, found: i64 },
    /// The store's folder could not be created.
    #[error("cannot create {}: {source}", .path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// Anything SQLite said (locked too long, disk full, ...).
    #[error("{}: {source}", .path.display())]
    Sqlite {
        path: PathBuf,
        source: rusqlite::Error,
    },
}

impl Error {
    /// True when the user pointed at the wrong file (exit status 2 rather than 1).
    pub fn is_bad_input(&self) -> bool {
        matches!(self, Error::NotAStore { .. } | Error::Newer { .. })
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The store's default location: `$BAKEOFF_STORE`, else
/// `$XDG_DATA_HOME/bakeoff/history.sqlite`, else `~/.local/share/bakeoff/history.sqlite`.
/// None when not even `$HOME` is set.
pub fn default_path() -> Option<PathBuf> {
    pick_path(|name| std::env::var_os(name))
}

fn pick_path(env: impl Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
    let set = |name: &str| env(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(p) = set("BAKEOFF_STORE") {
        return Some(p);
    }
    // XDG: a relative XDG_DATA_HOME is invalid and ignored.
    if let Some(x) = set("XDG_DATA_HOME").filter(|p| p.is_absolute()) {
        return Some(x.join("bakeoff").join("history.sqlite"));
    }
    set("HOME").map(|h| {
        h.join(".local")
            .join("share")
            .join("bakeoff")
            .join("history.sqlite")
    })
}

/// Now, as RFC 3339 UTC with seconds (the form results.json uses).
pub fn now_utc() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()
}

#[cfg(test)]
mod tests;
