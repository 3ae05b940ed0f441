//! End-to-end PGO: memcached from Debian's source, plain and profile-guided with gcc-12 and
//! clang-16, each trained by the kv workload. The profile data is found and used (gcc: every
//! profile file matches an object of the final build; clang: the merged .profdata is on the
//! compile line), the binaries differ from the plain build, and a second run trains and
//! builds nothing. The training workload is declared only for training: it is never
//! measured. A training workload that does not exist, or one nothing trains on, is bad
//! input.

mod common;

use common::{build, item, no_server_left, postgres_debian, short_point_select, Scratch};

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
train_only = true
connections = [4]
keys = 2000
mix = { get = 50, set = 50 }

[[workload]]
kind = "kv"
name = "measured"
connections = [4]
keys = 2000

[plan]
repetitions = 1
warmup = "100ms"
duration = "500ms"
"#;

/// gcc-pgo's build log says that a profile matched every one of more than `least` objects.
fn assert_profiles_match(s: &Scratch, least: usize) {
    let log = std::fs::read_to_string(s.out().join("logs/build-gcc-pgo.log")).unwrap();
    let line = log
        .lines()
        .find(|l| l.contains("profile file(s) match an object"))
        .expect("the match line");
    let n: Vec<usize> = line
        .split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect();
    assert!(n[0] > least && n[0] == n[1], "{line}");
}

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
    let variant = |name: &str| item(&r["variants"], "name", name).clone();
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
    // The training-only workload trained and was not measured.
    for c in r["cells"].as_array().unwrap() {
        assert_eq!(c["workload"], "measured", "{c}");
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
    assert_profiles_match(&s, 10);
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
    let (code, err) = common::check(&bad);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("no workload \"nope\" to train on"), "{err}");

    // A training-only workload nothing trains on is a mistake, not a silent no-op.
    let bad = s.write(
        "unused.toml",
        &EXPERIMENT.replace("workload = \"train\"", "workload = \"measured\""),
    );
    let (code, err) = common::check(&bad);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("unused.toml:27:14") && err.contains("no variant's pgo or bolt trains on it"),
        "{err}"
    );
}

/// PostgreSQL 15 from Debian's source, profile-guided with gcc-12: the instrumented server
/// initializes and loads a data directory of its own (as the unprivileged server user when
/// bakeoff is root, writing its profile where that user may), is trained by an oltp
/// workload declared only for training, and the final build finds a profile for most of
/// its objects. Two full PostgreSQL builds take about 8 minutes on 2 cores, so this stays
/// out of CI: `cargo test --release -p bakeoff --test pgo -- --ignored`.
#[test]
#[ignore]
fn postgres_pgo_trains_on_its_own_data() {
    let s = common::sql_scratch();
    let f = s.write(
        "pgpgo.toml",
        &(postgres_debian("pg-pgo-e2e")
            + &build(
                "gcc-pgo",
                "gcc-12",
                "-O2",
                "pgo = { workload = \"train\", duration = \"10s\" }\n",
            )
            + r#"
[[workload]]
kind = "oltp"
name = "train"
train_only = true
test = "oltp_read_write"
table_size = 2000
connections = [4]
"# + &short_point_select("name = \"measured\"\n")),
    );
    let out = s.run_cmd(&f).output().expect("run bakeoff");
    no_server_left("postgres", &s);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let r = s.results();
    let v = &r["variants"][0];
    assert_eq!(v["status"], "ok", "{v}");
    let note = v["build"]["profile"].as_str().unwrap_or("");
    assert!(note.contains("trained on train x4"), "{v}");
    assert_profiles_match(&s, 100);
    for c in r["cells"].as_array().unwrap() {
        assert_eq!(c["workload"], "measured", "{c}");
        assert!(c["median_ops_per_s"].as_f64().unwrap() > 10.0, "{c}");
    }
}
