//! Bundles (no servers): `bakeoff export` then `bakeoff import` into an empty history
//! gives the same `history` and `trend` output; importing again skips what is there; a
//! tampered bundle (one byte of one file changed, a path that leaves the results folder,
//! a link, a file over the manifest's size, a newer schema) is refused with one line
//! naming the file, exit status 2, and nothing of it is written (neither the results
//! folder nor the store). Tampering unpacks the bundle with the system's tar, changes
//! it, and packs it again.

mod common;

use common::{assert_ok as ok, copy_kinds_data, record_folder, recorded_folder, sh, Scratch};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bakeoff(s: &Scratch) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_bakeoff"));
    c.current_dir(s.path())
        .env("BAKEOFF_STORE", s.path().join("env-store.sqlite"));
    c
}

fn with_store(s: &Scratch, store: &Path, args: &[&str]) -> Output {
    bakeoff(s)
        .args(args)
        .arg("--store")
        .arg(store)
        .output()
        .expect("run bakeoff")
}

/// `history --json` without what differs by machine: the folder and when it was recorded.
fn history(s: &Scratch, store: &Path) -> serde_json::Value {
    let out = ok(&with_store(
        s,
        store,
        &["history", "--json", "--limit", "0"],
    ));
    let mut v: serde_json::Value = serde_json::from_str(&out).unwrap();
    for r in v.as_array_mut().unwrap() {
        r["recorded_utc"] = serde_json::Value::Null;
        r["entry"]["folder"] = serde_json::Value::Null;
    }
    v
}

/// The bundle unpacked into a fresh folder, `change` run there, packed again (manifest
/// first) as `name`.
fn tampered(s: &Scratch, bundle: &Path, name: &str, change: &str) -> PathBuf {
    let work = s.path().join(format!("work-{name}"));
    std::fs::create_dir(&work).unwrap();
    sh(&work, &format!("tar xzf {}", bundle.display()));
    sh(&work, change);
    let out = s.path().join(name);
    sh(
        &work,
        &format!("tar czf {} bakeoff-bundle.json files", out.display()),
    );
    out
}

#[test]
fn export_import_round_trip_and_tampered_bundles_refused() {
    let s = Scratch::new();
    let store = s.path().join("a.sqlite");
    let mut folders = Vec::new();
    for i in 0..8 {
        let level = if i < 4 { 100_000.0 } else { 115_000.0 };
        folders.push(recorded_folder(
            &s,
            &store,
            &format!("res/exp-{i}"),
            "carried",
            &format!("2026-11-01T10:{i:02}:00Z"),
            &[("base", 1.0), ("fast", 1.04)],
            level,
        ));
    }
    // A results folder of a real run with a kind's figures (tests/data), recorded too.
    let kinds = s.path().join("res/kinds");
    copy_kinds_data(&kinds);
    std::fs::create_dir_all(kinds.join("logs")).unwrap();
    std::fs::write(kinds.join("logs/server.log"), "a nested file\n").unwrap();
    record_folder(&store, &kinds, 1);
    folders.push(kinds);

    // Export by folder and by history id, in the store's order.
    let bundle = s.path().join("carried.bundle");
    let mut args: Vec<String> = vec!["export".into()];
    args.extend(folders[..8].iter().map(|f| f.display().to_string()));
    args.push("9".into());
    args.extend(["-o".into(), bundle.display().to_string()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = ok(&with_store(&s, &store, &args));
    assert!(out.contains("9 experiments"), "{out}");
    // Exporting over an existing file is refused.
    let again = with_store(&s, &store, &args);
    assert_eq!(again.status.code(), Some(2));

    // Into an empty history elsewhere: the same history and trend.
    let other = s.path().join("b.sqlite");
    let results = s.path().join("imported");
    let import = |b: &Path| {
        bakeoff(&s)
            .arg("import")
            .arg(b)
            .arg("--results-dir")
            .arg(&results)
            .arg("--store")
            .arg(&other)
            .output()
            .unwrap()
    };
    let out = ok(&import(&bundle));
    assert!(out.contains("imported 9"), "{out}");
    assert_eq!(history(&s, &store), history(&s, &other));
    let trend = |st: &Path| ok(&with_store(&s, st, &["trend", "carried"]));
    assert_eq!(trend(&store), trend(&other));
    assert!(trend(&other).contains("shift at #5"), "{}", trend(&other));
    assert_eq!(
        std::fs::read_to_string(results.join("kinds/logs/server.log")).unwrap(),
        "a nested file\n"
    );
    // Again: every experiment is there already.
    let out = ok(&import(&bundle));
    assert!(
        out.contains("imported 0") && out.contains("9 already there"),
        "{out}"
    );

    // Tampered bundles: refused by name, nothing written.
    let cases: [(&str, &str, &str); 6] = [
        (
            "byte.bundle",
            "printf 'X' | dd of=files/000000 bs=1 seek=10 conv=notrunc 2>/dev/null",
            "exp-0/report.html: its bytes do not match",
        ),
        (
            "leave.bundle",
            "sed -i 's#\"path\": \"report.html\"#\"path\": \"../../outside.html\"#' bakeoff-bundle.json",
            "exp-0/../../outside.html: a path that leaves the results folder",
        ),
        (
            "link.bundle",
            "rm files/000001 && ln -s /etc/passwd files/000001",
            "exp-0/results.json (files/000001): a symbolic link",
        ),
        (
            "big.bundle",
            "printf 'more' >> files/000002",
            "over the manifest's",
        ),
        (
            "newer.bundle",
            "sed -i 's#bakeoff.bundle/1#bakeoff.bundle/2#' bakeoff-bundle.json",
            "bakeoff-bundle.json: written by a newer bakeoff",
        ),
        (
            "folder.bundle",
            "sed -i 's#\"folder\": \"exp-3\"#\"folder\": \"..\"#' bakeoff-bundle.json",
            "a folder name that is not a plain name",
        ),
    ];
    let fresh_store = s.path().join("c.sqlite");
    let fresh_results = s.path().join("never");
    for (name, change, want) in cases {
        let b = tampered(&s, &bundle, name, change);
        let out = bakeoff(&s)
            .arg("import")
            .arg(&b)
            .arg("--results-dir")
            .arg(&fresh_results)
            .arg("--store")
            .arg(&fresh_store)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        assert_eq!(out.status.code(), Some(2), "{name}: {err}");
        assert_eq!(err.lines().count(), 1, "{name}: {err}");
        assert!(err.contains(want), "{name}: {err}");
        assert!(
            !fresh_results.exists(),
            "{name}: the results folder was made"
        );
        assert!(!fresh_store.exists(), "{name}: the store was made");
        assert!(!s.path().join("outside.html").exists());
    }
}
