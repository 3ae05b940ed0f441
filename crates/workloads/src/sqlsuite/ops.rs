//! The suite's operations, group by group: each a name, an optional untimed preparation
//! and a function that does the work (every statement it sends is counted by `Ctx`).
//! Sizes are `Ctx::n(full, min)`: the count at scale 1 (about sql-bench's) times the
//! scale, never below a floor that keeps the operation meaningful. Keys and ranges come
//! from the group's seeded generator, so runs repeat exactly.

use super::data::{self, Val, WISCONSIN_COLUMNS};
use super::{Ctx, Group};
use bakeoff_engine::rng::mix;
use bakeoff_engine::LoadError;
use bakeoff_sqlclient::{inline, Param, SqlDialect};

type Res = Result<(), LoadError>;
pub(crate) type OpFn = fn(&mut Ctx) -> Res;

/// One timed operation.
pub(crate) struct Op {
    pub name: &'static str,
    /// Untimed work before the clock starts (indexes for the indexed half of Wisconsin).
    pub prep: Option<OpFn>,
    pub run: OpFn,
}

const fn op(name: &'static str, run: OpFn) -> Op {
    Op {
        name,
        prep: None,
        run,
    }
}

/// A group: its untimed setup, its operations in order, and a cleanup that drops every
/// table it may have created (run before the setup too).
pub(crate) struct Spec {
    pub setup: OpFn,
    pub cleanup: OpFn,
    pub ops: &'static [Op],
}

pub(crate) fn spec(g: Group) -> Spec {
    match g {
        Group::AlterTable => Spec {
            setup: alter_setup,
            cleanup: alter_cleanup,
            ops: ALTER_OPS,
        },
        Group::Atis => Spec {
            setup: atis_setup,
            cleanup: atis_cleanup,
            ops: ATIS_OPS,
        },
        Group::BigTables => Spec {
            setup: big_setup,
            cleanup: big_cleanup,
            ops: BIG_OPS,
        },
        Group::Connect => Spec {
            setup: connect_setup,
            cleanup: connect_cleanup,
            ops: CONNECT_OPS,
        },
        Group::Create => Spec {
            setup: nothing,
            cleanup: create_cleanup,
            ops: CREATE_OPS,
        },
        Group::Insert => Spec {
            setup: ins_setup,
            cleanup: insert_cleanup,
            ops: INSERT_OPS,
        },
        Group::Select => Spec {
            setup: select_setup,
            cleanup: select_cleanup,
            ops: SELECT_OPS,
        },
        Group::Transactions => Spec {
            setup: trans_setup,
            cleanup: trans_cleanup,
            ops: TRANS_OPS,
        },
        Group::Wisconsin => Spec {
            setup: wisc_setup,
            cleanup: wisc_cleanup,
            ops: WISC_OPS,
        },
    }
}

fn nothing(_: &mut Ctx) -> Res {
    Ok(())
}

/// Sends `times` statements made by `sql` (given the context, for its generator, and
/// the iteration number): one per round trip, or on SQLite [`BATCH`] per round trip.
fn repeat(ctx: &mut Ctx, times: u64, mut sql: impl FnMut(&mut Ctx, u64) -> String) -> Res {
    if !ctx.batches() {
        for i in 0..times {
            let s = sql(ctx, i);
            ctx.exec(&s)?;
        }
        return Ok(());
    }
    let mut batch = String::new();
    let mut count = 0;
    for i in 0..times {
        batch.push_str(&sql(ctx, i));
        batch.push_str(";\n");
        count += 1;
        if count == BATCH {
            ctx.exec_batch(&batch, count)?;
            batch.clear();
            count = 0;
        }
    }
    if count > 0 {
        ctx.exec_batch(&batch, count)?;
    }
    Ok(())
}

/// Statements per round trip in a loop of independent statements on SQLite (see
/// `Ctx::batches`).
pub(crate) const BATCH: u64 = 100;

/// Times a full-size loop of statements is repeated over a whole table.
const TABLE_REPS: u64 = 10;

// ---------------------------------------------------------------- alter-table

const ALTER_OPS: &[Op] = &[
    op("alter_table_add", alter_add),
    op("create_index", alter_create_index),
    op("drop_index", alter_drop_index),
    op("alter_table_drop", alter_drop),
];

fn alter_cols(ctx: &Ctx) -> u64 {
    ctx.n(100, 5)
}

fn alter_indexes(ctx: &Ctx) -> u64 {
    ctx.n(10, 2).min(alter_cols(ctx))
}

fn alter_setup(ctx: &mut Ctx) -> Res {
    ctx.create(
        "sb_alter",
        "id int NOT NULL PRIMARY KEY, name varchar(20) NOT NULL",
    )?;
    let rows = ctx.n(10_000, 100);
    let data = (0..rows).map(|i| vec![Val::I(i as i64), Val::S(format!("row {i}"))]);
    data::load(ctx, "sb_alter", data).map(|_| ())
}

fn alter_cleanup(ctx: &mut Ctx) -> Res {
    ctx.drop_tables(&["sb_alter"])
}

fn alter_add(ctx: &mut Ctx) -> Res {
    let cols = alter_cols(ctx);
    repeat(ctx, cols, |_, i| {
        format!("ALTER TABLE sb_alter ADD COLUMN c{i} int NOT NULL DEFAULT {i}")
    })
}

fn alter_create_index(ctx: &mut Ctx) -> Res {
    let n = alter_indexes(ctx);
    repeat(ctx, n, |_, i| {
        format!("CREATE INDEX sb_alter_i{i} ON sb_alter (c{i})")
    })
}

fn alter_drop_index(ctx: &mut Ctx) -> Res {
    let n = alter_indexes(ctx);
    repeat(ctx, n, |c, i| {
        c.sql.drop_index(&format!("sb_alter_i{i}"), "sb_alter")
    })
}

fn alter_drop(ctx: &mut Ctx) -> Res {
    let cols = alter_cols(ctx);
    repeat(ctx, cols, |_, i| {
        format!("ALTER TABLE sb_alter DROP COLUMN c{i}")
    })
}

// ---------------------------------------------------------------- ATIS

const ATIS_OPS: &[Op] = &[
    op("select_simple_join", atis_simple_join),
    op("select_join", atis_join),
    op("select_key_prefix_join", atis_key_prefix_join),
    op("select_join_group", atis_join_group),
    op("select_join_distinct", atis_join_distinct),
    op("select_join_min", atis_join_min),
    op("select_join_aircraft", atis_join_aircraft),
];

