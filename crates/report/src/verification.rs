//! Result verification, as tables every exporter shows: per variant whether its results
//! matched the baseline's (and, where not, the query, both hashes and the first differing
//! rows).

use crate::model::Results;
use crate::table::{Table, Value};

/// The verification table: one row per variant.
pub fn verification_table(r: &Results) -> Table {
    let mut t = Table::new(
        "verify",
        &["variant", "results", "queries#", "differences#", "note"],
    );
    for v in &r.verification {
        t.push(vec![
            Value::Variant(v.variant.clone()),
            v.status.clone().into(),
            v.queries.to_string().into(),
            v.differences.len().to_string().into(),
            Value::Long(v.note.clone().unwrap_or_default()),
        ]);
    }
    t
}

/// One difference, as lines of text (query, hashes, rows on each side).
pub fn difference_lines(d: &crate::model::DifferenceRecord) -> Vec<String> {
    let mut out = vec![format!(
        "{}{}",
        if d.line > 0 {
            format!("line {}: ", d.line)
        } else {
            String::new()
        },
        d.query
    )];
    out.push(format!("hash {} (baseline {})", d.hash, d.baseline_hash));
    if let Some(e) = &d.error {
        out.push(format!("error here: {e}"));
    }
    if let Some(e) = &d.baseline_error {
        out.push(format!("error on the baseline: {e}"));
    }
    for row in &d.rows {
        out.push(format!("+ {row}"));
    }
    for row in &d.baseline_rows {
        out.push(format!("- {row}"));
    }
    out
}
