//! The tpcc benchmark of bench/: on one PostgreSQL sandbox, in one process, the tpcc
//! loader against `pgbench -i` (rows per second, alternating, `ROUNDS` times each), then
//! NOTPM at W = 2 with 8 connections and no think times, with the server's and the
//! client's CPU per New-Order transaction. Prints one line per measurement and a summary.
//!
//!     cargo run --release -p bakeoff-workloads --example tpcc_vs_pgbench -- [SCALE] [ROUNDS] [SECONDS]
//!
//! SCALE is pgbench's scale factor (default 20: 2,000,000 accounts rows, about the rows
//! of TPC-C's W = 2).

use bakeoff_engine::{Live, Measure, NoHooks, Phases};
use bakeoff_sandbox::{init_data, DataSource, Sandbox, SandboxSpec, TargetKind};
use bakeoff_sqlclient::driver::Drive;
use bakeoff_sqlclient::{Db, Dialect};
use bakeoff_workloads::tpcc::{self, Kind, TpccConfig};
use std::os::unix::fs::PermissionsExt;
use std::process::Command;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

const POSTGRES: &str = "/usr/lib/postgresql/15/bin/postgres";
const PGBENCH: &str = "/usr/lib/postgresql/15/bin/pgbench";

fn main() {
    let args: Vec<u64> = std::env::args()
        .skip(1)
        .map(|a| {
            a.parse().unwrap_or_else(|_| {
                eprintln!("usage: tpcc_vs_pgbench [SCALE] [ROUNDS] [SECONDS]");
                std::process::exit(2)
            })
        })
        .collect();
    let scale = args.first().copied().unwrap_or(20);
    let rounds = args.get(1).copied().unwrap_or(3);
    let seconds = args.get(2).copied().unwrap_or(30);
    let tmp = tempfile::tempdir().expect("a temporary directory");
    std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let data = tmp.path().join("data");
    init_data(TargetKind::Postgres, POSTGRES.as_ref(), &data).expect("initdb");
    let mut spec = SandboxSpec::new(
        "tpcc-bench",
        TargetKind::Postgres,
        POSTGRES,
        tmp.path().join("sb"),
    );
    spec.ready_timeout = Duration::from_secs(60);
    spec.stop_grace = Duration::from_secs(60);
    spec.data = Some(DataSource::InPlace(data));
    spec.options = [("shared_buffers", "256MB"), ("max_wal_size", "4GB")]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let sandbox = Sandbox::start(&spec).expect("postgres starts");
    let login = sandbox.login().expect("login");
    let db = Db {
        dialect: Dialect::Postgres,
        addr: sandbox.addr(),
        socket: sandbox.socket(),
        user: login.user.clone(),
        password: login.password.clone(),
        database: login.database.clone(),
        via_socket: false,
    };
    let cfg = TpccConfig {
        warehouses: 2,
        connections: 8,
        ..TpccConfig::default()
    };
    let (mut pg_rates, mut tpcc_rates) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        let started = Instant::now();
        let out = Command::new(PGBENCH)
            .env("PGPASSWORD", &login.password)
            .args(["-i", "-q", "-s", &scale.to_string(), "-h", "127.0.0.1"])
            .args([
                "-p",
                &db.addr.port().to_string(),
                "-U",
                &login.user,
                &login.database,
            ])
            .output()
            .expect("pgbench runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let s = started.elapsed().as_secs_f64();
        // accounts, tellers, branches (history starts empty).
        let rows = scale * (100_000 + 10 + 1);
        pg_rates.push(rows as f64 / s);
        println!(
            "round {round}: pgbench -i -s {scale}: {rows} rows in {s:.2} s = {:.0} rows/s",
            rows as f64 / s
        );
        let r = tpcc::load(&db, &cfg).expect("tpcc load");
        tpcc_rates.push(r.rows as f64 / r.seconds);
        println!(
            "round {round}: tpcc load W=2: {} rows in {:.2} s = {:.0} rows/s",
            r.rows,
            r.seconds,
            r.rows as f64 / r.seconds
        );
    }
    let (pg, tp) = (median(&pg_rates), median(&tpcc_rates));
    println!("loader rows/s (median of {rounds}): pgbench -i {pg:.0}, tpcc {tp:.0}, ratio tpcc/pgbench {:.2}", tp / pg);
    let mut notpm = Vec::new();
    for round in 0..rounds {
        let live = Arc::new(Live::default());
        let phases = Phases {
            warmup: Duration::from_secs(5),
            measure: Measure::Duration(Duration::from_secs(seconds)),
        };
        let before = sandbox.usage().cpu_s;
        let d = Drive {
            phases: &phases,
            hooks: &NoHooks,
            live: &live,
            cancel: &AtomicBool::new(false),
        };
        let (rec, t) = tpcc::run(&db, &cfg, round, &d).expect("tpcc run");
        // The server's CPU over warmup and window, scaled to the window's share.
        let server_s = (sandbox.usage().cpu_s - before) * seconds as f64 / (seconds + 5) as f64;
        let new_orders = t
            .kinds
            .get(&Kind::NewOrder)
            .map_or(0, |k| k.count - k.rollbacks)
            .max(1);
        println!(
            "round {round}: W=2 x8: NOTPM {:.0}, TPM {:.0}, server CPU {:.0} us and client CPU {:.0} us per New-Order",
            t.notpm,
            t.tpm,
            server_s * 1e6 / new_orders as f64,
            rec.client_cpu_s * 1e6 / new_orders as f64
        );
        notpm.push(t.notpm);
        let violations = tpcc::check(&db, &cfg).expect("consistency check");
        assert!(violations.is_empty(), "{violations:?}");
    }
    println!(
        "NOTPM at W=2 x8 (median of {rounds}): {:.0}",
        median(&notpm)
    );
    sandbox.stop().expect("postgres stops");
}

fn median(xs: &[f64]) -> f64 {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        return f64::NAN;
    }
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}
