//! PostgreSQL's own statistics ([`crate::Target::read_stats`]): `pg_stat_database`
//! (this database's row), `pg_stat_bgwriter`, `pg_stat_wal` (14+), and with "full"
//! `pg_stat_io` (16+) and the statement digests of `pg_stat_statements`, which bakeoff
//! loads into the sandbox's server itself ([`preload`]: `shared_preload_libraries`,
//! where the build ships the library) and creates in the data directory's template
//! ([`CREATE_EXTENSION`]); a user's `*_preload_libraries` stay refused.

use std::net::SocketAddr;
use std::path::Path;

use bakeoff_sqlclient::{Dialect, Rows};

use crate::sqldata::SqlServer;
use crate::stats::{Snapshot, StatsLevel};

/// The statements [`read`] runs, with the group each one's columns go under; the first
/// is the identity.
const PG_STATS: &[(&str, &str)] = &[
    ("identity", "SELECT pg_postmaster_start_time()::text"),
    (
        "pg_stat_database",
        "SELECT * FROM pg_stat_database WHERE datname = current_database()",
    ),
    ("pg_stat_bgwriter", "SELECT * FROM pg_stat_bgwriter"),
    ("pg_stat_wal", "SELECT * FROM pg_stat_wal"),
];

/// `pg_stat_io`'s counters, one row per backend type, object and context.
const PG_STAT_IO: &str = "SELECT backend_type || '.' || object || '.' || context, reads, \
                          writes, extends, hits, evictions, reuses, fsyncs FROM pg_stat_io";

/// The statement digests of this database: queryid, normalised text, calls, and time in
/// microseconds (`total_exec_time` from 13, `total_time` before: read through the row's
/// JSON so one statement serves every version).
const PG_STAT_STATEMENTS: &str = "SELECT s.queryid::text, s.query, s.calls, \
     1000 * coalesce((to_jsonb(s) ->> 'total_exec_time')::float8, \
     (to_jsonb(s) ->> 'total_time')::float8) \
     FROM pg_stat_statements s \
     WHERE s.dbid = (SELECT oid FROM pg_database WHERE datname = current_database())";

/// The group pg_stat_statements' digests are unavailable under.
const STATEMENTS: &str = "pg_stat_statements";

/// Run by the single-user setup in `template1` before the login's database is made
/// from it: the view every later database has. Where the build lacks the extension's
/// files, the setup goes on without it (a single-user backend reports the error and
/// reads the next statement) and the statistic is unavailable with the reason.
pub(crate) const CREATE_EXTENSION: &str = "CREATE EXTENSION IF NOT EXISTS pg_stat_statements;\n";

/// The `-c` setting that loads pg_stat_statements into a server started at `level`:
/// "full" only (its bookkeeping costs every statement a little), and only where the
/// build ships the library beside the server (PostgreSQL's contrib: `lib/postgresql/`
/// or `lib/` next to `bin/`), since a server told to preload a missing library does not
/// start.
pub(crate) fn preload(binary: &Path, level: StatsLevel) -> Option<String> {
    (level == StatsLevel::Full && has_library(binary))
        .then(|| "shared_preload_libraries=pg_stat_statements".to_string())
}

fn has_library(binary: &Path) -> bool {
    let Some(prefix) = binary.parent().and_then(Path::parent) else {
        return false;
    };
    ["lib/postgresql", "lib", "lib64/postgresql", "lib64"]
        .iter()
        .any(|d| prefix.join(d).join("pg_stat_statements.so").is_file())
}

