//! The Redis target: `redis-server redis.conf`, the config file written into the sandbox's
//! work dir (port on 127.0.0.1, the work dir as `dir`, no persistence unless the
//! experiment's options ask for it, then those options, one line each). Ready when PING
//! answers `+PONG`; stopped with `SHUTDOWN NOSAVE`, then the process group as every target.
//! An option the server does not know fails the start with Redis's own message, which
//! names the line.

use std::collections::BTreeMap;
use std::io::Write;
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use crate::kind::TargetKind;
use crate::owned::{self, Risk};
use crate::settings::{knob, Knob};
use crate::stats::{Snapshot, StatsLevel};
use crate::target::{first_line, Launch, Target};
use bakeoff_build::Recipe;
use bakeoff_proto::resp;

/// How long one probe may wait for connect, write and read each.
const PROBE_TIMEOUT: Duration = Duration::from_millis(500);

/// The config file bakeoff writes, in the sandbox's work dir.
pub const CONFIG_FILE: &str = "redis.conf";

/// Config directives the sandbox owns: (directive, what it sets).
const OWNED: &[(&str, &str)] = &[
    ("port", "the port"),
    ("bind", "the listen address"),
    ("dir", "the data directory"),
    (
        "daemonize",
        "daemon mode (the sandbox must own the process)",
    ),
    ("pidfile", "the pid file"),
    ("logfile", "the log file"),
    ("unixsocket", "the unix socket"),
    ("unixsocketperm", "the unix socket's permissions"),
    ("protected-mode", "who may connect"),
    ("include", "the config file"),
    ("supervised", "the process supervision"),
    (
        "replicaof",
        "replication (the server would connect to another host)",
    ),
    (
        "slaveof",
        "replication (the server would connect to another host)",
    ),
    (
        "enable-protected-configs",
        "whether CONFIG SET may move the server's files",
    ),
    ("enable-debug-command", "whether DEBUG is answered"),
    ("enable-module-command", "whether MODULE LOAD is answered"),
    ("rename-command", "which commands the server answers"),
];

/// Directives that name a file (relative to `dir`, the sandbox) or load code.
const RISKY: &[(&str, Risk)] = &[
    ("aclfile", IN_DIR),
    ("cluster-config-file", IN_DIR),
    ("dbfilename", IN_DIR),
    ("appendfilename", IN_DIR),
    ("appenddirname", IN_DIR),
    ("tls-cert-file", IN_DIR),
    ("tls-key-file", IN_DIR),
    ("tls-client-cert-file", IN_DIR),
    ("tls-client-key-file", IN_DIR),
    ("tls-ca-cert-file", IN_DIR),
    ("tls-ca-cert-dir", IN_DIR),
    ("tls-dh-params-file", IN_DIR),
    (
        "loadmodule",
        Risk::Runs("loads a module's code into the server"),
    ),
];

const IN_DIR: Risk = Risk::Path("the sandbox's folder");

/// The lines that close the commands a replayed or setup command could use to write
/// files where it likes, load code or poke the server's memory (`CONFIG SET dir` and
/// `dbfilename`, `MODULE LOAD`, `DEBUG`): from Redis 7 (and every Valkey) the
/// `enable-*` switches, off; before 7, or when the version is unknown, the commands
/// renamed away (`rename-command X ""`), which every version reads.
/// In every version, the commands that make the server connect to another host
/// (`REPLICAOF`, `SLAVEOF`, `MIGRATE`) are renamed away too.
pub fn closed_commands(version_line: Option<&str>) -> &'static str {
    let major = version_line
        .and_then(|l| l.split_once("v="))
        .and_then(|(_, v)| v.split('.').next()?.parse::<u32>().ok());
    if major.is_some_and(|m| m >= 7) {
        "enable-protected-configs no\nenable-debug-command no\nenable-module-command no\n\
         rename-command REPLICAOF \"\"\nrename-command SLAVEOF \"\"\nrename-command MIGRATE \"\"\n"
    } else {
        "rename-command CONFIG \"\"\nrename-command DEBUG \"\"\nrename-command MODULE \"\"\n\
         rename-command REPLICAOF \"\"\nrename-command SLAVEOF \"\"\nrename-command MIGRATE \"\"\n"
    }
}

/// A directive's name as Redis compares it: any case (and `_` read as `-`, which no
/// directive uses, so a near miss is refused rather than passed).
fn directive(name: &str) -> String {
    name.to_ascii_lowercase().replace('_', "-")
}

