//! The SQLite target. SQLite is a library, not a server, so each sandbox runs
//! `bakeoff-sqlited` (crates/sqlited): a small host process that loads the variant's
//! shared library (the sandbox's "binary", e.g. a `libsqlite3.so` built from the
//! amalgamation, or Debian's `libsqlite3.so.0`), opens `data/bakeoff.db`, and serves SQL
//! clients over loopback with the PostgreSQL wire protocol, one thread and one SQLite
//! connection per client. The experiment's options are PRAGMAs run on every connection.
//! Ready when a login and `SELECT 1` answer, like PostgreSQL; stopped with SIGTERM. The
//! host runs as bakeoff's own user (it is not a network server and refuses nothing as
//! root), so it reads libraries in a private build cache.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::kind::TargetKind;
use crate::settings::{knob, Knob};
use crate::sqldata::{self, DataSource, Login, SqlServer};
use crate::stats::{Snapshot, StatsLevel};
use crate::target::{Launch, Target};
use bakeoff_build::Recipe;
use bakeoff_sqlclient::Dialect;

/// The host program's name (on PATH, beside bakeoff, or `$BAKEOFF_SQLITED`).
pub const HOST: &str = "bakeoff-sqlited";
/// The database file inside a data directory.
pub const DB_FILE: &str = "bakeoff.db";
/// SQLite through `bakeoff-sqlited`.
#[derive(Debug, Clone, Default)]
pub struct Sqlite {
    pub sql: SqlServer,
}

/// Where `bakeoff-sqlited` is: `$BAKEOFF_SQLITED`, else beside the running program (or
/// one directory up, for test binaries in `target/*/deps`), else on PATH.
pub fn host_binary() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("BAKEOFF_SQLITED") {
        return Some(PathBuf::from(p));
    }
    let exe = std::env::current_exe().ok()?;
    let dir = exe.parent()?;
    let beside = [dir.join(HOST), dir.join("..").join(HOST)];
    if let Some(p) = beside
        .into_iter()
        .find(|p| bakeoff_os::path::is_executable(p))
    {
        return Some(p);
    }
    bakeoff_os::path::which(HOST)
}

/// The host's command line for `library` on `port` (the sandbox adds cwd and stdio).
pub fn host_command(
    library: &Path,
    database: &Path,
    port: u16,
    socket: Option<PathBuf>,
    options: &BTreeMap<String, String>,
) -> Command {
    let mut cmd = Command::new(host_binary().unwrap_or_else(|| PathBuf::from(HOST)));
    cmd.arg("--library")
        .arg(library)
        .arg("--database")
        .arg(database)
        .args(["--port", &port.to_string()]);
    if let Some(s) = socket {
        cmd.arg("--socket").arg(s);
    }
    for (k, v) in options {
        cmd.arg("--pragma").arg(format!("{k}={v}"));
    }
    cmd
}

impl Target for Sqlite {
    /// The variant's SQLite is a shared library `bakeoff-sqlited` loads.
    fn binary_is_library(&self) -> bool {
        true
    }

    fn kind(&self) -> TargetKind {
        TargetKind::Sqlite
    }

    fn recipe(&self) -> Recipe {
        Recipe::Sqlite
    }

    /// The host's own flags, as its parser reads them (`--name value`, `--name=value`).
    fn owned_arg(&self, args: &[String]) -> Option<(String, &'static str)> {
        args.iter().find_map(|a| {
            let name = a.split_once('=').map_or(a.as_str(), |(n, _)| n);
            let what = match name {
                "--port" => "the port",
                "--socket" => "the socket",
                "--database" => "the database file",
                "--library" => "the SQLite library (give it as the variant's binary)",
                _ => return None,
            };
            Some((a.clone(), what))
        })
    }

    /// Pragmas naming a folder SQLite writes into (`temp_store_directory`), outside the
    /// sandbox's folder; the name in any case (`-` read as `_`), schema-qualified or not.
    fn refused_setting(&self, key: &str, value: &str) -> Option<String> {
        let name = key.rsplit('.').next().unwrap_or(key);
        let name = name.to_ascii_lowercase().replace('-', "_");
        matches!(
            name.as_str(),
            "temp_store_directory" | "data_store_directory"
        )
        .then(|| crate::owned::refusal(crate::owned::Risk::Path("the sandbox's folder"), value))
        .flatten()
    }

