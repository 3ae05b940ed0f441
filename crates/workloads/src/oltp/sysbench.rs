//! `kind = "sysbench"`: Debian's real sysbench 1.0.20 against the same sandbox and the
//! same prepared data as the native oltp workload, with the same parameters, its output
//! parsed into the same [`RunRecord`], so the two can be checked against each other.
//!
//! What comes from sysbench: transactions, queries, ignored errors and reconnects of the
//! measured window (its final report), per-second throughput from `--report-interval=1`,
//! and latency percentiles from its `--histogram` (sysbench's buckets, so percentiles are
//! as coarse as those: about 1.5% apart). Warmup: sysbench 1.0.20 has no `--warmup-time`,
//! so the run lasts warmup + duration with `--report-checkpoints=WARMUP`, which prints and
//! resets all statistics at the end of the warmup; the final report covers the measured
//! part only. Client CPU is the sysbench process's user + system time after the warmup
//! (its /proc stat at the checkpoint subtracted from its rusage at exit). Not available:
//! per-statement latencies, and the zipfian distribution (absent from sysbench 1.0.20).

use super::{Distribution, OltpConfig};
use bakeoff_engine::{Interval, LoadError, Measure, Percentiles, Phase, Phases, RunRecord};
use bakeoff_sqlclient::driver::Drive;
use bakeoff_sqlclient::{Db, Wire};
use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::sync::atomic::Ordering;
use std::time::Instant;

/// The sysbench command line for a measured run (`run`), without spawning it.
pub fn command(db: &Db, cfg: &OltpConfig, phases: &Phases, seed: u64) -> Command {
    let mut c = base(db, cfg, seed);
    let warmup = phases
        .warmup
        .as_secs()
        .max(if phases.warmup.is_zero() { 0 } else { 1 });
    let measure = match phases.measure {
        Measure::Duration(d) => d.as_secs().max(1),
        Measure::Ops(_) => 10,
    };
    c.arg(format!("--threads={}", cfg.connections))
        .arg(format!("--time={}", warmup + measure))
        .arg("--report-interval=1")
        .arg("--histogram=on")
        .arg("--percentile=99");
    if warmup > 0 {
        c.arg(format!("--report-checkpoints={warmup}"));
    }
    c.arg("run");
    c
}

/// The sysbench command line that creates and loads the tables itself (`prepare`).
pub fn prepare_command(db: &Db, cfg: &OltpConfig) -> Command {
    let mut c = base(db, cfg, 1);
    c.arg(format!("--threads={}", cfg.tables.clamp(1, 8)));
    c.arg("prepare");
    c
}

fn onoff(b: bool) -> &'static str {
    if b {
        "on"
    } else {
        "off"
    }
}

