//! The replay section: per replayed statement class the count, total time and
//! percentiles; the plans (EXPLAIN) of the heaviest classes per variant.

use super::records::ReplayRun;
use bakeoff_report::document::{Block, Inline, Section, Span};
use bakeoff_report::figures::RunFigures;
use bakeoff_report::model::{Cell, Results};
use bakeoff_report::table::Table;

/// The replayed workloads' cells (those whose runs carry classes), each run's figures
/// read once.
pub fn replay_cells(r: &Results) -> Vec<(&Cell, Vec<ReplayRun>)> {
    r.cells
        .iter()
        .map(|c| (c, c.runs.iter().map(ReplayRun::of).collect::<Vec<_>>()))
        .filter(|(_, runs)| runs.iter().any(|x| !x.classes.is_empty()))
        .collect()
}

/// Per class of a cell: the median run's figures (by total time), heaviest first.
pub fn class_table(c: &Cell, figures: &[ReplayRun]) -> Table {
    let mut t = Table::new(
        "classes",
        &[
            "class",
            "statement class",
            "count#",
            "total s#",
            "p50 us#",
            "p99 us#",
            "errors#",
        ],
    );
    let valid: Vec<_> = c
        .runs
        .iter()
        .zip(figures)
        .filter(|(x, f)| x.valid && !f.classes.is_empty())
        .map(|(_, f)| f)
        .collect();
    let Some(run) = valid.get(valid.len() / 2).or(valid.first()) else {
        return t;
    };
    for k in run.classes.iter().take(15) {
        let fp: String = k.fingerprint.chars().take(90).collect();
        t.push(vec![
            k.class.chars().take(8).collect::<String>().into(),
            fp.into(),
            k.count.to_string().into(),
            format!("{:.3}", k.total_s).into(),
            format!("{:.0}", k.p50_us).into(),
            format!("{:.0}", k.p99_us).into(),
            k.errors.to_string().into(),
        ]);
    }
    t
}

/// The replay section: per replayed cell its heaviest statement classes, and after the
/// first cell of each workload and variant the plans of those classes.
pub fn section(r: &Results) -> Option<Section> {
    let cells = replay_cells(r);
    if cells.is_empty() {
        return None;
    }
    let mut s = Section::new("replay", "Replay", "Replayed statement classes");
    let mut planned = std::collections::HashSet::new();
    for (c, figures) in &cells {
        s.push(Block::Heading(
            Inline::new()
                .text(format!("{} ×{} on ", c.workload, c.connections))
                .and(Span::Variant(c.variant.clone())),
        ));
        s.push(Block::Table(class_table(c, figures)));
        let key = (c.workload.as_str(), c.variant.as_str());
        if planned.contains(&key) {
            continue;
        }
        if let Some(run) = figures.iter().find(|r| !r.explains.is_empty()) {
            planned.insert(key);
            let mut plans = Vec::new();
            for e in &run.explains {
                plans.push(Block::text(Inline::new().code(e.fingerprint.clone())));
                plans.push(Block::Pre {
                    lang: "",
                    text: e.plan.trim_end().to_string(),
                });
            }
            s.push(Block::Details {
                summary: "Plans of the heaviest classes".into(),
                blocks: plans,
            });
        }
    }
    Some(s)
}
