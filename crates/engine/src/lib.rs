//! bakeoff-engine: the load engine. Shared-nothing client threads, each one level-triggered
//! epoll loop driving its connections as state machines; closed loop (connections x
//! pipeline) or open loop (a fixed or Poisson schedule, latency from the intended send
//! time); a per-thread HdrHistogram rotated every second. It knows no protocol: a
//! [`Session`] (one per connection, from the workload) writes requests and parses replies.
//! How many loops a load gets is [`event_loops_for`] (`threads.rs`), the one rule every
//! kind on the engine uses.

mod engine;
mod merge;
mod net;
mod record;
pub mod rng;
mod threads;

pub use engine::{run, Outcome, Session, SessionFactory, Settings};
pub use merge::{merge_records, serialize_histogram};
pub use net::{
    load_set_the_pace, peak_rss_kib, raise_nofile, raise_nofile_to, thread_cpu_s, ThreadTime,
    ENCRYPTED, SATURATED,
};
pub use record::{histogram, merge_intervals, percentiles, RawInterval, Recorder};
pub use threads::{event_loops_for, AUTO_THREADS};

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::time::Duration;

/// Where the server listens: a TCP address (loopback) or a unix socket.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Endpoint {
    Tcp(std::net::SocketAddr),
    Unix(std::path::PathBuf),
}

impl From<std::net::SocketAddr> for Endpoint {
    fn from(a: std::net::SocketAddr) -> Endpoint {
        Endpoint::Tcp(a)
    }
}

impl std::fmt::Display for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Endpoint::Tcp(a) => write!(f, "{a}"),
            Endpoint::Unix(p) => write!(f, "unix socket {}", p.display()),
        }
    }
}

/// The phases of a run, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Phase {
    Connect = 0,
    Preload = 1,
    Warmup = 2,
    Measure = 3,
    Done = 4,
}

impl Phase {
    /// The phase `p as u8` names (anything past the last is `Done`).
    pub fn from_u8(v: u8) -> Phase {
        match v {
            0 => Phase::Connect,
            1 => Phase::Preload,
            2 => Phase::Warmup,
            3 => Phase::Measure,
            _ => Phase::Done,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Phase::Connect => "connecting",
            Phase::Preload => "preloading",
            Phase::Warmup => "warming up",
            Phase::Measure => "measuring",
            Phase::Done => "done",
        }
    }
}

/// Warmup, then the measured phase.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Phases {
    pub warmup: Duration,
    pub measure: Measure,
}

/// How the measured phase ends.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Measure {
    Duration(Duration),
    Ops(u64),
}

/// Closed loop for peak throughput, open loop for latency at a given rate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Schedule {
    /// Each connection keeps `pipeline` requests in flight.
    ClosedLoop { pipeline: usize },
    /// `rate` requests per second in total, evenly spaced or Poisson, per connection
    /// staggered so connections do not fire together.
    OpenLoop { rate: f64, poisson: bool },
}

/// Called at the measured window's edges, from the coordinating thread.
pub trait PhaseHooks: Sync {
    fn measure_started(&self) {}
    /// The window has closed (the load starts nothing new).
    fn measure_ended(&self) {}
    /// Whether the load should keep its connections open until `measure_ended` has
    /// returned, so that a read of the server there still sees what goes with a
    /// connection (MySQL's prepared statements). The SQL loads (oltp, tpcb, ycsb, tpcc)
    /// do; otherwise they close them as the window ends.
    fn keep_connections(&self) -> bool {
        false
    }
}

/// Hooks that do nothing.
pub struct NoHooks;
impl PhaseHooks for NoHooks {}

/// Progress another thread can read while a run goes on (updated once per loop
/// iteration batch, never per operation).
#[derive(Debug, Default)]
pub struct Live {
    phase: AtomicU8,
    ops: AtomicU64,
    /// Measured-phase start in ns since the run's epoch (0 = not started).
    measure_start_ns: AtomicU64,
    now_ns: AtomicU64,
}