/// What `name` (any case) sets, if the sandbox owns it.
fn owned_directive(name: &str) -> Option<&'static str> {
    let name = directive(name);
    OWNED
        .iter()
        .find(|(d, _)| *d == name)
        .map(|(_, what)| *what)
}

/// Why the directive `name` with the words `values` is refused (see [`RISKY`]).
fn risky_directive(name: &str, values: &[String]) -> Option<String> {
    let name = directive(name);
    let (_, risk) = RISKY.iter().find(|(d, _)| *d == name)?;
    let joined = values.join(" ");
    owned::refusal(*risk, &joined)
}

/// A config line split into words as Redis splits it (`sdssplitargs`): blanks between
/// words, `"..."` with the escapes `\\`, `\"`, `\n`, `\r`, `\t`, `\b`, `\a` and `\xHH`,
/// `'...'` with `\'`. None where Redis would refuse the line (an unclosed quote, a quote
/// not followed by a blank).
pub fn split_words(line: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut chars = line.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        let Some(&first) = chars.peek() else {
            return Some(words);
        };
        let mut word = String::new();
        match first {
            '"' | '\'' => {
                chars.next();
                loop {
                    let c = chars.next()?;
                    if c == first {
                        break;
                    }
                    if c != '\\' {
                        word.push(c);
                        continue;
                    }
                    let e = chars.next()?;
                    if first == '\'' {
                        if e != '\'' {
                            word.push('\\');
                        }
                        word.push(e);
                        continue;
                    }
                    match e {
                        'n' => word.push('\n'),
                        'r' => word.push('\r'),
                        't' => word.push('\t'),
                        'b' => word.push('\u{8}'),
                        'a' => word.push('\u{7}'),
                        'x' => {
                            let hex: String = chars.clone().take(2).collect();
                            match u8::from_str_radix(&hex, 16) {
                                Ok(b) if hex.len() == 2 => {
                                    chars.next();
                                    chars.next();
                                    word.push(char::from(b));
                                }
                                _ => word.push('x'),
                            }
                        }
                        other => word.push(other),
                    }
                }
                if chars.peek().is_some_and(|c| !c.is_whitespace()) {
                    return None;
                }
            }
            _ => {
                while let Some(c) = chars.peek().copied().filter(|c| !c.is_whitespace()) {
                    word.push(c);
                    chars.next();
                }
            }
        }
        words.push(word);
    }
}

/// The config lines redis-server makes of command-line `args` after its config file:
/// each `--name ...` argument starts a line (its text split as a config line), each
/// other argument is one more word of the line before; a first argument without `--`
/// starts a line too (Redis reads it as a directive's name). Each line with the
/// argument that started it. A line Redis would refuse keeps its raw text as one word.
pub fn command_line_directives(args: &[String]) -> Vec<(String, Vec<String>)> {
    let mut lines: Vec<(String, Vec<String>)> = Vec::new();
    for a in args {
        match a.strip_prefix("--") {
            Some(body) => {
                let words = split_words(body).unwrap_or_else(|| vec![body.to_string()]);
                lines.push((a.clone(), words));
            }
            None => match lines.last_mut() {
                Some((_, words)) => words.push(a.clone()),
                None => lines.push((a.clone(), vec![a.clone()])),
            },
        }
    }
    lines
}

/// Which of the RESP family a [`Redis`] target is: what differs between Redis and its
/// forks is their name (the kind) and their server program; everything else is Redis's,
/// written once (`valkey.rs` holds Valkey's line).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fork {
    pub kind: TargetKind,
    /// The server program's names (on PATH or in a distribution).
    pub server: &'static [&'static str],
    /// The build's product, `src/<server>`.
    pub product: &'static str,
}

/// Redis itself.
pub const REDIS: Fork = Fork {
    kind: TargetKind::Redis,
    server: &["redis-server"],
    product: "src/redis-server",
};

/// Redis (`redis-server`, 6 and later), or a fork of it run the same way ([`Fork`]).
#[derive(Debug, Clone)]
pub struct Redis {
    /// Config directives from the experiment (`options`), one line each.
    pub options: BTreeMap<String, String>,
    pub fork: Fork,
}

impl Default for Redis {
    fn default() -> Self {
        Redis {
            options: BTreeMap::new(),
            fork: REDIS,
        }
    }
}

