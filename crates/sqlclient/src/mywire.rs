//! A lean MariaDB/MySQL client for the oltp hot path: the classic protocol's handshake
//! (mysql_native_password, and MySQL 8's caching_sha2_password: the fast path, and the
//! full authentication with the password in clear over a unix socket or RSA-encrypted
//! with the server's public key over TCP), COM_QUERY, and prepared statements (COM_STMT_PREPARE and
//! COM_STMT_EXECUTE with binary parameters). Results are skipped packet by packet in one
//! reused buffer, never decoded into rows: the load generator needs the round trip and the
//! status, not the values. (A general driver decodes every row into owned values, which
//! measured about twice sysbench's client CPU per transaction here.)

use crate::stream::{Endpoint, Inbox, Stream};
use crate::values::{DbError, Param, Rows};
use std::io;
use std::time::Duration;

/// CLIENT_LONG_PASSWORD to MySQL; MariaDB reads a clear bit as "this peer is MariaDB and
/// speaks the extended capabilities".
const CLIENT_MYSQL: u32 = 1;
/// MariaDB 10.6+: prepared statements' column definitions are sent only when they change.
const MARIADB_CLIENT_CACHE_METADATA: u32 = 1 << (36 - 32);
const CLIENT_LONG_FLAG: u32 = 4;
const CLIENT_CONNECT_WITH_DB: u32 = 8;
const CLIENT_PROTOCOL_41: u32 = 0x200;
const CLIENT_TRANSACTIONS: u32 = 0x2000;
const CLIENT_SECURE_CONNECTION: u32 = 0x8000;
const CLIENT_PLUGIN_AUTH: u32 = 0x80000;
const COM_QUERY: u8 = 0x03;
const COM_STMT_PREPARE: u8 = 0x16;
const COM_STMT_EXECUTE: u8 = 0x17;
const TYPE_LONG: u8 = 0x03;
const TYPE_VAR_STRING: u8 = 0xfd;

pub struct MyConn {
    stream: Stream,
    inbox: Inbox,
    out: Vec<u8>,
    /// Prepared statements by key: (statement id, parameter count, types sent). Like
    /// libmysqlclient, parameter types go with the first execution only.
    stmts: Vec<Option<(u32, u16, bool)>>,
    last_seq: u8,
}

fn lost(e: io::Error) -> DbError {
    DbError {
        kind: "lost_connection",
        message: e.to_string(),
    }
}

fn server_error(p: &[u8]) -> DbError {
    let code = u16::from_le_bytes([
        p.get(1).copied().unwrap_or(0),
        p.get(2).copied().unwrap_or(0),
    ]);
    let msg_at = if p.get(3) == Some(&b'#') { 9 } else { 3 };
    let message = String::from_utf8_lossy(p.get(msg_at..).unwrap_or_default()).to_string();
    DbError {
        kind: match code {
            1213 => "deadlock",
            1205 => "lock_wait_timeout",
            1040 => "too_many_connections",
            1062 => "duplicate_key",
            1461 => "max_prepared_stmt_count",
            1045 => "access_denied",
            _ => "server_error",
        },
        message: format!("{message} (error {code})"),
    }
}

fn protocol(what: &str) -> DbError {
    DbError {
        kind: "client_error",
        message: format!("unexpected reply from the server: {what}"),
    }
}

/// mysql_native_password: SHA1(pw) XOR SHA1(salt + SHA1(SHA1(pw))).
pub fn scramble(password: &str, salt: &[u8]) -> Vec<u8> {
    use sha1::{Digest, Sha1};
    if password.is_empty() {
        return Vec::new();
    }
    let h1 = Sha1::digest(password.as_bytes());
    let h2 = Sha1::digest(h1);
    let mut h = Sha1::new();
    h.update(salt);
    h.update(h2);
    let h3 = h.finalize();
    h1.iter().zip(h3.iter()).map(|(a, b)| a ^ b).collect()
}

