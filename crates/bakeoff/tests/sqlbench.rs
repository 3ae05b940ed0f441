//! End-to-end: the real sql-bench (Perl, from Debian's mariadb source package, fetched once
//! into the shared test cache) on Debian's installed mariadbd and on PostgreSQL 15, a few
//! small tests with `--small-test`: every operation's time parsed, the per-group and
//! per-operation table in the report, and a test that dies on the server named per test
//! while the experiment goes on.

mod common;

use bakeoff_testkit::paths::{MARIADBD, POSTGRES};
use common::{assert_ok, no_server_left, sql_scratch as scratch};
use serde_json::Value;

/// sql-bench on `kind`'s installed `binary`, `options` (a TOML table's inside) under
/// `[target]`: a variant per (name, its options or ""), a `sql-bench` workload per
/// (name, tests, args: TOML values), one round.
fn experiment(
    name: &str,
    kind: &str,
    options: &str,
    binary: &str,
    variants: &[(&str, &str)],
    workloads: &[(&str, &str, &str)],
) -> String {
    let mut text =
        format!("name = \"{name}\"\n[target]\nkind = \"{kind}\"\noptions = {{ {options} }}\n");
    for (variant, options) in variants {
        text += &format!("\n[[variant]]\nname = \"{variant}\"\nbinary = \"{binary}\"\n");
        if !options.is_empty() {
            text += &format!("options = {{ {options} }}\n");
        }
    }
    for (workload, tests, args) in workloads {
        text += &format!("\n[[workload]]\nname = \"{workload}\"\nkind = \"sql-bench\"\ntests = {tests}\nargs = {args}\n");
    }
    text + "\n[plan]\nrepetitions = 1\nwarmup = \"0s\"\n"
}

/// The cells of workload `w`.
fn cells<'a>(r: &'a Value, w: &str) -> Vec<&'a Value> {
    common::items(&r["cells"], "workload", w)
}

/// Every run of `w` valid, each of `groups` timed with operations, and the cell's
/// per-group figures present.
fn check_timed(r: &Value, w: &str, groups: &[&str]) {
    let cs = cells(r, w);
    assert!(!cs.is_empty(), "no cells of {w}");
    for c in cs {
        for run in c["runs"].as_array().unwrap() {
            assert_eq!(run["valid"], true, "{run}");
            let ops = run["operations"].as_array().unwrap();
            for g in groups {
                let n = ops.iter().filter(|o| o["group"] == *g).count();
                assert!(n >= 2, "group {g} has {n} operations: {ops:?}");
            }
            let total: f64 = ops.iter().map(|o| o["seconds"].as_f64().unwrap()).sum();
            assert!(total > 0.0, "{ops:?}");
            assert!(
                ops.iter().any(|o| {
                    let s = o["seconds"].as_f64().unwrap();
                    s > 0.0 && s.fract() != 0.0
                }),
                "wallclock in whole seconds only: {ops:?}"
            );
            assert!(run["ops_per_s"].as_f64().unwrap() > 0.0, "{run}");
        }
        let suite = &c["sqlsuite"];
        let got = common::strs(&suite["groups"], "group");
        assert_eq!(got, groups, "{suite}");
        assert!(!suite["operations"].as_array().unwrap().is_empty());
    }
}

/// Commits without a log flush each (innodb_flush_log_at_trx_commit 2 and 0): with 1,
/// test-insert --small-test takes about 25 s here, with 2 about 3 s.
#[test]
fn mariadb_installed_small_tests_and_a_test_that_dies() {
    let s = scratch();
    let text = experiment(
        "sql-bench-mariadb",
        "mariadb",
        "innodb_buffer_pool_size = \"64M\"",
        MARIADBD,
        &[
            ("flush2", "innodb_flush_log_at_trx_commit = 2"),
            ("flush0", "innodb_flush_log_at_trx_commit = 0"),
        ],
        &[
            ("sb", "[\"insert\", \"connect\"]", "[\"--small-test\"]"),
            (
                "sb-dies",
                "[\"alter-table\", \"create\"]",
                "[\"--small-test\", \"--create-options=ENGINE=nosuch\"]",
            ),
        ],
    );
    let file = s.write("sb.toml", &text);
    let out = s.run_cmd(&file).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    // The dying workload's cells have no valid run: said, and the exit status says so.
    assert_eq!(out.status.code(), Some(4), "{stderr}");
    assert!(stderr.contains("no valid run in 2 cell(s)"), "{stderr}");
    let r = s.results();
    check_timed(&r, "sb", &["insert", "connect"]);
    // ENGINE=nosuch: MariaDB refuses the CREATE TABLE (NO_ENGINE_SUBSTITUTION), each
    // test dies, and the run names both tests and the server's error.
    for c in cells(&r, "sb-dies") {
        for run in c["runs"].as_array().unwrap() {
            assert_eq!(run["valid"], false, "{run}");
            let why = run["invalid_reason"].as_str().unwrap_or_default();
            for t in ["alter-table", "create"] {
                assert!(why.contains(&format!("sql-bench test {t} failed")), "{why}");
            }
            assert!(why.contains("Unknown storage engine 'nosuch'"), "{why}");
        }
    }
    let report = std::fs::read_to_string(s.out().join("report.md")).unwrap();
    assert!(
        report.contains("### sb: seconds per group"),
        "{report}\n{stderr}"
    );
    assert!(report.contains("### sb: seconds per operation"), "{report}");
    assert!(report.contains("flush0 / flush2"), "{report}");
    assert!(report.contains("Unknown storage engine"), "{report}");
    no_server_left("mariadbd", &s);
}

/// A list of tests, and `tests = "all"` (run-all-tests) with the slow tests skipped.
/// synchronous_commit off: sql-bench's autocommitted inserts and updates would each wait
/// for a WAL flush (about 60 s for test-insert --small-test here, 15 s without).
#[test]
fn postgres_small_tests() {
    let s = scratch();
    let text = experiment(
        "sql-bench-pg",
        "postgres",
        "synchronous_commit = \"off\"",
        POSTGRES,
        &[("default", "")],
        &[
            ("sb", "[\"insert\", \"alter-table\"]", "[\"--small-test\"]"),
            (
                "sb-all",
                "\"all\"",
                "[\"--small-test\", \"--skip-test=ATIS,big-tables,insert,select,table-elimination,transactions,wisconsin\"]",
            ),
        ],
    );
    let file = s.write("sb.toml", &text);
    assert_ok(&s.run_cmd(&file).output().unwrap());
    let r = s.results();
    check_timed(&r, "sb", &["insert", "alter-table"]);
    // run-all-tests: each test's output file read, the skipped ones left out.
    check_timed(&r, "sb-all", &["alter-table", "connect", "create"]);
    let report = std::fs::read_to_string(s.out().join("report.md")).unwrap();
    assert!(report.contains("### sb: seconds per operation"), "{report}");
    no_server_left("postgres", &s);
}
