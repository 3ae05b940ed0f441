//! The oltp workload: sysbench's OLTP schema and tests, natively over async drivers
//! (mysql_async, tokio-postgres), connections as tasks on a fixed pool of client threads.

mod config;

pub use config::{Distribution, OltpConfig, OltpTest};
