//! `tpch`: analytic queries derived from TPC-H (named so in every output; never a TPC-H
//! result): the specification's eight tables generated in this process by the `tpchgen`
//! crate at a `scale` from 0.01 to 10 and streamed into the server (`schema.rs`: COPY on
//! PostgreSQL, multi-row INSERTs elsewhere, SQLite in one transaction per table; keys, the
//! usual indexes and `ANALYZE` before any measured query), loaded once per variant and
//! copied for every run; the 22 queries, each a file in `queries/` (`queries.rs`: the
//! substitution parameters drawn per run from the round's seed, or the validation
//! values); a run is the power run or, with `streams`, a throughput run (`run.rs`), each
//! query timed, one past its `timeout` recorded as timed out; the answers compared within
//! the specification's precision (`answers.rs`); the plans saved (`EXPLAIN`, costs
//! stripped); per query and per run the figures (`figures.rs`: a family of query
//! comparisons per cell, the geometric mean its own) and the section (`section.rs`).

pub mod answers;
mod figures;
mod kind;
pub mod queries;
pub mod records;
pub mod run;
pub mod schema;
mod section;
mod workload;

pub use kind::{ParamsFrom, TpchKeys, TpchKind};
pub use records::{QueryRecord, QueryRow, TpchCell, TpchRun};
pub use workload::{geomean, Data, Tpch};
