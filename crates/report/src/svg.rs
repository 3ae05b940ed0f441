//! Inline SVG charts for report.html, drawn from numbers alone: no scripts, no fonts or
//! styles fetched from anywhere. Four kinds:
//!
//! - [`line_chart`]: lines (with optional CI bands) on linear, log2 or log10 axes;
//! - [`bars`]: ratio bars growing from a reference value (1.0 = the baseline), with CI
//!   whiskers, in labelled groups;
//! - [`interval_rows`]: one small strip per table row, every strip on one shared axis, an
//!   interval and a point around a reference line;
//! - [`stacked_bars`]: horizontal stacked bars of shares (CPU modes, where samples fell).
//!
//! Every function returns `None` when there is nothing to draw (no finite values, or none
//! that a log axis can show), so callers never emit an empty chart. Non-finite values are
//! skipped everywhere; log axes also skip zeros and negatives. Every user-given string is
//! escaped with [`crate::markup::escape`], in `<text>`, `<title>` and attributes alike.

use crate::markup::escape;
use crate::model::Verdict;
use std::fmt::Write;

/// Series colours: variant `i` gets `PALETTE[i % 8]` in every chart.
pub const PALETTE: [&str; 8] = [
    "#3a6fc4", "#e8782a", "#8a4fb8", "#17a2a0", "#d13f8a", "#8f6b2e", "#6f9a12", "#59636e",
];

/// Verdict colours: faster, slower, same.
pub const FASTER: &str = "#1f9d55";
pub const SLOWER: &str = "#d64541";
pub const SAME: &str = "#8d939b";
pub const EQUIVALENT: &str = "#3b7dd8";
/// A comparison the load engine held back: amber, a warning rather than an answer.
pub const CLIENT_BOUND: &str = "#c77c02";

/// The colour of verdict `v`.
pub fn verdict_color(v: Verdict) -> &'static str {
    match v {
        Verdict::Faster => FASTER,
        Verdict::Slower => SLOWER,
        Verdict::Equivalent => EQUIVALENT,
        Verdict::Inconclusive => SAME,
        Verdict::ClientBound | Verdict::MachineBusy => CLIENT_BOUND,
    }
}

/// The palette colour of series `i`.
pub fn color(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

/// How an axis maps values to pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    Linear,
    Log2,
    Log10,
}

impl Scale {
    /// Whether `v` can be drawn on this scale.
    fn usable(self, v: f64) -> bool {
        v.is_finite() && (self == Scale::Linear || v > 0.0)
    }

    fn t(self, v: f64) -> f64 {
        match self {
            Scale::Linear => v,
            Scale::Log2 => v.log2(),
            Scale::Log10 => v.log10(),
        }
    }
}

/// One line of a [`LineChart`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Series {
    pub name: String,
    /// Palette index (the variant's position), see [`color`].
    pub color: usize,
    /// (x, y), in x order.
    pub points: Vec<(f64, f64)>,
    /// (x, low, high): a translucent area, e.g. the 95% CI of each point.
    pub band: Option<Vec<(f64, f64, f64)>>,
    /// Drawn dashed (e.g. an invalid run).
    pub dashed: bool,
    /// A tooltip for the whole line; points get their own when markers are on.
    pub tip: Option<String>,
}

/// A line chart. Build with `..LineChart::default()` for the usual settings.
#[derive(Debug, Clone)]
pub struct LineChart {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub x_scale: Scale,
    pub y_scale: Scale,
    /// A linear y axis starts at zero (throughput); ignored on log axes.
    pub y_zero: bool,
    /// Fixed x ticks (value, label) instead of computed ones.
    pub x_ticks: Option<Vec<(f64, String)>>,
    /// A small chart (for grids of many) instead of a full-width one.
    pub small: bool,
    pub legend: bool,
    /// A dot with an exact-value tooltip on every point (single points always get one).
    pub markers: bool,
    /// Formats x and y values in tooltips.
    pub x_fmt: fn(f64) -> String,
    pub y_fmt: fn(f64) -> String,
    pub series: Vec<Series>,
}

impl Default for LineChart {
    fn default() -> Self {
        LineChart {
            title: String::new(),
            x_label: String::new(),
            y_label: String::new(),
            x_scale: Scale::Linear,
            y_scale: Scale::Linear,
            y_zero: false,
            x_ticks: None,
            small: false,
            legend: true,
            markers: true,
            x_fmt: value,
            y_fmt: value,
            series: Vec::new(),
        }
    }
}

/// A number for a tooltip: thousands separators above 1000, else up to 4 significant
/// digits.
pub fn value(v: f64) -> String {
    if !v.is_finite() {
        return "-".into();
    }
    if v.abs() >= 1000.0 {
        return crate::format::ops(v);
    }
    let digits = if v == 0.0 {
        0
    } else {
        (3 - v.abs().log10().floor() as i32).clamp(0, 6) as usize
    };
    trim(format!("{v:.digits$}"))
}

/// A tick label: compact (1.5k, 120k, 2M), trailing zeros trimmed.
pub fn compact(v: f64) -> String {
    let a = v.abs();
    if a == 0.0 {
        return "0".into();
    }
    if a < 0.001 {
        return format!("{v:.1e}");
    }
    let (d, suffix) = if a >= 1e9 {
        (1e9, "G")
    } else if a >= 1e6 {
        (1e6, "M")
    } else if a >= 1e4 {
        (1e3, "k")
    } else {
        (1.0, "")
    };
    trim(format!("{:.3}", v / d)) + suffix
}

