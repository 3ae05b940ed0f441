//! The adjusted intervals against brute force: BH's selection from its definition, each
//! interval by inverting the signed-rank test over every shift, and the answer read off
//! the interval.

use super::*;
use bakeoff_engine::rng::Rng;

fn normal(rng: &mut Rng) -> f64 {
    let (u1, u2) = (1.0 - rng.unit(), rng.unit());
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

type Tagged = Vec<(usize, f64)>;

/// Paired rounds whose log ratios have centre `shift` and spread `sigma`.
fn rounds(rng: &mut Rng, n: usize, shift: f64, sigma: f64) -> (Tagged, Tagged) {
    let b: Vec<(usize, f64)> = (0..n).map(|r| (r, 1000.0)).collect();
    let c = (0..n)
        .map(|r| (r, 1000.0 * (shift + sigma * normal(rng)).exp()))
        .collect();
    (b, c)
}

/// BH's selection from its definition: R is the largest k with p_(k) <= k alpha / m,
/// and the selected are the R smallest p-values.
fn bh_selected(p: &[f64], alpha: f64) -> Vec<bool> {
    let m = p.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|a, b| p[*a].total_cmp(&p[*b]));
    let r = (1..=m)
        .filter(|&k| p[order[k - 1]] <= k as f64 * alpha / m as f64)
        .max()
        .unwrap_or(0);
    let mut selected = vec![false; m];
    for &i in &order[..r] {
        selected[i] = true;
    }
    selected
}

/// The set of shifts theta (of the log ratios) the signed-rank test at level `a` does not
/// reject, by trying a point between every two neighbouring Walsh averages: its lowest
/// and highest ends, as ratios.
fn inverted_interval(d: &[f64], a: f64) -> (f64, f64) {
    let mut walsh = Vec::new();
    for i in 0..d.len() {
        for j in i..d.len() {
            walsh.push((d[i] + d[j]) / 2.0);
        }
    }
    walsh.sort_by(f64::total_cmp);
    let accepted = |theta: f64| {
        let shifted: Vec<f64> = d.iter().map(|x| x - theta).collect();
        signed_rank_p(&shifted) > a
    };
    let mut lo = f64::INFINITY;
    let mut hi = f64::NEG_INFINITY;
    for w in walsh.windows(2) {
        let mid = (w[0] + w[1]) / 2.0;
        if accepted(mid) {
            lo = lo.min(w[0]);
            hi = hi.max(w[1]);
        }
    }
    (lo.exp(), hi.exp())
}

#[test]
fn adjusted_intervals_match_brute_force_and_agree_with_the_answer() {
    let mut rng = Rng::new(30);
    let rule = Rule::new(Direction::HigherIsBetter);
    let (mut checked, mut disagreed_raw) = (0, 0);
    for family in 0..60 {
        let m = 2 + family % 5;
        let mut ks: Vec<Comparison> = (0..m)
            .map(|i| {
                let n = 8 + (family + i) % 12;
                // Effects from none to clear, at a noise that leaves many near the edge.
                let shift = [0.0, 0.01, 0.02, 0.04, -0.03][(family + 2 * i) % 5];
                let (b, c) = rounds(&mut rng, n, shift, 0.04);
                compare_rounds(&b, &c, &rule).unwrap()
            })
            .collect();
        let raw: Vec<Comparison> = ks.clone();
        decide(ks.iter_mut(), rule.alpha, rule.equivalence);
        let p: Vec<f64> = raw.iter().map(|k| k.p_value).collect();
        let selected = bh_selected(&p, rule.alpha);
        let r = selected.iter().filter(|s| **s).count() as f64;
        for ((k, before), sel) in ks.iter().zip(&raw).zip(&selected) {
            assert_eq!(k.p_adjusted < rule.alpha, *sel, "selection");
            let share = if *sel { r } else { r + 1.0 };
            let level = 1.0 - share * rule.alpha / m as f64;
            assert!(
                (k.ci_level - level).abs() < 1e-12,
                "{} vs {level}",
                k.ci_level
            );
            let d: Vec<f64> = k.round_ratios.iter().map(|x| x.1.ln()).collect();
            let (lo, hi) = inverted_interval(&d, 1.0 - level);
            assert!(
                (k.ci95.0 - lo).abs() < 1e-12 && (k.ci95.1 - hi).abs() < 1e-12,
                "family {family}: decided [{}, {}], brute force [{lo}, {hi}] at {level}",
                k.ci95.0,
                k.ci95.1
            );
            // The answer is the interval's: faster or slower exactly when it excludes 1
            // (at full coverage), and only for a selected comparison.
            let excludes = k.ci95.0 > 1.0 || k.ci95.1 < 1.0;
            let decisive = matches!(k.verdict, Verdict::Faster | Verdict::Slower);
            if k.ci_coverage >= 0.9 {
                assert_eq!(decisive, excludes, "family {family}: {k:?}");
            }
            assert!(!decisive || *sel);
            if !sel {
                assert!(!excludes, "an unselected interval covers 1: {k:?}");
            }
            assert_eq!(before.ci_unadjusted, k.ci_unadjusted);
            disagreed_raw += usize::from(k.excluded_only_unadjusted());
            checked += 1;
        }
    }
    assert!(checked > 200);
    // The case the adjustment exists for occurs among these families.
    assert!(disagreed_raw > 0);
}