fn base(db: &Db, cfg: &OltpConfig, seed: u64) -> Command {
    let mut c = Command::new("sysbench");
    c.arg(cfg.test.name());
    // sysbench's driver is the server's wire protocol's (its option prefix too).
    let wire = db.dialect.wire();
    let p = match wire {
        Wire::Mysql => "mysql",
        Wire::Postgres => "pgsql",
    };
    c.arg(format!("--db-driver={p}"));
    match (&db.socket, db.via_socket, wire) {
        (Some(s), true, Wire::Mysql) => c.arg(format!("--mysql-socket={}", s.display())),
        // libpq takes a host that starts with '/' as the socket directory.
        (Some(s), true, Wire::Postgres) => c
            .arg(format!("--pgsql-host={}", s.display()))
            .arg(format!("--pgsql-port={}", db.addr.port())),
        _ => c
            .arg(format!("--{p}-host={}", db.addr.ip()))
            .arg(format!("--{p}-port={}", db.addr.port())),
    };
    c.arg(format!("--{p}-user={}", db.user))
        .arg(format!("--{p}-password={}", db.password))
        .arg(format!("--{p}-db={}", db.database));
    for (k, v) in [
        ("tables", u64::from(cfg.tables)),
        ("table-size", cfg.table_size),
        ("point-selects", u64::from(cfg.point_selects)),
        ("simple-ranges", u64::from(cfg.simple_ranges)),
        ("sum-ranges", u64::from(cfg.sum_ranges)),
        ("order-ranges", u64::from(cfg.order_ranges)),
        ("distinct-ranges", u64::from(cfg.distinct_ranges)),
        ("range-size", u64::from(cfg.range_size)),
        ("index-updates", u64::from(cfg.index_updates)),
        ("non-index-updates", u64::from(cfg.non_index_updates)),
        ("delete-inserts", u64::from(cfg.delete_inserts)),
    ] {
        c.arg(format!("--{k}={v}"));
    }
    c.arg(format!("--skip-trx={}", onoff(cfg.skip_trx)))
        .arg(format!("--auto-inc={}", onoff(cfg.auto_inc)))
        .arg(format!("--secondary={}", onoff(cfg.secondary)))
        .arg(format!(
            "--create-secondary={}",
            onoff(cfg.create_secondary)
        ))
        .arg(format!(
            "--db-ps-mode={}",
            if cfg.prepared { "auto" } else { "disable" }
        ))
        .arg(format!("--rand-seed={}", seed % 2_147_483_647 + 1));
    if let (Wire::Mysql, Some(e)) = (wire, &cfg.engine) {
        c.arg(format!("--mysql-storage-engine={e}"));
    }
    match cfg.distribution {
        Distribution::Uniform => c.arg("--rand-type=uniform"),
        Distribution::Gaussian { iter } => c
            .arg("--rand-type=gaussian")
            .arg(format!("--rand-spec-iter={iter}")),
        Distribution::Special { pct, res, iter } => c
            .arg("--rand-type=special")
            .arg(format!("--rand-spec-iter={iter}"))
            .arg(format!("--rand-spec-pct={pct}"))
            .arg(format!("--rand-spec-res={res}")),
        Distribution::Pareto { h } => c
            .arg("--rand-type=pareto")
            .arg(format!("--rand-pareto-h={h}")),
        // Not in sysbench 1.0.20; refused before the run (see the runner's checks).
        Distribution::Zipfian { .. } => c.arg("--rand-type=uniform"),
    };
    // MariaDB's error numbers, which sysbench's mysql driver reports.
    if wire == Wire::Mysql {
        let codes: Vec<&str> = cfg
            .ignore_errors
            .iter()
            .filter_map(|k| match k.as_str() {
                "deadlock" => Some("1213"),
                "lock_wait_timeout" => Some("1205"),
                "duplicate_key" => Some("1062"),
                other if other.chars().all(|c| c.is_ascii_digit()) => Some(other),
                _ => None,
            })
            .collect();
        if !codes.is_empty() {
            c.arg(format!("--mysql-ignore-errors={}", codes.join(",")));
        }
    }
    c
}

/// What sysbench's final report says.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Parsed {
    pub transactions: u64,
    pub tps: f64,
    pub queries: u64,
    pub ignored_errors: u64,
    pub reconnects: u64,
    pub total_time_s: f64,
    pub latency_ms: Percentiles,
    /// Per-second reports after the warmup checkpoint: (second, tps, p99 ms).
    pub intervals: Vec<(f64, f64, f64)>,
}

