//! End-to-end PGO: memcached from Debian's source, plain and profile-guided with gcc-12 and
//! clang-16, each trained by the kv workload. The profile data is found and used (gcc: every
//! profile file matches an object of the final build; clang: the merged .profdata is on the
//! compile line), the binaries differ from the plain build, and a second run trains and
//! builds nothing. A training workload that does not exist is bad input.

mod common;

use common::{no_server_left, Scratch};

const EXPERIMENT: &str = r#"name = "pgo-e2e"
[target]
kind = "memcached"
source = { debian = "memcached" }
args = ["-t", "1"]

[[variant]]
name = "plain"
compiler = "gcc-12"
cflags = "-O2"

[[variant]]
name = "gcc-pgo"
compiler = "gcc-12"
cflags = "-O2"
pgo = { workload = "train", duration = "2s" }

[[variant]]
name = "clang-pgo"
compiler = "clang-16"
cflags = "-O2"
pgo = { workload = "train", duration = "2s" }

[[workload]]
kind = "kv"
name = "train"
connections = [4]
keys = 2000

[plan]
repetitions = 1
warmup = "100ms"
duration = "500ms"
"#;

#[test]
fn profile_guided_builds_use_their_training() {
    let s = Scratch::new();
    let f = s.write("pgo.toml", EXPERIMENT);
    let out = s.run_cmd(&f).output().expect("run bakeoff");
    no_server_left("memcached", &s);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r = s.results();
    let variant = |name: &str| {
        r["variants"]
            .as_array()
            .unwrap()
            .iter()
            .find(|v| v["name"] == name)
            .unwrap()
            .clone()
    };
    for name in ["plain", "gcc-pgo", "clang-pgo"] {
        assert_eq!(variant(name)["status"], "ok", "{}", variant(name));
    }
    let plain = variant("plain")["build"]["binary_sha256"].clone();
    for name in ["gcc-pgo", "clang-pgo"] {
        let b = &variant(name)["build"];
        assert_ne!(b["binary_sha256"], plain, "{name}");
        let note = b["profile"].as_str().unwrap_or("");
        assert!(note.contains("trained on train x4"), "{name}: {b}");
    }
    // What changed in the binaries: text sizes and the functions that changed most.
    for name in ["gcc-pgo", "clang-pgo"] {
        let a = &variant(name)["anatomy"];
        assert!(a["text_bytes"].as_u64().unwrap() > 10_000, "{a}");
        assert!(a["baseline_text_bytes"].as_u64().is_some(), "{a}");
        assert!(!a["changed"].as_array().unwrap().is_empty(), "{a}");
    }
    let md = std::fs::read_to_string(s.out().join("report.md")).unwrap();
    assert!(md.contains("## What changed in the binaries"), "{md}");
    let gcc_log = std::fs::read_to_string(s.out().join("logs/build-gcc-pgo.log")).unwrap();
    let line = gcc_log
        .lines()
        .find(|l| l.contains("profile file(s) match an object"))
        .expect("the match line");
    let n: Vec<usize> = line
        .split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect();
    assert!(n[0] > 10 && n[0] == n[1], "{line}");
    assert!(variant("clang-pgo")["build"]["cflags"]
        .as_str()
        .unwrap()
        .contains("-fprofile-instr-use="));

    // Again: the profiles and both builds come from the cache.
    let _ = std::fs::remove_dir_all(s.out());
    let out = s.run_cmd(&f).output().expect("run bakeoff");
    assert!(out.status.success());
    let r = s.results();
    for v in r["variants"].as_array().unwrap() {
        assert_eq!(v["build"]["cached"], true, "{v}");
        if v["name"] != "plain" {
            assert!(
                v["build"]["profile"]
                    .as_str()
                    .unwrap()
                    .ends_with("(cached)"),
                "{v}"
            );
        }
    }
    no_server_left("memcached", &s);

    // A training workload that does not exist: one line at the key, exit 2.
    let bad = s.write(
        "bad.toml",
        &EXPERIMENT.replace(
            "pgo = { workload = \"train\"",
            "pgo = { workload = \"nope\"",
        ),
    );
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_bakeoff"))
        .arg("check")
        .arg(&bad)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("no workload \"nope\" to train on"), "{err}");
}
