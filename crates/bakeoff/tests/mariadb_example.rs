//! The MariaDB compiler study end to end: `examples/mariadb-gcc-vs-clang.toml` as a user
//! runs it, three servers built from Debian's source (about 23 minutes each on 2 cores),
//! Debian's binary beside them, sqlsuite, the real sql-bench and a replay. Too long for CI:
//! ignored, run by hand with
//!   cargo test -p bakeoff --test mariadb_example -- --ignored --nocapture
//! It uses the user's build cache (`~/.cache/bakeoff`, or `BAKEOFF_EXAMPLE_CACHE`), so a
//! second run skips the builds.

mod common;

use common::{no_server_left, Scratch};
use std::path::Path;
use std::time::Instant;

#[test]
#[ignore = "builds MariaDB three times: about 70 minutes on 2 cores; run by hand"]
fn mariadb_gcc_vs_clang_example_runs_from_a_fresh_cache() {
    let s = Scratch::new();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let file = root.join("examples/mariadb-gcc-vs-clang.toml");
    let mut cmd = s.bare_cmd("run", &file, &s.out());
    cmd.arg("--quiet")
        .env("BAKEOFF_STORE", s.path().join("history.sqlite"));
    if let Ok(cache) = std::env::var("BAKEOFF_EXAMPLE_CACHE") {
        cmd.arg("--cache").arg(cache);
    }
    let started = Instant::now();
    let out = cmd.output().expect("run bakeoff");
    eprintln!("bakeoff run took {:.0} s", started.elapsed().as_secs_f64());
    no_server_left("mariadbd", &s);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let r = s.results();
    // Every variant served every workload: a valid run in each of its cells.
    for cell in r["cells"].as_array().expect("cells") {
        let valid = cell["runs"]
            .as_array()
            .expect("runs")
            .iter()
            .filter(|x| x["valid"] == true)
            .count();
        assert!(valid > 0, "no valid run: {cell}");
    }
    // Each build is compared with the baseline, and the verification ran first.
    let comparisons = r["comparisons"].as_array().expect("comparisons");
    for v in [
        "clang-O3-native",
        "clang-O3-native-lto",
        "debian",
        "gcc-O2-myisam",
    ] {
        assert!(
            comparisons.iter().any(|c| c["variant"] == v),
            "no comparison for {v}"
        );
    }
    let report = std::fs::read_to_string(s.out().join("report.md")).expect("report.md");
    assert!(report.contains("sql-bench"), "{report}");
}
