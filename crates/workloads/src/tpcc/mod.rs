//! The tpcc workload: TPC-C from the published specification (revision 5.11): the nine
//! tables, a parallel loader with the specification's random rules, the five
//! transactions in a weighted mix, terminals with or without keying and think times,
//! per-kind response times against the 90th-percentile limits, and the consistency
//! conditions checked after a run.
//!
//! - `random`: NURand, customer last names, the specification's random strings.
//! - `schema`: the nine tables and their indexes, per dialect.
//! - `loader`: loads W warehouses (multi-row INSERTs on MariaDB, COPY on PostgreSQL)
//!   with [`load`].
//! - `txn`: New-Order, Payment, Order-Status, Delivery, Stock-Level.
//! - `run`: terminals over the load engine's phases; the run's record.
//! - `check`: consistency conditions 1-4 (and more) after a run.

pub mod check;
pub mod figures;
mod kind;
mod loader;
pub mod random;
pub mod records;
mod run;
pub mod schema;
mod section;
mod txn;
mod workload;

pub use check::{check, Violation};
pub use kind::{ThinkMode, TpccKeys, TpccKind, TERMINALS_PER_WAREHOUSE};
pub use loader::load;
pub use records::{TpccCell, TpccRun, TransactionRecord};
pub use run::run;
pub use workload::Tpcc;

use bakeoff_engine::Percentiles;
use std::collections::BTreeMap;

/// The five transaction kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    NewOrder,
    Payment,
    OrderStatus,
    Delivery,
    StockLevel,
}

impl Kind {
    pub const ALL: [Kind; 5] = [
        Kind::NewOrder,
        Kind::Payment,
        Kind::OrderStatus,
        Kind::Delivery,
        Kind::StockLevel,
    ];

    /// The name results use: new_order, payment, order_status, delivery, stock_level.
    pub fn name(self) -> &'static str {
        match self {
            Kind::NewOrder => "new_order",
            Kind::Payment => "payment",
            Kind::OrderStatus => "order_status",
            Kind::Delivery => "delivery",
            Kind::StockLevel => "stock_level",
        }
    }

    pub fn from_name(s: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.name() == s)
    }

    /// The 90th-percentile response-time limit (clause 5.2.5.4), in milliseconds.
    pub fn limit_ms(self) -> f64 {
        match self {
            Kind::StockLevel => 20_000.0,
            _ => 5_000.0,
        }
    }

    /// Minimum keying time and mean think time (clause 5.2.5.7), in seconds.
    pub fn keying_and_think_s(self) -> (f64, f64) {
        match self {
            Kind::NewOrder => (18.0, 12.0),
            Kind::Payment => (3.0, 12.0),
            Kind::OrderStatus => (2.0, 10.0),
            Kind::Delivery => (2.0, 5.0),
            Kind::StockLevel => (2.0, 5.0),
        }
    }
}

/// Keying and think times.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Think {
    /// None: every terminal runs transactions back to back (the throughput test).
    None,
    /// The specification's keying and think times, 10 terminals per warehouse.
    Spec,
}

/// Weights of the five kinds, in percent (they add up to 100).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mix {
    pub new_order: u32,
    pub payment: u32,
    pub order_status: u32,
    pub delivery: u32,
    pub stock_level: u32,
}

impl Default for Mix {
    /// 45/43/4/4/4: the specification's minimum shares, New-Order taking the rest.
    fn default() -> Self {
        Mix {
            new_order: 45,
            payment: 43,
            order_status: 4,
            delivery: 4,
            stock_level: 4,
        }
    }
}

impl Mix {
    pub fn weight(&self, k: Kind) -> u32 {
        match k {
            Kind::NewOrder => self.new_order,
            Kind::Payment => self.payment,
            Kind::OrderStatus => self.order_status,
            Kind::Delivery => self.delivery,
            Kind::StockLevel => self.stock_level,
        }
    }
}

/// Everything one tpcc load or run needs.
#[derive(Debug, Clone, PartialEq)]
pub struct TpccConfig {
    pub warehouses: u32,
    /// Terminals, one connection each. With `Think::Spec` the runner sets 10 per warehouse.
    pub connections: usize,
    pub think: Think,
    pub mix: Mix,
    /// MariaDB storage engine (default InnoDB); ignored on PostgreSQL.
    pub engine: Option<String>,
    /// Retries of one transaction after a deadlock or serialization failure.
    pub max_retries: u32,
    /// Client OS threads (`bakeoff_engine::AUTO_THREADS`: picked per connection count).
    pub client_threads: usize,
    /// Loader connections working in parallel (0: one per core).
    pub load_connections: usize,
}

impl Default for TpccConfig {
    fn default() -> Self {
        TpccConfig {
            warehouses: 1,
            connections: 4,
            think: Think::None,
            mix: Mix::default(),
            engine: None,
            max_retries: 10,
            client_threads: bakeoff_engine::AUTO_THREADS,
            load_connections: 0,
        }
    }
}

/// What a load did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LoadReport {
    pub seconds: f64,
    pub rows: u64,
}

/// One kind's figures over a run's measured window.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct KindResult {
    /// Business transactions completed (committed, or New-Order's planned rollbacks).
    pub count: u64,
    /// Response times (from the first statement to the commit, retries included).
    pub latency_us: Percentiles,
    /// New-Order: the 1% rolled back on purpose (an unused item id).
    pub rollbacks: u64,
    /// Attempts repeated after a deadlock or serialization failure.
    pub retries: u64,
    /// Transactions given up (an error that is not retried, or retries exhausted).
    pub errors: u64,
}

/// What a run measured beyond the load engine's record.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TpccRecord {
    pub kinds: BTreeMap<Kind, KindResult>,
    /// New-Order transactions committed in the measured window, per minute.
    pub notpm: f64,
    /// All transactions completed in the measured window, per minute.
    pub tpm: f64,
}
