//! The site's pages as HTML: the index of experiments, a page per run, a trend page per
//! experiment name and a compare page per pair of runs the site compares. Every string from
//! the store or a results folder goes through the report's `escape`; charts are the
//! report's inline SVG (`bakeoff_report::svg`); the style is report.html's. The pages work
//! without scripts (plain tables); the index's small inline script adds filtering and
//! sorting.

use bakeoff_report::format::ops;
use bakeoff_report::markup::escape;
use bakeoff_report::svg;
use bakeoff_store::{CellEntry, Record, Trend};
use std::fmt::Write;

/// What the site knows of one run: its store record and the facts read from its results
/// folder.
pub struct RunView<'a> {
    pub record: &'a Record,
    pub facts: &'a super::Facts,
    /// The trend page of its name, relative to the site's root.
    pub name_page: String,
}

/// Extra style for the site's own elements.
const SITE_CSS: &str = "\
main{max-width:1400px}
.newest{background:#eef6ee;border-color:#9fd0a8;color:#123d1c}
.crumbs{font-size:13.5px;margin:0 0 .6em}
.crumbs a{margin-right:.6em}
td.answer{white-space:normal;min-width:18em;max-width:40em}
tr.change td{background:#fdeceb}
.filter{margin:.4em 0;font-size:14px}
.filter input{font-size:14px;padding:3px 6px;width:min(24em,90%)}
th[data-sort]{cursor:pointer}
@media (max-width:700px){main{padding:12px 10px 40px}td.answer{min-width:12em}}
";

/// The site's one style sheet: report.html's, and the site's own.
pub fn style() -> String {
    format!("{}{SITE_CSS}", bakeoff_report::html::CSS)
}

/// A whole page: head, the style sheet, the crumbs back to the index, the body.
pub fn page(title: &str, root: &str, crumbs: &[(String, String)], body: &str) -> String {
    let mut nav = format!("<nav class=\"crumbs\"><a href=\"{root}index.html\">all experiments</a>");
    for (href, text) in crumbs {
        let _ = write!(nav, "<a href=\"{}\">{}</a>", escape(href), escape(text));
    }
    nav.push_str("</nav>\n");
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>{}</title>\n<link rel=\"stylesheet\" href=\"{root}style.css\">\n</head>\n<body>\n<main>\n{nav}{body}<footer>made by bakeoff {} (<code>bakeoff site</code>)</footer>\n</main>\n</body>\n</html>\n",
        escape(title),
        env!("CARGO_PKG_VERSION")
    )
}

/// The variants as a line: `a, b (failed)`.
fn variants(r: &Record) -> String {
    r.entry.variants_line()
}

fn machine(r: &Record) -> String {
    let e = &r.entry;
    match (e.hostname.is_empty(), e.cpu_model.is_empty()) {
        (false, false) => format!("{} ({})", e.hostname, e.cpu_model),
        (false, true) => e.hostname.clone(),
        (true, false) => e.cpu_model.clone(),
        (true, true) => "-".into(),
    }
}

/// The answer in one line: the first answer, or why there is none.
fn answer_line(f: &super::Facts) -> String {
    if let Some(e) = &f.error {
        return format!("results folder unreadable: {e}");
    }
    match f.answers.first() {
        Some(a) => {
            let more = f.answers.len() - 1;
            if more > 0 {
                format!("{a} (+{more} more)")
            } else {
                a.clone()
            }
        }
        None => "no comparison (one variant)".into(),
    }
}

fn status_badge(status: &str) -> String {
    let class = if status == "complete" { "ok" } else { "warn" };
    format!("<span class=\"badge {class}\">{}</span>", escape(status))
}

/// The index: the newest answer first, then every experiment, newest first.
pub fn index(runs: &[RunView]) -> String {
    let mut body = String::from("<h1>Experiments</h1>\n");
    if let Some(n) = runs.first() {
        let _ = writeln!(
            body,
            "<div class=\"box newest\" id=\"newest\"><h2>Newest: <a href=\"{}\">{}</a> #{} <span class=\"muted\">{}</span></h2><p>{}</p><p><a href=\"runs/{}.html\">run page</a>{}</p></div>",
            escape(&n.name_page),
            escape(&n.record.entry.name),
            n.record.id,
            escape(&n.record.entry.started_utc),
            escape(&answer_line(n.facts)),
            n.record.id,
            if n.facts.report {
                format!(" · <a href=\"runs/{}/report.html\">report</a>", n.record.id)
            } else {
                String::new()
            }
        );
    } else {
        body.push_str("<p>No experiment recorded yet.</p>\n");
    }
    let _ = writeln!(
        body,
        "<p class=\"filter\" hidden><label>Filter: <input id=\"filter\" type=\"search\" placeholder=\"name, target, variant, machine, answer\"></label> <span id=\"shown\" class=\"muted\"></span></p>\n<p class=\"muted\">{} experiments, newest first. Click a column's title to sort.</p>",
        runs.len()
    );
    body.push_str("<div class=\"scroll\"><table id=\"runs\">\n<thead><tr><th data-sort=\"n\" class=\"num\">id</th><th data-sort=\"s\">when (UTC)</th><th data-sort=\"s\">name</th><th data-sort=\"s\">target</th><th data-sort=\"s\">variants</th><th data-sort=\"s\">machine</th><th data-sort=\"s\">status</th><th data-sort=\"s\">answer</th><th>report</th></tr></thead>\n<tbody>\n");
    for v in runs {
        let r = v.record;
        let id = r.id;
        let _ = writeln!(
            body,
            "<tr><td class=\"num\" data-v=\"{id}\"><a href=\"runs/{id}.html\">#{id}</a></td><td>{}</td><td><a href=\"{}\">{}</a></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"answer\">{}</td><td>{}</td></tr>",
            escape(&r.entry.started_utc),
            escape(&v.name_page),
            escape(&r.entry.name),
            escape(&v.facts.target),
            escape(&variants(r)),
            escape(&machine(r)),
            status_badge(&r.entry.status),
            escape(&answer_line(v.facts)),
            if v.facts.report {
                format!("<a href=\"runs/{id}/report.html\">report</a>")
            } else {
                "-".into()
            }
        );
    }
    body.push_str("</tbody></table></div>\n");
    body.push_str(INDEX_SCRIPT);
    page("bakeoff: experiments", "", &[], &body)
}

/// Filtering and sorting, for readers with scripts on; the table is whole without it.
const INDEX_SCRIPT: &str = "<script>
(function(){
var t=document.getElementById('runs');if(!t)return;
var rows=Array.prototype.slice.call(t.tBodies[0].rows);
var box=document.getElementById('filter'),shown=document.getElementById('shown');
box.parentNode.parentNode.hidden=false;
function filter(){var q=box.value.toLowerCase(),n=0;rows.forEach(function(r){var ok=!q||r.textContent.toLowerCase().indexOf(q)>=0;r.hidden=!ok;if(ok)n++;});shown.textContent=q?n+' shown':'';}
box.addEventListener('input',filter);
var ths=t.tHead.rows[0].cells,dir={};
Array.prototype.forEach.call(ths,function(th,i){if(!th.dataset.sort)return;th.addEventListener('click',function(){
var num=th.dataset.sort==='n',d=dir[i]=dir[i]===1?-1:1;
function key(r){var c=r.cells[i];var v=c.dataset.v!==undefined?c.dataset.v:c.textContent;return num?parseFloat(v):v.toLowerCase();}
rows.sort(function(a,b){var x=key(a),y=key(b);return (x<y?-1:x>y?1:0)*d;});
rows.forEach(function(r){t.tBodies[0].appendChild(r);});});});
})();
</script>
";

/// The compare picker, for readers with scripts on: choosing a run opens the compare
/// page of the pair; the list of links under it does the same without scripts.
const PICK_SCRIPT: &str = "<script>
(function(){var s=document.getElementById('pick');if(!s)return;s.parentNode.parentNode.hidden=false;
s.addEventListener('change',function(){if(s.value)location.href=s.value;});})();
</script>
";

/// Zoom for the trend charts, for readers with scripts on: a click widens a chart to
/// three times its width inside its scrolling box (long histories), a second click
/// brings it back.
const ZOOM_SCRIPT: &str = "<script>
document.querySelectorAll('.zoombox').forEach(function(b){var s=b.querySelector('svg');if(!s)return;
b.title='click to zoom';b.style.cursor='zoom-in';
b.addEventListener('click',function(){var z=b.classList.toggle('zoomed');
s.style.maxWidth=z?'none':'';s.style.width=z?(b.clientWidth*3)+'px':'';b.style.cursor=z?'zoom-out':'zoom-in';});});
</script>
";

fn cell_row(c: &CellEntry) -> String {
    let (lo, hi) = (c.ci95[0], c.ci95[1]);
    format!(
        "<tr><td>{}</td><td class=\"num\">{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{} – {}</td><td class=\"num\">{}</td></tr>\n",
        escape(&c.workload),
        c.connections,
        escape(&c.variant),
        if c.valid_runs > 0 { ops(c.median_ops_per_s) } else { "-".into() },
        if c.valid_runs > 0 { ops(lo) } else { "-".into() },
        if c.valid_runs > 0 { ops(hi) } else { "-".into() },
        c.valid_runs
    )
}

/// A run this run has a compare page with.
#[derive(serde::Serialize)]
pub struct Partner {
    pub id: i64,
    /// The compare page, relative to the site's root.
    pub page: String,
    /// "the run before", "the first run", ... or empty.
    pub role: &'static str,
    pub when: String,
}

/// The compare pages a run page offers.
#[derive(serde::Serialize)]
pub struct Choice {
    /// Newest first.
    pub with: Vec<Partner>,
    /// How many runs its name has.
    pub runs: usize,
    /// Whether every pair of the name's runs has a page.
    pub every: bool,
}

/// One run's page: what it was, its answers, its cells, links to its report, its trend
/// and its compare pages (a list that works without scripts, and a picker with them).
pub fn run_page(v: &RunView, choice: &Choice) -> String {
    let r = v.record;
    let e = &r.entry;
    let id = r.id;
    let mut body = format!(
        "<h1>{} <span class=\"muted\">#{id}</span></h1>\n<table class=\"kv\"><tbody>\n",
        escape(&e.name)
    );
    let facts: [(&str, String); 8] = [
        ("started (UTC)", e.started_utc.clone()),
        ("status", e.status.clone()),
        ("target", v.facts.target.clone()),
        ("variants", variants(r)),
        ("baseline", e.baseline.clone()),
        ("machine", machine(r)),
        ("version", v.facts.version.clone()),
        ("bakeoff", e.bakeoff_version.clone()),
    ];
    for (k, val) in facts {
        let _ = writeln!(body, "<tr><th>{k}</th><td>{}</td></tr>", escape(&val));
    }
    body.push_str("</tbody></table>\n<h2>Answer</h2>\n");
    if let Some(err) = &v.facts.error {
        let _ = writeln!(
            body,
            "<p>The results folder could not be read: {}</p>",
            escape(err)
        );
    } else if v.facts.answers.is_empty() {
        body.push_str("<p>No comparison (one variant).</p>\n");
    } else {
        body.push_str("<ul class=\"answers\">\n");
        for a in &v.facts.answers {
            let _ = writeln!(body, "<li>{}</li>", escape(a));
        }
        body.push_str("</ul>\n");
    }
    body.push_str("<h2>Links</h2>\n<ul>\n");
    if v.facts.report {
        let _ = writeln!(
            body,
            "<li><a href=\"{id}/report.html\">the full report</a></li>"
        );
    }
    let _ = writeln!(
        body,
        "<li><a href=\"../{}\">{} over time</a></li>",
        escape(&v.name_page),
        escape(&e.name)
    );
    body.push_str("</ul>\n");
    if !choice.with.is_empty() {
        let _ = writeln!(
            body,
            "<h2>Compare</h2>\n<p class=\"muted\">{}</p>",
            if choice.every {
                format!(
                    "With any other run of {} ({} runs): each pair has a compare page.",
                    escape(&e.name),
                    choice.runs
                )
            } else {
                format!(
                    "{} has {} runs, more than {}: compare pages are made for each run against the run before it, the first run and the newest run only. <code>bakeoff compare A B</code> compares any two.",
                    escape(&e.name),
                    choice.runs,
                    super::ALL_PAIRS_UP_TO
                )
            }
        );
        body.push_str("<p class=\"picker\" hidden><label>Compare with <select id=\"pick\"><option value=\"\">pick a run</option>");
        for p in &choice.with {
            let _ = write!(
                body,
                "<option value=\"../{}\">#{} {}{}</option>",
                escape(&p.page),
                p.id,
                escape(&p.when),
                if p.role.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", p.role)
                }
            );
        }
        body.push_str("</select></label></p>\n<ul class=\"compare-with\">\n");
        for p in &choice.with {
            let _ =
                writeln!(
                body,
                "<li><a href=\"../{}\">compare with #{}</a> <span class=\"muted\">{}{}</span></li>",
                escape(&p.page),
                p.id,
                escape(&p.when),
                if p.role.is_empty() { String::new() } else { format!(", {}", p.role) }
            );
        }
        body.push_str("</ul>\n");
        body.push_str(PICK_SCRIPT);
    }
    body.push_str("<h2>Cells</h2>\n<div class=\"scroll\"><table><thead><tr><th>workload</th><th class=\"num\">connections</th><th>variant</th><th class=\"num\">median ops/s</th><th class=\"num\">95% CI</th><th class=\"num\">valid runs</th></tr></thead><tbody>\n");
    for c in &e.cells {
        body.push_str(&cell_row(c));
    }
    let _ = writeln!(
        body,
        "</tbody></table></div>\n<p class=\"muted\">results folder: <code>{}</code></p>",
        escape(&e.folder.display().to_string())
    );
    page(
        &format!("{} #{id}", e.name),
        "../",
        &[(format!("../{}", v.name_page), e.name.clone())],
        &body,
    )
}