/// caching_sha2_password: SHA256(pw) XOR SHA256(SHA256(SHA256(pw)) + nonce).
pub fn scramble_sha2(password: &str, nonce: &[u8]) -> Vec<u8> {
    use sha2::{Digest, Sha256};
    if password.is_empty() {
        return Vec::new();
    }
    let h1 = Sha256::digest(password.as_bytes());
    let h2 = Sha256::digest(h1);
    let mut h = Sha256::new();
    h.update(h2);
    h.update(nonce);
    let h3 = h.finalize();
    h1.iter().zip(h3.iter()).map(|(a, b)| a ^ b).collect()
}

/// The authentication methods this client speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Plugin {
    Native,
    CachingSha2,
}

impl Plugin {
    fn named(name: &[u8]) -> Option<Plugin> {
        match name {
            b"mysql_native_password" => Some(Plugin::Native),
            b"caching_sha2_password" => Some(Plugin::CachingSha2),
            _ => None,
        }
    }

    fn name(self) -> &'static [u8] {
        match self {
            Plugin::Native => b"mysql_native_password",
            Plugin::CachingSha2 => b"caching_sha2_password",
        }
    }

    /// The first answer to a nonce.
    fn scramble(self, password: &str, nonce: &[u8]) -> Vec<u8> {
        match self {
            Plugin::Native => scramble(password, nonce),
            Plugin::CachingSha2 => scramble_sha2(password, nonce),
        }
    }
}

/// caching_sha2_password's full authentication over TCP without TLS: the password with
/// its NUL, XORed with the nonce, encrypted with the server's RSA public key (PEM, as the
/// server sends it) with OAEP padding (SHA-1, as OpenSSL's RSA_PKCS1_OAEP_PADDING).
fn rsa_password(password: &str, nonce: &[u8], pem: &[u8]) -> Result<Vec<u8>, DbError> {
    use rsa::pkcs8::DecodePublicKey;
    let refused = |what: String| DbError {
        kind: "client_error",
        message: format!("caching_sha2_password: {what}"),
    };
    let pem =
        std::str::from_utf8(pem).map_err(|_| refused("the server's key is not text".into()))?;
    let key = rsa::RsaPublicKey::from_public_key_pem(pem.trim_end_matches('\0').trim())
        .or_else(|_| {
            use rsa::pkcs1::DecodeRsaPublicKey;
            rsa::RsaPublicKey::from_pkcs1_pem(pem.trim_end_matches('\0').trim())
        })
        .map_err(|e| refused(format!("cannot read the server's public key: {e}")))?;
    let mut msg: Vec<u8> = password.bytes().chain([0]).collect();
    if !nonce.is_empty() {
        for (i, b) in msg.iter_mut().enumerate() {
            *b ^= nonce[i % nonce.len()];
        }
    }
    key.encrypt(
        &mut rsa::rand_core::OsRng,
        rsa::Oaep::new::<sha1::Sha1>(),
        &msg,
    )
    .map_err(|e| refused(format!("cannot encrypt the password: {e}")))
}

