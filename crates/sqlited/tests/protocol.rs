//! The wire protocol byte by byte, with a raw client: startup, command tags, the exact
//! message sequence bakeoff's pgwire client sends, row limits and portals, error
//! recovery in both protocols, transaction status, the unix socket, and clients that
//! misbehave or vanish.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::os::unix::net::UnixStream;

use common::{cstr, kinds, rows, start, texts, Raw};

fn connect(port: u16) -> Raw<TcpStream> {
    let (raw, greeting) = Raw::connect(TcpStream::connect(("127.0.0.1", port)).unwrap());
    assert_eq!(greeting[0].kind, b'R');
    assert_eq!(greeting.last().unwrap().text(), "I");
    raw
}

fn some(s: &str) -> Option<&[u8]> {
    Some(s.as_bytes())
}

#[test]
fn startup_refuses_ssl_and_reports_parameters() {
    let server = start(&[]);
    let mut s = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
    s.write_all(&[0, 0, 0, 8, 4, 210, 22, 47]).unwrap(); // SSLRequest
    let mut n = [0u8; 1];
    s.read_exact(&mut n).unwrap();
    assert_eq!(&n, b"N");
    let (_, greeting) = Raw::connect(s);
    assert_eq!(kinds(&greeting), "RSSSSSSSKZ");
    let status: Vec<String> = greeting
        .iter()
        .filter(|m| m.kind == b'S')
        .map(|m| String::from_utf8_lossy(&m.body).replace('\0', "="))
        .collect();
    assert!(
        status[0].starts_with("server_version=15.0 (SQLite 3."),
        "{status:?}"
    );
    assert!(
        status.contains(&"client_encoding=UTF8=".to_string()),
        "{status:?}"
    );
}

#[test]
fn simple_queries_give_postgresql_tags_rows_and_nulls() {
    let server = start(&[]);
    let mut c = connect(server.port);
    let r = c.query(
        "CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT); \
         INSERT INTO t VALUES (1, 'x'), (2, NULL), (3, 'z'); \
         UPDATE t SET b = 'y' WHERE a = 3; DELETE FROM t WHERE a = 1; \
         SELECT a, b FROM t ORDER BY a; CREATE INDEX i ON t(b); DROP INDEX i",
    );
    assert_eq!(kinds(&r), "CCCCTDDCCCZ");
    assert_eq!(
        texts(&r, b'C'),
        [
            "CREATE TABLE",
            "INSERT 0 3",
            "UPDATE 1",
            "DELETE 1",
            "SELECT 2",
            "CREATE INDEX",
            "DROP INDEX"
        ]
    );
    assert_eq!(
        rows(&r),
        [
            vec![Some("2".to_string()), None],
            vec![Some("3".to_string()), Some("y".to_string())]
        ]
    );
    assert_eq!(kinds(&c.query("")), "IZ");
    assert_eq!(kinds(&c.query(" -- nothing\n;")), "IZ");
    let r = c.query("SELECT 1 WHERE 0");
    assert_eq!(
        (kinds(&r).as_str(), texts(&r, b'C')[0].as_str()),
        ("TCZ", "SELECT 0")
    );
}

#[test]
fn an_error_stops_the_query_string_and_the_connection_stays_usable() {
    let server = start(&[]);
    let mut c = connect(server.port);
    c.query("CREATE TABLE t(a INTEGER PRIMARY KEY)");
    let r = c.query("INSERT INTO t VALUES (1); INSERT INTO t VALUES (1); INSERT INTO t VALUES (2)");
    assert_eq!(kinds(&r), "CEZ");
    assert_eq!(r[1].text(), "23505");
    assert_eq!(r[1].error_field(b'S'), "ERROR");
    assert!(r[1].error_field(b'M').contains("UNIQUE"), "{r:?}");
    assert_eq!(c.query("SELEC 1")[0].text(), "42000");
    assert_eq!(
        rows(&c.query("SELECT count(*) FROM t")),
        [vec![Some("1".to_string())]]
    );
}

#[test]
fn ready_for_query_follows_the_transaction() {
    let server = start(&[]);
    let mut c = connect(server.port);
    c.query("CREATE TABLE t(a)");
    let r = c.query("BEGIN");
    assert_eq!(
        (texts(&r, b'C')[0].as_str(), r[1].text().as_str()),
        ("BEGIN", "T")
    );
    assert_eq!(c.query("INSERT INTO t VALUES (1)")[1].text(), "T");
    let r = c.query("COMMIT");
    assert_eq!(
        (texts(&r, b'C')[0].as_str(), r[1].text().as_str()),
        ("COMMIT", "I")
    );
    c.parse("", "BEGIN", &[]);
    c.bind("", "", &[], &[]);
    c.execute("", 0);
    assert_eq!(c.sync().last().unwrap().text(), "T");
    assert_eq!(c.query("ROLLBACK")[1].text(), "I");
}