const ATIS_TABLES: &[&str] = &[
    "sb_state",
    "sb_city",
    "sb_airport",
    "sb_airport_service",
    "sb_airline",
    "sb_aircraft",
    "sb_flight",
    "sb_fare",
    "sb_flight_fare",
];

fn atis_flights(ctx: &Ctx) -> u64 {
    ctx.n(600, 100)
}

/// Queries per ATIS operation.
fn atis_reps(ctx: &Ctx) -> u64 {
    ctx.n(500, 10)
}

fn atis_setup(ctx: &mut Ctx) -> Res {
    for t in data::atis_tables(atis_flights(ctx)) {
        ctx.create(t.name, t.columns)?;
        data::load(ctx, t.name, t.rows)?;
        for (k, cols) in t.indexes.iter().enumerate() {
            ctx.exec(&format!(
                "CREATE INDEX {}_i{k} ON {} ({cols})",
                t.name, t.name
            ))?;
        }
    }
    Ok(())
}

fn atis_cleanup(ctx: &mut Ctx) -> Res {
    ctx.drop_tables(ATIS_TABLES)
}

/// A random route's airports' codes.
fn atis_route(ctx: &mut Ctx) -> (u64, u64) {
    let routes = data::atis_routes(atis_flights(ctx));
    routes[ctx.below(routes.len() as u64) as usize]
}

fn atis_airline(ctx: &mut Ctx) -> String {
    data::airline_code(ctx.below(data::ATIS_AIRLINES) as u64)
}

fn atis_simple_join(ctx: &mut Ctx) -> Res {
    let n = atis_reps(ctx);
    repeat(ctx, n, |c, _| {
        let ap = data::airport_code(c.below(data::ATIS_AIRPORTS) as u64);
        format!(
            "SELECT f.flight_id, f.flight_number, a.airline_name FROM sb_flight f \
             JOIN sb_airline a ON a.airline_code = f.airline_code \
             WHERE f.from_airport = '{ap}' ORDER BY f.departure_time, f.flight_id"
        )
    })
}

fn atis_join(ctx: &mut Ctx) -> Res {
    let n = atis_reps(ctx);
    repeat(ctx, n, |c, _| {
        let (from, to) = atis_route(c);
        let a = data::city_name(data::airport_cities(from)[0]);
        let b = data::city_name(data::airport_cities(to)[0]);
        format!(
            "SELECT f.flight_id, f.departure_time, f.arrival_time, al.airline_name \
             FROM sb_city c1 JOIN sb_airport_service s1 ON s1.city_code = c1.city_code \
             JOIN sb_flight f ON f.from_airport = s1.airport_code \
             JOIN sb_airport_service s2 ON s2.airport_code = f.to_airport \
             JOIN sb_city c2 ON c2.city_code = s2.city_code \
             JOIN sb_airline al ON al.airline_code = f.airline_code \
             WHERE c1.city_name = '{a}' AND c2.city_name = '{b}' \
             ORDER BY f.departure_time, f.flight_id"
        )
    })
}

fn atis_key_prefix_join(ctx: &mut Ctx) -> Res {
    let n = atis_reps(ctx);
    repeat(ctx, n, |c, _| {
        let al = atis_airline(c);
        format!(
            "SELECT f.flight_id, fa.fare_class, fa.one_way_cost FROM sb_flight f \
             JOIN sb_flight_fare ff ON ff.flight_id = f.flight_id \
             JOIN sb_fare fa ON fa.fare_id = ff.fare_id \
             WHERE f.airline_code = '{al}' ORDER BY fa.one_way_cost, f.flight_id"
        )
    })
}

fn atis_join_group(ctx: &mut Ctx) -> Res {
    let n = atis_reps(ctx);
    repeat(ctx, n, |_, i| {
        format!(
            "SELECT al.airline_name, count(*), min(f.departure_time), max(f.arrival_time) \
             FROM sb_flight f JOIN sb_airline al ON al.airline_code = f.airline_code \
             WHERE f.stops = {} GROUP BY al.airline_name ORDER BY al.airline_name",
            i % 3
        )
    })
}

fn atis_join_distinct(ctx: &mut Ctx) -> Res {
    let n = atis_reps(ctx);
    repeat(ctx, n, |c, _| {
        let al = atis_airline(c);
        format!(
            "SELECT DISTINCT c.city_name FROM sb_flight f \
             JOIN sb_airport_service s ON s.airport_code = f.to_airport \
             JOIN sb_city c ON c.city_code = s.city_code \
             WHERE f.airline_code = '{al}' ORDER BY c.city_name"
        )
    })
}

fn atis_join_min(ctx: &mut Ctx) -> Res {
    let n = atis_reps(ctx);
    repeat(ctx, n, |c, _| {
        let (from, to) = atis_route(c);
        let (f, t) = (data::airport_code(from), data::airport_code(to));
        format!(
            "SELECT f.flight_id, fa.one_way_cost FROM sb_flight f \
             JOIN sb_flight_fare ff ON ff.flight_id = f.flight_id \
             JOIN sb_fare fa ON fa.fare_id = ff.fare_id \
             WHERE f.from_airport = '{f}' AND f.to_airport = '{t}' AND fa.one_way_cost = \
             (SELECT min(one_way_cost) FROM sb_fare \
             WHERE from_airport = '{f}' AND to_airport = '{t}')"
        )
    })
}

fn atis_join_aircraft(ctx: &mut Ctx) -> Res {
    let n = atis_reps(ctx);
    repeat(ctx, n, |c, i| {
        let capacity = 50 + 25 * c.below(data::ATIS_AIRCRAFT);
        let tz = ["EST", "CST", "MST", "PST"][(i % 4) as usize];
        format!(
            "SELECT f.flight_id, ac.aircraft_type, ac.capacity, ap.airport_name \
             FROM sb_flight f JOIN sb_aircraft ac ON ac.aircraft_code = f.aircraft_code \
             JOIN sb_airport ap ON ap.airport_code = f.to_airport \
             WHERE ac.capacity >= {capacity} AND ap.time_zone = '{tz}' ORDER BY f.flight_id"
        )
    })
}

// ---------------------------------------------------------------- big-tables

const BIG_OPS: &[Op] = &[
    op("insert_many_fields", big_insert),
    op("select_many_fields", big_select),
    op("select_few_of_many_fields", big_select_few),
];

/// Columns of the big table besides its key: 1,000 in all, InnoDB's limit before MySQL
/// 5.6.9 (1,017 after); one more and MySQL 5.5 refuses the table (errno 139).
const BIG_FIELDS: u64 = 999;

fn big_rows(ctx: &Ctx) -> u64 {
    ctx.n(2_000, 20)
}

