//! Statistics over saved runs: per cell the median and its CI over valid runs, per
//! comparison the ratio to the baseline, its CI, the p-value and the verdict; plus the
//! warnings a reader must see first. Pure: results in, results out.

use bakeoff_report::model::{Cell, ComparisonRecord, Latency, Results, Verdict};
use bakeoff_stats::{self as stats, Direction};

/// Recomputes every cell's figures, the comparisons and the warnings.
pub fn analyze(r: &mut Results) {
    for c in &mut r.cells {
        summarize_cell(c);
    }
    r.comparisons = comparisons(r);
    r.warnings = warnings(r);
}

fn summarize_cell(c: &mut Cell) {
    let valid: Vec<_> = c.runs.iter().filter(|x| x.valid).collect();
    let ops: Vec<f64> = valid.iter().map(|x| x.ops_per_s).collect();
    c.valid_runs = valid.len();
    c.client_bound_runs = c.runs.iter().filter(|x| x.client_bound).count();
    c.verify_failures = c.runs.iter().map(|x| x.verify_failures).sum();
    match stats::summarize(&ops) {
        Some(s) => {
            c.median_ops_per_s = s.median;
            c.ci95 = [s.ci95.0, s.ci95.1];
            c.ci_coverage = s.coverage;
            c.cv = s.cv;
        }
        None => {
            c.median_ops_per_s = 0.0;
            c.ci95 = [0.0, 0.0];
            c.ci_coverage = 0.0;
            c.cv = 0.0;
        }
    }
    let med = |f: fn(&Latency) -> f64| {
        let xs: Vec<f64> = valid.iter().map(|x| f(&x.latency_us)).collect();
        stats::summarize(&xs).map_or(0.0, |s| s.median)
    };
    c.latency_us = Latency {
        p50: med(|l| l.p50),
        p90: med(|l| l.p90),
        p99: med(|l| l.p99),
        p999: med(|l| l.p999),
        max: med(|l| l.max),
        mean: med(|l| l.mean),
    };
}

fn valid_ops(c: &Cell) -> Vec<f64> {
    c.runs
        .iter()
        .filter(|x| x.valid)
        .map(|x| x.ops_per_s)
        .collect()
}

fn comparisons(r: &Results) -> Vec<ComparisonRecord> {
    let baseline = &r.plan.baseline;
    let mut out = Vec::new();
    for c in r.cells.iter().filter(|c| &c.variant != baseline) {
        let Some(b) = r.cell(&c.workload, baseline, c.connections) else {
            continue;
        };
        let Some(k) = stats::compare(
            &valid_ops(b),
            &valid_ops(c),
            Direction::HigherIsBetter,
            r.plan.seed,
        ) else {
            continue;
        };
        out.push(ComparisonRecord {
            workload: c.workload.clone(),
            connections: c.connections,
            variant: c.variant.clone(),
            baseline: baseline.clone(),
            ratio: k.ratio,
            ci95: [k.ci95.0, k.ci95.1],
            ci_coverage: k.ci_coverage,
            p_value: k.p_value,
            verdict: match k.verdict {
                stats::Verdict::Faster => Verdict::Faster,
                stats::Verdict::Slower => Verdict::Slower,
                stats::Verdict::Same => Verdict::Same,
            },
        });
    }
    out
}

fn warnings(r: &Results) -> Vec<String> {
    let mut w = Vec::new();
    if r.plan.repetitions < 4 && !r.comparisons.is_empty() {
        w.push(format!(
            "{} repetitions per cell: too few for the Mann-Whitney test to reach p < 0.05, so every verdict is \"same\"; use at least 4 (5 or more recommended)",
            r.plan.repetitions
        ));
    }
    for c in &r.cells {
        let at = format!("{} {} x{}", c.variant, c.workload, c.connections);
        if c.verify_failures > 0 {
            w.push(format!(
                "{at}: {} wrong answers (verify failures); its figures mean nothing",
                c.verify_failures
            ));
        }
        let invalid: Vec<&str> = c
            .runs
            .iter()
            .filter(|x| !x.valid)
            .filter_map(|x| x.invalid_reason.as_deref())
            .collect();
        if !invalid.is_empty() {
            w.push(format!(
                "{at}: {} of {} runs invalid ({})",
                invalid.len(),
                c.runs.len(),
                invalid[0]
            ));
        }
        if c.client_bound_runs > 0 {
            w.push(format!(
                "{at}: {} of {} runs client-bound: the load engine, not the server, set the pace",
                c.client_bound_runs,
                c.runs.len()
            ));
        }
    }
    for v in r.variants.iter().filter(|v| v.status != "ok") {
        w.push(format!(
            "variant {} failed: {}",
            v.name,
            v.error.as_deref().unwrap_or("unknown error")
        ));
    }
    w
}
