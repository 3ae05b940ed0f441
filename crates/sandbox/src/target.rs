//! The `Target` trait: everything that differs between server kinds. How one is built
//! (its recipe), started (command line, flags the sandbox owns, arguments under
//! valgrind), found ready (readiness probe, how long to wait), stopped, how its data
//! directory is made and which builds can share one, how many connections it keeps for
//! itself. One implementation per [`TargetKind`], chosen in one place ([`target_for`]).

use std::collections::BTreeMap;
use std::fmt;
use std::net::SocketAddr;
use std::path::Path;
use std::process::Command;
use std::str::FromStr;
use std::time::Duration;

use bakeoff_build::Recipe;

use serde::{Deserialize, Serialize};

use crate::mariadb::Mariadb;
use crate::memcached::Memcached;
use crate::mysql::Mysql;
use crate::postgres::Postgres;
use crate::redis::Redis;
use crate::sqlite::Sqlite;
use crate::valkey::Valkey;

/// The kind of server a sandbox runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TargetKind {
    /// memcached (text protocol readiness probe).
    Memcached,
    /// MariaDB `mariadbd` (readiness: a real login and `SELECT 1`).
    Mariadb,
    /// PostgreSQL `postgres` (readiness: a real login and `SELECT 1`).
    Postgres,
    /// SQLite: the variant's library hosted by `bakeoff-sqlited` (readiness as PostgreSQL).
    Sqlite,
    /// Redis `redis-server` (RESP; readiness: PING).
    Redis,
    /// Oracle's MySQL `mysqld`, 5.5 to 8.x (readiness as MariaDB's).
    Mysql,
    /// Valkey `valkey-server`, Redis's fork (RESP; readiness: PING).
    Valkey,
}

/// What a target is made with for a sandbox: the experiment's options, its data, and
/// the login stored in that data (all empty for a target asked only what it is).
#[derive(Debug, Clone, Default)]
pub struct Made {
    pub options: BTreeMap<String, String>,
    pub data: Option<crate::DataSource>,
    pub login: Option<crate::sqldata::Login>,
}

/// How a registry entry makes its [`Target`].
type Maker = fn(Made) -> Box<dyn Target>;

/// The target registry: every kind, its name in experiment files and output, and how its
/// [`Target`] is made. A new target is its module, its [`TargetKind`] variant and one line
/// here; every question about it (SQL or not, options, dialect, protocol, what it
/// refuses) is answered by its `Target`.
#[rustfmt::skip]
const REGISTRY: &[(TargetKind, &str, Maker)] = &[
    (TargetKind::Memcached, "memcached", |_| Box::new(Memcached)),
    (TargetKind::Mariadb,   "mariadb",   |m| Box::new(Mariadb::from(m))),
    (TargetKind::Mysql,     "mysql",     |m| Box::new(Mysql::from(m))),
    (TargetKind::Postgres,  "postgres",  |m| Box::new(Postgres::from(m))),
    (TargetKind::Sqlite,    "sqlite",    |m| Box::new(Sqlite::from(m))),
    (TargetKind::Redis,     "redis",     |m| Box::new(Redis::from(m))),
    (TargetKind::Valkey,    "valkey",    |m| Box::new(Valkey::from(m))),
];

impl TargetKind {
    /// Every kind this build supports, in the registry's order (help texts, messages).
    pub fn all() -> impl Iterator<Item = TargetKind> {
        REGISTRY.iter().map(|(k, _, _)| *k)
    }

    /// Every kind's name, comma-separated, for messages.
    pub fn names() -> String {
        REGISTRY
            .iter()
            .map(|(_, n, _)| *n)
            .collect::<Vec<_>>()
            .join(", ")
    }

