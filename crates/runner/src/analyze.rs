//! Statistics over saved runs: per cell the median and its CI over valid runs, per
//! comparison the ratio to the baseline, its CI, the p-value and the verdict; plus the
//! warnings a reader must see first. Pure: results in, results out.

use bakeoff_report::model::{
    CapacityRecord, Cell, ComparisonRecord, Latency, Results, Run, SystemRecord, CAPACITY,
    INSTRUCTIONS,
};
use bakeoff_report::warning::{cell_label, Warning, WarningCode as Code};
use bakeoff_stats::{self as stats, Direction};

/// Recomputes every cell's figures, the comparisons and the warnings.
pub fn analyze(r: &mut Results) {
    for c in &mut r.cells {
        summarize_cell(c);
    }
    let before = std::mem::take(&mut r.comparisons);
    r.comparisons = comparisons(r);
    mark_cross_kind(r);
    crate::aa::mark(r);
    crate::server_changes::summarize_cells(r);
    crate::server_changes::compare(r);
    crate::statements::summarize_cells(r);
    crate::statements::compare(r);
    keep_forecasts(&before, &mut r.comparisons);
    bakeoff_workloads::summarize(r);
    let mut w = warnings(r);
    w.extend(
        bakeoff_workloads::warnings(r)
            .into_iter()
            .map(|t| Warning::new(Code::Workload, t)),
    );
    w.extend(crate::settings::warnings(r));
    r.set_warnings(w);
}

/// Marks the comparisons whose sides are servers of different kinds (`variants[].kind`;
/// a variant without one is `[target] kind`, the experiment's own).
fn mark_cross_kind(r: &mut Results) {
    let marks: Vec<bool> = r
        .comparisons
        .iter()
        .map(|k| r.kind_of(&k.variant) != r.kind_of(&k.baseline))
        .collect();
    for (k, cross) in r.comparisons.iter_mut().zip(marks) {
        k.cross_kind = cross;
    }
}

/// The forecasts the rounds made (`forecast.rs`), kept across a recomputation until the
/// next round replaces them.
fn keep_forecasts(before: &[ComparisonRecord], now: &mut [ComparisonRecord]) {
    let mut was = std::collections::HashMap::new();
    for b in before {
        was.entry((b.workload.as_str(), b.connections, b.variant.as_str()))
            .or_insert(b);
    }
    for k in now {
        k.forecast = was
            .get(&(k.workload.as_str(), k.connections, k.variant.as_str()))
            .and_then(|b| b.forecast.clone());
    }
}

/// CPU steal above this share of the machine during the window marks a run disturbed
/// (results written before runs carried `steal_pct`).
const STEAL_PCT: f64 = bakeoff_report::model::STEAL_PCT;
/// Softirq above the cell's usual level by this many points (loopback traffic alone
/// costs ~30% here) marks it too.
const SOFTIRQ_EXCESS_PCT: f64 = 10.0;
/// A figure this many robust deviations (MAD x 1.4826) from the cell's median is an
/// outlier.
const OUTLIER_SIGMAS: f64 = 3.0;

/// Says per run what may have disturbed it: CPU steal, unusual softirq load, a saturated
/// load engine, a figure far from its cell's others. The run is kept: the rank statistics
/// already bound one run's weight, and dropping runs by their figure would bias.
fn mark_disturbed(c: &mut Cell) {
    let median_of = |xs: Vec<f64>| stats::summarize(&xs).map(|s| s.median);
    let valid = || c.runs.iter().filter(|x| x.valid);
    let softirq = median_of(
        valid()
            .filter_map(|x| x.system.as_ref().map(|s| s.cpu_softirq_pct))
            .collect(),
    );
    let ops: Vec<f64> = valid()
        .filter(|x| !x.instruction_run)
        .map(|x| x.ops_per_s)
        .collect();
    let centre = median_of(ops.clone());
    let mad = centre.and_then(|m| median_of(ops.iter().map(|x| (x - m).abs()).collect()));
    // Mode both's instruction-count runs ran under valgrind: their clock says nothing.
    for run in c.runs.iter_mut().filter(|x| !x.instruction_run) {
        let mut why = Vec::new();
        // Steal, when the run carries it, is part of the machine's disturbance.
        let machine = run.machine_disturbance();
        if let Some(s) = &run.system {
            if run.steal_pct.is_none() && s.cpu_steal_pct > STEAL_PCT {
                why.push(format!("CPU steal {:.0}%", s.cpu_steal_pct));
            }
            if softirq.is_some_and(|m| s.cpu_softirq_pct > m + SOFTIRQ_EXCESS_PCT) {
                why.push(format!("softirq {:.0}%", s.cpu_softirq_pct));
            }
        }
        if let Some(m) = machine {
            why.push(format!("machine busy: {m}"));
        }
        if run.client_bound {
            why.push("client-bound".to_string());
        }
        if let (Some(m), Some(d)) = (centre, mad) {
            if run.valid
                && !run.instruction_run
                && ops.len() >= 5
                && d > 0.0
                && (run.ops_per_s - m).abs() > OUTLIER_SIGMAS * 1.4826 * d
            {
                why.push(format!(
                    "outlier {:+.0}% from the cell's median",
                    (run.ops_per_s / m - 1.0) * 100.0
                ));
            }
        }
        run.disturbed = (!why.is_empty()).then(|| why.join(", "));
    }
}

