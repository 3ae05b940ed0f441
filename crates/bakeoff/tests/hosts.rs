//! Other hosts over ssh, against real sshd instances the test starts on 127.0.0.2 and
//! 127.0.0.3 (their own host keys, an authorized test key, stopped at the end even when
//! the test fails): `bakeoff check` reaches a declared host and prints its facts; a host
//! whose sshd is gone, a host name nobody declared and a server the load cannot reach
//! are one line and exit 2. Then real experiments: the server on one host and the load
//! from two, kill -9 of bakeoff with a server on a host, and a host lost mid-run.

mod common;

use common::Scratch;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::sshd::{descendants, Sshd};

/// Live servers (memcached, redis, PostgreSQL, MariaDB) whose working directory is under
/// `dir`.
fn servers_under(dir: &Path) -> Vec<u32> {
    [
        "memcached",
        "redis-server",
        "redis-check-rdb",
        "postgres",
        "mariadbd",
    ]
    .into_iter()
    .flat_map(common::pids_named)
    .filter(|pid| std::fs::read_link(format!("/proc/{pid}/cwd")).is_ok_and(|c| c.starts_with(dir)))
    .collect()
}

/// Whether a measured run's server runs under `dir` (not the start tried before runs).
fn measuring_under(dir: &Path) -> bool {
    servers_under(dir).iter().any(|pid| {
        std::fs::read_link(format!("/proc/{pid}/cwd"))
            .is_ok_and(|c| !c.display().to_string().contains("-try"))
    })
}

const EXPERIMENT: &str = r#"name = "hosts-e2e"
[target]
kind = "memcached"
HOST_LINE

[[variant]]
name = "installed"
binary = "/usr/bin/memcached"

[[workload]]
kind = "kv"
connections = [4]

[plan]
repetitions = 1
"#;

fn bakeoff(args: &[&str], file: &Path) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_bakeoff"))
        .args(args)
        .arg(file)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).to_string(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

#[test]
fn hosts_are_reached_over_ssh_before_anything_runs() {
    let s = Scratch::new();
    let sshd = Sshd::start(s.path(), "127.0.0.2");
    let text = EXPERIMENT.replace("HOST_LINE", "host = \"db\"");
    let f = s.write(
        "hosts.toml",
        &(text.clone() + &sshd.host("db", s.path(), Some("127.0.0.2"))),
    );

    let (code, out, err) = bakeoff(&["check"], &f);
    assert_eq!(code, Some(0), "{out}{err}");
    let line = out
        .lines()
        .find(|l| l.starts_with("host db: "))
        .unwrap_or_else(|| panic!("no host line: {out}"));
    let cores = std::thread::available_parallelism().unwrap().get();
    assert!(line.contains(&format!("{cores} cores")), "{line}");
    assert!(line.contains("Linux"), "{line}");

    // Served there on loopback while the load is here: the load could not reach it.
    let unreachable = s.write("loopback.toml", &(text + &sshd.host("db", s.path(), None)));
    let (code, _, err) = bakeoff(&["run", "--out", s.out().to_str().unwrap()], &unreachable);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("loopback.toml:16:")
            && err.contains("listens on 127.0.0.1 only")
            && err.contains("listen = "),
        "{err}"
    );
    assert!(!s.out().join("results.json").exists());

    // A host that answers but where bakeoff cannot go: one line at its table, exit 2.
    let nowhere = s.write(
        "nowhere.toml",
        &(EXPERIMENT
            .replace("HOST_LINE", "host = \"db\"")
            .replace("connections = [4]", "connections = [4]\nclients = [\"db\"]")
            + &sshd
                .host("db", Path::new("/proc/no-such-dir"), None)
                .replace("/proc/no-such-dir/db", "/proc/no-such-dir")),
    );
    let (code, _, err) = bakeoff(&["run", "--out", s.out().to_str().unwrap()], &nowhere);
    assert_eq!(code, Some(2), "{err}");
    let line = err.lines().last().unwrap_or_default();
    assert!(
        line.contains("nowhere.toml:")
            && line.contains("host db: copying bakeoff there failed")
            && line.contains("/proc/no-such-dir"),
        "{err}"
    );

    // The host's sshd gone: one line naming the host and what ssh said.
    sshd.stop();
    let (code, _, err) = bakeoff(&["check"], &f);
    assert_eq!(code, Some(2), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("host db (")
            && err.contains("does not answer: ssh said:")
            && err.contains("refused"),
        "{err}"
    );

    // A host nobody declared.
    let bad = s.write(
        "unknown.toml",
        &EXPERIMENT.replace("HOST_LINE", "host = \"nowhere\""),
    );
    let (code, _, err) = bakeoff(&["check"], &bad);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("unknown.toml:4:") && err.contains("no [[host]] named \"nowhere\""),
        "{err}"
    );
}

