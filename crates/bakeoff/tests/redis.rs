//! End-to-end Redis: Debian's source built with jemalloc (as Debian builds it) and with
//! libc malloc, beside Debian's installed redis-server; bakeoff's engine speaking RESP with
//! every command kind, values verified, and redis-benchmark beside it; INFO memory per
//! run; the builds cached the second time. A build patched to corrupt one stored value in
//! 500 is caught by verification while a clean build shows none. Bad input is one line and
//! exit status 2, an unknown config directive fails its variant with Redis's message, and
//! neither SIGINT nor kill -9 leaves a server behind.

mod common;

use common::{item, no_server_left, signal_leaves_no_server, Scratch};
use serde_json::Value;

const SERVER: &str = "redis-server";
const DEBIAN: &str = "/usr/bin/redis-server";

/// Flips the last byte of every 500th value SET stores.
const CORRUPT: &str = "--- a/src/t_string.c\n+++ b/src/t_string.c\n@@ -108,6 +108,9 @@\n     setkey_flags |= (flags & OBJ_KEEPTTL) ? SETKEY_KEEPTTL : 0;\n     setkey_flags |= found ? SETKEY_ALREADY_EXIST : SETKEY_DOESNT_EXIST;\n \n+    static unsigned long bakeoff_sets;\n+    if (++bakeoff_sets % 500 == 0 && sdsEncodedObject(val) && sdslen(val->ptr) > 20)\n+        ((char *)val->ptr)[sdslen(val->ptr) - 1] ^= 1;\n     setKey(c,c->db,key,val,setkey_flags);\n     server.dirty++;\n     notifyKeyspaceEvent(NOTIFY_STRING,\"set\",key,c->db->id);\n";

/// A build of Debian's source with these make arguments (and patches), at -O0 like the
/// examples test's Redis builds, whose cache they share: at -O2 a build took 130-190 s in
/// CI beside the other tests.
fn built(name: &str, make_args: &str, patches: &str) -> String {
    format!(
        "\n[[variant]]\nname = \"{name}\"\ncompiler = \"gcc-12\"\ncflags = \"-O0\"\nmake_args = [{make_args}]\npatches = [{patches}]\n"
    )
}

fn experiment(variants: &str, workloads: &str, plan: &str) -> String {
    format!(
        "name = \"redis\"\n[target]\nkind = \"redis\"\nsource = {{ debian = \"redis\" }}\n{variants}\n{workloads}\n[plan]\n{plan}\n"
    )
}

const EVERY_COMMAND: &str = "\n[[workload]]\nkind = \"kv\"\nname = \"every\"\nconnections = [4]\nkeys = 2000\nmix = { get = 30, set = 10, add = 5, delete = 5, multiget = 10, incr = 10, lpush = 10, lpop = 5, hset = 10, hget = 5 }\n";
const BENCHMARK: &str =
    "\n[[workload]]\nkind = \"redis-benchmark\"\nconnections = [4]\ntests = \"get,set,incr,lpush\"\n";
const SHORT: &str = "repetitions = 1\nwarmup = \"200ms\"\nduration = \"1s\"";

fn runs(r: &Value) -> Vec<(String, String, Value)> {
    r["cells"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| {
            c["runs"].as_array().unwrap().iter().map(|run| {
                (
                    c["workload"].as_str().unwrap().to_string(),
                    c["variant"].as_str().unwrap().to_string(),
                    run.clone(),
                )
            })
        })
        .collect()
}

