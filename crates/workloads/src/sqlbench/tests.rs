use super::*;

/// Lines captured from MariaDB 10.11's sql-bench (test-create, test-big-tables,
/// test-table-elimination) with Benchmark's hireswallclock.
const OUT: &str = "Testing server '10.11.19 MariaDB 0+deb12u1' at 2026-11-26 20:24:02

Testing create+drop
Time for create+drop (10): 0.676059 wallclock secs ( 0.01 usr  0.00 sys +  0.00 cusr  0.00 csys =  0.01 CPU)
Time for create_key+drop (100): 2.99177 wallclock secs ( 0.00 usr  0.00 sys +  0.00 cusr  0.00 csys =  0.00 CPU)
Time to insert_many_fields(7000):  8 wallclock secs ( 0.12 usr  0.09 sys +  0.00 cusr  0.00 csys =  0.21 CPU)
time for select_one_attribute (1000:0):  1 wallclock secs ( 0.06 usr  0.01 sys +  0.00 cusr  0.00 csys =  0.07 CPU)
Time for drop table(2):  0.5 wallclock secs ( 0.00 usr  0.00 sys +  0.00 cusr  0.00 csys =  0.00 CPU)
Time for select_big (10:30000):  0.25 wallclock secs ( 0.01 usr  0.00 sys +  0.00 cusr  0.00 csys =  0.01 CPU)
Time for drop table(1):  0.25 wallclock secs ( 0.00 usr  0.00 sys +  0.00 cusr  0.00 csys =  0.00 CPU)
Estimated time for select_range (50:500): 40 wallclock secs ( 0.01 usr  0.00 sys +  0.00 cusr  0.00 csys =  0.01 CPU)
Total time: 4.41637 wallclock secs ( 0.01 usr  0.00 sys +  0.00 cusr  0.00 csys =  0.01 CPU)
";

#[test]
fn every_timed_operation_is_parsed_and_repeats_are_summed() {
    let p = parse(OUT);
    let names: Vec<&str> = p.operations.iter().map(|o| o.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "create+drop",
            "create_key+drop",
            "insert_many_fields",
            "select_one_attribute",
            "drop table",
            "select_big"
        ]
    );
    assert_eq!(p.operations[0].count, 10);
    assert!((p.operations[1].seconds - 2.99177).abs() < 1e-9);
    assert_eq!(p.operations[2].seconds, 8.0);
    let drop = &p.operations[4];
    assert_eq!((drop.count, drop.seconds), (3, 0.75));
    assert_eq!(p.operations[5].count, 10);
    assert_eq!(p.total_s, Some(4.41637));
    assert_eq!(failure(OUT, "exit status 0"), None);
}

#[test]
fn a_test_that_dies_says_why() {
    let died = "Testing create of tables\nCan't execute command 'create table bench_1 (i int) ENGINE=nosuch'\nError: Unknown storage engine 'nosuch'\n";
    let why = failure(died, "exit status 11").unwrap();
    assert_eq!(
        why,
        "exit status 11: Error: Unknown storage engine 'nosuch'"
    );
    let login = "Got error: 'Unknown database 'x'' when connecting to DBI:MariaDB:database=x\nCompilation failed in require at ./test-create line 42.\n";
    assert!(failure(login, "exit status 2")
        .unwrap()
        .contains("Got error"));
    // Exit 0 but cut short: no Total time line.
    let cut =
        "Time for a (1): 1 wallclock secs ( 0.00 usr 0.00 sys + 0.00 cusr 0.00 csys = 0.00 CPU)\n";
    assert!(failure(cut, "exit status 0").is_some());
    assert_eq!(
        failure("", "no output").unwrap(),
        "no output: it printed nothing"
    );
}

fn args(a: &[&str]) -> Vec<String> {
    a.iter().map(|s| s.to_string()).collect()
}

fn refused_arg(a: &str) -> Option<String> {
    refused_args(&args(&[a]))
}

#[test]
fn owned_and_odd_args_are_refused() {
    assert!(refused_arg("--small-test").is_none());
    assert!(refused_arg("--create-options=ENGINE=MyISAM").is_none());
    assert!(refused_arg("--host=x").unwrap().contains("--host"));
    assert!(refused_arg("--dir").unwrap().contains("bakeoff sets"));
    // Getopt::Long reads `-v` as `--verbose`; `-h` could be four options.
    assert!(refused_arg("-v").is_none());
    assert!(refused_arg("-h").unwrap().contains("ambiguous"));
    assert!(refused_arg("small-test").is_some());
    assert!(refused_arg("--nosuch")
        .unwrap()
        .contains("not a sql-bench option"));
}

/// Upper, lower and mixed case of `name`.
use bakeoff_testkit::letter_cases as cases;

/// Harmless arguments an owned one may follow.
const BEFORE: &[&[&str]] = &[
    &[],
    &["--small-test"],
    &["--comments=a note"],
    &["--loop-count", "5"],
];

