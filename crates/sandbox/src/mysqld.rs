//! What the mysqld family (MariaDB's `mariadbd`, Oracle's `mysqld`) shares: the my.cnf
//! bakeoff writes and the command line that reads it, how their command lines and options
//! are read (what the sandbox owns, what is refused: both servers read options alike),
//! the login's SQL, the version in a `--version` line, and their whole [`Target`]: each
//! server is a [`Mysqld`], which says only what differs (`mariadb.rs`, `mysql.rs`).

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;

use bakeoff_build::dist::Layout;
use bakeoff_build::Recipe;
use bakeoff_sqlclient::Dialect;

use crate::kind::TargetKind;
use crate::owned::{self, Risk};
use crate::settings::{knob, Knob};
use crate::sqldata::{self, Login, SqlServer};
use crate::stats::{Snapshot, StatsLevel};

mod stats;
use crate::target::{
    common_refusal, leading_version, version_line, Ask, ConnectionLimit, Launch, Target,
};

/// Settings the sandbox owns in every mysqld, in the `-` spelling: (name, what it sets).
const OWNED: &[(&str, &str)] = &[
    ("port", "the port"),
    ("bind-address", "the listen address"),
    ("datadir", "the data directory"),
    ("socket", "the socket"),
    ("pid-file", "the pid file"),
    ("defaults-file", "the configuration file"),
    ("defaults-extra-file", "the configuration file"),
    ("defaults-group-suffix", "the configuration file"),
    ("no-defaults", "the configuration file"),
    ("networking", "whether the server listens on TCP"),
    (
        "secure-file-priv",
        "where SQL may read and write files (the sandbox's files folder)",
    ),
    ("basedir", "where the server's own files are"),
];

/// The sandbox's folder for the files SQL reads and writes (`SELECT ... INTO OUTFILE`,
/// `LOAD DATA INFILE`, `LOAD_FILE`): `secure-file-priv` names it, so those statements
/// reach no other file.
pub(crate) const FILES: &str = "files";

/// mysqld's short options, as a getopt string (`::`: a value only when attached).
const SHORT_OPTIONS: &str = "#::?ab:C:h:L:P:r:sT::t:u:vVW::";

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
    ("character-sets-dir", DATA_PATH),
    ("lc-messages-dir", DATA_PATH),
    ("keyring-file-data", DATA_PATH),
    ("ssl-key", DATA_PATH),
    ("ssl-cert", DATA_PATH),
    ("ssl-ca", DATA_PATH),
    ("ssl-capath", DATA_PATH),
    ("ssl-crl", DATA_PATH),
    ("ssl-crlpath", DATA_PATH),
    ("tls-*", DATA_PATH),
    ("admin-ssl-*", DATA_PATH),
    ("early-plugin-load", LOADS_CODE),
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
    ("master-host", CONNECTS_OUT),
    // The rest of CHANGE MASTER's settings as options (MySQL before 5.5 and MariaDB's
    // option files): where and as whom a replica connects.
    ("master-user", CONNECTS_OUT),
    ("master-password", CONNECTS_OUT),
    ("master-port", CONNECTS_OUT),
    ("master-connect-retry", CONNECTS_OUT),
    ("master-ssl*", CONNECTS_OUT),
    (
        "init-slave",
        Risk::Runs("runs statements each time the server starts replicating"),
    ),
    (
        "init-replica",
        Risk::Runs("runs statements each time the server starts replicating"),
    ),
];

const CONNECTS_OUT: Risk = Risk::Runs("makes the server connect to another host");

const DATA_PATH: Risk = Risk::Path("the data directory");
const LOADS_CODE: Risk = Risk::Runs("loads a plugin's code into the server");

/// Why `name` = `value` is refused (see [`RISKY`]), under any spelling MariaDB takes
/// (MySQL's mysqld reads its options the same way and shares these).
fn risky_setting(name: &str, value: &str) -> Option<String> {
    owned::mariadb_risk(&owned::mariadb_name(name), RISKY).and_then(|r| owned::refusal(r, value))
}

