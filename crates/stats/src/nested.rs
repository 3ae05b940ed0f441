//! Layouts as a level of repetition: runs within a layout, layouts within a variant.
//!
//! With `[plan] layouts = K`, every build variant exists as K binaries that differ only in
//! where the linker put their functions, and round r runs layout r mod K of each. A
//! difference between two variants is then only a finding if it is larger than what
//! moving the code around does by itself. So the comparison is made per layout slot (the
//! rounds that ran layout k), giving K estimates of the log ratio, each carrying its
//! own layouts' luck; their mean is the ratio, and its CI and p-value come from
//! Student's t with K - 1 degrees of freedom over those K estimates (clusters analysed
//! by their means, exact for normal cluster effects). More rounds sharpen each estimate;
//! only more layouts shrink the layout part of the spread, as the report says.
//!
//! Per variant and cell, [`layout_spread`] splits the spread of the runs into the part
//! between runs of one binary and the part between layouts (one-way random-effects
//! ANOVA, the unbalanced-design estimator).

use crate::{finish, Comparison, Rule, Verdict};

/// How the runs of one variant in one cell spread, within and between layouts.
#[derive(Debug, Clone, PartialEq)]
pub struct LayoutSpread {
    /// Layouts with at least one valid run.
    pub layouts: usize,
    /// Standard deviation between runs of one binary (pooled within layouts), of the log
    /// figure: about the relative spread.
    pub between_runs: f64,
    /// The standard deviation of the layouts' true levels (ANOVA estimate, 0 when the
    /// layout means vary no more than the runs explain), of the log figure.
    pub between_layouts: f64,
    /// Largest minus smallest layout median, relative to the smallest: the difference
    /// between two layouts of this one variant, as seen.
    pub range: f64,
    /// Each layout's median figure, by layout index.
    pub medians: Vec<(usize, f64)>,
}

/// The spread of `runs` ((layout, figure), figures > 0) within and between layouts; None
/// without two layouts that have runs.
pub fn layout_spread(runs: &[(usize, f64)]) -> Option<LayoutSpread> {
    let groups = by_key(
        runs.iter()
            .filter(|x| x.1.is_finite() && x.1 > 0.0)
            .copied(),
    );
    if groups.len() < 2 {
        return None;
    }
    let logs: Vec<Vec<f64>> = groups
        .iter()
        .map(|(_, v)| v.iter().map(|x| x.ln()).collect())
        .collect();
    let (within, between) = variance_components(&logs);
    let medians: Vec<(usize, f64)> = groups
        .iter()
        .map(|(k, v)| (*k, median(v.clone())))
        .collect();
    let lo = medians.iter().map(|m| m.1).fold(f64::INFINITY, f64::min);
    let hi = medians.iter().map(|m| m.1).fold(0.0, f64::max);
    Some(LayoutSpread {
        layouts: groups.len(),
        between_runs: within.sqrt(),
        between_layouts: between.sqrt(),
        range: hi / lo - 1.0,
        medians,
    })
}

/// One-way random-effects ANOVA over groups of values: (within-group variance, the
/// variance of the group levels), the latter by the method of moments for unequal group
/// sizes, (MS_between - MS_within) / n0, floored at 0. Groups of one value add to the
/// between part only.
pub fn variance_components(groups: &[Vec<f64>]) -> (f64, f64) {
    let groups: Vec<&Vec<f64>> = groups.iter().filter(|g| !g.is_empty()).collect();
    let k = groups.len();
    let n: usize = groups.iter().map(|g| g.len()).sum();
    if k == 0 {
        return (0.0, 0.0);
    }
    let mean = |g: &[f64]| g.iter().sum::<f64>() / g.len() as f64;
    let grand = groups.iter().flat_map(|g| g.iter()).sum::<f64>() / n as f64;
    let ss_within: f64 = groups
        .iter()
        .map(|g| {
            let m = mean(g);
            g.iter().map(|x| (x - m).powi(2)).sum::<f64>()
        })
        .sum();
    let ss_between: f64 = groups
        .iter()
        .map(|g| g.len() as f64 * (mean(g) - grand).powi(2))
        .sum();
    let ms_within = if n > k {
        ss_within / (n - k) as f64
    } else {
        0.0
    };
    if k < 2 {
        return (ms_within, 0.0);
    }
    let ms_between = ss_between / (k - 1) as f64;
    let sum_sq: f64 = groups.iter().map(|g| (g.len() * g.len()) as f64).sum();
    let n0 = (n as f64 - sum_sq / n as f64) / (k - 1) as f64;
    (ms_within, ((ms_between - ms_within) / n0).max(0.0))
}