/// Parses a whole `sysbench ... run` output; the statistics of the last report block.
pub fn parse(output: &str) -> Result<Parsed, String> {
    if let Some(fatal) = output.lines().find(|l| l.contains("FATAL")) {
        return Err(fatal.trim().to_string());
    }
    // After a checkpoint, only the last block counts.
    let last_block = output
        .rfind("SQL statistics:")
        .ok_or("sysbench printed no statistics")?;
    let checkpoint_at = output[..last_block].rfind("Checkpoint report");
    let tail = &output[last_block..];
    let mut p = Parsed::default();
    let first_num = |l: &str| -> f64 {
        l.split(|c: char| !(c.is_ascii_digit() || c == '.'))
            .find(|s| !s.is_empty() && s.parse::<f64>().is_ok())
            .and_then(|s| s.parse().ok())
            .unwrap_or(0.0)
    };
    let per_sec = |l: &str| -> f64 { l.split('(').nth(1).map(&first_num).unwrap_or(0.0) };
    for line in tail.lines() {
        let l = line.trim();
        let value = |l: &str| first_num(l.split_once(':').map_or(l, |(_, v)| v));
        if l.starts_with("transactions:") {
            p.transactions = value(l) as u64;
            p.tps = per_sec(l);
        } else if l.starts_with("queries:") {
            p.queries = value(l) as u64;
        } else if l.starts_with("ignored errors:") {
            p.ignored_errors = value(l) as u64;
        } else if l.starts_with("reconnects:") {
            p.reconnects = value(l) as u64;
        } else if l.starts_with("total time:") {
            p.total_time_s = value(l);
        } else if l.starts_with("avg:") {
            p.latency_ms.mean = value(l);
        } else if l.starts_with("max:") {
            p.latency_ms.max = value(l);
        } else if l.starts_with("99th percentile:") {
            p.latency_ms.p99 = value(l);
        }
    }
    if let Some(h) = histogram(&output[checkpoint_at.unwrap_or(0)..last_block]) {
        let at = |q: f64| quantile(&h, q);
        p.latency_ms.p50 = at(0.5);
        p.latency_ms.p90 = at(0.9);
        p.latency_ms.p999 = at(0.999);
        if p.latency_ms.p99 == 0.0 {
            p.latency_ms.p99 = at(0.99);
        }
    }
    let from = checkpoint_at.unwrap_or(0);
    for line in output[from..last_block].lines() {
        // [ 3s ] thds: 4 tps: 1234.56 qps: ... lat (ms,99%): 5.00 err/s: ...
        let Some(rest) = line.trim().strip_prefix('[') else {
            continue;
        };
        let Some((secs, stats)) = rest.split_once("s ]") else {
            continue;
        };
        let field = |name: &str| stats.split(name).nth(1).map(&first_num);
        if let (Ok(t), Some(tps)) = (secs.trim().parse::<f64>(), field("tps:")) {
            p.intervals.push((t, tps, field("%):").unwrap_or(0.0)));
        }
    }
    if p.transactions == 0 && p.queries == 0 {
        return Err("sysbench completed no transaction".into());
    }
    Ok(p)
}

/// The `--histogram` block before `end`: (value in ms, count) rows.
fn histogram(text: &str) -> Option<Vec<(f64, u64)>> {
    let start = text.rfind("Latency histogram")?;
    let rows: Vec<(f64, u64)> = text[start..]
        .lines()
        .skip(1)
        .filter_map(|l| {
            let (value, rest) = l.split_once('|')?;
            let count = rest.split_whitespace().last()?.parse().ok()?;
            Some((value.trim().parse().ok()?, count))
        })
        .collect();
    (!rows.is_empty()).then_some(rows)
}

fn quantile(h: &[(f64, u64)], q: f64) -> f64 {
    let total: u64 = h.iter().map(|(_, c)| c).sum();
    let want = (q * total as f64).ceil() as u64;
    let mut seen = 0;
    for (v, c) in h {
        seen += c;
        if seen >= want.max(1) {
            return *v;
        }
    }
    h.last().map_or(0.0, |(v, _)| *v)
}

/// user + system CPU seconds of a live process, from /proc.
fn proc_cpu_s(pid: u32) -> f64 {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return 0.0;
    };
    let Some(after) = stat.rsplit(')').next() else {
        return 0.0;
    };
    let f: Vec<&str> = after.split_whitespace().collect();
    // SAFETY: sysconf has no preconditions.
    let hz = match unsafe { libc::sysconf(libc::_SC_CLK_TCK) } {
        v if v > 0 => v as f64,
        _ => 100.0,
    };
    let t = |i: usize| f.get(i).and_then(|s| s.parse::<f64>().ok()).unwrap_or(0.0);
    (t(11) + t(12)) / hz
}