    /// `--pragma NAME=VALUE` (also `--pragma=NAME=VALUE`) as `refused_setting` reads it.
    fn refused_arg(&self, args: &[String]) -> Option<(String, String)> {
        let mut i = 0;
        while i < args.len() {
            let a = &args[i];
            i += 1;
            let pragma = match a.strip_prefix("--pragma") {
                Some("") => args.get(i).map(String::as_str),
                Some(rest) => rest.strip_prefix('='),
                None => None,
            };
            let Some((k, v)) = pragma.and_then(|p| p.split_once('=')) else {
                continue;
            };
            if let Some(why) = self.refused_setting(k, v) {
                return Some((a.clone(), why));
            }
        }
        None
    }

    fn dialect(&self) -> Option<Dialect> {
        Some(Dialect::Sqlite)
    }

    /// SQLite is a library hosted beside the load, built by one compiler call.
    fn refuses(&self, ask: crate::Ask) -> Option<String> {
        use crate::Ask;
        let why = match ask {
            Ask::BundledSource => return None,
            Ask::OtherHost => "SQLite is a library that runs beside the load (in bakeoff-sqlited), not a server to put on another host: remove host, or run bakeoff on that host",
            Ask::Lto => "lto links a server; a sqlite build is one compiler call into a shared library: use cflags = \"-flto\" there",
            Ask::Pgo => "pgo trains memcached, redis and postgres servers; sqlite is not supported yet",
            Ask::MakeArgs => "a sqlite build runs no make; put compiler arguments in configure_args (e.g. [\"-DSQLITE_DEFAULT_CACHE_SIZE=-8000\"]) or cflags",
            Ask::Sanitize => "a sanitized libsqlite3 cannot be loaded into bakeoff-sqlited (the sanitizer runtime must come first); use run_under = \"memcheck\"",
            Ask::ConcurrentSql => "a sqlite target runs sqlsuite and replay",
            _ => return crate::common_refusal(self.kind(), true, ask),
        };
        Some(why.to_string())
    }

    fn missing(&self) -> Option<String> {
        host_binary().is_none().then(|| {
            "bakeoff-sqlited (the host a sqlite target runs in) is not beside bakeoff or on PATH; run scripts/setup.sh, which installs both".to_string()
        })
    }

    fn init_data(&self, _binary: &Path, dest: &Path, _login: &Login) -> Result<(), String> {
        init(dest)
    }

    fn init(&self, _binary: &Path, workdir: &Path) -> Result<(), String> {
        if host_binary().is_none() {
            return Err(format!(
                "{HOST} not found beside bakeoff or on PATH; run scripts/setup.sh (it installs both) or set BAKEOFF_SQLITED"
            ));
        }
        if let Some(DataSource::Copy(src)) = &self.sql.data {
            sqldata::copy_tree(src, &workdir.join("data"))?;
        }
        Ok(())
    }

    fn command(&self, launch: &Launch<'_>) -> Command {
        let port = launch.addr.port();
        let socket =
            sqldata::pg_socket_dir(launch.workdir).map(|d| d.join(format!(".s.PGSQL.{port}")));
        let database = self.sql.data_dir(launch.workdir).join(DB_FILE);
        let mut cmd = host_command(launch.binary, &database, port, socket, &self.sql.options);
        if launch.stats == StatsLevel::Full {
            cmd.arg("--stmt-stats");
        }
        cmd.args(launch.args);
        cmd
    }

    /// bakeoff-sqlited runs as bakeoff's own user (under valgrind too: as the server
    /// user, a host beside a bakeoff in root's home could not be started at all).
    fn runs_as_server_user(&self) -> bool {
        false
    }

    fn sql(&self) -> Option<&SqlServer> {
        Some(&self.sql)
    }

    fn socket(&self, workdir: &Path) -> Option<PathBuf> {
        sqldata::pg_socket_dir(workdir)
    }

