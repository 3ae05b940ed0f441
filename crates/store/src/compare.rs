//! Two saved experiments against each other: cells matched by (workload, connections,
//! variant), each B cell compared with its A cell by the statistics a run uses (ratio of
//! medians, Hodges-Lehmann CI, Mann-Whitney p, verdict). The outcome is itself a
//! [`Results`] (variants renamed `A:<name>` and `B:<name>`, comparisons filled in here,
//! since a run's analysis knows a single baseline), so every exporter renders it.

use crate::record::CellEntry;
use crate::text::{cell_label, table};
use bakeoff_report::model::{
    Cell, ComparisonRecord, ExperimentRecord, PlanRecord, Results, VariantRecord, SCHEMA,
};
use bakeoff_report::summary::{ci_text, ops};
use bakeoff_report::warning::{Warning, WarningCode as Code};
use bakeoff_stats::{self as stats, Direction};
use std::fmt;
use std::path::{Path, PathBuf};

/// The smallest difference in instructions per operation a history comparison resolves.
const INSTRUCTION_RESOLUTION: f64 = 0.0125;

/// A cell's identity across experiments.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize)]
pub struct CellKey {
    pub workload: String,
    pub connections: usize,
    pub variant: String,
}

impl CellKey {
    pub fn of(c: &Cell) -> CellKey {
        CellKey {
            workload: c.workload.clone(),
            connections: c.connections,
            variant: c.variant.clone(),
        }
    }

    pub(crate) fn of_entry(c: &CellEntry) -> CellKey {
        CellKey {
            workload: c.workload.clone(),
            connections: c.connections,
            variant: c.variant.clone(),
        }
    }

    pub(crate) fn is_entry(&self, c: &CellEntry) -> bool {
        c.workload == self.workload
            && c.connections == self.connections
            && c.variant == self.variant
    }

    fn is(&self, c: &Cell) -> bool {
        c.workload == self.workload
            && c.connections == self.connections
            && c.variant == self.variant
    }
}

impl fmt::Display for CellKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&cell_label(&self.workload, self.connections, &self.variant))
    }
}

/// One side of a comparison: a results folder's results, and its history id if known.
#[derive(Debug, Clone)]
pub struct Side {
    pub results: Results,
    pub folder: PathBuf,
    pub id: Option<i64>,
}

impl Side {
    fn describe(&self, label: &str) -> String {
        format!(
            "{label}: `{}`{}: experiment {}, started {}, status {}",
            self.folder.display(),
            self.id
                .map(|i| format!(" (history #{i})"))
                .unwrap_or_default(),
            self.results.name,
            self.results.started_utc,
            self.results.status
        )
    }
}

/// The outcome of [`compare`].
#[derive(Debug, Clone)]
pub struct Compared {
    /// A results model of the comparison: A's and B's matched cells side by side.
    pub results: Results,
    /// Matched cells, in A's order.
    pub matched: Vec<CellKey>,
    /// Cells of one side that the other lacks.
    pub only_a: Vec<CellKey>,
    pub only_b: Vec<CellKey>,
}

/// `A:<variant>` or `B:<variant>`.
fn tagged(side: &str, variant: &str) -> String {
    format!("{side}:{variant}")
}

