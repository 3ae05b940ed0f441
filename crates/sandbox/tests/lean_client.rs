//! bakeoff's lean SQL client (bakeoff-sqlclient: the sandbox's readiness check and every
//! SQL workload) against the general drivers, mysql_async and tokio-postgres, on real
//! MariaDB and PostgreSQL sandboxes: the same rows for the same queries, and a wrong
//! password refused by both.

use bakeoff_sandbox::{init_data, DataSource, Sandbox, SandboxSpec, TargetKind};
use bakeoff_sqlclient::{Client, Db, Dialect};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Duration;

const QUERIES: &[&str] = &[
    "SELECT 1, 'it''s', NULL, 2.5",
    "SELECT id, name FROM t ORDER BY id",
    "SELECT count(*), sum(id) FROM t",
];

fn sandbox(kind: TargetKind, binary: &str, root: &Path) -> Sandbox {
    let pristine = root.join("pristine");
    init_data(kind, Path::new(binary), &pristine).expect("init_data");
    let mut s = SandboxSpec::new("lean-client", kind, binary, root.join("sandboxes"));
    s.ready_timeout = Duration::from_secs(60);
    s.stop_grace = Duration::from_secs(30);
    s.data = Some(DataSource::Copy(pristine));
    Sandbox::start(&s).expect("start: the lean readiness check must see it ready")
}

fn db(sb: &Sandbox, dialect: Dialect) -> Db {
    sb.login().expect("login").db(dialect, sb.addr(), None)
}

/// Every query's rows as text through the lean client, after making table `t`.
fn lean_rows(db: &Db) -> Vec<Vec<Vec<Option<String>>>> {
    let rt = bakeoff_sqlclient::driver::runtime().unwrap();
    rt.block_on(async {
        let mut c = Client::connect(db, 0, false).await.expect("connect");
        for s in [
            "CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(20))",
            "INSERT INTO t VALUES (1, 'one'), (2, NULL), (3, 'three')",
        ] {
            c.simple(s).await.expect(s);
        }
        let mut out = Vec::new();
        for q in QUERIES {
            out.push(c.rows(q).await.expect(q).rows);
        }
        out
    })
}

fn text(v: Option<String>) -> Option<String> {
    // Both drivers give numbers as the server's text; trim "2.5" vs "2.50" style noise.
    v.map(|s| s.trim().to_string())
}

fn scratch() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    d
}

/// A current-thread tokio runtime for the cross-check's driver.
fn current_thread() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn mariadb_lean_client_agrees_with_mysql_async() {
    let tmp = scratch();
    let sb = sandbox(TargetKind::Mariadb, "/usr/sbin/mariadbd", tmp.path());
    let d = db(&sb, Dialect::Mariadb);
    let lean = lean_rows(&d);
    let rt = current_thread();
    let opts = |password: &str| {
        mysql_async::OptsBuilder::default()
            .ip_or_hostname(d.addr.ip().to_string())
            .tcp_port(d.addr.port())
            .user(Some(d.user.clone()))
            .pass(Some(password.to_string()))
            .db_name(Some(d.database.clone()))
            .prefer_socket(false)
    };
    let general: Vec<Vec<Vec<Option<String>>>> = rt.block_on(async {
        use mysql_async::prelude::Queryable;
        let mut conn = mysql_async::Conn::new(opts(&d.password)).await.unwrap();
        let mut out = Vec::new();
        for q in QUERIES {
            let rows: Vec<mysql_async::Row> = conn.query(*q).await.unwrap();
            out.push(
                rows.into_iter()
                    .map(|r| {
                        (0..r.len())
                            .map(|i| match r.as_ref(i).unwrap() {
                                mysql_async::Value::NULL => None,
                                mysql_async::Value::Bytes(b) => {
                                    Some(String::from_utf8_lossy(b).to_string())
                                }
                                v => Some(v.as_sql(true).trim_matches('\'').to_string()),
                            })
                            .collect()
                    })
                    .collect(),
            );
        }
        conn.disconnect().await.unwrap();
        out
    });
    let norm = |x: Vec<Vec<Vec<Option<String>>>>| -> Vec<Vec<Vec<Option<String>>>> {
        x.into_iter()
            .map(|rows| {
                rows.into_iter()
                    .map(|r| r.into_iter().map(text).collect())
                    .collect()
            })
            .collect()
    };
    assert_eq!(norm(lean), norm(general));
    // A wrong password: both refuse; the lean readiness check says why.
    let mut wrong = d.clone();
    wrong.password = "not-the-password".into();
    let err = bakeoff_sqlclient::ping(&wrong, Duration::from_secs(5)).expect_err("refused");
    assert!(err.to_string().to_lowercase().contains("denied"), "{err}");
    assert!(rt
        .block_on(mysql_async::Conn::new(opts("not-the-password")))
        .is_err());
    assert!(bakeoff_sqlclient::ping(&d, Duration::from_secs(5)).unwrap());
    sb.stop().expect("stop");
}

#[test]
fn postgres_lean_client_agrees_with_tokio_postgres() {
    let tmp = scratch();
    let sb = sandbox(
        TargetKind::Postgres,
        "/usr/lib/postgresql/15/bin/postgres",
        tmp.path(),
    );
    let d = db(&sb, Dialect::Postgres);
    let lean = lean_rows(&d);
    let rt = current_thread();
    let config = |password: &str| {
        let mut c = tokio_postgres::Config::new();
        c.host(d.addr.ip().to_string())
            .port(d.addr.port())
            .user(&d.user)
            .password(password)
            .dbname(&d.database);
        c
    };
    let general: Vec<Vec<Vec<Option<String>>>> = rt.block_on(async {
        let (client, conn) = config(&d.password)
            .connect(tokio_postgres::NoTls)
            .await
            .unwrap();
        let driver = tokio::spawn(conn);
        let mut out = Vec::new();
        for q in QUERIES {
            let msgs = client.simple_query(q).await.unwrap();
            out.push(
                msgs.into_iter()
                    .filter_map(|m| match m {
                        tokio_postgres::SimpleQueryMessage::Row(r) => {
                            Some((0..r.len()).map(|i| r.get(i).map(str::to_string)).collect())
                        }
                        _ => None,
                    })
                    .collect(),
            );
        }
        drop(client);
        let _ = driver.await;
        out
    });
    assert_eq!(lean, general);
    let mut wrong = d.clone();
    wrong.password = "not-the-password".into();
    let err = bakeoff_sqlclient::ping(&wrong, Duration::from_secs(5)).expect_err("refused");
    assert!(err.to_string().contains("password"), "{err}");
    assert!(rt
        .block_on(config("not-the-password").connect(tokio_postgres::NoTls))
        .is_err());
    sb.stop().expect("stop");
}
