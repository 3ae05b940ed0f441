//! The report's outline, decided once: which sections, in which order, under which
//! titles, each built from the results as blocks ([`crate::document`]). The answer in
//! words (a line per comparison), then failed verifications, the A/A check and the
//! verdicts, then the warnings and what was not measured, the settings that differ
//! between the variants' servers (`settings.rs`), then the headline table
//! and the pictures of throughput, then each workload kind's own sections
//! ([`KindSections`]), then the "why" (the servers' own counters, `why.rs`; machines, system, hosts, memory, counters,
//! instructions, hotspots, binaries, layouts), then every statement and run, and finally
//! how everything was built and run, with the exact experiment file. A section is left
//! out when the results have nothing for it.

use crate::document::{
    variant_order, Block, Chart, Charts, Document, Frame, Inline, IntervalTable, KindSections,
    Media, Section, Span,
};
use crate::facts;
use crate::index::{Index, Palette};
use crate::model::{Cell, ComparisonRecord, Results, Run};
use crate::sections;
use crate::summary::{self, micros, ops};
use crate::svg::{self, Bar, BarChart, BarGroup, Interval, LineChart, Scale, Series, StackedBars};
use crate::table::{fixed, Table};
use std::collections::HashMap;

/// At most this many per-second charts; the rest are counted, not drawn.
pub const MAX_TIME_CHARTS: usize = 24;

/// A section builder of the outline.
type Part = fn(&Results) -> Option<Section>;

/// The sections before the workload kinds' own.
const BEFORE_KINDS: &[Part] = &[
    crate::tune::section,
    answer,
    verification,
    memory_errors,
    crate::aa::section,
    verdicts,
    // What the servers ran with where the variants differ: what the answer compared,
    // within the page's first two screens (issue 51), the parity warnings right under it.
    crate::settings::section,
    // Below the answer they qualify, so that the verdicts stand in the first screen.
    warnings,
    notes,
    all_cells,
    throughput,
    crate::capacity::section,
    history,
];

/// The sections after them.
const AFTER_KINDS: &[Part] = &[
    relative,
    latency,
    over_time,
    // The servers' own counters per operation: the first "why".
    crate::why::section,
    crate::machines::section,
    system,
    hosts,
    memory,
    counters,
    instructions,
    hotspots,
    binaries,
    layouts,
    statements,
    runs,
    facts::variants,
    data_loads,
    facts::plan,
    facts::experiment,
];

/// The whole report: the outline above, with `kinds` adding their sections.
pub fn document(r: &Results, kinds: &dyn KindSections) -> Document {
    let mut all: Vec<Section> = BEFORE_KINDS.iter().filter_map(|f| f(r)).collect();
    all.extend(kinds.sections(r));
    all.extend(AFTER_KINDS.iter().filter_map(|f| f(r)));
    Document {
        title: format!("bakeoff: {}", r.name),
        intro: intro(r),
        sections: all,
        variants: variant_order(r),
        footer: format!(
            "Written by bakeoff {} from results.json ({}).",
            r.bakeoff_version, r.schema
        ),
    }
}

/// The description, the status line and the host.
fn intro(r: &Results) -> Vec<Block> {
    let mut out = Vec::new();
    if let Some(d) = &r.description {
        out.push(Block::text(d.as_str()));
    }
    let class = match r.status.as_str() {
        "complete" => "ok",
        "failed" => "bad",
        _ => "warn",
    };
    let mut meta = Inline::new()
        .and(Span::Badge {
            class: class.into(),
            text: r.status.clone(),
        })
        .text(format!(" started {}", r.started_utc));
    if let Some(f) = &r.finished_utc {
        meta = meta.text(format!(", finished {f}"));
    }
    meta = meta.text(format!(" · bakeoff {}", r.bakeoff_version));
    if let Some(src) = &r.source {
        meta = meta
            .text(format!(" · source: {} (", src.description))
            .code(src.id.clone())
            .text(")");
    }
    out.push(Block::Text {
        class: "meta",
        text: meta,
    });
    let h = &r.host;
    let mut parts = vec![
        h.cpu_model.clone(),
        format!("{} cores", h.cores),
        format!("{:.1} GiB", h.memory_bytes as f64 / (1u64 << 30) as f64),
        h.os.clone(),
        format!("kernel {}", h.kernel),
    ];
    if !h.hostname.is_empty() {
        parts.push(format!("host {}", h.hostname));
    }
    out.push(Block::Text {
        class: "host",
        text: format!("Host: {}", parts.join(" · ")).into(),
    });
    out
}

/// The answer first: a line in plain words per comparison, above the warnings (the
/// terminal prints the same lines above its table).
fn answer(r: &Results) -> Option<Section> {
    let lines = summary::answers(r);
    (!lines.is_empty()).then(|| {
        Section::new("answer", "Answer", "Answer").with(Block::bullets(
            lines.into_iter().map(Inline::from).collect(),
        ))
    })
}

