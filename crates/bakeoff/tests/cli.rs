//! CLI tests that need no server: help, bad input with file:line:col and exit status 2,
//! `check`, and `report` on a folder that is not one.

mod common;

use assert_cmd::Command;
use predicates::prelude::*;

fn bakeoff() -> Command {
    Command::cargo_bin("bakeoff").expect("binary")
}

#[test]
fn help_explains_commands() {
    bakeoff()
        .arg("--help")
        .assert()
        .success()
        .stdout(predicate::str::contains("run"))
        .stdout(predicate::str::contains("report"));
    bakeoff()
        .args(["run", "--help"])
        .assert()
        .success()
        .stdout(predicate::str::contains("Exit status"))
        .stdout(predicate::str::contains("--out"));
}

#[test]
fn unknown_key_is_one_line_with_position_and_exit_2() {
    let s = common::Scratch::new();
    let f = s.write(
        "bad.toml",
        "name = \"x\"\n[target]\nkind = \"memcached\"\n[[variant]]\nname = \"a\"\nbinary = \"/bin/sh\"\nbinery = 1\n[[workload]]\nkind = \"kv\"\n",
    );
    let out = bakeoff()
        .arg("run")
        .arg(&f)
        .arg("--out")
        .arg(s.out())
        .assert()
        .code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("bad.toml:7:1: unknown field `binery`"),
        "{err}"
    );
    assert!(
        !s.out().exists(),
        "bad input must not create a results folder"
    );
}

#[test]
fn missing_compiler_is_bad_input() {
    let s = common::Scratch::new();
    let f = s.write(
        "nocc.toml",
        "name = \"x\"\n[target]\nkind = \"memcached\"\nsource = { debian = \"memcached\" }\n[[variant]]\nname = \"a\"\ncompiler = \"gcc-99-nope\"\n[[workload]]\nkind = \"kv\"\n",
    );
    let out = bakeoff()
        .arg("run")
        .arg(&f)
        .arg("--out")
        .arg(s.out())
        .assert()
        .code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(err.contains("nocc.toml:7:12:"), "{err}");
    assert!(err.contains("gcc-99-nope"), "{err}");
}

#[test]
fn missing_file_and_check() {
    bakeoff()
        .args(["check", "/no/such/file.toml"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("cannot read"));
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    for entry in std::fs::read_dir(root).expect("examples/") {
        let p = entry.expect("entry").path();
        if p.extension().is_some_and(|e| e == "toml") {
            bakeoff()
                .arg("check")
                .arg(&p)
                .assert()
                .success()
                .stdout(predicate::str::contains("ok"));
        }
    }
}

#[test]
fn report_of_a_folder_without_results() {
    let s = common::Scratch::new();
    bakeoff()
        .arg("report")
        .arg(s.path())
        .assert()
        .code(2)
        .stderr(predicate::str::contains("results.json"));
}

#[test]
fn usage_error_exits_2() {
    bakeoff().args(["run"]).assert().code(2);
    bakeoff().args(["frobnicate"]).assert().code(2);
}
