//! Hostile input (issue 28): every failure says so. Exit statuses when no run was valid,
//! what can be known before anything starts, relative binaries, unchecked sources, a full
//! results disk, and the messages each of these gives. Servers (memcached) are started by
//! bakeoff itself on loopback and must be gone when a test ends.

mod common;

use common::{check_cmd, no_server_left, one_line_2, Scratch};
use std::path::Path;
use std::process::Output;

/// A memcached experiment with `variants` and short windows.
fn memcached(variants: &str, plan: &str) -> String {
    common::memcached_installed("hostile", common::ARGS_16)
        + &format!(
            r#"{variants}
[[workload]]
kind = "kv"
connections = [2]
keys = 200

[plan]
warmup = "100ms"
duration = "300ms"
{plan}
"#
        )
}

/// A `[[variant]]` named `a`, the installed memcached, then `extra` (whole lines).
fn variant_a(extra: &str) -> String {
    format!("[[variant]]\nname = \"a\"\nbinary = \"/usr/bin/memcached\"\n{extra}")
}

/// [`memcached`] with `variants`, one round.
fn one_round(variants: &str) -> String {
    memcached(variants, "repetitions = 1")
}

fn bakeoff() -> std::process::Command {
    std::process::Command::new(env!("CARGO_BIN_EXE_bakeoff"))
}

fn text(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn script(s: &Scratch, name: &str, body: &str) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let p = s.write(name, body);
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p
}

#[test]
fn regression_no_valid_run_is_exit_4_with_the_table() {
    let s = Scratch::new();
    script(&s, "dies.sh", "#!/bin/sh\nexit 1\n");
    let f = s.write(
        "e.toml",
        &one_round("[[variant]]\nname = \"dies\"\nbinary = \"dies.sh\"\n"),
    );
    let out = s
        .run_cmd(&f)
        .args(["--fail-on", "any"])
        .output()
        .expect("run");
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(4), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("invalid 1/1"),
        "the table is printed: {stdout}"
    );
    let last = stderr.trim_end().lines().last().unwrap_or("");
    assert!(
        last.starts_with("error: no valid run in 1 cell(s): dies kv x2"),
        "{stderr}"
    );
    assert_eq!(s.results()["status"], "complete");
    // regression: a server that failed to start leaves no sandbox dir behind.
    assert!(
        common::entries(&s.sandboxes()).is_empty(),
        "{:?}",
        common::entries(&s.sandboxes())
    );
}

#[test]
fn regression_sandbox_root_that_is_a_file_is_exit_2_before_anything_starts() {
    let s = Scratch::new();
    let file = s.write("not-a-folder", "x");
    let f = s.write(
        "e.toml",
        &memcached(
            &variant_a(""),
            "repetitions = 1\nsandbox_dir = \"not-a-folder\"",
        ),
    );
    let err = one_line_2(&check_cmd(&f).output().unwrap());
    assert!(err.contains("e.toml:"), "located at the key: {err}");
    assert!(err.contains("is a file, not a folder"), "{err}");
    // run, with --sandbox-dir below the file: refused before a results folder exists.
    let out = bakeoff()
        .arg("run")
        .arg(&f)
        .arg("--out")
        .arg(s.out())
        .arg("--sandbox-dir")
        .arg(file.join("below"))
        .arg("--no-history")
        .output()
        .unwrap();
    let err = one_line_2(&out);
    assert!(err.contains("--sandbox-dir"), "{err}");
    assert!(!s.out().exists(), "nothing started: {err}");
}

