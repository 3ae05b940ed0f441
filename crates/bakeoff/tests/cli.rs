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

/// `bakeoff run FILE --out <scratch>/out`, which must exit 2; its stderr.
fn run_exit_2(s: &common::Scratch, f: &std::path::Path) -> String {
    let out = bakeoff()
        .arg("run")
        .arg(f)
        .arg("--out")
        .arg(s.out())
        .assert()
        .code(2);
    String::from_utf8_lossy(&out.get_output().stderr).to_string()
}

#[test]
fn unknown_key_is_one_line_with_position_and_exit_2() {
    let s = common::Scratch::new();
    let f = s.write(
        "bad.toml",
        "name = \"x\"\n[target]\nkind = \"memcached\"\n[[variant]]\nname = \"a\"\nbinary = \"/bin/sh\"\nbinery = 1\n[[workload]]\nkind = \"kv\"\n",
    );
    let err = run_exit_2(&s, &f);
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
    let err = run_exit_2(&s, &f);
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
        if p.extension().is_none_or(|e| e != "toml") {
            continue;
        }
        let text = std::fs::read_to_string(&p).expect("example");
        if text.contains("[[host]]") {
            // Valid, and its machines (placeholders) are reached only after validation.
            bakeoff()
                .arg("check")
                .arg(&p)
                .assert()
                .code(2)
                .stderr(predicate::str::contains("does not answer"));
            continue;
        }
        let machine_wide = text.lines().any(|l| {
            ["thp", "defrag", "sysctl", "smt"]
                .iter()
                .any(|k| l.trim_start().starts_with(&format!("{k} =")))
        });
        if machine_wide {
            // Refused without the flag (one line naming it), checked with it.
            bakeoff()
                .arg("check")
                .arg(&p)
                .assert()
                .code(2)
                .stderr(predicate::str::contains("--allow-system-changes"));
            // SAFETY: geteuid has no preconditions.
            if unsafe { libc::geteuid() } != 0 {
                continue;
            }
        }
        let mut cmd = bakeoff();
        if machine_wide {
            cmd.arg("--allow-system-changes");
        }
        cmd.arg("check")
            .arg(&p)
            .assert()
            .success()
            .stdout(predicate::str::contains("ok"));
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

#[test]
fn check_says_what_the_plan_buys() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let out = bakeoff()
        .arg("check")
        .arg(root.join("memcached-gcc-vs-clang.toml"))
        .output()
        .expect("check");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(
        stdout.contains("plan: budget 5m: about") && stdout.contains("within ±1.0%"),
        "{stdout}"
    );
}

/// One line on stderr, exit status 2, never a panic.
fn refused(args: &[&str]) -> String {
    let out = bakeoff().args(args).output().expect("bakeoff");
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
    err
}

#[test]
fn regression_check_never_hangs_or_reads_a_device() {
    let s = common::Scratch::new();
    let fifo = s.path().join("pipe.toml");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo");
    assert!(made.success());
    let err = refused(&["check", fifo.to_str().unwrap()]);
    assert!(err.contains("not a regular file"), "{err}");
    let err = refused(&["check", "/dev/zero"]);
    assert!(err.contains("not a regular file"), "{err}");
    let dir = refused(&["check", s.path().to_str().unwrap()]);
    assert!(dir.contains("not a regular file"), "{dir}");
    let bin = s.path().join("bin.toml");
    std::fs::write(&bin, [0xff, 0xfe, 0x00, 0x41]).unwrap();
    let err = refused(&["check", bin.to_str().unwrap()]);
    assert!(err.contains("not UTF-8"), "{err}");
}

#[test]
fn regression_usage_errors_are_printed_once() {
    let out = bakeoff().args(["run"]).output().expect("bakeoff");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(err.matches("error:").count(), 1, "{err}");
}

