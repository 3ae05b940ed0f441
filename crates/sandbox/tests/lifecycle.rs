//! Sandbox lifecycle against a real memcached (127.0.0.1 only): start, ready, usage,
//! stop, start failures, readiness timeout, death detection, port-clash retries; and a
//! real Redis whose file-writing, module and connect-out commands are closed.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use bakeoff_sandbox::{
    Launch, Memcached, Sandbox, SandboxError, SandboxSpec, StopOutcome, Target, TargetKind,
};
use common::{PidGuard, TestRoot};

/// Sends `n` version requests one at a time, so the server burns some CPU.
fn drive(addr: SocketAddr, n: usize) {
    let stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(2)))
        .unwrap();
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut w = stream;
    let mut line = String::new();
    for _ in 0..n {
        w.write_all(b"version\r\n").unwrap();
        line.clear();
        reader.read_line(&mut line).unwrap();
        assert!(line.starts_with("VERSION "), "{line:?}");
    }
}

#[test]
fn start_ready_usage_stop() {
    let root = TestRoot::new("basic");
    let mut sb = Sandbox::start(&root.memcached_spec("gcc O2")).unwrap();
    let guard = PidGuard::new(sb.pid());
    assert!(sb.is_alive());
    assert!(sb.addr().ip().is_loopback());
    assert!(sb.dir().starts_with(root.path()));
    assert!(sb.dir().join("sandbox.json").exists());
    assert!(sb.stderr_path().exists() && sb.stdout_path().exists());
    let before = sb.usage();
    assert_eq!(before.processes, 1);
    assert!(before.rss_kib > 0 && before.peak_rss_kib >= before.rss_kib);
    let busy = common::wait_until(Duration::from_secs(5), || {
        drive(sb.addr(), 500);
        sb.usage().cpu_s > before.cpu_s
    });
    assert!(busy, "memcached CPU never grew: {:?}", sb.usage());
    assert!(sb.usage().cpu_s_since(&before) > 0.0);
    let dir = sb.dir().to_path_buf();
    let report = sb.stop().unwrap();
    assert_eq!(report.outcome, StopOutcome::Terminated, "{report:?}");
    assert_eq!(report.status, "status 0");
    assert!(report.kept_dir.is_none());
    assert!(!dir.exists());
    assert!(!guard.alive());
}

#[test]
fn bad_arg_exits_at_start_with_stderr_tail() {
    let root = TestRoot::new("badarg");
    let mut spec = root.memcached_spec("bad");
    spec.args = vec!["--no-such-flag".into()];
    let err = Sandbox::start(&spec).unwrap_err();
    let msg = err.to_string();
    match &err {
        SandboxError::ExitedAtStart { tail, .. } => {
            assert!(tail.contains("no-such-flag"), "{tail}");
            // The log's tail is in the error; the dir is gone.
            assert!(root.entries().is_empty(), "{:?}", root.entries());
        }
        other => panic!("expected ExitedAtStart, got {other:?}"),
    }
    assert!(
        msg.starts_with("memcached exited at start with status "),
        "{msg}"
    );
    assert!(msg.ends_with("check the variant's args"), "{msg}");
    assert!(!msg.contains('\n'));
}

#[test]
fn missing_binary_is_reported() {
    let root = TestRoot::new("nobin");
    let spec = SandboxSpec::new(
        "x",
        TargetKind::Memcached,
        "/no/such/memcached",
        root.path(),
    );
    let err = Sandbox::start(&spec).unwrap_err();
    assert!(
        matches!(err, SandboxError::BinaryNotFound { .. }),
        "{err:?}"
    );
}

/// Runs the binary with the user's args only, and is never ready.
struct NeverReady;

impl Target for NeverReady {
    fn recipe(&self) -> bakeoff_build::Recipe {
        bakeoff_build::Recipe::default()
    }

