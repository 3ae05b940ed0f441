//! Where a SQL server listens and how to log in: what a sandbox hands every SQL workload
//! and its own readiness check. The runner fills it from the sandbox's login.

use std::net::SocketAddr;
use std::path::PathBuf;

/// Which SQL dialect (and so which wire protocol) the server speaks. Its SQL is
/// [`Dialect::sql`] (`dialect/`), its protocol [`Dialect::wire`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dialect {
    /// MariaDB (and MySQL where a caller knows no better).
    Mariadb,
    /// Oracle's MySQL: MariaDB's SQL except where the two differ (`dialect/mysql.rs`).
    Mysql,
    /// PostgreSQL.
    Postgres,
    /// SQLite's SQL over the PostgreSQL protocol (`bakeoff-sqlited`).
    Sqlite,
}

/// The wire protocol a server speaks: what a client (ours, or an external tool's driver)
/// must speak to it. Several dialects may share one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Wire {
    /// MariaDB's classic protocol (MySQL's too).
    Mysql,
    /// PostgreSQL protocol 3.0 (PostgreSQL, and bakeoff-sqlited).
    Postgres,
}

impl Dialect {
    pub fn as_str(self) -> &'static str {
        self.sql().name()
    }

    /// Whether the server speaks the PostgreSQL wire protocol (PostgreSQL, and SQLite
    /// through `bakeoff-sqlited`).
    pub fn pg_wire(self) -> bool {
        self.wire() == Wire::Postgres
    }
}

/// A database to connect to: TCP on loopback, with the sandbox's own user and password.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Db {
    pub dialect: Dialect,
    pub addr: SocketAddr,
    /// The server's unix socket, when it has one (MariaDB's socket file; PostgreSQL's
    /// socket directory).
    pub socket: Option<PathBuf>,
    pub user: String,
    pub password: String,
    pub database: String,
    /// Connect through the unix socket instead of TCP (`transport = "unix"`).
    pub via_socket: bool,
}

impl Db {
    /// The unix socket file to connect to (PostgreSQL's is `.s.PGSQL.<port>` in its
    /// socket directory), if the server has one.
    pub fn socket_file(&self) -> Option<PathBuf> {
        let s = self.socket.as_ref()?;
        Some(match self.dialect.wire() {
            Wire::Mysql => s.clone(),
            Wire::Postgres => s.join(format!(".s.PGSQL.{}", self.addr.port())),
        })
    }
}