impl Redis {
    /// The config file's text for `port`, with the sandbox's directives first and the
    /// experiment's options after them.
    pub fn config(&self, port: u16, workdir: &Path) -> String {
        let mut s = format!(
            "# written by bakeoff for one sandbox\nport {port}\nbind 127.0.0.1\nprotected-mode no\ndaemonize no\ndir {}\nlogfile \"\"\n",
            quoted(&workdir.display().to_string()),
        );
        // A socket where its path fits; else the server listens on TCP only.
        if let Some(sock) = crate::dirs::socket_in(workdir, "redis.sock") {
            s.push_str(&format!(
                "unixsocket {}\nunixsocketperm 700\n",
                quoted(&sock.display().to_string())
            ));
        }
        // No persistence unless asked: a benchmark of the in-memory path by default.
        if !self.options.contains_key("save") {
            s.push_str("save \"\"\n");
        }
        if !self.options.contains_key("appendonly") {
            s.push_str("appendonly no\n");
        }
        for (k, v) in &self.options {
            s.push_str(&format!("{k} {}\n", value_words(v)));
        }
        s
    }
}

/// A value as config-file words: kept as is when it is one plain word, else quoted (an
/// empty `save ""`, a path with spaces).
fn value_words(v: &str) -> String {
    let plain = !v.is_empty()
        && v.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:,+*".contains(c))
        || v.split(' ').all(|w| {
            !w.is_empty()
                && w.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
        });
    if plain {
        v.to_string()
    } else {
        quoted(v)
    }
}

fn quoted(v: &str) -> String {
    format!(
        "\"{}\"",
        v.replace('\\', "\\\\")
            .replace('"', "\\\"")
            .replace('\n', "\\n")
            .replace('\r', "\\r")
    )
}

impl From<crate::target::Made> for Redis {
    fn from(m: crate::target::Made) -> Self {
        Redis::fork_of(m, REDIS)
    }
}

impl Redis {
    /// The target of `fork`, made with `m`'s options.
    pub fn fork_of(m: crate::target::Made, fork: Fork) -> Redis {
        Redis {
            options: m.options,
            fork,
        }
    }
}

impl Target for Redis {
    fn kind(&self) -> TargetKind {
        self.fork.kind
    }

    /// Its `options` are config directives.
    fn takes_options(&self) -> bool {
        true
    }

    fn protocol(&self) -> crate::Protocol {
        crate::Protocol::Resp
    }

    /// A plain-make tree (no configure): `make` at the top builds `src/redis-server`;
    /// make_args choose the allocator (`MALLOC=libc`, `USE_SYSTEM_JEMALLOC=yes`) and the
    /// rest. Without a choice, a tree that cannot link its bundled jemalloc (Debian's) gets
    /// the system's.
    fn dist_layout(&self) -> bakeoff_build::dist::Layout {
        crate::target::layout(self.fork.server, &[], &["--version"])
    }

    fn recipe(&self) -> Recipe {
        Recipe::redis(self.fork.product)
    }

    /// Redis reads `--name words...` as the config line `name words...`, the name in any
    /// case (`--BIND`), quoted (`--"dir"`, `--'logfile'`), and an argument holding spaces
    /// as several words (`"--bind 0.0.0.0"`); see [`command_line_directives`].
    fn owned_arg(&self, args: &[String]) -> Option<(String, &'static str)> {
        command_line_directives(args)
            .into_iter()
            .find_map(|(a, words)| owned_directive(words.first()?).map(|what| (a, what)))
    }