/// The warnings: those about no one comparison first, then each comparison's under a
/// line naming it (`Results::grouped_warnings`; an old folder's are all of the first).
fn warnings(r: &Results) -> Option<Section> {
    (!r.warnings.is_empty()).then(|| {
        let grouped = r.grouped_warnings();
        let mut blocks = Vec::new();
        if !grouped.loose.is_empty() {
            blocks.push(Block::Warnings(grouped.loose));
        }
        blocks.extend(
            grouped
                .groups
                .into_iter()
                .map(|(about, warnings)| Block::WarningGroup { about, warnings }),
        );
        Section::new("warnings", "Warnings", "Warnings")
            .unlisted()
            .framed(Frame::Warn)
            .with(Block::Only(Media::ALL, blocks))
    })
}

fn notes(r: &Results) -> Option<Section> {
    (!r.notes.is_empty()).then(|| {
        Section::new("notes", "Not measured", "Not measured on this machine")
            .unlisted()
            .framed(Frame::Note)
            .with(Block::bullets(
                r.notes.iter().map(|n| n.as_str().into()).collect(),
            ))
    })
}

/// Result verification: per variant same, different or skipped; each difference with
/// its query, both hashes and the first differing rows.
fn verification(r: &Results) -> Option<Section> {
    use crate::verification as rp;
    if r.verification.is_empty() {
        return None;
    }
    let failed = r.verification.iter().any(|v| !v.differences.is_empty());
    let mut s = Section::new(
        "verification",
        "Verification",
        Inline::new()
            .text("Result verification (against ")
            .code(r.plan.baseline.clone())
            .text(")"),
    )
    .framed(if failed { Frame::Warn } else { Frame::Plain })
    .with(Block::Table(rp::verification_table(r)));
    for v in r.verification.iter().filter(|v| !v.differences.is_empty()) {
        s.push(Block::Heading(
            format!("{}: results differ", v.variant).into(),
        ));
        for d in v.differences.iter().take(10) {
            s.push(Block::Pre {
                lang: "",
                text: rp::difference_lines(d).join("\n"),
            });
        }
        if v.differences.len() > 10 {
            s.push(Block::text(format!(
                "({} more in results.json)",
                v.differences.len() - 10
            )));
        }
    }
    // Queries treated as equal only in a canonical form: counted with their reasons in
    // the summary line, each with its rows behind it (folded on the page).
    for v in r.verification.iter().filter(|v| !v.explained.is_empty()) {
        let mut reasons: Vec<&str> = Vec::new();
        for x in &v.explained {
            for part in x.reason.split("; ") {
                let short = part.split(':').next().unwrap_or(part);
                if !reasons.contains(&short) {
                    reasons.push(short);
                }
            }
        }
        let mut blocks: Vec<Block> = v
            .explained
            .iter()
            .take(10)
            .map(|x| Block::Pre {
                lang: "",
                text: rp::explained_lines(x).join("\n"),
            })
            .collect();
        if v.explained.len() > 10 {
            blocks.push(Block::text(format!(
                "({} more in results.json)",
                v.explained.len() - 10
            )));
        }
        s.push(Block::Details {
            summary: Inline::from(format!(
                "{}: {} {} treated as equal in a canonical form{} ({})",
                v.variant,
                v.explained.len(),
                if v.explained.len() == 1 {
                    "query"
                } else {
                    "queries"
                },
                if v.cross_kind { ", another server" } else { "" },
                reasons.join("; ")
            )),
            blocks,
        });
    }
    s.push(Block::caption("Every query ran on each variant's server over a copy of its prepared data; results are hashed over a canonical row encoding (order-insensitive unless the query has an ORDER BY); tables the queries wrote are compared by a follow-up SELECT. +: rows only this variant returned, -: rows only the baseline returned."));
    Some(s)
}

/// Memory errors (and threading errors, from ThreadSanitizer and helgrind) per variant,
/// with the first frames of each stack.
fn memory_errors(r: &Results) -> Option<Section> {
    let bad: Vec<_> = r
        .variants
        .iter()
        .filter(|v| !v.memory_errors.is_empty())
        .collect();
    if bad.is_empty() {
        return None;
    }
    let threads = bad
        .iter()
        .flat_map(|v| &v.memory_errors)
        .any(|e| matches!(e.tool.as_str(), "tsan" | "helgrind"));
    let (short, title) = if threads {
        (
            "Memory and threading errors",
            "Memory and threading errors (verification failed)",
        )
    } else {
        ("Memory errors", "Memory errors (verification failed)")
    };
    let mut s = Section::new("memory-errors", short, title).framed(Frame::Warn);
    for v in bad {
        let how = if v.sanitize.is_empty() {
            v.run_under.clone().unwrap_or_default()
        } else {
            format!("sanitize = {}", v.sanitize.join(", "))
        };
        let mut h = Inline::new().and(Span::Variant(v.name.clone()));
        if !how.is_empty() {
            h = h.and(Span::Muted(vec![Span::Text(format!(" ({how})"))]));
        }
        s.push(Block::Heading(h));
        for e in &v.memory_errors {
            s.push(Block::text(
                Inline::new()
                    .and(Span::Strong(e.kind.clone()))
                    .text(format!(" ({}): {}", e.tool, e.message)),
            ));
            if !e.stack.is_empty() {
                let mut frames: Vec<String> = e
                    .stack
                    .iter()
                    .take(16)
                    .enumerate()
                    .map(|(i, f)| format!("#{i:<2} {f}"))
                    .collect();
                if e.stack.len() > 16 {
                    frames.push(format!("… {} more frames", e.stack.len() - 16));
                }
                s.push(Block::Pre {
                    lang: "",
                    text: frames.join("\n"),
                });
            }
            if let Some(l) = &e.log {
                s.push(Block::text(Inline::new().text("Log: ").and(Span::Link {
                    text: l.clone(),
                    path: l.clone(),
                })));
            }
        }
    }
    Some(s)
}

