//! Real SQL servers for the workloads' integration tests: a pristine data dir initialized
//! in a temporary directory, a sandbox started on it in place, and a `Db` to reach it.
//! Dropping `Server` stops the sandbox (and its process group), also when a test fails.

#![allow(dead_code)]

use bakeoff_sandbox::{init_data, DataSource, Sandbox, SandboxSpec, TargetKind};
use bakeoff_sqlclient::{Client, Db, Dialect};
pub use bakeoff_testkit::paths::{MARIADBD, POSTGRES};
use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

/// Debian's SQLite, hosted by `bakeoff-sqlited` (built with the bakeoff crate's binaries:
/// `cargo test --workspace` builds it; alone, run `cargo build -p bakeoff` first).
pub const SQLITE_LIB: &str = "/usr/lib/x86_64-linux-gnu/libsqlite3.so.0";

pub struct Server {
    pub sandbox: Option<Sandbox>,
    pub db: Db,
    _tmp: tempfile::TempDir,
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(s) = self.sandbox.take() {
            let _ = s.stop();
        }
    }
}

/// Runs `f` to its end on a current-thread runtime of its own.
pub fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(f)
}

/// Runs one statement on a fresh connection and returns its rows.
pub fn rows(db: &Db, q: &str) -> Vec<Vec<Option<String>>> {
    block_on(async {
        let mut c = Client::connect(db, 0, false).await.unwrap();
        let rows = c
            .rows(q)
            .await
            .unwrap_or_else(|e| panic!("{q}: {}", e.message));
        c.close().await;
        rows.rows
    })
}

/// Starts a fresh server of `kind` with `options` (my.cnf or postgresql.conf keys).
pub fn start(kind: TargetKind, options: &[(&str, &str)]) -> Server {
    let binary = match kind {
        TargetKind::Mariadb => MARIADBD,
        TargetKind::Sqlite => SQLITE_LIB,
        _ => POSTGRES,
    };
    start_with(kind, binary, options)
}

/// Starts a fresh server of `kind` from `binary` (SQLite: its library) with `options`.
pub fn start_with(kind: TargetKind, binary: &str, options: &[(&str, &str)]) -> Server {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let data = tmp.path().join("data");
    init_data(kind, std::path::Path::new(binary), &data).expect("init_data");
    let mut spec = SandboxSpec::new("workloads-test", kind, binary, tmp.path().join("sandboxes"));
    spec.ready_timeout = Duration::from_secs(60);
    spec.stop_grace = Duration::from_secs(30);
    spec.data = Some(DataSource::InPlace(data));
    spec.options = options
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let sandbox = Sandbox::start(&spec).expect("server starts");
    let dialect = match kind {
        TargetKind::Postgres => Dialect::Postgres,
        TargetKind::Sqlite => Dialect::Sqlite,
        _ => Dialect::Mariadb,
    };
    let db = sandbox
        .login()
        .expect("login")
        .db(dialect, sandbox.addr(), sandbox.socket());
    Server {
        sandbox: Some(sandbox),
        db,
        _tmp: tmp,
    }
}