fn trim(s: String) -> String {
    if !s.contains('.') {
        return s;
    }
    let t = s.trim_end_matches('0').trim_end_matches('.');
    if t == "-0" {
        "0".into()
    } else {
        t.to_string()
    }
}

/// A coordinate with at most one decimal.
fn n(v: f64) -> String {
    let r = (v * 10.0).round() / 10.0;
    if r == r.trunc() {
        format!("{}", r as i64)
    } else {
        format!("{r:.1}")
    }
}

/// Roughly how wide `s` is in pixels at the charts' 11-12px font.
fn text_width(s: &str, px: f64) -> f64 {
    s.chars().count() as f64 * px * 0.58
}

/// `s` cut to `max` characters, with an ellipsis when cut.
fn clip(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(max.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

/// An axis: its domain, where it lands in pixels, and its ticks.
#[derive(Debug, Clone)]
struct Axis {
    scale: Scale,
    lo: f64,
    hi: f64,
    p0: f64,
    p1: f64,
    ticks: Vec<(f64, String)>,
}

impl Axis {
    /// Each tick's position (as drawn) and label.
    fn placed_ticks(&self) -> impl Iterator<Item = (String, &str)> {
        self.ticks
            .iter()
            .map(|(v, label)| (n(self.px(*v)), label.as_str()))
    }

    fn px(&self, v: f64) -> f64 {
        let (a, b) = (self.scale.t(self.lo), self.scale.t(self.hi));
        if b == a {
            return (self.p0 + self.p1) / 2.0;
        }
        self.p0 + (self.scale.t(v) - a) / (b - a) * (self.p1 - self.p0)
    }
}

/// An axis's low and high ends and its ticks (value, label).
type Domain = (f64, f64, Vec<(f64, String)>);

/// The domain and ticks of an axis over `values` (already usable on `scale`).
fn domain(
    scale: Scale,
    values: &[f64],
    zero: bool,
    fixed: Option<&[(f64, String)]>,
) -> Option<Domain> {
    let mut vals: Vec<f64> = values
        .iter()
        .copied()
        .filter(|v| scale.usable(*v))
        .collect();
    if let Some(f) = fixed {
        vals.extend(f.iter().map(|t| t.0).filter(|v| scale.usable(*v)));
    }
    if vals.is_empty() {
        return None;
    }
    let min = vals.iter().copied().fold(f64::INFINITY, f64::min);
    let max = vals.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if !(max - min).is_finite() {
        return None;
    }
    let (lo, hi, ticks) = match scale {
        Scale::Linear => linear_domain(min, max, zero),
        Scale::Log2 => log2_domain(min, max, &vals),
        Scale::Log10 => log10_domain(min, max),
    };
    let ticks = match fixed {
        Some(f) => f
            .iter()
            .filter(|t| scale.usable(t.0) && t.0 >= lo && t.0 <= hi)
            .cloned()
            .collect(),
        None => ticks,
    };
    Some((lo, hi, ticks))
}

/// A round step giving about `target` intervals over `range`.
fn nice_step(range: f64, target: f64) -> f64 {
    let raw = range / target;
    let mag = 10f64.powf(raw.log10().floor());
    let r = raw / mag;
    let m = if r <= 1.0 {
        1.0
    } else if r <= 2.0 {
        2.0
    } else if r <= 2.5 {
        2.5
    } else if r <= 5.0 {
        5.0
    } else {
        10.0
    };
    m * mag
}

/// Ticks every `step` from `lo` to `hi` (both multiples of `step`).
fn steps(lo: f64, hi: f64, step: f64) -> Vec<(f64, String)> {
    if !(lo / step).is_finite() || !(hi / step).is_finite() {
        return Vec::new();
    }
    let (a, b) = ((lo / step).round() as i64, (hi / step).round() as i64);
    if b.saturating_sub(a) > 1000 {
        return Vec::new();
    }
    (a..=b)
        .map(|k| {
            let v = k as f64 * step;
            (v, compact(v))
        })
        .collect()
}

fn linear_domain(min: f64, max: f64, zero: bool) -> Domain {
    let (mut lo, mut hi) = (min, max);
    if zero {
        lo = lo.min(0.0);
        hi = hi.max(0.0);
    }
    if hi - lo <= 1e-12 * hi.abs().max(lo.abs()).max(1e-300) {
        if lo == 0.0 {
            hi = 1.0;
        } else {
            let pad = lo.abs() * 0.1;
            lo -= pad;
            hi += pad;
            if zero && min >= 0.0 {
                lo = lo.max(0.0);
            }
        }
    }
    let step = nice_step(hi - lo, 5.0);
    let lo = (lo / step).floor() * step;
    let hi = (hi / step).ceil() * step;
    (lo, hi, steps(lo, hi, step))
}

fn log2_domain(min: f64, max: f64, vals: &[f64]) -> Domain {
    let (lo, hi) = if max / min < 1.000_001 {
        (min / 2.0, max * 2.0)
    } else {
        (min, max)
    };
    let (a, b) = (lo.log2().ceil() as i32, hi.log2().floor() as i32);
    let every = (((b - a + 1).max(1) as f64) / 9.0).ceil().max(1.0) as i32;
    let mut ticks: Vec<(f64, String)> = (a..=b)
        .filter(|k| (k - a) % every == 0)
        .map(|k| {
            let v = 2f64.powi(k);
            (v, compact(v))
        })
        .collect();
    if ticks.len() < 2 {
        let mut v: Vec<f64> = vals.to_vec();
        v.sort_by(f64::total_cmp);
        v.dedup();
        ticks = v.into_iter().map(|x| (x, compact(x))).collect();
    }
    (lo, hi, ticks)
}

fn log10_domain(min: f64, max: f64) -> Domain {
    let (lo, hi) = if max / min < 1.000_001 {
        (min / 2.0, max * 2.0)
    } else {
        (min / 1.15, max * 1.15)
    };
    let (a, b) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
    let pick = |mults: &[f64]| -> Vec<f64> {
        let mut out = Vec::new();
        for k in a..=b {
            for m in mults {
                let v = m * 10f64.powi(k);
                if v >= lo && v <= hi {
                    out.push(v);
                }
            }
        }
        out
    };
    let mut t = pick(&[1.0]);
    if t.len() > 9 {
        let every = (t.len() as f64 / 8.0).ceil() as usize;
        t = t.into_iter().step_by(every).collect();
    }
    if t.len() < 3 {
        t = pick(&[1.0, 2.0, 5.0]);
    }
    if t.len() < 2 {
        t = pick(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]);
    }
    if t.len() < 2 {
        let step = nice_step(hi - lo, 4.0);
        t = steps((lo / step).ceil() * step, (hi / step).floor() * step, step)
            .into_iter()
            .map(|x| x.0)
            .filter(|v| *v > 0.0)
            .collect();
    }
    (lo, hi, t.into_iter().map(|v| (v, compact(v))).collect())
}

/// The opening tag every chart shares.
fn open(out: &mut String, w: f64, h: f64, title: &str, class: &str) {
    let _ = writeln!(
        out,
        "<svg class=\"chart{}\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {} {}\" width=\"{}\" height=\"{}\" role=\"img\"{}>",
        if class.is_empty() {
            String::new()
        } else {
            format!(" {class}")
        },
        n(w),
        n(h),
        n(w),
        n(h),
        if title.is_empty() {
            String::new()
        } else {
            format!(" aria-label=\"{}\"", escape(title))
        }
    );
    if !title.is_empty() {
        let _ = writeln!(out, "<title>{}</title>", escape(title));
    }
}

/// How a legend item is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mark {
    Line,
    Dashed,
    Box,
}

