//! Test helpers: a server on a free port with a temp database, and a raw protocol client
//! that sends exactly the bytes given (as bakeoff's own pgwire client does) and returns
//! the replies message by message.

#![allow(dead_code)]

use std::io::{Read, Write};
use std::path::PathBuf;

use bakeoff_sqlited::{Config, Server};
pub use bakeoff_testkit::paths::SYSTEM_SQLITE;

/// A running server; the temp dir holds its database (and socket, if any).
pub struct Running {
    pub dir: tempfile::TempDir,
    pub port: u16,
}

pub fn config(dir: &tempfile::TempDir, pragmas: &[(&str, &str)]) -> Config {
    Config {
        library: PathBuf::from(SYSTEM_SQLITE),
        database: dir.path().join("main.db"),
        port: 0,
        socket: None,
        pragmas: pragmas
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect(),
        stmt_stats: false,
    }
}

/// Binds a server on 127.0.0.1:0 and runs it on a thread for the rest of the test process.
pub fn start_with(dir: tempfile::TempDir, config: Config) -> Running {
    let server = Server::bind(config).expect("server binds");
    let port = server.port();
    std::thread::spawn(move || server.run());
    Running { dir, port }
}

pub fn start(pragmas: &[(&str, &str)]) -> Running {
    let dir = tempfile::tempdir().unwrap();
    let config = config(&dir, pragmas);
    start_with(dir, config)
}

/// One message from the server.
#[derive(Debug, Clone)]
pub struct Msg {
    pub kind: u8,
    pub body: Vec<u8>,
}

impl Msg {
    /// A CommandComplete's tag, an ErrorResponse's SQLSTATE, a ReadyForQuery's status.
    pub fn text(&self) -> String {
        match self.kind {
            b'C' => String::from_utf8_lossy(&self.body[..self.body.len() - 1]).into_owned(),
            b'E' => self.error_field(b'C'),
            b'Z' => char::from(self.body[0]).to_string(),
            _ => String::new(),
        }
    }

    pub fn error_field(&self, field: u8) -> String {
        let mut parts = self.body.split(|b| *b == 0);
        parts
            .find(|p| p.first() == Some(&field))
            .map(|p| String::from_utf8_lossy(&p[1..]).into_owned())
            .unwrap_or_default()
    }

    /// A DataRow's values.
    pub fn row(&self) -> Vec<Option<String>> {
        let n = u16::from_be_bytes([self.body[0], self.body[1]]);
        let mut at = 2;
        (0..n)
            .map(|_| {
                let len = i32::from_be_bytes(self.body[at..at + 4].try_into().unwrap());
                at += 4;
                (len >= 0).then(|| {
                    let v = &self.body[at..at + len as usize];
                    at += len as usize;
                    String::from_utf8_lossy(v).into_owned()
                })
            })
            .collect()
    }
}

/// A raw protocol client over any stream.
pub struct Raw<S: Read + Write> {
    pub s: S,
    pub out: Vec<u8>,
}

pub fn cstr(b: &mut Vec<u8>, s: &str) {
    b.extend_from_slice(s.as_bytes());
    b.push(0);
}

impl<S: Read + Write> Raw<S> {
    /// Sends the StartupMessage and reads up to ReadyForQuery.
    pub fn connect(s: S) -> (Raw<S>, Vec<Msg>) {
        let mut raw = Raw { s, out: Vec::new() };
        let mut body = 196_608u32.to_be_bytes().to_vec();
        cstr(&mut body, "user");
        cstr(&mut body, "bakeoff");
        body.push(0);
        raw.out
            .extend_from_slice(&((body.len() + 4) as u32).to_be_bytes());
        raw.out.extend_from_slice(&body);
        raw.flush();
        let greeting = raw.until_ready();
        (raw, greeting)
    }

    /// Queues one message.
    pub fn put(&mut self, kind: u8, body: &[u8]) {
        self.out.push(kind);
        self.out
            .extend_from_slice(&((body.len() + 4) as u32).to_be_bytes());
        self.out.extend_from_slice(body);
    }