/// What crates/workloads/src/oltp/pgwire.rs sends: Parse (named, no types) only the
/// first time, Bind with binary int4 and text parameters and text results, Execute of
/// all rows and Sync, in one write.
#[test]
fn bakeoffs_pgwire_sequence_works() {
    let server = start(&[]);
    let mut c = connect(server.port);
    c.query("CREATE TABLE t(id INTEGER PRIMARY KEY, k INTEGER, c TEXT)");
    c.query("INSERT INTO t VALUES (1, 10, 'a'), (2, 20, 'b')");
    let sql = "UPDATE t SET c = $2 WHERE id = $1";
    for (round, id) in [1i32, 2].into_iter().enumerate() {
        if round == 0 {
            c.parse("s0", sql, &[]);
        }
        c.bind(
            "",
            "s0",
            &[(1, Some(&id.to_be_bytes())), (0, some("new"))],
            &[],
        );
        c.execute("", 0);
        let r = c.sync();
        let expect = if round == 0 { "12CZ" } else { "2CZ" };
        assert_eq!(kinds(&r), expect, "{r:?}");
        assert_eq!(texts(&r, b'C'), ["UPDATE 1"]);
    }
    c.parse("s1", "SELECT c, k FROM t WHERE id = $1", &[]);
    c.bind("", "s1", &[(1, Some(&2i32.to_be_bytes()))], &[0]);
    c.execute("", 0);
    let r = c.sync();
    assert_eq!(kinds(&r), "12DCZ");
    assert_eq!(
        rows(&r),
        [vec![Some("new".to_string()), Some("20".to_string())]]
    );
    assert_eq!(texts(&r, b'C'), ["SELECT 1"]);
}

#[test]
fn parameters_bind_by_dollar_number_and_by_position() {
    let server = start(&[]);
    let mut c = connect(server.port);
    c.parse(
        "a",
        "SELECT $2 || '-' || $1, typeof($1), $3 IS NULL",
        &[23, 0, 0],
    );
    c.bind("", "a", &[(0, some("7")), (0, some("x")), (0, None)], &[]);
    c.execute("", 0);
    let r = c.sync();
    assert_eq!(
        rows(&r),
        [vec![
            Some("x-7".into()),
            Some("integer".into()),
            Some("1".into())
        ]]
    );
    c.parse("b", "SELECT ? - ?", &[]);
    c.bind(
        "",
        "b",
        &[
            (1, Some(&10i64.to_be_bytes())),
            (1, Some(&3i16.to_be_bytes())),
        ],
        &[],
    );
    c.execute("", 0);
    assert_eq!(rows(&c.sync()), [vec![Some("7".into())]]);
    c.parse("c", "SELECT $1", &[]);
    c.describe(b'S', "c");
    c.bind("", "c", &[(1, some("abcd"))], &[1]);
    c.describe(b'P', "");
    c.execute("", 0);
    let r = c.sync();
    assert_eq!(kinds(&r), "1tT2TDCZ");
    assert_eq!(r[1].body, [0, 1, 0, 0, 0, 25]); // one parameter, text
    assert_eq!(rows(&r), [vec![Some("abcd".into())]]);
}

#[test]
fn execute_with_a_row_limit_suspends_the_portal() {
    let server = start(&[]);
    let mut c = connect(server.port);
    c.parse("", "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 5) SELECT i FROM n", &[]);
    c.bind("p", "", &[], &[]);
    c.execute("p", 2);
    c.execute("p", 2);
    c.execute("p", 0);
    c.execute("p", 0);
    let r = c.sync();
    assert_eq!(kinds(&r), "12DDsDDsDCCZ");
    assert_eq!(texts(&r, b'C'), ["SELECT 1", "SELECT 0"]);
    let r = c.query("SELECT 1");
    assert_eq!(kinds(&r), "TDCZ");
}

