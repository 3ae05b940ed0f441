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
