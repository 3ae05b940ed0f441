//! The PostgreSQL target: `postgres -D DATA -p PORT -c listen_addresses=127.0.0.1
//! -c unix_socket_directories=SANDBOX -c key=value ...` (the experiment's options as `-c`
//! settings), run as the unprivileged server user when bakeoff is root (PostgreSQL refuses
//! root); ready when user `bakeoff` logs in over TCP and `SELECT 1` answers; stopped with
//! SIGINT (fast shutdown: SIGTERM would wait for clients to leave).

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::kind::TargetKind;
use crate::owned::{self, Risk};
use crate::settings::{knob, Knob};
use crate::sqldata::{self, Login, SqlServer};
use crate::stats::{Sampling, Snapshot, StatsLevel};

mod stats;
mod waits;
use crate::target::{leading_version, version_line, ConnectionLimit, Launch, Target};
use bakeoff_build::Recipe;
use bakeoff_sqlclient::Dialect;

/// PostgreSQL (tested with 15).
#[derive(Debug, Clone, Default)]
pub struct Postgres {
    pub sql: SqlServer,
}

/// Settings that name files where their value says, run commands or load code.
const RISKY: &[(&str, Risk)] = &[
    ("log_directory", DATA_PATH),
    ("log_filename", DATA_PATH),
    ("stats_temp_directory", DATA_PATH),
    ("archive_command", RUNS),
    ("restore_command", RUNS),
    ("archive_cleanup_command", RUNS),
    ("recovery_end_command", RUNS),
    ("ssl_passphrase_command", RUNS),
    ("archive_library", LOADS),
    ("shared_preload_libraries", LOADS),
    ("local_preload_libraries", LOADS),
    ("session_preload_libraries", LOADS),
    ("dynamic_library_path", LOADS),
    ("jit_provider", LOADS),
    ("extension_destdir", LOADS),
    ("extension_control_path", LOADS),
    ("ssl_cert_file", DATA_PATH),
    ("ssl_key_file", DATA_PATH),
    ("ssl_ca_file", DATA_PATH),
    ("ssl_crl_file", DATA_PATH),
    ("ssl_crl_dir", DATA_PATH),
    ("ssl_dh_params_file", DATA_PATH),
    ("krb_server_keyfile", DATA_PATH),
    ("promote_trigger_file", DATA_PATH),
    (
        "primary_conninfo",
        Risk::Runs("makes the server connect to another host"),
    ),
    (
        "log_destination",
        Risk::Words(
            &["syslog", "eventlog"],
            "sends the server's log out of the sandbox",
        ),
    ),
    ("include", INCLUDES),
    ("include_dir", INCLUDES),
    ("include_if_exists", INCLUDES),
];

const INCLUDES: Risk = Risk::Runs("reads another configuration file");

const DATA_PATH: Risk = Risk::Path("the data directory");
const RUNS: Risk = Risk::Runs("runs a shell command on this machine");
const LOADS: Risk = Risk::Runs("loads a library's code into the server");

/// Why `name` = `value` is refused (see [`RISKY`]): the name in any case, `-` for `_`,
/// as PostgreSQL reads it from `-c`, `--name=value` and its config file.
fn risky_setting(name: &str, value: &str) -> Option<String> {
    let name = name.trim().to_ascii_lowercase().replace('-', "_");
    let (_, risk) = RISKY.iter().find(|(n, _)| *n == name)?;
    owned::refusal(*risk, value)
}

/// Modes that turn postgres into another program, given as its first argument.
const MODES: &[&str] = &["--single", "--boot", "--check", "--describe-config"];

/// postgres's getopt string (15).
const SHORT_OPTIONS: &str = "B:bc:C:D:d:EeFf:h:ijk:lN:nOPp:r:S:sTt:W:-:";

/// The command-line settings postgres gets: the experiment's options, then bakeoff's own
/// (the last setting of a name wins).
pub fn settings(listen: IpAddr, workdir: &Path, options: &BTreeMap<String, String>) -> Vec<String> {
    let sockets = sqldata::pg_socket_dir(workdir)
        .map(|d| d.display().to_string())
        .unwrap_or_default();
    let mut out: Vec<String> = options.iter().map(|(k, v)| format!("{k}={v}")).collect();
    out.push(format!("listen_addresses={listen}"));
    out.push(format!("unix_socket_directories={sockets}"));
    out
}

impl Target for Postgres {
    fn kind(&self) -> TargetKind {
        TargetKind::Postgres
    }

    fn dist_layout(&self) -> bakeoff_build::dist::Layout {
        crate::target::layout(&["postgres"], &[&["initdb"]], &["--version"])
    }

    fn recipe(&self) -> Recipe {
        Recipe::Postgres
    }

