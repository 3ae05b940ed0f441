//! Records a busy shell with perf and analyzes it (skipped where perf is missing).

use bakeoff_probe::profile::{analyze, flamegraph, parse_script, Recording};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Kills the busy child however the test ends.
struct Busy(Child);

impl Drop for Busy {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn perf_installed() -> bool {
    let ok = Command::new("perf")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!("perf is not installed: skipping");
    }
    ok
}

/// The shell `sh` runs as (dash on Debian): its file name is the "server" binary.
fn shell() -> PathBuf {
    std::fs::canonicalize("/bin/sh").unwrap_or_else(|_| PathBuf::from("/bin/sh"))
}

#[test]
fn records_and_analyzes_a_busy_shell() {
    if !perf_installed() {
        return;
    }
    let child = Command::new("sh")
        .args(["-c", "while :; do :; done"])
        .stdin(Stdio::null())
        .spawn()
        .expect("spawn sh");
    let busy = Busy(child);
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("perf.data");
    let pid = busy.0.id() as i32;
    let recording = Recording::start(&[pid], &data).expect("perf record");
    std::thread::sleep(Duration::from_millis(700));
    recording.stop().expect("perf record stops");
    drop(busy);

    let started = Instant::now();
    let profile = analyze(&data, &shell()).expect("analyze");
    eprintln!(
        "analyze: {:?}, {} samples",
        started.elapsed(),
        profile.samples
    );
    assert!(profile.samples > 100, "{} samples", profile.samples);
    assert!(!profile.event.is_empty());
    assert!(profile.top[0].self_pct > 10.0, "{:?}", profile.top[0]);
    let split = &profile.split;
    assert!(
        split.server_pct + split.kernel_pct + split.libraries_pct > 90.0,
        "{split:?}"
    );
    let svg = flamegraph(&profile.folded, "busy sh").expect("flamegraph");
    assert!(svg.starts_with(b"<?xml") || svg.starts_with(b"<svg"));
    assert!(String::from_utf8_lossy(&svg).contains("<svg"));
}

#[test]
fn stopping_right_after_start_leaves_a_file() {
    if !perf_installed() {
        return;
    }
    let child = Command::new("sleep")
        .arg("30")
        .stdin(Stdio::null())
        .spawn()
        .expect("spawn sleep");
    let sleeper = Busy(child);
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("idle.data");
    let recording = Recording::start(&[sleeper.0.id() as i32], &data).expect("perf record");
    recording.stop().expect("perf record stops at once");
    let profile = analyze(&data, Path::new("/usr/bin/sleep")).expect("analyze");
    assert!(profile.samples < 50, "{} samples of sleep", profile.samples);
}

#[test]
fn recording_a_missing_process_fails_with_perfs_message() {
    if !perf_installed() {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("perf.data");
    // Beyond pid_max (at most 2^22), so never a process.
    let err = match Recording::start(&[99_999_999], &data) {
        Ok(recording) => recording.stop().expect_err("no such process"),
        Err(err) => err,
    };
    assert!(err.to_string().contains("perf record"), "{err}");
    assert!(analyze(&dir.path().join("missing.data"), Path::new("/bin/sh")).is_err());
}

#[test]
fn empty_stacks_draw_no_flamegraph() {
    let profile = parse_script("", "sh");
    assert_eq!(profile.samples, 0);
    assert!(flamegraph(&profile.folded, "empty").is_err());
}