    fn entry(self) -> &'static (TargetKind, &'static str, Maker) {
        REGISTRY
            .iter()
            .find(|(k, _, _)| *k == self)
            .expect("every TargetKind has a registry line")
    }

    /// The lowercase name used in experiment files and output.
    pub fn as_str(self) -> &'static str {
        self.entry().1
    }

    /// Whether this is a SQL server (data directory, login, options): it has a dialect.
    pub fn is_sql(self) -> bool {
        target_for(self).dialect().is_some()
    }

    /// Whether the experiment's `options` are server settings for it
    /// ([`Target::takes_options`]).
    pub fn takes_options(self) -> bool {
        target_for(self).takes_options()
    }

    /// Whether the sandbox's "binary" is a shared library ([`Target::binary_is_library`]).
    pub fn binary_is_library(self) -> bool {
        target_for(self).binary_is_library()
    }
}

impl fmt::Display for TargetKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Error of [`TargetKind::from_str`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownTarget(pub String);

impl fmt::Display for UnknownTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown target {:?}; use one of: {}",
            self.0,
            TargetKind::names()
        )
    }
}

impl std::error::Error for UnknownTarget {}

impl FromStr for TargetKind {
    type Err = UnknownTarget;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        TargetKind::all()
            .find(|k| k.as_str().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| UnknownTarget(s.to_string()))
    }
}

/// Where a server's connection cap is set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConnectionLimit {
    /// A server option (`max_connections`, Redis's `maxclients`); the command line's
    /// `--NAME` spelling sets it too.
    Option(&'static str),
    /// A command-line flag with a short and a long spelling (memcached's `-c`,
    /// `--conn-limit`).
    Flag {
        /// `-c`: also bundled with its value (`-c4096`).
        short: &'static str,
        /// `--conn-limit`: also as `--conn-limit=4096`.
        long: &'static str,
    },
}

impl ConnectionLimit {
    /// The name an experiment author knows it by, for messages.
    pub fn name(self) -> &'static str {
        match self {
            ConnectionLimit::Option(name) => name,
            ConnectionLimit::Flag { short, .. } => short,
        }
    }

    /// The cap the command line `args` set, if any: `(index of the argument, its value)`,
    /// the last one winning as it does for the server. A value that is not a number is
    /// returned as it was written.
    pub fn in_args(self, args: &[String]) -> Option<(usize, String)> {
        let mut found = None;
        let mut i = 0;
        while i < args.len() {
            let a = args[i].as_str();
            let next = || args.get(i + 1).cloned().unwrap_or_default();
            let hit = match self {
                ConnectionLimit::Flag { short, long } => {
                    if a == short || a == long {
                        Some(next())
                    } else if let Some(v) = a.strip_prefix(long).and_then(|r| r.strip_prefix('=')) {
                        Some(v.to_string())
                    } else if !a.starts_with("--") && a.len() > short.len() && a.starts_with(short)
                    {
                        Some(a[short.len()..].to_string())
                    } else {
                        None
                    }
                }
                ConnectionLimit::Option(name) => option_in_arg(name, a, next),
            };
            if let Some(v) = hit {
                found = Some((i, v));
            }
            i += 1;
        }
        found
    }
}

/// `--name=V`, `--name V` (`-` and `_` alike, any case), or PostgreSQL's `-c name=V`
/// split over two arguments (`a` is then the value `name=V` after `-c`).
fn option_in_arg(name: &str, a: &str, next: impl Fn() -> String) -> Option<String> {
    let norm = |x: &str| x.to_ascii_lowercase().replace('-', "_");
    if let Some(rest) = a.strip_prefix("--") {
        let (k, v) = match rest.split_once('=') {
            Some((k, v)) => (k, Some(v.to_string())),
            None => (rest, None),
        };
        return (norm(k) == name).then(|| v.unwrap_or_else(next));
    }
    if a == "-c" {
        let n = next();
        let (k, v) = n.split_once('=')?;
        return (norm(k) == name).then(|| v.to_string());
    }
    None
}