    fn owned_option(&self, key: &str) -> Option<&'static str> {
        owned_directive(key)
    }

    /// Files outside `dir` (`aclfile`, `dbfilename`, ...) and `loadmodule`.
    fn refused_setting(&self, key: &str, value: &str) -> Option<String> {
        risky_directive(key, &[value.to_string()])
    }

    fn refused_arg(&self, args: &[String]) -> Option<(String, String)> {
        command_line_directives(args)
            .into_iter()
            .find_map(|(a, words)| {
                let (name, values) = words.split_first()?;
                risky_directive(name, values).map(|why| (a, why))
            })
    }

    fn start_stop_guess_s(&self) -> f64 {
        0.5
    }

    /// `maxclients` (default 10000, lowered by Redis itself when it cannot get the open
    /// files it needs).
    fn connection_limit(&self) -> Option<crate::target::ConnectionLimit> {
        Some(crate::target::ConnectionLimit::Option("maxclients"))
    }

    fn connection_default(&self) -> Option<usize> {
        Some(10_000)
    }

    /// The config file, written once into the fresh work dir, with the commands that
    /// write files or load code closed for the server's version ([`closed_commands`]).
    fn init(&self, binary: &Path, workdir: &Path) -> Result<(), String> {
        // The port is not known yet: the command line gives it after the file.
        let version = crate::target::version_line(binary);
        let text = self.config(0, workdir).replacen(
            '\n',
            &format!("\n{}", closed_commands(version.as_deref())),
            1,
        );
        std::fs::write(workdir.join(CONFIG_FILE), text)
            .map_err(|e| format!("cannot write {CONFIG_FILE}: {e}"))
    }

    fn command(&self, launch: &Launch<'_>) -> Command {
        let port = launch.addr.port();
        let mut cmd = Command::new(launch.binary);
        cmd.arg(launch.workdir.join(CONFIG_FILE));
        // Command-line directives come after the file's, and a later one replaces an
        // earlier one: bakeoff's own come last, so they win over any the experiment gives.
        cmd.args(launch.args);
        cmd.args([
            "--port",
            &port.to_string(),
            "--bind",
            &launch.addr.ip().to_string(),
            "--daemonize",
            "no",
        ]);
        cmd
    }

    fn probe(&self, addr: SocketAddr) -> std::io::Result<bool> {
        let mut ping = Vec::new();
        resp::command(&mut ping, &[b"PING"]);
        let mut buf = [0u8; 64];
        let Some(len) = first_line(addr, &ping, &mut buf, PROBE_TIMEOUT)? else {
            return Ok(false);
        };
        // "-LOADING" while it reads a dataset: not ready yet.
        Ok(matches!(
            resp::element(&buf[..len], 0),
            Ok(Some((resp::Element::Simple(b"PONG"), _)))
        ))
    }

    fn socket(&self, workdir: &Path) -> Option<std::path::PathBuf> {
        crate::dirs::socket_in(workdir, "redis.sock")
    }

    /// `SHUTDOWN NOSAVE`: ends the server without writing a snapshot, whatever `save` says.
    fn request_stop(&self, addr: SocketAddr) -> bool {
        let Ok(mut s) = TcpStream::connect_timeout(&addr, PROBE_TIMEOUT) else {
            return false;
        };
        let _ = s.set_write_timeout(Some(PROBE_TIMEOUT));
        let mut shutdown = Vec::new();
        resp::command(&mut shutdown, &[b"SHUTDOWN", b"NOSAVE"]);
        s.write_all(&shutdown).is_ok()
    }

    fn is_port_clash(&self, log_tail: &str) -> bool {
        let t = log_tail.to_ascii_lowercase();
        t.contains("address already in use") || t.contains("could not create server tcp")
    }

    /// `CONFIG GET *`.
    fn read_settings(&self, addr: SocketAddr) -> Result<BTreeMap<String, String>, String> {
        config_get_all(addr)
    }

    fn knobs(&self) -> &'static [Knob] {
        KNOBS
    }

    /// `INFO stats` and `INFO commandstats` (each command's `calls`, `usec`,
    /// `rejected_calls`, `failed_calls` as `cmdstat_<name>.<field>`); the identity is
    /// `INFO server`'s `run_id`.
    fn read_stats(&self, addr: SocketAddr, _level: StatsLevel) -> Snapshot {
        read_info_stats(addr)
    }
}

/// See [`Redis::read_stats`].
pub(crate) fn read_info_stats(addr: SocketAddr) -> Snapshot {
    const SECTIONS: [&str; 3] = ["server", "stats", "commandstats"];
    let mut req = Vec::new();
    for s in SECTIONS {
        resp::command(&mut req, &[b"INFO", s.as_bytes()]);
    }
    let got = crate::settings::exchange(addr, &req, |buf| info_replies(buf, SECTIONS.len()));
    let mut snap = Snapshot::default();
    let replies = match got {
        Ok(r) => r,
        Err(e) => return Snapshot::unavailable("INFO", e),
    };
    for (section, reply) in SECTIONS.iter().zip(replies) {
        let text = match reply {
            Ok(t) => t,
            Err(e) => {
                snap.unavailable.insert(format!("INFO {section}"), e);
                continue;
            }
        };
        let fields = text
            .lines()
            .filter(|l| !l.starts_with('#'))
            .filter_map(|l| l.trim_end().split_once(':'));
        match *section {
            "server" => {
                snap.identity = fields
                    .into_iter()
                    .find(|(k, _)| *k == "run_id")
                    .map(|(_, v)| v.to_string());
            }
            "stats" => snap.add_numbers("", fields, is_info_gauge),
            _ => {
                for (cmd, values) in fields {
                    let pairs = values.split(',').filter_map(|p| p.split_once('='));
                    snap.add_numbers(&format!("{cmd}."), pairs, |f| f == "usec_per_call");
                }
            }
        }
    }
    snap
}