/// The jemalloc build is Debian's source with no make_args: regression, it failed to link
/// (`undefined reference to dallocx`): Debian's patch makes every build call the system's
/// jemalloc, and only its debian/rules passes USE_SYSTEM_JEMALLOC=yes. The recipe now
/// passes it too, and the build log says why. (One build serves both checks: a second
/// test of its own built Redis once more.)
#[test]
fn jemalloc_libc_and_debian_answer_every_command_and_report_memory() {
    let s = Scratch::new();
    let variants = format!(
        "{}{}\n[[variant]]\nname = \"debian\"\nbinary = \"{DEBIAN}\"\n",
        built("jemalloc", "", ""),
        built("libc", "\"MALLOC=libc\"", "")
    );
    let r = s.run_clean(
        "redis.toml",
        &experiment(&variants, &format!("{EVERY_COMMAND}{BENCHMARK}"), SHORT),
        SERVER,
    );
    for v in r["variants"].as_array().unwrap() {
        assert_eq!(v["status"], "ok", "{v}");
    }
    // The allocator each build says it uses.
    for (name, malloc) in [("jemalloc", "malloc=jemalloc"), ("libc", "malloc=libc")] {
        let v = item(&r["variants"], "name", name);
        let bin = v["binary"].as_str().unwrap();
        let version = std::process::Command::new(bin)
            .arg("--version")
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&version.stdout);
        assert!(text.contains(malloc), "{name}: {text}");
    }
    let log = std::fs::read_to_string(s.out().join("logs/build-jemalloc.log")).unwrap();
    assert!(
        log.contains("==> redis: make USE_SYSTEM_JEMALLOC=yes") && log.contains("debian/rules"),
        "{log}"
    );
    let all = runs(&r);
    assert_eq!(all.len(), 6, "two workloads x three variants");
    for (w, v, run) in &all {
        assert_eq!(run["valid"], true, "{w} {v}: {run}");
        assert!(run["ops_per_s"].as_f64().unwrap() > 100.0, "{w} {v}: {run}");
        assert_eq!(run["verify_failures"], 0, "{w} {v}: {run}");
        common::assert_loopback_only(run);
        let m = &run["memory"];
        assert!(m["used_memory"].as_u64().unwrap() > 100_000, "{w} {v}: {m}");
        assert!(m["used_memory_rss"].as_u64().unwrap() > 0, "{w} {v}: {m}");
        assert!(m["fragmentation_ratio"].as_f64().unwrap() > 0.0, "{m}");
        assert!(run["memory_at_start"]["used_memory"].as_u64().is_some());
        if w == "every" {
            // lpop and hget on keys nothing pushed yet, delete of deleted keys.
            assert!(run["misses"].as_u64().unwrap() > 0, "{run}");
            assert!(m["keys"].as_u64().unwrap() >= 1000, "{m}");
        }
    }
    let md = std::fs::read_to_string(s.out().join("report.md")).unwrap();
    assert!(md.contains("## Memory (Redis INFO)"), "{md}");

    // Again: both builds come from the cache.
    let _ = std::fs::remove_dir_all(s.out());
    let out = s
        .run_cmd(&s.path().join("redis.toml"))
        .args(["--set", "plan.duration=300ms", "--set", "plan.warmup=0s"])
        .output()
        .expect("run bakeoff");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r = s.results();
    for v in r["variants"].as_array().unwrap() {
        if v["name"] != "debian" {
            assert_eq!(v["build"]["cached"], true, "{v}");
        }
    }
    no_server_left(SERVER, &s);
}

#[test]
fn a_build_that_corrupts_stored_values_is_caught() {
    let s = Scratch::new();
    s.write("corrupt.patch", CORRUPT);
    let variants = format!(
        "{}{}",
        built("clean", "\"MALLOC=libc\"", ""),
        built("corrupt", "\"MALLOC=libc\"", "\"corrupt.patch\"")
    );
    // Over TCP and over the server's unix socket.
    let workload = "\n[[workload]]\nkind = \"kv\"\nconnections = [4]\nkeys = 1000\nmix = { get = 50, set = 50 }\n\n[[workload]]\nkind = \"kv\"\nname = \"unix\"\ntransport = \"unix\"\nconnections = [4]\nkeys = 1000\nmix = { get = 50, set = 50 }\n";
    let f = s.write("corrupt.toml", &experiment(&variants, workload, SHORT));
    let out = s.run_cmd(&f).output().expect("run bakeoff");
    no_server_left(SERVER, &s);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let r = s.results();
    let failures = |workload: &str, variant: &str| -> u64 {
        runs(&r)
            .iter()
            .filter(|(w, v, _)| w == workload && v == variant)
            .map(|(_, _, run)| run["verify_failures"].as_u64().unwrap_or(0))
            .sum()
    };
    for w in ["kv", "unix"] {
        assert_eq!(failures(w, "clean"), 0, "{w}: {stderr}");
        assert!(
            failures(w, "corrupt") > 0,
            "{w}: corruption not caught: {stderr}"
        );
    }
    let unix = runs(&r)
        .into_iter()
        .find(|(w, v, _)| w == "unix" && v == "clean")
        .expect("a unix run");
    assert!(
        unix.2["ops_per_s"].as_f64().unwrap() > 100.0,
        "{:?}",
        unix.2
    );
}

