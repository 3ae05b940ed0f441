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

#[test]
fn owned_and_odd_args_are_refused() {
    assert!(refused_arg("--small-test").is_none());
    assert!(refused_arg("--create-options=ENGINE=MyISAM").is_none());
    assert!(refused_arg("--host=x").unwrap().contains("--host"));
    assert!(refused_arg("--dir").unwrap().contains("set by bakeoff"));
    assert!(refused_arg("-v")
        .unwrap()
        .contains("not a sql-bench option"));
    assert!(refused_arg("small-test").is_some());
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
