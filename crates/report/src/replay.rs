//! Result verification and query-log replay, as tables every exporter shows: per variant
//! whether its results matched the baseline's (and, where not, the query, both hashes and
//! the first differing rows); per replayed statement class the count, total time and
//! percentiles; the plans (EXPLAIN) of the heaviest classes per variant.

use crate::model::{Cell, Results};
use crate::table::{Table, Value};
use std::fmt::Write;

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

/// report.md: the verification section (only when something was verified).
pub fn verification_markdown(s: &mut String, r: &Results) {
    if r.verification.is_empty() {
        return;
    }
    let _ = writeln!(
        s,
        "## Result verification (against {})\n",
        crate::markup::md_code(&r.plan.baseline)
    );
    s.push_str(&verification_table(r).markdown());
    s.push('\n');
    for v in r.verification.iter().filter(|v| !v.differences.is_empty()) {
        let _ = writeln!(s, "### {}: results differ\n", crate::markup::md(&v.variant));
        for d in v.differences.iter().take(10) {
            let _ = writeln!(
                s,
                "{}\n",
                crate::markup::md_fence("", &difference_lines(d).join("\n"))
            );
        }
        if v.differences.len() > 10 {
            let _ = writeln!(s, "({} more in results.json)\n", v.differences.len() - 10);
        }
    }
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

/// report.md: per replay cell the class table, then each variant's plans.
pub fn replay_markdown(s: &mut String, r: &Results) {
    let cells = replay_cells(r);
    if cells.is_empty() {
        return;
    }
    let _ = writeln!(s, "## Replayed statement classes\n");
    for c in &cells {
        let _ = writeln!(
            s,
            "### {} x{} on {}\n",
            crate::markup::md(&c.workload),
            c.connections,
            crate::markup::md(&c.variant)
        );
        s.push_str(&class_table(c).markdown());
        s.push('\n');
    }
    let mut shown = Vec::new();
    for c in &cells {
        let Some(run) = c.runs.iter().find(|x| !x.explains.is_empty()) else {
            continue;
        };
        let key = (c.workload.clone(), c.variant.clone());
        if shown.contains(&key) {
            continue;
        }
        shown.push(key);
        let _ = writeln!(
            s,
            "### Plans: {} on {}\n",
            crate::markup::md(&c.workload),
            crate::markup::md(&c.variant)
        );
        for e in &run.explains {
            let _ = writeln!(
                s,
                "{}\n\n{}\n",
                crate::markup::md_code(&e.fingerprint),
                crate::markup::md_fence("", e.plan.trim_end())
            );
        }
    }
}