    /// Its pragmas as a new connection has them (the experiment's are run on every
    /// connection), `PRAGMA compile_options` (each as `compile_option.NAME`) and the
    /// library's version, asked through the host's PostgreSQL protocol as every SQLite
    /// query is.
    fn read_settings(
        &self,
        addr: std::net::SocketAddr,
    ) -> Result<BTreeMap<String, String>, String> {
        read_pragmas(&self.sql, addr)
    }

    fn knobs(&self) -> &'static [Knob] {
        KNOBS
    }

    /// The host's statement counters (`--stmt-stats`, given at "full" only: they cost
    /// the host about 700 instructions a statement, 7% of a point select's):
    /// per statement text its calls and time inside the host (`server_statements`), and
    /// summed over the texts each counter as `stmt.<name>` (`stmt.calls`, `stmt.us`,
    /// and the library's `sqlite3_stmt_status` counters: `stmt.fullscan_step`,
    /// `stmt.sort`, `stmt.autoindex`, `stmt.vm_step`, `stmt.reprepare`, `stmt.run`, ...,
    /// as many as its version has). The identity is the host's pid and start time.
    fn read_stats(&self, addr: std::net::SocketAddr, level: StatsLevel) -> Snapshot {
        if level != StatsLevel::Full {
            return Snapshot::unavailable(
                STMT,
                "SQLite's statement counters are kept at server_stats = \"full\" only (they \
                 cost bakeoff-sqlited about 7% more instructions a statement)",
            );
        }
        read_stmt_stats(&self.sql, addr)
    }
}

/// The group the host's statement counters are unavailable under.
const STMT: &str = "stmt";

/// See [`Sqlite::read_stats`].
fn read_stmt_stats(sql: &SqlServer, addr: std::net::SocketAddr) -> Snapshot {
    let answers = match crate::settings::sql_rows(
        sql,
        Dialect::Sqlite,
        addr,
        &["SHOW bakeoff.started", "SHOW bakeoff.statements"],
    ) {
        Ok(a) => a,
        Err(e) => return Snapshot::unavailable("all", e),
    };
    let mut snap = Snapshot::default();
    let mut answers = answers.into_iter();
    match answers.next() {
        Some(Ok(rows)) => {
            snap.identity = rows.rows.first().and_then(|r| r.first().cloned().flatten())
        }
        Some(Err(e)) => return Snapshot::unavailable("all", host_lacks(&e)),
        None => {}
    }
    match answers.next() {
        Some(Ok(rows)) => add_stmt_rows(&mut snap, &rows),
        Some(Err(e)) => {
            snap.unavailable.insert(STMT.into(), host_lacks(&e));
        }
        None => {}
    }
    snap
}

/// Why the host gave no counters: an older host that has no `SHOW bakeoff.*`, or its
/// own words.
fn host_lacks(error: &str) -> String {
    if error.contains("syntax error") {
        format!("this bakeoff-sqlited keeps no statement counters (an older host?): {error}")
    } else {
        error.to_string()
    }
}

/// `SHOW bakeoff.statements`' rows (digest, text, then counters): each counter summed
/// over the texts as `stmt.<column>`; each text with a digest as a statement.
fn add_stmt_rows(snap: &mut Snapshot, rows: &bakeoff_sqlclient::Rows) {
    for row in &rows.rows {
        for (col, v) in rows.columns.iter().zip(row).skip(2) {
            if let Some(x) = v.as_deref().and_then(crate::stats::number) {
                *snap.counters.entry(format!("{STMT}.{col}")).or_default() += x;
            }
        }
    }
    snap.add_statements(rows.rows.iter().map(|r| r.as_slice()));
}

/// The pragmas read back, each one value (`PRAGMA name`).
const PRAGMAS: &[&str] = &[
    "synchronous",
    "journal_mode",
    "cache_size",
    "page_size",
    "mmap_size",
    "temp_store",
    "locking_mode",
    "wal_autocheckpoint",
    "cache_spill",
    "auto_vacuum",
    "foreign_keys",
    "busy_timeout",
    "threads",
    "automatic_index",
    "secure_delete",
    "journal_size_limit",
];

