//! `bakeoff run --metrics ADDR`: the running experiment's figures in the OpenMetrics text
//! format, for Prometheus or Grafana to scrape while a long experiment runs. A tiny
//! HTTP/1.1 responder on std::net (one thread, one request per connection, `GET
//! /metrics`), on a loopback address only (anything else is refused before the run
//! starts), stopped when the run ends. The figures come from the runner's progress
//! callbacks ([`Watched`] wraps the progress bars): runs done and planned, the current
//! run's throughput so far, the last finished run's throughput and latency, rounds done
//! and the budget left.

use bakeoff_report::model::{BuildRecord, Results, Run};
use bakeoff_runner::{Live, Observer, RoundStatus};
use std::fmt::Write as _;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// `--metrics ADDR` checked: a loopback address with a port; one line otherwise.
pub fn parse_addr(s: &str) -> Result<SocketAddr, String> {
    let addrs: Vec<SocketAddr> = s
        .to_socket_addrs()
        .map_err(|e| {
            format!(
                "--metrics {s:?}: not an address and port ({e}); give one such as 127.0.0.1:9464"
            )
        })?
        .collect();
    match addrs.first() {
        Some(a) if addrs.iter().all(|a| a.ip().is_loopback()) => Ok(*a),
        _ => Err(format!(
            "--metrics {s:?}: not a loopback address; bakeoff serves its figures on loopback only (127.0.0.1:PORT or [::1]:PORT): scrape through an ssh tunnel or a proxy of yours"
        )),
    }
}

/// What the endpoint shows, as the run goes.
#[derive(Default)]
struct Figures {
    runs_total: usize,
    runs_done: usize,
    runs_invalid: usize,
    rounds: usize,
    budget_left_s: Option<f64>,
    current: Option<(String, Arc<Live>)>,
    last: Option<(String, Run)>,
}

/// The endpoint: its listener thread, stopped on drop.
pub struct Endpoint {
    figures: Arc<Mutex<Figures>>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
    pub addr: SocketAddr,
}

impl Endpoint {
    /// Listens on `addr` (already checked to be loopback).
    pub fn start(addr: SocketAddr) -> Result<Endpoint, String> {
        let listener = TcpListener::bind(addr).map_err(|e| {
            format!("--metrics {addr}: cannot listen there ({e}); give a free port")
        })?;
        let addr = listener.local_addr().unwrap_or(addr);
        listener
            .set_nonblocking(true)
            .map_err(|e| format!("--metrics {addr}: {e}"))?;
        let figures = Arc::new(Mutex::new(Figures::default()));
        let stop = Arc::new(AtomicBool::new(false));
        let started = Instant::now();
        let thread = {
            let (figures, stop) = (figures.clone(), stop.clone());
            std::thread::Builder::new()
                .name("metrics".into())
                .spawn(move || serve(listener, &figures, &stop, started))
                .map_err(|e| format!("--metrics: cannot start its thread: {e}"))?
        };
        Ok(Endpoint {
            figures,
            stop,
            thread: Some(thread),
            addr,
        })
    }
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn lock(m: &Mutex<Figures>) -> std::sync::MutexGuard<'_, Figures> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn serve(listener: TcpListener, figures: &Mutex<Figures>, stop: &AtomicBool, started: Instant) {
    while !stop.load(Ordering::Relaxed) {
        match listener.accept() {
            Ok((s, _)) => {
                let _ = answer(s, figures, started);
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(50));
            }
            Err(_) => std::thread::sleep(Duration::from_millis(50)),
        }
    }
}

/// One request: its head read (at most 8 KiB, 2 s), one reply, the connection closed.
fn answer(mut s: TcpStream, figures: &Mutex<Figures>, started: Instant) -> std::io::Result<()> {
    s.set_nonblocking(false)?;
    s.set_read_timeout(Some(Duration::from_secs(2)))?;
    s.set_write_timeout(Some(Duration::from_secs(2)))?;
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 8192 {
        let n = s.read(&mut buf)?;
        if n == 0 {
            break;
        }
        head.extend_from_slice(&buf[..n]);
    }
    let line = String::from_utf8_lossy(&head);
    let mut words = line.split_whitespace();
    let (method, path) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
    let (status, kind, body) = if method != "GET" && method != "HEAD" {
        (
            "405 Method Not Allowed",
            "text/plain",
            "GET /metrics\n".to_string(),
        )
    } else if path == "/metrics" || path == "/" {
        (
            "200 OK",
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
            render(&lock(figures), started),
        )
    } else {
        ("404 Not Found", "text/plain", "GET /metrics\n".to_string())
    };
    let reply = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{}",
        body.len(),
        if method == "HEAD" { "" } else { body.as_str() }
    );
    s.write_all(reply.as_bytes())
}

