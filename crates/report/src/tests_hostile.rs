//! Hostile results folders (issue 44, class 6): names that are markup in one output or
//! another render as text in every output and every table, and a folder of thousands of
//! variants renders in time linear in what it holds.

use crate::model::*;
use crate::tests::{
    capacity_sample, machines_sample, sample, sample_both, sample_with_probes, sql_sample,
    tpcc_sample,
};
use std::time::{Duration, Instant};

/// Every sample the report tests use: each kind of section is in one of them.
fn samples() -> Vec<Results> {
    vec![
        sample(),
        sample_with_probes(),
        sample_both(),
        sql_sample(),
        tpcc_sample(),
        machines_sample(),
        capacity_sample(),
    ]
}

/// `r` with `n` more copies of each candidate (every variant but the baseline that has
/// cells): its variant record, cells and comparisons under a new name.
pub(crate) fn grow(mut r: Results, n: usize) -> Results {
    let base = r.plan.baseline.clone();
    let mut names: Vec<String> = Vec::new();
    for c in &r.cells {
        if c.variant != base && !names.contains(&c.variant) {
            names.push(c.variant.clone());
        }
    }
    let (mut variants, mut cells, mut comparisons) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..n {
        for v in &names {
            let to = format!("{v}-{i}");
            if let Some(rec) = r.variants.iter().find(|x| &x.name == v) {
                let mut rec = rec.clone();
                rec.name = to.clone();
                variants.push(rec);
            } else {
                variants.push(VariantRecord {
                    name: to.clone(),
                    status: "ok".into(),
                    ..VariantRecord::default()
                });
            }
            for c in r.cells.iter().filter(|c| &c.variant == v) {
                let mut c = c.clone();
                c.variant = to.clone();
                cells.push(c);
            }
            for k in r.comparisons.iter().filter(|k| &k.variant == v) {
                let mut k = k.clone();
                k.variant = to.clone();
                comparisons.push(k);
            }
        }
    }
    r.variants.extend(variants);
    r.cells.extend(cells);
    r.comparisons.extend(comparisons);
    r
}

