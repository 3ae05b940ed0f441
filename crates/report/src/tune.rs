//! `bakeoff tune` in the results and the report: results.json's `tune` (the candidates
//! ranked, the stages, the winner, the effects) and its section: the ranked table, the
//! winning recipe as a `[[variant]]` block to paste, what each choice is worth (each
//! effect with its interval, drawn as strips on the page), the stages, the combinations
//! left out, and where the winner loses on the workloads it was not trained on.

use crate::document::{Block, IntervalTable, Section};
use crate::model::{Results, Verdict};
use crate::svg::Interval;
use crate::table::{fixed, Table, Value};
use bakeoff_tune::{Effect, Status};

/// The records are results.json's, so the model's; named here too.
pub use crate::model::{TuneRecord, Winner};

fn status_text(s: &Status) -> (String, String) {
    match s {
        Status::Alive => ("in".into(), "-".into()),
        Status::Dropped { stage, reason } => (format!("dropped: {reason}"), stage.to_string()),
        Status::Out { stage, reason } => (format!("out: {reason}"), stage.to_string()),
    }
}

/// The ranked table.
pub fn ranked(t: &TuneRecord) -> Table {
    let mut table = Table::new(
        "tune",
        &[
            "#",
            "candidate",
            "recipe",
            "ratio#",
            "adjusted interval",
            "verdict",
            "rounds#",
            "stage dropped",
            "status",
        ],
    );
    for (i, s) in t.candidates.iter().enumerate() {
        let (status, stage) = status_text(&s.status);
        let r = &s.recipe;
        let mut recipe = format!("{} {}", r.compiler, r.cflags());
        if r.lto != bakeoff_tune::Lto::None {
            recipe.push_str(&format!(" lto={}", r.lto.as_str()));
        }
        if r.pgo {
            recipe.push_str(" pgo");
        }
        if r.bolt {
            recipe.push_str(" bolt");
        }
        table.push(vec![
            Value::Text((i + 1).to_string()),
            Value::Variant(s.name.clone()),
            Value::Code(recipe.trim().to_string()),
            Value::Text(s.ratio.map_or("-".into(), |x| fixed(x, 3))),
            Value::Text(s.interval.map_or("-".into(), |[lo, hi]| {
                format!(
                    "[{}, {}] at {:.2}%",
                    fixed(lo, 3),
                    fixed(hi, 3),
                    s.level * 100.0
                )
            })),
            Value::Text(s.verdict.map_or("-", |v| v.as_str()).to_string()),
            Value::Text(s.rounds.to_string()),
            Value::Text(stage),
            Value::Text(status),
        ]);
    }
    table
}

/// What each choice is worth.
pub fn effects_table(t: &TuneRecord) -> Table {
    let mut table = Table::new(
        "tune-effects",
        &[
            "factor",
            "level",
            "against",
            "ratio#",
            "95% interval",
            "candidates#",
        ],
    );
    for e in &t.effects {
        table.push(vec![
            Value::Text(e.factor.clone()),
            Value::Code(shown(&e.level)),
            Value::Code(shown(&e.reference)),
            Value::Text(fixed(e.ratio, 3)),
            Value::Text(format!(
                "[{}, {}]",
                fixed(e.interval[0], 3),
                fixed(e.interval[1], 3)
            )),
            Value::Text(e.candidates.to_string()),
        ]);
    }
    table
}

fn shown(level: &str) -> String {
    if level.is_empty() {
        "(none)".into()
    } else {
        level.to_string()
    }
}

fn effect_verdict(e: &Effect) -> Verdict {
    if e.interval[0] > 1.0 {
        Verdict::Faster
    } else if e.interval[1] < 1.0 {
        Verdict::Slower
    } else {
        Verdict::Inconclusive
    }
}

