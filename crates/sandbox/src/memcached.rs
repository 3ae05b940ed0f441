//! The memcached target: `-p PORT -l 127.0.0.1 -U 0` (plus `-u root` when bakeoff runs as
//! root), ready when `version\r\n` is answered with `VERSION `.

use std::net::SocketAddr;
use std::process::Command;
use std::time::Duration;

use crate::kind::TargetKind;
use crate::owned::{self, Long, Risk};
use crate::settings::{knob, Knob};
use crate::stats::{Snapshot, StatsLevel};
use crate::target::{first_line, ConnectionLimit, Launch, Target};
use bakeoff_build::Recipe;
use bakeoff_proto::memcache;

/// How long one probe may wait for connect, write and read each.
const PROBE_TIMEOUT: Duration = Duration::from_millis(500);

/// memcached's getopt string (1.6).
const SHORT_OPTIONS: &str = "a:AZp:s:U:m:Mc:khiVrvdl:u:P:f:n:t:D:LR:Cb:B:I:SFXWY:e:o:N:";

/// memcached's long options (1.6): name, whether it takes a value, its letter.
const LONG_OPTIONS: &[Long] = &{
    const fn o(name: &'static str, value: bool, short: char) -> Long {
        Long {
            name,
            value,
            short: Some(short),
        }
    }
    [
        o("unix-mask", true, 'a'),
        o("enable-shutdown", false, 'A'),
        o("enable-ssl", false, 'Z'),
        o("port", true, 'p'),
        o("unix-socket", true, 's'),
        o("udp-port", true, 'U'),
        o("memory-limit", true, 'm'),
        o("disable-evictions", false, 'M'),
        o("conn-limit", true, 'c'),
        o("lock-memory", false, 'k'),
        o("help", false, 'h'),
        o("license", false, 'i'),
        o("version", false, 'V'),
        o("enable-coredumps", false, 'r'),
        o("verbose", false, 'v'),
        o("daemon", false, 'd'),
        o("listen", true, 'l'),
        o("user", true, 'u'),
        o("pidfile", true, 'P'),
        o("slab-growth-factor", true, 'f'),
        o("slab-min-size", true, 'n'),
        o("threads", true, 't'),
        o("enable-largepages", false, 'L'),
        o("max-reqs-per-event", true, 'R'),
        o("disable-cas", false, 'C'),
        o("listen-backlog", true, 'b'),
        o("protocol", true, 'B'),
        o("max-item-size", true, 'I'),
        o("enable-sasl", false, 'S'),
        o("disable-flush-all", false, 'F'),
        o("disable-dumping", false, 'X'),
        o("disable-watch", false, 'W'),
        o("auth-file", true, 'Y'),
        o("memory-file", true, 'e'),
        o("extended", true, 'o'),
        o("napi-ids", true, 'N'),
    ]
};

/// memcached (1.4 and later, text protocol).
#[derive(Debug, Clone, Copy, Default)]
pub struct Memcached;

impl Target for Memcached {
    fn kind(&self) -> TargetKind {
        TargetKind::Memcached
    }

    fn dist_layout(&self) -> bakeoff_build::dist::Layout {
        crate::target::layout(&["memcached"], &[], &["-V"])
    }

    fn recipe(&self) -> Recipe {
        Recipe::Autotools {
            product: "memcached".into(),
        }
    }

    /// Read as memcached's getopt_long reads them: `-vl0.0.0.0` is `-v -l 0.0.0.0`, and
    /// `--lis=...` is `--listen`. `-l` adds an address (it does not replace bakeoff's), so
    /// no order of arguments could make it safe.
    fn owned_arg(&self, args: &[String]) -> Option<(String, &'static str)> {
        let parsed = owned::getopt(args, SHORT_OPTIONS, Some(LONG_OPTIONS));
        owned::first_owned(parsed, |name, _| match name {
            "p" => Some("the port"),
            "l" => Some("the listen address"),
            "U" => Some("the UDP port"),
            "s" => Some("the unix socket"),
            "a" => Some("the unix socket's permissions"),
            "d" => Some("daemon mode (the sandbox must own the process)"),
            "P" => Some("the pid file"),
            _ => None,
        })
    }