    fn kind(&self) -> TargetKind {
        TargetKind::Memcached
    }
    fn command(&self, launch: &Launch<'_>) -> Command {
        let mut c = Command::new(launch.binary);
        c.args(launch.args);
        c
    }
    fn probe(&self, _addr: SocketAddr) -> std::io::Result<bool> {
        Ok(false)
    }
}

/// memcached started on every address, as an argument bakeoff's checks missed would.
struct EveryAddress;

impl Target for EveryAddress {
    fn recipe(&self) -> bakeoff_build::Recipe {
        bakeoff_build::Recipe::default()
    }

    fn kind(&self) -> TargetKind {
        TargetKind::Memcached
    }

    fn command(&self, launch: &Launch<'_>) -> Command {
        let mut c = Command::new(launch.binary);
        c.args([
            "-p",
            &launch.addr.port().to_string(),
            "-l",
            "0.0.0.0",
            "-U",
            "0",
        ]);
        if unsafe { libc::geteuid() } == 0 {
            c.args(["-u", "root"]);
        }
        c
    }

    fn probe(&self, addr: SocketAddr) -> std::io::Result<bool> {
        Memcached.probe(addr)
    }
}

/// The last line of defence: what the ready server really listens on. A server open to
/// every address is stopped and the start fails with one line naming the address.
#[test]
fn a_server_listening_beyond_loopback_is_stopped() {
    let root = TestRoot::new("exposed");
    let spec = root.memcached_spec("wide");
    let err = Sandbox::start_with(&spec, Box::new(EveryAddress)).unwrap_err();
    let SandboxError::Exposed { listens, .. } = &err else {
        panic!("expected Exposed, got {err:?}");
    };
    assert!(
        listens.contains("0.0.0.0:") && listens.ends_with("/tcp"),
        "{listens}"
    );
    assert!(
        !err.to_string().contains('\n') && err.to_string().contains("remove that setting"),
        "{err}"
    );
    let addr: SocketAddr = listens.trim_end_matches("/tcp").parse().unwrap();
    let here = SocketAddr::from(([127, 0, 0, 1], addr.port()));
    assert!(
        TcpStream::connect_timeout(&here, Duration::from_secs(1)).is_err(),
        "the exposed memcached still answers on {here}"
    );
    // A sandbox that listens where it should records it.
    let sb = Sandbox::start(&root.memcached_spec("narrow")).unwrap();
    let guard = PidGuard::new(sb.pid());
    assert_eq!(sb.listens(), [format!("{}/tcp", sb.addr())]);
    sb.stop().unwrap();
    drop(guard);
}

#[test]
fn readiness_timeout_kills_the_server() {
    let root = TestRoot::new("notready");
    let mut spec = SandboxSpec::new("sleepy", TargetKind::Memcached, "sleep", root.path());
    spec.args = vec!["30".into()];
    spec.ready_timeout = Duration::from_millis(400);
    let err = Sandbox::start_with(&spec, Box::new(NeverReady)).unwrap_err();
    let SandboxError::NotReady { pid, .. } = err else {
        panic!("expected NotReady, got {err:?}");
    };
    let guard = PidGuard::new(pid);
    assert!(!common::running(pid as i32), "sleep {pid} still runs");
    drop(guard);
    // regression: a failed start leaves no sandbox dir behind.
    assert!(root.entries().is_empty(), "{:?}", root.entries());
    assert!(err_line_ok(&SandboxError::NotReady {
        target: TargetKind::Memcached,
        pid,
        addr: "127.0.0.1:1".parse().unwrap(),
        waited: Duration::from_millis(400),
        last: "x".into(),
        tail: "y".into(),
    }));
}

fn err_line_ok(e: &SandboxError) -> bool {
    let m = e.to_string();
    !m.contains('\n') && m.contains("raise ready_timeout")
}

