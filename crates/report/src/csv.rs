//! results.csv: one row per run of every cell, flat columns, for spreadsheets, pandas, R
//! or any tool that wants the raw runs rather than the summaries.
//!
//! Format:
//! - A header row ([`COLUMNS`]), then one row per run, cells and runs in results order.
//! - RFC 4180 quoting: a field holding a comma, a double quote, CR or LF is put in double
//!   quotes, with inner quotes doubled. Lines end with `\n`.
//! - Numbers are printed plainly: integers as they are, floats rounded to 6 decimals with
//!   trailing zeros trimmed (values below 0.001 keep 6 significant digits instead), never
//!   with thousands separators or exponents. Booleans are `true` / `false`. A value the run
//!   does not have (no `system`, no `counters`, a key workload without tps, ...) is empty.
//! - Formula injection guard: spreadsheets run a cell that starts with `=`, `+`, `-` or
//!   `@` (and some also tab or CR, or these after spaces, or their full-width forms) as a
//!   formula. Every *text* field (workload, variant, invalid_reason, consistency) that
//!   starts with one of these characters gets a leading `'`, so
//!   a variant named `-O2` is written as `'-O2`. Numeric fields are never prefixed
//!   (a negative number stays a number).

use crate::model::{Cell, Results, Run};

/// One CSV field before quoting.
enum Field {
    /// Free text from the experiment or the run: guarded against formula injection.
    Text(String),
    /// A number, a boolean, or empty (missing).
    Plain(String),
}

type Getter = fn(&Cell, &Run) -> Field;

fn text(s: &str) -> Field {
    Field::Text(s.to_string())
}

fn int(n: u64) -> Field {
    Field::Plain(n.to_string())
}

fn float(v: f64) -> Field {
    Field::Plain(number(v))
}

/// A key of the run's kind figures.
fn figure<'a>(r: &'a Run, key: &str) -> Option<&'a serde_json::Value> {
    r.figures.0.get(key)
}

fn opt_float(v: Option<f64>) -> Field {
    v.map(float).unwrap_or(Field::Plain(String::new()))
}

fn opt_int(v: Option<u64>) -> Field {
    v.map(int).unwrap_or(Field::Plain(String::new()))
}

fn boolean(b: bool) -> Field {
    Field::Plain(if b { "true" } else { "false" }.to_string())
}