/// SQLite's settings that move performance.
const KNOBS: &[Knob] = &[
    knob("synchronous", "durability"),
    knob("journal_mode", "durability"),
    knob("locking_mode", "durability"),
    knob("cache_size", "memory"),
    knob("mmap_size", "memory"),
    knob("temp_store", "memory"),
    knob("page_size", "memory"),
    knob("wal_autocheckpoint", "redo/WAL capacity"),
    knob("threads", "threads"),
    knob("compile_option.THREADSAFE", "threads"),
    knob("secure_delete", "durability"),
];

/// See [`Sqlite::read_settings`]; a pragma the library does not know is left out.
fn read_pragmas(
    sql: &SqlServer,
    addr: std::net::SocketAddr,
) -> Result<BTreeMap<String, String>, String> {
    let mut statements: Vec<String> = PRAGMAS.iter().map(|p| format!("PRAGMA {p}")).collect();
    statements.push("PRAGMA compile_options".into());
    statements.push("SELECT sqlite_version()".into());
    let texts: Vec<&str> = statements.iter().map(String::as_str).collect();
    let got = crate::settings::sql_rows(sql, Dialect::Sqlite, addr, &texts)?;
    let first = |r: &bakeoff_sqlclient::Rows| r.rows.first()?.first()?.clone();
    let mut out = BTreeMap::new();
    for (name, answer) in PRAGMAS.iter().zip(&got) {
        if let Some(v) = answer.as_ref().ok().and_then(first) {
            out.insert(name.to_string(), v);
        }
    }
    let (options, version) = (&got[PRAGMAS.len()], &got[PRAGMAS.len() + 1]);
    let options = options
        .as_ref()
        .map_err(|e| format!("PRAGMA compile_options refused: {e}"))?;
    for row in &options.rows {
        if let Some(Some(o)) = row.first() {
            let (k, v) = o.split_once('=').unwrap_or((o, "on"));
            out.insert(format!("compile_option.{k}"), v.to_string());
        }
    }
    if let Some(v) = version.as_ref().ok().and_then(first) {
        out.insert("sqlite_version".into(), v);
    }
    Ok(out)
}

/// A pristine data directory: empty (the host creates the database file on first open).
pub(crate) fn init(dest: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dest).map_err(|e| format!("cannot create {}: {e}", dest.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::target::command_args;

    #[test]
    fn command_names_library_database_port_socket_and_pragmas() {
        let t = Sqlite {
            sql: SqlServer {
                options: BTreeMap::from([("synchronous".to_string(), "off".to_string())]),
                ..Default::default()
            },
        };
        let args = command_args(&t, "/b/libsqlite3.so", 5433, "/sb/x", &[]);
        assert_eq!(
            args,
            [
                "--library",
                "/b/libsqlite3.so",
                "--database",
                "/sb/x/data/bakeoff.db",
                "--port",
                "5433",
                "--socket",
                "/sb/x/.s.PGSQL.5433",
                "--pragma",
                "synchronous=off"
            ]
        );
    }

    #[test]
    fn statement_rows_sum_into_counters_and_digests_become_statements() {
        let rows = bakeoff_sqlclient::Rows {
            columns: ["digest", "text", "calls", "us", "fullscan_step", "run"]
                .map(String::from)
                .to_vec(),
            rows: vec![
                ["a1", "SELECT 1", "10", "25.5", "0", "10"]
                    .map(|v| Some(v.to_string()))
                    .to_vec(),
                ["b2", "SELECT x FROM t", "4", "100", "396", "4"]
                    .map(|v| Some(v.to_string()))
                    .to_vec(),
                // The overflow row: counted, no statement of its own.
                ["", "", "1", "2", "5", "1"]
                    .map(|v| Some(v.to_string()))
                    .to_vec(),
            ],
            affected: 0,
        };
        let mut snap = Snapshot::default();
        add_stmt_rows(&mut snap, &rows);
        assert_eq!(snap.counters["stmt.calls"], 15.0);
        assert_eq!(snap.counters["stmt.fullscan_step"], 401.0);
        assert_eq!(snap.counters["stmt.run"], 15.0);
        assert_eq!(snap.counters["stmt.us"], 127.5);
        assert_eq!(snap.statements.len(), 2);
        assert_eq!(snap.statements["b2"].text, "SELECT x FROM t");
        assert_eq!(snap.statements["b2"].total_us, 100.0);
        assert!(host_lacks("syntax error at or near SHOW").contains("older host"));
    }
}