#[test]
fn server_killed_mid_run_is_detected() {
    let root = TestRoot::new("midrun");
    let mut sb = Sandbox::start(&root.memcached_spec("victim")).unwrap();
    let _guard = PidGuard::new(sb.pid());
    assert!(sb.is_alive() && sb.exit_detail().is_none());
    unsafe { libc::kill(sb.pid() as i32, libc::SIGKILL) };
    assert!(common::wait_until(Duration::from_secs(2), || !sb.is_alive()));
    let detail = sb.exit_detail().unwrap();
    assert!(
        detail.starts_with("memcached exited with signal 9 (SIGKILL)"),
        "{detail}"
    );
    assert_eq!(
        sb.usage().processes,
        0,
        "a dead server has no live processes"
    );
    let report = sb.stop().unwrap();
    assert_eq!(report.outcome, StopOutcome::AlreadyExited);
    assert_eq!(report.status, "signal 9 (SIGKILL)");
}

#[test]
fn drop_kills_and_cleans_up() {
    let root = TestRoot::new("drop");
    let sb = Sandbox::start(&root.memcached_spec("dropped")).unwrap();
    let guard = PidGuard::new(sb.pid());
    let dir = sb.dir().to_path_buf();
    drop(sb);
    assert!(!guard.alive());
    assert!(!dir.exists());
}

#[test]
fn stop_and_collect_moves_logs() {
    let root = TestRoot::new("collect");
    let mut spec = root.memcached_spec("logs");
    spec.args = vec!["-vv".into()];
    let sb = Sandbox::start(&spec).unwrap();
    let _guard = PidGuard::new(sb.pid());
    let dir = sb.dir().to_path_buf();
    let dest = root.path().join("results/logs/gcc-O2-r1");
    let mut sb = sb;
    sb.keep_dir(false);
    let report = sb.stop_and_collect(&dest).unwrap();
    assert_eq!(report.outcome, StopOutcome::Terminated);
    let stderr = root.path().join("results/logs/gcc-O2-r1.stderr");
    assert!(root.path().join("results/logs/gcc-O2-r1.stdout").exists());
    assert!(
        std::fs::metadata(&stderr).unwrap().len() > 0,
        "-vv logs something"
    );
    assert!(!dir.exists());
}

#[test]
fn keep_dir_keeps_the_dir() {
    let root = TestRoot::new("keep");
    let mut sb = Sandbox::start(&root.memcached_spec("kept")).unwrap();
    let _guard = PidGuard::new(sb.pid());
    sb.keep_dir(true);
    let report = sb.stop().unwrap();
    let kept = report.kept_dir.expect("dir kept");
    assert!(kept.join("server.stderr").exists());
}

/// memcached on a port the test holds busy for the first `clashes` starts, then on the
/// port the sandbox chose.
struct ClashingMemcached {
    busy: u16,
    clashes: u32,
    calls: AtomicU32,
}

impl Target for ClashingMemcached {
    fn recipe(&self) -> bakeoff_build::Recipe {
        bakeoff_build::Recipe::default()
    }

    fn kind(&self) -> TargetKind {
        TargetKind::Memcached
    }
    fn command(&self, launch: &Launch<'_>) -> Command {
        let n = self.calls.fetch_add(1, Ordering::SeqCst);
        let port = if n < self.clashes {
            self.busy
        } else {
            launch.addr.port()
        };
        Memcached.command(&Launch {
            addr: SocketAddr::new(launch.addr.ip(), port),
            ..*launch
        })
    }
    fn probe(&self, addr: SocketAddr) -> std::io::Result<bool> {
        Memcached.probe(addr)
    }
}

