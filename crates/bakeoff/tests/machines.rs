//! The machines users have: the top of a 1024-connection sweep runs on every target with
//! the user's own arguments (bakeoff sizes the servers' connection caps and the open-file
//! limits), and a cap below the sweep is bad input at its key.

mod common;

use common::{no_server_left, others_named, Hog, Scratch};
use serde_json::Value;

const SHORT: &str = "repetitions = 1\nwarmup = \"200ms\"\nduration = \"1s\"";

fn kv_at_1024(kind: &str, binary: &str, args: &str) -> String {
    format!(
        "name = \"top\"\n[target]\nkind = \"{kind}\"\nargs = [{args}]\n\n[[variant]]\nname = \"debian\"\nbinary = \"{binary}\"\n\n[[workload]]\nkind = \"kv\"\nname = \"get\"\nconnections = [1024]\nkeys = 1000\nmix = {{ get = 90, set = 10 }}\n\n[plan]\n{SHORT}\n"
    )
}

fn every_run_valid(r: &Value) {
    let cells = r["cells"].as_array().unwrap();
    assert!(cells.iter().all(|c| c["connections"] == 1024));
    let runs: Vec<&Value> = cells
        .iter()
        .flat_map(|c| c["runs"].as_array().unwrap())
        .collect();
    assert!(!runs.is_empty());
    for run in runs {
        assert_eq!(run["valid"], true, "{run}");
        assert!(run["ops"].as_u64().unwrap() > 0, "{run}");
    }
}