#[test]
fn an_extended_error_discards_messages_until_sync() {
    let server = start(&[]);
    let mut c = connect(server.port);
    c.parse("", "SELECT nope FROM nowhere", &[]);
    c.bind("", "", &[], &[]);
    c.execute("", 0);
    let r = c.sync();
    assert_eq!(kinds(&r), "EZ");
    assert_eq!(r[0].text(), "42000");
    assert!(r[0].error_field(b'M').contains("no such table"), "{r:?}");
    c.parse("", "SELECT 1; SELECT 2", &[]);
    assert_eq!(c.sync()[0].text(), "42601");
    c.bind("", "missing", &[], &[]);
    assert_eq!(c.sync()[0].text(), "26000");
    c.parse("", "SELECT $1", &[]);
    c.bind("", "", &[], &[]);
    assert_eq!(c.sync()[1].text(), "08P01");
    c.parse("x", "SELECT 1", &[]);
    c.put(b'C', b"Sx\0");
    c.parse("x", "SELECT 2", &[]);
    c.bind("", "x", &[], &[]);
    c.execute("", 0);
    assert_eq!(kinds(&c.sync()), "1312DCZ");
}

#[test]
fn a_bad_message_closes_only_that_connection() {
    let server = start(&[]);
    let mut c = connect(server.port);
    c.put(b'?', b"junk");
    c.flush();
    let m = c.recv().unwrap();
    assert_eq!(
        (m.text().as_str(), m.error_field(b'S').as_str()),
        ("08P01", "FATAL")
    );
    assert!(c.recv().is_none());
    // A client that leaves mid-message, and one that leaves mid-result.
    let mut gone = connect(server.port);
    gone.s.write_all(&[b'Q', 0, 0, 1, 0, b'S']).unwrap();
    drop(gone);
    let mut gone = connect(server.port);
    let mut q = Vec::new();
    cstr(&mut q, "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000000) SELECT i, 'padding padding' FROM n");
    gone.put(b'Q', &q);
    gone.flush();
    drop(gone);
    let mut c = connect(server.port);
    assert_eq!(rows(&c.query("SELECT 42")), [vec![Some("42".into())]]);
}

#[test]
fn the_unix_socket_serves_too_and_replaces_a_stale_one() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(".s.PGSQL.5432");
    drop(std::os::unix::net::UnixListener::bind(&path).unwrap()); // stale
    let mut config = common::config(&dir, &[]);
    config.socket = Some(path.clone());
    let server = common::start_with(dir, config);
    let (mut c, _) = Raw::connect(UnixStream::connect(&path).unwrap());
    assert_eq!(rows(&c.query("SELECT 'unix'")), [vec![Some("unix".into())]]);
    drop(server);
}

/// Issue 53: `SET statement_timeout` (PostgreSQL's spelling) stops a statement that runs
/// past it, in both protocols, with PostgreSQL's 57014; the connection answers the next
/// query at once; 0 turns the timeout off.
#[test]
fn a_statement_past_its_timeout_is_stopped_and_the_connection_goes_on() {
    use std::time::{Duration, Instant};
    let server = start(&[]);
    let mut c = connect(server.port);
    assert_eq!(texts(&c.query("SET statement_timeout = 50"), b'C'), ["SET"]);
    // Counts for ever without the timeout.
    let endless = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) \
                   SELECT count(*) FROM n";
    let started = Instant::now();
    let r = c.query(endless);
    let took = started.elapsed();
    // RowDescription goes first, as in PostgreSQL; then the error.
    assert_eq!(kinds(&r), "TEZ");
    assert_eq!(r[1].text(), "57014");
    assert!(
        r[1].error_field(b'M').contains("statement timeout"),
        "{r:?}"
    );
    assert!(
        took >= Duration::from_millis(50) && took < Duration::from_secs(10),
        "{took:?}"
    );
    let started = Instant::now();
    assert_eq!(rows(&c.query("SELECT 1")), [vec![Some("1".to_string())]]);
    assert!(started.elapsed() < Duration::from_secs(2));
    // The extended protocol: Execute is stopped too.
    c.parse("", endless, &[]);
    c.bind("", "", &[], &[]);
    c.execute("", 0);
    let r = c.sync();
    assert_eq!(kinds(&r), "12EZ");
    assert_eq!(r[2].text(), "57014");
    // Off again: a statement runs to its end.
    let r = c.query(
        "SET statement_timeout TO 0; WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL \
         SELECT i + 1 FROM n WHERE i < 200000) SELECT count(*) FROM n",
    );
    assert_eq!(rows(&r), [vec![Some("200000".to_string())]]);
}