#[test]
fn port_clash_is_retried_then_reported() {
    let root = TestRoot::new("clash");
    let busy = TcpListener::bind("127.0.0.1:0").unwrap();
    let busy_port = busy.local_addr().unwrap().port();
    let spec = root.memcached_spec("clash");
    let once = ClashingMemcached {
        busy: busy_port,
        clashes: 1,
        calls: AtomicU32::new(0),
    };
    let sb = Sandbox::start_with(&spec, Box::new(once)).unwrap();
    let _guard = PidGuard::new(sb.pid());
    assert_ne!(sb.addr().port(), busy_port);
    sb.stop().unwrap();

    let always = ClashingMemcached {
        busy: busy_port,
        clashes: u32::MAX,
        calls: AtomicU32::new(0),
    };
    let err = Sandbox::start_with(&spec, Box::new(always)).unwrap_err();
    assert!(
        matches!(err, SandboxError::PortBusy { attempts: 4, .. }),
        "{err:?}"
    );
    // Its own port (as an experiment's `-l` would): never blamed on another process.
    let said = err.to_string();
    assert!(
        said.contains("binds an address or port of its own"),
        "{said}"
    );
    assert!(!said.contains("another process"), "{said}");
    assert!(root.entries().is_empty(), "{:?}", root.entries());
}

#[test]
fn start_from_a_short_lived_thread_survives_the_thread() {
    let root = TestRoot::new("thread");
    let spec = root.memcached_spec("threaded");
    let mut sb = std::thread::spawn(move || Sandbox::start(&spec))
        .join()
        .unwrap()
        .unwrap();
    let _guard = PidGuard::new(sb.pid());
    // PDEATHSIG would have fired when the starting thread ended, had it forked the server.
    std::thread::sleep(Duration::from_millis(300));
    assert!(sb.is_alive(), "{:?}", sb.exit_detail());
    drive(sb.addr(), 10);
    sb.stop().unwrap();
}

/// Runs the binary with the user's args only; ready at once.
struct AlwaysReady;

impl Target for AlwaysReady {
    fn recipe(&self) -> bakeoff_build::Recipe {
        bakeoff_build::Recipe::default()
    }

    fn kind(&self) -> TargetKind {
        TargetKind::Memcached
    }
    fn command(&self, launch: &Launch<'_>) -> Command {
        NeverReady.command(launch)
    }
    fn probe(&self, _addr: SocketAddr) -> std::io::Result<bool> {
        Ok(true)
    }
}

/// Children of `pid` per /proc.
fn children_of(pid: u32) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&p| {
            let stat = std::fs::read_to_string(format!("/proc/{p}/stat")).unwrap_or_default();
            let ppid = stat
                .rfind(')')
                .and_then(|i| stat[i + 1..].split_whitespace().nth(1)?.parse::<u32>().ok());
            ppid == Some(pid)
        })
        .collect()
}

#[test]
fn forking_server_is_summed_and_fully_stopped() {
    let root = TestRoot::new("fork");
    // Two children in the group and one that leaves it (setsid), like PostgreSQL backends.
    let script = "sleep 30 & sleep 30 & setsid sleep 30 & wait";
    let mut spec = SandboxSpec::new("forky", TargetKind::Memcached, "sh", root.path());
    spec.args = vec!["-c".into(), script.into()];
    spec.stop_grace = Duration::from_secs(2);
    let sb = Sandbox::start_with(&spec, Box::new(AlwaysReady)).unwrap();
    let _leader = PidGuard::new(sb.pid());
    assert!(common::wait_until(Duration::from_secs(5), || {
        sb.usage().processes == 4
    }));
    let usage = sb.usage();
    assert!(usage.rss_kib > 0 && usage.peak_rss_kib > 0, "{usage:?}");
    let children: Vec<PidGuard> = children_of(sb.pid())
        .into_iter()
        .map(PidGuard::new)
        .collect();
    assert_eq!(children.len(), 3);
    let report = sb.stop().unwrap();
    assert!(
        report.leftovers_killed >= 1,
        "the setsid child is left over: {report:?}"
    );
    for c in &children {
        assert!(
            c.gone_within(Duration::from_secs(2)),
            "pid {} survived stop",
            c.pid
        );
    }
}

/// Fails its one-time preparation.
struct FailingInit;

