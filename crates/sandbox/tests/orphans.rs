//! Nothing outlives bakeoff: a helper process (this test binary re-executed with
//! BAKEOFF_SANDBOX_HELPER set) starts a real memcached sandbox and then is SIGKILLed (the
//! parent-death signal must take memcached down, and `reap_stale` must clean the dir) or
//! gets SIGINT (the signal handler must kill memcached and let the helper exit by itself).

mod common;

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::Ordering;
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

use bakeoff_sandbox::{
    install_signal_handler, reap_stale, Sandbox, SandboxError, SandboxSpec, TargetKind,
};
use common::{ChildGuard, PidGuard, TestRoot};

const MODE_VAR: &str = "BAKEOFF_SANDBOX_HELPER";
const ROOT_VAR: &str = "BAKEOFF_SANDBOX_HELPER_ROOT";

/// The helper's body; a no-op in a normal test run.
#[test]
fn helper_main() {
    let Some(mode) = std::env::var_os(MODE_VAR) else {
        return;
    };
    let root = PathBuf::from(std::env::var_os(ROOT_VAR).expect("helper needs a root"));
    // The parent owns (and removes) the root: no TestRoot here.
    let spec = SandboxSpec::new("helper", TargetKind::Memcached, common::MEMCACHED, root);
    match mode.to_str() {
        Some("pdeathsig") => helper_pdeathsig(spec),
        Some("sigint") => helper_sigint(spec),
        other => panic!("unknown helper mode {other:?}"),
    }
}

/// Starts a sandbox from a thread that then ends, reports the pid, waits to be killed.
fn helper_pdeathsig(spec: SandboxSpec) {
    let sb = std::thread::spawn(move || Sandbox::start(&spec).unwrap())
        .join()
        .unwrap();
    println!("\nSERVER_PID {}", sb.pid());
    std::thread::sleep(Duration::from_secs(30));
}

/// Installs the handler, starts a sandbox, winds down once the cancel flag is set.
fn helper_sigint(spec: SandboxSpec) {
    let cancel = install_signal_handler();
    let mut sb = Sandbox::start(&spec).unwrap();
    println!("\nSERVER_PID {}", sb.pid());
    let deadline = Instant::now() + Duration::from_secs(20);
    while !cancel.load(Ordering::SeqCst) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(cancel.load(Ordering::SeqCst), "no signal within 20 s");
    // The flag is set just before the servers are killed: give the kill a moment.
    let deadline = Instant::now() + Duration::from_secs(2);
    while sb.is_alive() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    println!("\nCANCELLED alive={}", sb.is_alive());
    match Sandbox::start(&spec) {
        Err(SandboxError::Cancelled) => println!("\nREFUSED"),
        other => println!("UNEXPECTED {other:?}"),
    }
    drop(sb);
}

/// Starts the helper in `mode` on `root`; returns it and its stdout lines.
fn spawn_helper(mode: &str, root: &TestRoot) -> (ChildGuard, Receiver<String>) {
    let exe = std::env::current_exe().unwrap();
    let mut child = Command::new(exe)
        .args(["--exact", "helper_main", "--nocapture", "--test-threads=1"])
        .env(MODE_VAR, mode)
        .env(ROOT_VAR, root.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    (ChildGuard(child), rx)
}

/// The text from `prefix` on of the next line holding it, within `timeout` (libtest may
/// print "test helper_main ... " in front of it).
fn expect_line(rx: &Receiver<String>, prefix: &str, timeout: Duration) -> String {
    let deadline = Instant::now() + timeout;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(line) => {
                if let Some(at) = line.find(prefix) {
                    return line[at..].to_string();
                }
            }
            Err(e) => panic!("helper printed no {prefix:?} line: {e}"),
        }
    }
}

fn server_pid(rx: &Receiver<String>) -> u32 {
    let line = expect_line(rx, "SERVER_PID ", Duration::from_secs(20));
    line["SERVER_PID ".len()..].trim().parse().unwrap()
}

#[test]
fn server_dies_with_a_killed_bakeoff_and_the_dir_is_reaped() {
    let root = TestRoot::new("pdeathsig");
    let (mut helper, rx) = spawn_helper("pdeathsig", &root);
    let server = PidGuard::new(server_pid(&rx));
    assert!(
        server.alive(),
        "memcached must survive the end of the starting thread"
    );
    helper.0.kill().unwrap();
    helper.0.wait().unwrap();
    assert!(
        server.gone_within(Duration::from_secs(2)),
        "memcached outlived bakeoff"
    );

    assert_eq!(root.entries().len(), 1, "{:?}", root.entries());
    let reports = reap_stale(root.path());
    assert_eq!(reports.len(), 1, "{reports:?}");
    let line = reports[0].to_string();
    assert!(line.starts_with("removed stale sandbox helper-"), "{line}");
    assert!(
        line.contains(&format!("owner pid {} gone", helper.0.id())),
        "{line}"
    );
    assert!(root.entries().is_empty(), "{:?}", root.entries());
}

#[test]
fn sigint_kills_servers_and_lets_bakeoff_wind_down() {
    let root = TestRoot::new("sigint");
    let (mut helper, rx) = spawn_helper("sigint", &root);
    let server = PidGuard::new(server_pid(&rx));
    assert!(server.alive());
    unsafe { libc::kill(helper.0.id() as i32, libc::SIGINT) };
    assert!(
        server.gone_within(Duration::from_secs(2)),
        "SIGINT left memcached running"
    );
    let cancelled = expect_line(&rx, "CANCELLED", Duration::from_secs(5));
    assert_eq!(cancelled, "CANCELLED alive=false");
    expect_line(&rx, "REFUSED", Duration::from_secs(5));
    let exited = common::wait_until(Duration::from_secs(5), || {
        matches!(helper.0.try_wait(), Ok(Some(_)))
    });
    assert!(exited, "the helper did not exit on its own");
    assert!(helper.0.wait().unwrap().success());
    assert!(root.entries().is_empty(), "{:?}", root.entries());
}