/// A label value as OpenMetrics writes it: `\`, `"` and line breaks escaped.
fn label(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// A number as OpenMetrics writes it.
fn num(v: f64) -> String {
    if v.is_finite() {
        format!("{v}")
    } else if v.is_nan() {
        "NaN".into()
    } else if v > 0.0 {
        "+Inf".into()
    } else {
        "-Inf".into()
    }
}

fn render(f: &Figures, started: Instant) -> String {
    let mut o = String::new();
    let mut gauge = |name: &str, help: &str, unit: Option<&str>, rows: &[(String, f64)]| {
        let _ = writeln!(o, "# TYPE {name} gauge");
        if let Some(u) = unit {
            let _ = writeln!(o, "# UNIT {name} {u}");
        }
        let _ = writeln!(o, "# HELP {name} {help}");
        for (labels, v) in rows {
            let _ = writeln!(o, "{name}{labels} {}", num(*v));
        }
    };
    let none = String::new();
    gauge(
        "bakeoff_runs_done",
        "Measured runs finished so far.",
        None,
        &[(none.clone(), f.runs_done as f64)],
    );
    gauge(
        "bakeoff_runs_invalid",
        "Finished runs that were invalid.",
        None,
        &[(none.clone(), f.runs_invalid as f64)],
    );
    gauge(
        "bakeoff_runs_planned",
        "Runs planned when the rounds began (an upper bound when rounds stop on precision).",
        None,
        &[(none.clone(), f.runs_total as f64)],
    );
    gauge(
        "bakeoff_rounds_done",
        "Measured rounds finished so far.",
        None,
        &[(none.clone(), f.rounds as f64)],
    );
    gauge(
        "bakeoff_elapsed_seconds",
        "Seconds since the experiment started.",
        Some("seconds"),
        &[(none.clone(), started.elapsed().as_secs_f64())],
    );
    if let Some(b) = f.budget_left_s {
        gauge(
            "bakeoff_budget_left_seconds",
            "What is left of [plan] budget after the last round.",
            Some("seconds"),
            &[(none.clone(), b)],
        );
    }
    if let Some((run, live)) = &f.current {
        gauge(
            "bakeoff_current_ops_per_second",
            "The running run's throughput over its measured phase so far (0 before it).",
            None,
            &[(format!("{{run=\"{}\"}}", label(run)), live.ops_per_s())],
        );
    }
    if let Some((run, r)) = &f.last {
        let l = format!("{{run=\"{}\"}}", label(run));
        gauge(
            "bakeoff_last_run_ops_per_second",
            "The last finished run's throughput.",
            None,
            &[(l.clone(), r.ops_per_s)],
        );
        let q = |p: &str, v: f64| {
            (
                format!("{{run=\"{}\",quantile=\"{p}\"}}", label(run)),
                v / 1e6,
            )
        };
        gauge(
            "bakeoff_last_run_latency_seconds",
            "The last finished run's response-time percentiles.",
            Some("seconds"),
            &[
                q("0.5", r.latency_us.p50),
                q("0.9", r.latency_us.p90),
                q("0.99", r.latency_us.p99),
                q("0.999", r.latency_us.p999),
            ],
        );
    }
    o.push_str("# EOF\n");
    o
}

/// The run's observer with the endpoint's figures kept up to date.
pub struct Watched<'a, O: Observer> {
    pub inner: &'a O,
    pub endpoint: &'a Endpoint,
}

impl<O: Observer> Watched<'_, O> {
    fn figures(&self) -> std::sync::MutexGuard<'_, Figures> {
        lock(&self.endpoint.figures)
    }
}

impl<O: Observer> Observer for Watched<'_, O> {
    fn notice(&self, line: &str) {
        self.inner.notice(line)
    }
    fn builds_started(&self, total: usize) {
        self.inner.builds_started(total)
    }
    fn build_started(&self, variant: &str) {
        self.inner.build_started(variant)
    }
    fn build_finished(&self, variant: &str, outcome: Result<&BuildRecord, &str>) {
        self.inner.build_finished(variant, outcome)
    }
    fn runs_started(&self, total: usize, seconds_each: f64) {
        self.figures().runs_total = total;
        self.inner.runs_started(total, seconds_each)
    }
    fn run_started(&self, index: usize, label: &str, live: &Arc<Live>) {
        self.figures().current = Some((label.to_string(), live.clone()));
        self.inner.run_started(index, label, live)
    }
    fn run_finished(&self, index: usize, label: &str, run: &Run) {
        {
            let mut f = self.figures();
            f.current = None;
            f.runs_done += 1;
            if run.valid {
                f.last = Some((label.to_string(), run.clone()));
            } else {
                f.runs_invalid += 1;
            }
        }
        self.inner.run_finished(index, label, run)
    }
    fn round_finished(&self, status: &RoundStatus) {
        {
            let mut f = self.figures();
            f.rounds = status.rounds;
            f.budget_left_s = status.budget_left.map(|d| d.as_secs_f64());
        }
        self.inner.round_finished(status)
    }
    fn own_rule(&self) -> bool {
        self.inner.own_rule()
    }
    fn enough(&self, results: &Results) -> Option<String> {
        self.inner.enough(results)
    }
}

/// Refuses `--metrics` on a command that does not serve it (`bisect`, `tune`): one line,
/// bad input.
pub fn refuse_on(command: &str, metrics: &Option<String>) -> Result<(), crate::session::Failure> {
    match metrics {
        Some(a) => Err(crate::session::Failure::BadInput(format!(
            "--metrics {a}: `bakeoff {command}` does not serve live figures; drop --metrics (it is for `bakeoff run`)"
        ))),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_only() {
        assert!(parse_addr("127.0.0.1:9464").is_ok());
        assert!(parse_addr("[::1]:9464").is_ok());
        assert!(parse_addr("localhost:9464").is_ok());
        for bad in [
            "0.0.0.0:9464",
            "10.1.2.3:80",
            "[::]:9464",
            "9464",
            "nonsense",
        ] {
            assert!(parse_addr(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn text_is_openmetrics() {
        let f = Figures {
            runs_done: 3,
            budget_left_s: Some(12.5),
            last: Some((
                "a \"q\" kv x4".into(),
                Run {
                    ops_per_s: 1000.0,
                    valid: true,
                    ..Run::default()
                },
            )),
            ..Figures::default()
        };
        let t = render(&f, Instant::now());
        assert!(t.ends_with("# EOF\n"));
        assert!(t.contains("bakeoff_runs_done 3\n"), "{t}");
        assert!(t.contains("bakeoff_budget_left_seconds 12.5\n"), "{t}");
        assert!(t.contains("run=\"a \\\"q\\\" kv x4\""), "{t}");
    }
}
