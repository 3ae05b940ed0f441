//! The headline table every exporter shows: one row per cell, with the ratio to the
//! baseline and the verdict, built once as a neutral [`Table`]; and the sentences the
//! sections share (stopping rule, plan, explanations). The number formats and verdict
//! words are `format.rs`'s, re-exported here.

use crate::format::equivalence_shown;
pub use crate::format::{
    ci_text, duration_text, hiding_text, instructions_text, level_text, micros, ops, paint,
    printable, ratio_ci_text, verdict_text,
};
use crate::index::Index;
use crate::model::{Cell, ComparisonRecord, PlanRecord, Results, Verdict};
use crate::table::{Table, Value};
use std::collections::HashSet;

/// The headline table: one row per cell in experiment order (workload, then
/// connections, then variant order), with the ratio to the baseline and the verdict.
pub fn cells_table(r: &Results) -> Table {
    let mut t = Table::new(
        "cells",
        &[
            "workload",
            "conns#",
            "variant",
            "runs#",
            "ops/s#",
            "95% CI",
            "CV#",
            "p50 us#",
            "p99 us#",
            "p99.9 us#",
            "ratio#",
            "ratio CI",
            "verdict",
            "notes",
        ],
    );
    let index = Index::new(r);
    let aa = r.aa_variants();
    for c in &r.cells {
        t.push(row(r, &index, &aa, c));
    }
    t
}

fn row(r: &Results, index: &Index, aa: &HashSet<&str>, c: &Cell) -> Vec<Value> {
    let baseline = r.plan.baseline.as_str();
    let cmp = index.comparison(&c.workload, &c.variant, c.connections);
    let has_data = c.valid_runs > 0;
    let (ratio, ratio_ci, verdict) = match (cmp, c.variant == baseline) {
        (Some(k), _) => (
            format!("{:.3}", k.ratio),
            ratio_ci_text(k),
            // Mode both: the instruction count's answer beside the throughput one.
            Value::Verdict(
                k.verdict,
                match index.instructions_beside(k) {
                    Some(i) => format!("{} · {}", crate::aa::verdict_text(k), instructions_text(i)),
                    None => crate::aa::verdict_text(k),
                },
            ),
        ),
        (None, true) => ("1.000".into(), String::new(), Value::Baseline),
        (None, false) => (String::new(), String::new(), "-".into()),
    };
    let num = |v: f64| if has_data { ops(v) } else { "-".into() };
    // A cell that times operations, not requests, has no latency histogram.
    let has_latency = has_data && c.latency_us.p99 > 0.0;
    let lat = |v: f64| if has_latency { micros(v) } else { "-".into() };
    vec![
        c.workload.clone().into(),
        c.connections.to_string().into(),
        Value::Variant(c.variant.clone()),
        c.valid_runs.to_string().into(),
        num(c.median_ops_per_s).into(),
        if has_data {
            format!("[{}, {}]", ops(c.ci95[0]), ops(c.ci95[1]))
        } else {
            "-".into()
        }
        .into(),
        if c.valid_runs >= 2 {
            format!("{:.1}%", c.cv * 100.0)
        } else {
            "-".into()
        }
        .into(),
        lat(c.latency_us.p50).into(),
        lat(c.latency_us.p99).into(),
        lat(c.latency_us.p999).into(),
        ratio.into(),
        ratio_ci.into(),
        verdict,
        Value::Long({
            let mut n: Vec<String> = aa
                .contains(c.variant.as_str())
                .then(|| crate::aa::cell_note(r, c))
                .flatten()
                .into_iter()
                .chain(notes(c))
                .collect();
            if cmp.is_some_and(|k| k.disagrees.is_some()) {
                n.push("metrics disagree".into());
            }
            n.join("; ")
        }),
    ]
}

/// Flags a reader must see next to the figure they qualify.
pub fn notes(c: &Cell) -> Vec<String> {
    let mut n = Vec::new();
    let total = c.runs.len();
    if c.verify_failures > 0 {
        n.push(format!("VERIFY FAILED x{}", c.verify_failures));
    }
    let invalid = total - c.runs.iter().filter(|r| r.valid).count();
    if invalid > 0 {
        n.push(format!("invalid {invalid}/{total}"));
    }
    if c.client_bound_runs > 0 {
        // Of the wall-clock runs (mode both's instruction-count runs never count).
        let timed = c.runs.iter().filter(|x| !x.instruction_run).count();
        n.push(format!("client-bound {}/{timed}", c.client_bound_runs));
    }
    if c.cv > 0.05 && c.valid_runs >= 3 {
        n.push(format!("noisy (CV {:.0}%)", c.cv * 100.0));
    }
    if let Some(s) = c.stop_reason.as_deref().filter(|s| *s != "repetitions") {
        n.push(format!("stopped: {s}"));
    }
    n
}

