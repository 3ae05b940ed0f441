//! A writer killed with SIGKILL at any point leaves whole records or none: this test runs
//! itself as a child process that records experiments in a loop, kills it at varying
//! moments, and checks every record that survived.

use bakeoff_store::{CellEntry, Entry, Filter, Store, VariantEntry};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const WRITER: &str = "BAKEOFF_STORE_TEST_WRITER";

/// A record whose name says how many cells it has.
fn entry(cells: usize, i: usize) -> Entry {
    Entry {
        started_utc: format!("2024-05-01T00:{:02}:{:02}Z", (i / 60) % 60, i % 60),
        finished_utc: None,
        name: format!("w-{cells}"),
        status: "complete".into(),
        baseline: "a".into(),
        hostname: "lab".into(),
        cpu_model: "cpu".into(),
        bakeoff_version: "0".into(),
        folder: format!("/results/{i}").into(),
        variants: vec![
            VariantEntry {
                name: "a".into(),
                status: "ok".into(),
            },
            VariantEntry {
                name: "b".into(),
                status: "ok".into(),
            },
        ],
        cells: (0..cells)
            .map(|c| CellEntry {
                workload: format!("w{c}"),
                connections: c,
                variant: "a".into(),
                median_ops_per_s: 1000.0 + c as f64,
                ci95: [900.0, 1100.0],
                valid_runs: 3,
                instructions_per_op: None,
            })
            .collect(),
    }
}

/// The child: records until killed (or for 30 s at most). A no-op in a normal test run.
#[test]
fn writer_child() {
    let Some(path) = std::env::var_os(WRITER) else {
        return;
    };
    let mut store = Store::open(Path::new(&path)).expect("open");
    let end = Instant::now() + Duration::from_secs(30);
    let mut i = 0;
    while Instant::now() < end {
        store
            .record(&entry(20 + (i * 37) % 300, i))
            .expect("record");
        i += 1;
    }
}

#[test]
fn kill_9_mid_write_leaves_whole_records() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("history.sqlite");
    for round in 0..6u64 {
        let mut child = Command::new(std::env::current_exe().expect("test binary"))
            .args(["writer_child", "--exact", "--nocapture", "--test-threads=1"])
            .env(WRITER, &path)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn writer");
        std::thread::sleep(Duration::from_millis(250 + 37 * round));
        child.kill().expect("SIGKILL");
        child.wait().expect("wait");

        let store = Store::open(&path).expect("the store opens after kill -9");
        let check: String = rusqlite::Connection::open(&path)
            .and_then(|c| c.query_row("PRAGMA integrity_check", [], |r| r.get(0)))
            .expect("integrity_check");
        assert_eq!(check, "ok");
        let records = store.list(&Filter::default()).expect("list");
        for r in &records {
            let want: usize = r.entry.name[2..].parse().expect("w-N");
            assert_eq!(r.entry.cells.len(), want, "record #{} is partial", r.id);
            assert_eq!(r.entry.variants.len(), 2, "record #{} is partial", r.id);
        }
        if round == 5 {
            assert!(!records.is_empty(), "the writer never committed anything");
        }
    }
}
