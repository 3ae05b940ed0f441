//! Result verification and query-log replay, as tables every exporter shows: per variant
//! whether its results matched the baseline's (and, where not, the query, both hashes and
//! the first differing rows); per replayed statement class the count, total time and
//! percentiles; the plans (EXPLAIN) of the heaviest classes per variant.

use crate::document::{Block, Inline, Section, Span};
use crate::model::{Cell, Results};
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

/// The replayed workloads' cells (those whose runs carry classes).
pub fn replay_cells(r: &Results) -> Vec<&Cell> {
    r.cells
        .iter()
        .filter(|c| c.runs.iter().any(|x| !x.classes.is_empty()))
        .collect()
}

/// Per class of a cell: the median run's figures (by total time), heaviest first.
pub fn class_table(c: &Cell) -> Table {
    let mut t = Table::new(
        "classes",
        &[
            "class",
            "statement class",
            "count#",
            "total s#",
            "p50 us#",
            "p99 us#",
            "errors#",
        ],
    );
    let valid: Vec<_> = c
        .runs
        .iter()
        .filter(|x| x.valid && !x.classes.is_empty())
        .collect();
    let Some(run) = valid.get(valid.len() / 2).or(valid.first()) else {
        return t;
    };
    for k in run.classes.iter().take(15) {
        let fp: String = k.fingerprint.chars().take(90).collect();
        t.push(vec![
            k.class.chars().take(8).collect::<String>().into(),
            fp.into(),
            k.count.to_string().into(),
            format!("{:.3}", k.total_s).into(),
            format!("{:.0}", k.p50_us).into(),
            format!("{:.0}", k.p99_us).into(),
            k.errors.to_string().into(),
        ]);
    }
    t
}

/// The replay section: per replayed cell its heaviest statement classes, and after the
/// first cell of each workload and variant the plans of those classes.
pub fn section(r: &Results) -> Option<Section> {
    let cells = replay_cells(r);
    if cells.is_empty() {
        return None;
    }
    let mut s = Section::new("replay", "Replay", "Replayed statement classes");
    let mut planned = std::collections::HashSet::new();
    for c in &cells {
        s.push(Block::Heading(
            Inline::new()
                .text(format!("{} ×{} on ", c.workload, c.connections))
                .and(Span::Variant(c.variant.clone())),
        ));
        s.push(Block::Table(class_table(c)));
        let key = (c.workload.as_str(), c.variant.as_str());
        if planned.contains(&key) {
            continue;
        }
        if let Some(run) = c.runs.iter().find(|r| !r.explains.is_empty()) {
            planned.insert(key);
            let mut plans = Vec::new();
            for e in &run.explains {
                plans.push(Block::text(Inline::new().code(e.fingerprint.clone())));
                plans.push(Block::Pre {
                    lang: "",
                    text: e.plan.trim_end().to_string(),
                });
            }
            s.push(Block::Details {
                summary: "Plans of the heaviest classes".into(),
                blocks: plans,
            });
        }
    }
    Some(s)
}
