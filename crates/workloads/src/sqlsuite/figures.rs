//! sqlsuite's figures over a cell's runs: per group (the sum of its operations) and per
//! operation, the median seconds with a 95% CI, and against the baseline's cell the ratio
//! of medians (below 1: this variant took less time) with its CI and verdict. Pure.

use super::records::{SuiteCell, SuiteRow, SuiteRun};
use bakeoff_report::figures::RunFigures;
use bakeoff_report::model::{Cell, RatioRecord, Results};
use bakeoff_stats::{self as stats, Direction};
use std::collections::{BTreeMap, HashMap, HashSet};

/// (group, operation) -> (round, seconds) per valid run; the group's own key has an
/// empty name.
type Times = Vec<((String, String), Vec<(usize, f64)>)>;

/// Each run's seconds per group and per operation, in the order they ran.
fn times(c: &Cell) -> Times {
    let mut order: Vec<(String, String)> = Vec::new();
    let mut seen: HashSet<(String, String)> = HashSet::new();
    let mut by: BTreeMap<(String, String), Vec<(usize, f64)>> = BTreeMap::new();
    for run in c.runs.iter().filter(|r| r.valid) {
        let ops = SuiteRun::of(run).operations;
        let mut groups: BTreeMap<String, f64> = BTreeMap::new();
        for op in &ops {
            *groups.entry(op.group.clone()).or_default() += op.seconds;
            let k = (op.group.clone(), op.name.clone());
            for key in [(op.group.clone(), String::new()), k.clone()] {
                if seen.insert(key.clone()) {
                    order.push(key);
                }
            }
            by.entry(k).or_default().push((run.round, op.seconds));
        }
        for (g, s) in groups {
            by.entry((g, String::new()))
                .or_default()
                .push((run.round, s));
        }
    }
    order
        .into_iter()
        .map(|k| {
            let v = by.remove(&k).unwrap_or_default();
            (k, v)
        })
        .collect()
}

/// Fills every sqlsuite cell's `sqlsuite` record.
pub fn summarize_cells(r: &mut Results) {
    let baseline = r.plan.baseline.clone();
    let rule = r.rule(Direction::LowerIsBetter);
    let all: Vec<Option<Times>> = r
        .cells
        .iter()
        .map(|c| {
            let t = times(c);
            (!t.is_empty()).then_some(t)
        })
        .collect();
    // Each workload's first baseline cell, found once.
    let mut base_at: HashMap<&str, usize> = HashMap::new();
    for (i, b) in r.cells.iter().enumerate() {
        if b.variant == baseline {
            base_at.entry(b.workload.as_str()).or_insert(i);
        }
    }
    let suites: Vec<Option<SuiteCell>> = r
        .cells
        .iter()
        .zip(&all)
        .map(|(c, t)| {
            let t = t.as_ref()?;
            let base = base_at
                .get(c.workload.as_str())
                .filter(|_| c.variant != baseline)
                .and_then(|&i| all[i].as_ref());
            Some(suite_cell(t, base, &rule))
        })
        .collect();
    for (c, s) in r.cells.iter_mut().zip(suites) {
        SuiteCell::put(s.as_ref(), c);
    }
}

/// One cell's rows; its operations against the baseline's are one FDR family.
fn suite_cell(t: &Times, base: Option<&Times>, rule: &stats::Rule) -> SuiteCell {
    let mut out = SuiteCell::default();
    let mut family = stats::Family::new();
    let mut base_of: HashMap<(&str, &str), &Vec<(usize, f64)>> = HashMap::new();
    for ((g, n), bx) in base.into_iter().flatten() {
        base_of.entry((g.as_str(), n.as_str())).or_insert(bx);
    }
    for ((group, name), xs) in t {
        let values: Vec<f64> = xs.iter().map(|x| x.1).collect();
        let Some(s) = stats::summarize(&values) else {
            continue;
        };
        let b = base_of.get(&(group.as_str(), name.as_str()));
        family.member(
            SuiteRow {
                group: group.clone(),
                name: name.clone(),
                median_s: s.median,
                ci95: [s.ci95.0, s.ci95.1],
                vs_baseline: None,
            },
            b.map(|bx| stats::Member::rounds(bx, xs)),
        );
    }
    for (mut row, k) in family.decide_all(rule) {
        row.vs_baseline = k.as_ref().map(RatioRecord::new);
        if row.name.is_empty() {
            out.groups.push(row);
        } else {
            out.operations.push(row);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::records::OperationRecord;
    use super::*;
    use bakeoff_report::model::Run;
    use bakeoff_report::model::Verdict;

    fn run(insert: f64, select: f64) -> Run {
        let op = |group: &str, name: &str, seconds| OperationRecord {
            group: group.into(),
            name: name.into(),
            seconds,
        };
        let mut x = Run {
            valid: true,
            ..Run::default()
        };
        SuiteRun {
            operations: vec![
                op("insert", "insert", insert),
                op("insert", "select_key", select),
                op("select", "min_max", 0.5),
            ],
        }
        .put(&mut x);
        x
    }

    #[test]
    fn groups_sum_their_operations_and_time_ratios_favour_less_time() {
        let base: Times = {
            let c = Cell {
                runs: (0..5)
                    .map(|i| run(2.0 + f64::from(i) * 0.01, 1.0))
                    .collect(),
                ..Cell::new("w", "a", 1, Vec::new())
            };
            times(&c)
        };
        let other_cell = Cell {
            runs: (0..5)
                .map(|i| run(1.0 + f64::from(i) * 0.01, 1.0))
                .collect(),
            ..Cell::new("w", "b", 1, Vec::new())
        };
        let other = times(&other_cell);
        let rule = stats::Rule::new(Direction::LowerIsBetter);
        let s = suite_cell(&other, Some(&base), &rule);
        let names: Vec<(&str, &str)> = s
            .operations
            .iter()
            .map(|r| (r.group.as_str(), r.name.as_str()))
            .collect();
        assert_eq!(
            names,
            vec![
                ("insert", "insert"),
                ("insert", "select_key"),
                ("select", "min_max")
            ]
        );
        let insert_group = &s.groups[0];
        assert_eq!(insert_group.group, "insert");
        assert!((insert_group.median_s - 2.02).abs() < 1e-9);
        let k = s.operations[0].vs_baseline.as_ref().unwrap();
        assert!((k.ratio - 1.02 / 2.02).abs() < 0.01, "{}", k.ratio);
        assert_eq!(k.verdict, Verdict::Faster);
        assert_eq!(
            s.operations[2].vs_baseline.as_ref().unwrap().verdict,
            Verdict::Equivalent
        );
    }
}