/// The trend page of one experiment name: per cell, a chart of the median with its 95%
/// CI per run and the change points marked, then the table of runs.
pub fn trend_page(t: &Trend, runs: &[RunView]) -> String {
    let mut body = format!(
        "<h1>{} <span class=\"muted\">over time</span></h1>\n<p class=\"muted\">{} runs, oldest first. Change points: e-divisive means, each kept at permutation p &lt; {} (what <code>bakeoff trend</code> marks).</p>\n",
        escape(&t.name),
        t.rows.len(),
        bakeoff_store::CHANGE_ALPHA
    );
    let id_ticks: Vec<(f64, String)> = {
        let n = t.rows.len();
        let step = n.div_ceil(8).max(1);
        (0..n)
            .step_by(step)
            .map(|i| (i as f64, format!("#{}", t.rows[i].id)))
            .collect()
    };
    let by_id: std::collections::HashMap<i64, &RunView> =
        runs.iter().map(|v| (v.record.id, v)).collect();
    let mut changed_rows = std::collections::BTreeSet::new();
    for (col, key) in t.columns.iter().enumerate() {
        let mut points = Vec::new();
        let mut band = Vec::new();
        for (i, row) in t.rows.iter().enumerate() {
            if let Some(c) = row.cells[col].as_ref().filter(|c| c.valid_runs > 0) {
                points.push((i as f64, c.median_ops_per_s));
                band.push((i as f64, c.ci95[0], c.ci95[1]));
            }
        }
        let mut series = vec![svg::Series {
            name: key.to_string(),
            color: 0,
            points,
            band: Some(band),
            ..svg::Series::default()
        }];
        for ch in &t.changes[col] {
            changed_rows.insert(ch.index);
            let id = t.rows.get(ch.index).map_or(0, |r| r.id);
            series.push(svg::Series {
                name: format!(
                    "change point at #{id}: {} → {} ({:+.1}%)",
                    ops(ch.before),
                    ops(ch.after),
                    (ch.after / ch.before - 1.0) * 100.0
                ),
                color: 4,
                // A vertical mark at the run where the figure moved.
                points: vec![
                    (ch.index as f64, 0.0),
                    (ch.index as f64, ch.after.max(ch.before)),
                ],
                dashed: true,
                ..svg::Series::default()
            });
        }
        let chart = svg::LineChart {
            title: key.to_string(),
            x_label: "run (oldest first)".into(),
            y_label: "ops/s (median, 95% CI)".into(),
            y_zero: true,
            x_ticks: Some(id_ticks.clone()),
            series,
            ..svg::LineChart::default()
        };
        let _ = writeln!(body, "<h2>{}</h2>", escape(&key.to_string()));
        if let Some(svg) = svg::line_chart(&chart) {
            // In a scrolling box: the zoom script widens the chart inside it.
            body.push_str("<div class=\"scroll zoombox\">");
            body.push_str(&svg);
            body.push_str("</div>\n");
        }
        if t.changes[col].is_empty() {
            body.push_str("<p class=\"muted\">No change point.</p>\n");
        } else {
            body.push_str("<ul class=\"changes\">\n");
            for ch in &t.changes[col] {
                let id = t.rows.get(ch.index).map_or(0, |r| r.id);
                let _ = writeln!(
                    body,
                    "<li class=\"change-point\">shift at <a href=\"../runs/{id}.html\">#{id}</a>: {} → {} ({:+.1}%), p = {:.3}</li>",
                    ops(ch.before),
                    ops(ch.after),
                    (ch.after / ch.before - 1.0) * 100.0,
                    ch.p
                );
            }
            body.push_str("</ul>\n");
        }
    }
    body.push_str("<h2>Runs</h2>\n<div class=\"scroll\"><table><thead><tr><th class=\"num\">id</th><th>when (UTC)</th><th>status</th><th>version</th>");
    for k in &t.columns {
        let _ = write!(body, "<th class=\"num\">{}</th>", escape(&k.to_string()));
    }
    body.push_str("<th>report</th><th>compare</th></tr></thead><tbody>\n");
    for (i, row) in t.rows.iter().enumerate() {
        let v = by_id.get(&row.id).copied();
        let class = if changed_rows.contains(&i) {
            " class=\"change\""
        } else {
            ""
        };
        let _ = write!(
            body,
            "<tr{class}><td class=\"num\"><a href=\"../runs/{id}.html\">#{id}</a>{}</td><td>{}</td><td>{}</td><td>{}</td>",
            if class.is_empty() { "" } else { " (change)" },
            escape(&row.time),
            status_badge(&row.status),
            escape(v.map_or("", |v| v.facts.version.as_str())),
            id = row.id
        );
        for c in &row.cells {
            let text = c
                .as_ref()
                .map_or("-".to_string(), bakeoff_store::text::figure);
            let _ = write!(body, "<td class=\"num\">{}</td>", escape(&text));
        }
        let report = if v.is_some_and(|v| v.facts.report) {
            format!("<a href=\"../runs/{}/report.html\">report</a>", row.id)
        } else {
            "-".into()
        };
        let readable = |id: i64| by_id.get(&id).is_some_and(|v| v.facts.error.is_none());
        let compare = match i
            .checked_sub(1)
            .map(|p| t.rows[p].id)
            .filter(|p| readable(*p) && readable(row.id))
        {
            Some(p) => format!("<a href=\"../compare/{p}-{}.html\">vs #{p}</a>", row.id),
            None => "-".into(),
        };
        let _ = writeln!(body, "<td>{report}</td><td>{compare}</td></tr>");
    }
    body.push_str("</tbody></table></div>\n");
    body.push_str(ZOOM_SCRIPT);
    page(&format!("{} over time", t.name), "../", &[], &body)
}