#[test]
fn regression_a_binary_that_is_not_a_program_fails_check() {
    let s = common::Scratch::new();
    s.write("notes.txt", "just text\n");
    std::fs::set_permissions(
        s.path().join("notes.txt"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let f = s.write(
        "e.toml",
        "name = \"x\"\n[target]\nkind = \"memcached\"\n[[variant]]\nname = \"a\"\nbinary = \"notes.txt\"\n[[workload]]\nkind = \"kv\"\n[plan]\nrepetitions = 1\n",
    );
    let err = refused(&["check", f.to_str().unwrap()]);
    assert!(
        err.contains("e.toml:6:") && err.contains("is not a program"),
        "{err}"
    );
}

#[test]
fn regression_read_only_commands_never_touch_a_foreign_store() {
    let s = common::Scratch::new();
    let store = s.path().join("other.sqlite");
    let made = std::process::Command::new(bakeoff_testkit::python3())
        .arg("-c")
        .arg(format!(
            "import sqlite3; c = sqlite3.connect({:?}); c.execute('create table notes (t text)'); c.execute(\"insert into notes values ('x')\"); c.commit()",
            store.display()
        ))
        .status()
        .expect("python3");
    assert!(made.success());
    let before = std::fs::read(&store).unwrap();
    let path = store.to_str().unwrap();
    for args in [
        vec!["history", "--store", path],
        vec!["trend", "x", "--store", path],
        vec!["compare", "1", "2", "--store", path],
    ] {
        let err = refused(&args);
        assert!(
            err.contains("not a bakeoff history store"),
            "{args:?}: {err}"
        );
    }
    assert_eq!(
        std::fs::read(&store).unwrap(),
        before,
        "the store was modified"
    );
    assert!(!s.path().join("other.sqlite-wal").exists());
    let err = refused(&["history", "--store", s.path().to_str().unwrap()]);
    assert!(err.contains("not a file"), "{err}");
}

#[test]
fn regression_out_or_results_dir_on_a_file_is_bad_input() {
    let s = common::Scratch::new();
    let taken = s.write("taken", "not a folder\n");
    let exp = s.write(
        "e.toml",
        "name = \"x\"\n[target]\nkind = \"memcached\"\n[[variant]]\nname = \"a\"\nbinary = \"/usr/bin/memcached\"\n[[workload]]\nkind = \"kv\"\n[plan]\nrepetitions = 1\n",
    );
    let (e, t) = (exp.to_str().unwrap(), taken.to_str().unwrap());
    let sandboxes = s.path().join("sb");
    let sb = sandboxes.to_str().unwrap();
    for flag in ["--out", "--results-dir"] {
        let err = refused(&["run", e, flag, t, "--sandbox-dir", sb, "--no-history"]);
        assert!(err.contains("taken"), "{flag}: {err}");
    }
}

#[test]
fn regression_report_recomputes_from_the_runs_it_finds() {
    let s = common::Scratch::new();
    let dir = s.path().join("folder");
    std::fs::create_dir_all(&dir).unwrap();
    // A results.json whose stored verdict claims "faster" with no runs behind it.
    let text = include_str!("data/stale-results.json").replace("b\\u001b[31m", "b");
    std::fs::write(dir.join("results.json"), text).unwrap();
    let out = bakeoff().arg("report").arg(&dir).output().expect("report");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(!stdout.contains("faster"), "{stdout}");
    assert!(
        !stdout.contains('\u{1b}'),
        "an escape sequence reached the terminal: {stdout}"
    );
    assert!(
        !dir.read_dir().unwrap().any(|e| e
            .unwrap()
            .file_name()
            .to_string_lossy()
            .ends_with(".tmp")),
        "a temporary file was left behind"
    );
}

/// One experiment file per class of bad input the plan refuses: each exits 2 with one
/// line that names the file, line and column, and never panics.
#[test]
fn regression_each_class_of_bad_experiment_is_one_located_line() {
    let s = common::Scratch::new();
    let good = "name = \"x\"\n[target]\nkind = \"memcached\"\nargs = [\"-t\", \"1\"]\n[[variant]]\nname = \"a\"\nbinary = \"/usr/bin/memcached\"\n[[workload]]\nkind = \"kv\"\nconnections = [1, 16]\n[plan]\nduration = \"2s\"\nwarmup = \"1s\"\n";
    let cases = [
        ("duration = \"2s\"", "duration = \"1e30\"", "at most 7d"),
        (
            "warmup = \"1s\"",
            "warmup = \"99999999999 years\"",
            "at most 7d",
        ),
        ("duration = \"2s\"", "duration = \"1ns\"", "at least 10ms"),
        ("name = \"a\"", "name = \"a\\u001b[31m\"", "printable"),
        ("name = \"a\"", "name = \"a\\u200b\"", "invisible"),
        ("[1, 16]", "[16, 16]", "twice"),
        ("[\"-t\", \"1\"]", "[\"-p\", \"11211\"]", "the sandbox's"),
        (
            "kind = \"kv\"",
            "kind = \"kv\"\nkeys = \"many\"",
            "expected a whole number",
        ),
        (
            "[plan]",
            "[plan]\nbudget = \"0s\"",
            "budget must be between",
        ),
        (
            "[plan]",
            "[plan]\nprecision = 5",
            "precision must be between",
        ),
        (
            "binary = \"/usr/bin/memcached\"",
            "binary = \"/usr/bin/memcached\"\nhost = \"s9\"",
            "no [[host]] named \"s9\"",
        ),
        (
            "binary = \"/usr/bin/memcached\"",
            "binary = \"/usr/bin/memcached\"\nserver_stats = \"most\"",
            "expected one of `off`, `basic`, `full`",
        ),
        (
            "[plan]",
            "[plan]\nserver_stats = \"on\"",
            "expected one of `off`, `basic`, `full`",
        ),
    ];
    for (from, to, says) in cases {
        let f = s.write("bad.toml", &good.replace(from, to));
        let err = refused(&["check", f.to_str().unwrap()]);
        assert!(err.contains(says), "{to}: {err}");
        let located = err
            .split(':')
            .nth(2)
            .is_some_and(|n| n.chars().all(|c| c.is_ascii_digit()));
        assert!(
            err.contains("bad.toml:") && located,
            "{to}: not located: {err}"
        );
    }
}

#[test]
fn set_overrides_keys_for_check_and_names_a_bad_one() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let f = root.join("memcached-gcc-vs-clang.toml");
    let out = bakeoff()
        .arg("check")
        .arg(&f)
        .args(["--set", "plan.repetitions=1", "--set", "plan.budget=1m"])
        .output()
        .expect("check");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(stdout.contains("budget 1m"), "{stdout}");
    let err = refused(&["check", f.to_str().unwrap(), "--set", "plan.repetitions"]);
    assert!(
        err.contains("--set: plan.repetitions: expected KEY=VALUE"),
        "{err}"
    );
    let err = refused(&["check", f.to_str().unwrap(), "--set", "plan.budget=forever"]);
    assert!(err.contains("(with --set plan.budget=forever)"), "{err}");
}

#[test]
fn completions_and_man_page_come_from_the_arguments() {
    let out = bakeoff()
        .args(["completions", "bash"])
        .output()
        .expect("bash");
    let script = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && script.contains("--fail-on"),
        "{script}"
    );
    let out = bakeoff().arg("man").output().expect("man");
    let page = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && page.contains(".TH bakeoff 1"),
        "{page}"
    );
}

