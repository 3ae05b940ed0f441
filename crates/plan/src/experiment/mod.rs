//! The experiment file's types, exactly as a user writes them (serde from TOML).
//!
//! Every table denies unknown keys, so a typo is an error with its position rather than a
//! silently ignored setting. Defaults live here, next to the keys they belong to, and are
//! documented in docs/experiment-file.md.
//!
//! One node of the crate's module graph with its two submodules, because the three name
//! each other by their nature: a [`Workload`] holds its kind's keys ([`KindKeys`]), whose
//! check reads the [`Loaded`] file, which holds the [`Experiment`]. They validate nothing:
//! the rules live above them (`validate`), the error and location helpers below
//! (`located`).

mod kind;
mod loaded;

pub use kind::{fitting_targets, KindKeys, KindSpec, Kinds};
pub use loaded::Loaded;

use bakeoff_tune::{Lto, Space};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// One experiment: a target, its variants, the workloads, and the plan of repetitions.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Experiment {
    /// Names the results folder and the report.
    pub name: String,
    /// Free text shown at the top of the report.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub target: Target,
    #[serde(rename = "variant")]
    pub variants: Vec<Variant>,
    #[serde(rename = "workload", deserialize_with = "workload_list")]
    pub workloads: Vec<Workload>,
    #[serde(default)]
    pub plan: Plan,
    /// What is measured beside throughput and latency (sampler, counters, profiles).
    #[serde(default)]
    pub measure: Measure,
    /// Result equivalence: a query set run against every variant before measuring.
    #[serde(default)]
    pub verify: Verify,
    /// Other machines, reached over ssh (`[[host]]`).
    #[serde(default, rename = "host", skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<crate::Host>,
    /// The build space `bakeoff tune` searches (`crate::tune`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tune: Option<crate::Tune>,
}

/// The `[verify]` table.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Verify {
    #[serde(default = "yes")]
    pub enabled: bool,
    /// A .sql file of queries; default the replay workloads' statements.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queries: Option<PathBuf>,
}

impl Default for Verify {
    fn default() -> Self {
        Verify {
            enabled: true,
            queries: None,
        }
    }
}

/// The `[measure]` table: probes of every run.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Measure {
    /// The /proc sampler's interval (always on).
    #[serde(default = "default_interval")]
    pub interval: String,
    /// CPU counters (perf stat) on the server during every measured window.
    #[serde(default)]
    pub counters: bool,
    /// A hotspot profile (perf record -g) of one measured run per cell.
    #[serde(default)]
    pub profile: bool,
}

impl Default for Measure {
    fn default() -> Self {
        Measure {
            interval: default_interval(),
            counters: false,
            profile: false,
        }
    }
}

impl Measure {
    /// The sampler interval (validated to parse).
    pub fn interval_duration(&self) -> std::time::Duration {
        crate::parse_duration(&self.interval).unwrap_or(std::time::Duration::from_secs(1))
    }
}

/// How runs are measured.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Wall-clock throughput and latency (the default).
    #[default]
    Time,
    /// A fixed op count with the server under valgrind callgrind: instructions per op.
    Instructions,
    /// Both: the wall-clock rounds as in `Time`, plus instruction-count runs (callgrind,
    /// a fixed `ops` count) per variant and point; one answer per metric.
    Both,
}

impl Mode {
    /// Whether some runs count instructions under callgrind (`instructions` or `both`).
    pub fn counts_instructions(self) -> bool {
        matches!(self, Mode::Instructions | Mode::Both)
    }
}

/// How SQL clients reach the server.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum Transport {
    /// TCP on 127.0.0.1 (the default).
    #[default]
    Tcp,
    /// The server's unix socket in its sandbox.
    Unix,
}

/// Checkers a build variant may be compiled with.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum Sanitizer {
    Address,
    Undefined,
    /// ThreadSanitizer: data races and lock-order inversions (not with `address`).
    Thread,
}

impl Sanitizer {
    pub fn as_str(self) -> &'static str {
        match self {
            Sanitizer::Address => "address",
            Sanitizer::Undefined => "undefined",
            Sanitizer::Thread => "thread",
        }
    }
}

/// A tool a variant's server runs under.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum RunUnder {
    /// valgrind's memcheck: memory errors, reported per variant.
    Memcheck,
    /// valgrind's helgrind: data races and lock-order violations, reported per variant.
    Helgrind,
}

