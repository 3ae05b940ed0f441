//! End-to-end TPC-C on real servers: `bakeoff run` loads W = 1 once per server version,
//! runs 5 s with 4 connections (every transaction kind among them), and every run passes
//! the consistency conditions; on MariaDB, a variant whose server gets an update behind
//! the workload's back (the test itself changes a warehouse's YTD in every sandbox of that
//! variant) fails them, and only that variant's runs are invalid.

mod common;

use bakeoff_testkit::paths::{MARIADBD, POSTGRES};
use common::{no_server_left, sql_scratch as scratch};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

fn experiment(kind: &str, binary: &str, variants: &[&str], duration: &str) -> String {
    let mut text = format!(
        "name = \"tpcc-{kind}\"\n[target]\nkind = \"{kind}\"\n{}\n",
        if kind == "mariadb" {
            "options = { innodb_buffer_pool_size = \"128M\", innodb_log_file_size = \"96M\" }"
        } else {
            "options = { shared_buffers = \"128MB\" }"
        }
    );
    for v in variants {
        text.push_str(&format!(
            "\n[[variant]]\nname = \"{v}\"\nbinary = \"{binary}\"\n"
        ));
    }
    text.push_str(&format!(
        "\n[[workload]]\nkind = \"tpcc\"\nwarehouses = 1\nconnections = 4\n\n[plan]\nrepetitions = 1\nwarmup = \"2s\"\nduration = \"{duration}\"\n"
    ));
    text
}

/// Every run is valid, consistent, and did all five kinds within their limits.
fn check_tpcc_runs(r: &Value) {
    let cells = r["cells"].as_array().unwrap();
    assert!(!cells.is_empty());
    for c in cells {
        let t = &c["tpcc"];
        assert_eq!(t["warehouses"], 1, "{t}");
        assert!(t["median_notpm"].as_f64().unwrap() > 0.0, "{t}");
        for run in c["runs"].as_array().unwrap() {
            assert_eq!(run["valid"], true, "{run}");
            assert_eq!(run["consistency"], "pass", "{run}");
            let notpm = run["notpm"].as_f64().unwrap();
            let tpm = run["tpm"].as_f64().unwrap();
            assert!(notpm > 0.0 && tpm > notpm, "{run}");
            let ops = run["ops_per_s"].as_f64().unwrap();
            assert!(
                (ops * 60.0 - tpm).abs() / tpm < 0.05,
                "tpm {tpm} vs ops/s {ops}"
            );
            for kind in [
                "new_order",
                "payment",
                "order_status",
                "delivery",
                "stock_level",
            ] {
                let k = &run["transactions"][kind];
                assert!(k["count"].as_u64().unwrap() > 0, "{kind}: {run}");
                assert!(k["p90_ms"].as_f64().unwrap() > 0.0, "{kind}: {k}");
                assert_eq!(k["pass"], true, "{kind}: {k}");
                assert_eq!(k["errors"], 0, "{kind}: {k}");
            }
            let no = &run["transactions"]["new_order"];
            let share =
                no["count"].as_f64().unwrap() / (tpm / 60.0 * run["elapsed_s"].as_f64().unwrap());
            assert!((0.35..0.55).contains(&share), "new_order share {share}");
        }
    }
}

#[test]
fn postgres_tpcc_w1_passes_consistency_and_limits() {
    let s = scratch();
    let file = s.write(
        "pg.toml",
        &experiment("postgres", POSTGRES, &["debian"], "5s"),
    );
    let out = s.run_cmd(&file).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let r = s.results();
    check_tpcc_runs(&r);
    let data = &r["variants"][0]["data"][0];
    assert!(data["rows"].as_u64().unwrap() > 500_000, "{data}");
    let report = std::fs::read_to_string(s.out().join("report.md")).unwrap();
    assert!(report.contains("## TPC-C\n"), "{report}");
    assert!(report.contains("### tpcc: NOTPM"), "{report}");
    assert!(report.contains("### tpcc: response times"), "{report}");
    let html = std::fs::read_to_string(s.out().join("report.html")).unwrap();
    assert!(html.contains("id=\"tpcc\""));
    no_server_left("postgres", &s);
}

/// Sandboxes of `variant` under `root` that have a server socket, each tampered once: the
/// warehouse's YTD gains one unit, which breaks consistency condition 1.
fn tamper(root: &Path, variant: &str, stop: &AtomicBool) -> usize {
    let mut done: Vec<PathBuf> = Vec::new();
    while !stop.load(Ordering::SeqCst) {
        for e in std::fs::read_dir(root).into_iter().flatten().flatten() {
            let dir = e.path();
            let name = e.file_name().to_string_lossy().to_string();
            let mine = name.starts_with(&format!("{variant}-")) && !name.contains("prepare");
            if !mine || done.contains(&dir) || !dir.join("mysqld.sock").exists() {
                continue;
            }
            let Ok(login) = std::fs::read_to_string(dir.join("data").join("bakeoff-login.json"))
            else {
                continue;
            };
            let login: Value = serde_json::from_str(&login).unwrap();
            let ok = Command::new("mariadb")
                .arg(format!("--socket={}", dir.join("mysqld.sock").display()))
                .arg(format!("-u{}", login["user"].as_str().unwrap()))
                .arg(format!("-p{}", login["password"].as_str().unwrap()))
                .arg(login["database"].as_str().unwrap())
                .args([
                    "-e",
                    "UPDATE warehouse SET w_ytd = w_ytd + 1 WHERE w_id = 1",
                ])
                .output()
                .is_ok_and(|o| o.status.success());
            if ok {
                done.push(dir);
            }
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    done.len()
}

#[test]
fn mariadb_tpcc_consistency_fails_only_where_data_was_changed() {
    let s = scratch();
    let file = s.write(
        "mariadb.toml",
        &experiment("mariadb", MARIADBD, &["honest", "tampered"], "6s"),
    );
    let stop = Arc::new(AtomicBool::new(false));
    let watcher = {
        let (root, stop) = (s.sandboxes(), stop.clone());
        std::thread::spawn(move || tamper(&root, "tampered", &stop))
    };
    let out = s.run_cmd(&file).output().unwrap();
    stop.store(true, Ordering::SeqCst);
    let tampered = watcher.join().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    // The tampered variant's only run is invalid: the experiment finishes, and says so
    // with exit 4 (a variant that ran has a cell without a valid run).
    assert_eq!(out.status.code(), Some(4), "{stderr}");
    assert!(
        stderr.contains("no valid run in 1 cell(s): tampered"),
        "{stderr}"
    );
    assert_eq!(tampered, 1, "the tampered variant's one run was changed");
    let r = s.results();
    let cells = r["cells"].as_array().unwrap();
    let cell = |v: &str| cells.iter().find(|c| c["variant"] == v).unwrap();
    let honest = cell("honest");
    let honest_r = serde_json::json!({ "cells": [honest] });
    check_tpcc_runs(&honest_r);
    let bad = &cell("tampered")["runs"][0];
    assert_eq!(bad["valid"], false, "{bad}");
    assert_eq!(bad["consistency"], "fail", "{bad}");
    let reason = bad["invalid_reason"].as_str().unwrap();
    assert!(reason.contains("condition 1"), "{reason}");
    assert!(
        r["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w.as_str().unwrap().contains("consistency")),
        "{}",
        r["warnings"]
    );
    // Same server version: the second variant copied the first one's loaded data.
    let data = &r["variants"][1]["data"][0];
    assert_eq!(data["reused_from"], "honest", "{data}");
    no_server_left("mariadbd", &s);
}
