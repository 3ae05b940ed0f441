//! One client connection from its first byte to its last: the startup exchange (SSL and
//! GSSAPI refused, trust authentication, CancelRequest closes), then the message loop
//! with simple queries here and the extended protocol in `extended`. A simple query or
//! an Execute runs under the session's statement timeout (`SET statement_timeout = ms`,
//! PostgreSQL's spelling): past it SQLite is interrupted and the client gets PostgreSQL's
//! 57014, the connection still usable.

use std::io::{self, BufReader, Read, Write};
use std::time::{Duration, Instant};

use crate::database::Database;
use crate::dialect;
use crate::error::PgError;
use crate::exec::send_rows;
use crate::extended::Extended;
use crate::ffi::sqlite::{Connection, Statement};
use crate::stmtstats::{self, Key, Show, StmtStats};
use crate::tag::{command_tag, verb};
use crate::wire::{read_message, read_startup, Backend, Body};

const SSL_REQUEST: i32 = 80_877_103;
const GSSENC_REQUEST: i32 = 80_877_104;
const CANCEL_REQUEST: i32 = 80_877_102;

/// Serves one client until it leaves: `reader` and `writer` are the two ends of its
/// socket, `key` the secret of its BackendKeyData.
pub fn serve<R: Read, W: Write>(db: &Database, key: i32, reader: R, writer: W) -> io::Result<()> {
    let mut input = BufReader::with_capacity(64 * 1024, reader);
    let mut out = Backend::new(writer);
    let mut body = Vec::with_capacity(4096);
    if !startup(&mut input, &mut out, &mut body)? {
        return Ok(());
    }
    let conn = match db.open() {
        Ok(conn) => conn,
        Err(e) => {
            let e = PgError {
                fatal: true,
                ..PgError::from(e)
            };
            out.error(&e);
            return out.flush();
        }
    };
    greet(&mut out, db.library.version(), key, &conn);
    out.flush()?;
    let mut session = Session {
        conn,
        out,
        ext: Extended::new(db.stats.is_some()),
        skipping: false,
        stats: db.stats.as_ref(),
    };
    session.run(&mut input, &mut body)
}

/// Reads startup packets up to the StartupMessage: true to go on, false to close.
fn startup<R: Read, W: Write>(
    input: &mut R,
    out: &mut Backend<W>,
    body: &mut Vec<u8>,
) -> io::Result<bool> {
    loop {
        if !read_startup(input, body)? {
            return Ok(false);
        }
        let code = i32::from_be_bytes([body[0], body[1], body[2], body[3]]);
        match code {
            SSL_REQUEST | GSSENC_REQUEST => out.raw(b"N")?,
            CANCEL_REQUEST => return Ok(false),
            v if v >> 16 == 3 => return Ok(true),
            v => {
                let e = PgError {
                    fatal: true,
                    ..PgError::new(
                        "0A000",
                        format!("unsupported frontend protocol {}.{}", v >> 16, v & 0xffff),
                    )
                };
                out.error(&e);
                out.flush()?;
                return Ok(false);
            }
        }
    }
}

/// AuthenticationOk, the server parameters, BackendKeyData and ReadyForQuery.
fn greet<W: Write>(out: &mut Backend<W>, version: &str, key: i32, conn: &Connection) {
    out.auth_ok();
    let server_version = format!("15.0 (SQLite {version})");
    for (name, value) in [
        ("server_version", server_version.as_str()),
        ("server_encoding", "UTF8"),
        ("client_encoding", "UTF8"),
        ("standard_conforming_strings", "on"),
        ("DateStyle", "ISO, MDY"),
        ("integer_datetimes", "on"),
        ("TimeZone", "UTC"),
    ] {
        out.parameter_status(name, value);
    }
    out.backend_key(std::process::id() as i32, key);
    out.ready(!conn.autocommit());
}

/// An interrupt is only ever the statement timeout's: said as PostgreSQL says it.
fn timed_out(e: PgError) -> PgError {
    if e.code == "57014" {
        PgError::new("57014", "canceling statement due to statement timeout")
    } else {
        e
    }
}

struct Session<'a, W: Write> {
    conn: Connection,
    out: Backend<W>,
    ext: Extended,
    /// After an error in the extended protocol: messages are discarded up to Sync.
    skipping: bool,
    /// The host's statement counters, when it keeps them (`--stmt-stats`).
    stats: Option<&'a StmtStats>,
}

enum Flow {
    Continue,
    Close,
}

