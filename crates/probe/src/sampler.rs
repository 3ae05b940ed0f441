//! The /proc sampler (skeleton: to be filled in).

use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Where the server's processes are: a closure the sampler thread calls each interval,
/// returning (server CPU seconds so far, server RSS KiB now) summed over its processes.
pub type ServerUsage = Box<dyn Fn() -> (f64, u64) + Send>;

/// One interval's readings, rates over the interval.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    /// Seconds since the sampler started (end of the interval).
    pub t_s: f64,
    pub cpu_user_pct: f64,
    pub cpu_nice_pct: f64,
    pub cpu_system_pct: f64,
    pub cpu_idle_pct: f64,
    pub cpu_iowait_pct: f64,
    pub cpu_irq_pct: f64,
    pub cpu_softirq_pct: f64,
    pub cpu_steal_pct: f64,
    /// The server's CPU over the interval, percent of one core.
    pub server_cpu_pct: f64,
    pub server_rss_kib: u64,
    /// Context switches per second, whole system (/proc/stat ctxt).
    pub ctx_switches_per_s: f64,
    pub disk_read_bytes_per_s: f64,
    pub disk_write_bytes_per_s: f64,
    /// Busiest device's utilization (time with I/O in flight), percent.
    pub disk_util_pct: f64,
    /// Bytes received on loopback per second (what lo carries once).
    pub loopback_bytes_per_s: f64,
}

/// The whole window's totals and means.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub seconds: f64,
    pub cpu_user_pct: f64,
    pub cpu_system_pct: f64,
    pub cpu_idle_pct: f64,
    pub cpu_iowait_pct: f64,
    pub cpu_softirq_pct: f64,
    pub cpu_steal_pct: f64,
    pub server_cpu_pct_mean: f64,
    pub server_cpu_pct_max: f64,
    pub server_rss_kib_max: u64,
    pub ctx_switches: u64,
    pub disk_read_bytes: u64,
    pub disk_write_bytes: u64,
    pub disk_util_pct_max: f64,
    pub loopback_bytes: u64,
}

/// A running sampler thread.
pub struct Sampler {
    _private: (),
}

impl Sampler {
    pub fn start(_server: ServerUsage, _interval: Duration) -> Sampler {
        Sampler { _private: () }
    }

    /// Stops the thread; the samples and the window's summary (from the counters at
    /// start and stop, so a window shorter than one interval still has totals).
    pub fn stop(self) -> (Vec<Sample>, Summary) {
        (Vec::new(), Summary::default())
    }
}