/// `check` runs nothing the file names: not its compiler (`--version` used to run), not
/// an ssh option that runs a command, also given through `--set`; the command line can
/// allow such an option, and then it is what runs.
#[test]
fn regression_check_runs_no_program_the_file_names() {
    let s = common::Scratch::new();
    let ran = s.path().join("ran");
    let cc = s.write(
        "cc.sh",
        &format!("#!/bin/sh\ntouch {}\necho 'cc 1.0'\n", ran.display()),
    );
    std::fs::set_permissions(&cc, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let f = s.write(
        "cc.toml",
        &format!(
            "name = \"x\"\n[target]\nkind = \"memcached\"\nsource = {{ path = \"{}\" }}\n[[variant]]\nname = \"a\"\ncompiler = \"{}\"\n[[workload]]\nkind = \"kv\"\n",
            s.path().display(),
            cc.display()
        ),
    );
    let out = bakeoff().arg("check").arg(&f).output().unwrap();
    common::assert_exit(&out, 0);
    assert!(!ran.exists(), "check ran the compiler");

    let host = |options: &str| {
        format!(
            "name = \"x\"\n[target]\nkind = \"memcached\"\nhost = \"db\"\n[[variant]]\nname = \"a\"\nbinary = \"/usr/bin/memcached\"\n[[workload]]\nkind = \"kv\"\nclients = [\"db\"]\n[[host]]\nname = \"db\"\nssh = \"db1.invalid\"\nlisten = \"127.0.0.1\"\nssh_options = [{options}]\n[plan]\nrepetitions = 1\n"
        )
    };
    let touch = format!("\"ProxyCommand=touch {}\"", ran.display());
    for options in [
        touch.clone(),
        format!("\"proxycommand touch {}=1\"", ran.display()),
        "\"LocalCommand=x\", \"PermitLocalCommand=yes\"".into(),
        "\"KnownHostsCommand=/bin/true\"".into(),
        "\"Match=exec true\"".into(),
        "\"LocalForward=8080 localhost:80\"".into(),
    ] {
        let f = s.write("h.toml", &host(&options));
        let err = refused(&["check", f.to_str().unwrap()]);
        assert!(
            err.contains("h.toml:") && err.contains("--allow-ssh-commands"),
            "{options}: {err}"
        );
    }
    let f = s.write("h.toml", &host("\"StrictHostKeyChecking=accept-new\""));
    let set = format!("host.0.ssh_options=[{touch}]");
    let err = refused(&["check", f.to_str().unwrap(), "--set", &set]);
    assert!(err.contains("--allow-ssh-commands"), "{err}");
    assert!(!ran.exists(), "check ran an ssh ProxyCommand");
    // Allowed on the command line: the option is what ssh runs.
    let f = s.write("h.toml", &host(&touch));
    let out = bakeoff()
        .args(["check", "--allow-ssh-commands"])
        .arg(&f)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "the host cannot answer");
    assert!(ran.exists(), "the allowed ProxyCommand did not run");
}

/// An experiment served from `[[host]] db` (a name that never resolves), with `extra`
/// lines in its host table.
fn on_host(extra: &str) -> String {
    format!(
        "name = \"x\"\n[target]\nkind = \"memcached\"\nhost = \"db\"\n[[variant]]\nname = \"a\"\nbinary = \"/usr/bin/memcached\"\n[[workload]]\nkind = \"kv\"\nclients = [\"db\"]\n[[host]]\nname = \"db\"\nssh = \"db1.invalid\"\nlisten = \"127.0.0.1\"\n{extra}\n[plan]\nrepetitions = 1\n"
    )
}

/// A folder holding a fake `ssh` that runs `body` (put first on PATH: whatever bakeoff
/// runs as ssh is this).
fn fake_ssh(s: &common::Scratch, body: &str) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let bin = s.path().join("fakebin");
    std::fs::create_dir_all(&bin).unwrap();
    let ssh = bin.join("ssh");
    std::fs::write(&ssh, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&ssh, std::fs::Permissions::from_mode(0o755)).unwrap();
    bin
}

