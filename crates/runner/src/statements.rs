//! What the servers' statement digests say changed (`[plan] server_stats`; each run's
//! `statements` from pg_stat_statements or performance_schema): per cell each statement
//! per call and per operation (median and range over the valid runs), and per throughput
//! comparison the statements both sides ran, matched by normalised text ([`normalize`]:
//! PostgreSQL's `$1` and MySQL's `?`, quoting, case and spacing alike), each with its
//! time per call on both sides, the ratio, and whether it moved beyond the noise (the
//! runs do not overlap, the ratio is beyond the counters' floor, the rounds' interval
//! excludes 1). So "point select got 30% slower while commit did not move" is one line.
//! Texts are the servers' own; nothing here knows a target.

use std::collections::BTreeMap;

use bakeoff_report::model::{Cell, Results, Run, StatementCell, StatementChange};
use bakeoff_stats as stats;

use crate::server_changes::{ops_in_span, paired_round_interval, FLOOR, FLOOR_FEW_RUNS};

/// A statement called at most this often per operation is left out of a cell (a
/// connection's own setup, bakeoff's reads).
pub const MIN_CALLS_PER_OP: f64 = 0.001;
/// The most statements kept per cell and per comparison.
pub const TOP: usize = 10;

/// The text statements are matched by across variants and versions: lower case,
/// identifiers unquoted, every placeholder (`$1`, `?`) as `?`, a list of them as one,
/// spaces only between words, no trailing semicolon.
pub fn normalize(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut space = false;
    while let Some(c) = chars.next() {
        match c {
            '`' | '"' => {}
            '$' if chars.peek().is_some_and(char::is_ascii_digit) => {
                while chars.peek().is_some_and(char::is_ascii_digit) {
                    chars.next();
                }
                push(&mut out, '?', &mut space);
            }
            c if c.is_whitespace() || c.is_control() => space = !out.is_empty(),
            c => push(&mut out, c.to_ascii_lowercase(), &mut space),
        }
    }
    let mut s = out.trim_end_matches(';').to_string();
    // A list of placeholders, however the server wrote it, is one.
    for list in ["(...)", "(?,...)"] {
        s = s.replace(list, "(?)");
    }
    while s.contains("?,?") {
        s = s.replace("?,?", "?");
    }
    s
}

/// Pushes `c`, with the pending space kept only between two word characters.
fn push(out: &mut String, c: char, space: &mut bool) {
    let word = |c: char| c.is_alphanumeric() || c == '_' || c == '?';
    if *space && out.chars().last().is_some_and(word) && word(c) {
        out.push(' ');
    }
    *space = false;
    out.push(c);
}

/// Whether a run's statements were read (valid, measured on the clock).
fn read(run: &Run) -> bool {
    run.valid && !run.instruction_run && run.ops > 0 && !run.server_statements.is_empty()
}

/// One run's statements by normalised text: (server's text, calls, total microseconds).
fn by_key(run: &Run) -> BTreeMap<String, (String, f64, f64)> {
    let mut out: BTreeMap<String, (String, f64, f64)> = BTreeMap::new();
    for s in &run.server_statements {
        let e = out
            .entry(normalize(&s.text))
            .or_insert_with(|| (s.text.clone(), 0.0, 0.0));
        e.1 += s.calls as f64;
        e.2 += s.calls as f64 * s.mean_us;
    }
    out
}

/// Each cell's `statements`.
pub fn summarize_cells(r: &mut Results) {
    for c in &mut r.cells {
        c.server_statements = cell_statements(c);
    }
}

