//! What the probes saw of one run's measured window: the /proc sampler, CPU counters,
//! instruction counts and profiles (with their hot lines and the deltas between profiles).

use serde::{Deserialize, Serialize};

/// What the /proc sampler saw during one run's measured window.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct SystemRecord {
    pub cpu_user_pct: f64,
    pub cpu_system_pct: f64,
    pub cpu_idle_pct: f64,
    pub cpu_iowait_pct: f64,
    #[serde(default)]
    pub cpu_softirq_pct: f64,
    #[serde(default)]
    pub cpu_steal_pct: f64,
    /// The server's CPU, percent of one core: mean over the window and the busiest interval.
    #[serde(default)]
    pub server_cpu_pct_mean: f64,
    #[serde(default)]
    pub server_cpu_pct_max: f64,
    pub server_rss_kib_max: u64,
    /// Whole system context switches per operation.
    pub ctx_switches_per_op: f64,
    pub disk_read_bytes: u64,
    pub disk_write_bytes: u64,
    #[serde(default)]
    pub disk_util_pct_max: f64,
    /// Loopback bytes per operation (requests and replies).
    #[serde(default)]
    pub loopback_bytes_per_op: f64,
    /// The per-interval series (JSON), relative to the results folder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub series: Option<String>,
    /// The CPU part of that series, inline, so reports can draw it without reading files.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cpu_series: Vec<CpuSample>,
}

/// One sampler interval's CPU figures (machine modes: percent of all cores; server: percent
/// of one core).
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq)]
pub struct CpuSample {
    pub t_s: f64,
    pub user: f64,
    pub system: f64,
    pub iowait: f64,
    pub idle: f64,
    pub server: f64,
}

/// CPU counters (perf stat) of the server over one measured window.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct CountersRecord {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions_per_op: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cycles_per_op: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ipc: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_misses_per_kinstr: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch_misses_per_kinstr: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub itlb_misses_per_kinstr: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub l1i_misses_per_kinstr: Option<f64>,
    /// Events this machine could not count.
    #[serde(default)]
    pub unsupported: Vec<String>,
}

/// Instruction counts (callgrind) of one run's measured window.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct InstructionsRecord {
    pub instructions: u64,
    pub instructions_per_op: f64,
    /// Functions by own instructions per op, largest first.
    pub top: Vec<FnInstructions>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct FnInstructions {
    pub function: String,
    pub instructions_per_op: f64,
    pub pct: f64,
}

/// A hotspot profile of one run of a cell.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ProfileRecord {
    /// The flamegraph SVG, relative to the results folder.
    pub flamegraph: String,
    /// The sampled event (cycles, or cpu-clock where the CPU has no counters).
    pub event: String,
    pub samples: u64,
    pub round: usize,
    pub top: Vec<FnShareRecord>,
    /// Where the samples fell: the server binary, the kernel, libraries, other.
    pub split: SplitRecord,
    /// Against the baseline variant's profile of the same workload and connections:
    /// functions whose samples per operation changed most.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub diff: Vec<FnDeltaRecord>,
    /// Against the baseline's profile: source lines matched by function and
    /// `file:line` (instruction addresses are never matched across builds).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub line_diff: Vec<LineDeltaRecord>,
    /// Milliseconds spent resolving hot lines (addr2line, objdump) after perf script.
    #[serde(default)]
    pub lines_ms: u64,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct FnShareRecord {
    pub function: String,
    #[serde(default)]
    pub dso: String,
    pub self_pct: f64,
    #[serde(default)]
    pub children_pct: f64,
    /// The function's hottest source lines, or instructions where the binary has no
    /// line info.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lines: Vec<HotLineRecord>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct SplitRecord {
    pub server_pct: f64,
    pub kernel_pct: f64,
    pub libraries_pct: f64,
    pub other_pct: f64,
}

/// One source line (or instruction) of a function and its share of the function's own
/// samples.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct HotLineRecord {
    /// `file:line`, or the instruction's address in the binary (`0x4a1b2`).
    pub place: String,
    /// The instruction's disassembly, for an address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instruction: Option<String>,
    /// Percent of the function's own samples.
    pub pct: f64,
}

/// One source line's samples per million operations, baseline and this variant (None
/// where that profile did not keep the line among its function's hottest).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct LineDeltaRecord {
    pub function: String,
    pub place: String,
    pub base_per_mop: Option<f64>,
    pub other_per_mop: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub change: Option<f64>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct FnDeltaRecord {
    pub function: String,
    /// Self samples per million operations, baseline and this variant.
    pub base_per_mop: f64,
    pub other_per_mop: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub change: Option<f64>,
}