/// PATH with `bin` first.
fn path_with(bin: &std::path::Path) -> String {
    format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

/// `check` on `file` with `bin` first on PATH and DISPLAY set (what the X11 attack
/// needed); exit 2 in one line, within 60 s whatever ssh does. Its stderr.
fn check_refused(file: &std::path::Path, bin: &std::path::Path, extra: &[&str]) -> String {
    let out = bakeoff()
        .arg("check")
        .args(extra)
        .arg(file)
        .env("PATH", path_with(bin))
        .env("DISPLAY", ":0")
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    err
}

/// Every spelling ssh reads of `key value` (case, `=` or blanks, a quoted keyword, `-o`
/// before it), `n` of them, starting at the `i`th: as TOML strings.
fn spelled(key: &str, value: &str, i: usize, n: usize) -> Vec<String> {
    let cases = [
        key.to_string(),
        key.to_ascii_lowercase(),
        key.to_ascii_uppercase(),
        format!("\"{key}\""),
    ];
    let seps = ["=", " ", " = ", "\t", "  "];
    let pres = ["", "-o", "-o ", " "];
    (i..i + n)
        .map(|j| {
            let o = format!(
                "{}{}{}{value}",
                pres[j % pres.len()],
                cases[(j / 2) % cases.len()],
                seps[(j / 3) % seps.len()]
            );
            format!("{o:?}")
        })
        .collect()
}

/// Issue 44, class 3: `ssh_options` `ForwardX11=yes` with `XAuthLocation=./xauth.sh` (and
/// DISPLAY set) ran the script at `check`: a blocklist let them through. Options are an
/// allowlist now, in every spelling ssh reads; anything else is refused at `check` (and
/// `run`, which validates the same way) in one line naming the option, the host and the
/// file, exit 2, before any ssh runs. The allowed ones reach ssh in one spelling.
#[test]
fn hostile_ssh_option_allowlist() {
    let s = common::Scratch::new();
    let ran = s.path().join("ran");
    let script = s.write("xauth.sh", &format!("#!/bin/sh\ntouch {}\n", ran.display()));
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let ssh_ran = s.path().join("ssh-ran");
    let bin = fake_ssh(
        &s,
        &format!("touch {}\nexec /usr/bin/ssh \"$@\"", ssh_ran.display()),
    );
    // The attack as it was, then its class in generated spellings.
    let attack = "ssh_options = [\"ForwardX11=yes\", \"XAuthLocation=./xauth.sh\"]";
    let f = s.write("h.toml", &on_host(attack));
    let err = check_refused(&f, &bin, &[]);
    assert!(
        err.contains("h.toml:") && err.contains("host db") && err.contains("ForwardX11"),
        "{err}"
    );
    let class = [
        ("ForwardX11", "yes"),
        ("XAuthLocation", "./xauth.sh"),
        ("ForwardX11Trusted", "yes"),
        ("ProxyCommand", "./xauth.sh"),
        ("LocalCommand", "./xauth.sh"),
        ("PermitLocalCommand", "yes"),
        ("KnownHostsCommand", "./xauth.sh"),
        ("Match", "exec ./xauth.sh"),
        ("Include", "./evil.conf"),
        ("PKCS11Provider", "./evil.so"),
        ("SecurityKeyProvider", "./evil.so"),
        ("ProxyJump", "evil"),
        ("AddKeysToAgent", "ask"),
        ("SendEnv", "*"),
        ("LocalForward", "8080 localhost:80"),
        ("SessionType", "none"),
        ("ForkAfterAuthentication", "yes"),
        ("ControlPath", "/tmp/x"),
    ];
    for (i, (key, value)) in class.iter().enumerate() {
        for o in spelled(key, value, i, 4) {
            let f = s.write("h.toml", &on_host(&format!("ssh_options = [{o}]")));
            let err = check_refused(&f, &bin, &[]);
            assert!(
                err.contains("h.toml:")
                    && err.contains("host db")
                    && err.to_lowercase().contains(&key.to_lowercase()),
                "{o}: {err}"
            );
        }
    }
    // `run` validates the same way: refused before anything is made.
    let f = s.write("h.toml", &on_host(attack));
    let out = s.run_cmd(&f).env("PATH", path_with(&bin)).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("ForwardX11") && !s.out().exists(), "{err}");
    // The same through --set.
    let f = s.write("h.toml", &on_host(""));
    let set = "host.0.ssh_options=[\"forwardx11 yes\", \"-oXAuthLocation=./xauth.sh\"]";
    let err = check_refused(&f, &bin, &["--set", set]);
    assert!(
        err.contains("ForwardX11") || err.contains("forwardx11"),
        "{err}"
    );
    // What breaks bakeoff's own ssh is refused even when the command line allows more.
    let f = s.write("h.toml", &on_host("ssh_options = [\"SessionType none\"]"));
    let err = check_refused(&f, &bin, &["--allow-ssh-commands"]);
    assert!(
        err.contains("SessionType") && err.contains("remove it"),
        "{err}"
    );
    assert!(!ran.exists(), "check ran the script an ssh option named");
    assert!(!ssh_ran.exists(), "ssh ran with a refused option");

    // The allowed ones, as the user spelled them, reach ssh as Key=value; a timeout the
    // file gives replaces bakeoff's default.
    let args = s.path().join("args");
    let bin = fake_ssh(
        &s,
        &format!(
            "printf '%s\\n' \"$@\" > {}\necho 'ssh: connect to host db1.invalid port 22: Connection refused' >&2\nexit 255",
            args.display()
        ),
    );
    let allowed = "ssh_options = [\"port 2222\", \"-o ConnectTimeout = 3\", \"\\\"StrictHostKeyChecking\\\" accept-new\", \"userknownhostsfile=/dev/null\", \"-oCiphers\\taes128-ctr\"]";
    let f = s.write("h.toml", &on_host(allowed));
    let err = check_refused(&f, &bin, &[]);
    assert!(err.contains("does not answer"), "{err}");
    let args = std::fs::read_to_string(&args).unwrap();
    for want in [
        "Port=2222",
        "ConnectTimeout=3",
        "StrictHostKeyChecking=accept-new",
        "UserKnownHostsFile=/dev/null",
        "Ciphers=aes128-ctr",
        "BatchMode=yes",
    ] {
        assert!(args.lines().any(|l| l == want), "{want} not in {args}");
    }
    assert!(!args.contains("ConnectTimeout=10"), "{args}");
}

