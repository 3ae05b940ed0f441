//! results.csv (skeleton: to be filled in).

use crate::model::Results;

/// One row per run, flat columns.
pub fn render(_r: &Results) -> String {
    String::new()
}
