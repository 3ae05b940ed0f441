//! End-to-end: `[plan] aa = true` on memcached built from Debian's source (the builds the
//! precision test makes, from the shared cache). The A/A variant (a second sandbox of the
//! baseline's binary, not a second build) runs in every round, each run its own sandbox,
//! and its comparison with the baseline is in every output, labelled as the machine's
//! check; if it came out faster or slower, every other verdict carries the mark, and it
//! never counts in `--fail-on`.

mod common;

use common::{no_server_left, Scratch};

fn experiment() -> String {
    let mut text = common::memcached_source("aa", common::ARGS_64);
    for name in ["debian", "copy"] {
        text += &common::build(name, "gcc-12", "-O2", "");
    }
    text + "\n"
        + &common::kv("mixed", "4", 2000, "mix = { get = 90, set = 10 }\n")
        + "\n[plan]\nrepetitions = 4\nwarmup = \"0s\"\nduration = \"300ms\"\naa = true\n"
}

#[test]
fn aa_check_is_in_every_output() {
    let s = Scratch::new();
    let f = s.write("aa.toml", &experiment());
    let out = s
        .run_cmd(&f)
        .args(["--no-history", "--fail-on", "slower"])
        .output()
        .expect("run");
    no_server_left("memcached", &s);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let r = s.results();
    // Only the candidate can fail the run: the A/A check is the machine's.
    let copy_slower = r["comparisons"]
        .as_array()
        .unwrap()
        .iter()
        .any(|k| k["variant"] == "copy" && k["verdict"] == "slower");
    let expected = if copy_slower { 3 } else { 0 };
    assert_eq!(out.status.code(), Some(expected), "{stderr}\n{stdout}");

    // The A/A variant: the baseline's binary, marked, run in every round.
    let aa = common::item(&r["variants"], "name", "debian~aa");
    assert_eq!(aa["aa"], true, "{aa}");
    // The baseline's binary and build, not a build of its own.
    assert_eq!(aa["binary"], r["variants"][0]["binary"], "{aa}");
    assert_eq!(aa["build"], r["variants"][0]["build"], "{aa}");
    assert_eq!(r["variants"].as_array().unwrap().len(), 3);
    let rounds = r["plan"]["rounds"].as_array().unwrap();
    assert_eq!(rounds.len(), 4);
    for round in rounds {
        let labels: Vec<&str> = round
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|x| x.as_str())
            .collect();
        assert_eq!(labels.len(), 3, "{labels:?}");
        assert!(
            labels.iter().any(|l| l.starts_with("debian~aa ")),
            "{labels:?}"
        );
    }
    // Each A/A run its own sandbox: its own server log.
    let cell = common::item(&r["cells"], "variant", "debian~aa");
    let logs: std::collections::BTreeSet<&str> = cell["runs"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|x| x["server_log"].as_str())
        .collect();
    assert_eq!(logs.len(), 4, "{cell}");

    // The A/A comparison, and the other comparison marked only when it differed.
    let ks = r["comparisons"].as_array().unwrap();
    assert_eq!(ks.len(), 2, "{ks:?}");
    let check = common::item(&r["comparisons"], "variant", "debian~aa");
    assert_eq!(check["aa"], true, "{check}");
    let copy = common::item(&r["comparisons"], "variant", "copy");
    assert!(copy.get("aa").is_none(), "{copy}");
    let summary = &r["aa"];
    assert_eq!(summary["variant"], "debian~aa", "{summary}");
    assert_eq!(summary["verdict"], check["verdict"], "{summary}");
    assert_eq!(summary["ratio"], check["ratio"], "{summary}");
    let differs = matches!(check["verdict"].as_str(), Some("faster" | "slower"));
    assert_eq!(summary["differ"], u64::from(differs), "{summary}");
    assert_eq!(copy["suspect"] == true, differs, "{copy}");
    let warned = r["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|w| w.as_str().unwrap_or("").starts_with("the A/A check found"));
    assert_eq!(warned, differs, "{}", r["warnings"]);

    // Every output shows the check, labelled.
    let verdict = match check["verdict"].as_str() {
        _ if differs => "FAILED",
        Some("client-bound" | "machine-busy") => "no answer",
        _ => "passed",
    };
    let line = format!("Machine check (A/A): {verdict}");
    for file in ["report.md", "report.html"] {
        let text = std::fs::read_to_string(s.out().join(file)).expect(file);
        assert!(text.contains(&line), "{file}");
        assert!(text.contains("(A/A check)"), "{file}");
        assert_eq!(text.contains("(suspect: A/A)"), differs, "{file}");
    }
    assert!(stdout.contains(&line), "{stdout}");
    assert!(stdout.contains("debian~aa"), "{stdout}");
    let csv = std::fs::read_to_string(s.out().join("results.csv")).expect("csv");
    let mut lines = csv.lines();
    assert!(lines.next().unwrap().ends_with(",aa,suspect"));
    let aa_rows = lines
        .filter(|l| l.starts_with("mixed,4,debian~aa,") && l.ends_with(&format!(",true,{differs}")))
        .count();
    assert_eq!(aa_rows, 4, "{csv}");
}
