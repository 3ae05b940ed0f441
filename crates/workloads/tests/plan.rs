//! Unit tests: the file's types, defaults, and every error pointing at file:line:col.

use bakeoff_plan::*;
use bakeoff_workloads::kv::kind::ValueSize;
use bakeoff_workloads::kv::KvKeys;
use bakeoff_workloads::oltp::{OltpKeys, RowDistribution};
use bakeoff_workloads::tpcc::TpccKeys;
use bakeoff_workloads::KINDS;
use std::path::Path;

const GOOD: &str = r#"
name = "memcached-gcc-vs-clang"

[target]
kind = "memcached"
source = { debian = "memcached" }
args = ["-t", "1"]

[[variant]]
name = "gcc-O2"
compiler = "gcc-12"
cflags = "-O2"

[[variant]]
name = "clang-O3"
compiler = "clang-16"
cflags = "-O3 -march=native"

[[workload]]
kind = "kv"
name = "get90-set10"
connections = [1, 16, 64]
mix = { get = 90, set = 10 }

[plan]
repetitions = 3
warmup = "1s"
duration = "2s"
seed = 7
baseline = "gcc-O2"
"#;

fn parse_str(text: &str) -> Result<Loaded, PlanError> {
    parse(Path::new("exp.toml"), text.to_string(), &KINDS)
}

fn err(text: &str) -> String {
    parse_str(text).expect_err("should fail").to_string()
}

#[test]
fn good_file_parses_with_defaults() {
    let l = parse_str(GOOD).unwrap();
    let e = &l.experiment;
    assert_eq!(e.variants.len(), 2);
    assert_eq!(e.baseline(), "gcc-O2");
    let w = e.workloads[0].keys_as::<KvKeys>().expect("a kv workload");
    assert_eq!(w.connections.to_vec(), vec![1, 16, 64]);
    assert_eq!(w.keys, 100_000);
    assert_eq!(w.value_size, ValueSize::Fixed(100));
    assert!(w.preload);
    assert_eq!(
        e.measure(),
        MeasureFor::Time(std::time::Duration::from_secs(2))
    );
    assert_eq!(e.warmup(), std::time::Duration::from_secs(1));
}

#[test]
fn unknown_key_points_at_it() {
    let text = GOOD.replace("cflags = \"-O2\"", "cflagz = \"-O2\"");
    let m = err(&text);
    assert!(
        m.starts_with("exp.toml:12:1: unknown field `cflagz`"),
        "{m}"
    );
    assert!(m.contains("docs/experiment-file.md"), "{m}");
}

#[test]
fn wrong_type_points_at_value() {
    let text = GOOD.replace("repetitions = 3", "repetitions = \"three\"");
    let m = err(&text);
    assert!(m.starts_with("exp.toml:26:15:"), "{m}");
}

#[test]
fn baseline_must_exist() {
    let text = GOOD.replace("baseline = \"gcc-O2\"", "baseline = \"icc\"");
    let m = err(&text);
    assert!(
        m.starts_with("exp.toml:30:12: baseline \"icc\" is not a variant"),
        "{m}"
    );
}

#[test]
fn duplicate_variant_names() {
    let text = GOOD.replace("name = \"clang-O3\"", "name = \"gcc-O2\"");
    let m = err(&text);
    assert!(m.starts_with("exp.toml:15:8:"), "{m}");
    assert!(m.contains("used twice"), "{m}");
}

#[test]
fn connections_range_and_mix_names() {
    let m = err(&GOOD.replace("[1, 16, 64]", "[1, 2048]"));
    assert!(
        m.starts_with("exp.toml:22:15: connections must be 1..=1024, got 2048"),
        "{m}"
    );
    let m = err(&GOOD.replace("get = 90, set = 10", "get = 90, put = 10"));
    assert!(m.contains("unknown command \"put\""), "{m}");
    let m = err(&GOOD.replace("get = 90, set = 10", "get = 0"));
    assert!(m.contains("add up to 0"), "{m}");
}

#[test]
fn binary_excludes_build_keys() {
    let text = GOOD.replace(
        "name = \"clang-O3\"",
        "name = \"clang-O3\"\nbinary = \"/bin/sh\"",
    );
    let m = err(&text);
    assert!(m.contains("has both binary and compiler"), "{m}");
    assert!(m.starts_with("exp.toml:17:12:"), "{m}");
}

#[test]
fn missing_binary_and_missing_patch() {
    let text = GOOD.replace(
        "compiler = \"clang-16\"\ncflags = \"-O3 -march=native\"",
        "binary = \"/no/such/memcached\"",
    );
    assert!(err(&text).contains("binary /no/such/memcached does not exist"));
    let text = GOOD.replace(
        "cflags = \"-O2\"",
        "cflags = \"-O2\"\npatches = [\"nope.patch\"]",
    );
    let m = err(&text);
    assert!(
        m.starts_with("exp.toml:13:12: patch ./nope.patch not found"),
        "{m}"
    );
}

#[test]
fn source_rules() {
    let m = err(&GOOD.replace(
        "{ debian = \"memcached\" }",
        "{ debian = \"memcached\", git = \"x\" }",
    ));
    assert!(
        m.contains("exactly one of debian, tarball, git, path or (sqlite) bundled"),
        "{m}"
    );
    let m = err(&GOOD.replace("{ debian = \"memcached\" }", "{ tarball = \"m.tar.gz\" }"));
    assert!(m.contains("needs sha256"), "{m}");
    let m = err(&GOOD.replace(
        "{ debian = \"memcached\" }",
        "{ git = \"https://x/y.git\" }",
    ));
    assert!(m.contains("needs rev"), "{m}");
    let no_source = GOOD.replace("source = { debian = \"memcached\" }\n", "");
    let m = err(&no_source);
    assert!(m.contains("has no source"), "{m}");
}

#[test]
fn durations_and_ops() {
    let m = err(&GOOD.replace("duration = \"2s\"", "duration = \"2 parsecs\""));
    assert!(m.starts_with("exp.toml:28:12:"), "{m}");
    let m = err(&GOOD.replace("duration = \"2s\"", "duration = \"2s\"\nops = 5"));
    assert!(m.contains("duration or ops, not both"), "{m}");
    let l = parse_str(&GOOD.replace("duration = \"2s\"", "ops = 5000")).unwrap();
    assert_eq!(l.experiment.measure(), MeasureFor::Ops(5000));
    assert_eq!(
        parse_duration("1.5").unwrap(),
        std::time::Duration::from_millis(1500)
    );
}

#[test]
fn mode_both_takes_duration_for_rounds_and_ops_for_instruction_runs() {
    let both = GOOD.replace(
        "duration = \"2s\"",
        "duration = \"2s\"\nops = 3000\nmode = \"both\"",
    );
    let l = parse_str(&both).unwrap();
    let e = &l.experiment;
    assert_eq!(
        e.measure(),
        MeasureFor::Time(std::time::Duration::from_secs(2))
    );
    assert_eq!(e.instruction_ops(), Some(3000));
    let m = err(&GOOD.replace("duration = \"2s\"", "duration = \"2s\"\nmode = \"both\""));
    assert!(
        m.contains("mode = \"both\" counts instructions") && m.contains("ops = N"),
        "{m}"
    );
    let m = err(&both.replace("[plan]", "[measure]\nprofile = true\n\n[plan]"));
    assert!(m.contains("profile and mode = \"both\""), "{m}");
    let m = err(&both.replace("ops = 3000", "ops = 0"));
    assert!(m.contains("ops must be at least 1"), "{m}");
}