impl MyConn {
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
    ) -> Result<MyConn, DbError> {
        let stream = Stream::connect(to, timeout).await.map_err(lost)?;
        let mut c = MyConn {
            stream,
            inbox: Inbox::new(),
            out: Vec::with_capacity(1024),
            stmts: Vec::new(),
            last_seq: 0,
        };
        let hs = c.packet().await?;
        let p = c.inbox.buf[hs].to_vec();
        if p.first() == Some(&0xff) {
            return Err(server_error(&p));
        }
        let g = parse_greeting(&p).ok_or_else(|| protocol("bad handshake"))?;
        let (mut salt, charset) = (g.salt, g.charset);
        // Answer in the server's default method when this client speaks it (MySQL 8:
        // caching_sha2_password), so the usual case costs no switch.
        let mut plugin = Plugin::named(&g.plugin).unwrap_or(Plugin::Native);
        // Against MariaDB, as libmariadb does (and so as sysbench does): leave CLIENT_MYSQL
        // clear and ask for MARIADB_CLIENT_CACHE_METADATA, so an execution's result
        // carries no column definitions unless they changed. Without it the server builds
        // and sends them on every execution, which costs it CPU sysbench does not make it
        // spend.
        let mariadb = g.ext_caps != 0;
        let ext_caps = g.ext_caps & MARIADB_CLIENT_CACHE_METADATA;
        let caps = if mariadb { 0 } else { CLIENT_MYSQL }
            | CLIENT_LONG_FLAG
            | CLIENT_CONNECT_WITH_DB
            | CLIENT_PROTOCOL_41
            | CLIENT_TRANSACTIONS
            | CLIENT_SECURE_CONNECTION
            | CLIENT_PLUGIN_AUTH;
        let auth = plugin.scramble(password, &salt);
        let mut body = Vec::with_capacity(128);
        body.extend_from_slice(&caps.to_le_bytes());
        body.extend_from_slice(&(16u32 << 20).to_le_bytes());
        // The server's own default collation: results need no conversion.
        body.push(charset);
        body.extend_from_slice(&[0; 19]);
        body.extend_from_slice(&ext_caps.to_le_bytes());
        body.extend_from_slice(user.as_bytes());
        body.push(0);
        body.push(auth.len() as u8);
        body.extend_from_slice(&auth);
        body.extend_from_slice(database.as_bytes());
        body.push(0);
        body.extend_from_slice(plugin.name());
        body.push(0);
        let seq = c.last_seq.wrapping_add(1);
        c.send(seq, &body).await?;
        let secure = matches!(to, Endpoint::Unix(_));
        loop {
            let r = c.packet().await?;
            let p = c.inbox.buf[r].to_vec();
            let answer = match p.first() {
                Some(0x00) => return Ok(c),
                Some(0xff) => return Err(server_error(&p)),
                Some(0xfe) => {
                    // Auth switch: plugin name, NUL, new nonce (NUL-terminated).
                    let name_end = p.iter().skip(1).position(|b| *b == 0).map(|i| i + 1);
                    let Some(ne) = name_end else {
                        return Err(protocol("bad auth switch"));
                    };
                    plugin = Plugin::named(&p[1..ne]).ok_or_else(|| DbError {
                        kind: "access_denied",
                        message: format!(
                            "the server wants auth plugin {}; bakeoff's client speaks mysql_native_password and caching_sha2_password",
                            String::from_utf8_lossy(&p[1..ne])
                        ),
                    })?;
                    salt = p[ne + 1..].iter().copied().take(20).collect();
                    plugin.scramble(password, &salt)
                }
                // caching_sha2_password's "more data": 3 = the cached fast path passed
                // (an OK follows), 4 = full authentication, else the public key asked for.
                Some(0x01) if plugin == Plugin::CachingSha2 => match p.get(1) {
                    Some(3) if p.len() == 2 => continue,
                    Some(4) if p.len() == 2 && secure => password.bytes().chain([0]).collect(),
                    Some(4) if p.len() == 2 => vec![2],
                    _ => rsa_password(password, &salt, &p[1..])?,
                },
                _ => return Err(protocol("bad auth reply")),
            };
            let seq = c.last_seq.wrapping_add(1);
            c.send(seq, &answer).await?;
        }
    }

    /// Writes one packet (the command sequences start at `seq`).
    async fn send(&mut self, seq: u8, body: &[u8]) -> Result<(), DbError> {
        self.out.clear();
        let n = body.len() as u32;
        self.out.extend_from_slice(&n.to_le_bytes()[..3]);
        self.out.push(seq);
        self.out.extend_from_slice(body);
        self.stream.write_all(&self.out).await.map_err(lost)
    }

    /// The next packet's payload, as a range of `self.inbox.buf`.
    async fn packet(&mut self) -> Result<std::ops::Range<usize>, DbError> {
        let len =
            |b: &[u8]| 4 + (usize::from(b[0]) | usize::from(b[1]) << 8 | usize::from(b[2]) << 16);
        let r = self
            .inbox
            .frame(&mut self.stream, 4, len)
            .await
            .map_err(lost)?;
        self.last_seq = self.inbox.buf[r.start + 3];
        Ok(r.start + 4..r.end)
    }

    /// Reads a command's reply (OK, ERR, or a result set it skips).
    async fn reply(&mut self) -> Result<(), DbError> {
        let r = self.packet().await?;
        match self.inbox.buf[r.start] {
            0x00 => return Ok(()),
            0xff => return Err(server_error(&self.inbox.buf[r])),
            _ => {}
        }
        // A result set: column definitions, EOF, rows, EOF (or ERR).
        let mut eofs = 0;
        loop {
            let r = self.packet().await?;
            let first = self.inbox.buf[r.start];
            if first == 0xff {
                return Err(server_error(&self.inbox.buf[r]));
            }
            if first == 0xfe && r.len() < 9 {
                eofs += 1;
                if eofs == 2 {
                    return Ok(());
                }
            }
        }
    }

    /// COM_QUERY: a statement as text.
    pub async fn query(&mut self, sql: &str) -> Result<(), DbError> {
        let mut body = Vec::with_capacity(sql.len() + 1);
        body.push(COM_QUERY);
        body.extend_from_slice(sql.as_bytes());
        self.send(0, &body).await?;
        self.reply().await
    }

    /// COM_QUERY with its result decoded: column names, rows as text (NULL as None), and
    /// the affected-row count of an OK reply. For the workloads that read values
    /// (tpcc, verification), not for the oltp hot path.
    pub async fn query_rows(&mut self, sql: &str) -> Result<Rows, DbError> {
        let mut body = Vec::with_capacity(sql.len() + 1);
        body.push(COM_QUERY);
        body.extend_from_slice(sql.as_bytes());
        self.send(0, &body).await?;
        let r = self.packet().await?;
        let mut out = Rows::default();
        match self.inbox.buf[r.start] {
            0x00 => {
                let mut at = r.start + 1;
                out.affected = read_lenenc(&self.inbox.buf[..r.end], &mut at).unwrap_or(0);
                return Ok(out);
            }
            0xff => return Err(server_error(&self.inbox.buf[r])),
            _ => {}
        }
        let mut in_rows = false;
        loop {
            let r = self.packet().await?;
            let p = &self.inbox.buf[r.clone()];
            if p[0] == 0xff {
                return Err(server_error(p));
            }
            if p[0] == 0xfe && p.len() < 9 {
                if in_rows {
                    return Ok(out);
                }
                in_rows = true;
                continue;
            }
            if in_rows {
                out.rows
                    .push(text_row(p).ok_or_else(|| protocol("bad row"))?);
            } else {
                // Column definition: catalog, schema, table, org_table, name, ...
                let mut at = 0;
                let mut name = None;
                for _ in 0..5 {
                    name = read_lenenc_str(p, &mut at);
                }
                out.columns.push(name.unwrap_or_default());
            }
        }
    }

    async fn prepare(&mut self, sql: &str) -> Result<(u32, u16), DbError> {
        let mut body = Vec::with_capacity(sql.len() + 1);
        body.push(COM_STMT_PREPARE);
        body.extend_from_slice(sql.as_bytes());
        self.send(0, &body).await?;
        let r = self.packet().await?;
        let p = &self.inbox.buf[r];
        if p[0] == 0xff {
            return Err(server_error(p));
        }
        if p.len() < 9 {
            return Err(protocol("short prepare reply"));
        }
        let id = u32::from_le_bytes([p[1], p[2], p[3], p[4]]);
        let cols = u16::from_le_bytes([p[5], p[6]]);
        let params = u16::from_le_bytes([p[7], p[8]]);
        let skip = usize::from(params)
            + usize::from(params > 0)
            + usize::from(cols)
            + usize::from(cols > 0);
        for _ in 0..skip {
            self.packet().await?;
        }
        Ok((id, params))
    }

    /// Executes the statement `sql` (prepared once per connection under `key`).
    pub async fn execute(
        &mut self,
        key: usize,
        sql: &str,
        params: &[Param<'_>],
    ) -> Result<(), DbError> {
        if key >= self.stmts.len() {
            self.stmts.resize(key + 1, None);
        }
        let (id, n, typed) = match self.stmts[key] {
            Some(s) => s,
            None => {
                let (id, n) = self.prepare(sql).await?;
                (id, n, false)
            }
        };
        self.stmts[key] = Some((id, n, true));
        if usize::from(n) != params.len() {
            return Err(protocol("parameter count"));
        }
        let mut body = std::mem::take(&mut self.out);
        body.clear();
        body.extend_from_slice(&[0, 0, 0, 0, COM_STMT_EXECUTE]);
        body.extend_from_slice(&id.to_le_bytes());
        body.push(0);
        body.extend_from_slice(&1u32.to_le_bytes());
        if !params.is_empty() {
            body.extend(std::iter::repeat_n(0u8, params.len().div_ceil(8)));
            body.push(u8::from(!typed));
            if !typed {
                for p in params {
                    body.push(match p {
                        Param::Int(_) => TYPE_LONG,
                        Param::Text(_) => TYPE_VAR_STRING,
                    });
                    body.push(0);
                }
            }
            for p in params {
                match p {
                    Param::Int(i) => body.extend_from_slice(&(*i as i32).to_le_bytes()),
                    Param::Text(s) => {
                        lenenc(&mut body, s.len());
                        body.extend_from_slice(s.as_bytes());
                    }
                }
            }
        }
        let n = (body.len() - 4) as u32;
        body[..3].copy_from_slice(&n.to_le_bytes()[..3]);
        body[3] = 0;
        let sent = self.stream.write_all(&body).await.map_err(lost);
        self.out = body;
        sent?;
        self.reply().await
    }
}

