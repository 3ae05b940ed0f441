//! The sql-bench-like suite against real servers: every group at a small scale on
//! MariaDB (InnoDB, then MyISAM, on one server) and on PostgreSQL. Every operation runs
//! once, in order, takes measurable time and sends statements; nothing fails; the
//! suite leaves no `sb_` table behind; and it all takes well under a minute per server.
//! `SQLSUITE_SCALE` overrides the scale (0.01) to time bigger runs.

mod common;

use bakeoff_engine::LoadError;
use bakeoff_sandbox::TargetKind;
use bakeoff_sqlclient::{Db, Dialect};
use bakeoff_workloads::sqlsuite::{self, Group, OpResult, SuiteConfig};
use std::sync::atomic::AtomicBool;
use std::time::Instant;

/// Operations the suite must have, by group.
const REQUIRED: &[(&str, &[&str])] = &[
    ("alter-table", &["alter_table_add", "alter_table_drop"]),
    (
        "connect",
        &["connect", "connect+select_1_row", "connect+select_simple"],
    ),
    ("create", &["create_table", "create+drop"]),
    (
        "insert",
        &[
            "insert",
            "insert_duplicates",
            "insert_key",
            "count",
            "count_distinct_big",
            "count_on_key",
            "delete_all_many_keys",
            "delete_big_many_keys",
            "select_big",
            "select_key",
            "select_key2",
            "select_key2_return_key",
            "select_key2_return_prim",
            "select_key_prefix",
            "select_key_return_key",
            "update_of_key",
            "update_of_primary_key_many_keys",
            "order_by_big",
            "order_by_big_key",
            "order_by_big_key_desc",
            "order_by_big_key_diff",
            "order_by_big_key_prefix",
            "order_by_key",
            "select_cache2",
            "once_prepared_select",
            "prepared_select",
        ],
    ),
    (
        "select",
        &[
            "select_range",
            "select_distinct",
            "select_group",
            "min_max",
            "select_column+column",
        ],
    ),
];

