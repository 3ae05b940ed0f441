//! The machine as a variant (`preload`, `thp`, `defrag`, `sysctl`, `cpus`, `env`) on this
//! machine, as root: Debian's memcached with jemalloc preloaded maps libjemalloc and the
//! plain one does not (its allocator is glibc's); Debian's Redis under THP and
//! vm.swappiness values other than the machine's reads the asked values in its window;
//! and the machine's values are back after the experiment, after a run that failed, after
//! Ctrl-C, and after bakeoff was killed with SIGKILL mid-run and any bakeoff command ran;
//! a setting changed mid-run makes its run invalid, and one the machine does not allow
//! fails only its variant. Bad input
//! (an unknown allocator, a file that is not a shared library, a kernel setting off the
//! list or a value the kernel refuses, `env` naming `LD_*`, machine-wide settings without
//! `--allow-system-changes` or without root, `smt` where the machine has no control) is
//! one line, exit status 2, and the machine unchanged.
//!
//! These tests change settings of the machine other programs share, so each window is
//! short, every test holds one lock (no two change it at once), and a guard writes the
//! values found at the start back even when the test panics.

mod common;

use common::{items, no_server_left, one_line_2, wait_for, Scratch};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

const THP: &str = "/sys/kernel/mm/transparent_hugepage/enabled";
const DEFRAG: &str = "/sys/kernel/mm/transparent_hugepage/defrag";
const SWAPPINESS: &str = "/proc/sys/vm/swappiness";

/// One test at a time changes the machine.
static MACHINE: Mutex<()> = Mutex::new(());

/// The value a settings file reads: the bracketed mode, else its trimmed text.
fn read(path: &str) -> String {
    let t = std::fs::read_to_string(path).unwrap_or_default();
    match (t.find('['), t.find(']')) {
        (Some(a), Some(b)) if a < b => t[a + 1..b].to_string(),
        _ => t.trim().to_string(),
    }
}

/// The three settings these tests change, as found; written back on drop whatever
/// happened (bakeoff should have: the tests assert it before the guard runs).
struct Found(Vec<(&'static str, String)>);

impl Found {
    fn now() -> Found {
        Found(
            [THP, DEFRAG, SWAPPINESS]
                .iter()
                .map(|p| (*p, read(p)))
                .collect(),
        )
    }

    fn assert_back(&self, when: &str) {
        for (p, v) in &self.0 {
            assert_eq!(&read(p), v, "{p} not put back {when}");
        }
    }

    /// Values other than these: (thp, defrag, swappiness).
    fn others(&self) -> (&'static str, &'static str, u32) {
        let thp = if self.0[0].1 == "always" {
            "never"
        } else {
            "always"
        };
        let defrag = if self.0[1].1 == "defer" {
            "never"
        } else {
            "defer"
        };
        let swap = if self.0[2].1 == "13" { 14 } else { 13 };
        (thp, defrag, swap)
    }
}

impl Drop for Found {
    fn drop(&mut self) {
        for (p, v) in &self.0 {
            if read(p) != *v {
                let _ = std::fs::write(p, v);
            }
        }
    }
}

fn machine() -> (std::sync::MutexGuard<'static, ()>, Found) {
    let lock = MACHINE.lock().unwrap_or_else(|p| p.into_inner());
    (lock, Found::now())
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// `bakeoff ...` with bakeoff's state (journals included) in the scratch folder, so no
/// other bakeoff on this machine recovers what these tests leave on purpose.
fn bakeoff(s: &Scratch) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_bakeoff"));
    c.env("XDG_STATE_HOME", state(s));
    c
}

fn state(s: &Scratch) -> PathBuf {
    s.path().join("state")
}

fn journals(s: &Scratch) -> Vec<String> {
    common::entries(&state(s).join("bakeoff").join("system"))
}

fn run_cmd(s: &Scratch, f: &Path) -> Command {
    let mut c = s.run_cmd(f);
    c.env("XDG_STATE_HOME", state(s))
        .arg("--allow-system-changes");
    c
}

const SHORT: &str = "[plan]\nrepetitions = 1\nwarmup = \"100ms\"\nduration = \"500ms\"\n";
const KV: &str = "[[workload]]\nkind = \"kv\"\nconnections = [2]\nkeys = 500\n";

fn redis(thp: &str, defrag: &str, swap: u32) -> String {
    format!("[[variant]]\nname = \"redis\"\nbinary = \"/usr/bin/redis-server\"\nthp = \"{thp}\"\ndefrag = \"{defrag}\"\nsysctl = {{ \"vm.swappiness\" = {swap} }}\n")
}

/// `bakeoff run` of Redis under `found.others()` with a 30 s window, started in the
/// background (output discarded): a run to interrupt while the settings hold.
fn long_redis_run(s: &Scratch, found: &Found, name: &str) -> std::process::Child {
    let (thp, defrag, swap) = found.others();
    let f = s.write(
        &format!("{name}.toml"),
        &format!(
            "name = \"{name}\"\n[target]\nkind = \"redis\"\n{}{KV}[plan]\nrepetitions = 1\nwarmup = \"100ms\"\nduration = \"30s\"\n",
            redis(thp, defrag, swap)
        ),
    );
    run_cmd(s, &f)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap()
}

fn runs_of<'a>(r: &'a Value, variant: &str) -> Vec<&'a Value> {
    items(&r["cells"], "variant", variant)
        .into_iter()
        .flat_map(|c| c["runs"].as_array().unwrap())
        .collect()
}

