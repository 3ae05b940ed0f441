//! A lean PostgreSQL client for the oltp hot path: protocol 3.0 startup with SCRAM-SHA-256
//! (or cleartext) authentication, simple queries, and named prepared statements through
//! the extended protocol (Parse once, then Bind/Execute/Sync in one write). Replies are
//! skipped message by message in one reused buffer up to ReadyForQuery; rows are never
//! decoded.

use crate::stream::{Endpoint, Inbox, Stream};
use crate::values::{DbError, Param, Rows};
use base64::Engine;
use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};
use std::io;
use std::time::Duration;

type HmacSha256 = Hmac<Sha256>;

pub struct PgConn {
    stream: Stream,
    inbox: Inbox,
    out: Vec<u8>,
    /// Which statement keys are prepared (as `s<key>`).
    prepared: Vec<bool>,
}

fn lost(e: io::Error) -> DbError {
    DbError {
        kind: "lost_connection",
        message: e.to_string(),
    }
}

fn protocol(what: &str) -> DbError {
    DbError {
        kind: "client_error",
        message: format!("unexpected reply from the server: {what}"),
    }
}

/// An ErrorResponse's SQLSTATE and message.
fn server_error(body: &[u8]) -> DbError {
    let (mut code, mut message) = (String::new(), String::new());
    let mut i = 0;
    while i < body.len() && body[i] != 0 {
        let field = body[i];
        let end = body[i + 1..]
            .iter()
            .position(|b| *b == 0)
            .map_or(body.len(), |p| i + 1 + p);
        let text = String::from_utf8_lossy(&body[i + 1..end]).to_string();
        match field {
            b'C' => code = text,
            b'M' => message = text,
            _ => {}
        }
        i = end + 1;
    }
    DbError {
        kind: match code.as_str() {
            "40001" => "serialization",
            "40P01" => "deadlock",
            "53300" => "too_many_connections",
            "23505" => "duplicate_key",
            "28P01" | "28000" => "access_denied",
            _ => "server_error",
        },
        message: format!("{message} (SQLSTATE {code})"),
    }
}

/// RowDescription: the column names.
fn row_description(m: &[u8]) -> Option<Vec<String>> {
    let n = u16::from_be_bytes([*m.first()?, *m.get(1)?]);
    let mut at = 2;
    let mut names = Vec::with_capacity(usize::from(n));
    for _ in 0..n {
        let end = at + m.get(at..)?.iter().position(|b| *b == 0)?;
        names.push(String::from_utf8_lossy(&m[at..end]).into_owned());
        at = end + 1 + 18;
    }
    Some(names)
}

/// DataRow: every column as text, NULL (length -1) as None.
fn data_row(m: &[u8]) -> Option<Vec<Option<String>>> {
    let n = u16::from_be_bytes([*m.first()?, *m.get(1)?]);
    let mut at = 2;
    let mut row = Vec::with_capacity(usize::from(n));
    for _ in 0..n {
        let len = i32::from_be_bytes(m.get(at..at + 4)?.try_into().ok()?);
        at += 4;
        if len < 0 {
            row.push(None);
        } else {
            let v = m.get(at..at + len as usize)?;
            row.push(Some(String::from_utf8_lossy(v).into_owned()));
            at += len as usize;
        }
    }
    Some(row)
}

