//! What the kinds' report sections share: the variants that ran, and a table's columns
//! from their names.

use bakeoff_report::model::Results;
use bakeoff_report::table::Column;

/// The variants that ran, in results order.
pub fn variants(r: &Results) -> Vec<&str> {
    r.variants
        .iter()
        .filter(|v| v.status == "ok")
        .map(|v| v.name.as_str())
        .collect()
}

/// Columns named `names`: those also in `text` hold text, the others figures.
pub fn columns(names: &[&'static str], text: &[&str]) -> Vec<Column> {
    names
        .iter()
        .map(|h| {
            if text.contains(h) {
                Column::text(*h)
            } else {
                Column::figure(*h)
            }
        })
        .collect()
}
