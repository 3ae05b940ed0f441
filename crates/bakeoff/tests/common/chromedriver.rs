//! chromedriver and Debian's chromium for the browser tests (report.html, the site):
//! chromedriver in its own process group, driven over the WebDriver protocol (HTTP/1.1
//! with JSON bodies), killed on drop; and the screenshots' base64 decoded.

use serde_json::{json, Value};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Whether chromedriver is installed (scripts/setup.sh installs it).
pub fn installed() -> bool {
    Command::new("chromedriver")
        .arg("--version")
        .output()
        .is_ok()
}

/// chromedriver in its own process group (chromium's processes join it), killed on drop
/// even when the test fails.
pub struct Driver {
    child: Child,
    port: u16,
    session: Option<String>,
}

impl Driver {
    pub fn start() -> Option<Driver> {
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
    pub fn call(&self, method: &str, path: &str, body: Option<&Value>) -> Result<Value, String> {
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

    /// Asserts that the browser of session `id` logged no console error.
    pub fn assert_no_console_errors(&self, id: &str) {
        let logs = self
            .call(
                "POST",
                &format!("/session/{id}/se/log"),
                Some(&serde_json::json!({"type": "browser"})),
            )
            .expect("browser log");
        let errors: Vec<&Value> = logs
            .as_array()
            .map(|a| a.iter().filter(|e| e["level"] == "SEVERE").collect())
            .unwrap_or_default();
        assert!(errors.is_empty(), "console errors: {errors:?}");
    }

    pub fn open_session(&mut self, profile: &Path) -> Result<String, String> {
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

pub fn base64_decode(s: &str) -> Vec<u8> {
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