/// Where the verdicts table draws its interval column: after the CI in words.
const CHART_AT: usize = 5;

/// Each comparison against the baseline, its interval drawn beside it, how the rounds
/// ended, what each inconclusive answer could hide, and the legend.
fn verdicts(r: &Results) -> Option<Section> {
    let t = sections::verdicts(r)?;
    let intervals: Vec<Interval> = r
        .comparisons
        .iter()
        .map(|c| Interval {
            points: c.round_ratios.iter().map(|x| x.ratio).collect(),
            tip: format!(
                "{} ×{}: {} vs {}: ratio {}, CI {}, {}",
                c.workload,
                c.connections,
                c.variant,
                c.baseline,
                fixed(c.ratio, 3),
                summary::ratio_ci_text(c),
                c.verdict.as_str()
            ),
            ..Interval::of_verdict(c.ratio, c.ci95, c.verdict)
        })
        .collect();
    let mut s = Section::new(
        "verdicts",
        "Verdicts",
        Inline::new().text("Verdicts ").and(Span::Muted(vec![
            Span::Text("(against baseline ".into()),
            Span::Code(r.plan.baseline.clone()),
            Span::Text(")".into()),
        ])),
    )
    .with(Block::Verdicts(Box::new(IntervalTable {
        table: t,
        intervals,
        at: CHART_AT,
        header: "ratio with its CI, per-round ratios below".into(),
        axis_label: "ratio to baseline (1 = same)".into(),
        reference: 1.0,
        verdicts: r.comparisons.iter().map(|c| c.verdict).collect(),
        against: r.comparisons.iter().map(|c| c.baseline.clone()).collect(),
    })))
    .with(Block::caption(format!("{}.", summary::stopping_text(r))));
    let mut notes = summary::explanations(r);
    notes.extend(summary::forecast_lines(r));
    if !notes.is_empty() {
        s.push(Block::List {
            class: "caption",
            numbered: false,
            items: notes.into_iter().map(Inline::from).collect(),
        });
    }
    // Per-run disturbances can fill a screen: on the page they fold behind a count.
    let disturbed = summary::disturbed(r);
    if !disturbed.is_empty() {
        s.push(Block::Details {
            summary: format!("Disturbed runs, per cell ({})", disturbed.len()).into(),
            blocks: vec![Block::List {
                class: "caption",
                numbered: false,
                items: disturbed.into_iter().map(Inline::from).collect(),
            }],
        });
    }
    s.push(Block::caption(format!(
        "{} Detectable: the CI's half-width, the smallest difference this comparison could tell from none.",
        summary::legend(r)
    )));
    let badge = |v: &str| Span::Badge {
        class: v.into(),
        text: v.into(),
    };
    s.push(
        Block::caption(Inline(
            ["faster", "slower", "equivalent", "inconclusive"]
                .iter()
                .enumerate()
                .flat_map(|(i, v)| [Span::Text(if i > 0 { " " } else { "" }.into()), badge(v)])
                .collect(),
        ))
        .only(Media::HTML),
    );
    s.blocks.extend(round_ratios(r));
    Some(s)
}

/// Each comparison's per-round ratios, as text (the page draws them as dots).
fn round_ratios(r: &Results) -> Option<Block> {
    let items: Vec<Inline> = r
        .comparisons
        .iter()
        .filter(|c| !c.round_ratios.is_empty())
        .map(|c| {
            let xs: Vec<String> = c
                .round_ratios
                .iter()
                .map(|x| format!("{:.3}", x.ratio))
                .collect();
            let spread = c
                .round_spread
                .map(|d| format!(" (spread ±{:.1}%)", d * 100.0))
                .unwrap_or_default();
            format!(
                "{} x{} {}: {}{spread}",
                c.workload,
                c.connections,
                c.variant,
                xs.join(" ")
            )
            .into()
        })
        .collect();
    (!items.is_empty()).then(|| {
        Block::Only(
            Media::MARKDOWN,
            vec![
                Block::text("Per-round ratios (candidate / baseline, same round):"),
                Block::bullets(items),
            ],
        )
    })
}

