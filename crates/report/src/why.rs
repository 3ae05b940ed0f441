//! "Why, from the servers' side": per comparison, the server counters that moved most
//! per operation (`comparisons[].server_changes`, `[plan] server_stats`), largest first,
//! with each side's figure per operation and the ratio (and its interval from the rounds
//! where there is one). The terminal gets one line per faster or slower comparison
//! naming the largest change. Counter names are the servers' own, shown as code through
//! the same rendering as every name; nothing here knows a target.

use crate::document::{Block, Inline, Media, Section};
use crate::model::{ComparisonRecord, Results, ServerChange, StatementChange, Verdict};
use crate::table::{Table, Value};

/// The section, when some comparison has server changes or some run read statistics
/// that were unavailable.
pub fn section(r: &Results) -> Option<Section> {
    let with: Vec<&ComparisonRecord> = r
        .comparisons
        .iter()
        .filter(|k| !k.server_changes.is_empty() || !k.statement_changes.is_empty())
        .collect();
    let statements = with.iter().any(|k| !k.statement_changes.is_empty());
    let read_any = r
        .cells
        .iter()
        .any(|c| c.runs.iter().any(|x| !x.server_stats.is_empty()));
    let unavailable = unavailable(r);
    if with.is_empty() && unavailable.is_empty() {
        return None;
    }
    let mut s = Section::new("why", "Why (server)", "Why, from the servers' side");
    s.push(Block::caption(
        "The servers' own counters (PostgreSQL: pg_stat_database, pg_stat_bgwriter, pg_stat_wal; MariaDB and MySQL: SHOW GLOBAL STATUS; Redis and Valkey: INFO stats and commandstats; memcached: stats), read just before and after each measured window and divided by the run's operations: per comparison the counters that moved most per operation, beyond the runs' spread, 5% (25% with fewer than 3 runs a side) and twice the A/A check's own movement. A counter whose rate per second did not move follows the clock (a background thread, time spent), not the work: it mirrors the throughput and is listed last.",
    ));
    if statements {
        s.push(Block::caption(
            "The servers' statement digests (PostgreSQL: pg_stat_statements; MariaDB and MySQL: performance_schema), matched across variants by their normalised text: per statement the mean time per call on each side, its ratio, and whether it moved beyond the runs' spread, 5% (25% with fewer than 3 runs a side) and its interval over the rounds; the most time per operation first.",
        ));
    }
    if with.is_empty() && read_any {
        s.push(
            Block::text("No server counter moved beyond the noise in any comparison.").everywhere(),
        );
    }
    for k in &with {
        s.push(Block::Heading(Inline::from(title(k))).only(Media::PAGE));
        if !k.server_changes.is_empty() {
            s.push(Block::Table(table(k)).only(Media::PAGE));
        }
        let decided = matches!(k.verdict, Verdict::Faster | Verdict::Slower);
        if decided && !k.server_changes.is_empty() {
            s.push(Block::text(terminal_line(k)).only(Media::TERMINAL));
        }
        if !k.statement_changes.is_empty() {
            s.push(Block::Table(statement_table(k)).only(Media::PAGE));
            s.push(Block::text(statement_line(k)).only(Media::PAGE));
            if decided && k.statement_changes.iter().any(|c| c.moved) {
                s.push(Block::text(statement_line(k)).only(Media::TERMINAL));
            }
        }
    }
    if !unavailable.is_empty() {
        s.push(
            Block::caption(format!(
                "Unavailable in some runs: {}.",
                unavailable.join("; ")
            ))
            .only(Media::PAGE),
        );
    }
    Some(s)
}

/// "small against big, ps x2 (slower)".
fn title(k: &ComparisonRecord) -> String {
    format!(
        "{} against {}, {} x{} ({})",
        k.variant,
        k.baseline,
        k.workload,
        k.connections,
        k.verdict.as_str()
    )
}

/// The largest change in one line: "why (server): small against big, ps x2:
/// pg_stat_database.blks_read per op 0.0108 -> 0.561 (x52.0)".
pub fn terminal_line(k: &ComparisonRecord) -> String {
    let c = &k.server_changes[0];
    let paced = if c.paced_by_time {
        " (follows the clock, not the work)"
    } else {
        ""
    };
    format!(
        "why (server): {} against {}, {} x{}: {} per op {} -> {} ({}){paced}",
        k.variant,
        k.baseline,
        k.workload,
        k.connections,
        c.name,
        sig(c.base_per_op),
        sig(c.other_per_op),
        ratio_text(c)
    )
}