#[test]
fn regression_argument_list_over_the_system_limit_is_exit_2() {
    let s = Scratch::new();
    let long = "v".repeat(200_000);
    let f = s.write(
        "e.toml",
        &one_round(&variant_a(&format!("args = [\"-o\", \"{long}\"]\n"))),
    );
    let err = one_line_2(&check_cmd(&f).output().unwrap());
    assert!(err.contains("at most"), "{err}");
    let many: Vec<String> = (0..70_000)
        .map(|_| "\"-vvvvvvvvvvvvvvvvvvvvvvvvv\"".to_string())
        .collect();
    let f = s.write(
        "many.toml",
        &one_round(&variant_a(&format!("args = [{}]\n", many.join(",")))),
    );
    let out = s.run_cmd(&f).output().unwrap();
    let err = one_line_2(&out);
    assert!(err.contains("ARG_MAX"), "{err}");
    assert!(!s.out().exists(), "{err}");
}

#[test]
fn regression_relative_binary_runs_from_a_relative_experiment_path() {
    let s = Scratch::new();
    std::fs::create_dir(s.path().join("dir")).unwrap();
    std::fs::copy("/usr/bin/memcached", s.path().join("dir/mc")).unwrap();
    s.write(
        "dir/exp.toml",
        &one_round("[[variant]]\nname = \"mc\"\nbinary = \"./mc\"\n"),
    );
    let rel = Path::new("dir/exp.toml");
    let check = bakeoff()
        .arg("check")
        .arg(rel)
        .current_dir(s.path())
        .output()
        .unwrap();
    assert!(check.status.success(), "{:?}", text(&check));
    let out = s.run_cmd(rel).current_dir(s.path()).output().unwrap();
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert_eq!(s.results()["cells"][0]["valid_runs"], 1, "{stderr}");
    no_server_left("mc", &s);
}

#[test]
fn regression_usage_errors_are_one_line_with_exit_2() {
    for args in [
        &["run"][..],
        &["run", "x.toml", "--outt", "y"],
        &["run", "x.toml", "--out", "a", "--out", "b"],
        &["run", "x.toml", "--fail-on", "nope"],
        &["history", "--limit", "x"],
        &["bogus"],
    ] {
        let err = one_line_2(&bakeoff().args(args).output().unwrap());
        assert!(err.starts_with("error: "), "{args:?}: {err}");
        assert!(err.contains("--help'"), "{args:?}: {err}");
    }
    let err = one_line_2(
        &bakeoff()
            .args(["run", "x.toml", "--outt", "y"])
            .output()
            .unwrap(),
    );
    assert!(
        err.contains("a similar argument exists: '--out'); see 'bakeoff run --help'"),
        "{err}"
    );
    // --help stays clap's text, on stdout, exit 0.
    let help = bakeoff().args(["run", "--help"]).output().unwrap();
    assert!(help.status.success());
    assert!(String::from_utf8_lossy(&help.stdout).lines().count() > 5);
}

/// A memcached experiment built from `source` (a TOML inline table).
fn built_from(source: &str) -> String {
    one_round("[[variant]]\nname = \"b\"\ncflags = \"-O2\"\n").replace(
        "kind = \"memcached\"\n",
        &format!("kind = \"memcached\"\nsource = {source}\n"),
    )
}

#[test]
fn regression_tarball_fifo_device_scheme_and_dash_rev_fail_check() {
    let s = Scratch::new();
    let fifo = s.path().join("pipe.tar.gz");
    common::mkfifo(&fifo);
    let sha = "0".repeat(64);
    let cases = [
        (
            format!("{{ tarball = \"pipe.tar.gz\", sha256 = \"{sha}\" }}"),
            "not a regular file",
        ),
        (
            format!("{{ tarball = \"/dev/zero\", sha256 = \"{sha}\" }}"),
            "not a regular file",
        ),
        (
            format!("{{ tarball = \"/usr\", sha256 = \"{sha}\" }}"),
            "is a directory",
        ),
        (
            format!("{{ tarball = \"missing.tar.gz\", sha256 = \"{sha}\" }}"),
            "does not exist",
        ),
        (
            format!("{{ tarball = \"ftp://example.invalid/m.tar.gz\", sha256 = \"{sha}\" }}"),
            "scheme ftp:// is not supported",
        ),
        (
            "{ git = \"/tmp\", rev = \"--output=/tmp/x\" }".to_string(),
            "not start with `-`",
        ),
        (
            "{ git = \"--upload-pack=touch\", rev = \"main\" }".to_string(),
            "must not start with `-`",
        ),
    ];
    for (source, says) in cases {
        let f = s.write("e.toml", &built_from(&source));
        let out = check_cmd(&f).output().unwrap();
        let err = one_line_2(&out);
        assert!(err.contains(says), "{source}: {err}");
        assert!(err.contains("e.toml:"), "located: {err}");
    }
}