/// See the module's documentation. The identity is the postmaster's start time.
pub(crate) fn read(sql: &SqlServer, addr: SocketAddr, level: StatsLevel) -> Snapshot {
    let full = level == StatsLevel::Full;
    let mut statements: Vec<&str> = PG_STATS.iter().map(|(_, q)| *q).collect();
    if full {
        statements.extend([
            PG_STAT_IO,
            "SELECT current_setting('shared_preload_libraries')",
            PG_STAT_STATEMENTS,
        ]);
    }
    let answers = match crate::settings::sql_rows(sql, Dialect::Postgres, addr, &statements) {
        Ok(a) => a,
        Err(e) => return Snapshot::unavailable("all", e),
    };
    let mut snap = Snapshot::default();
    let mut answers = answers.into_iter();
    for ((group, _), answer) in PG_STATS.iter().zip(answers.by_ref()) {
        match answer {
            Ok(rows) if *group == "identity" => {
                snap.identity = rows.rows.first().and_then(|r| r.first().cloned().flatten())
            }
            Ok(rows) => add_view(&mut snap, group, &rows),
            Err(e) => {
                snap.unavailable.insert(group.to_string(), e);
            }
        }
    }
    if full {
        match answers.next() {
            Some(Ok(rows)) => add_io(&mut snap, &rows),
            Some(Err(e)) => {
                snap.unavailable.insert("pg_stat_io".into(), e);
            }
            None => {}
        }
        let preloaded = answers.next();
        match answers.next() {
            Some(Ok(rows)) => snap.add_statements(rows.rows.iter().map(|r| r.as_slice())),
            Some(Err(e)) => {
                snap.unavailable
                    .insert(STATEMENTS.into(), statements_missing(preloaded, &e));
            }
            None => {}
        }
    }
    snap
}

/// Why pg_stat_statements could not be read: not loaded (the build has no library),
/// or loaded without its view (the build has no extension files), or the server's own
/// words.
fn statements_missing(preloaded: Option<Result<Rows, String>>, error: &str) -> String {
    let loaded = preloaded
        .and_then(Result::ok)
        .and_then(|r| r.rows.first().and_then(|r| r.first().cloned().flatten()))
        .is_some_and(|v| v.contains("pg_stat_statements"));
    if !loaded {
        "not loaded: this build has no pg_stat_statements library beside the server \
         (PostgreSQL's contrib), so bakeoff could not load it"
            .into()
    } else if error.contains("does not exist") {
        format!(
            "loaded, but the extension is not in the database: this build has no \
             pg_stat_statements extension files (PostgreSQL's contrib) ({error})"
        )
    } else {
        error.to_string()
    }
}

/// A one-row view's columns as `<view>.<column>` (gauges left out).
fn add_view(snap: &mut Snapshot, group: &str, rows: &Rows) {
    let Some(row) = rows.rows.first() else {
        snap.unavailable.insert(group.to_string(), "no row".into());
        return;
    };
    let pairs = rows
        .columns
        .iter()
        .zip(row)
        .filter_map(|(c, v)| v.as_deref().map(|v| (c.as_str(), v)));
    snap.add_numbers(&format!("{group}."), pairs, |c| {
        matches!(c, "datid" | "numbackends")
    });
}

/// `pg_stat_io`'s rows as `pg_stat_io.<backend>.<object>.<context>.<column>`.
fn add_io(snap: &mut Snapshot, rows: &Rows) {
    for row in &rows.rows {
        let Some(Some(key)) = row.first() else {
            continue;
        };
        let pairs = rows
            .columns
            .iter()
            .zip(row)
            .skip(1)
            .filter_map(|(c, v)| v.as_deref().map(|v| (c.as_str(), v)));
        snap.add_numbers(&format!("pg_stat_io.{key}."), pairs, |_| false);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_preloads_the_library_only_where_the_build_has_it() {
        let dir = std::env::temp_dir().join(format!("bakeoff-pgss-{}", std::process::id()));
        let bin = dir.join("bin/postgres");
        std::fs::create_dir_all(dir.join("bin")).unwrap();
        assert_eq!(preload(&bin, StatsLevel::Full), None);
        std::fs::create_dir_all(dir.join("lib/postgresql")).unwrap();
        std::fs::write(dir.join("lib/postgresql/pg_stat_statements.so"), "").unwrap();
        assert_eq!(
            preload(&bin, StatsLevel::Full).as_deref(),
            Some("shared_preload_libraries=pg_stat_statements")
        );
        assert_eq!(preload(&bin, StatsLevel::Basic), None);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_missing_statistic_says_why() {
        let not_loaded = statements_missing(None, "must be loaded via shared_preload_libraries");
        assert!(
            not_loaded.contains("no pg_stat_statements library"),
            "{not_loaded}"
        );
        let rows = Rows {
            columns: vec!["x".into()],
            rows: vec![vec![Some("pg_stat_statements".into())]],
            affected: 0,
        };
        let no_view = statements_missing(
            Some(Ok(rows)),
            "relation \"pg_stat_statements\" does not exist",
        );
        assert!(no_view.contains("extension files"), "{no_view}");
    }
}
