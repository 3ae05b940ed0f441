//! Hostile results folders (issue 44, class 6): names that are markup in one output or
//! another render as text in every output and every table, and a folder of thousands of
//! variants renders in time linear in what it holds.

use crate::model::*;
use crate::tests::{
    capacity_sample, machines_sample, sample, sample_both, sample_with_probes, sql_sample,
    tpcc_sample,
};
use std::time::{Duration, Instant};

/// Every sample the report tests use: each kind of section is in one of them.
fn samples() -> Vec<Results> {
    vec![
        sample(),
        sample_with_probes(),
        sample_both(),
        sql_sample(),
        tpcc_sample(),
        machines_sample(),
        capacity_sample(),
    ]
}

/// `r` with `n` more copies of each candidate (every variant but the baseline that has
/// cells): its variant record, cells and comparisons under a new name.
pub(crate) fn grow(mut r: Results, n: usize) -> Results {
    let base = r.plan.baseline.clone();
    let mut names: Vec<String> = Vec::new();
    for c in &r.cells {
        if c.variant != base && !names.contains(&c.variant) {
            names.push(c.variant.clone());
        }
    }
    let (mut variants, mut cells, mut comparisons) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..n {
        for v in &names {
            let to = format!("{v}-{i}");
            if let Some(rec) = r.variants.iter().find(|x| &x.name == v) {
                let mut rec = rec.clone();
                rec.name = to.clone();
                variants.push(rec);
            } else {
                variants.push(VariantRecord {
                    name: to.clone(),
                    status: "ok".into(),
                    ..VariantRecord::default()
                });
            }
            for c in r.cells.iter().filter(|c| &c.variant == v) {
                let mut c = c.clone();
                c.variant = to.clone();
                cells.push(c);
            }
            for k in r.comparisons.iter().filter(|k| &k.variant == v) {
                let mut k = k.clone();
                k.variant = to.clone();
                comparisons.push(k);
            }
        }
    }
    r.variants.extend(variants);
    r.cells.extend(cells);
    r.comparisons.extend(comparisons);
    r
}

/// Every output of `r`: report.md, report.html, results.csv, bench.txt, results.json and
/// the terminal summary.
fn render_all(r: &Results) -> Vec<(&'static str, String)> {
    let mut out: Vec<(&'static str, String)> = crate::exporters()
        .iter()
        .map(|e| {
            (
                e.file_name(),
                String::from_utf8(e.render(r)).expect("utf-8"),
            )
        })
        .collect();
    out.push(("terminal", crate::terminal(r, true)));
    out
}

fn time_all(r: &Results) -> Duration {
    let t = Instant::now();
    let out = render_all(r);
    assert!(out.iter().all(|(_, s)| !s.is_empty()));
    t.elapsed()
}

#[test]
#[ignore]
fn scaling_probe() {
    for (i, r) in samples().into_iter().enumerate() {
        for n in [250, 500, 1000] {
            let g = grow(r.clone(), n);
            let t = time_all(&g);
            eprintln!("sample {i} n {n} cells {} {:?}", g.cells.len(), t);
        }
    }
}