/// Horizontal legend rows below a chart: (name, colour, mark). Returns the height used.
fn legend(out: &mut String, items: &[(String, &str, Mark)], x0: f64, y0: f64, width: f64) -> f64 {
    if items.is_empty() {
        return 0.0;
    }
    let (mut x, mut y) = (x0, y0);
    for (name, col, mark) in items {
        let label = clip(name, 40);
        let w = 22.0 + text_width(&label, 12.0) + 18.0;
        if x > x0 && x + w > x0 + width {
            x = x0;
            y += 18.0;
        }
        let swatch = match mark {
            Mark::Box => format!(
                "<rect x=\"{}\" y=\"{}\" width=\"12\" height=\"12\" rx=\"2\" fill=\"{col}\"/>",
                n(x + 2.0),
                n(y - 10.0)
            ),
            _ => format!(
                "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{col}\" stroke-width=\"3\"{}/>",
                n(x),
                n(y - 4.0),
                n(x + 16.0),
                n(y - 4.0),
                if *mark == Mark::Dashed {
                    " stroke-dasharray=\"5 3\""
                } else {
                    ""
                }
            ),
        };
        let _ = writeln!(
            out,
            "<g class=\"legend\">{swatch}<text x=\"{}\" y=\"{}\">{}</text></g>",
            n(x + 22.0),
            n(y),
            escape(&label)
        );
        x += w;
    }
    y - y0 + 18.0
}

/// How many legend rows `items` need in `width`.
fn legend_rows(items: &[(String, &str, Mark)], width: f64) -> usize {
    if items.is_empty() {
        return 0;
    }
    let (mut x, mut rows) = (0.0, 1);
    for (name, _, _) in items {
        let w = 22.0 + text_width(&clip(name, 40), 12.0) + 18.0;
        if x > 0.0 && x + w > width {
            x = 0.0;
            rows += 1;
        }
        x += w;
    }
    rows
}

/// The vertical grid line and tick label of each of `x`'s ticks, from `y_top` down to
/// `y_bottom`, the labels under it.
fn x_grid(out: &mut String, x: &Axis, y_top: f64, y_bottom: f64) {
    for (p, label) in x.placed_ticks() {
        let _ = writeln!(
            out,
            "<line class=\"grid\" x1=\"{p}\" y1=\"{}\" x2=\"{p}\" y2=\"{}\"/><text class=\"tick\" x=\"{p}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
            n(y_top),
            n(y_bottom),
            n(y_bottom + 15.0),
            escape(label)
        );
    }
}

/// The path data of an interval from `lo` to `hi` on `x`, centred at height `m`, with
/// end caps 10 high; None when either end is not finite.
fn whisker(x: &Axis, lo: f64, hi: f64, m: f64) -> Option<String> {
    if !(lo.is_finite() && hi.is_finite()) {
        return None;
    }
    let (a, z) = (n(x.px(lo.min(hi))), n(x.px(lo.max(hi))));
    let (t, u) = (n(m - 5.0), n(m + 5.0));
    Some(format!("M{a} {t}V{u}M{a} {m}H{z}M{z} {t}V{u}", m = n(m)))
}