#[test]
fn regression_sigterm_ends_bakeoff_during_a_step_that_never_looks() {
    let s = Scratch::new();
    // A source tree whose configure never returns: the build blocks bakeoff's main thread.
    std::fs::create_dir(s.path().join("src")).unwrap();
    let pidfile = s.path().join("configure.pid");
    script(
        &s,
        "src/configure",
        &format!(
            "#!/bin/sh\necho $$ > {}\nexec sleep 60\n",
            pidfile.display()
        ),
    );
    let f = s.write("e.toml", &built_from("{ path = \"src\" }"));
    let mut child = s
        .run_cmd(&f)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let configuring = common::wait_for(30.0, || {
        std::fs::read_to_string(&pidfile).is_ok_and(|t| t.ends_with('\n'))
    });
    std::thread::sleep(std::time::Duration::from_millis(500));
    let sent = std::time::Instant::now();
    let _ = std::process::Command::new("kill")
        .arg("-TERM")
        .arg(child.id().to_string())
        .status();
    let ended = common::wait_for(20.0, || matches!(child.try_wait(), Ok(Some(_))));
    if !ended {
        let _ = child.kill();
    }
    let status = child.wait().unwrap();
    let mut err = String::new();
    use std::io::Read;
    let _ = child.stderr.take().unwrap().read_to_string(&mut err);
    assert!(configuring, "the build never started: {err}");
    assert!(ended, "bakeoff outlived SIGTERM by 20 s: {err}");
    assert_eq!(status.code(), Some(130), "{err}");
    assert!(sent.elapsed().as_secs() < 15, "{err}");
    assert!(err.contains("did not stop within"), "{err}");
    // The step it ended is gone with it.
    let pid = std::fs::read_to_string(&pidfile).unwrap();
    let gone = common::wait_for(5.0, || {
        !std::path::Path::new(&format!("/proc/{}", pid.trim())).exists()
            || std::fs::read_to_string(format!("/proc/{}/stat", pid.trim())).is_ok_and(|st| {
                st.rsplit(')')
                    .next()
                    .is_some_and(|r| r.trim_start().starts_with('Z'))
            })
    });
    assert!(gone, "configure (pid {}) outlived bakeoff", pid.trim());
}

/// A small tmpfs mounted for one test, unmounted when dropped (even on a failed assert).
struct SmallDisk {
    at: std::path::PathBuf,
}

impl SmallDisk {
    /// None where this test may not mount (not root, or no mount permission).
    fn mount(at: &Path, size: &str) -> Option<SmallDisk> {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            return None;
        }
        std::fs::create_dir_all(at).ok()?;
        let ok = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(at)
            .status()
            .is_ok_and(|s| s.success());
        ok.then(|| SmallDisk {
            at: at.to_path_buf(),
        })
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(&self.at)
            .status();
    }
}

