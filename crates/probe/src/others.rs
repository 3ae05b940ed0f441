//! Who else ran: the CPU the machine's other processes took during a measured window,
//! read from /proc at the window's two edges.
//!
//! A [`Snapshot`] holds, at one instant, the `cpu` line of /proc/stat (jiffies per mode
//! since boot), every process's CPU ticks (utime + stime, and the reaped children's
//! cutime + cstime) with its name and parent, and each of the server's threads' CPU ticks
//! and run-queue wait (/proc/PID/task/TID/stat and schedstat). [`between`] turns two of
//! them into a [`Window`]:
//!
//! - what the other processes took: the machine's busy time (user, nice, system) minus
//!   what bakeoff's own process tree took (bakeoff with its load threads, the sandboxed
//!   server, any load program it started). Subtracting from the whole machine counts
//!   processes that started and ended inside the window too (a compiler job's many short
//!   processes). Interrupt and softirq time is left out of both sides: it is mostly the
//!   loopback traffic between the load and the server.
//! - which other processes: per name (the `comm` the kernel keeps), the ticks of the
//!   processes alive at both edges or started inside the window, largest first.
//! - steal: the share of all CPU time the hypervisor gave to other guests.
//! - the server's busiest thread (its share of the window) and its threads' summed wait
//!   for a CPU: whether the server was saturated, and whether it was kept from a CPU.
//!
//! Reading /proc for every process takes about a millisecond per hundred processes, done
//! twice per run. Nothing here fails: a file that cannot be read counts as absent.

use std::collections::HashMap;
use std::fs;
use std::time::Instant;

/// One process at the snapshot's instant.
#[derive(Debug, Clone, PartialEq)]
struct Proc {
    name: String,
    ppid: i32,
    /// utime + stime, clock ticks.
    ticks: u64,
    /// cutime + cstime: children it reaped, clock ticks.
    reaped: u64,
    /// Start time after boot, clock ticks: a pid reused inside the window is another
    /// process.
    start: u64,
}

/// The readings at one instant.
#[derive(Debug, Clone)]
pub struct Snapshot {
    at: Instant,
    /// /proc/stat's cpu line: user, nice, system, idle, iowait, irq, softirq, steal.
    cpu: [u64; 8],
    /// CPUs of the machine (cpuN lines of /proc/stat).
    cpus: usize,
    procs: HashMap<i32, Proc>,
    /// The server's threads: tid -> (CPU ticks, run-queue wait ns).
    threads: HashMap<i32, (u64, u64)>,
}

/// One other process (or several of one name) over a window.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Other {
    pub name: String,
    /// CPU seconds it took in the window.
    pub cpu_s: f64,
}

/// What two snapshots say about the window between them.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Window {
    pub seconds: f64,
    /// CPUs of the machine.
    pub cpus: usize,
    /// CPU seconds of the machine's other processes (never negative).
    pub others_cpu_s: f64,
    /// CPU seconds of bakeoff's own process tree (the load and the server in it).
    pub ours_cpu_s: f64,
    /// Steal, percent of all CPU time.
    pub steal_pct: f64,
    /// The other processes by name, most CPU first.
    pub others: Vec<Other>,
    /// The server's busiest thread, percent of one CPU over the window (None without
    /// server threads to read).
    pub server_thread_max_pct: Option<f64>,
    /// Seconds the server's threads waited for a CPU, summed (None without schedstat).
    pub server_wait_s: Option<f64>,
}

impl Window {
    /// The other processes' CPU as a percent of all the machine's CPUs over the window.
    pub fn others_cpu_pct(&self) -> f64 {
        share_pct(self.others_cpu_s, self.cpus, self.seconds)
    }

    /// One other process's (or name's) CPU as a percent of the machine's CPUs.
    pub fn pct_of_machine(&self, cpu_s: f64) -> f64 {
        share_pct(cpu_s, self.cpus, self.seconds)
    }
}

fn share_pct(cpu_s: f64, cpus: usize, seconds: f64) -> f64 {
    if seconds <= 0.0 || cpus == 0 {
        return 0.0;
    }
    (cpu_s / (cpus as f64 * seconds) * 100.0).clamp(0.0, 100.0)
}

/// Clock ticks per second (sysconf(_SC_CLK_TCK)), 100 when it cannot be asked.
fn clock_ticks() -> f64 {
    // SAFETY: sysconf has no preconditions.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 {
        t as f64
    } else {
        100.0
    }
}

/// Parses one /proc/PID/stat (or task stat) line: (name, ppid, ticks, reaped, start).
fn parse_stat(text: &str) -> Option<(String, i32, u64, u64, u64)> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let name = text.get(open + 1..close)?.to_string();
    let rest: Vec<&str> = text.get(close + 1..)?.split_ascii_whitespace().collect();
    // rest[0] is the state (field 3); field n is rest[n - 3].
    let num = |field: usize| rest.get(field - 3).and_then(|x| x.parse::<u64>().ok());
    let ppid = rest.get(1)?.parse::<i32>().ok()?;
    let ticks = num(14)? + num(15)?;
    let reaped = num(16).unwrap_or(0) + num(17).unwrap_or(0);
    let start = num(22).unwrap_or(0);
    Some((name, ppid, ticks, reaped, start))
}

