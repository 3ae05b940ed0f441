//! CPU counters with perf stat (skeleton: to be filled in).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The events bakeoff asks for, in perf's names.
pub const EVENTS: &[&str] = &[
    "cycles",
    "instructions",
    "branches",
    "branch-misses",
    "cache-references",
    "cache-misses",
    "L1-icache-load-misses",
    "iTLB-load-misses",
];

/// What this machine can count.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Support {
    pub supported: Vec<String>,
    pub unsupported: Vec<String>,
}

/// Runs `perf stat` on `true` once: which of `EVENTS` count here. Err: one line saying
/// why perf cannot be used at all (missing, or not permitted: perf_event_paranoid).
pub fn detect() -> Result<Support, String> {
    Err("perf stat support not built yet".into())
}

/// Counter values of one window.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Counts {
    pub values: BTreeMap<String, u64>,
    pub unsupported: Vec<String>,
}

/// The per-run figures results.json carries under `counters`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Derived {
    pub instructions_per_op: Option<f64>,
    pub cycles_per_op: Option<f64>,
    pub ipc: Option<f64>,
    pub cache_misses_per_kinstr: Option<f64>,
    pub branch_misses_per_kinstr: Option<f64>,
    pub itlb_misses_per_kinstr: Option<f64>,
    pub l1i_misses_per_kinstr: Option<f64>,
    pub unsupported: Vec<String>,
}

/// A perf stat attached to some processes.
pub struct Counting {
    _private: (),
}

impl Counting {
    /// Attaches `perf stat -x,` for `events` to `pids` (all their threads).
    pub fn start(_pids: &[i32], _events: &[String]) -> std::io::Result<Counting> {
        Err(std::io::Error::other("not built yet"))
    }

    /// Stops perf (SIGINT) and parses what it printed.
    pub fn stop(self) -> std::io::Result<Counts> {
        Ok(Counts::default())
    }
}

/// Per-op and per-1000-instruction figures from `counts` over `ops` operations.
pub fn derive(counts: &Counts, ops: u64) -> Derived {
    let _ = ops;
    Derived {
        unsupported: counts.unsupported.clone(),
        ..Derived::default()
    }
}
