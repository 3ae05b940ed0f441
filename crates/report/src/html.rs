//! report.html: one self-contained file (inline CSS, inline SVG charts from [`crate::svg`],
//! no scripts, nothing fetched) that opens from disk. Warnings and verdicts first, then
//! the pictures (throughput by connections, ratios to the baseline, latency percentiles,
//! per-second throughput), the "why" tables, and finally how everything was built and run,
//! with the exact experiment file. A section is left out when the results have nothing
//! for it. Every string from the results goes through [`escape`].

use crate::markup::escape;
use crate::model::{Cell, Results, Run, VariantRecord, Verdict};
use crate::sections;
use crate::summary::{self, micros, ops};
use crate::svg::{self, Bar, BarChart, BarGroup, Interval, LineChart, Scale, Series, StackedBars};
use crate::table::{self, bytes, code, file_link, fixed, Table, Value};
use std::fmt::Write;

/// At most this many per-second charts; the rest are counted, not drawn.
const MAX_TIME_CHARTS: usize = 24;

const CSS: &str = "\
:root{--fg:#1d2330;--muted:#5d6878;--line:#dde2e8;--zebra:#f6f8fa;--head:#eef1f5}
*{box-sizing:border-box}
body{margin:0;background:#eef1f5;color:var(--fg);font:15px/1.5 system-ui,-apple-system,\"Segoe UI\",Roboto,\"Helvetica Neue\",Arial,sans-serif}
main{max-width:1100px;margin:0 auto;padding:26px 32px 64px;background:#fff;min-height:100vh;box-shadow:0 0 0 1px var(--line)}
h1{font-size:1.7em;margin:0 0 .25em;line-height:1.2}
h2{font-size:1.3em;margin:2.2em 0 .7em;padding-bottom:.25em;border-bottom:2px solid var(--line)}
h3{font-size:1.05em;margin:1.5em 0 .5em}
p{margin:.5em 0}
a{color:#2457a6}
.muted,.meta,.host,.caption{color:var(--muted)}
.caption{font-size:13px;max-width:85ch}
nav.toc{margin:1em 0 0;font-size:13.5px}
nav.toc a{display:inline-block;margin:2px 4px 2px 0;padding:2px 10px;border:1px solid var(--line);border-radius:12px;text-decoration:none;color:var(--fg);background:var(--zebra)}
table{border-collapse:collapse;margin:.6em 0 1em;font-size:13.5px}
th,td{padding:4px 10px;border-bottom:1px solid var(--line);text-align:left;vertical-align:middle;white-space:nowrap}
thead th{background:var(--head);font-weight:600;white-space:nowrap}
tbody tr:nth-child(even){background:var(--zebra)}
tfoot td{border-bottom:0}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td.chart{padding:0 10px}
.scroll{overflow-x:auto}
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,\"Liberation Mono\",monospace;font-size:12.5px}
pre{background:var(--zebra);border:1px solid var(--line);border-radius:6px;padding:10px 12px;overflow-x:auto;line-height:1.45}
.badge{display:inline-block;padding:0 9px;border-radius:10px;font-size:12px;font-weight:600;line-height:19px;color:#fff;background:#8d939b;white-space:nowrap}
.badge.faster,.badge.ok{background:#1f9d55}
.badge.slower,.badge.bad{background:#d64541}
.badge.same,.badge.inconclusive{background:#8d939b}
.badge.equivalent{background:#3b7dd8}
.badge.client-bound{background:#c77c02}
.badge.baseline{background:#3a6fc4}
.badge.warn{background:#d98a00}
.r-faster{color:#187a42;font-weight:600}
.r-slower{color:#b8322e;font-weight:600}
.r-client-bound{color:#9a5f00;font-weight:600}
.box{border-radius:8px;padding:10px 18px;margin:1.2em 0;border:1px solid}
.box h2{border:0;margin:.2em 0 .3em;padding:0;font-size:1.1em}
.box ul{margin:.3em 0;padding-left:1.2em}
.box.warn{background:#fdeceb;border-color:#eaa39f;color:#6e1a15}
.box.note{background:#fff5dc;border-color:#eccb78;color:#5e4500}
.box pre{background:#fff8f7;border-color:#f0c4c1;color:#3b0f0c}
.sw{display:inline-block;width:10px;height:10px;border-radius:2px;margin-right:6px}
svg.chart{display:block;max-width:100%;height:auto;margin:.4em 0 1.2em}
svg.chart text{font-size:12px;fill:#2b3340}
svg.chart .ctitle{font-size:13px;font-weight:600}
svg.chart .tick{font-size:11px;fill:#5d6878}
svg.chart .label{fill:#5d6878}
svg.chart .group{font-weight:600}
svg.chart .bnote{font-size:11.5px}
svg.chart .grid{stroke:#e7eaef;stroke-width:1}
svg.chart .axis{stroke:#8a93a0;stroke-width:1}
svg.chart .ref{stroke:#1d2330;stroke-width:1.3;stroke-dasharray:4 3}
svg.chart .whisker{stroke:#1d2330;stroke-width:1.4}
svg.chart.strip{margin:0;max-width:none}
svg.chart.small{width:100%;margin:.2em 0}
.grid2{display:grid;grid-template-columns:repeat(auto-fill,minmax(330px,1fr));gap:6px 20px}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(480px,1fr));gap:4px 24px}
table.kv{width:100%}
table.kv caption{text-align:left;font-weight:600;font-size:15px;padding:4px 0 6px}
table.kv th{width:30%;background:none;color:var(--muted);font-weight:500;vertical-align:baseline}
table.kv td{white-space:normal;word-break:break-word;vertical-align:baseline}
.wrap{white-space:normal}
details summary{cursor:pointer;color:#2457a6;margin:.4em 0}
footer{margin-top:3em;font-size:12.5px;color:var(--muted)}
";

/// The self-contained HTML report.
pub fn render(r: &Results) -> String {
    let x = Ctx::new(r);
    let mut sections: Vec<Section> = Vec::new();
    sections.extend(verification(&x));
    sections.extend(memory_errors(&x));
    sections.extend(verdicts(&x));
    sections.extend(all_cells(&x));
    sections.extend(throughput(&x));
    sections.extend(history(&x));
    sections.extend(tpcc(&x));
    sections.extend(replay(&x));
    sections.extend(sqlsuite(&x));
    sections.extend(relative(&x));
    sections.extend(latency(&x));
    sections.extend(over_time(&x));
    sections.extend(system(&x));
    sections.extend(hosts(&x));
    sections.extend(memory(&x));
    sections.extend(counters(&x));
    sections.extend(instructions(&x));
    sections.extend(hotspots(&x));
    sections.extend(binaries(&x));
    sections.extend(layouts(&x));
    sections.extend(statements(&x));
    sections.extend(runs(&x));
    sections.push(builds(&x));
    sections.extend(data_loads(&x));
    sections.push(settings(&x));
    sections.push(experiment(&x));

    let mut s = String::with_capacity(64 * 1024);
    let _ = write!(
        s,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>bakeoff: {}</title>\n<style>\n{CSS}</style>\n</head>\n<body>\n<main>\n",
        escape(&r.name)
    );
    header(&mut s, &x);
    s.push_str("<nav class=\"toc\">");
    for sec in &sections {
        let _ = write!(s, "<a href=\"#{}\">{}</a>", sec.id, sec.nav);
    }
    s.push_str("</nav>\n");
    warnings(&mut s, r);
    for sec in &sections {
        let _ = write!(
            s,
            "<section id=\"{}\"{}>\n<h2>{}</h2>\n{}</section>\n",
            sec.id,
            if sec.id == "memory-errors" || (sec.id == "verification" && x.verify_failed()) {
                " class=\"box warn\""
            } else {
                ""
            },
            sec.title,
            sec.body
        );
    }
    let _ = write!(
        s,
        "<footer>Written by bakeoff {} from results.json ({}). Charts are inline SVG; hover a point or bar for its exact value.</footer>\n</main>\n</body>\n</html>\n",
        escape(&r.bakeoff_version),
        escape(&r.schema)
    );
    s
}

/// One `<section>`: its anchor, its (already escaped) heading and table-of-contents name,
/// and its HTML.
struct Section {
    id: &'static str,
    nav: &'static str,
    title: String,
    body: String,
}

impl Section {
    fn new(id: &'static str, nav: &'static str, title: String, body: String) -> Section {
        Section {
            id,
            nav,
            title,
            body,
        }
    }
}

/// What every section needs: the results and each variant's colour.
struct Ctx<'a> {
    r: &'a Results,
    /// Variants in experiment order (then any only named by cells): position = colour.
    variants: Vec<&'a str>,
}

impl<'a> Ctx<'a> {
    fn new(r: &'a Results) -> Ctx<'a> {
        let mut variants: Vec<&str> = r.variants.iter().map(|v| v.name.as_str()).collect();
        for c in &r.cells {
            if !variants.contains(&c.variant.as_str()) {
                variants.push(&c.variant);
            }
        }
        Ctx { r, variants }
    }

    /// Whether some variant's results differed from the baseline's.
    fn verify_failed(&self) -> bool {
        self.r
            .verification
            .iter()
            .any(|v| !v.differences.is_empty())
    }

    /// The variant's palette index.
    fn color(&self, v: &str) -> usize {
        self.variants.iter().position(|x| *x == v).unwrap_or(0)
    }

    /// The variant's name with its colour swatch.
    fn vname(&self, v: &str) -> String {
        format!(
            "<span class=\"sw\" style=\"background:{}\"></span>{}",
            svg::color(self.color(v)),
            escape(v)
        )
    }

    /// A neutral table as HTML, variants with their swatches.
    fn table(&self, t: &Table) -> String {
        t.html(&|v| self.vname(v))
    }

    /// One neutral cell as HTML.
    fn value(&self, v: &Value) -> String {
        table::html_value(v, &|v| self.vname(v))
    }

    /// Workloads in experiment order.
    fn workloads(&self) -> Vec<&'a str> {
        let mut out: Vec<&str> = Vec::new();
        for c in &self.r.cells {
            if !out.contains(&c.workload.as_str()) {
                out.push(&c.workload);
            }
        }
        out
    }

    /// "TPS" for SQL workloads (transactions), else "ops/s".
    fn unit(&self, w: &str) -> &'static str {
        let sql = self
            .r
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
}

/// Key/value rows (keys plain text, values HTML).
fn kv_rows(s: &mut String, rows: &[(&str, String)]) {
    for (k, v) in rows {
        let _ = write!(s, "<tr><th>{}</th><td>{v}</td></tr>", escape(k));
    }
}

fn verdict_color(v: Verdict) -> &'static str {
    match v {
        Verdict::Faster => svg::FASTER,
        Verdict::Slower => svg::SLOWER,
        Verdict::Equivalent => svg::EQUIVALENT,
        Verdict::Inconclusive => svg::SAME,
        Verdict::ClientBound => svg::CLIENT_BOUND,
    }
}

fn cell_label(c: &Cell) -> String {
    format!("{} ×{} {}", c.workload, c.connections, c.variant)
}

fn header(s: &mut String, x: &Ctx) {
    let r = x.r;
    let _ = writeln!(s, "<header>\n<h1>bakeoff: {}</h1>", escape(&r.name));
    if let Some(d) = &r.description {
        let _ = writeln!(s, "<p>{}</p>", escape(d));
    }
    let status = match r.status.as_str() {
        "complete" => "ok",
        "failed" => "bad",
        _ => "warn",
    };
    let mut meta = format!(
        "<span class=\"badge {status}\">{}</span> started {}",
        escape(&r.status),
        escape(&r.started_utc)
    );
    if let Some(f) = &r.finished_utc {
        let _ = write!(meta, ", finished {}", escape(f));
    }
    let _ = write!(meta, " · bakeoff {}", escape(&r.bakeoff_version));
    if let Some(src) = &r.source {
        let _ = write!(
            meta,
            " · source: {} ({})",
            escape(&src.description),
            code(&src.id)
        );
    }
    let _ = writeln!(s, "<p class=\"meta\">{meta}</p>");
    let _ = writeln!(s, "<p class=\"host\">Host: {}</p>\n</header>", host_line(r));
}

fn host_line(r: &Results) -> String {
    let h = &r.host;
    let mut parts = vec![
        escape(&h.cpu_model),
        format!("{} cores", h.cores),
        format!("{:.1} GiB", h.memory_bytes as f64 / (1u64 << 30) as f64),
        escape(&h.os),
        format!("kernel {}", escape(&h.kernel)),
    ];
    if !h.hostname.is_empty() {
        parts.push(format!("host {}", escape(&h.hostname)));
    }
    parts.join(" · ")
}

/// The warnings (red) and notes (amber), before any figure.
fn warnings(s: &mut String, r: &Results) {
    if !r.warnings.is_empty() {
        s.push_str("<div class=\"box warn\" id=\"warnings\">\n<h2>Warnings</h2>\n<ul>\n");
        for w in &r.warnings {
            let _ = writeln!(s, "<li><strong>{}</strong></li>", escape(w));
        }
        s.push_str("</ul>\n</div>\n");
    }
    if !r.notes.is_empty() {
        s.push_str(
            "<div class=\"box note\" id=\"notes\">\n<h2>Not measured on this machine</h2>\n<ul>\n",
        );
        for n in &r.notes {
            let _ = writeln!(s, "<li>{}</li>", escape(n));
        }
        s.push_str("</ul>\n</div>\n");
    }
}

fn memory_errors(x: &Ctx) -> Option<Section> {
    let bad: Vec<&VariantRecord> =
        x.r.variants
            .iter()
            .filter(|v| !v.memory_errors.is_empty())
            .collect();
    if bad.is_empty() {
        return None;
    }
    let mut b = String::new();
    for v in bad {
        let how = if v.sanitize.is_empty() {
            v.run_under.clone().unwrap_or_default()
        } else {
            format!("sanitize = {}", v.sanitize.join(", "))
        };
        let _ = writeln!(
            b,
            "<h3>{}{}</h3>",
            x.vname(&v.name),
            if how.is_empty() {
                String::new()
            } else {
                format!(" <span class=\"muted\">({})</span>", escape(&how))
            }
        );
        for e in &v.memory_errors {
            let _ = writeln!(
                b,
                "<p><strong>{}</strong> ({}): {}</p>",
                escape(&e.kind),
                escape(&e.tool),
                escape(&e.message)
            );
            if !e.stack.is_empty() {
                let mut frames: Vec<String> = e
                    .stack
                    .iter()
                    .take(16)
                    .enumerate()
                    .map(|(i, f)| format!("#{i:<2} {}", escape(f)))
                    .collect();
                if e.stack.len() > 16 {
                    frames.push(format!("… {} more frames", e.stack.len() - 16));
                }
                let _ = writeln!(b, "<pre>{}</pre>", frames.join("\n"));
            }
            if let Some(l) = &e.log {
                let _ = writeln!(b, "<p>Log: {}</p>", file_link(l, l));
            }
        }
    }
    Some(Section::new(
        "memory-errors",
        "Memory errors",
        "Memory errors (verification failed)".into(),
        b,
    ))
}

/// Where the verdicts table draws its interval column: after the CI in words.
const CHART_AT: usize = 5;

fn verdicts(x: &Ctx) -> Option<Section> {
    let r = x.r;
    if r.comparisons.is_empty() {
        return None;
    }
    let intervals: Vec<Interval> = r
        .comparisons
        .iter()
        .map(|c| Interval {
            value: c.ratio,
            lo: c.ci95[0],
            hi: c.ci95[1],
            color: verdict_color(c.verdict).to_string(),
            points: c.round_ratios.iter().map(|x| x.ratio).collect(),
            tip: format!(
                "{} ×{}: {} vs {}: ratio {}, 95% CI {}, {}",
                c.workload,
                c.connections,
                c.variant,
                c.baseline,
                fixed(c.ratio, 3),
                summary::ci_text(c.ci95, c.ci_coverage),
                c.verdict.as_str()
            ),
        })
        .collect();
    let strips = svg::interval_rows(1.0, "ratio to baseline (1 = same)", &intervals);
    // The neutral verdicts table, with two things only a page can show: the baseline
    // beside each variant, and each ratio's interval drawn in a column of its own.
    let t = sections::verdicts(r)?;
    let mut b = String::from("<div class=\"scroll\"><table class=\"verdicts\"><thead><tr>");
    for (i, col) in t.columns.iter().enumerate() {
        if i == CHART_AT {
            b.push_str("<th>ratio with 95% CI, per-round ratios below</th>");
        }
        let _ = write!(
            b,
            "<th{}>{}</th>",
            if col.numeric { " class=\"num\"" } else { "" },
            escape(&col.name)
        );
    }
    b.push_str("</tr></thead><tbody>\n");
    for (i, (c, row)) in r.comparisons.iter().zip(&t.rows).enumerate() {
        let class = match c.verdict {
            Verdict::Faster => " r-faster",
            Verdict::Slower => " r-slower",
            Verdict::Equivalent => " r-equivalent",
            Verdict::Inconclusive => "",
            Verdict::ClientBound => " r-client-bound",
        };
        b.push_str("<tr>");
        for (j, (col, v)) in t.columns.iter().zip(row).enumerate() {
            if j == CHART_AT {
                let _ = write!(
                    b,
                    "<td class=\"chart\">{}</td>",
                    strips
                        .as_ref()
                        .and_then(|s| s.rows.get(i))
                        .map(String::as_str)
                        .unwrap_or("")
                );
            }
            let mut html = x.value(v);
            if col.name == "variant" {
                let _ = write!(
                    html,
                    " <span class=\"muted\">vs {}</span>",
                    escape(&c.baseline)
                );
            }
            let class = match (col.numeric, col.name.as_str()) {
                (true, "ratio") => format!(" class=\"num{class}\""),
                (true, _) => " class=\"num\"".into(),
                _ => String::new(),
            };
            let _ = write!(b, "<td{class}>{html}</td>");
        }
        b.push_str("</tr>\n");
    }
    b.push_str("</tbody>");
    if let Some(s) = &strips {
        let _ = write!(
            b,
            "<tfoot><tr><td colspan=\"{CHART_AT}\"></td><td class=\"chart\">{}</td><td colspan=\"{}\"></td></tr></tfoot>",
            s.axis,
            t.columns.len() - CHART_AT
        );
    }
    b.push_str("</table></div>\n");
    let _ = writeln!(
        b,
        "<p class=\"caption\">{}.</p>",
        escape(&summary::stopping_text(r))
    );
    let mut notes = summary::explanations(r);
    notes.extend(summary::disturbed(r));
    if !notes.is_empty() {
        b.push_str("<ul class=\"caption\">");
        for n in notes {
            let _ = write!(b, "<li>{}</li>", escape(&n));
        }
        b.push_str("</ul>\n");
    }
    let _ = writeln!(
        b,
        "<p class=\"caption\">{} Detectable: the CI's half-width, the smallest difference this comparison could tell from none. \
         <span class=\"badge faster\">faster</span> <span class=\"badge slower\">slower</span> <span class=\"badge equivalent\">equivalent</span> <span class=\"badge inconclusive\">inconclusive</span></p>",
        escape(&summary::legend(r))
    );
    Some(Section::new(
        "verdicts",
        "Verdicts",
        format!(
            "Verdicts <span class=\"muted\">(against baseline {})</span>",
            escape(&r.plan.baseline)
        ),
        b,
    ))
}

fn all_cells(x: &Ctx) -> Option<Section> {
    let r = x.r;
    if r.cells.is_empty() {
        return None;
    }
    let mut b = x.table(&summary::cells_table(r));
    b.push_str(
        "<p class=\"caption\">ops/s: median over valid runs with a distribution-free 95% CI; latency: medians over valid runs of each run's percentiles, in microseconds.</p>\n",
    );
    Some(Section::new("cells", "All cells", "All cells".into(), b))
}

fn throughput(x: &Ctx) -> Option<Section> {
    let r = x.r;
    let sweeps = crate::sweep::sweeps(r);
    if sweeps.is_empty() {
        return None;
    }
    let mut b = String::new();
    for sw in &sweeps {
        let w = sw.workload.as_str();
        let series: Vec<Series> = x
            .variants
            .iter()
            .filter_map(|v| {
                let mut cells: Vec<&Cell> = r
                    .cells
                    .iter()
                    .filter(|c| c.workload == w && c.variant == *v && c.valid_runs > 0)
                    .collect();
                if cells.is_empty() {
                    return None;
                }
                cells.sort_by_key(|c| c.connections);
                Some(Series {
                    name: v.to_string(),
                    color: x.color(v),
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
        let _ = writeln!(b, "<h3>{}</h3>", escape(w));
        if let Some(chart) = svg::line_chart(&LineChart {
            title: format!("{w}: median {} by connections", sw.unit),
            x_label: "connections".into(),
            y_label: sw.unit.into(),
            x_scale: Scale::Log2,
            y_zero: true,
            series,
            ..LineChart::default()
        }) {
            b.push_str(&chart);
            b.push('\n');
        }
        b.push_str(&x.table(&sw.table));
    }
    b.push_str("<p class=\"caption\">Lines: medians over valid runs; shaded: their 95% CI. Connections on a log2 axis.</p>\n");
    Some(Section::new(
        "throughput",
        "Throughput by connections",
        "Throughput by connections".into(),
        b,
    ))
}

/// TPC-C: NOTPM against warehouses per variant (one line per connection count), the
/// NOTPM table with verdicts, the largest passing W, response times against their limits,
/// and what bound the server.
fn tpcc(x: &Ctx) -> Option<Section> {
    use crate::tpcc as t;
    let r = x.r;
    let workloads = t::workloads(r);
    if workloads.is_empty() {
        return None;
    }
    let mut b = String::new();
    for w in &workloads {
        let _ = writeln!(b, "<h3>{}</h3>", escape(w));
        let cells = t::cells(r, w);
        let mut series: Vec<Series> = Vec::new();
        for v in &x.variants {
            let mut by_conns: Vec<usize> = cells
                .iter()
                .filter(|c| c.variant == *v)
                .map(|c| c.connections)
                .collect();
            by_conns.sort_unstable();
            by_conns.dedup();
            let spec = cells
                .iter()
                .any(|c| c.tpcc.as_ref().is_some_and(|k| k.think == "spec"));
            let groups: Vec<Option<usize>> = if spec {
                vec![None]
            } else {
                by_conns.into_iter().map(Some).collect()
            };
            let many = groups.len() > 1;
            for g in groups {
                let mine: Vec<_> = cells
                    .iter()
                    .filter(|c| c.variant == *v && g.is_none_or(|n| c.connections == n))
                    .filter_map(|c| c.tpcc.as_ref().filter(|k| k.median_notpm > 0.0))
                    .collect();
                if mine.is_empty() {
                    continue;
                }
                series.push(Series {
                    name: match (many, g) {
                        (true, Some(n)) => format!("{v} x{n}"),
                        _ => v.to_string(),
                    },
                    color: x.color(v),
                    points: mine
                        .iter()
                        .map(|k| (f64::from(k.warehouses), k.median_notpm))
                        .collect(),
                    band: Some(
                        mine.iter()
                            .map(|k| (f64::from(k.warehouses), k.notpm_ci95[0], k.notpm_ci95[1]))
                            .collect(),
                    ),
                    ..Series::default()
                });
            }
        }
        if let Some(chart) = svg::line_chart(&LineChart {
            title: format!("{w}: NOTPM by warehouses"),
            x_label: "warehouses (W)".into(),
            y_label: "NOTPM".into(),
            y_zero: true,
            series,
            ..LineChart::default()
        }) {
            b.push_str(&chart);
            b.push('\n');
        }
        let notpm = t::notpm_table(r, w);
        b.push_str(&x.table(&notpm));
        let lines = t::max_w_lines(r, w);
        if !lines.is_empty() {
            b.push_str("<p><b>Largest passing W:</b></p><ul>");
            for l in lines {
                let _ = write!(b, "<li>{}</li>", escape(&l));
            }
            b.push_str("</ul>\n");
        }
        let _ = writeln!(b, "<h3>{}: response times</h3>", escape(w));
        b.push_str(&x.table(&t::response_table(r, w)));
        if let Some(bound) = t::bound_table(r, w) {
            let _ = writeln!(b, "<h3>{}: CPU-bound or I/O-bound?</h3>", escape(w));
            b.push_str(&x.table(&bound));
        }
    }
    b.push_str("<p class=\"caption\">NOTPM: New-Order transactions committed per minute; lines: medians over valid runs, shaded: their 95% CI. A kind passes when its 90th-percentile response time is within its limit (5 s; Stock-Level 20 s). bound by: I/O when iowait >= 20% or the disk was >= 80% busy, CPU when idle < 15%, else neither.</p>\n");
    Some(Section::new("tpcc", "TPC-C", "TPC-C".into(), b))
}

/// Result verification: per variant same, different or skipped; each difference with
/// its query, both hashes and the first differing rows.
fn verification(x: &Ctx) -> Option<Section> {
    use crate::replay as rp;
    let r = x.r;
    if r.verification.is_empty() {
        return None;
    }
    let mut b = String::new();
    b.push_str(&x.table(&rp::verification_table(r)));
    for v in r.verification.iter().filter(|v| !v.differences.is_empty()) {
        let _ = writeln!(b, "<h3>{}: results differ</h3>", escape(&v.variant));
        for d in v.differences.iter().take(10) {
            let _ = writeln!(
                b,
                "<pre>{}</pre>",
                escape(&rp::difference_lines(d).join("\n"))
            );
        }
    }
    b.push_str("<p class=\"caption\">Every query ran on each variant's server over a copy of its prepared data; results are hashed over a canonical row encoding (order-insensitive unless the query has an ORDER BY); tables the queries wrote are compared by a follow-up SELECT. +: rows only this variant returned, -: rows only the baseline returned.</p>\n");
    Some(Section::new(
        "verification",
        "Verification",
        format!("Result verification (against {})", escape(&r.plan.baseline)),
        b,
    ))
}

/// Replay: per cell the heaviest statement classes, and the plans per variant.
fn replay(x: &Ctx) -> Option<Section> {
    use crate::replay as rp;
    let cells = rp::replay_cells(x.r);
    if cells.is_empty() {
        return None;
    }
    let mut b = String::new();
    let mut planned = Vec::new();
    for c in &cells {
        let _ = writeln!(
            b,
            "<h3>{} x{} on {}</h3>",
            escape(&c.workload),
            c.connections,
            x.vname(&c.variant)
        );
        b.push_str(&x.table(&rp::class_table(c)));
        let key = (c.workload.clone(), c.variant.clone());
        if planned.contains(&key) {
            continue;
        }
        if let Some(run) = c.runs.iter().find(|r| !r.explains.is_empty()) {
            planned.push(key);
            b.push_str("<details><summary>Plans of the heaviest classes</summary>\n");
            for e in &run.explains {
                let _ = writeln!(
                    b,
                    "<p><code>{}</code></p><pre>{}</pre>",
                    escape(&e.fingerprint),
                    escape(e.plan.trim_end())
                );
            }
            b.push_str("</details>\n");
        }
    }
    Some(Section::new(
        "replay",
        "Replay",
        "Replayed statement classes".into(),
        b,
    ))
}

/// The SQL suite: per group and per operation, seconds per variant and the time
/// relative to the baseline; a bar chart of the groups' relative times.
fn sqlsuite(x: &Ctx) -> Option<Section> {
    use crate::sqlsuite as sq;
    let workloads = sq::workloads(x.r);
    if workloads.is_empty() {
        return None;
    }
    let mut b = String::new();
    for w in &workloads {
        for ops in [false, true] {
            let t = sq::table(x.r, w, ops);
            let _ = writeln!(b, "<h3>{}</h3>", escape(&t.title));
            b.push_str(&x.table(&t));
        }
    }
    b.push_str("<p class=\"caption\">Seconds: medians over valid runs with a 95% CI. Ratio: this variant's time / the baseline's (below 1 took less time) with a Hodges-Lehmann 95% CI and the Mann-Whitney verdict. Operations: largest change first.</p>\n");
    Some(Section::new("sqlsuite", "SQL suite", "SQL suite".into(), b))
}

fn relative(x: &Ctx) -> Option<Section> {
    let r = x.r;
    if r.comparisons.len() < 2 {
        return None;
    }
    let mut keys: Vec<(&str, usize)> = Vec::new();
    for c in &r.comparisons {
        if !keys.contains(&(c.workload.as_str(), c.connections)) {
            keys.push((&c.workload, c.connections));
        }
    }
    let groups: Vec<BarGroup> = keys
        .iter()
        .map(|(w, n)| BarGroup {
            label: format!("{w} ×{n}"),
            bars: r
                .comparisons
                .iter()
                .filter(|c| c.workload == *w && c.connections == *n)
                .map(|c| Bar {
                    label: c.variant.clone(),
                    color: x.color(&c.variant),
                    value: c.ratio,
                    lo: c.ci95[0],
                    hi: c.ci95[1],
                    note: format!("{} {}", fixed(c.ratio, 3), c.verdict.as_str()),
                })
                .collect(),
        })
        .collect();
    let chart = svg::bars(&BarChart {
        title: format!("Median throughput relative to {}", r.plan.baseline),
        x_label: "ratio to baseline (1 = baseline, > 1 faster), whiskers: 95% CI".into(),
        reference: 1.0,
        groups,
    })?;
    Some(Section::new(
        "relative",
        "Relative to baseline",
        "Relative to the baseline".into(),
        chart + "\n",
    ))
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

fn latency(x: &Ctx) -> Option<Section> {
    let r = x.r;
    let mut b = String::new();
    for w in x.workloads() {
        let Some(n) = r
            .cells
            .iter()
            .filter(|c| c.workload == w && c.valid_runs > 0)
            .map(|c| c.connections)
            .max()
        else {
            continue;
        };
        let series: Vec<Series> = x
            .variants
            .iter()
            .filter_map(|v| {
                let c = r.cell(w, v, n).filter(|c| c.valid_runs > 0)?;
                let l = &c.latency_us;
                Some(Series {
                    name: v.to_string(),
                    color: x.color(v),
                    points: [l.p50, l.p90, l.p99, l.p999, l.max]
                        .iter()
                        .zip(PERCENTILES)
                        .map(|(y, (px, _))| (px, *y))
                        .collect(),
                    ..Series::default()
                })
            })
            .collect();
        if let Some(chart) = svg::line_chart(&LineChart {
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
        }) {
            b.push_str(&chart);
            b.push('\n');
        }
    }
    if b.is_empty() {
        return None;
    }
    b.push_str("<p class=\"caption\">Each workload's highest connection count. Medians over valid runs of each run's percentiles; the x axis is 1/(1−p) on a log scale, so the tail gets the room; latency on a log scale.</p>\n");
    Some(Section::new(
        "latency",
        "Latency",
        "Latency percentiles".into(),
        b,
    ))
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
        let _ = write!(
            t,
            " (invalid: {})",
            run.invalid_reason.as_deref().unwrap_or("?")
        );
    }
    t
}

fn over_time(x: &Ctx) -> Option<Section> {
    let r = x.r;
    let with: Vec<&Cell> = r
        .cells
        .iter()
        .filter(|c| c.runs.iter().any(|run| !run.interval_ops_per_s.is_empty()))
        .collect();
    let mut charts = Vec::new();
    let mut left_out = 0;
    for c in &with {
        if charts.len() >= MAX_TIME_CHARTS {
            left_out += 1;
            continue;
        }
        let unit = x.unit(&c.workload);
        let series: Vec<Series> = c
            .runs
            .iter()
            .filter(|run| !run.interval_ops_per_s.is_empty())
            .map(|run| Series {
                name: format!("round {}", run.round.saturating_add(1)),
                color: x.color(&c.variant),
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
            .collect();
        if let Some(chart) = svg::line_chart(&LineChart {
            title: cell_label(c),
            x_label: "seconds".into(),
            y_label: unit.into(),
            y_zero: true,
            small: true,
            legend: false,
            markers: false,
            series,
            ..LineChart::default()
        }) {
            charts.push(chart);
        }
    }
    let mut b = String::new();
    if !charts.is_empty() {
        let _ = writeln!(
            b,
            "<h3>Per-second throughput of each run</h3>\n<div class=\"grid2\">\n{}\n</div>",
            charts.join("\n")
        );
        let _ = write!(
            b,
            "<p class=\"caption\">One line per run (dashed: invalid); hover a line for its mean, minimum and maximum."
        );
        if left_out > 0 {
            let _ = write!(
                b,
                " {left_out} more cell{} with per-second data left out (at most {MAX_TIME_CHARTS} charts).",
                if left_out == 1 { "" } else { "s" }
            );
        }
        b.push_str("</p>\n");
    }
    let cpu = cpu_over_time(x);
    if !cpu.is_empty() {
        let _ = writeln!(
            b,
            "<h3>CPU over time</h3>\n<div class=\"grid2\">\n{}\n</div>",
            cpu.join("\n")
        );
        b.push_str("<p class=\"caption\">Each cell's median-throughput run, one sample per interval: the machine's user, system (with irq and softirq) and iowait time in percent of all cores, and the server's CPU in percent of one core (summed over its processes). A stall shows as a dip; warmup drift as a slope.</p>\n");
    }
    if let Some(chart) = cpu_modes(x) {
        let _ = writeln!(b, "<h3>CPU modes</h3>\n{chart}");
        b.push_str("<p class=\"caption\">Whole machine, all cores = 100%: means over each cell's valid runs (other: softirq and steal). The per-second samples are linked from the system table.</p>\n");
    }
    if b.is_empty() {
        return None;
    }
    Some(Section::new(
        "over-time",
        "Over time",
        "Runs over time".into(),
        b,
    ))
}

/// Per cell (at most `MAX_TIME_CHARTS`), the CPU series of its median-throughput valid run.
fn cpu_over_time(x: &Ctx) -> Vec<String> {
    let mut charts = Vec::new();
    for c in &x.r.cells {
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
        let series = vec![
            line("user %", 0, |p| p.user),
            line("system %", 1, |p| p.system),
            line("iowait %", 3, |p| p.iowait),
            line("server % of a core", 2, |p| p.server),
        ];
        if let Some(chart) = svg::line_chart(&LineChart {
            title: cell_label(c),
            x_label: "seconds".into(),
            y_label: "percent".into(),
            y_zero: true,
            small: true,
            legend: charts.is_empty(),
            markers: false,
            series,
            ..LineChart::default()
        }) {
            charts.push(chart);
        }
    }
    charts
}

fn cpu_modes(x: &Ctx) -> Option<String> {
    let rows: Vec<(String, Vec<f64>)> =
        x.r.cells
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
            .collect();
    svg::stacked_bars(&StackedBars {
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
        rows,
        total: 100.0,
    })
}

fn system(x: &Ctx) -> Option<Section> {
    let t = sections::system(x.r)?;
    Some(Section::new(
        "system",
        "System",
        "System during the measured windows".into(),
        x.table(&t),
    ))
}

/// `bakeoff compare`: each compared cell's median over its experiment's history, a small
/// chart each (the 95% CI shaded), and the table of shifts.
fn history(x: &Ctx) -> Option<Section> {
    let t = sections::history(x.r)?;
    let mut charts = Vec::new();
    for h in &x.r.history {
        let series = vec![Series {
            name: h.variant.clone(),
            color: x.color(&h.variant),
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
        }];
        if let Some(chart) = svg::line_chart(&LineChart {
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
            series,
            ..LineChart::default()
        }) {
            charts.push(chart);
        }
    }
    let mut b = x.table(&t);
    if !charts.is_empty() {
        let _ = write!(b, "<div class=\"grid2\">\n{}\n</div>\n", charts.join("\n"));
    }
    Some(Section::new(
        "history",
        "History",
        "History of the compared cells".into(),
        b,
    ))
}

fn binaries(x: &Ctx) -> Option<Section> {
    let t = sections::binaries(x.r)?;
    Some(Section::new(
        "binaries",
        "Binaries",
        "What changed in the binaries".into(),
        x.table(&t),
    ))
}

/// The layouts table, and per point a chart of each variant's median per layout: a
/// layout that is slow for every variant (a shared seed's luck) shows as a common dip.
fn layouts(x: &Ctx) -> Option<Section> {
    let r = x.r;
    let t = sections::layouts(r)?;
    let mut b = String::new();
    let mut points: Vec<(&str, usize)> = Vec::new();
    for c in r.cells.iter().filter(|c| c.layouts.is_some()) {
        if !points.contains(&(c.workload.as_str(), c.connections)) {
            points.push((c.workload.as_str(), c.connections));
        }
    }
    for (w, n) in points {
        let series: Vec<Series> = r
            .cells
            .iter()
            .filter(|c| c.workload == w && c.connections == n)
            .filter_map(|c| {
                let l = c.layouts.as_ref()?;
                Some(Series {
                    name: c.variant.clone(),
                    color: x.color(&c.variant),
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
        if let Some(chart) = svg::line_chart(&LineChart {
            title: format!("{w} ×{n}: median ops/s per code layout"),
            x_label: "layout".into(),
            y_label: "ops/s".into(),
            x_ticks: Some((1..=k).map(|i| (i as f64, i.to_string())).collect()),
            small: true,
            series,
            ..LineChart::default()
        }) {
            b.push_str(&chart);
            b.push('\n');
        }
    }
    b.push_str(&x.table(&t));
    Some(Section::new("layouts", "Layouts", "Code layouts".into(), b))
}

fn hosts(x: &Ctx) -> Option<Section> {
    let facts = sections::hosts(x.r)?;
    let mut b = x.table(&facts);
    if let Some(t) = sections::client_hosts(x.r) {
        b.push_str("<h3>Load by client host</h3>\n");
        let charts = client_host_charts(x.r);
        if !charts.is_empty() {
            let _ = write!(b, "<div class=\"grid2\">\n{}\n</div>\n", charts.join("\n"));
        }
        b.push_str(&x.table(&t));
    }
    Some(Section::new("hosts", "Hosts", "Hosts".into(), b))
}

/// Per cell loaded from several hosts, its first valid run's throughput second by
/// second, one line per client host: a host that fell behind shows at once.
fn client_host_charts(r: &Results) -> Vec<String> {
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
        let series: Vec<Series> = run
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
            .collect();
        if let Some(chart) = svg::line_chart(&LineChart {
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
            series,
            ..LineChart::default()
        }) {
            out.push(chart);
        }
    }
    out
}

fn memory(x: &Ctx) -> Option<Section> {
    let t = sections::memory(x.r)?;
    Some(Section::new(
        "memory",
        "Memory",
        "Memory (Redis INFO)".into(),
        x.table(&t),
    ))
}

fn counters(x: &Ctx) -> Option<Section> {
    let t = sections::counters(x.r)?;
    Some(Section::new(
        "counters",
        "CPU counters",
        "CPU counters (server processes, measured window)".into(),
        x.table(&t),
    ))
}

fn instructions(x: &Ctx) -> Option<Section> {
    let t = sections::instructions(x.r)?;
    let mut b = x.table(&t);
    for (_, t) in sections::top_instructions(x.r) {
        let _ = write!(
            b,
            "<details><summary>{}</summary>\n{}</details>\n",
            escape(&t.title),
            x.table(&t)
        );
    }
    Some(Section::new(
        "instructions",
        "Instructions",
        "Instructions per operation (callgrind)".into(),
        b,
    ))
}

fn hotspots(x: &Ctx) -> Option<Section> {
    let r = x.r;
    let cells: Vec<&Cell> = r.cells.iter().filter(|c| c.profile.is_some()).collect();
    if cells.is_empty() {
        return None;
    }
    let mut b = String::new();
    for c in cells {
        let Some(p) = &c.profile else { continue };
        let _ = writeln!(
            b,
            "<h3>{} ×{} {}</h3>\n<p>{} samples of {} (round {}). Flamegraph: {}</p>",
            escape(&c.workload),
            c.connections,
            x.vname(&c.variant),
            ops(p.samples as f64),
            escape(&p.event),
            p.round.saturating_add(1),
            file_link(&p.flamegraph, &p.flamegraph)
        );
        let s = &p.split;
        if let Some(chart) = svg::stacked_bars(&StackedBars {
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
                vec![s.server_pct, s.kernel_pct, s.libraries_pct, s.other_pct],
            )],
            total: 100.0,
        }) {
            b.push_str(&chart);
            b.push('\n');
        }
        if let Some(t) = sections::hotspot_top(p) {
            b.push_str(&x.table(&t));
        }
        if let Some(t) = sections::hotspot_diff(p, &r.plan.baseline) {
            let _ = writeln!(b, "<p>{}:</p>", escape(&t.title));
            b.push_str(&x.table(&t));
        }
    }
    Some(Section::new(
        "hotspots",
        "Hotspots",
        "Hotspots (perf record, one extra run per cell)".into(),
        b,
    ))
}

/// SQL cells: latency per statement kind, from each cell's median-throughput valid run.
fn statements(x: &Ctx) -> Option<Section> {
    let t = sections::statements(x.r)?;
    Some(Section::new(
        "statements",
        "Statements",
        "Statements (each cell's median-throughput run)".into(),
        x.table(&t),
    ))
}

fn runs(x: &Ctx) -> Option<Section> {
    let t = sections::runs(x.r)?;
    Some(Section::new(
        "runs",
        "Runs",
        "Runs".into(),
        format!(
            "<details><summary>Every run ({})</summary>\n{}</details>\n",
            t.rows.len(),
            x.table(&t)
        ),
    ))
}

fn builds(x: &Ctx) -> Section {
    let r = x.r;
    let mut b = String::from("<div class=\"cards\">\n");
    for v in &r.variants {
        let status = if v.status == "ok" { "ok" } else { "bad" };
        let base = if v.name == r.plan.baseline {
            " <span class=\"badge baseline\">baseline</span>"
        } else {
            ""
        };
        let _ = write!(
            b,
            "<table class=\"kv\"><caption>{}{base}</caption><tbody>",
            x.vname(&v.name)
        );
        let mut rows: Vec<(&str, String)> = vec![(
            "status",
            format!(
                "<span class=\"badge {status}\">{}</span>{}",
                escape(&v.status),
                v.error
                    .as_ref()
                    .map(|e| format!(" {}", escape(e)))
                    .unwrap_or_default()
            ),
        )];
        if let Some(bin) = &v.binary {
            rows.push(("binary", code(bin)));
        }
        if let Some(bd) = &v.build {
            rows.push(("kind", escape(&bd.kind)));
            let compiler = if bd.compiler_version.is_empty() {
                escape(&bd.compiler)
            } else if bd.compiler.is_empty() || bd.compiler_version.contains(&bd.compiler) {
                escape(&bd.compiler_version)
            } else {
                format!(
                    "{} ({})",
                    escape(&bd.compiler),
                    escape(&bd.compiler_version)
                )
            };
            if !compiler.is_empty() {
                rows.push(("compiler", compiler));
            }
            if !bd.cflags.is_empty() {
                rows.push(("cflags", code(&bd.cflags)));
            }
            if !bd.ldflags.is_empty() {
                rows.push(("ldflags", code(&bd.ldflags)));
            }
            if !bd.configure_args.is_empty() {
                rows.push(("configure", code(&bd.configure_args.join(" "))));
            }
            if !bd.make_args.is_empty() {
                rows.push(("make", code(&bd.make_args.join(" "))));
            }
            if !bd.patches.is_empty() {
                let p: Vec<String> = bd.patches.iter().map(|p| code(p)).collect();
                rows.push(("patches", p.join("<br>")));
            }
            if bd.binary_bytes > 0 {
                rows.push((
                    "binary bytes",
                    format!(
                        "{} ({})",
                        ops(bd.binary_bytes as f64),
                        bytes(bd.binary_bytes as f64)
                    ),
                ));
            }
            if !bd.binary_sha256.is_empty() {
                let short: String = bd.binary_sha256.chars().take(12).collect();
                rows.push((
                    "sha256",
                    format!(
                        "<code title=\"{}\">{}</code>",
                        escape(&bd.binary_sha256),
                        escape(&short)
                    ),
                ));
            }
            if bd.kind == "build" {
                rows.push((
                    "build time",
                    format!(
                        "{:.1} s{}",
                        bd.seconds,
                        if bd.cached { " (cached)" } else { "" }
                    ),
                ));
            }
            if let Some(l) = &bd.log {
                rows.push(("build log", file_link(l, l)));
            }
        }
        if !v.args.is_empty() {
            rows.push(("server args", code(&v.args.join(" "))));
        }
        if !v.sanitize.is_empty() {
            rows.push(("sanitize", escape(&v.sanitize.join(", "))));
        }
        if let Some(u) = &v.run_under {
            rows.push(("run under", escape(u)));
        }
        if !v.options.is_empty() {
            let o: Vec<String> = v
                .options
                .iter()
                .map(|(k, val)| code(&format!("{k}={val}")))
                .collect();
            rows.push(("server options", o.join("<br>")));
        }
        if !v.memory_errors.is_empty() {
            rows.push((
                "memory errors",
                format!("<a href=\"#memory-errors\">{}</a>", v.memory_errors.len()),
            ));
        }
        kv_rows(&mut b, &rows);
        b.push_str("</tbody></table>\n");
    }
    b.push_str("</div>\n");
    Section::new("builds", "Builds", "Builds".into(), b)
}

fn data_loads(x: &Ctx) -> Option<Section> {
    let t = sections::data_loads(x.r)?;
    Some(Section::new(
        "data",
        "Data loads",
        "Data loads (once per variant, not measured)".into(),
        x.table(&t),
    ))
}

fn settings(x: &Ctx) -> Section {
    let r = x.r;
    let p = &r.plan;
    let h = &r.host;
    let mut b =
        String::from("<div class=\"cards\">\n<table class=\"kv\"><caption>Plan</caption><tbody>");
    let measure = match (p.duration_s, p.ops) {
        (_, Some(n)) => format!("{} ops", ops(n as f64)),
        (Some(d), None) => format!("{d} s"),
        _ => "?".into(),
    };
    let rows: Vec<(&str, String)> = vec![
        ("plan", escape(&summary::plan_text(p))),
        ("stopped", escape(&summary::stopping_text(r))),
        ("measure", measure),
        ("baseline", x.vname(&p.baseline)),
    ];
    kv_rows(&mut b, &rows);
    b.push_str("</tbody></table>\n<table class=\"kv\"><caption>Host</caption><tbody>");
    let mut rows: Vec<(&str, String)> = vec![
        ("CPU", escape(&h.cpu_model)),
        ("cores", h.cores.to_string()),
        (
            "memory",
            format!("{:.1} GiB", h.memory_bytes as f64 / (1u64 << 30) as f64),
        ),
        ("OS", escape(&h.os)),
        ("kernel", escape(&h.kernel)),
    ];
    if !h.hostname.is_empty() {
        rows.push(("hostname", escape(&h.hostname)));
    }
    rows.extend(
        summary::placement(h)
            .into_iter()
            .map(|(k, v)| (k, escape(&v))),
    );
    kv_rows(&mut b, &rows);
    b.push_str("</tbody></table>\n</div>\n");
    if !p.rounds.is_empty() {
        b.push_str("<p>Order of runs (each round shuffled with the seed):</p>\n<ol>\n");
        for round in &p.rounds {
            let names: Vec<String> = round.iter().map(|v| x.vname(v)).collect();
            let _ = writeln!(b, "<li>{}</li>", names.join(", "));
        }
        b.push_str("</ol>\n");
    }
    Section::new("settings", "Plan and host", "Plan and host".into(), b)
}

fn experiment(x: &Ctx) -> Section {
    let e = &x.r.experiment;
    Section::new(
        "experiment",
        "Experiment file",
        "Experiment file".into(),
        format!(
            "<p>{}</p>\n<pre>{}</pre>\n",
            code(&e.file),
            escape(e.text.trim_end())
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::*;

    const EVIL_VARIANT: &str = "<img src=x onerror=alert(1)>";
    const EVIL_WORKLOAD: &str = "a\"b'<script>";

    fn latency(scale: f64) -> Latency {
        Latency {
            p50: 90.0 * scale,
            p90: 120.0 * scale,
            p99: 210.0 * scale,
            p999: 480.0 * scale,
            max: 1900.0 * scale,
            mean: 100.0 * scale,
        }
    }

    fn run(round: usize, ops_per_s: f64, valid: bool, sql: bool, lat: f64) -> Run {
        let wobble = [0.96, 1.01, 1.0, 1.02, 0.99];
        Run {
            round,
            ops_per_s,
            ops: (ops_per_s * 5.0) as u64,
            elapsed_s: 5.0,
            latency_us: latency(lat),
            client_cpu_s: 0.5,
            client_cpu_us_per_op: 1.25,
            server_cpu_s: 1.1,
            server_cpu_us_per_op: 2.75,
            valid,
            invalid_reason: (!valid).then(|| "server exited mid-run (signal 9)".to_string()),
            interval_ops_per_s: wobble
                .iter()
                .cycle()
                .skip(round)
                .take(5)
                .map(|w| {
                    if valid {
                        ops_per_s * w
                    } else {
                        ops_per_s * w * 0.5
                    }
                })
                .collect(),
            tps: sql.then_some(ops_per_s),
            qps: sql.then_some(ops_per_s * 10.0),
            ..Run::default()
        }
    }

    fn cell(workload: &str, variant: &str, connections: usize, median: f64, sql: bool) -> Cell {
        let lat = (connections as f64).sqrt();
        let runs = vec![
            run(0, median * 0.99, true, sql, lat),
            run(1, median, true, sql, lat),
            run(2, median * 1.01, true, sql, lat),
        ];
        Cell {
            workload: workload.into(),
            variant: variant.into(),
            connections,
            valid_runs: runs.iter().filter(|r| r.valid).count(),
            runs,
            median_ops_per_s: median,
            ci95: [median * 0.98, median * 1.02],
            ci_coverage: 0.9375,
            cv: 0.01,
            latency_us: latency(lat),
            client_bound_runs: 0,
            verify_failures: 0,
            stop_reason: Some("repetitions".into()),
            system: None,
            instructions_per_op: None,
            profile: None,
            tpcc: None,
            sqlsuite: None,
            layouts: None,
        }
    }

    fn variant(name: &str, compiler: &str, cflags: &str) -> VariantRecord {
        VariantRecord {
            name: name.into(),
            status: "ok".into(),
            binary: Some(format!("/cache/{name}/memcached")),
            args: vec!["-t".into(), "4".into()],
            build: Some(BuildRecord {
                kind: "build".into(),
                compiler: compiler.into(),
                compiler_version: format!("{compiler} 14.2.0"),
                cflags: cflags.into(),
                ldflags: "-Wl,-O1".into(),
                binary_sha256: "0123456789abcdef0123456789abcdef".into(),
                binary_bytes: 812_345,
                seconds: 41.5,
                ..BuildRecord::default()
            }),
            ..VariantRecord::default()
        }
    }

    /// Two variants; "get90|set10" swept over 1, 4 and 16 connections, "oltp_point_select"
    /// (SQL) at 8 only, with the sampler and one hotspot profile.
    fn fixture() -> Results {
        let mut cells = Vec::new();
        let mut comparisons = Vec::new();
        for (n, base) in [(1usize, 40_000.0), (4, 130_000.0), (16, 210_000.0)] {
            cells.push(cell("get90|set10", "gcc-O2", n, base, false));
            cells.push(cell("get90|set10", "clang-O3", n, base * 1.06, false));
            comparisons.push(ComparisonRecord {
                workload: "get90|set10".into(),
                connections: n,
                variant: "clang-O3".into(),
                baseline: "gcc-O2".into(),
                ratio: 1.06,
                ci95: [1.03, 1.09],
                ci_coverage: 0.95,
                p_value: 0.004,
                verdict: Verdict::Faster,
                ..Default::default()
            });
        }
        let system = SystemRecord {
            cpu_user_pct: 31.5,
            cpu_system_pct: 42.25,
            cpu_idle_pct: 24.0,
            cpu_iowait_pct: 1.5,
            cpu_softirq_pct: 0.75,
            server_cpu_pct_mean: 96.0,
            server_cpu_pct_max: 101.0,
            server_rss_kib_max: 71_680,
            ctx_switches_per_op: 1.25,
            disk_write_bytes: 2_400_000,
            disk_util_pct_max: 3.5,
            loopback_bytes_per_op: 212.0,
            ..SystemRecord::default()
        };
        for (v, f) in [("gcc-O2", 1.0), ("clang-O3", 0.97)] {
            let mut c = cell("oltp_point_select", v, 8, 5_200.0 * f, true);
            c.system = Some(system.clone());
            for r in &mut c.runs {
                r.system = Some(SystemRecord {
                    series: Some(format!(
                        "series/oltp_point_select-{v}-r{}.json",
                        r.round.saturating_add(1)
                    )),
                    ..system.clone()
                });
            }
            if v == "clang-O3" {
                c.profile = Some(ProfileRecord {
                    flamegraph: "profiles/oltp_point_select-8-clang-O3.svg".into(),
                    event: "cycles".into(),
                    samples: 48_000,
                    round: 3,
                    top: vec![FnShareRecord {
                        function: "row_search_mvcc".into(),
                        dso: "mariadbd".into(),
                        self_pct: 9.5,
                        children_pct: 31.0,
                    }],
                    split: SplitRecord {
                        server_pct: 55.0,
                        kernel_pct: 38.0,
                        libraries_pct: 6.0,
                        other_pct: 1.0,
                    },
                    diff: vec![FnDeltaRecord {
                        function: "btr_cur_search_to_nth_level".into(),
                        base_per_mop: 900.0,
                        other_per_mop: 1_020.0,
                        change: Some(0.1333),
                    }],
                });
            }
            cells.push(c);
        }
        comparisons.push(ComparisonRecord {
            workload: "oltp_point_select".into(),
            connections: 8,
            variant: "clang-O3".into(),
            baseline: "gcc-O2".into(),
            ratio: 0.97,
            ci95: [0.955, 0.99],
            ci_coverage: 0.9375,
            p_value: 0.03,
            verdict: Verdict::Slower,
            ..Default::default()
        });
        let mut clang = variant("clang-O3", "clang", "-O3 -march=native");
        clang.options = [("innodb_buffer_pool_size", "256M")]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Results {
            schema: SCHEMA.into(),
            name: "gcc-vs-clang".into(),
            description: Some("Does clang -O3 beat gcc -O2?".into()),
            status: "complete".into(),
            bakeoff_version: "0.1.0".into(),
            started_utc: "2026-11-22T10:00:00Z".into(),
            finished_utc: Some("2026-11-22T10:25:00Z".into()),
            host: Host {
                cpu_model: "Test CPU".into(),
                cores: 8,
                memory_bytes: 32 << 30,
                kernel: "6.1.0".into(),
                os: "Debian GNU/Linux 12 (bookworm)".into(),
                hostname: "bench1".into(),
                ..Host::default()
            },
            experiment: ExperimentRecord {
                file: "examples/gcc-vs-clang.toml".into(),
                text: "name = \"gcc-vs-clang\"\n[[variant]]\nname = \"gcc-O2\"\n".into(),
                resolved: serde_json::json!({"name": "gcc-vs-clang"}),
            },
            plan: PlanRecord {
                repetitions: Some(3),
                warmup_s: 1.0,
                duration_s: Some(5.0),
                ops: None,
                seed: 7,
                baseline: "gcc-O2".into(),
                rounds: vec![
                    vec!["gcc-O2".into(), "clang-O3".into()],
                    vec!["clang-O3".into(), "gcc-O2".into()],
                    vec!["gcc-O2".into(), "clang-O3".into()],
                ],
                ..PlanRecord::default()
            },
            source: Some(SourceRecord {
                description: "memcached 1.6.18".into(),
                id: "abc123".into(),
            }),
            variants: vec![variant("gcc-O2", "gcc", "-O2"), clang],
            cells,
            comparisons,
            stopped_by: None,
            rounds_s: None,
            warnings: vec!["clang-O3 get90|set10 x16: client-bound in 1 of 3 runs".into()],
            notes: vec!["CPU counters: this machine cannot count cycles".into()],
            verification: Vec::new(),
            history: Vec::new(),
            hosts: Vec::new(),
        }
    }

    /// Every string a user gives replaced with markup.
    fn evil() -> Results {
        let mut r = fixture();
        let swap = |s: &mut String| {
            *s = s
                .replace("clang-O3", EVIL_VARIANT)
                .replace("get90|set10", EVIL_WORKLOAD);
        };
        for v in &mut r.variants {
            swap(&mut v.name);
            v.options
                .insert("<b>opt</b>".into(), "\"quoted\" & 'single'".into());
            if let Some(b) = &mut v.build {
                b.cflags = "-O2 -DX='<script>'".into();
                b.log = Some("javascript:alert('x')".into());
            }
            v.memory_errors = vec![MemoryError {
                kind: "heap-buffer-overflow".into(),
                tool: "asan".into(),
                message: "<i>overflow</i>".into(),
                stack: vec!["<frame> f.c:1".into()],
                log: Some("logs/\"x\".log".into()),
            }];
        }
        for c in &mut r.cells {
            swap(&mut c.workload);
            swap(&mut c.variant);
            if let Some(p) = &mut c.profile {
                p.flamegraph = "profiles/\"><svg onload=alert(1)>.svg".into();
                p.top[0].function = "std::vector<int>::push_back".into();
            }
        }
        for k in &mut r.comparisons {
            swap(&mut k.workload);
            swap(&mut k.variant);
        }
        for round in &mut r.plan.rounds {
            round.iter_mut().for_each(swap);
        }
        for w in &mut r.warnings {
            swap(w);
        }
        r.notes.push("<marquee>note</marquee>".into());
        r.experiment.text = "name = \"</pre><script>alert(1)</script>\"".into();
        r
    }

    /// The `<svg ...>...</svg>` elements of a page.
    fn svgs(html: &str) -> Vec<&str> {
        let mut out = Vec::new();
        let mut rest = html;
        while let Some(i) = rest.find("<svg") {
            let end = rest[i..].find("</svg>").expect("unclosed svg") + i + 6;
            out.push(&rest[i..end]);
            rest = &rest[end..];
        }
        out
    }

    #[test]
    fn html_snapshot() {
        insta::assert_snapshot!(render(&fixture()));
    }

    #[test]
    fn sections_come_in_order() {
        let html = render(&fixture());
        let at = |id: &str| {
            html.find(&format!("<section id=\"{id}\""))
                .unwrap_or_else(|| panic!("no section {id}"))
        };
        let warnings = html.find("id=\"warnings\"").unwrap();
        let ids = [
            "verdicts",
            "throughput",
            "relative",
            "latency",
            "over-time",
            "system",
            "hotspots",
            "builds",
            "settings",
            "experiment",
        ];
        assert!(warnings < at(ids[0]));
        for pair in ids.windows(2) {
            assert!(at(pair[0]) < at(pair[1]), "{pair:?}");
        }
        // One sweep chart (get90|set10 only), one latency chart per workload.
        assert_eq!(html.matches("by connections</title>").count(), 1);
        assert_eq!(html.matches("latency by percentile</title>").count(), 2);
        assert!(html.contains("TPS"));
    }

    #[test]
    fn every_svg_has_a_data_element() {
        for r in [fixture(), evil()] {
            let html = render(&r);
            let all = svgs(&html);
            assert!(all.len() > 10);
            for s in all {
                assert!(s.starts_with("<svg class=\"chart"), "{s}");
                assert!(s.contains("viewBox=\""), "{s}");
                assert!(
                    s.contains("<path") || s.contains("<rect") || s.contains("<line"),
                    "no data element: {s}"
                );
                assert!(!s.contains("NaN") && !s.contains("inf"), "{s}");
            }
        }
    }

    #[test]
    fn user_strings_are_escaped() {
        let html = render(&evil());
        for raw in [
            EVIL_VARIANT,
            EVIL_WORKLOAD,
            "<script",
            "<img",
            "<b>opt",
            "<i>overflow",
            "<frame>",
            "<marquee>",
            "\"><svg onload",
            "href=\"javascript:",
            "</pre><script>",
        ] {
            assert!(!html.contains(raw), "unescaped {raw:?}");
        }
        for escaped in [
            escape(EVIL_VARIANT),
            escape(EVIL_WORKLOAD),
            "&lt;b&gt;opt&lt;/b&gt;=&quot;quoted&quot; &amp; &#39;single&#39;".into(),
            "std::vector&lt;int&gt;::push_back".into(),
            "&lt;/pre&gt;&lt;script&gt;alert(1)&lt;/script&gt;".into(),
        ] {
            assert!(html.contains(&escaped), "missing {escaped:?}");
        }
        // Inside the SVG charts too: legends, tooltips, labels.
        let in_svg = svgs(&html)
            .iter()
            .filter(|s| s.contains(&escape(EVIL_VARIANT)))
            .count();
        assert!(in_svg >= 3, "{in_svg}");
        assert!(svgs(&html)
            .iter()
            .any(|s| s.contains(&escape(EVIL_WORKLOAD))));
    }

    #[test]
    fn one_cell_without_comparisons_has_no_verdicts_or_sweep() {
        let mut r = fixture();
        r.variants.truncate(1);
        r.cells.truncate(1);
        r.comparisons.clear();
        r.warnings.clear();
        r.notes.clear();
        let html = render(&r);
        for id in ["verdicts", "throughput", "relative", "warnings", "notes"] {
            assert!(!html.contains(&format!("id=\"{id}\"")), "{id}");
        }
        for id in ["cells", "latency", "over-time", "builds", "experiment"] {
            assert!(html.contains(&format!("<section id=\"{id}\"")), "{id}");
        }
        assert!(!html.contains("ratio to baseline"));
    }

    #[test]
    fn no_data_means_no_charts() {
        let mut r = fixture();
        for c in &mut r.cells {
            c.valid_runs = 0;
            c.latency_us = Latency::default();
            c.system = None;
            for run in &mut c.runs {
                run.interval_ops_per_s.clear();
            }
        }
        r.comparisons.clear();
        let html = render(&r);
        for id in ["latency", "over-time", "verdicts", "relative"] {
            assert!(!html.contains(&format!("<section id=\"{id}\"")), "{id}");
        }
        // The sweep table stays; its chart has no valid cell to draw.
        assert!(!html.contains("by connections</title>"));
        for s in svgs(&html) {
            assert!(s.contains("<path") || s.contains("<rect") || s.contains("<line"));
        }
    }

    #[test]
    fn nothing_is_fetched() {
        for r in [fixture(), evil()] {
            let html = render(&r).replace("xmlns=\"http://www.w3.org/2000/svg\"", "");
            assert!(!html.contains("http://"));
            assert!(!html.contains("https://"));
            assert!(!html.contains("<script"));
            assert!(!html.contains("<link"));
            assert!(!html.contains("@import"));
        }
    }

    #[test]
    fn well_formed_enough() {
        for r in [fixture(), evil()] {
            let html = render(&r);
            assert!(html.starts_with("<!DOCTYPE html>\n<html"));
            assert!(html.trim_end().ends_with("</html>"));
            for (open, close) in [
                ("<html", "</html>"),
                ("<head>", "</head>"),
                ("<body>", "</body>"),
                ("<main>", "</main>"),
            ] {
                assert_eq!(html.matches(open).count(), 1, "{open}");
                assert_eq!(html.matches(close).count(), 1, "{close}");
            }
            for (open, close) in [
                ("<svg", "</svg>"),
                ("<section", "</section>"),
                ("<table", "</table>"),
                ("<tr>", "</tr>"),
                ("<details>", "</details>"),
                ("<pre>", "</pre>"),
                ("<title>", "</title>"),
                ("<text ", "</text>"),
            ] {
                assert_eq!(
                    html.matches(open).count(),
                    html.matches(close).count(),
                    "{open}"
                );
            }
            // Every anchor in the table of contents has its section.
            let nav = &html[html.find("<nav").unwrap()..html.find("</nav>").unwrap()];
            for part in nav.split("href=\"#").skip(1) {
                let id = &part[..part.find('"').unwrap()];
                assert!(html.contains(&format!("id=\"{id}\"")), "{id}");
            }
        }
    }

    #[test]
    fn many_cells_stay_small() {
        let mut r = fixture();
        let template = r.cells[0].clone();
        r.cells.clear();
        for w in 0..5 {
            for n in [1, 2, 4, 8, 16, 32, 64, 128] {
                for v in ["gcc-O2", "clang-O3"] {
                    let mut c = template.clone();
                    c.workload = format!("w{w}");
                    c.connections = n;
                    c.variant = v.into();
                    for run in &mut c.runs {
                        run.interval_ops_per_s = (0..120).map(|i| 40_000.0 + i as f64).collect();
                    }
                    r.cells.push(c);
                }
            }
        }
        let html = render(&r);
        assert!(html.len() < 1_000_000, "{} bytes", html.len());
        assert_eq!(
            html.matches("class=\"chart small\"").count(),
            MAX_TIME_CHARTS
        );
        assert!(html.contains("56 more cells with per-second data left out"));
        assert_eq!(html.matches("by connections</title>").count(), 5);
    }

    #[test]
    fn fixture_report_is_small() {
        let n = render(&fixture()).len();
        assert!(n < 200_000, "{n} bytes");
    }
}
