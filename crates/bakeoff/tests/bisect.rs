//! End-to-end bisect: a git repository made from Debian's memcached source, eight commits
//! after the good one; the fifth adds a fixed loop of work to every command (a large,
//! known slowdown), the sixth does not build and the seventh repairs it. `bakeoff bisect`
//! on a small budget names the fifth or a range that holds it (never another commit),
//! skipping the one that does not build, with the forecast up front and the evidence per
//! step; on a budget too small to measure the ends it names nothing and says so.

mod common;

use common::{cache_dir, no_server_left, Scratch};
use std::path::Path;
use std::process::Command;

/// 40,000 volatile additions per command: many times memcached's own work per request,
/// about halving its throughput, so the halfway ratio a step is judged against sits far
/// from both ends even on a noisy day.
const WORK: &str = "--- a/proto_text.c\n+++ b/proto_text.c\n@@ -2713,5 +2713,7 @@\n void process_command_ascii(conn *c, char *command) {\n \n+    static volatile unsigned bakeoff_work;\n+    for (unsigned bakeoff_i = 0; bakeoff_i < 40000; bakeoff_i++) bakeoff_work += bakeoff_i;\n     token_t tokens[MAX_TOKENS];\n     size_t ntokens;\n     int comm;\n";

fn sh(dir: &Path, script: &str) {
    let out = Command::new("sh")
        .arg("-ec")
        .arg(script)
        .current_dir(dir)
        .output()
        .expect("sh");
    assert!(
        out.status.success(),
        "{script}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Debian's memcached source as a git repository: tag `good`, then eight commits.
fn repository(s: &Scratch) -> std::path::PathBuf {
    let dl = s.path().join("dl");
    std::fs::create_dir_all(&dl).unwrap();
    sh(&dl, "apt-get source -qq --download-only memcached >/dev/null 2>&1 && dpkg-source -x --no-check memcached_*.dsc src >/dev/null");
    let repo = dl.join("src");
    s.write("work.patch", WORK);
    let patch = s.path().join("work.patch");
    sh(
        &repo,
        "git init -q && git config user.email t@example.org && git config user.name test \
         && git add -A && git commit -qm base && git tag good",
    );
    for i in 1..=8 {
        let change = match i {
            5 => format!("patch -s -p1 < {}", patch.display()),
            6 => "echo 'this does not compile;' >> memcached.c".to_string(),
            7 => "sed -i '$ d' memcached.c".to_string(),
            _ => format!("echo 'note {i}' >> NOTES"),
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
        "name = \"bisect-e2e\"\n[target]\nkind = \"memcached\"\nsource = {{ git = \"{}\", rev = \"good\" }}\nargs = [\"-t\", \"1\"]\n\n[[variant]]\nname = \"o2\"\ncompiler = \"gcc-12\"\ncflags = \"-O2\"\n\n[[workload]]\nkind = \"kv\"\nname = \"kv\"\nconnections = [8]\nkeys = 5000\n\n[plan]\nbudget = \"{budget}\"\nprecision = 0.1\nwarmup = \"100ms\"\nduration = \"500ms\"\n",
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

#[test]
fn bisect_names_the_commit_that_slowed_every_command() {
    let s = Scratch::new();
    let repo = repository(&s);
    // 20 s a step on average: 80 s for the bad revision's step and three halvings.
    let out = bisect(&s, &repo, "20s", &s.out());
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let fifth = String::from_utf8(
        Command::new("git")
            .arg("-C")
            .arg(&repo)
            .args(["rev-parse", "HEAD~3"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let fifth = fifth.trim();
    let found: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(s.out().join("bisect.json")).unwrap())
            .unwrap();
    // The loop halves the throughput: the ends' paired CI excludes 1 whenever the
    // figures are the server's. Where other processes took the CPU the bisect names
    // nothing and says why: no answer, never a wrong commit.
    if found["unresolved"]
        .as_str()
        .is_some_and(|w| w.starts_with("the machine was busy"))
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
            assert_eq!(first, fifth, "a wrong commit: {found}");
            assert!(out.status.success(), "{stdout}\n{stderr}");
            assert!(
                stdout.contains("First commit where the figure moved"),
                "{stdout}"
            );
        }
        None => {
            let candidates: Vec<&str> = found["candidates"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|c| c.as_str())
                .collect();
            assert!(candidates.contains(&fifth), "the range lost it: {found}");
            assert!(!out.status.success(), "{stdout}\n{stderr}");
        }
    }
    // Up front, once the ends are measured: what the budget can localize at this noise
    // (or that it is too small to localize anything, on a machine too noisy for it).
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
    let steps = found["steps"].as_array().unwrap();
    assert!(
        steps.iter().any(|s| s["outcome"] == "does not build"),
        "the broken commit was skipped: {found}"
    );
    for step in steps.iter().filter(|s| s["outcome"] == "measured") {
        for key in ["ratio", "ci95", "verdict", "rounds"] {
            assert!(!step[key].is_null(), "{key}: {step}");
        }
    }
    // After the bad revision, each step was judged sequentially within its cap.
    for step in steps[1..].iter().filter(|s| s["outcome"] == "measured") {
        let (rounds, cap) = (
            step["rounds"].as_u64().unwrap(),
            step["cap"].as_u64().unwrap(),
        );
        assert!(rounds <= cap, "{step}");
        assert!(!step["judged"].is_null(), "{step}");
    }
    assert!(s.out().join("bisect.md").is_file());

    // A budget too small to tell the bad revision from the good one names nothing.
    let tiny = s.path().join("tiny");
    let out = bisect(&s, &repo, "1s", &tiny);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let found: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(tiny.join("bisect.json")).unwrap()).unwrap();
    assert!(found["first"].is_null(), "{found}");
    assert!(
        found["unresolved"]
            .as_str()
            .unwrap_or_default()
            .starts_with("the budget is too small to measure the ends"),
        "{found}"
    );
}