/// The server on "db" (127.0.0.2, listening there), the load from "db" and from "l1"
/// (127.0.0.3): a built memcached copied there and an installed one.
fn placed(s: &Scratch, db: &Sshd, l1: &Sshd, measure: &str, repetitions: usize) -> PathBuf {
    let work = s.path().join("hosts");
    let text = format!(
        r#"name = "hosts-placed"
[target]
kind = "memcached"
source = {{ debian = "memcached" }}
host = "db"

[[variant]]
name = "gcc-O2"
compiler = "gcc-12"
cflags = "-O2"

[[variant]]
name = "installed"
binary = "/usr/bin/memcached"

[[workload]]
kind = "kv"
connections = [5]
mix = {{ get = 9, set = 1 }}
keys = 2000
clients = ["db", "l1"]

[plan]
repetitions = {repetitions}
warmup = "300ms"
duration = "{measure}"

[measure]
interval = "250ms"

{}{}"#,
        db.host("db", &work, Some("127.0.0.2")),
        l1.host("l1", &work, None)
    );
    s.write("placed.toml", &text)
}

#[test]
fn the_server_on_one_host_and_the_load_from_two() {
    let s = Scratch::new();
    let db = Sshd::start(s.path(), "127.0.0.2");
    let l1 = Sshd::start(s.path(), "127.0.0.3");
    let r = run_ok(&s, &placed(&s, &db, &l1, "1s", 2));
    assert_eq!(r["status"], "complete");
    let hosts = r["hosts"].as_array().unwrap();
    assert_eq!(hosts.len(), 2);
    assert_eq!(hosts[0]["roles"], serde_json::json!(["server", "load"]));
    assert_eq!(hosts[1]["roles"], serde_json::json!(["load"]));
    assert!(hosts[0]["cores"].as_u64().unwrap() > 0);
    // Kept as set, said loudly only when not loopback: 127.0.0.2 is loopback.
    assert_eq!(hosts[0]["listen"], "127.0.0.2");
    assert!(hosts[1].get("listen").is_none());
    assert!(!r["warnings"].to_string().contains("not on loopback"));
    // Each host's machine facts, read by its agent about its own sandbox folder: the
    // same machine as this one here (sshd on loopback), another folder.
    let here = &r["host"]["machine"];
    assert!(here["threads"].as_u64().unwrap() > 0, "{here}");
    for (h, name) in hosts.iter().zip(["db", "l1"]) {
        let m = &h["machine"];
        assert_eq!(m["threads"], here["threads"], "{m}");
        assert_eq!(m["memory_bytes"], here["memory_bytes"], "{m}");
        assert_eq!(m["kernel"], here["kernel"], "{m}");
        let dir = m["data_dir"].as_str().unwrap();
        assert!(
            dir.starts_with(s.path().join("hosts").join(name).to_str().unwrap())
                && dir.ends_with("sandboxes"),
            "{dir}"
        );
    }

    let mut runs = 0;
    for cell in r["cells"].as_array().unwrap() {
        for run in cell["runs"].as_array().unwrap() {
            runs += 1;
            assert_eq!(run["valid"], true, "{run}");
            assert_eq!(run["server_host"], "db");
            assert_eq!(run["verify_failures"], 0);
            let clients = run["clients"].as_array().unwrap();
            let hosts: Vec<&str> = clients
                .iter()
                .map(|c| c["host"].as_str().unwrap())
                .collect();
            assert_eq!(hosts, ["db", "l1"]);
            // 5 connections: 3 from the first host, 2 from the second.
            let conns: Vec<u64> = clients
                .iter()
                .map(|c| c["connections"].as_u64().unwrap())
                .collect();
            assert_eq!(conns, [3, 2]);
            // The run's throughput is the hosts' sum; its latency comes from both.
            let sum: f64 = clients
                .iter()
                .map(|c| c["ops_per_s"].as_f64().unwrap())
                .sum();
            let total = run["ops_per_s"].as_f64().unwrap();
            assert!((sum - total).abs() <= 1e-6 * total, "{sum} vs {total}");
            assert!(clients
                .iter()
                .all(|c| c["ops_per_s"].as_f64().unwrap() > 0.0));
            // Each host's window, interval by interval: its throughput and its CPU.
            for c in clients {
                assert!(
                    !c["interval_ops_per_s"].as_array().unwrap().is_empty(),
                    "{c}"
                );
                assert!(!c["cpu_series"].as_array().unwrap().is_empty(), "{c}");
            }
            assert!(run["latency_us"]["p50"].as_f64().unwrap() > 0.0);
            // Who else ran on the server's host, read there by its agent: the figures a
            // machine-busy verdict is decided from.
            assert!(run["others_cpu_pct"].as_f64().is_some(), "{run}");
            assert!(run["machine_cpus"].as_u64().is_some_and(|n| n > 0), "{run}");
            // The server's CPU came from its host's agent, and so did the system's
            // figures (sampled there).
            assert!(run["server_cpu_s"].as_f64().unwrap() > 0.0, "{run}");
            assert!(run["system"].is_object(), "{run}");
            assert!(run.get("probe_errors").is_none(), "{run}");
            // Its log came back.
            let log = run["server_log"].as_str().unwrap();
            assert!(s.out().join(log).exists(), "{log}");
        }
    }
    assert_eq!(runs, 4);
    let md = std::fs::read_to_string(s.out().join("report.md")).unwrap();
    assert!(
        md.contains("## Hosts") && md.contains("### Load by client host"),
        "{md}"
    );
    assert!(
        md.contains("## Machines") && md.contains("| db (server, load) | l1 (load) |"),
        "{md}"
    );
    let html = std::fs::read_to_string(s.out().join("report.html")).unwrap();
    assert!(html.contains("Load by client host"));
    assert!(html.contains("round 1, by host"), "a chart per cell");
    // The same shape as a run here: a comparison of the two variants.
    assert_eq!(r["comparisons"].as_array().unwrap().len(), 1);
    // The built server was copied into db's store, named by its hash.
    let store = common::entries(&s.path().join("hosts/db/bin"));
    assert!(store.iter().any(|e| e.len() == 64), "{store:?}");
    assert!(servers_under(s.path()).is_empty());
}