fn table(k: &ComparisonRecord) -> Table {
    let base = format!("{} per op", k.baseline);
    let other = format!("{} per op", k.variant);
    let mut t = Table::new("why", &["counter", &base, &other, "ratio", "follows"]);
    for c in &k.server_changes {
        let follows = if c.paced_by_time {
            "the clock"
        } else {
            "the work"
        };
        t.push(vec![
            Value::Code(c.name.clone()),
            sig(c.base_per_op).into(),
            sig(c.other_per_op).into(),
            ratio_text(c).into(),
            follows.into(),
        ]);
    }
    t
}

fn statement_table(k: &ComparisonRecord) -> Table {
    let base = format!("{} us/call", k.baseline);
    let other = format!("{} us/call", k.variant);
    let mut t = Table::new(
        "why-statements",
        &["statement", &base, &other, "ratio", "calls/op", "moved"],
    );
    for c in &k.statement_changes {
        let ratio = match c.ci95 {
            Some([lo, hi]) => format!("x{} [{}, {}]", sig(c.ratio), sig(lo), sig(hi)),
            None => format!("x{}", sig(c.ratio)),
        };
        t.push(vec![
            Value::Code(shown(&c.text)),
            sig(c.base_mean_us).into(),
            sig(c.other_mean_us).into(),
            ratio.into(),
            format!(
                "{} -> {}",
                sig(c.base_calls_per_op),
                sig(c.other_calls_per_op)
            )
            .into(),
            if c.moved { "yes" } else { "no" }.into(),
        ]);
    }
    t
}

/// The statements in one line, those that moved first (largest first), then the one
/// with the most time that did not: "statements (server): small against big, ps x2:
/// `SELECT c FROM sbtest1 WHERE id=$1` 30% slower a call (10.0 -> 13.0 us); `COMMIT`
/// did not move (5.00 -> 5.02 us)".
pub fn statement_line(k: &ComparisonRecord) -> Inline {
    let mut moved: Vec<&StatementChange> = k.statement_changes.iter().filter(|c| c.moved).collect();
    moved.sort_by(|a, b| b.ratio.ln().abs().total_cmp(&a.ratio.ln().abs()));
    moved.truncate(2);
    let steady = k.statement_changes.iter().find(|c| !c.moved);
    let mut line = Inline::new().text(format!(
        "statements (server): {} against {}, {} x{}: ",
        k.variant, k.baseline, k.workload, k.connections
    ));
    for (i, c) in moved.iter().copied().chain(steady).enumerate() {
        if i > 0 {
            line = line.text("; ");
        }
        let how = if !c.moved {
            "did not move".to_string()
        } else if c.ratio >= 1.0 {
            format!("{:.0}% slower a call", (c.ratio - 1.0) * 100.0)
        } else {
            format!("{:.0}% faster a call", (1.0 - c.ratio) * 100.0)
        };
        line = line.code(shown(&c.text)).text(format!(
            " {how} ({} -> {} us)",
            sig(c.base_mean_us),
            sig(c.other_mean_us)
        ));
    }
    line
}

/// A statement's text as shown: its runs of white space as one space, at most
/// [`SHOWN_CHARS`] characters (results.json keeps it whole). Every renderer escapes what
/// is left as it escapes every name.
fn shown(text: &str) -> String {
    let one: Vec<&str> = text.split_whitespace().collect();
    let one = one.join(" ");
    if one.chars().count() <= SHOWN_CHARS {
        return one;
    }
    let cut: String = one.chars().take(SHOWN_CHARS - 3).collect();
    format!("{cut}...")
}

/// The most characters of a statement's text the report shows.
const SHOWN_CHARS: usize = 100;

/// "x52.0 [48.1, 55.3]", "x0.61", or "from 0" when the baseline's is 0.
fn ratio_text(c: &ServerChange) -> String {
    match (c.ratio, c.ci95) {
        (None, _) => "from 0".into(),
        (Some(r), Some([lo, hi])) => format!("x{} [{}, {}]", sig(r), sig(lo), sig(hi)),
        (Some(r), None) => format!("x{}", sig(r)),
    }
}

/// Three significant figures, without an exponent for the sizes counters have.
pub fn sig(v: f64) -> String {
    if !v.is_finite() {
        return "-".into();
    }
    if v == 0.0 {
        return "0".into();
    }
    let digits = (2 - v.abs().log10().floor() as i32).clamp(0, 8) as usize;
    format!("{v:.digits$}")
}

