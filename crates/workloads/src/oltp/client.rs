//! One SQL connection (MariaDB: bakeoff's lean wire client in `mywire`; PostgreSQL:
//! tokio-postgres): connect, run a
//! statement with parameters (prepared, or inlined as text), and errors sorted into the
//! kinds sysbench users know (deadlock, lost connection, ...).

use crate::sql::{Db, Dialect};
use std::time::Duration;

/// A statement parameter.
#[derive(Debug, Clone, Copy)]
pub enum Param<'a> {
    Int(i64),
    Text(&'a str),
}

/// A failed statement: its kind (for counting and ignore lists) and the server's words.
#[derive(Debug, Clone)]
pub struct DbError {
    pub kind: &'static str,
    pub message: String,
}

impl DbError {
    fn lost(message: String) -> DbError {
        DbError {
            kind: "lost_connection",
            message,
        }
    }
}

const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

pub enum Client {
    My {
        conn: super::mywire::MyConn,
        prepared: bool,
    },
    Pg {
        client: tokio_postgres::Client,
        /// Prepared statements by key (table x statement kind), made on first use.
        stmts: Vec<Option<tokio_postgres::Statement>>,
        prepared: bool,
    },
}

impl Client {
    /// Opens a connection; `statements` sizes the prepared-statement caches.
    pub async fn connect(db: &Db, statements: usize, prepared: bool) -> Result<Client, DbError> {
        match db.dialect {
            Dialect::Mysql => {
                let _ = statements;
                let conn = super::mywire::MyConn::connect(
                    db.addr,
                    &db.user,
                    &db.password,
                    &db.database,
                    CONNECT_TIMEOUT,
                )
                .await?;
                Ok(Client::My { conn, prepared })
            }
            Dialect::Postgres => {
                let mut config = tokio_postgres::Config::new();
                config
                    .host(db.addr.ip().to_string())
                    .port(db.addr.port())
                    .user(&db.user)
                    .password(&db.password)
                    .dbname(&db.database)
                    .connect_timeout(CONNECT_TIMEOUT);
                let (client, connection) = config
                    .connect(tokio_postgres::NoTls)
                    .await
                    .map_err(|e| pg_error(&e))?;
                tokio::task::spawn_local(async move {
                    let _ = connection.await;
                });
                Ok(Client::Pg {
                    client,
                    stmts: vec![None; statements],
                    prepared,
                })
            }
        }
    }

    /// Runs one statement and drops its result. `key` identifies the statement text for
    /// the prepared-statement cache; `sql` uses `?` (MariaDB) or `$n` (PostgreSQL);
    /// `plain` is the `?` form, used when statements are not prepared.
    pub async fn exec(
        &mut self,
        key: usize,
        sql: &str,
        plain: &str,
        params: &[Param<'_>],
    ) -> Result<(), DbError> {
        match self {
            Client::My { conn, prepared } => {
                if !*prepared || params.is_empty() {
                    return conn.query(&inline(plain, params)).await;
                }
                conn.execute(key, sql, params).await
            }
            Client::Pg {
                client,
                stmts,
                prepared,
            } => {
                if !*prepared || params.is_empty() {
                    let text = inline(plain, params);
                    return client.batch_execute(&text).await.map_err(|e| pg_error(&e));
                }
                if stmts.get(key).is_none_or(Option::is_none) {
                    let s = client.prepare(sql).await.map_err(|e| pg_error(&e))?;
                    if key >= stmts.len() {
                        stmts.resize(key + 1, None);
                    }
                    stmts[key] = Some(s);
                }
                let Some(stmt) = stmts[key].as_ref() else {
                    return Err(DbError::lost("statement cache".into()));
                };
                let owned: Vec<PgVal> = params
                    .iter()
                    .map(|p| match p {
                        Param::Int(i) => PgVal::Int(*i as i32),
                        Param::Text(s) => PgVal::Text(s),
                    })
                    .collect();
                let refs: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> = owned
                    .iter()
                    .map(|v| match v {
                        PgVal::Int(i) => i as &(dyn tokio_postgres::types::ToSql + Sync),
                        PgVal::Text(s) => s as &(dyn tokio_postgres::types::ToSql + Sync),
                    })
                    .collect();
                client
                    .execute(stmt, &refs)
                    .await
                    .map(|_| ())
                    .map_err(|e| pg_error(&e))
            }
        }
    }

    /// A statement without parameters, as text (DDL, BEGIN, ROLLBACK, loads).
    pub async fn simple(&mut self, sql: &str) -> Result<(), DbError> {
        self.exec(usize::MAX, sql, sql, &[]).await
    }

    pub async fn close(self) {
        match self {
            Client::My { conn, .. } => drop(conn),
            Client::Pg { client, .. } => drop(client),
        }
    }
}

enum PgVal<'a> {
    Int(i32),
    Text(&'a str),
}

/// `?` placeholders replaced by literal values (strings quoted, quotes doubled).
pub fn inline(sql: &str, params: &[Param<'_>]) -> String {
    if params.is_empty() {
        return sql.to_string();
    }
    let mut out = String::with_capacity(sql.len() + params.len() * 16);
    let mut it = params.iter();
    for ch in sql.chars() {
        if ch != '?' {
            out.push(ch);
            continue;
        }
        match it.next() {
            Some(Param::Int(i)) => out.push_str(&i.to_string()),
            Some(Param::Text(s)) => {
                out.push('\'');
                out.push_str(&s.replace('\'', "''"));
                out.push('\'');
            }
            None => out.push('?'),
        }
    }
    out
}

fn pg_error(e: &tokio_postgres::Error) -> DbError {
    use tokio_postgres::error::SqlState;
    if let Some(db) = e.as_db_error() {
        let code = db.code();
        let kind = if *code == SqlState::T_R_SERIALIZATION_FAILURE {
            "serialization"
        } else if *code == SqlState::T_R_DEADLOCK_DETECTED {
            "deadlock"
        } else if *code == SqlState::TOO_MANY_CONNECTIONS {
            "too_many_connections"
        } else if *code == SqlState::UNIQUE_VIOLATION {
            "duplicate_key"
        } else if *code == SqlState::INVALID_PASSWORD {
            "access_denied"
        } else {
            "server_error"
        };
        return DbError {
            kind,
            message: format!("{} (SQLSTATE {})", db.message(), code.code()),
        };
    }
    if e.is_closed() || e.to_string().contains("connect") || e.to_string().contains("closed") {
        return DbError::lost(e.to_string());
    }
    DbError {
        kind: "client_error",
        message: e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_quotes_text() {
        assert_eq!(
            inline(
                "UPDATE t SET c=? WHERE id=?",
                &[Param::Text("a'b"), Param::Int(7)]
            ),
            "UPDATE t SET c='a''b' WHERE id=7"
        );
    }
}
