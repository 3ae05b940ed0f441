//! `kind = "redis-benchmark"`: Debian's redis-benchmark (redis-tools) against a Redis
//! sandbox, beside the native kv workload, as sysbench runs beside the native oltp: a
//! cross-check users trust.
//!
//! redis-benchmark runs a number of requests per test, not a duration. A run is two
//! invocations: a calibration (the warmup: 10,000 requests per test, or as many as
//! [`Phases::warmup`] takes at the rate it finds) and the measured one, whose `-n` is what
//! the calibrated rate fills the measured window with (or `ops` split over the tests).
//! The tests run one after another (redis-benchmark's order, not `-t`'s).
//!
//! What the record holds, from `--csv`: per test (`kinds`) its requests and latency (p50,
//! p99, max; p90 and p99.9 are not printed, so p95 stands in for p90 and p99 for p99.9,
//! said in the docs); ops = requests over all tests, elapsed = the sum of each test's
//! requests / its rate, ops/s = ops / elapsed; the run's latency: the mean of the tests'
//! p50 and the largest p95, p99 and max. Client CPU is redis-benchmark's user + system
//! time. Values are redis-benchmark's own (`xxx...`): nothing is verified.

mod kind;
mod workload;

pub use kind::{RedisBenchmarkKeys, RedisBenchmarkKind, TESTS};
pub use workload::RedisBenchmark;

use crate::tool::{self, Finished};
use bakeoff_engine::{KindStats, LoadError, Measure, Percentiles, Phases, RunRecord};
use std::net::SocketAddr;
use std::process::Command;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// The program: Debian's redis-tools package.
pub const PROGRAM: &str = "redis-benchmark";
/// Requests per test of the calibration run.
const CALIBRATION_REQUESTS: u64 = 10_000;
/// The longest a redis-benchmark invocation may run.
const TIMEOUT: Duration = Duration::from_secs(3600);

/// One redis-benchmark shape.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    pub connections: usize,
    pub pipeline: usize,
    /// `-t`: lowercase test names.
    pub tests: Vec<String>,
    pub keys: u64,
    pub value_size: usize,
}

/// One test's line of `--csv` output.
#[derive(Debug, Clone, PartialEq)]
pub struct TestResult {
    /// Lowercase, as `-t` names it.
    pub test: String,
    pub rps: f64,
    pub avg_ms: f64,
    pub p50_ms: f64,
    pub p95_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
}

/// The command line for `requests` per test.
pub fn command(addr: SocketAddr, cfg: &Config, requests: u64) -> Command {
    let mut c = Command::new(PROGRAM);
    c.args(["-h", &addr.ip().to_string(), "-p", &addr.port().to_string()])
        .args(["-c", &cfg.connections.to_string()])
        .args(["-P", &cfg.pipeline.to_string()])
        .args(["-n", &requests.to_string()])
        .args(["-r", &cfg.keys.to_string()])
        .args(["-d", &cfg.value_size.to_string()])
        .args(["-t", &cfg.tests.join(",")])
        .arg("--csv");
    c
}

/// Parses `--csv` output: a header line, then one quoted line per test.
pub fn parse(out: &str) -> Result<Vec<TestResult>, String> {
    let mut lines = out.lines().map(str::trim).filter(|l| !l.is_empty());
    let header: Vec<String> = match lines.next() {
        Some(h) => fields(h),
        None => return Err("redis-benchmark printed nothing".into()),
    };
    let col = |name: &str| {
        header
            .iter()
            .position(|h| h == name)
            .ok_or_else(|| format!("redis-benchmark's CSV has no {name} column"))
    };
    let [test, rps, avg, p50, p95, p99, max] = [
        "test",
        "rps",
        "avg_latency_ms",
        "p50_latency_ms",
        "p95_latency_ms",
        "p99_latency_ms",
        "max_latency_ms",
    ]
    .map(col);
    let (test, rps, avg, p50, p95, p99, max) = (test?, rps?, avg?, p50?, p95?, p99?, max?);
    let mut results = Vec::new();
    for l in lines {
        let f = fields(l);
        let num = |i: usize| -> Result<f64, String> {
            f.get(i)
                .and_then(|v| v.parse().ok())
                .ok_or_else(|| format!("unexpected redis-benchmark line {l:?}"))
        };
        results.push(TestResult {
            test: f
                .get(test)
                .map(|t| t.to_ascii_lowercase())
                .ok_or_else(|| format!("unexpected redis-benchmark line {l:?}"))?,
            rps: num(rps)?,
            avg_ms: num(avg)?,
            p50_ms: num(p50)?,
            p95_ms: num(p95)?,
            p99_ms: num(p99)?,
            max_ms: num(max)?,
        });
    }
    if results.is_empty() {
        return Err("redis-benchmark reported no test".into());
    }
    if let Some(r) = results.iter().find(|r| !r.rps.is_finite() || r.rps <= 0.0) {
        return Err(format!(
            "redis-benchmark's {} ran at {} requests/s",
            r.test, r.rps
        ));
    }
    Ok(results)
}

