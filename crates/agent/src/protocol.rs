//! What bakeoff and an agent say to each other: one JSON object per line, requests on
//! the agent's stdin, replies (and, during a load, events) on its stdout. The agent runs
//! only what a request names; nothing in a request reaches a shell.

use bakeoff_engine::{Measure, Phases, RunRecord};
use bakeoff_plan::TargetKind;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

/// The protocol's version: an agent of another version is copied again.
pub const VERSION: u32 = 3;

/// One request.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Request {
    /// The agent's version and its host's facts.
    Hello,
    /// The agent's clock (Unix time in ms), to measure the offset to this machine's.
    Clock,
    /// Whether a file with this sha256 is in the agent's store; its path there if so.
    Have { sha256: String, name: String },
    /// A file for the store, checked against its sha256 on arrival; its path there.
    Put {
        sha256: String,
        name: String,
        /// The bytes, base64.
        data: String,
    },
    /// Unpacks a stored tar (a SQL server's install tree) beside it, once; replies the
    /// tree's path there.
    Unpack { sha256: String, name: String },
    /// Whether an installed program exists there (a `binary =` variant): its path, size
    /// and sha256 there ([`Installed`]).
    Which { program: String },
    /// Fetches a source and builds it there (`[target] build_on = "host"`); replies
    /// [`BuiltThere`].
    Build {
        source: bakeoff_build::SourceSpec,
        spec: bakeoff_build::BuildSpec,
    },
    /// Makes or reads a SQL data directory under the agent's data root.
    Data(DataOp),
    /// Starts a server in a sandbox of the agent's; replies its id and address.
    Start(ServerSpec),
    /// A server's CPU and memory now.
    Usage { id: u64 },
    /// Starts the /proc sampler there, watching server `id`, every `interval_ms`.
    SamplerStart { id: u64, interval_ms: u64 },
    /// Stops it; replies its samples and summary, and who else ran on the host
    /// ([`Sampled`]).
    SamplerStop,
    /// Which perf stat events count on this host ([`bakeoff_probe::perfstat::Support`]).
    PerfSupport,
    /// Attaches perf stat (`events`, when any) and perf record (`profile`) to server
    /// `id`'s processes, for the measured window.
    ProbesStart {
        id: u64,
        events: Vec<String>,
        profile: bool,
        /// Turn callgrind's counting on (off again at `ProbesStop`).
        #[serde(default)]
        instrument: bool,
    },
    /// Stops them; replies [`Probed`] (the profile analyzed there, against the server's
    /// binary there).
    ProbesStop,
    /// Stops a server; replies how it ended and its logs.
    Stop { id: u64 },
    /// Runs a load against a server (anywhere) and replies its record.
    Load(LoadSpec),
    /// Stops the load under way (handled as soon as it arrives).
    Cancel,
    /// The host's machine facts ([`bakeoff_probe::machine::Machine`]), its disk and
    /// filesystem those of the folder the agent keeps its sandboxes in.
    Machine,
}

/// What a SQL target's prepared data needs done on the server's host. Every `dir` is
/// relative to the agent's data root (which goes away when the agent does); the agent
/// refuses one that is absolute or climbs out with `..`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "data", rename_all = "snake_case")]
pub enum DataOp {
    /// A pristine data directory with bakeoff's login (initdb, mariadb-install-db).
    Init {
        kind: TargetKind,
        binary: String,
        dir: String,
    },
    /// `cp -a` of a directory, owner and modes kept; replies nothing.
    Copy { from: String, to: String },
    /// A directory's size in bytes.
    Bytes { dir: String },
    /// What files the binary reads and writes (`Target::data_format`): variants with the
    /// same one share a load.
    Format {
        kind: TargetKind,
        binary: String,
        options: BTreeMap<String, String>,
        configure_args: Vec<String>,
    },
    /// Removes a directory.
    Remove { dir: String },
}