/// What qualifies one run's figures: invalid (and why), or what may have disturbed it.
pub fn run_flags(run: &crate::model::Run) -> Vec<String> {
    let mut flags = Vec::new();
    if !run.valid {
        flags.push(format!(
            "INVALID: {}",
            run.invalid_reason.as_deref().unwrap_or("?")
        ));
    }
    match &run.disturbed {
        Some(d) => flags.push(format!("disturbed: {d}")),
        None if run.client_bound => flags.push("client-bound".to_string()),
        None => {}
    }
    flags
}

/// One sentence per comparison whose two metrics point opposite ways (mode both).
pub fn disagreements(r: &Results) -> Vec<String> {
    r.comparisons
        .iter()
        .filter_map(|k| {
            let why = k.disagrees.as_deref()?;
            Some(format!(
                "{} x{} {}: the metrics disagree: {why}",
                k.workload, k.connections, k.variant
            ))
        })
        .collect()
}

/// One sentence per inconclusive comparison: how wide its CI is, what could hide there,
/// and what more rounds would buy; then one per client-bound comparison.
pub fn explanations(r: &Results) -> Vec<String> {
    let target = r.plan.precision.unwrap_or(r.plan.equivalence);
    let index = Index::new(r);
    let mut lines: Vec<String> = r.comparisons
        .iter()
        .filter(|k| k.verdict == Verdict::Inconclusive)
        .map(|k| {
            let at = format!(
                "{} x{} {}{}",
                k.workload,
                k.connections,
                k.variant,
                if index.is_beside(k) {
                    " (instructions)"
                } else {
                    ""
                }
            );
            let Some(hides) = hiding_text(k) else {
                return format!("{at}: inconclusive: too few valid runs for a confidence interval");
            };
            let more = match (k.more_rounds, k.more_seconds) {
                (Some(n), Some(s)) if n > 0 => format!(
                    "; about {n} more rounds ({}) would bring it to ±{:.1}%",
                    duration_text(s),
                    target * 100.0
                ),
                _ => String::new(),
            };
            let over = match k.layouts {
                Some(n) => format!("{} rounds over {n} code layouts (rounds narrow the runs' part of it, only layouts the layouts' part)", k.rounds),
                None => format!(
                    "{} {}",
                    k.rounds,
                    if k.paired { "paired rounds" } else { "runs per side" }
                ),
            };
            // Too few rounds for an interval at the asked level: the widest one they
            // allow is shown, at its true coverage, and the prose says so.
            let short = k.ci_coverage > 0.0 && k.ci_coverage < k.ci_level - 0.001;
            let level = level_text(if short { k.ci_coverage } else { k.ci_level });
            let asked = if short {
                format!(
                    " (the widest interval these rounds allow; {} was asked)",
                    level_text(k.ci_level)
                )
            } else {
                String::new()
            };
            let adjusted = match k.ci95_unadjusted {
                Some([lo, hi]) if lo > 1.0 || hi < 1.0 => format!(
                    " (alone, its 95% CI [{lo:.3}, {hi:.3}] excludes 1 at p {:.3}; over the {} comparisons decided together that p is {:.3} and the {level} CI covers 1)",
                    k.p_value,
                    r.comparisons.len(),
                    k.p_adjusted
                ),
                _ => String::new(),
            };
            format!(
                "{at}: inconclusive: ratio {:.3}, {level} CI [{:.3}, {:.3}]{asked} over {over}: the true difference could be anywhere {hides}{adjusted}{more}",
                k.ratio,
                k.ci95[0],
                k.ci95[1],
            )
        })
        .collect();
    lines.extend(held_back_lines(r, &index));
    lines.extend(machine_busy_lines(r));
    lines.extend(disagreements(r));
    lines
}