/// The row count at the end of a CommandComplete tag ("UPDATE 3", "INSERT 0 1", "COPY 9").
fn command_count(m: &[u8]) -> u64 {
    let tag = String::from_utf8_lossy(m.split(|b| *b == 0).next().unwrap_or_default());
    tag.rsplit(' ')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

fn hmac(key: &[u8], data: &[u8]) -> Vec<u8> {
    let mut m = HmacSha256::new_from_slice(key).expect("HMAC takes any key length");
    m.update(data);
    m.finalize().into_bytes().to_vec()
}

/// PBKDF2-HMAC-SHA256 with one block: SCRAM's Hi().
fn hi(password: &[u8], salt: &[u8], iterations: u32) -> Vec<u8> {
    let mut s = salt.to_vec();
    s.extend_from_slice(&1u32.to_be_bytes());
    let mut u = hmac(password, &s);
    let mut out = u.clone();
    for _ in 1..iterations {
        u = hmac(password, &u);
        for (o, x) in out.iter_mut().zip(&u) {
            *o ^= x;
        }
    }
    out
}

/// The client-final message's proof for SCRAM-SHA-256 (RFC 5802, 7677).
pub fn scram_proof(password: &str, salt: &[u8], iterations: u32, auth_message: &str) -> Vec<u8> {
    let salted = hi(password.as_bytes(), salt, iterations);
    let client_key = hmac(&salted, b"Client Key");
    let stored = Sha256::digest(&client_key);
    let signature = hmac(&stored, auth_message.as_bytes());
    client_key
        .iter()
        .zip(&signature)
        .map(|(a, b)| a ^ b)
        .collect()
}

fn nonce() -> String {
    let mut bytes = [0u8; 18];
    let _ = std::fs::File::open("/dev/urandom").and_then(|mut f| {
        use std::io::Read;
        f.read_exact(&mut bytes)
    });
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

impl PgConn {
    /// Switches the socket to blocking calls (see `stream`).
    pub fn make_blocking(&mut self) -> Result<(), DbError> {
        self.stream.make_blocking().map_err(lost)
    }

    pub async fn connect(
        to: &Endpoint,
        user: &str,
        password: &str,
        database: &str,
        timeout: Duration,
    ) -> Result<PgConn, DbError> {
        let stream = Stream::connect(to, timeout).await.map_err(lost)?;
        let mut c = PgConn {
            stream,
            inbox: Inbox::new(),
            out: Vec::with_capacity(1024),
            prepared: Vec::new(),
        };
        let mut body = Vec::new();
        body.extend_from_slice(&196_608u32.to_be_bytes());
        for (k, v) in [("user", user), ("database", database)] {
            body.extend_from_slice(k.as_bytes());
            body.push(0);
            body.extend_from_slice(v.as_bytes());
            body.push(0);
        }
        body.push(0);
        c.out.clear();
        c.out
            .extend_from_slice(&((body.len() + 4) as u32).to_be_bytes());
        c.out.extend_from_slice(&body);
        c.flush().await?;
        let client_nonce = nonce();
        let first_bare = format!("n=,r={client_nonce}");
        let mut auth_message = String::new();
        loop {
            let (t, r) = c.message().await?;
            let m = c.inbox.buf[r].to_vec();
            match t {
                b'R' => {
                    let code = u32::from_be_bytes(
                        m.get(..4)
                            .ok_or_else(|| protocol("auth"))?
                            .try_into()
                            .unwrap_or_default(),
                    );
                    match code {
                        0 => {}
                        3 => {
                            let mut p = password.as_bytes().to_vec();
                            p.push(0);
                            c.put(b'p', &p);
                            c.flush().await?;
                        }
                        10 => {
                            let mut p = b"SCRAM-SHA-256\0".to_vec();
                            let first = format!("n,,{first_bare}");
                            p.extend_from_slice(&(first.len() as u32).to_be_bytes());
                            p.extend_from_slice(first.as_bytes());
                            c.put(b'p', &p);
                            c.flush().await?;
                        }
                        11 => {
                            let server_first = String::from_utf8_lossy(&m[4..]).to_string();
                            let mut nonce = "";
                            let mut salt = Vec::new();
                            let mut iterations = 4096;
                            for part in server_first.split(',') {
                                if let Some(v) = part.strip_prefix("r=") {
                                    nonce = v;
                                } else if let Some(v) = part.strip_prefix("s=") {
                                    salt = base64::engine::general_purpose::STANDARD
                                        .decode(v)
                                        .map_err(|_| protocol("SCRAM salt"))?;
                                } else if let Some(v) = part.strip_prefix("i=") {
                                    iterations = v.parse().map_err(|_| protocol("SCRAM iterations"))?;
                                }
                            }
                            if !nonce.starts_with(&client_nonce) {
                                return Err(protocol("SCRAM nonce"));
                            }
                            let without_proof = format!("c=biws,r={nonce}");
                            auth_message = format!("{first_bare},{server_first},{without_proof}");
                            let proof = scram_proof(password, &salt, iterations, &auth_message);
                            let fin = format!(
                                "{without_proof},p={}",
                                base64::engine::general_purpose::STANDARD.encode(proof)
                            );
                            c.put(b'p', fin.as_bytes());
                            c.flush().await?;
                        }
                        12 => {
                            let _ = &auth_message;
                        }
                        other => {
                            return Err(DbError {
                                kind: "access_denied",
                                message: format!(
                                    "the server wants authentication method {other}; bakeoff's client speaks SCRAM-SHA-256 and password"
                                ),
                            })
                        }
                    }
                }
                b'E' => return Err(server_error(&m)),
                b'Z' => return Ok(c),
                _ => {}
            }
        }
    }

    /// Appends one message (type, length, body) to the output buffer.
    fn put(&mut self, t: u8, body: &[u8]) {
        self.out.push(t);
        self.out
            .extend_from_slice(&((body.len() + 4) as u32).to_be_bytes());
        self.out.extend_from_slice(body);
    }

    async fn flush(&mut self) -> Result<(), DbError> {
        let r = self.stream.write_all(&self.out).await.map_err(lost);
        self.out.clear();
        r
    }

    /// The next message: its type and body range in `self.inbox.buf`.
    async fn message(&mut self) -> Result<(u8, std::ops::Range<usize>), DbError> {
        let len = |b: &[u8]| 1 + u32::from_be_bytes([b[1], b[2], b[3], b[4]]) as usize;
        let r = self
            .inbox
            .frame(&mut self.stream, 5, len)
            .await
            .map_err(lost)?;
        Ok((self.inbox.buf[r.start], r.start + 5..r.end))
    }

    /// Skips replies up to ReadyForQuery; the first error, if any, and whether a
    /// ParseComplete came by.
    async fn until_ready(&mut self) -> Result<(bool, Option<DbError>), DbError> {
        let (mut err, mut parsed) = (None, false);
        loop {
            let (t, r) = self.message().await?;
            match t {
                b'1' => parsed = true,
                b'E' if err.is_none() => err = Some(server_error(&self.inbox.buf[r])),
                b'Z' => return Ok((parsed, err)),
                _ => {}
            }
        }
    }

    /// A simple query (no parameters).
    pub async fn query(&mut self, sql: &str) -> Result<(), DbError> {
        let mut body = Vec::with_capacity(sql.len() + 1);
        body.extend_from_slice(sql.as_bytes());
        body.push(0);
        self.put(b'Q', &body);
        self.flush().await?;
        match self.until_ready().await? {
            (_, Some(e)) => Err(e),
            _ => Ok(()),
        }
    }

    /// A simple query with its result decoded: the last result set's column names and
    /// rows as text (NULL as None), and the rows the statements affected (from their
    /// command tags). For the workloads that read values, not the oltp hot path.
    pub async fn query_rows(&mut self, sql: &str) -> Result<Rows, DbError> {
        let mut body = Vec::with_capacity(sql.len() + 1);
        body.extend_from_slice(sql.as_bytes());
        body.push(0);
        self.put(b'Q', &body);
        self.flush().await?;
        let mut out = Rows::default();
        let mut err = None;
        loop {
            let (t, r) = self.message().await?;
            let m = &self.inbox.buf[r];
            match t {
                b'T' => {
                    out.columns =
                        row_description(m).ok_or_else(|| protocol("bad row description"))?;
                    out.rows.clear();
                }
                b'D' => out
                    .rows
                    .push(data_row(m).ok_or_else(|| protocol("bad data row"))?),
                b'C' => out.affected += command_count(m),
                b'E' if err.is_none() => err = Some(server_error(m)),
                b'Z' => return err.map_or(Ok(out), Err),
                _ => {}
            }
        }
    }

    /// `COPY ... FROM STDIN` with `data` (text format, one row per line) sent in chunks;
    /// returns the rows copied.
    pub async fn copy_in(&mut self, sql: &str, data: &[u8]) -> Result<u64, DbError> {
        let mut body = Vec::with_capacity(sql.len() + 1);
        body.extend_from_slice(sql.as_bytes());
        body.push(0);
        self.put(b'Q', &body);
        self.flush().await?;
        let mut err = None;
        let mut copied = 0;
        loop {
            let (t, r) = self.message().await?;
            match t {
                b'G' => {
                    for chunk in data.chunks(256 * 1024) {
                        self.put(b'd', chunk);
                        self.flush().await?;
                    }
                    self.put(b'c', &[]);
                    self.flush().await?;
                }
                b'C' => copied += command_count(&self.inbox.buf[r]),
                b'E' if err.is_none() => err = Some(server_error(&self.inbox.buf[r])),
                b'Z' => return err.map_or(Ok(copied), Err),
                _ => {}
            }
        }
    }

    /// Runs the statement `sql` ($n placeholders) prepared once per connection as `key`;
    /// integers go as binary int4, text as text.
    pub async fn execute(
        &mut self,
        key: usize,
        sql: &str,
        params: &[Param<'_>],
    ) -> Result<(), DbError> {
        if key >= self.prepared.len() {
            self.prepared.resize(key + 1, false);
        }
        let name = format!("s{key}\0");
        let first = !self.prepared[key];
        let mut out = std::mem::take(&mut self.out);
        out.clear();
        if first {
            let start = out.len();
            out.push(b'P');
            out.extend_from_slice(&[0; 4]);
            out.extend_from_slice(name.as_bytes());
            out.extend_from_slice(sql.as_bytes());
            out.push(0);
            out.extend_from_slice(&0u16.to_be_bytes());
            let len = (out.len() - start - 1) as u32;
            out[start + 1..start + 5].copy_from_slice(&len.to_be_bytes());
        }
        // Bind: unnamed portal, the statement, formats per parameter, values, text results.
        let start = out.len();
        out.push(b'B');
        out.extend_from_slice(&[0; 4]);
        out.push(0);
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(&(params.len() as u16).to_be_bytes());
        for p in params {
            let binary = matches!(p, Param::Int(_));
            out.extend_from_slice(&u16::from(binary).to_be_bytes());
        }
        out.extend_from_slice(&(params.len() as u16).to_be_bytes());
        for p in params {
            match p {
                Param::Int(i) => {
                    out.extend_from_slice(&4u32.to_be_bytes());
                    out.extend_from_slice(&(*i as i32).to_be_bytes());
                }
                Param::Text(s) => {
                    out.extend_from_slice(&(s.len() as u32).to_be_bytes());
                    out.extend_from_slice(s.as_bytes());
                }
            }
        }
        out.extend_from_slice(&0u16.to_be_bytes());
        let len = (out.len() - start - 1) as u32;
        out[start + 1..start + 5].copy_from_slice(&len.to_be_bytes());
        // Execute the unnamed portal (all rows), then Sync.
        out.extend_from_slice(&[b'E', 0, 0, 0, 9, 0, 0, 0, 0, 0]);
        out.extend_from_slice(&[b'S', 0, 0, 0, 4]);
        self.out = out;
        self.flush().await?;
        let (parsed, err) = self.until_ready().await?;
        if parsed {
            self.prepared[key] = true;
        }
        err.map_or(Ok(()), Err)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_and_tags_decode() {
        let mut d = vec![0, 2];
        d.extend_from_slice(&2i32.to_be_bytes());
        d.extend_from_slice(b"ok");
        d.extend_from_slice(&(-1i32).to_be_bytes());
        assert_eq!(data_row(&d).unwrap(), vec![Some("ok".to_string()), None]);
        let mut t = vec![0, 1];
        t.extend_from_slice(b"w_id\0");
        t.extend_from_slice(&[0; 18]);
        assert_eq!(row_description(&t).unwrap(), vec!["w_id".to_string()]);
        assert_eq!(command_count(b"UPDATE 3\0"), 3);
        assert_eq!(command_count(b"INSERT 0 10\0"), 10);
        assert_eq!(command_count(b"BEGIN\0"), 0);
    }

    #[test]
    fn scram_matches_rfc7677_example() {
        // RFC 7677, section 3: user "user", password "pencil".
        let salt = base64::engine::general_purpose::STANDARD
            .decode("W22ZaJ0SNY7soEsUEjb6gQ==")
            .unwrap();
        let auth = "n=user,r=rOprNGfwEbeRWgbNEkqO,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096,c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0";
        let proof = scram_proof("pencil", &salt, 4096, auth);
        assert_eq!(
            base64::engine::general_purpose::STANDARD.encode(proof),
            "dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
        );
    }
}