impl RunUnder {
    /// The key's value, which is also valgrind's tool name.
    pub fn as_str(self) -> &'static str {
        match self {
            RunUnder::Memcheck => "memcheck",
            RunUnder::Helgrind => "helgrind",
        }
    }
}

/// The kind of server every variant is: the sandbox crate's, where each kind's
/// [`bakeoff_sandbox::Target`] says everything about it.
pub use bakeoff_sandbox::TargetKind;

/// A server option's value as written: `"1G"`, `2000`, `0.9` or `true`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum OptionValue {
    Bool(bool),
    Int(i64),
    Float(f64),
    Text(String),
}

impl std::fmt::Display for OptionValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OptionValue::Bool(true) => f.write_str("on"),
            OptionValue::Bool(false) => f.write_str("off"),
            OptionValue::Int(n) => write!(f, "{n}"),
            OptionValue::Float(x) => write!(f, "{x}"),
            OptionValue::Text(t) => f.write_str(t),
        }
    }
}

/// Server options by name (my.cnf keys for MariaDB, postgresql.conf keys for PostgreSQL,
/// PRAGMAs run on every connection for SQLite).
pub type ServerOptions = BTreeMap<String, OptionValue>;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Target {
    pub kind: TargetKind,
    /// Where build variants get their source; not needed when every variant is a binary.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<Source>,
    /// Server arguments for every variant (before the variant's own `args`).
    #[serde(default)]
    pub args: Vec<String>,
    /// Server options for every variant (SQL targets): my.cnf or postgresql.conf keys.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub options: ServerOptions,
    /// The `[[host]]` that serves; default this machine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// Where a served-elsewhere variant is built: here (copied there) or on its host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build_on: Option<BuildOn>,
}

/// `[target] build_on`.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum BuildOn {
    /// On this machine; built binaries are copied to the server's host.
    Local,
    /// On the server's host.
    Host,
}

/// Exactly one of `debian`, `tarball` (+ `sha256`), `git` (+ `rev`), `path` or (SQLite)
/// `bundled = true`, the amalgamation bakeoff carries (the default for sqlite targets).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Source {
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub bundled: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub debian: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tarball: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rev: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<PathBuf>,
}

/// One way to get the server: built from the target's source, or an installed binary.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Variant {
    pub name: String,
    /// The kind of server this variant is, over `[target] kind` (`Experiment::kind_of`):
    /// servers of different kinds compared in one experiment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<TargetKind>,
    /// An installed server binary; excludes every build key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub binary: Option<PathBuf>,
    /// A distribution's released binaries, fetched and unpacked; excludes `binary` and
    /// every build key (`crate::dist`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dist: Option<crate::Dist>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compiler: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cflags: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ldflags: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub configure_args: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub make_args: Vec<String>,
    /// Unified diffs applied with `patch -p1`, relative to the experiment file.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub patches: Vec<PathBuf>,
    /// Extra environment for configure and make (build variants) and for the server
    /// process (every variant); never `LD_*` (`preload` is the one way to preload).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// The allocator preloaded into the server: jemalloc, tcmalloc, mimalloc or the path
    /// of a shared library (`crate::system`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preload: Option<String>,
    /// Transparent huge pages while this variant runs: always, madvise or never
    /// (machine-wide: needs `--allow-system-changes`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thp: Option<String>,
    /// THP defrag while this variant runs: always, defer, defer+madvise, madvise, never.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub defrag: Option<String>,
    /// Kernel settings while this variant runs (`vm.swappiness = 1`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub sysctl: BTreeMap<String, crate::system::SysctlValue>,
    /// The CPUs its server runs on, as taskset takes them (over `[plan] cpus` server).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus: Option<String>,
    /// SMT on or off while this variant runs, where the machine has the control.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub smt: Option<String>,
    /// Server arguments for this variant only, after the target's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// Server options for this variant only, merged over the target's.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub options: ServerOptions,
    /// MariaDB storage engine for this variant's oltp tables (over the workload's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine: Option<String>,
    /// Build with these sanitizers (build variants only); their reports fail the variant.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sanitize: Vec<Sanitizer>,
    /// Run the server under a checking tool; its reports fail the variant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_under: Option<RunUnder>,
    /// Link-time optimization: "full" (gcc or clang) or "thin" (clang). Sets the flags and
    /// the matching archiver and linker; the build is checked to carry LTO code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lto: Option<bakeoff_build::Lto>,
    /// Profile-guided optimization: an instrumented build trained on this workload, then
    /// the build with its profile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pgo: Option<Training>,
    /// BOLT: the build linked with --emit-relocs, profiled under perf on this workload,
    /// and rewritten by llvm-bolt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bolt: Option<Training>,
    /// A git source only: build this variant from this revision (commit, tag or branch)
    /// instead of the source's `rev`, so two commits meet in one experiment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rev: Option<String>,
    /// The `[[host]]` this variant's server runs on, over `[target] host`: the same
    /// server measured on another machine (its load from there too, unless `clients`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// The `[[host]]`s that drive this variant's load, over the workloads' `clients`;
    /// default its `host` itself.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub clients: Vec<String>,
    /// `[plan] server_stats` for this variant's runs only (`Experiment::server_stats_of`):
    /// two variants of one binary, one `"off"` and one `"basic"`, make the cost of
    /// reading an A/B in alternating rounds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_stats: Option<bakeoff_sandbox::stats::StatsLevel>,
}