impl Target for FailingInit {
    fn recipe(&self) -> bakeoff_build::Recipe {
        bakeoff_build::Recipe::default()
    }

    fn kind(&self) -> TargetKind {
        TargetKind::Memcached
    }
    fn init(&self, _binary: &Path, _dir: &Path) -> Result<(), String> {
        Err("initdb said no".into())
    }
    fn command(&self, launch: &Launch<'_>) -> Command {
        Memcached.command(launch)
    }
    fn probe(&self, addr: SocketAddr) -> std::io::Result<bool> {
        Memcached.probe(addr)
    }
}

#[test]
fn init_failure_is_reported() {
    let root = TestRoot::new("init");
    let err = Sandbox::start_with(&root.memcached_spec("init"), Box::new(FailingInit)).unwrap_err();
    assert!(matches!(err, SandboxError::Init { .. }), "{err:?}");
    assert!(err.to_string().contains("initdb said no"));
}

#[test]
fn sandbox_can_move_between_threads() {
    fn is_send_sync<T: Send + Sync>() {}
    is_send_sync::<Sandbox>();
    is_send_sync::<SandboxError>();
}

/// One RESP command's reply line on a fresh connection (`-ERR ...`, `+OK`, ...).
fn resp_reply(addr: SocketAddr, words: &[&str]) -> String {
    let stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let mut req = format!("*{}\r\n", words.len());
    for w in words {
        req.push_str(&format!("${}\r\n{w}\r\n", w.len()));
    }
    let mut w = stream.try_clone().unwrap();
    w.write_all(req.as_bytes()).unwrap();
    let mut line = String::new();
    BufReader::new(stream).read_line(&mut line).unwrap();
    line.trim_end().to_string()
}

/// Issue 50: replayed or setup commands cannot move Redis's files out of the sandbox
/// (`CONFIG SET dir`/`dbfilename`), load a module, run `DEBUG`, or make the server
/// connect to another host; the sandbox stops (its Drop kills it if an assert fails).
#[test]
fn sql_file_writers_stay_in_the_sandbox_redis() {
    let binary = "/usr/bin/redis-server";
    if !Path::new(binary).exists() {
        eprintln!("skipped: {binary} is not installed (scripts/setup.sh installs it)");
        return;
    }
    let root = TestRoot::new("redis-writers");
    let outside = TestRoot::new("redis-outside");
    std::fs::create_dir_all(outside.path()).unwrap();
    let mut spec = SandboxSpec::new("redis", TargetKind::Redis, binary, root.path());
    spec.ready_timeout = Duration::from_secs(10);
    spec.stop_grace = Duration::from_secs(3);
    let sb = Sandbox::start(&spec).unwrap();
    let guard = PidGuard::new(sb.pid());
    let out = outside.path().display().to_string();
    for cmd in [
        &["CONFIG", "SET", "dir", &out][..],
        &["config", "set", "DIR", &out],
        &["CONFIG", "SET", "dbfilename", "../../x.rdb"],
        &["CONFIG", "SET", "appenddirname", &out],
        &["MODULE", "LOAD", "/tmp/evil.so"],
        &["DEBUG", "SLEEP", "0"],
        &["DEBUG", "RELOAD"],
        &["REPLICAOF", "127.0.0.2", "6379"],
        &["SLAVEOF", "127.0.0.2", "6379"],
        &["MIGRATE", "127.0.0.2", "6379", "k", "0", "100"],
    ] {
        let reply = resp_reply(sb.addr(), cmd);
        assert!(reply.starts_with('-'), "{cmd:?} answered {reply:?}");
    }
    assert_eq!(resp_reply(sb.addr(), &["SET", "k", "v"]), "+OK");
    assert_eq!(resp_reply(sb.addr(), &["SAVE"]), "+OK");
    assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
    sb.stop().unwrap();
    assert!(!guard.alive());
}
