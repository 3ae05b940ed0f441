//! End-to-end SQLite: the bundled amalgamation built twice (gcc and clang) beside Debian's
//! installed libsqlite3, each hosted by bakeoff-sqlited; the sql-bench-style suite and a
//! replay of a shipped file at two concurrencies on all three, with every variant's
//! results verified equal (the suite's own statements are the default query set); and a
//! build made wrong on purpose (`-DSQLITE_CASE_SENSITIVE_LIKE`) failing `bakeoff verify`,
//! naming the query.

mod common;

use common::{no_server_left, sql_scratch as scratch};
use serde_json::Value;

const SYSTEM_LIB: &str = "/usr/lib/x86_64-linux-gnu/libsqlite3.so.0";
const HOST: &str = "bakeoff-sqlited";

const SETUP: &str = include_str!("../../../examples/shop/setup.sql");
const QUERIES: &str = include_str!("../../../examples/shop/queries.sql");

/// Builds at -O0, shared through the test cache with the other tests here (tune.rs, the
/// examples): the amalgamation is one 9 MB C file, and at -O1 a build took 56 s (gcc-12)
/// and 108 s (clang-16) in CI beside the other tests; at -O0, about 20 s.
fn variant(name: &str, compiler: &str, extra: &str) -> String {
    format!(
        "\n[[variant]]\nname = \"{name}\"\ncompiler = \"{compiler}\"\ncflags = \"-O0\"\n{extra}"
    )
}

fn experiment(body: &str, workloads: &str) -> String {
    format!(
        "name = \"sqlite\"\n[target]\nkind = \"sqlite\"\noptions = {{ synchronous = \"off\" }}\n{body}\n{workloads}\n[plan]\nrepetitions = 1\nwarmup = \"0s\"\nduration = \"1s\"\n"
    )
}

/// A scratch folder with the shop's setup and queries, which `REPLAY` names.
fn shop() -> common::Scratch {
    let s = scratch();
    s.write("setup.sql", SETUP);
    s.write("queries.sql", QUERIES);
    s
}

const REPLAY: &str = "\n[[workload]]\nkind = \"replay\"\nname = \"shop\"\nfile = \"queries.sql\"\nsetup = \"setup.sql\"\nconcurrency = [1, 4]\niterations = 20\n";