/// Parses /proc/stat: the aggregate cpu line and the number of cpuN lines.
fn parse_cpu(text: &str) -> ([u64; 8], usize) {
    let mut cpu = [0u64; 8];
    let mut cpus = 0;
    for line in text.lines() {
        let mut f = line.split_ascii_whitespace();
        match f.next() {
            Some("cpu") => {
                for (slot, x) in cpu.iter_mut().zip(f) {
                    *slot = x.parse().unwrap_or(0);
                }
            }
            Some(n) if n.starts_with("cpu") => cpus += 1,
            _ => {}
        }
    }
    (cpu, cpus)
}

impl Snapshot {
    /// Reads /proc now; `server` are the server's processes, whose threads are read too.
    pub fn take(server: &[i32]) -> Snapshot {
        let (cpu, cpus) = parse_cpu(&fs::read_to_string("/proc/stat").unwrap_or_default());
        let mut procs = HashMap::new();
        if let Ok(dir) = fs::read_dir("/proc") {
            for e in dir.flatten() {
                let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
                    continue;
                };
                let Ok(text) = fs::read_to_string(format!("/proc/{pid}/stat")) else {
                    continue;
                };
                if let Some((name, ppid, ticks, reaped, start)) = parse_stat(&text) {
                    procs.insert(
                        pid,
                        Proc {
                            name,
                            ppid,
                            ticks,
                            reaped,
                            start,
                        },
                    );
                }
            }
        }
        let mut threads = HashMap::new();
        for pid in server {
            let Ok(dir) = fs::read_dir(format!("/proc/{pid}/task")) else {
                continue;
            };
            for e in dir.flatten() {
                let Some(tid) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
                    continue;
                };
                let base = format!("/proc/{pid}/task/{tid}");
                let Some((_, _, ticks, _, _)) = fs::read_to_string(format!("{base}/stat"))
                    .ok()
                    .and_then(|t| parse_stat(&t))
                else {
                    continue;
                };
                let wait = fs::read_to_string(format!("{base}/schedstat"))
                    .ok()
                    .and_then(|t| t.split_ascii_whitespace().nth(1)?.parse::<u64>().ok())
                    .unwrap_or(u64::MAX);
                threads.insert(tid, (ticks, wait));
            }
        }
        Snapshot {
            at: Instant::now(),
            cpu,
            cpus: cpus.max(1),
            procs,
            threads,
        }
    }
}

/// Whether `pid` is `root` or descends from it, by the parents `procs` records.
fn descends(procs: &HashMap<i32, Proc>, mut pid: i32, root: i32) -> bool {
    for _ in 0..64 {
        if pid == root {
            return true;
        }
        match procs.get(&pid) {
            Some(p) if p.ppid > 0 && p.ppid != pid => pid = p.ppid,
            _ => return false,
        }
    }
    false
}