fn big_setup(ctx: &mut Ctx) -> Res {
    let mut cols = String::from("id int NOT NULL PRIMARY KEY");
    for f in 0..BIG_FIELDS {
        cols.push_str(&format!(", f{f} int NOT NULL"));
    }
    ctx.create("sb_big", &cols)
}

fn big_cleanup(ctx: &mut Ctx) -> Res {
    ctx.drop_tables(&["sb_big"])
}

fn big_insert(ctx: &mut Ctx) -> Res {
    let n = big_rows(ctx);
    repeat(ctx, n, |_, i| {
        let mut s = format!("INSERT INTO sb_big VALUES ({i}");
        for f in 0..BIG_FIELDS {
            s.push_str(&format!(", {}", (i * 7 + f) % 100_000));
        }
        s.push(')');
        s
    })
}

fn big_select(ctx: &mut Ctx) -> Res {
    repeat(ctx, TABLE_REPS, |_, _| "SELECT * FROM sb_big".into())
}

fn big_select_few(ctx: &mut Ctx) -> Res {
    let n = big_rows(ctx);
    repeat(ctx, n, |c, _| {
        let id = c.below(n);
        format!(
            "SELECT id, f0, f500, f{} FROM sb_big WHERE id = {id}",
            BIG_FIELDS - 1
        )
    })
}

// ---------------------------------------------------------------- connect

const CONNECT_OPS: &[Op] = &[
    op("connect", connect_only),
    op("connect+select_1_row", connect_select_1),
    op("connect+select_simple", connect_select_simple),
    op("select_1_row", select_1_row),
    op("select_simple", select_simple),
];

const CONNECT_ROWS: u64 = 100;

/// Connections per connect operation: a fifth of sql-bench's 10,000 at scale 1 (with
/// SCRAM on PostgreSQL a connection costs milliseconds; in a debug build, far more).
fn connects(ctx: &Ctx) -> u64 {
    ctx.n(2_000, 10)
}

fn connect_setup(ctx: &mut Ctx) -> Res {
    ctx.create(
        "sb_connect",
        "id int NOT NULL PRIMARY KEY, name varchar(20) NOT NULL",
    )?;
    let rows = (0..CONNECT_ROWS).map(|i| vec![Val::I(i as i64), Val::S(format!("name {i}"))]);
    data::load(ctx, "sb_connect", rows).map(|_| ())
}

fn connect_cleanup(ctx: &mut Ctx) -> Res {
    ctx.drop_tables(&["sb_connect"])
}

/// Opens, optionally queries, and closes `connects` connections.
fn connect_loop(ctx: &mut Ctx, sql: Option<fn(&mut Ctx) -> String>) -> Res {
    for _ in 0..connects(ctx) {
        let mut c = ctx.connect()?;
        let r = match sql {
            Some(make) => {
                let s = make(ctx);
                ctx.exec_on(&mut c, &s)
            }
            None => Ok(()),
        };
        ctx.close(c);
        r?;
    }
    Ok(())
}

fn connect_only(ctx: &mut Ctx) -> Res {
    connect_loop(ctx, None)
}

fn connect_select_1(ctx: &mut Ctx) -> Res {
    connect_loop(ctx, Some(|_| "SELECT 1".into()))
}

fn simple_select(ctx: &mut Ctx) -> String {
    let id = ctx.below(CONNECT_ROWS);
    format!("SELECT name FROM sb_connect WHERE id = {id}")
}

fn connect_select_simple(ctx: &mut Ctx) -> Res {
    connect_loop(ctx, Some(simple_select))
}

fn select_1_row(ctx: &mut Ctx) -> Res {
    let n = connects(ctx);
    repeat(ctx, n, |_, _| "SELECT 1".into())
}

fn select_simple(ctx: &mut Ctx) -> Res {
    let n = connects(ctx);
    repeat(ctx, n, |c, _| simple_select(c))
}

// ---------------------------------------------------------------- create

const CREATE_OPS: &[Op] = &[
    op("create_table", create_tables),
    op("drop_table", drop_tables),
    op("create+drop", create_drop),
    op("create_key+drop", create_key_drop),
];

/// Tables per create operation: a fifth of sql-bench's 10,000 at scale 1 (each
/// `CREATE TABLE` syncs files: milliseconds apiece).
fn creates(ctx: &Ctx) -> u64 {
    ctx.n(2_000, 10)
}

const CREATE_COLS: &str =
    "id int NOT NULL PRIMARY KEY, name varchar(30) NOT NULL, val int NOT NULL";
const CREATE_KEY_COLS: &str = "id int NOT NULL PRIMARY KEY, name varchar(30) NOT NULL, \
     val int NOT NULL, other int NOT NULL, UNIQUE (name), UNIQUE (val, other)";

fn create_tables(ctx: &mut Ctx) -> Res {
    let n = creates(ctx);
    repeat(ctx, n, |c, i| {
        c.create_sql(&format!("sb_create_{i}"), CREATE_COLS)
    })
}

fn drop_tables(ctx: &mut Ctx) -> Res {
    let n = creates(ctx);
    repeat(ctx, n, |_, i| format!("DROP TABLE sb_create_{i}"))
}

fn create_then_drop(ctx: &mut Ctx, cols: &str) -> Res {
    for i in 0..creates(ctx) {
        let name = format!("sb_cd_{}", i % 10);
        ctx.create(&name, cols)?;
        ctx.exec(&format!("DROP TABLE {name}"))?;
    }
    Ok(())
}

fn create_drop(ctx: &mut Ctx) -> Res {
    create_then_drop(ctx, CREATE_COLS)
}

fn create_key_drop(ctx: &mut Ctx) -> Res {
    create_then_drop(ctx, CREATE_KEY_COLS)
}

fn create_cleanup(ctx: &mut Ctx) -> Res {
    let mut names: Vec<String> = (0..creates(ctx))
        .map(|i| format!("sb_create_{i}"))
        .collect();
    names.extend((0..10).map(|i| format!("sb_cd_{i}")));
    for chunk in names.chunks(200) {
        let refs: Vec<&str> = chunk.iter().map(String::as_str).collect();
        ctx.drop_tables(&refs)?;
    }
    Ok(())
}

// ---------------------------------------------------------------- insert