/// `pgo = { workload = "kv", duration = "30s" }`: the training run.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Training {
    /// A workload of the experiment, by name.
    pub workload: String,
    /// How long it drives the instrumented server (default 30 s).
    #[serde(default = "default_training")]
    pub duration: String,
    /// The connection count to train at (default the workload's first).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connections: Option<usize>,
}

fn default_training() -> String {
    "30s".into()
}

impl Experiment {
    /// The kind of server `v` is: its own `kind`, else `[target] kind`.
    pub fn kind_of(&self, v: &Variant) -> TargetKind {
        v.kind.unwrap_or(self.target.kind)
    }

    /// The kind of the variant named `name` (`[target] kind` for a name no variant has,
    /// such as the A/A check's second sandbox of the baseline, which is the baseline's).
    pub fn kind_named(&self, name: &str) -> TargetKind {
        let name = self.standing_for(name);
        self.variants
            .iter()
            .find(|v| v.name == name)
            .map_or(self.target.kind, |v| self.kind_of(v))
    }

    /// Every kind a variant is, each once, in variant order.
    pub fn variant_kinds(&self) -> Vec<TargetKind> {
        let mut out: Vec<TargetKind> = Vec::new();
        for v in &self.variants {
            let k = self.kind_of(v);
            if !out.contains(&k) {
                out.push(k);
            }
        }
        if out.is_empty() {
            out.push(self.target.kind);
        }
        out
    }

    /// Whether the variants are servers of more than one kind.
    pub fn mixes_kinds(&self) -> bool {
        self.variant_kinds().len() > 1
    }

    /// Whether the variants named `a` and `b` are servers of different kinds (a
    /// cross-server comparison).
    pub fn cross_kind(&self, a: &str, b: &str) -> bool {
        self.kind_named(a) != self.kind_named(b)
    }

    /// `[target] args` as `v` gets them: every variant of `[target] kind` does; a variant
    /// of another kind gets only its own (another server's command line would not parse).
    pub fn target_args_for(&self, v: &Variant) -> &[String] {
        if self.kind_of(v) == self.target.kind {
            &self.target.args
        } else {
            &[]
        }
    }

    /// `[target] options` as `v` gets them: every variant whose kind takes options does.
    pub fn target_options_for(&self, v: &Variant) -> Option<&ServerOptions> {
        self.kind_of(v)
            .takes_options()
            .then_some(&self.target.options)
    }
}

impl Variant {
    /// True when this variant is built from source rather than taken as a binary (an
    /// installed one or a distribution's).
    pub fn is_build(&self) -> bool {
        self.binary.is_none() && self.dist.is_none()
    }

    /// The compiler a build variant uses (`gcc` when the file names none).
    pub fn compiler_or_default(&self) -> &str {
        self.compiler.as_deref().unwrap_or("gcc")
    }

