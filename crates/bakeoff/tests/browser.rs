//! report.html in a real browser: a short memcached experiment (a variant named like an
//! HTML injection among them), then Debian's chromium, driven headless by chromedriver
//! over the WebDriver protocol, opens the report from its file. Every chart must have
//! drawn something, the console must hold no errors, no injected element may exist, and
//! a screenshot is kept as an artifact (target/tmp/browser/report.png).

mod common;

use common::Scratch;
use serde_json::{json, Value};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const NASTY: &str = "<img src=x onerror=alert(1)>";

/// chromedriver in its own process group (chromium's processes join it), killed on drop
/// even when the test fails.
struct Driver {
    child: Child,
    port: u16,
    session: Option<String>,
}

impl Driver {
    fn start() -> Option<Driver> {
        let port = TcpListener::bind("127.0.0.1:0")
            .ok()?
            .local_addr()
            .ok()?
            .port();
        let child = Command::new("chromedriver")
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .ok()?;
        let d = Driver {
            child,
            port,
            session: None,
        };
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if d.call("GET", "/status", None).is_ok() {
                return Some(d);
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        None
    }

    /// One WebDriver call: HTTP/1.1 with a JSON body, the reply's JSON.
    fn call(&self, method: &str, path: &str, body: Option<&Value>) -> Result<Value, String> {
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).map_err(|e| e.to_string())?;
        s.set_read_timeout(Some(Duration::from_secs(60)))
            .map_err(|e| e.to_string())?;
        let body = body.map(|b| b.to_string()).unwrap_or_default();
        let req = format!(
            "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        s.write_all(req.as_bytes()).map_err(|e| e.to_string())?;
        // Read the head, then exactly Content-Length bytes (the driver may keep the
        // connection open).
        let mut reply = Vec::new();
        let mut buf = [0u8; 8192];
        let (head, body_at, len) = loop {
            let n = s.read(&mut buf).map_err(|e| e.to_string())?;
            if n == 0 {
                return Err("connection closed before the reply".into());
            }
            reply.extend_from_slice(&buf[..n]);
            if let Some(at) = reply.windows(4).position(|w| w == b"\r\n\r\n") {
                let head = String::from_utf8_lossy(&reply[..at]).to_string();
                let len = head
                    .lines()
                    .find_map(|l| {
                        let (k, v) = l.split_once(':')?;
                        k.eq_ignore_ascii_case("content-length")
                            .then(|| v.trim().parse::<usize>().ok())?
                    })
                    .ok_or("no Content-Length")?;
                break (head, at + 4, len);
            }
        };
        while reply.len() < body_at + len {
            let n = s.read(&mut buf).map_err(|e| e.to_string())?;
            if n == 0 {
                break;
            }
            reply.extend_from_slice(&buf[..n]);
        }
        let json = String::from_utf8_lossy(&reply[body_at..]).to_string();
        let v: Value = serde_json::from_str(&json).map_err(|e| format!("{e}: {json}"))?;
        if !head.starts_with("HTTP/1.1 200") {
            return Err(format!("{method} {path}: {head}: {v}"));
        }
        Ok(v["value"].clone())
    }

    fn open_session(&mut self, profile: &Path) -> Result<String, String> {
        let caps = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": "/usr/bin/chromium",
                "args": ["--headless=new", "--no-sandbox", "--disable-gpu",
                         "--window-size=1280,2400",
                         format!("--user-data-dir={}", profile.display())]
            },
            "goog:loggingPrefs": {"browser": "ALL"}
        }}});
        let v = self.call("POST", "/session", Some(&caps))?;
        let id = v["sessionId"].as_str().ok_or("no session id")?.to_string();
        self.session = Some(id.clone());
        Ok(id)
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        if let Some(id) = self.session.take() {
            let _ = self.call("DELETE", &format!("/session/{id}"), None);
        }
        // SAFETY: kill(2) on our own child's process group.
        unsafe {
            libc::kill(-(self.child.id() as i32), libc::SIGKILL);
        }
        let _ = self.child.wait();
    }
}

fn base64_decode(s: &str) -> Vec<u8> {
    let val = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    };
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0);
    for v in s.bytes().filter_map(val) {
        acc = (acc << 6) | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    out
}