/// The section: first in the report when the results hold a search.
pub fn section(r: &Results) -> Option<Section> {
    let t = r.tune.as_ref()?;
    let mut s = Section::new(
        "tune",
        "Tune",
        format!("Tune: the best build against {}", t.baseline),
    );
    let head = match &t.winner {
        Some(w) => format!(
            "Winner on {}: {} (ratio {} to {}{}); the search ended: {}.",
            t.cell,
            w.name,
            w.ratio.map_or("-".into(), |x| fixed(x, 3)),
            t.baseline,
            w.interval
                .map(|[lo, hi]| format!(", interval [{}, {}]", fixed(lo, 3), fixed(hi, 3)))
                .unwrap_or_default(),
            t.conclusion.why
        ),
        None => format!("No winner: {}.", t.conclusion.why),
    };
    s.push(Block::text(head).everywhere());
    s.push(Block::Table(ranked(t)).everywhere());
    if let Some(w) = &t.winner {
        s.push(Block::text("The winning recipe, ready to paste:").everywhere());
        s.push(
            Block::Pre {
                lang: "toml",
                text: w.variant.clone(),
            }
            .everywhere(),
        );
    }
    if !t.effects.is_empty() {
        s.push(Block::Heading("What each choice is worth".into()).everywhere());
        let table = effects_table(t);
        s.push(
            Block::Verdicts(Box::new(IntervalTable {
                intervals: t
                    .effects
                    .iter()
                    .map(|e| Interval {
                        tip: format!(
                            "{} = {} against {}: {} [{}, {}]",
                            e.factor,
                            shown(&e.level),
                            shown(&e.reference),
                            fixed(e.ratio, 3),
                            fixed(e.interval[0], 3),
                            fixed(e.interval[1], 3)
                        ),
                        ..Interval::of_verdict(e.ratio, e.interval, effect_verdict(e))
                    })
                    .collect(),
                at: 4,
                header: "effect with its 95% interval".into(),
                axis_label: "throughput ratio, level over reference (1 = no effect)".into(),
                reference: 1.0,
                verdicts: t.effects.iter().map(effect_verdict).collect(),
                against: t.effects.iter().map(|e| shown(&e.reference)).collect(),
                table,
            }))
            .everywhere(),
        );
        s.push(Block::caption(
            "Main effects from the first throughput stage (every candidate in the same rounds): a linear model on log throughput, one level against its factor's first; 95% t intervals.",
        ));
    }
    if t.overfitting_checked {
        s.push(Block::Heading("On the workloads it was not trained on".into()).everywhere());
        let said = if t.overfitting.is_empty() {
            Block::text("The winner is slower than the baseline nowhere else.")
        } else {
            Block::bullets(t.overfitting.iter().map(|l| l.as_str().into()).collect())
        };
        s.push(said.everywhere());
    }
    let mut stages = Table::new(
        "tune-stages",
        &[
            "stage#",
            "signal",
            "candidates#",
            "rounds#",
            "seconds#",
            "leader",
            "dropped",
            "out",
        ],
    );
    for st in &t.stages {
        stages.push(vec![
            Value::Text(st.stage.to_string()),
            Value::Text(format!("{:?}", st.signal).to_lowercase()),
            Value::Text(st.entered.to_string()),
            Value::Text(st.rounds.to_string()),
            Value::Text(st.seconds.map_or("-".into(), |x| fixed(x, 0))),
            Value::Text(st.leader.clone().unwrap_or_else(|| "-".into())),
            Value::Text(st.dropped.join(", ")),
            Value::Text(st.out.join(", ")),
        ]);
    }
    s.push(Block::Table(stages.titled("Stages")));
    if !t.excluded.is_empty() {
        let mut ex = Table::new("tune-excluded", &["combination", "left out because"]);
        for x in &t.excluded {
            ex.push(vec![
                Value::Code(x.name.clone()),
                Value::Text(x.reason.clone()),
            ]);
        }
        s.push(Block::Table(ex.titled("Left out of the space")));
    }
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use bakeoff_tune::{Race, Settings, Signal, Space, StageData};

    fn record() -> TuneRecord {
        let space = Space {
            opt: vec!["-O0".into(), "-O2".into()],
            ..Space::default()
        };
        let (cands, _) = space.candidates(|_| None);
        let mut race = Race::new(cands, Settings::default());
        let ratios = |x: f64| {
            (0..6)
                .map(|i| (i, x * (1.0 + 0.01 * (i % 3) as f64)))
                .collect()
        };
        race.feed(
            Signal::Throughput,
            StageData {
                ratios: vec![
                    ("gcc.O0".into(), ratios(0.5)),
                    ("gcc.O2".into(), ratios(1.1)),
                ],
                failed: vec![],
            },
        );
        let bakeoff_tune::Next::Done(conclusion) = race.next() else {
            panic!("decided")
        };
        TuneRecord {
            baseline: "debian".into(),
            cell: "kv x16".into(),
            candidates: race.standings(),
            excluded: vec![],
            stages: race.stages.clone(),
            winner: Some(Winner {
                name: "gcc.O2".into(),
                ratio: Some(1.1),
                interval: Some([1.05, 1.15]),
                verdict: Some(Verdict::Faster),
                variant: "[[variant]]\nname = \"gcc.O2\"\n".into(),
            }),
            effects: race.effects(&space.factors(), 0.95),
            conclusion,
            overfitting: vec!["set50 x16: ratio 0.950, slower".into()],
            overfitting_checked: true,
            seconds: Some(12.0),
        }
    }

    /// Issue 50: a results.json whose tune winner (or baseline) names no variant of the
    /// folder is refused on read, with the field named.
    #[test]
    fn a_tune_winner_that_names_no_variant_is_refused_with_the_field_named() {
        let with = |winner: &str, baseline: &str| {
            let mut t = record();
            t.baseline = baseline.into();
            if let Some(w) = t.winner.as_mut() {
                w.name = winner.into();
            }
            let variants = ["debian", "gcc.O2", "gcc.O0"]
                .iter()
                .map(|n| crate::model::VariantRecord {
                    name: n.to_string(),
                    ..Default::default()
                })
                .collect();
            let mut plan = Results::default().plan;
            plan.baseline = "debian".into();
            Results {
                name: "tuned".into(),
                variants,
                plan,
                tune: Some(t),
                ..Results::default()
            }
        };
        with("gcc.O2", "debian").check().expect("a real search");
        for (winner, baseline, field) in [
            ("x", "debian", "tune.winner.name"),
            ("gcc.O3", "debian", "tune.winner.name"),
            ("gcc.O2", "nope", "tune.baseline"),
        ] {
            let m = with(winner, baseline).check().unwrap_err();
            assert!(m.starts_with(field), "{winner}/{baseline}: {m}");
            assert!(!m.contains('\n'), "{m}");
        }
        // A winner among the variants but not among the candidates.
        let m = with("gcc.O0", "debian").check();
        assert!(m.is_ok(), "{m:?}");
        let mut r = with("gcc.O2", "debian");
        r.variants.push(crate::model::VariantRecord {
            name: "other".into(),
            ..Default::default()
        });
        r.tune.as_mut().unwrap().winner.as_mut().unwrap().name = "other".into();
        let m = r.check().unwrap_err();
        assert!(m.starts_with("tune.winner.name"), "{m}");
    }

    #[test]
    fn the_section_shows_the_ranking_the_block_and_the_effects_everywhere() {
        let r = Results {
            tune: Some(record()),
            ..Results::default()
        };
        let md = crate::markdown::render(&r);
        for want in [
            "Tune: the best build against debian",
            "| 1 | gcc.O2 |",
            "dropped: throughput",
            "```toml\n[[variant]]",
            "What each choice is worth",
            "| opt | `-O2` | `-O0` |",
            "set50 x16: ratio 0.950, slower",
        ] {
            assert!(md.contains(want), "{want}: {md}");
        }
        let term = crate::terminal(&r, false);
        for want in [
            "gcc.O2",
            "[[variant]]",
            "What each choice is worth",
            "set50 x16",
        ] {
            assert!(term.contains(want), "{want}: {term}");
        }
        let html = crate::html::render(&r);
        assert!(html.contains("What each choice is worth") && html.contains("<svg"));
        let json = serde_json::to_string(&r).unwrap();
        let back: Results = serde_json::from_str(&json).unwrap();
        let back = back.tune.expect("tune read back");
        assert_eq!(back.candidates.len(), 2);
        assert_eq!(back.winner, r.tune.as_ref().unwrap().winner);
        for key in ["\"candidates\"", "\"stages\"", "\"winner\"", "\"effects\""] {
            assert!(json.contains(key), "{key}");
        }
    }
}