fn summarize_cell(c: &mut Cell) {
    mark_disturbed(c);
    c.layouts = layout_spread(c);
    let valid: Vec<_> = c.runs.iter().filter(|x| x.valid).collect();
    c.system = system_means(&valid);
    let ipo: Vec<f64> = valid
        .iter()
        .filter_map(|x| x.instructions.as_ref().map(|i| i.instructions_per_op))
        .collect();
    c.instructions_per_op = stats::summarize(&ipo).map(|s| s.median);
    // The cell's throughput and latency come from the wall-clock runs alone; in mode
    // both, the instruction runs (under callgrind) only give instructions per op.
    let valid: Vec<_> = valid.into_iter().filter(|x| !x.instruction_run).collect();
    let ops: Vec<f64> = valid.iter().map(|x| x.ops_per_s).collect();
    c.valid_runs = valid.len();
    c.client_bound_runs = c
        .runs
        .iter()
        .filter(|x| x.client_bound && !x.instruction_run)
        .count();
    c.machine_busy_runs = c
        .runs
        .iter()
        .filter(|x| x.valid && x.machine_disturbance().is_some())
        .count();
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

/// The figure runs are compared by: throughput, or in instructions mode operations per
/// billion instructions (so "faster" still means a higher figure).
fn compared_figure(x: &Run) -> f64 {
    match &x.instructions {
        Some(i) if i.instructions_per_op > 0.0 => 1e9 / i.instructions_per_op,
        _ => x.ops_per_s,
    }
}

/// Means of the runs' sampler summaries (maxima for the max fields).
fn system_means(runs: &[&bakeoff_report::model::Run]) -> Option<SystemRecord> {
    let s: Vec<&SystemRecord> = runs.iter().filter_map(|r| r.system.as_ref()).collect();
    if s.is_empty() {
        return None;
    }
    let n = s.len() as f64;
    let mean = |f: fn(&SystemRecord) -> f64| s.iter().map(|x| f(x)).sum::<f64>() / n;
    let max = |f: fn(&SystemRecord) -> f64| s.iter().map(|x| f(x)).fold(0.0, f64::max);
    Some(SystemRecord {
        cpu_user_pct: mean(|x| x.cpu_user_pct),
        cpu_system_pct: mean(|x| x.cpu_system_pct),
        cpu_idle_pct: mean(|x| x.cpu_idle_pct),
        cpu_iowait_pct: mean(|x| x.cpu_iowait_pct),
        cpu_softirq_pct: mean(|x| x.cpu_softirq_pct),
        cpu_steal_pct: mean(|x| x.cpu_steal_pct),
        server_cpu_pct_mean: mean(|x| x.server_cpu_pct_mean),
        server_cpu_pct_max: max(|x| x.server_cpu_pct_max),
        server_rss_kib_max: s.iter().map(|x| x.server_rss_kib_max).max().unwrap_or(0),
        ctx_switches_per_op: mean(|x| x.ctx_switches_per_op),
        disk_read_bytes: mean(|x| x.disk_read_bytes as f64) as u64,
        disk_write_bytes: mean(|x| x.disk_write_bytes as f64) as u64,
        disk_util_pct_max: max(|x| x.disk_util_pct_max),
        loopback_bytes_per_op: mean(|x| x.loopback_bytes_per_op),
        series: None,
        cpu_series: Vec::new(),
    })
}

/// How a cell's valid runs spread within and between the layouts they ran (None unless
/// they ran at least two).
fn layout_spread(c: &Cell) -> Option<bakeoff_report::model::LayoutSpreadRecord> {
    let runs: Vec<(usize, f64)> = c
        .runs
        .iter()
        .filter(|x| x.valid && !x.instruction_run)
        .filter_map(|x| x.layout.map(|l| (l, x.ops_per_s)))
        .collect();
    let s = stats::layout_spread(&runs)?;
    Some(bakeoff_report::model::LayoutSpreadRecord {
        layouts: s.layouts,
        between_runs: s.between_runs,
        between_layouts: s.between_layouts,
        range: s.range,
        medians: s.medians.iter().map(|m| m.1).collect(),
    })
}

/// A cell's valid figures tagged with their round, for pairing: those of its wall-clock
/// runs (`instruction_runs` false: throughput, or in mode instructions operations per
/// billion instructions), or of its instruction-count runs in mode both (operations per
/// billion instructions), each numbered by its own rounds.
fn by_round(c: &Cell, instruction_runs: bool) -> Vec<(usize, f64)> {
    c.runs
        .iter()
        .filter(|x| x.valid && x.instruction_run == instruction_runs)
        .map(|x| (x.round, compared_figure(x)))
        .collect()
}

/// A member of the experiment's family: a cell's pair (its throughput, or its
/// instruction runs in mode both), or a capacity cell.
enum Tag<'a> {
    Pair(&'a Cell, bool),
    Capacity(&'a Cell),
}

/// A cell's pair against the baseline's cell of the same point: both sides by round,
/// the layout slots, the metric's resolution and what held the sides.
struct PairSides<'a> {
    cell: &'a Cell,
    instruction_runs: bool,
    baseline: Vec<(usize, f64)>,
    candidate: Vec<(usize, f64)>,
    layouts: Option<usize>,
    resolution: f64,
    holds: stats::Holds,
}

/// Every cell against the baseline's cell of the same point, decided together: one
/// false-discovery-rate family per experiment, holding both metrics in mode both (a
/// throughput record per cell, then an instruction-count record per cell) and the
/// capacities.
fn comparisons(r: &Results) -> Vec<ComparisonRecord> {
    let rule = r.rule(Direction::HigherIsBetter);
    let index = bakeoff_report::index::Index::new(r);
    let pairs = pair_sides(r, &index);
    // A capacity cell's holds: its searches client-bound, or disturbed by others.
    let capacity = |cell: Option<&Cell>, of: fn(&CapacityRecord) -> bool| {
        cell.and_then(|x| x.capacity.as_ref()).is_some_and(of)
    };
    let mut family = stats::Family::new();
    for p in &pairs {
        family.pair(
            Tag::Pair(p.cell, p.instruction_runs),
            stats::Sample::Rounds(&p.baseline),
            stats::Sample::Rounds(&p.candidate),
            p.layouts,
            Some(p.resolution),
            p.holds,
        );
    }
    for (c, k) in crate::capacity_figures::comparisons(r, &rule) {
        let base = index.cell(&c.workload, &r.plan.baseline, c.connections);
        let holds = stats::Holds {
            baseline_held: capacity(base, |k| k.client_bound),
            candidate_held: capacity(Some(c), |k| k.client_bound),
            baseline_busy: capacity(base, |k| k.machine_busy),
            candidate_busy: capacity(Some(c), |k| k.machine_busy),
        };
        family.made(Tag::Capacity(c), k, holds);
    }
    let precision = r.plan.precision.unwrap_or(r.plan.equivalence);
    let mut found = Vec::new();
    let mut capacities = Vec::new();
    for (tag, k) in family.decide(&rule) {
        match tag {
            Tag::Pair(c, instruction_runs) => found.push((c, instruction_runs, k)),
            Tag::Capacity(c) => {
                let mut rec = ComparisonRecord::new(
                    &c.workload,
                    c.connections,
                    &c.variant,
                    &r.plan.baseline,
                    &k,
                    precision,
                );
                rec.metric = CAPACITY.to_string();
                capacities.push(rec);
            }
        }
    }
    let mut ordered = ordered(pair_records(r, &index, &found, precision));
    ordered.extend(capacities);
    ordered
}

/// The family's pairs: every cell but the baseline's and capacity cells (a capacity
/// cell's closed-loop peak ran once per variant: its capacities compare), its
/// throughput and then its instruction runs of mode both.
fn pair_sides<'a>(r: &'a Results, index: &bakeoff_report::index::Index<'a>) -> Vec<PairSides<'a>> {
    let baseline = &r.plan.baseline;
    let mut pairs = Vec::new();
    // Lookups by name built once: a folder may hold thousands of variants.
    let mut layouts_of = std::collections::HashMap::new();
    for v in &r.variants {
        layouts_of.entry(v.name.as_str()).or_insert(v.layouts.len());
    }
    let layouts = |name: &str| layouts_of.get(name).copied().unwrap_or(0);
    let precision = r.plan.precision.unwrap_or(r.plan.equivalence);
    for instruction_runs in [false, true] {
        for c in r
            .cells
            .iter()
            .filter(|c| &c.variant != baseline && c.capacity.is_none())
        {
            let Some(b) = index.cell(&c.workload, baseline, c.connections) else {
                continue;
            };
            // Over layouts when either side was built in several: a layout's luck is drawn
            // once per binary, so the layout slots, not the rounds, are the repetitions.
            let nested = (!instruction_runs && layouts(baseline).max(layouts(&c.variant)) > 1)
                .then_some(r.plan.layouts);
            let resolution = if instruction_runs || counted_cell(c, instruction_runs) {
                instruction_resolution([Some(b), Some(c)], instruction_runs)
            } else {
                precision
            };
            // Under callgrind the server, never the load, sets the pace; and other
            // processes' CPU moves the clock, not the instruction count.
            let holds = if instruction_runs {
                stats::Holds::default()
            } else {
                stats::Holds {
                    baseline_held: b.held_back(),
                    candidate_held: c.held_back(),
                    baseline_busy: b.machine_busy(),
                    candidate_busy: c.machine_busy(),
                }
            };
            pairs.push(PairSides {
                cell: c,
                instruction_runs,
                baseline: by_round(b, instruction_runs),
                candidate: by_round(c, instruction_runs),
                layouts: nested,
                resolution,
                holds,
            });
        }
    }
    pairs
}

/// The decided pairs' records: the metric, what more rounds would cost, whether the
/// difference is within two layouts' spread.
fn pair_records(
    r: &Results,
    index: &bakeoff_report::index::Index,
    found: &[(&Cell, bool, stats::Comparison)],
    precision: f64,
) -> Vec<ComparisonRecord> {
    let rounds = round_seconds_all(r);
    found
        .iter()
        .map(|(c, instruction_runs, k)| {
            let mut rec = ComparisonRecord::new(
                &c.workload,
                c.connections,
                &c.variant,
                &r.plan.baseline,
                k,
                precision,
            );
            if *instruction_runs || counted_cell(c, *instruction_runs) {
                rec.metric = INSTRUCTIONS.to_string();
            }
            let round = rounds
                .get(&(c.workload.as_str(), c.connections, *instruction_runs))
                .copied()
                .unwrap_or(0.0);
            rec.more_seconds = rec.more_rounds.map(|n| n as f64 * round);
            if !*instruction_runs {
                let base = index.cell(&c.workload, &rec.baseline, c.connections);
                rec.within_layout_spread = within_layout_spread(c, base, &rec);
            }
            rec
        })
        .collect()
}

/// The key of one comparison, whatever its metric.
type Key = (String, usize, String, String);

fn key(k: &ComparisonRecord) -> Key {
    (
        k.workload.clone(),
        k.connections,
        k.variant.clone(),
        k.baseline.clone(),
    )
}

/// The records with each throughput record's disagreement with its instruction-count
/// record marked, and each instruction record right after its throughput record: the
/// second line of the same comparison wherever they are listed.
fn ordered(mut records: Vec<ComparisonRecord>) -> Vec<ComparisonRecord> {
    let whys: Vec<Option<String>> = {
        let mut counted_at: std::collections::HashMap<Key, &ComparisonRecord> = Default::default();
        for i in records.iter().filter(|i| i.is_instructions()) {
            counted_at.entry(key(i)).or_insert(i);
        }
        records
            .iter()
            .map(|k| {
                if k.is_instructions() {
                    return None;
                }
                disagreement(k, counted_at.get(&key(k))?)
            })
            .collect()
    };
    for (k, why) in records.iter_mut().zip(whys) {
        k.disagrees = why;
    }
    let (time, counted): (Vec<_>, Vec<_>) = records.into_iter().partition(|k| !k.is_instructions());
    let mut first_of: std::collections::HashMap<_, Vec<usize>> = Default::default();
    for (i, k) in counted.iter().enumerate() {
        first_of.entry(key(k)).or_default().push(i);
    }
    for at in first_of.values_mut() {
        at.reverse();
    }
    let mut counted: Vec<Option<ComparisonRecord>> = counted.into_iter().map(Some).collect();
    let mut ordered = Vec::with_capacity(time.len() + counted.len());
    for k in time {
        let beside = first_of.get_mut(&key(&k)).and_then(Vec::pop);
        ordered.push(k);
        ordered.extend(beside.and_then(|i| counted[i].take()));
    }
    ordered.extend(counted.into_iter().flatten());
    ordered
}

/// Whether a cell's figures compared (its instruction runs in mode both, else its runs)
/// are all instruction counts.
fn counted_cell(c: &Cell, instruction_runs: bool) -> bool {
    c.runs
        .iter()
        .filter(|x| x.valid && x.instruction_run == instruction_runs)
        .all(|x| x.instructions.is_some())
}

/// The run-to-run spread of one binary's instruction count per operation, taken as
/// known when a side's runs cannot measure it (memcached under a kv load: how requests
/// batch per wakeup moves the count by about this much between runs).
pub const INSTRUCTION_SPREAD: f64 = 0.005;

/// The smallest difference in instructions per operation a comparison resolves:
/// `RESOLUTION_SPREADS` times the larger of [`INSTRUCTION_SPREAD`] and the spread
/// measured in this comparison (the root mean square of each run's relative deviation
/// from its side's median, both sides pooled: outliers widen it, as they should). Below
/// it a difference is the batching of requests, not the code; so at least 1.25%.
fn instruction_resolution(cells: [Option<&Cell>; 2], instruction_runs: bool) -> f64 {
    let mut deviations: Vec<f64> = Vec::new();
    for c in cells.into_iter().flatten() {
        let xs: Vec<f64> = c
            .runs
            .iter()
            .filter(|x| x.valid && x.instruction_run == instruction_runs)
            .filter_map(|x| x.instructions.as_ref().map(|i| i.instructions_per_op))
            .filter(|x| x.is_finite() && *x > 0.0)
            .collect();
        let Some(m) = stats::summarize(&xs).map(|s| s.median) else {
            continue;
        };
        if xs.len() >= 3 && m > 0.0 {
            deviations.extend(xs.iter().map(|x| (x / m).ln()));
        }
    }
    let measured = if deviations.is_empty() {
        0.0
    } else {
        (deviations.iter().map(|d| d * d).sum::<f64>() / deviations.len() as f64).sqrt()
    };
    RESOLUTION_SPREADS * measured.max(INSTRUCTION_SPREAD)
}

/// How many run-to-run spreads of the instruction count make its resolution: with 2.5,
/// one binary against itself comes out faster or slower in 0 of 5,000 scripted
/// comparisons (noise_tests.rs), and 3% more instructions is found in 98% of them.
const RESOLUTION_SPREADS: f64 = 2.5;

/// Why a throughput answer and the instruction count's answer of the same cell point
/// opposite ways, when they do (one faster, the other slower); None otherwise.
pub fn disagreement(time: &ComparisonRecord, counted: &ComparisonRecord) -> Option<String> {
    use bakeoff_report::model::Verdict::{Faster, Slower};
    let per_op = |k: &ComparisonRecord| (1.0 / k.ratio - 1.0).abs() * 100.0;
    let (what, how) = match (time.verdict, counted.verdict) {
        (Slower, Faster) => (
            "slower although it runs fewer instructions per operation",
            per_op(counted),
        ),
        (Faster, Slower) => (
            "faster although it runs more instructions per operation",
            per_op(counted),
        ),
        _ => return None,
    };
    Some(format!(
        "{what} ({how:.1}% {}): the time goes to cache misses, branch mispredictions, locks or I/O rather than to instructions; [measure] counters = true, or profile = true in a mode = \"time\" experiment, shows which",
        if counted.verdict == Faster { "fewer" } else { "more" }
    ))
}

/// Whether a comparison's difference is no larger than the difference between two
/// layouts of the baseline or of the candidate in that cell.
fn within_layout_spread(c: &Cell, base: Option<&Cell>, k: &ComparisonRecord) -> bool {
    let range = [Some(c), base]
        .into_iter()
        .flatten()
        .filter_map(|x| x.layouts.as_ref().map(|l| l.range))
        .fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.max(x))));
    range.is_some_and(|range| (k.ratio.ln().abs()) <= (1.0 + range).ln())
}