impl Live {
    pub fn phase(&self) -> Phase {
        Phase::from_u8(self.phase.load(Ordering::Relaxed))
    }
    pub fn phase_name(&self) -> &'static str {
        self.phase().name()
    }
    /// For load drivers outside this crate (SQL workloads, sysbench): the current phase.
    pub fn set_phase(&self, p: Phase) {
        self.phase.store(p as u8, Ordering::Relaxed);
    }
    /// For load drivers outside this crate: the measured phase began at `ns` (run epoch).
    pub fn set_measure_start(&self, ns: u64) {
        self.measure_start_ns.store(ns.max(1), Ordering::Relaxed);
    }
    /// For load drivers outside this crate: `ops` measured so far, at `now_ns`.
    pub fn set_progress(&self, ops: u64, now_ns: u64) {
        self.ops.store(ops, Ordering::Relaxed);
        self.now_ns.store(now_ns, Ordering::Relaxed);
    }
    /// Operations completed in the measured phase so far.
    pub fn measured_ops(&self) -> u64 {
        self.ops.load(Ordering::Relaxed)
    }
    /// Throughput of the measured phase so far (0 before it starts).
    pub fn ops_per_s(&self) -> f64 {
        let start = self.measure_start_ns.load(Ordering::Relaxed);
        let now = self.now_ns.load(Ordering::Relaxed);
        if start == 0 || now <= start {
            return 0.0;
        }
        self.measured_ops() as f64 / ((now - start) as f64 / 1e9)
    }
}

/// Latency percentiles in microseconds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Percentiles {
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub p999: f64,
    pub max: f64,
    pub mean: f64,
}

/// One second of the measured phase.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    pub t_s: f64,
    pub ops: u64,
    pub ops_per_s: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub max_us: f64,
}

/// Everything one run measured.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    pub ops: u64,
    pub elapsed_s: f64,
    pub ops_per_s: f64,
    /// Response time: closed loop from the send, open loop from the intended send.
    pub latency_us: Percentiles,
    /// Open loop only: from the actual send.
    pub service_us: Option<Percentiles>,
    pub errors: BTreeMap<String, u64>,
    pub misses: u64,
    pub verify_failures: u64,
    pub by_command: BTreeMap<String, u64>,
    pub client_cpu_s: f64,
    /// Time the load's threads were ready to run but waited for a CPU (other processes,
    /// the server, on the load's CPUs), summed over threads.
    #[serde(default)]
    pub client_wait_s: f64,
    pub client_threads: usize,
    pub client_rss_kib: u64,
    pub offered_ops_per_s: Option<f64>,
    /// Open loop: requests sent more than 1 ms after their intended time.
    pub late: u64,
    pub client_bound: bool,
    pub intervals: Vec<Interval>,
    /// SQL workloads: statements executed in the measured window (BEGIN and COMMIT too,
    /// as sysbench counts them); kv: equal to `ops`.
    #[serde(default)]
    pub queries: u64,
    /// SQL workloads: per transaction and per statement kind.
    #[serde(default)]
    pub kinds: BTreeMap<String, KindStats>,
    /// SQL workloads: connections lost and opened again.
    #[serde(default)]
    pub reconnects: u64,
    /// HdrHistogram interval log (V2 compressed, one line per second).
    #[serde(skip)]
    pub hdr_log: String,
    /// Open loop: the service-time histogram, V2 deflate-serialized, so records from
    /// several hosts merge exactly (`merge_records`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub service_hist: Vec<u8>,
}

/// One statement or transaction kind of a SQL run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct KindStats {
    pub count: u64,
    pub latency_us: Percentiles,
    /// The kind's response-time histogram, V2 deflate-serialized, when the workload keeps
    /// one: records from several hosts then merge its percentiles exactly.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hist: Vec<u8>,
}

/// Why a run could not finish.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("cannot connect to {addr}: {cause}; is the server up and listening there?")]
    Connect {
        addr: Endpoint,
        cause: std::io::Error,
    },
    #[error("the server closed a connection mid-run; see the server's log")]
    Closed,
    #[error("the server stopped answering ({0} s without a reply); see the server's log")]
    Stalled(u64),
    #[error("protocol error: {0}")]
    Protocol(String),
    #[error("network error: {0}")]
    Io(#[from] std::io::Error),
    #[error("cancelled")]
    Cancelled,
    #[error("bad load settings: {0}")]
    Settings(String),
    /// A SQL workload's failure, already one line naming the statement and the cause.
    #[error("{0}")]
    Sql(String),
}