/// The horizontal axis line at `y` and `label` centred `label_dy` below it.
fn x_axis(out: &mut String, x: &Axis, y: f64, label_dy: f64, label: &str) {
    let _ = writeln!(
        out,
        "<path class=\"axis\" d=\"M{} {}H{}\" fill=\"none\"/><text class=\"label\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
        n(x.p0),
        n(y),
        n(x.p1),
        n((x.p0 + x.p1) / 2.0),
        n(y + label_dy),
        escape(label)
    );
}

/// A line chart, or `None` when no series has a drawable point.
pub fn line_chart(c: &LineChart) -> Option<String> {
    let (xs, ys) = (c.x_scale, c.y_scale);
    let series = drawable(c);
    if series.is_empty() {
        return None;
    }
    let mut xv = Vec::new();
    let mut yv = Vec::new();
    for s in &series {
        for (x, y) in &s.points {
            xv.push(*x);
            yv.push(*y);
        }
        for (x, lo, hi) in s.band.iter().flatten() {
            xv.push(*x);
            yv.push(*lo);
            yv.push(*hi);
        }
    }
    let (xlo, xhi, xt) = domain(xs, &xv, false, c.x_ticks.as_deref())?;
    let (ylo, yhi, yt) = domain(ys, &yv, c.y_zero && ys == Scale::Linear, None)?;

    let (w, h, left, right, top) = if c.small {
        (360.0, 190.0, 50.0, 12.0, 26.0)
    } else {
        (900.0, 340.0, 66.0, 20.0, 30.0)
    };
    let items: Vec<(String, &str, Mark)> = if c.legend {
        series
            .iter()
            .map(|s| {
                let mark = if s.dashed { Mark::Dashed } else { Mark::Line };
                (s.name.clone(), color(s.color), mark)
            })
            .collect()
    } else {
        Vec::new()
    };
    let legend_h = legend_rows(&items, w - left - right) as f64 * 18.0;
    let bottom_axis = if c.small { 34.0 } else { 44.0 };
    let total_h = h + legend_h + if legend_h > 0.0 { 6.0 } else { 0.0 };
    let plot_bottom = h - bottom_axis;
    let x = Axis {
        scale: xs,
        lo: xlo,
        hi: xhi,
        p0: left,
        p1: w - right,
        ticks: xt,
    };
    let y = Axis {
        scale: ys,
        lo: ylo,
        hi: yhi,
        p0: plot_bottom,
        p1: top,
        ticks: yt,
    };

    let mut out = String::new();
    open(
        &mut out,
        w,
        total_h,
        &c.title,
        if c.small { "small" } else { "" },
    );
    let _ = writeln!(
        out,
        "<text class=\"ctitle\" x=\"{}\" y=\"{}\">{}</text>",
        n(left),
        n(top - 10.0),
        escape(&clip(&c.title, if c.small { 52 } else { 110 }))
    );
    axes(&mut out, c, &x, &y);
    bands(&mut out, &series, &x, &y);
    lines(&mut out, c, &series, &x, &y);
    legend(&mut out, &items, left, h + 8.0, w - left - right);
    out.push_str("</svg>");
    Some(out)
}

/// A line chart's grid, tick labels, axes and axis labels.
fn axes(out: &mut String, c: &LineChart, x: &Axis, y: &Axis) {
    // Grid and ticks.
    for (v, label) in &y.ticks {
        let py = y.px(*v);
        let _ = writeln!(
            out,
            "<line class=\"grid\" x1=\"{}\" y1=\"{p}\" x2=\"{}\" y2=\"{p}\"/><text class=\"tick\" x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>",
            n(x.p0),
            n(x.p1),
            n(x.p0 - 6.0),
            n(py + 4.0),
            escape(label),
            p = n(py)
        );
    }
    x_grid(out, x, y.p1, y.p0);
    let _ = writeln!(
        out,
        "<path class=\"axis\" d=\"M{} {}V{}H{}\" fill=\"none\"/>",
        n(x.p0),
        n(y.p1),
        n(y.p0),
        n(x.p1)
    );
    // Axis labels.
    let _ = writeln!(
        out,
        "<text class=\"label\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
        n((x.p0 + x.p1) / 2.0),
        n(y.p0 + if c.small { 29.0 } else { 34.0 }),
        escape(&c.x_label)
    );
    let _ = writeln!(
        out,
        "<text class=\"label\" transform=\"translate({} {}) rotate(-90)\" text-anchor=\"middle\">{}</text>",
        if c.small { 11.0 } else { 14.0 },
        n((y.p0 + y.p1) / 2.0),
        escape(&c.y_label)
    );
}

/// The chart's series with only the points (and band points) its scales can draw, and
/// without the series left with none.
fn drawable(c: &LineChart) -> Vec<Series> {
    let (xs, ys) = (c.x_scale, c.y_scale);
    c.series
        .iter()
        .map(|s| Series {
            points: s
                .points
                .iter()
                .copied()
                .filter(|(x, y)| xs.usable(*x) && ys.usable(*y))
                .collect(),
            band: s.band.as_ref().map(|b| {
                b.iter()
                    .copied()
                    .filter(|(x, lo, hi)| xs.usable(*x) && ys.usable(*lo) && ys.usable(*hi))
                    .collect()
            }),
            ..s.clone()
        })
        .filter(|s| !s.points.is_empty())
        .collect()
}

