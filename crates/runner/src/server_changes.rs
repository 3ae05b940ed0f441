//! What the servers' own counters say changed (`[plan] server_stats`): per cell each
//! counter per operation (median and range over the valid runs), and per throughput
//! comparison the counters that moved most per operation between the two sides
//! (`server_changes`), kept only above the noise: the two sides' runs do not overlap,
//! the per-round ratios' interval (when there are 3 or more rounds) excludes 1, the
//! ratio is beyond [`FLOOR`] ([`FLOOR_FEW_RUNS`] with fewer than 3 runs a side), and beyond twice the A/A's ratio for that counter where
//! the experiment has an A/A check. Names are the servers' own; nothing here knows a
//! target.

use std::collections::{BTreeMap, BTreeSet};

use bakeoff_report::model::{Cell, Results, Run, ServerChange, ServerStatCell};
use bakeoff_stats as stats;

/// A counter below this many events per operation on both sides is not a change worth
/// naming (a checkpoint per run, bakeoff's own reads).
pub const MIN_PER_OP: f64 = 0.01;
/// The smallest relative change named.
pub const FLOOR: f64 = 0.05;
/// The smallest relative change named when a side has fewer than 3 runs (no interval,
/// and a range of one or two runs says little about the spread).
pub const FLOOR_FEW_RUNS: f64 = 0.25;
/// The most changes kept per comparison.
pub const TOP: usize = 10;

/// Whether a run's statistics were read (not off, not unavailable as a whole).
fn read(run: &Run) -> bool {
    run.valid
        && !run.instruction_run
        && run.ops > 0
        && !run.server_stats.is_empty()
        && !run.server_stats_unavailable.contains_key("all")
}

/// The operations the load sent in the span the server's counters cover: its rate
/// over the window times the span from the before-read to the window's end (the
/// window's own operations where the span is unknown).
pub fn ops_in_span(run: &Run) -> f64 {
    match run.server_stats_s {
        Some(s) if s > 0.0 && run.elapsed_s > 0.0 => run.ops as f64 / run.elapsed_s * s,
        _ => run.ops as f64,
    }
}

/// `name` per operation in `run`: 0 where it did not move; None where it was
/// unavailable.
fn per_op(run: &Run, name: &str) -> Option<f64> {
    if unavailable(run, name) {
        return None;
    }
    Some(run.server_stats.get(name).copied().unwrap_or(0.0) / ops_in_span(run))
}

/// Whether `name` was unavailable in `run`: by its own name, or its group's (the part
/// before a dot: `pg_stat_wal` for `pg_stat_wal.wal_bytes`, where the version lacks the
/// view).
fn unavailable(run: &Run, name: &str) -> bool {
    run.server_stats_unavailable
        .keys()
        .any(|k| name == k || (name.starts_with(k.as_str()) && name[k.len()..].starts_with('.')))
}

/// Whether a valid run of `c` could not read `name`: a side that never had it is not a
/// side where it was 0.
fn unreadable(c: &Cell, name: &str) -> bool {
    c.runs.iter().any(|x| read(x) && unavailable(x, name))
}

/// Keeps the counters `run` read as its variant's `server_counters` (record `at`), from
/// its first valid run that read them.
pub fn keep_counters(r: &mut Results, at: usize, run: &mut Run) {
    let names = std::mem::take(&mut run.server_counters_read);
    if let Some(v) = r.variants.get_mut(at) {
        if run.valid && v.server_counters.is_empty() && !names.is_empty() {
            v.server_counters = names;
        }
    }
}

/// Whether the variant `name`'s server is known not to have `counter` (its
/// `server_counters` read, without it or a family `<prefix>.*` that holds it: a
/// sampled family, whose counters exist once seen).
fn lacks(r: &Results, name: &str, counter: &str) -> bool {
    let has = |c: &String| match c.strip_suffix('*') {
        Some(prefix) => prefix.ends_with('.') && counter.starts_with(prefix),
        None => c == counter,
    };
    r.variants.iter().any(|v| {
        v.name == name && !v.server_counters.is_empty() && !v.server_counters.iter().any(has)
    })
}

/// Each cell's `server_stats`.
pub fn summarize_cells(r: &mut Results) {
    for c in &mut r.cells {
        c.server_stats = cell_stats(c);
    }
}

fn cell_stats(c: &Cell) -> BTreeMap<String, ServerStatCell> {
    let runs: Vec<&Run> = c.runs.iter().filter(|x| read(x)).collect();
    let names: BTreeSet<&str> = runs
        .iter()
        .flat_map(|x| x.server_stats.keys().map(String::as_str))
        .collect();
    let mut out = BTreeMap::new();
    for name in names {
        let xs: Vec<f64> = runs.iter().filter_map(|x| per_op(x, name)).collect();
        let Some(s) = stats::summarize(&xs) else {
            continue;
        };
        let lo = xs.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        out.insert(
            name.to_string(),
            ServerStatCell {
                per_op: s.median,
                range: [lo, hi],
                runs: xs.len(),
            },
        );
    }
    out
}