/// Issue 44, class 4: sql-bench's options bakeoff owns pass in no spelling Perl's
/// Getopt::Long reads (any case, `--`, `-` or `+`, unique prefixes, `=value` or the next
/// argument), and nothing reaches run-all-tests' shell.
#[test]
fn hostile_injection_sqlbench_args_every_spelling() {
    // The attack's own.
    for bad in [
        &["--comments=x';touch /tmp/pwned;'"][..],
        &["--suffix=$(touch /tmp/pwned)"],
        &["--DIR=/tmp/elsewhere"],
        &["--HOST=db.example"],
        &["--comments", "x'; id; '"],
        &["--suffix", "`id`"],
    ] {
        assert!(refused_args(&args(bad)).is_some(), "{bad:?} passed");
    }
    for owned in OWNED {
        for end in 1..=owned.len() {
            for name in cases(&owned[..end]) {
                // A prefix that is another option's whole name means that one.
                let exact_other = meant(&name)
                    .iter()
                    .any(|(o, _)| o.eq_ignore_ascii_case(&name) && !OWNED.contains(o));
                if exact_other {
                    continue;
                }
                for lead in ["--", "-", "+"] {
                    for form in [
                        vec![format!("{lead}{name}=/tmp/x")],
                        vec![format!("{lead}{name}"), "/tmp/x".to_string()],
                        vec![format!("{lead}{name}")],
                    ] {
                        for before in BEFORE {
                            let a = [args(before), form.clone()].concat();
                            assert!(refused_args(&a).is_some(), "{a:?} passed");
                        }
                    }
                }
            }
        }
    }
    // Whatever reaches the shell: in any option's value, attached or not.
    for value in [
        "x';touch /tmp/p;'",
        "$(id)",
        "`id`",
        "a\"b",
        "a;id",
        "a|id",
        "a&id",
        "a>/tmp/x",
        "a<x",
        "a\\b",
        "a\nb",
    ] {
        for option in ["comments", "hw", "optimization", "create-options", "suffix"] {
            for a in [
                args(&[&format!("--{option}={value}")]),
                args(&[&format!("--{option}"), value]),
            ] {
                assert!(refused_args(&a).is_some(), "{a:?} passed");
            }
        }
    }
    // What goes into run-all-tests' file name (in double quotes) or its pattern.
    for option in ["suffix", "machine", "cmp", "skip-test", "SUF", "Mach"] {
        for value in ["a/../../x", "/tmp", "a b", "x(1)", "*", "x?"] {
            let a = args(&[&format!("--{option}={value}")]);
            assert!(refused_args(&a).is_some(), "{a:?} passed");
        }
    }
    // Values of the wrong kind, and an option that needs one without it.
    for bad in [
        &["--loop-count=many"][..],
        &["--loop-count", "--fast"],
        &["--fast=1"],
        &["--comments"],
        &["--"],
        &["-"],
        &["operand"],
    ] {
        assert!(refused_args(&args(bad)).is_some(), "{bad:?} passed");
    }
    for good in [
        &["--small-test", "--fast", "--create-options=ENGINE=InnoDB"][..],
        &["--comments", "a plain note", "--hw=2 cores"],
        &["--suffix=_try1", "--machine=box-1", "--cmp=mysql,pg"],
        &[
            "--skip-test=ATIS,wisconsin",
            "--loop-count=-1",
            "--time-limit",
            "60",
        ],
        &[
            "-small-test",
            "+fast",
            "--SMALL-TEST",
            "--small-te",
            "--fast-i",
            "--old-headers",
        ],
    ] {
        let got = refused_args(&args(good));
        assert!(got.is_none(), "{good:?} refused: {got:?}");
    }
}

/// sql-bench prints the password when a login fails: the run's message does not.
#[test]
fn hostile_injection_sqlbench_login_failure_hides_the_password() {
    let secret = "s3cret-Pw9";
    let out = format!(
        "Got error: 'Access denied' when connecting to DBI:MariaDB:database=bakeoff;host=elsewhere with user: 'bakeoff' password: '{secret}'\n"
    );
    let why = failure(&out, "exit status 1").unwrap();
    assert!(why.contains(secret), "the test's own line: {why}");
    let shown = redact(&why, secret);
    assert!(
        !shown.contains(secret) && shown.contains("[password]"),
        "{shown}"
    );
    assert_eq!(redact("no secret here", ""), "no secret here");
}

#[test]
fn templates_are_configured_into_a_scratch_folder() {
    let src = tempfile::tempdir().unwrap();
    let into = tempfile::tempdir().unwrap();
    std::fs::write(src.path().join("run-all-tests.sh"), "#!@PERL@\nprint 1;\n").unwrap();
    std::fs::write(src.path().join("test-insert.sh"), "#!@PERL@\n").unwrap();
    std::fs::write(src.path().join("test-insert"), "stale\n").unwrap();
    std::fs::write(src.path().join("README"), "r\n").unwrap();
    std::fs::create_dir(src.path().join("Data")).unwrap();
    let to = into.path().join("bench");
    configure(src.path(), &to, "/usr/bin/perl").unwrap();
    let run = std::fs::read_to_string(to.join("run-all-tests")).unwrap();
    assert_eq!(run, "#!/usr/bin/perl\nprint 1;\n");
    assert_eq!(
        std::fs::read_to_string(to.join("test-insert")).unwrap(),
        "#!/usr/bin/perl\n"
    );
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(to.join("test-insert"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o111, 0o111);
    assert!(to.join("Data").is_dir());
    assert!(
        src.path().join("run-all-tests.sh").is_file(),
        "the source is left as it was"
    );
    assert_eq!(tests_in(&to), ["insert"]);
    let empty = tempfile::tempdir().unwrap();
    assert!(configure(empty.path(), &to, "perl")
        .unwrap_err()
        .contains("no sql-bench"));
}