/// The series' bands (their 95% CIs), drawn under the lines.
fn bands(out: &mut String, series: &[Series], x: &Axis, y: &Axis) {
    for s in series {
        let Some(b) = &s.band else { continue };
        if b.len() < 2 {
            continue;
        }
        let mut d = String::new();
        for (i, (bx, _, hi)) in b.iter().enumerate() {
            let _ = write!(
                d,
                "{}{} {}",
                if i == 0 { "M" } else { "L" },
                n(x.px(*bx)),
                n(y.px(*hi))
            );
        }
        for (bx, lo, _) in b.iter().rev() {
            let _ = write!(d, "L{} {}", n(x.px(*bx)), n(y.px(*lo)));
        }
        let _ = writeln!(
            out,
            "<path class=\"band\" d=\"{d}Z\" fill=\"{}\" fill-opacity=\"0.16\" stroke=\"none\"><title>{}: 95% CI</title></path>",
            color(s.color),
            escape(&s.name)
        );
    }
}

/// The series' lines, then their markers on top (every point with `markers`, else a
/// series' lone point).
fn lines(out: &mut String, c: &LineChart, series: &[Series], x: &Axis, y: &Axis) {
    for s in series {
        let col = color(s.color);
        let mut d = String::new();
        for (i, (px, py)) in s.points.iter().enumerate() {
            let _ = write!(
                d,
                "{}{} {}",
                if i == 0 { "M" } else { "L" },
                n(x.px(*px)),
                n(y.px(*py))
            );
        }
        let tip = s.tip.clone().unwrap_or_else(|| s.name.clone());
        let _ = writeln!(
            out,
            "<path class=\"line\" d=\"{d}\" fill=\"none\" stroke=\"{col}\" stroke-width=\"{}\" stroke-linejoin=\"round\"{}><title>{}</title></path>",
            if c.small { "1.5" } else { "2.2" },
            if s.dashed {
                " stroke-dasharray=\"5 3\""
            } else {
                ""
            },
            escape(&tip)
        );
        if c.markers || s.points.len() == 1 {
            for (px, py) in &s.points {
                let ci = s
                    .band
                    .iter()
                    .flatten()
                    .find(|b| b.0 == *px)
                    .map(|b| format!(" (95% CI {} to {})", (c.y_fmt)(b.1), (c.y_fmt)(b.2)))
                    .unwrap_or_default();
                let _ = writeln!(
                    out,
                    "<circle cx=\"{}\" cy=\"{}\" r=\"{}\" fill=\"{col}\"><title>{}: {} = {}, {} = {}{}</title></circle>",
                    n(x.px(*px)),
                    n(y.px(*py)),
                    if c.small { "2.5" } else { "3.5" },
                    escape(&s.name),
                    escape(&c.x_label),
                    escape(&(c.x_fmt)(*px)),
                    escape(&c.y_label),
                    escape(&(c.y_fmt)(*py)),
                    escape(&ci),
                );
            }
        }
    }
}

/// One bar of a [`BarChart`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Bar {
    pub label: String,
    /// Palette index, see [`color`].
    pub color: usize,
    pub value: f64,
    /// The CI whisker; left out when either end is not finite.
    pub lo: f64,
    pub hi: f64,
    /// Text right of the bar (e.g. "1.205 faster").
    pub note: String,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct BarGroup {
    /// Shown above the group's bars (empty: no heading row).
    pub label: String,
    pub bars: Vec<Bar>,
}

/// Horizontal bars growing from `reference` (drawn as a vertical line) to each value.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BarChart {
    pub title: String,
    pub x_label: String,
    pub reference: f64,
    pub groups: Vec<BarGroup>,
}

/// A linear domain over values plus the reference, padded, with ticks.
/// `None` when the values span more than floating point can (a broken record).
fn ratio_axis(vals: &[f64], reference: f64) -> Option<Domain> {
    let mut min = vals.iter().copied().fold(reference, f64::min);
    let mut max = vals.iter().copied().fold(reference, f64::max);
    let pad = ((max - min) * 0.08).max(reference.abs() * 0.02).max(1e-9);
    min -= pad;
    max += pad;
    let step = nice_step(max - min, 5.0);
    let lo = (min / step).floor() * step;
    let hi = (max / step).ceil() * step;
    (lo.is_finite() && hi.is_finite() && hi > lo).then(|| (lo, hi, steps(lo, hi, step)))
}