/// Each throughput comparison's `server_changes` (cells summarized first).
pub fn compare(r: &mut Results) {
    let index = bakeoff_report::index::Index::new(r);
    let mut found = Vec::with_capacity(r.comparisons.len());
    for k in &r.comparisons {
        if k.is_instructions() || k.is_capacity() {
            found.push(Vec::new());
            continue;
        }
        let cell = |v: &str| index.cell(&k.workload, v, k.connections);
        let (Some(b), Some(c)) = (cell(&k.baseline), cell(&k.variant)) else {
            found.push(Vec::new());
            continue;
        };
        // The A/A twin's own movement, per counter: the noise floor beside the rounds'.
        let aa = r
            .comparisons
            .iter()
            .find(|a| {
                a.aa && !k.aa
                    && a.workload == k.workload
                    && a.connections == k.connections
                    && !a.is_instructions()
                    && !a.is_capacity()
            })
            .and_then(|a| cell(&a.variant).map(|twin| raw_ratios(b, twin)))
            .unwrap_or_default();
        let mut ch = changes(b, c, &aa);
        ch.retain(|x| !lacks(r, &k.baseline, &x.name) && !lacks(r, &k.variant, &x.name));
        found.push(ch);
    }
    for (k, ch) in r.comparisons.iter_mut().zip(found) {
        k.server_changes = ch;
    }
}

/// |ln ratio| of each counter between two cells (no filtering), for the A/A floor.
fn raw_ratios(b: &Cell, c: &Cell) -> BTreeMap<String, f64> {
    b.server_stats
        .iter()
        .filter_map(|(n, x)| {
            let y = c.server_stats.get(n)?;
            (x.per_op > 0.0 && y.per_op > 0.0)
                .then(|| (n.clone(), (y.per_op / x.per_op).ln().abs()))
        })
        .collect()
}

/// The counters that moved between `b` and `c`, largest first.
fn changes(b: &Cell, c: &Cell, aa: &BTreeMap<String, f64>) -> Vec<ServerChange> {
    if b.server_stats.is_empty() || c.server_stats.is_empty() {
        return Vec::new();
    }
    let zero = ServerStatCell::default();
    let names: BTreeSet<&String> = b.server_stats.keys().chain(c.server_stats.keys()).collect();
    let mut out: Vec<(f64, ServerChange)> = Vec::new();
    for name in names {
        let x = b.server_stats.get(name).unwrap_or(&zero);
        let y = c.server_stats.get(name).unwrap_or(&zero);
        if x.per_op.max(y.per_op) < MIN_PER_OP || unreadable(b, name) || unreadable(c, name) {
            continue;
        }
        // The sides' runs overlap: within the run-to-run spread.
        let (xr, yr) = (side_range(x), side_range(y));
        if xr[0] <= yr[1] && yr[0] <= xr[1] {
            continue;
        }
        let eps = MIN_PER_OP / 10.0;
        let size = ((y.per_op + eps) / (x.per_op + eps)).ln().abs();
        let floor = if runs(b).min(runs(c)) < 3 {
            FLOOR_FEW_RUNS
        } else {
            FLOOR
        };
        if size < (1.0 + floor).ln() {
            continue;
        }
        if aa.get(name).is_some_and(|a| size <= 2.0 * a) {
            continue;
        }
        let ci95 = round_interval(b, c, name);
        if ci95.is_some_and(|[lo, hi]| lo <= 1.0 && hi >= 1.0) {
            continue;
        }
        let paced_by_time = per_second(b, name)
            .zip(per_second(c, name))
            .is_some_and(|(p, q)| p > 0.0 && q > 0.0 && (q / p).ln().abs() < (1.0 + floor).ln());
        // Changes in work per operation first; those that follow the clock after them.
        let rank = if paced_by_time { size - 1e6 } else { size };
        out.push((
            rank,
            ServerChange {
                paced_by_time,
                name: name.clone(),
                base_per_op: x.per_op,
                other_per_op: y.per_op,
                ratio: (x.per_op > 0.0).then(|| y.per_op / x.per_op),
                ci95,
            },
        ));
    }
    out.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.name.cmp(&b.1.name)));
    out.into_iter().take(TOP).map(|(_, ch)| ch).collect()
}

/// The median over `c`'s runs of `name` per second of the span the counters cover.
fn per_second(c: &Cell, name: &str) -> Option<f64> {
    let xs: Vec<f64> = c
        .runs
        .iter()
        .filter(|x| read(x))
        .filter_map(|x| {
            let span = x.server_stats_s.filter(|s| *s > 0.0).unwrap_or(x.elapsed_s);
            (span > 0.0).then(|| x.server_stats.get(name).copied().unwrap_or(0.0) / span)
        })
        .collect();
    stats::summarize(&xs).map(|s| s.median)
}

