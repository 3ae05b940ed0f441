//! Number formats and verdict words the report's modules share: throughput with
//! separators, microseconds, durations, intervals and confidence levels, a comparison's
//! verdict in a few words, text made safe for a terminal and painted in a verdict's
//! colour. A leaf below the tables, charts and sections (it reads only the model), so
//! each of them can use it without reaching the summary.

use crate::model::{ComparisonRecord, Verdict};

/// Throughput with thousands separators, no decimals.
pub fn ops(v: f64) -> String {
    if !v.is_finite() {
        return "-".into();
    }
    let s = format!("{:.0}", v.abs());
    let mut out = String::new();
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    if v < 0.0 {
        format!("-{out}")
    } else {
        out
    }
}

/// A figure and its interval, `value [low, high]`, each number written by `f`.
pub fn with_interval(f: impl Fn(f64) -> String, value: f64, ci: [f64; 2]) -> String {
    format!("{} [{}, {}]", f(value), f(ci[0]), f(ci[1]))
}

/// A kind's ratio against the baseline with its interval and verdict,
/// `1.023 [0.998, 1.049] faster`; `-` where there is none.
pub fn ratio_record_text(k: Option<&crate::model::RatioRecord>) -> String {
    match k {
        Some(k) => format!(
            "{:.3} [{:.3}, {:.3}] {}",
            k.ratio,
            k.ci95[0],
            k.ci95[1],
            k.verdict.as_str()
        ),
        None => "-".into(),
    }
}

/// Microseconds with sensible precision.
pub fn micros(v: f64) -> String {
    if !v.is_finite() {
        "-".into()
    } else if v >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

/// Text safe for a terminal: control and invisible characters (an escape sequence or a
/// bidi override in a hand-edited results.json) are shown escaped, never sent raw.
pub fn printable(s: &str) -> String {
    bakeoff_os::name::printable(s)
}

/// `s` in the terminal colour of verdict `v` (none: as it is).
pub fn paint(s: &str, v: Option<Verdict>) -> String {
    let code = match v {
        Some(Verdict::Faster) => "32",
        Some(Verdict::Slower) => "31",
        Some(Verdict::Equivalent) => "36",
        Some(Verdict::Inconclusive) => "2",
        Some(Verdict::ClientBound | Verdict::MachineBusy) => "33",
        None => return s.to_string(),
    };
    format!("\x1b[{code}m{s}\x1b[0m")
}

/// A ratio CI, with its true coverage when that is short of 95%.
pub fn ci_text(ci: [f64; 2], coverage: f64) -> String {
    if coverage > 0.0 && coverage < 0.949 {
        format!("[{:.3}, {:.3}] ({:.0}%)", ci[0], ci[1], coverage * 100.0)
    } else {
        format!("[{:.3}, {:.3}]", ci[0], ci[1])
    }
}

/// A comparison's interval, with its level where the comparisons decided together moved
/// it from 95% ("[0.981, 1.062] at 98.3%"), or its coverage where too few runs fell short.
pub fn ratio_ci_text(k: &ComparisonRecord) -> String {
    let ci = format!("[{:.3}, {:.3}]", k.ci95[0], k.ci95[1]);
    if k.ci_coverage > 0.0 && k.ci_coverage < k.ci_level - 0.001 {
        return format!("{ci} ({:.0}%)", k.ci_coverage * 100.0);
    }
    if (k.ci_level - 0.95).abs() > 1e-9 {
        format!("{ci} at {}", level_text(k.ci_level))
    } else {
        ci
    }
}

/// A confidence level as a percentage with as many decimals as it needs: "95%", "98.3%".
pub fn level_text(level: f64) -> String {
    let pct = level * 100.0;
    if (pct - pct.round()).abs() < 0.05 {
        format!("{pct:.0}%")
    } else {
        format!("{pct:.1}%")
    }
}

/// What an inconclusive comparison's interval still allows: "between 2.0% slower and
/// 4.9% faster". None without a usable interval.
pub fn hiding_text(k: &ComparisonRecord) -> Option<String> {
    k.hiding?;
    bakeoff_stats::Hiding::new(
        (k.ci95[0], k.ci95[1]),
        bakeoff_stats::Direction::HigherIsBetter,
    )
    .map(|h| h.to_string())
}

/// A comparison's answer in a few words: "slower -4.8%", "equivalent ±1.0%",
/// "inconclusive -2.0% to +4.9%" (the differences the CI still allows, each way).
pub fn verdict_text(k: &ComparisonRecord) -> String {
    let pct = |x: f64| format!("{:.1}%", x * 100.0);
    match k.verdict {
        Verdict::Faster | Verdict::Slower => {
            format!("{} {:+.1}%", k.verdict, (k.ratio - 1.0) * 100.0)
        }
        Verdict::Equivalent => match k.detectable {
            Some(_) => format!("equivalent ±{}", pct(equivalence_shown(k))),
            None => "equivalent".into(),
        },
        Verdict::Inconclusive => match k.hiding {
            Some(_) => format!(
                "inconclusive {:+.1}% to {:+.1}%",
                (k.ci95[0] - 1.0) * 100.0,
                (k.ci95[1] - 1.0) * 100.0
            ),
            None => "inconclusive".into(),
        },
        Verdict::ClientBound => "client-bound".into(),
        Verdict::MachineBusy => "machine-busy".into(),
    }
}

/// An instruction-count comparison as instructions per operation, candidate over
/// baseline (the record's ratio is operations per instruction, so this is its inverse):
/// "instructions 1.200/op [1.199, 1.201] slower".
pub fn instructions_text(k: &ComparisonRecord) -> String {
    let inv = |x: f64| if x > 0.0 { 1.0 / x } else { f64::INFINITY };
    format!(
        "instructions {:.3}/op [{:.3}, {:.3}] {}",
        inv(k.ratio),
        inv(k.ci95[1]),
        inv(k.ci95[0]),
        k.verdict
    )
}

/// The band an equivalent comparison is inside: the larger distance of its CI from 1.
pub(crate) fn equivalence_shown(k: &ComparisonRecord) -> f64 {
    (1.0 - k.ci95[0]).abs().max((k.ci95[1] - 1.0).abs())
}

/// Seconds as "45s", "3m10s", "1h05m".
pub fn duration_text(s: f64) -> String {
    let s = s.max(0.0).round() as u64;
    if s < 60 {
        format!("{s}s")
    } else if s < 3600 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{}h{:02}m", s / 3600, (s % 3600) / 60)
    }
}
