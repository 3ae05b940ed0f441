//! End-to-end on real SQL servers: `bakeoff run` with Debian's MariaDB and PostgreSQL
//! binaries, the native oltp workload (a sweep to 256 connections) and the real sysbench
//! in one experiment, server options, and the errors a user meets first.

mod common;

use bakeoff_testkit::paths::{MARIADBD, POSTGRES};
use common::{
    build, items, no_server_left, postgres_debian, short_point_select, sql_scratch as scratch,
};
use serde_json::Value;

fn cells<'a>(r: &'a Value, workload: &str) -> Vec<&'a Value> {
    items(&r["cells"], "workload", workload)
}

/// Every run of the workload's cells is valid and did transactions; returns qps/tps per run.
fn check_runs(r: &Value, workload: &str) -> Vec<f64> {
    let cs = cells(r, workload);
    assert!(!cs.is_empty(), "no cells for {workload}");
    let mut per_txn = Vec::new();
    for c in cs {
        for run in c["runs"].as_array().unwrap() {
            assert_eq!(run["valid"], true, "{workload}: {run}");
            common::assert_loopback_only(run);
            let tps = run["tps"].as_f64().unwrap();
            assert!(tps > 0.0, "{run}");
            assert!(
                run["client_cpu_us_per_txn"].as_f64().unwrap() > 0.0,
                "{run}"
            );
            per_txn.push(run["qps"].as_f64().unwrap() / tps);
        }
    }
    per_txn
}

#[test]
fn mariadb_oltp_sweep_options_and_sysbench() {
    let s = scratch();
    let file = s.write(
        "mariadb.toml",
        &format!(
            r#"name = "mariadb-e2e"
[target]
kind = "mariadb"
options = {{ innodb_buffer_pool_size = "64M", innodb_log_file_size = "48M" }}

[[variant]]
name = "default"
binary = "{MARIADBD}"

[[variant]]
name = "small-cache"
binary = "{MARIADBD}"
options = {{ table_open_cache = 64 }}

[[workload]]
kind = "oltp"
name = "ro"
test = "oltp_read_only"
tables = 2
table_size = 2000
connections = [1, 256]
client_threads = 1

[[workload]]
kind = "sysbench"
name = "sb-ro"
test = "oltp_read_only"
tables = 2
table_size = 2000
connections = [4]

[plan]
# One round: every assertion is about each run (validity, queries per transaction, the
# client's size, the options, the data load), none compares rounds. 256 connections
# move in waves (every transaction in flight at once ends at about the same time); on a
# loaded machine a wave took over a second, and a 1 s window between two waves saw no
# transaction end: the window is 3 s.
repetitions = 1
warmup = "2s"
duration = "3s"
"#
        ),
    );
    let out = s.run_cmd(&file).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let r = s.results();
    // oltp_read_only: 10 point selects + 4 ranges + BEGIN + COMMIT, as sysbench counts.
    for q in check_runs(&r, "ro") {
        assert!((q - 16.0).abs() < 0.5, "queries per transaction {q}");
    }
    for q in check_runs(&r, "sb-ro") {
        assert!(
            (q - 16.0).abs() < 0.5,
            "sysbench queries per transaction {q}"
        );
    }
    // 256 connections are tasks on one client thread: the client stays small.
    for c in cells(&r, "ro").iter().filter(|c| c["connections"] == 256) {
        for run in c["runs"].as_array().unwrap() {
            let rss = run["client_rss_kib"].as_u64().unwrap();
            assert!(rss > 0 && rss < 100 * 1024, "client RSS {rss} KiB");
        }
    }
    let v = &r["variants"][1];
    assert_eq!(v["options"]["table_open_cache"], "64", "{v}");
    assert_eq!(v["options"]["innodb_buffer_pool_size"], "64M", "{v}");
    assert_eq!(v["options"]["max_connections"], "272", "{v}");
    let data = v["data"].as_array().unwrap();
    assert_eq!(data.len(), 1, "both workloads share one data load: {v}");
    assert_eq!(data[0]["rows"], 4000);
    assert_eq!(
        data[0]["reused_from"], "default",
        "same server version: the load is copied: {v}"
    );
    let report = std::fs::read_to_string(s.out().join("report.md")).unwrap();
    assert!(report.contains("## Throughput by connections"), "{report}");
    assert!(report.contains("### ro: TPS by connections"), "{report}");
    no_server_left("mariadbd", &s);
}