/// The runs of a cell that read statistics.
fn runs(c: &Cell) -> usize {
    c.server_stats.values().map(|s| s.runs).max().unwrap_or(0)
}

/// A side's per-op range; a side whose runs never moved it is [0, 0].
fn side_range(s: &ServerStatCell) -> [f64; 2] {
    if s.runs == 0 {
        [0.0, 0.0]
    } else {
        s.range
    }
}

/// The 95% interval of the per-round ratios of `name` per op (rounds where both sides
/// read it validly), from 3 rounds on; None with fewer or a zero side.
fn round_interval(b: &Cell, c: &Cell, name: &str) -> Option<[f64; 2]> {
    let side = |cell: &Cell| -> BTreeMap<usize, f64> {
        cell.runs
            .iter()
            .filter(|x| read(x))
            .filter_map(|x| Some((x.round, per_op(x, name)?)))
            .collect()
    };
    paired_round_interval(&side(b), &side(c))
}

/// The 95% interval of the ratios `ys[round] / xs[round]` over the rounds both sides have
/// (a zero `xs` left out), from 3 rounds on. Shared with `statements.rs`.
pub(crate) fn paired_round_interval(
    xs: &BTreeMap<usize, f64>,
    ys: &BTreeMap<usize, f64>,
) -> Option<[f64; 2]> {
    let ratios: Vec<f64> = xs
        .iter()
        .filter_map(|(r, x)| {
            let y = ys.get(r)?;
            (*x > 0.0).then(|| y / x)
        })
        .collect();
    if ratios.len() < 3 {
        return None;
    }
    stats::summarize(&ratios).map(|s| [s.ci95.0, s.ci95.1])
}

#[cfg(test)]
mod tests {
    use super::*;
    use bakeoff_report::model::ComparisonRecord;

    fn run(round: usize, ops: u64, stats: &[(&str, f64)]) -> Run {
        Run {
            round,
            ops,
            valid: true,
            server_stats: stats.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
            ..Run::default()
        }
    }

    fn cell(variant: &str, runs: Vec<Run>) -> Cell {
        Cell {
            workload: "w".into(),
            variant: variant.into(),
            connections: 1,
            runs,
            ..Cell::default()
        }
    }

    fn comparison(variant: &str, aa: bool) -> ComparisonRecord {
        ComparisonRecord {
            workload: "w".into(),
            connections: 1,
            variant: variant.into(),
            baseline: "base".into(),
            aa,
            ..ComparisonRecord::default()
        }
    }

    /// Four rounds: `reads` per op scaled by `factor` on the other side, `calls`
    /// the same on both within 1%.
    fn results(factor: f64, reads_base: f64) -> Results {
        let rounds = 0..4;
        let base: Vec<Run> = rounds
            .clone()
            .map(|i| {
                let n = 1000 + i as u64 * 7;
                run(
                    i,
                    n,
                    &[
                        ("reads", reads_base * n as f64 * (1.0 + 0.01 * i as f64)),
                        ("calls", n as f64),
                        ("rare", 3.0),
                    ],
                )
            })
            .collect();
        let other: Vec<Run> = rounds
            .map(|i| {
                let n = 900 + i as u64 * 5;
                run(
                    i,
                    n,
                    &[
                        ("reads", factor * n as f64 * (1.0 + 0.01 * i as f64)),
                        ("calls", n as f64 * (1.0 + 0.002 * i as f64)),
                        ("rare", 5.0),
                    ],
                )
            })
            .collect();
        let mut r = Results {
            cells: vec![cell("base", base), cell("small", other)],
            comparisons: vec![comparison("small", false)],
            ..Results::default()
        };
        r.plan.baseline = "base".into();
        summarize_cells(&mut r);
        compare(&mut r);
        r
    }

    #[test]
    fn the_counter_that_moved_leads_and_the_steady_ones_are_left_out() {
        let r = results(3.0, 0.5);
        let ch = &r.comparisons[0].server_changes;
        assert_eq!(ch.len(), 1, "{ch:?}");
        assert_eq!(ch[0].name, "reads");
        assert!((ch[0].ratio.unwrap() - 6.0).abs() < 0.01, "{ch:?}");
        let [lo, hi] = ch[0].ci95.unwrap();
        assert!(lo > 1.0 && lo <= 6.0 && hi >= 6.0 * 0.99, "{lo} {hi}");
        let cell = &r.cells[0].server_stats["reads"];
        assert!((cell.per_op - 0.5 * 1.015).abs() < 0.01, "{cell:?}");
        assert_eq!(cell.runs, 4);
    }

