//! ycsb against real servers, through its `Workload`: workloads A and C (and D, F) on
//! memcached and Redis (every record preloaded by the engine), E on Redis, A and E on
//! PostgreSQL, MariaDB and SQLite (the usertable loaded through `Tables`), in short
//! windows. Every run does work, every
//! value read back checks out, and nothing fails.

mod common;

use bakeoff_engine::{Live, Measure, NoHooks, Phases};
use bakeoff_sandbox::{Sandbox, SandboxSpec, TargetKind};
use bakeoff_workloads::ycsb::{CoreWorkload, Protocol, Ycsb, YcsbKeys};
use bakeoff_workloads::{RunContext, Server, Workload};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

fn keys(w: CoreWorkload) -> YcsbKeys {
    YcsbKeys {
        workload: w,
        records: 2000,
        connections: bakeoff_plan::OneOrMany::One(4),
        ..YcsbKeys::default()
    }
}

/// One run of `w` against `server` with 4 connections: 0.1 s warmup, 0.3 s measured.
fn run(w: &Ycsb, server: &Server) -> bakeoff_engine::RunRecord {
    let phases = Phases {
        warmup: Duration::from_millis(100),
        measure: Measure::Duration(Duration::from_millis(300)),
    };
    let live = Arc::new(Live::default());
    let cancel = AtomicBool::new(false);
    let ctx = RunContext {
        server,
        connections: 4,
        load_cpus: 1,
        engine: None,
        phases: &phases,
        seed: 7,
        round: 0,
        hooks: &NoHooks,
        live: &live,
        cancel: &cancel,
        rate: None,
    };
    let out = w
        .run(&ctx)
        .unwrap_or_else(|e| panic!("{} run: {e}", w.name()));
    out.rec
}

fn assert_clean(name: &str, r: &bakeoff_engine::RunRecord, ops: &[&str]) {
    assert!(r.ops > 0, "{name}: no operations: {r:?}");
    assert_eq!(r.verify_failures, 0, "{name}: {:?}", r.by_command);
    assert_eq!(r.misses, 0, "{name}: {:?}", r.by_command);
    assert!(r.errors.is_empty(), "{name}: {:?}", r.errors);
    for op in ops {
        assert!(
            r.by_command.get(*op).copied().unwrap_or(0) > 0,
            "{name}: no {op} in {:?}",
            r.by_command
        );
    }
}

/// A memcached or Redis sandbox, stopped when dropped.
struct Kv {
    sandbox: Option<Sandbox>,
    _root: tempfile::TempDir,
}

impl Drop for Kv {
    fn drop(&mut self) {
        if let Some(s) = self.sandbox.take() {
            let _ = s.stop();
        }
    }
}

fn start_kv(kind: TargetKind) -> (Kv, Server) {
    let root = tempfile::tempdir().expect("tempdir");
    let binary = match kind {
        TargetKind::Redis => "/usr/bin/redis-server",
        _ => "/usr/bin/memcached",
    };
    let mut spec = SandboxSpec::new("ycsbtest", kind, binary, root.path().to_path_buf());
    if kind == TargetKind::Memcached {
        spec.args = vec!["-t".into(), "1".into(), "-m".into(), "64".into()];
    }
    let sandbox = Sandbox::start(&spec).expect("server starts");
    let server = Server {
        addr: sandbox.addr(),
        socket: None,
        db: None,
    };
    (
        Kv {
            sandbox: Some(sandbox),
            _root: root,
        },
        server,
    )
}

fn kv_target(kind: TargetKind) {
    let protocol = Protocol::for_target(bakeoff_sandbox::target_for(kind).protocol());
    for (w, ops) in [
        (CoreWorkload::A, &["read", "update"][..]),
        (CoreWorkload::C, &["read"][..]),
    ] {
        let (_guard, server) = start_kv(kind);
        let y = Ycsb::new(format!("ycsb-{}", w.name()), &keys(w), protocol);
        let r = run(&y, &server);
        assert_clean(&format!("{kind:?} {w:?}"), &r, ops);
    }
}

#[test]
fn memcached_a_and_c() {
    kv_target(TargetKind::Memcached);
}

#[test]
fn redis_a_and_c() {
    kv_target(TargetKind::Redis);
}

/// D (inserts, reads near the newest) and F (read-modify-write) on one server each.
#[test]
fn memcached_and_redis_d_and_f() {
    for kind in [TargetKind::Memcached, TargetKind::Redis] {
        let (_guard, server) = start_kv(kind);
        for (w, ops) in [
            (CoreWorkload::D, &["read", "insert"][..]),
            (CoreWorkload::F, &["read", "read_modify_write"][..]),
        ] {
            let y = Ycsb::new(
                "ycsb".into(),
                &keys(w),
                Protocol::for_target(bakeoff_sandbox::target_for(kind).protocol()),
            );
            // F after D on the same server: D's inserts are there too, and are not read.
            let r = run(&y, &server);
            assert_clean(&format!("{kind:?} {w:?}"), &r, ops);
        }
    }
}

/// Redis scans too (E is refused on memcached, which has no ordered index).
#[test]
fn redis_e_scans_what_it_inserted() {
    let (_guard, server) = start_kv(TargetKind::Redis);
    let y = Ycsb::new("ycsb-e".into(), &keys(CoreWorkload::E), Protocol::Resp);
    let r = run(&y, &server);
    assert_clean("redis E", &r, &["scan", "scan_index", "insert"]);
}

fn sql_target(kind: TargetKind) {
    let s = common::start(kind, &[]);
    let server = Server {
        addr: s.db.addr,
        socket: s.db.socket.clone(),
        db: Some(s.db.clone()),
    };
    for (w, ops) in [
        (CoreWorkload::A, &["read", "update"][..]),
        (CoreWorkload::E, &["scan", "insert"][..]),
    ] {
        let y = Ycsb::new(
            format!("ycsb-{}", w.name()),
            &keys(w),
            Protocol::for_target(bakeoff_sandbox::target_for(kind).protocol()),
        );
        let tables = y.tables(None).expect("SQL targets load a usertable");
        let (rows, _) = tables.load(&s.db).expect("usertable loads");
        assert_eq!(rows, 2000);
        let r = run(&y, &server);
        assert_clean(&format!("{kind:?} {w:?}"), &r, ops);
        assert!(r.queries >= r.ops, "{r:?}");
        assert!(r.kinds.contains_key(ops[0]), "{:?}", r.kinds.keys());
    }
}

#[test]
fn postgres_a_and_e() {
    sql_target(TargetKind::Postgres);
}

#[test]
fn mariadb_a_and_e() {
    sql_target(TargetKind::Mariadb);
}

/// SQLite through bakeoff-sqlited (`cargo build -p bakeoff` builds it).
#[test]
fn sqlite_a_and_e() {
    sql_target(TargetKind::Sqlite);
}