#[test]
fn kill_9_leaves_no_server_on_any_host() {
    let s = Scratch::new();
    let db = Sshd::start(s.path(), "127.0.0.2");
    let l1 = Sshd::start(s.path(), "127.0.0.3");
    let f = placed(&s, &db, &l1, "30s", 3);
    let mut child = s.run_cmd(&f).spawn().unwrap();
    let started = common::wait_for(240.0, || measuring_under(s.path()));
    if !started {
        let _ = child.kill();
        let _ = child.wait();
        panic!("no server started on db");
    }
    let _ = child.kill();
    let _ = child.wait();
    let gone = common::wait_for(5.0, || servers_under(s.path()).is_empty());
    assert!(
        gone,
        "servers outlived bakeoff: {:?}",
        servers_under(s.path())
    );
    // No agent of this test either (tests run in parallel: told apart by their root).
    let mine = s.path().display().to_string();
    let agents = || {
        descendants(std::process::id())
            .into_iter()
            .filter(|p| {
                let cmd = std::fs::read_to_string(format!("/proc/{p}/cmdline")).unwrap_or_default();
                cmd.contains("agent") && cmd.contains(&mine)
            })
            .count()
    };
    let quiet = common::wait_for(5.0, || agents() == 0);
    if !quiet {
        let ps = Command::new("ps")
            .args(["-ef", "--forest"])
            .output()
            .unwrap();
        panic!("agents left:\n{}", String::from_utf8_lossy(&ps.stdout));
    }
    // Its ssh control sockets stayed behind; the next run with hosts removes them, even
    // one that stops at a host that does not answer.
    let sockets = || {
        let prefix = format!("bakeoff-ssh-{}-", child.id());
        std::fs::read_dir(std::env::temp_dir())
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
            .count()
    };
    let before = sockets();
    db.stop();
    let (code, _, err) = bakeoff(&["run", "--quiet"], &f);
    assert_eq!(code, Some(2), "{err}");
    assert_eq!(sockets(), 0, "{before} sockets before: {err}");
}

/// Runs the placed experiment (`repetitions` rounds) and takes db away (sshd, sessions,
/// agents, server) 1.5 s into its first measured run; with `back_after`, starts db's sshd
/// again after that.
fn lose_db_mid_run(
    s: &Scratch,
    db: &Sshd,
    l1: &Sshd,
    measure: &str,
    repetitions: usize,
    back_after: Option<std::time::Duration>,
) -> std::process::Output {
    let f = placed(s, db, l1, measure, repetitions);
    let child = s
        .run_cmd(&f)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = common::wait_for(240.0, || measuring_under(s.path()));
    assert!(started, "no server started on db");
    std::thread::sleep(std::time::Duration::from_millis(1500));
    db.stop();
    if let Some(after) = back_after {
        std::thread::sleep(after);
        db.spawn();
    }
    child.wait_with_output().unwrap()
}

/// Every run of every cell.
fn all_runs(r: &serde_json::Value) -> Vec<serde_json::Value> {
    r["cells"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| c["runs"].as_array().unwrap().clone())
        .collect()
}

/// `bakeoff run` that must succeed; its results.
fn run_ok(s: &Scratch, f: &Path) -> serde_json::Value {
    let out = s.run_cmd(f).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    s.results()
}

#[test]
fn a_host_lost_mid_run_is_an_invalid_run_and_a_clear_line() {
    let s = Scratch::new();
    let db = Sshd::start(s.path(), "127.0.0.2");
    let l1 = Sshd::start(s.path(), "127.0.0.3");
    let out = lose_db_mid_run(&s, &db, &l1, "4s", 3, None);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("host db was lost mid-run and did not come back"),
        "{err}"
    );
    let r = s.results();
    assert_eq!(r["status"], "failed");
    let runs = all_runs(&r);
    assert!(
        runs.iter().any(|run| run["valid"] == false),
        "no invalid run: {runs:?}"
    );
    assert!(servers_under(s.path()).is_empty());
}

