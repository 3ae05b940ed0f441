//! tpcc runs against real servers, one warehouse: 4 terminals back to back complete every
//! kind of transaction without errors (deadlocks retried) and leave a consistent database;
//! terminals with the specification's keying and think times complete few transactions
//! and stop within a second of the measured window's end; a run measured by its
//! transaction count stops once it has that many.

mod common;

use bakeoff_engine::{Live, Measure, NoHooks, PhaseHooks, Phases, RunRecord};
use bakeoff_sandbox::TargetKind;
use bakeoff_sqlclient::driver::Drive;
use bakeoff_sqlclient::Db;
use bakeoff_workloads::tpcc::{self, Kind, Think, TpccConfig, TpccRecord};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Remembers when the measured window ended.
#[derive(Default)]
struct Edges {
    ended: Mutex<Option<Instant>>,
}

impl PhaseHooks for Edges {
    fn measure_ended(&self) {
        *self.ended.lock().unwrap() = Some(Instant::now());
    }
}

fn run(
    db: &Db,
    cfg: &TpccConfig,
    phases: Phases,
    hooks: &dyn PhaseHooks,
) -> (RunRecord, TpccRecord) {
    let live = Arc::new(Live::default());
    let cancel = AtomicBool::new(false);
    let d = Drive {
        phases: &phases,
        hooks,
        live: &live,
        cancel: &cancel,
    };
    tpcc::run(db, cfg, 42, &d).unwrap_or_else(|e| panic!("tpcc run: {e}"))
}

fn throughput_run(kind: TargetKind, db: &Db, cfg: &TpccConfig) {
    let phases = Phases {
        warmup: Duration::from_secs(1),
        measure: Measure::Duration(Duration::from_secs(8)),
    };
    let (r, t) = run(db, cfg, phases, &NoHooks);
    eprintln!(
        "{kind:?} W=1, 4 terminals: NOTPM {:.0}, TPM {:.0}, {:.0} us client CPU per transaction, {} statements, errors {:?}",
        t.notpm,
        t.tpm,
        r.client_cpu_s * 1e6 / r.ops.max(1) as f64,
        r.queries,
        r.errors
    );
    let mut retries = 0;
    for k in Kind::ALL {
        let res = &t.kinds[&k];
        eprintln!("  {:12} {res:?}", k.name());
        assert!(res.count > 0, "no {} completed", k.name());
        assert_eq!(res.errors, 0, "{} gave up: {:?}", k.name(), r.errors);
        assert_eq!(r.kinds[k.name()].count, res.count);
        retries += res.retries;
    }
    assert!(t.notpm > 0.0);
    let new_order = &t.kinds[&Kind::NewOrder];
    assert!(new_order.rollbacks < new_order.count);
    let committed = (new_order.count - new_order.rollbacks) as f64;
    assert!((t.notpm - committed * 60.0 / r.elapsed_s).abs() < 1e-6);
    assert!((t.tpm - r.ops as f64 * 60.0 / r.elapsed_s).abs() < 1e-6);
    assert_eq!(
        r.errors.values().sum::<u64>(),
        retries,
        "errors beyond retries"
    );
    assert!(
        r.queries > 10 * r.ops,
        "{} statements for {} transactions",
        r.queries,
        r.ops
    );
    assert!((7.9..8.5).contains(&r.elapsed_s), "{}", r.elapsed_s);
    assert!(!r.intervals.is_empty());
}

/// Keying and think times: seconds per transaction per terminal, so a 3 s window of 2
/// terminals holds a handful; the run ends promptly although terminals are mid-think.
fn thinking_run(db: &Db, cfg: &TpccConfig) {
    let cfg = TpccConfig {
        connections: 2,
        think: Think::Spec,
        ..cfg.clone()
    };
    let phases = Phases {
        warmup: Duration::from_secs(1),
        measure: Measure::Duration(Duration::from_secs(3)),
    };
    let edges = Edges::default();
    let (r, t) = run(db, &cfg, phases, &edges);
    let returned = Instant::now();
    let ended = edges.ended.lock().unwrap().expect("the window ended");
    let late = returned - ended;
    assert!(
        late < Duration::from_secs(1),
        "returned {late:?} after the window"
    );
    assert!(r.ops <= 6, "{} transactions with think times", r.ops);
    assert!(t.tpm < 200.0, "TPM {}", t.tpm);
}

/// `Measure::Ops`: the window closes once that many transactions completed.
fn counted_run(db: &Db, cfg: &TpccConfig) {
    let cfg = TpccConfig {
        connections: 2,
        ..cfg.clone()
    };
    let phases = Phases {
        warmup: Duration::ZERO,
        measure: Measure::Ops(100),
    };
    let (r, _) = run(db, &cfg, phases, &NoHooks);
    assert!((100..110).contains(&r.ops), "{} transactions", r.ops);
}

fn load_run_check(kind: TargetKind) {
    let server = common::start(kind, &[]);
    let db = &server.db;
    let cfg = TpccConfig {
        warehouses: 1,
        connections: 4,
        think: Think::None,
        load_connections: 2,
        ..TpccConfig::default()
    };
    tpcc::load(db, &cfg).expect("load");
    throughput_run(kind, db, &cfg);
    let v = tpcc::check(db, &cfg).expect("check");
    assert!(v.is_empty(), "{kind:?}: the run left violations: {v:?}");
    thinking_run(db, &cfg);
    counted_run(db, &cfg);
    let v = tpcc::check(db, &cfg).expect("check");
    assert!(
        v.is_empty(),
        "{kind:?}: violations after the short runs: {v:?}"
    );
}

#[test]
fn mariadb_runs_tpcc() {
    load_run_check(TargetKind::Mariadb);
}

#[test]
fn postgres_runs_tpcc() {
    load_run_check(TargetKind::Postgres);
}