#[test]
fn syntax_error_has_position() {
    let m = err("name = \"x\"\n[target\nkind = 1\n");
    assert!(m.starts_with("exp.toml:2:"), "{m}");
}

#[test]
fn value_size_forms() {
    let l = parse_str(&GOOD.replace("mix = {", "value_size = { mean = 1024 }\nmix = {")).unwrap();
    assert_eq!(
        l.experiment.workloads[0]
            .keys_as::<KvKeys>()
            .map(|k| k.value_size),
        Some(ValueSize::Around { mean: 1024 })
    );
    let m = err(&GOOD.replace("mix = {", "value_size = \"big\"\nmix = {"));
    assert!(m.contains("expected a size in bytes"), "{m}");
}

#[test]
fn single_connection_number() {
    let l = parse_str(&GOOD.replace("[1, 16, 64]", "8")).unwrap();
    assert_eq!(l.experiment.workloads[0].connections_swept(), vec![8]);
}

#[test]
fn regression_default_min_repetitions_does_not_reject_two_repetitions() {
    let l = parse_str(&GOOD.replace("repetitions = 3", "repetitions = 2")).unwrap();
    assert_eq!(l.experiment.plan.repetitions, Some(2));
    assert_eq!(l.experiment.plan.stopping().min_rounds, 2);
    let m = err(&GOOD.replace(
        "repetitions = 3",
        "repetitions = 2\ntarget_ci = 0.02\nmin_repetitions = 3",
    ));
    assert!(m.contains("min_repetitions must be between 2 and 2"), "{m}");
}

const SQL: &str = r#"
name = "mariadb-oltp"

[target]
kind = "mariadb"
options = { innodb_buffer_pool_size = "256M", max_connections = 300, skip_log_bin = true }

[[variant]]
name = "debian"
binary = "/bin/sh"

[[variant]]
name = "small-pool"
binary = "/bin/sh"
options = { innodb_buffer_pool_size = "64M" }
engine = "MyISAM"

[[workload]]
kind = "oltp"
test = "oltp_read_only"
tables = 4
table_size = 1000
distribution = "uniform"
connections = [1, 4, 256]
"#;

#[test]
fn sql_file_parses_and_merges_options() {
    let l = parse_str(SQL).unwrap();
    let e = &l.experiment;
    assert_eq!(e.target.kind, TargetKind::Mariadb);
    let w = &e.workloads[0];
    assert_eq!(w.kind.name(), "oltp");
    assert_eq!(w.display_name(), "oltp");
    let k = w.keys_as::<OltpKeys>().expect("oltp keys");
    assert_eq!(k.tables, Some(4));
    assert_eq!(k.distribution, Some(RowDistribution::Uniform));
    let base = e.server_options(&e.variants[0]);
    assert_eq!(base["innodb_buffer_pool_size"], "256M");
    assert_eq!(base["max_connections"], "300");
    assert_eq!(base["skip_log_bin"], "on");
    let small = e.server_options(&e.variants[1]);
    assert_eq!(small["innodb_buffer_pool_size"], "64M");
    assert_eq!(small["max_connections"], "300");
}

#[test]
fn max_connections_defaults_to_the_sweep() {
    let text = SQL.replace(", max_connections = 300", "");
    let l = parse_str(&text).unwrap();
    let e = &l.experiment;
    assert_eq!(
        e.server_options(&e.variants[0])["max_connections"],
        (256 + SPARE_CONNECTIONS).to_string()
    );
}

#[test]
fn every_servers_connection_cap_is_sized_to_the_sweep() {
    // memcached: -c after the user's args, with room for its own descriptors.
    let top = GOOD.replace("[1, 16, 64]", "[64, 1024]");
    let l = parse_str(&top).unwrap();
    let e = &l.experiment;
    let args = e.server_args(&e.variants[0]);
    assert_eq!(args[..2], ["-t", "1"]);
    assert_eq!(args[2], "-c");
    let cap: usize = args[3].parse().unwrap();
    assert!(cap >= 1024 + 256, "{args:?}");
    // A user's own cap is kept, in any spelling.
    for own in [
        "\"-c\", \"4096\"",
        "\"-c4096\"",
        "\"--conn-limit=4096\"",
        "\"--conn-limit\", \"4096\"",
    ] {
        let l = parse_str(&top.replace(
            "args = [\"-t\", \"1\"]",
            &format!("args = [\"-t\", \"1\", {own}]"),
        ))
        .unwrap();
        let e = &l.experiment;
        let args = e.server_args(&e.variants[0]);
        assert_eq!(
            args.iter().filter(|a| a.contains("-c")).count(),
            1,
            "{args:?}"
        );
    }
    // Below the server's own default, nothing is added.
    let low = parse_str(GOOD).unwrap();
    assert_eq!(
        low.experiment.server_args(&low.experiment.variants[0]),
        ["-t", "1"]
    );
    // Redis keeps its default 10000 for any sweep bakeoff takes; a user's maxclients is
    // checked against the sweep.
    let redis = top
        .replace("kind = \"memcached\"", "kind = \"redis\"")
        .replace("{ debian = \"memcached\" }", "{ debian = \"redis\" }")
        .replace("args = [\"-t\", \"1\"]", "args = []");
    let l = parse_str(&redis).unwrap();
    let e = &l.experiment;
    assert!(e.server_options(&e.variants[0]).is_empty());
    let l = parse_str(&redis.replace("args = []", "args = [\"--maxclients\", \"5000\"]")).unwrap();
    assert!(l
        .experiment
        .server_options(&l.experiment.variants[0])
        .is_empty());
}

#[test]
fn a_connection_cap_below_the_sweep_is_refused_at_its_key() {
    let top = GOOD.replace("[1, 16, 64]", "[64, 1024]");
    let low = err(&top.replace(
        "args = [\"-t\", \"1\"]",
        "args = [\"-t\", \"1\", \"-c\", \"1000\"]",
    ));
    assert!(low.starts_with("exp.toml:7:"), "{low}");
    assert!(
        low.contains("-c = 1000 is lower than the sweep needs (1024 connections"),
        "{low}"
    );
    let bundled = err(&top.replace("cflags = \"-O2\"", "cflags = \"-O2\"\nargs = [\"-c512\"]"));
    assert!(bundled.starts_with("exp.toml:13:"), "{bundled}");
    let redis = top
        .replace("kind = \"memcached\"", "kind = \"redis\"")
        .replace("{ debian = \"memcached\" }", "{ debian = \"redis\" }")
        .replace("args = [\"-t\", \"1\"]", "options = { maxclients = 100 }");
    let low = err(&redis);
    assert!(low.starts_with("exp.toml:7:"), "{low}");
    assert!(
        low.contains("maxclients = 100 is lower than the sweep"),
        "{low}"
    );
    let word = err(&redis.replace("maxclients = 100", "maxclients = \"many\""));
    assert!(word.contains("maxclients must be a number"), "{word}");
}