/// One sentence per client-bound comparison: which side the load held back, and what to
/// do about it.
fn held_back_lines(r: &Results, index: &Index) -> Vec<String> {
    r.comparisons
        .iter()
        .filter(|k| k.verdict == Verdict::ClientBound)
        .map(|k| {
            // A capacity comparison is held back by the searches' trials, not the rounds.
            let capacity = k.metric == crate::model::CAPACITY;
            let side = |variant: &str| {
                let c = index.cell(&k.workload, variant, k.connections)?;
                if let Some(cap) = c.capacity.as_ref().filter(|_| capacity) {
                    let bound = cap.trials.iter().filter(|t| t.client_bound).count();
                    let threads = c.runs.iter().map(|x| x.client_threads).max().unwrap_or(0);
                    return Some((format!("{variant} {bound} of {}", cap.trials.len()), threads, connections_per(k.connections, threads)));
                }
                let valid: Vec<_> = c.runs.iter().filter(|x| x.valid && !x.instruction_run).collect();
                let bound = valid.iter().filter(|x| x.client_bound).count();
                let threads = valid.iter().map(|x| x.client_threads).max().unwrap_or(0);
                Some((format!("{variant} {bound} of {}", valid.len()), threads, connections_per(k.connections, threads)))
            };
            let sides: Vec<_> = [k.baseline.as_str(), k.variant.as_str()]
                .into_iter()
                .filter_map(side)
                .collect();
            let counts: Vec<&str> = sides.iter().map(|s| s.0.as_str()).collect();
            let threads = sides.iter().map(|s| s.1).max().unwrap_or(0);
            let had = if threads > 0 {
                format!(" (it had {threads} client thread{}, {} connections each)", if threads == 1 { "" } else { "s" }, sides.iter().map(|s| s.2).max().unwrap_or(0))
            } else {
                String::new()
            };
            format!(
                "{} x{} {}: client-bound: the load engine, not the server, set the pace in {} {}, so the figures compare the load with itself; give it more client threads (client_threads){had}, a clients host, or fewer connections per thread",
                k.workload,
                k.connections,
                k.variant,
                counts.join(" and "),
                if capacity { "capacity trials" } else { "runs" }
            )
        })
        .collect()
}

/// One sentence per machine-busy comparison: how many runs the machine disturbed on each
/// side, what took the CPU, and what helps (never more client threads: on a busy machine
/// they only take more of the CPUs the server needs).
fn machine_busy_lines(r: &Results) -> Vec<String> {
    r.comparisons
        .iter()
        .filter(|k| k.verdict == Verdict::MachineBusy)
        .map(|k| {
            let cells: Vec<&crate::model::Cell> = [k.baseline.as_str(), k.variant.as_str()]
                .into_iter()
                .filter_map(|v| r.cell(&k.workload, v, k.connections))
                .collect();
            let counts: Vec<String> = cells
                .iter()
                .map(|c| {
                    let valid = c.runs.iter().filter(|x| x.valid && !x.instruction_run).count();
                    format!("{} {} of {valid}", c.variant, c.machine_busy_runs)
                })
                .collect();
            let top = busiest_others(cells.iter().copied());
            let named: Vec<String> = top
                .iter()
                .take(3)
                .map(|o| format!("{} {:.0}% of the CPUs", printable(&o.name), o.cpu_pct))
                .collect();
            format!(
                "{} x{} {}: machine-busy: other processes took the CPU in {} runs{}, so the figures measure the server sharing its CPUs; quiet the machine, give the server and the load CPUs of their own with [plan] cpus, or run more rounds (more client threads would only take more of the CPUs)",
                k.workload,
                k.connections,
                k.variant,
                counts.join(" and "),
                if named.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", named.join(", "))
                }
            )
        })
        .collect()
}

/// The other processes that took the CPU in `cells`' runs, each once at its highest
/// share, busiest first.
fn busiest_others<'a>(cells: impl Iterator<Item = &'a Cell>) -> Vec<crate::model::OtherProcess> {
    let mut top: Vec<crate::model::OtherProcess> = Vec::new();
    for o in cells.flat_map(|c| c.busiest_others()) {
        match top.iter_mut().find(|t| t.name == o.name) {
            Some(t) => t.cpu_pct = t.cpu_pct.max(o.cpu_pct),
            None => top.push(o),
        }
    }
    top.sort_by(|a, b| b.cpu_pct.total_cmp(&a.cpu_pct));
    top
}

