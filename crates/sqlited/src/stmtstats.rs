//! Per-statement counters, kept when the host runs with `--stmt-stats`: for every
//! statement text (summed over connections), how many times it ran to its end (`calls`),
//! the time its steps took inside the host (`us`, from an Execute's or a simple query
//! statement's first step to its last), and the library's `sqlite3_stmt_status`
//! counters it gathered (`fullscan_step`, `sort`, `autoindex`, `vm_step`, `reprepare`,
//! `run`, `filter_miss`, `filter_hit`: as many as the library's version has, see
//! `Library::stmt_counters`), each read and zeroed after every execution.
//!
//! A client reads them with `SHOW bakeoff.statements`: one row per statement text
//! (`digest`, `text`, then each counter as a column), and `SHOW bakeoff.started`: the
//! host's pid and start time (a restarted host's counters begin again). At most
//! [`MAX_TEXTS`] texts are kept apart; the statements beyond them are summed in one
//! row with an empty digest and text. A text is kept to its first [`TEXT_CHARS`]
//! characters (two texts that differ only later share a row).

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::ffi::sqlite::Statement;

/// The most statement texts kept apart.
pub const MAX_TEXTS: usize = 1000;
/// How much of a text is kept and compared.
pub const TEXT_CHARS: usize = 1000;

/// The counters every statement has before the library's own.
const OWN: [&str; 2] = ["calls", "us"];

/// One statement's figures: calls, nanoseconds, then the library's counters.
#[derive(Debug, Clone, Default)]
struct Entry {
    text: String,
    calls: u64,
    ns: u64,
    library: Vec<u64>,
}

/// The process's counters.
pub struct StmtStats {
    /// The library's counters, as (op, name).
    ops: Vec<(i32, &'static str)>,
    by_text: Mutex<HashMap<u64, Entry>>,
    started: String,
}

/// A statement text as the counters know it: its hash and the text (trimmed, without
/// its `;`, cut to [`TEXT_CHARS`]), borrowed from the statement's text.
#[derive(Debug, Clone, Copy)]
pub struct Key<'a> {
    hash: u64,
    text: &'a str,
}

impl Key<'_> {
    /// The key of `sql`.
    pub fn of(sql: &str) -> Key<'_> {
        let t = sql.trim().trim_end_matches(';').trim_end();
        let text = match t.char_indices().nth(TEXT_CHARS) {
            Some((cut, _)) => &t[..cut],
            None => t,
        };
        let mut h = DefaultHasher::new();
        text.hash(&mut h);
        Key {
            hash: h.finish(),
            text,
        }
    }
}

/// A [`Key`] a prepared statement keeps.
#[derive(Debug, Clone)]
pub struct OwnedKey {
    hash: u64,
    text: String,
}

impl OwnedKey {
    pub fn of(sql: &str) -> OwnedKey {
        let k = Key::of(sql);
        OwnedKey {
            hash: k.hash,
            text: k.text.to_string(),
        }
    }

    pub fn key(&self) -> Key<'_> {
        Key {
            hash: self.hash,
            text: &self.text,
        }
    }
}