/// How long one round of a point takes: the median wall time of each variant's runs
/// there, summed (None-timed runs count as their measured window). The wall-clock rounds
/// only; `instruction_round_seconds` for the instruction runs of mode both.
pub fn round_seconds(r: &Results, workload: &str, connections: usize) -> f64 {
    round_seconds_of(r, workload, connections, false)
}

/// How long one round of a point's instruction-count runs takes (mode both), as
/// `round_seconds`; 0 before any ran.
pub fn instruction_round_seconds(r: &Results, workload: &str, connections: usize) -> f64 {
    round_seconds_of(r, workload, connections, true)
}

/// [`round_seconds_of`] of every point and both kinds of runs, in one pass over the cells.
fn round_seconds_all(r: &Results) -> std::collections::HashMap<(&str, usize, bool), f64> {
    let mut out = std::collections::HashMap::new();
    for c in &r.cells {
        for counted in [false, true] {
            *out.entry((c.workload.as_str(), c.connections, counted))
                .or_insert(0.0) += cell_round_seconds(c, counted);
        }
    }
    out
}

/// The median wall time of a cell's runs (of one kind): its share of a round.
fn cell_round_seconds(c: &Cell, counted: bool) -> f64 {
    let walls: Vec<f64> = c
        .runs
        .iter()
        .filter(|x| x.instruction_run == counted)
        .map(|x| x.wall_s.unwrap_or(x.elapsed_s))
        .collect();
    stats::summarize(&walls).map_or(0.0, |s| s.median)
}