fn connections_per(connections: usize, threads: usize) -> usize {
    connections.div_ceil(threads.max(1))
}

/// What follows the headline table in plain text: how the rounds ended, what each
/// inconclusive answer could hide, disturbed runs, and the legend.
pub fn verdict_notes(r: &Results) -> String {
    if r.comparisons.is_empty() {
        return String::new();
    }
    let mut s = format!("\n{}.\n", stopping_text(r));
    if let Some(line) = detectable_range(r) {
        s.push_str(&format!("{line}\n"));
    }
    for line in explanations(r) {
        s.push_str(&format!("  {line}\n"));
    }
    for line in forecast_lines(r) {
        s.push_str(&format!("  {line}\n"));
    }
    for line in disturbed(r) {
        s.push_str(&format!("  {line}\n"));
    }
    for line in layout_lines(r) {
        s.push_str(&format!("  {line}\n"));
    }
    s.push_str(&format!("{}\n", legend(r)));
    s
}

/// Per cell built in several code layouts: the spread between layouts beside the spread
/// between runs.
pub fn layout_lines(r: &Results) -> Vec<String> {
    r.cells
        .iter()
        .filter_map(|c| {
            let l = c.layouts.as_ref()?;
            let lo = l.medians.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = l.medians.iter().copied().fold(0.0, f64::max);
            Some(format!(
                "{} x{} {}: {} code layouts: between layouts ±{:.1}%, between runs ±{:.1}% (layout medians {} to {} ops/s)",
                c.workload,
                c.connections,
                c.variant,
                l.layouts,
                l.between_layouts * 100.0,
                l.between_runs * 100.0,
                ops(lo),
                ops(hi)
            ))
        })
        .collect()
}

/// The smallest differences the final CIs could detect, narrowest to widest: so that no
/// answer is read as "no difference at all".
pub fn detectable_range(r: &Results) -> Option<String> {
    let at = |k: &ComparisonRecord| format!("{} x{} {}", k.workload, k.connections, k.variant);
    let mut ds: Vec<(f64, String)> = r
        .headline_comparisons()
        .filter_map(|k| k.detectable.map(|d| (d, at(k))))
        .collect();
    ds.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (lo, hi) = (ds.first()?, ds.last()?);
    Some(if ds.len() == 1 {
        format!(
            "Smallest difference the final CI could detect: ±{:.1}% ({}).",
            lo.0 * 100.0,
            lo.1
        )
    } else {
        format!(
            "Smallest differences the final CIs could detect: ±{:.1}% ({}) to ±{:.1}% ({}).",
            lo.0 * 100.0,
            lo.1,
            hi.0 * 100.0,
            hi.1
        )
    })
}

/// One line per cell with disturbed runs: which rounds and why.
pub fn disturbed(r: &Results) -> Vec<String> {
    r.cells
        .iter()
        .filter_map(|c| {
            let hit: Vec<String> = c
                .runs
                .iter()
                .filter_map(|x| x.disturbed.as_ref().map(|d| format!("r{}: {d}", x.round.saturating_add(1))))
                .collect();
            (!hit.is_empty()).then(|| {
                format!(
                    "{} x{} {}: {} of {} runs disturbed ({}); kept, the rank statistics bound their weight",
                    c.workload,
                    c.connections,
                    c.variant,
                    hit.len(),
                    c.runs.iter().filter(|x| !x.instruction_run).count(),
                    hit.join("; ")
                )
            })
        })
        .collect()
}

