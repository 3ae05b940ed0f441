//! End-to-end BOLT: memcached built with --emit-relocs, profiled under perf (cpu-clock
//! samples; this kind of machine has no LBR) on the kv workload, rewritten by llvm-bolt;
//! the BOLTed binary differs from the plain build, starts, and passes verification in the
//! measured runs. Skipped, saying why, where perf cannot record.

mod common;

use common::{item, Scratch, SHORT_KV};

fn experiment() -> String {
    common::memcached_source("bolt-e2e", "\"-t\", \"1\"")
        + &common::build("plain", "gcc-12", "-O2", "")
        + &common::build(
            "bolted",
            "gcc-12",
            "-O2",
            "bolt = { workload = \"kv\", duration = \"2s\" }\n",
        )
        + SHORT_KV
}

#[test]
fn bolt_rewrites_a_build_that_still_serves_and_verifies() {
    let perf = std::process::Command::new("perf")
        .args(["record", "-e", "cpu-clock", "-o", "/dev/null", "--", "true"])
        .output();
    if !perf.as_ref().is_ok_and(|o| o.status.success()) {
        eprintln!("skipped: perf cannot record here ({perf:?}); BOLT needs its samples");
        return;
    }
    let s = Scratch::new();
    let r = s.run_clean("bolt.toml", &experiment(), "memcached");
    let v = |name: &str| item(&r["variants"], "name", name).clone();
    let bolted = v("bolted");
    assert_eq!(bolted["status"], "ok", "{bolted}");
    assert!(
        bolted["binary"].as_str().unwrap().ends_with(".bolt"),
        "{bolted}"
    );
    assert_ne!(
        bolted["build"]["binary_sha256"],
        v("plain")["build"]["binary_sha256"]
    );
    assert!(
        bolted["build"]["profile"]
            .as_str()
            .unwrap()
            .contains("no LBR"),
        "{bolted}"
    );
    let cell = item(&r["cells"], "variant", "bolted");
    assert!(cell["median_ops_per_s"].as_f64().unwrap() > 100.0, "{cell}");
    assert_eq!(cell["verify_failures"], 0, "{cell}");
}
