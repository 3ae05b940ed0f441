//! One connection for one job: a script run in order (a replay's `setup` file,
//! [`run_script`]), the readiness check ([`ping`]: log in, `SELECT 1`) and a few
//! queries read back whole ([`query`]: the sandbox reads a server's settings so).

use crate::client::Client;
use crate::db::Db;
use crate::values::{DbError, Rows};

/// Runs SQL statements in order on one connection (a replay's `setup` file); stops at the
/// first that fails, naming it. Returns how many ran.
pub fn run_script(db: &Db, statements: &[String]) -> Result<usize, String> {
    let rt = crate::driver::runtime().map_err(|e| e.to_string())?;
    rt.block_on(async {
        let mut c = Client::connect(db, 0, false)
            .await
            .map_err(|e| format!("cannot connect: {}", e.message))?;
        for (i, s) in statements.iter().enumerate() {
            c.simple(s).await.map_err(|e| {
                format!(
                    "statement {} of {} failed: {}",
                    i + 1,
                    statements.len(),
                    without_quotes(&e.message)
                )
            })?;
        }
        Ok(statements.len())
    })
}

/// A server's error without the statement text it quotes after `near` (MariaDB's
/// `near 'x' at line 1`, PostgreSQL's `at or near "x"`, SQLite's `near "x":`): the
/// statements come from a file the experiment names, and no message may carry what is
/// in a file. The quoted part becomes `'...'`.
fn without_quotes(message: &str) -> String {
    let mut out = String::new();
    let mut rest = message;
    while let Some(at) = rest.find("near ") {
        let (head, tail) = rest.split_at(at + "near ".len());
        out.push_str(head);
        let Some(q) = tail.chars().next().filter(|c| *c == '\'' || *c == '"') else {
            rest = tail;
            continue;
        };
        // The quoted statement text runs to the last such quote before the server's own
        // words go on (" at line N", ":"), or to the end.
        let body = &tail[1..];
        let end = [" at line", ": ", "\n"]
            .iter()
            .filter_map(|w| body.find(&format!("{q}{w}")))
            .min()
            .or_else(|| body.rfind(q))
            .map_or(body.len(), |e| e + 1);
        out.push(q);
        out.push_str("...");
        out.push(q);
        rest = &body[end..];
    }
    out.push_str(rest);
    out
}

/// One readiness check: log in and run `SELECT 1`, within `timeout`. `Ok(false)`: no
/// answer in time; `Err`: refused or failed, with the server's words (a server still
/// starting refuses too: the caller retries until its own deadline).
pub fn ping(db: &Db, timeout: std::time::Duration) -> std::io::Result<bool> {
    let rt = crate::driver::runtime().map_err(|e| std::io::Error::other(e.to_string()))?;
    rt.block_on(async {
        let attempt = async {
            let mut c = Client::connect_within(db, timeout).await?;
            c.simple("SELECT 1").await?;
            c.close().await;
            Ok::<(), DbError>(())
        };
        match tokio::time::timeout(timeout, attempt).await {
            Ok(Ok(())) => Ok(true),
            Ok(Err(e)) => Err(std::io::Error::other(e.message)),
            Err(_) => Ok(false),
        }
    })
}

/// Runs `statements` in order on one connection and returns each one's rows, within
/// `timeout` in all (the sandbox reads a server's settings with it: `SHOW GLOBAL
/// VARIABLES`, `pg_settings`, SQLite's pragmas). Each statement's own error is its
/// result; a failed login or the timeout fails the whole.
pub fn query(
    db: &Db,
    statements: &[&str],
    timeout: std::time::Duration,
) -> Result<Vec<Result<Rows, String>>, String> {
    let rt = crate::driver::runtime().map_err(|e| e.to_string())?;
    rt.block_on(async {
        let attempt = async {
            let mut c = Client::connect_within(db, timeout)
                .await
                .map_err(|e| format!("cannot log in: {}", e.message))?;
            let mut out = Vec::with_capacity(statements.len());
            for s in statements {
                out.push(c.rows(s).await.map_err(|e| e.message));
            }
            c.close().await;
            Ok::<_, String>(out)
        };
        tokio::time::timeout(timeout, attempt)
            .await
            .map_err(|_| format!("no answer within {} ms", timeout.as_millis()))?
    })
}

/// Whether bakeoff's SQL clients encrypt their connections: neither wire client asks for
/// TLS (`mywire` never sets CLIENT_SSL in its handshake answer, `pgwire` never sends an
/// SSLRequest), so every SQL load runs in plain text whatever the server offers.
pub const ENCRYPTED: bool = false;

#[cfg(test)]
mod quote_tests {
    use super::without_quotes;

    #[test]
    fn statement_text_is_left_out_of_server_errors() {
        for (server, want) in [
            (
                "You have an error in your SQL syntax; check the manual that corresponds to your MariaDB server version for the right syntax to use near 'root:x:0:0 it's' at line 1",
                "You have an error in your SQL syntax; check the manual that corresponds to your MariaDB server version for the right syntax to use near '...' at line 1",
            ),
            ("syntax error at or near \"root\"", "syntax error at or near \"...\""),
            ("near \"root:x\": syntax error", "near \"...\": syntax error"),
            ("Table 'test.t' doesn't exist", "Table 'test.t' doesn't exist"),
        ] {
            assert_eq!(without_quotes(server), want);
        }
    }
}