/// The bar chart, or `None` when no bar has a finite value.
pub fn bars(c: &BarChart) -> Option<String> {
    let groups: Vec<BarGroup> = c
        .groups
        .iter()
        .map(|g| BarGroup {
            label: g.label.clone(),
            bars: g
                .bars
                .iter()
                .filter(|b| b.value.is_finite())
                .cloned()
                .collect(),
        })
        .filter(|g| !g.bars.is_empty())
        .collect();
    if groups.is_empty() || !c.reference.is_finite() {
        return None;
    }
    let mut vals = Vec::new();
    for b in groups.iter().flat_map(|g| &g.bars) {
        vals.push(b.value);
        if b.lo.is_finite() && b.hi.is_finite() {
            vals.push(b.lo);
            vals.push(b.hi);
        }
    }
    let (lo, hi, ticks) = ratio_axis(&vals, c.reference)?;
    let longest = groups
        .iter()
        .flat_map(|g| g.bars.iter().map(|b| clip(&b.label, 34)))
        .map(|l| text_width(&l, 12.0))
        .fold(0.0, f64::max);
    let w = 900.0;
    let left = (longest + 30.0).clamp(90.0, 240.0);
    let right = 130.0;
    let top = 34.0;
    let row = 22.0;
    let head = 20.0;
    let rows_h: f64 = groups
        .iter()
        .map(|g| g.bars.len() as f64 * row + if g.label.is_empty() { 0.0 } else { head } + 4.0)
        .sum();
    let plot_bottom = top + rows_h;
    let h = plot_bottom + 42.0;
    let x = Axis {
        scale: Scale::Linear,
        lo,
        hi,
        p0: left,
        p1: w - right,
        ticks,
    };
    let mut out = String::new();
    open(&mut out, w, h, &c.title, "bars");
    let _ = writeln!(
        out,
        "<text class=\"ctitle\" x=\"10\" y=\"{}\">{}</text>",
        n(top - 14.0),
        escape(&clip(&c.title, 110))
    );
    x_grid(&mut out, &x, top - 4.0, plot_bottom);
    x_axis(&mut out, &x, plot_bottom, 34.0, &c.x_label);
    let r0 = x.px(c.reference);
    let mut y = top;
    for g in &groups {
        if !g.label.is_empty() {
            let _ = writeln!(
                out,
                "<text class=\"group\" x=\"10\" y=\"{}\">{}</text>",
                n(y + 14.0),
                escape(&clip(&g.label, 100))
            );
            y += head;
        }
        for b in &g.bars {
            bar(&mut out, &x, b, y + row / 2.0, left, r0);
            y += row;
        }
        y += 4.0;
    }
    let _ = writeln!(
        out,
        "<line class=\"ref\" x1=\"{r}\" y1=\"{}\" x2=\"{r}\" y2=\"{}\"><title>reference {}</title></line>",
        n(top - 4.0),
        n(plot_bottom),
        value(c.reference),
        r = n(r0)
    );
    out.push_str("</svg>");
    Some(out)
}

/// One bar of a [`BarChart`] centred at `cy`: its label left of `left`, its bar from
/// the reference at `r0`, its CI's whisker, its note right of the plot.
fn bar(out: &mut String, x: &Axis, b: &Bar, cy: f64, left: f64, r0: f64) {
    let col = color(b.color);
    let v = x.px(b.value);
    let (bx, bw) = if v >= r0 { (r0, v - r0) } else { (v, r0 - v) };
    let mut tip = format!("{}: {}", b.label, value(b.value));
    if b.lo.is_finite() && b.hi.is_finite() {
        let _ = write!(tip, ", 95% CI [{}, {}]", value(b.lo), value(b.hi));
    }
    let _ = writeln!(
        out,
        "<text class=\"blabel\" x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text><rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"12\" fill=\"{col}\" fill-opacity=\"0.85\"><title>{}</title></rect>",
        n(left - 8.0),
        n(cy + 4.0),
        escape(&clip(&b.label, 34)),
        n(bx),
        n(cy - 6.0),
        n(bw.max(1.0)),
        escape(&tip)
    );
    if let Some(d) = whisker(x, b.lo, b.hi, cy) {
        let _ = writeln!(
            out,
            "<path class=\"whisker\" d=\"{d}\" fill=\"none\"><title>{}</title></path>",
            escape(&tip)
        );
    }
    let _ = writeln!(
        out,
        "<text class=\"bnote\" x=\"{}\" y=\"{}\">{}</text>",
        n(x.p1 + 8.0),
        n(cy + 4.0),
        escape(&clip(&b.note, 22))
    );
}

/// One row's interval for [`interval_rows`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Interval {
    pub value: f64,
    pub lo: f64,
    pub hi: f64,
    /// Any CSS colour (e.g. [`FASTER`]).
    pub color: String,
    pub tip: String,
    /// Single observations behind the interval (per-round ratios), drawn as small dots
    /// so the spread the interval summarizes is visible.
    pub points: Vec<f64>,
}

impl Interval {
    /// `value` within `[lo, hi]`, coloured by `verdict`, with no tip or points yet.
    pub fn of_verdict(value: f64, [lo, hi]: [f64; 2], verdict: Verdict) -> Interval {
        Interval {
            value,
            lo,
            hi,
            color: verdict_color(verdict).to_string(),
            ..Interval::default()
        }
    }
}

/// Per-row strips on one shared axis, plus that axis drawn once.
#[derive(Debug, Clone, PartialEq)]
pub struct Strips {
    pub axis: String,
    pub rows: Vec<String>,
}

const STRIP_W: f64 = 220.0;
const STRIP_H: f64 = 22.0;