/// Every output `bakeoff report` writes from `r`: report.md, report.html, results.csv,
/// bench.txt and the terminal summary.
fn render_all(r: &Results) -> Vec<(&'static str, String)> {
    let mut out: Vec<(&'static str, String)> = crate::exporters()
        .iter()
        .filter(|e| e.file_name() != "results.json")
        .map(|e| {
            (
                e.file_name(),
                String::from_utf8(e.render(r)).expect("utf-8"),
            )
        })
        .collect();
    out.push(("terminal", crate::terminal(r, true)));
    out
}

fn time_all(r: &Results) -> Duration {
    let t = Instant::now();
    let out = render_all(r);
    assert!(out.iter().all(|(_, s)| !s.is_empty()));
    t.elapsed()
}

/// The attack's spellings (issue 44), then more of the same class, generated: every
/// character that is markup in markdown, HTML, a terminal or a spreadsheet, alone, in a
/// word, paired, and as the start of a link, a tag and a formula.
fn hostile_strings() -> Vec<String> {
    let mut out: Vec<String> = [
        "<img src=x onerror=alert(1)>",
        "[x](javascript:alert(1))",
        "![x](javascript:alert(1))",
        "[x]: javascript:alert(1)",
        "[x][y]",
        "<script>alert(1)</script>",
        "<!-- hidden",
        "\"><svg onload=alert(1)>",
        "' onmouseover='alert(1)",
        "**bold** _em_ ~~gone~~ `code` $x^2$",
        "a|b||c",
        "http://evil.example/x",
        "www.evil.example",
        "x@evil.example",
        "javascript:alert(1)",
        "# heading",
        "- item",
        "1. item",
        "> quote",
        "---",
        "=HYPERLINK(\"http://x\",\"y\")",
        "+1+1",
        "-2+3",
        "@SUM(A1)",
        " =1+1",
        "\u{ff1d}1+1",
        "\u{1b}[2J\u{1b}]0;owned\u{7}",
        "gcc\u{202e}2O",
        "line\nbreak\r\nand\u{2028}more",
        "&amp; &lt;",
        "back\\slash\\",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for c in "\\`*_~[]()<>|$@#!&\"'=+-:{}".chars() {
        out.push(format!("{c}"));
        out.push(format!("a{c}b"));
        out.push(format!("{c}{c}x{c}{c}"));
        out.push(format!("[{c}](javascript:{c})"));
        out.push(format!("<a href=\"javascript:{c}\">{c}</a>"));
    }
    out
}

/// `r` with `h` in every string a results folder carries that a report shows: each
/// variant's and workload's name (as the nth such name, so names stay distinct), the
/// experiment's name and description, the hosts, the builds, every note, warning, error
/// and reason, and the log paths (which must then not be links).
fn poisoned(mut r: Results, h: &str) -> Results {
    use std::collections::HashMap;
    let mut names: HashMap<String, String> = HashMap::new();
    let rename = |names: &mut HashMap<String, String>, v: &mut String| {
        let n = names.len();
        let to = names
            .entry(v.clone())
            .or_insert_with(|| format!("{h}{n}"))
            .clone();
        *v = to;
    };
    for v in &mut r.variants {
        rename(&mut names, &mut v.name);
        v.error = v.error.as_ref().map(|_| h.to_string());
        v.binary = Some(h.to_string());
        v.args.push(h.to_string());
        v.options.insert(h.to_string(), h.to_string());
        if let Some(b) = &mut v.build {
            b.compiler = h.into();
            b.compiler_version = h.into();
            b.cflags = h.into();
            b.ldflags = h.into();
            b.patches.push(h.into());
        }
        for e in &mut v.memory_errors {
            e.message = h.into();
            e.stack = vec![h.into()];
        }
    }
    for c in &mut r.cells {
        rename(&mut names, &mut c.variant);
        c.workload = format!("{h}w");
        if let Some(serde_json::Value::Object(t)) = c.kinds.0.get_mut("tpcc") {
            t.insert("workload".into(), format!("{h}w").into());
        }
        for x in &mut c.runs {
            x.invalid_reason = Some(h.into());
            x.disturbed = x.disturbed.as_ref().map(|_| h.to_string());
            x.probe_errors.push(h.into());
            x.server_log = Some(h.into());
            x.server_stats.insert(h.into(), 1.0);
            x.server_stats_unavailable.insert(h.into(), h.into());
            x.statements = std::mem::take(&mut x.statements)
                .into_values()
                .map(|k| (h.to_string(), k))
                .collect();
        }
        if let Some(p) = &mut c.profile {
            p.flamegraph = h.into();
            for f in &mut p.top {
                f.function = h.into();
                f.dso = h.into();
            }
        }
        if let Some(s) = &mut c.system {
            s.series = Some(h.into());
        }
    }
    for k in &mut r.comparisons {
        rename(&mut names, &mut k.variant);
        rename(&mut names, &mut k.baseline);
        k.workload = format!("{h}w");
        k.disagrees = k.disagrees.as_ref().map(|_| h.to_string());
        k.server_changes.push(ServerChange {
            name: h.into(),
            base_per_op: 1.0,
            other_per_op: 2.0,
            ratio: Some(2.0),
            ci95: None,
            paced_by_time: false,
        });
        // A statement's text is the server's (a workload's own SQL): hostile too.
        k.statement_changes.push(StatementChange {
            text: h.into(),
            base_mean_us: 10.0,
            other_mean_us: 13.0,
            ratio: 1.3,
            ci95: None,
            base_calls_per_op: 1.0,
            other_calls_per_op: 1.0,
            moved: true,
        });
    }
    rename(&mut names, &mut r.plan.baseline);
    for round in &mut r.plan.rounds {
        for v in round {
            rename(&mut names, v);
        }
    }
    if let Some(a) = &mut r.aa {
        rename(&mut names, &mut a.variant);
        rename(&mut names, &mut a.baseline);
        a.workload = format!("{h}w");
    }
    for v in &mut r.verification {
        rename(&mut names, &mut v.variant);
        v.note = Some(h.into());
    }
    r.name = h.into();
    r.description = Some(h.into());
    r.status = h.into();
    r.host.hostname = h.into();
    r.host.cpu_model = h.into();
    r.host.kernel = h.into();
    r.host.os = h.into();
    r.host.machine.cpu_model = Some(h.into());
    r.host.machine.filesystem = Some(h.into());
    for x in &mut r.hosts {
        x.name = h.into();
        x.cpu_model = h.into();
        x.kernel = h.into();
        x.machine.cpu_model = Some(h.into());
    }
    r.warnings.push(h.into());
    r.notes.push(h.into());
    if let Some(s) = &mut r.source {
        s.description = h.into();
        s.id = h.into();
    }
    r.experiment.file = h.into();
    r
}

/// The markdown outside code blocks and code spans, where every character is markup.
fn outside_code(md: &str) -> String {
    let mut out = String::new();
    let mut fence: Option<String> = None;
    for line in md.split('\n') {
        match &fence {
            Some(f) if line == f.as_str() => fence = None,
            Some(_) => {}
            None if line.starts_with("```") => {
                fence = Some(line.chars().take_while(|c| *c == '`').collect());
            }
            None => {
                out.push_str(&strip_code_spans(line));
                out.push('\n');
            }
        }
    }
    out
}

/// A line without its code spans (a run of backticks to the next run of the same length).
fn strip_code_spans(line: &str) -> String {
    let b = line.as_bytes();
    let (mut out, mut i) = (String::new(), 0);
    while i < b.len() {
        if b[i] == b'\\' && i + 1 < b.len() {
            out.push_str(&line[i..i + 2]);
            i += 2;
            continue;
        }
        if b[i] != b'`' {
            let c = line[i..].chars().next().unwrap();
            out.push(c);
            i += c.len_utf8();
            continue;
        }
        let run = b[i..].iter().take_while(|&&c| c == b'`').count();
        let ticks = "`".repeat(run);
        let after = i + run;
        // The closing run: the same number of backticks, not part of a longer run.
        let mut j = after;
        let mut close = None;
        while let Some(k) = line[j..].find(&ticks) {
            let at = j + k;
            let len = b[at..].iter().take_while(|&&c| c == b'`').count();
            if len == run {
                close = Some(at);
                break;
            }
            j = at + len;
        }
        match close {
            Some(at) => {
                out.push_str("CODE");
                i = at + run;
            }
            None => {
                out.push_str(&ticks);
                i = after;
            }
        }
    }
    out
}

/// Whether a link destination is one of our own: a plain path in the folder or `#id`.
fn own_link(dest: &str) -> bool {
    crate::table::is_relative(dest)
        && !dest.contains(':')
        && !dest.to_ascii_lowercase().contains("javascript")
}

/// Checks report.md: outside code, no raw `<`, every unescaped `[` opens one of our links,
/// no bare URL, and `h` nowhere as it is when it holds markup.
fn check_markdown(md: &str, h: &str) {
    no_unseen(md, "report.md", h);
    let text = outside_code(md);
    let b = text.as_bytes();
    // The text without our links' destinations (paths, which may hold anything a path may).
    let mut shown = String::new();
    let mut from = 0;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 1,
            b'<' => panic!(
                "raw < in report.md for {h:?}: {}",
                &text[i..(i + 60).min(text.len())]
            ),
            b'[' => {
                let rest = &text[i..];
                let close = rest.find("](").unwrap_or_else(|| {
                    panic!(
                        "[ that is no link for {h:?}: {}",
                        &rest[..rest.len().min(80)]
                    )
                });
                let dest_start = close + 2;
                let dest_end = rest[dest_start..].find(')').expect("link end") + dest_start;
                let dest = &rest[dest_start..dest_end];
                assert!(own_link(dest), "link to {dest:?} for {h:?}");
                shown.push_str(&text[from..i + dest_start]);
                from = i + dest_end;
                i += dest_end;
            }
            b']' => panic!(
                "unescaped ] for {h:?}: {}",
                &text[i.saturating_sub(40)..(i + 40).min(text.len())]
            ),
            b':' if text[i..].starts_with("://") => panic!("bare URL for {h:?}"),
            _ => {}
        }
        i += 1;
    }
    shown.push_str(&text[from..]);
    let text = shown;
    // And it shows: the description is `h`, as text once escapes and entities are read.
    let mut read = String::new();
    let mut cs = text.chars();
    while let Some(c) = cs.next() {
        match c {
            '\\' => match cs.next() {
                Some(p) if p.is_ascii_punctuation() => read.push(p),
                Some(p) => {
                    read.push('\\');
                    read.push(p);
                }
                None => read.push('\\'),
            },
            c => read.push(c),
        }
    }
    let read = read
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&");
    let want: String = h
        .chars()
        .map(|c| {
            if c.is_control() || matches!(c, '\u{2028}' | '\u{2029}') {
                " ".to_string()
            } else if bakeoff_os::name::hidden(c) {
                format!("\\u{{{:x}}}", c as u32)
            } else {
                c.to_string()
            }
        })
        .collect();
    assert!(
        read.contains(&want),
        "{h:?} does not show in report.md as {want:?}"
    );
    // Each table's rows as wide as its header: no cell ended early by a `|`.
    let pipes = |line: &str| {
        let b = line.as_bytes();
        (0..b.len())
            .filter(|&i| b[i] == b'|' && (i == 0 || b[i - 1] != b'\\'))
            .count()
    };
    let mut width = None;
    for line in text.lines() {
        if line.starts_with('|') {
            let w = pipes(line);
            assert_eq!(
                *width.get_or_insert(w),
                w,
                "a row of another width for {h:?}: {line}"
            );
        } else {
            width = None;
        }
    }
    let markup = |c: char| "\\`*~[]<>&$@".contains(c) || c.is_control();
    if h.chars().any(markup) && h.chars().count() > 1 {
        // Only escaped: where `h` shows as it is, its first character is escaped.
        for (at, _) in text.match_indices(h) {
            let line = text[..at].rsplit('\n').next().unwrap_or("");
            assert!(line.ends_with('\\'), "{h:?} raw in report.md: {line}{h}");
        }
    }
    let digits = h.bytes().take_while(u8::is_ascii_digit).count();
    let opens_block = h.starts_with(['#', '-', '+', '=', '>', '[', '*', '_', '|', '`', '~'])
        || (digits > 0 && h[digits..].starts_with(['.', ')']));
    if opens_block && h.chars().count() > 1 {
        for line in text.lines() {
            assert!(
                !line.starts_with(h),
                "{h:?} starts a line of report.md: {line}"
            );
        }
    }
}

