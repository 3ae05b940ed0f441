//! The A/A check (`[plan] aa`): the baseline's binary and options run again as a variant
//! of its own, in sandboxes of its own, interleaved in the rounds like any variant and
//! compared with the baseline like any variant (same stopping rule, same
//! false-discovery-rate family). Two sandboxes of one binary should never come out faster
//! or slower; when they do, the machine itself makes differences, and every verdict of
//! the experiment says so.

use crate::observer::Observer;
use crate::ready::ReadyVariant;
use bakeoff_plan::Loaded;
use bakeoff_report::model::{AaRecord, ComparisonRecord, Results, Verdict};

/// With `[plan] aa`, appends the A/A variant to `ready` and its record to `results`: the
/// baseline's binaries, arguments and options, built or found once, under the name
/// [`bakeoff_plan::Experiment::aa_variant`] gives. Nothing when the baseline cannot run.
pub(crate) fn add(
    l: &Loaded,
    ready: &mut Vec<ReadyVariant>,
    results: &mut Results,
    observer: &dyn Observer,
) {
    let Some(name) = l.experiment.aa_variant() else {
        return;
    };
    let baseline = l.experiment.baseline();
    let Some(b) = ready.iter().find(|v| v.name == baseline) else {
        observer.notice(&format!(
            "aa: the baseline {baseline} cannot run, so there is no A/A check"
        ));
        return;
    };
    let Some(mut rec) = results.variants.get(b.record).cloned() else {
        return;
    };
    rec.name = name.clone();
    rec.aa = true;
    // The same binary: its anatomy against the baseline's says nothing.
    rec.anatomy = None;
    let again = ReadyVariant {
        name: name.clone(),
        kind: b.kind,
        binary: b.binary.clone(),
        args: b.args.clone(),
        options: b.options.clone(),
        engine: b.engine.clone(),
        record: results.variants.len(),
        sanitize: b.sanitize.clone(),
        run_under: b.run_under,
        configure_args: b.configure_args.clone(),
        layouts: b.layouts.clone(),
        env: b.env.clone(),
        system: b.system.clone(),
    };
    observer.notice(&format!(
        "aa: {name} runs {baseline}'s binary again in sandboxes of its own, the machine's own false-difference check"
    ));
    results.variants.push(rec);
    ready.push(again);
}

/// Marks the A/A comparisons, summarizes them in `r.aa` and, when one came out faster or
/// slower, marks every other comparison suspect. Called by `analyze` after the
/// comparisons are decided.
pub(crate) fn mark(r: &mut Results) {
    let aa: std::collections::HashSet<&str> = r
        .variants
        .iter()
        .filter(|v| v.aa)
        .map(|v| v.name.as_str())
        .collect();
    let flags: Vec<bool> = r
        .comparisons
        .iter()
        .map(|k| aa.contains(k.variant.as_str()))
        .collect();
    for (k, aa) in r.comparisons.iter_mut().zip(flags) {
        k.aa = aa;
    }
    r.aa = summary(r);
    let differs = r.aa.as_ref().is_some_and(AaRecord::differs);
    for k in r.comparisons.iter_mut() {
        k.suspect = differs && !k.aa;
    }
}

fn differs(k: &ComparisonRecord) -> bool {
    matches!(k.verdict, Verdict::Faster | Verdict::Slower)
}

/// The A/A comparisons in one record: the one furthest from 1 among those that differ,
/// or among all when none does. None without an A/A comparison.
fn summary(r: &Results) -> Option<AaRecord> {
    let aa: Vec<&ComparisonRecord> = r.comparisons.iter().filter(|k| k.aa).collect();
    let differ = aa.iter().filter(|k| differs(k)).count();
    let far = |k: &&&ComparisonRecord| k.ratio.ln().abs();
    let shown = aa
        .iter()
        .filter(|k| differ == 0 || differs(k))
        .max_by(|a, b| far(a).total_cmp(&far(b)))?;
    Some(AaRecord {
        variant: shown.variant.clone(),
        baseline: shown.baseline.clone(),
        workload: shown.workload.clone(),
        connections: shown.connections,
        ratio: shown.ratio,
        ci95: shown.ci95,
        verdict: shown.verdict,
        detectable: shown.detectable,
        comparisons: aa.len(),
        differ,
    })
}

/// The warning every reader sees first when the A/A check found a difference.
pub(crate) fn warning(r: &Results) -> Option<String> {
    let a = r.aa.as_ref().filter(|a| a.differs())?;
    Some(format!(
        "the A/A check found a difference between two sandboxes of the same binary: {} came out {} than {} at {} x{} (ratio {:.3}, CI [{:.3}, {:.3}]){}; every verdict here is suspect: the machine, not the variants, may have made the differences. Look for what else ran (CPU steal, other load, frequency scaling, thermal limits), pin the server and the load with [plan] cpus, and run again; trust a verdict only from a run whose A/A check came out inconclusive or equivalent",
        a.variant,
        a.verdict,
        a.baseline,
        a.workload,
        a.connections,
        a.ratio,
        a.ci95[0],
        a.ci95[1],
        if a.differ > 1 {
            format!(" and at {} more point(s)", a.differ - 1)
        } else {
            String::new()
        }
    ))
}