    /// The keys only a build takes, each with whether the variant sets it (in the order
    /// checks look for one: the first set is the one an error names).
    pub fn build_keys(&self) -> [(&'static str, bool); 10] {
        [
            ("compiler", self.compiler.is_some()),
            ("cflags", self.cflags.is_some()),
            ("ldflags", self.ldflags.is_some()),
            ("configure_args", !self.configure_args.is_empty()),
            ("make_args", !self.make_args.is_empty()),
            ("patches", !self.patches.is_empty()),
            ("rev", self.rev.is_some()),
            ("lto", self.lto.is_some()),
            ("pgo", self.pgo.is_some()),
            ("bolt", self.bolt.is_some()),
        ]
    }
}

/// A variant's system settings (`crate::system`): what it asks of the machine.
impl Variant {
    /// Whether it asks anything of the machine or its server's process.
    pub fn asks_system(&self) -> bool {
        self.preload.is_some() || self.cpus.is_some() || !self.machine_changes().is_empty()
    }

    /// The machine-wide settings it asks for, in a fixed order (thp, defrag, smt, then
    /// sysctl by name), each with the key it came from.
    pub fn machine_changes(&self) -> Vec<bakeoff_os::system::Change> {
        let mut out = Vec::new();
        for (setting, v) in [
            (bakeoff_os::system::Setting::Thp, &self.thp),
            (bakeoff_os::system::Setting::Defrag, &self.defrag),
            (bakeoff_os::system::Setting::Smt, &self.smt),
        ] {
            if let Some(v) = v {
                out.push(bakeoff_os::system::Change {
                    setting,
                    value: v.clone(),
                });
            }
        }
        for (name, value) in crate::system::sysctl_flat(&self.sysctl) {
            out.push(bakeoff_os::system::Change {
                setting: bakeoff_os::system::Setting::Sysctl(name),
                value,
            });
        }
        out
    }

    /// What it asked, as results.json `variants[].system` records it: `preload`, `thp`,
    /// `defrag`, `smt`, `cpus`, `sysctl NAME`, `env NAME`.
    pub fn system_asked(&self) -> BTreeMap<String, String> {
        let mut m = BTreeMap::new();
        if let Some(p) = &self.preload {
            m.insert("preload".into(), p.clone());
        }
        if let Some(c) = &self.cpus {
            m.insert("cpus".into(), c.clone());
        }
        for c in self.machine_changes() {
            m.insert(c.setting.label(), c.value);
        }
        for (k, v) in &self.env {
            m.insert(format!("env {k}"), v.clone());
        }
        m
    }
}

/// `connections = 16` or `connections = [1, 16, 64]`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(untagged)]
pub enum OneOrMany {
    One(usize),
    Many(Vec<usize>),
}

impl OneOrMany {
    pub fn to_vec(&self) -> Vec<usize> {
        match self {
            OneOrMany::One(n) => vec![*n],
            OneOrMany::Many(v) => v.clone(),
        }
    }
}

/// What is sent to the server: one `[[workload]]`. Its kind (found in the registry the
/// file was read with, [`crate::Kinds`]) reads its own keys into its own struct
/// ([`crate::KindKeys`]); a key of another kind is an error with its position. Read from
/// the document table by table (`workload::read`), so a wrong type still points at its key.
#[derive(Clone)]
pub struct Workload {
    /// Its kind: what `kind = "..."` names.
    pub kind: &'static dyn KindSpec,
    /// Names the workload in results; default its kind.
    pub name: Option<String>,
    /// The kind's own keys.
    pub keys: Box<dyn KindKeys>,
    /// Only for training (a variant's `pgo` or `bolt`): never measured or verified.
    pub train_only: bool,
    /// The `[[host]]`s that drive the load; default this machine.
    pub clients: Vec<String>,
    /// `slo = { percentile = 99, limit = "1ms" }`: search each variant's capacity at this
    /// latency limit instead of measuring a closed loop (bakeoff-capacity).
    pub slo: Option<Slo>,
}

/// A latency limit a capacity search holds a variant to: the `percentile` of the response
/// time, measured from each request's intended send time, at most `limit`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Slo {
    /// 50, 90, 99 or 99.9.
    pub percentile: f64,
    /// A duration such as "1ms" or "500us".
    pub limit: String,
}

/// The percentiles a run's record keeps, so the ones an `slo` may name.
pub const SLO_PERCENTILES: [f64; 4] = [50.0, 90.0, 99.0, 99.9];