/// Held by the tests whose figures a PostgreSQL build beside them would starve: on two
/// cores a cold build of two compilers' PostgreSQL left a 2 s window with no transaction.
static NOT_BESIDE_A_BUILD: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn postgres_oltp_and_sysbench() {
    let _alone = NOT_BESIDE_A_BUILD.lock().unwrap_or_else(|p| p.into_inner());
    let s = scratch();
    let file = s.write(
        "pg.toml",
        &format!(
            r#"name = "pg-e2e"
[target]
kind = "postgres"
options = {{ shared_buffers = "64MB", synchronous_commit = "off" }}

[[variant]]
name = "debian"
binary = "{POSTGRES}"

[[workload]]
kind = "oltp"
name = "rw"
test = "oltp_read_write"
tables = 2
table_size = 2000
connections = [4]

[[workload]]
kind = "sysbench"
name = "sb-rw"
test = "oltp_read_write"
tables = 2
table_size = 2000
connections = [4]

[[workload]]
kind = "oltp"
name = "rw-unix"
test = "oltp_read_write"
tables = 2
table_size = 2000
connections = [4]
transport = "unix"

[[workload]]
kind = "sysbench"
name = "sb-unix"
test = "oltp_read_write"
tables = 2
table_size = 2000
connections = [4]
transport = "unix"

[plan]
# One round: every assertion is about each run, none compares rounds.
repetitions = 1
warmup = "500ms"
duration = "1s"
"#
        ),
    );
    let out = s.run_cmd(&file).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let r = s.results();
    // oltp_read_write: 14 reads, 4 writes, BEGIN and COMMIT.
    for q in check_runs(&r, "rw") {
        assert!((q - 20.0).abs() < 0.5, "queries per transaction {q}");
    }
    check_runs(&r, "sb-rw");
    // The same over the server's unix socket, for bakeoff's client and for sysbench.
    for q in check_runs(&r, "rw-unix") {
        assert!((q - 20.0).abs() < 0.5, "queries per transaction {q}");
    }
    check_runs(&r, "sb-unix");
    assert_eq!(r["variants"][0]["options"]["shared_buffers"], "64MB");
    no_server_left("postgres", &s);
}

#[test]
fn sql_bad_input_and_server_refusals() {
    let s = scratch();
    // max_connections below the sweep: exit 2 before anything runs, pointing at the key.
    let low = s.write(
        "low.toml",
        &format!(
            "name = \"low\"\n[target]\nkind = \"mariadb\"\noptions = {{ max_connections = 50 }}\n\
             [[variant]]\nname = \"a\"\nbinary = \"{MARIADBD}\"\n\
             [[workload]]\nkind = \"oltp\"\nconnections = [64]\n"
        ),
    );
    let out = s.run_cmd(&low).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("low.toml:4:"), "{stderr}");
    assert!(
        stderr.contains("max_connections = 50 is lower than the sweep"),
        "{stderr}"
    );

    // An option the server does not know: that variant fails naming it; the others run,
    // the exit status stays 0 and the failure is the output's first line (issue 49).
    let typo = |extra: &str| {
        format!(
            "name = \"unknown\"\n[target]\nkind = \"postgres\"\n\
             [[variant]]\nname = \"good\"\nbinary = \"{POSTGRES}\"\n\
             [[variant]]\nname = \"typo\"\nbinary = \"{POSTGRES}\"\noptions = {{ shared_bufers = \"64MB\" }}\n{extra}\
             [[workload]]\nkind = \"oltp\"\ntest = \"oltp_point_select\"\ntable_size = 500\nconnections = [2]\n\
             [plan]\nrepetitions = 1\nwarmup = \"0s\"\nduration = \"1s\"\n"
        )
    };
    let unknown = s.write(
        "unknown.toml",
        &typo(&format!(
            "[[variant]]\nname = \"good2\"\nbinary = \"{POSTGRES}\"\n"
        )),
    );
    let stdout = common::assert_ok(&s.run_cmd(&unknown).output().unwrap());
    assert!(
        stdout.starts_with("FAILED: typo failed, so it was not compared with good:"),
        "{stdout}"
    );
    let r = s.results();
    assert_eq!(r["variants"][1]["status"], "failed");
    let err = r["variants"][1]["error"].as_str().unwrap();
    assert!(err.contains("shared_bufers"), "{err}");
    assert_eq!(r["variants"][0]["status"], "ok");
    let md = std::fs::read_to_string(s.out().join("report.md")).unwrap();
    let failed_at = md
        .find("FAILED: typo failed")
        .expect("the failure in report.md");
    assert!(
        md.find('|').is_none_or(|table| failed_at < table),
        "the failure comes before any table: {md}"
    );
    // `--fail-on` counts a failed variant as a failure.
    let out = s
        .command("run", &unknown, &s.path().join("out-fail-on"))
        .arg("--fail-on")
        .arg("slower")
        .output()
        .unwrap();
    common::assert_exit(&out, 3);

    // The only variant compared with the baseline failed: no comparison was made, and the
    // exit status says so.
    let alone = s.write("alone.toml", &typo(""));
    let out = s
        .command("run", &alone, &s.path().join("out-alone"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(5), "{stderr}");
    assert!(
        stderr.contains("no comparison could be made: typo failed"),
        "{stderr}"
    );
    no_server_left("postgres", &s);
}