    /// `-e FILE` (the memory file), `-Y FILE` (the auth file), `-o ext_path=FILE:SIZE`
    /// (extstore) and the TLS files (`-o ssl_key=`, `ssl_chain_cert=`, `ssl_ca_cert=`)
    /// outside the sandbox's folder (memcached's working directory), and `-o proxy_config=FILE`
    /// (Lua code the proxy runs), in every spelling `owned_arg` reads.
    fn refused_arg(&self, args: &[String]) -> Option<(String, String)> {
        const IN_SANDBOX: Risk = Risk::Path("the sandbox's folder");
        let parsed = owned::getopt(args, SHORT_OPTIONS, Some(LONG_OPTIONS));
        parsed.into_iter().find_map(|p| {
            let value = p.value.as_deref().unwrap_or("");
            let why = match p.name.as_str() {
                "e" | "Y" => owned::refusal(IN_SANDBOX, value),
                // getsubopt: comma-separated `name=value` items.
                "o" => value.split(',').find_map(|item| {
                    let (name, v) = item.split_once('=').unwrap_or((item, ""));
                    match name.trim() {
                        "ext_path" | "ssl_key" | "ssl_chain_cert" | "ssl_ca_cert" => {
                            owned::refusal(IN_SANDBOX, v)
                        }
                        "proxy_config" => {
                            owned::refusal(Risk::Runs("runs the Lua code of a file"), v)
                        }
                        _ => None,
                    }
                }),
                _ => None,
            };
            why.map(|w| (p.spelling, w))
        })
    }

    /// `-c` (default 1024, and the listening sockets count against it).
    fn connection_limit(&self) -> Option<ConnectionLimit> {
        Some(ConnectionLimit::Flag {
            short: "-c",
            long: "--conn-limit",
        })
    }

    fn connection_default(&self) -> Option<usize> {
        Some(1024)
    }

    /// memcached refuses a connection whose descriptor number reaches `-c`, and its own
    /// descriptors (standard streams, the listening socket, each worker thread's event
    /// loop and notify pipe: about 3 per thread) count against it: 256 holds `-t 64`, what
    /// a 64-core server is run with, not only the 2-core default.
    fn connection_headroom(&self) -> usize {
        256
    }

    /// Measured about 0.5 s here.
    fn start_stop_guess_s(&self) -> f64 {
        0.5
    }

    /// memcached sets its open-files limit from `-c` (default 1024) and fails to start
    /// when valgrind's is lower, so it is told that limit unless the experiment sets it.
    /// Counting instructions, its LRU crawler and maintainer threads are kept quiet
    /// (their background work is not the workload's).
    fn valgrind_args(
        &self,
        args: &[String],
        fd_limit: Option<u64>,
        instructions: bool,
    ) -> Vec<String> {
        let mut out = args.to_vec();
        if let (Some(n), Some(limit @ ConnectionLimit::Flag { short, long })) =
            (fd_limit, self.connection_limit())
        {
            // Any other -c (bakeoff's own sized for the sweep included) stops it at start.
            while let Some((i, _)) = limit.in_args(&out) {
                let with_value = out[i] == short || out[i] == long;
                out.drain(i..(i + 1 + usize::from(with_value)).min(out.len()));
            }
            out.extend([short.to_string(), n.to_string()]);
        }
        let has = |flag: &str| args.iter().any(|a| a == flag);
        if instructions && !has("-o") {
            out.extend([
                "-o".to_string(),
                "no_lru_crawler,no_lru_maintainer".to_string(),
            ]);
        }
        out
    }

    fn command(&self, launch: &Launch<'_>) -> Command {
        let port = launch.addr.port();
        let mut cmd = Command::new(launch.binary);
        cmd.args([
            "-p",
            &port.to_string(),
            "-l",
            &launch.addr.ip().to_string(),
            "-U",
            "0",
        ]);
        // memcached refuses to run as root without -u. Staying root (rather than dropping
        // to nobody) keeps the parent-death signal, which a credential change would clear.
        if running_as_root() && !has_user_flag(launch.args) {
            cmd.args(["-u", "root"]);
        }
        cmd.args(launch.args);
        cmd
    }

    fn probe(&self, addr: SocketAddr) -> std::io::Result<bool> {
        let mut buf = [0u8; 128];
        let answer = first_line(addr, memcache::VERSION, &mut buf, PROBE_TIMEOUT)?;
        Ok(answer.is_some_and(|len| memcache::is_version(&buf[..len])))
    }

