//! The headline table every exporter shows: one row per cell, with the ratio to the
//! baseline and the verdict. Built once as strings, rendered as terminal text or markdown.

use crate::model::{Cell, Results, Verdict};

pub const HEADER: [&str; 12] = [
    "workload",
    "conns",
    "variant",
    "ops/s",
    "95% CI",
    "p50 us",
    "p99 us",
    "p99.9 us",
    "ratio",
    "ratio 95% CI",
    "verdict",
    "notes",
];

/// One row of the headline table, as display strings.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub cells: Vec<String>,
    pub verdict: Option<Verdict>,
}

/// Rows in experiment order: workload, then connections, then variant order.
pub fn rows(r: &Results) -> Vec<Row> {
    let mut out = Vec::new();
    for c in &r.cells {
        out.push(row(r, c));
    }
    out
}

fn row(r: &Results, c: &Cell) -> Row {
    let baseline = r.plan.baseline.as_str();
    let cmp = r.comparison(&c.workload, &c.variant, c.connections);
    let has_data = c.valid_runs > 0;
    let (ratio, ratio_ci, verdict) = match (cmp, c.variant == baseline) {
        (Some(k), _) => (
            format!("{:.3}", k.ratio),
            ci_text(k.ci95, k.ci_coverage),
            k.verdict.as_str().to_string(),
        ),
        (None, true) => ("1.000".into(), String::new(), "baseline".into()),
        (None, false) => (String::new(), String::new(), "-".into()),
    };
    let num = |v: f64| if has_data { ops(v) } else { "-".into() };
    // A sqlsuite cell times operations, not requests: no latency histogram.
    let has_latency = has_data && c.latency_us.p99 > 0.0;
    let lat = |v: f64| if has_latency { micros(v) } else { "-".into() };
    Row {
        cells: vec![
            c.workload.clone(),
            c.connections.to_string(),
            c.variant.clone(),
            num(c.median_ops_per_s),
            if has_data {
                format!("[{}, {}]", ops(c.ci95[0]), ops(c.ci95[1]))
            } else {
                "-".into()
            },
            lat(c.latency_us.p50),
            lat(c.latency_us.p99),
            lat(c.latency_us.p999),
            ratio,
            ratio_ci,
            verdict,
            notes(c).join("; "),
        ],
        verdict: cmp.map(|k| k.verdict),
    }
}

/// Flags a reader must see next to the figure they qualify.
pub fn notes(c: &Cell) -> Vec<String> {
    let mut n = Vec::new();
    let total = c.runs.len();
    if c.verify_failures > 0 {
        n.push(format!("VERIFY FAILED x{}", c.verify_failures));
    }
    let invalid = total - c.runs.iter().filter(|r| r.valid).count();
    if invalid > 0 {
        n.push(format!("invalid {invalid}/{total}"));
    }
    if c.client_bound_runs > 0 {
        n.push(format!("client-bound {}/{total}", c.client_bound_runs));
    }
    if c.cv > 0.05 && c.valid_runs >= 3 {
        n.push(format!("noisy (CV {:.0}%)", c.cv * 100.0));
    }
    if let Some(s) = c.stop_reason.as_deref().filter(|s| *s != "repetitions") {
        n.push(format!("stopped: {s}"));
    }
    n
}

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

/// Renders rows as an aligned plain-text table; verdict cells coloured when `color`.
pub fn text_table(header: &[&str], rows: &[Row], color: bool) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for r in rows {
        for (w, c) in widths.iter_mut().zip(&r.cells) {
            *w = (*w).max(c.chars().count());
        }
    }
    let mut out = String::new();
    let line = |cells: Vec<String>, verdict: Option<Verdict>, out: &mut String| {
        let mut parts = Vec::new();
        for (i, (c, w)) in cells.iter().zip(&widths).enumerate() {
            let padded = if is_numeric_col(i) {
                format!("{c:>w$}")
            } else {
                format!("{c:<w$}")
            };
            parts.push(if color && i == 10 {
                paint(&padded, verdict)
            } else {
                padded
            });
        }
        out.push_str(parts.join("  ").trim_end());
        out.push('\n');
    };
    line(
        header.iter().map(|s| s.to_string()).collect(),
        None,
        &mut out,
    );
    line(
        widths.iter().map(|w| "-".repeat(*w)).collect(),
        None,
        &mut out,
    );
    for r in rows {
        line(r.cells.clone(), r.verdict, &mut out);
    }
    out
}

fn is_numeric_col(i: usize) -> bool {
    matches!(i, 1 | 3 | 5 | 6 | 7 | 8)
}

fn paint(s: &str, v: Option<Verdict>) -> String {
    let code = match v {
        Some(Verdict::Faster) => "32",
        Some(Verdict::Slower) => "31",
        Some(Verdict::Same) => "2",
        None => return s.to_string(),
    };
    format!("\x1b[{code}m{s}\x1b[0m")
}

/// Renders rows as a GitHub-flavoured markdown table (pipes in cells escaped).
pub fn markdown_table(header: &[&str], rows: &[Vec<String>]) -> String {
    let esc = |s: &str| s.replace('|', "\\|").replace('\n', " ");
    let mut out = format!("| {} |\n", header.join(" | "));
    out.push_str(&format!("|{}\n", "---|".repeat(header.len())));
    for r in rows {
        let cells: Vec<String> = r.iter().map(|c| esc(c)).collect();
        out.push_str(&format!("| {} |\n", cells.join(" | ")));
    }
    out
}

/// A ratio CI, with its true coverage when that is short of 95%.
pub fn ci_text(ci: [f64; 2], coverage: f64) -> String {
    if coverage > 0.0 && coverage < 0.949 {
        format!("[{:.3}, {:.3}] ({:.0}%)", ci[0], ci[1], coverage * 100.0)
    } else {
        format!("[{:.3}, {:.3}]", ci[0], ci[1])
    }
}