/// How the verdicts were reached, for the legend under every verdict table.
pub fn legend(r: &Results) -> String {
    let n = r.comparisons.len();
    let layouts = r.comparisons.iter().filter(|k| k.layouts.is_some()).count();
    let paired = r
        .comparisons
        .iter()
        .filter(|k| k.paired && k.layouts.is_none())
        .count();
    let over_layouts = if layouts > 0 {
        format!(" {layouts} of {n} comparison(s) over {} code layouts (one estimate per layout, Student's t over them, so the CI includes the layouts' luck);", r.plan.layouts)
    } else {
        String::new()
    };
    let decided = if n > 1 {
        let mut levels: Vec<String> = Vec::new();
        let mut seen = HashSet::new();
        for k in &r.comparisons {
            let l = level_text(k.ci_level);
            if seen.insert(l.clone()) {
                levels.push(l);
            }
        }
        format!(
            "the p-value, adjusted over all {n} comparisons of this experiment (Benjamini-Hochberg, false discovery rate 5%), is below 0.05 and the ratio's CI excludes 1; each CI is at the level that goes with that adjustment (false-coverage-rate intervals, Benjamini-Yekutieli: 1 - R x 5%/{n} for the R comparisons selected, 1 - (R+1) x 5%/{n} for the others; here {}), so a CI excludes 1 exactly when its verdict is faster or slower",
            levels.join(" and ")
        )
    } else {
        "the ratio's 95% CI excludes 1 (p below 0.05)".to_string()
    };
    format!(
        "Verdicts: faster/slower when {decided}; equivalent when the whole CI lies within ±{:.1}%; inconclusive otherwise, with the differences the CI still allows.{over_layouts} {paired} of {n} comparison(s) paired by round (Hodges-Lehmann estimate of the per-round ratios, Wilcoxon signed-rank test); the rest unpaired (ratio of medians, Mann-Whitney U). CV: run-to-run coefficient of variation of the cell.",
        r.plan.equivalence * 100.0
    )
}

/// What ended the rounds: "stopped by precision after 12 rounds (3m10s of a 5m budget)".
pub fn stopping_text(r: &Results) -> String {
    let rounds = r.plan.rounds.len();
    let took = r
        .rounds_s
        .map(|s| format!(" in {}", duration_text(s)))
        .unwrap_or_default();
    let budget = r
        .plan
        .budget_s
        .map(|b| format!(" of a {} budget", duration_text(b)))
        .unwrap_or_default();
    match r.stopped_by.as_deref() {
        Some(by) => format!("stopped by {by} after {rounds} round(s){took}{budget}"),
        None => format!("{rounds} round(s) so far{took}{budget}"),
    }
}

/// A forecast in a few words: "noise 6.1% a round (run-to-run CV 4.3% and 5.0%): the
/// budget (37 rounds) reaches about ±5.0%; ±1.0% needs about 548 rounds (55m04s)".
pub fn forecast_text(f: &crate::model::Forecast) -> String {
    let pct = |x: f64| format!("{:.1}%", x * 100.0);
    let budget = match (f.budget_rounds, f.reaches) {
        (Some(n), Some(h)) => format!("the budget ({n} rounds) reaches about ±{}", pct(h)),
        (Some(n), None) => format!("the budget's {n} rounds are too few for an interval"),
        (None, _) => "no budget or repetitions bound the rounds".into(),
    };
    let need = match (f.rounds_for_target, f.seconds_for_target) {
        (Some(n), Some(s)) => format!(
            "±{} needs about {n} rounds ({})",
            pct(f.target),
            duration_text(s)
        ),
        _ => format!("±{} is out of reach", pct(f.target)),
    };
    let cv: Vec<String> = f.cv.iter().flatten().map(|x| pct(*x)).collect();
    let cv = match cv.len() {
        0 => String::new(),
        _ => format!(" (run-to-run CV {})", cv.join(" and ")),
    };
    format!("noise {} a round{cv}: {budget}; {need}", pct(f.noise))
}

/// One sentence per comparison left inconclusive that has a forecast: what was forecast
/// once the minimum rounds were in (the last forecast made), beside what more rounds
/// would bring.
pub fn forecast_lines(r: &Results) -> Vec<String> {
    r.comparisons
        .iter()
        .filter(|k| k.verdict == Verdict::Inconclusive)
        .filter_map(|k| {
            let f = k.forecast.as_ref()?;
            Some(format!(
                "{} x{} {}: forecast after {} rounds: {}",
                k.workload,
                k.connections,
                k.variant,
                f.rounds,
                forecast_text(f)
            ))
        })
        .collect()
}

