//! Reading /proc: per-process stat and status, the set of processes that belong to a
//! sandbox (its process group plus every descendant of the server, since e.g. PostgreSQL
//! backends call setsid and leave the group), their summed resource usage, and who owns
//! a listening TCP socket.

use std::collections::HashMap;
use std::fs;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

/// Resource usage of all processes of one sandbox at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    /// CPU seconds (user + system) of every process in the sandbox, plus the CPU of
    /// children they already reaped (cutime + cstime), summed.
    pub cpu_s: f64,
    /// Sum of the current resident set sizes (VmRSS), KiB.
    pub rss_kib: u64,
    /// The largest peak resident set size (VmHWM) of any one process, KiB.
    pub peak_rss_kib: u64,
    /// How many live (non-zombie) processes the sandbox has (0 once the server died).
    pub processes: usize,
}

impl Usage {
    /// CPU seconds spent between `start` and `self` (never negative).
    pub fn cpu_s_since(&self, start: &Usage) -> f64 {
        (self.cpu_s - start.cpu_s).max(0.0)
    }
}

/// The fields of /proc/PID/stat that bakeoff uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ProcStat {
    pub pid: i32,
    pub state: char,
    pub ppid: i32,
    pub pgrp: i32,
    /// utime + stime + cutime + cstime, clock ticks.
    pub cpu_ticks: u64,
    /// Start time after boot, clock ticks (field 22): with the pid, identifies a process.
    pub start_ticks: u64,
}

/// Parses one /proc/PID/stat line. The command name may hold spaces and parentheses, so
/// the fields are counted from the last `)`.
pub(crate) fn parse_stat(line: &str) -> Option<ProcStat> {
    let open = line.find('(')?;
    let close = line.rfind(')')?;
    let pid = line[..open].trim().parse().ok()?;
    // Fields from 3 (state) on; index i here is field i + 3.
    let rest: Vec<&str> = line.get(close + 1..)?.split_whitespace().collect();
    let field = |n: usize| -> Option<u64> { rest.get(n - 3)?.parse().ok() };
    let cpu_ticks = field(14)? + field(15)? + field(16)? + field(17)?;
    Some(ProcStat {
        pid,
        state: rest.first()?.chars().next()?,
        ppid: rest.get(1)?.parse().ok()?,
        pgrp: rest.get(2)?.parse().ok()?,
        cpu_ticks,
        start_ticks: field(22)?,
    })
}