/// The headline table; the terminal adds how the rounds ended and the legend under it.
fn all_cells(r: &Results) -> Option<Section> {
    if r.cells.is_empty() {
        return None;
    }
    let mut s = Section::new("cells", "All cells", "All cells")
        .with(Block::Table(summary::cells_table(r)).everywhere())
        .with(Block::caption("ops/s: median over valid runs with a distribution-free 95% CI; CV: run-to-run coefficient of variation; latency: medians over valid runs of each run's percentiles, in microseconds; ratio and verdict: see Verdicts (true coverage in brackets when too few runs allow no 95% interval)."));
    let notes = summary::verdict_notes(r);
    if !notes.is_empty() {
        s.push(
            Block::Pre {
                lang: "",
                text: notes.trim_end_matches('\n').to_string(),
            }
            .only(Media::TERMINAL),
        );
    }
    Some(s)
}

/// Per workload swept over connections: each variant's median with its CI, drawn and as
/// a table with each candidate's ratio and verdict.
fn throughput(r: &Results) -> Option<Section> {
    let sweeps = crate::sweep::sweeps(r);
    if sweeps.is_empty() {
        return None;
    }
    let mut s = Section::new(
        "throughput",
        "Throughput by connections",
        "Throughput by connections",
    );
    let order = variant_order(r);
    let palette = Palette::new(&order);
    for sw in sweeps {
        let w = sw.workload.as_str();
        let mut by_variant: HashMap<&str, Vec<&Cell>> = HashMap::new();
        for c in r
            .cells
            .iter()
            .filter(|c| c.workload == w && c.valid_runs > 0)
        {
            by_variant.entry(c.variant.as_str()).or_default().push(c);
        }
        let series: Vec<Series> = order
            .iter()
            .filter_map(|v| {
                let mut cells = by_variant.remove(v.as_str())?;
                cells.sort_by_key(|c| c.connections);
                Some(Series {
                    name: v.to_string(),
                    color: palette.color(v),
                    points: cells
                        .iter()
                        .map(|c| (c.connections as f64, c.median_ops_per_s))
                        .collect(),
                    band: Some(
                        cells
                            .iter()
                            .map(|c| (c.connections as f64, c.ci95[0], c.ci95[1]))
                            .collect(),
                    ),
                    ..Series::default()
                })
            })
            .collect();
        s.push(Block::Heading(format!("{w}: {} by connections", sw.unit).into()).everywhere());
        s.push(Block::Charts(Charts {
            charts: vec![Chart::Line(LineChart {
                title: format!("{w}: median {} by connections", sw.unit),
                x_label: "connections".into(),
                y_label: sw.unit.into(),
                x_scale: Scale::Log2,
                y_zero: true,
                series,
                ..LineChart::default()
            })],
            ..Charts::default()
        }));
        s.push(Block::Table(sw.table).everywhere());
    }
    s.push(
        Block::caption(
            "Lines: medians over valid runs; shaded: their 95% CI. Connections on a log2 axis.",
        )
        .only(Media::HTML),
    );
    Some(s)
}

/// `bakeoff compare`: each compared cell's median over its experiment's history, a small
/// chart each (the 95% CI shaded), and the table of shifts.
fn history(r: &Results) -> Option<Section> {
    let t = sections::history(r)?;
    let palette = Palette::of(r);
    let charts = r
        .history
        .iter()
        .map(|h| {
            Chart::Line(LineChart {
                title: format!(
                    "{}: {} ×{} {}{}",
                    h.experiment,
                    h.workload,
                    h.connections,
                    h.variant,
                    if h.changes.is_empty() {
                        String::new()
                    } else {
                        format!(", {} shift(s)", h.changes.len())
                    }
                ),
                x_label: "recorded run".into(),
                y_label: "ops/s".into(),
                y_zero: true,
                small: true,
                markers: true,
                series: vec![Series {
                    name: h.variant.clone(),
                    color: palette.color(&h.variant),
                    points: h
                        .points
                        .iter()
                        .enumerate()
                        .map(|(i, p)| (i as f64 + 1.0, p.median_ops_per_s))
                        .collect(),
                    band: Some(
                        h.points
                            .iter()
                            .enumerate()
                            .map(|(i, p)| (i as f64 + 1.0, p.ci95[0], p.ci95[1]))
                            .collect(),
                    ),
                    ..Series::default()
                }],
                ..LineChart::default()
            })
        })
        .collect();
    Some(
        Section::new("history", "History", "History of the compared cells")
            .with(Block::Table(t))
            .with(Block::Charts(Charts {
                charts,
                grid: true,
                ..Charts::default()
            })),
    )
}