fn round_seconds_of(r: &Results, workload: &str, connections: usize, counted: bool) -> f64 {
    r.cells
        .iter()
        .filter(|c| c.workload == workload && c.connections == connections)
        .map(|c| cell_round_seconds(c, counted))
        .sum()
}

/// Settings that decide what reaches the disk and when: compared on a RAM-backed
/// filesystem they measure nothing, since fsync there costs nothing.
const DURABILITY: &[&str] = &[
    "synchronous_commit",
    "fsync",
    "wal_sync_method",
    "full_page_writes",
    "commit_delay",
    "innodb_flush_log_at_trx_commit",
    "innodb_flush_method",
    "innodb_doublewrite",
    "sync_binlog",
    "appendfsync",
    "appendonly",
    "save",
    "synchronous",
    "journal_mode",
];

/// A warning when the variants differ in a durability setting and the data was on a
/// RAM-backed filesystem.
fn durability_on_tmpfs(r: &Results) -> Option<String> {
    let fs = r.host.sandbox_fs.as_deref()?;
    if !matches!(fs, "tmpfs" | "ramfs") {
        return None;
    }
    let norm = |k: &str| k.to_ascii_lowercase().replace('-', "_");
    let differs: Vec<&str> = DURABILITY
        .iter()
        .copied()
        .filter(|key| {
            let values: std::collections::BTreeSet<Option<&String>> = r
                .variants
                .iter()
                .map(|v| v.options.iter().find(|(k, _)| norm(k) == *key).map(|x| x.1))
                .collect();
            values.len() > 1
        })
        .collect();
    (!differs.is_empty()).then(|| {
        format!(
            "the variants differ in {} and the data was on {fs} ({}): there fsync costs nothing and no read touches a disk, so this compares nothing durable; set [plan] sandbox_dir (or --sandbox-dir) to a folder on a disk",
            differs.join(", "),
            r.host.sandbox_dir.as_deref().unwrap_or("the sandbox folder")
        )
    })
}