/// /proc/PID/stat of one process, if it exists.
pub(crate) fn read_stat(pid: i32) -> Option<ProcStat> {
    parse_stat(&fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

/// The start time (clock ticks after boot) of `pid`, if it exists.
pub(crate) fn start_ticks(pid: i32) -> Option<u64> {
    read_stat(pid).map(|s| s.start_ticks)
}

/// Whether `pid` exists and started at `start` (so it is the process we recorded, not a
/// later one that reused the pid). Zombies count as gone.
pub(crate) fn is_same_process(pid: i32, start: u64) -> bool {
    matches!(read_stat(pid), Some(s) if s.start_ticks == start && s.state != 'Z')
}

/// The environment variable every server process bakeoff starts carries: the id
/// bakeoff's state recorded for its sandbox folder. A cleanup signals only processes
/// that carry their sandbox's tag.
pub(crate) const SANDBOX_TAG: &str = "BAKEOFF_SANDBOX";

/// Whether `pid`'s environment (/proc/PID/environ) holds `SANDBOX_TAG=tag`.
pub(crate) fn has_tag(pid: i32, tag: &str) -> bool {
    let want = format!("{SANDBOX_TAG}={tag}");
    fs::read(format!("/proc/{pid}/environ"))
        .is_ok_and(|env| env.split(|b| *b == 0).any(|v| v == want.as_bytes()))
}

/// A `Key:   123 kB` value from /proc/PID/status, in KiB.
pub(crate) fn parse_status_kib(status: &str, key: &str) -> Option<u64> {
    status.lines().find_map(|l| {
        let v = l.strip_prefix(key)?.strip_prefix(':')?;
        v.split_whitespace().next()?.parse().ok()
    })
}

/// stat of every process visible in /proc (processes that vanish mid-scan are skipped).
pub(crate) fn all_stats() -> Vec<ProcStat> {
    let Ok(dir) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(read_stat)
        .collect()
}

/// The processes of a sandbox: members of process group `pgid`, plus every descendant of
/// `leader` (by parent links), whatever group they moved to.
pub(crate) fn sandbox_members(stats: &[ProcStat], leader: i32, pgid: i32) -> Vec<ProcStat> {
    let parent: HashMap<i32, i32> = stats.iter().map(|s| (s.pid, s.ppid)).collect();
    let descends_from_leader = |mut pid: i32| {
        // Bounded walk: parent chains are short and pid 1 / 0 ends them.
        for _ in 0..64 {
            if pid == leader {
                return true;
            }
            match parent.get(&pid) {
                Some(&pp) if pp > 1 => pid = pp,
                _ => return false,
            }
        }
        false
    };
    stats
        .iter()
        .filter(|s| s.pgrp == pgid || descends_from_leader(s.pid))
        .copied()
        .collect()
}

/// Clock ticks per second (sysconf(_SC_CLK_TCK)), usually 100.
pub(crate) fn clock_ticks_per_s() -> f64 {
    static TICKS: OnceLock<f64> = OnceLock::new();
    *TICKS.get_or_init(|| {
        // SAFETY: sysconf has no preconditions.
        let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
        if t > 0 {
            t as f64
        } else {
            100.0
        }
    })
}

/// Summed usage of the sandbox whose server is `leader` in group `pgid`.
pub(crate) fn sandbox_usage(leader: i32, pgid: i32) -> Usage {
    let members = sandbox_members(&all_stats(), leader, pgid);
    let mut usage = Usage {
        processes: members.iter().filter(|m| m.state != 'Z').count(),
        ..Usage::default()
    };
    let mut ticks = 0u64;
    for m in &members {
        // A zombie still reports the CPU it used; it has no memory left.
        ticks += m.cpu_ticks;
        if let Ok(status) = fs::read_to_string(format!("/proc/{}/status", m.pid)) {
            usage.rss_kib += parse_status_kib(&status, "VmRSS").unwrap_or(0);
            let hwm = parse_status_kib(&status, "VmHWM").unwrap_or(0);
            usage.peak_rss_kib = usage.peak_rss_kib.max(hwm);
        }
    }
    usage.cpu_s = ticks as f64 / clock_ticks_per_s();
    usage
}

/// A cheap, `Send` handle on one sandbox's processes, for samplers and profilers that
/// run on their own threads while the sandbox is live.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Watch {
    pub leader: i32,
    pub pgid: i32,
}

impl Watch {
    /// Summed CPU and memory of the sandbox's processes now.
    pub fn usage(&self) -> Usage {
        sandbox_usage(self.leader, self.pgid)
    }

    /// In one look at /proc: the CPU seconds every process of the sandbox used so far, and
    /// whether one of them is stopped (SIGSTOP, a tracer: state `T` or `t`), for a
    /// watchdog that tells a server at work from one that stopped answering.
    pub fn pulse(&self) -> (f64, bool) {
        let members = sandbox_members(&all_stats(), self.leader, self.pgid);
        let ticks: u64 = members.iter().map(|m| m.cpu_ticks).sum();
        let stopped = members.iter().any(|m| matches!(m.state, 'T' | 't'));
        (ticks as f64 / clock_ticks_per_s(), stopped)
    }

    /// The pids of the sandbox's live processes now (PostgreSQL backends included).
    pub fn pids(&self) -> Vec<i32> {
        sandbox_members(&all_stats(), self.leader, self.pgid)
            .iter()
            .filter(|m| m.state != 'Z')
            .map(|m| m.pid)
            .collect()
    }
}

/// This boot's id, to tell a sandbox record of an earlier boot (all its pids are void).
pub(crate) fn boot_id() -> Option<String> {
    let id = fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()?;
    Some(id.trim().to_string())
}

/// Socket inodes of TCP sockets listening on `port` (IPv4 and IPv6).
fn listening_inodes(port: u16) -> Vec<u64> {
    let mut inodes = Vec::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let Ok(text) = fs::read_to_string(table) else {
            continue;
        };
        inodes.extend(text.lines().skip(1).filter_map(|l| parse_listener(l, port)));
    }
    inodes
}

