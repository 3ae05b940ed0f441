//! The target registry: the one list of server kinds and how each one's [`Target`] is
//! made, and what is asked of a kind through it (its SQL-ness, whether it takes options,
//! its name parsed). The only module that names every server module; only the top of the
//! crate (the sandbox, the pristine data directory, lib.rs) uses it.

use std::fmt;
use std::str::FromStr;

use crate::kind::TargetKind;
use crate::mariadb::Mariadb;
use crate::memcached::Memcached;
use crate::mysql::Mysql;
use crate::postgres::Postgres;
use crate::redis::Redis;
use crate::sqlite::Sqlite;
use crate::target::{Made, Target};
use crate::valkey::VALKEY;

/// How a registry entry makes its [`Target`].
type Maker = fn(Made) -> Box<dyn Target>;

/// Every kind and how its [`Target`] is made, in the order help texts and messages list
/// them. A new target is its module, its [`TargetKind`] variant (with its name) and one
/// line here; every question about it (SQL or not, options, dialect, protocol, what it
/// refuses) is answered by its `Target`.
#[rustfmt::skip]
const REGISTRY: &[(TargetKind, Maker)] = &[
    (TargetKind::Memcached, |_| Box::new(Memcached)),
    (TargetKind::Mariadb,   |m| Box::new(Mariadb { sql: m.into() })),
    (TargetKind::Mysql,     |m| Box::new(Mysql { sql: m.into() })),
    (TargetKind::Postgres,  |m| Box::new(Postgres { sql: m.into() })),
    (TargetKind::Sqlite,    |m| Box::new(Sqlite { sql: m.into() })),
    (TargetKind::Redis,     |m| Box::new(Redis::from(m))),
    (TargetKind::Valkey,    |m| Box::new(Redis::fork_of(m, VALKEY))),
];

impl TargetKind {
    /// Every kind this build supports, in the registry's order (help texts, messages).
    pub fn all() -> impl Iterator<Item = TargetKind> {
        REGISTRY.iter().map(|(k, _)| *k)
    }

    /// Every kind's name, comma-separated, for messages.
    pub fn names() -> String {
        TargetKind::all()
            .map(TargetKind::as_str)
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Whether this is a SQL server (data directory, login, options): it has a dialect.
    pub fn is_sql(self) -> bool {
        target_for(self).dialect().is_some()
    }

    /// Whether the experiment's `options` are server settings for it
    /// ([`Target::takes_options`]).
    pub fn takes_options(self) -> bool {
        target_for(self).takes_options()
    }

    /// Whether the sandbox's "binary" is a shared library ([`Target::binary_is_library`]).
    pub fn binary_is_library(self) -> bool {
        target_for(self).binary_is_library()
    }
}

/// Error of [`TargetKind::from_str`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownTarget(pub String);

impl fmt::Display for UnknownTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown target {:?}; use one of: {}",
            self.0,
            TargetKind::names()
        )
    }
}

impl std::error::Error for UnknownTarget {}

impl FromStr for TargetKind {
    type Err = UnknownTarget;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        TargetKind::all()
            .find(|k| k.as_str().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| UnknownTarget(s.to_string()))
    }
}

/// The [`Target`] for `kind`, made with `made` (its options, data and login).
pub(crate) fn make(kind: TargetKind, made: Made) -> Box<dyn Target> {
    let (_, maker) = REGISTRY
        .iter()
        .find(|(k, _)| *k == kind)
        .expect("every TargetKind has a registry line");
    maker(made)
}

/// The [`Target`] implementation for `kind`, with no options and no data (SQL targets
/// built this way cannot log in; use [`crate::target_for_spec`]).
pub fn target_for(kind: TargetKind) -> Box<dyn Target> {
    make(kind, Made::default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kind_names_round_trip() {
        for k in TargetKind::all() {
            assert_eq!(k.as_str().parse::<TargetKind>().unwrap(), k);
            let json = serde_json::to_string(&k).unwrap();
            assert_eq!(json, format!("\"{}\"", k.as_str()));
            assert_eq!(serde_json::from_str::<TargetKind>(&json).unwrap(), k);
            assert_eq!(
                target_for(k).kind(),
                k,
                "{k}'s registry line makes another target"
            );
        }
        assert!("mysql8".parse::<TargetKind>().is_err());
    }

    /// Every [`TargetKind`] has exactly one [`REGISTRY`] line (so `make` never panics).
    /// The match is exhaustive: a new kind does not compile here until it is named, and
    /// the list it is named in is the one checked.
    #[test]
    fn every_kind_has_exactly_one_registry_line() {
        use TargetKind::*;
        let every = [Memcached, Mariadb, Postgres, Sqlite, Redis, Mysql, Valkey];
        for k in every {
            match k {
                Memcached | Mariadb | Postgres | Sqlite | Redis | Mysql | Valkey => {}
            }
            let lines = REGISTRY.iter().filter(|(x, _)| *x == k).count();
            assert_eq!(lines, 1, "{k} has {lines} registry lines");
        }
        assert_eq!(REGISTRY.len(), every.len());
    }
}