/// A file with no control character but a line break, CR or tab, and nothing invisible: the
/// file shows as it reads, in a browser or on a terminal.
fn no_unseen(text: &str, file: &str, h: &str) {
    for c in text.chars() {
        assert!(
            matches!(c, '\n' | '\r' | '\t') || !(c.is_control() || bakeoff_os::name::hidden(c)),
            "{c:?} in {file} for {h:?}"
        );
    }
}

/// The tags report.html and its charts are made of.
const TAGS: &[&str] = &[
    "!DOCTYPE", "html", "head", "meta", "title", "style", "body", "main", "header", "h1", "h2",
    "h3", "nav", "a", "section", "p", "ul", "ol", "li", "strong", "code", "span", "div", "table",
    "thead", "tbody", "tfoot", "tr", "th", "td", "caption", "details", "summary", "pre", "br",
    "footer", "svg", "g", "path", "line", "rect", "circle", "text", "polyline", "polygon", "defs",
    "clipPath", "tspan", "desc",
];

/// Checks report.html: every tag one of ours, no event handler, no href but our own, and
/// `h` nowhere as it is when it holds `<`, `&` or a quote.
fn check_html(html: &str, h: &str) {
    no_unseen(html, "report.html", h);
    let mut rest = html;
    while let Some(at) = rest.find('<') {
        let end = rest[at..].find('>').expect("tag end") + at;
        let tag = &rest[at + 1..end];
        rest = &rest[end + 1..];
        let tag = tag.trim_start_matches('/').trim_end_matches('/');
        let (name, mut attrs) = tag.split_once(' ').unwrap_or((tag, ""));
        assert!(TAGS.contains(&name), "<{name}> for {h:?}");
        // name="value" pairs: a quote inside a value is an entity, so they parse plainly.
        while let Some(eq) = attrs.find('=') {
            let attr = attrs[..eq].trim();
            assert!(
                !attr.to_ascii_lowercase().starts_with("on"),
                "{attr} for {h:?}"
            );
            let v = &attrs[eq + 1..];
            assert!(v.starts_with('"'), "unquoted {attr} for {h:?}: {tag}");
            let close = v[1..].find('"').expect("quote") + 1;
            let value = &v[1..close];
            if attr == "href" {
                assert!(own_link(value), "href {value:?} for {h:?}");
            }
            attrs = &v[close + 1..];
        }
    }
    assert!(
        html.contains(&crate::markup::escape(h)),
        "{h:?} does not show in report.html"
    );
    if h.contains(['<', '>', '&', '"', '\'']) && h.chars().count() > 1 {
        assert!(!html.contains(h), "{h:?} raw in report.html");
    }
}

