//! End-to-end: `mode = "both"` on a real memcached. Two builds of precision.rs (the
//! shared build cache serves them): the baseline and one with a patch that adds 20,000
//! additions to every command. The patched build must come out `slower` on both metrics
//! (wall-clock throughput and instructions per operation). A round takes about 9 s here
//! (a callgrind run about 3 s, mostly valgrind starting memcached), and 2 comparisons
//! decided together need 6 pairs each for p < 0.05 after the adjustment (the smallest p
//! of 6 pairs is 1/32): hence 7 fixed rounds, one to spare for an invalid run (the
//! fewest too, so precision cannot stop them first). How the counted rounds go beside the wall-clock ones and stop, and that
//! the budget covers them, is the round loop's logic, tested without servers in the
//! runner's loop_tests.rs. An identical build is not run here: its throughput is
//! precision.rs's, and an identical build's instruction counts are the rule's
//! (noise_tests.rs: 0 of 5,000 scripted comparisons faster or slower) on counts that
//! repeat run to run (probes.rs, `instructions_mode_counts_the_same_work_the_same`).
//!
//! What each assertion relies on, and its chance of a false answer:
//! - `work` far more instructions per operation: 20,000 volatile additions per command
//!   are tens of times memcached's own count (measured: 45 times), so every counted
//!   round's ratio and hence the whole CI lie far below 1 (asserted: below 0.5); the word
//!   is slower, or inconclusive where invalid runs left 5 pairs: nil chance of faster.
//! - `work` slower on throughput: the same loop costs tens of microseconds per command,
//!   several times memcached's own work (the throughput drops by more than half), so
//!   every round's ratio lies far below 1 and the paired test's CI excludes 1 at any
//!   level reachable here. On a machine whose other processes took the CPU the answer
//!   is `machine-busy`, no answer, which the test accepts: never a wrong one.

mod common;

use common::{no_server_left, three_builds, Scratch, ADDED_WORK};

const PLAN: &str = r#"mode = "both"
repetitions = 7
min_repetitions = 7
precision = 0.01
warmup = "200ms"
duration = "400ms"
ops = 1000
seed = 11
"#;

#[test]
fn mode_both_calls_added_work_slower_on_both_metrics() {
    let s = Scratch::new();
    s.write("work.patch", ADDED_WORK);
    // The baseline and the patched build (no identical one: see above).
    let two = three_builds("both-e2e", PLAN).replace(
        "[[variant]]\nname = \"same\"\ncompiler = \"gcc-12\"\ncflags = \"-O2\"\n\n",
        "",
    );
    assert!(!two.contains("\"same\""));
    let f = s.write("both.toml", &two);
    let out = s.run_cmd(&f).output().expect("run bakeoff");
    no_server_left("memcached", &s);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let r = s.results();
    assert_eq!(r["stopped_by"], "repetitions");
    // Instruction-count runs are marked, carry instructions, and are at least the
    // fewest rounds per variant.
    for cell in r["cells"].as_array().expect("cells") {
        let runs = cell["runs"].as_array().expect("runs");
        let counted: Vec<_> = runs
            .iter()
            .filter(|x| x["instruction_run"] == true)
            .collect();
        assert!(
            counted.len() >= 7,
            "{} instruction runs: {cell}",
            counted.len()
        );
        assert!(counted
            .iter()
            .filter(|x| x["valid"] == true)
            .all(|x| x["instructions"]["instructions_per_op"].as_f64() > Some(0.0)));
        assert!(
            runs.iter().any(|x| x["instruction_run"].is_null()),
            "{cell}"
        );
    }
    let cmp = |variant: &str, metric: &str| {
        r["comparisons"]
            .as_array()
            .and_then(|a| {
                a.iter()
                    .find(|k| k["variant"] == variant && k["metric"] == metric)
            })
            .cloned()
            .unwrap_or_else(|| panic!("no {metric} comparison for {variant}: {r}"))
    };
    // On instructions the interval, not the word: every counted round puts the patched
    // build at tens of times the baseline's count, so the CI lies far below 1 whatever
    // the rounds; the word needs 6 pairs for p < 0.05 over the 2 comparisons, which
    // invalid runs may leave short (then it stays inconclusive, the interval shown being
    // the widest 5 pairs give).
    let work = cmp("work", "instructions");
    let v = work["verdict"].as_str().unwrap_or_default();
    assert!(v == "slower" || v == "inconclusive", "{work}");
    assert!(work["ci"][1].as_f64().unwrap_or(1.0) < 0.5, "{work}");
    let work = cmp("work", "throughput");
    match work["verdict"].as_str() {
        Some("slower") => assert!(work["ci"][1].as_f64().unwrap_or(1.0) < 1.0, "{work}"),
        Some("machine-busy") => eprintln!("no throughput answer on this busy machine: {work}"),
        _ => panic!("the build with added work: {work}"),
    }
    // Both metrics agree on the patched build: no disagreement flag.
    assert!(cmp("work", "throughput")["disagrees"].is_null());
    let md = std::fs::read_to_string(s.out().join("report.md")).expect("report.md");
    assert!(md.contains("instructions "), "{md}");
    assert!(md.contains("/op \\["), "{md}");
}