/// Compares B's cells with A's; `now` (RFC 3339 UTC) stamps the outcome.
pub fn compare(a: &Side, b: &Side, now: &str) -> Compared {
    let (ra, rb) = (&a.results, &b.results);
    // The A/A variant (`[plan] aa`) is each run's check of its machine, not a candidate.
    let candidate = |r: &Results, c: &Cell| !r.variants.iter().any(|v| v.aa && v.name == c.variant);
    // The keys of a side's candidate cells that `keep` keeps.
    let keys = |r: &Results, keep: &dyn Fn(&CellKey) -> bool| -> Vec<CellKey> {
        r.cells
            .iter()
            .filter(|c| candidate(r, c))
            .map(CellKey::of)
            .filter(|k| keep(k))
            .collect()
    };
    let matched = keys(ra, &|k| rb.cells.iter().any(|c| k.is(c)));
    let only_a = keys(ra, &|k| !matched.contains(k));
    let only_b = keys(rb, &|k| !matched.contains(k));

    let mut variant_names: Vec<&str> = Vec::new();
    for k in &matched {
        if !variant_names.contains(&k.variant.as_str()) {
            variant_names.push(&k.variant);
        }
    }
    let Decided {
        cells,
        comparisons,
        mut warnings,
    } = decide_pairs(a, b, &matched);
    for (label, only) in [("A", &only_a), ("B", &only_b)] {
        if !only.is_empty() {
            warnings.push(Warning::new(
                Code::OnlyOneSide,
                format!(
                    "only in {label} (not compared): {}",
                    only.iter()
                        .map(|k| k.to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        }
    }
    warnings.extend(context_warnings(a, b));
    // Each side's own warnings, except those about its own verdicts (not these).
    for (label, r) in [("A", ra), ("B", rb)] {
        warnings.extend(
            r.coded_warnings()
                .iter()
                .filter(|w| w.code != Code::TooFewRuns)
                .map(|w| w.labelled(label)),
        );
    }
    let mut variants = Vec::new();
    for (label, side) in [("A", a), ("B", b)] {
        for v in side
            .results
            .variants
            .iter()
            .filter(|v| variant_names.contains(&v.name.as_str()))
        {
            variants.push(relabel_variant(v, label, &side.folder));
        }
    }
    // With one variant on each side the report reads best with `A:<it>` as the baseline;
    // with several, each pair has its own and the report's single baseline is "A".
    let baseline = match variant_names.as_slice() {
        [one] => tagged("A", one),
        _ => "A".to_string(),
    };
    let mut results = merged(a, b, now, baseline);
    results.variants = variants;
    results.cells = cells;
    results.comparisons = comparisons;
    results.set_warnings(warnings);
    Compared {
        results,
        matched,
        only_a,
        only_b,
    }
}

/// What deciding the matched pairs gives: both sides' cells, the comparisons, and the
/// warnings that come first (too few runs, each side's A/A check, mixed metrics).
struct Decided {
    cells: Vec<Cell>,
    comparisons: Vec<ComparisonRecord>,
    warnings: Vec<Warning>,
}

/// A matched pair: its key, both sides' figures, whether they count instructions, and
/// what held the sides.
type Pair<'a> = (&'a CellKey, Vec<f64>, Vec<f64>, bool, stats::Holds);

/// The matched cells' comparisons, one family decided together (unpaired: two
/// experiments' rounds were not run side by side), records made once decided so their
/// intervals are at the adjusted level.
fn decide_pairs(a: &Side, b: &Side, matched: &[CellKey]) -> Decided {
    let (ra, rb) = (&a.results, &b.results);
    let mut cells = Vec::new();
    let mut warnings: Vec<Warning> = [("A", ra), ("B", rb)]
        .into_iter()
        .filter(|(_, r)| r.aa.as_ref().is_some_and(|x| x.differs()))
        .map(|(side, _)| Warning::new(Code::SideAaDiffers, format!("{side}'s A/A check found a difference between two sandboxes of the same binary: its machine made differences of its own, so every figure of {side} is suspect")))
        .collect();
    let rule = stats::Rule {
        pairing: stats::Pairing::Unpaired,
        equivalence: ra.plan.equivalence,
        ..stats::Rule::new(Direction::HigherIsBetter)
    };
    // The compared pairs: their key, both sides' figures and whether they count
    // instructions.
    let mut pairs: Vec<Pair> = Vec::new();
    for k in matched {
        let (Some(ca), Some(cb)) = (
            ra.cells.iter().find(|c| k.is(c)),
            rb.cells.iter().find(|c| k.is(c)),
        ) else {
            continue;
        };
        let (xa, ia) = figures(ca);
        let (xb, ib) = figures(cb);
        if ia != ib {
            warnings.push(Warning::new(
                Code::MixedMetrics,
                format!(
                    "{k}: not compared: {} measured instructions (callgrind) and {} measured time",
                    if ia { "A" } else { "B" },
                    if ia { "B" } else { "A" }
                ),
            ));
        } else {
            // Whether the load held back A's cell and B's (the clock's answers only:
            // instruction counts do not depend on the pace or on what else ran).
            let holds = stats::Holds {
                baseline_held: ca.held_back(),
                candidate_held: cb.held_back(),
                baseline_busy: !ia && ca.machine_busy(),
                candidate_busy: !ia && cb.machine_busy(),
            };
            pairs.push((k, xa, xb, ia, holds));
        }
        cells.push(relabel(ca, "A", &a.folder));
        cells.push(relabel(cb, "B", &b.folder));
    }
    let mut family = stats::Family::new();
    for (k, xa, xb, ia, holds) in &pairs {
        // Instruction counts of a server under a load move ~0.5% between runs of one
        // binary: a difference within 2.5 times that is never faster or slower (the
        // run's own analysis measures the spread; this is its floor).
        family.pair(
            (*k, xa.len(), xb.len()),
            stats::Sample::Values(xa),
            stats::Sample::Values(xb),
            None,
            ia.then_some(INSTRUCTION_RESOLUTION),
            *holds,
        );
    }
    let mut too_few = Vec::new();
    let mut comparisons = Vec::new();
    for ((k, na, nb), x) in family.decide(&rule) {
        if x.smallest_p() >= 0.05 {
            too_few.push((k.to_string(), na, nb));
        }
        comparisons.push(ComparisonRecord::new(
            &k.workload,
            k.connections,
            &tagged("B", &k.variant),
            &tagged("A", &k.variant),
            &x,
            rule.equivalence,
        ));
    }
    if !too_few.is_empty() {
        warnings.insert(
            0,
            Warning::new(
                Code::TooFewRuns,
                format!(
                    "too few valid runs for the Mann-Whitney test to reach p < 0.05 ({}), so {} \"same\"; use at least 4 runs on each side",
                    too_few_text(&too_few),
                    if too_few.len() == comparisons.len() {
                        "every verdict is"
                    } else {
                        "their verdict is"
                    }
                ),
            ),
        );
    }
    Decided {
        cells,
        comparisons,
        warnings,
    }
}

/// The outcome's results model before its variants, cells, comparisons and warnings: its
/// name, description, experiment, plan and notes from both sides.
fn merged(a: &Side, b: &Side, now: &str, baseline: String) -> Results {
    let (ra, rb) = (&a.results, &b.results);
    let name = if ra.name == rb.name {
        format!("{} (A vs B)", ra.name)
    } else {
        format!("{} (A) vs {} (B)", ra.name, rb.name)
    };
    let description = format!(
        "{}.\n\n{}.\n\nEach `B:` cell is compared with the `A:` cell of the same workload, connections and variant, \
         by the statistics a run uses: ratio of medians B/A with a Hodges-Lehmann 95% CI, the Mann-Whitney p-value, \
         and a verdict that is \"same\" unless p < 0.05 and the CI excludes 1.",
        a.describe("A"),
        b.describe("B")
    );
    let experiment = ExperimentRecord {
        file: format!("A: {}; B: {}", ra.experiment.file, rb.experiment.file),
        text: if ra.experiment.text == rb.experiment.text {
            ra.experiment.text.clone()
        } else {
            format!(
                "# A: {}\n{}\n\n# B: {}\n{}",
                ra.experiment.file,
                ra.experiment.text.trim_end(),
                rb.experiment.file,
                rb.experiment.text.trim_end()
            )
        },
        resolved: serde_json::json!({
            "a": ra.experiment.resolved,
            "b": rb.experiment.resolved,
        }),
    };
    let mut notes = Vec::new();
    for (label, r) in [("A", ra), ("B", rb)] {
        notes.extend(r.notes.iter().map(|n| format!("{label}: {n}")));
    }
    Results {
        schema: SCHEMA.to_string(),
        name,
        description: Some(description),
        status: "complete".into(),
        bakeoff_version: env!("CARGO_PKG_VERSION").to_string(),
        started_utc: now.to_string(),
        finished_utc: Some(now.to_string()),
        host: ra.host.clone(),
        experiment,
        plan: PlanRecord {
            repetitions: ra.plan.repetitions.min(rb.plan.repetitions),
            warmup_s: ra.plan.warmup_s,
            duration_s: ra.plan.duration_s,
            ops: ra.plan.ops,
            seed: ra.plan.seed,
            baseline,
            rounds: Vec::new(),
            ..PlanRecord::default()
        },
        source: ra.source.clone().filter(|s| Some(s) == rb.source.as_ref()),
        notes,
        ..Results::default()
    }
}

/// The figures a run compares (analyze.rs): valid runs' throughput, or in instructions
/// mode operations per billion instructions; and whether it was instructions.
fn figures(c: &Cell) -> (Vec<f64>, bool) {
    // Mode both's instruction-count runs stay out: the wall-clock runs are compared.
    let valid: Vec<_> = c
        .runs
        .iter()
        .filter(|r| r.valid && !r.instruction_run)
        .collect();
    let instructions = valid.iter().any(|r| r.instructions.is_some());
    let xs = valid
        .iter()
        .map(|r| match &r.instructions {
            Some(i) if i.instructions_per_op > 0.0 => 1e9 / i.instructions_per_op,
            _ => r.ops_per_s,
        })
        .collect();
    (xs, instructions)
}

/// `2 vs 2 valid runs per cell`, or per cell when the counts differ.
fn too_few_text(cells: &[(String, usize, usize)]) -> String {
    match cells {
        [(_, n, m), rest @ ..] if rest.iter().all(|(_, x, y)| (x, y) == (n, m)) => {
            format!("{n} vs {m} valid runs per cell")
        }
        _ => cells
            .iter()
            .map(|(k, n, m)| format!("{k}: {n} vs {m}"))
            .collect::<Vec<_>>()
            .join("; "),
    }
}

/// What a reader must know before trusting a comparison of two separate experiments.
fn context_warnings(a: &Side, b: &Side) -> Vec<Warning> {
    let (ra, rb) = (&a.results, &b.results);
    let mut w = Vec::new();
    if ra.host.hostname != rb.host.hostname || ra.host.cpu_model != rb.host.cpu_model {
        w.push(Warning::new(Code::DifferentMachines, format!(
            "A and B ran on different machines (A: {} {}, B: {} {}): differences may be the machine's",
            ra.host.hostname, ra.host.cpu_model, rb.host.hostname, rb.host.cpu_model
        )));
    }
    let plan = |p: &PlanRecord| {
        let measure = match (p.duration_s, p.ops) {
            (_, Some(n)) => format!("{n} ops"),
            (Some(d), None) => format!("{d} s"),
            _ => "?".into(),
        };
        let rounds = p.repetitions.unwrap_or(p.rounds.len());
        format!(
            "{rounds} repetitions, warmup {} s, measure {measure}",
            p.warmup_s
        )
    };
    let (pa, pb) = (plan(&ra.plan), plan(&rb.plan));
    if pa != pb {
        w.push(Warning::new(
            Code::DifferentPlans,
            format!("A and B ran different plans (A: {pa}; B: {pb})"),
        ));
    }
    for (label, r) in [("A", ra), ("B", rb)] {
        if r.status != "complete" {
            w.push(Warning::new(
                Code::SideIncomplete,
                format!(
                    "{label} did not complete (status {}): its cells may have fewer runs",
                    r.status
                ),
            ));
        }
    }
    w
}

fn absolute(folder: &Path, rel: &mut String) {
    if !rel.is_empty() && Path::new(rel.as_str()).is_relative() {
        *rel = folder.join(&*rel).display().to_string();
    }
}

/// A cell under its side's name, its files' paths made absolute (they stay in the
/// original folder).
fn relabel(c: &Cell, side: &str, folder: &Path) -> Cell {
    let mut c = c.clone();
    c.variant = tagged(side, &c.variant);
    for r in &mut c.runs {
        for p in [&mut r.hdr_log, &mut r.server_log].into_iter().flatten() {
            absolute(folder, p);
        }
        if let Some(p) = r.system.as_mut().and_then(|s| s.series.as_mut()) {
            absolute(folder, p);
        }
    }
    if let Some(p) = c.system.as_mut().and_then(|s| s.series.as_mut()) {
        absolute(folder, p);
    }
    if let Some(p) = c.profile.as_mut() {
        absolute(folder, &mut p.flamegraph);
    }
    c
}

fn relabel_variant(v: &VariantRecord, side: &str, folder: &Path) -> VariantRecord {
    let mut v = v.clone();
    v.name = tagged(side, &v.name);
    if let Some(p) = v.build.as_mut().and_then(|b| b.log.as_mut()) {
        absolute(folder, p);
    }
    for m in &mut v.memory_errors {
        if let Some(p) = m.log.as_mut() {
            absolute(folder, p);
        }
    }
    v
}

/// The default results folder name: `compare-<A name>-vs-<B name>-<UTC time>`.
pub fn folder_name(a: &Results, b: &Results, now: &str) -> String {
    use bakeoff_os::path::safe_name as safe;
    let stamp: String = now.chars().filter(|c| c.is_ascii_alphanumeric()).collect();
    format!("compare-{}-vs-{}-{stamp}", safe(&a.name), safe(&b.name))
}

impl Compared {
    /// The terminal view: warnings first, then one row per matched cell with both
    /// sides' figures, the ratio B/A with its CI, the p-value and the verdict.
    pub fn table(&self, color: bool) -> String {
        let r = &self.results;
        let mut out = String::new();
        for w in &r.warnings {
            let w = bakeoff_report::summary::printable(w);
            out.push_str(&format!("warning: {w}\n"));
        }
        if !r.warnings.is_empty() {
            out.push('\n');
        }
        let figure = |c: Option<&Cell>| -> (String, String) {
            match c {
                Some(c) if c.valid_runs > 0 => match c.instructions_per_op {
                    Some(i) => (format!("{i:.0} instr/op"), String::new()),
                    None => (
                        ops(c.median_ops_per_s),
                        format!("[{}, {}]", ops(c.ci95[0]), ops(c.ci95[1])),
                    ),
                },
                _ => ("-".into(), "-".into()),
            }
        };
        let mut verdicts = Vec::new();
        let index = bakeoff_report::index::Index::new(r);
        let rows: Vec<Vec<String>> = self
            .matched
            .iter()
            .map(|k| {
                let (fa, ca) =
                    figure(index.cell(&k.workload, &tagged("A", &k.variant), k.connections));
                let (fb, cb) =
                    figure(index.cell(&k.workload, &tagged("B", &k.variant), k.connections));
                let cmp = index.comparison(&k.workload, &tagged("B", &k.variant), k.connections);
                verdicts.push(cmp.map(|x| x.verdict));
                let (ratio, ci, p, verdict) = match cmp {
                    Some(x) => (
                        format!("{:.3}", x.ratio),
                        ci_text(x.ci95, x.ci_coverage),
                        format!("{:.4}", x.p_value),
                        x.verdict.as_str().to_string(),
                    ),
                    None => ("-".into(), String::new(), "-".into(), "-".into()),
                };
                vec![
                    k.workload.clone(),
                    k.connections.to_string(),
                    k.variant.clone(),
                    fa,
                    ca,
                    fb,
                    cb,
                    ratio,
                    ci,
                    p,
                    verdict,
                ]
            })
            .collect();
        let text = table(
            &[
                "workload",
                "conns",
                "variant",
                "A ops/s",
                "A 95% CI",
                "B ops/s",
                "B 95% CI",
                "B/A",
                "ratio 95% CI",
                "p",
                "verdict",
            ],
            &rows,
            &[1, 3, 5, 7, 9],
        );
        for (i, line) in text.lines().enumerate() {
            let verdict = i
                .checked_sub(2)
                .and_then(|j| verdicts.get(j).copied().flatten());
            match (color, verdict) {
                (true, Some(v)) => {
                    let word = v.as_str();
                    let cut = line.len() - word.len();
                    let painted = bakeoff_report::summary::paint(word, Some(v));
                    out.push_str(&format!("{}{painted}\n", &line[..cut]));
                }
                _ => {
                    out.push_str(line);
                    out.push('\n');
                }
            }
        }
        out
    }
}