    fn dialect(&self) -> Option<Dialect> {
        Some(Dialect::Postgres)
    }

    /// Read as postgres's getopt reads them: bundles (`-ih0.0.0.0`), `-i` (every
    /// address), `-c name=value` and `--name=value` with the name in any case and `-` for
    /// `_`.
    fn owned_arg(&self, args: &[String]) -> Option<(String, &'static str)> {
        let parsed = owned::getopt(args, SHORT_OPTIONS, None);
        owned::first_owned(parsed, |name, value| match name {
            "h" | "i" => Some("the listen address"),
            "p" => Some("the port"),
            "D" => Some("the data directory"),
            "k" => Some("the socket directory"),
            "c" | "-" => {
                let setting = value?.split_once('=').map_or(value?, |(n, _)| n);
                self.owned_option(setting)
            }
            _ => None,
        })
    }

    /// Log paths that leave the data directory, commands (`archive_command`, ...) and
    /// libraries (`shared_preload_libraries`, ...).
    fn refused_setting(&self, key: &str, value: &str) -> Option<String> {
        risky_setting(key, value)
    }

    /// `-c name=value` and `--name=value` as `refused_setting` reads them,
    /// `-r FILE` (single-user output) outside the sandbox, and the modes (`--single`,
    /// `--boot`, `--fork...`) that make postgres another program.
    fn refused_arg(&self, args: &[String]) -> Option<(String, String)> {
        let lower = |a: &str| a.to_ascii_lowercase();
        if let Some(a) = args
            .iter()
            .find(|a| MODES.contains(&lower(a).as_str()) || lower(a).starts_with("--fork"))
        {
            let why =
                "runs postgres in another mode, not as the server bakeoff measures; remove it";
            return Some((a.clone(), why.to_string()));
        }
        owned::getopt(args, SHORT_OPTIONS, None)
            .into_iter()
            .find_map(|p| {
                let value = p.value.as_deref().unwrap_or("");
                let why = match p.name.as_str() {
                    "c" | "-" => {
                        let (name, value) = value.split_once('=').unwrap_or((value, ""));
                        risky_setting(name, value)
                    }
                    "r" => owned::refusal(Risk::Path("the sandbox's folder"), value),
                    _ => None,
                };
                why.map(|w| (p.spelling, w))
            })
    }

    fn init_data(&self, binary: &Path, dest: &Path, login: &Login) -> Result<(), String> {
        init(binary, dest, login)
    }

    /// "postgres 15" from "postgres (PostgreSQL) 15.8 (Debian 15.8-0+deb12u1)", with the
    /// build arguments that change the page and segment sizes.
    fn data_format(
        &self,
        binary: &Path,
        _options: &BTreeMap<String, String>,
        configure_args: &[String],
    ) -> Option<String> {
        let mut key = format!("postgres {}", file_version(&version_line(binary)?)?);
        for a in configure_args
            .iter()
            .filter(|a| a.contains("blocksize") || a.contains("segsize"))
        {
            key.push_str(&format!(" {a}"));
        }
        Some(key)
    }

    /// superuser_reserved_connections.
    fn reserved_connections(&self) -> usize {
        3
    }

    fn connection_limit(&self) -> Option<ConnectionLimit> {
        Some(ConnectionLimit::Option("max_connections"))
    }

    fn command(&self, launch: &Launch<'_>) -> Command {
        let port = launch.addr.port();
        // The last setting of a name wins: the experiment's arguments first, bakeoff's own
        // (data directory, port, listen address, sockets) after them.
        let mut cmd = Command::new(launch.binary);
        cmd.args(launch.args);
        cmd.arg("-D")
            .arg(self.sql.data_dir(launch.workdir))
            .args(["-p", &port.to_string()]);
        for s in settings(launch.addr.ip(), launch.workdir, &self.sql.options) {
            cmd.arg("-c").arg(s);
        }
        if let Some(s) = stats::preload(launch.binary, launch.stats) {
            cmd.arg("-c").arg(s);
        }
        sqldata::as_server_user(&mut cmd);
        cmd
    }

    fn sql(&self) -> Option<&SqlServer> {
        Some(&self.sql)
    }

    fn socket(&self, workdir: &Path) -> Option<PathBuf> {
        sqldata::pg_socket_dir(workdir)
    }

    fn stop_signal(&self) -> (i32, bool) {
        (libc::SIGINT, false)
    }

    /// `pg_settings`, each value as `current_setting` shows it (with its unit: `128MB`).
    fn read_settings(
        &self,
        addr: std::net::SocketAddr,
    ) -> Result<BTreeMap<String, String>, String> {
        read_pg_settings(&self.sql, addr)
    }

