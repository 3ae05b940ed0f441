//! A benchstat-compatible text export (skeleton: to be filled in).

use crate::model::Results;

/// Go benchmark format, one line per run.
pub fn render(_r: &Results) -> String {
    String::new()
}
