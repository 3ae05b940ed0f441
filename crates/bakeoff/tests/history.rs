//! Experiment history end to end: `bakeoff run` records into the store given by --store,
//! `history` lists, `compare` (by folder and by id) judges B against A and writes a
//! report, `trend` follows a figure over runs; bad input is one line and exit status 2;
//! a run killed with -9 leaves a store that still opens. Servers are the installed
//! memcached, so runs take seconds.

mod common;

use common::{pids_named, send_and_wait, wait_for, Scratch};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn experiment(duration: &str, repetitions: usize) -> String {
    common::memcached_installed("hist", common::ARGS_64)
        + &common::installed("debian", "")
        + &common::installed("threads2", "args = [\"-t\", \"2\"]\n")
        + "\n"
        + &common::kv("mixed", "4", 2000, "")
        + &format!("\n[plan]\nrepetitions = {repetitions}\nwarmup = \"100ms\"\nduration = \"{duration}\"\n")
}

/// The bakeoff binary, run in the scratch dir, with $BAKEOFF_STORE pointing at a file
/// that must never be written (every command here passes --store).
fn bakeoff(s: &Scratch) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_bakeoff"));
    c.current_dir(s.path())
        .env("BAKEOFF_STORE", s.path().join("env-store.sqlite"));
    c
}

fn store(s: &Scratch) -> PathBuf {
    s.path().join("h.sqlite")
}

/// `bakeoff run FILE --out <scratch>/<out> --store <scratch>/h.sqlite`.
fn run_cmd(s: &Scratch, file: &Path, out: &str) -> Command {
    let mut c = bakeoff(s);
    c.arg("run")
        .arg(file)
        .arg("--out")
        .arg(s.path().join(out))
        .arg("--store")
        .arg(store(s))
        .arg("--cache")
        .arg(common::cache_dir())
        .arg("--sandbox-dir")
        .arg(s.sandboxes())
        .arg("--quiet");
    c
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).to_string()
}

fn ok(out: &Output) -> String {
    let stdout = text(&out.stdout);
    assert!(
        out.status.success(),
        "stdout:\n{stdout}\nstderr:\n{}",
        text(&out.stderr)
    );
    stdout
}

/// `bakeoff ARGS... --store <scratch>/h.sqlite`.
fn with_store(s: &Scratch, args: &[&str]) -> Output {
    bakeoff(s)
        .args(args)
        .arg("--store")
        .arg(store(s))
        .output()
        .expect("run bakeoff")
}

/// Exit status 2 and exactly one line on stderr, which is returned.
fn bad_input(out: &Output) -> String {
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "stderr:\n{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    err
}

/// memcached processes started in this test's sandboxes (their working directory is
/// there; other tests run in parallel with servers of their own).
fn our_servers(s: &Scratch) -> Vec<u32> {
    let root = s.sandboxes();
    pids_named("memcached")
        .into_iter()
        .filter(|pid| {
            std::fs::read_link(format!("/proc/{pid}/cwd")).is_ok_and(|cwd| cwd.starts_with(&root))
        })
        .collect()
}

fn no_server_left(s: &Scratch) {
    let gone = wait_for(5.0, || our_servers(s).is_empty());
    assert!(gone, "memcached outlived bakeoff: {:?}", our_servers(s));
}

