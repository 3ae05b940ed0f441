//! A machine busy with something else: a CPU hog that is not bakeoff's, started beside
//! an A/A experiment, makes it say machine-busy and name the hog. A file of its own, so
//! that the hogs never run beside the other tests of a file (cargo runs a file's tests
//! in parallel, its files one after another).

mod common;

use common::{busy_machine_experiment, others_named, Hog, Scratch};

/// Effect relied on: one `yes` per CPU, started by this test (not by bakeoff), takes
/// about half of every CPU for the whole A/A experiment, so every run sees other
/// processes above a tenth of a CPU while the load waits. The answer is machine-busy
/// with `yes` named; it cannot be faster or slower (machine-busy replaces the
/// throughput answer whenever more than a quarter of a side's runs were disturbed) nor
/// client-bound (a load kept from its CPU is not saturated by its own work). Its chance
/// of another answer is that of fewer than two of six runs on a side being disturbed
/// with the hogs running throughout: nil.
#[test]
fn a_hog_beside_an_aa_experiment_gives_machine_busy_naming_it() {
    let s = Scratch::new();
    let stdout = s.run_beside(
        Hog::everywhere,
        "hogged.toml",
        &busy_machine_experiment("hogged", &["a"], "aa = true\n"),
        &["--no-history"],
    );
    let r = s.results();
    let ks = r["comparisons"].as_array().unwrap();
    assert!(!ks.is_empty());
    for k in ks {
        assert_eq!(k["verdict"], "machine-busy", "{k}");
    }
    let (mut named, mut runs) = (0, 0);
    for c in r["cells"].as_array().unwrap() {
        for run in c["runs"].as_array().unwrap() {
            runs += 1;
            named += usize::from(others_named(run).iter().any(|n| n == "yes"));
            assert_eq!(run["client_bound"], false, "{run}");
        }
    }
    assert!(2 * named > runs, "yes named in {named} of {runs} runs");
    assert!(stdout.contains("machine-busy"), "{stdout}");
    assert!(stdout.contains("yes "), "{stdout}");
    assert!(!stdout.contains("client-bound"), "{stdout}");
}