/// What the option `name` sets, if the sandbox owns it (the family's [`OWNED`], then
/// `own`: the server's own table of names and what each sets), under any spelling mysqld
/// takes: any case, `_` for `-`, `loose-`, `skip-`, `enable-`, unique prefixes.
fn owned_setting(own: &[(&str, &'static str)], name: &str) -> Option<&'static str> {
    let name = owned::mariadb_name(name);
    OWNED
        .iter()
        .chain(own)
        .find(|(o, _)| owned::mariadb_means(&name, o))
        .map(|(_, what)| *what)
}

/// The first of `args` that sets what `owned` names, read as mysqld reads its command
/// line: a long option in any case, `_` for `-`, behind `loose-`, `skip-` or `enable-`,
/// or any prefix of its name (`--bind-addr`); short options bundle (`-P3307`,
/// `-Wh/elsewhere`).
fn owned_arg_by(args: &[String], owned: &[(&str, &'static str)]) -> Option<(String, &'static str)> {
    let long = args.iter().find_map(|a| {
        let body = a.strip_prefix("--")?;
        let name = body.split_once('=').map_or(body, |(n, _)| n);
        owned_setting(owned, name).map(|what| (a.clone(), what))
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

/// The first of `args` that [`risky_setting`] refuses: `--name=value` and `--name value`
/// (either may be what mysqld takes), and the short options that name a path: `-t`
/// (tmpdir), `-r` (chroot), `-#` (debug trace). The argument as written and why.
fn risky_arg(args: &[String]) -> Option<(String, String)> {
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

/// A mysqld-family my.cnf under `[group]`: `tree` (where a build's or distribution's
/// files are), the data directory, 127.0.0.1 and the port, the socket and pid file in
/// the sandbox, `secure-file-priv` on the sandbox's [`FILES`] folder, `extra` (the server's own lines), then the experiment's options, which
/// cannot override what the sandbox owns (the plan refuses them).
fn my_cnf_in(
    group: &str,
    tree: &str,
    addr: SocketAddr,
    workdir: &Path,
    data: &Path,
    extra: &str,
    options: &BTreeMap<String, String>,
) -> String {
    let mut s = format!("# written by bakeoff for this sandbox\n[{group}]\n{tree}");
    s.push_str(&format!("datadir = {}\n", data.display()));
    s.push_str(&format!(
        "port = {}\nbind-address = {}\n",
        addr.port(),
        addr.ip()
    ));
    s.push_str(&format!(
        "socket = {}\n",
        crate::dirs::socket_or_short(workdir, "mysqld.sock").display()
    ));
    s.push_str(&format!(
        "pid-file = {}\n",
        workdir.join("mysqld.pid").display()
    ));
    s.push_str(&format!(
        "secure-file-priv = {}\n",
        workdir.join(FILES).display()
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
/// the experiment's arguments, then the address, port and `secure-file-priv` again (the
/// last wins).
fn start_command(cnf: &str, launch: &Launch<'_>) -> Command {
    let file = launch.workdir.join("my.cnf");
    // A write failure shows as the server's own "could not open" error at start.
    let _ = std::fs::write(&file, cnf);
    let mut cmd = Command::new(launch.binary);
    cmd.arg(format!("--defaults-file={}", file.display()));
    cmd.args(launch.args);
    cmd.arg(format!("--port={}", launch.addr.port()))
        .arg(format!("--bind-address={}", launch.addr.ip()))
        .arg(format!(
            "--secure-file-priv={}",
            launch.workdir.join(FILES).display()
        ));
    sqldata::as_server_user(&mut cmd);
    cmd
}

/// The SQL that makes the login: its database, its user on every host, all privileges.
/// `IDENTIFIED BY` leaves the method to the server's default (caching_sha2_password on
/// MySQL 8.0 and later). FLUSH PRIVILEGES first: a `--bootstrap` run starts without the
/// grant tables, and refuses CREATE USER until they are read.
pub(crate) fn login_sql(login: &Login) -> String {
    format!(
        "FLUSH PRIVILEGES;\n\
         CREATE DATABASE IF NOT EXISTS {db};\n\
         CREATE USER '{u}'@'%' IDENTIFIED BY '{p}';\n\
         CREATE USER '{u}'@'localhost' IDENTIFIED BY '{p}';\n\
         GRANT ALL PRIVILEGES ON *.* TO '{u}'@'%' WITH GRANT OPTION;\n\
         GRANT ALL PRIVILEGES ON *.* TO '{u}'@'localhost' WITH GRANT OPTION;\n",
        db = login.database,
        u = login.user,
        p = login.password
    )
}

/// "10.11" from a `--version` line ("mariadbd  Ver 10.11.6-MariaDB-0+deb12u1 for ...",
/// "mysqld  Ver 8.0.15 for linux-glibc2.12 on x86_64").
pub(crate) fn file_version(line: &str) -> Option<String> {
    leading_version(&line[line.find("Ver ")? + 4..], 2)
}

/// The (major, minor) of a `--version` line.
pub(crate) fn major_minor(line: &str) -> Option<(u32, u32)> {
    let v = file_version(line)?;
    let (a, b) = v.split_once('.')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

/// A server of the mysqld family: what differs between MariaDB's and MySQL's; the rest
/// of its [`Target`] is this module's.
pub(crate) trait Mysqld: Send + Sync {
    /// Which kind it is (also the first word of its data format).
    const KIND: TargetKind;
    /// The SQL it speaks.
    const DIALECT: Dialect;
    /// Settings the sandbox owns in this server beyond the family's ([`OWNED`]), in the
    /// `-` spelling: (name, what it sets).
    const OWNED: &'static [(&'static str, &'static str)];
    /// Options that change InnoDB's files: servers must agree on them to share loaded
    /// data.
    const FORMAT_OPTIONS: &'static [&'static str];
    /// Its server in a distribution's binaries (see [`Target::dist_layout`]).
    const LAYOUT: Layout;
    /// Folders the sandbox makes for it (beside `data`).
    const DIRS: &'static [&'static str];

    /// What the server holds as every SQL target does: options, data, login.
    fn sql_server(&self) -> &SqlServer;

    /// What it refuses beyond [`common_refusal`] (see [`Target::refuses`]).
    fn refusal(&self, ask: Ask) -> Option<String>;

    /// Why `binary` is the family's other server (see [`Target::refuses_binary`]).
    fn other_server(&self, binary: &Path) -> Option<String>;

    /// Makes a data directory at `dest` with `login` (see [`Target::init_data`]).
    fn make_data(&self, binary: &Path, dest: &Path, login: &Login) -> Result<(), String>;

    /// The my.cnf group `binary` reads.
    fn group(&self, binary: &Path) -> &'static str;

    /// For a server outside the system's /usr (a build's install tree, a
    /// distribution's): the my.cnf lines that say where its files are.
    fn tree_settings(&self, binary: &Path) -> Option<String>;

    /// The server's own my.cnf lines after bakeoff's (none by default).
    fn extra_settings(&self, _binary: &Path, _workdir: &Path) -> String {
        String::new()
    }

    /// The my.cnf this sandbox's server reads: bakeoff's settings first, then the
    /// experiment's options. `server_stats = "full"` turns performance_schema on, before
    /// the options, so an experiment's own `performance_schema = OFF` still wins (its
    /// statement digests are then unavailable with the reason). It also turns on the
    /// consumer `events_statements_current` (MySQL's default, off in MariaDB), without
    /// which `prepared_statements_instances` counts no execution; `loose-`, since MySQL
    /// 5.5 has no statement instruments.
    fn cnf(&self, binary: &Path, addr: SocketAddr, workdir: &Path, stats: StatsLevel) -> String {
        let sql = self.sql_server();
        let mut extra = self.extra_settings(binary, workdir);
        if stats == StatsLevel::Full {
            extra.push_str("performance_schema = ON\n");
            extra.push_str("loose-performance-schema-consumer-events-statements-current = ON\n");
        }
        my_cnf_in(
            self.group(binary),
            &self.tree_settings(binary).unwrap_or_default(),
            addr,
            workdir,
            &sql.data_dir(workdir),
            &extra,
            &sql.options,
        )
    }
}

impl<T: Mysqld> Target for T {
    fn kind(&self) -> TargetKind {
        T::KIND
    }

    fn dist_layout(&self) -> Layout {
        T::LAYOUT
    }

    fn recipe(&self) -> Recipe {
        Recipe::Mariadb
    }

    fn dialect(&self) -> Option<Dialect> {
        Some(T::DIALECT)
    }

    fn sql(&self) -> Option<&SqlServer> {
        Some(self.sql_server())
    }

    fn refuses(&self, ask: Ask) -> Option<String> {
        self.refusal(ask)
            .or_else(|| common_refusal(T::KIND, true, ask))
    }

    fn refuses_binary(&self, binary: &Path) -> Option<String> {
        self.other_server(binary)
    }

    /// Read as mysqld reads them: a long option in any case, `_` for `-`, behind
    /// `loose-`, `skip-` or `enable-`, or any prefix of its name (`--bind-addr`); short
    /// options bundle (`-P3307`, `-Wh/elsewhere`).
    fn owned_arg(&self, args: &[String]) -> Option<(String, &'static str)> {
        owned_arg_by(args, T::OWNED)
    }

    fn owned_option(&self, key: &str) -> Option<&'static str> {
        owned_setting(T::OWNED, key)
    }

    /// Paths that leave the data directory, `init-file`, plugins and Galera (`wsrep_*`),
    /// in every spelling `owned_option` reads: both servers read their options alike.
    fn refused_setting(&self, key: &str, value: &str) -> Option<String> {
        risky_setting(key, value)
    }

    /// `--name=value` and `--name value` (either may be what mysqld takes), and the
    /// short options that name a path: `-t` (tmpdir), `-r` (chroot), `-#` (debug trace).
    fn refused_arg(&self, args: &[String]) -> Option<(String, String)> {
        risky_arg(args)
    }

    fn init_data(&self, binary: &Path, dest: &Path, login: &Login) -> Result<(), String> {
        self.make_data(binary, dest, login)
    }

    /// "mariadb 10.11" from "mariadbd  Ver 10.11.6-MariaDB-0+deb12u1 for ...", "mysql
    /// 8.0" from "mysqld  Ver 8.0.15 for ...", with the options that change InnoDB's
    /// files.
    fn data_format(
        &self,
        binary: &Path,
        options: &BTreeMap<String, String>,
        _configure_args: &[String],
    ) -> Option<String> {
        let mut key = format!("{} {}", T::KIND, file_version(&version_line(binary)?)?);
        for k in T::FORMAT_OPTIONS {
            if let Some(val) = options.get(*k) {
                key.push_str(&format!(" {k}={val}"));
            }
        }
        Some(key)
    }

    fn connection_limit(&self) -> Option<ConnectionLimit> {
        Some(ConnectionLimit::Option("max_connections"))
    }

    fn has_storage_engines(&self) -> bool {
        true
    }

    fn init(&self, _binary: &Path, workdir: &Path) -> Result<(), String> {
        self.sql_server().init(workdir, T::DIRS)
    }

    fn command(&self, launch: &Launch<'_>) -> Command {
        let cnf = self.cnf(launch.binary, launch.addr, launch.workdir, launch.stats);
        start_command(&cnf, launch)
    }

    fn socket(&self, workdir: &Path) -> Option<PathBuf> {
        Some(crate::dirs::socket_or_short(workdir, "mysqld.sock"))
    }

    fn stop_signal(&self) -> (i32, bool) {
        (libc::SIGTERM, false)
    }

    /// `SHOW GLOBAL VARIABLES`, with the redo log's capacity computed where the server
    /// spells it in parts ([`REDO_CAPACITY`]).
    fn read_settings(&self, addr: SocketAddr) -> Result<BTreeMap<String, String>, String> {
        read_variables(self.sql_server(), T::DIALECT, addr)
    }

    fn knobs(&self) -> &'static [Knob] {
        KNOBS
    }

    /// `SHOW GLOBAL STATUS`, counters only; a restart shows as `Uptime` going back.
    /// Where performance_schema is on (MySQL's default from 5.6, "full" here), its
    /// statement digests and wait summaries too (`mysqld/stats.rs`).
    fn read_stats(&self, addr: SocketAddr, level: StatsLevel) -> Snapshot {
        stats::read(self.sql_server(), T::DIALECT, addr, level)
    }

    /// `prepared_statements_instances` loses a statement's row when its connection
    /// closes.
    fn stats_need_connections(&self) -> bool {
        true
    }
}

/// Whether a `SHOW GLOBAL STATUS` variable is a gauge, a fact or a per-session figure
/// rather than a counter (MariaDB's and MySQL's names).
pub(crate) fn is_status_gauge(name: &str) -> bool {
    const PREFIXES: &[&str] = &[
        "Uptime",
        "Threads_",
        "Open_",
        "Max_used_",
        "Memory_used",
        "Key_blocks_",
        "Qcache_free_",
        "Qcache_queries_in_cache",
        "Qcache_total_blocks",
        "Slave",
        "Rpl_",
        "wsrep",
        "Ssl_",
        "Rsa_",
        "Caching_sha2",
        "Tc_log_",
        "Binlog_snapshot_",
        "Acl_",
        "Resource_group",
        "Global_connection_memory",
        "Current_tls",
        "Last_query_",
        "Delayed_insert_threads",
        "Prepared_stmt_count",
        "Not_flushed_delayed_rows",
        "Compression",
        "Innodb_buffer_pool_bytes_",
        "Innodb_page_size",
        "Innodb_have_",
        "Innodb_mem_",
        "Innodb_num_open_files",
        "Innodb_history_list_length",
        "Innodb_descriptors_memory",
        "Innodb_dict_tables",
        "Innodb_undo_tablespaces",
        "Innodb_checkpoint_",
        "Innodb_oldest_view",
        "Innodb_redo_log_capacity",
        "Innodb_redo_log_logical_size",
        "Innodb_redo_log_physical_size",
        "Innodb_redo_log_resize",
        "Innodb_redo_log_enabled",
        "Innodb_redo_log_read_only",
        "Innodb_redo_log_uuid",
        "Innodb_system_rows_",
        "Innodb_encryption_",
        "Innodb_onlineddl_",
    ];
    const GAUGES: &[&str] = &[
        "Innodb_buffer_pool_pages_data",
        "Innodb_buffer_pool_pages_dirty",
        "Innodb_buffer_pool_pages_free",
        "Innodb_buffer_pool_pages_misc",
        "Innodb_buffer_pool_pages_total",
        "Innodb_buffer_pool_pages_old",
        "Innodb_buffer_pool_pages_latched",
        "Innodb_row_lock_current_waits",
        "Innodb_current_row_locks",
    ];
    (PREFIXES.iter().any(|p| name.starts_with(p)) && !name.starts_with("Opened_"))
        || GAUGES.contains(&name)
        || name.contains("_pending")
        || name.ends_with("_avg")
        || name.ends_with("_max")
        || name.ends_with("_status")
}

/// The redo log's capacity in bytes, computed from the server's own settings:
/// `innodb_redo_log_capacity` (MySQL 8.0.30+), else `innodb_log_file_size` x
/// `innodb_log_files_in_group` (MySQL before it, MariaDB before 10.5), else
/// `innodb_log_file_size` (MariaDB 10.5+ keeps one file and ignores the count).
pub const REDO_CAPACITY: &str = "innodb_redo_capacity_bytes (computed)";

/// The mysqld family's settings that move performance (MariaDB's and MySQL's names;
/// a name one server lacks is simply not read there).
const KNOBS: &[Knob] = &[
    knob("log_bin", "durability"),
    knob("sync_binlog", "durability"),
    knob("innodb_flush_log_at_trx_commit", "durability"),
    knob("innodb_flush_method", "durability"),
    knob("innodb_doublewrite", "durability"),
    knob("binlog_format", "durability"),
    knob("innodb_buffer_pool_size", "memory"),
    knob("innodb_buffer_pool_instances", "memory"),
    knob("key_buffer_size", "memory"),
    knob("table_open_cache", "memory"),
    Knob {
        name: REDO_CAPACITY,
        topic: "redo/WAL capacity",
        spelled: &[
            "innodb_log_file_size",
            "innodb_log_files_in_group",
            "innodb_redo_log_capacity",
        ],
    },
    knob("innodb_log_file_size", "redo/WAL capacity"),
    knob("innodb_log_files_in_group", "redo/WAL capacity"),
    knob("innodb_redo_log_capacity", "redo/WAL capacity"),
    knob("innodb_log_buffer_size", "redo/WAL capacity"),
    knob("thread_handling", "threads"),
    knob("thread_pool_size", "threads"),
    knob("innodb_read_io_threads", "threads"),
    knob("innodb_write_io_threads", "threads"),
    knob("innodb_thread_concurrency", "threads"),
    knob("character_set_server", "character set"),
    knob("collation_server", "character set"),
    knob("have_ssl", "TLS"),
    knob("require_secure_transport", "TLS"),
    knob("query_cache_type", "query cache"),
    knob("query_cache_size", "query cache"),
    knob("performance_schema", "instrumentation"),
    knob("large_pages", "huge pages"),
    knob("innodb_adaptive_hash_index", "InnoDB"),
    knob("innodb_io_capacity", "InnoDB"),
];

/// Variables that name the server rather than set it: MariaDB's `server_uid` (a hash
/// of its host and port, new at every start) and MySQL's `server_uuid` (made with each
/// data directory).
const IDENTITIES: &[&str] = &["server_uid", "server_uuid"];

/// `SHOW GLOBAL VARIABLES` as name -> value (an identity as
/// [`crate::settings::IDENTITY`]), plus [`REDO_CAPACITY`].
fn read_variables(
    sql: &SqlServer,
    dialect: Dialect,
    addr: SocketAddr,
) -> Result<BTreeMap<String, String>, String> {
    let mut got = crate::settings::sql_rows(sql, dialect, addr, &["SHOW GLOBAL VARIABLES"])?;
    let rows = got
        .pop()
        .ok_or("no answer")?
        .map_err(|e| format!("SHOW GLOBAL VARIABLES refused: {e}"))?;
    let mut vars = crate::settings::pairs(&rows);
    for name in IDENTITIES {
        if let Some(v) = vars.get_mut(*name) {
            *v = crate::settings::IDENTITY.to_string();
        }
    }
    if let Some(bytes) = redo_capacity(&vars) {
        vars.insert(REDO_CAPACITY.to_string(), bytes.to_string());
    }
    Ok(vars)
}

/// See [`REDO_CAPACITY`].
fn redo_capacity(vars: &BTreeMap<String, String>) -> Option<u64> {
    let num = |k: &str| vars.get(k)?.trim().parse::<u64>().ok();
    if let Some(c) = num("innodb_redo_log_capacity") {
        return Some(c);
    }
    let size = num("innodb_log_file_size")?;
    let version = vars.get("version").map_or("", String::as_str);
    let mm = leading_version(version, 2).and_then(|v| {
        let (a, b) = v.split_once('.')?;
        Some((a.parse::<u32>().ok()?, b.parse::<u32>().ok()?))
    });
    let one_file = version.contains("MariaDB") && mm.is_some_and(|v| v >= (10, 5));
    let files = if one_file {
        1
    } else {
        num("innodb_log_files_in_group").unwrap_or(1)
    };
    Some(size * files)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mariadb::Mariadb;
    use crate::mysql::Mysql;

    #[test]
    fn the_redo_capacity_is_computed_as_each_server_spells_it() {
        let vars = |kv: &[(&str, &str)]| -> BTreeMap<String, String> {
            kv.iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        let my57 = vars(&[
            ("version", "5.7.44"),
            ("innodb_log_file_size", "50331648"),
            ("innodb_log_files_in_group", "2"),
        ]);
        assert_eq!(redo_capacity(&my57), Some(100663296));
        let my80 = vars(&[
            ("version", "8.0.36"),
            ("innodb_log_file_size", "50331648"),
            ("innodb_redo_log_capacity", "104857600"),
        ]);
        assert_eq!(redo_capacity(&my80), Some(104857600));
        let maria = vars(&[
            ("version", "10.11.6-MariaDB-0+deb12u1"),
            ("innodb_log_file_size", "100663296"),
            ("innodb_log_files_in_group", "2"),
        ]);
        assert_eq!(
            redo_capacity(&maria),
            Some(100663296),
            "one file since 10.5"
        );
        let maria101 = vars(&[
            ("version", "10.1.48-MariaDB"),
            ("innodb_log_file_size", "50331648"),
            ("innodb_log_files_in_group", "2"),
        ]);
        assert_eq!(redo_capacity(&maria101), Some(100663296));
    }

    /// What a server holds with the experiment's `options`.
    fn with_options(options: &[(&str, &str)]) -> SqlServer {
        SqlServer {
            options: options
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            ..Default::default()
        }
    }

    /// The my.cnf of the system's `/usr/sbin/<server>` in the sandbox /sb/x on port 3307.
    fn cnf_of(t: &impl Mysqld, server: &str) -> String {
        t.cnf(
            &Path::new("/usr/sbin").join(server),
            ([127, 0, 0, 1], 3307).into(),
            Path::new("/sb/x"),
            StatsLevel::Basic,
        )
    }

    #[test]
    fn my_cnf_has_bakeoffs_settings_then_the_options() {
        let sql = with_options(&[
            ("innodb_buffer_pool_size", "1G"),
            ("max_connections", "2000"),
        ]);
        let cnf = cnf_of(&Mariadb { sql }, "mariadbd");
        assert!(cnf.starts_with("# written by bakeoff"));
        assert!(cnf
            .contains("[mariadbd]\ndatadir = /sb/x/data\nport = 3307\nbind-address = 127.0.0.1\n"));
        assert!(cnf.contains("socket = /sb/x/mysqld.sock\n"));
        assert!(cnf.contains("secure-file-priv = /sb/x/files\n"));
        assert!(cnf.ends_with("innodb_buffer_pool_size = 1G\nmax_connections = 2000\n"));
    }

    #[test]
    fn full_server_stats_turn_performance_schema_on_before_the_options() {
        let sql = with_options(&[("performance_schema", "OFF")]);
        let t = Mariadb { sql };
        let path = Path::new("/usr/sbin/mariadbd");
        let at = |level| {
            t.cnf(
                path,
                ([127, 0, 0, 1], 3307).into(),
                Path::new("/sb/x"),
                level,
            )
        };
        assert!(!at(StatsLevel::Basic).contains("performance_schema = ON"));
        let full = at(StatsLevel::Full);
        let on = full.find("performance_schema = ON\n").expect("turned on");
        assert!(full.contains("loose-performance-schema-consumer-events-statements-current = ON\n"));
        let off = full
            .find("performance_schema = OFF\n")
            .expect("the option kept");
        assert!(
            on < off,
            "the experiment's own setting comes last and wins: {full}"
        );
    }

    #[test]
    fn my_cnf_turns_the_x_plugin_off_and_keeps_files_in_the_sandbox() {
        let sql = with_options(&[("max_connections", "2000")]);
        let cnf = cnf_of(&Mysql { sql }, "mysqld");
        assert!(
            cnf.contains("[mysqld]\ndatadir = /sb/x/data\nport = 3307\nbind-address = 127.0.0.1\n")
        );
        assert!(cnf.contains("loose-mysqlx = OFF\n"));
        assert!(cnf.contains("secure-file-priv = /sb/x/files\n"));
        assert!(cnf.ends_with("max_connections = 2000\n"));
    }

    #[test]
    fn status_gauges_are_told_from_counters() {
        for g in [
            "Uptime",
            "Uptime_since_flush_status",
            "Threads_connected",
            "Open_tables",
            "Innodb_buffer_pool_pages_free",
            "Innodb_row_lock_time_max",
            "Innodb_data_pending_reads",
            "Prepared_stmt_count",
            "Innodb_buffer_pool_load_status",
        ] {
            assert!(is_status_gauge(g), "{g}");
        }
        for c in [
            "Com_select",
            "Opened_tables",
            "Innodb_buffer_pool_reads",
            "Innodb_buffer_pool_pages_flushed",
            "Handler_read_key",
            "Questions",
            "Innodb_data_fsyncs",
        ] {
            assert!(!is_status_gauge(c), "{c}");
        }
    }
}