/// What a sandbox needs to know about one kind of server.
///
/// The sandbox owns everything else: the port, the work dir, the process group, stdio
/// redirection, parent-death signal, readiness polling and stopping.
/// How a load talks to the server: what a workload kind asks before it fits a target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// memcached's text protocol.
    Memcached,
    /// Redis's RESP.
    Resp,
    /// SQL through `bakeoff-sqlclient` (the dialect says which).
    Sql,
}

/// What a variant, a workload or the plan may ask of a target that not every target
/// does; [`Target::refuses`] says why not, where it does not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ask {
    /// `[target] host`: the server on another machine.
    OtherHost,
    /// `source = { bundled = true }`: the SQLite amalgamation bakeoff carries.
    BundledSource,
    /// A variant's `lto`.
    Lto,
    /// A variant's `pgo`.
    Pgo,
    /// A variant's `bolt`.
    Bolt,
    /// `[plan] layouts` above 1.
    Layouts,
    /// A variant's `make_args`.
    MakeArgs,
    /// A variant's `sanitize`.
    Sanitize,
    /// Concurrent transactions from many connections (oltp, tpcc, mysqlslap).
    ConcurrentSql,
}

/// The refusals every target shares unless it says otherwise: no bundled source; bolt
/// and code layouts only for a server that runs as bakeoff's own user from one binary.
/// `sql`: the target has a SQL dialect.
pub fn common_refusal(kind: TargetKind, sql: bool, ask: Ask) -> Option<String> {
    let name = kind.as_str();
    match ask {
        Ask::BundledSource => Some(format!(
            "bundled is the SQLite amalgamation bakeoff carries; a {name} target needs debian, tarball, git or path"
        )),
        Ask::Bolt if sql => Some(format!(
            "bolt trains on memcached and redis targets, not yet on {name} (its server runs as another user, under perf); use pgo there"
        )),
        Ask::Layouts if sql => Some(format!(
            "layouts are built for memcached and redis targets; a {name} build installs a tree that each layout would copy: use layouts = 1"
        )),
        Ask::ConcurrentSql if !sql => Some(format!("{name} is not a SQL server")),
        _ => None,
    }
}

pub trait Target: Send + Sync {
    /// Which kind this is.
    fn kind(&self) -> TargetKind;

    /// How a variant of this target is built from source.
    fn recipe(&self) -> Recipe;

    /// What its server looks like in a distribution's binaries (`[[variant]] dist`): the
    /// server's file names, the helpers it needs beside it, how it prints its version.
    /// Empty names: this target does not run from a distribution.
    fn dist_layout(&self) -> bakeoff_build::dist::Layout {
        bakeoff_build::dist::Layout::default()
    }

    /// The SQL dialect and wire protocol it speaks (None: not a SQL server).
    fn dialect(&self) -> Option<bakeoff_sqlclient::Dialect> {
        None
    }

    /// Whether the experiment's `options` are server settings for it (a SQL server's
    /// options, Redis's config directives); memcached takes `args` only.
    fn takes_options(&self) -> bool {
        self.dialect().is_some()
    }

    /// Whether the sandbox's "binary" is a shared library (SQLite), which need not be
    /// executable.
    fn binary_is_library(&self) -> bool {
        false
    }

    /// Why `binary` is not this target's server, read from the file without running it
    /// (MariaDB's server given as MySQL, or the other way round): a phrase with what to
    /// do. None: nothing against it.
    fn refuses_binary(&self, _binary: &Path) -> Option<String> {
        None
    }

    /// The first of `args` that sets something the sandbox owns (port, listen address,
    /// data directory, sockets, daemon mode), read the way the server reads its command
    /// line: the argument as written and what it sets. The experiment may not give it.
    fn owned_arg(&self, _args: &[String]) -> Option<(String, &'static str)> {
        None
    }