fn lenenc(out: &mut Vec<u8>, n: usize) {
    if n < 251 {
        out.push(n as u8);
    } else if n < 1 << 16 {
        out.push(0xfc);
        out.extend_from_slice(&(n as u16).to_le_bytes());
    } else {
        out.push(0xfd);
        out.extend_from_slice(&(n as u32).to_le_bytes()[..3]);
    }
}

/// A length-encoded integer at `*at`, advancing it.
fn read_lenenc(p: &[u8], at: &mut usize) -> Option<u64> {
    let first = *p.get(*at)?;
    let (n, width) = match first {
        0..=250 => (u64::from(first), 0),
        0xfc => (0, 2),
        0xfd => (0, 3),
        0xfe => (0, 8),
        _ => return None,
    };
    *at += 1;
    if width == 0 {
        return Some(n);
    }
    let bytes = p.get(*at..*at + width)?;
    *at += width;
    Some(
        bytes
            .iter()
            .rev()
            .fold(0u64, |acc, b| acc << 8 | u64::from(*b)),
    )
}

/// A length-encoded string at `*at` (None for NULL, 0xfb), advancing it.
fn read_lenenc_str(p: &[u8], at: &mut usize) -> Option<String> {
    if *p.get(*at)? == 0xfb {
        *at += 1;
        return None;
    }
    let n = read_lenenc(p, at)? as usize;
    let s = p.get(*at..*at + n)?;
    *at += n;
    Some(String::from_utf8_lossy(s).into_owned())
}