/// A compare page: what `bakeoff compare A B` prints, and its comparisons as a table.
pub fn compare_page(name: &str, a: i64, b: i64, c: &bakeoff_store::Compared) -> String {
    let mut body = format!(
        "<h1>{}: <a href=\"../runs/{b}.html\">#{b}</a> against <a href=\"../runs/{a}.html\">#{a}</a></h1>\n<p class=\"muted\">What <code>bakeoff compare {a} {b}</code> prints: B (#{b}) judged against A (#{a}), cells matched by workload, connections and variant.</p>\n",
        escape(name)
    );
    body.push_str("<h2>Comparisons</h2>\n<div class=\"scroll\"><table><thead><tr><th>workload</th><th class=\"num\">connections</th><th>variant</th><th class=\"num\">B/A</th><th class=\"num\">95% CI</th><th>verdict</th></tr></thead><tbody>\n");
    for k in &c.results.comparisons {
        let verdict = bakeoff_report::format::verdict_text(k);
        let _ = writeln!(
            body,
            "<tr><td>{}</td><td class=\"num\">{}</td><td>{}</td><td class=\"num\">{:.3}</td><td class=\"num\">{:.3} – {:.3}</td><td><span class=\"badge {}\">{}</span></td></tr>",
            escape(&k.workload),
            k.connections,
            escape(&k.variant),
            k.ratio,
            k.ci95[0],
            k.ci95[1],
            escape(&k.verdict.to_string()),
            escape(&verdict)
        );
    }
    body.push_str("</tbody></table></div>\n<h2>As the terminal shows it</h2>\n<pre>");
    body.push_str(&escape(&c.table(false)));
    body.push_str("</pre>\n");
    page(
        &format!("{name}: #{b} against #{a}"),
        "../",
        &[
            (format!("../runs/{a}.html"), format!("#{a}")),
            (format!("../runs/{b}.html"), format!("#{b}")),
        ],
        &body,
    )
}