const INSERT_OPS: &[Op] = &[
    op("insert", ins_insert),
    op("insert_duplicates", ins_duplicates),
    op("select_big", ins_select_big),
    op("select_key", ins_select_key),
    op("select_key2", ins_select_key2),
    op("select_key_return_key", ins_select_key_return_key),
    op("select_key2_return_key", ins_select_key2_return_key),
    op("select_key2_return_prim", ins_select_key2_return_prim),
    op("select_key_prefix", ins_select_key_prefix),
    op("select_cache2", ins_select_cache2),
    op("count", ins_count),
    op("count_distinct_big", ins_count_distinct_big),
    op("count_on_key", ins_count_on_key),
    op("order_by_big", ins_order_by_big),
    op("order_by_big_key", ins_order_by_big_key),
    op("order_by_big_key_desc", ins_order_by_big_key_desc),
    op("order_by_big_key_diff", ins_order_by_big_key_diff),
    op("order_by_big_key_prefix", ins_order_by_big_key_prefix),
    op("order_by_key", ins_order_by_key),
    op("once_prepared_select", ins_once_prepared),
    op("prepared_select", ins_prepared),
    op("update_of_key", ins_update_of_key),
    op("insert_key", ins_insert_key),
    op(
        "update_of_primary_key_many_keys",
        ins_update_primary_many_keys,
    ),
    op("delete_big_many_keys", ins_delete_big_many_keys),
    op("delete_all_many_keys", ins_delete_all_many_keys),
];

/// Rows of `sb_bench1`, inserted one by one: row i has the key (i / 10, i % 10).
fn ins_rows(ctx: &Ctx) -> u64 {
    ctx.n(100_000, 200)
}

/// Statements of the keyed loops (lookups, updates).
fn ins_lookups(ctx: &Ctx) -> u64 {
    ctx.n(10_000, 50)
}

/// Rows of `sb_keys`, the table with many indexes.
fn keys_rows(ctx: &Ctx) -> u64 {
    ins_rows(ctx) / 4
}

fn id3(i: u64, n: u64) -> u64 {
    mix(i ^ 0x1d3) % (n / 2).max(1)
}

fn ins_setup(ctx: &mut Ctx) -> Res {
    ctx.create(
        "sb_bench1",
        "id int NOT NULL, id2 int NOT NULL, id3 int NOT NULL, dummy1 char(30) NOT NULL, \
         PRIMARY KEY (id, id2)",
    )?;
    ctx.exec("CREATE INDEX sb_bench1_id3 ON sb_bench1 (id3)")?;
    ctx.create(
        "sb_keys",
        "i1 int NOT NULL PRIMARY KEY, i2 int NOT NULL, i3 int NOT NULL, i4 int NOT NULL, \
         s1 char(10) NOT NULL, s2 varchar(20) NOT NULL",
    )?;
    for (k, cols) in ["i2", "i3", "i4", "s1", "s2, i2"].iter().enumerate() {
        ctx.exec(&format!("CREATE INDEX sb_keys_i{k} ON sb_keys ({cols})"))?;
    }
    Ok(())
}

fn insert_cleanup(ctx: &mut Ctx) -> Res {
    ctx.drop_tables(&["sb_bench1", "sb_keys"])
}

fn bench1_row(i: u64, n: u64) -> String {
    format!(
        "({}, {}, {}, 'd{:09}')",
        i / 10,
        i % 10,
        id3(i, n),
        mix(i ^ 0xd1) % 1_000_000_000
    )
}

fn ins_insert(ctx: &mut Ctx) -> Res {
    let n = ins_rows(ctx);
    let order = data::permutation(n, mix(0x1e5e_0001));
    repeat(ctx, n, |_, k| {
        let row = bench1_row(order[k as usize], n);
        format!("INSERT INTO sb_bench1 VALUES {row}")
    })
}

fn ins_duplicates(ctx: &mut Ctx) -> Res {
    let (n, times) = (ins_rows(ctx), ins_lookups(ctx));
    for _ in 0..times {
        let i = ctx.below(n) as u64;
        let sql = format!("INSERT INTO sb_bench1 VALUES {}", bench1_row(i, n));
        match ctx.try_exec(&sql)? {
            Err(e) if e.kind == "duplicate_key" => {}
            Err(e) => return Err(LoadError::Sql(format!("{sql}: {}", e.message))),
            Ok(()) => return Err(LoadError::Sql(format!("{sql}: no duplicate-key error"))),
        }
    }
    Ok(())
}

fn ins_select_big(ctx: &mut Ctx) -> Res {
    repeat(ctx, TABLE_REPS, |_, _| "SELECT * FROM sb_bench1".into())
}

/// `times` lookups of `what` by a random existing row's key, made by `sql` from
/// (id, id2, id3).
fn ins_lookup(ctx: &mut Ctx, sql: fn(u64, u64, u64) -> String) -> Res {
    let (n, times) = (ins_rows(ctx), ins_lookups(ctx));
    repeat(ctx, times, |c, _| {
        let i = c.below(n) as u64;
        sql(i / 10, i % 10, id3(i, n))
    })
}

fn ins_select_key(ctx: &mut Ctx) -> Res {
    ins_lookup(ctx, |a, b, _| {
        format!("SELECT * FROM sb_bench1 WHERE id = {a} AND id2 = {b}")
    })
}

fn ins_select_key2(ctx: &mut Ctx) -> Res {
    ins_lookup(ctx, |_, _, c| {
        format!("SELECT * FROM sb_bench1 WHERE id3 = {c}")
    })
}

fn ins_select_key_return_key(ctx: &mut Ctx) -> Res {
    ins_lookup(ctx, |a, b, _| {
        format!("SELECT id, id2 FROM sb_bench1 WHERE id = {a} AND id2 = {b}")
    })
}

fn ins_select_key2_return_key(ctx: &mut Ctx) -> Res {
    ins_lookup(ctx, |_, _, c| {
        format!("SELECT id3 FROM sb_bench1 WHERE id3 = {c}")
    })
}

fn ins_select_key2_return_prim(ctx: &mut Ctx) -> Res {
    ins_lookup(ctx, |_, _, c| {
        format!("SELECT id, id2 FROM sb_bench1 WHERE id3 = {c}")
    })
}

fn ins_select_key_prefix(ctx: &mut Ctx) -> Res {
    ins_lookup(ctx, |a, _, _| {
        format!("SELECT * FROM sb_bench1 WHERE id = {a}")
    })
}

fn ins_select_cache2(ctx: &mut Ctx) -> Res {
    let times = ins_lookups(ctx);
    repeat(ctx, times, |_, _| {
        "SELECT * FROM sb_bench1 WHERE id = 1 AND id2 = 1".into()
    })
}

fn ins_count(ctx: &mut Ctx) -> Res {
    repeat(ctx, TABLE_REPS, |_, _| {
        "SELECT count(*) FROM sb_bench1".into()
    })
}

fn ins_count_distinct_big(ctx: &mut Ctx) -> Res {
    repeat(ctx, TABLE_REPS, |_, _| {
        "SELECT count(DISTINCT id3) FROM sb_bench1".into()
    })
}