/// A server to start there.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ServerSpec {
    pub name: String,
    pub kind: TargetKind,
    /// A path in the agent's store, or an installed program.
    pub binary: String,
    pub args: Vec<String>,
    pub options: BTreeMap<String, String>,
    pub env: Vec<(String, String)>,
    pub listen: IpAddr,
    pub ready_timeout_ms: u64,
    pub stop_grace_ms: u64,
    /// A SQL server's data, its path relative to the agent's data root.
    #[serde(default)]
    pub data: Option<bakeoff_sandbox::DataSource>,
    /// A command the server runs under (valgrind's memcheck for a checked variant).
    #[serde(default)]
    pub wrapper: Vec<String>,
    /// Run it under callgrind (instructions mode), its files in a dir of the agent's.
    #[serde(default)]
    pub callgrind: bool,
}

/// An installed program there.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Installed {
    pub path: String,
    pub bytes: u64,
    pub sha256: String,
}

/// The /proc sampler's readings over a window there (`SamplerStop`), and who else ran
/// on that host meanwhile: its other processes' CPU, so that a busy server host makes
/// the run machine-busy as a busy machine here does.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Sampled {
    pub samples: Vec<bakeoff_probe::sampler::Sample>,
    pub summary: bakeoff_probe::sampler::Summary,
    #[serde(default)]
    pub others: Option<bakeoff_probe::others::Window>,
}

/// What perf stat and perf record found over a window there; each absent when not
/// asked, an error when perf failed.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Probed {
    pub counts: Option<Result<bakeoff_probe::perfstat::Counts, String>>,
    pub profile: Option<Result<bakeoff_probe::profile::Profile, String>>,
    /// Turning callgrind's counting on or off failed.
    #[serde(default)]
    pub instrument_error: Option<String>,
}

/// A build made there: what it produced (paths are the host's), its log's tail and the
/// source as the host fetched it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BuiltThere {
    pub info: bakeoff_build::BuildInfo,
    pub log: String,
    pub source: String,
    /// The fetched tree's identity (the hash of its content).
    #[serde(default)]
    pub source_id: String,
}

/// A server started there.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Started {
    pub id: u64,
    pub addr: SocketAddr,
    /// A SQL server's login (from its data directory).
    #[serde(default)]
    pub login: Option<bakeoff_sandbox::Login>,
}

/// How a server ended, and its logs (the tail of each, at most [`LOG_TAIL`] bytes).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Stopped {
    /// Why it was no longer running before the stop, if it was not.
    pub died: Option<String>,
    pub stdout: String,
    pub stderr: String,
    /// Under callgrind: its callgrind.out files (name, text), written when it stopped.
    #[serde(default)]
    pub callgrind: Vec<(String, String)>,
}

/// How much of a server log comes back.
pub const LOG_TAIL: usize = 256 * 1024;

/// A load to run there.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LoadSpec {
    /// The workload as `Workload::agent_spec` describes it.
    pub workload: serde_json::Value,
    pub target: TargetKind,
    pub server: SocketAddr,
    pub connections: usize,
    pub warmup_ms: u64,
    /// The measured window: milliseconds, or a count of operations.
    pub measure_ms: Option<u64>,
    pub measure_ops: Option<u64>,
    pub seed: u64,
    /// Only set every key, as the run's preload would (one host does it for all).
    pub preload_only: bool,
    /// When to start, on the agent's clock (Unix ms); now when absent.
    pub start_at_ms: Option<f64>,
    /// Send `measure_started` and `measure_ended` events at the window's edges.
    pub events: bool,
    /// The host's /proc sampler interval over the measured window.
    pub interval_ms: u64,
    /// A SQL server's login (the SQL load logs in with it).
    #[serde(default)]
    pub login: Option<bakeoff_sandbox::Login>,
    /// The variant's storage engine (MariaDB's ENGINE), for the SQL load's statements.
    #[serde(default)]
    pub engine: Option<String>,
    /// Whether the server runs on this host too: then the load takes half its CPUs for
    /// its default client threads, else all of them.
    #[serde(default)]
    pub beside_server: bool,
}

impl LoadSpec {
    pub fn phases(&self) -> Phases {
        Phases {
            warmup: Duration::from_millis(self.warmup_ms),
            measure: match (self.measure_ms, self.measure_ops) {
                (_, Some(n)) => Measure::Ops(n),
                (ms, None) => Measure::Duration(Duration::from_millis(ms.unwrap_or(1000))),
            },
        }
    }

