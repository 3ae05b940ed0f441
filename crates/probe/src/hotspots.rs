//! What an analyzed profile holds: the functions with their shares of the samples, their
//! hottest lines, and where the samples fell. Plain data (serde), read by `profile`, which
//! fills it from `perf script`, and by `hotlines`, which gives the top functions their
//! lines; it uses neither. `profile` re-exports every type.

use serde::{Deserialize, Serialize};

/// One function's share of the samples.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FnShare {
    pub function: String,
    /// Where the function lives: the binary or library file name, or "[kernel]".
    pub dso: String,
    /// Percent of samples in which the function was running (the innermost frame).
    pub self_pct: f64,
    /// Percent of samples in which the function was anywhere on the stack.
    pub children_pct: f64,
    /// Samples in which the function was running.
    pub self_samples: u64,
    /// Its hottest source lines (or instructions, where the binary has no line info),
    /// for the first functions of a profile ([`crate::hotlines`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lines: Vec<HotLine>,
}

/// One source line (or instruction) of a function and its share of the function's own
/// samples.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HotLine {
    /// `file:line` (the file's name without its directory), or the instruction's
    /// address in the binary (`0x4a1b2`) where the binary has no line info.
    pub place: String,
    /// The instruction's disassembly (objdump), for an address; None for a line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instruction: Option<String>,
    pub samples: u64,
    /// Percent of the function's own samples.
    pub pct: f64,
}

/// Where the samples fell: the server's own binary, the kernel, shared libraries.
///
/// By the innermost frame of each sample; percents of all samples.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Split {
    pub server_pct: f64,
    pub kernel_pct: f64,
    pub libraries_pct: f64,
    /// Anything else: unknown code, the vDSO, other executables.
    pub other_pct: f64,
}

/// An analyzed recording.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Profile {
    pub samples: u64,
    /// The perf event sampled (cycles where the CPU counts them, else cpu-clock).
    pub event: String,
    /// Functions by self share, largest first.
    ///
    /// Every function with at least one sample of its own; functions only ever seen as
    /// callers are left out.
    pub top: Vec<FnShare>,
    pub split: Split,
    /// Folded stacks ("a;b;c count" lines), the flamegraph's input (it travels from a
    /// server's host with the rest).
    #[serde(default)]
    pub folded: String,
    /// Milliseconds spent resolving the top functions' hot lines (nm, addr2line,
    /// objdump), on top of perf script.
    #[serde(default)]
    pub lines_ms: u64,
}