#[test]
fn a_host_that_comes_back_lets_the_experiment_go_on() {
    let s = Scratch::new();
    let db = Sshd::start(s.path(), "127.0.0.2");
    let l1 = Sshd::start(s.path(), "127.0.0.3");
    // Two rounds (4 runs): the lost one, then at least two valid after db came back.
    let out = lose_db_mid_run(
        &s,
        &db,
        &l1,
        "3s",
        2,
        Some(std::time::Duration::from_secs(2)),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let r = s.results();
    assert_eq!(r["status"], "complete");
    let runs = all_runs(&r);
    let invalid = runs.iter().filter(|run| run["valid"] == false).count();
    assert!(invalid >= 1, "the lost run is invalid");
    assert!(
        runs.len() - invalid >= 2,
        "the experiment went on after the host came back: {runs:?}"
    );
    assert!(servers_under(s.path()).is_empty());
}

#[test]
fn a_binary_that_does_not_run_there_fails_its_variant() {
    let s = Scratch::new();
    let db = Sshd::start(s.path(), "127.0.0.2");
    let text = format!(
        "name = \"broken-there\"\n[target]\nkind = \"memcached\"\nhost = \"db\"\n[[variant]]\nname = \"installed\"\nbinary = \"/usr/bin/memcached\"\n[[variant]]\nname = \"broken\"\nbinary = \"/usr/bin/false\"\n[[workload]]\nkind = \"kv\"\nconnections = [2]\nkeys = 500\nclients = [\"db\"]\n[plan]\nrepetitions = 1\nwarmup = \"100ms\"\nduration = \"300ms\"\n{}",
        db.host("db", &s.path().join("hosts"), None)
    );
    // The only variant compared with the baseline failed: exit 5, no comparison made.
    let out = s.run_cmd(&s.write("broken.toml", &text)).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(5), "{err}");
    assert!(
        err.contains("no comparison could be made: broken failed"),
        "{err}"
    );
    let r = s.results();
    let broken = &r["variants"][1];
    assert_eq!(broken["status"], "failed", "{broken}");
    let why = broken["error"].as_str().unwrap();
    assert!(why.contains("does not start on host db"), "{why}");
    assert_eq!(r["variants"][0]["status"], "ok");
}

/// Redis on "db", loaded from there: its INFO memory figures, and perf (counters and a
/// profile) attached to it there by the agent.
#[test]
fn redis_on_a_host_keeps_its_memory_figures_and_is_profiled_there() {
    let s = Scratch::new();
    let db = Sshd::start(s.path(), "127.0.0.2");
    let text = format!(
        "name = \"redis-there\"\n[target]\nkind = \"redis\"\nhost = \"db\"\n[[variant]]\nname = \"debian\"\nbinary = \"/usr/bin/redis-server\"\n[[workload]]\nkind = \"kv\"\nconnections = [4]\nkeys = 1000\nmix = {{ get = 8, set = 2 }}\nclients = [\"db\"]\n[plan]\nrepetitions = 1\nwarmup = \"100ms\"\nduration = \"1s\"\n[measure]\ncounters = true\nprofile = true\n{}",
        db.host("db", &s.path().join("hosts"), None)
    );
    let r = run_ok(&s, &s.write("redis.toml", &text));
    // perf ran on db, attached to the server there; its profile was read there.
    let p = &r["cells"][0]["profile"];
    assert!(
        p["samples"].as_u64().unwrap_or(0) > 20,
        "{p}; notes: {}",
        r["notes"]
    );
    assert!(
        p["split"]["server_pct"].as_f64().unwrap_or(0.0) > 1.0,
        "{p}"
    );
    assert!(p["top"].as_array().is_some_and(|t| !t.is_empty()), "{p}");
    let svg = std::fs::read_to_string(s.out().join(p["flamegraph"].as_str().unwrap())).unwrap();
    assert!(
        svg.contains("<svg"),
        "the flamegraph is drawn here from the folded stacks"
    );
    // Counters: counted there, or the note that host db cannot count them.
    let c = &r["cells"][0]["runs"][0]["counters"];
    assert!(
        c.is_object() || r["notes"].to_string().contains("host db"),
        "{c} {}",
        r["notes"]
    );
    assert!(r["cells"][0]["runs"][0].get("probe_errors").is_none());
    let run = &r["cells"][0]["runs"][0];
    assert_eq!(run["valid"], true, "{run}");
    assert_eq!(run["server_host"], "db");
    // INFO memory, taken by the load's host, reached the run's record here.
    assert!(run["memory"]["used_memory"].as_u64().unwrap() > 0, "{run}");
    assert!(
        run["memory_at_start"]["used_memory"].as_u64().unwrap() > 0,
        "{run}"
    );
}

#[test]
fn variants_built_on_the_servers_host() {
    let s = Scratch::new();
    let db = Sshd::start(s.path(), "127.0.0.2");
    // The host's cache outlives the test (like the shared build cache here), so a second
    // run of the suite does not build again.
    let work = common::private_home().join("hosts-e2e");
    let text = format!(
        r#"name = "built-there"
[target]
kind = "memcached"
source = {{ debian = "memcached" }}
host = "db"
build_on = "host"

[[variant]]
name = "gcc-O2"
compiler = "gcc-12"
cflags = "-O2"

[[variant]]
name = "installed"
binary = "/usr/bin/memcached"

[[workload]]
kind = "kv"
connections = [2]
keys = 500
clients = ["db"]

[plan]
repetitions = 1
warmup = "100ms"
duration = "300ms"

{}"#,
        db.host("db", &work, None)
    );
    let r = run_ok(&s, &s.write("built-there.toml", &text));
    let v = &r["variants"][0];
    assert_eq!(v["status"], "ok", "{v}");
    // The binary is the host's, in its own cache.
    let binary = v["binary"].as_str().unwrap();
    assert!(
        binary.starts_with(&work.join("db/cache").display().to_string()),
        "{binary}"
    );
    let log = std::fs::read_to_string(s.out().join("logs/build-gcc-O2.log")).unwrap();
    assert!(
        log.starts_with("# built on host db from debian memcached"),
        "{log}"
    );
    // The source is the one the host fetched (nothing was fetched here).
    let source = r["source"]["description"].as_str().unwrap();
    assert!(
        source.starts_with("debian memcached") && source.ends_with("(fetched on host db)"),
        "{source}"
    );
    assert!(!r["source"]["id"].as_str().unwrap().is_empty());
    for cell in r["cells"].as_array().unwrap() {
        for run in cell["runs"].as_array().unwrap() {
            assert_eq!(run["valid"], true, "{run}");
        }
    }

    // What the host cannot build from, or what needs this machine: one line, exit 2.
    for (name, change, want) in [
        ("nohost", ("host = \"db\"\n", ""), "set [target] host too"),
        (
            "pgo",
            (
                "cflags = \"-O2\"\n",
                "cflags = \"-O2\"\npgo = { workload = \"kv\" }\n",
            ),
            "PGO trains on this machine",
        ),
    ] {
        let bad = s.write(
            &format!("{name}.toml"),
            &text.replacen(change.0, change.1, 1),
        );
        let (code, _, err) = bakeoff(&["check"], &bad);
        assert_eq!(code, Some(2), "{name}: {err}");
        assert!(err.contains(want), "{name}: {err}");
    }
}

