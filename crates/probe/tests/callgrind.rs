//! callgrind: parsing real callgrind.out files, and counting a real memcached's
//! instructions over measured windows only.

use bakeoff_probe::callgrind::{self, Counts};
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/callgrind")
        .join(name)
}

fn read_fixture(name: &str) -> String {
    std::fs::read_to_string(fixture(name)).expect("fixture readable")
}

/// The Ir on a file's `totals:` line (its events are only Ir).
fn totals_line(text: &str) -> u64 {
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix("totals:"))
        .expect("a totals: line");
    line.trim().parse().expect("a number")
}

/// Fixture `name` parsed, its functions' costs checked against its totals, and its total
/// the one on its `totals:` line.
fn checked_fixture(name: &str) -> Counts {
    let text = read_fixture(name);
    let c = callgrind::parse_checked(&text).expect("totals agree");
    assert_eq!(c.instructions, totals_line(&text));
    c
}

fn own(c: &Counts, f: &str) -> Option<u64> {
    c.functions
        .iter()
        .find(|x| x.function == f)
        .map(|x| x.instructions)
}

fn assert_sorted_and_complete(c: &Counts) {
    assert!(!c.functions.is_empty());
    assert!(c
        .functions
        .windows(2)
        .all(|w| w[0].instructions >= w[1].instructions));
    let sum: u64 = c.functions.iter().map(|f| f.instructions).sum();
    assert_eq!(sum, c.instructions, "own costs add up to the total");
}

/// calls.out: `valgrind --tool=callgrind --dump-instr=no --collect-jumps=no
/// --separate-threads=no ./calls` of calls.c.txt (gcc -g -O0 -static), run here.
/// The per-function numbers are callgrind_annotate's for the same file.
#[test]
fn real_program_file_matches_its_totals_and_callgrind_annotate() {
    let c = checked_fixture("calls.out");
    assert_eq!(c.instructions, 487_607);
    assert_eq!(own(&c, "busy"), Some(220_013));
    assert_eq!(own(&c, "leaf"), Some(200_000));
    // fib 20 + fib'2 31,544: recursion levels merged.
    assert_eq!(own(&c, "fib"), Some(31_564));
    assert_eq!(own(&c, "main"), Some(12));
    assert_eq!(c.functions[0].function, "busy");
    assert_eq!(c.functions[1].function, "leaf");
    assert_sorted_and_complete(&c);
}

/// memcached-window.out: a dump of one window of 200 memcached commands (stripped
/// binary: many functions are addresses), with its `summary: 0` quirk.
#[test]
fn real_memcached_dump_matches_its_totals() {
    let c = checked_fixture("memcached-window.out");
    assert_eq!(c.instructions, 745_454);
    assert_eq!(
        own(&c, "0x000000000000e0c0 [memcached]"),
        Some(45_452),
        "callgrind_annotate's number"
    );
    assert_eq!(own(&c, "0x000000000000bf80 [memcached]"), Some(44_600));
    assert_eq!(own(&c, "____strtol_l_internal"), Some(19_600));
    assert_sorted_and_complete(&c);
}

#[test]
fn read_dir_sums_every_callgrind_out_file_and_skips_the_rest() {
    let dir = tempfile::tempdir().expect("tempdir");
    let copy = |from: &str, to: &str| {
        std::fs::copy(fixture(from), dir.path().join(to)).expect("copy");
    };
    copy("calls.out", "callgrind.out.100");
    copy("memcached-window.out", "callgrind.out.200.1");
    std::fs::write(dir.path().join("callgrind.out.200"), "").expect("write");
    std::fs::write(dir.path().join("server.log"), "events: Ir\nfn=x\n1 999\n").expect("write");
    std::fs::create_dir(dir.path().join("callgrind.out.dir")).expect("mkdir");

    let c = callgrind::read_dir(dir.path()).expect("read_dir");
    assert_eq!(c.instructions, 487_607 + 745_454);
    assert_eq!(own(&c, "busy"), Some(220_013));
    assert_eq!(own(&c, "x"), None);
    assert_sorted_and_complete(&c);
}