fn cell_statements(c: &Cell) -> Vec<StatementCell> {
    // key -> (text, [(mean_us, calls per op)])
    let mut all: BTreeMap<String, (String, Vec<(f64, f64)>)> = BTreeMap::new();
    for run in c.runs.iter().filter(|x| read(x)) {
        let ops = ops_in_span(run);
        for (key, (text, calls, total)) in by_key(run) {
            let e = all.entry(key).or_insert_with(|| (text, Vec::new()));
            e.1.push((total / calls, calls / ops));
        }
    }
    let mut out: Vec<StatementCell> = all
        .into_iter()
        .filter_map(|(key, (text, xs))| {
            let means: Vec<f64> = xs.iter().map(|x| x.0).collect();
            let per_op: Vec<f64> = xs.iter().map(|x| x.1).collect();
            let m = stats::summarize(&means)?;
            let p = stats::summarize(&per_op)?;
            (p.median > MIN_CALLS_PER_OP).then(|| StatementCell {
                text,
                key,
                mean_us: m.median,
                range: [
                    means.iter().copied().fold(f64::INFINITY, f64::min),
                    means.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                ],
                calls_per_op: p.median,
                runs: xs.len(),
            })
        })
        .collect();
    out.sort_by(|a, b| {
        (b.mean_us * b.calls_per_op)
            .total_cmp(&(a.mean_us * a.calls_per_op))
            .then_with(|| a.key.cmp(&b.key))
    });
    out.truncate(TOP * 2);
    out
}

/// Each throughput comparison's `statement_changes` (cells summarized first).
pub fn compare(r: &mut Results) {
    let index = bakeoff_report::index::Index::new(r);
    let found: Vec<Vec<StatementChange>> = r
        .comparisons
        .iter()
        .map(|k| {
            if k.is_instructions() || k.is_capacity() {
                return Vec::new();
            }
            let cell = |v: &str| index.cell(&k.workload, v, k.connections);
            match (cell(&k.baseline), cell(&k.variant)) {
                (Some(b), Some(c)) => changes(b, c),
                _ => Vec::new(),
            }
        })
        .collect();
    for (k, ch) in r.comparisons.iter_mut().zip(found) {
        k.statement_changes = ch;
    }
}

/// The statements both cells ran, the baseline's most time per operation first.
fn changes(b: &Cell, c: &Cell) -> Vec<StatementChange> {
    let few = b
        .runs
        .iter()
        .filter(|x| read(x))
        .count()
        .min(c.runs.iter().filter(|x| read(x)).count())
        < 3;
    let floor = if few { FLOOR_FEW_RUNS } else { FLOOR };
    let mut out: Vec<StatementChange> = b
        .server_statements
        .iter()
        .filter_map(|x| {
            let y = c.server_statements.iter().find(|y| y.key == x.key)?;
            if x.mean_us <= 0.0 || y.mean_us <= 0.0 {
                return None;
            }
            let ratio = y.mean_us / x.mean_us;
            let ci95 = round_interval(b, c, &x.key);
            let apart = x.range[1] < y.range[0] || y.range[1] < x.range[0];
            let moved = apart
                && ratio.ln().abs() >= (1.0 + floor).ln()
                && !ci95.is_some_and(|[lo, hi]| lo <= 1.0 && hi >= 1.0);
            Some(StatementChange {
                text: x.text.clone(),
                base_mean_us: x.mean_us,
                other_mean_us: y.mean_us,
                ratio,
                ci95,
                base_calls_per_op: x.calls_per_op,
                other_calls_per_op: y.calls_per_op,
                moved,
            })
        })
        .collect();
    out.truncate(TOP);
    out
}

/// The 95% interval of the per-round ratios of the statement's mean time per call
/// (rounds where both sides read it), from 3 rounds on.
fn round_interval(b: &Cell, c: &Cell, key: &str) -> Option<[f64; 2]> {
    let side = |cell: &Cell| -> BTreeMap<usize, f64> {
        cell.runs
            .iter()
            .filter(|x| read(x))
            .filter_map(|x| {
                let (_, calls, total) = by_key(x).remove(key)?;
                Some((x.round, total / calls))
            })
            .collect()
    };
    paired_round_interval(&side(b), &side(c))
}

#[cfg(test)]
mod tests {
    use super::*;
    use bakeoff_report::model::{ComparisonRecord, StatementRecord};