/// The inode of a /proc/net/tcp line if it is a listener (state 0A) on `port`.
pub(crate) fn parse_listener(line: &str, port: u16) -> Option<u64> {
    let cols: Vec<&str> = line.split_whitespace().collect();
    let local_port = cols.get(1)?.rsplit(':').next()?;
    let listening = *cols.get(3)? == "0A";
    (listening && u16::from_str_radix(local_port, 16).ok()? == port)
        .then(|| cols.get(9)?.parse().ok())
        .flatten()
}

/// The addresses `pids` listen on: TCP listeners and bound UDP sockets, each with "tcp"
/// or "udp". Empty when /proc cannot tell.
pub(crate) fn listening_addrs(pids: &[i32]) -> Vec<(SocketAddr, &'static str)> {
    let mut inodes = std::collections::BTreeSet::new();
    for pid in pids {
        let Ok(fds) = fs::read_dir(format!("/proc/{pid}/fd")) else {
            continue;
        };
        for fd in fds.flatten() {
            let Ok(link) = fs::read_link(fd.path()) else {
                continue;
            };
            let link = link.to_string_lossy();
            if let Some(i) = link
                .strip_prefix("socket:[")
                .and_then(|r| r.strip_suffix(']'))
                .and_then(|i| i.parse::<u64>().ok())
            {
                inodes.insert(i);
            }
        }
    }
    let mut out = Vec::new();
    for (table, proto, state) in [
        ("/proc/net/tcp", "tcp", "0A"),
        ("/proc/net/tcp6", "tcp", "0A"),
        ("/proc/net/udp", "udp", "07"),
        ("/proc/net/udp6", "udp", "07"),
    ] {
        let Ok(text) = fs::read_to_string(table) else {
            continue;
        };
        for line in text.lines().skip(1) {
            let cols: Vec<&str> = line.split_whitespace().collect();
            let ours = cols
                .get(9)
                .and_then(|i| i.parse::<u64>().ok())
                .is_some_and(|i| inodes.contains(&i));
            if ours && cols.get(3) == Some(&state) {
                if let Some(addr) = cols.get(1).and_then(|a| parse_socket_addr(a)) {
                    out.push((addr, proto));
                }
            }
        }
    }
    out
}

/// "0100007F:2B67" (IPv4) or 32 hex digits and a port (IPv6), as /proc/net prints a local
/// address: each 32-bit word in the machine's byte order.
pub(crate) fn parse_socket_addr(text: &str) -> Option<SocketAddr> {
    let (addr, port) = text.split_once(':')?;
    let port = u16::from_str_radix(port, 16).ok()?;
    let word = |i: usize| -> Option<[u8; 4]> {
        Some(
            u32::from_str_radix(addr.get(i * 8..i * 8 + 8)?, 16)
                .ok()?
                .to_ne_bytes(),
        )
    };
    let ip: IpAddr = match addr.len() {
        8 => Ipv4Addr::from(word(0)?).into(),
        32 => {
            let mut b = [0u8; 16];
            for i in 0..4 {
                b[i * 4..i * 4 + 4].copy_from_slice(&word(i)?);
            }
            Ipv6Addr::from(b).into()
        }
        _ => return None,
    };
    Some(SocketAddr::new(ip, port))
}

/// Whether any process is seen listening on loopback `port` (false when /proc cannot
/// tell).
pub(crate) fn port_listened(port: u16) -> bool {
    !listening_inodes(port).is_empty()
}