/// The columns, in order, with how each is read from a run (and its cell).
const COLUMNS: &[(&str, Getter)] = &[
    ("workload", |c, _| text(&c.workload)),
    ("connections", |c, _| int(c.connections as u64)),
    ("variant", |c, _| text(&c.variant)),
    ("round", |_, r| int((r.round as u64).saturating_add(1))),
    ("valid", |_, r| boolean(r.valid)),
    ("invalid_reason", |_, r| {
        text(r.invalid_reason.as_deref().unwrap_or(""))
    }),
    ("ops", |_, r| int(r.ops)),
    ("elapsed_s", |_, r| float(r.elapsed_s)),
    ("ops_per_s", |_, r| float(r.ops_per_s)),
    ("tps", |_, r| opt_float(r.tps)),
    ("qps", |_, r| opt_float(r.qps)),
    // Columns a kind's figures fill (the file's columns stay as they were).
    ("warehouses", |_, r| {
        opt_int(figure(r, "warehouses").and_then(|v| v.as_u64()))
    }),
    ("notpm", |_, r| {
        opt_float(figure(r, "notpm").and_then(|v| v.as_f64()))
    }),
    ("tpm", |_, r| {
        opt_float(figure(r, "tpm").and_then(|v| v.as_f64()))
    }),
    ("consistency", |_, r| {
        text(
            figure(r, "consistency")
                .and_then(|v| v.as_str())
                .unwrap_or(""),
        )
    }),
    ("latency_p50_us", |_, r| float(r.latency_us.p50)),
    ("latency_p90_us", |_, r| float(r.latency_us.p90)),
    ("latency_p99_us", |_, r| float(r.latency_us.p99)),
    ("latency_p999_us", |_, r| float(r.latency_us.p999)),
    ("latency_max_us", |_, r| float(r.latency_us.max)),
    ("latency_mean_us", |_, r| float(r.latency_us.mean)),
    ("service_p50_us", |_, r| {
        opt_float(r.service_us.as_ref().map(|l| l.p50))
    }),
    ("service_p99_us", |_, r| {
        opt_float(r.service_us.as_ref().map(|l| l.p99))
    }),
    ("errors", |_, r| int(r.errors)),
    ("misses", |_, r| int(r.misses)),
    ("verify_failures", |_, r| int(r.verify_failures)),
    ("client_cpu_s", |_, r| float(r.client_cpu_s)),
    ("client_cpu_us_per_op", |_, r| float(r.client_cpu_us_per_op)),
    ("client_rss_kib", |_, r| int(r.client_rss_kib)),
    ("server_cpu_s", |_, r| float(r.server_cpu_s)),
    ("server_cpu_us_per_op", |_, r| float(r.server_cpu_us_per_op)),
    ("server_rss_kib", |_, r| int(r.server_rss_kib)),
    ("client_bound", |_, r| boolean(r.client_bound)),
    ("reconnects", |_, r| int(r.reconnects)),
    ("cpu_user_pct", |_, r| {
        opt_float(r.system.as_ref().map(|s| s.cpu_user_pct))
    }),
    ("cpu_system_pct", |_, r| {
        opt_float(r.system.as_ref().map(|s| s.cpu_system_pct))
    }),
    ("cpu_idle_pct", |_, r| {
        opt_float(r.system.as_ref().map(|s| s.cpu_idle_pct))
    }),
    ("cpu_iowait_pct", |_, r| {
        opt_float(r.system.as_ref().map(|s| s.cpu_iowait_pct))
    }),
    ("server_cpu_pct_mean", |_, r| {
        opt_float(r.system.as_ref().map(|s| s.server_cpu_pct_mean))
    }),
    ("server_rss_kib_max", |_, r| {
        opt_int(r.system.as_ref().map(|s| s.server_rss_kib_max))
    }),
    ("ctx_switches_per_op", |_, r| {
        opt_float(r.system.as_ref().map(|s| s.ctx_switches_per_op))
    }),
    ("disk_read_bytes", |_, r| {
        opt_int(r.system.as_ref().map(|s| s.disk_read_bytes))
    }),
    ("disk_write_bytes", |_, r| {
        opt_int(r.system.as_ref().map(|s| s.disk_write_bytes))
    }),
    ("loopback_bytes_per_op", |_, r| {
        opt_float(r.system.as_ref().map(|s| s.loopback_bytes_per_op))
    }),
    ("instructions_per_op", |_, r| {
        opt_float(r.counters.as_ref().and_then(|c| c.instructions_per_op))
    }),
    ("cycles_per_op", |_, r| {
        opt_float(r.counters.as_ref().and_then(|c| c.cycles_per_op))
    }),
    ("ipc", |_, r| {
        opt_float(r.counters.as_ref().and_then(|c| c.ipc))
    }),
    ("callgrind_instructions_per_op", |_, r| {
        opt_float(r.instructions.as_ref().map(|i| i.instructions_per_op))
    }),
];

/// Columns read from the results around a run: `aa`, the run is of the A/A variant (the
/// machine check of `[plan] aa`, not a candidate); `suspect`, the experiment's A/A check
/// found a difference, so every verdict from these runs is suspect.
const AA_COLUMNS: [&str; 2] = ["aa", "suspect"];

/// One row per run, flat columns (see the module doc).
pub fn render(r: &Results) -> String {
    let mut s = String::new();
    let header: Vec<String> = COLUMNS
        .iter()
        .map(|(name, _)| *name)
        .chain(AA_COLUMNS)
        .map(|name| quote(name.to_string()))
        .collect();
    push_row(&mut s, &header);
    let suspect = r.aa.as_ref().is_some_and(|a| a.differs());
    let aa_variants = r.aa_variants();
    for cell in &r.cells {
        let aa = aa_variants.contains(cell.variant.as_str());
        for run in &cell.runs {
            let row: Vec<String> = COLUMNS
                .iter()
                .map(|(_, get)| encode(get(cell, run)))
                .chain([aa, suspect].map(|b| encode(boolean(b))))
                .collect();
            push_row(&mut s, &row);
        }
    }
    s
}