/// Each comparison's ratio with its CI, grouped by cell (the page only).
fn relative(r: &Results) -> Option<Section> {
    if r.comparisons.len() < 2 {
        return None;
    }
    let mut keys: Vec<(&str, usize)> = Vec::new();
    let mut by_key: HashMap<(&str, usize), Vec<&ComparisonRecord>> = HashMap::new();
    for c in &r.comparisons {
        if !by_key.contains_key(&(c.workload.as_str(), c.connections)) {
            keys.push((&c.workload, c.connections));
            by_key.insert((&c.workload, c.connections), Vec::new());
        }
    }
    for c in r.headline_comparisons() {
        if let Some(v) = by_key.get_mut(&(c.workload.as_str(), c.connections)) {
            v.push(c);
        }
    }
    let palette = Palette::of(r);
    let groups: Vec<BarGroup> = keys
        .iter()
        .map(|(w, n)| BarGroup {
            label: format!("{w} ×{n}"),
            bars: by_key
                .remove(&(*w, *n))
                .unwrap_or_default()
                .into_iter()
                .map(|c| Bar {
                    label: c.variant.clone(),
                    color: palette.color(&c.variant),
                    value: c.ratio,
                    lo: c.ci95[0],
                    hi: c.ci95[1],
                    note: format!("{} {}", fixed(c.ratio, 3), c.verdict.as_str()),
                })
                .collect(),
        })
        .collect();
    Some(
        Section::new(
            "relative",
            "Relative to baseline",
            "Relative to the baseline",
        )
        .with(Block::Charts(Charts {
            charts: vec![Chart::Bars(BarChart {
                title: format!("Median throughput relative to {}", r.plan.baseline),
                x_label:
                    "ratio to baseline (1 = baseline, > 1 faster), whiskers: the verdicts' CIs"
                        .into(),
                reference: 1.0,
                groups,
            })],
            ..Charts::default()
        })),
    )
}

/// Percentile positions on an HdrHistogram-style axis: x = 1 / (1 - p).
const PERCENTILES: [(f64, &str); 5] = [
    (2.0, "50%"),
    (10.0, "90%"),
    (100.0, "99%"),
    (1000.0, "99.9%"),
    (10000.0, "max"),
];

fn percentile_name(x: f64) -> String {
    match PERCENTILES.iter().find(|p| p.0 == x) {
        Some((_, "max")) => "max".into(),
        Some((_, l)) => format!("p{}", l.trim_end_matches('%')),
        None => svg::value(x),
    }
}

/// Workloads in experiment order.
fn workloads(r: &Results) -> Vec<&str> {
    let mut seen = std::collections::HashSet::new();
    let mut out: Vec<&str> = Vec::new();
    for c in &r.cells {
        if seen.insert(c.workload.as_str()) {
            out.push(&c.workload);
        }
    }
    out
}

/// Each workload's latency percentiles at its highest connection count (the page only).
fn latency(r: &Results) -> Option<Section> {
    let mut charts = Vec::new();
    let order = variant_order(r);
    let palette = Palette::new(&order);
    let index = Index::new(r);
    let mut most: HashMap<&str, usize> = HashMap::new();
    for c in r.cells.iter().filter(|c| c.valid_runs > 0) {
        let n = most.entry(c.workload.as_str()).or_insert(c.connections);
        *n = (*n).max(c.connections);
    }
    for w in workloads(r) {
        let Some(&n) = most.get(w) else {
            continue;
        };
        let series: Vec<Series> = order
            .iter()
            .filter_map(|v| {
                let c = index.cell(w, v, n).filter(|c| c.valid_runs > 0)?;
                let l = &c.latency_us;
                Some(Series {
                    name: v.to_string(),
                    color: palette.color(v),
                    points: [l.p50, l.p90, l.p99, l.p999, l.max]
                        .iter()
                        .zip(PERCENTILES)
                        .map(|(y, (px, _))| (px, *y))
                        .collect(),
                    ..Series::default()
                })
            })
            .collect();
        charts.push(Chart::Line(LineChart {
            title: format!("{w} ×{n}: latency by percentile"),
            x_label: "percentile".into(),
            y_label: "latency (µs)".into(),
            x_scale: Scale::Log10,
            y_scale: Scale::Log10,
            x_ticks: Some(
                PERCENTILES
                    .iter()
                    .map(|(v, l)| (*v, l.to_string()))
                    .collect(),
            ),
            x_fmt: percentile_name,
            y_fmt: micros,
            series,
            ..LineChart::default()
        }));
    }
    Some(
        Section::new("latency", "Latency", "Latency percentiles").with(Block::Charts(Charts {
            charts,
            caption: Some("Each workload's highest connection count. Medians over valid runs of each run's percentiles; the x axis is 1/(1−p) on a log scale, so the tail gets the room; latency on a log scale.".into()),
            ..Charts::default()
        })),
    )
}

fn cell_label(c: &Cell) -> String {
    format!("{} ×{} {}", c.workload, c.connections, c.variant)
}

/// "TPS" for SQL workloads (transactions), else "ops/s".
fn unit(r: &Results, w: &str) -> &'static str {
    let sql = r
        .cells
        .iter()
        .filter(|c| c.workload == w)
        .any(|c| c.runs.iter().any(|run| run.tps.is_some()));
    if sql {
        "TPS"
    } else {
        "ops/s"
    }
}

