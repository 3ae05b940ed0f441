//! bench.txt: the runs in the Go benchmark format, so golang.org/x/perf's `benchstat` can
//! compare variants: `benchstat -col /variant bench.txt`.
//!
//! Layout:
//! - Configuration lines: `goos`, `goarch` (guessed from the host CPU model: `arm64` for
//!   ARM-family names, else `amd64`), `pkg: bakeoff/<experiment name>`, `cpu: <model>`.
//! - `Unit` metadata lines telling benchstat which direction is better for the units it
//!   does not know.
//! - One line per valid run:
//!   `Benchmark<Workload>/conns=<n>/variant=<v>-<cores>\t<ops>\t<ns> ns/op\t<ops/s> ops/s\t...`.
//!   Name parts are sanitized (anything outside `[A-Za-z0-9._=+-]` becomes `_`) and the
//!   workload's first letter is capitalized. The trailing `-<cores>` is the host's core
//!   count in the place Go puts GOMAXPROCS: benchstat strips a trailing `-<digits>` from
//!   every name, so without it a variant named `gcc-12` would be read as `gcc` on 12 procs.
//! - Units: `ns/op` (1e9 / ops_per_s, lower is better as benchstat assumes), `ops/s`,
//!   `p99-us`, `client-us/op`, `server-us/op`, and `instr/op` when the run has callgrind
//!   counts (preferred, exact) or CPU counters.
//! - The baseline variant's runs come first, so benchstat uses it as the base column.
//! - Invalid runs (and runs with no throughput) are left out; a `# invalid: ...` comment
//!   says which, and benchstat ignores such lines.
//!
//! - After the runs, one `# verdict:` comment per comparison with bakeoff's own answer
//!   (benchstat ignores comments): the answer, ratio, CI, adjusted p and pairing.
//!
//! With no runs at all, only the configuration lines are written.

use crate::csv::number;
use crate::model::{Cell, Results, Run};
use std::fmt::Write;

/// bakeoff's answers, as comments benchstat skips.
fn verdicts(s: &mut String, r: &Results) {
    for k in &r.comparisons {
        let _ = writeln!(
            s,
            "# verdict: {}/conns={}/variant={} vs {}: {}{}, ratio {:.4} CI [{:.4}, {:.4}], p_adjusted {:.4}, {} {}",
            sanitize(&k.workload, "workload"),
            k.connections,
            sanitize(&k.variant, "variant"),
            sanitize(&k.baseline, "variant"),
            if k.is_instructions() {
                "instructions "
            } else {
                ""
            },
            crate::summary::verdict_text(k),
            k.ratio,
            k.ci95[0],
            k.ci95[1],
            k.p_adjusted,
            k.rounds,
            match (k.layouts, k.paired) {
                (Some(_), _) => "rounds over layouts",
                (None, true) => "paired rounds",
                (None, false) => "runs a side, unpaired",
            }
        );
    }
}

/// Units benchstat does not know, and which way is better.
const UNITS: &[(&str, &str)] = &[
    ("ops/s", "higher"),
    ("p99-us", "lower"),
    ("client-us/op", "lower"),
    ("server-us/op", "lower"),
    ("instr/op", "lower"),
];

/// Go benchmark format, one line per valid run.
pub fn render(r: &Results) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "goos: linux");
    let _ = writeln!(s, "goarch: {}", goarch(&r.host.cpu_model));
    let _ = writeln!(s, "pkg: bakeoff/{}", sanitize(&r.name, "experiment"));
    let cpu = one_line(&r.host.cpu_model);
    let _ = writeln!(s, "cpu: {}", if cpu.is_empty() { "unknown" } else { &cpu });

    let mut body = String::new();
    let mut any = false;
    let procs = r.host.cores.max(1);
    // benchstat takes the first column it sees as the base: the baseline variant's cells go
    // first, the others follow in results order.
    let (base, others): (Vec<&Cell>, Vec<&Cell>) =
        r.cells.iter().partition(|c| c.variant == r.plan.baseline);
    for cell in base.into_iter().chain(others) {
        for run in &cell.runs {
            // Mode both's instruction-count runs ran under callgrind: a benchmark of their
            // own, with instructions per op alone (their clock figures measure valgrind).
            let name = if run.instruction_run {
                format!("{}/runs=callgrind-{procs}", name(cell))
            } else {
                format!("{}-{procs}", name(cell))
            };
            let round = run.round.saturating_add(1);
            if !run.valid {
                let reason = one_line(run.invalid_reason.as_deref().unwrap_or("no reason given"));
                let _ = writeln!(body, "# invalid: {name} round {round}: {reason}");
                continue;
            }
            if !(run.ops_per_s.is_finite() && run.ops_per_s > 0.0) {
                let _ = writeln!(body, "# invalid: {name} round {round}: no throughput");
                continue;
            }
            let _ = writeln!(body, "{}", line(&name, run));
            any = true;
        }
    }
    if any || !body.is_empty() {
        s.push('\n');
    }
    if any {
        for (unit, better) in UNITS {
            let _ = writeln!(s, "Unit {unit} better={better}");
        }
        s.push('\n');
    }
    s.push_str(&body);
    verdicts(&mut s, r);
    s
}