impl<W: Write> Session<'_, W> {
    fn run<R: Read>(&mut self, input: &mut R, body: &mut Vec<u8>) -> io::Result<()> {
        while let Some(kind) = read_message(input, body)? {
            if self.skipping && !matches!(kind, b'S' | b'X') {
                continue;
            }
            match self.dispatch(kind, body) {
                Ok(Flow::Continue) => {}
                Ok(Flow::Close) => return Ok(()),
                Err(e) if e.fatal => {
                    self.out.error(&e);
                    return self.out.flush();
                }
                Err(e) => {
                    self.out.error(&e);
                    if matches!(kind, b'Q' | b'F') {
                        self.ready()?;
                    } else {
                        self.skipping = true;
                    }
                }
            }
            if self.out.is_broken() {
                return Ok(());
            }
        }
        Ok(())
    }

    fn ready(&mut self) -> io::Result<()> {
        self.out.ready(!self.conn.autocommit());
        self.out.flush()
    }

    fn dispatch(&mut self, kind: u8, body: &[u8]) -> Result<Flow, PgError> {
        let (db, out) = (&self.conn, &mut self.out);
        match kind {
            b'Q' => {
                db.start_statement();
                let done = self.query(body);
                self.conn.end_statement();
                done.map_err(timed_out)?;
                let _ = self.ready();
            }
            b'P' => self.ext.parse(db, out, body)?,
            b'B' => self.ext.bind(out, body)?,
            b'D' => self.ext.describe(out, body)?,
            b'E' => {
                db.start_statement();
                let done = self.ext.execute(db, out, body, self.stats);
                db.end_statement();
                done.map_err(timed_out)?
            }
            b'C' => self.ext.close(out, body)?,
            b'S' => {
                self.skipping = false;
                self.ext.sync(db);
                let _ = self.ready();
            }
            b'H' => {
                let _ = out.flush();
            }
            b'X' => return Ok(Flow::Close),
            // CopyData, CopyDone and CopyFail outside COPY are ignored, as in PostgreSQL.
            b'd' | b'c' | b'f' => {}
            b'F' => return Err(PgError::new("0A000", "function calls are not supported")),
            k => {
                return Err(PgError::protocol(format!(
                    "invalid frontend message type {}",
                    char::from(k).escape_default()
                )))
            }
        }
        Ok(Flow::Continue)
    }

    /// A simple Query: each statement of the string in turn, up to the first error.
    fn query(&mut self, body: &[u8]) -> Result<(), PgError> {
        let sql = Body::new(body).cstr()?;
        self.ext.close_unnamed_portal();
        if let Some(what) = stmtstats::show(sql) {
            return self.show(what);
        }
        let mut at = 0;
        let mut ran = false;
        while at < sql.len() {
            if let Some((ms, rest)) = dialect::statement_timeout(&sql[at..]) {
                self.conn
                    .set_statement_timeout(Some(Duration::from_millis(ms)));
                self.conn.start_statement();
                self.out.command_complete("SET");
                at += rest;
                ran = true;
                continue;
            }
            let (stmt, rest) = dialect::prepare(&self.conn, &sql[at..])?;
            let text = &sql[at..at + rest];
            at += rest;
            if let Some(mut stmt) = stmt {
                ran = true;
                self.run_statement(&mut stmt, text)?;
            } else if rest == 0 {
                break;
            }
        }
        if !ran {
            self.out.empty(b'I');
        }
        Ok(())
    }

    /// `SHOW bakeoff.statements` and `SHOW bakeoff.started` (see `stmtstats`): an
    /// error when the host keeps no counters.
    fn show(&mut self, what: Show) -> Result<(), PgError> {
        let Some(stats) = self.stats else {
            return Err(PgError::new(
                "55000",
                "this bakeoff-sqlited keeps no statement counters (start it with --stmt-stats)",
            ));
        };
        let (columns, rows) = match what {
            Show::Statements => (stats.columns(), stats.rows()),
            Show::Started => (
                vec!["started".to_string()],
                vec![vec![stats.started().to_string()]],
            ),
        };
        self.out.row_description(&columns, &[]);
        for row in &rows {
            self.out.begin(b'D');
            self.out.i16(row.len() as i16);
            for v in row {
                self.out.value(Some(v.as_bytes()));
            }
            self.out.end();
        }
        self.out.command_complete("SHOW");
        Ok(())
    }

    /// RowDescription (if it has columns), its rows, and CommandComplete.
    fn run_statement(&mut self, stmt: &mut Statement, text: &str) -> Result<(), PgError> {
        let columns = stmt.column_names();
        if !columns.is_empty() {
            self.out.row_description(&columns, &[]);
        }
        let started = self.stats.map(|_| Instant::now());
        let sent = send_rows(stmt, &mut self.out, 0);
        if let (Some(stats), Some(t)) = (self.stats, started) {
            stats.record(Key::of(text), stmt, t.elapsed(), true);
        }
        let (rows, _) = sent?;
        let tag = command_tag(&verb(text), !columns.is_empty(), rows, self.conn.changes());
        self.out.command_complete(&tag);
        Ok(())
    }
}
