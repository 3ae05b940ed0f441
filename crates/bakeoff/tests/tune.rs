//! `bakeoff tune` end to end with real builds, what only real servers show: SQLite's
//! amalgamation at -O0 and -O2 by gcc, hosted by bakeoff-sqlited, raced on a CPU-bound
//! part of the sqlsuite (big-tables) against Debian's libsqlite3 within a small budget,
//! checking the folder users read (results.json's `tune`, report.html's section, the
//! winner's `[[variant]]` block on stdout). Two candidates are enough for what the test
//! proves on real builds (the race drops what is decided below its leader, and names a
//! winner with an interval): -O0 is the one to drop. The race over more candidates (six,
//! the losers dropped by the race's rule, the budget's shares, the overfitting check) is
//! tested against scripted stages in `crates/tune/src/study_tests.rs`, in the fast tier.
//!
//! What it relies on: -O0 SQLite runs these statements at well under half the speed of
//! -O2 (measured here: 2-3.4x the time on big-tables and select, single runs on a busy
//! 2-core guest), a log ratio of at least ln 1.6 = 0.47 against the winner. The race
//! drops a candidate when its paired t interval against the leader (one other candidate:
//! 95% two-sided, t(5) = 2.57 at the fewest rounds, 6) lies below zero. With two
//! candidates the first stage gets the whole budget, 25 s: about 10 rounds of the 3
//! variants (about 2.5 s a round, from 3.3 s for 4 variants measured here under a load
//! average of 10), 6 on a machine 1.5 times slower. At a per-round spread of the paired
//! log ratio up to 0.12 (twice the worst measured here), the t statistic at 6 rounds is
//! 0.47 / (0.12 / sqrt 6) = 9.6, so the -O0 candidate survives stage 1 only with
//! probability P(T(5) < 2.57 - 9.6) = 4.5e-4, below 1 in 1,000; a later stage pools its
//! rounds with stage 1's, which only lowers it. A false verdict (an -O0 build decided
//! slower when it is not) cannot happen here: it is slower by construction.
//!
//! The result verification before the rounds is off (`[verify] enabled = false`): it
//! would cost 7 s of the test's 35 s here (measured under a load average of 12), and
//! both are tested on their own: SQLite's answers compared across builds by `sqlite.rs`,
//! a failed candidate out with its reason by `crates/tune/src/tests.rs`.
//!
//! As elsewhere for wall-clock figures, a busy machine is accepted as no answer, never as a
//! wrong one: when other processes took more than a quarter of the machine's CPU in any
//! run of stage 1 (`others_cpu_pct`), the run-to-run spread is several times the one the
//! computation above assumes (measured here under a load average of 12 from five
//! parallel builds: single runs 3-4x apart), and the test checks the search's shape and
//! results only (candidates, stages, a winner with an interval, the reports).

mod common;

use common::{no_server_left, sql_scratch};
use serde_json::Value;

const SYSTEM_LIB: &str = "/usr/lib/x86_64-linux-gnu/libsqlite3.so.0";

#[test]
fn every_o0_candidate_is_dropped_and_the_winner_has_an_interval() {
    let s = sql_scratch();
    let file = s.write(
        "tune.toml",
        &format!(
            "name = \"sqlite-tune\"\n[target]\nkind = \"sqlite\"\noptions = {{ synchronous = \"off\" }}\n\n[[variant]]\nname = \"debian\"\nbinary = \"{SYSTEM_LIB}\"\n\n[[workload]]\nkind = \"sqlsuite\"\nscale = 0.02\ngroups = [\"big-tables\"]\n\n[plan]\nwarmup = \"0s\"\nduration = \"1s\"\nbudget = \"25s\"\n\n[verify]\nenabled = false\n\n[tune]\ncompiler = [\"gcc-12\"]\nopt = [\"-O0\", \"-O2\"]\nbaseline = \"debian\"\n"
        ),
    );
    // As root runs it with its default cache (issue 49: every candidate failed there, its
    // library looked for where a server's install keeps its binary).
    let out = common::with_private_home(&mut std::process::Command::new(env!(
        "CARGO_BIN_EXE_bakeoff"
    )))
    .arg("tune")
    .arg(&file)
    .arg("--out")
    .arg(s.out())
    .arg("--sandbox-dir")
    .arg(s.sandboxes())
    .arg("--quiet")
    .env("BAKEOFF_STORE", s.path().join("history.sqlite"))
    .output()
    .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    no_server_left("bakeoff-sqlited", &s);
    assert!(out.status.success(), "{stderr}\n{stdout}");
    assert!(stderr.contains("tune: stage 1 done"), "{stderr}");
    let r: Value = s.results();
    let t = &r["tune"];
    let winner = t["winner"]["name"].as_str().expect("a winner");
    let iv = t["winner"]["interval"].as_array().expect("an interval");
    assert!(iv[0].as_f64().unwrap() <= iv[1].as_f64().unwrap());
    let cands = t["candidates"].as_array().unwrap();
    assert_eq!(cands.len(), 2);
    let stage1: Value = serde_json::from_str(
        &std::fs::read_to_string(s.out().join("stage-1").join("results.json")).unwrap(),
    )
    .unwrap();
    let busy = stage1["cells"].as_array().unwrap().iter().any(|c| {
        c["runs"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["others_cpu_pct"].as_f64().unwrap_or(0.0) > 25.0)
    });
    if busy {
        eprintln!("the machine was busy during stage 1: drops not asserted");
    } else {
        assert!(!winner.contains(".O0"), "{winner}");
        for c in cands
            .iter()
            .filter(|c| c["name"].as_str().unwrap().ends_with(".O0"))
        {
            assert_eq!(c["status"]["state"], "dropped", "{c}");
            assert!(
                c["status"]["reason"].as_str().unwrap().contains("below"),
                "{c}"
            );
        }
    }
    assert!(!t["effects"].as_array().unwrap().is_empty(), "{t}");
    assert!(stdout.contains("[[variant]]"), "{stdout}");
    // The folder is an experiment's like any other: report re-renders it.
    let html = std::fs::read_to_string(s.out().join("report.html")).unwrap();
    assert!(html.contains("What each choice is worth"));
}