    pub fn flush(&mut self) {
        self.s.write_all(&self.out).unwrap();
        self.out.clear();
    }

    pub fn recv(&mut self) -> Option<Msg> {
        let mut head = [0u8; 5];
        self.s.read_exact(&mut head).ok()?;
        let len = u32::from_be_bytes(head[1..5].try_into().unwrap()) as usize;
        let mut body = vec![0; len - 4];
        self.s.read_exact(&mut body).ok()?;
        Some(Msg {
            kind: head[0],
            body,
        })
    }

    /// Replies up to and including ReadyForQuery.
    pub fn until_ready(&mut self) -> Vec<Msg> {
        let mut msgs = Vec::new();
        loop {
            let m = self.recv().expect("a reply before ReadyForQuery");
            let done = m.kind == b'Z';
            msgs.push(m);
            if done {
                return msgs;
            }
        }
    }

    /// A simple query; its replies up to ReadyForQuery.
    pub fn query(&mut self, sql: &str) -> Vec<Msg> {
        let mut b = Vec::new();
        cstr(&mut b, sql);
        self.put(b'Q', &b);
        self.flush();
        self.until_ready()
    }

    pub fn parse(&mut self, name: &str, sql: &str, types: &[u32]) {
        let mut b = Vec::new();
        cstr(&mut b, name);
        cstr(&mut b, sql);
        b.extend_from_slice(&(types.len() as u16).to_be_bytes());
        for t in types {
            b.extend_from_slice(&t.to_be_bytes());
        }
        self.put(b'P', &b);
    }

    /// Bind with (format, value) parameters and the given result formats.
    pub fn bind(
        &mut self,
        portal: &str,
        stmt: &str,
        params: &[(i16, Option<&[u8]>)],
        results: &[i16],
    ) {
        let mut b = Vec::new();
        cstr(&mut b, portal);
        cstr(&mut b, stmt);
        b.extend_from_slice(&(params.len() as u16).to_be_bytes());
        for (f, _) in params {
            b.extend_from_slice(&f.to_be_bytes());
        }
        b.extend_from_slice(&(params.len() as u16).to_be_bytes());
        for (_, v) in params {
            match v {
                None => b.extend_from_slice(&(-1i32).to_be_bytes()),
                Some(v) => {
                    b.extend_from_slice(&(v.len() as u32).to_be_bytes());
                    b.extend_from_slice(v);
                }
            }
        }
        b.extend_from_slice(&(results.len() as u16).to_be_bytes());
        for r in results {
            b.extend_from_slice(&r.to_be_bytes());
        }
        self.put(b'B', &b);
    }

    pub fn describe(&mut self, kind: u8, name: &str) {
        let mut b = vec![kind];
        cstr(&mut b, name);
        self.put(b'D', &b);
    }

    pub fn execute(&mut self, portal: &str, max_rows: i32) {
        let mut b = Vec::new();
        cstr(&mut b, portal);
        b.extend_from_slice(&max_rows.to_be_bytes());
        self.put(b'E', &b);
    }

    pub fn sync(&mut self) -> Vec<Msg> {
        self.put(b'S', &[]);
        self.flush();
        self.until_ready()
    }
}

/// The message kinds as a string, e.g. "12DCZ".
pub fn kinds(msgs: &[Msg]) -> String {
    msgs.iter().map(|m| char::from(m.kind)).collect()
}

/// The texts of the messages of `kind`.
pub fn texts(msgs: &[Msg], kind: u8) -> Vec<String> {
    msgs.iter()
        .filter(|m| m.kind == kind)
        .map(Msg::text)
        .collect()
}

pub fn rows(msgs: &[Msg]) -> Vec<Vec<Option<String>>> {
    msgs.iter()
        .filter(|m| m.kind == b'D')
        .map(Msg::row)
        .collect()
}