/// PostgreSQL 15 built from Debian's source with two compilers (at -O0, to keep a clean
/// machine's run short; the build cache is the user's default one, shared with the build
/// crate's test), then measured: the built servers run as the unprivileged user.
#[test]
fn postgres_built_with_two_compilers_runs_oltp() {
    let _alone = NOT_BESIDE_A_BUILD.lock().unwrap_or_else(|p| p.into_inner());
    let s = scratch();
    let file = s.write(
        "pgbuild.toml",
        &(postgres_debian("pg-build-e2e")
            + &build("gcc", "gcc-12", "-O0", "")
            + &build("clang", "clang-16", "-O0", "")
            + &short_point_select("")),
    );
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_bakeoff"))
        .arg("run")
        .arg(&file)
        .arg("--out")
        .arg(s.out())
        .arg("--sandbox-dir")
        .arg(s.sandboxes())
        .arg("--quiet")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let r = s.results();
    for v in r["variants"].as_array().unwrap() {
        assert_eq!(v["status"], "ok", "{v}");
        assert_eq!(v["build"]["kind"], "build", "{v}");
    }
    assert!(r["variants"][1]["build"]["compiler_version"]
        .as_str()
        .unwrap()
        .contains("clang"));
    check_runs(&r, "oltp");
    no_server_left("postgres", &s);
}

/// A MariaDB server killed mid-run: that run is invalid with the reason, the next round
/// runs on a fresh sandbox, the experiment finishes.
#[test]
fn sql_server_killed_mid_run_marks_only_that_run_invalid() {
    let s = scratch();
    let file = s.write(
        "killed.toml",
        &common::mariadb_point_select(
            "killed",
            "victim",
            500,
            "max_reconnects = 0\n",
            "repetitions = 2\nwarmup = \"0s\"\nduration = \"4s\"\n",
        ),
    );
    let mut child = s.run_cmd(&file).spawn().unwrap();
    // The first measured sandbox (not the data-loading one): kill its server once.
    let found = common::measured_server("mariadbd", &s, 120.0);
    if let Some(pid) = found {
        std::thread::sleep(std::time::Duration::from_millis(1500));
        let _ = std::process::Command::new("kill")
            .args(["-9", &pid.to_string()])
            .status();
    }
    let status = child.wait().unwrap();
    assert!(found.is_some(), "no measured mariadbd appeared");
    assert!(status.success(), "bakeoff exited with {status}");
    let r = s.results();
    let runs = r["cells"][0]["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2, "{runs:?}");
    let invalid: Vec<&Value> = runs.iter().filter(|x| x["valid"] == false).collect();
    assert_eq!(invalid.len(), 1, "{runs:?}");
    let reason = invalid[0]["invalid_reason"].as_str().unwrap();
    assert!(
        reason.contains("lost") || reason.contains("exited") || reason.contains("closed"),
        "{reason}"
    );
    no_server_left("mariadbd", &s);
}