/// Checks the terminal summary: no control character but a line break and our own colour
/// codes, no invisible character.
fn check_terminal(t: &str, h: &str) {
    let name = crate::summary::printable(&format!("{h}0"));
    assert!(
        t.contains(&name),
        "{h:?} does not show in the terminal as {name:?}:\n{t}"
    );
    let mut s = t.to_string();
    for code in ["32", "31", "36", "2", "33", "0"] {
        s = s.replace(&format!("\u{1b}[{code}m"), "");
    }
    for c in s.chars() {
        assert!(
            c == '\n' || !(c.is_control() || bakeoff_os::name::hidden(c)),
            "{:?} in the terminal for {h:?}",
            c
        );
    }
}

/// Checks results.csv: every row as wide as the header, no field a formula.
fn check_csv(csv: &str, h: &str) {
    let rows = crate::csv::parse_rows(csv);
    let width = rows[0].len();
    for row in &rows {
        assert_eq!(
            row.len(),
            width,
            "a row of another width for {h:?}: {row:?}"
        );
        for f in row {
            let numeric = f.parse::<f64>().is_ok();
            let first = f.trim_start_matches(' ');
            assert!(
                numeric
                    || !first.starts_with([
                        '=', '+', '-', '@', '\t', '\r', '\n', '\u{ff1d}', '\u{ff0b}', '\u{ff0d}',
                        '\u{ff20}'
                    ]),
                "formula {f:?} for {h:?}"
            );
        }
    }
}