fn ins_count_on_key(ctx: &mut Ctx) -> Res {
    ins_lookup(ctx, |a, _, _| {
        format!("SELECT count(*) FROM sb_bench1 WHERE id = {a}")
    })
}

/// Sorts of the whole table, `TABLE_REPS / 2` times.
fn ins_order_by(ctx: &mut Ctx, order: &'static str) -> Res {
    repeat(ctx, TABLE_REPS / 2, |_, _| {
        format!("SELECT * FROM sb_bench1 ORDER BY {order}")
    })
}

fn ins_order_by_big(ctx: &mut Ctx) -> Res {
    ins_order_by(ctx, "dummy1, id3")
}

fn ins_order_by_big_key(ctx: &mut Ctx) -> Res {
    ins_order_by(ctx, "id, id2")
}

fn ins_order_by_big_key_desc(ctx: &mut Ctx) -> Res {
    ins_order_by(ctx, "id DESC, id2 DESC")
}

fn ins_order_by_big_key_diff(ctx: &mut Ctx) -> Res {
    ins_order_by(ctx, "id, id2 DESC")
}

fn ins_order_by_big_key_prefix(ctx: &mut Ctx) -> Res {
    ins_order_by(ctx, "id")
}

fn ins_order_by_key(ctx: &mut Ctx) -> Res {
    let (n, times) = (ins_rows(ctx), ins_lookups(ctx) / 10);
    repeat(ctx, times.max(5), |c, _| {
        let a = c.below(n / 10);
        format!(
            "SELECT * FROM sb_bench1 WHERE id BETWEEN {a} AND {} ORDER BY id, id2",
            a + 10
        )
    })
}

/// The primary-key lookup `once_prepared_select` and `prepared_select` prepare, with `?`
/// markers, and the name of its SQL-level prepared statement.
const PS_LOOKUP: &str = "SELECT * FROM sb_bench1 WHERE id = ? AND id2 = ?";
const PS_NAME: &str = "sb_ps";

/// PREPARE, EXECUTE and DEALLOCATE of a primary-key lookup, in the server's SQL
/// (the dialect's `prepare`). Where there is no SQL-level PREPARE (SQLite), or its
/// EXECUTE takes user variables only (MySQL; MariaDB before 10.2.3),
/// `once_prepared_select` prepares once through the protocol (Parse once, then
/// Bind/Execute) and `prepared_select` sends the text, which the server prepares, runs and
/// finalizes each time.
fn ins_once_prepared(ctx: &mut Ctx) -> Res {
    let (n, times) = (ins_rows(ctx), ins_lookups(ctx));
    let (sql, name) = (ctx.sql, PS_NAME);
    let (Some(prepare), Some(deallocate)) =
        (ctx.sql_prepare(name, PS_LOOKUP), ctx.sql_deallocate(name))
    else {
        let lookup = sql.placeholders(PS_LOOKUP);
        for _ in 0..times {
            let i = ctx.below(n);
            ctx.exec_prepared(
                &lookup,
                PS_LOOKUP,
                &[Param::Int(i / 10), Param::Int(i % 10)],
            )?;
        }
        return Ok(());
    };
    ctx.exec(&prepare)?;
    repeat(ctx, times, |c, _| {
        let i = c.below(n);
        ps_execute(c, i / 10, i % 10)
    })?;
    ctx.exec(&deallocate)
}

/// `EXECUTE` of the lookup, or (without SQL-level PREPARE) its text with the values in.
fn ps_execute(ctx: &Ctx, a: i64, b: i64) -> String {
    ctx.sql_execute(PS_NAME, &[a, b])
        .unwrap_or_else(|| inline(PS_LOOKUP, &[Param::Int(a), Param::Int(b)]))
}

fn ins_prepared(ctx: &mut Ctx) -> Res {
    let (n, times) = (ins_rows(ctx), ins_lookups(ctx));
    let (prepare, deallocate) = (
        ctx.sql_prepare(PS_NAME, PS_LOOKUP),
        ctx.sql_deallocate(PS_NAME),
    );
    for _ in 0..times {
        let i = ctx.below(n);
        if let Some(p) = &prepare {
            ctx.exec(p)?;
        }
        ctx.exec(&ps_execute(ctx, i / 10, i % 10))?;
        if let Some(d) = &deallocate {
            ctx.exec(d)?;
        }
    }
    Ok(())
}

fn ins_update_of_key(ctx: &mut Ctx) -> Res {
    ins_lookup(ctx, |a, b, _| {
        format!("UPDATE sb_bench1 SET id3 = id3 + 1 WHERE id = {a} AND id2 = {b}")
    })
}

fn ins_insert_key(ctx: &mut Ctx) -> Res {
    let m = keys_rows(ctx);
    let order = data::permutation(m, mix(0x1e5e_0002));
    repeat(ctx, m, |_, k| {
        let i = order[k as usize];
        let h = mix(i ^ 0x4e75);
        format!(
            "INSERT INTO sb_keys VALUES ({i}, {}, {}, {}, 's{:09}', 'name {}')",
            h % 1000,
            (h >> 10) % 100_000,
            m - i,
            (h >> 20) % 1_000_000_000,
            i % 977
        )
    })
}

fn ins_update_primary_many_keys(ctx: &mut Ctx) -> Res {
    let m = keys_rows(ctx);
    repeat(ctx, m / 4, |_, k| {
        format!("UPDATE sb_keys SET i1 = i1 + {m} WHERE i1 = {}", k * 4)
    })
}

fn ins_delete_big_many_keys(ctx: &mut Ctx) -> Res {
    let m = keys_rows(ctx);
    let chunk = (m / 100).max(1);
    repeat(ctx, (m / 2).div_ceil(chunk), |_, k| {
        let lo = k * chunk;
        format!(
            "DELETE FROM sb_keys WHERE i1 >= {lo} AND i1 < {}",
            lo + chunk
        )
    })
}

fn ins_delete_all_many_keys(ctx: &mut Ctx) -> Res {
    ctx.exec("DELETE FROM sb_keys")
}

// ---------------------------------------------------------------- select

const SELECT_OPS: &[Op] = &[
    op("select_range", sel_range),
    op("select_range_prefix", sel_range_prefix),
    op("select_distinct", sel_distinct),
    op("select_group", sel_group),
    op("count_distinct", sel_count_distinct),
    op("count_group_on_key_parts", sel_count_group_key_parts),
    op("min_max_on_key", sel_min_max_on_key),
    op("min_max", sel_min_max),
    op("select_column+column", sel_column_column),
];

const REGIONS: u64 = 10;

fn sel_rows(ctx: &Ctx) -> u64 {
    ctx.n(20_000, 200)
}

