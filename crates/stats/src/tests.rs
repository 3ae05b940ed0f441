//! Unit tests and the acceptance simulations: identical populations come out "same" at
//! least 95% of the time; a real 20% difference at 5 repetitions never does.

use super::*;
use bakeoff_load::rng::Rng;

fn normal(rng: &mut Rng) -> f64 {
    // Box-Muller.
    let (u1, u2) = (1.0 - rng.unit(), rng.unit());
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

fn sample(rng: &mut Rng, n: usize, mean: f64, cv: f64, lognormal: bool) -> Vec<f64> {
    (0..n)
        .map(|_| {
            if lognormal {
                mean * (cv * 3.0 * normal(rng)).exp()
            } else {
                mean * (1.0 + cv * normal(rng))
            }
        })
        .collect()
}

#[test]
fn exact_p_values_match_known_values() {
    // 5 vs 5 fully separated: 2 / C(10,5) = 2/252.
    let p = mann_whitney_u(&[1.0, 2.0, 3.0, 4.0, 5.0], &[6.0, 7.0, 8.0, 9.0, 10.0]);
    assert!((p - 2.0 / 252.0).abs() < 1e-12, "{p}");
    let p = mann_whitney_u(&[1.0, 3.0, 5.0], &[2.0, 4.0, 6.0]);
    assert!(p > 0.5);
    // Ties: normal approximation, still sane.
    let p = mann_whitney_u(&[1.0, 1.0, 2.0, 2.0], &[2.0, 3.0, 3.0, 3.0]);
    assert!((0.0..=1.0).contains(&p));
    assert_eq!(mann_whitney_u(&[1.0, 1.0], &[1.0, 1.0]), 1.0);
    assert!((mwu::normal_cdf(1.959_964) - 0.975).abs() < 1e-6);
}

#[test]
fn summary_and_coverage() {
    let s = summarize(&[5.0, 1.0, 3.0, 2.0, 4.0]).unwrap();
    assert_eq!((s.median, s.ci95, s.n), (3.0, (1.0, 5.0), 5));
    assert!((s.coverage - 0.9375).abs() < 1e-12);
    let xs: Vec<f64> = (1..=20).map(f64::from).collect();
    let s = summarize(&xs).unwrap();
    assert!(
        s.coverage >= 0.95 && s.ci95.0 > 1.0 && s.ci95.1 < 20.0,
        "{s:?}"
    );
    let one = summarize(&[7.0]).unwrap();
    assert_eq!((one.ci95, one.coverage), ((7.0, 7.0), 0.0));
    assert!(summarize(&[f64::NAN]).is_none());
    assert!(summarize(&[]).is_none());
    assert!(precise_enough(&[100.0, 100.5, 99.5, 100.2, 99.9], 0.01));
    assert!(!precise_enough(&[100.0, 130.0, 70.0, 100.0, 90.0], 0.01));
}

#[test]
fn compare_edges() {
    assert!(compare(&[], &[1.0], Direction::HigherIsBetter, 0).is_none());
    assert!(compare(&[0.0, 0.0], &[1.0], Direction::HigherIsBetter, 0).is_none());
    let c = compare(&[10.0], &[12.0], Direction::HigherIsBetter, 0).unwrap();
    assert_eq!((c.verdict, c.p_value), (Verdict::Same, 1.0));
    let c = compare(
        &[10.0, 10.1, 9.9, 10.0, 10.05],
        &[12.0, 12.1, 11.9, 12.0, 12.05],
        Direction::LowerIsBetter,
        0,
    )
    .unwrap();
    assert_eq!(c.verdict, Verdict::Slower);
    assert!(
        c.ci95.0 > 1.0 && c.ci95.0 <= c.ratio && c.ratio <= c.ci95.1,
        "{c:?}"
    );
    assert_eq!(Verdict::Faster.to_string(), "faster");
    assert!(c.ci_coverage >= 0.95, "{c:?}");
    let two = compare(&[10.0, 10.1], &[12.0, 12.1], Direction::HigherIsBetter, 0).unwrap();
    assert!((two.ci_coverage - 2.0 / 3.0).abs() < 1e-9, "{two:?}");
    assert_eq!(
        two.verdict,
        Verdict::Same,
        "2 vs 2 can never reach p < 0.05"
    );
}

fn same_rate(lognormal: bool) -> f64 {
    let mut rng = Rng::new(2026);
    let trials = 2000;
    let same = (0..trials)
        .filter(|_| {
            let a = sample(&mut rng, 5, 100_000.0, 0.05, lognormal);
            let b = sample(&mut rng, 5, 100_000.0, 0.05, lognormal);
            compare(&a, &b, Direction::HigherIsBetter, 1)
                .unwrap()
                .verdict
                == Verdict::Same
        })
        .count();
    same as f64 / trials as f64
}

#[test]
fn identical_populations_come_out_same() {
    let normal = same_rate(false);
    let heavy = same_rate(true);
    println!("same rate: normal {normal}, lognormal {heavy}");
    assert!(normal >= 0.95, "normal: {normal}");
    assert!(heavy >= 0.95, "lognormal: {heavy}");
}

#[test]
fn a_real_20_percent_difference_is_never_same_at_5_repetitions() {
    let mut rng = Rng::new(7);
    for _ in 0..2000 {
        let base = sample(&mut rng, 5, 100_000.0, 0.03, false);
        let fast = sample(&mut rng, 5, 120_000.0, 0.03, false);
        let c = compare(&base, &fast, Direction::HigherIsBetter, 1).unwrap();
        assert_eq!(c.verdict, Verdict::Faster, "{base:?} {fast:?} {c:?}");
        assert!(c.ci95.0 > 1.0);
        let c = compare(&fast, &base, Direction::HigherIsBetter, 1).unwrap();
        assert_eq!(c.verdict, Verdict::Slower);
    }
}

#[test]
fn compare_is_fast_and_deterministic() {
    let a: Vec<f64> = (0..20).map(|i| 100.0 + f64::from(i)).collect();
    let b: Vec<f64> = (0..20).map(|i| 105.0 + f64::from(i)).collect();
    let t = std::time::Instant::now();
    let x = compare(&a, &b, Direction::HigherIsBetter, 3);
    assert!(t.elapsed() < std::time::Duration::from_millis(50));
    assert_eq!(x, compare(&a, &b, Direction::HigherIsBetter, 3));
}