/// One row of a text result set: every column a length-encoded string or NULL.
fn text_row(p: &[u8]) -> Option<Vec<Option<String>>> {
    let mut at = 0;
    let mut row = Vec::new();
    while at < p.len() {
        if p[at] == 0xfb {
            at += 1;
            row.push(None);
        } else {
            row.push(Some(read_lenenc_str(p, &mut at)?));
        }
    }
    Some(row)
}

/// The 20-byte salt and the server's default collation id of a v10 handshake.
/// What the server's initial handshake (protocol 10) tells the client.
#[derive(Debug, Clone, PartialEq)]
struct Greeting {
    salt: Vec<u8>,
    charset: u8,
    /// The server's capability flags (lower and upper 16 bits).
    caps: u32,
    /// MariaDB's extended capabilities (the greeting's last reserved 4 bytes), 0 when
    /// the server is MySQL (it sets CLIENT_MYSQL, which MariaDB leaves clear).
    ext_caps: u32,
    /// The server's default authentication method (empty when it names none).
    plugin: Vec<u8>,
}

fn parse_greeting(p: &[u8]) -> Option<Greeting> {
    if *p.first()? != 10 {
        return None;
    }
    let ver_end = 1 + p[1..].iter().position(|b| *b == 0)?;
    let mut i = ver_end + 1 + 4;
    let mut salt = p.get(i..i + 8)?.to_vec();
    let word = |at: usize| -> Option<u32> {
        Some(u32::from(u16::from_le_bytes([
            *p.get(at)?,
            *p.get(at + 1)?,
        ])))
    };
    let caps = word(i + 9)? | word(i + 14)? << 16;
    let charset = *p.get(i + 8 + 1 + 2)?;
    i += 8 + 1 + 2 + 1 + 2 + 2;
    let auth_len = usize::from(*p.get(i)?);
    let ext = p.get(i + 7..i + 11)?;
    let ext_caps = if caps & CLIENT_MYSQL == 0 {
        u32::from_le_bytes([ext[0], ext[1], ext[2], ext[3]])
    } else {
        0
    };
    i += 1 + 10;
    let more = auth_len.saturating_sub(8).max(13);
    let part2 = p.get(i..i + more)?;
    salt.extend(part2.iter().take(12));
    // The default authentication method's name, NUL-terminated (CLIENT_PLUGIN_AUTH).
    let rest = p.get(i + more..).unwrap_or_default();
    let plugin = rest.split(|b| *b == 0).next().unwrap_or_default().to_vec();
    Some(Greeting {
        salt,
        charset,
        caps,
        ext_caps,
        plugin,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// MariaDB 10.11's greeting as Debian's mariadbd sent it (captured with strace).
    const MARIADB_GREETING: &[u8] = b"\x0a5.5.5-10.11.19-MariaDB-0+deb12u1\x00\x09\x00\x00\x00\
        \x57\x5b\x43\x7b\x66\x6c\x6a\x50\x00\xfe\xf7\x08\x02\x00\xff\x81\x15\
        \x00\x00\x00\x00\x00\x00\x1d\x00\x00\x00\x30\x3f\x2d\x60\x21\x7e\x7a\x6b\
        \x28\x23\x75\x46\x00mysql_native_password\x00";

    #[test]
    fn greeting_yields_salt_charset_and_mariadb_extended_caps() {
        let g = parse_greeting(MARIADB_GREETING).unwrap();
        assert_eq!(g.charset, 8);
        assert_eq!(g.salt.len(), 20);
        assert_eq!(&g.salt[..8], b"\x57\x5b\x43\x7b\x66\x6c\x6a\x50");
        assert_eq!(
            &g.salt[8..],
            b"\x30\x3f\x2d\x60\x21\x7e\x7a\x6b\x28\x23\x75\x46"
        );
        assert_eq!(g.caps, 0x81ff_f7fe);
        assert_eq!(
            g.caps & CLIENT_MYSQL,
            0,
            "MariaDB leaves CLIENT_MYSQL clear"
        );
        assert_ne!(g.ext_caps & MARIADB_CLIENT_CACHE_METADATA, 0);
    }

    #[test]
    fn a_mysql_greeting_has_no_extended_caps() {
        let mut p = MARIADB_GREETING.to_vec();
        let caps_at = 1 + p[1..].iter().position(|b| *b == 0).unwrap() + 1 + 4 + 9;
        p[caps_at] |= 1;
        assert_eq!(parse_greeting(&p).unwrap().ext_caps, 0);
    }

    /// MySQL 8.0.15's greeting (its default method is caching_sha2_password).
    const MYSQL8_GREETING: &[u8] = b"\x0a8.0.15\x00\x07\x00\x00\x00M8[pM\x1f8@\x00\xff\xff\xff\x02\x00\xff\xc3\x15\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00QF\x18r>;y\x1dT'TD\x00caching_sha2_password\x00";

    #[test]
    fn a_mysql_8_greeting_names_caching_sha2_password() {
        let g = parse_greeting(MYSQL8_GREETING).unwrap();
        assert_eq!(g.plugin, b"caching_sha2_password");
        assert_eq!(Plugin::named(&g.plugin), Some(Plugin::CachingSha2));
        assert_eq!(g.salt.len(), 20);
        assert_eq!(&g.salt[..8], b"M8[pM\x1f8@");
        assert_eq!(g.ext_caps, 0);
        let m = parse_greeting(MARIADB_GREETING).unwrap();
        assert_eq!(Plugin::named(&m.plugin), Some(Plugin::Native));
    }

    #[test]
    fn caching_sha2_scramble_matches_its_definition() {
        // The server keeps SHA256(SHA256(pw)) and checks
        // SHA256(scramble XOR SHA256(SHA256(SHA256(pw)) + nonce)) against it.
        use sha2::{Digest, Sha256};
        let nonce = b"abcdefghijklmnopqrst";
        let s = scramble_sha2("secret", nonce);
        let stored = Sha256::digest(Sha256::digest(b"secret"));
        let mut h = Sha256::new();
        h.update(stored);
        h.update(nonce);
        let x: Vec<u8> = s
            .iter()
            .zip(h.finalize().iter())
            .map(|(a, b)| a ^ b)
            .collect();
        assert_eq!(Sha256::digest(&x).as_slice(), stored.as_slice());
        assert!(scramble_sha2("", nonce).is_empty());
    }

    #[test]
    fn the_rsa_password_decrypts_to_the_password_xor_nonce() {
        use rsa::pkcs8::EncodePublicKey;
        let key = rsa::RsaPrivateKey::new(&mut rsa::rand_core::OsRng, 1024).unwrap();
        let pem = key
            .to_public_key()
            .to_public_key_pem(rsa::pkcs8::LineEnding::LF)
            .unwrap();
        let nonce = b"0123456789abcdefghij";
        let sealed = rsa_password("pässword-longer-than-the-nonce", nonce, pem.as_bytes()).unwrap();
        let open = key
            .decrypt(rsa::Oaep::new::<sha1::Sha1>(), &sealed)
            .unwrap();
        let plain: Vec<u8> = open
            .iter()
            .enumerate()
            .map(|(i, b)| b ^ nonce[i % nonce.len()])
            .collect();
        assert_eq!(plain, b"p\xc3\xa4ssword-longer-than-the-nonce\x00");
        let bad = rsa_password("x", nonce, b"not a key").unwrap_err();
        assert!(bad.message.contains("public key"), "{}", bad.message);
    }

    #[test]
    fn native_password_scramble_matches_its_definition() {
        // Checked by the defining identity: SHA1(scramble XOR SHA1(salt+SHA1(SHA1(pw))))
        // == SHA1(SHA1(pw)), which is what the server stores and verifies.
        use sha1::{Digest, Sha1};
        let salt = b"abcdefghijklmnopqrst";
        let s = scramble("secret", salt);
        let stored = Sha1::digest(Sha1::digest(b"secret"));
        let mut h = Sha1::new();
        h.update(salt);
        h.update(stored);
        let x: Vec<u8> = s
            .iter()
            .zip(h.finalize().iter())
            .map(|(a, b)| a ^ b)
            .collect();
        assert_eq!(Sha1::digest(&x).as_slice(), stored.as_slice());
        assert!(scramble("", salt).is_empty());
    }

    #[test]
    fn text_rows_decode_values_and_nulls() {
        let mut p = Vec::new();
        lenenc(&mut p, 2);
        p.extend_from_slice(b"42");
        p.push(0xfb);
        let long = "x".repeat(300);
        lenenc(&mut p, long.len());
        p.extend_from_slice(long.as_bytes());
        let row = text_row(&p).unwrap();
        assert_eq!(row, vec![Some("42".to_string()), None, Some(long)]);
        let mut at = 0;
        assert_eq!(read_lenenc(&[0xfc, 0x2c, 0x01], &mut at), Some(300));
        assert_eq!(at, 3);
    }

    #[test]
    fn lenenc_sizes() {
        let mut v = Vec::new();
        lenenc(&mut v, 120);
        lenenc(&mut v, 300);
        assert_eq!(v, vec![120, 0xfc, 44, 1]);
    }
}