/// Whether one of `pids` holds a socket listening on `port`: `Some(false)` when another
/// process does, `None` when that cannot be told (no listener found or /proc unreadable).
pub(crate) fn listener_owned_by(port: u16, pids: &[i32]) -> Option<bool> {
    let inodes = listening_inodes(port);
    if inodes.is_empty() {
        return None;
    }
    let wanted: Vec<String> = inodes.iter().map(|i| format!("socket:[{i}]")).collect();
    let mut readable = false;
    for pid in pids {
        let Ok(fds) = fs::read_dir(format!("/proc/{pid}/fd")) else {
            continue;
        };
        readable = true;
        for fd in fds.flatten() {
            let Ok(link) = fs::read_link(fd.path()) else {
                continue;
            };
            if wanted.iter().any(|w| link.as_os_str() == w.as_str()) {
                return Some(true);
            }
        }
    }
    readable.then_some(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_proc_net_addresses() {
        assert_eq!(
            parse_socket_addr("0100007F:2B67"),
            Some("127.0.0.1:11111".parse().unwrap())
        );
        assert_eq!(
            parse_socket_addr("00000000:2B67"),
            Some("0.0.0.0:11111".parse().unwrap())
        );
        assert_eq!(
            parse_socket_addr("00000000000000000000000001000000:0050"),
            Some("[::1]:80".parse().unwrap())
        );
        assert_eq!(parse_socket_addr("0100007F"), None);
    }

    #[test]
    fn finds_its_own_listeners() {
        let me = std::process::id() as i32;
        let tcp = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let udp = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let got = listening_addrs(&[me]);
        assert!(got.contains(&(tcp.local_addr().unwrap(), "tcp")), "{got:?}");
        assert!(got.contains(&(udp.local_addr().unwrap(), "udp")), "{got:?}");
    }

    #[test]
    fn parses_stat_with_odd_command_name() {
        let line = "1234 (my (weird) cmd) S 1 1234 1234 0 -1 4194560 100 0 0 0 \
                    250 50 7 3 20 0 4 0 987654 10000000 500 18446744073709551615";
        let s = parse_stat(line).unwrap();
        assert_eq!(s.pid, 1234);
        assert_eq!(s.state, 'S');
        assert_eq!(s.ppid, 1);
        assert_eq!(s.pgrp, 1234);
        assert_eq!(s.cpu_ticks, 250 + 50 + 7 + 3);
        assert_eq!(s.start_ticks, 987654);
        assert!(parse_stat("garbage").is_none());
        assert!(parse_stat("1 (x) S 0").is_none());
    }

    #[test]
    fn reads_own_stat() {
        let me = std::process::id() as i32;
        let s = read_stat(me).unwrap();
        assert_eq!(s.pid, me);
        assert!(is_same_process(me, s.start_ticks));
        assert!(!is_same_process(me, s.start_ticks + 1));
    }

    #[test]
    fn parses_status_values() {
        let status = "Name:\tmemcached\nVmHWM:\t    4732 kB\nVmRSS:\t    4100 kB\n";
        assert_eq!(parse_status_kib(status, "VmRSS"), Some(4100));
        assert_eq!(parse_status_kib(status, "VmHWM"), Some(4732));
        assert_eq!(parse_status_kib(status, "VmSwap"), None);
    }

    #[test]
    fn members_are_group_plus_descendants() {
        let st = |pid, ppid, pgrp| ProcStat {
            pid,
            state: 'S',
            ppid,
            pgrp,
            cpu_ticks: 0,
            start_ticks: 0,
        };
        let stats = vec![
            st(1, 0, 1),
            st(100, 1, 100),   // leader
            st(101, 100, 100), // same group
            st(102, 100, 102), // setsid backend
            st(103, 102, 102), // its child
            st(200, 1, 200),   // unrelated
            st(201, 1, 100),   // reparented member of the group
        ];
        let mut pids: Vec<i32> = sandbox_members(&stats, 100, 100)
            .iter()
            .map(|s| s.pid)
            .collect();
        pids.sort();
        assert_eq!(pids, [100, 101, 102, 103, 201]);
    }

    #[test]
    fn parses_listener_lines() {
        let listen = "   0: 0100007F:2B67 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 55123 1 0000000000000000 100 0 0 10 0";
        let estab = "   1: 0100007F:2B67 0100007F:C350 01 00000000:00000000 00:00000000 00000000     0        0 55124 1 0000000000000000 100 0 0 10 0";
        assert_eq!(parse_listener(listen, 0x2B67), Some(55123));
        assert_eq!(parse_listener(listen, 0x2B68), None);
        assert_eq!(parse_listener(estab, 0x2B67), None);
    }

    #[test]
    fn own_listener_is_found() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let me = std::process::id() as i32;
        assert_eq!(listener_owned_by(port, &[me]), Some(true));
        assert!(!listener_owned_by(port, &[1]).unwrap_or(false));
    }

    #[test]
    fn own_usage_is_counted() {
        let me = std::process::id() as i32;
        let pgid = unsafe { libc::getpgid(0) };
        let u = sandbox_usage(me, pgid);
        assert!(u.processes >= 1);
        assert!(u.rss_kib > 0 && u.peak_rss_kib > 0);
    }
}