/// One experiment: memcached plain and with jemalloc preloaded (on CPU 0), Redis under
/// other THP, defrag and swappiness values than the machine's. Each run valid, each
/// reading what it asked in its window, and the machine as found after.
#[test]
fn settings_hold_in_their_windows_and_are_put_back() {
    if !is_root() {
        eprintln!("skipped: machine-wide settings need root");
        return;
    }
    let (_lock, found) = machine();
    let (thp, defrag, swap) = found.others();
    let s = Scratch::new();
    let f = s.write(
        "system.toml",
        &format!(
            "name = \"system\"\n[target]\nkind = \"redis\"\n\
             [[variant]]\nname = \"plain\"\nkind = \"memcached\"\nbinary = \"/usr/bin/memcached\"\n\
             [[variant]]\nname = \"jemalloc\"\nkind = \"memcached\"\nbinary = \"/usr/bin/memcached\"\npreload = \"jemalloc\"\ncpus = \"0\"\nenv = {{ SYSTEM_TEST_ENV = \"1\" }}\n\
             {}{KV}{SHORT}",
            redis(thp, defrag, swap)
        ),
    );
    let out = run_cmd(&s, &f).output().unwrap();
    no_server_left("memcached", &s);
    no_server_left("redis-server", &s);
    found.assert_back("after the experiment");
    assert!(journals(&s).is_empty(), "{:?}", journals(&s));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let r = s.results();
    let plain = runs_of(&r, "plain");
    let jem = runs_of(&r, "jemalloc");
    let red = runs_of(&r, "redis");
    for run in plain.iter().chain(&jem).chain(&red) {
        assert_eq!(run["valid"], true, "{run}");
    }
    assert_eq!(
        plain[0]["system_applied"]["allocator"], "glibc",
        "{}",
        plain[0]
    );
    assert!(plain[0]["system_applied"].get("preload").is_none());
    let applied = &jem[0]["system_applied"];
    assert_eq!(applied["allocator"], "jemalloc", "{applied}");
    assert!(
        applied["preload"]
            .as_str()
            .unwrap()
            .contains("libjemalloc.so"),
        "{applied}"
    );
    assert_eq!(applied["cpus"], "0", "{applied}");
    let applied = &red[0]["system_applied"];
    assert_eq!(applied["thp"], thp, "{applied}");
    assert_eq!(applied["defrag"], defrag, "{applied}");
    assert_eq!(
        applied["sysctl vm.swappiness"],
        swap.to_string(),
        "{applied}"
    );
    let asked = &r["variants"].as_array().unwrap()[1]["system"];
    assert_eq!(asked["preload"], "jemalloc", "{asked}");
    let asked = &r["variants"].as_array().unwrap()[2]["system"];
    assert_eq!(asked["thp"], thp, "{asked}");
    let diff = r["settings_diff"].to_string();
    assert!(
        diff.contains("system thp") && diff.contains("system preload"),
        "{diff}"
    );
    let md = std::fs::read_to_string(s.out().join("report.md")).unwrap();
    assert!(md.contains("preload=jemalloc"), "{md}");
}

