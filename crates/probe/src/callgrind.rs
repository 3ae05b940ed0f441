//! Instruction counts with valgrind callgrind (skeleton: to be filled in).

use serde::{Deserialize, Serialize};
use std::path::Path;

/// The command prefix that runs a server under callgrind with instrumentation off at
/// start, writing `out_dir/callgrind.out.%p`.
pub fn command_prefix(_out_dir: &Path) -> Vec<String> {
    Vec::new()
}

/// Turns instrumentation on (measure start) or off and dumps (measure end) for `pid`,
/// with callgrind_control.
pub fn set_instrumentation(_pid: i32, _on: bool) -> std::io::Result<()> {
    Err(std::io::Error::other("not built yet"))
}

/// One function's own instruction count.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FnCount {
    pub function: String,
    pub instructions: u64,
}

/// Totals of the callgrind.out files in a directory.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Counts {
    pub instructions: u64,
    /// Functions by own instructions, largest first.
    pub functions: Vec<FnCount>,
}

/// Reads every callgrind.out.* file in `dir` and sums them.
pub fn read_dir(_dir: &Path) -> std::io::Result<Counts> {
    Err(std::io::Error::other("not built yet"))
}