#[test]
fn a_raw_interval_that_excludes_1_widens_to_cover_it_over_three_comparisons() {
    // Ten rounds, nine a little faster: the signed-rank p alone is 0.027 (raw interval
    // excludes 1); over three comparisons BH takes it to 0.082, nothing is selected, and the
    // interval is the 1 - 0.05/3 one, which covers 1: inconclusive, and says so.
    let logs = [
        0.031, 0.024, 0.045, 0.012, -0.008, 0.038, -0.019, 0.027, 0.05, 0.002,
    ];
    let b: Vec<(usize, f64)> = (0..10).map(|r| (r, 100.0)).collect();
    let c: Vec<(usize, f64)> = logs
        .iter()
        .enumerate()
        .map(|(r, x)| (r, 100.0 * f64::exp(*x)))
        .collect();
    let noise: Vec<(usize, f64)> = logs
        .iter()
        .enumerate()
        .map(|(r, x)| (r, 100.0 * f64::exp(if r % 2 == 0 { *x } else { -*x })))
        .collect();
    let rule = Rule::new(Direction::HigherIsBetter);
    let mut ks = [
        compare_rounds(&b, &c, &rule).unwrap(),
        compare_rounds(&b, &noise, &rule).unwrap(),
        compare_rounds(&b, &noise, &rule).unwrap(),
    ];
    let k = &ks[0];
    assert!(k.p_value < 0.05 && k.p_value > 0.05 / 3.0, "{}", k.p_value);
    assert!(k.ci95.0 > 1.0, "raw {:?}", k.ci95);
    assert_eq!(k.verdict, Verdict::Faster);
    decide(ks.iter_mut(), rule.alpha, rule.equivalence);
    let k = &ks[0];
    assert!(k.p_adjusted >= 0.05);
    assert_eq!(k.verdict, Verdict::Inconclusive);
    assert!((k.ci_level - (1.0 - 0.05 / 3.0)).abs() < 1e-12);
    assert!(k.ci95.0 <= 1.0 && k.ci95.1 >= 1.0, "adjusted {:?}", k.ci95);
    assert!(k.excluded_only_unadjusted());
    let h = Hiding::new(k.ci95, k.direction).unwrap();
    assert!(h.from <= 0.0 && h.to > 0.0, "{h}");
    // Alone, the same comparison is faster at the plain 95% level.
    let mut alone = [compare_rounds(&b, &c, &rule).unwrap()];
    decide(alone.iter_mut(), rule.alpha, rule.equivalence);
    assert_eq!(alone[0].verdict, Verdict::Faster);
    assert_eq!(alone[0].ci_level, 0.95);
}

#[test]
fn unpaired_and_layout_intervals_widen_with_the_level() {
    let rule = Rule {
        pairing: Pairing::Unpaired,
        ..Rule::new(Direction::HigherIsBetter)
    };
    let b = [100.0, 102.0, 98.0, 101.0, 99.0, 103.0, 97.0, 100.5];
    let c = [104.0, 106.0, 101.0, 105.0, 103.0, 107.0, 102.0, 104.5];
    let k = compare(&b, &c, &rule).unwrap();
    let ((lo, hi), cov) = k.interval_at(0.99).unwrap();
    assert!(
        lo <= k.ci95.0 && hi >= k.ci95.1 && cov >= 0.99,
        "{lo} {hi} {cov}"
    );
    assert_eq!(k.interval_at(0.95).unwrap().0, k.ci95);
    let mut rng = Rng::new(7);
    let (bb, cc) = rounds(&mut rng, 24, 0.03, 0.03);
    let nested = compare_layouts(&bb, &cc, 4, &Rule::new(Direction::HigherIsBetter)).unwrap();
    let ((lo, hi), _) = nested.interval_at(0.99).unwrap();
    assert!(lo < nested.ci95.0 && hi > nested.ci95.1);
    // A comparison read back from a file keeps its interval.
    let mut read = k.clone();
    read.basis = Basis::None;
    read.adjust_interval(0.99);
    assert_eq!(read.ci95, k.ci95);
    assert_eq!(read.ci_level, 0.95);
}

#[test]
fn fcr_levels_follow_the_selection() {
    // m = 4, two selected: selected at 1 - 2(0.05)/4, the others at 1 - 3(0.05)/4.
    let levels = fcr_levels(&[0.01, 0.2, 0.04, 0.5], 0.05);
    assert_eq!(levels, vec![0.975, 1.0 - 0.0375, 0.975, 1.0 - 0.0375]);
    assert_eq!(fcr_levels(&[0.01], 0.05), vec![0.95]);
    assert_eq!(fcr_levels(&[0.3], 0.05), vec![0.95]);
}