    /// `phases` as the spec carries them.
    pub fn set_phases(&mut self, p: &Phases) {
        self.warmup_ms = p.warmup.as_millis() as u64;
        match p.measure {
            Measure::Duration(d) => self.measure_ms = Some(d.as_millis() as u64),
            Measure::Ops(n) => self.measure_ops = Some(n),
        }
    }
}

/// A load's record, with what serde leaves out of it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Loaded {
    pub rec: RunRecord,
    pub hdr_log: String,
    /// The load host's CPU over the window.
    pub system: Option<bakeoff_probe::sampler::Summary>,
    /// And interval by interval.
    #[serde(default)]
    pub samples: Vec<bakeoff_probe::sampler::Sample>,
    /// The run-record fields the workload itself set (Redis's INFO memory), as JSON.
    #[serde(default)]
    pub extra: serde_json::Map<String, serde_json::Value>,
}

/// The fields of a run record that `extra` set, as a JSON object (what a workload adds to
/// its runs, carried from an agent).
pub fn extra_fields(
    extra: Box<dyn FnOnce(&mut bakeoff_report::model::Run) + Send>,
) -> serde_json::Map<String, serde_json::Value> {
    use bakeoff_report::model::Run;
    let mut run = Run::default();
    extra(&mut run);
    let (Ok(serde_json::Value::Object(got)), Ok(serde_json::Value::Object(base))) = (
        serde_json::to_value(&run),
        serde_json::to_value(Run::default()),
    ) else {
        return serde_json::Map::new();
    };
    got.into_iter()
        .filter(|(k, v)| base.get(k) != Some(v))
        .collect()
}

/// Sets `fields` on `run` (what [`extra_fields`] carried).
pub fn apply_fields(
    run: &mut bakeoff_report::model::Run,
    fields: serde_json::Map<String, serde_json::Value>,
) {
    if fields.is_empty() {
        return;
    }
    if let Ok(serde_json::Value::Object(mut all)) = serde_json::to_value(&*run) {
        all.extend(fields);
        if let Ok(r) = serde_json::from_value(serde_json::Value::Object(all)) {
            *run = r;
        }
    }
}

/// The agent and its host.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Hello {
    pub version: u32,
    pub pid: u32,
}

/// One line from the agent.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reply {
    Ok(serde_json::Value),
    Err(String),
    Event(Event),
}

/// What happens during a load, as it happens.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "snake_case")]
pub enum Event {
    MeasureStarted,
    MeasureEnded,
    /// Twice a second: the phase (`Phase as u8`) and the measured operations so far.
    Progress {
        phase: u8,
        ops: u64,
    },
}

/// This machine's clock, Unix ms.
pub fn now_ms() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64() * 1000.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use bakeoff_report::model::{MemoryRecord, Run};

    #[test]
    fn what_a_workload_adds_to_a_run_travels_and_lands() {
        let fields = extra_fields(Box::new(|r: &mut Run| {
            r.memory = Some(MemoryRecord {
                used_memory: 1234,
                ..MemoryRecord::default()
            });
        }));
        // Only what the workload set travels.
        assert_eq!(fields.keys().collect::<Vec<_>>(), ["memory"]);
        let mut run = Run {
            ops: 7,
            ..Run::default()
        };
        apply_fields(&mut run, fields);
        assert_eq!(run.memory.unwrap().used_memory, 1234);
        assert_eq!(run.ops, 7);
    }

    #[test]
    fn requests_read_back_as_sent() {
        let line = serde_json::to_string(&Request::Usage { id: 3 }).unwrap();
        assert_eq!(line, r#"{"op":"usage","id":3}"#);
        let back: Request = serde_json::from_str(&line).unwrap();
        assert!(matches!(back, Request::Usage { id: 3 }));
        let reply =
            serde_json::to_string(&Reply::Event(Event::Progress { phase: 3, ops: 9 })).unwrap();
        assert_eq!(reply, r#"{"event":{"progress":{"phase":3,"ops":9}}}"#);
    }
}
