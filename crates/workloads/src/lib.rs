//! bakeoff-workloads: what is sent to the server, over the load engine. `kv` speaks
//! memcached's text protocol (get, set, add, delete, multi-get) with seeded key and value
//! generators and a check of every value read back. `oltp` is sysbench's OLTP schema and
//! tests over native async SQL drivers; `sysbench` runs the real sysbench with the same
//! parameters. `sql` says where a SQL server listens.

mod driver;
pub mod kv;
pub mod mysqlslap;
pub mod oltp;
pub mod replay;
pub mod sql;
pub mod sqlsuite;
pub mod sysbench;
pub mod tpcc;
pub mod verify;
