//! `bakeoff run --metrics ADDR`: a short run of the installed memcached (3 runs of 1 s)
//! scraped while it runs: OpenMetrics text (types, `# EOF`), the runs done counting up,
//! the current run's throughput above zero at some point, the last run's latency; the
//! endpoint gone once the run ends. An address that is not loopback is refused at start
//! (one line, exit status 2, nothing run).

mod common;

use common::Scratch;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

fn experiment() -> String {
    common::memcached_installed("metrics", common::ARGS_64)
        + &common::installed("a", "")
        + "\n"
        + &common::kv("kv", "4", 2000, "")
        + "\n[plan]\nrepetitions = 3\nwarmup = \"100ms\"\nduration = \"1s\"\n"
}

/// One scrape: the body of `GET /metrics`, or None when nothing listens.
fn scrape(port: u16) -> Option<String> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    s.write_all(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        .ok()?;
    let mut reply = String::new();
    s.read_to_string(&mut reply).ok()?;
    assert!(reply.starts_with("HTTP/1.1 200 OK\r\n"), "{reply}");
    assert!(
        reply.contains("Content-Type: application/openmetrics-text; version=1.0.0"),
        "{reply}"
    );
    Some(reply.split_once("\r\n\r\n")?.1.to_string())
}

/// A metric's value (the first sample of that name).
fn value(text: &str, name: &str) -> Option<f64> {
    text.lines()
        .find(|l| l.starts_with(name) && !l.starts_with('#'))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
}

#[test]
fn metrics_are_served_while_the_run_runs_and_only_on_loopback() {
    let s = Scratch::new();
    let f = s.write("m.toml", &experiment());

    // Not loopback: refused before anything runs.
    let out = s
        .run_cmd(&f)
        .arg("--metrics")
        .arg("0.0.0.0:9464")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("not a loopback address"), "{err}");
    assert!(!s.out().join("results.json").exists());

    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut child = s
        .run_cmd(&f)
        .arg("--metrics")
        .arg(format!("127.0.0.1:{port}"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    let (mut max_done, mut saw_current, mut saw_latency, mut scrapes) = (0.0, false, false, 0);
    while Instant::now() < deadline {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success(), "the run failed: {status}");
            break;
        }
        if let Some(text) = scrape(port) {
            scrapes += 1;
            assert!(text.ends_with("# EOF\n"), "{text}");
            assert!(text.contains("# TYPE bakeoff_runs_done gauge\n"), "{text}");
            let done = value(&text, "bakeoff_runs_done").expect("runs done");
            assert!(done >= max_done, "runs done went back: {text}");
            max_done = done;
            saw_current |= value(&text, "bakeoff_current_ops_per_second").is_some_and(|v| v > 0.0);
            saw_latency |=
                value(&text, "bakeoff_last_run_latency_seconds").is_some_and(|v| v > 0.0);
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let status = child.wait().unwrap();
    assert!(status.success());
    assert!(scrapes > 3, "only {scrapes} scrapes");
    assert!(max_done >= 1.0, "no run counted");
    assert!(saw_current, "no current throughput seen");
    assert!(saw_latency, "no latency seen");
    // The endpoint ended with the run.
    assert!(TcpStream::connect(("127.0.0.1", port)).is_err());
    common::no_server_left("memcached", &s);
}