#[test]
fn sql_errors_point_at_the_key() {
    let low = err(&SQL.replace("max_connections = 300", "max_connections = 100"));
    assert!(low.starts_with("exp.toml:6:"), "{low}");
    assert!(
        low.contains("max_connections = 100 is lower than the sweep"),
        "{low}"
    );

    let kv_key = err(&SQL.replace("tables = 4", "tables = 4\npipeline = 2"));
    assert!(kv_key.starts_with("exp.toml:22:"), "{kv_key}");
    assert!(
        kv_key.contains("pipeline is a key of kv workloads"),
        "{kv_key}"
    );

    let test = err(&SQL.replace("oltp_read_only", "oltp_read_mostly"));
    assert!(test.contains("unknown test \"oltp_read_mostly\""), "{test}");

    let wrong_target = err(&SQL.replace("kind = \"mariadb\"", "kind = \"memcached\""));
    assert!(
        wrong_target.contains("an oltp workload needs a mariadb, mysql or postgres target")
            || wrong_target.contains("options are server settings"),
        "{wrong_target}"
    );

    let pg_engine = err(&SQL.replace("kind = \"mariadb\"", "kind = \"postgres\""));
    assert!(pg_engine.contains("engine"), "{pg_engine}");

    let dist = err(&SQL.replace("\"uniform\"", "\"normal\""));
    assert!(dist.contains("unknown variant `normal`"), "{dist}");
}

#[test]
fn memcached_takes_no_options_and_no_sql_workload() {
    let opts = err(&GOOD.replace("args = [\"-t\", \"1\"]", "options = { x = 1 }"));
    assert!(
        opts.contains(
            "options are server settings of mariadb, mysql, postgres, sqlite, redis and valkey"
        ),
        "{opts}"
    );
    let sql = err(&GOOD
        .replace("kind = \"kv\"", "kind = \"oltp\"")
        .replace("mix = { get = 90, set = 10 }\n", ""));
    assert!(
        sql.contains("an oltp workload needs a mariadb, mysql or postgres target"),
        "{sql}"
    );
}

const TPCC: &str = r#"
name = "pg-tpcc"

[target]
kind = "postgres"

[[variant]]
name = "debian"
binary = "/bin/sh"

[[workload]]
kind = "tpcc"
warehouses = [1, 2]
connections = 4
find_max_w = true
"#;

#[test]
fn tpcc_keys_and_defaults() {
    let l = parse_str(TPCC).unwrap();
    let w = &l.experiment.workloads[0];
    assert_eq!(
        w.keys_as::<TpccKeys>().map(|t| t.warehouses_swept()),
        Some(vec![1, 2])
    );
    assert_eq!(w.connections_swept(), vec![4]);
    let spec = parse_str(
        &TPCC
            .replace("connections = 4\n", "")
            .replace("find_max_w", "think = \"spec\"\nfind_max_w"),
    )
    .unwrap();
    assert_eq!(
        spec.experiment.workloads[0].connections_swept(),
        vec![10, 20]
    );
    assert_eq!(spec.experiment.max_connections_swept(), 20);
}

#[test]
fn tpcc_bad_input_points_at_the_key() {
    let zero = err(&TPCC.replace("[1, 2]", "[0, 2]"));
    assert!(zero.starts_with("exp.toml:13:"), "{zero}");
    assert!(
        zero.contains("warehouses must be 1..=10000, got 0"),
        "{zero}"
    );

    let mix = err(&TPCC.replace(
        "find_max_w = true",
        "mix = { new_order = 45, payment = 43, order_status = 4, delivery = 4, stock_level = 5 }",
    ));
    assert!(mix.contains("adds up to 101, not 100"), "{mix}");
    let kind = err(&TPCC.replace("find_max_w = true", "mix = { get = 100 }"));
    assert!(kind.contains("unknown transaction \"get\""), "{kind}");

    let one_w = err(&TPCC.replace("[1, 2]", "3"));
    assert!(one_w.contains("find_max_w searches a sweep"), "{one_w}");

    let spec_conns = err(&TPCC.replace("find_max_w = true", "think = \"spec\""));
    assert!(spec_conns.contains("10 terminals"), "{spec_conns}");

    let too_many = err(&TPCC.replace(
        "kind = \"postgres\"",
        "kind = \"postgres\"\noptions = { max_connections = 6 }",
    ));
    assert!(
        too_many.contains("max_connections = 6 is lower than the sweep needs"),
        "{too_many}"
    );

    let kv_key = err(&TPCC.replace("find_max_w = true", "pipeline = 2"));
    assert!(
        kv_key.contains("pipeline is a key of kv workloads"),
        "{kv_key}"
    );
}

#[test]
fn sqlite_gets_the_bundled_source_and_runs_only_suite_and_replay() {
    let text = "name = \"s\"\n[target]\nkind = \"sqlite\"\noptions = { synchronous = \"off\" }\n\n[[variant]]\nname = \"a\"\ncompiler = \"gcc\"\n\n[[workload]]\nkind = \"sqlsuite\"\nscale = 0.01\n";
    let l = parse(std::path::Path::new("exp.toml"), text.to_string(), &KINDS).unwrap();
    let e = &l.experiment;
    assert!(e.target.source.as_ref().unwrap().bundled);
    let opts = e.server_options(&e.variants[0]);
    assert_eq!(opts.len(), 1, "no max_connections for SQLite: {opts:?}");
    let tpcc = err(&text.replace(
        "kind = \"sqlsuite\"\nscale = 0.01",
        "kind = \"tpcc\"\nwarehouses = 1",
    ));
    assert!(
        tpcc.contains("a sqlite target runs sqlsuite and replay"),
        "{tpcc}"
    );
    let bundled = err(&GOOD.replace("{ debian = \"memcached\" }", "{ bundled = true }"));
    assert!(
        bundled.contains("bundled is the SQLite amalgamation"),
        "{bundled}"
    );
    let make = err(&text.replace("compiler = \"gcc\"", "make_args = [\"V=1\"]"));
    assert!(make.contains("a sqlite build runs no make"), "{make}");
    assert!(make.starts_with("exp.toml:"), "{make}");
}

#[test]
fn stopping_rule_from_budget_precision_and_repetitions() {
    use std::time::Duration;
    // repetitions alone: a fixed count, no early stop.
    let s = parse_str(GOOD).unwrap().experiment.plan.stopping();
    assert_eq!((s.max_rounds, s.budget, s.precision), (Some(3), None, None));
    // a budget: precision +-1% by default, no cap.
    let l = parse_str(&GOOD.replace("repetitions = 3", "budget = \"5m\"")).unwrap();
    let s = l.experiment.plan.stopping();
    assert_eq!(s.max_rounds, None);
    assert_eq!(s.budget, Some(Duration::from_secs(300)));
    assert_eq!(s.precision, Some(0.01));
    assert_eq!(s.min_rounds, 6);
    assert_eq!(l.experiment.plan.equivalence_band(), 0.01);
    // both: the budget and repetitions are caps; equivalence follows precision.
    let l = parse_str(&GOOD.replace(
        "repetitions = 3",
        "repetitions = 40\nbudget = \"2m\"\nprecision = 0.02",
    ))
    .unwrap();
    let s = l.experiment.plan.stopping();
    assert_eq!((s.max_rounds, s.precision), (Some(40), Some(0.02)));
    assert_eq!(l.experiment.plan.equivalence_band(), 0.02);
    // neither: the default budget.
    let l = parse_str(&GOOD.replace("repetitions = 3\n", "")).unwrap();
    assert_eq!(
        l.experiment.plan.stopping().budget,
        Some(crate::DEFAULT_BUDGET)
    );
    // target_ci still reads as precision.
    let l =
        parse_str(&GOOD.replace("repetitions = 3", "repetitions = 8\ntarget_ci = 0.05")).unwrap();
    assert_eq!(l.experiment.plan.stopping().precision, Some(0.05));
}

