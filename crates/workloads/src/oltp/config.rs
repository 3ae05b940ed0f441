//! The oltp workload's parameters: sysbench's names and defaults (oltp_common.lua of
//! sysbench 1.0.20), so an experiment file reads like a sysbench command line.

use bakeoff_engine::AUTO_THREADS;

/// sysbench's OLTP tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OltpTest {
    ReadOnly,
    ReadWrite,
    WriteOnly,
    PointSelect,
    UpdateIndex,
    UpdateNonIndex,
    Insert,
    Delete,
    SelectRandomPoints,
    SelectRandomRanges,
}

impl OltpTest {
    pub const ALL: &'static [OltpTest] = &[
        OltpTest::ReadOnly,
        OltpTest::ReadWrite,
        OltpTest::WriteOnly,
        OltpTest::PointSelect,
        OltpTest::UpdateIndex,
        OltpTest::UpdateNonIndex,
        OltpTest::Insert,
        OltpTest::Delete,
        OltpTest::SelectRandomPoints,
        OltpTest::SelectRandomRanges,
    ];

    /// sysbench's test name, e.g. `oltp_read_only`.
    pub fn name(self) -> &'static str {
        match self {
            OltpTest::ReadOnly => "oltp_read_only",
            OltpTest::ReadWrite => "oltp_read_write",
            OltpTest::WriteOnly => "oltp_write_only",
            OltpTest::PointSelect => "oltp_point_select",
            OltpTest::UpdateIndex => "oltp_update_index",
            OltpTest::UpdateNonIndex => "oltp_update_non_index",
            OltpTest::Insert => "oltp_insert",
            OltpTest::Delete => "oltp_delete",
            OltpTest::SelectRandomPoints => "select_random_points",
            OltpTest::SelectRandomRanges => "select_random_ranges",
        }
    }

    pub fn from_name(s: &str) -> Option<OltpTest> {
        OltpTest::ALL.iter().copied().find(|t| t.name() == s)
    }
}

/// How row ids are drawn (sysbench's --rand-type and its parameters).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Distribution {
    Uniform,
    /// Sum of `iter` uniforms (sysbench's --rand-spec-iter, default 12).
    Gaussian {
        iter: u32,
    },
    /// `res` percent of draws go to `pct` percent of the ids at the table's middle, the
    /// rest are gaussian over `iter` uniforms (defaults 75, 1 and 12).
    Special {
        pct: f64,
        res: f64,
        iter: u32,
    },
    /// sysbench's --rand-pareto-h (default 0.2).
    Pareto {
        h: f64,
    },
    /// sysbench's --rand-zipfian-exp (default 0.8).
    Zipfian {
        exp: f64,
    },
}

impl Distribution {
    pub fn name(&self) -> &'static str {
        match self {
            Distribution::Uniform => "uniform",
            Distribution::Gaussian { .. } => "gaussian",
            Distribution::Special { .. } => "special",
            Distribution::Pareto { .. } => "pareto",
            Distribution::Zipfian { .. } => "zipfian",
        }
    }
}

/// Everything one oltp (or sysbench) run needs besides the server and the phases.
#[derive(Debug, Clone, PartialEq)]
pub struct OltpConfig {
    pub test: OltpTest,
    pub tables: u32,
    pub table_size: u64,
    pub point_selects: u32,
    pub simple_ranges: u32,
    pub sum_ranges: u32,
    pub order_ranges: u32,
    pub distinct_ranges: u32,
    pub range_size: u32,
    pub index_updates: u32,
    pub non_index_updates: u32,
    pub delete_inserts: u32,
    /// select_random_points / select_random_ranges: ids (or ranges) per query.
    pub random_points: u32,
    /// Run each transaction's statements without BEGIN/COMMIT (autocommit).
    pub skip_trx: bool,
    /// Ids come from AUTO_INCREMENT / SERIAL on prepare and insert.
    pub auto_inc: bool,
    /// The index on `k` is secondary (a separate id primary key is created otherwise).
    pub secondary: bool,
    /// Create the index on `k` at prepare.
    pub create_secondary: bool,
    pub distribution: Distribution,
    /// MariaDB storage engine (InnoDB, MyISAM, Aria); None: the server's default.
    pub engine: Option<String>,
    /// Prepared statements (sysbench's default, --db-ps-mode=auto).
    pub prepared: bool,
    pub connections: usize,
    /// Connect through the server's unix socket instead of loopback TCP.
    pub unix_socket: bool,
    /// Client threads; `AUTO_THREADS` (0): chosen per connection count by
    /// `client_threads_for`.
    pub client_threads: usize,
    /// Error kinds that are counted and the transaction retried, not a fault
    /// (sysbench's --mysql-ignore-errors: e.g. "deadlock", "lock_wait_timeout", or a code).
    pub ignore_errors: Vec<String>,
    /// Lost connections per run above which the run is invalid.
    pub max_reconnects: u64,
    /// An offered rate (transactions/s over all connections): an open loop, each
    /// connection sending at fixed intervals, response times from the intended start.
    /// None: the closed loop (back to back).
    pub rate: Option<f64>,
}

impl Default for OltpConfig {
    fn default() -> Self {
        OltpConfig {
            test: OltpTest::ReadWrite,
            tables: 1,
            table_size: 10_000,
            point_selects: 10,
            simple_ranges: 1,
            sum_ranges: 1,
            order_ranges: 1,
            distinct_ranges: 1,
            range_size: 100,
            index_updates: 1,
            non_index_updates: 1,
            delete_inserts: 1,
            random_points: 10,
            skip_trx: false,
            auto_inc: true,
            secondary: false,
            create_secondary: true,
            distribution: Distribution::Special {
                pct: 1.0,
                res: 75.0,
                iter: 12,
            },
            engine: None,
            prepared: true,
            connections: 1,
            client_threads: AUTO_THREADS,
            unix_socket: false,
            ignore_errors: [
                "deadlock",
                "lock_wait_timeout",
                "serialization",
                "duplicate_key",
            ]
            .map(String::from)
            .to_vec(),
            max_reconnects: 10,
            rate: None,
        }
    }
}