    /// What an `options` key sets that the sandbox owns, under every spelling the server
    /// accepts for it (any case, `-` for `_`, and for MariaDB `loose-` and prefixes).
    fn owned_option(&self, key: &str) -> Option<&'static str> {
        if !self.kind().is_sql() {
            return None;
        }
        let norm = key.to_ascii_lowercase().replace('-', "_");
        SQL_OWNED_OPTIONS
            .iter()
            .find(|(o, _)| *o == norm)
            .map(|(_, what)| *what)
    }

    /// Why the experiment may not set `key` to `value` (an `options` entry), beyond what
    /// the sandbox owns: the setting names a path outside the sandbox, runs a command,
    /// loads code or opens a port. A phrase that follows "option KEY", with what to do.
    /// The names are read as [`Target::owned_option`] reads them.
    fn refused_setting(&self, _key: &str, _value: &str) -> Option<String> {
        None
    }

    /// The same for the command line `args`, read as the server reads them: the
    /// argument as written and why.
    fn refused_arg(&self, _args: &[String]) -> Option<(String, String)> {
        None
    }

    /// How long the server may take to become ready (SQL: InnoDB recovery, 1000+
    /// connections), and to shut down cleanly before it is killed.
    fn ready_timeout(&self) -> Duration {
        if self.kind().is_sql() {
            crate::sqldata::SQL_READY_TIMEOUT
        } else {
            Duration::from_secs(10)
        }
    }

    /// See [`Target::ready_timeout`].
    fn stop_grace(&self) -> Duration {
        if self.kind().is_sql() {
            crate::sqldata::SQL_STOP_GRACE
        } else {
            Duration::from_secs(5)
        }
    }

    /// Seconds a start and a stop take together, as a planning guess before any run.
    fn start_stop_guess_s(&self) -> f64 {
        1.0
    }

    /// The server's arguments when it runs under valgrind (`fd_limit`: the open-files
    /// limit valgrind leaves it; `instructions`: counted by callgrind).
    fn valgrind_args(
        &self,
        args: &[String],
        _fd_limit: Option<u64>,
        _instructions: bool,
    ) -> Vec<String> {
        args.to_vec()
    }

    /// Makes a pristine data directory at `dest` with `login` as its ordinary user.
    fn init_data(
        &self,
        _binary: &Path,
        _dest: &Path,
        _login: &crate::sqldata::Login,
    ) -> Result<(), String> {
        Err(format!("{} keeps no data directory", self.kind()))
    }

    /// What decides whether two builds read the same data files: the server's version as
    /// far as the file format goes, with the options and build arguments that change it.
    /// None: never share loaded data (unknown version, or no data directory).
    fn data_format(
        &self,
        _binary: &Path,
        _options: &BTreeMap<String, String>,
        _configure_args: &[String],
    ) -> Option<String> {
        None
    }

    /// How many more the cap bakeoff sets holds beyond the sweep and the reserved ones,
    /// where the server's own use of it depends on its settings (memcached's descriptors
    /// grow with `-t`). Not asked of a cap the experiment sets: that is checked against
    /// the sweep and the reserved connections only.
    fn connection_headroom(&self) -> usize {
        0
    }

    /// Connections the server keeps from ordinary users (PostgreSQL's
    /// superuser_reserved_connections).
    fn reserved_connections(&self) -> usize {
        0
    }

    /// How the server caps its clients' connections, when it does: bakeoff sizes the cap
    /// to the sweep unless the experiment sets it, and refuses a cap below the sweep.
    fn connection_limit(&self) -> Option<ConnectionLimit> {
        None
    }

    /// The cap the server has when nothing sets it, where that is generous enough to
    /// keep (memcached 1024, Redis 10000): bakeoff then sets the cap only for a sweep
    /// above it. None: always set (the SQL servers' 100-151 are below most sweeps).
    fn connection_default(&self) -> Option<usize> {
        None
    }

    /// What this machine lacks to run the target, as a message with the fix (SQLite:
    /// its host program). None: nothing.
    fn missing(&self) -> Option<String> {
        None
    }

    /// Whether tables choose a storage engine (`engine =`).
    fn has_storage_engines(&self) -> bool {
        false
    }

    /// How a load talks to it (default: SQL where it has a dialect, else memcached's
    /// text protocol).
    fn protocol(&self) -> Protocol {
        if self.dialect().is_some() {
            Protocol::Sql
        } else {
            Protocol::Memcached
        }
    }

    /// Why it cannot do what `ask` asks, with what to do instead; None: it can. Default
    /// [`common_refusal`].
    fn refuses(&self, ask: Ask) -> Option<String> {
        common_refusal(self.kind(), self.dialect().is_some(), ask)
    }

    /// One-time preparation of a fresh work dir before the first start (e.g. initdb for
    /// PostgreSQL). Default: nothing. The error text ends up in `SandboxError::Init`.
    fn init(&self, _binary: &Path, _workdir: &Path) -> Result<(), String> {
        Ok(())
    }

    /// The command line to start `binary` listening on 127.0.0.1:`port`, with the user's
    /// extra args. The sandbox sets the working directory, stdio and process group itself.
    ///
    /// To run the server as another user, set it here with `CommandExt::uid`/`gid`: the
    /// sandbox arms the parent-death signal after that switch. A server that switches
    /// users itself after exec loses the parent-death signal (the kernel clears it on a
    /// credential change), which is why memcached as root gets `-u root`.
    fn command(
        &self,
        binary: &Path,
        addr: SocketAddr,
        workdir: &Path,
        extra_args: &[String],
    ) -> Command;

    /// One readiness attempt; `Ok(true)` when ready. Must be bounded in time (about 1 s).
    fn probe(&self, addr: SocketAddr) -> std::io::Result<bool>;

    /// How SQL workloads log in (SQL targets only).
    fn login(&self) -> Option<crate::sqldata::Login> {
        None
    }

    /// The server's unix socket (MariaDB: the socket file; PostgreSQL: its directory).
    fn socket(&self, _workdir: &Path) -> Option<std::path::PathBuf> {
        None
    }

    /// Asks the server at `addr` to shut down cleanly over its own protocol (Redis's
    /// `SHUTDOWN NOSAVE`); true when asked, so no signal is sent first. Default: no.
    fn request_stop(&self, _addr: SocketAddr) -> bool {
        false
    }

    /// The signal that asks the server to shut down cleanly, and whether it goes to the
    /// whole process group (memcached) or only to the server, which then ends its own
    /// children (PostgreSQL's postmaster).
    fn stop_signal(&self) -> (i32, bool) {
        (libc::SIGTERM, true)
    }

    /// Whether the server's log tail says it failed because the port was taken; the
    /// sandbox then retries on a new port.
    fn is_port_clash(&self, log_tail: &str) -> bool {
        let t = log_tail.to_ascii_lowercase();
        t.contains("address already in use") || t.contains("eaddrinuse")
    }
}

