//! The tpcc loader and consistency check against real servers: one warehouse loaded on
//! two connections has the specification's row counts and passes every condition; a
//! planted inconsistency is reported with the warehouse it is in.

mod common;

use bakeoff_sandbox::TargetKind;
use bakeoff_sqlclient::Db;
use bakeoff_workloads::tpcc::{self, TpccConfig, Violation};

use common::rows as sql;

fn int(db: &Db, q: &str) -> i64 {
    let rows = sql(db, q);
    let cell = rows[0][0].as_deref().expect("a value, not NULL");
    cell.trim().parse().expect("an integer")
}

fn count(db: &Db, table: &str) -> i64 {
    int(db, &format!("SELECT count(*) FROM {table}"))
}

fn has(v: &[Violation], condition: u8, needle: &str) -> bool {
    v.iter()
        .any(|x| x.condition == condition && x.detail.contains(needle))
}

fn load_check_and_break(kind: TargetKind) {
    let server = common::start(kind, &[]);
    let db = &server.db;
    let cfg = TpccConfig {
        warehouses: 1,
        load_connections: 2,
        ..TpccConfig::default()
    };
    let report = tpcc::load(db, &cfg).expect("load");
    eprintln!(
        "{kind:?}: {} rows in {:.1} s ({:.0} rows/s)",
        report.rows,
        report.seconds,
        report.rows as f64 / report.seconds
    );

    let fixed = [
        ("item", 100_000),
        ("warehouse", 1),
        ("district", 10),
        ("customer", 30_000),
        ("history", 30_000),
        ("orders", 30_000),
        ("new_order", 9_000),
        ("stock", 100_000),
    ];
    for (table, n) in fixed {
        assert_eq!(count(db, table), n, "{table} rows");
    }
    let lines = count(db, "order_line");
    assert!((150_000..=450_000).contains(&lines), "{lines} order lines");
    assert_eq!(int(db, "SELECT sum(o_ol_cnt) FROM orders"), lines);
    let total: i64 = fixed.iter().map(|f| f.1).sum::<i64>() + lines;
    assert_eq!(report.rows as i64, total);
    spot_checks(db);

    let v = tpcc::check(db, &cfg).expect("check");
    assert!(v.is_empty(), "a fresh load violates: {v:?}");

    sql(db, "UPDATE warehouse SET w_ytd = w_ytd + 1 WHERE w_id = 1");
    let v = tpcc::check(db, &cfg).expect("check");
    assert!(has(&v, 1, "warehouse 1"), "{v:?}");
    sql(db, "UPDATE warehouse SET w_ytd = w_ytd - 1 WHERE w_id = 1");

    sql(
        db,
        "DELETE FROM new_order WHERE no_w_id = 1 AND no_d_id = 3 AND no_o_id = 2500",
    );
    let v = tpcc::check(db, &cfg).expect("check");
    assert!(has(&v, 3, "warehouse 1 district 3"), "{v:?}");
    assert!(!v.iter().any(|x| x.condition == 1), "{v:?}");
    sql(
        db,
        "DELETE FROM new_order WHERE no_w_id = 1 AND no_d_id = 4 AND no_o_id = 3000",
    );
    let v = tpcc::check(db, &cfg).expect("check");
    assert!(has(&v, 2, "warehouse 1 district 4"), "{v:?}");
}

/// A few of clause 4.3.3.1's rules visible in the data.
fn spot_checks(db: &Db) {
    let names = "SELECT count(DISTINCT c_last) FROM customer \
                 WHERE c_w_id = 1 AND c_d_id = 1 AND c_id <= 1000";
    assert_eq!(int(db, names), 1000);
    let bad = int(db, "SELECT count(*) FROM customer WHERE c_credit = 'BC'");
    assert!(
        (2_400..=3_600).contains(&bad),
        "{bad} of 30000 customers with BC"
    );
    let original = int(
        db,
        "SELECT count(*) FROM item WHERE i_data LIKE '%ORIGINAL%'",
    );
    assert!(
        (9_000..=11_000).contains(&original),
        "{original} ORIGINAL items"
    );
    let open = int(db, "SELECT count(*) FROM orders WHERE o_carrier_id IS NULL");
    assert_eq!(open, 9_000);
    let undelivered = int(
        db,
        "SELECT count(*) FROM order_line WHERE ol_delivery_d IS NULL",
    );
    let unpaid = int(db, "SELECT count(*) FROM order_line WHERE ol_amount = 0");
    assert_eq!(
        undelivered + unpaid,
        count(db, "order_line"),
        "undelivered lines have an amount, delivered ones none"
    );
    let lines_of = |o: i64| {
        int(
            db,
            &format!("SELECT count(*) FROM order_line WHERE ol_o_id = {o}"),
        )
    };
    assert!((50..=150).contains(&lines_of(1)));
    let ytd = sql(db, "SELECT w_ytd FROM warehouse WHERE w_id = 1");
    assert_eq!(ytd[0][0].as_deref().map(str::trim), Some("300000.00"));
}

#[test]
fn mariadb_loads_and_checks() {
    load_check_and_break(TargetKind::Mariadb);
}

#[test]
fn postgres_loads_and_checks() {
    load_check_and_break(TargetKind::Postgres);
}
