//! The `Target` trait: everything that differs between server kinds. How one is built
//! (its recipe), started (command line, flags the sandbox owns, arguments under
//! valgrind), found ready (readiness probe, how long to wait), stopped, how its data
//! directory is made and which builds can share one, how many connections it keeps for
//! itself. One implementation per [`TargetKind`], chosen in one place (the registry,
//! `targets.rs`, which names every implementation; this module names none).

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use bakeoff_build::Recipe;

use crate::kind::TargetKind;
use crate::settings::Knob;
use crate::sqldata::{DataSource, Login, SqlServer, SQL_READY_TIMEOUT, SQL_STOP_GRACE};
use crate::stats::{Sampling, Snapshot, StatsLevel};

/// What a target is made with for a sandbox: the experiment's options, its data, and
/// the login stored in that data (all empty for a target asked only what it is).
#[derive(Debug, Clone, Default)]
pub struct Made {
    pub options: BTreeMap<String, String>,
    pub data: Option<DataSource>,
    pub login: Option<Login>,
}

impl From<Made> for SqlServer {
    fn from(m: Made) -> Self {
        SqlServer {
            options: m.options,
            data: m.data,
            login: m.login,
        }
    }
}

/// What a server is started with: [`Target::command`]'s input.
#[derive(Debug, Clone, Copy)]
pub struct Launch<'a> {
    /// The server binary (SQLite: the library its host loads).
    pub binary: &'a Path,
    /// The loopback address and free port it listens on.
    pub addr: SocketAddr,
    /// The sandbox's work dir.
    pub workdir: &'a Path,
    /// The experiment's own arguments for it.
    pub args: &'a [String],
    /// `[plan] server_stats`: "full" loads or turns on what the server's statement
    /// digests need (pg_stat_statements, performance_schema).
    pub stats: StatsLevel,
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

    /// Whether its server runs as the server user when bakeoff runs as root (the SQL
    /// servers, which refuse root or keep files the user owns); a wrapper (valgrind) then
    /// runs as that user too. SQLite's host runs as bakeoff's own user.
    fn runs_as_server_user(&self) -> bool {
        self.kind().is_sql()
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
        self.dialect()?;
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
        if self.dialect().is_some() {
            SQL_READY_TIMEOUT
        } else {
            Duration::from_secs(10)
        }
    }

    /// See [`Target::ready_timeout`].
    fn stop_grace(&self) -> Duration {
        if self.dialect().is_some() {
            SQL_STOP_GRACE
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
    fn init_data(&self, _binary: &Path, _dest: &Path, _login: &Login) -> Result<(), String> {
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

    /// One-time preparation of a fresh work dir before the first start. Default: a SQL
    /// target's data copied in and the folder given to the server's user
    /// ([`SqlServer::init`]), else nothing. The error text ends up in
    /// `SandboxError::Init`.
    fn init(&self, _binary: &Path, workdir: &Path) -> Result<(), String> {
        self.sql().map_or(Ok(()), |sql| sql.init(workdir, &[]))
    }

    /// The command line to start the launch's `binary` listening on its `addr`, with the
    /// experiment's `args`. The sandbox sets the working directory, stdio and process group itself.
    ///
    /// To run the server as another user, set it here with `CommandExt::uid`/`gid`: the
    /// sandbox arms the parent-death signal after that switch. A server that switches
    /// users itself after exec loses the parent-death signal (the kernel clears it on a
    /// credential change), which is why memcached as root gets `-u root`.
    fn command(&self, launch: &Launch<'_>) -> Command;

    /// One readiness attempt; `Ok(true)` when ready. Must be bounded in time (about 1 s).
    /// Default: a SQL target's login and `SELECT 1` over its dialect
    /// ([`SqlServer::probe`]); a target without both gives its own.
    fn probe(&self, addr: SocketAddr) -> std::io::Result<bool> {
        match (self.sql(), self.dialect()) {
            (Some(sql), Some(dialect)) => sql.probe(addr, dialect),
            _ => Err(std::io::Error::other(format!(
                "{} has no readiness probe",
                self.kind()
            ))),
        }
    }

    /// What a SQL target holds as every SQL target does (its options, the prepared data
    /// a run starts from, the login), which the lifecycle's defaults use. None: not a
    /// SQL target.
    fn sql(&self) -> Option<&SqlServer> {
        None
    }

    /// How SQL workloads log in (SQL targets only).
    fn login(&self) -> Option<Login> {
        self.sql()?.login.clone()
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

    /// The settings the ready server at `addr` runs with, name -> value as the server
    /// reports them (MariaDB's `SHOW GLOBAL VARIABLES`, `pg_settings`, Redis's `CONFIG
    /// GET *`, memcached's `stats settings`, SQLite's pragmas), before any masking:
    /// [`crate::Sandbox::settings`] masks them. Err: why they cannot be read (the command
    /// refused or renamed, a server that does not say). Bounded in time
    /// ([`crate::settings::READ_TIMEOUT`]).
    fn read_settings(&self, _addr: SocketAddr) -> Result<BTreeMap<String, String>, String> {
        Err(format!("bakeoff does not read {}'s settings", self.kind()))
    }

    /// Its settings that move performance (durability, memory, redo capacity, threads,
    /// character set, TLS, caches, instrumentation, JIT, huge pages), in the names
    /// [`Target::read_settings`] gives: a difference between variants in one of them
    /// leads the report's settings diff, and is a warning when the experiment did not
    /// ask for it.
    fn knobs(&self) -> &'static [Knob] {
        &[]
    }

    /// The server's own cumulative statistics at `addr` now, as much as `level` asks
    /// (each target's reader in its module: `stats`, `INFO`, `pg_stat_*`, `SHOW GLOBAL
    /// STATUS`), counters only (gauges and texts left out). What cannot be read (a view
    /// the version lacks, a command refused) is in [`Snapshot::unavailable`] with the
    /// reason; never an error. Bounded in time ([`crate::settings::READ_TIMEOUT`]).
    fn read_stats(&self, _addr: SocketAddr, _level: StatsLevel) -> Snapshot {
        Snapshot::unavailable(
            "all",
            format!("bakeoff does not read {}'s statistics", self.kind()),
        )
    }

    /// Starts sampling what the server does during the measured window, where `level`
    /// asks for it and the server keeps no counter of it (PostgreSQL's wait events from
    /// `pg_stat_activity`); [`crate::stats::Sampling::finish`] at the window's end gives
    /// the window's counts. None: nothing sampled.
    fn start_sampling(&self, _addr: SocketAddr, _level: StatsLevel) -> Option<Sampling> {
        None
    }

    /// How long after a load stops the server's counters take to hold all of it (a
    /// PostgreSQL backend reports its counters at most once a second): the after-read
    /// waits this long.
    fn stats_settle(&self) -> Duration {
        Duration::ZERO
    }

    /// Whether the after-read needs the load's connections still open (MySQL's prepared
    /// statements go with their connection). PostgreSQL's do not: a backend that stays
    /// connected may hold its last second of counters for 10 s, while one that closes
    /// reports them at once.
    fn stats_need_connections(&self) -> bool {
        false
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

/// A server's [`Target::dist_layout`]: its file names (preferred first), the helpers it
/// needs beside it (each one of several names), the arguments that print its version.
pub(crate) const fn layout(
    servers: &'static [&'static str],
    helpers: &'static [&'static [&'static str]],
    version_args: &'static [&'static str],
) -> bakeoff_build::dist::Layout {
    bakeoff_build::dist::Layout {
        servers,
        helpers,
        version_args,
    }
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

/// One readiness request on a fresh TCP connection to `addr` and the start of its answer:
/// `request` written, then `buf` filled up to its first line end (or its size, or the end
/// of the stream), each step waiting at most `timeout`. The answer's length; None when
/// nothing listens yet (the connection refused).
pub(crate) fn first_line(
    addr: SocketAddr,
    request: &[u8],
    buf: &mut [u8],
    timeout: Duration,
) -> std::io::Result<Option<usize>> {
    use std::io::{ErrorKind, Read, Write};
    let mut stream = match std::net::TcpStream::connect_timeout(&addr, timeout) {
        Ok(s) => s,
        Err(e) if e.kind() == ErrorKind::ConnectionRefused => return Ok(None),
        Err(e) => return Err(e),
    };
    stream.set_read_timeout(Some(timeout))?;
    stream.set_write_timeout(Some(timeout))?;
    stream.write_all(request)?;
    let mut len = 0;
    while len < buf.len() && !buf[..len].contains(&b'\n') {
        let n = stream.read(&mut buf[len..])?;
        if n == 0 {
            break;
        }
        len += n;
    }
    Ok(Some(len))
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

/// The arguments `target`'s command line gives `binary` in `workdir` on 127.0.0.1:`port`
/// with the experiment's `args` (for the targets' tests).
#[cfg(test)]
pub(crate) fn command_args(
    target: &dyn Target,
    binary: &str,
    port: u16,
    workdir: &str,
    args: &[String],
) -> Vec<String> {
    let cmd = target.command(&Launch {
        binary: Path::new(binary),
        addr: SocketAddr::from(([127, 0, 0, 1], port)),
        workdir: Path::new(workdir),
        args,
        stats: StatsLevel::Basic,
    });
    cmd.get_args()
        .map(|a| a.to_string_lossy().into_owned())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::targets::target_for;

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