fn run_tip(run: &Run, unit: &str) -> String {
    let v: Vec<f64> = run
        .interval_ops_per_s
        .iter()
        .copied()
        .filter(|v| v.is_finite())
        .collect();
    let mean = v.iter().sum::<f64>() / v.len().max(1) as f64;
    let min = v.iter().copied().fold(f64::INFINITY, f64::min);
    let max = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let mut t = format!(
        "round {}: mean {}, min {}, max {} {unit} over {} s",
        run.round.saturating_add(1),
        ops(mean),
        ops(min),
        ops(max),
        v.len()
    );
    if !run.valid {
        t.push_str(&format!(
            " (invalid: {})",
            run.invalid_reason.as_deref().unwrap_or("?")
        ));
    }
    t
}

/// Per-second throughput of every run, the CPU over time, and the CPU modes (the page
/// only).
fn over_time(r: &Results) -> Option<Section> {
    let with: Vec<&Cell> = r
        .cells
        .iter()
        .filter(|c| c.runs.iter().any(|run| !run.interval_ops_per_s.is_empty()))
        .collect();
    let left_out = with.len().saturating_sub(MAX_TIME_CHARTS);
    let palette = Palette::of(r);
    let charts = with
        .iter()
        .take(MAX_TIME_CHARTS)
        .map(|c| {
            let unit = unit(r, &c.workload);
            Chart::Line(LineChart {
                title: cell_label(c),
                x_label: "seconds".into(),
                y_label: unit.into(),
                y_zero: true,
                small: true,
                legend: false,
                markers: false,
                series: c
                    .runs
                    .iter()
                    .filter(|run| !run.interval_ops_per_s.is_empty())
                    .map(|run| Series {
                        name: format!("round {}", run.round.saturating_add(1)),
                        color: palette.color(&c.variant),
                        points: run
                            .interval_ops_per_s
                            .iter()
                            .enumerate()
                            .map(|(i, v)| (i as f64 + 1.0, *v))
                            .collect(),
                        dashed: !run.valid,
                        tip: Some(run_tip(run, unit)),
                        ..Series::default()
                    })
                    .collect(),
                ..LineChart::default()
            })
        })
        .collect();
    let mut caption =
        "One line per run (dashed: invalid); hover a line for its mean, minimum and maximum."
            .to_string();
    if left_out > 0 {
        caption.push_str(&format!(
            " {left_out} more cell{} with per-second data left out (at most {MAX_TIME_CHARTS} charts).",
            if left_out == 1 { "" } else { "s" }
        ));
    }
    let mut s =
        Section::new("over-time", "Over time", "Runs over time").with(Block::Charts(Charts {
            heading: Some("Per-second throughput of each run".into()),
            charts,
            grid: true,
            caption: Some(caption),
        }));
    s.push(Block::Charts(Charts {
        heading: Some("CPU over time".into()),
        charts: cpu_over_time(r),
        grid: true,
        caption: Some("Each cell's median-throughput run, one sample per interval: the machine's user, system (with irq and softirq) and iowait time in percent of all cores, and the server's CPU in percent of one core (summed over its processes). A stall shows as a dip; warmup drift as a slope.".into()),
    }));
    s.push(Block::Charts(Charts {
        heading: Some("CPU modes".into()),
        charts: vec![Chart::Stacked(cpu_modes(r))],
        grid: false,
        caption: Some("Whole machine, all cores = 100%: means over each cell's valid runs (other: softirq and steal). The per-second samples are linked from the system table.".into()),
    }));
    Some(s)
}

/// Per cell (at most `MAX_TIME_CHARTS`), the CPU series of its median-throughput valid run.
fn cpu_over_time(r: &Results) -> Vec<Chart> {
    let mut charts = Vec::new();
    for c in &r.cells {
        if charts.len() >= MAX_TIME_CHARTS {
            break;
        }
        let mut runs: Vec<&Run> = c
            .runs
            .iter()
            .filter(|r| r.valid && r.system.as_ref().is_some_and(|s| !s.cpu_series.is_empty()))
            .collect();
        if runs.is_empty() {
            continue;
        }
        runs.sort_by(|a, b| a.ops_per_s.total_cmp(&b.ops_per_s));
        let Some(sys) = runs[runs.len() / 2].system.as_ref() else {
            continue;
        };
        let line = |name: &str, color: usize, f: fn(&crate::model::CpuSample) -> f64| Series {
            name: name.into(),
            color,
            points: sys.cpu_series.iter().map(|p| (p.t_s, f(p))).collect(),
            ..Series::default()
        };
        charts.push(Chart::Line(LineChart {
            title: cell_label(c),
            x_label: "seconds".into(),
            y_label: "percent".into(),
            y_zero: true,
            small: true,
            legend: charts.is_empty(),
            markers: false,
            series: vec![
                line("user %", 0, |p| p.user),
                line("system %", 1, |p| p.system),
                line("iowait %", 3, |p| p.iowait),
                line("server % of a core", 2, |p| p.server),
            ],
            ..LineChart::default()
        }));
    }
    charts
}

