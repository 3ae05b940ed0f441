//! End-to-end sql-bench-style suite on real servers: MariaDB with InnoDB against MyISAM
//! (twice each, so every group and operation gets a CI and a time ratio), PostgreSQL with
//! two variants, at a small scale; every operation sql-bench users look for is timed, and
//! the suite's own statements verify the variants (MyISAM's ignored ROLLBACK shows).

mod common;

use bakeoff_testkit::paths::{MARIADBD, POSTGRES};
use common::{assert_ok, item, no_server_left, sql_scratch as scratch, Scratch};
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

/// The suite at scale 0.01 on `kind`, `target` (whole lines) under its `[target]`, two
/// variants of the installed `binary`, each with its own lines, and `repetitions` rounds.
fn experiment(
    name: &str,
    kind: &str,
    target: &str,
    binary: &str,
    variants: [(&str, &str); 2],
    repetitions: usize,
) -> String {
    let mut text = format!("name = \"{name}\"\n[target]\nkind = \"{kind}\"\n{target}");
    for (variant, lines) in variants {
        text += &format!("\n[[variant]]\nname = \"{variant}\"\nbinary = \"{binary}\"\n{lines}");
    }
    text + &format!("\n[[workload]]\nkind = \"sqlsuite\"\nscale = 0.01\n\n[plan]\nrepetitions = {repetitions}\nwarmup = \"0s\"\n")
}

/// Runs `text` (as suite.toml): bakeoff succeeded, no `server` outlived it, and every
/// cell passes [`check`] with `repetitions` runs; results.json and stdout.
fn run_suite(s: &Scratch, text: &str, repetitions: usize, server: &str) -> (Value, String) {
    let file = s.write("suite.toml", text);
    let out = s.run_cmd(&file).output().unwrap();
    no_server_left(server, s);
    let stdout = assert_ok(&out);
    let r = s.results();
    check(&r, repetitions);
    (r, stdout)
}

#[test]
fn mariadb_innodb_against_myisam() {
    let s = scratch();
    let text = experiment(
        "sqlsuite-mariadb",
        "mariadb",
        "options = { innodb_buffer_pool_size = \"64M\" }\n",
        MARIADBD,
        [
            ("innodb", "engine = \"InnoDB\"\n"),
            ("myisam", "engine = \"MyISAM\"\n"),
        ],
        2,
    );
    let (r, stdout) = run_suite(&s, &text, 2, "mariadbd");
    let my = item(&r["cells"], "variant", "myisam");
    let insert = item(&my["sqlsuite"]["groups"], "group", "insert");
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
    let myisam = item(&r["verification"], "variant", "myisam");
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
}

#[test]
fn postgres_two_variants() {
    let s = scratch();
    let text = experiment(
        "sqlsuite-pg",
        "postgres",
        "",
        POSTGRES,
        [
            ("default", ""),
            ("async", "options = { synchronous_commit = \"off\" }\n"),
        ],
        1,
    );
    let (r, _) = run_suite(&s, &text, 1, "postgres");
    for v in r["verification"].as_array().unwrap() {
        assert_eq!(v["status"], "same", "{v}");
    }
}