/// The warnings a reader must see first, each with its code: the machine's and the
/// hosts', the answers', then each cell's, then the variants that failed.
pub(crate) fn warnings(r: &Results) -> Vec<Warning> {
    let mut w = Vec::new();
    w.extend(crate::aa::warning(r).map(|t| Warning::new(Code::AaDiffers, t)));
    w.extend(durability_on_tmpfs(r).map(|t| Warning::new(Code::DurabilityOnTmpfs, t)));
    for h in &r.hosts {
        let exposed = h.listen.as_ref().filter(|a| {
            a.parse::<std::net::IpAddr>()
                .is_ok_and(|ip| !ip.is_loopback())
        });
        if let Some(addr) = exposed {
            w.push(Warning::new(Code::ExposedListen, format!(
                "the server on host {} listens on {addr}, not on loopback: anything on its network can reach it while the experiment runs",
                h.name
            )));
        }
    }
    w.extend(answer_warnings(r));
    if let Some(n) = r
        .plan
        .repetitions
        .filter(|n| *n < 4 && !r.comparisons.is_empty())
    {
        w.push(Warning::new(Code::TooFewRepetitions, format!(
            "{n} repetitions per cell: too few for the rank tests to reach p < 0.05, so no verdict can be faster, slower or equivalent; use a budget, or at least 6 repetitions"
        )));
    }
    for k in r.comparisons.iter().filter(|k| k.within_layout_spread) {
        w.push(Warning::new(Code::WithinLayoutSpread, format!(
            "{}: {:+.1}% against {} is no larger than the difference between two code layouts of one of them: it may be where the linker put the code, not the change",
            cell_label(&k.variant, &k.workload, k.connections),
            (k.ratio - 1.0) * 100.0,
            k.baseline
        )));
    }
    for c in &r.cells {
        w.extend(cell_warnings(c));
    }
    for v in r.variants.iter().filter(|v| v.status != "ok") {
        w.push(Warning::new(
            Code::VariantFailed,
            format!(
                "variant {} failed: {}",
                v.name,
                v.error.as_deref().unwrap_or("unknown error")
            ),
        ));
    }
    w
}

/// Verification's findings: answers that differ from the baseline's, verifications
/// skipped, and memory or threading errors.
fn answer_warnings(r: &Results) -> Vec<Warning> {
    let mut w = Vec::new();
    for v in &r.verification {
        if let Some(d) = v.differences.first() {
            let short: String = d.query.chars().take(100).collect();
            w.push(Warning::new(Code::VerifyFailed, format!(
                "VERIFY FAILED: variant {} returned different results than the baseline for {} of {} queries; first: {}{short} (hash {} vs baseline {})",
                v.variant,
                v.differences.len(),
                v.queries,
                if d.line > 0 {
                    format!("line {}: ", d.line)
                } else {
                    String::new()
                },
                d.hash,
                d.baseline_hash
            )));
        } else if v.status == "skipped" {
            w.push(Warning::new(
                Code::VerifySkipped,
                format!(
                    "verification of variant {} skipped: {}",
                    v.variant,
                    v.note.as_deref().unwrap_or("no reason given")
                ),
            ));
        }
    }
    for v in r.variants.iter().filter(|v| !v.memory_errors.is_empty()) {
        let first = &v.memory_errors[0];
        let what = if v
            .memory_errors
            .iter()
            .all(|e| matches!(e.tool.as_str(), "tsan" | "helgrind"))
        {
            "threading"
        } else {
            "memory"
        };
        w.push(Warning::new(
            Code::MemoryErrors,
            format!(
                "VERIFY FAILED: variant {} has {} {what} error(s) ({}); first: {} {}{}",
                v.name,
                v.memory_errors.len(),
                first.tool,
                first.kind,
                first.message,
                first
                    .stack
                    .first()
                    .map(|f| format!(" at {f}"))
                    .unwrap_or_default()
            ),
        ));
    }
    w
}