#[test]
fn budget_precision_and_equivalence_are_checked_at_their_keys() {
    for (bad, says) in [
        (
            "budget = \"soon\"",
            "exp.toml:26:10: \"soon\" is not a duration",
        ),
        ("budget = \"100ms\"", "budget must be between 1s and 7d"),
        ("precision = 0", "precision must be between"),
        ("precision = 2", "precision must be between"),
        ("equivalence = -0.1", "equivalence must be between"),
        (
            "pairing = \"sometimes\"",
            "expected one of `auto`, `paired`, `unpaired`",
        ),
        (
            "repetitions = 3\nmin_repetitions = 9",
            "min_repetitions must be between 2 and 3",
        ),
    ] {
        let m = err(&GOOD.replace("repetitions = 3", bad));
        assert!(m.contains(says), "{bad}: {m}");
    }
}

#[test]
fn kv_experiments_default_to_short_windows() {
    use std::time::Duration;
    let text = GOOD
        .replace("warmup = \"1s\"\n", "")
        .replace("duration = \"2s\"\n", "");
    let e = parse_str(&text).unwrap().experiment;
    assert_eq!(e.warmup(), crate::KV_WINDOWS.0);
    assert_eq!(e.measure(), MeasureFor::Time(Duration::from_secs(2)));
}

#[test]
fn regression_huge_durations_are_refused_not_a_panic() {
    for bad in ["1e30", "99999999999 years", "18446744073709551615"] {
        let m = err(&GOOD.replace("duration = \"2s\"", &format!("duration = \"{bad}\"")));
        assert!(
            m.contains("at most 7d") && m.starts_with("exp.toml:"),
            "{bad}: {m}"
        );
        let m = err(&GOOD.replace("warmup = \"1s\"", &format!("warmup = \"{bad}\"")));
        assert!(m.contains("at most 7d"), "{bad}: {m}");
    }
    assert!(parse_duration("7d").is_ok());
}

#[test]
fn regression_names_that_print_wrong_or_look_alike_are_refused() {
    // As written in TOML (basic-string escapes).
    let long = "x".repeat(5000);
    for bad in [
        "a\\nb",
        "esc\\u001b[31m",
        long.as_str(),
        "gcc\\u200b-O2",
        " padded",
    ] {
        let text = GOOD.replace("name = \"clang-O3\"", &format!("name = \"{bad}\""));
        let m = err(&text);
        assert!(
            m.contains("variant name") && m.contains("printable"),
            "{bad:?}: {m}"
        );
        assert!(m.lines().count() == 1 && m.len() < 400, "{m}");
        let text = GOOD.replace(
            "name = \"memcached-gcc-vs-clang\"",
            &format!("name = \"{bad}\""),
        );
        assert!(err(&text).starts_with("exp.toml:2:"), "{bad:?}");
    }
}

#[test]
fn regression_sweeps_with_repeated_or_too_many_points_are_refused() {
    let m = err(&GOOD.replace("[1, 16, 64]", "[16, 16]"));
    assert!(
        m.contains("lists 16 twice") && m.starts_with("exp.toml:22:"),
        "{m}"
    );
    let many: Vec<String> = (1..=200).map(|c| c.to_string()).collect();
    let m = err(&GOOD.replace("[1, 16, 64]", &format!("[{}]", many.join(", "))));
    assert!(m.contains("at most 64"), "{m}");
}

#[test]
fn regression_args_and_options_the_sandbox_owns_are_refused() {
    for bad in [
        "\"-p\", \"11211\"",
        "\"-p11211\"",
        "\"--port=1\"",
        "\"-l\", \"0.0.0.0\"",
        "\"-d\"",
    ] {
        let m = err(&GOOD.replace("args = [\"-t\", \"1\"]", &format!("args = [{bad}]")));
        assert!(
            m.contains("which is the sandbox's") && m.starts_with("exp.toml:7:"),
            "{bad}: {m}"
        );
    }
    let sql = SQL.replace(
        "skip_log_bin = true }",
        "skip_log_bin = true, port = 3307 }",
    );
    let m = err(&sql);
    assert!(m.contains("option port sets the port"), "{m}");
    let sql = SQL.replace(
        "{ innodb_buffer_pool_size = \"64M\" }",
        "{ datadir = \"/tmp/x\" }",
    );
    let m = err(&sql);
    assert!(m.contains("option datadir sets the data directory"), "{m}");
}

/// A PostgreSQL experiment's head, for the tpcc regressions below.
const TPCC_HEAD: &str = r#"
name = "tpcc"
[target]
kind = "postgres"
[[variant]]
name = "a"
binary = "/usr/lib/postgresql/15/bin/postgres"
"#;

#[test]
fn regression_huge_warehouses_name_their_own_key() {
    let text = format!(
        "{TPCC_HEAD}[[workload]]\nkind = \"tpcc\"\nwarehouses = 1844674407370955161\nthink = \"spec\"\n"
    );
    let m = err(&text);
    assert!(
        m.contains("warehouses must be at most 102") && !m.contains("18446744073709551"),
        "{m}"
    );
}

#[test]
fn regression_bare_number_durations_and_messages_in_the_files_words() {
    let l = parse_str(&GOOD.replace("duration = \"2s\"", "duration = 3")).unwrap();
    assert_eq!(
        l.experiment.measure(),
        MeasureFor::Time(std::time::Duration::from_secs(3))
    );
    let m = err(&GOOD.replace("duration = \"2s\"", "duration = \"1ns\""));
    assert!(m.contains("at least 10ms"), "{m}");
    let m = err(&GOOD.replace("seed = 7", "seed = \"seven\""));
    assert!(!m.contains("u64") && m.contains("whole number"), "{m}");
    let m = err(&GOOD.replace("[plan]", "[target]\nkind = \"memcached\"\n[plan]"));
    assert!(m.lines().count() == 1 && m.contains("target"), "{m}");
}

#[test]
fn regression_a_workload_named_like_a_tpcc_sweep_cell_is_refused() {
    let text = format!(
        "{TPCC_HEAD}[[workload]]\nkind = \"tpcc\"\nname = \"t\"\nwarehouses = [1, 2]\n[[workload]]\nkind = \"tpcc\"\nname = \"t-w2\"\n"
    );
    let m = err(&text);
    assert!(m.contains("is also a cell"), "{m}");
}

