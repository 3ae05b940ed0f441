//! End-to-end bisect, what only real servers show: a git repository made from Debian's
//! memcached source, two commits after the good one; the first adds a fixed loop of work
//! to every command (a large, known slowdown), the second does not touch the server.
//! `bakeoff bisect` on a small budget measures the bad revision, then halves once, and
//! names the first commit or a range that holds it (never another commit), with the
//! forecast up front, the evidence per step in bisect.json and bisect.md, and the summary
//! on stdout. The search over more commits (skips, a budget too small to measure the
//! ends, the steps and budget of eight commits) is tested against scripted steps in
//! `crates/bisect/src/study_tests.rs`, in the fast tier.
//!
//! The commits' dates are fixed, so their hashes, and the build cache's keys, are the
//! same on every run: a rerun builds nothing.

mod common;

use common::{cache_dir, no_server_left, sh, Scratch};
use std::path::Path;
use std::process::Command;

/// 40,000 volatile additions per command: many times memcached's own work per request,
/// about halving its throughput, so the halfway ratio a step is judged against sits far
/// from both ends even on a noisy day.
const WORK: &str = "--- a/proto_text.c\n+++ b/proto_text.c\n@@ -2713,5 +2713,7 @@\n void process_command_ascii(conn *c, char *command) {\n \n+    static volatile unsigned bakeoff_work;\n+    for (unsigned bakeoff_i = 0; bakeoff_i < 40000; bakeoff_i++) bakeoff_work += bakeoff_i;\n     token_t tokens[MAX_TOKENS];\n     size_t ntokens;\n     int comm;\n";

/// Debian's memcached source as a git repository: tag `good`, then two commits.
fn repository(s: &Scratch) -> std::path::PathBuf {
    let dl = s.path().join("dl");
    std::fs::create_dir_all(&dl).unwrap();
    sh(&dl, "apt-get source -qq --download-only memcached >/dev/null 2>&1 && dpkg-source -x --no-check memcached_*.dsc src >/dev/null");
    let repo = dl.join("src");
    s.write("work.patch", WORK);
    let patch = s.path().join("work.patch");
    let dated =
        "export GIT_AUTHOR_DATE='2026-01-01T00:00:00Z' GIT_COMMITTER_DATE='2026-01-01T00:00:00Z'";
    sh(
        &repo,
        &format!("{dated} && git init -q && git config user.email t@example.org && git config user.name test \
         && git add -A && git commit -qm base && git tag good"),
    );
    for i in 1..=2 {
        let change = match i {
            1 => format!("{dated} && patch -s -p1 < {}", patch.display()),
            _ => format!("{dated} && echo 'note {i}' >> NOTES"),
        };
        sh(
            &repo,
            &format!("{change} && git add -A && git commit -qm 'commit {i}'"),
        );
    }
    repo
}

/// `bakeoff bisect` on the repository with `[plan] budget` per step, into `out`.
fn bisect(s: &Scratch, repo: &Path, budget: &str, out: &Path) -> std::process::Output {
    let text = format!(
        "name = \"bisect-e2e\"\n[target]\nkind = \"memcached\"\nsource = {{ git = \"{}\", rev = \"good\" }}\nargs = [\"-t\", \"1\"]\n\n[[variant]]\nname = \"o2\"\ncompiler = \"gcc-12\"\ncflags = \"-O2\"\n\n[[workload]]\nkind = \"kv\"\nname = \"kv\"\nconnections = [8]\nkeys = 5000\n\n[plan]\nbudget = \"{budget}\"\nprecision = 0.1\nwarmup = \"50ms\"\nduration = \"250ms\"\n",
        repo.display()
    );
    let f = s.write("bisect.toml", &text);
    let out = Command::new(env!("CARGO_BIN_EXE_bakeoff"))
        .arg("bisect")
        .arg(&f)
        .args([
            "--good", "good", "--bad", "HEAD", "--cell", "kv:8", "--quiet",
        ])
        .arg("--out")
        .arg(out)
        .arg("--cache")
        .arg(cache_dir())
        .arg("--sandbox-dir")
        .arg(s.sandboxes())
        .env("BAKEOFF_STORE", s.path().join("history.sqlite"))
        .output()
        .expect("run bakeoff bisect");
    no_server_left("memcached", s);
    out
}

