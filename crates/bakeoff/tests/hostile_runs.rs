//! Hostile input, round two (issue 44), class 7: wrong answers and hangs in runs. A server
//! that stops answering fails its run within its window plus the grace and the experiment
//! goes on; runs that measured nothing are invalid. Servers are started by bakeoff itself
//! on loopback and must be gone when a test ends, also when it fails.

mod common;

use bakeoff_testkit::paths::MARIADBD;
use common::{mariadb_point_select, measured_server, no_server_left, pids_named, Scratch};
use std::process::Child;
use std::time::{Duration, Instant};

/// A bakeoff run in the background, killed (and its servers with it, by their
/// parent-death signal) if the test ends first; a server it stopped is continued.
struct Running {
    child: Child,
    stopped: Option<u32>,
}

impl Running {
    /// Waits up to `secs` for bakeoff to end; its exit status.
    fn wait(&mut self, secs: u64) -> std::process::ExitStatus {
        let end = Instant::now() + Duration::from_secs(secs);
        while Instant::now() < end {
            if let Some(status) = self.child.try_wait().expect("wait") {
                return status;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("bakeoff did not end within {secs} s");
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(pid) = self.stopped {
            signal(pid, "-CONT");
        }
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

fn signal(pid: u32, sig: &str) {
    let _ = std::process::Command::new("kill")
        .args([sig, &pid.to_string()])
        .stderr(std::process::Stdio::null())
        .status();
}

/// How many sockets `pid` holds open (its listeners and its clients' connections).
fn sockets(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| {
            std::fs::read_link(e.path()).is_ok_and(|l| l.to_string_lossy().starts_with("socket:"))
        })
        .count()
}

/// Runs the experiment, SIGSTOPs the first measured server once it holds `busy` sockets
/// (listening and loaded) and `after` more, and checks that this run alone is invalid,
/// for the stopped server, within `limit` seconds of its start, and that the experiment
/// went on to a valid second run.
fn stopped_run(
    s: &Scratch,
    name: &str,
    file: &std::path::Path,
    busy: usize,
    after: Duration,
    limit: f64,
) {
    let mut bakeoff = Running {
        child: s.run_cmd(file).spawn().expect("bakeoff"),
        stopped: None,
    };
    let pid = measured_server(name, s, 300.0).expect("no measured server appeared");
    common::wait_for(10.0, || sockets(pid) >= busy);
    std::thread::sleep(after);
    signal(pid, "-STOP");
    bakeoff.stopped = Some(pid);
    let status = bakeoff.wait(limit as u64 + 60);
    assert!(status.success(), "bakeoff exited with {status}");
    let r = s.results();
    let runs = r["cells"][0]["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 2, "{runs:?}");
    let first = &runs[0];
    assert_eq!(first["valid"], false, "{first}");
    let reason = first["invalid_reason"].as_str().unwrap_or_default();
    assert!(reason.contains("stopped answering"), "{reason}");
    let took = first["wall_s"].as_f64().expect("wall_s");
    eprintln!("the stopped run: {took:.1} s, {reason}");
    assert!(
        took <= limit,
        "the stopped run took {took} s (limit {limit} s)"
    );
    assert_eq!(runs[1]["valid"], true, "{}", runs[1]);
}

/// An experiment named `name`: memcached (one thread, 16 MB) from `binary` as the one
/// variant `victim`, kv at 2 connections over 200 keys, `repetitions` rounds of `duration`
/// windows.
fn victim(name: &str, binary: &str, duration: &str, repetitions: usize) -> String {
    common::memcached_installed(name, common::ARGS_16)
        + &format!(
            "[[variant]]\nname = \"victim\"\nbinary = \"{binary}\"\n[[workload]]\nkind = \"kv\"\nconnections = [2]\nkeys = 200\n[plan]\nwarmup = \"100ms\"\nduration = \"{duration}\"\nrepetitions = {repetitions}\n"
        )
}

/// memcached SIGSTOPped in its window: the run fails within its window plus the grace
/// (10 s) and the stop, and the next run is measured.
#[test]
fn hostile_stopped_server_fails_its_run() {
    let s = Scratch::new();
    let file = s.write(
        "stopped.toml",
        &victim("stopped", "/usr/bin/memcached", "4s", 2),
    );
    // warmup + window + grace + a stop, with room for a loaded machine. The window is
    // long enough that the stop, 300 ms after the load connects, lands inside it even
    // when this test's thread waits seconds for a CPU (with 2 s, a loaded machine once
    // let the window end first, and the run was rightly valid).
    stopped_run(&s, "memcached", &file, 3, Duration::from_millis(300), 22.0);
    no_server_left("memcached", &s);
}

/// MariaDB SIGSTOPped in its window (a SQL load waits on its replies with no deadline
/// of its own): the run fails at the latest at its window's end plus the grace, and the
/// experiment goes on.
#[test]
fn hostile_stopped_sql_server_fails_its_run() {
    if !std::path::Path::new(MARIADBD).exists() {
        eprintln!("skipped: no {MARIADBD}");
        return;
    }
    let s = common::sql_scratch();
    let file = s.write(
        "stopped.toml",
        &mariadb_point_select(
            "stopped-sql",
            "victim",
            500,
            "max_reconnects = 0\n",
            "repetitions = 2\nwarmup = \"0s\"\nduration = \"4s\"\n",
        ),
    );
    // The server's start, the window, the grace (10 s), the kill and the stop; the
    // window long enough for the stop to land in it on a loaded machine.
    stopped_run(&s, "mariadbd", &file, 4, Duration::from_millis(500), 42.0);
    no_server_left("mariadbd", &s);
}

/// One installed memcached (`args`), `workloads` at 2 connections, one short run each.
fn memcached_with(args: &str, workloads: &str) -> String {
    common::memcached_installed("nothing", args)
        + &format!(
            r#"[[variant]]
name = "victim"
binary = "/usr/bin/memcached"
{workloads}
[plan]
warmup = "100ms"
duration = "500ms"
repetitions = 1
"#
        )
}

fn kv(name: &str, keys: &str) -> String {
    format!("[[workload]]\nkind = \"kv\"\nname = \"{name}\"\nconnections = [2]\n{keys}\n")
}

/// Each workload's one run: (valid, reason).
fn runs_by_workload(s: &Scratch) -> Vec<(String, bool, String)> {
    let r = s.results();
    r["cells"]
        .as_array()
        .expect("cells")
        .iter()
        .map(|c| {
            let run = &c["runs"][0];
            (
                c["workload"].as_str().unwrap_or_default().to_string(),
                run["valid"] == true,
                run["invalid_reason"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
            )
        })
        .collect()
}

/// Every request refused (values larger than the server's item limit, by set and by
/// add, at two sizes): each run invalid, naming the error; the same server with values it
/// takes is measured.
#[test]
fn hostile_every_operation_failed_is_invalid() {
    let s = Scratch::new();
    let mut workloads = String::new();
    for (cmd, size) in [("set", 3000), ("add", 5000), ("set", 70000)] {
        workloads.push_str(&kv(
            &format!("{cmd}-{size}"),
            &format!("mix = {{ {cmd} = 1 }}\npreload = false\nkeys = 100\nvalue_size = {size}"),
        ));
    }
    workloads.push_str(&kv(
        "fits",
        "mix = { set = 1 }\npreload = false\nkeys = 100\nvalue_size = 100",
    ));
    let file = s.write(
        "failed.toml",
        &memcached_with(
            r#""-t", "1", "-I", "2k", "-o", "slab_chunk_max=1024""#,
            &workloads,
        ),
    );
    let out = s.run_cmd(&file).output().expect("bakeoff");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    let runs = runs_by_workload(&s);
    assert_eq!(runs.len(), 4, "{runs:?}\n{stderr}");
    for (workload, valid, reason) in &runs {
        if workload == "fits" {
            assert!(*valid, "{workload}: {reason}");
        } else {
            assert!(!*valid, "{workload} counted as valid");
            assert!(
                reason.starts_with("every operation failed: server_error"),
                "{workload}: {reason}"
            );
        }
    }
    no_server_left("memcached", &s);
}

/// Gets of preloaded keys on a memcached too small to hold them (it evicts): the run is
/// invalid with the share that missed; the same load on keys that fit, and a mix whose
/// deletes make misses by design, are measured.
#[test]
fn hostile_misses_on_an_evicting_cache_are_invalid() {
    let s = Scratch::new();
    let mut workloads = String::new();
    for (name, keys) in [
        (
            "evicted-get",
            "keys = 20000\nvalue_size = 1000\nmix = { get = 1 }",
        ),
        (
            "evicted-multiget",
            "keys = 20000\nvalue_size = 1000\nmix = { multiget = 1 }\nmultiget_keys = 4",
        ),
        (
            "fits",
            "keys = 200\nvalue_size = 100\nmix = { get = 9, set = 1 }",
        ),
        (
            "deletes",
            "keys = 200\nvalue_size = 100\nmix = { get = 1, delete = 1, set = 1 }",
        ),
    ] {
        workloads.push_str(&kv(name, keys));
    }
    // YCSB's read-mostly and read-only loads on the same server (the attack's 39%).
    for (name, w) in [("evicted-ycsb-b", "b"), ("evicted-ycsb-c", "c")] {
        workloads.push_str(&format!(
            "[[workload]]\nkind = \"ycsb\"\nname = \"{name}\"\nworkload = \"{w}\"\nrecords = 20000\nconnections = [2]\n"
        ));
    }
    let file = s.write(
        "misses.toml",
        &memcached_with(r#""-t", "1", "-m", "2""#, &workloads),
    );
    let out = s.run_cmd(&file).output().expect("bakeoff");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    let runs = runs_by_workload(&s);
    assert_eq!(runs.len(), 6, "{runs:?}\n{stderr}");
    for (workload, valid, reason) in &runs {
        if workload.starts_with("evicted") {
            assert!(!*valid, "{workload} counted as valid");
            assert!(
                reason.contains("% of the reads missed"),
                "{workload}: {reason}"
            );
        } else {
            assert!(*valid, "{workload}: {reason}");
        }
    }
    no_server_left("memcached", &s);
}

/// `bakeoff check FILE`: its output.
fn check(s: &Scratch, text: &str) -> std::process::Output {
    let file = s.write("check.toml", text);
    std::process::Command::new(env!("CARGO_BIN_EXE_bakeoff"))
        .arg("check")
        .arg(&file)
        .output()
        .expect("bakeoff check")
}

const KV: &str = r#"name = "lengths"
[target]
kind = "memcached"
[[variant]]
name = "a"
binary = "/usr/bin/memcached"
[[workload]]
kind = "kv"
"#;

/// Generated: warmups, windows and latency limits beyond their caps or beyond the
/// budget, in several units: one line naming the key, exit status 2.
#[test]
fn hostile_absurd_lengths_are_refused_at_check() {
    let s = Scratch::new();
    let mut cases: Vec<(String, &str)> = Vec::new();
    for key in ["warmup", "duration"] {
        for len in ["7d", "25h", "1w", "90000s", "1441m", "6days"] {
            cases.push((format!("{KV}[plan]\n{key} = \"{len}\"\n"), key));
        }
    }
    for (budget, warmup, duration, key) in [
        ("1m", "50s", "20s", "warmup"),
        ("10s", "1s", "10s", "duration"),
        ("2h", "3h", "1s", "warmup"),
    ] {
        cases.push((
            format!("{KV}[plan]\nbudget = \"{budget}\"\nwarmup = \"{warmup}\"\nduration = \"{duration}\"\n"),
            key,
        ));
    }
    for limit in ["7d", "2m", "61s", "1h"] {
        cases.push((
            format!(
                "{KV}slo = {{ percentile = 99, limit = \"{limit}\" }}\n[plan]\nrepetitions = 2\n"
            ),
            "slo limit",
        ));
    }
    for (text, key) in &cases {
        let out = check(&s, text);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{text}\n{stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
        assert!(stderr.contains("check.toml:"), "no place: {stderr}");
        assert!(stderr.contains(key), "{key}: {stderr}");
    }
    // At the caps, and within the budget: accepted.
    for plan in [
        "warmup = \"1d\"\nrepetitions = 1",
        "duration = \"24h\"\nrepetitions = 1",
        "budget = \"1m\"\nwarmup = \"30s\"\nduration = \"30s\"",
    ] {
        let out = check(&s, &format!("{KV}[plan]\n{plan}\n"));
        assert!(
            out.status.success(),
            "{plan}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// A plan that takes more than a day says so in one line at `check`; a short one does not.
#[test]
fn hostile_long_plan_is_said_at_check() {
    let s = Scratch::new();
    for (plan, days) in [
        ("warmup = \"23h\"\nrepetitions = 2", Some("1.9 days")),
        ("duration = \"2h\"\nrepetitions = 100", Some("8.3 days")),
        ("budget = \"7d\"", Some("7.0 days")),
        ("duration = \"2m\"\nrepetitions = 1000", Some("1.4 days")),
        ("repetitions = 3", None),
        ("budget = \"23h\"", None),
    ] {
        let out = check(&s, &format!("{KV}[plan]\n{plan}\n"));
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{plan}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let said: Vec<&str> = stdout
            .lines()
            .filter(|l| l.contains("this plan can take up to"))
            .collect();
        match days {
            Some(d) => {
                assert_eq!(said.len(), 1, "{plan}: {stdout}");
                assert!(said[0].contains(d), "{plan}: {}", said[0]);
            }
            None => assert!(said.is_empty(), "{plan}: {stdout}"),
        }
    }
}

/// The variant's binary replaced while the experiment runs (renamed over, as an install
/// or a rebuild does): the runs after it are not measured under the old hash.
#[test]
fn hostile_changed_binary_is_not_measured() {
    let s = Scratch::new();
    let bin = s.path().join("memcached");
    std::fs::copy("/usr/bin/memcached", &bin).expect("copy memcached");
    let file = s.write(
        "changed.toml",
        &victim("changed", &bin.display().to_string(), "1500ms", 3),
    );
    let mut bakeoff = Running {
        child: s.run_cmd(&file).spawn().expect("bakeoff"),
        stopped: None,
    };
    measured_server("memcached", &s, 60.0).expect("no measured server appeared");
    let mut bytes = std::fs::read(&bin).unwrap();
    bytes.extend_from_slice(b"changed");
    let other = s.path().join("memcached.new");
    std::fs::write(&other, &bytes).unwrap();
    std::fs::rename(&other, &bin).unwrap();
    let status = bakeoff.wait(60);
    let r = s.results();
    let runs = r["cells"][0]["runs"].as_array().expect("runs").clone();
    assert_eq!(runs.len(), 3, "{runs:?} ({status})");
    assert_eq!(runs[0]["valid"], true, "{}", runs[0]);
    for run in &runs[1..] {
        assert_eq!(run["valid"], false, "{run}");
        let reason = run["invalid_reason"].as_str().unwrap_or_default();
        assert!(reason.contains("changed after it was hashed"), "{reason}");
    }
    no_server_left("memcached", &s);
}

/// MariaDB SIGSTOPped while it loads the tables (before any run): the load ends 10 s
/// later with the reason, instead of holding bakeoff until SIGTERM.
#[test]
fn hostile_stopped_server_fails_its_load() {
    if !std::path::Path::new(MARIADBD).exists() {
        eprintln!("skipped: no {MARIADBD}");
        return;
    }
    let s = common::sql_scratch();
    let file = s.write(
        "stopped-load.toml",
        &mariadb_point_select(
            "stopped-load",
            "victim",
            300000,
            "",
            "repetitions = 1\nwarmup = \"0s\"\nduration = \"1s\"\n",
        ),
    );
    let started = Instant::now();
    let mut bakeoff = Running {
        child: s
            .run_cmd(&file)
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("bakeoff"),
        stopped: None,
    };
    let marker = format!("{}/", s.sandboxes().display());
    let mut pid = None;
    common::wait_for(120.0, || {
        pid = pids_named("mariadbd").into_iter().find(|p| {
            let cmd = std::fs::read_to_string(format!("/proc/{p}/cmdline")).unwrap_or_default();
            cmd.contains(&marker) && cmd.contains("prepare") && sockets(*p) >= 3
        });
        pid.is_some()
    });
    let pid = pid.expect("no loading server appeared");
    std::thread::sleep(Duration::from_millis(300));
    signal(pid, "-STOP");
    bakeoff.stopped = Some(pid);
    let stopped_at = started.elapsed();
    bakeoff.wait(60);
    let mut stderr = String::new();
    use std::io::Read;
    bakeoff
        .child
        .stderr
        .take()
        .expect("stderr")
        .read_to_string(&mut stderr)
        .unwrap();
    let took = started.elapsed() - stopped_at;
    eprintln!("ended {took:?} after the stop: {stderr}");
    assert!(stderr.contains("stopped answering"), "{stderr}");
    assert!(
        took < Duration::from_secs(40),
        "ended {took:?} after the stop"
    );
    no_server_left("mariadbd", &s);
}

/// A relative sandbox folder, from the command line and from the file (relative to it),
/// run from another working directory than the file's: the SQL server's runs are valid.
#[test]
fn hostile_relative_sandbox_dir_serves_sql_targets() {
    if !std::path::Path::new(MARIADBD).exists() {
        eprintln!("skipped: no {MARIADBD}");
        return;
    }
    let experiment = |plan: &str| {
        mariadb_point_select(
            "relative",
            "rel",
            500,
            "",
            &format!("repetitions = 1\nwarmup = \"0s\"\nduration = \"1s\"\n{plan}\n"),
        )
    };
    for (plan, arg) in [
        ("", Some("rel-sandboxes")),
        ("", Some("./a/../rel-sandboxes")),
        ("sandbox_dir = \"rel-sandboxes\"", None),
    ] {
        let s = common::sql_scratch();
        std::fs::create_dir_all(s.path().join("exp")).unwrap();
        let file = s.write("exp/relative.toml", &experiment(plan));
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_bakeoff"));
        cmd.current_dir(s.path())
            .arg("run")
            .arg("exp/relative.toml")
            .arg("--out")
            .arg(s.out())
            .arg("--cache")
            .arg(common::cache_dir())
            .arg("--quiet")
            .env("BAKEOFF_STORE", s.path().join("history.sqlite"));
        if let Some(dir) = arg {
            cmd.arg("--sandbox-dir").arg(dir);
        }
        let out = cmd.output().expect("bakeoff");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{plan} {arg:?}: {stderr}");
        let run = &s.results()["cells"][0]["runs"][0];
        assert_eq!(run["valid"], true, "{plan} {arg:?}: {run}");
        let sandboxes = match arg {
            Some(_) => s.path().join("rel-sandboxes"),
            None => file.parent().unwrap().join("rel-sandboxes"),
        };
        assert!(sandboxes.is_dir(), "{}", sandboxes.display());
        no_server_left("mariadbd", &s);
    }
}
