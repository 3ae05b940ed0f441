//! Where the experiment ran: this machine (`host`), the other hosts (`hosts`) and a run's
//! client hosts.

use super::CpuSample;
use serde::{Deserialize, Serialize};

/// A machine's facts (the machine table), as `bakeoff_probe::machine` reads them.
pub use bakeoff_probe::machine::{Cache, Disk, Machine, NumaNode};

/// Another host of the experiment.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct HostRecord {
    pub name: String,
    pub ssh: String,
    pub cpu_model: String,
    pub cores: usize,
    pub kernel: String,
    /// What it serves and loads: "server", "load", or both.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub roles: Vec<String>,
    /// Its `listen` (where a server on it listens), when the experiment set one; not
    /// loopback is a warning.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub listen: Option<String>,
    /// Its machine facts, read by its agent about the folder it keeps its sandboxes in
    /// (absent: no agent ran there, or results from before).
    #[serde(default, skip_serializing_if = "Machine::is_empty")]
    pub machine: Machine,
}

/// One client host's part of a run loaded from several.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ClientRecord {
    pub host: String,
    pub connections: usize,
    #[serde(default)]
    pub ops: u64,
    pub ops_per_s: f64,
    pub client_cpu_s: f64,
    pub client_bound: bool,
    /// The host's CPU over the measured window (its /proc sampler), percent.
    #[serde(default)]
    pub cpu_user_pct: f64,
    #[serde(default)]
    pub cpu_system_pct: f64,
    #[serde(default)]
    pub cpu_softirq_pct: f64,
    #[serde(default)]
    pub cpu_idle_pct: f64,
    /// The host's throughput per interval of the window.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub interval_ops_per_s: Vec<f64>,
    /// The host's CPU per sampler interval of the window.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cpu_series: Vec<CpuSample>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Host {
    pub cpu_model: String,
    pub cores: usize,
    pub memory_bytes: u64,
    pub kernel: String,
    pub os: String,
    #[serde(default)]
    pub hostname: String,
    /// The CPUs the server and the load were pinned to here (absent: neither was).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus: Option<CpuPlacement>,
    /// The filesystem type of the folder that held the sandboxes and SQL data ("ext4",
    /// "xfs", "tmpfs", ...): on tmpfs, fsync costs nothing and no read touches a disk.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox_fs: Option<String>,
    /// That folder, the device its filesystem is on, and the space free there at start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox_dir: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox_device: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox_free_bytes: Option<u64>,
    /// The machine table's facts (caches, NUMA, disks and filesystem behind the sandbox
    /// folder, governor, huge pages, virtualization), each absent when unread.
    #[serde(default, skip_serializing_if = "Machine::is_empty")]
    pub machine: Machine,
}

/// Where the server and the load ran on the machine, as CPU lists.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct CpuPlacement {
    pub server: String,
    pub load: String,
    /// "plan" (`[plan] cpus`) or "split" (bakeoff's default on a machine with enough CPUs).
    pub by: String,
}
