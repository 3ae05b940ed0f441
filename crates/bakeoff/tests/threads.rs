//! End-to-end: thread checking on real memcached servers with four worker threads.
//! A ThreadSanitizer build (gcc-12, `sanitize = ["thread"]`) serving a short kv load,
//! and Debian's memcached under helgrind (`run_under = "helgrind"`). Whether memcached
//! has races under this load is not for the test to say: it checks that each server
//! served, that its log was read, and that whatever was found is named for its
//! variant, fails that variant's verification and nothing else's, and is in the report.

mod common;

use common::{no_server_left, Scratch};

fn experiment(variant: &str) -> String {
    common::memcached_source("threads", "\"-t\", \"4\", \"-m\", \"64\"")
        + &common::installed("plain", "")
        + variant
        + "\n"
        + &common::kv(
            "mixed",
            "8",
            2000,
            "mix = { get = 80, set = 15, delete = 5 }\n",
        )
        + "\n[plan]\nrepetitions = 1\nwarmup = \"200ms\"\nduration = \"1500ms\"\n"
}

/// Runs the experiment and checks what it says of `checked`'s findings (of `tool`).
fn checked_honestly(s: &Scratch, checked: &str, tool: &str) {
    let f = s.write(
        "t.toml",
        &experiment(&format!(
            "\n[[variant]]\nname = \"{checked}\"\n{}",
            variant_keys(checked)
        )),
    );
    let out = s.run_cmd(&f).output().expect("run bakeoff");
    no_server_left("memcached", s);
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let r = s.results();
    let by = |n: &str| {
        r["variants"]
            .as_array()
            .and_then(|v| v.iter().find(|v| v["name"] == n))
            .unwrap_or_else(|| panic!("variant {n}: {stdout}\n{stderr}"))
            .clone()
    };
    // It served: the checked variant's run has operations.
    let cell = common::item(&r["cells"], "variant", checked);
    let ops = cell["runs"][0]["ops"].as_u64().unwrap_or(0);
    assert!(ops > 0, "{checked} served nothing: {cell}\n{stderr}");
    // Its server log was kept, and read: whatever it holds of the tool's reports is
    // what the results name, for this variant only.
    let log_rel = cell["runs"][0]["server_log"].as_str().map(str::to_string);
    let v = by(checked);
    let errors = v["memory_errors"].as_array().cloned().unwrap_or_default();
    eprintln!("{checked}: {} ops, {} findings", ops, errors.len());
    for e in &errors {
        assert_eq!(e["tool"], tool, "{e}");
        eprintln!("  {} {}", e["kind"], e["message"]);
    }
    let rel = log_rel.expect("server_log");
    {
        let log = std::fs::read_to_string(s.out().join(&rel)).unwrap_or_default();
        let reported = match tool {
            "tsan" => log.matches("WARNING: ThreadSanitizer: ").count(),
            _ => log.matches("Possible data race").count() + log.matches(": lock order \"").count(),
        };
        assert_eq!(
            reported == 0,
            errors.is_empty(),
            "log {rel} and findings disagree"
        );
    }
    assert!(by("plain").get("memory_errors").is_none());
    let warnings = r["warnings"].to_string();
    let failed = warnings.contains(&format!("VERIFY FAILED: variant {checked}"));
    assert_eq!(failed, !errors.is_empty(), "{warnings}");
    assert!(
        !warnings.contains("VERIFY FAILED: variant plain"),
        "{warnings}"
    );
    let md = std::fs::read_to_string(s.out().join("report.md")).expect("report.md");
    if let Some(e) = errors.first() {
        assert!(
            md.contains(checked) && md.contains(e["kind"].as_str().unwrap()),
            "{md}"
        );
        assert!(md.contains("## Memory and threading errors"), "{md}");
        assert!(warnings.contains("threading error(s)"), "{warnings}");
    }
}

fn variant_keys(name: &str) -> &'static str {
    match name {
        "tsan" => "compiler = \"gcc-12\"\ncflags = \"-O1\"\nsanitize = [\"thread\"]\n",
        _ => "binary = \"/usr/bin/memcached\"\nrun_under = \"helgrind\"\n",
    }
}

#[test]
fn thread_sanitizer_build_serves_and_its_findings_are_named() {
    let s = Scratch::new();
    checked_honestly(&s, "tsan", "tsan");
}

#[test]
fn helgrind_serves_and_its_findings_are_named() {
    let s = Scratch::new();
    checked_honestly(&s, "helgrind", "helgrind");
}