fn push_row(s: &mut String, fields: &[String]) {
    s.push_str(&fields.join(","));
    s.push('\n');
}

fn encode(f: Field) -> String {
    match f {
        Field::Text(t) => quote(defuse(t)),
        Field::Plain(p) => quote(p),
    }
}

/// Prefixes `'` to text a spreadsheet would take for a formula: one that starts with `=`,
/// `+`, `-` or `@` (or their full-width forms, which some spreadsheets read the same),
/// a tab, CR or LF, possibly after spaces.
fn defuse(t: String) -> String {
    let first = t.trim_start_matches(' ');
    if first.starts_with([
        '=', '+', '-', '@', '\t', '\r', '\n', '\u{ff1d}', '\u{ff0b}', '\u{ff0d}', '\u{ff20}',
    ]) {
        format!("'{t}")
    } else {
        t
    }
}

/// RFC 4180: quote a field holding a comma, quote, CR or LF; double inner quotes.
fn quote(f: String) -> String {
    if f.contains([',', '"', '\r', '\n']) {
        format!("\"{}\"", f.replace('"', "\"\""))
    } else {
        f
    }
}

/// A float, plainly and stably: 6 decimals with trailing zeros trimmed (6 significant
/// digits below 0.001), no exponent, no `-0`; empty when not finite.
pub(crate) fn number(v: f64) -> String {
    if !v.is_finite() {
        return String::new();
    }
    let s = if v == 0.0 || v.abs() >= 1e-3 {
        format!("{v:.6}")
    } else {
        // Round to 6 significant digits, then print the shortest decimal of that value
        // (f64's Display never uses an exponent).
        let rounded: f64 = format!("{v:.5e}").parse().unwrap_or(v);
        format!("{rounded}")
    };
    let s = if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    };
    if s == "-0" {
        "0".to_string()
    } else {
        s
    }
}

