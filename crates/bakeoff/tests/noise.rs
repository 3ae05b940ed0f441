//! End-to-end: `bakeoff check --noise` runs the baseline alone (Debian's memcached) a few
//! times with short windows and prints the forecast the experiment would make per
//! comparison, exit status 0; it leaves no server, no derived file and no results folder
//! behind; bad input is exit status 2.

mod common;

use common::{cache_dir, no_server_left, Scratch};
use std::process::Command;

fn experiment() -> String {
    common::memcached_installed("noise-e2e", common::ARGS_64)
        + &common::installed("debian", "")
        + &common::installed("two-threads", "args = [\"-t\", \"2\"]\n")
        + "\n"
        + &common::kv("kv", "8, 16", 2000, "")
        + "\n[plan]\nbudget = \"3m\"\nprecision = 0.02\nwarmup = \"200ms\"\nduration = \"600ms\"\n"
}

fn check(s: &Scratch, file: &std::path::Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_bakeoff"));
    c.arg("check")
        .arg("--noise")
        .arg(file)
        .arg("--cache")
        .arg(cache_dir())
        .arg("--sandbox-dir")
        .arg(s.sandboxes())
        .env("TMPDIR", s.path());
    c
}

#[test]
fn check_noise_runs_the_baseline_and_prints_a_forecast() {
    let s = Scratch::new();
    let f = s.write("noise.toml", &experiment());
    let started = std::time::Instant::now();
    let out = check(&s, &f).output().expect("bakeoff check --noise");
    no_server_left("memcached", &s);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(0),
        "stdout:\n{stdout}\nstderr:\n{stderr}"
    );
    assert!(
        started.elapsed().as_secs() < 60,
        "took {:?}",
        started.elapsed()
    );
    // The baseline alone, six runs of the first point (x8), none of the other variant.
    let runs: Vec<&str> = stderr.lines().filter(|l| l.contains("] run ")).collect();
    assert_eq!(runs.len(), 6, "{stderr}");
    assert!(runs.iter().all(|l| l.contains("debian kv x8 ")), "{stderr}");
    let noise_line = stdout
        .lines()
        .find(|l| l.starts_with("noise: kv x8 debian: "))
        .unwrap_or_else(|| panic!("no noise line:\n{stdout}"));
    assert!(noise_line.contains("run-to-run CV"), "{noise_line}");
    assert!(stdout.contains("sqrt(2)"), "{stdout}");
    // One forecast per comparison of the experiment at the point measured, with the
    // experiment's budget and target.
    let forecasts: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("forecast: "))
        .collect();
    assert_eq!(forecasts.len(), 1, "{stdout}");
    let line = forecasts[0];
    assert!(
        line.starts_with("forecast: kv x8 two-threads: noise "),
        "{line}"
    );
    assert!(
        line.contains("±2.0% needs about ") || line.contains("±2.0% is out of reach"),
        "{line}"
    );
    assert!(line.contains("the budget ("), "{line}");
    assert!(line.contains("a round (run-to-run CV "), "{line}");
    // Nothing left beside the file or in the temporary folder.
    let left: Vec<String> = std::fs::read_dir(s.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("bakeoff-noise"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn check_noise_refuses_bad_input_with_status_2() {
    let s = Scratch::new();
    let f = s.write(
        "bad.toml",
        &experiment().replace("budget = \"3m\"", "budget = \"forever\""),
    );
    let out = check(&s, &f).output().expect("bakeoff check --noise");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("bad.toml:"), "{stderr}");
    assert!(!stderr.contains("] run "), "ran before refusing: {stderr}");
    // --cache belongs to --noise.
    let out = Command::new(env!("CARGO_BIN_EXE_bakeoff"))
        .args(["check", "--cache", "/tmp"])
        .arg(&f)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}