/// Random mutations of every shipped example: a panic is a defect; every rejection names
/// the file with a line and column (or the file alone when the text is not TOML at all).
#[test]
fn property_mutated_examples_never_panic_and_always_locate() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let mut seed: u64 = 0x5eed;
    let mut next = move |n: usize| {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((seed >> 33) as usize) % n.max(1)
    };
    let replacements = [
        "0",
        "-1",
        "1e30",
        "18446744073709551615",
        "\"\"",
        "[]",
        "{}",
        "true",
        "\"x\"",
        "[16, 16]",
        "\"1e30\"",
        "\"\\u200b\"",
        "nan",
        "inf",
        "\"/dev/zero\"",
        "0.0",
    ];
    let mut cases = 0;
    for entry in std::fs::read_dir(&root).expect("examples/") {
        let p = entry.expect("entry").path();
        if p.extension().is_none_or(|e| e != "toml") {
            continue;
        }
        let text = std::fs::read_to_string(&p).expect("example");
        let lines: Vec<&str> = text.lines().collect();
        for _ in 0..150 {
            let mut ls: Vec<String> = lines.iter().map(|s| s.to_string()).collect();
            let i = next(ls.len());
            match next(5) {
                0 => {
                    ls.remove(i);
                }
                1 => {
                    let dup = ls[i].clone();
                    ls.insert(i, dup);
                }
                2 => {
                    if let Some(eq) = ls[i].find('=') {
                        let r = replacements[next(replacements.len())];
                        ls[i] = format!("{}= {r}", &ls[i][..eq]);
                    }
                }
                3 => {
                    let cut = next(ls[i].len() + 1);
                    let keep: String = ls[i].chars().take(cut).collect();
                    ls[i] = keep;
                }
                _ => ls.insert(i, "[plan]".into()),
            }
            let mutated = ls.join("\n");
            let file = p.clone();
            let got =
                std::panic::catch_unwind(|| parse(&file, mutated.clone(), &KINDS).map(|_| ()));
            cases += 1;
            match got {
                Err(_) => panic!("panic on a mutation of {}:\n{mutated}", p.display()),
                Ok(Err(e)) => {
                    let shown = e.to_string();
                    assert!(
                        shown.starts_with(&p.display().to_string()) && shown.lines().count() == 1,
                        "{shown}"
                    );
                }
                Ok(Ok(())) => {}
            }
        }
    }
    assert!(cases >= 1000, "{cases}");
}

#[test]
fn overrides_apply_before_validation_and_name_their_key() {
    let dir = tempfile_dir();
    let f = dir.join("exp.toml");
    std::fs::write(&f, GOOD).unwrap();
    let set = |o: &[&str]| {
        load_with(
            &f,
            &o.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
            &KINDS,
        )
    };
    let l = set(&[
        "plan.repetitions=1",
        "plan.budget=2m",
        "workload.0.connections=[4, 8]",
    ])
    .unwrap();
    assert_eq!(l.experiment.plan.repetitions, Some(1));
    assert_eq!(l.experiment.plan.budget.as_deref(), Some("2m"));
    assert_eq!(l.experiment.workloads[0].connections_swept(), vec![4, 8]);
    assert!(
        l.text.contains("budget = \"2m\""),
        "the resolved text shows it"
    );
    let l = set(&["variant.1.cflags=-O1", "measure.interval=2s"]).unwrap();
    assert_eq!(l.experiment.variants[1].cflags.as_deref(), Some("-O1"));
    for (bad, says) in [
        ("plan.repetitions", "expected KEY=VALUE"),
        (
            "variant.9.cflags=-O1",
            "variant.9: the file has 2 [[variant]] table(s)",
        ),
        ("variant.cflags=-O1", "give an index"),
        ("plan.nope=1", "unknown field `nope`"),
        ("plan.repetitions=0", "repetitions must be between"),
    ] {
        let m = set(&[bad]).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(m.contains(says), "{bad}: {m}");
        assert_eq!(m.lines().count(), 1, "{m}");
    }
    let _ = std::fs::remove_dir_all(dir);
}

fn tempfile_dir() -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("bakeoff-plan-test-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn a_variant_rev_needs_a_git_source_and_a_build() {
    let m = err(&GOOD.replace("cflags = \"-O2\"", "cflags = \"-O2\"\nrev = \"v1\""));
    assert!(m.contains("rev picks a revision of a git source"), "{m}");
    let git = GOOD.replace(
        "source = { debian = \"memcached\" }",
        "source = { git = \"https://example.org/m.git\", rev = \"main\" }",
    );
    let l = parse_str(&git.replace("cflags = \"-O2\"", "cflags = \"-O2\"\nrev = \"v1\"")).unwrap();
    assert_eq!(l.experiment.variants[0].rev.as_deref(), Some("v1"));
    let m = err(&git.replace("cflags = \"-O2\"", "cflags = \"-O2\"\nrev = \"-x\""));
    assert!(m.contains("rev must name a commit"), "{m}");
}

#[test]
fn train_only_workloads_serve_training_and_are_not_measured() {
    let with = |pgo: &str, train_only: &str| {
        GOOD.replace(
            "cflags = \"-O3 -march=native\"",
            &format!("cflags = \"-O3 -march=native\"\n{pgo}"),
        ) + &format!(
            "\n[[workload]]\nkind = \"kv\"\nname = \"train\"\n{train_only}connections = [4]\n"
        )
    };
    let ok = parse_str(&with(
        "pgo = { workload = \"train\", duration = \"5s\" }",
        "train_only = true\n",
    ))
    .unwrap();
    let w = &ok.experiment.workloads[1];
    assert!(w.train_only);
    // Only the measured workload's 3 connection counts count towards a round.
    assert_eq!(ok.experiment.runs_per_round(), 3 * 2);

    // Nothing trains on it: an error at the key.
    let m = err(&with("", "train_only = true\n"));
    assert!(
        m.contains("no variant's pgo or bolt trains on it") && m.contains("exp.toml:"),
        "{m}"
    );
    // Everything only for training: nothing to measure.
    let all = with(
        "pgo = { workload = \"train\", duration = \"5s\" }",
        "train_only = true\n",
    )
    .replace(
        "name = \"get90-set10\"",
        "name = \"get90-set10\"\ntrain_only = true",
    )
    .replace("workload = \"train\"", "workload = \"get90-set10\"");
    let m = err(&all);
    assert!(m.contains("train"), "{m}");
}

#[test]
fn layouts_are_a_count_and_need_rounds_per_layout() {
    let text = GOOD.replace("seed = 7", "seed = 7\nlayouts = 4");
    let l = parse_str(&text).unwrap();
    assert_eq!(l.experiment.plan.layouts, 4);
    // repetitions = 3 caps the rounds; without it, every layout gets two rounds first.
    let budget = text.replace("repetitions = 3\n", "budget = \"2m\"\n");
    let l = parse_str(&budget).unwrap();
    assert_eq!(l.experiment.plan.stopping().min_rounds, 8);
    assert!(l.experiment.stopping_summary().contains("4 code layouts"));
    let m = err(&GOOD.replace("seed = 7", "seed = 7\nlayouts = 17"));
    assert!(m.contains("layouts") && m.contains("exp.toml:"), "{m}");
}

