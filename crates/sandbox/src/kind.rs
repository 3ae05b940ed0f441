//! [`TargetKind`], the kind of server a sandbox runs, and its name in experiment files
//! and output: a leaf every other module may name (the server modules return it, errors
//! carry it). What each kind is made of and asks for is the registry's (`targets.rs`).

use std::fmt;

use serde::{Deserialize, Serialize};

/// The kind of server a sandbox runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TargetKind {
    /// memcached (text protocol readiness probe).
    Memcached,
    /// MariaDB `mariadbd` (readiness: a real login and `SELECT 1`).
    Mariadb,
    /// PostgreSQL `postgres` (readiness: a real login and `SELECT 1`).
    Postgres,
    /// SQLite: the variant's library hosted by `bakeoff-sqlited` (readiness as PostgreSQL).
    Sqlite,
    /// Redis `redis-server` (RESP; readiness: PING).
    Redis,
    /// Oracle's MySQL `mysqld`, 5.5 to 8.x (readiness as MariaDB's).
    Mysql,
    /// Valkey `valkey-server`, Redis's fork (RESP; readiness: PING).
    Valkey,
}

impl TargetKind {
    /// The lowercase name used in experiment files and output.
    pub fn as_str(self) -> &'static str {
        match self {
            TargetKind::Memcached => "memcached",
            TargetKind::Mariadb => "mariadb",
            TargetKind::Postgres => "postgres",
            TargetKind::Sqlite => "sqlite",
            TargetKind::Redis => "redis",
            TargetKind::Mysql => "mysql",
            TargetKind::Valkey => "valkey",
        }
    }
}

impl fmt::Display for TargetKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
