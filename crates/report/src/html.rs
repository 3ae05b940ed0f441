//! report.html: one self-contained file (inline CSS, inline SVG charts from [`crate::svg`],
//! no scripts, nothing fetched) that opens from disk. It renders the report's document
//! ([`crate::document`], outlined once in [`crate::outline`]): the sections, a navigation
//! bar, and each block the page's way (tables with colour swatches and badges, charts
//! drawn, details folded, facts as cards). Every string from the results goes through
//! [`escape`].

use crate::document::{
    Block, Chart, Charts, Document, Frame, Inline, IntervalTable, KindSections, Media, Section,
    Span,
};
use crate::markup::escape;
use crate::model::{Results, Verdict};
use crate::svg;
use crate::table::{self, code, file_link, Table, Value};
use std::fmt::Write;

/// The page style report.html carries (the site's pages carry it too).
pub const CSS: &str = "\
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
.verdict{position:sticky;right:0;background:#fff;box-shadow:-6px 0 6px -6px rgba(0,0,0,.25)}
tbody tr:nth-child(even) .verdict{background:var(--zebra)}
thead th.verdict{background:var(--head)}
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

/// The self-contained HTML report with the built-in kinds' sections.
pub fn render(r: &Results) -> String {
    render_with(r, &crate::NoKinds)
}

/// The HTML report with `kinds` adding their sections.
pub fn render_with(r: &Results, kinds: &dyn KindSections) -> String {
    render_document(&crate::outline::document(r, kinds))
}

/// A document as one self-contained page: its sections in order, a navigation bar of
/// those that show something, charts drawn by [`crate::svg`].
pub fn render_document(d: &Document) -> String {
    let p = Page {
        palette: crate::index::Palette::new(&d.variants),
    };
    let bodies: Vec<(&Section, String)> = d
        .sections
        .iter()
        .map(|sec| {
            let mut b = String::new();
            p.blocks(&mut b, &sec.blocks, Media::PAGE);
            (sec, b)
        })
        .filter(|(_, b)| !b.is_empty())
        .collect();
    let mut s = String::with_capacity(64 * 1024);
    let _ = write!(
        s,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>{}</title>\n<style>\n{CSS}</style>\n</head>\n<body>\n<main>\n",
        escape(&d.title)
    );
    let _ = writeln!(s, "<header>\n<h1>{}</h1>", escape(&d.title));
    p.blocks(&mut s, &d.intro, Media::PAGE);
    s.push_str("</header>\n<nav class=\"toc\">");
    for (sec, _) in &bodies {
        if let Some(nav) = sec.nav {
            let _ = write!(s, "<a href=\"#{}\">{}</a>", escape(sec.id), escape(nav));
        }
    }
    s.push_str("</nav>\n");
    for (sec, body) in &bodies {
        let frame = match sec.frame {
            Frame::Plain => "",
            Frame::Warn => " class=\"box warn\"",
            Frame::Note => " class=\"box note\"",
        };
        let _ = write!(
            s,
            "<section id=\"{}\"{frame}>\n<h2>{}</h2>\n{body}</section>\n",
            escape(sec.id),
            p.inline(&sec.title)
        );
    }
    let _ = write!(
        s,
        "<footer>{} Charts are inline SVG; hover a point or bar for its exact value.</footer>\n</main>\n</body>\n</html>\n",
        escape(&d.footer)
    );
    s
}

/// Renders blocks, knowing each variant's colour.
struct Page {
    palette: crate::index::Palette,
}

impl Page {
    /// The variant's name with its colour swatch.
    fn vname(&self, v: &str) -> String {
        format!(
            "<span class=\"sw\" style=\"background:{}\"></span>{}",
            svg::color(self.palette.color(v)),
            escape(v)
        )
    }

    /// A neutral table as HTML, variants with their swatches.
    fn table(&self, t: &Table) -> String {
        t.html(&|v| self.vname(v))
    }

    fn blocks(&self, s: &mut String, bs: &[Block], shown: Media) {
        for b in bs {
            self.block(s, b, shown);
        }
    }

    fn block(&self, s: &mut String, b: &Block, shown: Media) {
        if let Block::Only(m, inner) = b {
            return self.blocks(s, inner, *m);
        }
        if !shown.has(Media::HTML) {
            return;
        }
        match b {
            Block::Heading(t) => {
                let _ = writeln!(s, "<h3>{}</h3>", self.inline(t));
            }
            Block::Text { class, text } => {
                let class = if class.is_empty() {
                    String::new()
                } else {
                    format!(" class=\"{class}\"")
                };
                let _ = writeln!(s, "<p{class}>{}</p>", self.inline(text));
            }
            Block::List {
                class,
                numbered,
                items,
            } => {
                let tag = if *numbered { "ol" } else { "ul" };
                let class = if class.is_empty() {
                    String::new()
                } else {
                    format!(" class=\"{class}\"")
                };
                let _ = writeln!(s, "<{tag}{class}>");
                for it in items {
                    let _ = writeln!(s, "<li>{}</li>", self.inline(it));
                }
                let _ = writeln!(s, "</{tag}>");
            }
            Block::Warnings(ws) => {
                s.push_str("<ul>\n");
                for w in ws {
                    let _ = writeln!(s, "<li><strong>{}</strong></li>", escape(w));
                }
                s.push_str("</ul>\n");
            }
            Block::WarningGroup { about, warnings } => {
                let _ = writeln!(s, "<h3>{}</h3>", escape(about));
                s.push_str("<ul>\n");
                for w in warnings {
                    let _ = writeln!(s, "<li><strong>{}</strong></li>", escape(w));
                }
                s.push_str("</ul>\n");
            }
            Block::Table(t) => s.push_str(&self.table(t)),
            Block::Verdicts(v) => self.verdicts(s, v),
            Block::Charts(c) => self.charts(s, c),
            Block::Pre { text, .. } => {
                let _ = writeln!(s, "<pre>{}</pre>", escape(text));
            }
            Block::Details { summary, blocks } => {
                let _ = writeln!(s, "<details><summary>{}</summary>", self.inline(summary));
                self.blocks(s, blocks, shown);
                s.push_str("</details>\n");
            }
            Block::Cards(cards) => {
                s.push_str("<div class=\"cards\">\n");
                for c in cards {
                    let _ = write!(
                        s,
                        "<table class=\"kv\"><caption>{}</caption><tbody>",
                        self.inline(&c.caption)
                    );
                    for (k, v) in &c.rows {
                        let _ = write!(
                            s,
                            "<tr><th>{}</th><td>{}</td></tr>",
                            escape(k),
                            self.inline(v)
                        );
                    }
                    s.push_str("</tbody></table>\n");
                }
                s.push_str("</div>\n");
            }
            Block::Only(..) => {}
        }
    }

    /// Running text as HTML: every string escaped.
    fn inline(&self, t: &Inline) -> String {
        self.spans(&t.0)
    }

    fn spans(&self, ss: &[Span]) -> String {
        ss.iter()
            .map(|sp| match sp {
                Span::Text(t) => escape(t),
                Span::Strong(t) => format!("<strong>{}</strong>", escape(t)),
                Span::Code(t) => code(t),
                Span::CodeTip(t, tip) => {
                    format!("<code title=\"{}\">{}</code>", escape(tip), escape(t))
                }
                Span::Variant(v) => self.vname(v),
                Span::Muted(inner) => format!("<span class=\"muted\">{}</span>", self.spans(inner)),
                Span::Link { text, path } => file_link(path, text),
                Span::Badge { class, text } => {
                    format!(
                        "<span class=\"badge {}\">{}</span>",
                        escape(class),
                        escape(text)
                    )
                }
                Span::Break => "<br>".into(),
            })
            .collect()
    }

    /// Charts in a grid or one under another, with their heading and caption; nothing
    /// when no chart has anything to draw.
    fn charts(&self, s: &mut String, c: &Charts) {
        let drawn: Vec<String> = c
            .charts
            .iter()
            .filter_map(|ch| match ch {
                Chart::Line(l) => svg::line_chart(l),
                Chart::Bars(b) => svg::bars(b),
                Chart::Stacked(b) => svg::stacked_bars(b),
            })
            .collect();
        if drawn.is_empty() {
            return;
        }
        if let Some(h) = &c.heading {
            let _ = writeln!(s, "<h3>{}</h3>", escape(h));
        }
        if c.grid {
            let _ = writeln!(s, "<div class=\"grid2\">\n{}\n</div>", drawn.join("\n"));
        } else {
            for d in drawn {
                s.push_str(&d);
                s.push('\n');
            }
        }
        if let Some(cap) = &c.caption {
            let _ = writeln!(s, "<p class=\"caption\">{}</p>", escape(cap));
        }
    }

    /// The verdicts table with two things only a page can show: the baseline beside each
    /// variant, and each ratio's interval drawn in a column of its own.
    fn verdicts(&self, b: &mut String, v: &IntervalTable) {
        let t = &v.table;
        let strips = svg::interval_rows(v.reference, &v.axis_label, &v.intervals);
        let _ = write!(
            b,
            "<div class=\"scroll\"><table class=\"{}\"><thead><tr>",
            t.class
        );
        for (i, col) in t.columns.iter().enumerate() {
            if i == v.at {
                let _ = write!(b, "<th>{}</th>", escape(&v.header));
            }
            let class = match (col.numeric, col.name.as_str()) {
                (true, _) => " class=\"num\"",
                (_, "verdict") => " class=\"verdict\"",
                _ => "",
            };
            let _ = write!(b, "<th{class}>{}</th>", escape(&col.name));
        }
        b.push_str("</tr></thead><tbody>\n");
        for (i, row) in t.rows.iter().enumerate() {
            let class = match v.verdicts.get(i) {
                Some(Verdict::Faster) => " r-faster",
                Some(Verdict::Slower) => " r-slower",
                Some(Verdict::Equivalent) => " r-equivalent",
                // No answer about the server either way: one colour.
                Some(Verdict::ClientBound | Verdict::MachineBusy) => " r-client-bound",
                Some(Verdict::Inconclusive) | None => "",
            };
            b.push_str("<tr>");
            for (j, (col, val)) in t.columns.iter().zip(row).enumerate() {
                if j == v.at {
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
                let mut html = table::html_value(val, &|v| self.vname(v));
                if let (Value::Variant(_), Some(base)) = (val, v.against.get(i)) {
                    let _ = write!(html, " <span class=\"muted\">vs {}</span>", escape(base));
                }
                let class = match (col.numeric, col.name.as_str()) {
                    (true, "ratio") => format!(" class=\"num{class}\""),
                    (true, _) => " class=\"num\"".into(),
                    // The answer column stays in view when the table scrolls sideways.
                    (_, "verdict") => " class=\"verdict\"".into(),
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
                "<tfoot><tr><td colspan=\"{}\"></td><td class=\"chart\">{}</td><td colspan=\"{}\"></td></tr></tfoot>",
                v.at,
                s.axis,
                t.columns.len().saturating_sub(v.at)
            );
        }
        b.push_str("</table></div>\n");
        if !t.notes.is_empty() {
            let _ = writeln!(b, "<p class=\"caption\">{}</p>", escape(&t.notes.join(" ")));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::*;
    use crate::outline::MAX_TIME_CHARTS;

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
            stop_reason: Some("repetitions".into()),
            ..Default::default()
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
                cross_kind: false,
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
                        lines: vec![HotLineRecord {
                            place: "row0sel.cc:4512".into(),
                            instruction: None,
                            pct: 18.0,
                        }],
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
                    line_diff: vec![LineDeltaRecord {
                        function: "row_search_mvcc".into(),
                        place: "row0sel.cc:4512".into(),
                        base_per_mop: Some(120.0),
                        other_per_mop: Some(150.0),
                        change: Some(0.25),
                    }],
                    lines_ms: 90,
                });
            }
            cells.push(c);
        }
        comparisons.push(ComparisonRecord {
            workload: "oltp_point_select".into(),
            connections: 8,
            variant: "clang-O3".into(),
            baseline: "gcc-O2".into(),
            cross_kind: false,
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
            warnings: vec!["clang-O3 get90|set10 x16: client-bound in 1 of 3 runs".into()],
            notes: vec!["CPU counters: this machine cannot count cycles".into()],
            ..Results::default()
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

    /// In a 1280x800 browser window every verdict cell of the Verdicts table lies inside
    /// the first screen, with variant names long enough to make the table scroll
    /// sideways: the answer column stays at the table's right edge, and what stands above
    /// the table (the answer in words, a warning) fits. Headless chromium loads the page
    /// with a script that writes each verdict cell's box into the page; the test reads
    /// it back. Said and skipped where no chromium is installed.
    #[test]
    fn verdict_cells_are_in_the_first_screen_at_1280x800() {
        let mut r = fixture();
        let long = "clang-16-O3-march-native-thin-lto-pgo-trained-on-the-sysbench-mix";
        for c in &mut r.cells {
            if c.variant == "clang-O3" {
                c.variant = long.into();
            }
        }
        for k in &mut r.comparisons {
            k.variant = long.into();
        }
        if let Some(v) = r.variants.iter_mut().find(|v| v.name == "clang-O3") {
            v.name = long.into();
        }
        let script = "<script>addEventListener('load',()=>{const b=[];document.querySelectorAll('#verdicts tbody td.verdict').forEach(td=>{const x=td.getBoundingClientRect();b.push([x.left,x.right,x.top,x.bottom].map(Math.round).join(','))});const t=document.querySelector('#verdicts table').getBoundingClientRect();const s=[...document.querySelectorAll('section,nav,h1,p.meta,p.host')].map(e=>(e.id||e.tagName)+':'+Math.round(e.getBoundingClientRect().top)).join(' ');document.body.setAttribute('data-fit',b.join(';')+'|'+innerWidth+'x'+innerHeight+'|'+Math.round(t.width)+'|'+s)});</script>";
        let Some(fit) = laid_out(&r, script, "fit", "first-screen") else {
            return;
        };
        let parts: Vec<&str> = fit.split('|').collect();
        let (w, h) = parts[1].split_once('x').unwrap();
        // The layout's width is the window's; its height does not change the layout, so
        // the first screen is the top 800 pixels whatever room the browser's own bars
        // took.
        let (w, _): (f64, f64) = (w.parse().unwrap(), h.parse().unwrap());
        let table: f64 = parts[2].parse().unwrap();
        let boxes: Vec<Vec<f64>> = parts[0]
            .split(';')
            .map(|b| b.split(',').map(|x| x.parse().unwrap()).collect())
            .collect();
        assert_eq!(boxes.len(), r.comparisons.len(), "{fit}");
        assert!(
            table > w,
            "the names should make the table wider than the window: {fit}"
        );
        for b in &boxes {
            assert!(b[0] >= 0.0 && b[1] <= w && b[3] <= 800.0, "{fit}");
        }
    }

    use crate::browser::dom as chromium_dom;

    /// The page of `r` with `script` added, as chromium laid it out: the `data-fit`
    /// attribute the script set on the body. None, said on stderr, where no chromium
    /// runs here (the `check` did not run).
    fn laid_out(r: &Results, script: &str, name: &str, check: &str) -> Option<String> {
        let page = render(r).replace("</body>", &format!("{script}</body>"));
        let Some(dom) = chromium_dom(&page, name) else {
            eprintln!("no chromium here: the {check} check did not run");
            return None;
        };
        let fit = dom
            .split("data-fit=\"")
            .nth(1)
            .and_then(|x| x.split('"').next())
            .unwrap_or_else(|| panic!("no measurement in the page: {dom}"));
        Some(fit.to_string())
    }

    /// A cross-server experiment (issue 51): the "Settings that differ" section starts
    /// within the first two screens of a 1280x800 window, under the answer, a passed
    /// verification with queries treated as equal (folded), the verdicts and eight
    /// parity warnings, the ones that concern the answer.
    ///
    /// The section stands right under the verdicts for this (before the warnings).
    #[test]
    fn settings_that_differ_are_within_two_screens_of_a_cross_server_report() {
        use crate::model::{ExplainedRecord, SettingDiff, VerificationRecord};
        let mut r = fixture();
        for k in &mut r.comparisons {
            k.cross_kind = true;
        }
        for (i, v) in r.variants.iter_mut().enumerate() {
            for n in 0..400 {
                v.settings
                    .insert(format!("setting_{n}"), format!("{}", n * (i + 1)));
            }
        }
        let (base, other) = ("gcc-O2".to_string(), "clang-O3".to_string());
        let two = |a: &str, b: &str| {
            [
                (base.clone(), a.to_string()),
                (other.clone(), b.to_string()),
            ]
            .into_iter()
            .collect()
        };
        for n in 0..12 {
            r.settings_diff.push(SettingDiff {
                name: format!("innodb_moving_setting_{n}"),
                values: two("OFF", "ON"),
                topic: Some("durability".into()),
                ..SettingDiff::default()
            });
        }
        for n in 0..300 {
            r.settings_diff.push(SettingDiff {
                name: format!("other_{n}"),
                values: two("1", "2"),
                ..SettingDiff::default()
            });
        }
        for n in 0..8 {
            r.warnings.push(format!("gcc-O2 ran with innodb_moving_setting_{n} = OFF, clang-O3 with ON: the comparison includes this difference in durability, which the experiment file did not ask for; set innodb_moving_setting_{n} on every variant to compare the servers alone"));
        }
        r.verification = vec![
            VerificationRecord {
                variant: base.clone(),
                status: "same".into(),
                queries: 6,
                note: Some("baseline".into()),
                ..VerificationRecord::default()
            },
            VerificationRecord {
                variant: other.clone(),
                status: "same".into(),
                queries: 6,
                cross_kind: true,
                explained: (0..3)
                    .map(|n| ExplainedRecord {
                        query: format!("SELECT k, COUNT(*) FROM t{n} GROUP BY k"),
                        line: n + 1,
                        rows: (0..5).map(|i| format!("{i} | 1")).collect(),
                        baseline_rows: (0..5).map(|i| format!("{} | 1", 5 - i)).collect(),
                        reason: "rows compared as a set: the query has no ORDER BY".into(),
                    })
                    .collect(),
                ..VerificationRecord::default()
            },
        ];
        let script = "<script>addEventListener('load',()=>{const s=document.querySelector('section#settings');document.body.setAttribute('data-fit',s.textContent.includes('Settings that differ')+'|'+Math.round(s.getBoundingClientRect().top)+'|'+[...document.querySelectorAll('section')].map(e=>e.id+':'+Math.round(e.getBoundingClientRect().top)).join(' '))});</script>";
        let Some(fit) = laid_out(&r, script, "settings-fit", "two-screen") else {
            return;
        };
        let parts: Vec<&str> = fit.split('|').collect();
        assert_eq!(
            parts[0], "true",
            "the first settings section is the diff: {fit}"
        );
        let top: f64 = parts[1].parse().unwrap();
        assert!(top < 1600.0, "within two screens of 800 pixels: {fit}");
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
        // The answer first, the warnings under the verdicts they qualify.
        assert!(at("answer") < at("verdicts") && at("verdicts") < warnings);
        let ids = [
            "verdicts",
            "throughput",
            "relative",
            "latency",
            "over-time",
            "system",
            "hotspots",
            "variants",
            "settings",
            "experiment",
        ];
        assert!(warnings < at(ids[1]));
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
        for id in ["cells", "latency", "over-time", "variants", "experiment"] {
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
