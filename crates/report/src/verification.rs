//! Result verification, as tables every exporter shows: per variant whether its results
//! matched the baseline's (and, where not, the query, both hashes and the first differing
//! rows).

use crate::model::Results;
use crate::table::{Table, Value};

/// The verification table: one row per variant.
pub fn verification_table(r: &Results) -> Table {
    // The count of queries treated as equal only in a canonical form, where any was.
    let explained = r.verification.iter().any(|v| !v.explained.is_empty());
    let mut t = if explained {
        Table::new(
            "verify",
            &[
                "variant",
                "results",
                "queries#",
                "differences#",
                "explained#",
                "note",
            ],
        )
    } else {
        Table::new(
            "verify",
            &["variant", "results", "queries#", "differences#", "note"],
        )
    };
    for v in &r.verification {
        let mut row = vec![
            Value::Variant(v.variant.clone()),
            v.status.clone().into(),
            v.queries.to_string().into(),
            v.differences.len().to_string().into(),
        ];
        if explained {
            row.push(v.explained.len().to_string().into());
        }
        row.push(Value::Long(v.note.clone().unwrap_or_default()));
        t.push(row);
    }
    t
}

/// A query as the first line of its entry: `line N: ` before it where the query set
/// gives a line.
fn query_line(line: usize, query: &str) -> String {
    if line > 0 {
        format!("line {line}: {query}")
    } else {
        query.to_string()
    }
}

/// One difference, as lines of text (query, hashes, rows on each side).
pub fn difference_lines(d: &crate::model::DifferenceRecord) -> Vec<String> {
    let mut out = vec![query_line(d.line, &d.query)];
    out.push(format!("hash {} (baseline {})", d.hash, d.baseline_hash));
    if let Some(why) = &d.reason {
        out.push(format!("why: {why}"));
    }
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

/// One query treated as equal in a canonical form, as lines of text (query, reason, the
/// rows as each side sent them).
pub fn explained_lines(x: &crate::model::ExplainedRecord) -> Vec<String> {
    let mut out = vec![query_line(x.line, &x.query)];
    out.push(format!("treated as equal: {}", x.reason));
    if !x.rows.is_empty() {
        out.push("rows as this variant sent them:".into());
        out.extend(x.rows.iter().map(|r| format!("  {r}")));
    }
    if !x.baseline_rows.is_empty() {
        out.push("rows as the baseline sent them:".into());
        out.extend(x.baseline_rows.iter().map(|r| format!("  {r}")));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{DifferenceRecord, ExplainedRecord, VerificationRecord};

    #[test]
    fn explained_queries_are_counted_and_shown_with_their_reason() {
        let mut r = crate::tests::sample();
        r.verification = vec![VerificationRecord {
            variant: "my80".into(),
            status: "same".into(),
            queries: 3,
            cross_kind: true,
            explained: vec![ExplainedRecord {
                query: "SELECT k, COUNT(*) FROM t GROUP BY k".into(),
                line: 2,
                rows: vec!["2 | 5".into()],
                baseline_rows: vec!["1 | 2".into()],
                reason: "rows compared as a set: the query has no ORDER BY".into(),
            }],
            ..VerificationRecord::default()
        }];
        let t = verification_table(&r).plain();
        assert!(t.contains(" explained "), "{t}");
        let lines = explained_lines(&r.verification[0].explained[0]);
        assert_eq!(lines[0], "line 2: SELECT k, COUNT(*) FROM t GROUP BY k");
        assert_eq!(
            lines[1],
            "treated as equal: rows compared as a set: the query has no ORDER BY"
        );
        assert_eq!(
            lines[2..],
            [
                "rows as this variant sent them:",
                "  2 | 5",
                "rows as the baseline sent them:",
                "  1 | 2"
            ]
        );
        // Without any, the table is the one it always was.
        r.verification[0].explained.clear();
        assert!(!verification_table(&r).plain().contains("explained"));
        let d = DifferenceRecord {
            query: "SELECT 1".into(),
            reason: Some("the rows differ".into()),
            ..DifferenceRecord::default()
        };
        assert!(difference_lines(&d).contains(&"why: the rows differ".to_string()));
    }
}