    fn knobs(&self) -> &'static [Knob] {
        KNOBS
    }

    /// `pg_stat_database` (this database's row), `pg_stat_bgwriter`, `pg_stat_wal`
    /// (14+), and with "full" `pg_stat_io` (16+), each column as `<view>.<column>`; the
    /// identity is the postmaster's start time.
    fn read_stats(&self, addr: std::net::SocketAddr, level: StatsLevel) -> Snapshot {
        stats::read(&self.sql, addr, level)
    }

    /// The load's wait events, sampled from `pg_stat_activity` every 100 ms during the
    /// window (`waits.<Type>:<Event>.samples`; see `waits.rs`).
    fn start_sampling(&self, addr: std::net::SocketAddr, level: StatsLevel) -> Option<Sampling> {
        level.reads().then(|| waits::start(&self.sql, addr))
    }

    /// A backend reports its counters when it goes idle, at most once a second (15+;
    /// every half second to the collector before): 1.2 s after the load stops they
    /// hold all of it.
    fn stats_settle(&self) -> std::time::Duration {
        std::time::Duration::from_millis(1200)
    }
}

/// PostgreSQL's settings that move performance.
const KNOBS: &[Knob] = &[
    knob("fsync", "durability"),
    knob("synchronous_commit", "durability"),
    knob("full_page_writes", "durability"),
    knob("wal_level", "durability"),
    knob("wal_sync_method", "durability"),
    knob("commit_delay", "durability"),
    knob("shared_buffers", "memory"),
    knob("work_mem", "memory"),
    knob("maintenance_work_mem", "memory"),
    knob("effective_cache_size", "memory"),
    knob("max_wal_size", "redo/WAL capacity"),
    knob("checkpoint_timeout", "redo/WAL capacity"),
    knob("wal_buffers", "redo/WAL capacity"),
    knob("max_parallel_workers_per_gather", "threads"),
    knob("max_worker_processes", "threads"),
    knob("server_encoding", "character set"),
    knob("lc_collate", "character set"),
    knob("ssl", "TLS"),
    knob("track_io_timing", "instrumentation"),
    knob("track_activities", "instrumentation"),
    knob("jit", "JIT"),
    knob("huge_pages", "huge pages"),
];

/// Every row of `pg_settings` as name -> `current_setting(name)`.
fn read_pg_settings(
    sql: &SqlServer,
    addr: std::net::SocketAddr,
) -> Result<BTreeMap<String, String>, String> {
    let q = "SELECT name, current_setting(name) FROM pg_settings ORDER BY name";
    let mut got = crate::settings::sql_rows(sql, Dialect::Postgres, addr, &[q])?;
    let rows = got
        .pop()
        .ok_or("no answer")?
        .map_err(|e| format!("pg_settings refused: {e}"))?;
    Ok(crate::settings::pairs(&rows))
}

/// The superuser initdb makes. Nothing logs in as it after the data directory is made:
/// its password is random and thrown away.
pub const ADMIN: &str = "bakeoff_admin";

/// The single-user statements that make the login an ordinary role (no superuser, so
/// `COPY ... TO/FROM` a file or a program, `lo_export`/`lo_import` on the server,
/// `pg_read_file`, `ALTER SYSTEM` and untrusted extensions stay closed to a workload's
/// SQL) with what the workloads need: its password, `CREATEDB`, and its database, which
/// it owns (so it may create tables in `public`, also on 15 and later).
pub(crate) fn login_sql(login: &Login) -> String {
    let quote = |s: &str| s.replace('\'', "''");
    format!(
        "CREATE ROLE {u} LOGIN CREATEDB NOSUPERUSER NOCREATEROLE PASSWORD '{p}';\n\
         CREATE DATABASE {db} OWNER {u};\n",
        u = login.user,
        p = quote(&login.password),
        db = login.database
    )
}