#[test]
fn hosts_are_checked_at_their_keys() {
    let host = |ssh: &str, extra: &str| {
        GOOD.replace(
            "args = [\"-t\", \"1\"]",
            "args = [\"-t\", \"1\"]\nhost = \"db\"",
        ) + &format!("\n[[host]]\nname = \"db\"\nssh = \"{ssh}\"\n{extra}")
    };
    let ok = parse_str(&host(
        "bench@db1.example.org",
        "port = 2222\nlisten = \"0.0.0.0\"\n",
    ))
    .unwrap();
    assert_eq!(ok.experiment.hosts[0].port, Some(2222));
    // Served on loopback there, loaded from here: the load could not reach it.
    let m = err(&host("bench@db1.example.org", ""));
    assert!(
        m.contains("listens on 127.0.0.1 only") && m.contains("listen = "),
        "{m}"
    );
    let args = ok.experiment.hosts[0].ssh_args(None);
    assert_eq!(args.last().unwrap(), "bench@db1.example.org");
    assert_eq!(
        args[args.len() - 2],
        "--",
        "the destination is never read as an option"
    );
    // A destination ssh would read as an option.
    let m = err(&host("-oProxyCommand=x", ""));
    assert!(
        m.contains("not a destination") && m.contains("exp.toml:"),
        "{m}"
    );
    let m = err(&host("db1", "ssh_options = [\"-v\"]\n"));
    assert!(m.contains("not Key=Value"), "{m}");
    let m = err(&host("db1", "port = 0\n"));
    assert!(m.contains("port"), "{m}");
    let m = err(&host("db1", "password = \"x\"\n"));
    assert!(m.contains("password"), "{m}");

    // A SQL server goes on a host; SQLite, a library beside the load, does not.
    let sql = |kind: &str, extra: &str| {
        format!(
            "name = \"x\"\n[target]\nkind = \"{kind}\"\nhost = \"db\"\n[[variant]]\nname = \"a\"\nbinary = \"/usr/bin/x\"\n[[workload]]\nkind = \"oltp\"\n{extra}\n[[host]]\nname = \"db\"\nssh = \"db1\"\nlisten = \"0.0.0.0\"\n"
        )
    };
    parse_str(&sql("postgres", "")).unwrap();
    assert!(parse_str(&sql("mariadb", "")).is_ok());
    let m = err(&sql("sqlite", "").replace("oltp", "sqlsuite"));
    assert!(
        m.contains("SQLite is a library") && m.contains("exp.toml:4"),
        "{m}"
    );
    // The binary is on the host: its path there, not checked here.
    let m = err(&sql("postgres", "").replace("/usr/bin/x", "bin/x"));
    assert!(m.contains("absolute path there"), "{m}");
    // Its unix socket is on the host, not here.
    let m = err(&sql("postgres", "transport = \"unix\"\n"));
    assert!(m.contains("transport = \"unix\" needs the load"), "{m}");
}

/// A Redis experiment with `{ARGS}` and `{OPTIONS}` to fill.
const REDIS_OWNED: &str = r#"
name = "r"
[target]
kind = "redis"
args = [ARGS]
options = { OPTIONS }
[[variant]]
name = "a"
binary = "/usr/bin/redis-server"
[[workload]]
kind = "kv"
connections = [1]
"#;

fn with(text: &str, args: &str, options: &str) -> String {
    text.replace("ARGS", args).replace("OPTIONS", options)
}