    /// `stats settings`.
    fn read_settings(
        &self,
        addr: SocketAddr,
    ) -> Result<std::collections::BTreeMap<String, String>, String> {
        crate::settings::exchange(addr, b"stats settings\r\n", stats_reply)
    }

    fn knobs(&self) -> &'static [Knob] {
        KNOBS
    }

    /// `stats` (and with "full" `stats slabs`: each class's counters as
    /// `slab.<class>.<name>`); the identity is the pid and the start time.
    fn read_stats(&self, addr: SocketAddr, level: StatsLevel) -> Snapshot {
        read_stats(addr, level)
    }
}

/// See [`Memcached::read_stats`].
fn read_stats(addr: SocketAddr, level: StatsLevel) -> Snapshot {
    let mut snap = Snapshot::default();
    match crate::settings::exchange(addr, b"stats\r\n", stats_reply) {
        Ok(pairs) => {
            // A restart (a new process) has a new pid.
            snap.identity = pairs.get("pid").map(|p| format!("pid {p}"));
            snap.add_numbers(
                "",
                pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())),
                is_gauge,
            );
        }
        Err(e) => {
            snap.unavailable.insert("stats".into(), e);
        }
    }
    if level == StatsLevel::Full {
        match crate::settings::exchange(addr, b"stats slabs\r\n", stats_reply) {
            Ok(pairs) => {
                let per_class = pairs
                    .iter()
                    .filter(|(k, _)| k.contains(':'))
                    .map(|(k, v)| (k.as_str(), v.as_str()));
                snap.add_numbers("slab.", per_class, |k| {
                    let name = k.split_once(':').map_or(k, |(_, n)| n);
                    !SLAB_COUNTERS.contains(&name)
                });
            }
            Err(e) => {
                snap.unavailable
                    .insert("slab".into(), format!("stats slabs: {e}"));
            }
        }
    }
    snap
}

/// Whether a `stats` line is a gauge or a fact rather than a counter.
fn is_gauge(name: &str) -> bool {
    const GAUGES: &[&str] = &[
        "pid",
        "uptime",
        "time",
        "pointer_size",
        "max_connections",
        "curr_connections",
        "connection_structures",
        "reserved_fds",
        "threads",
        "bytes",
        "curr_items",
        "limit_maxbytes",
        "accepting_conns",
        "hash_power_level",
        "hash_bytes",
        "hash_is_expanding",
        "slab_global_page_pool",
        "slab_reassign_running",
        "lru_crawler_running",
        "log_watchers",
        "unexpected_napi_ids",
        "round_robin_fallback",
        "response_obj_bytes",
        "read_buf_bytes",
        "read_buf_bytes_free",
        "response_obj_count",
        "read_buf_count",
        "read_buf_oom",
    ];
    GAUGES.contains(&name) || name.starts_with("curr_")
}

/// The counters `stats slabs` keeps per class.
const SLAB_COUNTERS: &[&str] = &[
    "get_hits",
    "cmd_set",
    "delete_hits",
    "incr_hits",
    "decr_hits",
    "cas_hits",
    "cas_badval",
    "touch_hits",
];

/// memcached's settings that move performance, as `stats settings` names them, with
/// the flags that set them.
const KNOBS: &[Knob] = &[
    knob("maxbytes", "memory").or_by(&["-m", "--memory-limit"]),
    knob("num_threads", "threads").or_by(&["-t", "--threads"]),
    knob("reqs_per_event", "threads").or_by(&["-R", "--max-reqs-per-event"]),
    knob("cas_enabled", "item size").or_by(&["-C", "--disable-cas"]),
    knob("item_size_max", "item size").or_by(&["-I", "--max-item-size"]),
    knob("growth_factor", "memory").or_by(&["-f", "--slab-growth-factor"]),
    knob("evictions", "memory").or_by(&["-M", "--disable-evictions"]),
    knob("lru_crawler", "background work").or_by(&["-o"]),
    knob("lru_maintainer_thread", "background work").or_by(&["-o"]),
    knob("ssl_enabled", "TLS").or_by(&["-Z", "--enable-ssl"]),
];