/// "variant: what (why)" for each distinct reason, at most 8.
fn unavailable(r: &Results) -> Vec<String> {
    let mut seen = std::collections::BTreeSet::new();
    for c in &r.cells {
        for x in &c.runs {
            for (what, why) in &x.server_stats_unavailable {
                seen.insert(format!("{}: {what} ({why})", c.variant));
            }
        }
    }
    let n = seen.len();
    let mut out: Vec<String> = seen.into_iter().take(8).collect();
    if n > 8 {
        out.push(format!("and {} more", n - 8));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Cell, Run};

    fn results(name: &str) -> Results {
        let k = ComparisonRecord {
            workload: "ps".into(),
            connections: 2,
            variant: "small".into(),
            baseline: "big".into(),
            verdict: Verdict::Slower,
            server_changes: vec![
                ServerChange {
                    name: name.into(),
                    base_per_op: 0.0108,
                    other_per_op: 0.561,
                    ratio: Some(52.0),
                    ci95: Some([48.0, 55.0]),
                    paced_by_time: false,
                },
                ServerChange {
                    name: "appeared".into(),
                    base_per_op: 0.0,
                    other_per_op: 2.0,
                    ratio: None,
                    ci95: None,
                    paced_by_time: true,
                },
            ],
            ..ComparisonRecord::default()
        };
        let mut run = Run::default();
        run.server_stats_unavailable
            .insert("pg_stat_wal".into(), "relation does not exist".into());
        Results {
            comparisons: vec![k],
            cells: vec![Cell {
                variant: "big".into(),
                runs: vec![run],
                ..Cell::default()
            }],
            ..Results::default()
        }
    }

    #[test]
    fn the_section_leads_with_the_largest_change_and_says_what_was_unavailable() {
        let r = results("pg_stat_database.blks_read");
        let line = terminal_line(&r.comparisons[0]);
        assert_eq!(
            line,
            "why (server): small against big, ps x2: pg_stat_database.blks_read per op 0.0108 -> 0.561 (x52.0 [48.0, 55.0])"
        );
        let s = section(&r).unwrap();
        assert_eq!(s.id, "why");
        let md = format!("{s:?}");
        assert!(md.contains("from 0"), "{md}");
        assert!(md.contains("pg_stat_wal (relation does not exist)"), "{md}");
    }

    #[test]
    fn the_terminal_names_the_largest_change_of_a_slower_comparison() {
        let r = results("pg_stat_database.blks_read");
        let doc = crate::outline::document(&r, &crate::document::NoKinds);
        let text = crate::terminal::render_document(&doc, false);
        let lines: Vec<&str> = text
            .lines()
            .filter(|l| l.starts_with("why (server)"))
            .collect();
        assert_eq!(lines.len(), 1, "{text}");
        assert!(lines[0].contains("pg_stat_database.blks_read"), "{text}");
        let md = crate::markdown::render(&r);
        assert!(md.contains("## Why, from the servers' side"), "{md}");
        assert!(
            md.contains("| `pg_stat_database.blks_read` | 0.0108 | 0.561 |"),
            "{md}"
        );
    }

    #[test]
    fn statements_are_one_line_the_moved_first_and_the_steady_after() {
        let mut r = results("x");
        let k = &mut r.comparisons[0];
        let st = |text: &str, a: f64, b: f64, moved: bool| StatementChange {
            text: text.into(),
            base_mean_us: a,
            other_mean_us: b,
            ratio: b / a,
            ci95: None,
            base_calls_per_op: 1.0,
            other_calls_per_op: 1.0,
            moved,
        };
        k.statement_changes = vec![
            st("COMMIT", 5.0, 5.02, false),
            st("SELECT c\n  FROM sbtest1 WHERE id=$1", 10.0, 13.0, true),
        ];
        k.server_changes.clear();
        let line = statement_line(&r.comparisons[0]).plain();
        assert_eq!(
            line,
            "statements (server): small against big, ps x2: SELECT c FROM sbtest1 WHERE id=$1 30% slower a call (10.0 -> 13.0 us); COMMIT did not move (5.00 -> 5.02 us)"
        );
        let md = crate::markdown::render(&r);
        assert!(
            md.contains("| `SELECT c FROM sbtest1 WHERE id=$1` | 10.0 | 13.0 | x1.30 |"),
            "{md}"
        );
        let doc = crate::outline::document(&r, &crate::document::NoKinds);
        let text = crate::terminal::render_document(&doc, false);
        assert!(text.contains("30% slower a call"), "{text}");
        assert_eq!(shown(&"a ".repeat(80)).chars().count(), SHOWN_CHARS);
    }

    #[test]
    fn no_section_without_changes_or_faults() {
        let mut r = results("x");
        r.comparisons[0].server_changes.clear();
        r.cells.clear();
        assert!(section(&r).is_none());
    }

    #[test]
    fn figures_keep_three_significant_digits() {
        assert_eq!(sig(0.0108), "0.0108");
        assert_eq!(sig(0.561), "0.561");
        assert_eq!(sig(52.0), "52.0");
        assert_eq!(sig(143.98), "144");
        assert_eq!(sig(1234567.0), "1234567");
        assert_eq!(sig(0.0), "0");
        assert_eq!(sig(f64::NAN), "-");
    }
}