#[test]
fn history_compare_and_trend_over_two_runs() {
    let s = Scratch::new();
    let f = s.write("hist.toml", &experiment("500ms", 2));

    // Nothing recorded yet: one line saying so and where, and no file created.
    let empty = ok(&with_store(&s, &["history"]));
    assert_eq!(empty.lines().count(), 1, "{empty}");
    assert!(
        empty.contains("no history yet") && empty.contains("h.sqlite"),
        "{empty}"
    );
    assert!(!store(&s).exists());

    for (i, out) in ["first", "second"].iter().enumerate() {
        let stdout = ok(&run_cmd(&s, &f, out).output().expect("run"));
        assert!(
            stdout.contains(&format!("history: #{} in ", i + 1)),
            "{stdout}"
        );
        no_server_left(&s);
    }
    assert!(!s.path().join("env-store.sqlite").exists());

    // Both listed, newest first, with their folders.
    let listing = ok(&with_store(&s, &["history"]));
    let rows: Vec<&str> = listing
        .lines()
        .filter(|l| l.contains("hist") && l.contains("complete"))
        .collect();
    assert_eq!(rows.len(), 2, "{listing}");
    assert!(
        rows[0].trim_start().starts_with('2') && rows[0].ends_with("second"),
        "{listing}"
    );
    assert!(
        rows[1].trim_start().starts_with('1') && rows[1].ends_with("first"),
        "{listing}"
    );
    assert!(rows[0].contains("debian, threads2"), "{listing}");
    assert!(rows[0].contains("(mixed x4 debian)"), "{listing}");
    let named = ok(&with_store(
        &s,
        &["history", "--name", "hist", "--limit", "1"],
    ));
    assert!(named.contains("1 older not shown"), "{named}");

    // Compare by folders: a verdict per cell, a results folder with report.md.
    let out = bakeoff(&s)
        .args(["compare", "first", "second"])
        .output()
        .expect("compare");
    let stdout = ok(&out);
    for variant in ["debian", "threads2"] {
        let row = stdout
            .lines()
            .find(|l| l.starts_with("mixed") && l.contains(variant))
            .unwrap_or_else(|| panic!("no row for {variant}:\n{stdout}"));
        assert!(
            [
                "inconclusive",
                "equivalent",
                "faster",
                "slower",
                "client-bound",
                "machine-busy"
            ]
            .iter()
            .any(|v| row.ends_with(v)),
            "{row}"
        );
    }
    assert!(
        stdout.contains("verdict") && stdout.contains("B/A"),
        "{stdout}"
    );
    let folder = stdout
        .lines()
        .find_map(|l| l.strip_prefix("results: "))
        .expect("results line");
    let folder = s.path().join(folder);
    assert!(
        folder.starts_with(s.path().join("results"))
            && folder.to_string_lossy().contains("compare-hist-vs-hist-"),
        "{}",
        folder.display()
    );
    let report = std::fs::read_to_string(folder.join("report.md")).expect("report.md");
    assert!(
        report.contains("B:debian") && report.contains("A:threads2"),
        "{report}"
    );
    let r: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(folder.join("results.json")).expect("results.json"),
    )
    .expect("json");
    assert_eq!(r["schema"], "bakeoff.results/1");
    assert_eq!(r["comparisons"].as_array().map(Vec::len), Some(2), "{r}");
    assert_eq!(r["comparisons"][0]["baseline"], "A:debian");
    // `bakeoff report` re-renders a comparison like any results folder.
    ok(&bakeoff(&s)
        .arg("report")
        .arg(&folder)
        .output()
        .expect("report"));

    // Compare by history ids.
    let by_id = ok(&with_store(&s, &["compare", "1", "2", "--out", "by-id"]));
    assert!(by_id.contains("threads2"), "{by_id}");
    let report = std::fs::read_to_string(s.path().join("by-id").join("report.md")).expect("md");
    assert!(
        report.contains("history #1") && report.contains("history #2"),
        "{report}"
    );
    // The compared cells over the experiment's two recorded runs.
    assert!(
        report.contains("## History of the compared cells"),
        "{report}"
    );
    let html = std::fs::read_to_string(s.path().join("by-id").join("report.html")).expect("html");
    assert!(html.contains("id=\"history\""), "no history section");
    let json: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(s.path().join("by-id").join("results.json")).expect("json"),
    )
    .expect("json");
    let h = &json["history"];
    assert!(!h.as_array().unwrap().is_empty(), "{h}");
    assert_eq!(h[0]["points"].as_array().unwrap().len(), 2, "{h}");

    // Trend: one row per recorded run, oldest first, and a sparkline.
    let trend = ok(&with_store(&s, &["trend", "hist", "--variant", "debian"]));
    let rows: Vec<&str> = trend.lines().filter(|l| l.contains("complete")).collect();
    assert_eq!(rows.len(), 2, "{trend}");
    assert!(
        rows[0].trim_start().starts_with('1') && rows[1].trim_start().starts_with('2'),
        "{trend}"
    );
    assert!(trend.contains("mixed x4 debian"), "{trend}");
    assert!(!trend.contains("threads2"), "{trend}");
    assert!(trend.contains(" -> "), "{trend}");

    // --json on history, trend and compare: machine-readable, same facts.
    let parse = |text: String| -> serde_json::Value {
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
    };
    let h = parse(ok(&with_store(&s, &["history", "--json"])));
    assert_eq!(h.as_array().map(Vec::len), Some(2), "{h}");
    assert_eq!(h[0]["id"], 2, "{h}");
    assert_eq!(h[0]["entry"]["name"], "hist", "{h}");
    let t = parse(ok(&with_store(&s, &["trend", "hist", "--json"])));
    assert_eq!(t["rows"].as_array().map(Vec::len), Some(2), "{t}");
    let c = parse(ok(&with_store(
        &s,
        &["compare", "1", "2", "--json", "--out", "by-id-json"],
    )));
    assert_eq!(c["comparisons"].as_array().map(Vec::len), Some(2), "{c}");
    // --color always colours even into a pipe; NO_COLOR turns auto off.
    let colored = ok(&with_store(
        &s,
        &["compare", "1", "2", "--color", "always", "--out", "c1"],
    ));
    assert!(colored.contains('\u{1b}'), "{colored}");
    let plain = ok(&with_store(
        &s,
        &["compare", "1", "2", "--color", "never", "--out", "c2"],
    ));
    assert!(!plain.contains('\u{1b}'), "{plain}");

    // Bad input: one line, exit status 2.
    let err = bad_input(&with_store(&s, &["compare", "/nonexistent", "1"]));
    assert!(err.contains("/nonexistent"), "{err}");
    let err = bad_input(&with_store(&s, &["compare", "1", "99"]));
    assert!(err.contains("#99"), "{err}");
    let err = bad_input(&with_store(&s, &["trend", "nope"]));
    assert!(err.contains("known: hist"), "{err}");
    let err = bad_input(&with_store(&s, &["trend", "hist", "--variant", "nope"]));
    assert!(err.contains("debian, threads2"), "{err}");
    std::fs::create_dir_all(s.path().join("broken")).expect("mkdir");
    std::fs::write(s.path().join("broken").join("results.json"), "{").expect("write");
    let err = bad_input(&with_store(&s, &["compare", "broken", "1"]));
    assert!(err.contains("results.json"), "{err}");
    no_server_left(&s);
}

