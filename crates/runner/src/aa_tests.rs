//! Tests of the A/A check (`aa.rs`) through the whole analysis (`analyze.rs`): a module
//! of its own, used by neither, so the modules stay a DAG.

use crate::analyze::analyze;
use bakeoff_report::model::{Cell, PlanRecord, Results, Run, VariantRecord, Verdict};

/// The baseline's figures per round, with some noise.
const BASE: [f64; 8] = [100.0, 101.0, 99.0, 100.5, 102.0, 98.0, 100.0, 101.5];

fn cell(variant: &str, factors: &[f64]) -> Cell {
    let runs = BASE
        .iter()
        .zip(factors.iter().cycle())
        .enumerate()
        .map(|(round, (b, f))| Run {
            round,
            ops_per_s: b * f,
            valid: true,
            ..Run::default()
        })
        .collect();
    Cell::new("kv", variant, 16, runs)
}

fn variant(name: &str, aa: bool) -> VariantRecord {
    VariantRecord {
        name: name.into(),
        status: "ok".into(),
        aa,
        ..VariantRecord::default()
    }
}

/// Baseline `a`, candidate `b` at `b` times it, the A/A variant `a~aa` at `aa` (one
/// factor per round, cycled).
fn experiment(b: &[f64], aa: Option<&[f64]>) -> Results {
    let mut cells = vec![cell("a", &[1.0]), cell("b", b)];
    let mut variants = vec![variant("a", false), variant("b", false)];
    if let Some(f) = aa {
        cells.push(cell("a~aa", f));
        variants.push(variant("a~aa", true));
    }
    let mut r = Results {
        name: "t".into(),
        status: "complete".into(),
        plan: PlanRecord {
            repetitions: Some(BASE.len()),
            duration_s: Some(1.0),
            baseline: "a".into(),
            equivalence: 0.01,
            ..PlanRecord::default()
        },
        variants,
        cells,
        ..Results::default()
    };
    analyze(&mut r);
    r
}

/// An A/A comparison that comes out slower: the warning first, every other verdict
/// marked suspect, the summary naming it; the A/A comparison itself is marked, not
/// suspect.
#[test]
fn a_slower_aa_check_puts_the_warning_on_every_verdict() {
    let r = experiment(&[1.05, 1.06], Some(&[0.96, 0.97]));
    let aa = r.comparison("kv", "a~aa", 16).expect("the A/A comparison");
    assert_eq!(aa.verdict, Verdict::Slower);
    assert!(aa.aa && !aa.suspect);
    let b = r.comparison("kv", "b", 16).expect("the candidate");
    assert_eq!(b.verdict, Verdict::Faster);
    assert!(b.suspect && !b.aa);
    let s = r.aa.as_ref().expect("the A/A summary");
    assert!(s.differs(), "{s:?}");
    assert_eq!(
        (s.variant.as_str(), s.verdict, s.comparisons, s.differ),
        ("a~aa", Verdict::Slower, 1, 1)
    );
    assert!(s.ratio < 1.0 && s.ci95[1] < 1.0, "{s:?}");
    assert!(
        r.warnings[0].starts_with("the A/A check found a difference")
            && r.warnings[0].contains("every verdict here is suspect")
            && r.warnings[0].contains("a~aa came out slower than a"),
        "{:?}",
        r.warnings
    );
    // The summary and the markers survive results.json.
    let back = Results::from_json(&serde_json::to_string(&r).unwrap()).unwrap();
    let again = back.aa.as_ref().unwrap();
    assert_eq!((again.verdict, again.differ), (Verdict::Slower, 1));
    assert!(back.comparison("kv", "b", 16).unwrap().suspect);
}

/// An inconclusive A/A comparison: summarized (its width is the machine's noise
/// floor), and no verdict is marked.
#[test]
fn an_inconclusive_aa_check_marks_nothing() {
    let r = experiment(&[1.05, 1.06], Some(&[0.97, 1.03]));
    let aa = r.comparison("kv", "a~aa", 16).unwrap();
    assert_eq!(aa.verdict, Verdict::Inconclusive);
    assert!(aa.aa);
    let s = r.aa.as_ref().unwrap();
    assert!(!s.differs() && s.detectable.is_some(), "{s:?}");
    assert!(r.comparisons.iter().all(|k| !k.suspect));
    assert!(
        !r.warnings.iter().any(|w| w.contains("A/A")),
        "{:?}",
        r.warnings
    );
    // Without aa: no summary, nothing marked.
    let plain = experiment(&[1.05, 1.06], None);
    assert!(plain.aa.is_none());
    assert!(plain.comparisons.iter().all(|k| !k.aa && !k.suspect));
}

/// The A/A comparison is decided in the same false-discovery-rate family: with it, a
/// candidate's p-value is adjusted over two comparisons, not one.
#[test]
fn the_aa_comparison_is_in_the_fdr_family() {
    // Six of eight rounds in one direction: raw p near the 5% line.
    let b = [1.02, 1.03, 1.01, 0.995, 1.02, 0.99, 1.03, 1.01];
    let alone = experiment(&b, None);
    let with = experiment(&b, Some(&[0.97, 1.03]));
    let (k1, k2) = (
        alone.comparison("kv", "b", 16).unwrap(),
        with.comparison("kv", "b", 16).unwrap(),
    );
    assert_eq!(k1.p_value, k2.p_value);
    assert!((k1.p_adjusted - k1.p_value).abs() < 1e-12, "{k1:?}");
    assert!(k2.p_adjusted > k1.p_adjusted, "{k1:?} {k2:?}");
}