/// Issue 44, class 5: `identity = "/dev/zero"` grew ssh to 4.5 GB and `check` never
/// returned; `SessionType=none` left it waiting forever; `ForkAfterAuthentication=yes`
/// left ssh masters running; a `work_dir` starting with `-` reached the remote commands.
/// The files ssh reads must be small regular files, those options are never accepted,
/// a host field may not start with `-` (all at `check`, exit 2, one line, before any
/// ssh runs), and an ssh that says nothing is killed at its deadline.
#[test]
fn hostile_ssh_settings_that_hang() {
    let s = common::Scratch::new();
    let ssh_ran = s.path().join("ssh-ran");
    let bin = fake_ssh(&s, &format!("touch {}\nsleep 1000", ssh_ran.display()));
    let fifo = s.path().join("fifo");
    common::mkfifo(&fifo);
    let big = s.write("big", &"k".repeat(2 << 20));
    let zero = s.path().join("zero-link");
    std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
    s.write("key", "not really a key\n");
    std::os::unix::fs::symlink(&fifo, s.path().join("key.pub")).unwrap();
    let dir = s.path().display().to_string();
    let fifo = fifo.display().to_string();
    let files = [
        "/dev/zero".to_string(),
        "/dev/null".into(),
        "/dev/urandom".into(),
        "/proc/self/environ".into(),
        fifo.clone(),
        dir.clone(),
        big.display().to_string(),
        zero.display().to_string(),
        "key".into(),
        "missing-key".into(),
    ];
    for (i, file) in files.iter().enumerate() {
        let f = s.write("h.toml", &on_host(&format!("identity = {file:?}")));
        let err = check_refused(&f, &bin, &[]);
        assert!(
            err.contains("h.toml:") && err.contains("host db") && err.contains("identity"),
            "{file}: {err}"
        );
        if file.starts_with('/') {
            for o in spelled("IdentityFile", file, i, 2) {
                let f = s.write("h.toml", &on_host(&format!("ssh_options = [{o}]")));
                let err = check_refused(&f, &bin, &[]);
                assert!(err.contains("IdentityFile"), "{o}: {err}");
            }
        }
    }
    for file in [
        "/dev/zero",
        "/proc/self/environ",
        fifo.as_str(),
        dir.as_str(),
    ] {
        for key in ["UserKnownHostsFile", "GlobalKnownHostsFile"] {
            let o = format!("ssh_options = [\"{key}=/dev/null {file}\"]");
            let err = check_refused(&s.write("h.toml", &on_host(&o)), &bin, &[]);
            assert!(err.contains(key), "{o}: {err}");
        }
    }
    for (i, (key, value)) in [
        ("SessionType", "none"),
        ("ForkAfterAuthentication", "yes"),
        ("ControlPersist", "yes"),
        ("StdinNull", "yes"),
        ("ConnectTimeout", "0"),
        ("ConnectTimeout", "999999"),
        ("ConnectionAttempts", "1000"),
    ]
    .iter()
    .enumerate()
    {
        for o in spelled(key, value, i, 3) {
            let f = s.write("h.toml", &on_host(&format!("ssh_options = [{o}]")));
            let err = check_refused(&f, &bin, &["--allow-ssh-commands"]);
            assert!(
                err.to_lowercase().contains(&key.to_lowercase()),
                "{o}: {err}"
            );
        }
    }
    for field in ["work_dir", "identity", "name"] {
        for value in ["-x", "--help", "-", "-oProxyCommand=x"] {
            let text = match field {
                "name" => on_host("").replace(
                    "[[host]]\nname = \"db\"",
                    &format!("[[host]]\nname = {value:?}"),
                ),
                _ => on_host(&format!("{field} = {value:?}")),
            };
            let f = s.write("h.toml", &text);
            let err = check_refused(&f, &bin, &[]);
            assert!(
                err.contains(field) && err.contains("starts with -"),
                "{err}"
            );
        }
    }
    assert!(!ssh_ran.exists(), "ssh ran with a setting check refuses");

    // An ssh that connects and then says nothing (and ignores SIGTERM) is killed at its
    // deadline, with everything it started.
    let pids = s.path().join("pids");
    let bin = fake_ssh(
        &s,
        &format!(
            "trap '' TERM\nsleep 1000 &\necho $$ $! > {}\nwait",
            pids.display()
        ),
    );
    let f = s.write("h.toml", &on_host("ssh_options = [\"ConnectTimeout=1\"]"));
    let started = std::time::Instant::now();
    let err = check_refused(&f, &bin, &[]);
    assert!(err.contains("did not answer within 11 s"), "{err}");
    assert!(started.elapsed().as_secs() < 40, "{:?}", started.elapsed());
    let pids = std::fs::read_to_string(&pids).unwrap();
    for pid in pids.split_whitespace() {
        let gone = common::wait_for(5.0, || {
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .map_or(true, |st| st.contains(") Z "))
        });
        assert!(gone, "ssh's process {pid} outlived its deadline");
    }
}