/// `Benchmark<name>\t<N>\t<value> <unit>...` for one valid run.
fn line(name: &str, run: &Run) -> String {
    let mut values = vec![
        (1e9 / run.ops_per_s, "ns/op"),
        (run.ops_per_s, "ops/s"),
        (run.latency_us.p99, "p99-us"),
        (run.client_cpu_us_per_op, "client-us/op"),
        (run.server_cpu_us_per_op, "server-us/op"),
    ];
    if run.instruction_run {
        values.clear();
    }
    let instr = run
        .instructions
        .as_ref()
        .map(|i| i.instructions_per_op)
        .or_else(|| run.counters.as_ref().and_then(|c| c.instructions_per_op));
    if let Some(i) = instr {
        values.push((i, "instr/op"));
    }
    let mut s = format!("Benchmark{name}\t{}", run.ops.max(1));
    for (v, unit) in values {
        // A value benchstat could not parse (NaN, inf) would void the whole line.
        if v.is_finite() {
            let _ = write!(s, "\t{} {unit}", number(v));
        }
    }
    s
}

/// `Workload/conns=16/variant=gcc-O2`, sanitized, first letter capitalized.
fn name(c: &Cell) -> String {
    let mut workload = sanitize(&c.workload, "Workload");
    if let Some(first) = workload.get(..1) {
        let upper = first.to_ascii_uppercase();
        workload.replace_range(..1, &upper);
    }
    format!(
        "{workload}/conns={}/variant={}",
        c.connections,
        sanitize(&c.variant, "none")
    )
}

/// Keeps `[A-Za-z0-9._=+-]`, replaces everything else (spaces, `/`, `|`, `,`, non-ASCII)
/// with `_`; `empty` when nothing is left.
fn sanitize(s: &str, empty: &str) -> String {
    let out: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._=+-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    if out.is_empty() {
        empty.to_string()
    } else {
        out
    }
}

/// Text for a configuration value or comment: control characters become spaces, so a
/// value can never start a line of its own.
fn one_line(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect::<String>()
        .trim()
        .to_string()
}