#[test]
fn read_dir_errors() {
    let dir = tempfile::tempdir().expect("tempdir");
    let e = callgrind::read_dir(dir.path()).expect_err("no files");
    assert_eq!(e.kind(), std::io::ErrorKind::NotFound);

    let text = read_fixture("calls.out").replace("totals: 487607", "totals: 487608");
    std::fs::write(dir.path().join("callgrind.out.7"), text).expect("write");
    let e = callgrind::read_dir(dir.path()).expect_err("totals disagree");
    assert_eq!(e.kind(), std::io::ErrorKind::InvalidData);
    assert!(e.to_string().contains("callgrind.out.7"), "{e}");

    let e = callgrind::read_dir(&dir.path().join("missing")).expect_err("no dir");
    assert_eq!(e.kind(), std::io::ErrorKind::NotFound);
}

fn have(program: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .stdout(Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

#[test]
fn a_pid_not_under_callgrind_is_not_found() {
    if !have("callgrind_control") {
        eprintln!("skipped: callgrind_control is not installed");
        return;
    }
    let me = std::process::id() as i32;
    let e = callgrind::set_instrumentation(me, true).expect_err("not under callgrind");
    assert_eq!(e.kind(), std::io::ErrorKind::NotFound, "{e}");
    let e = callgrind::set_instrumentation_all(&[me], false).expect_err("none matched");
    assert_eq!(e.kind(), std::io::ErrorKind::NotFound, "{e}");
    assert!(callgrind::set_instrumentation_all(&[], true).is_err());
}

/// memcached under callgrind, killed with its whole process group when dropped.
struct Server {
    child: Child,
    log: PathBuf,
}

impl Drop for Server {
    /// SIGTERM to the whole process group first, so valgrind exits cleanly and removes
    /// its vgdb FIFOs from /tmp; SIGKILL if it is still there after 5 s.
    fn drop(&mut self) {
        let pgid = self.child.id() as i32;
        // SAFETY: kill(2) on the process group of the child this test spawned.
        unsafe {
            libc::kill(-pgid, libc::SIGTERM);
        }
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        // SAFETY: as above.
        unsafe {
            libc::kill(-pgid, libc::SIGKILL);
        }
        let _ = self.child.wait();
    }
}

impl Server {
    fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

fn free_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind");
    l.local_addr().expect("addr").port()
}

fn start_memcached(out_dir: &Path, port: u16) -> Server {
    let fds = callgrind::fd_limit_under_valgrind().expect("valgrind's fd limit");
    let mut argv = callgrind::command_prefix(out_dir);
    argv.push("/usr/bin/memcached".into());
    for a in ["-U", "0", "-l", "127.0.0.1", "-t", "1"] {
        argv.push(a.into());
    }
    argv.extend(["-p".into(), port.to_string(), "-c".into(), fds.to_string()]);
    // No LRU crawler and maintainer threads: they wake on their own clock and would
    // add a varying number of instructions to each window.
    argv.extend(["-o".into(), "no_lru_crawler,no_lru_maintainer".into()]);
    if unsafe { libc::geteuid() } == 0 {
        argv.extend(["-u".into(), "root".into()]);
    }
    let log = out_dir.join("server.log");
    let file = std::fs::File::create(&log).expect("log file");
    let err = file.try_clone().expect("log file");
    let child = Command::new(&argv[0])
        .args(&argv[1..])
        .stdin(Stdio::null())
        .stdout(file)
        .stderr(err)
        .process_group(0)
        .spawn()
        .expect("spawn valgrind");
    Server { child, log }
}

fn wait_for_port(server: &mut Server, port: u16, limit: Duration) -> TcpStream {
    let start = Instant::now();
    loop {
        if let Ok(s) = TcpStream::connect(("127.0.0.1", port)) {
            return s;
        }
        if let Ok(Some(status)) = server.child.try_wait() {
            panic!("memcached exited ({status}): {}", server.log());
        }
        if start.elapsed() > limit {
            panic!("memcached not listening after {limit:?}: {}", server.log());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `n` commands over one connection: a set, then a get of the same key, in turn.
fn commands(conn: &mut BufReader<TcpStream>, n: usize) {
    let mut line = String::new();
    for i in 0..n {
        let key = format!("k{}", (i / 2) % 10);
        if i % 2 == 0 {
            let cmd = format!("set {key} 0 0 5\r\nhello\r\n");
            conn.get_mut().write_all(cmd.as_bytes()).expect("send");
            line.clear();
            conn.read_line(&mut line).expect("reply");
            assert_eq!(line, "STORED\r\n");
        } else {
            conn.get_mut()
                .write_all(format!("get {key}\r\n").as_bytes())
                .expect("send");
            let mut reply = Vec::new();
            for _ in 0..3 {
                line.clear();
                conn.read_line(&mut line).expect("reply");
                reply.push(line.clone());
            }
            assert_eq!(
                reply,
                [
                    format!("VALUE {key} 0 5\r\n"),
                    "hello\r\n".into(),
                    "END\r\n".into()
                ]
            );
        }
    }
}

fn timed<T>(what: &str, f: impl FnOnce() -> T) -> T {
    let start = Instant::now();
    let out = f();
    eprintln!("{what}: {:.3} s", start.elapsed().as_secs_f64());
    out
}

#[test]
fn memcached_windows_count_the_same_instructions() {
    let needed = ["valgrind", "callgrind_control"];
    if !Path::new("/usr/bin/memcached").exists() || !needed.iter().all(|p| have(p)) {
        eprintln!("skipped: needs /usr/bin/memcached, valgrind and callgrind_control");
        return;
    }
    const N: usize = 200;
    let dir = tempfile::tempdir().expect("tempdir");
    let port = free_port();
    let started = Instant::now();
    let mut server = start_memcached(dir.path(), port);
    let stream = wait_for_port(&mut server, port, Duration::from_secs(20));
    eprintln!(
        "memcached listening under callgrind after {:.2} s",
        started.elapsed().as_secs_f64()
    );
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    let mut conn = BufReader::new(stream);
    let pid = server.pid();

    // Warm-up, not counted: the first set allocates and clears a 1 MB slab page.
    commands(&mut conn, N);
    timed("callgrind_control --instr=on", || {
        callgrind::set_instrumentation(pid, true)
    })
    .expect("on");
    commands(&mut conn, N);
    timed("callgrind_control --instr=off + --dump", || {
        callgrind::set_instrumentation(pid, false)
    })
    .expect("off");
    let first = callgrind::read_dir(dir.path()).expect("read_dir");
    assert!(
        first.instructions > 0,
        "window counted nothing: {}",
        server.log()
    );

    // Not counted.
    commands(&mut conn, N);
    // The second window through the process-tree call, with a pid that is not under
    // callgrind (this test's own) among the pids.
    let pids = [std::process::id() as i32, pid];
    timed("set_instrumentation_all on", || {
        callgrind::set_instrumentation_all(&pids, true)
    })
    .expect("on");
    commands(&mut conn, N);
    timed("set_instrumentation_all off", || {
        callgrind::set_instrumentation_all(&pids, false)
    })
    .expect("off");
    let both = callgrind::read_dir(dir.path()).expect("read_dir");
    let second = both.instructions - first.instructions;

    eprintln!(
        "window 1: {} instructions ({:.0} per command), window 2: {} ({:.0} per command)",
        first.instructions,
        first.instructions as f64 / N as f64,
        second,
        second as f64 / N as f64
    );
    for f in first.functions.iter().take(5) {
        eprintln!("  {:>8} {}", f.instructions, f.function);
    }
    let diff = (second as f64 - first.instructions as f64).abs() / first.instructions as f64;
    assert!(diff < 0.05, "windows differ by {:.1} %", diff * 100.0);
    assert_sorted_and_complete(&both);
}