/// A cell's warnings: wrong answers, invalid runs, runs the load or other processes
/// paced.
fn cell_warnings(c: &Cell) -> Vec<Warning> {
    let mut w = Vec::new();
    let at = cell_label(&c.variant, &c.workload, c.connections);
    if c.verify_failures > 0 {
        w.push(Warning::new(
            Code::WrongAnswers,
            format!(
                "{at}: {} wrong answers (verify failures); its figures mean nothing",
                c.verify_failures
            ),
        ));
    }
    let invalid: Vec<&str> = c
        .runs
        .iter()
        .filter(|x| !x.valid)
        .filter_map(|x| x.invalid_reason.as_deref())
        .collect();
    if !invalid.is_empty() {
        w.push(Warning::new(
            Code::InvalidRuns,
            format!(
                "{at}: {} of {} runs invalid ({})",
                invalid.len(),
                c.runs.len(),
                invalid[0]
            ),
        ));
    }
    if c.client_bound_runs > 0 {
        w.push(Warning::new(
            Code::ClientBound,
            format!(
                "{at}: {} of {} runs client-bound: the load engine, not the server, set the pace",
                c.client_bound_runs,
                c.runs.iter().filter(|x| !x.instruction_run).count()
            ),
        ));
    }
    if c.machine_busy_runs > 0 {
        let top: Vec<String> = c
            .busiest_others()
            .iter()
            .take(3)
            .map(|o| format!("{} {:.0}% of the CPUs", o.name, o.cpu_pct))
            .collect();
        w.push(Warning::new(
            Code::MachineBusy,
            format!(
                "{at}: {} of {} runs disturbed by other processes of the machine{}",
                c.machine_busy_runs,
                c.runs
                    .iter()
                    .filter(|x| x.valid && !x.instruction_run)
                    .count(),
                if top.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", top.join(", "))
                }
            ),
        ));
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;
    use bakeoff_report::model::Verdict;
    use bakeoff_report::model::{PlanRecord, Run};

    fn run(ops: f64, valid: bool) -> Run {
        Run {
            ops_per_s: ops,
            valid,
            invalid_reason: (!valid).then(|| "server exited mid-run".to_string()),
            latency_us: Latency {
                p50: 10.0,
                p99: 50.0,
                ..Latency::default()
            },
            ..Run::default()
        }
    }

    fn cell(variant: &str, runs: Vec<Run>) -> Cell {
        Cell::new("kv", variant, 16, runs)
    }

    /// Valid runs at these throughputs, one a round from round 0.
    fn rounds(ops: impl IntoIterator<Item = f64>) -> Vec<Run> {
        ops.into_iter()
            .enumerate()
            .map(|(i, ops)| Run {
                round: i,
                ..run(ops, true)
            })
            .collect()
    }

    /// [`results`] of `cells`, analyzed.
    fn analyzed(repetitions: usize, cells: Vec<Cell>) -> Results {
        let mut r = results(repetitions, cells);
        analyze(&mut r);
        r
    }

    /// Mode both over ten rounds (eight counted) of the baseline "a" (100,000 ops/s at
    /// 5,000 instructions per op) and `others` (variant, ops/s, instructions per op),
    /// analyzed.
    fn both(others: [(&str, f64, f64); 2]) -> Results {
        let mut cells = vec![both_cell("a", 100_000.0, 5_000.0, 10, 8)];
        cells.extend(others.map(|(v, ops, per_op)| both_cell(v, ops, per_op, 10, 8)));
        analyzed(10, cells)
    }

    fn results(repetitions: usize, cells: Vec<Cell>) -> Results {
        Results {
            name: "t".into(),
            plan: PlanRecord {
                repetitions: Some(repetitions),
                duration_s: Some(1.0),
                seed: 1,
                baseline: "a".into(),
                ..PlanRecord::default()
            },
            cells,
            ..Results::default()
        }
    }

    /// A simulated experiment: three candidates over ten paired rounds, one a little
    /// faster in nine of them. Its plain 95% interval excludes 1; over the three
    /// comparisons its interval is the wider adjusted one, which covers 1, so its answer
    /// (inconclusive) and the interval shown agree, and the explanation says both.
    #[test]
    fn an_interval_that_excludes_1_only_unadjusted_sits_beside_an_agreeing_answer() {
        let rounds = |logs: &[f64]| rounds(logs.iter().map(|x| 1000.0 * x.exp()));
        let up = [
            0.031, 0.024, 0.045, 0.012, -0.008, 0.038, -0.019, 0.027, 0.05, 0.002,
        ];
        let flat: Vec<f64> = up
            .iter()
            .enumerate()
            .map(|(i, x)| if i % 2 == 0 { *x } else { -*x })
            .collect();
        let r = analyzed(
            10,
            vec![
                cell("a", rounds(&[0.0; 10])),
                cell("b", rounds(&up)),
                cell("c", rounds(&flat)),
                cell("d", rounds(&flat)),
            ],
        );
        let k = r.comparison("kv", "b", 16).unwrap();
        let [lo, hi] = k
            .ci95_unadjusted
            .expect("adjusted, so the plain one is kept");
        assert!(lo > 1.0 && hi > lo, "plain 95% [{lo}, {hi}]");
        assert!((k.ci_level - (1.0 - 0.05 / 3.0)).abs() < 1e-9);
        assert!(k.ci95[0] <= 1.0 && k.ci95[1] >= 1.0, "{:?}", k.ci95);
        assert_eq!(k.verdict, Verdict::Inconclusive);
        for k in &r.comparisons {
            let excludes = k.ci95[0] > 1.0 || k.ci95[1] < 1.0;
            assert_eq!(
                excludes,
                matches!(k.verdict, Verdict::Faster | Verdict::Slower),
                "{k:?}"
            );
        }
        let notes = bakeoff_report::summary::explanations(&r);
        let line = notes.iter().find(|l| l.contains("kv x16 b")).unwrap();
        assert!(
            line.contains("between") && line.contains("faster"),
            "{line}"
        );
        assert!(line.contains("excludes 1 at p"), "{line}");
    }

    #[test]
    fn invalid_runs_are_left_out_and_reported() {
        let a = cell(
            "a",
            (0..5).map(|i| run(100.0 + f64::from(i), true)).collect(),
        );
        let mut b_runs: Vec<Run> = (0..5).map(|i| run(130.0 + f64::from(i), true)).collect();
        b_runs.push(run(1.0, false));
        let r = analyzed(5, vec![a, cell("b", b_runs)]);
        let b = r.cell("kv", "b", 16).unwrap();
        assert_eq!((b.valid_runs, b.median_ops_per_s), (5, 132.0));
        assert_eq!(b.latency_us.p99, 50.0);
        let k = r.comparison("kv", "b", 16).unwrap();
        assert_eq!(k.verdict, Verdict::Faster);
        assert!((k.ratio - 132.0 / 102.0).abs() < 1e-9);
        assert!(
            r.warnings
                .iter()
                .any(|w| w.contains("1 of 6 runs invalid (server exited mid-run)")),
            "{:?}",
            r.warnings
        );
    }

    #[test]
    fn verify_failures_and_too_few_repetitions_are_warned_first() {
        let mut bad = run(100.0, false);
        bad.verify_failures = 3;
        let r = analyzed(
            2,
            vec![
                cell("a", vec![run(100.0, true), run(101.0, true)]),
                cell("b", vec![bad, run(100.0, true)]),
            ],
        );
        assert!(r.warnings[0].contains("too few"), "{:?}", r.warnings);
        assert!(r.warnings.iter().any(|w| w.contains("wrong answers")));
        assert_eq!(r.cell("kv", "b", 16).unwrap().verify_failures, 3);
    }

    /// Mode both: `rounds` wall-clock runs per variant at `ops` (+-1% by round) and
    /// `counted` instruction-count runs at `per_op` instructions per operation.
    fn both_cell(variant: &str, ops: f64, per_op: f64, rounds: usize, counted: usize) -> Cell {
        let wobble = |i: usize| 1.0 + 0.01 * ((i * 7 % 5) as f64 - 2.0) / 2.0;
        let mut runs = self::rounds((0..rounds).map(|i| ops * wobble(i)));
        for x in &mut runs {
            x.wall_s = Some(1.5);
        }
        runs.extend((0..counted).map(|i| Run {
            round: i,
            instruction_run: true,
            wall_s: Some(6.0),
            instructions: Some(bakeoff_report::model::InstructionsRecord {
                instructions: (per_op * 3000.0) as u64,
                instructions_per_op: per_op * (1.0 + 1e-4 * (i % 3) as f64),
                ..Default::default()
            }),
            // Under callgrind the server is ~50 times slower.
            ..run(ops / 50.0, true)
        }));
        cell(variant, runs)
    }

    #[test]
    fn mode_both_gives_one_record_per_metric_decided_together() {
        // "work" is 10% slower and runs 20% more instructions per op: both slower, and
        // the identical build neither faster nor slower on either.
        let r = both([("same", 100_000.0, 5_000.0), ("work", 90_000.0, 6_000.0)]);
        assert_eq!(r.comparisons.len(), 4, "{:?}", r.comparisons);
        let of = |variant: &str, metric: &str| {
            r.comparisons
                .iter()
                .find(|k| k.variant == variant && k.metric == metric)
                .unwrap_or_else(|| panic!("no {metric} record for {variant}"))
        };
        let (time, counted) = (of("work", "throughput"), of("work", INSTRUCTIONS));
        assert_eq!(
            (time.verdict, counted.verdict),
            (Verdict::Slower, Verdict::Slower)
        );
        assert!((time.ratio - 0.9).abs() < 0.01, "{}", time.ratio);
        assert!(
            (counted.ratio - 5.0 / 6.0).abs() < 0.001,
            "{}",
            counted.ratio
        );
        assert_eq!((counted.rounds, counted.paired), (8, true));
        assert!(time.disagrees.is_none());
        for metric in ["throughput", INSTRUCTIONS] {
            let k = of("same", metric);
            assert!(
                !matches!(k.verdict, Verdict::Faster | Verdict::Slower),
                "{metric}: {:?}",
                k.verdict
            );
        }
        // One family: the p-values are adjusted over all four, both metrics together.
        let p: Vec<f64> = r.comparisons.iter().map(|k| k.p_value).collect();
        let adjusted: Vec<f64> = r.comparisons.iter().map(|k| k.p_adjusted).collect();
        assert_eq!(adjusted, stats::benjamini_hochberg(&p));
        // The cell's throughput and latency come from the wall-clock runs alone.
        let a = r.cell("kv", "a", 16).unwrap();
        assert_eq!(a.valid_runs, 10);
        assert!(a.median_ops_per_s > 99_000.0, "{}", a.median_ops_per_s);
        assert!((a.instructions_per_op.unwrap() - 5_000.0).abs() < 1.0);
        // Each metric's round time: the wall-clock rounds and the counted ones apart.
        assert!((round_seconds(&r, "kv", 16) - 4.5).abs() < 1e-9);
        assert!((instruction_round_seconds(&r, "kv", 16) - 18.0).abs() < 1e-9);
        // The headline is the throughput record; the instruction one sits beside it.
        let head = r.comparison("kv", "work", 16).unwrap();
        assert_eq!(head.metric, "throughput");
        assert_eq!(r.headline_comparisons().count(), 2);
        assert_eq!(r.instructions_beside(head).unwrap().metric, INSTRUCTIONS);
    }

    #[test]
    fn mode_both_flags_fewer_instructions_but_slower() {
        // "lean" runs 10% fewer instructions per op but is 10% slower on the clock (the
        // cost is elsewhere: cache misses, locks); "heavy" the reverse.
        let r = both([("lean", 90_000.0, 4_500.0), ("heavy", 110_000.0, 5_500.0)]);
        let lean = r.comparison("kv", "lean", 16).unwrap();
        assert_eq!(lean.verdict, Verdict::Slower);
        assert_eq!(
            r.instructions_beside(lean).unwrap().verdict,
            Verdict::Faster
        );
        let why = lean.disagrees.as_deref().expect("a disagreement");
        assert!(why.contains("fewer instructions per operation"), "{why}");
        assert!(
            why.contains("cache misses") && why.contains("counters"),
            "{why}"
        );
        let heavy = r.comparison("kv", "heavy", 16).unwrap();
        assert_eq!(heavy.verdict, Verdict::Faster);
        let why = heavy.disagrees.as_deref().expect("a disagreement");
        assert!(why.contains("more instructions per operation"), "{why}");
        // Only the throughput record carries the flag.
        assert!(r
            .comparisons
            .iter()
            .filter(|k| k.is_instructions())
            .all(|k| k.disagrees.is_none()));
    }

    #[test]
    fn mode_both_client_bound_rounds_void_throughput_only() {
        let bound = |c: &mut Cell| {
            for x in c.runs.iter_mut().filter(|x| !x.instruction_run) {
                x.client_bound = true;
            }
        };
        let mut a = both_cell("a", 100_000.0, 5_000.0, 10, 8);
        let mut b = both_cell("b", 90_000.0, 6_000.0, 10, 8);
        bound(&mut a);
        bound(&mut b);
        let r = analyzed(10, vec![a, b]);
        let head = r.comparison("kv", "b", 16).unwrap();
        assert_eq!(head.verdict, Verdict::ClientBound);
        assert_eq!(
            r.instructions_beside(head).unwrap().verdict,
            Verdict::Slower
        );
        assert!(
            r.warnings
                .iter()
                .any(|w| w.contains("10 of 10 runs client-bound")),
            "{:?}",
            r.warnings
        );
    }

    #[test]
    fn mode_instructions_records_say_instructions() {
        let counted = |variant: &str, per_op: f64| {
            let runs = (0..8)
                .map(|i| Run {
                    round: i,
                    instructions: Some(bakeoff_report::model::InstructionsRecord {
                        instructions_per_op: per_op + i as f64,
                        ..Default::default()
                    }),
                    ..run(2_000.0, true)
                })
                .collect();
            cell(variant, runs)
        };
        let r = analyzed(8, vec![counted("a", 5_000.0), counted("b", 6_000.0)]);
        assert_eq!(r.comparisons.len(), 1);
        let k = &r.comparisons[0];
        assert_eq!(
            (k.metric.as_str(), k.verdict),
            (INSTRUCTIONS, Verdict::Slower)
        );
        assert_eq!(r.headline_comparisons().count(), 1);
    }

    /// Random mutations of a results.json's numbers and structure: reading, analyzing and
    /// rendering every report never panics (`bakeoff report` and `compare` do exactly
    /// this with a folder they are given).
    #[test]
    fn property_mutated_results_never_panic_any_exporter() {
        let runs = |base: f64| rounds((0..8u32).map(|i| base + f64::from(i)));
        let r = analyzed(8, vec![cell("a", runs(100.0)), cell("b", runs(104.0))]);
        let text = serde_json::to_string(&r).expect("json");
        let numbers: Vec<(usize, usize)> = {
            let b = text.as_bytes();
            let mut out = Vec::new();
            let mut i = 0;
            while i < b.len() {
                if b[i].is_ascii_digit() && (i == 0 || !b[i - 1].is_ascii_alphanumeric()) {
                    let start = i;
                    while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'.' || b[i] == b'e') {
                        i += 1;
                    }
                    out.push((start, i));
                } else {
                    i += 1;
                }
            }
            out
        };
        let swaps = ["0", "-1", "1e308", "-0.0", "18446744073709551615", "3.5"];
        let mut seed: u64 = 77;
        let mut next = |n: usize| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((seed >> 33) as usize) % n.max(1)
        };
        let mut parsed = 0;
        for _ in 0..400 {
            let (a, b) = numbers[next(numbers.len())];
            let mutated = if next(4) == 0 {
                // Cut the text: a truncated file.
                text[..next(text.len())].to_string()
            } else {
                format!("{}{}{}", &text[..a], swaps[next(swaps.len())], &text[b..])
            };
            let Ok(mut m) = Results::from_json(&mutated) else {
                continue;
            };
            parsed += 1;
            let ok = std::panic::catch_unwind(move || {
                analyze(&mut m);
                for ex in bakeoff_report::exporters_with(&bakeoff_workloads::KINDS) {
                    let _ = ex.render(&m);
                }
                let _ = bakeoff_report::terminal_with(&m, false, &bakeoff_workloads::KINDS);
            });
            assert!(ok.is_ok(), "panic on a mutated results.json:\n{mutated}");
        }
        assert!(parsed > 100, "{parsed}");
    }
}