impl Slo {
    /// The limit in microseconds (0 where it does not parse: validation refuses it).
    pub fn limit_us(&self) -> f64 {
        crate::parse_duration(&self.limit).map_or(0.0, |d| d.as_secs_f64() * 1e6)
    }
}

impl PartialEq for Workload {
    fn eq(&self, other: &Self) -> bool {
        self.kind.name() == other.kind.name()
            && self.name == other.name
            && self.keys.to_json() == other.keys.to_json()
            && self.train_only == other.train_only
            && self.clients == other.clients
            && self.slo == other.slo
    }
}

impl std::fmt::Debug for Workload {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Workload")
            .field("kind", &self.kind.name())
            .field("name", &self.name)
            .field("keys", &self.keys)
            .field("train_only", &self.train_only)
            .field("clients", &self.clients)
            .field("slo", &self.slo)
            .finish()
    }
}

impl Serialize for Workload {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        /// The table as the file writes it: kind, name, then the kind's keys.
        #[derive(Serialize)]
        struct Flat<'a> {
            kind: &'a str,
            #[serde(skip_serializing_if = "Option::is_none")]
            name: &'a Option<String>,
            #[serde(skip_serializing_if = "std::ops::Not::not")]
            train_only: bool,
            #[serde(skip_serializing_if = "<[String]>::is_empty")]
            clients: &'a [String],
            #[serde(skip_serializing_if = "Option::is_none")]
            slo: &'a Option<Slo>,
            #[serde(flatten)]
            keys: serde_json::Value,
        }
        Flat {
            kind: self.kind.name(),
            name: &self.name,
            train_only: self.train_only,
            clients: &self.clients,
            slo: &self.slo,
            keys: self.keys.to_json(),
        }
        .serialize(s)
    }
}

/// A workload kind and name, read before the kind's keys.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct WorkloadHead {
    pub kind: String,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub train_only: bool,
    #[serde(default)]
    pub clients: Vec<String>,
    #[serde(default)]
    pub slo: Option<Slo>,
}

/// `[[workload]]` is read per table once the kind is known (`workload::read`); here only
/// its shape (a list of tables, at least one) is checked.
fn workload_list<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<Workload>, D::Error> {
    Vec::<serde::de::IgnoredAny>::deserialize(d).map(|_| Vec::new())
}

/// Repetitions, phases, seed and baseline.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Plan {
    /// A fixed number of rounds; with `budget`, a cap on rounds. Absent with no budget:
    /// the default budget applies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repetitions: Option<usize>,
    /// Wall time for the measured rounds (starts, warmups and stops included): rounds run
    /// until every comparison reaches `precision` or the next round would not fit.
    #[serde(
        default,
        deserialize_with = "duration_text",
        skip_serializing_if = "Option::is_none"
    )]
    pub budget: Option<String>,
    /// Target half-width of every comparison's ratio CI, relative (0.01: +-1%). Stops a
    /// point (workload x connections) once all its comparisons reach it.
    #[serde(default, alias = "target_ci", skip_serializing_if = "Option::is_none")]
    pub precision: Option<f64>,
    /// Half-width of the band in which a comparison whose whole CI lies is "equivalent";
    /// default `precision`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub equivalence: Option<f64>,
    /// auto (paired by round when enough rounds pair), paired or unpaired.
    #[serde(default)]
    pub pairing: Pairing,
    /// The discarded phase before each measured one; default per workload kind (see
    /// `Experiment::warmup`).
    #[serde(
        default,
        deserialize_with = "duration_text",
        skip_serializing_if = "Option::is_none"
    )]
    pub warmup: Option<String>,
    /// Measured time per run; excludes `ops`.
    #[serde(
        default,
        deserialize_with = "duration_text",
        skip_serializing_if = "Option::is_none"
    )]
    pub duration: Option<String>,
    /// Measured operations per run; excludes `duration`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ops: Option<u64>,
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// A variant name; default the first variant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<String>,
    /// Fewest rounds before `precision` may stop a point (default 6, the fewest pairs
    /// the signed-rank test can decide with).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_repetitions: Option<usize>,
    /// `time` (wall clock, the default), `instructions` (callgrind, fixed `ops`) or
    /// `both` (the wall-clock rounds plus instruction-count runs of `ops` each).
    #[serde(default)]
    pub mode: Mode,
    /// Code layouts per build variant: each built this many times with its functions in
    /// a different order (seeded by `seed`), rounds rotating through them, so a verdict
    /// holds across layouts rather than for one linker's luck. 1: one plain build.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub layouts: usize,
    /// Which CPUs the server and the load run on, as CPU lists taskset takes ("0-7").
    /// Default: on 8 or more CPUs, whole cores split in two halves (server first); on
    /// fewer, neither is pinned. One side given: the other gets the rest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus: Option<Cpus>,
    /// Where sandboxes and SQL data directories live while they run; default a folder on
    /// disk (`/var/tmp/bakeoff-$UID`). `--sandbox-dir` overrides it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox_dir: Option<String>,
    /// The A/A check: the baseline runs twice, a second sandbox of the same binary as a
    /// variant of its own in the rounds ([`Experiment::aa_variant`] names it), compared
    /// with the baseline like any variant: the machine's own false-difference check.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub aa: bool,
    /// The server's own statistics read around each measured window: `off`, `basic`
    /// (the default: global counters, read outside the window) or `full` (also what the
    /// server counts only when asked). See `bakeoff_sandbox::stats`.
    #[serde(default)]
    pub server_stats: bakeoff_sandbox::stats::StatsLevel,
}

