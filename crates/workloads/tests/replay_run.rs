//! The replay workload against real servers: the schema of
//! `tests/fixtures/replay/oltp-mix.sql` is created once from its DDL and INSERT
//! statements, then its SELECT and UPDATE statements (which can run again and again, on
//! several connections at once) are replayed at 1 and 4 connections, twice each, on
//! MariaDB and on PostgreSQL: every statement is counted once per connection and
//! iteration, none fails, the classes add up, and the heaviest class has a plan. A failing
//! statement is counted as an error of its class without stopping its connection, a real
//! log of several sessions (the fixture's general log, its csvlog) replays each session
//! on one connection, and a cancelled run says so. On MariaDB, mariadb-slap runs the same statements for
//! comparison, and the schema survives it.

mod common;

use bakeoff_engine::{Live, LoadError, Measure, NoHooks, Phases, RunRecord};
use bakeoff_sandbox::TargetKind;
use bakeoff_sqlclient::driver::Drive;
use bakeoff_sqlclient::Client;
use bakeoff_sqlclient::Db;
use bakeoff_workloads::replay::mysqlslap;
use bakeoff_workloads::replay::{self, explain, LogFormat, ReplayConfig, ReplayRecord, Statement};
use common::block_on;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

const SQL: &str = include_str!("fixtures/replay/oltp-mix.sql");

/// What the runner would pass; a replay ignores it (no warmup, its window is its work).
const PHASES: Phases = Phases {
    warmup: std::time::Duration::from_secs(1),
    measure: Measure::Duration(std::time::Duration::from_secs(1)),
};

fn starts_with(s: &Statement, words: &[&str]) -> bool {
    let upper = s.sql.trim_start().to_ascii_uppercase();
    words.iter().any(|w| upper.starts_with(w))
}

/// The fixture's schema statements (DROP, CREATE, INSERT) and its repeatable ones
/// (SELECT, UPDATE).
fn split_fixture() -> (Vec<Statement>, Vec<Statement>) {
    let all = replay::parse(SQL, LogFormat::SqlFile).unwrap();
    let setup = all
        .iter()
        .filter(|s| starts_with(s, &["DROP", "CREATE", "INSERT"]))
        .cloned()
        .collect();
    let repeat = all
        .into_iter()
        .filter(|s| starts_with(s, &["SELECT", "UPDATE"]))
        .collect();
    (setup, repeat)
}

/// Runs `statements` once, in order, on one connection.
fn run_once(db: &Db, statements: &[Statement]) {
    block_on(async {
        let mut c = Client::connect(db, 0, false).await.unwrap();
        for s in statements {
            c.simple(&s.sql)
                .await
                .unwrap_or_else(|e| panic!("line {}: {}: {}", s.line, s.sql, e.message));
        }
        c.close().await;
    });
}

fn replay(
    db: &Db,
    statements: &[Statement],
    connections: usize,
    iterations: u32,
) -> Result<(RunRecord, ReplayRecord), LoadError> {
    replay_cancelled(db, statements, (connections, iterations), false)
}

/// [`replay`] with its cancel flag set from the start when `cancelled`.
fn replay_cancelled(
    db: &Db,
    statements: &[Statement],
    (connections, iterations): (usize, u32),
    cancelled: bool,
) -> Result<(RunRecord, ReplayRecord), LoadError> {
    let cfg = ReplayConfig {
        statements: statements.to_vec(),
        connections,
        iterations,
        client_threads: 0,
    };
    let live = Arc::new(Live::default());
    let d = Drive {
        phases: &PHASES,
        hooks: &NoHooks,
        live: &live,
        cancel: &AtomicBool::new(cancelled),
    };
    replay::run(db, &cfg, &d)
}