fn scale() -> f64 {
    std::env::var("SQLSUITE_SCALE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0.01)
}

/// Tables whose name starts with `sb_` in the test database.
fn leftover_tables(db: &Db) -> Vec<String> {
    let q = match db.dialect {
        Dialect::Mariadb | Dialect::Mysql => {
            "SELECT table_name FROM information_schema.tables \
             WHERE table_schema = DATABASE() AND table_name LIKE 'sb\\_%'"
        }
        Dialect::Postgres => "SELECT tablename FROM pg_tables WHERE tablename LIKE 'sb\\_%'",
        Dialect::Sqlite => {
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'sb\\_%' ESCAPE '\\'"
        }
    };
    common::rows(db, q)
        .into_iter()
        .map(|r| r[0].clone().unwrap_or_default())
        .collect()
}

fn check(label: &str, results: &[OpResult]) {
    for g in Group::ALL {
        let ran: Vec<&str> = results
            .iter()
            .filter(|r| r.group == g.name())
            .map(|r| r.name.as_str())
            .collect();
        assert_eq!(ran, sqlsuite::op_names(g), "{label}: {}", g.name());
    }
    for (group, names) in REQUIRED {
        for name in *names {
            let n = results
                .iter()
                .filter(|r| r.group == *group && r.name == *name)
                .count();
            assert_eq!(n, 1, "{label}: {group}/{name} ran {n} times");
        }
    }
    for r in results {
        assert!(
            r.seconds > 0.0,
            "{label}: {}/{} took no time",
            r.group,
            r.name
        );
        assert!(
            r.statements > 0,
            "{label}: {}/{} sent nothing",
            r.group,
            r.name
        );
    }
}

fn run_suite(label: &str, db: &Db, engine: Option<&str>) {
    let cfg = SuiteConfig {
        scale: scale(),
        groups: Group::ALL.to_vec(),
        engine: engine.map(str::to_string),
    };
    let t = Instant::now();
    let live = bakeoff_engine::Live::default();
    let results = sqlsuite::run_live(db, &cfg, &AtomicBool::new(false), &live)
        .unwrap_or_else(|e| panic!("{label}: {e}"));
    let took = t.elapsed().as_secs_f64();
    // The suite told its progress (every statement sent), which its watchdog judges it by.
    let sent: u64 = results.iter().map(|r| r.statements).sum();
    assert!(
        live.measured_ops() >= sent && sent > 0,
        "{label}: progress {} for {sent} statements",
        live.measured_ops()
    );
    let mut by_group = std::collections::BTreeMap::<&str, f64>::new();
    for r in &results {
        *by_group.entry(r.group).or_default() += r.seconds;
        eprintln!(
            "{label:9} {:13} {:36} {:8.4} s {:7}",
            r.group, r.name, r.seconds, r.statements
        );
    }
    eprintln!(
        "{label}: scale {} in {took:.1} s; by group {by_group:.2?}",
        cfg.scale
    );
    check(label, &results);
    assert_eq!(leftover_tables(db), Vec::<String>::new(), "{label}");
    if cfg.scale <= 0.05 {
        assert!(took < 60.0, "{label}: {took:.1} s");
    }
}

#[test]
fn suite_on_mariadb_innodb_and_myisam() {
    let server = common::start(TargetKind::Mariadb, &[]);
    run_suite("InnoDB", &server.db, Some("InnoDB"));
    run_suite("MyISAM", &server.db, Some("MyISAM"));
}

#[test]
fn suite_on_postgres() {
    let server = common::start(TargetKind::Postgres, &[]);
    run_suite("postgres", &server.db, None);
    let cfg = SuiteConfig::default();
    let cancelled = sqlsuite::run(&server.db, &cfg, &AtomicBool::new(true));
    assert!(
        matches!(cancelled, Err(LoadError::Cancelled)),
        "{cancelled:?}"
    );
}

#[test]
fn suite_on_sqlite_and_its_capture_is_deterministic() {
    let server = common::start(TargetKind::Sqlite, &[("synchronous", "off")]);
    run_suite("sqlite", &server.db, None);
    let cfg = SuiteConfig {
        scale: 0.01,
        ..SuiteConfig::default()
    };
    let never = AtomicBool::new(false);
    let first = sqlsuite::capture(&server.db, &cfg, &never).unwrap();
    let second = sqlsuite::capture(&server.db, &cfg, &never).unwrap();
    assert!(first.len() > 1000, "{}", first.len());
    assert_eq!(first.len(), second.len());
    for (a, b) in first.iter().zip(&second) {
        assert_eq!(a.query, b.query);
        assert_eq!(a.hash, b.hash, "{}", a.query);
    }
    let whole = first
        .iter()
        .filter(|o| o.query.contains("/after the group] SELECT * FROM sb_"))
        .count();
    assert!(whole >= 5, "{whole} tables selected after their groups");
    let failed: Vec<&str> = first
        .iter()
        .filter(|o| o.error.is_some())
        .map(|o| o.query.as_str())
        .collect();
    // Only insert_duplicates fails, on purpose (duplicate keys).
    assert!(
        failed
            .iter()
            .all(|q| q.starts_with("[insert/insert_duplicates]")),
        "{failed:?}"
    );
    assert_eq!(leftover_tables(&server.db), Vec::<String>::new());
}

#[test]
fn bad_scale_is_refused() {
    let db = Db {
        dialect: Dialect::Postgres,
        addr: "127.0.0.1:1".parse().unwrap(),
        socket: None,
        user: "x".into(),
        password: "x".into(),
        database: "x".into(),
        via_socket: false,
    };
    let cfg = SuiteConfig {
        scale: -1.0,
        ..SuiteConfig::default()
    };
    let err = sqlsuite::run(&db, &cfg, &AtomicBool::new(false)).unwrap_err();
    assert!(err.to_string().contains("scale"), "{err}");
}