/// Issue 44, class 3: a replay `file = "/proc/self/environ"` put the environment into
/// `check`'s error. No message names what is in a file: the replay and setup files in
/// every shape their parsers refuse, and a results.json, each holding a marker.
#[test]
fn hostile_file_content_never_in_errors() {
    const MARK: &str = "s3cr3t44marker";
    let s = common::Scratch::new();
    let replay = |key: &str, file: &str| {
        let (file, setup) = match key {
            "file" => (file.to_string(), String::new()),
            _ => ("ok.sql".to_string(), format!("setup = {file:?}\n")),
        };
        format!(
            "name = \"x\"\n[target]\nkind = \"sqlite\"\n[[variant]]\nname = \"a\"\nbinary = \"/usr/bin/sqlite3\"\n[[workload]]\nkind = \"replay\"\nfile = {file:?}\n{setup}"
        )
    };
    s.write("ok.sql", "SELECT 1;\n");
    let general = "/usr/sbin/mariadbd, Version: 10.11.6-MariaDB-log. started with:\nTcp port: 3306  Unix socket: /run/mysqld/mysqld.sock\nTime\t\t    Id Command\tArgument\n";
    let csv = "2026-11-23 10:00:00.123 UTC,\"bench\",\"bench\",4242,\"127.0.0.1:50000\",655f1a2b.1092,1,\"idle\",2026-11-23 10:00:00 UTC,3/2,0,LOG,00000,\"statement: SELECT 1\",,,,,,,,,\"psql\",\"client backend\",,0\n";
    let shapes = [
        format!("SELECT '{MARK}\n"),
        format!("SELECT \"{MARK}\n"),
        format!("SELECT `{MARK}\n"),
        format!("SELECT 1;\n/* {MARK}\n"),
        format!("DO ${MARK}$ BEGIN END;\n"),
        format!("DELIMITER\n{MARK};\n"),
        format!("-- {MARK}\n"),
        format!("{MARK}\0\n"),
        format!("# User@Host: {MARK}\n# Query_time: 1\n"),
        format!("{general}{MARK} is not an entry\n"),
        format!("{csv}{MARK},b\n"),
        format!("{csv}2026-11-23 10:00:00.123 UTC,\"{MARK}\n"),
        format!("{csv}\"{MARK}\"x,\n"),
    ];
    for (i, text) in shapes.iter().enumerate() {
        let name = format!("q{i}.sql");
        s.write(&name, text);
        for key in ["file", "setup"] {
            let f = s.write("r.toml", &replay(key, &name));
            let out = bakeoff().arg("check").arg(&f).output().unwrap();
            let all = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            assert!(!all.contains(MARK), "{key} {text:?}: {all}");
            // A setup file is plain SQL: some of these are statements there.
            if key == "file" {
                assert_eq!(out.status.code(), Some(2), "{key} {text:?}: {all}");
            }
        }
    }
    // The attack itself: the environment, a secret in it.
    let f = s.write("r.toml", &replay("file", "/proc/self/environ"));
    let out = bakeoff()
        .arg("check")
        .arg(&f)
        .env("BAKEOFF_TEST_SECRET", MARK)
        .output()
        .unwrap();
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.status.code(), Some(2), "{all}");
    assert!(
        !all.contains(MARK) && all.contains("/proc/self/environ"),
        "{all}"
    );
    // A results.json whose values serde would quote.
    let head = "\"schema\": \"bakeoff.results/1\", \"name\": \"x\", \"status\": \"complete\", \"bakeoff_version\": \"1\", \"started_utc\": \"x\"";
    for json in [
        format!("{{{head}, \"host\": \"{MARK}\"}}"),
        format!("{{{head}, \"host\": {{\"{MARK}\": 1}}}}"),
        format!("{{\"schema\": \"{MARK}\"}}"),
    ] {
        let dir = s.path().join("folder");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("results.json"), &json).unwrap();
        let out = bakeoff().arg("report").arg(&dir).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{json}: {err}");
        assert!(
            !err.contains(MARK) && err.contains("results.json"),
            "{json}: {err}"
        );
    }
}

