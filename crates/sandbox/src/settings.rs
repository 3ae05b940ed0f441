//! What a ready server runs with, read back from it ([`Target::read_settings`], each
//! target in its own module) and made safe to keep: secrets masked, the sandbox's own
//! per-run values (its folder, its port) written as placeholders so that two runs of one
//! variant read the same. Also the shape of a target's table of the settings that move
//! performance ([`Knob`]) and whether an experiment asked for one ([`Knob::asked`]).
//!
//! [`Target::read_settings`]: crate::Target::read_settings

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use crate::sqldata::{Login, SqlServer};

/// What a secret's value is recorded as.
pub const MASKED: &str = "(masked)";
/// A value that held the sandbox's own folder: the folder is written as this.
pub const SANDBOX_DIR: &str = "<sandbox>";
/// A port setting that held the sandbox's own port.
pub const SANDBOX_PORT: &str = "<port>";
/// A variable that names one server rather than sets it (a per-start id), as kept.
pub const IDENTITY: &str = "<identity>";
/// How long reading a server's settings may take in all.
pub const READ_TIMEOUT: Duration = Duration::from_secs(5);

/// A setting that moves performance, in a target's table ([`crate::Target::knobs`]):
/// its name as the server reports it, what it moves (durability, memory, ...), and the
/// other names an experiment sets it by (a command-line flag, the parts a computed
/// setting is made of).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Knob {
    pub name: &'static str,
    pub topic: &'static str,
    pub spelled: &'static [&'static str],
}

/// A [`Knob`] set by its own name only.
pub const fn knob(name: &'static str, topic: &'static str) -> Knob {
    Knob {
        name,
        topic,
        spelled: &[],
    }
}

/// A setting's name as the servers compare them: any case, `-` read as `_`.
fn norm(name: &str) -> String {
    name.trim_start_matches('-')
        .to_ascii_lowercase()
        .replace('-', "_")
}

impl Knob {
    /// This knob, also set by `spelled` (its flags, or the other names it goes by).
    pub const fn or_by(self, spelled: &'static [&'static str]) -> Knob {
        Knob { spelled, ..self }
    }

    /// Whether an experiment's `options` or `args` set this knob: an option named as it
    /// (or one of its spellings; any case, `-` for `_`), a `--name[=v]` argument, a
    /// `name=v` argument (PostgreSQL's `-c name=v`), or a short flag among its spellings
    /// (`-m`, `-m64`).
    pub fn asked(&self, options: &BTreeMap<String, String>, args: &[String]) -> bool {
        let names: Vec<&str> = std::iter::once(self.name)
            .chain(self.spelled.iter().copied())
            .collect();
        let long: Vec<String> = names
            .iter()
            .filter(|n| !is_short_flag(n))
            .map(|n| norm(n))
            .collect();
        if options.keys().any(|k| long.contains(&norm(k))) {
            return true;
        }
        args.iter().any(|a| {
            let key = a.split('=').next().unwrap_or(a);
            let long_hit = (a.starts_with("--") || a.contains('=')) && long.contains(&norm(key));
            let short_hit = !a.starts_with("--")
                && names
                    .iter()
                    .filter(|n| is_short_flag(n))
                    .any(|n| a.starts_with(*n));
            long_hit || short_hit
        })
    }
}

/// `-m`: a dash and one letter.
fn is_short_flag(n: &str) -> bool {
    n.len() == 2 && n.starts_with('-') && n.as_bytes()[1].is_ascii_alphabetic()
}

/// Whether a setting's value is a secret by its name: passwords, Redis's `requirepass`
/// and `masterauth`, secrets, key files and passphrases (and the commands that give
/// them), MariaDB's
/// `wsrep_sst_auth` (user:password).
pub fn is_secret(name: &str) -> bool {
    let n = norm(name);
    [
        "password",
        "passwd",
        "secret",
        "requirepass",
        "masterauth",
        "key_file",
        "keyfile",
        "sst_auth",
        "credential",
        "passphrase",
    ]
    .iter()
    .any(|w| n.contains(w))
        || n.ends_with("_pass")
}

/// A value made safe to keep: a secret's (by [`is_secret`]) masked unless empty, a
/// connection string's `password=...` masked in place (PostgreSQL's conninfo), and any
/// value holding one of `secrets` (the login's password) masked whole.
pub fn mask(name: &str, value: &str, secrets: &[&str]) -> String {
    if value.is_empty() {
        return String::new();
    }
    if is_secret(name) || secrets.iter().any(|s| !s.is_empty() && value.contains(*s)) {
        return MASKED.to_string();
    }
    mask_conninfo(value)
}