#[test]
fn regression_a_full_results_disk_stops_the_experiment_at_the_first_failed_write() {
    let s = Scratch::new();
    let Some(disk) = SmallDisk::mount(&s.path().join("small"), "112k") else {
        eprintln!("skipped: cannot mount a tmpfs here (needs root)");
        return;
    };
    let out_dir = disk.at.join("out");
    let f = s.write(
        "e.toml",
        &memcached(&variant_a(""), "repetitions = 60")
            .replace("warmup = \"100ms\"", "warmup = \"0s\"")
            .replace("duration = \"300ms\"", "duration = \"100ms\""),
    );
    let started = std::time::Instant::now();
    let out = bakeoff()
        .arg("run")
        .arg(&f)
        .arg("--out")
        .arg(&out_dir)
        .arg("--sandbox-dir")
        .arg(s.sandboxes())
        .args(["--quiet", "--no-history"])
        .output()
        .unwrap();
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    let last = stderr.trim_end().lines().last().unwrap_or("");
    assert!(last.contains("No space left on device"), "{stderr}");
    assert!(last.contains("the experiment stopped after"), "{stderr}");
    // Stopped at once: far fewer than the 60 planned runs, and the table is printed.
    let runs: usize = last
        .split("stopped after ")
        .nth(1)
        .and_then(|t| t.split(' ').next())
        .and_then(|n| n.parse().ok())
        .expect("a run count");
    assert!(runs < 60, "{last}");
    assert!(stdout.contains("kv"), "the table: {stdout}");
    // What was written stays readable.
    let kept = std::fs::read_to_string(out_dir.join("results.json")).expect("results.json kept");
    let r: serde_json::Value = serde_json::from_str(&kept).expect("complete JSON");
    assert_eq!(r["schema"], "bakeoff.results/1");
    eprintln!("stopped after {runs} runs in {:?}", started.elapsed());
    no_server_left("memcached", &s);
}

#[test]
fn regression_messages_say_what_the_input_is() {
    let s = Scratch::new();
    let f = s.write(
        "dir.toml",
        &one_round("[[variant]]\nname = \"a\"\nbinary = \"/usr/bin\"\n"),
    );
    // A directory is said to be one, not "does not exist".
    let err = one_line_2(&check_cmd(&f).output().unwrap());
    assert!(err.contains("binary /usr/bin is a directory"), "{err}");
    let ok = s.write("ok.toml", &memcached(&variant_a(""), "repetitions = 1"));
    let check = |set: &str| one_line_2(&check_cmd(&ok).args(["--set", set]).output().unwrap());
    // Whole numbers are printed as whole numbers, never through a float.
    let err = check("plan.repetitions=9223372036854775807");
    assert!(err.contains("got 9223372036854775807 "), "{err}");
    let err = check("workload.0.keys=9223372036854775807");
    assert!(err.contains("got 9223372036854775807 "), "{err}");
    // A --set value with a line break is refused, not cut.
    let err = check("plan.repetitions=3\nname = \"other\"");
    assert!(err.contains("line break"), "{err}");
}

#[test]
fn regression_history_json_without_a_store_is_json() {
    let s = Scratch::new();
    let out = bakeoff()
        .args(["history", "--json", "--store"])
        .arg(s.path().join("none.sqlite"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{:?}", text(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    assert_eq!(v, serde_json::json!([]));
}

#[test]
fn regression_agent_exits_non_zero_on_a_fatal_error() {
    let s = Scratch::new();
    let file = s.write("root-is-a-file", "x");
    let out = bakeoff()
        .args(["agent", "--root"])
        .arg(&file)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let (_, err) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("is a file, not a folder"), "{err}");
}

#[test]
fn regression_a_damaged_results_json_is_one_located_line_without_serde_jargon() {
    let s = Scratch::new();
    for (text, says) in [
        ("{\"schema\": 1", "found integer `1` where a string belongs"),
        ("{\"a\": 1}", "the key `schema` is missing"),
        ("{\"schema\": \"x\"", "ends early"),
        ("oops", "not valid JSON"),
    ] {
        let dir = s.path().join("r");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("results.json"), text).unwrap();
        let err = one_line_2(&bakeoff().arg("report").arg(&dir).output().unwrap());
        assert!(
            err.contains("results.json: line 1, column") || err.contains("line 2"),
            "{err}"
        );
        assert!(err.contains(says), "{text}: {err}");
        assert!(!err.contains("invalid type"), "{err}");
        assert!(err.contains("bakeoff run"), "what to do: {err}");
    }
}