/// Files a test made in a host's default work dir (`~/.cache/bakeoff`, shared with the
/// user's own runs): what was not there before is removed when the test ends, pass or
/// fail, except the stored servers (a cache, by hash).
struct DefaultWorkDir {
    root: PathBuf,
    before: Vec<(String, Vec<String>)>,
}

impl DefaultWorkDir {
    /// Where ssh lands on this machine (the test's user's home).
    fn new() -> DefaultWorkDir {
        let home = std::env::var("HOME").unwrap_or_else(|_| "/root".into());
        let root = Path::new(&home).join(".cache/bakeoff");
        let before = Self::KEPT
            .iter()
            .map(|sub| (sub.to_string(), common::entries(&root.join(sub))))
            .collect();
        DefaultWorkDir { root, before }
    }

    /// The folders whose new entries are the test's: the sandboxes, the run data, logs and
    /// bakeoff's own copy in the store (`bin/bakeoff-<hash>`, one per build of bakeoff).
    const KEPT: [&str; 4] = ["sandboxes", "data", "bin", "logs"];

    /// Entries of `sub` made since [`DefaultWorkDir::new`].
    fn new_in(&self, sub: &str) -> Vec<String> {
        let before = &self.before.iter().find(|(s, _)| s == sub).unwrap().1;
        common::entries(&self.root.join(sub))
            .into_iter()
            .filter(|e| !before.contains(e))
            .collect()
    }
}

impl Drop for DefaultWorkDir {
    fn drop(&mut self) {
        for sub in Self::KEPT {
            for e in self.new_in(sub) {
                // A stored server (64 hex digits) stays, as a build cache does.
                if sub == "bin" && e.len() == 64 {
                    continue;
                }
                let p = self.root.join(sub).join(&e);
                let _ = std::fs::remove_dir_all(&p).or_else(|_| std::fs::remove_file(&p));
            }
        }
    }
}

/// Regression: a `[[host]]` without `work_dir` keeps bakeoff's files under
/// `.cache/bakeoff`, relative to the ssh user's home, and the agent handed out its stored
/// servers by that relative path; a sandbox, started in its own directory, then failed:
/// "cannot start .cache/bakeoff/bin/<hash>/memcached: No such file or directory".
#[test]
fn a_built_variant_serves_from_a_host_with_the_default_work_dir() {
    let s = Scratch::new();
    // Before db: dropped after it, once db's agents and servers are gone.
    let home = DefaultWorkDir::new();
    let db = Sshd::start(s.path(), "127.0.0.2");
    let host: String = db
        .host("db", s.path(), None)
        .lines()
        .filter(|l| !l.starts_with("work_dir"))
        .map(|l| format!("{l}\n"))
        .collect();
    let text = format!(
        r#"name = "default-work-dir"
[target]
kind = "memcached"
source = {{ debian = "memcached" }}
host = "db"

[[variant]]
name = "gcc-O2"
compiler = "gcc-12"
cflags = "-O2"

[[workload]]
kind = "kv"
connections = [2]
keys = 500
clients = ["db"]

[plan]
repetitions = 2
warmup = "100ms"
duration = "300ms"

{host}"#
    );
    let r = run_ok(&s, &s.write("default-work-dir.toml", &text));
    assert_eq!(r["variants"][0]["status"], "ok", "{}", r["variants"][0]);
    let runs = all_runs(&r);
    assert_eq!(runs.len(), 2);
    for run in &runs {
        assert_eq!(run["valid"], true, "{run}");
        assert_eq!(run["server_host"], "db");
        assert!(run["ops_per_s"].as_f64().unwrap() > 0.0, "{run}");
    }
    // The built server was stored in the default work dir, under the home.
    let store = common::entries(&home.root.join("bin"));
    assert!(store.iter().any(|e| e.len() == 64), "{store:?}");
    // Nothing left running there, and no sandbox or run data left behind (the run's lock
    // file stays for the next agent to reap; the guard removes it).
    assert!(servers_under(&home.root).is_empty());
    assert!(
        common::wait_for(5.0, || home.new_in("sandboxes").is_empty()
            && home.new_in("data").iter().all(|d| d.ends_with(".lock"))),
        "left in {}: {:?} {:?}",
        home.root.display(),
        home.new_in("sandboxes"),
        home.new_in("data")
    );
}

