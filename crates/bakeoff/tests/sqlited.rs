//! The `bakeoff-sqlited` binary end to end with Debian's libsqlite3: the start-up line,
//! a query over TCP and over the unix socket, SIGTERM (exit 0, socket removed, nothing
//! left running), and the exit statuses of a busy port, a missing library and bad
//! arguments.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::net::UnixStream;
use std::process::{Child, Command, Stdio};

use bakeoff_testkit::paths::SYSTEM_SQLITE;
use common::{no_server_left, wait_for, Scratch};

const SQLITED: &str = env!("CARGO_BIN_EXE_bakeoff-sqlited");

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Starts the server and returns it with its start-up line.
fn start(s: &Scratch, port: u16) -> (Child, String) {
    let mut child = Command::new(SQLITED)
        .args(["--library", SYSTEM_SQLITE, "--database"])
        .arg(s.path().join("main.db"))
        .args(["--port", &port.to_string(), "--pragma", "journal_mode=wal"])
        .arg("--socket")
        .arg(s.path().join("sqlited.sock"))
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stderr.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    (child, line)
}

/// Startup and one simple query with a tiny protocol 3.0 client: the DataRows' first
/// values.
fn query(mut s: impl Read + Write, sql: &str) -> Vec<String> {
    let mut startup = 196_608u32.to_be_bytes().to_vec();
    startup.extend_from_slice(b"user\0bakeoff\0\0");
    let mut out = ((startup.len() + 4) as u32).to_be_bytes().to_vec();
    out.extend_from_slice(&startup);
    out.push(b'Q');
    out.extend_from_slice(&((sql.len() + 5) as u32).to_be_bytes());
    out.extend_from_slice(sql.as_bytes());
    out.push(0);
    s.write_all(&out).unwrap();
    let (mut values, mut ready) = (Vec::new(), 0);
    while ready < 2 {
        let mut head = [0u8; 5];
        s.read_exact(&mut head).unwrap();
        let mut body = vec![0; u32::from_be_bytes(head[1..].try_into().unwrap()) as usize - 4];
        s.read_exact(&mut body).unwrap();
        match head[0] {
            b'D' => values.push(String::from_utf8_lossy(&body[6..]).into_owned()),
            b'E' => panic!("server error: {}", String::from_utf8_lossy(&body)),
            b'Z' => ready += 1,
            _ => {}
        }
    }
    values
}

#[test]
fn sqlited_serves_until_sigterm() {
    let s = Scratch::new();
    let port = free_port();
    let (mut child, line) = start(&s, port);
    assert!(
        line.starts_with("bakeoff-sqlited: SQLite 3.")
            && line.contains(&format!("listening on 127.0.0.1:{port}")),
        "{line}"
    );
    let tcp = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let sql = "CREATE TABLE t(a); INSERT INTO t VALUES (7); SELECT a FROM t; PRAGMA journal_mode";
    assert_eq!(query(tcp, sql), ["7", "wal"]);
    let unix = UnixStream::connect(s.path().join("sqlited.sock")).unwrap();
    assert_eq!(query(unix, "SELECT count(*) FROM t"), ["1"]);

    // A second server on the same port fails with the OS's words.
    let busy = Command::new(SQLITED)
        .args(["--library", SYSTEM_SQLITE, "--database"])
        .arg(s.path().join("other.db"))
        .args(["--port", &port.to_string()])
        .output()
        .unwrap();
    assert_eq!(busy.status.code(), Some(1));
    let err = String::from_utf8_lossy(&busy.stderr);
    assert!(err.contains("Address already in use"), "{err}");

    // SAFETY: kill(2) on our own child's pid.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    assert!(wait_for(10.0, || child.try_wait().unwrap().is_some()));
    assert_eq!(child.wait().unwrap().code(), Some(0));
    assert!(!s.path().join("sqlited.sock").exists());
    no_server_left("bakeoff-sqlited", &s);
}

#[test]
fn sqlited_reports_a_bad_library_and_bad_arguments() {
    let s = Scratch::new();
    let missing = s.path().join("libsqlite3.so");
    let out = Command::new(SQLITED)
        .arg("--library")
        .arg(&missing)
        .arg("--database")
        .arg(s.path().join("main.db"))
        .args(["--port", "0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("cannot load SQLite library {}", missing.display())),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");

    let out = Command::new(SQLITED)
        .args(["--library", SYSTEM_SQLITE, "--port", "nope"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.starts_with("bakeoff-sqlited: --port nope:"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
}
