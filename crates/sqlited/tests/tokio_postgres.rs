//! tokio-postgres against the server: simple_query, prepared queries with typed and
//! untyped parameters (binary parameters and binary result formats), SQLSTATEs, a
//! transaction, concurrent writers waiting on each other's locks, and per-connection
//! pragmas.

mod common;

use std::time::Duration;

use tokio_postgres::error::SqlState;
use tokio_postgres::types::Type;
use tokio_postgres::{Client, NoTls, SimpleQueryMessage};

async fn connect(port: u16) -> Client {
    let url = format!("host=127.0.0.1 port={port} user=bakeoff dbname=main");
    let (client, connection) = tokio_postgres::connect(&url, NoTls).await.unwrap();
    tokio::spawn(connection);
    client
}

fn values(msgs: &[SimpleQueryMessage]) -> Vec<Vec<Option<String>>> {
    msgs.iter()
        .filter_map(|m| match m {
            SimpleQueryMessage::Row(r) => {
                Some((0..r.len()).map(|i| r.get(i).map(str::to_string)).collect())
            }
            _ => None,
        })
        .collect()
}

fn counts(msgs: &[SimpleQueryMessage]) -> Vec<u64> {
    msgs.iter()
        .filter_map(|m| match m {
            SimpleQueryMessage::CommandComplete(n) => Some(*n),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn simple_query_runs_several_statements_with_nulls() {
    let server = common::start(&[]);
    let c = connect(server.port).await;
    let r = c
        .simple_query(
            "CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT); \
             INSERT INTO t VALUES (1, 'one'), (2, NULL); \
             SELECT a, b FROM t ORDER BY a",
        )
        .await
        .unwrap();
    assert_eq!(counts(&r), [0, 2, 2]);
    assert_eq!(
        values(&r),
        [
            vec![Some("1".to_string()), Some("one".to_string())],
            vec![Some("2".to_string()), None]
        ]
    );
}

#[tokio::test]
async fn prepared_queries_take_integer_and_text_parameters() {
    let server = common::start(&[]);
    let c = connect(server.port).await;
    c.batch_execute("CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT)")
        .await
        .unwrap();
    // $2 before $1; i32 goes as binary int4, &str as text.
    let insert = c
        .prepare_typed(
            "INSERT INTO t(b, a) VALUES ($2, $1)",
            &[Type::INT4, Type::TEXT],
        )
        .await
        .unwrap();
    for (a, b) in [(1, "x"), (2, "y"), (3, "abcd")] {
        assert_eq!(c.execute(&insert, &[&a, &b]).await.unwrap(), 1);
    }
    let rows = c
        .query("SELECT b, a * 10 FROM t WHERE a >= $1 ORDER BY a", &[&"2"])
        .await
        .unwrap();
    let got: Vec<(String, String)> = rows.iter().map(|r| (r.get(0), r.get(1))).collect();
    assert_eq!(
        got,
        [("y".into(), "20".into()), ("abcd".into(), "30".into())]
    );
    let row = c
        .query_one("SELECT $2 || '/' || $1, $3", &[&"p1", &"p2", &None::<&str>])
        .await
        .unwrap();
    assert_eq!(row.get::<_, String>(0), "p2/p1");
    assert_eq!(row.get::<_, Option<String>>(1), None);
    let typed = c
        .query_typed("SELECT $1 + 1", &[(&41i64, Type::INT8)])
        .await
        .unwrap();
    assert_eq!(typed[0].get::<_, String>(0), "42");
}

#[tokio::test]
async fn a_duplicate_key_is_23505_and_the_connection_stays_usable() {
    let server = common::start(&[]);
    let c = connect(server.port).await;
    c.batch_execute("CREATE TABLE t(a INTEGER PRIMARY KEY); INSERT INTO t VALUES (1)")
        .await
        .unwrap();
    let e = c
        .simple_query("INSERT INTO t VALUES (1)")
        .await
        .unwrap_err();
    assert_eq!(e.code(), Some(&SqlState::UNIQUE_VIOLATION), "{e}");
    let insert = c
        .prepare_typed("INSERT INTO t VALUES ($1)", &[Type::INT4])
        .await
        .unwrap();
    let e = c.execute(&insert, &[&1i32]).await.unwrap_err();
    assert_eq!(e.code(), Some(&SqlState::UNIQUE_VIOLATION), "{e}");
    assert_eq!(c.execute(&insert, &[&2i32]).await.unwrap(), 1);
    let e = c.query("SELECT * FROM missing", &[]).await.unwrap_err();
    assert_eq!(e.code().map(SqlState::code), Some("42000"), "{e}");
    let n: String = c
        .query_one("SELECT count(*) FROM t", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(n, "2");
}

#[tokio::test]
async fn a_transaction_commits_and_rolls_back() {
    let server = common::start(&[]);
    let mut c = connect(server.port).await;
    c.batch_execute("CREATE TABLE t(a)").await.unwrap();
    let tx = c.transaction().await.unwrap();
    tx.execute("INSERT INTO t VALUES ('kept')", &[])
        .await
        .unwrap();
    tx.commit().await.unwrap();
    let tx = c.transaction().await.unwrap();
    tx.execute("INSERT INTO t VALUES ('dropped')", &[])
        .await
        .unwrap();
    tx.rollback().await.unwrap();
    let r = c.simple_query("SELECT a FROM t").await.unwrap();
    assert_eq!(values(&r), [vec![Some("kept".to_string())]]);
}

#[tokio::test]
async fn concurrent_writers_wait_for_each_other() {
    let server = common::start(&[]);
    let a = connect(server.port).await;
    let b = connect(server.port).await;
    a.batch_execute("CREATE TABLE t(who TEXT, i INTEGER)")
        .await
        .unwrap();
    // b's insert blocks in SQLite's busy handler until a commits.
    a.batch_execute("BEGIN IMMEDIATE; INSERT INTO t VALUES ('a', 0)")
        .await
        .unwrap();
    let blocked = tokio::spawn(async move {
        b.execute("INSERT INTO t VALUES ('b', 0)", &[])
            .await
            .unwrap();
        b
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!blocked.is_finished());
    a.batch_execute("COMMIT").await.unwrap();
    let b = blocked.await.unwrap();
    // Then both insert at once, many times.
    let insert = |c: Client, who: &'static str| async move {
        let st = c
            .prepare_typed("INSERT INTO t VALUES ($1, $2)", &[Type::TEXT, Type::INT4])
            .await
            .unwrap();
        for i in 1..=100i32 {
            c.execute(&st, &[&who, &i]).await.unwrap();
        }
        c
    };
    let (a, _) = tokio::join!(insert(a, "a"), insert(b, "b"));
    let r = a
        .simple_query("SELECT who, count(*) FROM t GROUP BY who ORDER BY who")
        .await
        .unwrap();
    assert_eq!(
        values(&r),
        [
            vec![Some("a".to_string()), Some("101".to_string())],
            vec![Some("b".to_string()), Some("101".to_string())]
        ]
    );
}

#[tokio::test]
async fn pragmas_apply_to_every_connection() {
    let server = common::start(&[("case_sensitive_like", "1"), ("cache_size", "-1234")]);
    for _ in 0..2 {
        let c = connect(server.port).await;
        let r = c
            .simple_query("SELECT 'a' LIKE 'A'; PRAGMA cache_size")
            .await
            .unwrap();
        assert_eq!(
            values(&r),
            [vec![Some("0".to_string())], vec![Some("-1234".to_string())]]
        );
    }
    let plain = common::start(&[]);
    let c = connect(plain.port).await;
    let r = c.simple_query("SELECT 'a' LIKE 'A'").await.unwrap();
    assert_eq!(values(&r), [vec![Some("1".to_string())]]);
}

/// `--stmt-stats`: every statement text's calls, time and the library's counters,
/// summed over connections; a full scan counts its steps, an index lookup none; the
/// reads themselves are not counted; without the flag, SHOW says how to get them.
#[tokio::test]
async fn statement_counters_sum_over_connections_and_see_full_scans() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = common::config(&dir, &[]);
    config.stmt_stats = true;
    let server = common::start_with(dir, config);
    let a = connect(server.port).await;
    a.simple_query(
        "CREATE TABLE t(id INTEGER PRIMARY KEY, k INT); \
         WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 100) \
         INSERT INTO t SELECT x, x FROM c",
    )
    .await
    .unwrap();
    let b = connect(server.port).await;
    let by_key = "SELECT k FROM t WHERE id = $1";
    let scan = "SELECT id FROM t WHERE k = $1";
    for c in [&a, &b] {
        let (pk, full) = (
            c.prepare(by_key).await.unwrap(),
            c.prepare(scan).await.unwrap(),
        );
        for i in 1..=5 {
            let v = i.to_string();
            c.query(&pk, &[&v]).await.unwrap();
            c.query(&full, &[&v]).await.unwrap();
        }
    }
    let rows = values(&a.simple_query("SHOW bakeoff.statements").await.unwrap());
    let cols = [
        "digest",
        "text",
        "calls",
        "us",
        "fullscan_step",
        "sort",
        "autoindex",
    ];
    let got = |text: &str, col: &str| -> f64 {
        let i = cols.iter().position(|c| *c == col).unwrap();
        let row = rows
            .iter()
            .find(|r| r[1].as_deref() == Some(text))
            .unwrap_or_else(|| panic!("no {text} in {rows:?}"));
        row[i].as_deref().unwrap().parse().unwrap()
    };
    assert_eq!(got(by_key, "calls"), 10.0, "{rows:?}");
    assert_eq!(got(scan, "calls"), 10.0);
    assert_eq!(got(by_key, "fullscan_step"), 0.0);
    assert!(got(scan, "fullscan_step") >= 10.0 * 99.0, "{rows:?}");
    assert!(got(scan, "us") > 0.0);
    assert!(
        !format!("{rows:?}").contains("SHOW"),
        "the reads are not counted"
    );
    let started = values(&b.simple_query("show BAKEOFF.started;").await.unwrap());
    assert!(
        started[0][0].as_deref().unwrap().contains(' '),
        "{started:?}"
    );

    let plain = common::start(&[]);
    let c = connect(plain.port).await;
    let e = c.simple_query("SHOW bakeoff.statements").await.unwrap_err();
    assert!(format!("{e:?}").contains("--stmt-stats"), "{e:?}");
}