/// `bakeoff SUB FILE --out OUT` with the default build cache (where sql.rs's PostgreSQL
/// build is), a private sandbox root and history.
fn with_default_cache(s: &Scratch, sub: &str, f: &Path, out: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_bakeoff"))
        .arg(sub)
        .arg(f)
        .arg("--out")
        .arg(out)
        .arg("--sandbox-dir")
        .arg(s.sandboxes())
        .arg("--quiet")
        .env("BAKEOFF_STORE", s.path().join("history.sqlite"))
        .output()
        .unwrap()
}

/// A `kind` server (its installed `binary`) on "db" (`host` is its table), oltp point
/// selects on one table of 500 rows from this machine, over `plan`.
fn sql_on_db(kind: &str, binary: &str, plan: &str, host: &str) -> String {
    format!(
        "name = \"{kind}-there\"\n[target]\nkind = \"{kind}\"\nhost = \"db\"\n\n[[variant]]\nname = \"debian\"\nbinary = \"{binary}\"\n\n[[workload]]\nkind = \"oltp\"\ntest = \"oltp_point_select\"\ntables = 1\ntable_size = 500\nconnections = [2]\n\n[plan]\n{plan}\n\n{host}"
    )
}

/// Every directory under `dir` whose name starts with `prefix`, at any depth.
fn dirs_named(dir: &Path, prefix: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            if e.file_name().to_string_lossy().starts_with(prefix) {
                out.push(e.path());
            }
            out.extend(dirs_named(&e.path(), prefix));
        }
    }
    out
}

/// PostgreSQL on "db", listening on its address: Debian's, and one built here whose
/// install tree is copied there (the build is sql.rs's, from the same default cache).
/// Their data is initialized and loaded there (through the agent; the loader talks to
/// it from here), oltp runs from this machine, and the results are verified against the
/// servers there; the data goes away with the experiment.
#[test]
fn postgres_on_a_host_with_its_data_made_there() {
    let s = Scratch::new();
    let db = Sshd::start(s.path(), "127.0.0.2");
    let l1 = Sshd::start(s.path(), "127.0.0.3");
    let work = s.path().join("hosts");
    s.write(
        "q.sql",
        "SELECT count(*) FROM sbtest1;\nSELECT sum(k) FROM sbtest2 WHERE id < 100;\n",
    );
    let text = format!(
        r#"name = "pg-there"
[target]
kind = "postgres"
source = {{ debian = "postgresql-15" }}
host = "db"
options = {{ synchronous_commit = "off" }}

[[variant]]
name = "debian"
binary = "/usr/lib/postgresql/15/bin/postgres"
options = {{ shared_buffers = "16MB" }}

[[variant]]
name = "gcc"
compiler = "gcc-12"
cflags = "-O0"

[[workload]]
kind = "oltp"
test = "oltp_read_only"
tables = 2
table_size = 500
connections = [2]

[[workload]]
kind = "oltp"
name = "two-hosts"
test = "oltp_read_only"
tables = 2
table_size = 500
connections = [3]
clients = ["db", "l1"]

[verify]
queries = "q.sql"

[plan]
repetitions = 1
warmup = "300ms"
duration = "1s"

{}{}"#,
        db.host("db", &work, Some("127.0.0.2")),
        l1.host("l1", &work, None)
    );
    let f = s.write("pg.toml", &text);
    let out = with_default_cache(&s, "run", &f, &s.out());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let r = s.results();
    for run in all_runs(&r) {
        assert_eq!(run["valid"], true, "{run}");
        assert_eq!(run["server_host"], "db");
        assert!(run["ops"].as_u64().unwrap() > 0, "{run}");
    }
    for v in r["variants"].as_array().unwrap() {
        assert_eq!(v["status"], "ok", "{v}");
        assert_eq!(v["data"][0]["rows"], 1000, "{v}");
    }
    // The load from two hosts: 2 and 1 connections, the statements of both counted, each
    // statement kind's response times merged from the hosts' histograms.
    let two: Vec<&serde_json::Value> = r["cells"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["workload"] == "two-hosts")
        .collect();
    assert_eq!(two.len(), 2, "one cell per variant");
    for cell in two {
        for run in cell["runs"].as_array().unwrap() {
            let clients = run["clients"].as_array().unwrap();
            let hosts: Vec<_> = clients
                .iter()
                .map(|c| c["host"].as_str().unwrap())
                .collect();
            assert_eq!(hosts, ["db", "l1"], "{run}");
            assert_eq!(clients[0]["connections"], 2);
            assert_eq!(clients[1]["connections"], 1);
            let each: u64 = clients.iter().map(|c| c["ops"].as_u64().unwrap()).sum();
            assert_eq!(each, run["ops"].as_u64().unwrap(), "{run}");
            // oltp_read_only: 10 point selects per transaction, from both hosts.
            let st = &run["statements"];
            assert_eq!(st["transaction"]["count"], run["ops"], "{run}");
            assert_eq!(
                st["point_select"]["count"].as_u64().unwrap(),
                10 * run["ops"].as_u64().unwrap(),
                "{run}"
            );
            let qps = run["qps"].as_f64().unwrap();
            let tps = run["tps"].as_f64().unwrap();
            assert!((qps / tps - 16.0).abs() < 0.5, "{qps} {tps}");
        }
    }
    // The build reads the same files as Debian's 15: it copied that load, there.
    assert_eq!(r["variants"][1]["data"][0]["reused_from"], "debian");
    // Its install tree went to the host's store once, unpacked beside its tar.
    let trees = dirs_named(&work.join("db").join("bin"), "install");
    assert_eq!(trees.len(), 1, "{trees:?}");
    assert!(trees[0].join("bin").join("postgres").is_file());
    let verdicts = r["verification"].as_array().unwrap();
    assert_eq!(verdicts.len(), 2, "{verdicts:?}");
    for v in verdicts {
        assert_eq!(v["status"], "same", "{v}");
        assert_eq!(v["queries"], 2, "{v}");
    }
    // `bakeoff verify` makes the same data there and says the same.
    let out = with_default_cache(&s, "verify", &f, &s.path().join("verified"));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(s.path().join("verified/results.json")).unwrap())
            .unwrap();
    assert_eq!(
        v["verification"][1]["status"], "same",
        "{}",
        v["verification"]
    );
    // Made on the host, under its agent's data root, and gone with the experiment.
    assert!(work.join("db").join("data").is_dir());
    let left = common::entries(&work.join("db").join("data"));
    assert!(left.is_empty(), "{left:?}");
    assert!(servers_under(s.path()).is_empty());
}