/// The plan in one line: how rounds are bounded, the targets, the windows.
pub fn plan_text(p: &PlanRecord) -> String {
    let mut parts = Vec::new();
    match (p.repetitions, p.budget_s) {
        (Some(n), Some(b)) => parts.push(format!("up to {n} rounds within {}", duration_text(b))),
        (Some(n), None) => parts.push(format!("{n} rounds")),
        (None, Some(b)) => parts.push(format!("budget {}", duration_text(b))),
        (None, None) => {}
    }
    if let Some(t) = p.precision {
        parts.push(format!(
            "precision ±{:.1}% (from {} rounds on)",
            t * 100.0,
            p.min_rounds
        ));
    }
    parts.push(format!("equivalence ±{:.1}%", p.equivalence * 100.0));
    parts.push(format!("pairing {}", p.pairing));
    let measure = match (p.duration_s, p.ops) {
        (Some(d), Some(n)) => format!("{d} s (instruction-count runs {n} ops)"),
        (_, Some(n)) => format!("{n} ops"),
        (Some(d), None) => format!("{d} s"),
        _ => "?".into(),
    };
    parts.push(format!("warmup {} s, measure {measure}", p.warmup_s));
    parts.push(format!("seed {}", p.seed));
    parts.join(", ")
}

/// Where things ran on the machine, as (what, how) pairs for the host tables: the CPUs of
/// the server and the load, and the filesystem that held the data.
pub fn placement(h: &crate::model::Host) -> Vec<(&'static str, String)> {
    let mut rows = Vec::new();
    match &h.cpus {
        Some(c) => rows.push((
            "CPUs",
            format!(
                "server {}, load {} ({})",
                c.server,
                c.load,
                if c.by == "plan" {
                    "[plan] cpus"
                } else {
                    "split by bakeoff"
                }
            ),
        )),
        None => rows.push(("CPUs", "server and load unpinned, sharing every CPU".into())),
    }
    if let Some(fs) = &h.sandbox_fs {
        let mut data = fs.clone();
        if let Some(dev) = &h.sandbox_device {
            data.push_str(&format!(" on {dev}"));
        }
        if let Some(dir) = &h.sandbox_dir {
            data.push_str(&format!(" ({dir})"));
        }
        if let Some(free) = h.sandbox_free_bytes {
            data.push_str(&format!(
                ", {:.1} GiB free",
                free as f64 / (1u64 << 30) as f64
            ));
        }
        rows.push(("data", data));
    }
    rows
}

/// The answer first: one line in plain words per comparison, the instruction count's
/// answer beside the throughput one in mode both ("b is 4.1% faster than a at 16
/// connections (get) [1.9%, 6.2%]", "no answer for b at 64 connections (get): the machine
/// was busy (yes 41% of the CPUs); ..."), after a line per variant that failed (it
/// answers nothing, and saying so comes first).
pub fn answers(r: &Results) -> Vec<String> {
    let mut out: Vec<String> = failed_variants(r)
        .into_iter()
        .map(|v| failure_line(r, v))
        .collect();
    let mut noted = std::collections::BTreeSet::new();
    for k in r.headline_comparisons() {
        let mut line = answer(r, k);
        if let Some(i) = r.instructions_beside(k) {
            let (words, interval) = answer_words(r, i);
            line.push_str(&format!(
                "; on instructions: {words}{}",
                interval.map(|c| format!(" {c}")).unwrap_or_default()
            ));
        }
        out.push(line);
        // Under a variant's first answer: the settings that move performance on which it
        // and the baseline differ although the file asked for neither value.
        if noted.insert(k.variant.clone()) {
            out.extend(unasked_settings(r, &k.variant));
        }
    }
    out
}

/// Lines for the settings in the targets' tables of settings that move performance on
/// which `variant` ran with another value than the baseline, and which no variant of the
/// file set: the comparison includes them (at most three, then how many more).
fn unasked_settings(r: &Results, variant: &str) -> Vec<String> {
    let base = &r.plan.baseline;
    let differ: Vec<String> = r
        .settings_diff
        .iter()
        .filter(|d| d.topic.is_some() && d.asked_by.is_empty())
        .filter_map(|d| {
            let (v, b) = (d.values.get(variant)?, d.values.get(base)?);
            (v != b).then(|| format!("{} = {v} (baseline {b})", d.name))
        })
        .collect();
    if differ.is_empty() {
        return Vec::new();
    }
    let more = differ.len().saturating_sub(3);
    let mut line = format!(
        "  note: {variant} also differs from {base} in settings the file did not ask for: {}",
        differ[..differ.len().min(3)].join(", ")
    );
    if more > 0 {
        line.push_str(&format!(" and {more} more (see Settings that differ)"));
    }
    vec![line]
}

/// The variants that failed (build, fetch, start, data, verification): no comparison
/// with them was made.
pub fn failed_variants(r: &Results) -> Vec<&crate::model::VariantRecord> {
    r.variants.iter().filter(|v| v.status != "ok").collect()
}

