//! Hostile results folders (issue 44, class 6) through `bakeoff report`: names that are
//! markup render as text in every file it writes, a folder of thousands of variants is
//! reported in seconds, and impossible values are refused with the field named. No server
//! is started: every folder here is written by the test.

mod common;

use common::Scratch;
use serde_json::{json, Value};
use std::path::Path;
use std::process::Output;
use std::time::{Duration, Instant};

fn bakeoff() -> std::process::Command {
    std::process::Command::new(env!("CARGO_BIN_EXE_bakeoff"))
}

fn text(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// One run of a cell: `ops` per second over two seconds, ordinary percentiles.
fn run(round: usize, ops: f64) -> Value {
    json!({
        "round": round, "ops_per_s": ops, "ops": (ops * 2.0) as u64, "elapsed_s": 2.0,
        "latency_us": {"p50": 90.0, "p90": 120.0, "p99": 210.0, "p999": 480.0,
                       "max": 1900.0, "mean": 100.0},
        "errors": 0, "misses": 0, "verify_failures": 0,
        "client_cpu_s": 0.5, "client_rss_kib": 1024, "client_cpu_us_per_op": 1.25,
        "server_cpu_s": 1.1, "server_rss_kib": 2048, "server_cpu_us_per_op": 2.75,
        "client_bound": false, "valid": true,
        "interval_ops_per_s": [ops * 0.99, ops * 1.01],
        "server_log": format!("logs/r{round}.log")
    })
}

/// A results folder's results.json: `variants` (the first the baseline), each at every
/// count of `connections` with `rounds` runs of workload `workload`, on host `hostname`.
fn results(
    variants: &[String],
    workload: &str,
    connections: &[usize],
    rounds: usize,
    hostname: &str,
) -> Value {
    let mut cells = Vec::new();
    for (i, v) in variants.iter().enumerate() {
        for &n in connections {
            let ops = 1000.0 + (i % 7) as f64 * 10.0 + n as f64;
            cells.push(json!({
                "workload": workload, "variant": v, "connections": n,
                "runs": (0..rounds).map(|r| run(r, ops + r as f64)).collect::<Vec<_>>(),
                "median_ops_per_s": ops, "ci95": [ops - 1.0, ops + 1.0], "valid_runs": rounds
            }));
        }
    }
    json!({
        "schema": "bakeoff.results/1",
        "name": "hostile",
        "status": "complete",
        "bakeoff_version": "0.1.0",
        "started_utc": "2026-11-28T10:00:00Z",
        "host": {"cpu_model": hostname, "cores": 2, "memory_bytes": 8589934592u64,
                 "kernel": "6.1.0", "os": "Debian GNU/Linux 12 (bookworm)",
                 "hostname": hostname,
                 "machine": {"cpu_model": hostname, "filesystem": hostname}},
        "experiment": {"file": "x.toml", "text": "", "resolved": null},
        "plan": {"repetitions": rounds, "warmup_s": 1.0, "duration_s": 2.0, "seed": 1,
                 "baseline": variants[0],
                 "rounds": (0..rounds).map(|_| variants.to_vec()).collect::<Vec<_>>()},
        "variants": variants.iter().map(|v| json!({"name": v, "status": "ok", "args": []}))
            .collect::<Vec<_>>(),
        "cells": cells,
        "comparisons": []
    })
}

fn folder(s: &Scratch, name: &str, r: &Value) -> std::path::PathBuf {
    let dir = s.path().join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("results.json"), r.to_string()).unwrap();
    dir
}

fn report(dir: &Path) -> Output {
    bakeoff().arg("report").arg(dir).output().unwrap()
}

/// Issue 44: `report` was cubic in the variants (4,000: 212 s). Two thousand variants,
/// each at two connection counts, are reported in a few seconds; the old loops took
/// minutes here.
/// No markup a user's string could inject stands raw in `page` (`what` names it): images,
/// `script` (a script opening), an SVG handler, bold, links to javascript: or elsewhere.
fn assert_no_raw(page: &str, script: &str, what: &str) {
    for raw in [
        "<img",
        script,
        "<svg onload",
        "<b>",
        "href=\"javascript",
        "href=\"http",
    ] {
        let at = page
            .find(raw)
            .map(|i| &page[i.saturating_sub(80)..(i + 80).min(page.len())]);
        assert!(at.is_none(), "{raw} raw in {what}: {at:?}");
    }
}