/// Go's GOARCH name for the host, guessed from the CPU model (results.json records no
/// architecture): ARM-family names give `arm64`, anything else `amd64`.
fn goarch(cpu_model: &str) -> &'static str {
    let m = cpu_model.to_ascii_lowercase();
    let arm = [
        "aarch64", "arm", "neoverse", "cortex", "graviton", "ampere", "apple",
    ];
    if arm.iter().any(|k| m.contains(k)) {
        "arm64"
    } else {
        "amd64"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A SQL cell (with counters), a key-value cell with a callgrind run and an invalid run,
    /// a variant whose name has a comma, a space and ends in digits.
    fn small() -> Results {
        serde_json::from_str(
            r#"{
      "schema": "bakeoff.results/1",
      "name": "pg vs my: oltp/kv",
      "status": "complete",
      "bakeoff_version": "0.1.0",
      "started_utc": "2026-11-22T10:00:00Z",
      "host": {"cpu_model": "Test CPU @ 3.00GHz", "cores": 4, "memory_bytes": 8589934592,
               "kernel": "6.1.0", "os": "Debian GNU/Linux 12 (bookworm)"},
      "experiment": {"file": "x.toml", "text": "", "resolved": {}},
      "plan": {"repetitions": 2, "warmup_s": 1.0, "seed": 1, "baseline": "gcc-O2",
               "rounds": [["gcc-O2", "clang, O3 v12"]]},
      "variants": [],
      "comparisons": [],
      "cells": [
        {
          "workload": "oltp_read_write", "variant": "gcc-O2", "connections": 16,
          "median_ops_per_s": 1600.0, "ci95": [1400.0, 1600.0], "valid_runs": 1,
          "runs": [{
            "round": 0, "ops_per_s": 1600.0, "ops": 3200, "elapsed_s": 2.0,
            "latency_us": {"p50": 9000.0, "p90": 12000.0, "p99": 20500.25, "p999": 40000.0,
                           "max": 81234.5, "mean": 10000.125},
            "errors": 0, "misses": 0, "verify_failures": 0,
            "client_cpu_s": 0.25, "client_rss_kib": 10240, "client_cpu_us_per_op": 78.125,
            "server_cpu_s": 1.5, "server_rss_kib": 204800, "server_cpu_us_per_op": 468.75,
            "client_bound": false, "valid": true,
            "tps": 1600.0, "qps": 32000.0,
            "statements": {"point_select": {"count": 32000,
              "latency_us": {"p50": 100.0, "p90": 150.0, "p99": 300.0, "p999": 900.0,
                             "max": 2000.0}}},
            "system": {"cpu_user_pct": 41.5, "cpu_system_pct": 20.25, "cpu_idle_pct": 35.0,
                       "cpu_iowait_pct": 3.25, "server_rss_kib_max": 215000,
                       "ctx_switches_per_op": 12.5, "disk_read_bytes": 0,
                       "disk_write_bytes": 123456789},
            "counters": {"instructions_per_op": 1250000.0, "cycles_per_op": 900000.0,
                         "ipc": 1.3888889}
          }]
        },
        {
          "workload": "get90|set10", "variant": "clang, O3 v12", "connections": 4,
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
              "invalid_reason": "server exited, said \"bye\"\nBenchmarkFake 1 1 ns/op"
            }
          ]
        }
      ]
    }"#,
        )
        .expect("test results parse")
    }

    fn bench_lines(s: &str) -> Vec<&str> {
        s.lines().filter(|l| l.starts_with("Benchmark")).collect()
    }

    #[test]
    fn benchstat_snapshot() {
        insta::assert_snapshot!("bench_txt", render(&small()));
    }

    #[test]
    fn benchstat_lines_are_well_formed() {
        let out = render(&small());
        let lines = bench_lines(&out);
        assert_eq!(lines.len(), 2, "{out}");
        for l in &lines {
            let fields: Vec<&str> = l.split_whitespace().collect();
            assert!(fields.len() >= 4, "{l}");
            let n: u64 = fields[1].parse().expect("N is an integer");
            assert!(n >= 1);
            let rest = &fields[2..];
            assert_eq!(rest.len() % 2, 0, "value/unit pairs: {l}");
            for pair in rest.chunks(2) {
                let v: f64 = pair[0].parse().expect("value is a number");
                assert!(v.is_finite(), "{l}");
                assert!(pair[1].parse::<f64>().is_err(), "unit is not a number: {l}");
            }
            assert_eq!(rest[1], "ns/op", "{l}");
        }
    }

    #[test]
    fn benchstat_units_and_values() {
        let out = render(&small());
        let lines = bench_lines(&out);
        assert!(lines[0].ends_with(
            "\t3200\t625000 ns/op\t1600 ops/s\t20500.25 p99-us\t78.125 client-us/op\
             \t468.75 server-us/op\t1250000 instr/op"
        ));
        // callgrind's count is the one given for instr/op.
        assert!(lines[1].contains("\t240000\t8333.333333 ns/op\t120000 ops/s\t"));
        assert!(lines[1].ends_with("\t10000 instr/op"));
    }

    #[test]
    fn benchstat_names_are_sanitized() {
        let out = render(&small());
        let lines = bench_lines(&out);
        assert!(
            lines[0].starts_with("BenchmarkOltp_read_write/conns=16/variant=gcc-O2-4\t"),
            "{}",
            lines[0]
        );
        assert!(
            lines[1].starts_with("BenchmarkGet90_set10/conns=4/variant=clang__O3_v12-4\t"),
            "{}",
            lines[1]
        );
        for l in &lines {
            let name = l.split_whitespace().next().unwrap();
            let rest = name.strip_prefix("Benchmark").unwrap();
            assert!(rest.starts_with(|c: char| c.is_ascii_uppercase()), "{name}");
            assert!(
                name.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "._=+-/".contains(c)),
                "{name}"
            );
            // Exactly the two key=value sub-benchmark parts.
            assert_eq!(name.matches('/').count(), 2, "{name}");
        }
        assert!(out.contains("\npkg: bakeoff/pg_vs_my__oltp_kv\n"));
        assert_eq!(sanitize("", "x"), "x");
        assert_eq!(sanitize("a/b c|d=é", "x"), "a_b_c_d=_");
    }

    #[test]
    fn benchstat_baseline_first() {
        let mut r = small();
        r.plan.baseline = "clang, O3 v12".into();
        let out = render(&r);
        let lines = bench_lines(&out);
        assert!(lines[0].contains("/variant=clang__O3_v12-4\t"), "{out}");
        assert!(lines[1].contains("/variant=gcc-O2-4\t"), "{out}");
    }

    #[test]
    fn benchstat_invalid_runs_left_out() {
        let out = render(&small());
        assert_eq!(bench_lines(&out).len(), 2);
        // A newline in the reason cannot smuggle in a Benchmark line of its own.
        assert!(!out.lines().any(|l| l.starts_with("BenchmarkFake")));
        assert!(!out.contains("\t0 ns/op"));
        let comments: Vec<&str> = out.lines().filter(|l| l.starts_with('#')).collect();
        assert_eq!(comments.len(), 1, "{out}");
        assert!(comments[0].starts_with(
            "# invalid: Get90_set10/conns=4/variant=clang__O3_v12-4 round 2: server exited"
        ));
    }

    #[test]
    fn benchstat_empty_results_is_configuration_only() {
        let mut r = small();
        r.cells.clear();
        r.host.cpu_model = String::new();
        assert_eq!(
            render(&r),
            "goos: linux\ngoarch: amd64\npkg: bakeoff/pg_vs_my__oltp_kv\ncpu: unknown\n"
        );
        r.host.cpu_model = "Neoverse-N1".into();
        assert!(render(&r).contains("goarch: arm64\n"));
    }
}