/// What every clean replay must show.
fn check(what: &str, r: &RunRecord, rep: &ReplayRecord, expected_ops: u64) {
    assert_eq!(r.ops, expected_ops, "{what}");
    assert_eq!(r.queries, expected_ops, "{what}");
    assert!(r.errors.is_empty(), "{what}: {:?}", r.errors);
    assert!(r.elapsed_s > 0.0 && r.ops_per_s > 0.0, "{what}");
    assert!(r.latency_us.p50 > 0.0 && r.latency_us.max >= r.latency_us.p99);
    let counted: u64 = rep.classes.iter().map(|c| c.count).sum();
    assert_eq!(counted, expected_ops, "{what}: classes add up");
    assert!(rep.classes.iter().all(|c| c.errors == 0), "{what}");
    let kinds: u64 = r.kinds.values().map(|k| k.count).sum();
    assert_eq!(kinds, expected_ops, "{what}: kinds add up");
    assert_eq!(r.kinds.len(), rep.classes.len(), "{what}");
    assert!(
        rep.classes.windows(2).all(|w| w[0].total_s >= w[1].total_s),
        "{what}: heaviest first"
    );
    for c in &rep.classes {
        assert!(r.kinds.contains_key(&c.class), "{what}: {}", c.class);
        assert!(c.total_s > 0.0 && c.p50_us > 0.0 && c.max_us >= c.p99_us);
        assert_eq!(replay::class_id(&c.fingerprint), c.class);
    }
}

/// Creates the schema, replays at 1 and 4 connections, explains the heaviest class.
fn replay_on(db: &Db, server: &str) -> Vec<Statement> {
    let (setup, repeat) = split_fixture();
    assert_eq!(repeat.len(), 23);
    run_once(db, &setup);
    let mut heaviest = None;
    for connections in [1, 4] {
        let (r, rep) = replay(db, &repeat, connections, 2).unwrap();
        let what = format!("{server}, {connections} connections");
        check(
            &what,
            &r,
            &rep,
            repeat.len() as u64 * connections as u64 * 2,
        );
        eprintln!(
            "{what}: {} statements in {:.4} s, {:.0} statements/s, p50 {:.0} us, p99 {:.0} us",
            r.ops, r.elapsed_s, r.ops_per_s, r.latency_us.p50, r.latency_us.p99
        );
        heaviest = Some(rep);
    }
    let rep = heaviest.unwrap();
    let plans = explain(db, &rep.classes, 3);
    assert_eq!(plans.len(), 3, "{server}: all SELECT or UPDATE");
    assert_eq!(plans[0].class, rep.classes[0].class);
    for p in &plans {
        assert!(!p.plan.trim().is_empty(), "{server}: {p:?}");
        assert!(!p.plan.starts_with("EXPLAIN failed"), "{server}: {p:?}");
    }
    eprintln!(
        "{server}: heaviest class {}\n{}",
        plans[0].fingerprint, plans[0].plan
    );
    repeat
}

/// A failing statement is an error of its class; the connection goes on.
fn errors_are_counted(db: &Db, repeat: &[Statement]) {
    let mut statements = repeat[..3].to_vec();
    statements.insert(
        1,
        Statement {
            sql: "SELECT no_such_column FROM shop_customer".into(),
            line: 999,
            session: None,
        },
    );
    let (r, rep) = replay(db, &statements, 2, 2).unwrap();
    assert_eq!(r.ops, 16);
    assert_eq!(r.errors.get("server_error"), Some(&4), "{:?}", r.errors);
    let bad = rep
        .classes
        .iter()
        .find(|c| c.sample.contains("no_such_column"))
        .unwrap();
    assert_eq!((bad.count, bad.errors), (4, 4));
    assert_eq!(rep.classes.iter().map(|c| c.errors).sum::<u64>(), 4);
}

/// A real log of several sessions (the sandbox's probe, then the .sql file's session),
/// dealt to 4 connections (two of them idle): each session runs on one connection, so
/// every logged statement runs once per iteration.
fn replays_a_real_log(db: &Db, log: &str) {
    let (_, statements) = replay::parse_auto(log).unwrap();
    let sessions: std::collections::BTreeSet<_> = statements.iter().map(|s| s.session).collect();
    assert_eq!(sessions.len(), 2, "{sessions:?}");
    let (r, rep) = replay(db, &statements, 4, 2).unwrap();
    assert_eq!(r.ops, statements.len() as u64 * 2);
    assert!(r.errors.is_empty(), "{:?}", r.errors);
    assert_eq!(rep.classes.iter().map(|c| c.count).sum::<u64>(), r.ops);
}

fn cancelled_runs_say_so(db: &Db, repeat: &[Statement]) {
    let r = replay_cancelled(db, repeat, (2, 1000), true);
    assert!(matches!(r, Err(LoadError::Cancelled)), "{r:?}");
}