/// MariaDB on "db", listening on every address there (the load reaches it at the
/// address ssh reaches the host at): Debian's mariadbd, its data made there, oltp from
/// this machine.
#[test]
fn mariadb_on_a_host_listening_on_every_address() {
    let s = Scratch::new();
    let db = Sshd::start(s.path(), "127.0.0.2");
    let text = sql_on_db(
        "mariadb",
        "/usr/sbin/mariadbd",
        "repetitions = 1\nwarmup = \"300ms\"\nduration = \"1s\"",
        &db.host("db", &s.path().join("hosts"), Some("0.0.0.0")),
    );
    let r = run_ok(&s, &s.write("maria.toml", &text));
    let runs = all_runs(&r);
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0]["valid"], true, "{}", runs[0]);
    assert_eq!(runs[0]["server_host"], "db");
    assert_eq!(r["variants"][0]["data"][0]["rows"], 500);
    let warned = r["warnings"].as_array().unwrap();
    assert!(
        warned
            .iter()
            .any(|w| w.as_str().unwrap().contains("listens on 0.0.0.0")),
        "{warned:?}"
    );
    assert!(servers_under(s.path()).is_empty());
}

/// PostgreSQL on "db", whose sshd (and everything under it: agent, server) dies during
/// the first measured run and comes back 2 s later: that run is invalid, and the run
/// after it starts on the prepared data the lost agent left there for its run.
#[test]
fn a_sql_host_that_comes_back_still_has_its_data() {
    let s = Scratch::new();
    let db = Sshd::start(s.path(), "127.0.0.2");
    let text = sql_on_db(
        "postgres",
        "/usr/lib/postgresql/15/bin/postgres",
        "repetitions = 2\nwarmup = \"300ms\"\nduration = \"3s\"",
        &db.host("db", &s.path().join("hosts"), Some("127.0.0.2")),
    );
    let f = s.write("pg-lost.toml", &text);
    let child = s
        .run_cmd(&f)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // A measured run's server: in a run's sandbox, not the one loading or verifying.
    let measuring = || {
        servers_under(s.path()).iter().any(|pid| {
            std::fs::read_link(format!("/proc/{pid}/cwd")).is_ok_and(|c| {
                let c = c.display().to_string();
                c.contains("/sandboxes/") && !c.contains("-prepare") && !c.contains("-verify")
            })
        })
    };
    assert!(common::wait_for(240.0, measuring), "no measured run on db");
    std::thread::sleep(std::time::Duration::from_millis(1500));
    db.stop();
    std::thread::sleep(std::time::Duration::from_secs(2));
    db.spawn();
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let r = s.results();
    let runs = all_runs(&r);
    let valid = runs.iter().filter(|run| run["valid"] == true).count();
    assert_eq!(runs.len(), 2, "{runs:?}");
    assert_eq!(
        valid, 1,
        "the lost run is invalid, the other valid: {runs:?}"
    );
    assert!(servers_under(s.path()).is_empty());
}