/// `[plan] cpus`: CPU lists for the server and the load.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Cpus {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load: Option<String>,
}

pub use bakeoff_stats::Pairing;

impl Default for Plan {
    fn default() -> Self {
        Plan {
            repetitions: None,
            budget: None,
            precision: None,
            equivalence: None,
            pairing: Pairing::Auto,
            warmup: None,
            duration: None,
            ops: None,
            seed: default_seed(),
            baseline: None,
            min_repetitions: None,
            mode: Mode::Time,
            layouts: 1,
            cpus: None,
            sandbox_dir: None,
            aa: false,
            server_stats: Default::default(),
        }
    }
}

fn yes() -> bool {
    true
}
fn default_interval() -> String {
    "1s".to_string()
}
fn one() -> usize {
    1
}
fn is_one(n: &usize) -> bool {
    *n == 1
}
fn default_seed() -> u64 {
    42
}

/// A duration as the file may write it: `"10s"`, `"500ms"`, or a bare number of seconds
/// (`10`, `0.5`); kept as text and parsed by `parse_duration` at validation, where a bad
/// one is reported at its key.
fn duration_text<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    struct Text;
    impl serde::de::Visitor<'_> for Text {
        type Value = String;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a duration such as \"10s\" or \"500ms\", or a number of seconds")
        }
        fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<String, E> {
            Ok(v.to_string())
        }
        fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<String, E> {
            Ok(v.to_string())
        }
        fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<String, E> {
            Ok(v.to_string())
        }
        fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<String, E> {
            Ok(v.to_string())
        }
    }
    d.deserialize_any(Text).map(Some)
}

/// `[tune]`'s defaults, filled in from the rest of the file.
impl crate::Tune {
    /// The space the keys describe, defaults filled in (`compiler`: the first build
    /// variant's, or gcc).
    pub fn space(&self, e: &Experiment) -> Space {
        let d = Space::default();
        let compiler = e
            .variants
            .iter()
            .find(|v| v.is_build())
            .map(|v| v.compiler_or_default().to_string())
            .unwrap_or_else(|| "gcc".into());
        Space {
            compiler: self.compiler.clone().unwrap_or_else(|| vec![compiler]),
            opt: self.opt.clone().unwrap_or(d.opt),
            march: self.march.clone().unwrap_or(d.march),
            lto: self
                .lto
                .as_ref()
                .map(|l| l.iter().filter_map(|s| Lto::parse(s)).collect())
                .unwrap_or(d.lto),
            pgo: self.pgo.clone().unwrap_or(d.pgo),
            bolt: self.bolt.clone().unwrap_or(d.bolt),
            flags: self.flags.clone().unwrap_or(d.flags),
            train: self.train.clone(),
        }
    }

    /// The variant to beat.
    pub fn baseline<'a>(&'a self, e: &'a Experiment) -> &'a str {
        self.baseline.as_deref().unwrap_or_else(|| e.baseline())
    }
}
