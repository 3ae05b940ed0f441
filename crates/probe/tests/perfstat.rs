//! perf stat: parsing and derived figures on fixtures, and the real perf on this
//! machine (skipped when perf is not installed; passes with or without hardware
//! counters).

use bakeoff_probe::perfstat::{
    derive, detect, find_perf, parse_stat_csv, Counting, Derived, EVENTS, NOT_INSTALLED,
};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/perfstat");

fn fixture(name: &str) -> String {
    std::fs::read_to_string(format!("{FIXTURES}/{name}")).expect("fixture readable")
}

fn asked() -> Vec<String> {
    let mut v: Vec<String> = ["task-clock", "context-switches"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    v.extend(EVENTS.iter().map(|s| s.to_string()));
    v
}

#[test]
fn supported_fixture_parses_and_derives_exactly() {
    let counts = parse_stat_csv(&fixture("hybrid_supported.csv"), &asked());
    let v = |name: &str| counts.values.get(name).copied();
    assert_eq!(v("task-clock"), Some(2_503_410_000));
    assert_eq!(v("context-switches"), Some(1204));
    // cpu_core/cycles/ + cpu_atom/cycles/
    assert_eq!(v("cycles"), Some(9_876_543_200));
    // cpu_core/instructions/; the atom line was <not counted>
    assert_eq!(v("instructions"), Some(24_691_358_000));
    assert_eq!(v("branches"), Some(4_938_271_600));
    assert_eq!(v("branch-misses"), Some(49_382_716));
    assert_eq!(v("cache-references"), Some(123_456_789));
    assert_eq!(v("cache-misses"), Some(24_691_358));
    assert_eq!(v("iTLB-load-misses"), Some(12_345_679));
    assert_eq!(counts.unsupported, ["L1-icache-load-misses"]);
    assert_eq!(counts.values.len(), 9);

    let d = derive(&counts, 1_000_000);
    let expected = Derived {
        instructions_per_op: Some(24691.358),
        cycles_per_op: Some(9876.5432),
        ipc: Some(2.5),
        cache_misses_per_kinstr: Some(1.0),
        branch_misses_per_kinstr: Some(2.0),
        itlb_misses_per_kinstr: Some(0.5),
        l1i_misses_per_kinstr: None,
        unsupported: vec!["L1-icache-load-misses".into()],
    };
    assert_eq!(d, expected);
}

#[test]
fn kvm_guest_fixture_has_no_hardware_figures() {
    let events = ["task-clock", "context-switches", "instructions"];
    let counts = parse_stat_csv(&fixture("kvm_guest.csv"), &events);
    assert_eq!(counts.values.get("task-clock"), Some(&250_940_000));
    assert_eq!(counts.values.get("context-switches"), Some(&58));
    assert_eq!(counts.unsupported, ["instructions"]);
    let d = derive(&counts, 1000);
    assert_eq!(d.instructions_per_op, None);
    assert_eq!(d.ipc, None);
    assert_eq!(d.unsupported, ["instructions"]);
}

#[test]
fn perf_failure_text_is_not_counts() {
    let counts = parse_stat_csv(&fixture("no_such_pid.txt"), &["task-clock"]);
    assert!(counts.values.is_empty() && counts.unsupported.is_empty());
}

fn perf_or_skip(test: &str) -> bool {
    if find_perf().is_none() {
        println!("{test}: skipped, {NOT_INSTALLED}");
        return false;
    }
    true
}

#[test]
fn detect_splits_every_event() {
    if !perf_or_skip("detect_splits_every_event") {
        return;
    }
    let support = match detect() {
        Ok(s) => s,
        Err(e) if e.contains("perf_event_paranoid") => {
            println!("detect_splits_every_event: skipped, {e}");
            return;
        }
        Err(e) => panic!("detect failed: {e}"),
    };
    println!("{support:?}");
    for event in EVENTS {
        let n = support.supported.iter().filter(|s| s == event).count()
            + support.unsupported.iter().filter(|s| s == event).count();
        assert_eq!(n, 1, "{event} in {support:?}");
    }
    assert_eq!(
        support.supported.len() + support.unsupported.len(),
        EVENTS.len()
    );
}

/// A child process, killed and reaped when the test ends.
struct Busy(Child);

impl Busy {
    fn spawn(script: &str) -> Busy {
        let child = Command::new("sh")
            .args(["-c", script])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .spawn()
            .expect("sh runs");
        Busy(child)
    }

    fn pid(&self) -> i32 {
        self.0.id() as i32
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn events(names: &[&str]) -> Vec<String> {
    names.iter().map(|s| s.to_string()).collect()
}

#[test]
fn counting_a_busy_child() {
    if !perf_or_skip("counting_a_busy_child") {
        return;
    }
    let child = Busy::spawn("while :; do :; done");
    let asked = events(&["task-clock", "context-switches", "instructions"]);
    let t = Instant::now();
    let counting = Counting::start(&[child.pid()], &asked).expect("perf attaches");
    let attached = t.elapsed();
    std::thread::sleep(Duration::from_millis(300));
    let t = Instant::now();
    let counts = counting.stop().expect("perf prints counts");
    let stopped = t.elapsed();
    println!("{counts:?}; attach {attached:?}, stop {stopped:?}");

    let task_clock = counts.values.get("task-clock").copied().unwrap_or(0);
    // At most the 300 ms window of one busy core (less on a loaded machine).
    assert!(task_clock > 0, "{counts:?}");
    assert!(task_clock < 2_000_000_000, "{counts:?}");
    assert!(counts.values.contains_key("context-switches"), "{counts:?}");
    let counted = counts.values.contains_key("instructions");
    let unsupported = counts.unsupported.iter().any(|e| e == "instructions");
    assert!(counted != unsupported, "{counts:?}");
    assert!(stopped < Duration::from_secs(2));
}

#[test]
fn target_exiting_during_window_keeps_counts() {
    if !perf_or_skip("target_exiting_during_window_keeps_counts") {
        return;
    }
    let child = Busy::spawn("i=0; while [ $i -lt 50000 ]; do i=$((i+1)); done");
    let counting = match Counting::start(&[child.pid()], &events(&["task-clock"])) {
        Ok(c) => c,
        // The loop may already be over on a very fast machine.
        Err(e) => return println!("target ended before perf attached: {e}"),
    };
    std::thread::sleep(Duration::from_millis(800));
    let counts = counting.stop().expect("counts of the exited target");
    assert!(counts.values.contains_key("task-clock"), "{counts:?}");
}

#[test]
fn vanished_pid_is_an_error_with_perfs_message() {
    if !perf_or_skip("vanished_pid_is_an_error_with_perfs_message") {
        return;
    }
    let mut gone = Command::new("true").spawn().expect("true runs");
    let pid = gone.id() as i32;
    let _ = gone.wait();
    let result = Counting::start(&[pid], &events(&["task-clock"])).and_then(|c| c.stop());
    let err = result.expect_err("no such process");
    let msg = err.to_string();
    println!("{msg}");
    assert!(msg.starts_with("perf stat"), "{msg}");
    assert!(!msg.contains('\n'), "{msg}");
}

#[test]
fn start_rejects_empty_input() {
    assert!(Counting::start(&[], &events(&["task-clock"])).is_err());
    assert!(Counting::start(&[1], &[]).is_err());
    assert!(Counting::start(&[-1], &events(&["task-clock"])).is_err());
}