#[test]
fn kv_at_1024_connections_runs_on_memcached_and_redis_with_the_users_args() {
    for (kind, binary, args, server) in [
        (
            "memcached",
            "/usr/bin/memcached",
            "\"-t\", \"1\"",
            "memcached",
        ),
        ("redis", "/usr/bin/redis-server", "", "redis-server"),
    ] {
        let s = Scratch::new();
        let f = s.write("top.toml", &kv_at_1024(kind, binary, args));
        let out = s.run_cmd(&f).output().unwrap();
        assert!(
            out.status.success(),
            "{kind}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let r = s.results();
        every_run_valid(&r);
        let v = &r["variants"][0];
        if kind == "memcached" {
            let args: Vec<&str> = v["args"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| a.as_str().unwrap())
                .collect();
            assert_eq!(args[..3], ["-t", "1", "-c"], "{args:?}");
        } else {
            // Redis's own 10000 holds the sweep: kept.
            assert!(v["options"]["maxclients"].is_null(), "{v}");
        }
        no_server_left(server, &s);
    }
}

#[test]
fn a_connection_cap_below_the_sweep_is_exit_2_at_its_key() {
    let s = Scratch::new();
    let f = s.write(
        "low.toml",
        &kv_at_1024(
            "memcached",
            "/usr/bin/memcached",
            "\"-t\", \"1\", \"-c\", \"512\"",
        ),
    );
    let out = s.run_cmd(&f).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("low.toml:4:"), "{err}");
    assert!(
        err.contains("-c = 512 is lower than the sweep needs"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}

/// Effect relied on: a busy loop pinned to the load's only CPU takes about half of that
/// CPU from it, so the load waits for a CPU far beyond 5% of each window and the hog takes
/// far more than a tenth of a CPU. The answer is machine-busy, naming the hog's program
/// (`sh`), whenever more than a quarter of a side's runs see that: with the hog running
/// in every run, the chance of any other answer is that of fewer than two of six runs
/// on a side being disturbed, which needs the kernel to keep the hog off its CPU for
/// most of three seconds: nil. Machine-busy is no answer, so `--fail-on slower` passes.
#[test]
fn a_load_starved_of_its_cpu_gives_machine_busy_never_an_answer() {
    let s = Scratch::new();
    let stdout = s.run_beside(
        || Hog::on(1),
        "starved.toml",
        &common::busy_machine_experiment(
            "starved",
            &["a", "b"],
            "cpus = { server = \"0\", load = \"1\" }\n",
        ),
        &["--fail-on", "slower"],
    );
    let r = s.results();
    assert_eq!(r["host"]["cpus"]["server"], "0", "{}", r["host"]);
    assert_eq!(r["host"]["cpus"]["load"], "1");
    assert_eq!(r["host"]["cpus"]["by"], "plan");
    let (mut named, mut runs, mut busy) = (0, 0, 0);
    for c in r["cells"].as_array().unwrap() {
        for run in c["runs"].as_array().unwrap() {
            assert_eq!(run["server_cpus"], "0", "{run}");
            assert_eq!(run["load_cpus"], "1", "{run}");
            assert!(run["others_cpu_pct"].as_f64().is_some(), "{run}");
            // Who waited for whom depends on the rest of the machine (here the load
            // waited behind the hog, or behind a server kept waiting by others on CPU
            // 0); that the machine disturbed the run does not.
            busy += usize::from(
                run["disturbed"]
                    .as_str()
                    .is_some_and(|d| d.contains("machine busy")),
            );
            assert!(run["steal_pct"].as_f64().is_some(), "{run}");
            runs += 1;
            named += usize::from(others_named(run).iter().any(|n| n == "sh"));
        }
    }
    assert!(2 * named > runs, "the hog named in {named} of {runs} runs");
    assert!(
        2 * busy > runs,
        "{busy} of {runs} runs disturbed by the machine"
    );
    let k = &r["comparisons"][0];
    assert_eq!(k["verdict"], "machine-busy", "{k}");
    assert!(stdout.contains("machine-busy"), "{stdout}");
    assert!(!stdout.contains("give it more client threads"), "{stdout}");
    let md = std::fs::read_to_string(s.out().join("report.md")).unwrap();
    assert!(
        md.contains("CPUs: server 0, load 1 (\\[plan\\] cpus)"),
        "{md}"
    );
    assert!(md.contains("quiet the machine"), "{md}");
    assert!(!md.contains("give it more client threads"), "{md}");
    let bench = std::fs::read_to_string(s.out().join("bench.txt")).unwrap();
    assert!(bench.contains(": machine-busy, ratio"), "{bench}");
}

#[test]
fn cpu_lists_name_cpus_this_machine_has() {
    let s = Scratch::new();
    let text = kv_at_1024("memcached", "/usr/bin/memcached", "").replace(
        "duration = \"1s\"",
        "duration = \"1s\"\ncpus = { load = \"4095\" }",
    );
    let out = s.run_cmd(&s.write("far.toml", &text)).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("past the last CPU"), "{err}");
    let all =
        "0-".to_string() + &(std::thread::available_parallelism().unwrap().get() - 1).to_string();
    let text = kv_at_1024("memcached", "/usr/bin/memcached", "").replace(
        "duration = \"1s\"",
        &format!("duration = \"1s\"\ncpus = {{ load = \"{all}\" }}"),
    );
    let out = s.run_cmd(&s.write("all.toml", &text)).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("leaves the server none"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}

/// The filesystem type of the mount holding `path`, as /proc/mounts names it.
fn fs_of(path: &str) -> String {
    let mounts = std::fs::read_to_string("/proc/mounts").unwrap();
    mounts
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            Some((f.get(1)?.to_string(), f.get(2)?.to_string()))
        })
        .filter(|(m, _)| std::path::Path::new(path).starts_with(m))
        .max_by_key(|(m, _)| m.len())
        .map(|x| x.1)
        .unwrap()
}

/// `bakeoff run FILE --out OUT --quiet` with no --sandbox-dir (the default folder, or the
/// file's `sandbox_dir`) and a private history store.
fn run_in_default_dirs(
    s: &Scratch,
    file: &std::path::Path,
    out: &std::path::Path,
) -> std::process::Command {
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_bakeoff"));
    c.arg("run")
        .arg(file)
        .arg("--out")
        .arg(out)
        .arg("--quiet")
        .env("BAKEOFF_STORE", s.path().join("history.sqlite"));
    c
}

/// Runs `c` to its end: no PostgreSQL of the test left, exit status 0.
fn postgres_run_succeeds(c: &mut std::process::Command, s: &Scratch) {
    let out = c.output().unwrap();
    no_server_left("postgres", s);
    common::assert_ok(&out);
}