/// initdb into `dest` (a superuser of bakeoff's, [`ADMIN`], with a random password no
/// one keeps; scram passwords), then a single-user run that makes the login an ordinary
/// role owning its database ([`login_sql`]).
pub(crate) fn init(binary: &Path, dest: &Path, login: &Login) -> Result<(), String> {
    let initdb = sqldata::companion(binary, "initdb")
        .ok_or("initdb not found beside the postgres binary or on PATH; install postgresql-15")?;
    std::fs::create_dir_all(dest).map_err(|e| format!("cannot create {}: {e}", dest.display()))?;
    // The password file must be readable by the server user; it lives beside dest briefly.
    let pwfile = dest.with_extension("pw");
    std::fs::write(&pwfile, format!("{}\n", sqldata::random_password()))
        .map_err(|e| format!("cannot write {}: {e}", pwfile.display()))?;
    let made = (|| {
        sqldata::give_to_server_user(dest)?;
        sqldata::give_to_server_user(&pwfile)?;
        let old = Spelling::of(binary);
        let mut cmd = Command::new(&initdb);
        cmd.arg("-D")
            .arg(dest)
            .args([
                "-U",
                ADMIN,
                &format!("--auth={}", old.auth),
                "-E",
                "UTF8",
                "--locale=C",
                old.no_sync,
            ])
            .arg(format!("--pwfile={}", pwfile.display()));
        sqldata::as_server_user(&mut cmd);
        sqldata::run_setup(cmd, None, "initdb")?;
        allow_remote_logins(dest, old.auth)?;
        let mut single = Command::new(binary);
        single
            .args(["--single", "-D"])
            .arg(dest)
            .args(["-c", "listen_addresses=", "template1"]);
        sqldata::as_server_user(&mut single);
        let setup = format!("{}{}", stats::CREATE_EXTENSION, login_sql(login));
        sqldata::run_setup(single, Some(&setup), "postgres --single")
    })();
    let _ = std::fs::remove_file(&pwfile);
    made
}

/// Lets the login in from any address, with its password (scram): initdb admits only
/// loopback, and a server on another host serves the load from elsewhere. Whether
/// anything but loopback can reach it is the listen address's say.
fn allow_remote_logins(dest: &Path, auth: &str) -> Result<(), String> {
    use std::io::Write;
    let hba = dest.join("pg_hba.conf");
    std::fs::OpenOptions::new()
        .append(true)
        .open(&hba)
        .and_then(|mut f| {
            f.write_all(
                format!("# added by bakeoff: the load may come from another host\nhost all all 0.0.0.0/0 {auth}\nhost all all ::/0 {auth}\n").as_bytes(),
            )
        })
        .map_err(|e| format!("cannot add to {}: {e}", hba.display()))
}

/// initdb's flags as the server's version spells them: before PostgreSQL 10 there is
/// no SCRAM (bakeoff's client then logs in with a cleartext password, on loopback) and
/// `--no-sync` was `--nosync`.
struct Spelling {
    auth: &'static str,
    no_sync: &'static str,
}

impl Spelling {
    fn of(binary: &Path) -> Spelling {
        let major = version_line(binary)
            .and_then(|l| file_version(&l))
            .and_then(|v| v.parse::<u32>().ok());
        Spelling::for_major(major)
    }

    /// An unknown version is taken as a new one.
    fn for_major(major: Option<u32>) -> Spelling {
        match major {
            Some(m) if m < 10 => Spelling {
                auth: "password",
                no_sync: "--nosync",
            },
            _ => Spelling {
                auth: "scram-sha-256",
                no_sync: "--no-sync",
            },
        }
    }
}

/// "15" from a `--version` line ("postgres (PostgreSQL) 15.8 (Debian 15.8-0+deb12u1)").
fn file_version(line: &str) -> Option<String> {
    let at = line.find("(PostgreSQL)")?;
    leading_version(&line[at + "(PostgreSQL)".len()..], 1)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_file_version_is_the_major() {
        assert_eq!(
            super::file_version("postgres (PostgreSQL) 15.8 (Debian 15.8-0+deb12u1)").as_deref(),
            Some("15")
        );
        assert_eq!(super::file_version("memcached 1.6.18"), None);
    }

    use super::*;

    #[test]
    fn initdb_flags_as_each_version_spells_them() {
        for (major, auth, no_sync) in [
            (Some(9), "password", "--nosync"),
            (Some(10), "scram-sha-256", "--no-sync"),
            (Some(17), "scram-sha-256", "--no-sync"),
            (None, "scram-sha-256", "--no-sync"),
        ] {
            let s = Spelling::for_major(major);
            assert_eq!((s.auth, s.no_sync), (auth, no_sync), "{major:?}");
        }
        assert_eq!(
            file_version("postgres (PostgreSQL) 9.6.24").as_deref(),
            Some("9")
        );
    }

    #[test]
    fn settings_put_bakeoffs_last_and_drop_long_socket_dirs() {
        let opts = BTreeMap::from([("shared_buffers".to_string(), "128MB".to_string())]);
        let s = settings(crate::LOOPBACK, Path::new("/tmp/sb/pg-1"), &opts);
        assert_eq!(
            s,
            vec![
                "shared_buffers=128MB",
                "listen_addresses=127.0.0.1",
                "unix_socket_directories=/tmp/sb/pg-1",
            ]
        );
        let long = PathBuf::from(format!("/tmp/{}", "x".repeat(120)));
        assert_eq!(
            settings(crate::LOOPBACK, &long, &opts)[2],
            "unix_socket_directories="
        );
    }
}
