//! Regenerates the real-server logs among the replay fixtures: runs
//! `tests/fixtures/replay/oltp-mix.sql` statement by statement on one connection to a
//! fresh MariaDB with the general query log on, and to a fresh PostgreSQL with csvlog
//! and every statement logged, and stores the logs as `oltp-mix.general.log` and
//! `oltp-mix.csv` next to it. Ignored by default (it starts two servers and rewrites
//! files in the source tree): `cargo test -p bakeoff-workloads --test replay_capture --
//! --ignored`.

mod common;

use bakeoff_sandbox::TargetKind;
use bakeoff_sqlclient::Client;
use bakeoff_sqlclient::Db;
use bakeoff_workloads::replay::{self, LogFormat};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/replay")
}

/// Runs every statement of the .sql fixture, in order, on one connection.
fn run_sql_file(db: &Db) {
    let text = std::fs::read_to_string(fixtures().join("oltp-mix.sql")).unwrap();
    let statements = replay::parse(&text, LogFormat::SqlFile).unwrap();
    common::block_on(async {
        let mut c = Client::connect(db, 0, false).await.unwrap();
        for s in &statements {
            c.rows(&s.sql)
                .await
                .unwrap_or_else(|e| panic!("line {}: {}: {}", s.line, s.sql, e.message));
        }
        c.close().await;
    });
}

/// A directory the server's user can write its log into.
fn log_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    dir
}

#[test]
#[ignore = "starts MariaDB and PostgreSQL and rewrites fixtures"]
fn capture_mariadb_general_log() {
    let dir = log_dir();
    let log = dir.path().join("general.log");
    let file = log.display().to_string();
    let server = common::start(
        TargetKind::Mariadb,
        &[("general_log", "1"), ("general_log_file", &file)],
    );
    run_sql_file(&server.db);
    drop(server);
    std::fs::copy(&log, fixtures().join("oltp-mix.general.log")).unwrap();
}

#[test]
#[ignore = "starts MariaDB and PostgreSQL and rewrites fixtures"]
fn capture_postgres_csvlog() {
    let dir = log_dir();
    let path = dir.path().display().to_string();
    let server = common::start(
        TargetKind::Postgres,
        &[
            ("logging_collector", "on"),
            ("log_destination", "csvlog"),
            ("log_directory", &path),
            ("log_filename", "oltp-mix.log"),
            ("log_statement", "all"),
            ("log_min_duration_statement", "0"),
        ],
    );
    run_sql_file(&server.db);
    drop(server);
    std::fs::copy(
        dir.path().join("oltp-mix.csv"),
        fixtures().join("oltp-mix.csv"),
    )
    .unwrap();
}