/// The checkers and the instructions mode with memcached on "db": a variant built here
/// with AddressSanitizer and a planted overflow, copied there, fails its verification
/// with the report from its log there; then callgrind runs it there, turned on and off
/// at the window's edges by the agent, its files read here.
#[test]
fn checkers_and_instructions_run_on_the_host() {
    let s = Scratch::new();
    let db = Sshd::start(s.path(), "127.0.0.2");
    s.write("overflow.patch", common::OVERFLOW);
    let host = db.host("db", &s.path().join("hosts"), Some("127.0.0.2"));
    let experiment = |variants: &str, plan: &str| {
        format!(
            "name = \"checked-there\"\n[target]\nkind = \"memcached\"\nsource = {{ debian = \"memcached\" }}\nargs = [\"-t\", \"1\", \"-m\", \"64\"]\nhost = \"db\"\n{variants}\n[[workload]]\nkind = \"kv\"\nconnections = [4]\nkeys = 2000\nmix = {{ get = 80, set = 10, delete = 10 }}\n[plan]\nrepetitions = 1\nwarmup = \"200ms\"\n{plan}\n{host}"
        )
    };
    let asan = experiment(
        "[[variant]]\nname = \"debian\"\nbinary = \"/usr/bin/memcached\"\n[[variant]]\nname = \"asan-overflow\"\ncompiler = \"gcc-12\"\ncflags = \"-O1\"\nsanitize = [\"address\"]\npatches = [\"overflow.patch\"]\n",
        "duration = \"800ms\"",
    );
    let _ = s.run_cmd(&s.write("asan.toml", &asan)).output().unwrap();
    let r = s.results();
    let bad = &r["variants"][1];
    let errors = bad["memory_errors"].as_array().expect("memory_errors");
    assert_eq!(errors[0]["kind"], "heap-buffer-overflow", "{bad}");
    assert!(r["warnings"]
        .to_string()
        .contains("VERIFY FAILED: variant asan-overflow"));

    std::fs::remove_dir_all(s.out()).unwrap();
    let counted = experiment(
        "[[variant]]\nname = \"debian\"\nbinary = \"/usr/bin/memcached\"\n",
        "ops = 2000\nmode = \"instructions\"",
    );
    let r = run_ok(&s, &s.write("counted.toml", &counted));
    let run = &r["cells"][0]["runs"][0];
    assert_eq!(run["valid"], true, "{run}");
    let ipo = run["instructions"]["instructions_per_op"].as_f64().unwrap();
    assert!((1_000.0..1e7).contains(&ipo), "{ipo}");
    assert!(!run["instructions"]["top"].as_array().unwrap().is_empty());
    assert!(servers_under(s.path()).is_empty());
}

/// Machines as variants: Debian's memcached on "s1" (127.0.0.2) and on "s2" (127.0.0.3),
/// each variant served on its own `host` and loaded from there, the rounds interleaving
/// them; s2 is decided against s1 like any variant against its baseline.
#[test]
fn the_same_server_on_two_machines_is_compared() {
    let s = Scratch::new();
    let s1 = Sshd::start(s.path(), "127.0.0.2");
    let s2 = Sshd::start(s.path(), "127.0.0.3");
    let work = s.path().join("hosts");
    let text = format!(
        r#"name = "two-machines"
[target]
kind = "memcached"

[[variant]]
name = "on-s1"
binary = "/usr/bin/memcached"
host = "s1"

[[variant]]
name = "on-s2"
binary = "/usr/bin/memcached"
host = "s2"

[[workload]]
kind = "kv"
connections = [2]
keys = 2000

[plan]
repetitions = 2
warmup = "200ms"
duration = "700ms"

{}{}"#,
        s1.host("s1", &work, None),
        s2.host("s2", &work, None)
    );
    let f = s.write("two.toml", &text);
    let r = run_ok(&s, &f);
    assert_eq!(r["status"], "complete");
    assert!(servers_under(s.path()).is_empty());
    common::no_server_left("memcached", &s);

    // Each variant names its machine; both machines are in the hosts table, each the
    // server and the load of its variant.
    let hosts: Vec<(String, String)> = r["variants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            (
                v["name"].as_str().unwrap().to_string(),
                v["host"].as_str().unwrap_or("here").to_string(),
            )
        })
        .collect();
    assert_eq!(
        hosts,
        [("on-s1".into(), "s1".into()), ("on-s2".into(), "s2".into())]
    );
    let machines = r["hosts"].as_array().unwrap();
    assert_eq!(machines.len(), 2);
    for (m, name) in machines.iter().zip(["s1", "s2"]) {
        assert_eq!(m["name"], name);
        assert_eq!(m["roles"], serde_json::json!(["server", "load"]));
    }

    // Every run valid, on its variant's machine, loaded from there; both variants ran
    // in both rounds.
    assert_eq!(all_runs(&r).len(), 4);
    for cell in r["cells"].as_array().unwrap() {
        let machine = if cell["variant"] == "on-s1" {
            "s1"
        } else {
            "s2"
        };
        for run in cell["runs"].as_array().unwrap() {
            assert_eq!(run["valid"], true, "{run}");
            assert_eq!(run["server_host"], machine, "{run}");
            let clients = common::strs(&run["clients"], "host");
            assert_eq!(clients, [machine], "{run}");
            assert!(run["ops_per_s"].as_f64().unwrap() > 0.0);
        }
    }
    // The comparison across machines: s2 against s1.
    let k = r["comparisons"].as_array().unwrap();
    assert_eq!(k.len(), 1, "{k:?}");
    assert_eq!(k[0]["variant"], "on-s2");
    assert_eq!(k[0]["baseline"], "on-s1");
    assert!(k[0]["verdict"].is_string(), "{}", k[0]);
    // The report's variants table says where each ran.
    let md = std::fs::read_to_string(s.out().join("report.md")).unwrap();
    let variants = &md[md.find("## Variants").expect("a variants section")..];
    assert!(
        variants.contains("| variant | host | status |")
            && variants.contains("| on-s1 | s1 | ok |")
            && variants.contains("| on-s2 | s2 | ok |"),
        "{variants}"
    );
}