/// Issue 28: `compare` and `report` printed names from a results.json raw (escape sequences
/// cleared the screen and set the window title; a bidi override reordered the line). Each
/// such file is refused: exit 2, one line naming the file and the field, nothing written.
#[test]
fn regression_a_results_folder_with_escape_sequences_or_bidi_overrides_in_names_is_refused() {
    let s = common::Scratch::new();
    let original = include_str!("data/stale-results.json");
    for (i, bad) in ["b\\u001b[2J\\u001b]0;owned\\u0007", "b\\u202e", "b\\u3164"]
        .iter()
        .enumerate()
    {
        let dir = s.path().join(format!("folder{i}"));
        std::fs::create_dir_all(&dir).unwrap();
        let text = original.replace("b\\u001b[31m", bad);
        std::fs::write(dir.join("results.json"), text).unwrap();
        for cmd in ["report", "compare"] {
            let mut c = bakeoff();
            c.arg(cmd);
            if cmd == "compare" {
                c.arg("--store")
                    .arg(s.path().join("history.sqlite"))
                    .arg("--out")
                    .arg(s.path().join(format!("compared{i}")))
                    .arg(&dir);
            }
            let out = c.arg(&dir).output().expect("runs");
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{cmd:?} {bad}: {err}");
            assert_eq!(err.trim_end().lines().count(), 1, "{err}");
            assert!(
                err.contains("results.json") && err.contains("cells[1].variant"),
                "{err}"
            );
            assert!(
                !err.contains('\u{1b}') && !err.contains('\u{202e}'),
                "{err:?}"
            );
            assert!(out.stdout.is_empty());
        }
        assert!(!dir.join("report.md").exists());
    }
}

/// A results folder of three variants over eight paired rounds: `a` the baseline, `b` 5%
/// and `c` 12% faster than `a`.
fn three_variant_folder(s: &common::Scratch) -> std::path::PathBuf {
    let noise = [1.0, 1.01, 0.99, 1.005, 0.995, 1.02, 0.98, 1.0];
    common::results_folder(
        s,
        "three",
        "three",
        16,
        &[("a", 1.0), ("b", 1.05), ("c", 1.12)],
        noise.len(),
        |f, round| 100_000.0 * f * noise[round] * (1.0 + 0.002 * round as f64 * f),
    )
}

#[test]
fn report_re_decides_a_folder_against_another_baseline() {
    let s = common::Scratch::new();
    let dir = three_variant_folder(&s);
    let before = std::fs::read_to_string(dir.join("results.json")).unwrap();
    let out = bakeoff()
        .args(["report", dir.to_str().unwrap(), "--baseline", "b"])
        .output()
        .expect("report");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}{stderr}");
    assert!(stdout.contains("re-decided against b"), "{stdout}");
    // The folder's own results and reports stay; the re-decided ones sit beside them.
    assert_eq!(
        std::fs::read_to_string(dir.join("results.json")).unwrap(),
        before
    );
    for f in [
        "report.baseline-b.md",
        "report.baseline-b.html",
        "results.baseline-b.csv",
    ] {
        assert!(dir.join(f).exists(), "{f} missing");
    }
    let r: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("results.baseline-b.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(r["plan"]["baseline"], "b");
    let verdict = |v: &str| {
        let k = common::item(&r["comparisons"], "variant", v);
        (k["baseline"].clone(), k["verdict"].clone())
    };
    assert_eq!(verdict("a"), ("b".into(), "slower".into()));
    assert_eq!(verdict("c"), ("b".into(), "faster".into()));
    // --out writes the usual names into another folder.
    let other = s.path().join("vs-c");
    let out = bakeoff()
        .args(["report", dir.to_str().unwrap(), "--baseline", "c", "--out"])
        .arg(&other)
        .output()
        .expect("report");
    assert!(out.status.success());
    assert!(other.join("report.md").exists() && other.join("results.json").exists());
    // A name that is no variant: one line, exit 2.
    let out = bakeoff()
        .args(["report", dir.to_str().unwrap(), "--baseline", "z"])
        .output()
        .expect("report");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("\"z\" is no variant") && stderr.contains("a, b, c"),
        "{stderr}"
    );
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
}

#[test]
fn thread_and_address_sanitizers_together_are_refused_in_one_line() {
    let s = common::Scratch::new();
    let f = s.write(
        "t.toml",
        "name = \"x\"\n[target]\nkind = \"memcached\"\nsource = { debian = \"memcached\" }\n[[variant]]\nname = \"a\"\ncompiler = \"gcc-12\"\nsanitize = [\"thread\", \"address\"]\n[[workload]]\nkind = \"kv\"\n",
    );
    let err = refused(&["check", f.to_str().unwrap()]);
    assert!(err.contains("t.toml:8:"), "{err}");
    assert!(err.contains("thread and address"), "{err}");
}

/// `kind = "sql-bench"`: a test it does not have, an option bakeoff owns, a `tests` that
/// is neither "all" nor a list, an empty list, and a target it does not fit are each one
/// line at the key, exit status 2.
#[test]
fn sql_bench_bad_keys_exit_2() {
    let s = common::Scratch::new();
    let cases: &[(&str, &str, &str)] = &[
        (
            "mariadb",
            "tests = [\"insert\", \"nosuch\"]",
            "sql-bench has no test \"nosuch\"",
        ),
        (
            "mariadb",
            "args = [\"--small-test\", \"--host=x\"]",
            "--host (it reads options in any case and by unique prefix), which bakeoff sets",
        ),
        (
            "postgres",
            "args = [\"small-test\"]",
            "not a sql-bench option",
        ),
        ("mariadb", "tests = \"some\"", "give \"all\" or a list"),
        ("mariadb", "tests = []", "tests is empty"),
        (
            "memcached",
            "tests = [\"insert\"]",
            "MariaDB (--server=mysql) or PostgreSQL",
        ),
        (
            "mariadb",
            "test = [\"insert\"]",
            "a sql-bench workload takes: tests, args, dir",
        ),
    ];
    for (i, (target, keys, want)) in cases.iter().enumerate() {
        let f = s.write(
            &format!("sb{i}.toml"),
            &format!("name = \"x\"\n[target]\nkind = \"{target}\"\n[[variant]]\nname = \"a\"\nbinary = \"/bin/sh\"\n[[workload]]\nkind = \"sql-bench\"\n{keys}\n"),
        );
        let out = bakeoff().arg("check").arg(&f).assert().code(2);
        let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(&format!("sb{i}.toml:")), "{err}");
        assert!(err.contains(want), "{keys}: {err}");
    }
}

