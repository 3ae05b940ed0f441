//! PostgreSQL protocol 3.0 framing: reading the client's startup packet and typed
//! messages, a cursor over a message body (`Body`), and the server's messages buffered
//! in one reused Vec (`Backend`) that reaches the socket only on `flush` or when large.

use std::io::{self, Read, Write};

use crate::error::PgError;

/// The largest message accepted from a client (PostgreSQL's own limit is 1 GiB).
const MAX_MESSAGE: usize = 1 << 30;
/// The largest startup packet (PostgreSQL's MAX_STARTUP_PACKET_LENGTH).
const MAX_STARTUP: usize = 10_000;
/// Output is written to the socket once this much is buffered.
const FLUSH_AT: usize = 64 * 1024;

/// The text type's oid: every column and every undeclared parameter is text.
pub const TEXT_OID: u32 = 25;

fn read_len(input: &mut impl Read) -> io::Result<Option<usize>> {
    let mut len = [0u8; 4];
    match input.read_exact(&mut len) {
        Ok(()) => Ok(Some(i32::from_be_bytes(len).max(0) as usize)),
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => Ok(None),
        Err(e) => Err(e),
    }
}

fn invalid(what: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what)
}

/// Reads a startup-phase packet (length, then body without a type byte) into `body`;
/// false at end of input.
pub fn read_startup(input: &mut impl Read, body: &mut Vec<u8>) -> io::Result<bool> {
    read_body(input, body, 8..=MAX_STARTUP, "startup packet")
}

/// Reads one typed message into `body`: its type, None at end of input.
pub fn read_message(input: &mut impl Read, body: &mut Vec<u8>) -> io::Result<Option<u8>> {
    let mut kind = [0u8; 1];
    match input.read_exact(&mut kind) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e),
    }
    Ok(read_body(input, body, 4..=MAX_MESSAGE, "message")?.then_some(kind[0]))
}

/// Reads a length (which counts itself) and the body it announces into `body`; the
/// length must lie in `valid` (else an `invalid <what> length` error). False at end of
/// input.
fn read_body(
    input: &mut impl Read,
    body: &mut Vec<u8>,
    valid: std::ops::RangeInclusive<usize>,
    what: &str,
) -> io::Result<bool> {
    let Some(len) = read_len(input)? else {
        return Ok(false);
    };
    if !valid.contains(&len) {
        return Err(invalid(format!("invalid {what} length {len}")));
    }
    body.resize(len - 4, 0);
    input.read_exact(body)?;
    Ok(true)
}

/// A cursor over a message body; running off its end is a protocol violation.
pub struct Body<'a> {
    buf: &'a [u8],
    at: usize,
}

impl<'a> Body<'a> {
    pub fn new(buf: &'a [u8]) -> Body<'a> {
        Body { buf, at: 0 }
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], PgError> {
        let end = self.at.checked_add(n).filter(|e| *e <= self.buf.len());
        let end = end.ok_or_else(|| PgError::protocol("message too short"))?;
        let out = &self.buf[self.at..end];
        self.at = end;
        Ok(out)
    }

    pub fn u8(&mut self) -> Result<u8, PgError> {
        Ok(self.take(1)?[0])
    }

    pub fn i16(&mut self) -> Result<i16, PgError> {
        let b = self.take(2)?;
        Ok(i16::from_be_bytes([b[0], b[1]]))
    }

    pub fn i32(&mut self) -> Result<i32, PgError> {
        let b = self.take(4)?;
        Ok(i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// A count (int16) that must not be negative.
    pub fn count(&mut self) -> Result<usize, PgError> {
        usize::try_from(self.i16()?).map_err(|_| PgError::protocol("negative count"))
    }

    /// A NUL-terminated UTF-8 string.
    pub fn cstr(&mut self) -> Result<&'a str, PgError> {
        let rest = &self.buf[self.at..];
        let n = rest
            .iter()
            .position(|b| *b == 0)
            .ok_or_else(|| PgError::protocol("unterminated string"))?;
        let s = std::str::from_utf8(&rest[..n])
            .map_err(|_| PgError::protocol("invalid UTF-8 in a string"))?;
        self.at += n + 1;
        Ok(s)
    }

    /// A length-prefixed value (int32, -1 for NULL).
    pub fn value(&mut self) -> Result<Option<&'a [u8]>, PgError> {
        match self.i32()? {
            -1 => Ok(None),
            n if n < 0 => Err(PgError::protocol("invalid value length")),
            n => Ok(Some(self.take(n as usize)?)),
        }
    }
}

/// The server's side of the connection: messages are appended to `buf` and written out
/// on `flush` (or once `FLUSH_AT` bytes wait). A write error is kept and makes every
/// later flush fail, so message builders never return errors.
pub struct Backend<W: Write> {
    w: W,
    buf: Vec<u8>,
    start: usize,
    broken: Option<io::Error>,
}

impl<W: Write> Backend<W> {
    pub fn new(w: W) -> Backend<W> {
        Backend {
            w,
            buf: Vec::with_capacity(FLUSH_AT + 1024),
            start: 0,
            broken: None,
        }
    }