fn sel_lookups(ctx: &Ctx) -> u64 {
    ctx.n(5_000, 20)
}

/// A region letter: 'A' + r.
fn region(r: u64) -> char {
    (b'A' + r as u8) as char
}

fn select_setup(ctx: &mut Ctx) -> Res {
    ctx.create(
        "sb_select",
        "id int NOT NULL PRIMARY KEY, region char(1) NOT NULL, idn int NOT NULL, \
         rev_idn int NOT NULL, grp int NOT NULL, name varchar(20) NOT NULL",
    )?;
    let n = sel_rows(ctx);
    let rows = (0..n).map(|i| {
        vec![
            Val::I(i as i64),
            Val::S(region(i % REGIONS).to_string()),
            Val::I((i / REGIONS) as i64),
            Val::I((n - i) as i64),
            Val::I((mix(i) % 100) as i64),
            Val::S(format!("n{}", mix(i ^ 7) % 100_000)),
        ]
    });
    data::load(ctx, "sb_select", rows)?;
    ctx.exec("CREATE INDEX sb_select_ri ON sb_select (region, idn)")?;
    ctx.exec("CREATE INDEX sb_select_g ON sb_select (grp)")
}

fn select_cleanup(ctx: &mut Ctx) -> Res {
    ctx.drop_tables(&["sb_select"])
}

fn sel_range(ctx: &mut Ctx) -> Res {
    let (n, times) = (sel_rows(ctx), sel_lookups(ctx));
    let width = (n / REGIONS / 100).max(1);
    repeat(ctx, times, |c, _| {
        let a = c.below(n);
        format!(
            "SELECT * FROM sb_select WHERE id BETWEEN {a} AND {}",
            a as u64 + width
        )
    })
}

fn sel_range_prefix(ctx: &mut Ctx) -> Res {
    let (n, times) = (sel_rows(ctx), sel_lookups(ctx));
    let width = (n / REGIONS / 100).max(1);
    repeat(ctx, times, |c, _| {
        let r = region(c.below(REGIONS) as u64);
        let a = c.below(n / REGIONS);
        format!(
            "SELECT * FROM sb_select WHERE region = '{r}' AND idn BETWEEN {a} AND {}",
            a as u64 + width
        )
    })
}

fn sel_whole(ctx: &mut Ctx, sql: &'static str) -> Res {
    repeat(ctx, TABLE_REPS * 2, |_, _| sql.into())
}

fn sel_distinct(ctx: &mut Ctx) -> Res {
    sel_whole(ctx, "SELECT DISTINCT grp, region FROM sb_select")
}

fn sel_group(ctx: &mut Ctx) -> Res {
    sel_whole(
        ctx,
        "SELECT grp, count(*), sum(idn) FROM sb_select GROUP BY grp",
    )
}

fn sel_count_distinct(ctx: &mut Ctx) -> Res {
    sel_whole(ctx, "SELECT count(DISTINCT grp) FROM sb_select")
}

fn sel_count_group_key_parts(ctx: &mut Ctx) -> Res {
    sel_whole(
        ctx,
        "SELECT region, count(*) FROM sb_select GROUP BY region",
    )
}

fn sel_min_max_on_key(ctx: &mut Ctx) -> Res {
    let times = sel_lookups(ctx);
    repeat(ctx, times, |c, _| {
        let r = region(c.below(REGIONS) as u64);
        format!("SELECT min(idn), max(idn) FROM sb_select WHERE region = '{r}'")
    })
}

fn sel_min_max(ctx: &mut Ctx) -> Res {
    sel_whole(ctx, "SELECT min(rev_idn), max(rev_idn) FROM sb_select")
}

fn sel_column_column(ctx: &mut Ctx) -> Res {
    sel_whole(ctx, "SELECT id + idn, rev_idn - grp FROM sb_select")
}

// ---------------------------------------------------------------- transactions

const TRANS_OPS: &[Op] = &[
    op("begin_insert_commit", trans_insert),
    op("begin_select_commit", trans_select),
    op("begin_update_commit", trans_update),
    op("begin_insert_rollback", trans_rollback),
    op("begin_delete_commit", trans_delete),
];

/// Statements per transaction.
const TRANS_SIZE: u64 = 5;

fn trans_rows(ctx: &Ctx) -> u64 {
    ctx.n(10_000, 100).div_ceil(TRANS_SIZE) * TRANS_SIZE
}

fn trans_setup(ctx: &mut Ctx) -> Res {
    ctx.create(
        "sb_trans",
        "id int NOT NULL PRIMARY KEY, v int NOT NULL, s varchar(30) NOT NULL",
    )
}

fn trans_cleanup(ctx: &mut Ctx) -> Res {
    ctx.drop_tables(&["sb_trans"])
}

/// `count / TRANS_SIZE` transactions of `TRANS_SIZE` statements each (made from the row
/// number), ended by `end`.
fn transactions(ctx: &mut Ctx, count: u64, end: &str, sql: fn(u64) -> String) -> Res {
    if ctx.batches() {
        // One round trip per transaction (see `Ctx::batches`).
        for t in 0..count / TRANS_SIZE {
            let mut batch = String::from("BEGIN;\n");
            for k in 0..TRANS_SIZE {
                batch.push_str(&sql(t * TRANS_SIZE + k));
                batch.push_str(";\n");
            }
            batch.push_str(end);
            ctx.exec_batch(&batch, TRANS_SIZE + 2)?;
        }
        return Ok(());
    }
    for t in 0..count / TRANS_SIZE {
        ctx.exec("BEGIN")?;
        for k in 0..TRANS_SIZE {
            ctx.exec(&sql(t * TRANS_SIZE + k))?;
        }
        ctx.exec(end)?;
    }
    Ok(())
}

fn trans_insert(ctx: &mut Ctx) -> Res {
    let n = trans_rows(ctx);
    transactions(ctx, n, "COMMIT", |i| {
        format!("INSERT INTO sb_trans VALUES ({i}, {}, 'row {i}')", i % 97)
    })
}

fn trans_select(ctx: &mut Ctx) -> Res {
    let n = trans_rows(ctx);
    transactions(ctx, n, "COMMIT", |i| {
        format!("SELECT v, s FROM sb_trans WHERE id = {}", mix(i) % 10_000)
    })
}

fn trans_update(ctx: &mut Ctx) -> Res {
    let n = trans_rows(ctx);
    transactions(ctx, n, "COMMIT", |i| {
        format!("UPDATE sb_trans SET v = v + 1 WHERE id = {i}")
    })
}