/// `n` bulk replies in `buf`, each its text or the error it is; None while incomplete.
fn info_replies(buf: &[u8], n: usize) -> Option<Result<Vec<Result<String, String>>, String>> {
    let mut at = 0;
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        match resp::element(buf, at) {
            Ok(None) => return None,
            Err(e) => return Some(Err(e)),
            Ok(Some((resp::Element::Bulk(b), next))) => {
                out.push(Ok(String::from_utf8_lossy(b).into_owned()));
                at = next;
            }
            Ok(Some((resp::Element::Error(e), next))) => {
                out.push(Err(format!("refused: {}", String::from_utf8_lossy(e))));
                at = next;
            }
            Ok(Some(_)) => return Some(Err("INFO did not answer a bulk string".into())),
        }
    }
    Some(Ok(out))
}

/// Whether an `INFO stats` field is a gauge, a rate or a ratio rather than a counter.
fn is_info_gauge(name: &str) -> bool {
    name.starts_with("instantaneous_")
        || name.starts_with("current_")
        || name.starts_with("latest_")
        || name.starts_with("pubsub_")
        || name.starts_with("tracking_")
        || name.starts_with("mem_")
        || name.ends_with("_perc")
        || name.ends_with("_running")
        || name.ends_with("_in_progress")
        || name.starts_with("migrate_cached")
        || name.starts_with("slave_expires")
        || name == "io_threads_active"
}

/// Redis's and Valkey's settings that move performance.
const KNOBS: &[Knob] = &[
    knob("appendonly", "durability"),
    knob("appendfsync", "durability"),
    knob("save", "durability"),
    knob("maxmemory", "memory"),
    knob("maxmemory-policy", "memory"),
    knob("io-threads", "threads"),
    knob("io-threads-do-reads", "threads"),
    knob("tls-port", "TLS"),
    knob("hz", "background work"),
    knob("activedefrag", "background work"),
    knob("lazyfree-lazy-eviction", "background work"),
];

/// `CONFIG GET *` on a fresh connection: the reply's name and value pairs. A server that
/// refuses it (the command renamed or disabled: bakeoff's own config renames it away
/// before Redis 7, see [`closed_commands`]) gives its error.
pub(crate) fn config_get_all(addr: SocketAddr) -> Result<BTreeMap<String, String>, String> {
    let mut req = Vec::new();
    resp::command(&mut req, &[b"CONFIG", b"GET", b"*"]);
    crate::settings::exchange(addr, &req, config_reply)
}