/// Small strips (one per row, in order) drawing each interval and point around a vertical
/// line at `reference`, all on one axis; `None` when no row has a finite value.
pub fn interval_rows(reference: f64, x_label: &str, rows: &[Interval]) -> Option<Strips> {
    let mut vals = Vec::new();
    for r in rows {
        if r.value.is_finite() {
            vals.push(r.value);
            if r.lo.is_finite() && r.hi.is_finite() {
                vals.push(r.lo);
                vals.push(r.hi);
            }
            vals.extend(r.points.iter().copied().filter(|p| p.is_finite()));
        }
    }
    if vals.is_empty() || !reference.is_finite() {
        return None;
    }
    let (lo, hi, ticks) = ratio_axis(&vals, reference)?;
    let x = Axis {
        scale: Scale::Linear,
        lo,
        hi,
        p0: 16.0,
        p1: STRIP_W - 16.0,
        ticks,
    };
    let grid = |out: &mut String| {
        for (p, _) in x.placed_ticks() {
            let _ = writeln!(
                out,
                "<line class=\"grid\" x1=\"{p}\" y1=\"0\" x2=\"{p}\" y2=\"{}\"/>",
                n(STRIP_H)
            );
        }
        let r = n(x.px(reference));
        let _ = writeln!(
            out,
            "<line class=\"ref\" x1=\"{r}\" y1=\"0\" x2=\"{r}\" y2=\"{}\"/>",
            n(STRIP_H)
        );
    };
    let mut strips = Vec::new();
    for r in rows {
        let mut out = String::new();
        open(&mut out, STRIP_W, STRIP_H, "", "strip");
        let _ = writeln!(out, "<title>{}</title>", escape(&r.tip));
        grid(&mut out);
        if r.value.is_finite() {
            let col = escape(&r.color);
            let m = STRIP_H / 2.0;
            for p in r.points.iter().filter(|p| p.is_finite()) {
                let _ = writeln!(
                    out,
                    "<circle class=\"round\" cx=\"{}\" cy=\"{}\" r=\"2\" fill=\"none\" stroke=\"#8d939b\" stroke-width=\"1\"/>",
                    n(x.px(*p)),
                    n(m + 7.0)
                );
            }
            if let Some(d) = whisker(&x, r.lo, r.hi, m) {
                let _ = writeln!(
                    out,
                    "<path d=\"{d}\" stroke=\"{col}\" stroke-width=\"2.5\" fill=\"none\"/>"
                );
            }
            let _ = writeln!(
                out,
                "<circle cx=\"{}\" cy=\"{}\" r=\"4.5\" fill=\"{col}\" stroke=\"#fff\" stroke-width=\"1\"/>",
                n(x.px(r.value)),
                n(m)
            );
        }
        out.push_str("</svg>");
        strips.push(out);
    }
    let mut axis = String::new();
    open(&mut axis, STRIP_W, 34.0, x_label, "strip");
    for (p, label) in x.placed_ticks() {
        let _ = writeln!(
            axis,
            "<line class=\"axis\" x1=\"{p}\" y1=\"0\" x2=\"{p}\" y2=\"4\"/><text class=\"tick\" x=\"{p}\" y=\"15\" text-anchor=\"middle\">{}</text>",
            escape(label)
        );
    }
    let _ = writeln!(
        axis,
        "<line class=\"axis\" x1=\"{}\" y1=\"0\" x2=\"{}\" y2=\"0\"/><text class=\"label\" x=\"{}\" y=\"30\" text-anchor=\"middle\">{}</text></svg>",
        n(x.p0),
        n(x.p1),
        n(STRIP_W / 2.0),
        escape(x_label)
    );
    Some(Strips { axis, rows: strips })
}

/// Horizontal stacked bars of shares: one row per label, one segment per part.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StackedBars {
    pub title: String,
    pub x_label: String,
    /// Segment names and CSS colours, in stacking order.
    pub parts: Vec<(String, String)>,
    /// (row label, one value per part).
    pub rows: Vec<(String, Vec<f64>)>,
    /// The full scale (100 for percentages); widened when a row sums to more.
    pub total: f64,
}

