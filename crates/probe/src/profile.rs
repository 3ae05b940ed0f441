//! Hotspots with perf record (skeleton: to be filled in).

use serde::{Deserialize, Serialize};
use std::path::Path;

/// One function's share of the samples.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FnShare {
    pub function: String,
    /// Where the function lives: the binary or library file name, or "[kernel]".
    pub dso: String,
    pub self_pct: f64,
    pub children_pct: f64,
    pub self_samples: u64,
}

/// Where the samples fell: the server's own binary, the kernel, shared libraries.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Split {
    pub server_pct: f64,
    pub kernel_pct: f64,
    pub libraries_pct: f64,
    pub other_pct: f64,
}

/// An analyzed recording.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Profile {
    pub samples: u64,
    /// The perf event sampled (cycles where the CPU counts them, else cpu-clock).
    pub event: String,
    /// Functions by self share, largest first.
    pub top: Vec<FnShare>,
    pub split: Split,
    /// Folded stacks ("a;b;c count" lines), the flamegraph's input.
    #[serde(skip)]
    pub folded: String,
}

/// A running perf record.
pub struct Recording {
    _private: (),
}

impl Recording {
    /// Starts `perf record -g` on `pids` into `data`.
    pub fn start(_pids: &[i32], _data: &Path) -> std::io::Result<Recording> {
        Err(std::io::Error::other("not built yet"))
    }

    /// Stops perf (SIGINT) and waits for it to write the file.
    pub fn stop(self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Reads `data` with `perf script`; `server` is the server binary's path (its file name
/// tells the server's own functions from libraries').
pub fn analyze(_data: &Path, _server: &Path) -> std::io::Result<Profile> {
    Err(std::io::Error::other("not built yet"))
}

/// A flamegraph SVG of `folded` stacks.
pub fn flamegraph(_folded: &str, _title: &str) -> std::io::Result<Vec<u8>> {
    Err(std::io::Error::other("not built yet"))
}

/// One function's cost per operation in two profiles.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FnDelta {
    pub function: String,
    /// Self samples per million operations.
    pub base_per_mop: f64,
    pub other_per_mop: f64,
    /// other / base - 1 (None where the base has no samples).
    pub change: Option<f64>,
}

/// Functions whose cost per operation changed most between `base` (over `base_ops`
/// operations) and `other`, largest absolute change first, at most `limit`.
pub fn diff(_base: &Profile, _base_ops: u64, _other: &Profile, _other_ops: u64, _limit: usize) -> Vec<FnDelta> {
    Vec::new()
}