/// The whole `CONFIG GET` reply in `buf` as pairs; None while it is incomplete.
fn config_reply(buf: &[u8]) -> Option<Result<BTreeMap<String, String>, String>> {
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    let (n, mut at) = match resp::element(buf, 0) {
        Ok(None) => return None,
        Err(e) => return Some(Err(e)),
        Ok(Some((resp::Element::Array(n), at))) => (n, at),
        Ok(Some((resp::Element::Error(e), _))) => {
            return Some(Err(format!(
                "CONFIG GET * refused: {} (CONFIG renamed or disabled; bakeoff itself renames it away before Redis 7)",
                text(e)
            )))
        }
        Ok(Some(_)) => return Some(Err("CONFIG GET * did not answer a list".into())),
    };
    let mut words = Vec::with_capacity(n);
    for _ in 0..n {
        match resp::bulk_at(buf, at) {
            Ok(None) => return None,
            Err(e) => return Some(Err(e)),
            Ok(Some((w, next))) => {
                words.push(text(w));
                at = next;
            }
        }
    }
    let mut out = BTreeMap::new();
    for pair in words.chunks(2) {
        if let [name, value] = pair {
            out.insert(name.clone(), value.clone());
        }
    }
    Some(Ok(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::target::command_args;

    #[test]
    fn config_owns_the_sandbox_lines_and_adds_options() {
        let r = Redis {
            fork: REDIS,
            options: BTreeMap::from([
                ("io-threads".to_string(), "4".to_string()),
                ("save".to_string(), "".to_string()),
                ("maxmemory-policy".to_string(), "allkeys-lru".to_string()),
                (
                    "client-output-buffer-limit".to_string(),
                    "normal 0 0 0".to_string(),
                ),
            ]),
        };
        let c = r.config(6400, Path::new("/tmp/sb x"));
        assert!(c.contains("\nport 6400\nbind 127.0.0.1\n"), "{c}");
        assert!(c.contains("\ndir \"/tmp/sb x\"\n"), "{c}");
        assert!(c.contains("\nappendonly no\n"), "{c}");
        assert!(c.contains("\nio-threads 4\n"), "{c}");
        assert!(c.contains("\nsave \"\"\n"), "{c}");
        assert_eq!(c.matches("save").count(), 1, "{c}");
        assert!(c.contains("\nmaxmemory-policy allkeys-lru\n"), "{c}");
        assert!(
            c.contains("\nclient-output-buffer-limit normal 0 0 0\n"),
            "{c}"
        );
        let plain = Redis::default().config(1, Path::new("/d"));
        assert!(plain.contains("save \"\"\nappendonly no\n"), "{plain}");
    }

    #[test]
    fn a_config_reply_is_read_whole_or_waited_for() {
        let whole = b"*4\r\n$10\r\nappendonly\r\n$2\r\nno\r\n$4\r\nsave\r\n$0\r\n\r\n";
        let got = config_reply(whole).unwrap().unwrap();
        assert_eq!(got["appendonly"], "no");
        assert_eq!(got["save"], "");
        assert!(config_reply(&whole[..whole.len() - 3]).is_none());
        let refused = config_reply(b"-ERR unknown command 'CONFIG'\r\n").unwrap();
        assert!(refused.unwrap_err().contains("unknown command"));
    }

    #[test]
    fn commands_that_write_files_are_closed_for_each_version() {
        let modern = closed_commands(Some(
            "Redis server v=7.0.15 sha=00000000:0 malloc=jemalloc-5.3.0",
        ));
        assert!(modern.contains("enable-module-command no\n"), "{modern}");
        assert_eq!(closed_commands(Some("Valkey server v=9.0.0 sha=0")), modern);
        for old in [Some("Redis server v=6.0.9 sha=0"), Some("garbage"), None] {
            let lines = closed_commands(old);
            assert!(lines.contains("rename-command CONFIG \"\"\n"), "{lines}");
            assert!(lines.contains("rename-command MODULE \"\"\n"), "{lines}");
            assert!(lines.contains("rename-command DEBUG \"\"\n"), "{lines}");
        }
    }

    #[test]
    fn command_line_puts_bakeoffs_directives_last_where_they_win() {
        let extra = ["--io-threads".to_string(), "2".to_string()];
        let args = command_args(
            &Redis::default(),
            "/usr/bin/redis-server",
            4242,
            "/w",
            &extra,
        );
        assert_eq!(
            args,
            [
                "/w/redis.conf",
                "--io-threads",
                "2",
                "--port",
                "4242",
                "--bind",
                "127.0.0.1",
                "--daemonize",
                "no"
            ]
        );
    }

    #[test]
    fn info_sections_become_counters_without_gauges_or_rates() {
        let section = |t: &str| format!("${}\r\n{t}\r\n", t.len());
        let server = section("# Server\r\nrun_id:abc\r\nuptime_in_seconds:5");
        let stats = section(
            "# Stats\r\ntotal_commands_processed:12\r\ninstantaneous_ops_per_sec:9\r\nkeyspace_hits:4\r\nexpired_stale_perc:0.00",
        );
        let cmd = section("# Commandstats\r\ncmdstat_get:calls=4,usec=8,usec_per_call=2.00,rejected_calls=0,failed_calls=0");
        let all = format!("{server}{stats}{cmd}");
        assert!(
            info_replies(&all.as_bytes()[..all.len() - 3], 3).is_none(),
            "incomplete"
        );
        let replies = info_replies(all.as_bytes(), 3).unwrap().unwrap();
        assert_eq!(replies.len(), 3);
        let refused = info_replies(b"-NOPERM no\r\n", 1).unwrap().unwrap();
        assert!(refused[0].as_ref().unwrap_err().contains("NOPERM"));
        assert!(is_info_gauge("instantaneous_ops_per_sec") && is_info_gauge("expired_stale_perc"));
        assert!(!is_info_gauge("keyspace_hits") && !is_info_gauge("total_commands_processed"));
    }
}