/// Every example the attack used to make a server listen beyond loopback, or write a
/// config line of its own, is refused at the key with one line.
#[test]
fn regression_other_spellings_of_owned_flags_are_refused() {
    let redis = |args: &str, options: &str| err(&with(REDIS_OWNED, args, options));
    for args in [
        r#""--BIND", "0.0.0.0""#,
        r#""--Port 7000""#,
        r#""--DaemonIze", "yes""#,
    ] {
        let m = redis(args, "maxmemory = \"1gb\"");
        assert!(
            m.contains("which is the sandbox's") && m.starts_with("exp.toml:5:"),
            "{args}: {m}"
        );
    }
    for key in ["BIND", "Dir", "pidfile", "include"] {
        let m = redis("", &format!("{key} = \"x\""));
        assert!(
            m.contains("which is the sandbox's") && m.starts_with("exp.toml:6:"),
            "{key}: {m}"
        );
    }
    let mariadb = |args: &str, options: &str| {
        let sql = SQL
            .replace("options = { innodb_buffer_pool_size = \"256M\", max_connections = 300, skip_log_bin = true }", &format!("args = [{args}]\noptions = {{ {options} }}"));
        err(&sql)
    };
    let m = mariadb(r#""--bind_address=0.0.0.0""#, "");
    assert!(m.contains("which is the sandbox's"), "{m}");
    for options in [
        r#"loose-bind-address = "0.0.0.0""#,
        r#"bind-addr = "0.0.0.0""#,
        r#"Bind_Address = "::""#,
    ] {
        let m = mariadb("", options);
        assert!(m.contains("which is the sandbox's"), "{options}: {m}");
    }
    let pg = |args: &str, options: &str| {
        let sql = SQL
            .replace("kind = \"mariadb\"", "kind = \"postgres\"")
            .replace("\nengine = \"MyISAM\"", "")
            .replace("options = { innodb_buffer_pool_size = \"256M\", max_connections = 300, skip_log_bin = true }", &format!("args = [{args}]\noptions = {{ {options} }}"));
        err(&sql)
    };
    for args in [
        r#""-c", "listen_addresses=*""#,
        r#""--listen_addresses=*""#,
        r#""-i""#,
        r#""-Fh0.0.0.0""#,
    ] {
        let m = pg(args, "");
        assert!(m.contains("which is the sandbox's"), "{args}: {m}");
    }
    for bad in [
        r#""-vl192.0.2.2""#,
        r#""-vU11311""#,
        r#""--lis=0.0.0.0""#,
        r#""--""#,
    ] {
        let m = err(&GOOD.replace("args = [\"-t\", \"1\"]", &format!("args = [{bad}]")));
        assert!(
            m.starts_with("exp.toml:7:") && m.lines().count() == 1,
            "{bad}: {m}"
        );
    }
}

/// Option keys are plain names and values one line: nothing can add a directive of its
/// own to my.cnf or redis.conf.
#[test]
fn regression_directive_injection_through_option_keys_and_values_is_refused() {
    let redis = |options: &str| err(&with(REDIS_OWNED, "", options));
    for options in [
        r#""maxclients 100\ndir /elsewhere\nappendonly" = "yes""#,
        r#""maxclients 100\ndaemonize yes\npidfile /tmp/p" = "1""#,
        r#""a=b" = "1""#,
        r#""-x" = "1""#,
        r#""" = "1""#,
        r#""max clients" = "1""#,
    ] {
        let m = redis(options);
        assert!(
            m.contains("option name") && m.starts_with("exp.toml:6:"),
            "{options}: {m}"
        );
        assert_eq!(m.lines().count(), 1, "{m}");
    }
    let m = redis(r#"maxmemory = "1gb\nbind 0.0.0.0""#);
    assert!(m.contains("control character"), "{m}");
    let sql = SQL.replace(
        "max_connections = 300",
        r#"max_connections = "2000\n[mysqld]\ninit-file=/tmp/evil.sql""#,
    );
    let m = err(&sql);
    assert!(
        m.contains("control character") && m.starts_with("exp.toml:6:"),
        "{m}"
    );
    let sql = SQL.replace("max_connections = 300", r#""listen_addresses=*" = 1"#);
    assert!(err(&sql).contains("option name"));
    let m = err(&GOOD.replace(
        "args = [\"-t\", \"1\"]",
        "args = [\"-t\", \"1\\n-l0.0.0.0\"]",
    ));
    assert!(m.contains("control character"), "{m}");
}

/// Issue 28: invisible and line-separator characters were still accepted in names.
#[test]
fn regression_hangul_filler_tag_letter_and_line_separator_names_are_refused() {
    for bad in [
        "gcc\\u3164",
        "gcc\\U000E0041",
        "gcc\\u2028O2",
        "gcc\\u2060",
        "gcc\\u202e2O",
        "gcc\\uFE0F",
        "gcc\\uFFA0",
    ] {
        let text = GOOD.replace("name = \"clang-O3\"", &format!("name = \"{bad}\""));
        let m = err(&text);
        assert!(
            m.contains("variant name") && m.contains("invisible"),
            "{bad}: {m}"
        );
        let text = GOOD.replace("name = \"get90-set10\"", &format!("name = \"{bad}\""));
        assert!(err(&text).contains("workload name"), "{bad}");
    }
}

/// Issue 28: `source = { debian = "-b" }` reached `apt-get source` as an option.
#[test]
fn regression_a_debian_package_name_that_is_an_option_is_refused() {
    for bad in ["-b", "--help", "-", "Memcached", "a b", "x"] {
        let text = GOOD.replace("debian = \"memcached\"", &format!("debian = \"{bad}\""));
        let m = err(&text);
        assert!(
            m.starts_with("exp.toml:6:") && m.contains("not a Debian source package name"),
            "{bad}: {m}"
        );
    }
    assert!(parse_str(&GOOD.replace("\"memcached\" }", "\"postgresql-15\" }")).is_ok());
}

/// Issue 28: variants `x:y` and `x_y` overwrote each other's logs, histograms and series.
#[test]
fn regression_names_that_become_one_file_name_are_refused_both_named() {
    let text = GOOD
        .replace("name = \"gcc-O2\"", "name = \"x:y\"")
        .replace("name = \"clang-O3\"", "name = \"x_y\"")
        .replace("baseline = \"gcc-O2\"", "baseline = \"x:y\"");
    let m = err(&text);
    assert!(
        m.contains("\"x:y\"") && m.contains("\"x_y\"") && m.contains("file name"),
        "{m}"
    );
    assert_eq!(m.lines().count(), 1);
    let two = GOOD.replace("get90-set10", "get90_set10").replace(
        "[plan]",
        "[[workload]]\nkind = \"kv\"\nname = \"get90 set10\"\n\n[plan]",
    );
    let m = err(&two);
    assert!(
        m.contains("workload names") && m.contains("\"get90 set10\""),
        "{m}"
    );
}

/// `[plan] aa`: off by default; on, the A/A variant is the baseline's name with `~aa`
/// and counts in every round.
#[test]
fn aa_names_a_second_baseline_that_runs_every_round() {
    let e = parse_str(GOOD).unwrap().experiment;
    assert!(!e.plan.aa);
    assert_eq!(e.aa_variant(), None);
    assert_eq!(e.runs_per_round(), 3 * 2);
    let e = parse_str(&GOOD.replace("seed = 7", "seed = 7\naa = true"))
        .unwrap()
        .experiment;
    assert!(e.plan.aa);
    assert_eq!(e.aa_variant().as_deref(), Some("gcc-O2~aa"));
    assert_eq!(e.runs_per_round(), 3 * 3);
    // A long baseline name is cut to leave room: the name stays a valid one.
    let long = "b".repeat(64);
    let e = parse_str(
        &GOOD
            .replace("\"gcc-O2\"", &format!("{long:?}"))
            .replace("seed = 7", "seed = 7\naa = true"),
    )
    .unwrap()
    .experiment;
    let aa = e.aa_variant().unwrap();
    assert!(bakeoff_os::name::valid_name(&aa), "{aa}");
    assert!(aa.ends_with("~aa") && aa.chars().count() == 64, "{aa}");
}

/// A variant of the file that already has the A/A variant's name, or its file name, is
/// refused at `aa`, naming both; `aa = "yes"` is a type error at its value.
#[test]
fn aa_refuses_a_variant_that_takes_its_name() {
    for taken in ["gcc-O2~aa", "gcc-O2_aa"] {
        let text = GOOD
            .replace("name = \"clang-O3\"", &format!("name = {taken:?}"))
            .replace("seed = 7", "seed = 7\naa = true");
        let m = err(&text);
        assert!(m.starts_with("exp.toml:30:6: aa = true"), "{m}");
        assert!(
            m.contains("\"gcc-O2~aa\"") && m.contains(&format!("{taken:?}")),
            "{m}"
        );
        assert!(m.contains("rename"), "{m}");
        assert_eq!(m.lines().count(), 1);
        // Without aa the same variants are fine.
        assert!(parse_str(&text.replace("aa = true", "")).is_ok());
    }
    let m = err(&GOOD.replace("seed = 7", "seed = 7\naa = \"yes\""));
    assert!(m.starts_with("exp.toml:30:6:"), "{m}");
}

/// Machines as variants: `[[variant]] host` and `clients`, each refusal one line at its
/// key with what to do instead.
#[test]
fn variants_on_hosts_are_checked() {
    const TWO: &str = r#"name = "m"
[target]
kind = "memcached"
TARGET
[[variant]]
name = "a"
binary = "/usr/bin/memcached"
host = "s1"
[[variant]]
name = "b"
binary = "/usr/bin/memcached"
host = "s2"
B
[[workload]]
kind = "kv"
connections = [2]
W
[plan]
repetitions = 2
PLAN
[[host]]
name = "s1"
ssh = "s1.example.org"
S1
[[host]]
name = "s2"
ssh = "s2.example.org"
"#;
    let file = |target: &str, b: &str, w: &str, plan: &str, s1: &str| {
        TWO.replace("TARGET", target)
            .replace("\nB\n", &format!("\n{b}\n"))
            .replace("\nW\n", &format!("\n{w}\n"))
            .replace("PLAN", plan)
            .replace("S1", s1)
    };
    // Two variants identical but for their machine: a valid experiment, each loaded
    // from its own host by default.
    let ok = parse_str(&file("", "", "", "", "")).unwrap();
    let e = &ok.experiment;
    assert_eq!(e.server_host("a"), Some("s1"));
    assert_eq!(e.server_host("b"), Some("s2"));
    assert_eq!(e.load_hosts("b", "kv"), ["s2"]);
    assert!(e.hosts_as_variants());
    // A variant without host serves where [target] host says, loaded as before.
    let mixed = parse_str(
        &file("host = \"s2\"", "", "", "", "listen = \"0.0.0.0\"")
            .replace("host = \"s2\"\n\n", "\n\n"),
    )
    .unwrap();
    assert_eq!(mixed.experiment.server_host("b"), Some("s2"));
    assert_eq!(mixed.experiment.load_hosts("b", "kv"), Vec::<String>::new());

    // An unknown host, at the variant's key.
    let m = err(&TWO
        .replace("host = \"s2\"", "host = \"s3\"")
        .replace("\nTARGET", "")
        .replace("\nB", "")
        .replace("\nW", "")
        .replace("\nPLAN", "")
        .replace("\nS1", ""));
    assert!(
        m.starts_with("exp.toml:11:")
            && m.contains("no [[host]] named \"s3\"; the hosts are s1, s2"),
        "{m}"
    );
    let m = err(&file("", "clients = [\"c9\"]", "", "", ""));
    assert!(m.contains("no [[host]] named \"c9\""), "{m}");

    // The load from another host needs the server listening beyond loopback there.
    let m = err(&file("", "clients = [\"s1\"]", "", "", ""));
    assert!(
        m.contains("the server on host s2 listens on 127.0.0.1 only") && m.contains("from host s1"),
        "{m}"
    );
    parse_str(&file("", "clients = [\"s1\"]", "", "", "").replace(
        "ssh = \"s2.example.org\"",
        "ssh = \"s2.example.org\"\nlisten = \"0.0.0.0\"",
    ))
    .unwrap();
    let m = err(&file("", "clients = [\"s2\", \"s2\"]", "", "", ""));
    assert!(m.contains("named twice in clients"), "{m}");

    // What cannot run on a variant's own host, and what to do.
    let m = err(&file("", "", "", "cpus = { server = \"0\" }", ""));
    assert!(m.contains("remove cpus"), "{m}");
    let m = err(&file("", "", "", "mode = \"instructions\"\nops = 1000", ""));
    assert!(
        m.contains("exp.toml:8:") && m.contains("compare machines with mode = \"time\""),
        "{m}"
    );
    // Instructions counted beside the wall-clock rounds are fine.
    parse_str(&file("", "", "", "mode = \"both\"\nops = 1000", "")).unwrap();
    // A binary there is named by its path there.
    let m = err(&file("", "", "", "", "").replace(
        "binary = \"/usr/bin/memcached\"\nhost = \"s2\"",
        "binary = \"memcached\"\nhost = \"s2\"",
    ));
    assert!(
        m.contains("the server runs on host s2") && m.contains("absolute path there"),
        "{m}"
    );

    // A SQL target's data is made in one place.
    let sql = "name = \"x\"\n[target]\nkind = \"postgres\"\n[[variant]]\nname = \"a\"\nbinary = \"/usr/bin/x\"\nhost = \"s1\"\n[[variant]]\nname = \"b\"\nbinary = \"/usr/bin/x\"\nhost = \"s2\"\n[[workload]]\nkind = \"oltp\"\n[[host]]\nname = \"s1\"\nssh = \"s1\"\n[[host]]\nname = \"s2\"\nssh = \"s2\"\n";
    let m = err(sql);
    assert!(
        m.contains("exp.toml:7:")
            && m.contains("prepared in one place")
            && m.contains("bakeoff compare"),
        "{m}"
    );
    // ... which one host for all is.
    parse_str(&sql.replace("host = \"s2\"", "host = \"s1\"")).unwrap();
    // Its unix socket is on the host.
    let m = err(&sql
        .replace("host = \"s2\"", "host = \"s1\"")
        .replace("kind = \"oltp\"", "kind = \"oltp\"\ntransport = \"unix\""));
    assert!(m.contains("transport = \"unix\" needs the load"), "{m}");
    // A workload that loads only from this machine.
    let m = err(&sql
        .replace("host = \"s2\"", "host = \"s1\"")
        .replace("oltp", "sqlsuite"));
    assert!(
        m.contains("loads only from this machine") && m.contains("serve this variant here"),
        "{m}"
    );
}

#[test]
fn slo_is_read_and_checked_at_its_keys() {
    let with = |slo: &str| {
        GOOD.replace(
            "mix = { get = 90, set = 10 }\n",
            &format!("mix = {{ get = 90, set = 10 }}\nslo = {slo}\n"),
        )
    };
    let l = parse_str(&with(r#"{ percentile = 99, limit = "1ms" }"#)).unwrap();
    let slo = l.experiment.workloads[0].slo.as_ref().expect("slo read");
    assert_eq!((slo.percentile, slo.limit_us()), (99.0, 1000.0));
    let e = err(&with(r#"{ percentile = 95, limit = "1ms" }"#));
    assert!(
        e.starts_with("exp.toml:24:") && e.contains("one of 50, 90, 99, 99.9"),
        "{e}"
    );
    let e = err(&with(r#"{ percentile = 99, limit = "soon" }"#));
    assert!(e.contains("slo limit") && e.contains("exp.toml:24:"), "{e}");
    let e = err(&with(r#"{ percentile = 99, limit = "0ms" }"#));
    assert!(e.contains("above zero"), "{e}");
    let e = err(&with(r#"{ percentile = 99, limt = "1ms" }"#));
    assert!(e.contains("limt") && e.contains("exp.toml:24:"), "{e}");
}

#[test]
fn slo_is_accepted_on_oltp_and_refused_on_sysbench() {
    let slo = "connections = [1, 4, 256]\nslo = { percentile = 99, limit = \"5ms\" }\n";
    let oltp = SQL.replace("connections = [1, 4, 256]\n", slo);
    assert_ne!(oltp, SQL, "SQL changed its workload");
    let l = parse_str(&oltp).unwrap_or_else(|e| panic!("{}", e.message));
    assert!(l.experiment.workloads[0].slo.is_some());
    let sysbench = oltp.replace("kind = \"oltp\"", "kind = \"sysbench\"");
    let e = err(&sysbench);
    assert!(
        e.contains("a sysbench workload has no open loop") && e.contains("kv or oltp"),
        "{e}"
    );
}

/// A study's step (bisect, tune, the noise check) is loaded from a file written beside
/// the original, under a hidden name, and removed again; a step the checks refuse is a
/// load error, a folder it cannot be written to a write error.
#[test]
fn derived_experiments_load_beside_the_original_and_leave_nothing() {
    use bakeoff_plan::derived::{load_derived, DerivedError};
    let dir = tempfile::tempdir().unwrap();
    let original = dir.path().join("exp.toml");
    std::fs::write(&original, GOOD).unwrap();
    let step = load_derived(&original, "bisect-abc/1", GOOD, &KINDS).unwrap();
    assert_eq!(step.path.parent(), Some(dir.path()));
    let file = step.path.file_name().unwrap().to_string_lossy().to_string();
    assert!(file.starts_with(".bakeoff-bisect-abc_1-"), "{file}");
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().flatten().collect();
    assert_eq!(left.len(), 1, "{left:?}");
    let bad = GOOD.replace("name = \"memcached-gcc-vs-clang\"", "name = 3");
    assert!(matches!(
        load_derived(&original, "tune", &bad, &KINDS),
        Err(DerivedError::Load(_))
    ));
    let nowhere = dir.path().join("gone").join("exp.toml");
    assert!(matches!(
        load_derived(&nowhere, "noise", GOOD, &KINDS),
        Err(DerivedError::Write(m)) if m.contains("gone")
    ));
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}
