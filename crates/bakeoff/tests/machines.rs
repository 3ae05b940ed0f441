//! The machines users have: the top of a 1024-connection sweep runs on every target with
//! the user's own arguments (bakeoff sizes the servers' connection caps and the open-file
//! limits), and a cap below the sweep is bad input at its key.

mod common;

use common::{no_server_left, Scratch};
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
            assert!(v["options"]["maxclients"].as_str().is_some(), "{v}");
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

/// A process that keeps one CPU busy until dropped.
struct Hog(std::process::Child);

impl Hog {
    fn on(cpu: usize) -> Hog {
        let child = std::process::Command::new("taskset")
            .args(["-c", &cpu.to_string(), "sh", "-c", "while :; do :; done"])
            .spawn()
            .expect("taskset");
        Hog(child)
    }
}

impl Drop for Hog {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn a_load_starved_of_its_cpu_gives_client_bound_never_an_answer() {
    let s = Scratch::new();
    let text = "name = \"starved\"\n[target]\nkind = \"memcached\"\nargs = [\"-t\", \"1\"]\n\n[[variant]]\nname = \"a\"\nbinary = \"/usr/bin/memcached\"\n\n[[variant]]\nname = \"b\"\nbinary = \"/usr/bin/memcached\"\n\n[[workload]]\nkind = \"kv\"\nname = \"get\"\nconnections = [8]\nkeys = 1000\n\n[plan]\nrepetitions = 6\nwarmup = \"200ms\"\nduration = \"500ms\"\ncpus = { server = \"0\", load = \"1\" }\n";
    let f = s.write("starved.toml", text);
    let out = {
        let _hog = Hog::on(1);
        s.run_cmd(&f)
            .args(["--fail-on", "slower"])
            .output()
            .unwrap()
    };
    no_server_left("memcached", &s);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "client-bound is not slower: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r = s.results();
    assert_eq!(r["host"]["cpus"]["server"], "0", "{}", r["host"]);
    assert_eq!(r["host"]["cpus"]["load"], "1");
    assert_eq!(r["host"]["cpus"]["by"], "plan");
    for c in r["cells"].as_array().unwrap() {
        for run in c["runs"].as_array().unwrap() {
            assert_eq!(run["server_cpus"], "0", "{run}");
            assert_eq!(run["load_cpus"], "1", "{run}");
            assert!(run["client_wait_s"].as_f64().unwrap() > 0.1, "{run}");
        }
    }
    let k = &r["comparisons"][0];
    assert_eq!(k["verdict"], "client-bound", "{k}");
    assert!(stdout.contains("client-bound"), "{stdout}");
    let md = std::fs::read_to_string(s.out().join("report.md")).unwrap();
    assert!(md.contains("CPUs: server 0, load 1 ([plan] cpus)"), "{md}");
    assert!(md.contains("give it more client threads"), "{md}");
    let bench = std::fs::read_to_string(s.out().join("bench.txt")).unwrap();
    assert!(bench.contains(": client-bound, ratio"), "{bench}");
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