/// Issue 44, class 4: `check` refuses, in one located line, the injections the attack used:
/// shell text and owned options in sql-bench's args, Redis's owned directives quoted,
/// server settings that write outside the sandbox, run a command or open a port.
#[test]
fn hostile_injection_is_refused_at_check() {
    let s = common::Scratch::new();
    let sql = |kind: &str, options: &str, args: &str| {
        format!("name = \"x\"\n[target]\nkind = \"{kind}\"\noptions = {{ {options} }}\nargs = [{args}]\n[[variant]]\nname = \"a\"\nbinary = \"/bin/sh\"\n[[workload]]\nkind = \"sqlsuite\"\n")
    };
    let sql_bench = |args: &str| {
        format!("name = \"x\"\n[target]\nkind = \"mariadb\"\n[[variant]]\nname = \"a\"\nbinary = \"/bin/sh\"\n[[workload]]\nkind = \"sql-bench\"\nargs = [{args}]\n")
    };
    let cache = |kind: &str, args: &str, options: &str| {
        format!("name = \"x\"\n[target]\nkind = \"{kind}\"\nargs = [{args}]\n{options}\n[[variant]]\nname = \"a\"\nbinary = \"/bin/sh\"\n[[workload]]\nkind = \"kv\"\nconnections = [1]\n")
    };
    let cases = [
        (
            sql_bench(r#""--comments=x';touch /tmp/pwned;'""#),
            "run-all-tests",
        ),
        (
            sql_bench(r#""--suffix=$(touch /tmp/pwned)""#),
            "run-all-tests",
        ),
        (sql_bench(r#""--DIR=/tmp/elsewhere""#), "which bakeoff sets"),
        (sql_bench(r#""-HO", "db.example""#), "which bakeoff sets"),
        (
            cache("redis", r#""--\"dir\"", "/tmp""#, ""),
            "which is the sandbox's",
        ),
        (
            cache("redis", r#""--'logfile'", "/tmp/r.log""#, ""),
            "which is the sandbox's",
        ),
        (
            cache("redis", "", "options = { dbfilename = \"../../d.rdb\" }"),
            "outside the sandbox",
        ),
        (
            cache("redis", r#""--loadmodule", "/tmp/m.so""#, ""),
            "loads a module",
        ),
        (
            cache("memcached", r#""-e", "/tmp/mem""#, ""),
            "outside the sandbox",
        ),
        (
            cache("memcached", r#""-o", "ext_path=/tmp/ext:64m""#, ""),
            "outside the sandbox",
        ),
        (
            sql("mariadb", "log_error = \"/tmp/err.log\"", ""),
            "outside the sandbox",
        ),
        (
            sql("mariadb", "loose_General_Log_File = \"/tmp/g.log\"", ""),
            "outside the sandbox",
        ),
        (
            sql("mariadb", "log-bin = \"../../bin\"", ""),
            "outside the sandbox",
        ),
        (
            sql("mariadb", "init_file = \"/tmp/init.sql\"", ""),
            "runs the statements",
        ),
        (sql("mariadb", "wsrep_on = \"ON\"", ""), "Galera"),
        (sql("mariadb", "", r#""--WSREP-PROV=/x.so""#), "Galera"),
        (
            sql("mariadb", "plugin_load_add = \"ha_x.so\"", ""),
            "loads a plugin",
        ),
        (
            sql("postgres", "log_directory = \"../../x\"", ""),
            "outside the sandbox",
        ),
        (
            sql("postgres", "archive_command = \"touch /tmp/pwned\"", ""),
            "runs a shell command",
        ),
        (
            sql("postgres", "", r#""-c", "Shared-Preload-Libraries=x""#),
            "loads a library",
        ),
    ];
    for (i, (text, want)) in cases.iter().enumerate() {
        let f = s.write(&format!("h{i}.toml"), text);
        let err = refused(&["check", f.to_str().unwrap()]);
        assert!(err.contains(&format!("h{i}.toml:")), "{text}\n{err}");
        assert!(err.contains(want), "{text}\n{err}");
    }
}

#[test]
fn metrics_is_refused_where_it_is_not_served() {
    // --metrics serves `bakeoff run` only; bisect, tune and verify refuse it before
    // reading anything (the experiment file need not exist).
    for args in [
        &[
            "bisect",
            "exp.toml",
            "--good",
            "a",
            "--bad",
            "b",
            "--metrics",
            "127.0.0.1:9464",
        ][..],
        &["tune", "exp.toml", "--metrics", "127.0.0.1:9464"][..],
        &["verify", "exp.toml", "--metrics", "127.0.0.1:9464"][..],
    ] {
        let err = refused(args);
        assert!(
            err.contains("--metrics") && err.contains("bakeoff run"),
            "{err}"
        );
    }
}
