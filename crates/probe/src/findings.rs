//! Memory-error reports in a server's log (skeleton: to be filled in).

use serde::{Deserialize, Serialize};

/// One report: its kind, its first line, and its stack (frames, innermost first).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// e.g. "heap-buffer-overflow", "undefined-behavior", "invalid-read", "leak".
    pub kind: String,
    /// Which checker: "asan", "ubsan", "memcheck".
    pub tool: String,
    pub message: String,
    pub stack: Vec<String>,
}

/// Every AddressSanitizer, UndefinedBehaviorSanitizer and memcheck report in `log`.
pub fn parse(_log: &str) -> Vec<Finding> {
    Vec::new()
}