/// Runs sysbench for one measured run and returns what it measured.
pub fn run(db: &Db, cfg: &OltpConfig, seed: u64, d: &Drive) -> Result<RunRecord, LoadError> {
    let Drive {
        phases,
        hooks,
        live,
        cancel,
    } = *d;
    let mut cmd = command(db, cfg, phases, seed);
    cmd.stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .stdin(Stdio::null());
    cmd.process_group(0);
    let mut child = cmd.spawn().map_err(|e| {
        LoadError::Sql(format!(
            "cannot run sysbench: {e}; apt-get install sysbench"
        ))
    })?;
    let pid = child.id();
    let guard = KillOnDrop(pid as i32);
    let epoch = Instant::now();
    live.set_phase(if phases.warmup.is_zero() {
        Phase::Measure
    } else {
        Phase::Warmup
    });
    let stdout = child
        .stdout
        .take()
        .ok_or(LoadError::Sql("no sysbench output".into()))?;
    let stderr = child.stderr.take();
    let err_reader = std::thread::spawn(move || {
        let mut s = String::new();
        if let Some(mut e) = stderr {
            let _ = std::io::Read::read_to_string(&mut e, &mut s);
        }
        s
    });
    let warmup_s = phases.warmup.as_secs();
    let mut output = String::new();
    let mut cpu_at_warmup = 0.0;
    let mut measuring = warmup_s == 0;
    if measuring {
        hooks.measure_started();
        live.set_measure_start(epoch.elapsed().as_nanos() as u64);
    }
    let mut ended = false;
    let mut ops = 0.0;
    let mut stats_blocks = 0;
    let final_block = if warmup_s > 0 { 2 } else { 1 };
    for line in BufReader::new(stdout).lines() {
        let Ok(line) = line else { break };
        if cancel.load(Ordering::SeqCst) {
            break;
        }
        if !measuring && line.contains("Checkpoint report") {
            cpu_at_warmup = proc_cpu_s(pid);
            hooks.measure_started();
            live.set_measure_start(epoch.elapsed().as_nanos() as u64);
            live.set_phase(Phase::Measure);
            measuring = true;
            ops = 0.0;
        } else if measuring && !ended && line.starts_with('[') && line.contains("tps:") {
            if let Some(tps) = line
                .split("tps:")
                .nth(1)
                .and_then(|s| s.split_whitespace().next())
                .and_then(|s| s.parse::<f64>().ok())
            {
                ops += tps;
                live.set_progress(ops as u64, epoch.elapsed().as_nanos() as u64);
            }
        } else if line.starts_with("SQL statistics:") {
            // With a warmup, the first block is the checkpoint's; the last one ends the run.
            stats_blocks += 1;
        }
        if measuring && !ended && line.starts_with("SQL statistics:") && stats_blocks == final_block
        {
            hooks.measure_ended();
            ended = true;
        }
        output.push_str(&line);
        output.push('\n');
    }
    if cancel.load(Ordering::SeqCst) {
        drop(guard);
        let _ = child.wait();
        return Err(LoadError::Cancelled);
    }
    let (status, rusage) = wait4(pid as i32);
    std::mem::forget(guard);
    let _ = child.try_wait();
    let stderr = err_reader.join().unwrap_or_default();
    if !ended {
        hooks.measure_ended();
    }
    live.set_phase(Phase::Done);
    let parsed = parse(&output).map_err(|m| {
        let err_line = stderr.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
        LoadError::Sql(
            format!("sysbench failed ({status}): {m} {err_line}")
                .trim()
                .to_string(),
        )
    })?;
    let client_cpu_s = (rusage - cpu_at_warmup).max(0.0);
    // "total time" counts the warmup too; the rate is of the measured part only.
    let elapsed_s = if parsed.tps > 0.0 {
        parsed.transactions as f64 / parsed.tps
    } else {
        parsed.total_time_s
    }
    .max(1e-9);
    let ms = |v: f64| v * 1000.0;
    let mut r = RunRecord {
        ops: parsed.transactions,
        elapsed_s,
        ops_per_s: parsed.tps,
        latency_us: Percentiles {
            p50: ms(parsed.latency_ms.p50),
            p90: ms(parsed.latency_ms.p90),
            p99: ms(parsed.latency_ms.p99),
            p999: ms(parsed.latency_ms.p999),
            max: ms(parsed.latency_ms.max),
            mean: ms(parsed.latency_ms.mean),
        },
        queries: parsed.queries,
        reconnects: parsed.reconnects,
        client_cpu_s,
        client_threads: cfg.connections,
        client_rss_kib: 0,
        ..RunRecord::default()
    };
    if parsed.ignored_errors > 0 {
        r.errors.insert("ignored".into(), parsed.ignored_errors);
    }
    r.by_command.insert("transaction".into(), r.ops);
    let warm = warmup_s as f64;
    r.intervals = parsed
        .intervals
        .iter()
        .map(|(t, tps, p99)| Interval {
            t_s: t - warm,
            ops: *tps as u64,
            ops_per_s: *tps,
            p50_us: 0.0,
            p99_us: p99 * 1000.0,
            max_us: 0.0,
        })
        .collect();
    // sysbench runs one OS thread per connection: client-bound when it used most of the
    // machine's CPUs.
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
    r.client_bound = client_cpu_s >= 0.9 * cores * elapsed_s;
    Ok(r)
}

