//! One SQL connection over bakeoff's lean wire clients (`mywire` for MariaDB, `pgwire` for
//! PostgreSQL and bakeoff-sqlited): connect, run a statement with parameters (prepared, or inlined as text),
//! and errors sorted into the kinds sysbench users know (deadlock, lost connection, ...).

use crate::db::{Db, Wire};
use crate::stream::Endpoint;
use crate::values::{inline, DbError, Param, Rows, TEXT};
use std::time::Duration;

const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

pub enum Client {
    My {
        conn: crate::mywire::MyConn,
        prepared: bool,
    },
    Pg {
        conn: crate::pgwire::PgConn,
        prepared: bool,
    },
}

impl Client {
    /// Opens a connection; `statements` sizes the prepared-statement caches.
    pub async fn connect(db: &Db, statements: usize, prepared: bool) -> Result<Client, DbError> {
        let _ = statements;
        Client::open(db, prepared, CONNECT_TIMEOUT).await
    }

    /// Opens a connection for plain text statements, giving up after `timeout`.
    pub async fn connect_within(db: &Db, timeout: Duration) -> Result<Client, DbError> {
        Client::open(db, false, timeout).await
    }

    async fn open(db: &Db, prepared: bool, timeout: Duration) -> Result<Client, DbError> {
        let to = if db.via_socket {
            Endpoint::Unix(db.socket_file().ok_or_else(|| DbError {
                kind: "client_error",
                message: "transport = \"unix\" but the sandbox has no unix socket (its path is too long); use transport = \"tcp\" or a shorter --sandbox-dir".into(),
            })?)
        } else {
            Endpoint::Tcp(db.addr)
        };
        let (u, p, d) = (&db.user, &db.password, &db.database);
        match db.dialect.wire() {
            Wire::Mysql => {
                let conn = crate::mywire::MyConn::connect(&to, u, p, d, timeout).await?;
                Ok(Client::My { conn, prepared })
            }
            Wire::Postgres => {
                let conn = crate::pgwire::PgConn::connect(&to, u, p, d, timeout).await?;
                Ok(Client::Pg { conn, prepared })
            }
        }
    }

    /// Runs one statement and drops its result. `key` identifies the statement text for
    /// the prepared-statement cache (`TEXT`: never prepare it); `sql` uses `?` (MariaDB)
    /// or `$n` (PostgreSQL); `plain` is the `?` form, used when statements are not
    /// prepared. Statements without parameters are prepared too (sysbench prepares
    /// BEGIN and COMMIT).
    pub async fn exec(
        &mut self,
        key: usize,
        sql: &str,
        plain: &str,
        params: &[Param<'_>],
    ) -> Result<(), DbError> {
        match self {
            Client::My { conn, prepared } => {
                if !*prepared || key == TEXT {
                    return conn.query(&inline(plain, params)).await;
                }
                conn.execute(key, sql, params).await
            }
            Client::Pg { conn, prepared } => {
                if !*prepared || key == TEXT {
                    return conn.query(&inline(plain, params)).await;
                }
                conn.execute(key, sql, params).await
            }
        }
    }

    /// A statement without parameters, as text (DDL, BEGIN, ROLLBACK, loads).
    pub async fn simple(&mut self, sql: &str) -> Result<(), DbError> {
        self.exec(TEXT, sql, sql, &[]).await
    }

    /// A statement as text with its result decoded (see `Rows`).
    pub async fn rows(&mut self, sql: &str) -> Result<Rows, DbError> {
        match self {
            Client::My { conn, .. } => conn.query_rows(sql).await,
            Client::Pg { conn, .. } => conn.query_rows(sql).await,
        }
    }

    /// PostgreSQL's `COPY ... FROM STDIN` with text-format `data`; None on MariaDB.
    pub async fn copy_in(&mut self, sql: &str, data: &[u8]) -> Option<Result<u64, DbError>> {
        match self {
            Client::My { .. } => None,
            Client::Pg { conn, .. } => Some(conn.copy_in(sql, data).await),
        }
    }

    /// Switches to blocking socket calls: for a thread that owns only this connection.
    pub fn make_blocking(&mut self) -> Result<(), DbError> {
        match self {
            Client::My { conn, .. } => conn.make_blocking(),
            Client::Pg { conn, .. } => conn.make_blocking(),
        }
    }

    pub async fn close(self) {
        match self {
            Client::My { conn, .. } => drop(conn),
            Client::Pg { conn, .. } => drop(conn),
        }
    }
}
