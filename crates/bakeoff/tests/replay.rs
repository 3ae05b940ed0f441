//! End-to-end query-log replay and result verification on real servers: a .sql file
//! replayed at two concurrencies (and the same file through Debian's mariadb-slap), the
//! heaviest classes explained, and `[verify]` passing for two honest variants while a
//! variant whose option changes results (div_precision_increment) fails, naming the query;
//! `bakeoff verify` says the same with its exit status; bad files are exit status 2.

mod common;

use bakeoff_testkit::paths::{MARIADBD, POSTGRES};
use common::{assert_ok, item, no_server_left, one_line_2, sql_scratch as scratch};
use serde_json::Value;

const SETUP: &str =
    "CREATE TABLE item (id INT PRIMARY KEY, name VARCHAR(40), price DECIMAL(10,2), qty INT);
INSERT INTO item VALUES (1, 'apple', 1.20, 10), (2, 'Banana', 0.55, 7), (3, 'cherry', 3.10, 3),
  (4, 'date', 2.00, 12), (5, 'Elder', 9.99, 1), (6, 'fig', 4.25, 6);
CREATE TABLE sale (id INT PRIMARY KEY, item_id INT, n INT);
INSERT INTO sale VALUES (1, 1, 2), (2, 1, 1), (3, 2, 5), (4, 4, 1), (5, 6, 3), (6, 3, 2);
";

const QUERIES: &str = "-- what the shop asks most
SELECT name, price FROM item WHERE id = 3;
SELECT name, price FROM item WHERE id = 5;
SELECT AVG(price) FROM item;
SELECT SUM(qty) / 7 FROM item;
SELECT i.name, SUM(s.n) AS sold FROM item i JOIN sale s ON s.item_id = i.id GROUP BY i.name ORDER BY sold DESC, i.name;
SELECT name FROM item WHERE price > 2.00 ORDER BY name;
UPDATE item SET qty = qty + 1 WHERE id = 2;
SELECT qty FROM item WHERE id = 2;
";

fn mariadb_experiment(with_wrong: bool, slap: bool) -> String {
    let mut t = format!(
        "name = \"replay-mariadb\"\n[target]\nkind = \"mariadb\"\noptions = {{ innodb_buffer_pool_size = \"64M\" }}\n\n[[variant]]\nname = \"honest\"\nbinary = \"{MARIADBD}\"\n\n[[variant]]\nname = \"small-cache\"\nbinary = \"{MARIADBD}\"\noptions = {{ table_open_cache = 64 }}\n"
    );
    if with_wrong {
        t.push_str(&format!(
            "\n[[variant]]\nname = \"wrong\"\nbinary = \"{MARIADBD}\"\noptions = {{ div_precision_increment = 1 }}\n"
        ));
    }
    t.push_str(
        "\n[[workload]]\nkind = \"replay\"\nname = \"shop\"\nfile = \"queries.sql\"\nsetup = \"setup.sql\"\nconcurrency = [1, 4]\niterations = 3\n",
    );
    if slap {
        t.push_str("\n[[workload]]\nkind = \"mysqlslap\"\nname = \"slap\"\nfile = \"queries.sql\"\nsetup = \"setup.sql\"\nconcurrency = [2]\niterations = 2\n");
    }
    t.push_str("\n[plan]\nrepetitions = 1\nwarmup = \"0s\"\nduration = \"1s\"\n");
    t
}