/// A run whose server does not start (memcached refuses `-t 0`) after its settings were
/// applied: the machine is put back all the same.
#[test]
fn a_failed_run_puts_the_machine_back() {
    if !is_root() {
        eprintln!("skipped: machine-wide settings need root");
        return;
    }
    let (_lock, found) = machine();
    let (thp, _, swap) = found.others();
    let s = Scratch::new();
    let f = s.write(
        "failed.toml",
        &format!(
            "name = \"failed\"\n[target]\nkind = \"memcached\"\n\
             [[variant]]\nname = \"broken\"\nbinary = \"/usr/bin/memcached\"\nargs = [\"-t\", \"0\"]\nthp = \"{thp}\"\nsysctl = {{ \"vm.swappiness\" = {swap} }}\n\
             {KV}{SHORT}"
        ),
    );
    let out = run_cmd(&s, &f).output().unwrap();
    no_server_left("memcached", &s);
    found.assert_back("after a failed run");
    assert!(journals(&s).is_empty(), "{:?}", journals(&s));
    assert!(!out.status.success());
    let r = s.results();
    let run = runs_of(&r, "broken")[0];
    assert_eq!(run["valid"], false, "{run}");
}

/// bakeoff killed with SIGKILL while Redis runs under the asked settings: the journal
/// stays, and the next bakeoff command (any: `--version`) puts the machine back first.
#[test]
fn kill_9_mid_run_then_any_command_puts_the_machine_back() {
    if !is_root() {
        eprintln!("skipped: machine-wide settings need root");
        return;
    }
    let (_lock, found) = machine();
    let (thp, _, swap) = found.others();
    let s = Scratch::new();
    let mut child = long_redis_run(&s, &found, "killed");
    let applied = wait_for(30.0, || {
        read(SWAPPINESS) == swap.to_string() && read(THP) == thp
    });
    // SIGKILL: no handler, no destructor, nothing put back by this bakeoff.
    let _ = child.kill();
    let _ = child.wait();
    assert!(applied, "the settings were never applied");
    assert!(
        !journals(&s).is_empty(),
        "no journal left by the killed bakeoff"
    );
    assert_eq!(
        read(SWAPPINESS),
        swap.to_string(),
        "changed back without a journal"
    );
    let out = bakeoff(&s).arg("--version").output().unwrap();
    assert!(out.status.success());
    found.assert_back("after kill -9 and `bakeoff --version`");
    assert!(journals(&s).is_empty(), "{:?}", journals(&s));
    assert!(
        wait_for(10.0, || common::pids_named("redis-server").into_iter().all(
            |p| {
                !std::fs::read_to_string(format!("/proc/{p}/cmdline"))
                    .unwrap_or_default()
                    .contains(&s.path().display().to_string())
            }
        )),
        "redis-server outlived the killed bakeoff"
    );
}