fn cpu_modes(r: &Results) -> StackedBars {
    StackedBars {
        title: "CPU time by mode during the measured windows".into(),
        x_label: "% of all cores".into(),
        parts: [
            ("user", "#3a6fc4"),
            ("system", "#e8782a"),
            ("iowait", "#d64541"),
            ("other", "#8a4fb8"),
            ("idle", "#d5dae1"),
        ]
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect(),
        rows: r
            .cells
            .iter()
            .filter_map(|c| {
                let s = c.system.as_ref()?;
                Some((
                    cell_label(c),
                    vec![
                        s.cpu_user_pct,
                        s.cpu_system_pct,
                        s.cpu_iowait_pct,
                        s.cpu_softirq_pct + s.cpu_steal_pct,
                        s.cpu_idle_pct,
                    ],
                ))
            })
            .collect(),
        total: 100.0,
    }
}

/// A section that is one table.
fn one_table(
    id: &'static str,
    nav: &'static str,
    title: &str,
    t: Option<Table>,
) -> Option<Section> {
    Some(Section::new(id, nav, title).with(Block::Table(t?)))
}

fn system(r: &Results) -> Option<Section> {
    one_table(
        "system",
        "System",
        "System during the measured windows",
        sections::system(r),
    )
}

/// The other hosts, and each client host's share of the cells loaded from several.
fn hosts(r: &Results) -> Option<Section> {
    let facts = sections::hosts(r);
    let clients = sections::client_hosts(r);
    if facts.is_none() && clients.is_none() {
        return None;
    }
    let mut s = Section::new("hosts", "Hosts", "Hosts");
    if let Some(t) = facts {
        s.push(Block::Table(t));
    }
    if let Some(t) = clients {
        s.push(Block::Heading("Load by client host".into()).everywhere());
        s.push(Block::Charts(Charts {
            charts: client_host_charts(r),
            grid: true,
            ..Charts::default()
        }));
        s.push(Block::Table(t).everywhere());
    }
    Some(s)
}

/// Per cell loaded from several hosts, its first valid run's throughput second by
/// second, one line per client host: a host that fell behind shows at once.
fn client_host_charts(r: &Results) -> Vec<Chart> {
    let mut out = Vec::new();
    for c in &r.cells {
        let Some(run) = c.runs.iter().find(|x| x.valid && x.clients.len() > 1) else {
            continue;
        };
        // The seconds every host measured (a host's last interval may be a sliver).
        let seconds = run
            .clients
            .iter()
            .map(|h| h.interval_ops_per_s.len())
            .min()
            .unwrap_or(0);
        out.push(Chart::Line(LineChart {
            title: format!(
                "{} {} ×{}, round {}, by host",
                c.workload,
                c.variant,
                c.connections,
                run.round.saturating_add(1)
            ),
            x_label: "second".into(),
            y_label: "ops/s".into(),
            x_ticks: Some((1..=seconds).map(|i| (i as f64, i.to_string())).collect()),
            y_zero: true,
            small: true,
            legend: true,
            series: run
                .clients
                .iter()
                .enumerate()
                .map(|(i, h)| Series {
                    name: format!("{} ({} conn.)", h.host, h.connections),
                    color: i,
                    points: h
                        .interval_ops_per_s
                        .iter()
                        .take(seconds)
                        .enumerate()
                        .map(|(s, v)| ((s + 1) as f64, *v))
                        .collect(),
                    ..Series::default()
                })
                .collect(),
            ..LineChart::default()
        }));
    }
    out
}

fn memory(r: &Results) -> Option<Section> {
    one_table(
        "memory",
        "Memory",
        "Memory (Redis INFO)",
        sections::memory(r),
    )
}

fn counters(r: &Results) -> Option<Section> {
    one_table(
        "counters",
        "CPU counters",
        "CPU counters (server processes, measured window)",
        sections::counters(r),
    )
}

/// Instructions per operation (mode = "instructions") and each cell's top functions.
fn instructions(r: &Results) -> Option<Section> {
    let mut s = one_table(
        "instructions",
        "Instructions",
        "Instructions per operation (callgrind)",
        sections::instructions(r),
    )?;
    for (_, t) in sections::top_instructions(r) {
        s.push(Block::Details {
            summary: t.title.clone().into(),
            blocks: vec![Block::Table(t)],
        });
    }
    Some(s)
}