#[test]
fn sql_data_is_not_on_the_runtime_tmpfs_and_results_say_where_it_was() {
    // A login's runtime folder: a RAM-backed tmpfs (/dev/shm is one everywhere).
    let runtime = tempfile::tempdir_in("/dev/shm").unwrap();
    assert_eq!(fs_of(&runtime.path().display().to_string()), "tmpfs");
    let s = common::sql_scratch();
    let text = "name = \"pg-disk\"\n[target]\nkind = \"postgres\"\n\n[[variant]]\nname = \"on\"\nbinary = \"/usr/lib/postgresql/15/bin/postgres\"\noptions = { synchronous_commit = \"on\" }\n\n[[variant]]\nname = \"off\"\nbinary = \"/usr/lib/postgresql/15/bin/postgres\"\noptions = { synchronous_commit = \"off\" }\n\n[[workload]]\nkind = \"oltp\"\ntest = \"oltp_point_select\"\ntables = 1\ntable_size = 500\nconnections = [2]\n\n[plan]\nrepetitions = 1\nwarmup = \"100ms\"\nduration = \"500ms\"\n";
    let f = s.write("pg.toml", text);
    // No --sandbox-dir: the default folder.
    postgres_run_succeeds(
        run_in_default_dirs(&s, &f, &s.out()).env("XDG_RUNTIME_DIR", runtime.path()),
        &s,
    );
    assert!(
        common::entries(runtime.path()).is_empty(),
        "data went to the runtime tmpfs"
    );
    let r = s.results();
    let h = &r["host"];
    let dir = h["sandbox_dir"].as_str().unwrap();
    assert!(dir.starts_with("/var/tmp/bakeoff-"), "{h}");
    assert_eq!(h["sandbox_fs"].as_str().unwrap(), fs_of("/var/tmp"), "{h}");
    assert!(h["sandbox_free_bytes"].as_u64().unwrap() > 0, "{h}");
    assert!(!h["sandbox_device"].as_str().unwrap().is_empty(), "{h}");
    let md = std::fs::read_to_string(s.out().join("report.md")).unwrap();
    assert!(md.contains(&format!("data: {}", fs_of("/var/tmp"))), "{md}");

    // Asked for by name, the same experiment on that tmpfs runs, and says so loudly.
    let on_tmpfs = text.replace(
        "[plan]\n",
        &format!(
            "[plan]\nsandbox_dir = \"{}\"\n",
            runtime.path().join("sb").display()
        ),
    );
    let f = s.write("pg-tmpfs.toml", &on_tmpfs);
    postgres_run_succeeds(
        &mut run_in_default_dirs(&s, &f, &s.path().join("out-tmpfs")),
        &s,
    );
    let r: Value = serde_json::from_str(
        &std::fs::read_to_string(s.path().join("out-tmpfs/results.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(r["host"]["sandbox_fs"], "tmpfs");
    let warned = r["warnings"].as_array().unwrap().iter().any(|w| {
        w.as_str()
            .unwrap()
            .contains("differ in synchronous_commit and the data was on tmpfs")
    });
    assert!(warned, "{}", r["warnings"]);
}

#[test]
fn too_little_space_for_the_tables_is_one_line_before_anything_loads() {
    let s = common::sql_scratch();
    // 1000 tables of 10 million rows: about 2.3 TiB, more than this disk.
    let text = "name = \"pg-big\"\n[target]\nkind = \"postgres\"\n\n[[variant]]\nname = \"debian\"\nbinary = \"/usr/lib/postgresql/15/bin/postgres\"\n\n[[workload]]\nkind = \"oltp\"\ntables = 1000\ntable_size = 10000000\nconnections = [2]\n\n[plan]\nrepetitions = 1\nsandbox_dir = \"big\"\n";
    let f = s.write("big.toml", text);
    let out = run_in_default_dirs(&s, &f, &s.out()).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("big.toml:"), "{err}");
    assert!(err.contains("the tables need about"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(!s.out().exists(), "a results folder was started");
}
