//! End-to-end sql-bench-style suite on real servers: MariaDB with InnoDB against MyISAM
//! (twice each, so every group and operation gets a CI and a time ratio), PostgreSQL with
//! two variants, at a small scale; every operation sql-bench users look for is timed, and
//! the suite's own statements verify the variants (MyISAM's ignored ROLLBACK shows).

mod common;

use bakeoff_testkit::paths::{MARIADBD, POSTGRES};
use common::{no_server_left, sql_scratch as scratch};
use serde_json::Value;

/// Operations the issue names; each must be timed in every run.
const NAMED: &[&str] = &[
    "alter_table_add",
    "alter_table_drop",
    "connect",
    "create_table",
    "insert",
    "insert_key",
    "count",
    "count_distinct_big",
    "count_on_key",
    "delete_all_many_keys",
    "delete_big_many_keys",
    "once_prepared_select",
    "prepared_select",
    "order_by_big",
    "order_by_big_key",
    "order_by_big_key_desc",
    "order_by_big_key_diff",
    "order_by_big_key_prefix",
    "select_big",
    "select_cache2",
    "select_key",
    "select_key2",
    "select_key2_return_key",
    "select_key2_return_prim",
    "select_key_prefix",
    "select_key_return_key",
    "update_of_key",
    "update_of_primary_key_many_keys",
];

fn check(r: &Value, repetitions: usize) {
    let groups = [
        "alter-table",
        "ATIS",
        "big-tables",
        "connect",
        "create",
        "insert",
        "select",
        "transactions",
        "wisconsin",
    ];
    for c in r["cells"].as_array().unwrap() {
        let runs = c["runs"].as_array().unwrap();
        assert_eq!(runs.len(), repetitions);
        for run in runs {
            assert_eq!(run["valid"], true, "{run}");
            let ops = run["operations"].as_array().unwrap();
            for name in NAMED {
                let op = ops.iter().find(|o| o["name"] == *name);
                let op = op.unwrap_or_else(|| panic!("{name} not timed: {ops:?}"));
                assert!(op["seconds"].as_f64().unwrap() > 0.0, "{op}");
            }
            for g in groups {
                assert!(ops.iter().any(|o| o["group"] == g), "group {g} missing");
            }
            assert!(ops.iter().filter(|o| o["group"] == "wisconsin").count() >= 20);
        }
        let suite = &c["sqlsuite"];
        assert_eq!(
            suite["groups"].as_array().unwrap().len(),
            groups.len(),
            "{suite}"
        );
    }
}

#[test]
fn mariadb_innodb_against_myisam() {
    let s = scratch();
    let file = s.write(
        "suite.toml",
        &format!(
            "name = \"sqlsuite-mariadb\"\n[target]\nkind = \"mariadb\"\noptions = {{ innodb_buffer_pool_size = \"64M\" }}\n\n[[variant]]\nname = \"innodb\"\nbinary = \"{MARIADBD}\"\nengine = \"InnoDB\"\n\n[[variant]]\nname = \"myisam\"\nbinary = \"{MARIADBD}\"\nengine = \"MyISAM\"\n\n[[workload]]\nkind = \"sqlsuite\"\nscale = 0.01\n\n[plan]\nrepetitions = 2\nwarmup = \"0s\"\n"
        ),
    );
    let out = s.run_cmd(&file).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r = s.results();
    check(&r, 2);
    let my = r["cells"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["variant"] == "myisam")
        .unwrap();
    let insert = my["sqlsuite"]["groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["group"] == "insert")
        .unwrap();
    assert!(
        insert["vs_baseline"]["ratio"].as_f64().unwrap() > 0.0,
        "{insert}"
    );
    assert!(
        stdout.contains("sqlsuite: seconds per group (baseline innodb = 1.00)"),
        "{stdout}"
    );
    // The suite's statements are the default verification set: MyISAM ignores ROLLBACK,
    // so what the transactions group leaves in its table differs, and that is said.
    let verdicts = r["verification"].as_array().unwrap();
    let myisam = verdicts.iter().find(|v| v["variant"] == "myisam").unwrap();
    assert_eq!(myisam["status"], "different", "{myisam}");
    let diffs = myisam["differences"].as_array().unwrap();
    assert!(
        diffs
            .iter()
            .any(|d| d["query"] == "[transactions/after the group] SELECT * FROM sb_trans"),
        "{diffs:?}"
    );
    let report = std::fs::read_to_string(s.out().join("report.md")).unwrap();
    assert!(report.contains("## SQL suite\n"), "{report}");
    assert!(
        report.contains("### sqlsuite: seconds per group"),
        "{report}"
    );
    assert!(report.contains("seconds per operation"), "{report}");
    no_server_left("mariadbd", &s);
}

#[test]
fn postgres_two_variants() {
    let s = scratch();
    let file = s.write(
        "suite.toml",
        &format!(
            "name = \"sqlsuite-pg\"\n[target]\nkind = \"postgres\"\n\n[[variant]]\nname = \"default\"\nbinary = \"{POSTGRES}\"\n\n[[variant]]\nname = \"async\"\nbinary = \"{POSTGRES}\"\noptions = {{ synchronous_commit = \"off\" }}\n\n[[workload]]\nkind = \"sqlsuite\"\nscale = 0.01\n\n[plan]\nrepetitions = 1\nwarmup = \"0s\"\n"
        ),
    );
    let out = s.run_cmd(&file).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r = s.results();
    check(&r, 1);
    for v in r["verification"].as_array().unwrap() {
        assert_eq!(v["status"], "same", "{v}");
    }
    no_server_left("postgres", &s);
}