/// The whole `stats settings` answer (`STAT name value` lines, then `END`) as pairs;
/// None while incomplete; an error line (a server built without the command, or one
/// that refuses it) as the reason.
fn stats_reply(buf: &[u8]) -> Option<Result<std::collections::BTreeMap<String, String>, String>> {
    let text = String::from_utf8_lossy(buf);
    let first = text.lines().next().unwrap_or("");
    if text.contains('\n')
        && ["ERROR", "CLIENT_ERROR", "SERVER_ERROR"]
            .iter()
            .any(|e| first.starts_with(e))
    {
        return Some(Err(format!("refused: {}", first.trim())));
    }
    if !(text.starts_with("END\r\n") || text.contains("\r\nEND\r\n")) {
        return None;
    }
    let pairs = text
        .lines()
        .filter_map(|l| l.trim_end().strip_prefix("STAT "))
        .map(|l| {
            let (k, v) = l.split_once(' ').unwrap_or((l, ""));
            (k.to_string(), v.to_string())
        })
        .collect();
    Some(Ok(pairs))
}

fn running_as_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// Whether the user already chose the user to run as (`-u NAME`, `-uNAME`, `--user[=NAME]`).
fn has_user_flag(args: &[String]) -> bool {
    args.iter()
        .any(|a| a.starts_with("-u") || a == "--user" || a.starts_with("--user="))
}

#[cfg(test)]
mod tests {
    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_stats_settings_answer_is_read_whole_or_waited_for() {
        let whole =
            b"STAT maxbytes 67108864\r\nSTAT num_threads 4\r\nSTAT inter 127.0.0.1\r\nEND\r\n";
        let got = super::stats_reply(whole).unwrap().unwrap();
        assert_eq!(got["maxbytes"], "67108864");
        assert_eq!(got["num_threads"], "4");
        assert!(super::stats_reply(&whole[..whole.len() - 2]).is_none());
        let refused = super::stats_reply(b"ERROR\r\n").unwrap();
        assert!(refused.unwrap_err().contains("refused"));
    }

    #[test]
    fn under_valgrind_it_gets_the_fd_limit_and_quiet_lru_threads() {
        let got = Memcached.valgrind_args(&strings(&["-t", "1"]), Some(1000), true);
        assert_eq!(
            got,
            strings(&[
                "-t",
                "1",
                "-c",
                "1000",
                "-o",
                "no_lru_crawler,no_lru_maintainer"
            ])
        );
        // memcached sets both open-file limits to -c, and valgrind refuses a change of the
        // hard one: any other -c (bakeoff's own for the sweep too) gives way.
        let own = strings(&["-c", "1040", "-o", "hashpower=20", "-c2000"]);
        assert_eq!(
            Memcached.valgrind_args(&own, Some(1000), true),
            strings(&["-o", "hashpower=20", "-c", "1000"])
        );
        assert_eq!(
            Memcached.valgrind_args(&[], Some(1000), false),
            strings(&["-c", "1000"])
        );
    }

    use super::*;
    use crate::target::command_args;

    #[test]
    fn user_flag_detection() {
        let v = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert!(has_user_flag(&v(&["-t", "4", "-u", "nobody"])));
        assert!(has_user_flag(&v(&["-unobody"])));
        assert!(has_user_flag(&v(&["--user=memcache"])));
        assert!(!has_user_flag(&v(&["-t", "4", "-U", "0"])));
    }

    #[test]
    fn command_puts_port_first_and_user_args_last() {
        let extra = vec!["-t".to_string(), "2".to_string()];
        let args = command_args(&Memcached, "/usr/bin/memcached", 4242, "/tmp", &extra);
        assert_eq!(&args[..6], ["-p", "4242", "-l", "127.0.0.1", "-U", "0"]);
        assert_eq!(&args[args.len() - 2..], ["-t", "2"]);
        assert_eq!(args.contains(&"root".to_string()), running_as_root());
    }

    #[test]
    fn stats_gauges_are_told_from_counters() {
        for g in [
            "pid",
            "uptime",
            "curr_items",
            "curr_connections",
            "bytes",
            "threads",
        ] {
            assert!(super::is_gauge(g), "{g}");
        }
        for c in [
            "cmd_get",
            "get_hits",
            "bytes_read",
            "rusage_user",
            "total_items",
            "evictions",
        ] {
            assert!(!super::is_gauge(c), "{c}");
        }
    }
}