#[test]
fn hostile_folder_of_thousands_of_variants_reports_quickly() {
    let s = Scratch::new();
    let names: Vec<String> = (0..2000).map(|i| format!("v{i}")).collect();
    let dir = folder(&s, "big", &results(&names, "kv", &[8, 16], 3, "h"));
    let started = Instant::now();
    let out = report(&dir);
    let took = started.elapsed();
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    assert!(stdout.contains("wrote report.md"), "{stdout}");
    assert!(
        took < Duration::from_secs(20),
        "2,000 variants took {took:?} to report"
    );
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(
        md.contains("| kv | 16 | v1999 |"),
        "every cell is in the table"
    );
}

/// The attack's names and others of their class: each a name `run` accepts.
fn hostile_names() -> Vec<String> {
    let mut out: Vec<String> = [
        "<img src=x onerror=alert(1)>",
        "[x](javascript:alert(1))",
        "![y](javascript:alert(1))",
        "<script>alert(1)",
        "**b** _e_ ~~s~~ `c` $m$",
        "a|b",
        "=HYPERLINK(\"x\")",
        "@SUM(A1)",
        "+cmd",
        "-O2",
        "\"><svg onload=alert(1)>",
        "www.evil.example",
        "x@evil.example",
        "# h",
        "<!-- hide",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for c in "<>[]()`*_~|&\"'$@#!=+-:".chars() {
        out.push(format!("{c}x{c}"));
        out.push(format!("[{c}](javascript:{c})"));
    }
    out
}

/// Issue 44, class 6: a variant named `<img src=x onerror=alert(1)>` landed raw in
/// report.md's by-connections headers, `host.hostname` raw in the Machines table, and
/// `[x](javascript:...)` names became live links. Through `bakeoff report`, each of the
/// attack's names and more of their class is text in report.md, report.html, results.csv,
/// bench.txt and the terminal.
#[test]
fn hostile_names_render_as_text_in_every_report_file() {
    let s = Scratch::new();
    let mut names = vec!["base".to_string()];
    names.extend(hostile_names());
    let host = "<img src=x onerror=alert(2)>[h](javascript:alert(3)) http://evil.example";
    let dir = folder(
        &s,
        "names",
        &results(&names, "<b>w<b>|[w](javascript:w)", &[1, 4], 2, host),
    );
    let out = report(&dir);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    let csv = std::fs::read_to_string(dir.join("results.csv")).unwrap();
    let bench = std::fs::read_to_string(dir.join("bench.txt")).unwrap();
    // report.md: no tag, no link but to the folder's own files, no bare URL; the names
    // show in the sweep's headers and the machine table, escaped.
    // (An escaped `\]` ends no link text.)
    let unescaped = md.replace("\\]", "");
    for raw in [
        "<img",
        "<script",
        "<svg",
        "<b>",
        "<!--",
        "](javascript",
        "http://evil",
    ] {
        let line = unescaped.lines().find(|l| l.contains(raw));
        assert!(line.is_none(), "{raw} raw in report.md: {line:?}");
    }
    assert!(
        md.contains("&lt;img src=x onerror=alert\\(1\\)&gt;")
            || md.contains("&lt;img src=x onerror=alert(1)&gt;"),
        "the name shows"
    );
    assert!(
        md.contains("| conns | base | &lt;img src=x onerror=alert(1)&gt; |"),
        "sweep headers"
    );
    assert!(
        md.contains("\\[x\\](javascript\\:alert(1))")
            || md.contains("\\[x\\](javascript:alert(1))"),
        "a link name is text"
    );
    // report.html: no tag of the data, no handler, no href but our own.
    assert_no_raw(&html, "<script", "report.html");
    assert!(
        html.contains("&lt;img src=x onerror=alert(1)&gt;"),
        "the name shows"
    );
    // results.csv: no field a formula.
    for line in csv.lines().skip(1) {
        for field in line.split(',') {
            let f = field.trim_matches('"');
            assert!(
                !f.starts_with(['=', '+', '@'])
                    && (!f.starts_with('-') || f.parse::<f64>().is_ok()),
                "formula {f:?} in results.csv"
            );
        }
    }
    // bench.txt: plain benchmark names.
    for line in bench.lines().filter(|l| l.starts_with("Benchmark")) {
        let name = line.split('\t').next().unwrap();
        assert!(
            name.chars()
                .all(|c| c.is_ascii_alphanumeric() || "._=+-/".contains(c)),
            "{name}"
        );
    }
    // The terminal: no escape sequence (stdout is no terminal, so no colour either).
    assert!(!stdout.contains('\u{1b}'), "{stdout}");

    // The site (issue 56) over a history holding the folder twice: every page of it
    // (index, trend, run pages, the compare page, the copied report) shows the names
    // as text too.
    let store = s.path().join("h.sqlite");
    common::record_folder(&store, &dir, 2);
    let site = s.path().join("site");
    let out = common::site_output(&site, &store);
    assert!(out.status.success(), "{}", text(&out).1);
    let mut pages = 0;
    for p in common::html_files(&site) {
        pages += 1;
        let page = std::fs::read_to_string(&p).unwrap();
        assert_no_raw(&page, "<script>alert", &p.display().to_string());
    }
    // index, the trend page, two run pages, two reports, one compare page.
    assert_eq!(pages, 7);
    let compare = std::fs::read_to_string(site.join("compare/1-2.html")).unwrap();
    assert!(
        compare.contains("&lt;img src=x onerror=alert(1)&gt;"),
        "the name shows"
    );
}

/// Issue 44, class 6: `report` read impossible values. Each is refused in one line naming
/// the field by its place in results.json, with exit status 2, and nothing is written.
#[test]
fn impossible_values_are_refused_with_the_field_named() {
    let s = Scratch::new();
    let names: Vec<String> = ["a", "b"].iter().map(|s| s.to_string()).collect();
    let good = results(&names, "kv", &[16], 3, "h");
    type Edit = fn(&mut Value);
    let cases: [(&str, Edit); 10] = [
        ("cells[0].runs[1].ops_per_s", |r| {
            r["cells"][0]["runs"][1]["ops_per_s"] = json!(-5.0)
        }),
        ("cells[1].runs[0].elapsed_s", |r| {
            r["cells"][1]["runs"][0]["elapsed_s"] = json!(-1.0)
        }),
        ("cells[0].runs[0].latency_us.p99", |r| {
            r["cells"][0]["runs"][0]["latency_us"]["p99"] = json!(3.0)
        }),
        ("cells[0].runs[2].round", |r| {
            r["cells"][0]["runs"][2]["round"] = json!(5000)
        }),
        ("cells[1].ci95", |r| {
            r["cells"][1]["ci95"] = json!([9.0, 1.0])
        }),
        ("cells[0].runs[0].ops", |r| {
            r["cells"][0]["runs"][0]["ops"] = json!(-1)
        }),
        ("cells[1].runs[2].errors", |r| {
            r["cells"][1]["runs"][2]["errors"] = json!(-7)
        }),
        ("cells[0].connections", |r| {
            r["cells"][0]["connections"] = json!(-16)
        }),
        ("plan.warmup_s", |r| r["plan"]["warmup_s"] = json!(-1.0)),
        ("cells[0].runs[0].interval_ops_per_s[1]", |r| {
            r["cells"][0]["runs"][0]["interval_ops_per_s"][1] = json!(-3.0)
        }),
    ];
    for (i, (field, edit)) in cases.into_iter().enumerate() {
        let mut r = good.clone();
        edit(&mut r);
        let dir = folder(&s, &format!("bad{i}"), &r);
        let out = report(&dir);
        let (_, stderr) = text(&out);
        assert_eq!(out.status.code(), Some(2), "{field}: {stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
        assert!(stderr.contains(field), "{field}: {stderr}");
        assert!(stderr.contains("bakeoff run"), "what to do: {stderr}");
        assert!(
            !stderr.contains("u64") && !stderr.contains("usize"),
            "{stderr}"
        );
        assert!(
            !dir.join("report.md").exists(),
            "nothing written for {field}"
        );
    }
    // The folder as written reads.
    let dir = folder(&s, "good", &good);
    let out = report(&dir);
    assert!(out.status.success(), "{}", text(&out).1);
}
