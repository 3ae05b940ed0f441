//! End-to-end: `mode = "both"` on a real memcached within a budget. The builds of
//! precision.rs (same variants, so the shared build cache serves them): the baseline, an
//! identical build, and one with a patch that adds 20,000 additions to every command. The
//! patched build must come out `slower` on both metrics (wall-clock throughput and
//! instructions per operation); the identical one neither faster nor slower on either.
//! A round of three variants takes about 15 s here (a callgrind run about 3 s, mostly
//! valgrind starting memcached), and 4 comparisons decided together need 7 pairs each for
//! p < 0.05 after the adjustment: hence 120 s.

mod common;

use common::{no_server_left, three_builds, Scratch, ADDED_WORK};

const PLAN: &str = r#"mode = "both"
budget = "120s"
precision = 0.01
warmup = "300ms"
duration = "500ms"
ops = 1000
seed = 11
"#;

#[test]
fn mode_both_calls_added_work_slower_on_both_metrics_and_an_identical_build_neither() {
    let s = Scratch::new();
    s.write("work.patch", ADDED_WORK);
    let f = s.write("both.toml", &three_builds("both-e2e", PLAN));
    let out = s.run_cmd(&f).output().expect("run bakeoff");
    no_server_left("memcached", &s);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let r = s.results();
    let took = r["rounds_s"].as_f64().unwrap_or(f64::MAX);
    let rounds = r["plan"]["rounds"].as_array().map_or(1, |a| a.len().max(1));
    assert!(
        took <= 120.0 + took / rounds as f64 * 1.5,
        "{took} s for {rounds} rounds: the budget covers the instruction runs too"
    );
    // Instruction-count runs are marked, carry instructions, and are at least the
    // fewest rounds per variant.
    for cell in r["cells"].as_array().expect("cells") {
        let runs = cell["runs"].as_array().expect("runs");
        let counted: Vec<_> = runs
            .iter()
            .filter(|x| x["instruction_run"] == true)
            .collect();
        assert!(
            counted.len() >= 6,
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
    for metric in ["throughput", "instructions"] {
        let work = cmp("work", metric);
        assert_eq!(work["verdict"], "slower", "{work}");
        let same = cmp("same", metric);
        let verdict = same["verdict"].as_str().unwrap_or_default();
        assert!(
            verdict != "faster" && verdict != "slower",
            "identical builds called {verdict} on {metric}: {same}"
        );
    }
    // Both metrics agree on the patched build: no disagreement flag.
    assert!(cmp("work", "throughput")["disagrees"].is_null());
    let md = std::fs::read_to_string(s.out().join("report.md")).expect("report.md");
    assert!(md.contains("instructions "), "{md}");
    assert!(md.contains("/op \\["), "{md}");
}
