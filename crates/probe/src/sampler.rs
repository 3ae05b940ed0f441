//! The /proc sampler: what the machine and the server did, interval by interval, while
//! a run was measured.
//!
//! It is always on, so it has to be cheap: one thread wakes every interval, reads three
//! small /proc files into a reused buffer and asks the caller's [`ServerUsage`] closure
//! for the server's CPU seconds and RSS. Nothing is spawned. What it reads:
//!
//! - `/proc/stat`: the first (`cpu`) line, jiffies per CPU mode since boot, whose
//!   deltas give the share of all CPU time in each mode (user, nice, system, idle,
//!   iowait, irq, softirq, steal; they add up to 100), and `ctxt`, the context
//!   switches of the whole system since boot.
//! - `/proc/diskstats`: sectors read and written (x 512 bytes) and `io_ticks`, the
//!   milliseconds a device had I/O in flight, whose delta over the interval is its
//!   utilization. Only whole disks count (a name under `/sys/block`), without
//!   `loop*`, `ram*`, `zram*`, `dm-*` and `md*` devices, which would count the same
//!   bytes twice or are not disks.
//! - `/proc/net/dev`: bytes received on `lo`, the loopback traffic between the load
//!   generator and the server (each byte crosses `lo` once).
//!
//! Why: a variant that is faster may use less CPU per operation, switch context less,
//! touch the disk less, or it may just have had the machine to itself; these series
//! tell those apart. A file that cannot be read (a container without
//! `/proc/diskstats`) reads as zeros: the sampler never fails a run.
//!
//! The [`Summary`] is computed from the readings at [`Sampler::start`] and
//! [`Sampler::stop`], so it covers exactly the measured window, even one shorter than
//! an interval.

use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Where the server's processes are: a closure the sampler thread calls each interval,
/// returning (server CPU seconds so far, server RSS KiB now) summed over its processes.
pub type ServerUsage = Box<dyn Fn() -> (f64, u64) + Send>;

/// One interval's readings, rates over the interval.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    /// Seconds since the sampler started (end of the interval).
    pub t_s: f64,
    pub cpu_user_pct: f64,
    pub cpu_nice_pct: f64,
    pub cpu_system_pct: f64,
    pub cpu_idle_pct: f64,
    pub cpu_iowait_pct: f64,
    pub cpu_irq_pct: f64,
    pub cpu_softirq_pct: f64,
    pub cpu_steal_pct: f64,
    /// The server's CPU over the interval, percent of one core.
    pub server_cpu_pct: f64,
    pub server_rss_kib: u64,
    /// Context switches per second, whole system (/proc/stat ctxt).
    pub ctx_switches_per_s: f64,
    pub disk_read_bytes_per_s: f64,
    pub disk_write_bytes_per_s: f64,
    /// Busiest device's utilization (time with I/O in flight), percent.
    pub disk_util_pct: f64,
    /// Bytes received on loopback per second (what lo carries once).
    pub loopback_bytes_per_s: f64,
}

/// The whole window's totals and means.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub seconds: f64,
    pub cpu_user_pct: f64,
    pub cpu_system_pct: f64,
    pub cpu_idle_pct: f64,
    pub cpu_iowait_pct: f64,
    pub cpu_softirq_pct: f64,
    pub cpu_steal_pct: f64,
    pub server_cpu_pct_mean: f64,
    pub server_cpu_pct_max: f64,
    pub server_rss_kib_max: u64,
    pub ctx_switches: u64,
    pub disk_read_bytes: u64,
    pub disk_write_bytes: u64,
    pub disk_util_pct_max: f64,
    pub loopback_bytes: u64,
}

/// Jiffies per CPU mode since boot, summed over all CPUs (the `cpu` line of
/// /proc/stat): user, nice, system, idle, iowait, irq, softirq, steal, in that order.
/// Guest time is left out: the kernel already counts it in user and nice.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuTimes(pub [u64; 8]);

/// What the sampler takes from /proc/stat.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProcStat {
    pub cpu: CpuTimes,
    /// Context switches since boot, whole system.
    pub ctxt: u64,
}

/// One device's counters from /proc/diskstats, since boot.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DiskStat {
    pub name: String,
    pub sectors_read: u64,
    pub sectors_written: u64,
    /// Milliseconds spent with I/O in flight.
    pub io_ticks_ms: u64,
}