#[test]
fn bad_redis_input_is_one_line_and_exit_2() {
    let s = Scratch::new();
    let check = |name: &str, text: &str| -> String {
        let f = s.write(name, text);
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_bakeoff"))
            .arg("check")
            .arg(&f)
            .output()
            .expect("run bakeoff");
        let err = String::from_utf8_lossy(&out.stderr).trim().to_string();
        assert_eq!(out.status.code(), Some(2), "{name}: {err}");
        assert_eq!(err.lines().count(), 1, "{name}: {err}");
        err
    };
    let memcached = "name = \"m\"\n[target]\nkind = \"memcached\"\n[[variant]]\nname = \"a\"\nbinary = \"/usr/bin/memcached\"\n";
    let redis = format!(
        "name = \"r\"\n[target]\nkind = \"redis\"\n[[variant]]\nname = \"a\"\nbinary = \"{DEBIAN}\"\n"
    );
    let e = check(
        "redis-mix-on-memcached.toml",
        &format!("{memcached}[[workload]]\nkind = \"kv\"\nmix = {{ get = 9, lpush = 1 }}\n"),
    );
    assert!(e.contains("unknown command \"lpush\""), "{e}");
    let e = check(
        "unix-on-memcached.toml",
        &format!("{memcached}[[workload]]\nkind = \"kv\"\ntransport = \"unix\"\n"),
    );
    assert!(
        e.contains("transport = \"unix\" is for redis targets"),
        "{e}"
    );
    let e = check(
        "benchmark-on-memcached.toml",
        &format!("{memcached}[[workload]]\nkind = \"redis-benchmark\"\n"),
    );
    assert!(e.contains("needs a redis or valkey target"), "{e}");
    let e = check(
        "oltp-on-redis.toml",
        &format!("{redis}[[workload]]\nkind = \"oltp\"\n"),
    );
    assert!(
        e.contains("needs a mariadb, mysql or postgres target"),
        "{e}"
    );
    let e = check(
        "pipeline-0.toml",
        &format!("{redis}[[workload]]\nkind = \"kv\"\npipeline = 0\n"),
    );
    assert!(e.contains("pipeline"), "{e}");
    let e = check(
        "benchmark-test.toml",
        &format!("{redis}[[workload]]\nkind = \"redis-benchmark\"\ntests = \"get,nope\"\n"),
    );
    assert!(e.contains("unknown test \"nope\""), "{e}");
    let e = check(
        "owned-port.toml",
        &format!("{redis}options = {{ port = 7000 }}\n[[workload]]\nkind = \"kv\"\n"),
    );
    assert!(e.contains("option port sets the port"), "{e}");

    // A source tree that is not Redis: make succeeds, no src/redis-server: that variant
    // fails with the build's message, the other runs.
    let tree = s.path().join("not-redis");
    std::fs::create_dir_all(&tree).unwrap();
    std::fs::write(tree.join("Makefile"), "all:\n\t@echo nothing to build\n").unwrap();
    let f = s.write(
        "not-redis.toml",
        &format!(
            "name = \"n\"\n[target]\nkind = \"redis\"\nsource = {{ path = \"not-redis\" }}\n[[variant]]\nname = \"built\"\ncompiler = \"gcc-12\"\n[[variant]]\nname = \"debian\"\nbinary = \"{DEBIAN}\"\n[[workload]]\nkind = \"kv\"\nconnections = [2]\n[plan]\n{SHORT}\n"
        ),
    );
    let out = s.run_cmd(&f).output().expect("run bakeoff");
    no_server_left(SERVER, &s);
    let r = s.results();
    let built = &r["variants"][0];
    assert_eq!(built["status"], "failed", "{built}");
    assert!(
        built["error"]
            .as_str()
            .unwrap_or("")
            .contains("src/redis-server"),
        "{built} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(r["variants"][1]["status"], "ok");
    let _ = std::fs::remove_dir_all(s.out());

    // A directive Redis does not know: the variant fails with Redis's own message.
    let f = s.write(
        "unknown-directive.toml",
        &format!(
            "{redis}options = {{ no-such-directive = \"1\" }}\n[[variant]]\nname = \"b\"\nbinary = \"{DEBIAN}\"\n[[workload]]\nkind = \"kv\"\nconnections = [2]\n[plan]\n{SHORT}\n"
        ),
    );
    let out = s.run_cmd(&f).output().expect("run bakeoff");
    no_server_left(SERVER, &s);
    let r = s.results();
    let a = &r["variants"][0];
    assert_eq!(a["status"], "failed", "{a}");
    assert!(
        a["error"]
            .as_str()
            .unwrap_or("")
            .contains("no-such-directive"),
        "{a} {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn sigint_and_kill_9_leave_no_redis_behind() {
    let s = Scratch::new();
    let text = format!(
        "name = \"long\"\n[target]\nkind = \"redis\"\n[[variant]]\nname = \"debian\"\nbinary = \"{DEBIAN}\"\n[[workload]]\nkind = \"kv\"\nconnections = [2]\n[plan]\nrepetitions = 3\nwarmup = \"0s\"\nduration = \"30s\"\n"
    );
    let f = s.write("long.toml", &text);
    for (signal, expect_exit) in [("INT", Some(130)), ("KILL", None)] {
        signal_leaves_no_server(&s, &f, SERVER, signal, expect_exit);
    }
}