/// Checks bench.txt: benchmark names of plain characters, no control characters.
fn check_bench(b: &str, h: &str) {
    for line in b.lines() {
        assert!(
            !line.chars().any(|c| c.is_control() && c != '\t'),
            "{line:?} for {h:?}"
        );
        if let Some(name) = line.strip_prefix("Benchmark") {
            let name = name.split('\t').next().unwrap();
            assert!(
                name.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "._=+-/".contains(c)),
                "{name:?} for {h:?}"
            );
        }
    }
}

/// Issue 44, class 6: a variant named `<img src=x onerror=alert(1)>` landed raw in
/// report.md's by-connections headers, `host.hostname` raw in the Machines table, and
/// `[x](javascript:...)` names became live links. Every name and string from results.json
/// is text in every output and every table.
#[test]
fn hostile_names_render_as_text() {
    let samples = samples();
    let attack = 31;
    for (i, h) in hostile_strings().into_iter().enumerate() {
        // Each string through one sample, in turn, so every table meets every class; the
        // attack's own spellings through the one with every "why" section too.
        let mut these: Vec<&Results> = vec![&samples[i % samples.len()]];
        if i < attack && i % samples.len() != 1 {
            these.push(&samples[1]);
        }
        for r in these {
            let r = poisoned(r.clone(), &h);
            for (file, text) in render_all(&r) {
                match file {
                    "report.md" => check_markdown(&text, &h),
                    "report.html" => check_html(&text, &h),
                    "results.csv" => check_csv(&text, &h),
                    "bench.txt" => check_bench(&text, &h),
                    "terminal" => check_terminal(&text, &h),
                    _ => {}
                }
            }
        }
    }
}

/// Issue 44, class 6: `report` was cubic on crafted folders (4,000 variants: 212 s). The
/// kinds' own sections (TPC-C, the SQL suite, capacity) and the "why" sections stay linear
/// too: hundreds of variants each render in well under the bound, where the old loops
/// took minutes (the CLI test takes the throughput sections to thousands).
#[test]
fn hostile_folders_of_many_variants_render_in_linear_time() {
    let started = Instant::now();
    for r in [
        sample_with_probes(),
        tpcc_sample(),
        sql_sample(),
        capacity_sample(),
    ] {
        let g = grow(r, 200);
        let out = render_all(&g);
        assert!(out.iter().all(|(_, s)| !s.is_empty()));
    }
    let took = started.elapsed();
    assert!(took < Duration::from_secs(20), "took {took:?}");
}

