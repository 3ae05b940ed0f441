//! bakeoff-sandbox: the lifecycle of one server instance ("sandbox") per target kind.
//!
//! A sandbox is a server process in its own process group, listening on a free
//! 127.0.0.1 port, with a private work dir (logs, record file) under a sandbox root.
//! [`Sandbox::start`] spawns it and waits for readiness, [`Sandbox::usage`] sums CPU and
//! memory over its processes from /proc, [`Sandbox::stop`] ends it (SIGTERM, grace,
//! SIGKILL) and cleans up. Nothing outlives bakeoff: servers get PR_SET_PDEATHSIG(SIGKILL)
//! from a long-lived spawner thread, [`install_signal_handler`] kills them on
//! SIGINT/SIGTERM, `Drop` kills unstopped ones, and [`reap_stale`] cleans up after a run
//! that was itself killed. Server kinds plug in through the [`Target`] trait.
//!
//! SQLite runs as a "server" too: `bakeoff-sqlited` hosts the variant's shared library
//! and speaks the PostgreSQL protocol (see `sqlite.rs`).
//!
//! SQL servers (MariaDB, PostgreSQL, SQLite) also get a data directory: [`init_data`] makes a
//! pristine one once (with its own login), and a sandbox runs on a fresh copy of it
//! ([`DataSource::Copy`]) or on it in place ([`DataSource::InPlace`], to load data once),
//! as the unprivileged `bakeoff` (else `nobody`) user when bakeoff runs as root.

mod dirs;
mod error;
mod kind;
mod live;
mod mariadb;
mod memcached;
mod meta;
mod mysql;
mod mysqld;
mod owned;
mod postgres;
mod pristine;
mod process;
mod procfs;
mod redis;
mod sandbox;
pub mod settings;
mod signals;
mod spawner;
mod sqldata;
mod sqlite;
mod stale;
pub mod stats;
mod target;
mod targets;
mod valkey;

pub use dirs::{
    check_root, claim_root, default_root, filesystem_of, is_our_root, Filesystem, DATA_PURPOSE,
};
pub use error::SandboxError;
pub use kind::TargetKind;
pub use mariadb::Mariadb;
pub use memcached::Memcached;
pub use mysql::Mysql;
pub use postgres::Postgres;
pub use pristine::init_data;
pub use procfs::{Usage, Watch};
pub use redis::Redis;
pub use sandbox::{target_for_spec, Sandbox, SandboxSpec, StopOutcome, StopReport, LOOPBACK};
pub use signals::{install_signal_handler, kill_all, try_install_signal_handler, wait_if_ending};
/// Spawns a helper process (ssh) as servers are: its own process group, killed when
/// bakeoff dies.
pub use spawner::spawn as spawn_guarded;
pub use sqldata::{copy_tree, read_login, server_user, DataSource, Login};
pub use sqlite::{host_binary, Sqlite};
pub use stale::{reap_stale, StaleReport};
pub use target::{common_refusal, Ask, ConnectionLimit, Launch, Protocol, Target};
pub use targets::{target_for, UnknownTarget};
pub use valkey::VALKEY;
