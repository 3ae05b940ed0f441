//! A bare driver for bench/: runs the kv workload against a memcached (or Redis) that is
//! already up, at ADDR (host:port, or a unix socket's path),
//! and prints one parseable line: ops/s and client CPU microseconds per op.
//!
//!     cargo run --release -p bakeoff-workloads --example kvload -- 127.0.0.1:11211 16 10
//!
//! SECONDS may be fractional. KVLOAD_WARMUP_MS (default 1000) sets the warmup,
//! KVLOAD_PRELOAD=0 skips the preload (the keys are already there), KVLOAD_KEYS sets the
//! key count (default 100000), KVLOAD_PROTOCOL=resp speaks Redis's protocol instead of
//! memcached's.

use bakeoff_engine::{Endpoint, Live, Measure, NoHooks, Phases, Schedule};
use bakeoff_workloads::kv::{self, KvConfig, Protocol};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: kvload ADDR CONNECTIONS SECONDS [THREADS] [PIPELINE]";
    let (Some(addr), Some(conns), Some(secs)) = (args.first(), args.get(1), args.get(2)) else {
        eprintln!("{usage}");
        std::process::exit(2);
    };
    let num = |s: &str| {
        s.parse::<u64>().unwrap_or_else(|_| {
            eprintln!("{usage}");
            std::process::exit(2)
        })
    };
    let env = |k: &str, d: u64| {
        std::env::var(k)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(d)
    };
    let cfg = KvConfig {
        client_threads: args.get(3).map_or(1, |t| num(t) as usize),
        schedule: Schedule::ClosedLoop {
            pipeline: args.get(4).map_or(1, |p| num(p) as usize),
        },
        preload: env("KVLOAD_PRELOAD", 1) != 0,
        protocol: match std::env::var("KVLOAD_PROTOCOL").as_deref() {
            Ok("resp") => Protocol::Resp,
            _ => Protocol::Memcached,
        },
        ..KvConfig::get90_set10(env("KVLOAD_KEYS", 100_000), num(conns) as usize)
    };
    let secs: f64 = secs.parse().unwrap_or_else(|_| {
        eprintln!("{usage}");
        std::process::exit(2)
    });
    let phases = Phases {
        warmup: Duration::from_millis(env("KVLOAD_WARMUP_MS", 1000)),
        measure: Measure::Duration(Duration::from_secs_f64(secs)),
    };
    // A path is a unix socket.
    let addr = if addr.starts_with('/') {
        Endpoint::Unix(addr.into())
    } else {
        Endpoint::Tcp(addr.parse().unwrap_or_else(|e| {
            eprintln!("bad address {addr}: {e}");
            std::process::exit(2)
        }))
    };
    match kv::run(addr, &cfg, &phases, 42, &NoHooks, &Live::default(), &AtomicBool::new(false)) {
        Ok(r) => println!(
            "ops_per_s={:.0} client_cpu_us_per_op={:.3} p50_us={:.1} p99_us={:.1} verify_failures={} misses={}",
            r.ops_per_s,
            r.client_cpu_s * 1e6 / r.ops.max(1) as f64,
            r.latency_us.p50,
            r.latency_us.p99,
            r.verify_failures,
            r.misses
        ),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}