#[test]
fn interrupted_runs_are_marked_and_kill_9_leaves_a_store_that_opens() {
    let s = Scratch::new();
    let f = s.write("long.toml", &experiment("30s", 3));
    for (signal, out) in [("INT", "interrupted"), ("KILL", "killed")] {
        let mut child = run_cmd(&s, &f, out)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn");
        let started = wait_for(20.0, || !our_servers(&s).is_empty());
        // Let the measured window begin, then stop bakeoff.
        std::thread::sleep(std::time::Duration::from_millis(500));
        let status = send_and_wait(&mut child, signal);
        assert!(started, "no server started");
        if signal == "INT" {
            assert_eq!(status.code(), Some(130));
        }
        no_server_left(&s);
    }
    // The store opens; the interrupted run is there, marked so; the killed one is absent.
    let listing = ok(&with_store(&s, &["history"]));
    let rows: Vec<&str> = listing.lines().filter(|l| l.contains("hist")).collect();
    assert_eq!(rows.len(), 1, "{listing}");
    assert!(
        rows[0].contains("interrupted") && rows[0].ends_with("interrupted"),
        "{listing}"
    );
    assert!(!listing.contains("killed"), "{listing}");
}

#[test]
fn a_store_that_cannot_be_written_is_a_warning_not_a_failed_run() {
    let s = Scratch::new();
    let f = s.write("quick.toml", &experiment("300ms", 1));
    std::fs::write(store(&s), "not a database\n".repeat(100)).expect("write");
    let out = run_cmd(&s, &f, "out").output().expect("run");
    let stdout = ok(&out);
    let stderr = text(&out.stderr);
    let warnings: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("not recorded in the history"))
        .collect();
    assert_eq!(warnings.len(), 1, "{stderr}");
    assert!(
        warnings[0].contains("not a bakeoff history store"),
        "{stderr}"
    );
    assert!(!stdout.contains("history: #"), "{stdout}");
    assert!(s.path().join("out").join("results.json").is_file());
    no_server_left(&s);
    // Reading it is bad input, one line.
    let err = bad_input(&with_store(&s, &["history"]));
    assert!(err.contains("not a bakeoff history store"), "{err}");
}