/// A candidate against the baseline when rounds rotate through `layouts` layout slots
/// (round r ran slot r mod `layouts`): one estimate of the log ratio per slot (the
/// Hodges-Lehmann estimate of its rounds' paired log ratios, or the difference of log
/// medians where no round pairs), then Student's t over the slots. None with fewer than
/// two slots estimated: the caller falls back to the round-level comparison.
pub fn compare_layouts(
    baseline: &[(usize, f64)],
    candidate: &[(usize, f64)],
    layouts: usize,
    rule: &Rule,
) -> Option<Comparison> {
    if layouts < 2 {
        return None;
    }
    let ok = |x: &&(usize, f64)| x.1.is_finite() && x.1 > 0.0;
    let b: Vec<(usize, f64)> = baseline.iter().filter(ok).copied().collect();
    let c: Vec<(usize, f64)> = candidate.iter().filter(ok).copied().collect();
    let mut round_ratios = Vec::new();
    let mut per_slot = Vec::new();
    // Each slot's paired log ratios, for the floor on the estimate's spread.
    let mut within: Vec<Vec<f64>> = Vec::new();
    for slot in 0..layouts {
        let in_slot = |v: &[(usize, f64)]| -> Vec<(usize, f64)> {
            v.iter()
                .filter(|x| x.0 % layouts == slot)
                .copied()
                .collect()
        };
        let (bs, cs) = (in_slot(&b), in_slot(&c));
        let pairs: Vec<(usize, f64)> = cs
            .iter()
            .filter_map(|&(r, y)| {
                bs.iter()
                    .find(|x| x.0 == r)
                    .map(|&(_, x)| (r, y.ln() - x.ln()))
            })
            .collect();
        let estimate = if pairs.is_empty() {
            if bs.is_empty() || cs.is_empty() {
                continue;
            }
            let logs = |v: &[(usize, f64)]| median(v.iter().map(|x| x.1.ln()).collect());
            logs(&cs) - logs(&bs)
        } else {
            let d: Vec<f64> = pairs.iter().map(|x| x.1).collect();
            let e = crate::hodges_lehmann(&d, crate::ALPHA)?.0;
            within.push(d);
            e
        };
        round_ratios.extend(pairs.iter().map(|(r, d)| (*r, d.exp())));
        per_slot.push(estimate);
    }
    let k = per_slot.len();
    if k < 2 {
        return None;
    }
    let (centre, half, p_value, se) = slot_interval(&per_slot, &within, crate::ALPHA);
    round_ratios.sort_by_key(|x| x.0);
    Some(finish(
        Comparison {
            ratio: centre.exp(),
            ci95: ((centre - half).exp(), (centre + half).exp()),
            ci_coverage: 1.0 - crate::ALPHA,
            ci_level: 1.0 - crate::ALPHA,
            ci_unadjusted: ((centre - half).exp(), (centre + half).exp()),
            p_value,
            p_adjusted: p_value,
            paired: !round_ratios.is_empty(),
            rounds: round_ratios.len().max(b.len().min(c.len())),
            sizes: (b.len(), c.len()),
            round_ratios,
            direction: rule.direction,
            verdict: Verdict::Inconclusive,
            layouts: k,
            resolution: 0.0,
            basis: crate::Basis::Slots {
                centre,
                se,
                df: k as f64 - 1.0,
            },
        },
        rule,
    ))
}

/// The mean of the slot estimates, its CI half-width, p-value and standard error: Student's t with k - 1
/// degrees of freedom, its standard error the larger of the one the k estimates show
/// and the one the rounds inside the slots imply (the pooled spread of their paired log
/// ratios over each slot's rounds). With three or four slots, the estimates alone can
/// agree by chance far more closely than their rounds allow; the floor keeps such a
/// coincidence from passing for precision.
fn slot_interval(estimates: &[f64], within: &[Vec<f64>], alpha: f64) -> (f64, f64, f64, f64) {
    let k = estimates.len() as f64;
    let mean = estimates.iter().sum::<f64>() / k;
    let var = estimates.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (k - 1.0);
    let (pooled, _) = variance_components(within);
    let floor: f64 = within
        .iter()
        .filter(|d| !d.is_empty())
        .map(|d| pooled / d.len() as f64)
        .sum::<f64>()
        / (k * k);
    let se = (var / k).max(floor).sqrt();
    let df = k - 1.0;
    if se == 0.0 {
        return (mean, 0.0, if mean == 0.0 { 1.0 } else { 0.0 }, 0.0);
    }
    (
        mean,
        t_quantile(1.0 - alpha / 2.0, df) * se,
        t_two_sided_p(mean / se, df),
        se,
    )
}