    /// Whether a write has failed (the client is gone).
    pub fn is_broken(&self) -> bool {
        self.broken.is_some()
    }

    /// Writes out everything buffered.
    pub fn flush(&mut self) -> io::Result<()> {
        if self.broken.is_none() && !self.buf.is_empty() {
            if let Err(e) = self.w.write_all(&self.buf).and_then(|()| self.w.flush()) {
                self.broken = Some(e);
            }
        }
        self.buf.clear();
        match &self.broken {
            Some(e) => Err(io::Error::new(e.kind(), e.to_string())),
            None => Ok(()),
        }
    }

    /// Writes raw bytes (the one-byte SSL/GSSAPI refusal) and flushes.
    pub fn raw(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.buf.extend_from_slice(bytes);
        self.flush()
    }

    /// Starts a message of type `kind`; the length is filled in by `end`.
    pub fn begin(&mut self, kind: u8) {
        self.start = self.buf.len();
        self.buf.push(kind);
        self.buf.extend_from_slice(&[0; 4]);
    }

    pub fn end(&mut self) {
        let len = (self.buf.len() - self.start - 1) as u32;
        self.buf[self.start + 1..self.start + 5].copy_from_slice(&len.to_be_bytes());
        if self.buf.len() >= FLUSH_AT {
            let _ = self.flush();
        }
    }

    pub fn i16(&mut self, v: i16) {
        self.buf.extend_from_slice(&v.to_be_bytes());
    }

    pub fn i32(&mut self, v: i32) {
        self.buf.extend_from_slice(&v.to_be_bytes());
    }

    pub fn cstr(&mut self, s: &str) {
        self.buf.extend_from_slice(s.as_bytes());
        self.buf.push(0);
    }

    /// A length-prefixed value, None as NULL (-1).
    pub fn value(&mut self, v: Option<&[u8]>) {
        match v {
            None => self.i32(-1),
            Some(b) => {
                self.i32(b.len() as i32);
                self.buf.extend_from_slice(b);
            }
        }
    }

    /// A message with an empty body.
    pub fn empty(&mut self, kind: u8) {
        self.begin(kind);
        self.end();
    }

    pub fn auth_ok(&mut self) {
        self.begin(b'R');
        self.i32(0);
        self.end();
    }

    pub fn parameter_status(&mut self, name: &str, value: &str) {
        self.begin(b'S');
        self.cstr(name);
        self.cstr(value);
        self.end();
    }

    pub fn backend_key(&mut self, pid: i32, secret: i32) {
        self.begin(b'K');
        self.i32(pid);
        self.i32(secret);
        self.end();
    }

    /// ReadyForQuery with `I` (idle) or `T` (in a transaction).
    pub fn ready(&mut self, in_transaction: bool) {
        self.begin(b'Z');
        self.buf.push(if in_transaction { b'T' } else { b'I' });
        self.end();
    }

    /// RowDescription: every column text, in `format` (0 text, 1 binary: the same bytes
    /// for text) by column, or 0 where `formats` has none.
    pub fn row_description(&mut self, names: &[String], formats: &[i16]) {
        self.begin(b'T');
        self.i16(names.len() as i16);
        for (i, name) in names.iter().enumerate() {
            self.cstr(name);
            self.i32(0); // table oid
            self.i16(0); // column number
            self.i32(TEXT_OID as i32);
            self.i16(-1); // typlen
            self.i32(-1); // typmod
            self.i16(formats.get(i).copied().unwrap_or(0));
        }
        self.end();
    }

    pub fn parameter_description(&mut self, types: &[u32]) {
        self.begin(b't');
        self.i16(types.len() as i16);
        for t in types {
            self.i32(*t as i32);
        }
        self.end();
    }

    pub fn command_complete(&mut self, tag: &str) {
        self.begin(b'C');
        self.cstr(tag);
        self.end();
    }

    /// ErrorResponse (or a FATAL one before closing).
    pub fn error(&mut self, e: &PgError) {
        let severity = if e.fatal { "FATAL" } else { "ERROR" };
        self.begin(b'E');
        for (field, text) in [
            (b'S', severity),
            (b'V', severity),
            (b'C', e.code),
            (b'M', e.message.as_str()),
        ] {
            self.buf.push(field);
            self.cstr(text);
        }
        self.buf.push(0);
        self.end();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_framed_and_buffered() {
        let mut out = Vec::new();
        let mut b = Backend::new(&mut out);
        b.command_complete("SELECT 1");
        b.ready(false);
        b.flush().unwrap();
        assert_eq!(out, b"C\0\0\0\x0dSELECT 1\0Z\0\0\0\x05I");
    }

    #[test]
    fn bodies_parse_and_reject_truncation() {
        let mut input: &[u8] = b"P\0\0\0\x0aab\0c\0\0";
        let mut body = Vec::new();
        assert_eq!(read_message(&mut input, &mut body).unwrap(), Some(b'P'));
        let mut r = Body::new(&body);
        assert_eq!(r.cstr().unwrap(), "ab");
        assert_eq!(r.cstr().unwrap(), "c");
        assert!(r.i16().is_err());
        assert_eq!(read_message(&mut input, &mut body).unwrap(), None);
    }
}