/// What happened between `a` and `b` (taken in that order): `me` is bakeoff's own
/// process, whose tree is left out of the others.
pub fn between(a: &Snapshot, b: &Snapshot, me: i32) -> Window {
    let hz = clock_ticks();
    let seconds = b.at.saturating_duration_since(a.at).as_secs_f64();
    let d: Vec<u64> = (0..8).map(|i| b.cpu[i].saturating_sub(a.cpu[i])).collect();
    let all: u64 = d.iter().sum();
    let busy = d[0] + d[1] + d[2];
    let steal_pct = if all > 0 {
        d[7] as f64 * 100.0 / all as f64
    } else {
        0.0
    };
    let ours_at = |s: &Snapshot, pid: i32| descends(&s.procs, pid, me);
    let mut ours: u64 = 0;
    let mut by_name: HashMap<String, u64> = HashMap::new();
    for (pid, p) in &b.procs {
        let before = a.procs.get(pid).filter(|o| o.start == p.start);
        let mine = ours_at(b, *pid) || (before.is_some() && ours_at(a, *pid));
        let ticks = p.ticks.saturating_sub(before.map_or(0, |o| o.ticks));
        if mine {
            ours += ticks;
            // What our processes reaped in the window (a load program that ended).
            ours += p
                .reaped
                .saturating_sub(before.map_or(p.reaped, |o| o.reaped));
        } else if ticks > 0 {
            // Kernel threads (children of kthreadd) count as others too: kswapd or a
            // kworker flushing someone's writes take CPU like any program.
            *by_name.entry(p.name.clone()).or_default() += ticks;
        }
    }
    let mut others: Vec<Other> = by_name
        .into_iter()
        .map(|(name, t)| Other {
            name,
            cpu_s: t as f64 / hz,
        })
        .collect();
    others.sort_by(|x, y| y.cpu_s.total_cmp(&x.cpu_s).then(x.name.cmp(&y.name)));
    let mut max_thread: Option<u64> = None;
    let mut wait: Option<u64> = None;
    for (tid, (ticks, w)) in &b.threads {
        let (t0, w0) = a.threads.get(tid).copied().unwrap_or((0, 0));
        let t = ticks.saturating_sub(t0);
        max_thread = Some(max_thread.map_or(t, |m| m.max(t)));
        if *w != u64::MAX && w0 != u64::MAX {
            wait = Some(wait.unwrap_or(0) + w.saturating_sub(w0));
        }
    }
    let window_ticks = seconds * hz;
    Window {
        seconds,
        cpus: b.cpus,
        others_cpu_s: busy.saturating_sub(ours) as f64 / hz,
        ours_cpu_s: ours as f64 / hz,
        steal_pct,
        others,
        server_thread_max_pct: max_thread
            .filter(|_| window_ticks > 0.0)
            .map(|t| (t as f64 / window_ticks * 100.0).min(100.0)),
        server_wait_s: wait.map(|ns| ns as f64 / 1e9),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn stat_lines_parse_with_odd_names() {
        let line = "1234 (my (weird) cmd) S 1 1234 1234 0 -1 4194560 100 0 0 0 \
                    250 50 7 3 20 0 4 0 987654 10000000 500";
        let (name, ppid, ticks, reaped, start) = parse_stat(line).unwrap();
        assert_eq!(name, "my (weird) cmd");
        assert_eq!((ppid, ticks, reaped, start), (1, 300, 10, 987654));
        assert!(parse_stat("garbage").is_none());
        let (cpu, n) = parse_cpu("cpu 1 2 3 4 5 6 7 8 9 10\ncpu0 1 1 1 1\ncpu1 0 0 0 0\nctxt 5\n");
        assert_eq!((cpu, n), ([1, 2, 3, 4, 5, 6, 7, 8], 2));
    }

    fn proc(name: &str, ppid: i32, ticks: u64, start: u64) -> Proc {
        Proc {
            name: name.into(),
            ppid,
            ticks,
            reaped: 0,
            start,
        }
    }

    fn snap(at: Instant, cpu: [u64; 8], procs: Vec<(i32, Proc)>) -> Snapshot {
        Snapshot {
            at,
            cpu,
            cpus: 2,
            procs: procs.into_iter().collect(),
            threads: HashMap::new(),
        }
    }

    /// Two seconds on two CPUs: bakeoff (pid 10) and its server (11) took 150 ticks, a
    /// hog 100, a short-lived job 40 that ended inside the window (seen only in the
    /// machine's total): the others are 140 ticks, named hog first.
    #[test]
    fn others_are_the_machine_minus_our_tree_and_are_named() {
        let t0 = Instant::now();
        let hz = clock_ticks();
        let a = snap(
            t0,
            [1000, 0, 500, 5000, 0, 0, 0, 0],
            vec![
                (1, proc("init", 0, 5, 1)),
                (10, proc("bakeoff", 1, 100, 50)),
                (11, proc("memcached", 10, 100, 60)),
                (20, proc("sh", 1, 1000, 70)),
            ],
        );
        let b = snap(
            t0 + Duration::from_secs(2),
            [1000 + 200, 90, 500, 5000 + 110, 0, 0, 0, 0],
            vec![
                (1, proc("init", 0, 5, 1)),
                (10, proc("bakeoff", 1, 180, 50)),
                (11, proc("memcached", 10, 170, 60)),
                (20, proc("sh", 1, 1100, 70)),
            ],
        );
        let w = between(&a, &b, 10);
        assert!((w.ours_cpu_s - 150.0 / hz).abs() < 1e-9, "{w:?}");
        assert!((w.others_cpu_s - 140.0 / hz).abs() < 1e-9, "{w:?}");
        assert_eq!(w.others[0].name, "sh");
        assert!((w.others[0].cpu_s - 100.0 / hz).abs() < 1e-9);
        assert_eq!(w.others.len(), 1, "init took nothing: {w:?}");
        // 1.4 s of 4 CPU-seconds at 100 Hz.
        if hz == 100.0 {
            assert!((w.others_cpu_pct() - 35.0).abs() < 0.1, "{w:?}");
        }
    }

    #[test]
    fn a_real_snapshot_sees_this_process_as_ours() {
        let me = std::process::id() as i32;
        let a = Snapshot::take(&[me]);
        let spin = Instant::now();
        let mut x = 0u64;
        while spin.elapsed() < Duration::from_millis(100) {
            x = x.wrapping_add(std::hint::black_box(1));
        }
        let b = Snapshot::take(&[me]);
        let w = between(&a, &b, me);
        assert!(x > 0 && w.seconds > 0.09, "{w:?}");
        assert!(w.ours_cpu_s > 0.0, "{w:?}");
        assert!(w.server_thread_max_pct.is_some_and(|p| p > 0.0), "{w:?}");
        assert!(w.cpus >= 1);
        assert!(!w.others.iter().any(|o| o.name.starts_with("bakeoff_probe")));
    }
}
