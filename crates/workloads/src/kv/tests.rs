//! The kv workload against a real memcached (started in a bakeoff sandbox, stopped by its
//! guard even when a test fails).

use super::*;
use bakeoff_engine::{Measure, NoHooks};
use bakeoff_sandbox::{Sandbox, SandboxSpec, TargetKind};
use std::io::{Read, Write};
use std::time::{Duration, Instant};

fn server() -> (Sandbox, tempfile::TempDir) {
    server_with(&[])
}

fn server_with(extra: &[&str]) -> (Sandbox, tempfile::TempDir) {
    let root = tempfile::tempdir().expect("tempdir");
    let mut spec = SandboxSpec::new(
        "kvtest",
        TargetKind::Memcached,
        std::path::PathBuf::from("/usr/bin/memcached"),
        root.path().to_path_buf(),
    );
    spec.args = vec!["-t".into(), "1".into(), "-m".into(), "64".into()];
    spec.args.extend(extra.iter().map(|a| a.to_string()));
    (Sandbox::start(&spec).expect("memcached starts"), root)
}

fn cfg(connections: usize) -> KvConfig {
    KvConfig {
        multiget_keys: 5,
        ..KvConfig::get90_set10(1000, connections)
    }
}

fn phases(warmup_ms: u64, measure: Measure) -> Phases {
    Phases {
        warmup: Duration::from_millis(warmup_ms),
        measure,
    }
}

fn go(s: &Sandbox, c: &KvConfig, p: Phases) -> Result<RunRecord, LoadError> {
    run(
        s.addr(),
        c,
        &p,
        1,
        &NoHooks,
        &Live::default(),
        &AtomicBool::new(false),
    )
}

#[test]
fn closed_loop_verifies_every_get() {
    let (s, _root) = server();
    let r = go(
        &s,
        &cfg(16),
        phases(200, Measure::Duration(Duration::from_millis(800))),
    )
    .expect("run");
    assert!(r.ops > 1000, "{r:?}");
    assert_eq!((r.verify_failures, r.misses), (0, 0));
    assert!(r.errors.is_empty(), "{:?}", r.errors);
    assert!(r.latency_us.p50 > 0.0 && r.latency_us.p99 >= r.latency_us.p50);
    assert!(r.client_cpu_s > 0.0);
    assert!(!r.intervals.is_empty());
    assert!(r.hdr_log.lines().count() >= 4);
    assert!(r.by_command["get"] > r.by_command["set"]);
}

#[test]
fn pipelined_many_connections_and_every_command() {
    let (s, _root) = server();
    let mut c = cfg(64);
    c.client_threads = 2;
    c.schedule = Schedule::ClosedLoop { pipeline: 4 };
    c.mix = Mix {
        get: 50,
        set: 20,
        add: 10,
        delete: 10,
        multiget: 10,
        ..Mix::default()
    };
    c.value_size = ValueSize::Around { mean: 300 };
    c.key_distribution = KeyDistribution::Zipfian { theta: 0.9 };
    let r = go(
        &s,
        &c,
        phases(100, Measure::Duration(Duration::from_millis(700))),
    )
    .expect("run");
    assert!(r.ops > 1000);
    assert_eq!(r.verify_failures, 0);
    assert!(r.misses > 0, "deletes make misses");
    for cmd in &COMMANDS[..protocol::MEMCACHED_COMMANDS] {
        assert!(
            r.by_command.get(*cmd).copied().unwrap_or(0) > 0,
            "{cmd}: {:?}",
            r.by_command
        );
    }
}

#[test]
fn open_loop_holds_its_rate_and_reports_service_time() {
    let (s, _root) = server();
    let mut c = cfg(8);
    c.schedule = Schedule::OpenLoop {
        rate: 2000.0,
        poisson: true,
    };
    let r = go(
        &s,
        &c,
        phases(200, Measure::Duration(Duration::from_secs(1))),
    )
    .expect("run");
    assert!((1700.0..2300.0).contains(&r.ops_per_s), "{}", r.ops_per_s);
    assert_eq!(r.offered_ops_per_s, Some(2000.0));
    let svc = r.service_us.expect("service time");
    assert!(svc.p50 > 0.0 && svc.p50 <= r.latency_us.p50 + 1.0);
    assert!(!r.client_bound);
}

