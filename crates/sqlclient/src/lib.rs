//! bakeoff-sqlclient: bakeoff's own lean SQL clients and what every SQL user shares.
//!
//! - `db`: where a SQL server listens and how to log in ([`Db`], [`Dialect`]); `script`:
//!   a script run on one connection ([`run_script`]) and a readiness check ([`ping`]).
//! - `dialect`: the SQL each server speaks, behind one interface ([`SqlDialect`], from
//!   [`Dialect::sql`]): every SQL text difference the workloads need, one file per server.
//! - `client`: one connection ([`Client`]) over the two wire protocols, `mywire`
//!   (MariaDB's classic protocol) and `pgwire` (PostgreSQL protocol 3, also spoken by
//!   `bakeoff-sqlited`), on `stream` (TCP or a unix socket, async or blocking); what a
//!   statement sends and gets back (parameters, rows, errors) is `values`, below both.
//! - `driver`: how the SQL workloads drive many connections from a few client threads
//!   through the phases (connect, warm up, measure), recording per thread.
//!
//! Users: the SQL workloads (oltp, tpcc, replay, sqlsuite, verification) and the
//! sandbox's readiness check. General drivers (mysql_async, tokio-postgres) appear only
//! in this crate's tests, as a cross-check of these clients.

mod client;
mod db;
pub mod dialect;
pub mod driver;
mod mywire;
mod pgwire;
mod script;
mod stream;
mod values;

pub use client::Client;
pub use db::{Db, Dialect, Wire};
pub use dialect::{BulkLoad, Setting, SqlDialect};
pub use script::{ping, query, run_script, ENCRYPTED};
pub use values::{inline, DbError, Param, Rows, TEXT};