/// The settings a SQL server's sandbox owns, in PostgreSQL's spelling (MariaDB's are in
/// its own module; SQLite's host takes pragmas, none of which these name).
pub(crate) const SQL_OWNED_OPTIONS: &[(&str, &str)] = &[
    ("port", "the port"),
    ("listen_addresses", "the listen address"),
    ("data_directory", "the data directory"),
    ("unix_socket_directories", "the socket directory"),
    ("unix_socket_group", "the socket's owner"),
    ("unix_socket_permissions", "the socket's permissions"),
    ("external_pid_file", "the pid file"),
    ("hba_file", "the authentication file"),
    ("ident_file", "the authentication file"),
    ("config_file", "the configuration file"),
];

/// The [`Target`] implementation for `kind`, with no options and no data (SQL targets
/// built this way cannot log in; use [`target_for_spec`]).
pub fn target_for(kind: TargetKind) -> Box<dyn Target> {
    (kind.entry().2)(Made::default())
}

/// The [`Target`] for a spec: SQL targets get its options, its data source and the login
/// stored in that data.
pub fn target_for_spec(spec: &crate::SandboxSpec) -> Result<Box<dyn Target>, String> {
    let sql = spec.kind.is_sql();
    let login = match &spec.data {
        Some(d) if sql => Some(crate::sqldata::read_login(d.path())?),
        _ => None,
    };
    if sql && spec.data.is_none() {
        return Err(format!(
            "a {} sandbox needs a data directory (make one with init_data)",
            spec.kind
        ));
    }
    Ok((spec.kind.entry().2)(Made {
        options: spec.options.clone(),
        data: spec.data.clone(),
        login,
    }))
}