/// `host=a password=xyz user=b` -> `host=a password=(masked) user=b`, also quoted
/// (`password='x y'`) and in a URI (`postgres://u:xyz@h`).
fn mask_conninfo(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    let lower = value.to_ascii_lowercase();
    let mut offset = 0;
    while let Some(at) = lower[offset..].find("password") {
        let start = offset + at;
        let after = &value[start + "password".len()..];
        let trimmed = after.trim_start();
        if !trimmed.starts_with('=') {
            offset = start + "password".len();
            continue;
        }
        let eq = start + "password".len() + (after.len() - trimmed.len()) + 1;
        let body = value[eq..].trim_start();
        let body_at = value.len() - body.len();
        let end = if let Some(q) = body.strip_prefix('\'') {
            let mut i = 0;
            let bytes = q.as_bytes();
            while i < bytes.len() && bytes[i] != b'\'' {
                i += if bytes[i] == b'\\' { 2 } else { 1 };
            }
            (body_at + 1 + i + 1).min(value.len())
        } else {
            body_at + body.find(char::is_whitespace).unwrap_or(body.len())
        };
        out.push_str(&rest[..body_at - (value.len() - rest.len())]);
        out.push_str(MASKED);
        rest = &value[end..];
        offset = end;
    }
    out.push_str(rest);
    mask_uri_password(&out)
}

/// `scheme://user:pass@host` -> `scheme://user:(masked)@host`.
fn mask_uri_password(value: &str) -> String {
    let Some(scheme) = value.find("://") else {
        return value.to_string();
    };
    let auth_start = scheme + 3;
    let tail = &value[auth_start..];
    let Some(at) = tail.find('@') else {
        return value.to_string();
    };
    let auth = &tail[..at];
    match auth.split_once(':') {
        Some((user, pass)) if !pass.is_empty() && !auth.contains('/') => {
            format!("{}{user}:{MASKED}{}", &value[..auth_start], &tail[at..])
        }
        _ => value.to_string(),
    }
}

/// The settings as kept: masked (with the login's password as a secret), the sandbox's
/// folder and port written as [`SANDBOX_DIR`] and [`SANDBOX_PORT`].
pub fn tidy(
    raw: BTreeMap<String, String>,
    workdir: &str,
    port: u16,
    login: Option<&Login>,
) -> BTreeMap<String, String> {
    let secrets: Vec<&str> = login.map(|l| l.password.as_str()).into_iter().collect();
    let port = port.to_string();
    raw.into_iter()
        .map(|(k, v)| {
            let mut v = mask(&k, &v, &secrets);
            if !workdir.is_empty() && v.contains(workdir) {
                v = v.replace(workdir, SANDBOX_DIR);
            }
            if v == port && norm(&k).contains("port") {
                v = SANDBOX_PORT.to_string();
            }
            (k, v)
        })
        .collect()
}

/// Runs `statements` on a SQL target's server at `addr` with its login, each one's rows
/// or error (see `bakeoff_sqlclient::query`).
pub(crate) fn sql_rows(
    sql: &SqlServer,
    dialect: bakeoff_sqlclient::Dialect,
    addr: SocketAddr,
    statements: &[&str],
) -> Result<Vec<Result<bakeoff_sqlclient::Rows, String>>, String> {
    let login = sql
        .login
        .as_ref()
        .ok_or("the sandbox has no login to read settings with")?;
    bakeoff_sqlclient::query(&login.db(dialect, addr, None), statements, READ_TIMEOUT)
}

/// The rows' first two columns as name -> value (SQL NULL as empty).
pub(crate) fn pairs(rows: &bakeoff_sqlclient::Rows) -> BTreeMap<String, String> {
    rows.rows
        .iter()
        .filter_map(|r| {
            let name = r.first()?.clone()?;
            let value = r.get(1).cloned().flatten().unwrap_or_default();
            Some((name, value))
        })
        .collect()
}