/// Hotspot profiles: where the time went, and what changed against the baseline.
fn hotspots(r: &Results) -> Option<Section> {
    let cells: Vec<&Cell> = r.cells.iter().filter(|c| c.profile.is_some()).collect();
    if cells.is_empty() {
        return None;
    }
    let mut s = Section::new(
        "hotspots",
        "Hotspots",
        "Hotspots (perf record, one extra run per cell)",
    );
    for c in cells {
        let Some(p) = &c.profile else { continue };
        s.push(Block::Heading(
            Inline::new()
                .text(format!("{} ×{} ", c.workload, c.connections))
                .and(Span::Variant(c.variant.clone())),
        ));
        let sp = &p.split;
        s.push(Block::text(
            Inline::new()
                .text(format!(
                    "{} samples of {} (round {}); server binary {:.1}%, kernel {:.1}%, libraries {:.1}%, other {:.1}%. Flamegraph: ",
                    ops(p.samples as f64),
                    p.event,
                    p.round.saturating_add(1),
                    sp.server_pct,
                    sp.kernel_pct,
                    sp.libraries_pct,
                    sp.other_pct
                ))
                .and(Span::Link {
                    text: p.flamegraph.clone(),
                    path: p.flamegraph.clone(),
                }),
        ));
        s.push(Block::Charts(Charts {
            charts: vec![Chart::Stacked(StackedBars {
                title: String::new(),
                x_label: "% of samples".into(),
                parts: [
                    ("server binary", "#3a6fc4"),
                    ("kernel", "#e8782a"),
                    ("libraries", "#17a2a0"),
                    ("other", "#aab2bd"),
                ]
                .iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect(),
                rows: vec![(
                    "samples".into(),
                    vec![sp.server_pct, sp.kernel_pct, sp.libraries_pct, sp.other_pct],
                )],
                total: 100.0,
            })],
            ..Charts::default()
        }));
        if let Some(t) = sections::hotspot_top(p) {
            s.push(Block::Table(t));
        }
        if let Some(t) = sections::hotspot_lines(p) {
            s.push(Block::text(format!("{}:", t.title)));
            s.push(Block::Table(t));
        }
        if let Some(t) = sections::hotspot_diff(p, &r.plan.baseline) {
            s.push(Block::text(format!("{}:", t.title)));
            s.push(Block::Table(t));
        }
        if let Some(t) = sections::hotspot_line_diff(p, &r.plan.baseline) {
            s.push(Block::text(format!("{}:", t.title)));
            s.push(Block::Table(t));
        }
        let by_address: Vec<&str> = p
            .top
            .iter()
            .filter(|f| f.lines.iter().any(|l| l.instruction.is_some()))
            .map(|f| f.function.as_str())
            .collect();
        if !by_address.is_empty() && c.variant != r.plan.baseline {
            s.push(Block::text(format!(
                "No line info for {}: hot instructions by address only, which have no honest match across builds, so they are not compared with {}.",
                by_address.join(", "),
                r.plan.baseline
            )));
        }
    }
    Some(s)
}

fn binaries(r: &Results) -> Option<Section> {
    one_table(
        "binaries",
        "Binaries",
        "What changed in the binaries",
        sections::binaries(r),
    )
}

/// The layouts table, and per point a chart of each variant's median per layout: a
/// layout that is slow for every variant (a shared seed's luck) shows as a common dip.
fn layouts(r: &Results) -> Option<Section> {
    let t = sections::layouts(r)?;
    let mut points: Vec<(&str, usize)> = Vec::new();
    let mut at: HashMap<(&str, usize), Vec<&Cell>> = HashMap::new();
    for c in r.cells.iter().filter(|c| c.layouts.is_some()) {
        let cells = at.entry((c.workload.as_str(), c.connections)).or_default();
        if cells.is_empty() {
            points.push((c.workload.as_str(), c.connections));
        }
        cells.push(c);
    }
    let palette = Palette::of(r);
    let mut s = Section::new("layouts", "Layouts", "Code layouts");
    for (w, n) in points {
        let series: Vec<Series> = at
            .remove(&(w, n))
            .unwrap_or_default()
            .into_iter()
            .filter_map(|c| {
                let l = c.layouts.as_ref()?;
                Some(Series {
                    name: c.variant.clone(),
                    color: palette.color(&c.variant),
                    points: l
                        .medians
                        .iter()
                        .enumerate()
                        .map(|(i, m)| ((i + 1) as f64, *m))
                        .collect(),
                    ..Series::default()
                })
            })
            .collect();
        let k = series.iter().map(|s| s.points.len()).max().unwrap_or(0);
        s.push(Block::Charts(Charts {
            charts: vec![Chart::Line(LineChart {
                title: format!("{w} ×{n}: median ops/s per code layout"),
                x_label: "layout".into(),
                y_label: "ops/s".into(),
                x_ticks: Some((1..=k).map(|i| (i as f64, i.to_string())).collect()),
                small: true,
                series,
                ..LineChart::default()
            })],
            ..Charts::default()
        }));
    }
    Some(s.with(Block::Table(t)))
}

/// SQL cells: latency per statement kind, from each cell's median-throughput valid run.
fn statements(r: &Results) -> Option<Section> {
    one_table(
        "statements",
        "Statements",
        "Statements (each cell's median-throughput run)",
        sections::statements(r),
    )
}

fn runs(r: &Results) -> Option<Section> {
    let t = sections::runs(r)?;
    Some(Section::new("runs", "Runs", "Runs").with(Block::Details {
        summary: format!("Every run ({})", t.rows.len()).into(),
        blocks: vec![Block::Table(t)],
    }))
}

fn data_loads(r: &Results) -> Option<Section> {
    one_table(
        "data",
        "Data loads",
        "Data loads (once per variant, not measured)",
        sections::data_loads(r),
    )
}
