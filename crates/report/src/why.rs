//! "Why, from the servers' side": per comparison, the server counters that moved most
//! per operation (`comparisons[].server_changes`, `[plan] server_stats`), largest first,
//! with each side's figure per operation and the ratio (and its interval from the rounds
//! where there is one). The terminal gets one line per faster or slower comparison
//! naming the largest change. Counter names are the servers' own, shown as code through
//! the same rendering as every name; nothing here knows a target.

use crate::document::{Block, Inline, Media, Section};
use crate::model::{ComparisonRecord, Results, ServerChange, Verdict};
use crate::table::{Table, Value};

/// The section, when some comparison has server changes or some run read statistics
/// that were unavailable.
pub fn section(r: &Results) -> Option<Section> {
    let with: Vec<&ComparisonRecord> = r
        .comparisons
        .iter()
        .filter(|k| !k.server_changes.is_empty())
        .collect();
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
    if with.is_empty() && read_any {
        s.push(
            Block::text("No server counter moved beyond the noise in any comparison.").everywhere(),
        );
    }
    for k in &with {
        s.push(Block::Heading(Inline::from(title(k))).only(Media::PAGE));
        s.push(Block::Table(table(k)).only(Media::PAGE));
        if matches!(k.verdict, Verdict::Faster | Verdict::Slower) {
            s.push(Block::text(terminal_line(k)).only(Media::TERMINAL));
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
