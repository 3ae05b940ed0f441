//! Hostile input, round two (issue 44), class 1 and 2: bakeoff deletes only what it made
//! and never writes over a folder it was not given empty. A `sandbox_dir` that holds a
//! user's files (older than the old cleanup's 10 minutes), a system folder, or a folder
//! on /proc or /sys is refused with one line and exit status 2, every file still there;
//! `report --out` never writes over a folder. No server starts in these tests.

mod common;

use common::{one_line_2, Scratch};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

fn bakeoff() -> std::process::Command {
    std::process::Command::new(env!("CARGO_BIN_EXE_bakeoff"))
}

fn experiment(sandbox_dir: Option<&str>) -> String {
    let plan = sandbox_dir
        .map(|d| format!("sandbox_dir = {d:?}\n"))
        .unwrap_or_default();
    format!(
        "name = \"victim\"\n[target]\nkind = \"memcached\"\n[[variant]]\nname = \"a\"\nbinary = \"/bin/true\"\n[[workload]]\nkind = \"kv\"\nconnections = [1]\n[plan]\nwarmup = \"100ms\"\nduration = \"200ms\"\n{plan}"
    )
}

/// A user's folder: four folders and a file, each a day old.
fn users_folder(at: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for d in ["old-project", "notes", ".git", "photos"] {
        let dir = at.join(d);
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("keep.txt");
        std::fs::write(&f, d).unwrap();
        files.push(f);
        let day = SystemTime::now() - Duration::from_secs(86_400);
        std::fs::File::open(&dir)
            .unwrap()
            .set_modified(day)
            .unwrap();
    }
    let f = at.join("todo.txt");
    std::fs::write(&f, "todo").unwrap();
    files.push(f);
    files
}

/// bakeoff said one line holding both of `says`, and the user's `files` are all there
/// (`what` ran, for the message).
fn refused_untouched(o: &std::process::Output, says: [&str; 2], files: &[PathBuf], what: &str) {
    let line = one_line_2(o);
    assert!(
        line.contains(says[0]) && line.contains(says[1]),
        "{what}: {line}"
    );
    all_there(files);
}

fn all_there(files: &[PathBuf]) {
    for f in files {
        assert!(f.is_file(), "{} was removed", f.display());
    }
}

#[test]
fn hostile_sandbox_dir_holding_a_users_files_is_refused_and_untouched() {
    let s = Scratch::new();
    let victim = s.path().join("victim");
    let files = users_folder(&victim);
    let in_file = s.write("in-file.toml", &experiment(Some("victim")));
    let plain = s.write("plain.toml", &experiment(None));
    let store = s.path().join("history.sqlite");
    let out = |name: &str| s.path().join(name);
    let path = |p: &Path| p.to_str().unwrap().to_string();
    let (i, p, v) = (path(&in_file), path(&plain), path(&victim));
    let (o1, o2, o3) = (path(&out("o1")), path(&out("o2")), path(&out("o3")));
    let runs: [&[&str]; 6] = [
        &["check", &i],
        &["check", "--noise", &i],
        &["check", "--noise", "--sandbox-dir", &v, &p],
        &["run", &i, "--out", &o1],
        &["run", &p, "--sandbox-dir", &v, "--out", &o2],
        &["verify", &i, "--out", &o3],
    ];
    for args in runs {
        let o = bakeoff()
            .args(args)
            .env("BAKEOFF_STORE", &store)
            .output()
            .unwrap();
        refused_untouched(
            &o,
            ["did not make", "sandbox folder"],
            &files,
            &format!("{args:?}"),
        );
        assert!(
            !victim.join(".bakeoff-owned").exists(),
            "{args:?} marked it"
        );
    }
    // A relative --sandbox-dir, from the folder above.
    let o = bakeoff()
        .current_dir(s.path())
        .args([
            "run",
            "plain.toml",
            "--sandbox-dir",
            "victim",
            "--out",
            "o4",
        ])
        .env("BAKEOFF_STORE", &store)
        .output()
        .unwrap();
    one_line_2(&o);
    all_there(&files);
}

#[test]
fn hostile_sandbox_dir_system_folders_are_refused_at_check() {
    let s = Scratch::new();
    for dir in [
        "/",
        "/proc",
        "/proc/sys",
        "/sys",
        "/sys/fs",
        "/etc",
        "/usr",
        "/dev",
        "/var/tmp",
    ] {
        let f = s.write("sys.toml", &experiment(Some(dir)));
        let o = bakeoff().arg("check").arg(&f).output().unwrap();
        let line = one_line_2(&o);
        assert!(line.contains("sandbox_dir"), "{dir}: {line}");
    }
}

/// A results folder of one run, as `report` reads it.
fn results_folder(s: &Scratch) -> PathBuf {
    common::results_folder(
        s,
        "results",
        "r",
        1,
        &[("a", 1.0), ("b", 1.1)],
        6,
        |f, round| 1000.0 * f * (1.0 + 0.01 * round as f64),
    )
}

#[test]
fn hostile_report_out_never_writes_over_a_folder() {
    let s = Scratch::new();
    let dir = results_folder(&s);
    let before = std::fs::read(dir.join("results.json")).unwrap();
    let mine = s.path().join("mine");
    std::fs::create_dir(&mine).unwrap();
    std::fs::write(mine.join("results.json"), "my own file").unwrap();
    let file = s.write("a-file", "x");
    let report_to = |out: &Path| {
        bakeoff()
            .arg("report")
            .arg(&dir)
            .args(["--baseline", "b", "--out"])
            .arg(out)
            .output()
            .unwrap()
    };
    for out in [dir.clone(), dir.join("."), mine.clone(), file.clone()] {
        let line = one_line_2(&report_to(&out));
        assert!(line.contains("--out"), "{line}");
    }
    assert_eq!(std::fs::read(dir.join("results.json")).unwrap(), before);
    assert_eq!(
        std::fs::read_to_string(mine.join("results.json")).unwrap(),
        "my own file"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "x");
    // An absent folder is made; an empty one is taken.
    for out in [s.path().join("new/deep"), {
        let e = s.path().join("empty");
        std::fs::create_dir(&e).unwrap();
        e
    }] {
        let o = report_to(&out);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert!(out.join("report.md").is_file());
    }
}

#[test]
fn hostile_cache_holding_a_users_files_is_refused_and_untouched() {
    let s = Scratch::new();
    let victim = s.path().join("home");
    let files = users_folder(&victim);
    let f = s.write("x.toml", &experiment(None));
    let o = bakeoff()
        .arg("run")
        .arg(&f)
        .arg("--cache")
        .arg(&victim)
        .arg("--sandbox-dir")
        .arg(s.path().join("sandboxes"))
        .arg("--out")
        .arg(s.path().join("out"))
        .env("BAKEOFF_STORE", s.path().join("history.sqlite"))
        .output()
        .unwrap();
    refused_untouched(&o, ["build cache", "--cache"], &files, "run --cache");
    assert_eq!(std::fs::read_dir(&victim).unwrap().count(), 5);
}
