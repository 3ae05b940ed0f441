//! Hostile input (issue 28): every failure says so. Exit statuses when no run was valid,
//! what can be known before anything starts, relative binaries, unchecked sources, a full
//! results disk, and the messages each of these gives. Servers (memcached) are started by
//! bakeoff itself on loopback and must be gone when a test ends.

mod common;

use common::{no_server_left, Scratch};
use std::path::Path;
use std::process::Output;

/// A memcached experiment with `variants` and short windows.
fn memcached(variants: &str, plan: &str) -> String {
    format!(
        r#"name = "hostile"
[target]
kind = "memcached"
args = ["-t", "1", "-m", "16"]
{variants}
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

fn bakeoff() -> std::process::Command {
    std::process::Command::new(env!("CARGO_BIN_EXE_bakeoff"))
}

fn text(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// One line on stderr and exit status 2.
fn one_line_2(out: &Output) -> String {
    let (stdout, stderr) = text(out);
    assert_eq!(
        out.status.code(),
        Some(2),
        "stdout:\n{stdout}\nstderr:\n{stderr}"
    );
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    stderr
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
        &memcached(
            "[[variant]]\nname = \"dies\"\nbinary = \"dies.sh\"\n",
            "repetitions = 1",
        ),
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
}

#[test]
fn regression_sandbox_root_that_is_a_file_is_exit_2_before_anything_starts() {
    let s = Scratch::new();
    let file = s.write("not-a-folder", "x");
    let f = s.write(
        "e.toml",
        &memcached(
            "[[variant]]\nname = \"a\"\nbinary = \"/usr/bin/memcached\"\n",
            "repetitions = 1\nsandbox_dir = \"not-a-folder\"",
        ),
    );
    let err = one_line_2(&bakeoff().arg("check").arg(&f).output().unwrap());
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
        &memcached(
            &format!("[[variant]]\nname = \"a\"\nbinary = \"/usr/bin/memcached\"\nargs = [\"-o\", \"{long}\"]\n"),
            "repetitions = 1",
        ),
    );
    let err = one_line_2(&bakeoff().arg("check").arg(&f).output().unwrap());
    assert!(err.contains("at most"), "{err}");
    let many: Vec<String> = (0..70_000)
        .map(|_| "\"-vvvvvvvvvvvvvvvvvvvvvvvvv\"".to_string())
        .collect();
    let f = s.write(
        "many.toml",
        &memcached(
            &format!(
                "[[variant]]\nname = \"a\"\nbinary = \"/usr/bin/memcached\"\nargs = [{}]\n",
                many.join(",")
            ),
            "repetitions = 1",
        ),
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
        &memcached(
            "[[variant]]\nname = \"mc\"\nbinary = \"./mc\"\n",
            "repetitions = 1",
        ),
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