/// What every bisect writes, whatever it found: each step's evidence and folder in
/// bisect.json, bisect.md with a row per step, and stdout showing it.
fn files_users_read(s: &Scratch, found: &serde_json::Value, stdout: &str) {
    let steps = found["steps"].as_array().unwrap();
    assert_eq!(steps[0]["commit"], found["bad"], "{found}");
    assert_eq!(steps[0]["subject"], "commit 2", "{found}");
    for step in steps.iter().filter(|s| s["outcome"] == "measured") {
        for key in ["ratio", "ci95", "verdict", "rounds", "folder"] {
            assert!(!step[key].is_null(), "{key}: {step}");
        }
        // Each step is an experiment of its own, with the reports of any other.
        let folder = Path::new(step["folder"].as_str().unwrap());
        assert!(folder.join("results.json").is_file(), "{step}");
    }
    // bisect.md is what stdout showed, with a row per step.
    let md = std::fs::read_to_string(s.out().join("bisect.md")).unwrap();
    assert!(
        md.starts_with("# bisect: bisect-e2e\n\nCell kv x8, good "),
        "{md}"
    );
    assert!(stdout.starts_with(&md), "{stdout}");
    assert!(
        md.contains(
            "| step | commit | subject | outcome | ratio | 95% CI | rounds | verdict | judged by |"
        ),
        "{md}"
    );
    for i in 1..=steps.len() {
        assert!(md.contains(&format!("\n| {i} | ")), "{md}");
    }
    assert!(
        stdout.ends_with(&format!("\nresults: {}\n", s.out().display())),
        "{stdout}"
    );
}

/// Up front, once the ends are measured: what the budget can localize at this noise (or
/// that it is too small to localize anything, on a machine too noisy for it), said before
/// the second step's line.
fn forecast_before_the_halving(found: &serde_json::Value, stderr: &str) {
    let forecast = found["forecast"]["text"].as_str().unwrap_or_default();
    assert!(
        forecast.starts_with("at this noise (")
            && (forecast.contains("can localize a change of")
                || forecast.contains("too small to localize anything")),
        "{found}"
    );
    let said = stderr
        .find(&format!("bisect: {forecast}"))
        .expect("forecast printed");
    let second_step = stderr
        .match_indices("bisect: ")
        .nth(3)
        .map_or(usize::MAX, |m| m.0);
    assert!(
        said < second_step,
        "the forecast comes before the halving: {stderr}"
    );
}

#[test]
fn bisect_names_the_commit_that_slowed_every_command() {
    let s = Scratch::new();
    let repo = repository(&s);
    // 15 s a step: 30 s for the bad revision's step and one halving. A round of two
    // 0.3 s runs measured 2.2 s here under a load average of 7 to 10: 6 rounds in 15 s,
    // the fewest that judge the ends.
    let out = bisect(&s, &repo, "15s", &s.out());
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let slowed = String::from_utf8(
        Command::new("git")
            .arg("-C")
            .arg(&repo)
            .args(["rev-parse", "HEAD~1"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let slowed = slowed.trim();
    let found: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(s.out().join("bisect.json")).unwrap())
            .unwrap();
    assert!(
        stderr
            .lines()
            .any(|l| l.starts_with("bisect: 2 commits from ")
                && l.contains(" on kv x8; a budget of 30s for ~2 steps (15s a step on average")),
        "{stderr}"
    );
    files_users_read(&s, &found, &stdout);
    // The loop halves the throughput: the ends' paired CI excludes 1 whenever the
    // figures are the server's. Where other processes took the CPU the bisect names
    // nothing and says why (that the machine was busy, or, when the busy rounds were
    // also too few, that the budget was too small): no answer, never a wrong commit.
    if found["unresolved"]
        .as_str()
        .is_some_and(|w| w.starts_with("the machine was busy"))
        || found["steps"][0]["verdict"] == "machine-busy"
    {
        eprintln!("no answer on this busy machine: {found}");
        return;
    }
    assert_eq!(
        found["direction"], "slower",
        "the ends were not measured: {found}"
    );
    // The right commit, or a range that holds it; never another commit.
    match found["first"].as_str() {
        Some(first) => {
            assert_eq!(first, slowed, "a wrong commit: {found}");
            assert!(out.status.success(), "{stdout}\n{stderr}");
            assert!(
                stdout.contains(&format!(
                    "**First commit where the figure moved: {slowed}**"
                )),
                "{stdout}"
            );
            let said = stderr
                .lines()
                .find_map(|l| l.strip_prefix("bisect: first commit where kv x8 moved: "))
                .unwrap_or_default();
            assert!(
                said.ends_with(" commit 1") && slowed.starts_with(said.split(' ').next().unwrap()),
                "{stderr}"
            );
        }
        None => {
            let candidates: Vec<&str> = found["candidates"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|c| c.as_str())
                .collect();
            assert!(candidates.contains(&slowed), "the range lost it: {found}");
            assert!(!out.status.success(), "{stdout}\n{stderr}");
        }
    }
    forecast_before_the_halving(&found, &stderr);
    // After the bad revision, each step was judged sequentially within its cap.
    let steps = found["steps"].as_array().unwrap();
    for step in steps[1..].iter().filter(|s| s["outcome"] == "measured") {
        let (rounds, cap) = (
            step["rounds"].as_u64().unwrap(),
            step["cap"].as_u64().unwrap(),
        );
        assert!(rounds <= cap, "{step}");
        assert!(!step["judged"].is_null(), "{step}");
    }
}
