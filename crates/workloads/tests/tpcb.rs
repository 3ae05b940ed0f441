//! tpcb against a real PostgreSQL (scale 1, about two seconds): the pgbench tables load
//! with pgbench's row counts, the tpcb-like script commits transactions from two
//! connections with every statement counted, and the balances add up afterwards; a
//! balance changed behind the run's back is caught.

mod common;

use bakeoff_engine::{Live, Measure, NoHooks, Phases};
use bakeoff_sandbox::TargetKind;
use bakeoff_sqlclient::{driver, Client};
use bakeoff_workloads::tpcb::{self, Builtin, Config};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

#[test]
fn postgres_tpcb_commits_and_its_balances_add_up() {
    let server = common::start(TargetKind::Postgres, &[("synchronous_commit", "off")]);
    let db = &server.db;
    let cfg = Config {
        scale: 1,
        builtin: Builtin::TpcbLike,
        engine: None,
    };
    let rt = driver::runtime().unwrap();
    assert_eq!(rt.block_on(tpcb::load(db, &cfg)).expect("load"), 100_011);
    let phases = Phases {
        warmup: Duration::from_millis(200),
        measure: Measure::Duration(Duration::from_millis(800)),
    };
    let (live, cancel) = (Arc::new(Live::default()), AtomicBool::new(false));
    let d = driver::Drive {
        phases: &phases,
        hooks: &NoHooks,
        live: &live,
        cancel: &cancel,
    };
    let r = tpcb::run(db, &cfg, 2, 2, 7, &d).expect("run");
    eprintln!(
        "tpcb: {:.0} tps, p90 {:.0} us",
        r.ops_per_s, r.latency_us.p90
    );
    assert!(r.ops > 20, "{} transactions", r.ops);
    assert_eq!(r.queries, r.ops * 6, "6 statements a transaction");
    assert_eq!(r.by_command.get("transaction"), Some(&r.ops));
    let check = |b| rt.block_on(tpcb::check_balances(db, b)).expect("check");
    assert_eq!(check(Builtin::TpcbLike), Vec::<String>::new());
    rt.block_on(async {
        let mut c = Client::connect(db, 0, false).await.unwrap();
        c.simple("UPDATE pgbench_tellers SET tbalance = tbalance + 1 WHERE tid = 3")
            .await
            .unwrap();
    });
    let v = check(Builtin::TpcbLike);
    assert_eq!(v.len(), 1, "{v:?}");
    assert!(v[0].starts_with("the tellers' balances add up to"), "{v:?}");
}