/// Sends `request` on a fresh connection to `addr` and reads until `complete` says the
/// reply is whole (Some(result)), the server closes, or [`READ_TIMEOUT`] passes.
pub(crate) fn exchange<T>(
    addr: SocketAddr,
    request: &[u8],
    complete: impl Fn(&[u8]) -> Option<Result<T, String>>,
) -> Result<T, String> {
    let deadline = Instant::now() + READ_TIMEOUT;
    let mut s = TcpStream::connect_timeout(&addr, READ_TIMEOUT)
        .map_err(|e| format!("cannot connect to {addr}: {e}"))?;
    s.set_write_timeout(Some(READ_TIMEOUT))
        .and_then(|_| s.write_all(request))
        .map_err(|e| format!("cannot send the request: {e}"))?;
    let mut buf = Vec::with_capacity(16 << 10);
    let mut chunk = [0u8; 16 << 10];
    loop {
        if let Some(done) = complete(&buf) {
            return done;
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(format!(
                "no whole answer within {} s",
                READ_TIMEOUT.as_secs()
            ));
        }
        let _ = s.set_read_timeout(Some(left));
        match s.read(&mut chunk) {
            Ok(0) => return Err("the server closed the connection mid-answer".into()),
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(e) => return Err(format!("reading the answer failed: {e}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(kv: &[(&str, &str)]) -> BTreeMap<String, String> {
        kv.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn secrets_are_masked_by_name_and_in_connection_strings() {
        for name in [
            "requirepass",
            "masterauth",
            "tls-key-file-pass",
            "ssl_passphrase_command",
            "wsrep_sst_auth",
            "ssl_key_file",
            "some_SECRET",
            "repl_password",
        ] {
            assert_eq!(mask(name, "hunter2", &[]), MASKED, "{name}");
        }
        assert_eq!(mask("requirepass", "", &[]), "", "no password is no secret");
        assert_eq!(mask("maxmemory", "0", &[]), "0");
        assert_eq!(
            mask(
                "primary_conninfo",
                "host=h port=5 password=hunter2 user=u",
                &[]
            ),
            "host=h port=5 password=(masked) user=u"
        );
        assert_eq!(
            mask("primary_conninfo", "password = 'a b\\' c' user=u", &[]),
            "password = (masked) user=u"
        );
        assert_eq!(
            mask("x", "postgres://u:hunter2@h/db", &[]),
            "postgres://u:(masked)@h/db"
        );
        assert_eq!(mask("comment", "pw is zq9Xk", &["zq9Xk"]), MASKED);
        assert_eq!(
            mask("x", "a password_encryption", &[]),
            "a password_encryption"
        );
    }

    #[test]
    fn masking_never_panics_on_odd_text() {
        for v in [
            "password",
            "password=",
            "password= ",
            "PASSWORD='",
            "password='\\",
            "password='\\é'x",
            "password=é password=ü",
            "a://@",
            "a://:@",
            "x://u:p",
            "éé://ü:ö@ä",
            "password passwordpassword=1",
        ] {
            let m = mask("conninfo", v, &[]);
            assert!(!m.contains("=1") && !m.contains("ö@"), "{v:?} -> {m:?}");
        }
        assert_eq!(
            mask("conninfo", "password=é password=ü", &[]),
            "password=(masked) password=(masked)"
        );
    }

    #[test]
    fn tidy_writes_the_sandboxs_own_folder_and_port_as_placeholders() {
        let raw = opts(&[
            ("port", "40123"),
            ("dir", "/sb/run-1/data"),
            ("maxclients", "40123"),
            ("requirepass", "pw"),
        ]);
        let login = Login {
            user: "u".into(),
            password: "pw".into(),
            database: "d".into(),
        };
        let t = tidy(raw, "/sb/run-1", 40123, Some(&login));
        assert_eq!(t["port"], SANDBOX_PORT);
        assert_eq!(t["dir"], "<sandbox>/data");
        assert_eq!(t["maxclients"], "40123", "only a port setting is a port");
        assert_eq!(t["requirepass"], MASKED);
    }

    #[test]
    fn a_knob_is_asked_by_option_long_argument_or_short_flag() {
        const M: Knob = knob("maxbytes", "memory").or_by(&["-m", "--memory-limit"]);
        assert!(M.asked(&opts(&[]), &strings(&["-m", "64"])));
        assert!(M.asked(&opts(&[]), &strings(&["-m64"])));
        assert!(M.asked(&opts(&[]), &strings(&["--memory-limit=64"])));
        assert!(!M.asked(&opts(&[]), &strings(&["-t", "4", "--max-reqs-per-event=5"])));
        const B: Knob = knob("innodb_buffer_pool_size", "memory");
        assert!(B.asked(&opts(&[("innodb-buffer-pool-size", "1G")]), &[]));
        assert!(B.asked(&opts(&[]), &strings(&["--innodb_buffer_pool_size=1G"])));
        assert!(!B.asked(&opts(&[("innodb_log_file_size", "1G")]), &[]));
        const S: Knob = knob("synchronous_commit", "durability");
        assert!(S.asked(&opts(&[]), &strings(&["-c", "synchronous_commit=off"])));
        const A: Knob = knob("appendonly", "durability");
        assert!(A.asked(&opts(&[]), &strings(&["--appendonly", "yes"])));
        assert!(A.asked(&opts(&[("appendonly", "yes")]), &[]));
    }
}