    #[test]
    fn one_statement_from_two_servers_normalizes_alike() {
        let pg = normalize("SELECT c FROM sbtest1 WHERE id=$1");
        let my = normalize("SELECT `c` FROM `sbtest1` WHERE `id` = ? ");
        assert_eq!(pg, my);
        assert_eq!(pg, "select c from sbtest1 where id=?");
        assert_eq!(normalize("COMMIT;"), "commit");
        assert_eq!(
            normalize("SELECT * FROM t WHERE id IN ($1, $2, $3)"),
            normalize("SELECT * FROM `t` WHERE `id` IN (...)")
        );
        assert_eq!(
            normalize("select  x\n\tfrom \"T\""),
            normalize("SELECT x FROM t")
        );
        // Words stay apart; a control character is a space.
        assert_eq!(normalize("SELECT\u{1b}[31m a"), "select[31m a");
    }

    fn run(round: usize, ops: u64, st: &[(&str, u64, f64)]) -> Run {
        Run {
            round,
            ops,
            valid: true,
            server_statements: st
                .iter()
                .map(|(t, calls, mean_us)| StatementRecord {
                    digest: format!("d-{t}"),
                    text: t.to_string(),
                    calls: *calls,
                    mean_us: *mean_us,
                })
                .collect(),
            ..Run::default()
        }
    }

    /// Four rounds: the point select 30% slower on the other side, commit the same
    /// within 1%; the other server spells them its own way.
    fn results() -> Results {
        // Round i's statements are `st(j)`, j growing 1% a round.
        let four_rounds = |ops: u64, st: &dyn Fn(f64) -> Vec<(&'static str, u64, f64)>| {
            (0..4)
                .map(|i| run(i, ops, &st(1.0 + 0.01 * i as f64)))
                .collect::<Vec<Run>>()
        };
        let base = four_rounds(1000, &|j| {
            vec![
                ("SELECT c FROM sbtest1 WHERE id=$1", 1000, 10.0 * j),
                ("COMMIT", 1000, 5.0 * j),
                ("SET x = $1", 1, 3.0),
            ]
        });
        let other = four_rounds(900, &|j| {
            vec![
                ("SELECT `c` FROM `sbtest1` WHERE `id` = ?", 900, 13.0 * j),
                ("COMMIT ", 900, 5.02 * j),
            ]
        });
        let mut r = Results {
            cells: vec![
                Cell::new("w", "base", 1, base),
                Cell::new("w", "other", 1, other),
            ],
            comparisons: vec![ComparisonRecord {
                workload: "w".into(),
                connections: 1,
                variant: "other".into(),
                baseline: "base".into(),
                ..ComparisonRecord::default()
            }],
            ..Results::default()
        };
        summarize_cells(&mut r);
        compare(&mut r);
        r
    }

    #[test]
    fn the_select_moved_and_the_commit_did_not() {
        let r = results();
        let base = &r.cells[0].server_statements;
        assert_eq!(base.len(), 2, "the rare SET is left out: {base:?}");
        assert_eq!(base[0].text, "SELECT c FROM sbtest1 WHERE id=$1");
        assert!((base[0].calls_per_op - 1.0).abs() < 1e-9);
        let ch = &r.comparisons[0].statement_changes;
        assert_eq!(ch.len(), 2, "{ch:?}");
        assert!((ch[0].ratio - 1.3).abs() < 1e-9, "{ch:?}");
        assert!(ch[0].moved, "{ch:?}");
        let [lo, hi] = ch[0].ci95.unwrap();
        assert!(lo > 1.0 && hi < 1.4, "{lo} {hi}");
        assert_eq!(ch[1].text, "COMMIT");
        assert!(!ch[1].moved, "{ch:?}");
    }

    #[test]
    fn invalid_runs_and_runs_without_digests_count_nothing() {
        let mut r = results();
        for x in &mut r.cells[1].runs {
            x.valid = false;
        }
        summarize_cells(&mut r);
        compare(&mut r);
        assert!(r.cells[1].server_statements.is_empty());
        assert!(r.comparisons[0].statement_changes.is_empty());
    }
}