/// A CSV line's fields, quotes removed (redis-benchmark quotes every field, commas never
/// appear inside one).
fn fields(line: &str) -> Vec<String> {
    line.split(',')
        .map(|f| f.trim().trim_matches('"').to_string())
        .collect()
}

/// The record of `requests` per test at the results' rates, with redis-benchmark's CPU.
pub fn record(results: &[TestResult], requests: u64, cpu_s: f64, connections: usize) -> RunRecord {
    let us = |ms: f64| ms * 1000.0;
    let mut r = RunRecord {
        client_cpu_s: cpu_s,
        client_threads: 1,
        ..RunRecord::default()
    };
    for t in results {
        r.ops += requests;
        r.elapsed_s += requests as f64 / t.rps;
        r.by_command.insert(t.test.clone(), requests);
        r.kinds.insert(
            t.test.clone(),
            KindStats {
                count: requests,
                latency_us: Percentiles {
                    p50: us(t.p50_ms),
                    p90: us(t.p95_ms),
                    p99: us(t.p99_ms),
                    p999: us(t.p99_ms),
                    max: us(t.max_ms),
                    mean: us(t.avg_ms),
                },
                hist: Vec::new(),
            },
        );
    }
    let n = results.len() as f64;
    let most = |f: fn(&TestResult) -> f64| results.iter().map(f).fold(0.0, f64::max);
    r.latency_us = Percentiles {
        p50: us(results.iter().map(|t| t.p50_ms).sum::<f64>() / n),
        p90: us(most(|t| t.p95_ms)),
        p99: us(most(|t| t.p99_ms)),
        p999: us(most(|t| t.p99_ms)),
        max: us(most(|t| t.max_ms)),
        mean: us(results.iter().map(|t| t.avg_ms).sum::<f64>() / n),
    };
    r.queries = r.ops;
    r.ops_per_s = r.ops as f64 / r.elapsed_s.max(1e-9);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
    r.client_bound = cpu_s >= 0.9 * cores * r.elapsed_s;
    let _ = connections;
    r
}

/// One invocation; its parsed results and CPU seconds.
fn invoke(
    addr: SocketAddr,
    cfg: &Config,
    requests: u64,
    cancel: &AtomicBool,
) -> Result<(Vec<TestResult>, f64), LoadError> {
    let Finished {
        out,
        err,
        status,
        cpu_s,
    } = tool::run(
        command(addr, cfg, requests),
        cancel,
        TIMEOUT,
        PROGRAM,
        "apt-get install redis-tools",
    )?;
    let first_err = err.lines().map(str::trim).find(|l| !l.is_empty());
    if status != "exit status 0" {
        return Err(LoadError::Sql(format!(
            "redis-benchmark failed ({status}): {}",
            first_err.unwrap_or("no message")
        )));
    }
    let results = parse(&out).map_err(|m| {
        LoadError::Sql(match first_err {
            Some(e) => format!("{m}: {e}"),
            None => m,
        })
    })?;
    Ok((results, cpu_s))
}

