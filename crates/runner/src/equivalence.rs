//! Result equivalence, before any run is measured: the same query set runs against every
//! variant's server, each on a fresh copy of its prepared data, and every result's hash
//! is compared with the baseline's. The set is `[verify] queries` (run on the first SQL
//! workload's data) or else each replay workload's own statements (on its data) and every
//! statement of each sqlsuite workload (run at a scale of at most 0.05, each result
//! hashed, and each group's tables selected whole before it drops them). A
//! difference fails that variant's verification; it is the first thing the terminal and
//! the reports show. A variant of another kind than the baseline's (MySQL against
//! MariaDB) is compared in the canonical form across kinds (numbers by value, see
//! `verify::compare_with`); every query treated as equal only in a canonical form (rows
//! in another order without ORDER BY, numbers spelled differently) is recorded with its
//! rows and the reason (`verification[].explained`), and every difference with its reason.

use crate::datadirs::{self, DataStore};
use crate::observer::Observer;
use crate::options::Options;
use crate::ready::ReadyVariant;
use crate::ready::Workloads;
use bakeoff_plan::{Loaded, TargetKind};
use bakeoff_report::model::{DifferenceRecord, ExplainedRecord, Results, VerificationRecord};
use bakeoff_workloads::{verify, QuerySet};

/// One query set and the workload whose prepared data it runs on.
struct Set {
    queries: Box<dyn QuerySet>,
    workload: usize,
}

/// The query sets of the experiment as a server of `kind` is asked them (a workload's
/// statements are in its kind's dialect); empty: nothing to verify.
fn query_sets(l: &Loaded, specs: &Workloads, kind: TargetKind) -> Result<Vec<Set>, String> {
    if let Some(q) = &l.experiment.verify.queries {
        let path = l.resolve(q);
        let text = bakeoff_plan::read_input(&path, "query file")
            .map_err(|e| format!("{}: {e}", path.display()))?;
        let queries =
            bakeoff_workloads::query_file(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        let workload = (0..specs.len())
            .position(|i| specs.of_kind(kind, i).sql())
            .unwrap_or(0);
        return Ok(vec![Set { queries, workload }]);
    }
    Ok((0..specs.len())
        .filter_map(|workload| {
            let queries = specs.of_kind(kind, workload).queries()?;
            Some(Set { queries, workload })
        })
        .collect())
}

/// Runs every query set on every variant and records the verdicts in `results`.
pub fn verify_all(
    l: &Loaded,
    opts: &Options,
    specs: &Workloads,
    variants: &[ReadyVariant],
    store: &DataStore,
    results: &mut Results,
    observer: &dyn Observer,
) {
    let e = &l.experiment;
    // Results are compared between SQL servers only (each asked in its own dialect).
    if !e.verify.enabled || variants.is_empty() || !variants.iter().all(|v| v.kind.is_sql()) {
        return;
    }
    let baseline = e.baseline();
    let Some(base) = variants.iter().find(|v| v.name == baseline) else {
        return;
    };
    let sets = match query_sets(l, specs, base.kind) {
        Ok(s) if !s.is_empty() => s,
        Ok(_) => return,
        Err(m) => {
            results.verification = variants.iter().map(|v| skipped(v, m.clone())).collect();
            return;
        }
    };
    let files: usize = sets.iter().filter_map(|s| s.queries.count()).sum();
    let suites = sets.iter().filter(|s| s.queries.count().is_none()).count();
    observer.notice(&format!(
        "verifying results: {}{} on {} variants",
        if files > 0 || suites == 0 {
            format!("{files} queries")
        } else {
            String::new()
        },
        match (files, suites) {
            (_, 0) => String::new(),
            (0, n) => format!("the statements of {n} sqlsuite workload(s)"),
            (_, n) => format!(" and the statements of {n} sqlsuite workload(s)"),
        },
        variants.len()
    ));
    let reference = outcomes(l, opts, base, &sets, store);
    // A variant of another kind is asked the same sets in its own kind's spelling.
    let sets_of = |v: &ReadyVariant| -> Result<Vec<Set>, String> {
        if v.kind == base.kind {
            query_sets(l, specs, base.kind)
        } else {
            query_sets(l, specs, v.kind)
        }
    };
    results.verification = variants
        .iter()
        .map(|v| match (&reference, v.name == baseline) {
            (Err(m), _) => skipped(v, format!("the baseline's queries could not run: {m}")),
            (Ok(r), true) => VerificationRecord {
                variant: v.name.clone(),
                status: "same".into(),
                queries: r.len(),
                note: Some("baseline".into()),
                ..VerificationRecord::default()
            },
            (Ok(r), false) => match sets_of(v).and_then(|own| outcomes(l, opts, v, &own, store)) {
                Ok(mine) => record(v, r, &mine, v.kind != base.kind),
                Err(m) => skipped(v, m),
            },
        })
        .collect();
}

fn skipped(v: &ReadyVariant, note: String) -> VerificationRecord {
    VerificationRecord {
        variant: v.name.clone(),
        status: "skipped".into(),
        note: Some(note),
        ..VerificationRecord::default()
    }
}

fn record(
    v: &ReadyVariant,
    reference: &[verify::Outcome],
    mine: &[verify::Outcome],
    cross_kind: bool,
) -> VerificationRecord {
    let compared = verify::compare_with(reference, mine, cross_kind);
    let show = |rows: &[String]| rows.iter().map(|r| verify::display_row(r)).collect();
    let explained = compared
        .explained
        .iter()
        .map(|x| ExplainedRecord {
            query: x.query.clone(),
            line: x.line,
            rows: show(&x.rows),
            baseline_rows: show(&x.baseline_rows),
            reason: x.reason.clone(),
        })
        .collect();
    let differences: Vec<DifferenceRecord> = compared
        .differences
        .into_iter()
        .map(|d| DifferenceRecord {
            query: d.query,
            line: d.line,
            hash: d.hash,
            baseline_hash: d.baseline_hash,
            rows: d.rows.iter().map(|r| verify::display_row(r)).collect(),
            baseline_rows: d
                .baseline_rows
                .iter()
                .map(|r| verify::display_row(r))
                .collect(),
            error: d.error,
            baseline_error: d.baseline_error,
            reason: Some(d.reason),
        })
        .collect();
    VerificationRecord {
        variant: v.name.clone(),
        status: if differences.is_empty() {
            "same"
        } else {
            "different"
        }
        .into(),
        queries: mine.len(),
        differences,
        explained,
        cross_kind,
        note: None,
    }
}

/// The variant's outcomes of every set, each set on a fresh server over a copy of its
/// workload's prepared data.
fn outcomes(
    l: &Loaded,
    opts: &Options,
    v: &ReadyVariant,
    sets: &[Set],
    store: &DataStore,
) -> Result<Vec<verify::Outcome>, String> {
    let mut all = Vec::new();
    for set in sets {
        let source = store
            .source(&v.name, set.workload)
            .ok_or("no prepared data for the query set")?;
        let spec = datadirs::sql_spec(l, opts, v, &v.binary, "verify", source);
        let server = store.place().start(&spec)?;
        let got = match server.db() {
            Some(db) => crate::deadline::guarded(server.watch(), datadirs::LOAD_IDLE, || {
                set.queries.run(&db, v.engine.as_deref())
            }),
            None => Err("the sandbox has no login".into()),
        };
        let _ = server.stop();
        all.extend(got?);
    }
    Ok(all)
}
