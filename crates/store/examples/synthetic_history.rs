//! A synthetic history for measuring `bakeoff site` (bench/site.sh) and for tests:
//! `synthetic_history N STORE DIR [NAMES] [FIRST]` writes N small results folders under
//! DIR (experiments named `synthetic-<k>` over NAMES names, two variants, one cell each,
//! 5 runs per cell, the figure shifting by 10% halfway through each name's history, a
//! small report.html) and records each in the store at STORE. FIRST numbers the first
//! folder (to add experiments to a history made before). Figures are made up: this is
//! for timing the site, never for a result.

use bakeoff_report::model::{Cell, PlanRecord, Results, Run, VariantRecord};
use bakeoff_store::{Entry, Store};
use std::path::PathBuf;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 4 {
        eprintln!("usage: synthetic_history N STORE DIR [NAMES] [FIRST]");
        std::process::exit(2);
    }
    let n: usize = args[1].parse().expect("N");
    let store = PathBuf::from(&args[2]);
    let dir = PathBuf::from(&args[3]);
    let names: usize = args.get(4).map_or(100, |s| s.parse().expect("NAMES"));
    let first: usize = args.get(5).map_or(0, |s| s.parse().expect("FIRST"));
    let mut s = Store::open(&store).expect("store");
    let per_name = (n + first).div_ceil(names).max(1);
    let mut w = s.begin().expect("begin");
    for i in first..first + n {
        let name = format!("synthetic-{}", i % names);
        let nth = i / names;
        let level = if nth * 2 >= per_name {
            110_000.0
        } else {
            100_000.0
        };
        let cell = |v: &str, f: f64| {
            let runs = (0..5)
                .map(|round| Run {
                    round,
                    ops_per_s: level * f * (1.0 + 0.004 * ((i * 7 + round * 3) % 5) as f64),
                    valid: true,
                    ..Run::default()
                })
                .collect();
            Cell::new("kv", v, 16, runs)
        };
        let minute = i % 60;
        let hour = (i / 60) % 24;
        let day = 1 + (i / 1440) % 28;
        let month = 1 + (i / (1440 * 28)) % 12;
        let r = Results {
            name: name.clone(),
            status: "complete".into(),
            started_utc: format!("2026-{month:02}-{day:02}T{hour:02}:{minute:02}:00Z"),
            bakeoff_version: "0.1.0".into(),
            plan: PlanRecord {
                repetitions: Some(5),
                duration_s: Some(1.0),
                baseline: "a".into(),
                equivalence: 0.01,
                rounds: vec![Vec::new(); 5],
                ..PlanRecord::default()
            },
            variants: ["a", "b"]
                .iter()
                .map(|v| VariantRecord {
                    name: (*v).into(),
                    status: "ok".into(),
                    ..VariantRecord::default()
                })
                .collect(),
            cells: vec![cell("a", 1.0), cell("b", 1.02)],
            ..Results::default()
        };
        let folder = dir.join(format!("run-{i:06}"));
        std::fs::create_dir_all(&folder).expect("folder");
        std::fs::write(
            folder.join("results.json"),
            serde_json::to_string(&r).expect("json"),
        )
        .expect("results.json");
        std::fs::write(
            folder.join("report.html"),
            format!("<!DOCTYPE html><html lang=\"en\"><meta charset=\"utf-8\"><title>{name}</title><p>synthetic report {i}</p></html>\n"),
        )
        .expect("report.html");
        let mut e = Entry::from_results(&r, &folder);
        e.cells.iter_mut().for_each(|c| {
            let runs: Vec<f64> = r
                .cells
                .iter()
                .find(|x| x.variant == c.variant)
                .map(|x| x.runs.iter().map(|r| r.ops_per_s).collect())
                .unwrap_or_default();
            let mut sorted = runs.clone();
            sorted.sort_by(f64::total_cmp);
            c.median_ops_per_s = sorted[sorted.len() / 2];
            c.ci95 = [sorted[0], sorted[sorted.len() - 1]];
            c.valid_runs = runs.len();
        });
        w.insert(&e).expect("insert");
    }
    w.commit().expect("commit");
}
