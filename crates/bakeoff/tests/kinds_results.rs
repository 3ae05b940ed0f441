//! A results folder written before the kinds owned their figures (issue 42: tpcc's NOTPM
//! and response times, sqlsuite's groups and operations, replay's classes and plans were
//! fields of the report crate's `Run` and `Cell`) reads back the same: `bakeoff report`
//! on it prints the same terminal summary and writes the same report.md, report.html,
//! results.csv and bench.txt, and results.json keeps every key and value. The folder
//! (tests/data/kinds) is a real PostgreSQL 15 run of tpcc (W = 1), sqlsuite (scale 0.01)
//! and a replay of examples/shop, two variants, three rounds, with the outputs the
//! bakeoff of that time wrote from it (`bakeoff report`). No server starts here.

mod common;

use common::Scratch;
use std::path::Path;

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/kinds");

fn read(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

#[test]
fn a_results_folder_from_before_reads_back_with_the_same_tables() {
    let scratch = Scratch::new();
    let dir = scratch.path().join("folder");
    std::fs::create_dir_all(&dir).unwrap();
    let data = Path::new(DATA);
    std::fs::copy(data.join("results.json"), dir.join("results.json")).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_bakeoff"))
        .args(["report", "--color", "never"])
        .arg(&dir)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let terminal =
        String::from_utf8_lossy(&out.stdout).replace(&dir.display().to_string(), "FOLDER");
    assert_eq!(terminal, read(data, "terminal.txt"));
    for name in ["report.md", "report.html", "results.csv", "bench.txt"] {
        assert!(read(&dir, name) == read(data, name), "{name} differs");
    }
    let before: serde_json::Value = serde_json::from_str(&read(data, "results.json")).unwrap();
    let after: serde_json::Value = serde_json::from_str(&read(&dir, "results.json")).unwrap();
    assert_eq!(before, after);
    // Each kind's figures are where they were: on the cells under the kind's name, on the
    // runs beside the run's own keys.
    let cells = after["cells"].as_array().unwrap();
    let of = |w: &str| cells.iter().find(|c| c["workload"] == w).unwrap();
    assert!(of("tpcc")["tpcc"]["median_notpm"].as_f64().unwrap() > 0.0);
    assert!(of("tpcc")["runs"][0]["notpm"].as_f64().unwrap() > 0.0);
    assert!(
        of("sqlsuite")["sqlsuite"]["groups"]
            .as_array()
            .unwrap()
            .len()
            > 3
    );
    assert!(of("sqlsuite")["runs"][0]["operations"].is_array());
    assert!(of("shop")["runs"][0]["classes"].is_array());
    let md = read(&dir, "report.md");
    for section in ["## TPC-C", "## SQL suite", "## Replayed statement classes"] {
        assert!(md.contains(section), "{section}");
    }
}