/// One interface's counters from /proc/net/dev, since boot.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NetDev {
    pub name: String,
    pub rx_bytes: u64,
    pub tx_bytes: u64,
}

/// Parses /proc/stat: the aggregate `cpu` line and `ctxt`. Missing or odd lines read
/// as zeros.
pub fn parse_proc_stat(text: &str) -> ProcStat {
    let mut out = ProcStat::default();
    for line in text.lines() {
        let mut fields = line.split_ascii_whitespace();
        match fields.next() {
            Some("cpu") => {
                for (slot, field) in out.cpu.0.iter_mut().zip(fields) {
                    *slot = field.parse().unwrap_or(0);
                }
            }
            Some("ctxt") => out.ctxt = fields.next().and_then(|f| f.parse().ok()).unwrap_or(0),
            _ => {}
        }
    }
    out
}

/// Parses /proc/diskstats: every device listed, partitions included (see
/// [`whole_disks`]). Lines with fewer than 13 fields are skipped.
pub fn parse_diskstats(text: &str) -> Vec<DiskStat> {
    let mut out = Vec::new();
    for line in text.lines() {
        let fields: Vec<&str> = line.split_ascii_whitespace().collect();
        if fields.len() < 13 {
            continue;
        }
        let num = |i: usize| fields[i].parse::<u64>().unwrap_or(0);
        out.push(DiskStat {
            name: fields[2].to_string(),
            sectors_read: num(5),
            sectors_written: num(9),
            io_ticks_ms: num(12),
        });
    }
    out
}

/// Parses /proc/net/dev: received and transmitted bytes per interface.
pub fn parse_net_dev(text: &str) -> Vec<NetDev> {
    let mut out = Vec::new();
    for line in text.lines() {
        let Some((name, rest)) = line.split_once(':') else {
            continue;
        };
        let fields: Vec<u64> = rest
            .split_ascii_whitespace()
            .map(|f| f.parse().unwrap_or(0))
            .collect();
        if fields.len() < 9 {
            continue;
        }
        out.push(NetDev {
            name: name.trim().to_string(),
            rx_bytes: fields[0],
            tx_bytes: fields[8],
        });
    }
    out
}

/// Device name prefixes that are not disks of their own or would count bytes twice.
const SKIPPED_DEVICES: &[&str] = &["loop", "ram", "zram", "dm-", "md"];

/// Keeps the whole disks of `disks`. With `sys_block` (the names under /sys/block) a
/// disk is a name in it; without (no sysfs), a name is a partition when another listed
/// name is its prefix followed by digits or `p` and digits (`vda1`, `nvme0n1p2`).
/// Either way `loop*`, `ram*`, `zram*`, `dm-*` and `md*` are left out.
pub fn whole_disks(disks: Vec<DiskStat>, sys_block: Option<&HashSet<String>>) -> Vec<DiskStat> {
    let names: Vec<String> = disks.iter().map(|d| d.name.clone()).collect();
    disks
        .into_iter()
        .filter(|d| !SKIPPED_DEVICES.iter().any(|p| d.name.starts_with(p)))
        .filter(|d| match sys_block {
            Some(set) => set.contains(&d.name),
            None => !names.iter().any(|parent| is_partition_of(&d.name, parent)),
        })
        .collect()
}

