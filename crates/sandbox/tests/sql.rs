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

/// Runs SQL through the server's own command-line client over TCP; returns its output.
fn sql(sb: &Sandbox, query: &str) -> String {
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
            .args([
                "-h",
                "127.0.0.1",
                "-p",
                &port,
                "-U",
                &login.user,
                "-d",
                &login.database,
            ])
            .args(["-At", "-c", query])
            .output(),
    }
    .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
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