/// Reaps `pid` and returns (status text, user + system CPU seconds of its whole life).
fn wait4(pid: i32) -> (String, f64) {
    let mut status = 0i32;
    // SAFETY: an all-zero rusage is valid.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: wait4 on our own child with valid out-pointers.
    let rc = unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
    if rc != pid {
        return ("unknown status".into(), 0.0);
    }
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    let text = if libc::WIFEXITED(status) {
        format!("exit status {}", libc::WEXITSTATUS(status))
    } else {
        format!("signal {}", libc::WTERMSIG(status))
    };
    (text, tv(ru.ru_utime) + tv(ru.ru_stime))
}

/// Kills sysbench's process group unless the run reaped it.
struct KillOnDrop(i32);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        // SAFETY: the group is sysbench's own (process_group(0)).
        unsafe { libc::kill(-self.0, libc::SIGKILL) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bakeoff_sqlclient::Dialect;
    use std::time::Duration;

    const OUT: &str = "sysbench 1.0.20 (using system LuaJIT 2.1.0-beta3)

Running the test with following options:
Number of threads: 4
Report intermediate results every 1 second(s)
Initializing random number generator from seed (42).

Initializing worker threads...

Threads started!

[ 1s ] thds: 4 tps: 900.00 qps: 14400.00 (r/w/o: 12600.00/0.00/1800.00) lat (ms,99%): 9.00 err/s: 0.00 reconn/s: 0.00
[ 1s ] Checkpoint report:
SQL statistics:
    queries performed:
        read:                            12600
        write:                           0
        other:                           1800
        total:                           14400
    transactions:                        900    (900.00 per sec.)
    queries:                             14400  (14400.00 per sec.)
    ignored errors:                      0      (0.00 per sec.)
    reconnects:                          0      (0.00 per sec.)

[ 2s ] thds: 4 tps: 1000.00 qps: 16000.00 (r/w/o: 14000.00/0.00/2000.00) lat (ms,99%): 8.00 err/s: 0.00 reconn/s: 0.00
[ 3s ] thds: 4 tps: 1100.00 qps: 17600.00 (r/w/o: 15400.00/0.00/2200.00) lat (ms,99%): 7.50 err/s: 0.00 reconn/s: 0.00
Latency histogram (values are in milliseconds)
       value  ------------- distribution ------------- count
       2.000 |****************************************  1500
       4.000 |*********                                 400
       8.000 |*                                         90
      16.000 |                                          10
 
SQL statistics:
    queries performed:
        read:                            29400
        write:                           0
        other:                           4200
        total:                           33600
    transactions:                        2100   (1049.50 per sec.)
    queries:                             33600  (16792.00 per sec.)
    ignored errors:                      2      (1.00 per sec.)
    reconnects:                          0      (0.00 per sec.)

General statistics:
    total time:                          2.0010s
    total number of events:              2100

Latency (ms):
         min:                                    1.10
         avg:                                    3.81
         max:                                   20.50
         99th percentile:                        8.43
         sum:                                 8000.00
";

    #[test]
    fn parses_the_last_block_after_the_checkpoint() {
        let p = parse(OUT).unwrap();
        assert_eq!(p.transactions, 2100);
        assert_eq!(p.tps, 1049.5);
        assert_eq!(p.queries, 33600);
        assert_eq!(p.ignored_errors, 2);
        assert_eq!(p.total_time_s, 2.001);
        assert_eq!(p.latency_ms.p99, 8.43);
        assert_eq!(p.latency_ms.mean, 3.81);
        assert_eq!(p.latency_ms.max, 20.5);
        assert_eq!(p.latency_ms.p50, 2.0);
        assert_eq!(p.latency_ms.p90, 4.0);
        assert_eq!(p.intervals, vec![(2.0, 1000.0, 8.0), (3.0, 1100.0, 7.5)]);
    }

    #[test]
    fn fatal_lines_are_the_error() {
        let e =
            parse("FATAL: unable to connect to MySQL server on host '127.0.0.1'\n").unwrap_err();
        assert!(e.contains("unable to connect"));
    }

    #[test]
    fn unix_transport_points_sysbench_at_the_socket() {
        let mut db = Db {
            dialect: Dialect::Mariadb,
            addr: "127.0.0.1:3307".parse().unwrap(),
            socket: Some("/tmp/sb/mysqld.sock".into()),
            user: "bakeoff".into(),
            password: "pw".into(),
            database: "bakeoff".into(),
            via_socket: true,
        };
        let phases = Phases {
            warmup: Duration::from_secs(0),
            measure: Measure::Duration(Duration::from_secs(1)),
        };
        let args = |db: &Db| -> Vec<String> {
            command(db, &OltpConfig::default(), &phases, 1)
                .get_args()
                .map(|a| a.to_string_lossy().to_string())
                .collect()
        };
        let my = args(&db);
        assert!(
            my.contains(&"--mysql-socket=/tmp/sb/mysqld.sock".to_string()),
            "{my:?}"
        );
        assert!(!my.iter().any(|a| a.starts_with("--mysql-host")), "{my:?}");
        db.dialect = Dialect::Postgres;
        db.socket = Some("/tmp/sb".into());
        let pg = args(&db);
        assert!(pg.contains(&"--pgsql-host=/tmp/sb".to_string()), "{pg:?}");
        assert!(pg.contains(&"--pgsql-port=3307".to_string()), "{pg:?}");
        assert_eq!(db.socket_file(), Some("/tmp/sb/.s.PGSQL.3307".into()));
    }

    #[test]
    fn command_line_maps_the_keys() {
        let db = Db {
            dialect: Dialect::Postgres,
            addr: "127.0.0.1:5433".parse().unwrap(),
            socket: None,
            user: "bakeoff".into(),
            password: "pw".into(),
            database: "bakeoff".into(),
            via_socket: false,
        };
        let cfg = OltpConfig {
            connections: 16,
            tables: 4,
            ..OltpConfig::default()
        };
        let phases = Phases {
            warmup: Duration::from_secs(2),
            measure: Measure::Duration(Duration::from_secs(10)),
        };
        let c = command(&db, &cfg, &phases, 7);
        let args: Vec<String> = c
            .get_args()
            .map(|a| a.to_string_lossy().to_string())
            .collect();
        for want in [
            "oltp_read_write",
            "--db-driver=pgsql",
            "--pgsql-port=5433",
            "--tables=4",
            "--threads=16",
            "--time=12",
            "--report-checkpoints=2",
            "--rand-type=special",
            "--rand-spec-pct=1",
            "run",
        ] {
            assert!(
                args.iter().any(|a| a == want),
                "{want} missing from {args:?}"
            );
        }
    }
}