/// The stacked bars, or `None` when no row has a positive finite value.
pub fn stacked_bars(c: &StackedBars) -> Option<String> {
    let clean = |v: &f64| if v.is_finite() && *v > 0.0 { *v } else { 0.0 };
    let rows: Vec<(String, Vec<f64>)> = c
        .rows
        .iter()
        .map(|(l, v)| (l.clone(), v.iter().map(clean).collect::<Vec<f64>>()))
        .filter(|(_, v)| v.iter().any(|x| *x > 0.0))
        .collect();
    if rows.is_empty() {
        return None;
    }
    let max = rows
        .iter()
        .map(|(_, v)| v.iter().sum::<f64>())
        .fold(clean(&c.total), f64::max);
    let longest = rows
        .iter()
        .map(|(l, _)| text_width(&clip(l, 40), 12.0))
        .fold(0.0, f64::max);
    let w = 900.0;
    let left = (longest + 24.0).clamp(60.0, 280.0);
    let right = 20.0;
    let top = if c.title.is_empty() { 8.0 } else { 30.0 };
    let row = 22.0;
    let plot_bottom = top + rows.len() as f64 * row;
    let items: Vec<(String, &str, Mark)> = c
        .parts
        .iter()
        .map(|(name, col)| (name.clone(), col.as_str(), Mark::Box))
        .collect();
    let legend_h = legend_rows(&items, w - left - right) as f64 * 18.0;
    let axis_h = 40.0;
    let h = plot_bottom + axis_h + legend_h + 4.0;
    let step = nice_step(max, 5.0);
    let hi = (max / step).ceil() * step;
    let x = Axis {
        scale: Scale::Linear,
        lo: 0.0,
        hi,
        p0: left,
        p1: w - right,
        ticks: steps(0.0, hi, step),
    };
    let mut out = String::new();
    open(&mut out, w, h, &c.title, "stacked");
    if !c.title.is_empty() {
        let _ = writeln!(
            out,
            "<text class=\"ctitle\" x=\"10\" y=\"{}\">{}</text>",
            n(top - 12.0),
            escape(&clip(&c.title, 110))
        );
    }
    x_grid(&mut out, &x, top, plot_bottom);
    for (i, (label, vals)) in rows.iter().enumerate() {
        let y = top + i as f64 * row;
        let _ = writeln!(
            out,
            "<text class=\"blabel\" x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>",
            n(left - 8.0),
            n(y + row / 2.0 + 4.0),
            escape(&clip(label, 40))
        );
        let mut acc = 0.0;
        for (j, v) in vals.iter().enumerate() {
            if *v <= 0.0 {
                continue;
            }
            let (name, col) = c
                .parts
                .get(j)
                .map(|(a, b)| (a.as_str(), b.as_str()))
                .unwrap_or(("?", "#999"));
            let (a, z) = (x.px(acc), x.px(acc + v));
            let _ = writeln!(
                out,
                "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"><title>{}: {} {}</title></rect>",
                n(a),
                n(y + 3.0),
                n((z - a).max(0.5)),
                n(row - 6.0),
                escape(col),
                escape(label),
                escape(name),
                value(*v)
            );
            acc += v;
        }
    }
    x_axis(&mut out, &x, plot_bottom, 32.0, &c.x_label);
    legend(
        &mut out,
        &items,
        left,
        plot_bottom + axis_h + 12.0,
        w - left - right,
    );
    out.push_str("</svg>");
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chart(series: Vec<Series>) -> LineChart {
        LineChart {
            title: "t".into(),
            series,
            ..LineChart::default()
        }
    }

    fn s(points: Vec<(f64, f64)>) -> Series {
        Series {
            name: "a".into(),
            points,
            ..Series::default()
        }
    }

    #[test]
    fn empty_and_unusable_input_draws_nothing() {
        assert!(line_chart(&chart(vec![])).is_none());
        assert!(line_chart(&chart(vec![s(vec![(f64::NAN, 1.0), (1.0, f64::INFINITY)])])).is_none());
        let mut c = chart(vec![s(vec![(0.0, 5.0), (-1.0, 2.0)])]);
        c.x_scale = Scale::Log2;
        assert!(line_chart(&c).is_none());
        assert!(bars(&BarChart::default()).is_none());
        assert!(interval_rows(1.0, "ratio", &[]).is_none());
        assert!(stacked_bars(&StackedBars {
            rows: vec![("x".into(), vec![0.0, f64::NAN])],
            ..StackedBars::default()
        })
        .is_none());
    }

    #[test]
    fn degenerate_data_still_draws() {
        for pts in [
            vec![(1.0, 5.0)],
            vec![(1.0, 0.0), (2.0, 0.0)],
            vec![(1.0, 7.0), (2.0, 7.0), (3.0, 7.0)],
            vec![(4.0, 1e-9), (4.0, 1e12)],
        ] {
            for (xs, ys) in [(Scale::Linear, Scale::Linear), (Scale::Log2, Scale::Log10)] {
                let mut c = chart(vec![s(pts.clone())]);
                c.x_scale = xs;
                c.y_scale = ys;
                c.y_zero = true;
                if let Some(svg) = line_chart(&c) {
                    assert!(!svg.contains("NaN") && !svg.contains("inf"), "{svg}");
                    assert!(svg.contains("<path"));
                } else {
                    // Only all-zero y on a log axis may draw nothing.
                    assert!(ys == Scale::Log10 && pts.iter().all(|p| p.1 == 0.0));
                }
            }
        }
    }

    #[test]
    fn extreme_values_draw_nothing_or_finite() {
        let huge = vec![(1.0, -1e308), (2.0, 1e308)];
        if let Some(svg) = line_chart(&chart(vec![s(huge)])) {
            assert!(!svg.contains("NaN") && !svg.contains("inf"));
        }
        let bar = Bar {
            label: "x".into(),
            value: 1e308,
            lo: -1e308,
            hi: 1e308,
            ..Bar::default()
        };
        let c = BarChart {
            reference: 1.0,
            groups: vec![BarGroup {
                label: String::new(),
                bars: vec![bar],
            }],
            ..BarChart::default()
        };
        if let Some(svg) = bars(&c) {
            assert!(!svg.contains("NaN") && !svg.contains("inf"));
        }
        let i = Interval {
            value: 1.0,
            lo: f64::NEG_INFINITY,
            hi: 2.0,
            ..Interval::default()
        };
        let strips = interval_rows(1.0, "r", &[i]).unwrap();
        assert!(!strips.rows[0].contains("NaN"));
    }

    #[test]
    fn ticks_are_round() {
        let (lo, hi, t) = linear_domain(0.0, 123_456.0, true);
        assert_eq!(lo, 0.0);
        assert!(hi >= 123_456.0);
        let labels: Vec<&str> = t.iter().map(|x| x.1.as_str()).collect();
        assert_eq!(labels, ["0", "25k", "50k", "75k", "100k", "125k"]);
        let (_, _, t) = log10_domain(95.0, 1900.0);
        let labels: Vec<&str> = t.iter().map(|x| x.1.as_str()).collect();
        assert_eq!(labels, ["100", "200", "500", "1000", "2000"]);
        let (_, _, t) = log2_domain(1.0, 16.0, &[1.0, 4.0, 16.0]);
        let labels: Vec<&str> = t.iter().map(|x| x.1.as_str()).collect();
        assert_eq!(labels, ["1", "2", "4", "8", "16"]);
        assert_eq!(compact(0.30000000000000004), "0.3");
        assert_eq!(compact(2_500_000.0), "2.5M");
        assert_eq!(value(1.2049999), "1.205");
        assert_eq!(value(123456.7), "123,457");
    }

    #[test]
    fn text_is_escaped() {
        let mut c = chart(vec![Series {
            name: "<b>&".into(),
            points: vec![(1.0, 1.0), (2.0, 3.0)],
            ..Series::default()
        }]);
        c.title = "\"t'".into();
        let svg = line_chart(&c).unwrap();
        assert!(!svg.contains("<b>") && !svg.contains("\"t'"));
        assert!(svg.contains("&lt;b&gt;&amp;") && svg.contains("&quot;t&#39;"));
    }
}