#[test]
fn op_count_measure_is_exact() {
    let (s, _root) = server();
    let mut c = cfg(6);
    c.client_threads = 3;
    let r = go(&s, &c, phases(0, Measure::Ops(5000))).expect("run");
    assert_eq!(r.ops, 5000);
}

#[test]
fn foreign_values_are_verify_failures() {
    let (s, _root) = server();
    let mut c = cfg(4);
    c.keys = 50;
    c.mix = Mix {
        get: 1,
        ..Mix::default()
    };
    let addr = s.addr();
    let stop = Arc::new(AtomicBool::new(false));
    let stop2 = stop.clone();
    let vandal = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        let mut conn = std::net::TcpStream::connect(addr).expect("side connection");
        let mut sink = [0u8; 4096];
        while !stop2.load(std::sync::atomic::Ordering::Relaxed) {
            for k in 0..50u64 {
                let _ = write!(conn, "set key:{k:010} 0 0 20\r\nXXXXXXXXXXXXXXXXXXXX\r\n");
            }
            let _ = conn.read(&mut sink);
        }
    });
    let r = go(
        &s,
        &c,
        phases(0, Measure::Duration(Duration::from_millis(900))),
    );
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let _ = vandal.join();
    assert!(r.expect("run").verify_failures > 0);
}

#[test]
fn server_killed_mid_run_is_an_error_not_a_hang() {
    let (mut s, _root) = server();
    let pid = s.pid();
    let killer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(400));
        // SAFETY: plain kill of the test's own server.
        unsafe { libc::kill(pid as i32, libc::SIGKILL) };
    });
    let t = Instant::now();
    let r = go(
        &s,
        &cfg(8),
        phases(0, Measure::Duration(Duration::from_secs(20))),
    );
    let _ = killer.join();
    assert!(r.is_err(), "{r:?}");
    assert!(t.elapsed() < Duration::from_secs(8));
    // The kernel closes a killed process's sockets before it becomes a zombie: the run
    // can see the reset a moment before the exit is visible.
    let gone = Instant::now() + Duration::from_secs(5);
    while s.is_alive() && Instant::now() < gone {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(!s.is_alive());
}

#[test]
fn cancel_returns_promptly() {
    let (s, _root) = server();
    let cancel = Arc::new(AtomicBool::new(false));
    let c2 = cancel.clone();
    let t = Instant::now();
    let setter = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        c2.store(true, std::sync::atomic::Ordering::SeqCst);
    });
    let r = run(
        s.addr(),
        &cfg(4),
        &phases(0, Measure::Duration(Duration::from_secs(30))),
        1,
        &NoHooks,
        &Live::default(),
        &cancel,
    );
    let _ = setter.join();
    assert!(matches!(r, Err(LoadError::Cancelled)), "{r:?}");
    assert!(t.elapsed() < Duration::from_secs(2));
}

#[test]
fn validation_names_the_key() {
    let mut c = cfg(0);
    assert!(c.validate().unwrap_err().contains("connections"));
    c = cfg(4);
    c.client_threads = 5;
    assert!(c.validate().unwrap_err().contains("client_threads"));
    c = cfg(4);
    c.mix = Mix::default();
    assert!(c.validate().unwrap_err().contains("mix"));
}

#[test]
fn a_thousand_and_twenty_four_connections() {
    let (s, _root) = server_with(&["-c", "4096"]);
    let mut c = cfg(1024);
    c.client_threads = 2;
    let r = go(
        &s,
        &c,
        phases(100, Measure::Duration(Duration::from_millis(500))),
    )
    .expect("run");
    assert!(r.ops > 1024, "{r:?}");
    assert_eq!(r.verify_failures, 0);
}