/// Whether the file at `path` holds `needle` (read in 1 MiB pieces, never run).
pub(crate) fn file_holds(path: &Path, needle: &[u8]) -> bool {
    use std::io::Read;
    let Ok(mut f) = std::fs::File::open(path) else {
        return false;
    };
    let mut buf = vec![0u8; 1 << 20];
    let mut carry = 0;
    loop {
        let n = match f.read(&mut buf[carry..]) {
            Ok(0) | Err(_) => return false,
            Ok(n) => n,
        };
        let end = carry + n;
        if buf[..end].windows(needle.len()).any(|w| w == needle) {
            return true;
        }
        carry = needle.len().saturating_sub(1).min(end);
        buf.copy_within(end - carry..end, 0);
    }
}

/// The first line `binary --version` prints, if it runs.
pub(crate) fn version_line(binary: &Path) -> Option<String> {
    let out = Command::new(binary).arg("--version").output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines().next().map(str::to_string)
}

/// The first `keep` parts of the dotted version number at the start of `rest`
/// ("15.8 (Debian...)" with 1 -> "15").
pub(crate) fn leading_version(rest: &str, keep: usize) -> Option<String> {
    let number: String = rest
        .trim_start()
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    let parts: Vec<&str> = number.split('.').filter(|p| !p.is_empty()).collect();
    (parts.len() >= keep).then(|| parts[..keep].join("."))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kind_names_round_trip() {
        for k in TargetKind::all() {
            assert_eq!(k.as_str().parse::<TargetKind>().unwrap(), k);
            let json = serde_json::to_string(&k).unwrap();
            assert_eq!(json, format!("\"{}\"", k.as_str()));
            assert_eq!(serde_json::from_str::<TargetKind>(&json).unwrap(), k);
            assert_eq!(
                target_for(k).kind(),
                k,
                "{k}'s registry line makes another target"
            );
        }
        assert!("mysql8".parse::<TargetKind>().is_err());
    }

    #[test]
    fn a_needle_is_found_across_read_pieces() {
        let tmp = tempfile::tempdir().unwrap();
        let f = tmp.path().join("bin");
        let mut bytes = vec![b'x'; (1 << 20) - 3];
        bytes.extend_from_slice(b"10.11.6-MariaDB-0+deb12u1");
        bytes.extend(vec![b'y'; 1 << 20]);
        std::fs::write(&f, &bytes).unwrap();
        assert!(file_holds(&f, b"-MariaDB"));
        assert!(!file_holds(&f, b"MySQL Community Server"));
        assert!(!file_holds(&tmp.path().join("none"), b"x"));
        let t = target_for(TargetKind::Mysql);
        assert!(t.refuses_binary(&f).unwrap().contains("kind = \"mariadb\""));
        assert!(target_for(TargetKind::Mariadb).refuses_binary(&f).is_none());
    }

    #[test]
    fn default_port_clash_detection() {
        let t = target_for(TargetKind::Memcached);
        assert!(t.is_port_clash(
            "failed to listen on one of interface(s) 127.0.0.1: Address already in use"
        ));
        assert!(!t.is_port_clash("unrecognized option '--x'"));
    }
}
