//! Records a busy shell with perf and analyzes it (skipped where perf is missing).

use bakeoff_probe::profile::{analyze, flamegraph, parse_script, FnShare, Profile, Recording};
use std::ffi::OsStr;
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

/// `program args`, its stdin empty, killed when the guard drops.
fn spawn(program: impl AsRef<OsStr>, args: &[&str]) -> Busy {
    let program = program.as_ref();
    let child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("spawn {program:?}: {e}"));
    Busy(child)
}

/// A busy shell recorded from `start`'s return until it has had `ticks` hundredths of a
/// second of CPU and `at_least` has passed (at most 20 s), into `file` in a folder of
/// its own; the recording analyzed.
fn busy_shell_recorded(file: &str, ticks: u64, at_least: Duration) -> (tempfile::TempDir, Profile) {
    let busy = spawn("sh", &["-c", "while :; do :; done"]);
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join(file);
    let pid = busy.0.id() as i32;
    let recording = Recording::start(&[pid], &data).expect("perf record");
    let cpu0 = cpu_ticks(pid as u32);
    let began = Instant::now();
    while began.elapsed() < at_least
        || (cpu_ticks(pid as u32) < cpu0 + ticks && began.elapsed() < Duration::from_secs(20))
    {
        std::thread::sleep(Duration::from_millis(10));
    }
    recording.stop().expect("perf record stops");
    drop(busy);
    let started = Instant::now();
    let profile = analyze(&data, &shell()).expect("analyze");
    eprintln!(
        "analyze: {:?}, {} samples",
        started.elapsed(),
        profile.samples
    );
    (dir, profile)
}

#[test]
fn records_and_analyzes_a_busy_shell() {
    if !perf_installed() {
        return;
    }
    // Recorded until the shell has had 0.3 s of CPU: perf samples a process only while
    // it runs (999 Hz of its CPU time, about 300 samples here), and on a machine other
    // programs load, 0.7 s of wall time once gave it 9% of a CPU (63).
    let (_dir, profile) = busy_shell_recorded("perf.data", 30, Duration::from_millis(700));
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

/// `start` returns once perf's events count: the CPU a process has right after it is
/// sampled, however long perf took to attach (on a loaded machine, once longer than a
/// one-second window, which then held no sample).
#[test]
fn samples_from_the_moment_start_returns() {
    if !perf_installed() {
        return;
    }
    // Stopped once the shell has had 0.1 s of CPU since start returned.
    let (dir, profile) = busy_shell_recorded("short.data", 10, Duration::ZERO);
    // About 100 samples at 999 Hz of its CPU time; a recording enabled late has few.
    assert!(profile.samples > 30, "{} samples", profile.samples);
    assert!(
        !dir.path().join("short.data.ctl").exists(),
        "the control fifos are removed"
    );
}

#[test]
fn stopping_right_after_start_leaves_a_file() {
    if !perf_installed() {
        return;
    }
    let sleeper = spawn("sleep", &["30"]);
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

/// A loop in `spin` (lines 3 and 4 of hot.c), built with gcc-12 (or cc) `-O1` into
/// `dir`: `hot` with line info (`-g`), `hot-nolines` the same without (`strip -g`: the
/// symbols stay, the line tables go). None where no compiler is installed.
fn hot_binaries(dir: &Path) -> Option<(PathBuf, PathBuf)> {
    let src = dir.join("hot.c");
    std::fs::write(
        &src,
        "volatile unsigned long sink;\n__attribute__((noinline)) void spin(unsigned long n) {\n    for (unsigned long i = 0; i < n; i++)\n        sink += i * i;\n}\nint main(void) { for (;;) spin(1000000); }\n",
    )
    .ok()?;
    let with = dir.join("hot");
    let without = dir.join("hot-nolines");
    let built = ["gcc-12", "cc"].iter().any(|cc| {
        Command::new(cc)
            .args(["-g", "-O1", "-fno-omit-frame-pointer", "-o"])
            .arg(&with)
            .arg(&src)
            .status()
            .is_ok_and(|s| s.success())
    });
    if !built {
        eprintln!("no C compiler: skipping");
        return None;
    }
    std::fs::copy(&with, &without).ok()?;
    let stripped = Command::new("strip")
        .arg("-g")
        .arg(&without)
        .status()
        .ok()?;
    stripped.success().then_some((with, without))
}

/// CPU time `pid` has used, in clock ticks (utime + stime of /proc/PID/stat).
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = after.split_whitespace().collect();
    // Fields 14 and 15 of the line; the 12th and 13th after the command's ")".
    fields.get(11).and_then(|f| f.parse().ok()).unwrap_or(0)
        + fields.get(12).and_then(|f| f.parse().ok()).unwrap_or(0)
}

/// Records `binary` until it has used 400 ms of CPU (or for 15 s: a busy machine may
/// give it little) and analyzes it.
fn record(binary: &Path, dir: &Path) -> Profile {
    let busy = spawn(binary, &[]);
    let data = dir.join(format!(
        "{}.data",
        binary.file_name().unwrap().to_string_lossy()
    ));
    let pid = busy.0.id();
    let recording = Recording::start(&[pid as i32], &data).expect("perf record");
    let (start, began) = (cpu_ticks(pid), Instant::now());
    while cpu_ticks(pid) < start + 40 && began.elapsed() < Duration::from_secs(15) {
        std::thread::sleep(Duration::from_millis(50));
    }
    recording.stop().expect("perf record stops");
    drop(busy);
    let started = Instant::now();
    let profile = analyze(&data, binary).expect("analyze");
    eprintln!(
        "{}: analyze {:?} ({} samples), of which lines {} ms",
        binary.display(),
        started.elapsed(),
        profile.samples,
        profile.lines_ms
    );
    profile
}

/// The `spin` function of a profile, which must have been sampled and given lines.
fn spin_lines(p: &Profile) -> &FnShare {
    let spin = p
        .top
        .iter()
        .find(|f| f.function == "spin")
        .expect("spin sampled");
    assert!(!spin.lines.is_empty(), "{spin:?}");
    spin
}

#[test]
fn hot_lines_of_a_loop_with_and_without_line_info() {
    if !perf_installed() {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let Some((with, without)) = hot_binaries(dir.path()) else {
        return;
    };
    let p = record(&with, dir.path());
    let spin = spin_lines(&p);
    let loop_lines: f64 = spin
        .lines
        .iter()
        .filter(|l| l.place == "hot.c:3" || l.place == "hot.c:4")
        .map(|l| l.pct)
        .sum();
    assert!(loop_lines > 80.0, "{:?}", spin.lines);
    assert!(spin.lines.iter().all(|l| l.instruction.is_none()));
    assert!(spin.lines.windows(2).all(|w| w[0].samples >= w[1].samples));

    // No line info: the hottest instructions, with their disassembly.
    let p = record(&without, dir.path());
    let spin = spin_lines(&p);
    for l in &spin.lines {
        assert!(l.place.starts_with("0x"), "{l:?}");
        let code = l.instruction.as_deref().unwrap_or("");
        assert!(!code.is_empty() && !code.contains('\t'), "{l:?}");
    }
    let total: f64 = spin.lines.iter().map(|l| l.pct).sum();
    assert!(total > 0.0 && total <= 100.001, "{total}");
}