fn is_partition_of(name: &str, parent: &str) -> bool {
    let Some(rest) = name.strip_prefix(parent) else {
        return false;
    };
    let digits = rest.strip_prefix('p').unwrap_or(rest);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

/// The names under /sys/block, or None when it cannot be listed.
fn list_sys_block() -> Option<HashSet<String>> {
    let entries = std::fs::read_dir("/sys/block").ok()?;
    let set: HashSet<String> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    (!set.is_empty()).then_some(set)
}

/// All counters at one instant.
#[derive(Debug, Clone, Default, PartialEq)]
struct Reading {
    t_s: f64,
    stat: ProcStat,
    disks: Vec<DiskStat>,
    lo_rx_bytes: u64,
    server_cpu_s: f64,
    server_rss_kib: u64,
}

/// Deltas between two readings of the same device list: bytes read, bytes written,
/// and the largest io_ticks delta (ms) of one device.
fn disk_deltas(a: &[DiskStat], b: &[DiskStat]) -> (u64, u64, u64) {
    let (mut read, mut written, mut busiest) = (0u64, 0u64, 0u64);
    for new in b {
        let Some(old) = a.iter().find(|d| d.name == new.name) else {
            continue;
        };
        read = read.saturating_add(new.sectors_read.saturating_sub(old.sectors_read) * 512);
        written =
            written.saturating_add(new.sectors_written.saturating_sub(old.sectors_written) * 512);
        busiest = busiest.max(new.io_ticks_ms.saturating_sub(old.io_ticks_ms));
    }
    (read, written, busiest)
}

/// Percent of all CPU time in each mode between `a` and `b` (zeros if no time passed).
fn cpu_pcts(a: &CpuTimes, b: &CpuTimes) -> [f64; 8] {
    let mut d = [0u64; 8];
    for (i, slot) in d.iter_mut().enumerate() {
        *slot = b.0[i].saturating_sub(a.0[i]);
    }
    let total: u64 = d.iter().sum();
    let mut out = [0.0; 8];
    if total > 0 {
        for (o, v) in out.iter_mut().zip(d) {
            *o = v as f64 * 100.0 / total as f64;
        }
    }
    out
}

fn per_s(delta: f64, seconds: f64) -> f64 {
    if seconds > 0.0 {
        delta / seconds
    } else {
        0.0
    }
}

/// The sample of the interval from `a` to `b`.
fn sample_between(a: &Reading, b: &Reading) -> Sample {
    let dt = b.t_s - a.t_s;
    let p = cpu_pcts(&a.stat.cpu, &b.stat.cpu);
    let (read, written, busiest_ms) = disk_deltas(&a.disks, &b.disks);
    let server_cpu = (b.server_cpu_s - a.server_cpu_s).max(0.0);
    Sample {
        t_s: b.t_s,
        cpu_user_pct: p[0],
        cpu_nice_pct: p[1],
        cpu_system_pct: p[2],
        cpu_idle_pct: p[3],
        cpu_iowait_pct: p[4],
        cpu_irq_pct: p[5],
        cpu_softirq_pct: p[6],
        cpu_steal_pct: p[7],
        server_cpu_pct: per_s(server_cpu * 100.0, dt),
        server_rss_kib: b.server_rss_kib,
        ctx_switches_per_s: per_s(b.stat.ctxt.saturating_sub(a.stat.ctxt) as f64, dt),
        disk_read_bytes_per_s: per_s(read as f64, dt),
        disk_write_bytes_per_s: per_s(written as f64, dt),
        disk_util_pct: per_s(busiest_ms as f64 / 10.0, dt).min(100.0),
        loopback_bytes_per_s: per_s(b.lo_rx_bytes.saturating_sub(a.lo_rx_bytes) as f64, dt),
    }
}

/// The window's summary from its first and last readings; the maxima come from
/// `samples` and from `partial`, the sample of the last, incomplete interval.
fn summarize(first: &Reading, last: &Reading, samples: &[Sample], partial: &Sample) -> Summary {
    let whole = sample_between(first, last);
    let seconds = last.t_s - first.t_s;
    let (read, written, _) = disk_deltas(&first.disks, &last.disks);
    let all = samples.iter().chain(std::iter::once(partial));
    let max_f = |f: fn(&Sample) -> f64| all.clone().map(f).fold(0.0, f64::max);
    Summary {
        seconds,
        cpu_user_pct: whole.cpu_user_pct,
        cpu_system_pct: whole.cpu_system_pct,
        cpu_idle_pct: whole.cpu_idle_pct,
        cpu_iowait_pct: whole.cpu_iowait_pct,
        cpu_softirq_pct: whole.cpu_softirq_pct,
        cpu_steal_pct: whole.cpu_steal_pct,
        server_cpu_pct_mean: whole.server_cpu_pct,
        server_cpu_pct_max: max_f(|s| s.server_cpu_pct),
        server_rss_kib_max: all.clone().map(|s| s.server_rss_kib).max().unwrap_or(0),
        ctx_switches: last.stat.ctxt.saturating_sub(first.stat.ctxt),
        disk_read_bytes: read,
        disk_write_bytes: written,
        disk_util_pct_max: max_f(|s| s.disk_util_pct),
        loopback_bytes: last.lo_rx_bytes.saturating_sub(first.lo_rx_bytes),
    }
}

/// The files the sampler thread keeps open, and the buffer it reads them into.
struct Sources {
    stat: Option<File>,
    diskstats: Option<File>,
    net_dev: Option<File>,
    sys_block: Option<HashSet<String>>,
    buf: String,
    server: ServerUsage,
    t0: Instant,
}

impl Sources {
    fn open(server: ServerUsage, t0: Instant) -> Sources {
        Sources {
            stat: File::open("/proc/stat").ok(),
            diskstats: File::open("/proc/diskstats").ok(),
            net_dev: File::open("/proc/net/dev").ok(),
            sys_block: list_sys_block(),
            buf: String::with_capacity(16 * 1024),
            server,
            t0,
        }
    }

    /// Rereads `file` from its start into the buffer; an empty buffer if it fails.
    fn reread(file: &mut Option<File>, buf: &mut String) {
        buf.clear();
        if let Some(f) = file.as_mut() {
            if f.seek(SeekFrom::Start(0)).is_err() || f.read_to_string(buf).is_err() {
                buf.clear();
            }
        }
    }

    fn read(&mut self) -> Reading {
        Self::reread(&mut self.stat, &mut self.buf);
        let stat = parse_proc_stat(&self.buf);
        Self::reread(&mut self.diskstats, &mut self.buf);
        let disks = whole_disks(parse_diskstats(&self.buf), self.sys_block.as_ref());
        Self::reread(&mut self.net_dev, &mut self.buf);
        let lo_rx_bytes = parse_net_dev(&self.buf)
            .into_iter()
            .find(|d| d.name == "lo")
            .map_or(0, |d| d.rx_bytes);
        let (server_cpu_s, server_rss_kib) = (self.server)();
        Reading {
            t_s: self.t0.elapsed().as_secs_f64(),
            stat,
            disks,
            lo_rx_bytes,
            server_cpu_s,
            server_rss_kib,
        }
    }
}

/// A running sampler thread.
pub struct Sampler {
    stop_tx: Sender<()>,
    thread: Option<JoinHandle<(Vec<Sample>, Summary)>>,
}

/// The name of the sampler thread (as /proc/self/task/*/comm shows it).
pub const THREAD_NAME: &str = "bakeoff-sampler";

impl Sampler {
    /// Takes the first reading and starts the thread that samples every `interval`
    /// (at least 1 ms). If the thread cannot be spawned, [`Sampler::stop`] returns
    /// nothing rather than failing the run.
    pub fn start(server: ServerUsage, interval: Duration) -> Sampler {
        let interval = interval.max(Duration::from_millis(1));
        let (stop_tx, stop_rx) = mpsc::channel();
        let t0 = Instant::now();
        let mut sources = Sources::open(server, t0);
        let first = sources.read();
        let thread = std::thread::Builder::new()
            .name(THREAD_NAME.into())
            .spawn(move || run(sources, first, interval, stop_rx))
            .ok();
        Sampler { stop_tx, thread }
    }

    /// Stops the thread; the samples and the window's summary (from the counters at
    /// start and stop, so a window shorter than one interval still has totals).
    pub fn stop(mut self) -> (Vec<Sample>, Summary) {
        let _ = self.stop_tx.send(());
        match self.thread.take().map(|t| t.join()) {
            Some(Ok(result)) => result,
            _ => (Vec::new(), Summary::default()),
        }
    }
}

impl Drop for Sampler {
    fn drop(&mut self) {
        // A sampler dropped without stop(): let its thread end at its next wake-up.
        let _ = self.stop_tx.send(());
    }
}

/// The sampler thread: a reading per interval (on a fixed schedule from the start, so
/// the samples do not drift), a last reading when told to stop.
fn run(
    mut sources: Sources,
    first: Reading,
    interval: Duration,
    stop_rx: Receiver<()>,
) -> (Vec<Sample>, Summary) {
    let mut samples = Vec::new();
    let mut prev = first.clone();
    let mut next = sources.t0 + interval;
    loop {
        let wait = next.saturating_duration_since(Instant::now());
        match stop_rx.recv_timeout(wait) {
            Err(RecvTimeoutError::Timeout) => {}
            Ok(()) | Err(RecvTimeoutError::Disconnected) => break,
        }
        let now = sources.read();
        samples.push(sample_between(&prev, &now));
        prev = now;
        next += interval;
        // After a stall (suspended machine, starved thread) skip the missed ticks.
        while next <= Instant::now() {
            next += interval;
        }
    }
    let last = sources.read();
    let mut partial = sample_between(&prev, &last);
    if !partial_rates_usable(&samples, &prev, &last, interval) {
        // Too short for its rates to mean anything: keep only its RSS for the maxima.
        partial = Sample {
            server_rss_kib: last.server_rss_kib,
            ..Sample::default()
        };
    }
    let summary = summarize(&first, &last, &samples, &partial);
    (samples, summary)
}

/// Whether the last, incomplete interval's rates may count in the maxima: when it is
/// the whole window, or at least half an interval long. A few milliseconds would not
/// do: the server's CPU time moves in 10 ms clock ticks and io_ticks in 1 ms steps, so
/// a sliver of an interval can show 0 % or 500 %.
fn partial_rates_usable(samples: &[Sample], prev: &Reading, last: &Reading, i: Duration) -> bool {
    samples.is_empty() || last.t_s - prev.t_s >= i.as_secs_f64() / 2.0
}

#[cfg(test)]
mod tests {
    use super::*;

    // Real text from a KVM guest's /proc (2 CPUs, one virtio disk).
    const PROC_STAT: &str = "\
cpu  302418 0 98026 1601829 5227 0 39979 199 0 0
cpu0 149173 0 45885 808055 1440 0 19570 100 0 0
cpu1 153245 0 52141 793774 3787 0 20409 99 0 0
intr 80526107 0 9 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0
ctxt 156471617
btime 1763885413
processes 1186549
procs_running 2
procs_blocked 0
softirq 49843061 2 14436553 1 10497455 1014286 0 1105 12773488 0 11016171
";

    const DISKSTATS: &str = "   7       0 loop0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0
   7       1 loop1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0
 254       0 vda 791043 133279 61457922 424087 375862 173561 87891552 283667 0 90968 728352 55027 9 85778328 13006 63034 7591
 254       1 vda1 790000 133279 61400000 424000 375000 173561 87800000 283000 0 90000 728000 55027 9 85778328 13006 0 0
 253       0 zram0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0
 259       0 nvme0n1 10 0 80 1 20 0 160 2 0 3 3
 259       1 nvme0n1p1 10 0 80 1 20 0 160 2 0 3 3
";

    const NET_DEV: &str = "\
Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
    lo: 204905184221 164914171    0    0    0     0          0         0 204905184221 164914171    0    0    0     0       0          0
  ifb0:       0       0    0    0    0     0          0         0        0       0    0    0    0     0       0          0
  eth0: 199901376    6964    0    0    0     0          0         0   345732    3784    0    0    0     0       0          0
";

    #[test]
    fn proc_stat_cpu_line_and_ctxt() {
        let s = parse_proc_stat(PROC_STAT);
        assert_eq!(s.cpu.0, [302418, 0, 98026, 1601829, 5227, 0, 39979, 199]);
        assert_eq!(s.ctxt, 156471617);
    }

    #[test]
    fn proc_stat_odd_input_is_zeros() {
        assert_eq!(parse_proc_stat(""), ProcStat::default());
        let s = parse_proc_stat("cpu 1 2 x\nctxt\n");
        assert_eq!(s.cpu.0, [1, 2, 0, 0, 0, 0, 0, 0]);
        assert_eq!(s.ctxt, 0);
    }

    #[test]
    fn diskstats_fields() {
        let d = parse_diskstats(DISKSTATS);
        assert_eq!(d.len(), 7);
        let vda = &d[2];
        assert_eq!(vda.name, "vda");
        assert_eq!(vda.sectors_read, 61457922);
        assert_eq!(vda.sectors_written, 87891552);
        assert_eq!(vda.io_ticks_ms, 90968);
        assert!(parse_diskstats("8 0 sda 1 2\n\n").is_empty());
    }

    #[test]
    fn whole_disks_with_and_without_sysfs() {
        let names = |v: Vec<DiskStat>| v.into_iter().map(|d| d.name).collect::<Vec<_>>();
        let sys: HashSet<String> = ["loop0", "loop1", "vda", "zram0", "nvme0n1"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let with = whole_disks(parse_diskstats(DISKSTATS), Some(&sys));
        assert_eq!(names(with), ["vda", "nvme0n1"]);
        let without = whole_disks(parse_diskstats(DISKSTATS), None);
        assert_eq!(names(without), ["vda", "nvme0n1"]);
    }

    #[test]
    fn net_dev_lo() {
        let n = parse_net_dev(NET_DEV);
        assert_eq!(n.len(), 3);
        assert_eq!(n[0].name, "lo");
        assert_eq!(n[0].rx_bytes, 204905184221);
        assert_eq!(n[2].name, "eth0");
        assert_eq!(n[2].tx_bytes, 345732);
        // No space after the colon once counters get large.
        let n = parse_net_dev("  lo:12345678901234 5 0 0 0 0 0 0 99 5 0 0 0 0 0 0\n");
        assert_eq!(n[0].rx_bytes, 12345678901234);
        assert_eq!(n[0].tx_bytes, 99);
    }

    fn reading(t_s: f64, cpu: [u64; 8], ctxt: u64, disk: (u64, u64, u64), lo: u64) -> Reading {
        Reading {
            t_s,
            stat: ProcStat {
                cpu: CpuTimes(cpu),
                ctxt,
            },
            disks: vec![DiskStat {
                name: "vda".into(),
                sectors_read: disk.0,
                sectors_written: disk.1,
                io_ticks_ms: disk.2,
            }],
            lo_rx_bytes: lo,
            server_cpu_s: t_s * 1.5,
            server_rss_kib: 1000 + t_s as u64,
        }
    }

    #[test]
    fn sample_rates() {
        let a = reading(1.0, [100, 0, 50, 800, 10, 0, 20, 20], 1000, (0, 0, 100), 0);
        let b = reading(
            3.0,
            [200, 0, 100, 840, 10, 0, 20, 30],
            5000,
            (100, 200, 700),
            4000,
        );
        let s = sample_between(&a, &b);
        assert_eq!(s.t_s, 3.0);
        assert_eq!(s.cpu_user_pct, 50.0);
        assert_eq!(s.cpu_system_pct, 25.0);
        assert_eq!(s.cpu_idle_pct, 20.0);
        assert_eq!(s.cpu_steal_pct, 5.0);
        assert!((s.server_cpu_pct - 150.0).abs() < 1e-9);
        assert_eq!(s.ctx_switches_per_s, 2000.0);
        assert_eq!(s.disk_read_bytes_per_s, 100.0 * 512.0 / 2.0);
        assert_eq!(s.disk_write_bytes_per_s, 200.0 * 512.0 / 2.0);
        assert_eq!(s.disk_util_pct, 30.0);
        assert_eq!(s.loopback_bytes_per_s, 2000.0);
        assert_eq!(s.server_rss_kib, 1003);
    }

    #[test]
    fn summary_totals_and_maxima() {
        let a = reading(0.0, [0; 8], 0, (0, 0, 0), 0);
        let b = reading(1.0, [50, 0, 0, 50, 0, 0, 0, 0], 10, (2, 0, 900), 10);
        let c = reading(2.0, [50, 0, 0, 150, 0, 0, 0, 0], 30, (4, 2, 1000), 30);
        let samples = vec![sample_between(&a, &b)];
        let partial = sample_between(&b, &c);
        let s = summarize(&a, &c, &samples, &partial);
        assert_eq!(s.seconds, 2.0);
        assert_eq!(s.cpu_user_pct, 25.0);
        assert_eq!(s.cpu_idle_pct, 75.0);
        assert_eq!(s.ctx_switches, 30);
        assert_eq!(s.disk_read_bytes, 4 * 512);
        assert_eq!(s.disk_write_bytes, 2 * 512);
        assert_eq!(s.disk_util_pct_max, 90.0);
        assert_eq!(s.loopback_bytes, 30);
        assert_eq!(s.server_rss_kib_max, 1002);
        assert!((s.server_cpu_pct_mean - 150.0).abs() < 1e-9);
    }

    #[test]
    fn counters_going_backwards_give_zero_not_panic() {
        let a = reading(1.0, [9; 8], 10, (9, 9, 9), 9);
        let b = reading(1.0, [0; 8], 0, (0, 0, 0), 0);
        let s = sample_between(&a, &b);
        assert_eq!(
            s,
            Sample {
                t_s: 1.0,
                server_rss_kib: 1001,
                ..Sample::default()
            }
        );
    }
}
