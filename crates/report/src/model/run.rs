//! One measured run (`cells[].runs[]`) and its pieces: latency, statement kinds, server
//! memory, the machine's other processes and when they disturbed the run.

use super::{ClientRecord, CountersRecord, InstructionsRecord, SystemRecord};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One statement or transaction kind of a SQL run.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct KindRecord {
    pub count: u64,
    pub latency_us: Latency,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Latency {
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub p999: f64,
    pub max: f64,
    #[serde(default)]
    pub mean: f64,
}

/// Another process of the machine (or several of one name) during a run's window.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct OtherProcess {
    pub name: String,
    /// Its CPU, percent of all the machine's CPUs over the window.
    pub cpu_pct: f64,
}

/// Other processes above this many CPUs' worth (a tenth of one CPU) during a window, while
/// the server or the load waited for a CPU, mark the run disturbed by the machine.
pub const OTHERS_CPUS: f64 = 0.1;

/// The share of its window the load (per thread) or the server waited for a CPU above
/// which others' CPU is taken to have come out of the measured processes' time.
pub const WAITED_SHARE: f64 = 0.05;

/// CPU steal above this share of the machine during the window marks a run disturbed.
pub const STEAL_PCT: f64 = 2.0;

impl Run {
    /// What of the machine disturbed this run, in words ("others took 0.46 CPUs (sh
    /// 23%, ...)", "CPU steal 12%"); None when nothing did or it was not measured. Others
    /// count when they took more than [`OTHERS_CPUS`] while the load or the server waited
    /// for a CPU more than [`WAITED_SHARE`] of the window (where the waits were
    /// measured): on a machine with CPUs to spare, others take the idle ones.
    pub fn machine_disturbance(&self) -> Option<String> {
        if self.instruction_run {
            return None;
        }
        let mut why = Vec::new();
        if let Some(steal) = self.steal_pct.filter(|s| *s > STEAL_PCT) {
            why.push(format!("CPU steal {steal:.0}% (the VM's neighbours)"));
        }
        if let (Some(pct), Some(cpus)) = (self.others_cpu_pct, self.machine_cpus) {
            let others = pct / 100.0 * cpus as f64;
            let window = self.elapsed_s.max(1e-9);
            let load_waited = (self.client_threads > 0)
                .then(|| self.client_wait_s / (self.client_threads as f64 * window));
            let server_waited = self.server_wait_s.map(|w| w / window);
            let waits = [load_waited, server_waited];
            let waited = waits.iter().all(Option::is_none)
                || waits.iter().flatten().any(|w| *w >= WAITED_SHARE);
            if others > OTHERS_CPUS && waited {
                let top: Vec<String> = self
                    .others_top
                    .iter()
                    .take(3)
                    .map(|o| format!("{} {:.0}%", o.name, o.cpu_pct))
                    .collect();
                why.push(format!(
                    "other processes took {pct:.0}% of the CPUs{}",
                    if top.is_empty() {
                        String::new()
                    } else {
                        format!(" ({})", top.join(", "))
                    }
                ));
            }
        }
        (!why.is_empty()).then(|| why.join(", "))
    }
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(remote = "Self")]
pub struct Run {
    /// Round number (0-based) and position in that round's order.
    pub round: usize,
    pub ops_per_s: f64,
    pub ops: u64,
    pub elapsed_s: f64,
    pub latency_us: Latency,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_us: Option<Latency>,
    pub errors: u64,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub errors_by_kind: BTreeMap<String, u64>,
    pub misses: u64,
    pub verify_failures: u64,
    pub client_cpu_s: f64,
    /// Time the load's threads were ready to run but waited for a CPU, summed over them.
    #[serde(default)]
    pub client_wait_s: f64,
    /// What the server listened on, TCP and UDP ("127.0.0.1:41234/tcp"), read from /proc
    /// once it was ready (empty: not recorded, as for a server on another host).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub listens: Vec<String>,
    /// The CPUs the server and the load were pinned to for this run (absent: neither).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_cpus: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_cpus: Option<String>,
    /// Threads the load engine ran (0: not recorded).
    #[serde(default, skip_serializing_if = "is_no_threads")]
    pub client_threads: usize,
    pub client_rss_kib: u64,
    pub client_cpu_us_per_op: f64,
    pub server_cpu_s: f64,
    pub server_rss_kib: u64,
    pub server_cpu_us_per_op: f64,
    pub client_bound: bool,
    /// What the machine's other processes took during the measured window: its busy CPU
    /// time (user, nice, system) minus the server's and bakeoff's own (the load's),
    /// percent of all the machine's CPUs (absent: not measured, as on another host).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub others_cpu_pct: Option<f64>,
    /// CPU steal (the hypervisor's other guests) during the window, percent of all CPU.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steal_pct: Option<f64>,
    /// The other processes that took the most CPU during the window, by name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub others_top: Vec<OtherProcess>,
    /// CPUs of the machine the window was measured on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_cpus: Option<usize>,
    /// The server's busiest thread over the window, percent of one CPU: at 90 or more the
    /// server's pace was its own, whatever the load did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_thread_max_pct: Option<f64>,
    /// Seconds the server's threads waited for a CPU during the window, summed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_wait_s: Option<f64>,
    /// What may have disturbed this run (CPU steal, softirq load, a saturated load
    /// engine): said, never used to drop the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disturbed: Option<String>,
    /// Wall time of the whole run: start, preload, warmup, measure, stop.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wall_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offered_ops_per_s: Option<f64>,
    #[serde(default)]
    pub late: u64,
    pub valid: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invalid_reason: Option<String>,
    /// What the server ran with, read back at the measured window's edges (its
    /// variant's `system` settings, the allocator mapped in it): the end's reading;
    /// a setting that did not hold at either edge made the run invalid.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub system_applied: BTreeMap<String, String>,
    /// Per-second throughput, for spotting warmup drift and stalls.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub interval_ops_per_s: Vec<f64>,
    /// HDR interval log, relative to the results folder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hdr_log: Option<String>,
    /// Server stdout/stderr logs, relative to the results folder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_log: Option<String>,
    /// oltp and sysbench: transactions per second (= ops_per_s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tps: Option<f64>,
    /// oltp and sysbench: statements per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub qps: Option<f64>,
    /// oltp and sysbench: client CPU microseconds per transaction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_cpu_us_per_txn: Option<f64>,
    /// oltp: per transaction and per statement kind (point_select, commit, ...).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub statements: BTreeMap<String, KindRecord>,
    /// Connections lost and opened again during the run.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub reconnects: u64,
    /// The /proc sampler over the measured window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system: Option<SystemRecord>,
    /// CPU counters over the measured window ([measure] counters = true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counters: Option<CountersRecord>,
    /// mode = "instructions": callgrind's counts over the measured window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<InstructionsRecord>,
    /// mode = "both": an instruction-count run (the server under callgrind for `[plan]
    /// ops` operations) beside the wall-clock rounds, not one of them: its `round`
    /// numbers the instruction runs, and its figures decide the `instructions` metric only.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub instruction_run: bool,
    /// Probes that failed in this run (the run itself stays valid).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub probe_errors: Vec<String>,
    /// The workload kind's own figures, its keys beside the run's own: read and written
    /// by the kind (`crate::figures`).
    #[serde(flatten, skip_deserializing)]
    pub figures: crate::figures::Figures,
    /// Redis: INFO memory at the end of the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<MemoryRecord>,
    /// Redis: INFO memory when the measured window started (after the preload and the
    /// warmup).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_at_start: Option<MemoryRecord>,
    /// `[plan] layouts` above 1: which of the variant's layouts ran (0 for an installed
    /// binary, which has one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layout: Option<usize>,
    /// `[plan] layouts` above 1: bytes of padding in the server's environment for this
    /// start (the environment's size moves the stack, and with it the timing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env_pad: Option<usize>,
    /// The `[[host]]` that served this run (absent: this machine).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_host: Option<String>,
    /// The hosts that loaded it, each with its share (absent: this machine).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub clients: Vec<ClientRecord>,
    /// `[plan] server_stats`: the server's own counters over the measured window
    /// (read before and after it, outside it), name -> delta; only those that moved.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub server_stats: BTreeMap<String, f64>,
    /// The server's statistics this run could not read or delta, with the reason (a
    /// view the version lacks, a command refused, a counter that went backwards, a
    /// restart): never a negative delta, never an invalid run.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub server_stats_unavailable: BTreeMap<String, String>,
    /// Seconds from the before-read of the server's statistics to the window's end:
    /// the span `server_stats` counts (a little longer than `elapsed_s`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_stats_s: Option<f64>,
    /// `[plan] server_stats`: the statements the server's digests (pg_stat_statements,
    /// performance_schema) counted over the window, the most time first (`statements`
    /// is the load's own per-kind latencies).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub server_statements: Vec<StatementRecord>,
    /// The counters the after-read held (kept on the variant's record, not the run's).
    #[serde(skip)]
    pub server_counters_read: Vec<String>,
}

/// One statement digest over a run's window, as the server counted it.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct StatementRecord {
    /// The server's own digest (PostgreSQL's queryid, MySQL's DIGEST).
    pub digest: String,
    /// The server's normalised text (constants as `$1` or `?`).
    pub text: String,
    pub calls: u64,
    /// Mean time per call, in microseconds.
    pub mean_us: f64,
}

/// Redis's memory as INFO reports it.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct MemoryRecord {
    /// Bytes the allocator handed out (`used_memory`).
    pub used_memory: u64,
    /// Bytes resident (`used_memory_rss`).
    pub used_memory_rss: u64,
    /// RSS / used (`mem_fragmentation_ratio`).
    pub fragmentation_ratio: f64,
    /// Keys in the database (INFO keyspace).
    #[serde(default)]
    pub keys: u64,
    /// `used_memory_dataset` / keys: what one key costs beside its value (0 without keys).
    #[serde(default)]
    pub bytes_per_key: f64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

fn is_no_threads(n: &usize) -> bool {
    *n == 0
}