fn trans_rollback(ctx: &mut Ctx) -> Res {
    let n = trans_rows(ctx);
    transactions(ctx, n / 2, "ROLLBACK", |i| {
        format!(
            "INSERT INTO sb_trans VALUES ({}, 0, 'rolled back')",
            1_000_000_000 + i
        )
    })
}

fn trans_delete(ctx: &mut Ctx) -> Res {
    let n = trans_rows(ctx);
    transactions(ctx, n, "COMMIT", |i| {
        format!("DELETE FROM sb_trans WHERE id = {i}")
    })
}

// ---------------------------------------------------------------- wisconsin

/// The Wisconsin queries (numbered as published). The first half runs on relations
/// without indexes; then (untimed) unique indexes are built on `unique2` (clustered: the
/// rows are stored in `unique2` order, and InnoDB's hidden key follows the load order)
/// and on `unique1` (non-clustered), and the indexed queries run. Q1-Q7 store their
/// result in a table (emptied after each query, inside the clock) as the benchmark did;
/// Q8 and the rest send it to the client. Each query runs `WISC_REPS` times with new
/// constants.
const WISC_OPS: &[Op] = &[
    op("q01_select_1pct_no_index", q01),
    op("q02_select_10pct_no_index", q02),
    op("q09_join_AselB_no_index", q09),
    op("q10_join_ABprime_no_index", q10),
    op("q11_join_CselAselB_no_index", q11),
    op("q18_project_1pct", q18),
    op("q19_project_100pct", q19),
    op("q20_min_no_index", q20),
    op("q21_min_grouped_no_index", q21),
    op("q22_sum_grouped_no_index", q22),
    op("q26_append_1_no_index", q26),
    op("q27_delete_1_no_index", q27),
    op("q28_update_1_no_index", q28),
    Op {
        name: "q03_select_1pct_clustered",
        prep: Some(wisc_indexes),
        run: q03,
    },
    op("q04_select_10pct_clustered", q04),
    op("q05_select_1pct_nonclustered", q05),
    op("q06_select_10pct_nonclustered", q06),
    op("q07_select_1_clustered", q07),
    op("q08_select_1pct_clustered_to_client", q08),
    op("q12_join_AselB_clustered", q12),
    op("q13_join_ABprime_clustered", q13),
    op("q14_join_CselAselB_clustered", q14),
    op("q15_join_AselB_nonclustered", q15),
    op("q16_join_ABprime_nonclustered", q16),
    op("q17_join_CselAselB_nonclustered", q17),
    op("q23_min_index", q20),
    op("q24_min_grouped_index", q21),
    op("q25_sum_grouped_index", q22),
    op("q29_append_1_index", q29),
    op("q30_delete_1_index", q30),
    op("q31_update_key_index", q31),
    op("q32_update_nonkey_index", q32),
];

const WISC_TABLES: &[&str] = &["sb_tenk1", "sb_tenk2", "sb_onek", "sb_bprime", "sb_wres"];
const WISC_REPS: u64 = 5;

/// Rows of tenk1 and tenk2.
fn tenk(ctx: &Ctx) -> u64 {
    ctx.n(10_000, 100)
}

fn onek(ctx: &Ctx) -> u64 {
    ctx.n(1_000, 100)
}

fn wisc_setup(ctx: &mut Ctx) -> Res {
    let (n, o) = (tenk(ctx), onek(ctx));
    for (t, rows, seed) in [("sb_tenk1", n, 1), ("sb_tenk2", n, 2), ("sb_onek", o, 3)] {
        ctx.create(t, WISCONSIN_COLUMNS)?;
        let data = data::wisconsin_rows(rows, mix(0x3c0_0000 + seed));
        data::load(ctx, t, data.iter().map(|r| r.vals()))?;
    }
    ctx.create("sb_bprime", WISCONSIN_COLUMNS)?;
    ctx.exec(&format!(
        "INSERT INTO sb_bprime SELECT * FROM sb_tenk2 WHERE unique2 < {}",
        n / 10
    ))?;
    ctx.create("sb_wres", WISCONSIN_COLUMNS)
}

fn wisc_cleanup(ctx: &mut Ctx) -> Res {
    ctx.drop_tables(WISC_TABLES)
}

fn wisc_indexes(ctx: &mut Ctx) -> Res {
    for t in ["sb_tenk1", "sb_tenk2", "sb_onek", "sb_bprime"] {
        ctx.exec(&format!("CREATE UNIQUE INDEX {t}_u2 ON {t} (unique2)"))?;
        ctx.exec(&format!("CREATE UNIQUE INDEX {t}_u1 ON {t} (unique1)"))?;
    }
    Ok(())
}

/// `WISC_REPS` queries made by `sql` from (the relation size, a random start for a
/// range of `width` rows, the repetition).
fn wisc(ctx: &mut Ctx, width: u64, sql: impl Fn(u64, u64, u64) -> String) -> Res {
    let n = tenk(ctx);
    repeat(ctx, WISC_REPS, |c, k| {
        let a = c.below(n - width.min(n) + 1) as u64;
        sql(n, a, k)
    })
}

/// A selection of `pct` percent of tenk1 on `col`, into the result table.
fn wisc_select_into(ctx: &mut Ctx, col: &str, pct: u64) -> Res {
    let width = (tenk(ctx) * pct / 100).max(1);
    for _ in 0..WISC_REPS {
        let a = ctx.below(tenk(ctx) - width + 1);
        ctx.exec(&format!(
            "INSERT INTO sb_wres SELECT * FROM sb_tenk1 WHERE {col} BETWEEN {a} AND {}",
            a as u64 + width - 1
        ))?;
        ctx.exec("DELETE FROM sb_wres")?;
    }
    Ok(())
}

fn q01(ctx: &mut Ctx) -> Res {
    wisc_select_into(ctx, "unique2", 1)
}

fn q02(ctx: &mut Ctx) -> Res {
    wisc_select_into(ctx, "unique2", 10)
}

fn q03(ctx: &mut Ctx) -> Res {
    wisc_select_into(ctx, "unique2", 1)
}

fn q04(ctx: &mut Ctx) -> Res {
    wisc_select_into(ctx, "unique2", 10)
}

fn q05(ctx: &mut Ctx) -> Res {
    wisc_select_into(ctx, "unique1", 1)
}

fn q06(ctx: &mut Ctx) -> Res {
    wisc_select_into(ctx, "unique1", 10)
}

fn q07(ctx: &mut Ctx) -> Res {
    for _ in 0..WISC_REPS {
        let a = ctx.below(tenk(ctx));
        ctx.exec(&format!(
            "INSERT INTO sb_wres SELECT * FROM sb_tenk1 WHERE unique2 = {a}"
        ))?;
        ctx.exec("DELETE FROM sb_wres")?;
    }
    Ok(())
}