    #[test]
    fn a_counter_that_appears_has_no_ratio_but_is_named() {
        let r = results(2.0, 0.0);
        let ch = &r.comparisons[0].server_changes;
        assert_eq!(ch[0].name, "reads");
        assert_eq!(ch[0].ratio, None);
        assert_eq!(ch[0].base_per_op, 0.0);
    }

    #[test]
    fn a_counter_that_follows_the_clock_comes_after_the_work() {
        let mut r = results(3.0, 0.5);
        // `ticks`: the same 500 a second on both sides while the other side ran 0.9
        // times the operations in the same time: per op it moves, per second it does not.
        for c in &mut r.cells {
            for x in &mut c.runs {
                x.elapsed_s = 1.0;
                x.server_stats.insert("ticks".into(), 500.0);
            }
        }
        for x in &mut r.cells[1].runs {
            x.ops = x.ops * 6 / 10;
        }
        summarize_cells(&mut r);
        compare(&mut r);
        let ch = &r.comparisons[0].server_changes;
        let names: Vec<&str> = ch.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names[0], "reads", "{ch:?}");
        let ticks = ch.iter().find(|c| c.name == "ticks").expect("ticks listed");
        assert!(ticks.paced_by_time && !ch[0].paced_by_time, "{ch:?}");
    }

    /// `r` summarized and compared: its first comparison names no change.
    fn assert_no_change(mut r: Results) {
        summarize_cells(&mut r);
        compare(&mut r);
        assert_no_change_named(&r);
    }

    fn assert_no_change_named(r: &Results) {
        assert!(
            r.comparisons[0].server_changes.is_empty(),
            "{:?}",
            r.comparisons[0]
        );
    }

    #[test]
    fn a_counter_one_side_could_not_read_is_no_change() {
        let mut r = results(3.0, 0.5);
        for x in &mut r.cells[0].runs {
            x.server_stats.remove("reads");
            x.server_stats_unavailable
                .insert("reads".into(), "the version lacks it".into());
        }
        for c in &mut r.cells {
            for x in &mut c.runs {
                x.server_stats.insert("pg_stat_wal.wal_bytes".into(), 500.0);
            }
        }
        for x in &mut r.cells[0].runs {
            x.server_stats.remove("pg_stat_wal.wal_bytes");
            x.server_stats_unavailable
                .insert("pg_stat_wal".into(), "no such view".into());
        }
        assert_no_change(r);
    }

    #[test]
    fn a_counter_the_baselines_server_does_not_have_is_no_change() {
        let mut r = results(3.0, 0.0);
        assert_eq!(r.comparisons[0].server_changes[0].name, "reads");
        r.variants = vec![
            bakeoff_report::model::VariantRecord {
                name: "base".into(),
                server_counters: vec!["calls".into(), "rare".into()],
                ..Default::default()
            },
            bakeoff_report::model::VariantRecord {
                name: "small".into(),
                server_counters: vec!["calls".into(), "rare".into(), "reads".into()],
                ..Default::default()
            },
        ];
        compare(&mut r);
        assert_no_change_named(&r);
    }

    #[test]
    fn a_sampled_family_holds_every_counter_of_it() {
        let mut r = results(3.0, 0.0);
        r.variants = vec![bakeoff_report::model::VariantRecord {
            name: "base".into(),
            server_counters: vec!["calls".into(), "waits.*".into()],
            ..Default::default()
        }];
        assert!(!lacks(&r, "base", "waits.IO:WALSync.samples"));
        assert!(!lacks(&r, "base", "calls"));
        assert!(lacks(&r, "base", "reads"));
        assert!(lacks(&r, "base", "waitsX"));
        assert!(
            !lacks(&r, "other", "reads"),
            "a variant not read lacks nothing"
        );
    }

    #[test]
    fn nothing_changes_between_equal_sides() {
        let r = results(0.5, 0.5);
        assert!(r.comparisons[0].server_changes.is_empty());
    }

    #[test]
    fn a_change_within_the_aa_twins_own_movement_is_not_named() {
        let mut r = results(3.0, 0.5);
        // An A/A twin that moved `reads` as much: the floor swallows it.
        let mut twin = r.cells[1].clone();
        twin.variant = "base (A/A)".into();
        r.cells.push(twin);
        r.comparisons.push(comparison("base (A/A)", true));
        assert_no_change(r);
    }

    #[test]
    fn unavailable_runs_and_off_runs_count_nothing() {
        let mut r = results(3.0, 0.5);
        for x in &mut r.cells[1].runs {
            x.server_stats_unavailable
                .insert("all".into(), "the server restarted".into());
        }
        summarize_cells(&mut r);
        compare(&mut r);
        assert!(r.cells[1].server_stats.is_empty());
        assert!(r.comparisons[0].server_changes.is_empty());
    }
}