/// Each bad input: one located line, exit status 2, the machine unchanged.
#[test]
fn bad_input_is_one_line_and_changes_nothing() {
    let (_lock, found) = machine();
    let s = Scratch::new();
    let base = |variant: &str| {
        format!("name = \"bad\"\n[target]\nkind = \"redis\"\n[[variant]]\nname = \"v\"\nbinary = \"/usr/bin/redis-server\"\n{variant}\n{KV}")
    };
    let flag = ["--allow-system-changes"];
    let cases: Vec<(&str, &[&str], &str)> = vec![
        ("preload = \"hoard\"", &[], "not an allocator bakeoff knows"),
        ("preload = \"/etc/passwd\"", &[], "not a shared library"),
        ("preload = \"/no/such/lib.so\"", &[], "does not exist"),
        (
            "sysctl = { \"kernel.modprobe\" = \"/tmp/x\" }",
            &flag,
            "not one a variant may set",
        ),
        (
            "sysctl = { \"vm.no_such_setting\" = 1 }",
            &flag,
            "does not exist",
        ),
        ("env = { LD_PRELOAD = \"/tmp/x.so\" }", &[], "use preload"),
        (
            "env = { LD_LIBRARY_PATH = \"/tmp\" }",
            &[],
            "dynamic loader",
        ),
        (
            "thp = \"sometimes\"",
            &flag,
            "not one of always, madvise, never",
        ),
        ("thp = \"always\"", &[], "--allow-system-changes"),
        (
            "sysctl = { \"vm.swappiness\" = 1 }",
            &[],
            "--allow-system-changes",
        ),
        ("cpus = \"0-\"", &[], "not a CPU number"),
    ];
    let mut cases = cases;
    if is_root() {
        cases.push((
            "sysctl = { \"vm.swappiness\" = 500 }",
            &flag,
            "the kernel refuses sysctl vm.swappiness",
        ));
    }
    let smt = std::fs::read_to_string("/sys/devices/system/cpu/smt/control").unwrap_or_default();
    if !["on", "off", "forceoff"].contains(&smt.trim()) && is_root() {
        cases.push(("smt = \"off\"", &flag, "smt cannot be set on this machine"));
    }
    for (i, (variant, args, says)) in cases.iter().enumerate() {
        let f = s.write(&format!("bad{i}.toml"), &base(variant));
        // The flag before the subcommand here, after it in `run` below.
        let out = bakeoff(&s)
            .args(*args)
            .arg("check")
            .arg(&f)
            .output()
            .unwrap();
        let line = one_line_2(&out);
        assert!(line.contains(says), "{variant}: {line}");
        assert!(
            line.contains(&format!("bad{i}.toml:")),
            "not located: {line}"
        );
        found.assert_back(&format!("after `check` of {variant}"));
    }
    let f = s.write("bad-run.toml", &base("sysctl = { \"vm.swappiness\" = 1 }"));
    let out = bakeoff(&s)
        .arg("run")
        .arg(&f)
        .arg("--out")
        .arg(s.out())
        .output()
        .unwrap();
    assert!(one_line_2(&out).contains("--allow-system-changes"));
    // Without root: `setpriv` runs `check` as nobody, who may not change the machine.
    if is_root() && Path::new("/usr/bin/setpriv").exists() {
        use std::os::unix::fs::PermissionsExt;
        let home = s.path().join("nobody");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::set_permissions(s.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::set_permissions(&home, std::fs::Permissions::from_mode(0o777)).unwrap();
        let f = s.write("as-nobody.toml", &base("thp = \"always\""));
        let out = Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(env!("CARGO_BIN_EXE_bakeoff"))
            .args(["check", "--allow-system-changes"])
            .arg(&f)
            .env("HOME", &home)
            .env_remove("XDG_STATE_HOME")
            .output()
            .unwrap();
        let line = one_line_2(&out);
        assert!(line.contains("only root may change"), "{line}");
    }
    found.assert_back("after the bad inputs");
}

/// Someone else changes THP while Redis runs under the asked mode: the run is invalid and
/// says which setting read what; the machine is as found after.
#[test]
fn a_setting_changed_mid_run_makes_the_run_invalid() {
    if !is_root() {
        eprintln!("skipped: machine-wide settings need root");
        return;
    }
    let (_lock, found) = machine();
    let (thp, defrag, swap) = found.others();
    let s = Scratch::new();
    let f = s.write(
        "changed.toml",
        &format!(
            "name = \"changed\"\n[target]\nkind = \"redis\"\n{}{KV}[plan]\nrepetitions = 1\nwarmup = \"100ms\"\nduration = \"3s\"\n",
            redis(thp, defrag, swap)
        ),
    );
    let child = run_cmd(&s, &f)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let applied = wait_for(30.0, || read(THP) == thp);
    std::thread::sleep(std::time::Duration::from_millis(700));
    // What the machine had: another program changing THP in the middle of the window.
    std::fs::write(THP, &found.0[0].1).unwrap();
    let out = child.wait_with_output().unwrap();
    no_server_left("redis-server", &s);
    found.assert_back("after a run whose setting was changed");
    assert!(applied, "thp was never applied");
    common::assert_exit(&out, 4);
    let r = s.results();
    let run = runs_of(&r, "redis")[0];
    assert_eq!(run["valid"], false, "{run}");
    let why = run["invalid_reason"].as_str().unwrap();
    assert!(
        why.contains("thp read") && why.contains("window's end"),
        "{why}"
    );
}

/// A machine that does not allow a setting (THP's folder read-only, as in a container:
/// here a read-only bind mount in a mount namespace of bakeoff's own) fails that variant
/// with why, and the others run.
#[test]
fn a_setting_the_machine_does_not_allow_fails_only_its_variant() {
    let thp_dir = "/sys/kernel/mm/transparent_hugepage";
    if !is_root() || !Path::new("/usr/bin/unshare").exists() {
        eprintln!("skipped: needs root and unshare");
        return;
    }
    let (_lock, found) = machine();
    let (thp, _, _) = found.others();
    let s = Scratch::new();
    let f = s.write(
        "ro.toml",
        &format!(
            "name = \"ro\"\n[target]\nkind = \"memcached\"\n\
             [[variant]]\nname = \"plain\"\nbinary = \"/usr/bin/memcached\"\n\
             [[variant]]\nname = \"thp\"\nbinary = \"/usr/bin/memcached\"\nthp = \"{thp}\"\n{KV}{SHORT}"
        ),
    );
    let run = run_cmd(&s, &f);
    let mut argv: Vec<String> = vec![run.get_program().to_string_lossy().into_owned()];
    argv.extend(run.get_args().map(|a| a.to_string_lossy().into_owned()));
    let script = format!(
        "mount --bind {thp_dir} {thp_dir} && mount -o remount,bind,ro {thp_dir} && exec \"$@\""
    );
    let mut cmd = Command::new("unshare");
    cmd.args(["-m", "--propagation", "private", "sh", "-c", &script, "sh"])
        .args(&argv);
    for (k, v) in run.get_envs() {
        if let Some(v) = v {
            cmd.env(k, v);
        }
    }
    let out = cmd.output().unwrap();
    no_server_left("memcached", &s);
    found.assert_back("after a variant the machine refused");
    let stderr = String::from_utf8_lossy(&out.stderr);
    if stderr.contains("mount") && !s.out().join("results.json").exists() {
        eprintln!("skipped: no read-only bind mount here ({stderr})");
        return;
    }
    let r = s.results();
    let v = &r["variants"].as_array().unwrap()[1];
    assert_eq!(v["status"], "failed", "{v}");
    assert!(
        v["error"].as_str().unwrap().contains("does not allow"),
        "{v}"
    );
    assert_eq!(runs_of(&r, "plain")[0]["valid"], true, "{stderr}");
}

/// Ctrl-C (SIGINT) mid-run: bakeoff stops the server, puts the machine back on its way
/// out and exits with 130, leaving no journal.
#[test]
fn sigint_mid_run_puts_the_machine_back() {
    if !is_root() {
        eprintln!("skipped: machine-wide settings need root");
        return;
    }
    let (_lock, found) = machine();
    let (thp, _, _) = found.others();
    let s = Scratch::new();
    let mut child = long_redis_run(&s, &found, "interrupted");
    let applied = wait_for(30.0, || read(THP) == thp);
    // SAFETY: a signal to the child this test started.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().unwrap();
    no_server_left("redis-server", &s);
    found.assert_back("after SIGINT");
    assert!(applied, "thp was never applied");
    assert_eq!(status.code(), Some(130));
    assert!(journals(&s).is_empty(), "{:?}", journals(&s));
}