#[test]
fn suite_and_replay_on_two_builds_and_the_installed_library() {
    let s = shop();
    let variants = format!(
        "{}{}\n[[variant]]\nname = \"debian\"\nbinary = \"{SYSTEM_LIB}\"\n",
        variant("gcc", "gcc-12", ""),
        variant("clang", "clang-16", "")
    );
    let workloads = format!("\n[[workload]]\nkind = \"sqlsuite\"\nscale = 0.01\n{REPLAY}");
    let file = s.write("exp.toml", &experiment(&variants, &workloads));
    let out = s.run_cmd(&file).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}\n{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r = s.results();
    let builds: Vec<&Value> = r["variants"].as_array().unwrap().iter().collect();
    assert_eq!(builds.len(), 3);
    for v in &r["verification"].as_array().unwrap()[..] {
        assert_eq!(v["status"], "same", "{v}");
        assert!(v["queries"].as_u64().unwrap() > 100, "{v}");
    }
    let cells = r["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 3 * 3, "sqlsuite + replay at 2 concurrencies");
    for c in cells {
        for run in c["runs"].as_array().unwrap() {
            assert_eq!(run["valid"], true, "{run}");
        }
    }
    let suite = cells
        .iter()
        .find(|c| c["variant"] == "clang" && c["workload"] == "sqlsuite")
        .unwrap();
    let ops = suite["runs"][0]["operations"].as_array().unwrap();
    for name in [
        "alter_table_add",
        "alter_table_drop",
        "connect",
        "insert",
        "once_prepared_select",
        "prepared_select",
        "select_key",
        "update_of_key",
    ] {
        let op = ops.iter().find(|o| o["name"] == name);
        let op = op.unwrap_or_else(|| panic!("{name} not timed: {ops:?}"));
        assert!(op["seconds"].as_f64().unwrap() > 0.0, "{op}");
    }
    assert!(ops.iter().filter(|o| o["group"] == "wisconsin").count() >= 20);
    assert!(suite["sqlsuite"]["groups"].as_array().unwrap().len() == 9);
    let replayed = cells
        .iter()
        .find(|c| c["variant"] == "debian" && c["workload"].as_str().unwrap().starts_with("shop"))
        .unwrap();
    let classes = replayed["runs"][0]["classes"].as_array().unwrap();
    assert!(classes.len() >= 5, "{classes:?}");
    // EXPLAIN QUERY PLAN on SQLite: the lookups use the primary key's index.
    let explains = replayed["runs"][0]["explains"].as_array().unwrap();
    assert!(
        explains
            .iter()
            .any(|e| e["plan"].as_str().unwrap_or("").contains("SEARCH item")),
        "{explains:?}"
    );
    assert!(
        stdout.contains("sqlsuite: seconds per group (baseline gcc = 1.00)"),
        "{stdout}"
    );
    no_server_left(HOST, &s);
}

#[test]
fn verify_names_the_query_a_wrong_build_answers_differently() {
    let s = shop();
    s.write(
        "like.sql",
        "SELECT name FROM item WHERE name LIKE 'b%' ORDER BY name;\nSELECT COUNT(*) FROM item WHERE name LIKE '%E%';\nSELECT SUM(qty) FROM item;\n",
    );
    let verify = "\n[verify]\nqueries = \"like.sql\"\n";
    let honest = format!(
        "{}{}",
        variant("gcc", "gcc-12", ""),
        variant("clang", "clang-16", "")
    );
    let wrong = format!(
        "{honest}{}",
        variant(
            "case-like",
            "gcc-12",
            "configure_args = [\"-DSQLITE_CASE_SENSITIVE_LIKE\"]\n"
        )
    );
    let bad_file = s.write(
        "bad.toml",
        &experiment(&wrong, &format!("{REPLAY}{verify}")),
    );
    let bad = s.verify_cmd(&bad_file, "verify-bad").output().unwrap();
    let text = String::from_utf8_lossy(&bad.stdout);
    assert_eq!(
        bad.status.code(),
        Some(1),
        "{text}\n{}",
        String::from_utf8_lossy(&bad.stderr)
    );
    assert!(
        text.contains("case-like: results differ from gcc"),
        "{text}"
    );
    assert!(text.contains("LIKE 'b%'"), "{text}");
    let good_file = s.write(
        "good.toml",
        &experiment(&honest, &format!("{REPLAY}{verify}")),
    );
    let good = s.verify_cmd(&good_file, "verify-good").output().unwrap();
    assert_eq!(
        good.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&good.stdout)
    );
    no_server_left(HOST, &s);
}

#[test]
fn workloads_sqlite_cannot_run_are_exit_status_2() {
    let s = scratch();
    let file = s.write(
        "exp.toml",
        &experiment(
            &format!("\n[[variant]]\nname = \"debian\"\nbinary = \"{SYSTEM_LIB}\"\n"),
            "\n[[workload]]\nkind = \"tpcc\"\nwarehouses = 1\n",
        ),
    );
    let err = common::one_line_2(&s.run_cmd(&file).output().unwrap());
    assert!(
        err.contains("a sqlite target runs sqlsuite and replay"),
        "{err}"
    );
}

/// Instructions counted by callgrind around bakeoff-sqlited: it runs as the suite's user
/// (root in CI) under valgrind as without it. Under valgrind it used to run as the server
/// user, who could not enter its sandbox in a 0700 scratch folder: every run was invalid.
#[test]
fn instructions_mode_counts_the_hosts_work() {
    let s = shop();
    let plan = "[plan]\nrepetitions = 1\nwarmup = \"0s\"\nops = 200\nmode = \"instructions\"\n";
    let r = s.run_clean(
        "instructions.toml",
        &format!("name = \"sqlite-instructions\"\n[target]\nkind = \"sqlite\"\n[[variant]]\nname = \"debian\"\nbinary = \"{SYSTEM_LIB}\"\n{REPLAY}{plan}"),
        HOST,
    );
    for c in r["cells"].as_array().unwrap() {
        for run in c["runs"].as_array().unwrap() {
            assert_eq!(run["valid"], true, "{run}");
            let ipo = run["instructions"]["instructions_per_op"].as_f64();
            assert!(ipo.is_some_and(|x| x > 1_000.0), "{run}");
        }
    }
}