impl StmtStats {
    /// Counters for a library with `ops` (`Library::stmt_counters`).
    pub fn new(ops: &[(i32, &'static str)]) -> StmtStats {
        let since = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos();
        StmtStats {
            ops: ops.to_vec(),
            by_text: Mutex::new(HashMap::new()),
            started: format!("{} {since}", std::process::id()),
        }
    }

    /// Counts one execution of `stmt` (`key`'s text) that took `took`; `done`: it ran
    /// to its end (a call), else it was suspended at a row limit (time only).
    pub fn record(&self, key: Key<'_>, stmt: &mut Statement, took: Duration, done: bool) {
        let mut library = [0u64; 8];
        let n = self.ops.len().min(library.len());
        stmt.take_status(&self.ops[..n], &mut library[..n]);
        let Ok(mut table) = self.by_text.lock() else {
            return;
        };
        let full = table.len() >= MAX_TEXTS && !table.contains_key(&key.hash);
        let e = table
            .entry(if full { 0 } else { key.hash })
            .or_insert_with(|| Entry {
                text: if full {
                    String::new()
                } else {
                    key.text.to_string()
                },
                library: vec![0; n],
                ..Entry::default()
            });
        e.calls += u64::from(done);
        e.ns += took.as_nanos() as u64;
        for (a, b) in e.library.iter_mut().zip(&library[..n]) {
            *a += b;
        }
    }

    /// `SHOW bakeoff.statements`' columns.
    pub fn columns(&self) -> Vec<String> {
        ["digest", "text"]
            .into_iter()
            .chain(OWN)
            .chain(self.ops.iter().map(|(_, name)| *name))
            .map(str::to_string)
            .collect()
    }

    /// `SHOW bakeoff.statements`' rows, as text (see the module's documentation).
    pub fn rows(&self) -> Vec<Vec<String>> {
        let Ok(table) = self.by_text.lock() else {
            return Vec::new();
        };
        let mut rows: Vec<Vec<String>> = table
            .iter()
            .map(|(hash, e)| {
                let digest = if *hash == 0 && e.text.is_empty() {
                    String::new()
                } else {
                    format!("{hash:016x}")
                };
                [digest, e.text.clone(), e.calls.to_string()]
                    .into_iter()
                    .chain([format!("{:.3}", e.ns as f64 / 1000.0)])
                    .chain(e.library.iter().map(u64::to_string))
                    .collect()
            })
            .collect();
        rows.sort();
        rows
    }

    /// `SHOW bakeoff.started`: the host's pid and start time.
    pub fn started(&self) -> &str {
        &self.started
    }
}

/// What a `SHOW bakeoff.*` asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Show {
    Statements,
    Started,
}

/// Whether the whole simple query `sql` is `SHOW bakeoff.statements` or `SHOW
/// bakeoff.started` (any case, an optional `;`): SQLite has no SHOW, so no statement of
/// a client's means anything else by it.
pub fn show(sql: &str) -> Option<Show> {
    let s = sql.trim().trim_end_matches(';').trim_end();
    let mut w = s.split_whitespace();
    if !w.next()?.eq_ignore_ascii_case("SHOW") {
        return None;
    }
    let what = w.next()?.to_ascii_lowercase();
    if w.next().is_some() {
        return None;
    }
    match what.as_str() {
        "bakeoff.statements" => Some(Show::Statements),
        "bakeoff.started" => Some(Show::Started),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn show_is_read_in_any_case_and_nothing_else_is() {
        assert_eq!(show("SHOW bakeoff.statements"), Some(Show::Statements));
        assert_eq!(show(" show BAKEOFF.STARTED ; "), Some(Show::Started));
        assert_eq!(show("SHOW bakeoff.statements; SELECT 1"), None);
        assert_eq!(show("SHOW bakeoff.other"), None);
        assert_eq!(show("SELECT 'SHOW bakeoff.statements'"), None);
    }

    #[test]
    fn texts_beyond_the_cap_are_summed_in_one_row_without_a_digest() {
        use crate::ffi::sqlite::{version_number, Connection, Library};
        use std::sync::Arc;
        let lib =
            Library::load(std::path::Path::new(bakeoff_testkit::paths::SYSTEM_SQLITE)).unwrap();
        assert!(version_number(lib.version()) >= 3_040_000);
        let names: Vec<&str> = lib.stmt_counters().iter().map(|(_, n)| *n).collect();
        assert!(
            names.contains(&"fullscan_step") && names.contains(&"run"),
            "{names:?}"
        );
        let stats = StmtStats::new(lib.stmt_counters());
        let lib = Arc::new(lib);
        let dir = tempfile::tempdir().unwrap();
        let db = Connection::open(&lib, &dir.path().join("t.db"), 1000).unwrap();
        let mut stmt = db.prepare("SELECT 1").unwrap().0.unwrap();
        for i in 0..MAX_TEXTS + 5 {
            while stmt.step().unwrap() {}
            stmt.reset();
            let text = format!("SELECT {i}");
            stats.record(Key::of(&text), &mut stmt, Duration::from_micros(2), true);
        }
        let rows = stats.rows();
        assert_eq!(rows.len(), MAX_TEXTS + 1);
        let overflow: Vec<&Vec<String>> = rows.iter().filter(|r| r[0].is_empty()).collect();
        assert_eq!(overflow.len(), 1);
        assert_eq!(overflow[0][2], "5", "calls of the 5 texts beyond the cap");
        let run = stats.columns().iter().position(|c| c == "run").unwrap();
        assert!(
            rows.iter().all(|r| r[run] != "0"),
            "each execution's RUN counted"
        );
        assert_eq!(stats.columns()[..4], ["digest", "text", "calls", "us"]);
        assert_eq!(version_number("3.6.4"), 3_006_004);
        assert_eq!(version_number("x"), 0);
    }

    #[test]
    fn a_key_is_the_trimmed_text() {
        let a = Key::of("  SELECT 1;\n");
        let b = Key::of("SELECT 1");
        assert_eq!(a.text, "SELECT 1");
        assert_eq!(a.hash, b.hash);
        assert_ne!(Key::of("SELECT 2").hash, a.hash);
        assert_eq!(Key::of(&"x".repeat(5000)).text.len(), TEXT_CHARS);
    }
}
