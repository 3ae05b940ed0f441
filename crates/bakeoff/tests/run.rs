//! End-to-end: `bakeoff run` against real memcached builds from Debian's source and the
//! installed binary. Short runs (correctness, not timing): builds with a patch, a failing
//! build, the cache, a server that exits at start or dies mid-run, Ctrl-C, kill -9.

mod common;

use common::{
    assert_ok, build, entries, installed, item, kv, memcached_source, signal_leaves_no_server,
    Scratch, ARGS_64,
};

/// Adds a string to the binary without changing behaviour.
const PATCH: &str = "--- a/memcached.c\n+++ b/memcached.c\n@@ -0,0 +1 @@\n+static const char bakeoff_mark[] __attribute__((used)) = \"bakeoff test patch\";\n";

fn experiment(variants: &str, plan: &str) -> String {
    memcached_source("e2e", ARGS_64)
        + variants
        + "\n"
        + &kv(
            "mixed",
            "4",
            2000,
            "mix = { get = 80, set = 10, delete = 5, multiget = 5 }\n",
        )
        + "\n[plan]\n"
        + plan
        + "\n"
}

#[test]
fn builds_patch_failure_binary_and_cache() {
    let s = Scratch::new();
    s.write("mark.patch", PATCH);
    let variants = variants_without_broken()
        + &build("broken", "gcc-12", "-O2 -fno-such-flag-bakeoff", "")
        + &installed("debian", "");
    let f = s.write(
        "e2e.toml",
        &experiment(
            &variants,
            "repetitions = 2\nwarmup = \"200ms\"\nduration = \"700ms\"\nseed = 3",
        ),
    );
    let out = s.run_cmd(&f).output().expect("run bakeoff");
    let stdout = assert_ok(&out);
    let r = s.results();
    assert_eq!(r["schema"], "bakeoff.results/1");
    assert_eq!(r["status"], "complete");
    let by = |n: &str| item(&r["variants"], "name", n).clone();
    assert_eq!(by("gcc-O2")["status"], "ok");
    assert_eq!(by("broken")["status"], "failed");
    let err = by("broken")["error"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        err.contains("fno-such-flag-bakeoff") || err.contains("log"),
        "{err}"
    );
    assert_ne!(
        by("gcc-O2")["build"]["binary_sha256"],
        by("patched")["build"]["binary_sha256"]
    );
    assert!(by("gcc-O2")["build"]["compiler_version"]
        .as_str()
        .unwrap_or_default()
        .contains("gcc"));
    assert_eq!(by("debian")["build"]["kind"], "binary");
    // 3 variants that ran x 1 cell, 2 runs each, all valid, every get verified.
    let cells = r["cells"].as_array().expect("cells");
    assert_eq!(cells.len(), 3, "{cells:?}");
    for c in cells {
        assert_eq!(c["runs"].as_array().map(|a| a.len()), Some(2), "{c}");
        assert_eq!(c["valid_runs"], 2, "{c}");
        assert!(c["median_ops_per_s"].as_f64().unwrap_or(0.0) > 100.0, "{c}");
        for run in c["runs"].as_array().into_iter().flatten() {
            assert_eq!(run["verify_failures"], 0);
            common::assert_loopback_only(run);
            assert!(run["server_cpu_s"].as_f64().unwrap_or(0.0) > 0.0, "{run}");
            assert!(
                run["latency_us"]["p99"].as_f64().unwrap_or(0.0) > 0.0,
                "{run}"
            );
        }
    }
    assert_eq!(r["comparisons"].as_array().map(|a| a.len()), Some(2));
    assert!(s.out().join("report.md").is_file());
    assert!(
        stdout.contains("gcc-O2") && stdout.contains("verdict"),
        "{stdout}"
    );
    // A second run rebuilds nothing.
    let s2 = Scratch::new();
    s2.write("mark.patch", PATCH);
    let f2 = s2.write(
        "e2e.toml",
        &experiment(
            &variants_without_broken(),
            "repetitions = 1\nwarmup = \"0s\"\nops = 2000",
        ),
    );
    assert_ok(&s2.run_cmd(&f2).output().expect("run bakeoff"));
    let r2 = s2.results();
    for v in r2["variants"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|v| v["build"]["kind"] == "build")
    {
        assert_eq!(v["build"]["cached"], true, "{v}");
    }
    // `bakeoff report` re-renders from results.json alone.
    for f in ["report.md", "report.html", "results.csv", "bench.txt"] {
        std::fs::remove_file(s.out().join(f)).expect("rm a report");
    }
    let rep = std::process::Command::new(env!("CARGO_BIN_EXE_bakeoff"))
        .arg("report")
        .arg(s.out())
        .output()
        .expect("report");
    assert!(rep.status.success());
    for f in ["report.md", "report.html", "results.csv", "bench.txt"] {
        assert!(s.out().join(f).is_file(), "{f} not re-rendered");
    }
}

/// [`experiment`] on the installed memcached alone (variant `debian`), no source.
fn installed_only(plan: &str) -> String {
    experiment(&installed("debian", ""), plan).replace("source = { debian = \"memcached\" }\n", "")
}