#[test]
#[ignore]
fn scaling_probe() {
    let n: usize = std::env::var("GROW").map_or(1000, |v| v.parse().unwrap());
    let only: Option<usize> = std::env::var("ONLY").ok().map(|v| v.parse().unwrap());
    for (i, r) in samples().into_iter().enumerate() {
        if only.is_some_and(|o| o != i) {
            continue;
        }
        for n in [n / 2, n] {
            let g = grow(r.clone(), n);
            let t = time_all(&g);
            eprintln!("sample {i} n {n} cells {} {:?}", g.cells.len(), t);
        }
    }
}

/// Issue 44, class 6: `report` read impossible values and drew them. Each is refused when
/// results.json is read, in one line naming the field by its place in the file.
#[test]
fn impossible_values_are_refused_with_the_field_named() {
    type Edit = fn(&mut Results);
    let cases: Vec<(&str, Edit)> = vec![
        ("cells[0].runs[0].ops_per_s", |r| {
            r.cells[0].runs[0].ops_per_s = -1.0
        }),
        ("cells[0].runs[1].ops_per_s", |r| {
            r.cells[0].runs[1].ops_per_s = f64::NAN
        }),
        ("cells[0].runs[0].elapsed_s", |r| {
            r.cells[0].runs[0].elapsed_s = -2.0
        }),
        ("cells[1].runs[0].elapsed_s", |r| {
            r.cells[1].runs[0].elapsed_s = f64::INFINITY
        }),
        ("cells[0].runs[0].wall_s", |r| {
            r.cells[0].runs[0].wall_s = Some(-0.5)
        }),
        ("cells[0].runs[0].client_cpu_s", |r| {
            r.cells[0].runs[0].client_cpu_s = -1.0
        }),
        ("cells[0].runs[0].tps", |r| {
            r.cells[0].runs[0].tps = Some(f64::NEG_INFINITY)
        }),
        ("cells[0].runs[0].latency_us.p99", |r| {
            r.cells[0].runs[0].latency_us.p99 = 1.0
        }),
        ("cells[0].runs[0].latency_us.max", |r| {
            r.cells[0].runs[0].latency_us.max = 10.0
        }),
        ("cells[0].runs[0].latency_us.p50", |r| {
            r.cells[0].runs[0].latency_us.p50 = -95.0
        }),
        ("cells[0].runs[0].interval_ops_per_s[1]", |r| {
            r.cells[0].runs[0].interval_ops_per_s = vec![1.0, -1.0]
        }),
        ("cells[0].runs[2].round", |r| {
            r.cells[0].runs[2].round = 1_000_000
        }),
        ("cells[0].median_ops_per_s", |r| {
            r.cells[0].median_ops_per_s = -5.0
        }),
        ("cells[0].ci95", |r| r.cells[0].ci95 = [2.0, 1.0]),
        ("cells[1].ci_coverage", |r| r.cells[1].ci_coverage = 1.5),
        ("cells[1].cv", |r| r.cells[1].cv = -0.1),
        ("cells[1].latency_us.p999", |r| {
            r.cells[1].latency_us.p999 = 2.0
        }),
        ("comparisons[0].ratio", |r| {
            r.comparisons[0].ratio = f64::INFINITY
        }),
        ("comparisons[0].ratio", |r| r.comparisons[0].ratio = -1.2),
        ("comparisons[0].ci95", |r| {
            r.comparisons[0].ci95 = [1.3, 1.1]
        }),
        ("comparisons[0].p_value", |r| r.comparisons[0].p_value = 2.0),
        ("comparisons[0].p_adjusted", |r| {
            r.comparisons[0].p_adjusted = -0.1
        }),
        ("comparisons[0].detectable", |r| {
            r.comparisons[0].detectable = Some(f64::NAN)
        }),
        ("plan.warmup_s", |r| r.plan.warmup_s = -1.0),
        ("plan.duration_s", |r| r.plan.duration_s = Some(-3.0)),
        ("plan.equivalence", |r| r.plan.equivalence = f64::NAN),
        ("rounds_s", |r| r.rounds_s = Some(-60.0)),
        ("variants[0].build.seconds", |r| {
            r.variants[0].build.as_mut().unwrap().seconds = -5.0
        }),
    ];
    for (field, edit) in cases {
        let mut r = sample();
        edit(&mut r);
        let m = r.check().unwrap_err();
        assert!(m.starts_with(field), "{field}: {m}");
        assert!(!m.contains('\n'), "{m}");
        assert!(m.contains("bakeoff run"), "what to do: {m}");
    }
    // Percentiles a little apart by rounding (two sources of one run) still read.
    let mut r = sample();
    r.cells[0].runs[0].latency_us.p999 = r.cells[0].runs[0].latency_us.p99 * 0.95;
    r.check().expect("within rounding");
    // A percentile not measured (0) leaves the order alone.
    r.cells[0].runs[0].latency_us.p90 = 0.0;
    r.check().expect("0 is not measured");
}