fn experiment() -> String {
    common::memcached_installed("browser", common::ARGS_64)
        + &common::installed("debian", "")
        + &common::installed(NASTY, "args = [\"-t\", \"2\"]\n")
        + "\n"
        + &common::kv("sweep", "1, 4", 2000, "")
        + "\n"
        + &common::kv("sets", "4", 2000, "mix = { get = 50, set = 50 }\n")
        + "\n[plan]\nrepetitions = 2\nwarmup = \"100ms\"\nduration = \"1s\"\n\n[measure]\ninterval = \"250ms\"\n"
}

#[test]
fn report_html_renders_every_chart_without_errors_in_chromium() {
    if Command::new("chromedriver")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("chromedriver is not installed (scripts/setup.sh installs it): skipped");
        return;
    }
    let s = Scratch::new();
    let f = s.write("b.toml", &experiment());
    let out = s.run_cmd(&f).output().expect("run bakeoff");
    common::assert_ok(&out);
    let report = s.out().join("report.html");
    let html = std::fs::read_to_string(&report).expect("report.html");
    assert!(
        !html.contains(NASTY),
        "the variant name went into the HTML unescaped"
    );

    let mut d = Driver::start().expect("chromedriver did not start");
    let id = d
        .open_session(&s.path().join("chromium-profile"))
        .expect("chromium session");
    let url = format!("file://{}", report.display());
    d.call(
        "POST",
        &format!("/session/{id}/url"),
        Some(&json!({ "url": url })),
    )
    .expect("open the report");
    let run = |script: &str| {
        d.call(
            "POST",
            &format!("/session/{id}/execute/sync"),
            Some(&json!({ "script": script, "args": [] })),
        )
        .expect("script")
    };
    // Every chart drew data; there are charts; nothing was injected.
    let marks = run(
        "return Array.from(document.querySelectorAll('svg')).map(s => \
         s.querySelectorAll('path,rect,line,circle,polyline,polygon').length)",
    );
    let marks: Vec<u64> = marks
        .as_array()
        .expect("list")
        .iter()
        .map(|v| v.as_u64().unwrap_or(0))
        .collect();
    assert!(marks.len() >= 3, "charts: {marks:?}");
    assert!(marks.iter().all(|&n| n > 0), "an empty chart: {marks:?}");
    let sizes = run(
        "return Array.from(document.querySelectorAll('svg')).map(s => { \
         const r = s.getBoundingClientRect(); return r.width * r.height; })",
    );
    assert!(
        sizes
            .as_array()
            .expect("list")
            .iter()
            .all(|v| v.as_f64().unwrap_or(0.0) > 100.0),
        "a chart with no area: {sizes}"
    );
    assert_eq!(
        run("return document.querySelectorAll('img').length"),
        json!(0)
    );
    let text = run("return document.body.innerText");
    let text = text.as_str().unwrap_or("");
    assert!(text.contains(NASTY), "the name is shown as text");
    for section in [
        "Verdicts",
        "Throughput by connections",
        "Relative to the baseline",
        "Latency percentiles",
        "CPU over time",
        "Experiment file",
    ] {
        assert!(text.contains(section), "no {section} section");
    }
    // No console errors.
    let logs = d
        .call(
            "POST",
            &format!("/session/{id}/se/log"),
            Some(&json!({"type": "browser"})),
        )
        .expect("browser log");
    let errors: Vec<&Value> = logs
        .as_array()
        .map(|a| a.iter().filter(|e| e["level"] == "SEVERE").collect())
        .unwrap_or_default();
    assert!(errors.is_empty(), "console errors: {errors:?}");
    // The screenshot, kept as the test's artifact.
    let png = d
        .call("GET", &format!("/session/{id}/screenshot"), None)
        .expect("screenshot");
    let bytes = base64_decode(png.as_str().unwrap_or(""));
    assert!(bytes.starts_with(b"\x89PNG"), "not a PNG");
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("browser");
    std::fs::create_dir_all(&dir).expect("artifact dir");
    std::fs::write(dir.join("report.png"), &bytes).expect("screenshot file");
    std::fs::copy(&report, dir.join("report.html")).expect("report copy");
}