fn variants_without_broken() -> String {
    build("gcc-O2", "gcc-12", "-O2", "")
        + &build("patched", "gcc-12", "-O2", "patches = [\"mark.patch\"]\n")
}

#[test]
fn server_faults_mark_runs_invalid_and_the_experiment_goes_on() {
    let s = Scratch::new();
    // A "server" that starts memcached and kills it 1.2 s later: it dies mid-run.
    let dies = s.write(
        "dies.sh",
        "#!/bin/sh\n/usr/bin/memcached \"$@\" &\npid=$!\nsleep 1.2\nkill -9 $pid\nwait $pid\nexit 137\n",
    );
    std::process::Command::new("chmod")
        .arg("+x")
        .arg(&dies)
        .status()
        .expect("chmod");
    let variants = format!(
        r#"
[[variant]]
name = "debian"
binary = "/usr/bin/memcached"

[[variant]]
name = "bad-args"
binary = "/usr/bin/memcached"
args = ["--no-such-flag"]

[[variant]]
name = "dies"
binary = "{}"
"#,
        dies.display()
    );
    let text = experiment(
        &variants,
        "repetitions = 2\nwarmup = \"200ms\"\nduration = \"2s\"",
    )
    .replace("source = { debian = \"memcached\" }\n", "");
    let f = s.write("faults.toml", &text);
    let out = s.run_cmd(&f).output().expect("run bakeoff");
    // Finished, but two variants have no valid run: exit status 4.
    common::assert_exit(&out, 4);
    let r = s.results();
    let cell = |v: &str| item(&r["cells"], "variant", v).clone();
    assert_eq!(cell("debian")["valid_runs"], 2);
    for v in ["bad-args", "dies"] {
        let c = cell(v);
        assert_eq!(c["valid_runs"], 0, "{c}");
        let reason = c["runs"][0]["invalid_reason"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        assert!(!reason.is_empty(), "{c}");
        if v == "bad-args" {
            assert!(reason.contains("start"), "{reason}");
        }
    }
    let warnings = r["warnings"].to_string();
    assert!(warnings.contains("invalid"), "{warnings}");
}

#[test]
fn sigint_and_kill_9_leave_no_server_behind() {
    let s = Scratch::new();
    let text = installed_only("repetitions = 3\nwarmup = \"0s\"\nduration = \"30s\"");
    let f = s.write("long.toml", &text);
    for (signal, expect_exit) in [("INT", Some(130)), ("KILL", None)] {
        signal_leaves_no_server(&s, &f, "memcached", signal, expect_exit);
        if expect_exit.is_some() {
            assert_eq!(s.results()["status"], "interrupted");
        }
    }
    // The kill -9 left a sandbox dir behind; the next run reaps it.
    let leftover = entries(&s.sandboxes()).len();
    let quick = s.write(
        "quick.toml",
        &text
            .replace("duration = \"30s\"", "duration = \"300ms\"")
            .replace("repetitions = 3", "repetitions = 1"),
    );
    let _ = std::fs::remove_dir_all(s.out());
    assert_ok(&s.run_cmd(&quick).output().expect("run"));
    let after = entries(&s.sandboxes()).len();
    assert!(
        after == 0,
        "stale sandboxes left: {leftover} before, {after} after"
    );
}

#[test]
fn precision_stops_a_cell_early() {
    let s = Scratch::new();
    let plan = "repetitions = 8\nwarmup = \"0s\"\nduration = \"300ms\"\ntarget_ci = 0.4\nmin_repetitions = 2";
    let text = installed_only(plan);
    let f = s.write("ci.toml", &text);
    assert_ok(&s.run_cmd(&f).output().expect("run bakeoff"));
    let cell = &s.results()["cells"][0];
    let runs = cell["runs"].as_array().map_or(0, |a| a.len());
    assert!((2..8).contains(&runs), "{cell}");
    assert_eq!(cell["stop_reason"], "precision", "{cell}");
}

/// Without a terminal (CI, nohup, a pipe) a run prints one plain line per run and per
/// round, as pgbench -P does; --quiet prints neither.
#[test]
fn without_a_terminal_progress_is_plain_lines() {
    let s = Scratch::new();
    let text = installed_only("repetitions = 2\nwarmup = \"0s\"\nduration = \"300ms\"");
    let f = s.write("plain.toml", &text);
    let out = s
        .bare_cmd("run", &f, &s.out())
        .arg("--no-history")
        .output()
        .expect("run");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let runs: Vec<&str> = stderr.lines().filter(|l| l.contains("] run ")).collect();
    assert_eq!(runs.len(), 2, "{stderr}");
    for l in &runs {
        let shape = l.starts_with('[') && !l.contains("]: ") && l.ends_with(" ops/s");
        assert!(shape && l.contains("debian mixed x4 r"), "{l}");
    }
    let rounds = stderr.lines().filter(|l| l.contains("] round ")).count();
    assert_eq!(rounds, 2, "{stderr}");
    let _ = std::fs::remove_dir_all(s.out());
    let quiet = s
        .run_cmd(&f)
        .arg("--no-history")
        .output()
        .expect("quiet run");
    let q = String::from_utf8_lossy(&quiet.stderr);
    assert!(quiet.status.success(), "{q}");
    assert!(!q.contains("] run ") && !q.contains("] round "), "{q}");
}
