//! Real MariaDB and PostgreSQL sandboxes: a pristine data dir made once, options that
//! reach the server, an option it refuses, data loaded in place and seen by a copy, and
//! nothing left running afterwards.

use bakeoff_sandbox::{init_data, DataSource, Sandbox, SandboxSpec, TargetKind};
use bakeoff_testkit::paths::{MARIADBD, POSTGRES};
use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

fn scratch() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    d
}

fn spec(kind: TargetKind, root: &Path, data: DataSource, options: &[(&str, &str)]) -> SandboxSpec {
    let binary = if kind == TargetKind::Mariadb {
        MARIADBD
    } else {
        POSTGRES
    };
    let mut s = SandboxSpec::new("sql-test", kind, binary, root.join("sandboxes"));
    s.ready_timeout = Duration::from_secs(60);
    s.stop_grace = Duration::from_secs(30);
    s.data = Some(data);
    s.options = options
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect::<BTreeMap<_, _>>();
    s
}

/// Runs SQL through the server's own command-line client over TCP; returns its output
/// (the test fails where the server refuses it).
fn sql(sb: &Sandbox, query: &str) -> String {
    try_sql(sb, query).unwrap_or_else(|e| panic!("{e}"))
}

fn group_gone(pid: u32) -> bool {
    // SAFETY: signal 0 only checks for existence.
    unsafe { libc::kill(-(pid as i32), 0) != 0 }
}

fn lifecycle(kind: TargetKind, max_conn_query: &str, table_ddl: &str) {
    let tmp = scratch();
    let binary = if kind == TargetKind::Mariadb {
        MARIADBD
    } else {
        POSTGRES
    };
    let pristine: PathBuf = tmp.path().join("data").join("pristine");
    let login = init_data(kind, Path::new(binary), &pristine).expect("init_data");
    assert_eq!(login.user, "bakeoff");
    assert!(login.password.len() >= 16);
    let start = |data: DataSource, options: &[(&str, &str)]| {
        Sandbox::start(&spec(kind, tmp.path(), data, options))
    };

    // Options reach the server; stop leaves nothing behind.
    let sb = start(
        DataSource::Copy(pristine.clone()),
        &[("max_connections", "300")],
    )
    .expect("start");
    assert!(sb.socket().is_some());
    assert!(sql(&sb, max_conn_query).ends_with("300"));
    let (pid, dir) = (sb.pid(), sb.dir().to_path_buf());
    sb.stop().expect("stop");
    assert!(group_gone(pid), "server group still alive");
    assert!(!dir.exists(), "sandbox dir kept");

    // An option the server does not know: a start error that names it.
    let err = start(
        DataSource::Copy(pristine.clone()),
        &[("no_such_option", "1")],
    )
    .expect_err("unknown option must fail");
    assert!(err.to_string().contains("no_such_option"), "{err}");

    // Data written in place stays; a copy of it sees it.
    let prepared = tmp.path().join("data").join("prepared");
    let cp = Command::new("cp")
        .args(["-a"])
        .arg(&pristine)
        .arg(&prepared)
        .status()
        .unwrap();
    assert!(cp.success());
    let sb = start(DataSource::InPlace(prepared.clone()), &[]).expect("start in place");
    sql(&sb, table_ddl);
    sb.stop().expect("stop");
    assert!(prepared.is_dir());
    let sb = start(DataSource::Copy(prepared.clone()), &[]).expect("start copy");
    assert_eq!(sql(&sb, "SELECT count(*) FROM kept"), "2");
    sb.stop().expect("stop");
}

#[test]
fn mariadb_sandbox_lifecycle() {
    lifecycle(
        TargetKind::Mariadb,
        "SHOW VARIABLES LIKE 'max_connections'",
        "CREATE TABLE kept (id INT PRIMARY KEY); INSERT INTO kept VALUES (1), (2)",
    );
}

#[test]
fn postgres_sandbox_lifecycle() {
    lifecycle(
        TargetKind::Postgres,
        "SHOW max_connections",
        "CREATE TABLE kept (id INT PRIMARY KEY); INSERT INTO kept VALUES (1), (2)",
    );
}