#[test]
fn replays_on_mariadb_and_compares_with_mariadb_slap() {
    let server = common::start(TargetKind::Mariadb, &[]);
    let db = &server.db;
    let repeat = replay_on(db, "MariaDB");
    errors_are_counted(db, &repeat);
    replays_a_real_log(db, include_str!("fixtures/replay/oltp-mix.general.log"));
    cancelled_runs_say_so(db, &repeat);
    // mariadb-slap cuts statements at every ';': leave out the one with a ';' in a string.
    let plain: Vec<Statement> = repeat
        .iter()
        .filter(|s| !s.sql.contains(';'))
        .cloned()
        .collect();
    assert_eq!(plain.len(), repeat.len() - 1);
    // Five times over, so one iteration lasts well over mariadb-slap's 1 ms resolution.
    let five: Vec<Statement> = (0..5).flat_map(|_| plain.clone()).collect();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("oltp-mix.slap.sql");
    std::fs::write(&file, mysqlslap::query_text(&five).unwrap()).unwrap();
    let live = Arc::new(Live::default());
    let cancel = AtomicBool::new(false);
    let slap = mysqlslap::run(db, &file, 2, 2, &live, &cancel).unwrap();
    assert_eq!(slap.ops, 2 * five.len() as u64);
    assert!(slap.elapsed_s > 0.0 && slap.ops_per_s > 0.0, "{slap:?}");
    assert!(slap.client_cpu_s >= 0.0);
    let (native, _) = replay(db, &five, 2, 2).unwrap();
    eprintln!(
        "MariaDB, same file at 2 connections: mariadb-slap {:.0} statements/s ({:.3} s per iteration), replay {:.0} statements/s",
        slap.ops_per_s, slap.elapsed_s, native.ops_per_s
    );
    // The schema survived mariadb-slap: the file's statements still run.
    run_once(db, &plain);
}

#[test]
fn replays_on_postgres() {
    let server = common::start(TargetKind::Postgres, &[]);
    let db = &server.db;
    let repeat = replay_on(db, "PostgreSQL");
    errors_are_counted(db, &repeat);
    replays_a_real_log(db, include_str!("fixtures/replay/oltp-mix.csv"));
    cancelled_runs_say_so(db, &repeat);
}

/// Replays `statements` at 1 and 4 connections, `iterations` times, and prints the rates.
fn print_rates(db: &Db, what: &str, statements: &[Statement], iterations: u32) {
    for connections in [1, 4] {
        let (r, _) = replay(db, statements, connections, iterations).unwrap();
        assert!(r.errors.is_empty(), "{:?}", r.errors);
        eprintln!(
            "{what}, replay, {connections} connections: {:.0} statements/s ({} in {:.3} s), p50 {:.0} us, p99 {:.0} us",
            r.ops_per_s, r.ops, r.elapsed_s, r.latency_us.p50, r.latency_us.p99
        );
    }
}

/// A measurement for people, not a check: longer replays of the fixture on both servers
/// and mariadb-slap on the same statements. Run it in release mode:
/// `cargo test --release -p bakeoff-workloads --test replay_run -- --ignored --nocapture`.
#[test]
#[ignore = "a measurement: longer runs on both servers"]
fn measure_statements_per_second() {
    let (setup, repeat) = split_fixture();
    let plain: Vec<Statement> = repeat
        .iter()
        .filter(|s| !s.sql.contains(';'))
        .cloned()
        .collect();
    let five: Vec<Statement> = (0..5).flat_map(|_| plain.clone()).collect();
    for kind in [TargetKind::Mariadb, TargetKind::Postgres] {
        let server = common::start(kind, &[]);
        let db = &server.db;
        run_once(db, &setup);
        let name = format!("{kind:?}");
        print_rates(db, &name, &repeat, 50);
        if kind != TargetKind::Mariadb {
            continue;
        }
        print_rates(db, &format!("{name}, slap file"), &five, 10);
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("oltp-mix.slap.sql");
        std::fs::write(&file, mysqlslap::query_text(&five).unwrap()).unwrap();
        for connections in [1, 4] {
            let live = Arc::new(Live::default());
            let cancel = AtomicBool::new(false);
            let r = mysqlslap::run(db, &file, connections, 10, &live, &cancel).unwrap();
            eprintln!(
                "{name}, slap file, mariadb-slap, {connections} connections: {:.0} statements/s ({} in {:.3} s per iteration)",
                r.ops_per_s, r.ops, r.elapsed_s
            );
        }
    }
}