#[test]
fn mariadb_replay_slap_and_verify() {
    let s = scratch();
    s.write("setup.sql", SETUP);
    s.write("queries.sql", QUERIES);
    let file = s.write("exp.toml", &mariadb_experiment(true, true));
    let stdout = assert_ok(&s.run_cmd(&file).output().unwrap());
    // The difference is the first thing the terminal says.
    assert!(
        stdout.starts_with("warning: VERIFY FAILED: variant wrong"),
        "{stdout}"
    );
    let r = s.results();
    let verdict = |v: &str| item(&r["verification"], "variant", v).clone();
    assert_eq!(
        verdict("small-cache")["status"],
        "same",
        "{}",
        r["verification"]
    );
    let wrong = verdict("wrong");
    assert_eq!(wrong["status"], "different", "{wrong}");
    let first = &wrong["differences"][0];
    assert!(
        first["query"].as_str().unwrap().contains("AVG(price)"),
        "{first}"
    );
    assert_ne!(first["hash"], first["baseline_hash"]);
    assert!(!first["rows"].as_array().unwrap().is_empty(), "{first}");
    // Replay runs: every statement of every connection and iteration, per class.
    let statements = 8.0;
    for c in r["cells"].as_array().unwrap() {
        let conns = c["connections"].as_f64().unwrap();
        for run in c["runs"].as_array().unwrap() {
            assert_eq!(run["valid"], true, "{run}");
            if c["workload"] == "shop" {
                assert_eq!(
                    run["ops"].as_f64().unwrap(),
                    statements * conns * 3.0,
                    "{run}"
                );
                let classes = run["classes"].as_array().unwrap();
                // id = 3 and id = 5 are one class.
                assert_eq!(classes.len(), 7, "{classes:?}");
                let counted: u64 = classes.iter().map(|k| k["count"].as_u64().unwrap()).sum();
                assert_eq!(counted as f64, statements * conns * 3.0);
                assert_eq!(run["errors"], 0, "{run}");
            } else {
                assert!(run["ops_per_s"].as_f64().unwrap() > 0.0, "mysqlslap: {run}");
            }
        }
    }
    let explained = r["cells"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| c["runs"].as_array().unwrap().iter())
        .any(|run| {
            run["explains"]
                .as_array()
                .is_some_and(|e| e.iter().any(|x| !x["plan"].as_str().unwrap().is_empty()))
        });
    assert!(explained, "no EXPLAIN captured");
    let report = std::fs::read_to_string(s.out().join("report.md")).unwrap();
    assert!(report.contains("## Result verification"), "{report}");
    assert!(report.contains("## Replayed statement classes"), "{report}");

    // bakeoff verify: exit 1 with the wrong variant, 0 without it.
    let verify = |name: &str, text: &str, out: &str| {
        let f = s.write(name, text);
        s.verify_cmd(&f, out).output().unwrap()
    };
    let bad = verify("v1.toml", &mariadb_experiment(true, false), "verify-bad");
    let text = String::from_utf8_lossy(&bad.stdout);
    assert_eq!(bad.status.code(), Some(1), "{text}");
    assert!(text.contains("wrong: results differ from honest"), "{text}");
    assert!(text.contains("AVG(price)"), "{text}");
    let good = verify("v2.toml", &mariadb_experiment(false, false), "verify-good");
    assert_eq!(
        good.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&good.stderr)
    );
    no_server_left("mariadbd", &s);
}

#[test]
fn postgres_replay_at_two_concurrencies() {
    let s = scratch();
    s.write("setup.sql", SETUP);
    s.write("queries.sql", QUERIES);
    let file = s.write(
        "pg.toml",
        &format!(
            "name = \"replay-pg\"\n[target]\nkind = \"postgres\"\n\n[[variant]]\nname = \"a\"\nbinary = \"{POSTGRES}\"\n\n[[variant]]\nname = \"b\"\nbinary = \"{POSTGRES}\"\noptions = {{ work_mem = \"8MB\" }}\n\n[[workload]]\nkind = \"replay\"\nfile = \"queries.sql\"\nsetup = \"setup.sql\"\nconcurrency = [1, 3]\niterations = 2\n\n[plan]\nrepetitions = 1\nwarmup = \"0s\"\n"
        ),
    );
    let out = s.run_cmd(&file).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: Value = s.results();
    for v in r["verification"].as_array().unwrap() {
        assert_eq!(v["status"], "same", "{v}");
        assert!(v["queries"].as_u64().unwrap() >= 8, "{v}");
    }
    for c in r["cells"].as_array().unwrap() {
        for run in c["runs"].as_array().unwrap() {
            assert_eq!(run["valid"], true, "{run}");
            assert!(
                run.get("tps").is_none(),
                "a replay counts statements: {run}"
            );
            assert!(run["qps"].as_f64().unwrap() > 0.0);
        }
    }
    no_server_left("postgres", &s);
}

#[test]
fn bad_replay_files_are_exit_status_2() {
    let s = scratch();
    s.write("setup.sql", SETUP);
    s.write(
        "queries.sql",
        "SELECT 1;\nSELECT name FROM item\n  WHERE name = 'unclosed;\nSELECT 2;\n",
    );
    let file = s.write("exp.toml", &mariadb_experiment(false, false));
    let err = one_line_2(&s.run_cmd(&file).output().unwrap());
    assert!(
        err.contains("queries.sql: line 3: unterminated string"),
        "{err}"
    );

    s.write(
        "queries.sql",
        "# Time: 2026-11-23T10:00:00.000000Z\n# User@Host: root[root] @ localhost []\n# Query_time: 0.000123  Lock_time: 0.000000 Rows_sent: 1  Rows_examined: 0\nSET timestamp=1;\nSELECT 1;\n",
    );
    let out = s.run_cmd(&file).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("MariaDB general query log"), "{stderr}");
    assert!(stderr.contains("PostgreSQL csvlog"), "{stderr}");
}