/// Runs SQL through the server's own command-line client over TCP; its output, or the
/// client's error text when the server refuses it.
fn try_sql(sb: &Sandbox, query: &str) -> Result<String, String> {
    let login = sb.login().expect("login");
    let port = sb.addr().port().to_string();
    let out = match sb.kind() {
        TargetKind::Mariadb => Command::new("mariadb")
            .args(["-h", "127.0.0.1", "-P", &port, "-u", &login.user])
            .arg(format!("-p{}", login.password))
            .args(["-N", "-B", &login.database, "-e", query])
            .output(),
        _ => Command::new("/usr/lib/postgresql/15/bin/psql")
            .env("PGPASSWORD", &login.password)
            .args(["-h", "127.0.0.1", "-p", &port, "-U", &login.user])
            .args(["-d", &login.database, "-v", "ON_ERROR_STOP=1"])
            .args(["-At", "-c", query])
            .output(),
    }
    .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if out.status.success() {
        Ok(text)
    } else {
        Err(String::from_utf8_lossy(&out.stderr).trim().to_string())
    }
}

/// A sandbox of `kind` started on a copy of a data directory made for it under `root`.
fn on_fresh_data(kind: TargetKind, binary: &str, root: &Path) -> Sandbox {
    let pristine = root.join("data").join("pristine");
    init_data(kind, Path::new(binary), &pristine).expect("init_data");
    Sandbox::start(&spec(kind, root, DataSource::Copy(pristine), &[])).expect("start")
}

/// Issue 50: `SELECT ... INTO OUTFILE/DUMPFILE`, `LOAD DATA INFILE` and `LOAD_FILE`
/// reach only the sandbox's `files` folder (`secure-file-priv`); the sandbox stops
/// (also when an assertion fails: the sandbox's Drop kills it).
#[test]
fn sql_file_writers_stay_in_the_sandbox_mariadb() {
    let tmp = scratch();
    let outside = scratch();
    let sb = on_fresh_data(TargetKind::Mariadb, MARIADBD, tmp.path());
    let files = sb.dir().join("files");
    let priv_dir = sql(&sb, "SELECT @@secure_file_priv");
    assert_eq!(
        priv_dir.trim_end_matches('/'),
        files.display().to_string(),
        "secure_file_priv"
    );
    let target = outside.path().join("x");
    let t = target.display();
    for q in [
        format!("SELECT 1 INTO OUTFILE '{t}'"),
        format!("SELECT 'x' INTO DUMPFILE '{t}'"),
        format!("select 1 into outfile '{t}.2' fields terminated by ','"),
        "SELECT 1 INTO OUTFILE '/tmp/bakeoff-issue50-outfile'".to_string(),
        "CREATE TABLE f (a TEXT); LOAD DATA INFILE '/etc/hostname' INTO TABLE f".to_string(),
        "SELECT 1 INTO OUTFILE '../x'".to_string(),
    ] {
        let got = try_sql(&sb, &q);
        assert!(got.is_err(), "{q} passed: {got:?}");
    }
    assert_eq!(sql(&sb, "SELECT LOAD_FILE('/etc/hostname') IS NULL"), "1");
    assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
    assert!(!Path::new("/tmp/bakeoff-issue50-outfile").exists());
    // Inside the folder it names, the statements still work.
    let inside = files.join("out.txt");
    sql(
        &sb,
        &format!("SELECT 'kept' INTO OUTFILE '{}'", inside.display()),
    );
    assert!(inside.is_file());
    sb.stop().expect("stop");
}

/// Issue 50: the workloads' PostgreSQL login is an ordinary role: `COPY ... TO/FROM` a
/// file or a program, `lo_export`, `pg_read_file` and `ALTER SYSTEM` are refused, while
/// it still creates tables in its database.
#[test]
fn sql_file_writers_stay_in_the_sandbox_postgres() {
    let tmp = scratch();
    let outside = scratch();
    let sb = on_fresh_data(TargetKind::Postgres, POSTGRES, tmp.path());
    assert_eq!(
        sql(
            &sb,
            "SELECT rolsuper FROM pg_roles WHERE rolname = current_user"
        ),
        "f"
    );
    sql(&sb, "CREATE TABLE t (a int); INSERT INTO t VALUES (1)");
    let t = outside.path().join("x").display().to_string();
    for q in [
        format!("COPY t TO '{t}'"),
        format!("copy (select 1) to '{t}'"),
        "COPY t FROM '/etc/hostname'".to_string(),
        format!("COPY t TO PROGRAM 'touch {t}'"),
        format!("SELECT lo_export(lo_from_bytea(0, 'x'), '{t}')"),
        "SELECT pg_read_file('/etc/hostname')".to_string(),
        "SELECT pg_read_binary_file('/etc/hostname')".to_string(),
        "SELECT pg_ls_dir('/')".to_string(),
        format!("ALTER SYSTEM SET log_directory = '{t}'"),
        "CREATE EXTENSION IF NOT EXISTS adminpack".to_string(),
    ] {
        let got = try_sql(&sb, &q);
        assert!(got.is_err(), "{q} passed: {got:?}");
    }
    assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
    sb.stop().expect("stop");
}