/// Splits CSV text into records of fields (RFC 4180, enough for the tests that read what
/// [`render`] wrote); every line must end in a newline.
#[cfg(test)]
pub(crate) fn parse_rows(s: &str) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    let mut row = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                field.push('"');
                chars.next();
            }
            (true, '"') => quoted = false,
            (true, c) => field.push(c),
            (false, '"') if field.is_empty() => quoted = true,
            (false, ',') => row.push(std::mem::take(&mut field)),
            (false, '\n') => {
                row.push(std::mem::take(&mut field));
                rows.push(std::mem::take(&mut row));
            }
            (false, c) => field.push(c),
        }
    }
    assert!(field.is_empty() && row.is_empty(), "unterminated last line");
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small results set: a SQL cell (tps, qps, statements, system, counters), a key-value
    /// cell with a callgrind run and an invalid run, and a variant whose name has a comma.
    fn small() -> Results {
        serde_json::from_str(SMALL).expect("test results parse")
    }

    const SMALL: &str = r#"{
      "schema": "bakeoff.results/1",
      "name": "pg vs my: oltp, kv",
      "status": "complete",
      "bakeoff_version": "0.1.0",
      "started_utc": "2026-11-22T10:00:00Z",
      "host": {"cpu_model": "Test CPU @ 3.00GHz", "cores": 4, "memory_bytes": 8589934592,
               "kernel": "6.1.0", "os": "Debian GNU/Linux 12 (bookworm)"},
      "experiment": {"file": "x.toml", "text": "", "resolved": {}},
      "plan": {"repetitions": 2, "warmup_s": 1.0, "seed": 1, "baseline": "gcc-O2",
               "rounds": [["gcc-O2", "clang,O3"]]},
      "variants": [],
      "comparisons": [],
      "cells": [
        {
          "workload": "oltp_read_write", "variant": "gcc-O2", "connections": 16,
          "median_ops_per_s": 1500.5, "ci95": [1400.0, 1600.0], "valid_runs": 1,
          "runs": [{
            "round": 0, "ops_per_s": 1500.5, "ops": 3001, "elapsed_s": 2.0,
            "latency_us": {"p50": 9000.0, "p90": 12000.0, "p99": 20500.25, "p999": 40000.0,
                           "max": 81234.5, "mean": 10000.125},
            "service_us": {"p50": 8000.0, "p90": 11000.0, "p99": 19000.0, "p999": 39000.0,
                           "max": 80000.0},
            "errors": 2, "misses": 0, "verify_failures": 0,
            "client_cpu_s": 0.25, "client_rss_kib": 10240, "client_cpu_us_per_op": 83.305,
            "server_cpu_s": 1.5, "server_rss_kib": 204800, "server_cpu_us_per_op": 499.8333333,
            "client_bound": false, "valid": true,
            "tps": 1500.5, "qps": 30010.0, "client_cpu_us_per_txn": 83.305,
            "statements": {"point_select": {"count": 30010,
              "latency_us": {"p50": 100.0, "p90": 150.0, "p99": 300.0, "p999": 900.0,
                             "max": 2000.0}}},
            "reconnects": 1,
            "system": {"cpu_user_pct": 41.5, "cpu_system_pct": 20.25, "cpu_idle_pct": 35.0,
                       "cpu_iowait_pct": 3.25, "server_cpu_pct_mean": 75.0,
                       "server_rss_kib_max": 215000, "ctx_switches_per_op": 12.3456789,
                       "disk_read_bytes": 0, "disk_write_bytes": 123456789,
                       "loopback_bytes_per_op": 812.5},
            "counters": {"instructions_per_op": 1250000.0, "cycles_per_op": 900000.0,
                         "ipc": 1.3888889}
          }]
        },
        {
          "workload": "get90|set10", "variant": "clang,O3", "connections": 4,
          "median_ops_per_s": 120000.0, "ci95": [119000.0, 121000.0], "valid_runs": 1,
          "runs": [
            {
              "round": 0, "ops_per_s": 120000.0, "ops": 240000, "elapsed_s": 2.0,
              "latency_us": {"p50": 30.0, "p90": 40.0, "p99": 95.5, "p999": 200.0,
                             "max": 1500.0, "mean": 33.0},
              "errors": 0, "misses": 12, "verify_failures": 0,
              "client_cpu_s": 0.6, "client_rss_kib": 4096, "client_cpu_us_per_op": 2.5,
              "server_cpu_s": 0.9, "server_rss_kib": 65536, "server_cpu_us_per_op": 3.75,
              "client_bound": true, "valid": true,
              "instructions": {"instructions": 2400000000, "instructions_per_op": 10000.0,
                               "top": []}
            },
            {
              "round": 1, "ops_per_s": 0.0, "ops": 0, "elapsed_s": 0.5,
              "latency_us": {"p50": 0.0, "p90": 0.0, "p99": 0.0, "p999": 0.0, "max": 0.0},
              "errors": 0, "misses": 0, "verify_failures": 0,
              "client_cpu_s": 0.0, "client_rss_kib": 0, "client_cpu_us_per_op": 0.0,
              "server_cpu_s": 0.0, "server_rss_kib": 0, "server_cpu_us_per_op": 0.0,
              "client_bound": false, "valid": false,
              "invalid_reason": "server exited, said \"bye\" (signal 9)"
            }
          ]
        }
      ]
    }"#;

    fn column(name: &str) -> usize {
        COLUMNS.iter().position(|(n, _)| *n == name).unwrap()
    }

    #[test]
    fn csv_snapshot() {
        insta::assert_snapshot!("results_csv", render(&small()));
    }

    #[test]
    fn csv_every_row_has_every_column() {
        let out = render(&small());
        assert!(out.ends_with('\n') && !out.contains('\r'));
        let rows = parse_rows(&out);
        assert_eq!(rows.len(), 1 + 3, "header and one row per run");
        for row in &rows {
            assert_eq!(row.len(), COLUMNS.len() + AA_COLUMNS.len(), "{row:?}");
        }
        let header: Vec<&str> = COLUMNS.iter().map(|(n, _)| *n).chain(AA_COLUMNS).collect();
        assert_eq!(rows[0], header);
    }

    #[test]
    fn csv_quotes_commas_and_quotes() {
        let out = render(&small());
        // The raw text: quoted, inner quotes doubled.
        assert!(out.contains(",\"clang,O3\","), "{out}");
        assert!(
            out.contains(",\"server exited, said \"\"bye\"\" (signal 9)\","),
            "{out}"
        );
        // And it reads back to the original values.
        let rows = parse_rows(&out);
        let invalid = &rows[3];
        assert_eq!(invalid[column("variant")], "clang,O3");
        assert_eq!(invalid[column("valid")], "false");
        assert_eq!(
            invalid[column("invalid_reason")],
            "server exited, said \"bye\" (signal 9)"
        );
        assert_eq!(quote("a\nb".into()), "\"a\nb\"");
        assert_eq!(quote("a\rb".into()), "\"a\rb\"");
        assert_eq!(quote("plain".into()), "plain");
    }

    #[test]
    fn csv_missing_values_are_empty() {
        let rows = parse_rows(&render(&small()));
        let (sql, kv) = (&rows[1], &rows[2]);
        assert_eq!(sql[column("tps")], "1500.5");
        assert_eq!(sql[column("qps")], "30010");
        assert_eq!(sql[column("ipc")], "1.388889");
        assert_eq!(sql[column("disk_write_bytes")], "123456789");
        assert_eq!(sql[column("callgrind_instructions_per_op")], "");
        assert_eq!(sql[column("round")], "1");
        for empty in ["tps", "qps", "service_p50_us", "cpu_user_pct", "ipc"] {
            assert_eq!(kv[column(empty)], "", "{empty}");
        }
        assert_eq!(kv[column("callgrind_instructions_per_op")], "10000");
        assert_eq!(kv[column("client_bound")], "true");
        assert_eq!(rows[3][column("round")], "2");
    }

    #[test]
    fn csv_guards_formula_injection() {
        let mut r = small();
        r.cells[0].variant = "=HYPERLINK(\"http://x\",\"y\")".into();
        r.cells[0].workload = "@SUM(A1)".into();
        r.cells[1].variant = "-O2".into();
        r.cells[1].runs[1].invalid_reason = Some("+1 crashed".into());
        let rows = parse_rows(&render(&r));
        assert_eq!(
            rows[1][column("variant")],
            "'=HYPERLINK(\"http://x\",\"y\")"
        );
        assert_eq!(rows[1][column("workload")], "'@SUM(A1)");
        assert_eq!(rows[2][column("variant")], "'-O2");
        assert_eq!(rows[3][column("invalid_reason")], "'+1 crashed");
        for t in ["\tx", "\rx"] {
            assert_eq!(defuse(t.into()), format!("'{t}"));
        }
        // Ordinary text and numbers are left alone.
        assert_eq!(rows[1][column("connections")], "16");
        assert_eq!(defuse("gcc-O2".into()), "gcc-O2");
        assert_eq!(number(-1.5), "-1.5");
    }

    #[test]
    fn csv_numbers_are_plain_and_stable() {
        assert_eq!(number(0.0), "0");
        assert_eq!(number(-0.0), "0");
        assert_eq!(number(120000.0), "120000");
        assert_eq!(number(1234567.891), "1234567.891");
        assert_eq!(number(0.1 + 0.2), "0.3");
        assert_eq!(number(499.8333333), "499.833333");
        assert_eq!(number(0.000123456789), "0.000123457");
        assert_eq!(number(1e-9), "0.000000001");
        assert_eq!(number(1e20), "100000000000000000000");
        assert_eq!(number(f64::NAN), "");
        assert_eq!(number(f64::INFINITY), "");
    }

    #[test]
    fn csv_empty_results_is_header_only() {
        let mut r = small();
        r.cells.clear();
        let out = render(&r);
        assert_eq!(out.lines().count(), 1);
        assert!(out.starts_with("workload,connections,variant,round,valid,"));
    }
}