/// Mean of `xs`, the half-width of its two-sided `1 - alpha` t interval, and the t test's
/// two-sided p-value against 0. Identical values give a zero-width interval (p 0 unless the
/// mean is 0).
pub fn t_interval(xs: &[f64], alpha: f64) -> (f64, f64, f64) {
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    if xs.len() < 2 {
        return (mean, f64::INFINITY, 1.0);
    }
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    let se = (var / n).sqrt();
    let df = n - 1.0;
    if se == 0.0 {
        return (mean, 0.0, if mean == 0.0 { 1.0 } else { 0.0 });
    }
    let p = t_two_sided_p(mean / se, df);
    (mean, t_quantile(1.0 - alpha / 2.0, df) * se, p)
}

/// P(|T| >= |t|) for Student's t with `df` degrees of freedom: I_{df/(df+t^2)}(df/2, 1/2).
pub fn t_two_sided_p(t: f64, df: f64) -> f64 {
    if !t.is_finite() {
        return 0.0;
    }
    incomplete_beta(df / 2.0, 0.5, df / (df + t * t)).clamp(0.0, 1.0)
}

/// The `q` quantile (q > 0.5) of Student's t with `df` degrees of freedom, by bisection on
/// the distribution function.
pub fn t_quantile(q: f64, df: f64) -> f64 {
    // Remembered per thread: a study asks for the same few quantiles thousands of times
    // (the capacity coverage test spent most of its time here), and each is 200 steps of
    // the incomplete beta function.
    thread_local! {
        static KNOWN: std::cell::RefCell<std::collections::HashMap<(u64, u64), f64>> =
            std::cell::RefCell::new(std::collections::HashMap::new());
    }
    let key = (q.to_bits(), df.to_bits());
    if let Some(t) = KNOWN.with(|k| k.borrow().get(&key).copied()) {
        return t;
    }
    let t = t_quantile_solved(q, df);
    KNOWN.with(|k| {
        let mut k = k.borrow_mut();
        if k.len() < 4096 {
            k.insert(key, t);
        }
    });
    t
}

fn t_quantile_solved(q: f64, df: f64) -> f64 {
    let upper = |t: f64| t_two_sided_p(t, df) / 2.0;
    let target = 1.0 - q;
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    while upper(hi) > target && hi < 1e12 {
        hi *= 2.0;
    }
    for _ in 0..200 {
        let mid = (lo + hi) / 2.0;
        if upper(mid) > target {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    (lo + hi) / 2.0
}

/// The regularized incomplete beta function I_x(a, b), by its continued fraction
/// (evaluated with the modified Lentz method, using the symmetry
/// I_x(a, b) = 1 - I_{1-x}(b, a) where the fraction converges slowly).
fn incomplete_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let front =
        (ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln()).exp();
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_fraction(a, b, x) / a
    } else {
        1.0 - front * beta_fraction(b, a, 1.0 - x) / b
    }
}

fn beta_fraction(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let guard = |v: f64| if v.abs() < TINY { TINY } else { v };
    let mut c = 1.0;
    let mut d = 1.0 / guard(1.0 - (a + b) * x / (a + 1.0));
    let mut h = d;
    for m in 1..=300 {
        let m = m as f64;
        // The even step, then the odd one, of the fraction's terms.
        let even = m * (b - m) * x / ((a + 2.0 * m - 1.0) * (a + 2.0 * m));
        d = 1.0 / guard(1.0 + even * d);
        c = guard(1.0 + even / c);
        h *= d * c;
        let odd = -(a + m) * (a + b + m) * x / ((a + 2.0 * m) * (a + 2.0 * m + 1.0));
        d = 1.0 / guard(1.0 + odd * d);
        c = guard(1.0 + odd / c);
        let step = d * c;
        h *= step;
        if (step - 1.0).abs() < 1e-15 {
            break;
        }
    }
    h
}

/// ln Γ(x) for x > 0 (Lanczos approximation, g = 7, nine coefficients).
fn ln_gamma(x: f64) -> f64 {
    const G: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection.
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let t = x + 7.5;
    let sum = G[1..]
        .iter()
        .enumerate()
        .fold(G[0], |acc, (i, g)| acc + g / (x + i as f64 + 1.0));
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + sum.ln()
}

fn by_key(xs: impl Iterator<Item = (usize, f64)>) -> Vec<(usize, Vec<f64>)> {
    let mut map: std::collections::BTreeMap<usize, Vec<f64>> = Default::default();
    for (k, v) in xs {
        map.entry(k).or_default().push(v);
    }
    map.into_iter().collect()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    crate::median_sorted(&v)
}