/// Requests per test that fill `window` at the slowest calibrated test's rate (the tests
/// run one after another).
pub fn requests_for(calibration: &[TestResult], window: Duration) -> u64 {
    let slowest = calibration
        .iter()
        .map(|t| t.rps)
        .fold(f64::INFINITY, f64::min);
    let per_test = window.as_secs_f64() / calibration.len().max(1) as f64;
    ((slowest * per_test) as u64).max(1000)
}

/// A calibration run (the warmup), then the measured run; `measure_started` and
/// `measure_ended` are called around the measured one.
pub fn run(
    addr: SocketAddr,
    cfg: &Config,
    phases: &Phases,
    hooks: &dyn bakeoff_engine::PhaseHooks,
    live: &bakeoff_engine::Live,
    cancel: &AtomicBool,
) -> Result<RunRecord, LoadError> {
    use bakeoff_engine::Phase;
    live.set_phase(Phase::Warmup);
    let (calibration, _) = invoke(addr, cfg, CALIBRATION_REQUESTS, cancel)?;
    let requests = match phases.measure {
        Measure::Ops(n) => (n / cfg.tests.len().max(1) as u64).max(1),
        Measure::Duration(d) => requests_for(&calibration, d),
    };
    live.set_phase(Phase::Measure);
    hooks.measure_started();
    live.set_measure_start(1);
    let measured = invoke(addr, cfg, requests, cancel);
    hooks.measure_ended();
    live.set_phase(Phase::Done);
    let (results, cpu_s) = measured?;
    let r = record(&results, requests, cpu_s, cfg.connections);
    live.set_progress(r.ops, 1 + (r.elapsed_s * 1e9) as u64);
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    const CSV: &str = "\"test\",\"rps\",\"avg_latency_ms\",\"min_latency_ms\",\"p50_latency_ms\",\"p95_latency_ms\",\"p99_latency_ms\",\"max_latency_ms\"\n\"SET\",\"121951.22\",\"0.088\",\"0.008\",\"0.071\",\"0.191\",\"0.407\",\"4.799\"\n\"GET\",\"144927.55\",\"0.071\",\"0.016\",\"0.071\",\"0.119\",\"0.159\",\"3.583\"\n";

    #[test]
    fn parses_redis_7_csv() {
        let r = parse(CSV).unwrap();
        assert_eq!(r.len(), 2);
        assert_eq!(r[0].test, "set");
        assert_eq!(r[1].rps, 144927.55);
        assert_eq!(r[0].p99_ms, 0.407);
        assert!(parse("").is_err());
        assert!(parse("\"test\",\"rps\"\n").is_err());
        assert!(parse(&CSV.replace("121951.22", "x")).is_err());
    }

    #[test]
    fn record_sums_tests_run_one_after_another() {
        let r = record(&parse(CSV).unwrap(), 100_000, 1.5, 16);
        assert_eq!(r.ops, 200_000);
        let elapsed = 100_000.0 / 121951.22 + 100_000.0 / 144927.55;
        assert!((r.elapsed_s - elapsed).abs() < 1e-9);
        assert!((r.ops_per_s - 200_000.0 / elapsed).abs() < 1e-6);
        assert_eq!(r.by_command["get"], 100_000);
        assert!((r.latency_us.p99 - 407.0).abs() < 1e-9);
        assert!((r.latency_us.p50 - 71.0).abs() < 1e-9);
        assert_eq!(r.kinds["set"].count, 100_000);
    }

    #[test]
    fn calibration_fills_the_window() {
        let c = parse(CSV).unwrap();
        assert_eq!(requests_for(&c, Duration::from_secs(2)), 121_951);
        assert_eq!(requests_for(&c, Duration::from_millis(1)), 1000);
    }

    #[test]
    fn command_line() {
        let cfg = Config {
            connections: 16,
            pipeline: 4,
            tests: vec!["get".into(), "set".into()],
            keys: 1000,
            value_size: 100,
        };
        let c = command("127.0.0.1:7000".parse().unwrap(), &cfg, 5000);
        let args: Vec<String> = c.get_args().map(|a| a.to_string_lossy().into()).collect();
        assert_eq!(
            args.join(" "),
            "-h 127.0.0.1 -p 7000 -c 16 -P 4 -n 5000 -r 1000 -d 100 -t get,set --csv"
        );
    }
}