fn q08(ctx: &mut Ctx) -> Res {
    let w = (tenk(ctx) / 100).max(1);
    wisc(ctx, w, |_, a, _| {
        format!(
            "SELECT * FROM sb_tenk1 WHERE unique2 BETWEEN {a} AND {}",
            a + w - 1
        )
    })
}

/// JoinAselB: tenk1 joined with a 10% selection of tenk2 on `col`.
fn join_asel_b(ctx: &mut Ctx, col: &'static str) -> Res {
    let w = (tenk(ctx) / 10).max(1);
    wisc(ctx, w, move |_, a, _| {
        format!(
            "SELECT * FROM sb_tenk1 a, sb_tenk2 b WHERE a.{col} = b.{col} \
             AND b.{col} BETWEEN {a} AND {}",
            a + w - 1
        )
    })
}

/// JoinABprime: tenk1 joined with Bprime (a 10% copy of tenk2) on `col`.
fn join_ab_prime(ctx: &mut Ctx, col: &'static str) -> Res {
    wisc(ctx, 0, move |_, _, _| {
        format!("SELECT * FROM sb_tenk1 a, sb_bprime b WHERE a.{col} = b.{col}")
    })
}

/// JoinCselAselB: onek joined with tenk1 and tenk2, both selected to 10%, on `col`.
fn join_csel_asel_b(ctx: &mut Ctx, col: &'static str) -> Res {
    let w = (tenk(ctx) / 10).max(1);
    wisc(ctx, w, move |_, a, _| {
        let z = a + w - 1;
        format!(
            "SELECT * FROM sb_onek c, sb_tenk1 a, sb_tenk2 b \
             WHERE c.{col} = a.{col} AND a.{col} = b.{col} \
             AND a.{col} BETWEEN {a} AND {z} AND b.{col} BETWEEN {a} AND {z}"
        )
    })
}

fn q09(ctx: &mut Ctx) -> Res {
    join_asel_b(ctx, "unique2")
}

fn q10(ctx: &mut Ctx) -> Res {
    join_ab_prime(ctx, "unique2")
}

fn q11(ctx: &mut Ctx) -> Res {
    join_csel_asel_b(ctx, "unique2")
}

fn q12(ctx: &mut Ctx) -> Res {
    join_asel_b(ctx, "unique2")
}

fn q13(ctx: &mut Ctx) -> Res {
    join_ab_prime(ctx, "unique2")
}

fn q14(ctx: &mut Ctx) -> Res {
    join_csel_asel_b(ctx, "unique2")
}

fn q15(ctx: &mut Ctx) -> Res {
    join_asel_b(ctx, "unique1")
}

fn q16(ctx: &mut Ctx) -> Res {
    join_ab_prime(ctx, "unique1")
}

fn q17(ctx: &mut Ctx) -> Res {
    join_csel_asel_b(ctx, "unique1")
}

fn q18(ctx: &mut Ctx) -> Res {
    wisc(ctx, 0, |_, _, _| {
        "SELECT DISTINCT two, four, ten, twenty, onepercent, string4 FROM sb_tenk1".into()
    })
}

fn q19(ctx: &mut Ctx) -> Res {
    wisc(ctx, 0, |_, _, _| {
        "SELECT DISTINCT two, four, ten, twenty, onepercent, tenpercent, twentypercent, \
         fiftypercent, unique3, evenonepercent, oddonepercent, stringu1, stringu2, string4 \
         FROM sb_tenk1"
            .into()
    })
}

/// Q20 and Q23: the minimum of unique2 (scanned, then from the index).
fn q20(ctx: &mut Ctx) -> Res {
    wisc(ctx, 0, |_, _, _| "SELECT min(unique2) FROM sb_tenk1".into())
}

/// Q21 and Q24: min over 100 partitions.
fn q21(ctx: &mut Ctx) -> Res {
    wisc(ctx, 0, |_, _, _| {
        "SELECT onepercent, min(unique3) FROM sb_tenk1 GROUP BY onepercent".into()
    })
}

/// Q22 and Q25: sum over 100 partitions.
fn q22(ctx: &mut Ctx) -> Res {
    wisc(ctx, 0, |_, _, _| {
        "SELECT onepercent, sum(unique3) FROM sb_tenk1 GROUP BY onepercent".into()
    })
}

/// A new tenk1 row with keys `v` (beyond the relation's values).
fn wisc_append(sql: &dyn SqlDialect, v: u64) -> String {
    let mut r = data::wisconsin_rows(1, 0).remove(0);
    r.unique1 = v as i64;
    r.unique2 = v as i64;
    r.unique3 = v as i64;
    r.stringu1 = data::wisconsin_string(v);
    r.stringu2 = data::wisconsin_string(v);
    format!(
        "INSERT INTO sb_tenk1 VALUES {}",
        data::sql_tuple(sql, &r.vals())
    )
}

fn q26(ctx: &mut Ctx) -> Res {
    let sql = ctx.sql;
    wisc(ctx, 0, |n, _, k| wisc_append(sql, n + 10 + k))
}

fn q27(ctx: &mut Ctx) -> Res {
    wisc(ctx, 0, |n, _, k| {
        format!("DELETE FROM sb_tenk1 WHERE unique2 = {}", n + 10 + k)
    })
}

/// Modifies the keys of rows at the end of the relation (the ranges the selections and
/// joins use lose at most a few rows).
fn q28(ctx: &mut Ctx) -> Res {
    wisc(ctx, 0, |n, _, k| {
        format!(
            "UPDATE sb_tenk1 SET unique2 = {} WHERE unique2 = {}",
            n + 100 + k,
            n - 1 - k
        )
    })
}

fn q29(ctx: &mut Ctx) -> Res {
    let sql = ctx.sql;
    wisc(ctx, 0, |n, _, k| wisc_append(sql, n + 20 + k))
}

fn q30(ctx: &mut Ctx) -> Res {
    wisc(ctx, 0, |n, _, k| {
        format!("DELETE FROM sb_tenk1 WHERE unique2 = {}", n + 20 + k)
    })
}

fn q31(ctx: &mut Ctx) -> Res {
    wisc(ctx, 0, |n, _, k| {
        format!(
            "UPDATE sb_tenk1 SET unique2 = {} WHERE unique2 = {}",
            n + 200 + k,
            n - 1 - WISC_REPS - k
        )
    })
}

fn q32(ctx: &mut Ctx) -> Res {
    wisc(ctx, 0, |_, a, _| {
        format!("UPDATE sb_tenk1 SET unique3 = unique3 + 1 WHERE unique1 = {a}")
    })
}
