mod common;
use bakeoff_load::{Live, Measure, NoHooks, Phases};
use bakeoff_sandbox::TargetKind;
use bakeoff_workloads::oltp::{self, OltpConfig, OltpTest};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

#[test]
#[ignore]
fn oltp_speed() {
    let kind = if std::env::var("PG").is_ok() { TargetKind::Postgres } else { TargetKind::Mariadb };
    let server = common::start(kind, &[]);
    let db = &server.db;
    let mut cfg = OltpConfig { test: OltpTest::ReadWrite, tables: 2, table_size: 10000, ..OltpConfig::default() };
    oltp::prepare(db, &cfg).unwrap();
    for conns in [1usize, 4, 16] {
        cfg.connections = conns;
        for rep in 0..3 {
            let live = Arc::new(Live::default());
            let phases = Phases { warmup: Duration::from_secs(1), measure: Measure::Duration(Duration::from_secs(5)) };
            let r = oltp::run(db, &cfg, &phases, rep, &NoHooks, &live, &AtomicBool::new(false)).unwrap();
            eprintln!("SPEED {kind:?} conns {conns} rep {rep}: tps {:.0} cpu/txn {:.1} us queries {} errors {:?}", r.ops_per_s, r.client_cpu_s * 1e6 / r.ops as f64, r.queries, r.errors);
        }
    }
}