/// A failed variant as the first thing a reader sees: who, why, and what it cost.
fn failure_line(r: &Results, v: &crate::model::VariantRecord) -> String {
    let why = v.error.as_deref().unwrap_or("no reason recorded");
    if v.name == r.plan.baseline {
        format!(
            "FAILED: the baseline {} failed, so no variant was compared with it: {why}",
            v.name
        )
    } else {
        format!(
            "FAILED: {} failed, so it was not compared with {}: {why}",
            v.name, r.plan.baseline
        )
    }
}

/// One comparison's answer as a sentence: "b is 4.1% faster than a at 16 connections
/// (get) [1.9%, 6.2%]", or why there is none.
fn answer(r: &Results, k: &ComparisonRecord) -> String {
    let (words, interval) = answer_words(r, k);
    let at = format!(
        "at {} connection{} ({})",
        k.connections,
        if k.connections == 1 { "" } else { "s" },
        k.workload
    );
    match interval {
        Some(ci) => format!("{} {words} {at} {ci}", k.variant),
        None => format!("no answer for {} {at}: {words}", k.variant),
    }
}

/// What the answer says, without the point it is at, and its interval when it is one
/// (faster, slower, equivalent).
fn answer_words(r: &Results, k: &ComparisonRecord) -> (String, Option<String>) {
    let pct = |x: f64| format!("{:.1}%", x * 100.0);
    // Differences as the reader says them: for instructions, per operation (the record's
    // ratio is operations per instruction).
    let (ratio, lo, hi) = if k.is_instructions() {
        let inv = |x: f64| if x > 0.0 { 1.0 / x } else { f64::INFINITY };
        (inv(k.ratio), inv(k.ci95[1]), inv(k.ci95[0]))
    } else {
        (k.ratio, k.ci95[0], k.ci95[1])
    };
    let (is, more, less) = match k.metric.as_str() {
        crate::model::INSTRUCTIONS => (
            "runs",
            "more instructions per operation",
            "fewer instructions per operation",
        ),
        crate::model::CAPACITY => ("has", "more capacity", "less capacity"),
        _ => ("is", "faster", "slower"),
    };
    let than = format!("than {}", k.baseline);
    match k.verdict {
        Verdict::Faster | Verdict::Slower if ratio >= 1.0 => (
            format!("{is} {} {more} {than}", pct(ratio - 1.0)),
            Some(format!("[{}, {}]", pct(lo - 1.0), pct(hi - 1.0))),
        ),
        Verdict::Faster | Verdict::Slower => (
            format!("{is} {} {less} {than}", pct(1.0 - ratio)),
            Some(format!("[{}, {}]", pct(1.0 - hi), pct(1.0 - lo))),
        ),
        Verdict::Equivalent => (
            format!(
                "is the same as {} within ±{}",
                k.baseline,
                pct(equivalence_shown(k))
            ),
            Some(format!(
                "[{:+.1}%, {:+.1}%]",
                (lo - 1.0) * 100.0,
                (hi - 1.0) * 100.0
            )),
        ),
        Verdict::Inconclusive => (
            match hiding_text(k) {
                Some(h) => format!(
                    "the difference could be anywhere {h}{}",
                    k.more_rounds
                        .filter(|n| *n > 0)
                        .map(|n| format!("; about {n} more rounds would tell"))
                        .unwrap_or_default()
                ),
                None => "too few runs for an interval".into(),
            },
            None,
        ),
        Verdict::ClientBound => (
            "the load engine set the pace, not the server; give it more client threads (client_threads), a clients host, or fewer connections per thread".into(),
            None,
        ),
        Verdict::MachineBusy => {
            let top = busiest_others(
                [&k.baseline, &k.variant]
                    .into_iter()
                    .filter_map(|v| r.cell(&k.workload, v, k.connections)),
            );
            let named: Vec<String> = top
                .iter()
                .take(2)
                .map(|o| format!("{} {:.0}% of the CPUs", o.name, o.cpu_pct))
                .collect();
            (
                format!(
                    "the machine was busy{}; quiet it, give the server and the load CPUs of their own with [plan] cpus, or run more rounds",
                    if named.is_empty() {
                        String::new()
                    } else {
                        format!(" ({})", named.join(", "))
                    }
                ),
                None,
            )
        }
    }
}