/// Counts below zero and numbers where words belong are refused by the reader, with the
/// field named all the same.
#[test]
fn impossible_counts_are_refused_with_the_field_named() {
    let text = String::from_utf8(crate::Exporter::render(&crate::Json, &sample())).unwrap();
    for (key, bad, at, says) in [
        (
            "\"ops\": 198000",
            "\"ops\": -1",
            "cells[0].runs[0].ops",
            "a count",
        ),
        (
            "\"errors\": 0",
            "\"errors\": -3",
            "cells[0].runs[0].errors",
            "a count",
        ),
        (
            "\"connections\": 16",
            "\"connections\": -16",
            "cells[0].connections",
            "a count",
        ),
        (
            "\"round\": 1",
            "\"round\": -1",
            "cells[0].runs[1].round",
            "a count",
        ),
        (
            "\"valid_runs\": 3",
            "\"valid_runs\": 3.5",
            "cells[0].valid_runs",
            "a count",
        ),
        (
            "\"ops_per_s\": 99000.0",
            "\"ops_per_s\": \"fast\"",
            "cells[0].runs[0].ops_per_s",
            "a number",
        ),
    ] {
        assert!(text.contains(key), "{key}");
        let m = Results::from_json(&text.replacen(key, bad, 1)).unwrap_err();
        assert!(m.contains(&format!(", at {at}: ")), "{at}: {m}");
        assert!(
            m.contains(says) && !m.contains("u64") && !m.contains("usize"),
            "{m}"
        );
        assert!(m.starts_with("line ") && !m.contains('\n'), "{m}");
    }
}

/// `variants[].dist` as no run writes it: a list, a number, a spec of no known kind or of
/// several lines, a sha256 that is not one: refused with the field named, read from the
/// file and checked in the model alike.
#[test]
fn impossible_dist_values_are_refused_with_the_field_named() {
    let mut r = sample();
    r.variants[0].dist = Some(DistRecord {
        spec: "maven:a:b:1".into(),
        sha256: "a".repeat(64),
        version: Some("memcached 1.6.18".into()),
        ..DistRecord::default()
    });
    r.check().expect("a dist as a run writes it");
    let text = String::from_utf8(crate::Exporter::render(&crate::Json, &r)).unwrap();
    assert!(Results::from_json(&text).is_ok());
    let at = text
        .find("\"dist\": {")
        .expect("the dist record in the text");
    let end = at + text[at..].find('}').unwrap() + 1;
    for bad in ["[\"x\"]", "[]", "\"x\"", "7", "{}"] {
        let edited = format!("{}\"dist\": {bad}{}", &text[..at], &text[end..]);
        let e = Results::from_json(&edited).unwrap_err();
        assert!(e.contains("at variants[0].dist:"), "{bad}: {e}");
        assert!(!e.contains('\n'), "{e}");
    }
    type Edit = fn(&mut DistRecord);
    let cases: Vec<(&str, Edit)> = vec![
        ("variants[0].dist.spec", |d| d.spec = "x".into()),
        ("variants[0].dist.spec", |d| d.spec = String::new()),
        ("variants[0].dist.spec", |d| d.spec = "maven:a\n:b:1".into()),
        ("variants[0].dist.sha256", |d| d.sha256 = "zz".into()),
        ("variants[0].dist.version", |d| {
            d.version = Some("1\u{1b}[2J".into())
        }),
    ];
    for (field, edit) in cases {
        let mut r = r.clone();
        edit(r.variants[0].dist.as_mut().unwrap());
        let m = r.check().unwrap_err();
        assert!(m.starts_with(field), "{field}: {m}");
        assert!(!m.contains('\n') && m.contains("bakeoff run"), "{m}");
    }
}
