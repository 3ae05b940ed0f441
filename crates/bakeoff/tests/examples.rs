//! Every file of examples/ runs as CI runs it (issue 49): as the user the suite runs as
//! (root in CI), with bakeoff's cache at its default place under that user's home. The
//! home is the suite's own (`common::private_home`, mode 0700 like /root, so the
//! unprivileged server user cannot enter it, as on a fresh machine), kept between runs so
//! that a rerun fetches and builds nothing.
//!
//! Each file is first checked as written (`bakeoff check`), then run with a short plan: one
//! round, short phases, the first value of each sweep, small tables; every variant must
//! have built or been fetched, started and verified, and every cell of every variant must
//! have a valid run. A new example joins by being in the folder.
//!
//! What the suite cannot afford is swapped, and said here:
//! - variants built from MariaDB's or PostgreSQL's source (about 23 and several minutes a
//!   build on 2 cores) run Debian's installed server instead (`SWAPPED`);
//! - variants built from SQLite's or Redis's source are built at -O0 (`AT_O0`), sharing the
//!   builds tests/sqlite.rs and tests/redis.rs make;
//! - `[tune]` races one candidate (gcc-12 -O2, no LTO or PGO) in a short budget;
//! - `[[host]]` destinations (machines of the user's) are two sshd servers this test
//!   starts on 127.0.0.2 and 127.0.0.3, the way tests/hosts.rs reaches hosts.

mod common;

use common::sshd::Sshd;
use common::Scratch;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// Targets whose source builds take minutes here: their build variants run this binary.
const SWAPPED: &[(&str, &str)] = &[
    ("mariadb", "/usr/sbin/mariadbd"),
    ("postgres", "/usr/lib/postgresql/15/bin/postgres"),
];

/// Targets whose builds the suite makes at -O0 (SQLite's one-file amalgamation took 98-135 s
/// at -O2 in CI beside the other tests, a Redis build 130-190 s): their build variants'
/// cflags become "-O0". The build still runs, from the same source with the same
/// compiler; only its optimisation is not the example's.
const AT_O0: &[&str] = &["sqlite", "redis"];

/// Examples run at once.
const WORKERS: usize = 2;

/// The examples that took longest here (over 30 s each), started first.
const SLOW_FIRST: &[&str] = &[
    "memcached-capacity",
    "mysql-verify-replay",
    "mariadb-vs-mysql",
    "mariadb-gcc-vs-clang",
    "mysql-versions",
    "postgres-tpcc",
    "mariadb-sqlsuite-replay",
    "memcached-why",
];

/// The keys that make a variant a build (and what only a build takes).
const BUILD_KEYS: &[&str] = &[
    "compiler",
    "cflags",
    "ldflags",
    "lto",
    "pgo",
    "bolt",
    "patches",
    "configure_args",
    "rev",
    "sanitize",
];

fn examples_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples")
}

/// The example made short, as a document; what was swapped, in words.
fn shortened(text: &str) -> (toml_edit::DocumentMut, Vec<String>) {
    use toml_edit::{value, Array, Item};
    let mut doc: toml_edit::DocumentMut = text.parse().expect("an example parses");
    let mut said = Vec::new();
    let kind = doc["target"]["kind"].as_str().unwrap_or("").to_string();
    let plan = doc
        .entry("plan")
        .or_insert(toml_edit::table())
        .as_table_mut()
        .expect("[plan] is a table");
    plan.insert("repetitions", value(1));
    plan.insert("warmup", value("200ms"));
    plan.insert("duration", value("1s"));
    plan.remove("precision");
    let searches = doc
        .get("workload")
        .and_then(Item::as_array_of_tables)
        .is_some_and(|ws| ws.iter().any(|w| w.contains_key("slo")));
    if searches {
        // A capacity search halves its bracket down to the precision: a coarse one is
        // a few trials.
        doc["plan"]["precision"] = value(0.5);
        doc["plan"]["warmup"] = value("100ms");
        doc["plan"]["duration"] = value("500ms");
        doc["plan"]["budget"] = value("40s");
        said.push("capacity searched to 50%, trials of 0.5 s, for at most 40 s".into());
    }
    if let Some(workloads) = doc
        .get_mut("workload")
        .and_then(Item::as_array_of_tables_mut)
    {
        for w in workloads.iter_mut() {
            // A warehouse sweep searched for its largest passing W needs two.
            let keep_w = if w.contains_key("find_max_w") { 2 } else { 1 };
            if let Some(ws) = w.get_mut("warehouses").and_then(Item::as_array_mut) {
                while ws.len() > keep_w {
                    ws.remove(ws.len() - 1);
                }
            }
            for key in ["connections", "concurrency", "tests"] {
                let first = w
                    .get(key)
                    .and_then(Item::as_array)
                    .and_then(|a| a.get(0).cloned());
                if let Some(first) = first {
                    let mut one = Array::new();
                    one.push(first);
                    w.insert(key, value(one));
                }
            }
            let wkind = w
                .get("kind")
                .and_then(Item::as_str)
                .unwrap_or("")
                .to_string();
            if w.get("warehouses")
                .and_then(Item::as_integer)
                .is_some_and(|n| n > 1)
            {
                w.insert("warehouses", value(1));
            }
            match wkind.as_str() {
                "sqlsuite" => {
                    w.insert("scale", value(0.01));
                }
                "tpcb" => {
                    w.insert("scale", value(1));
                }
                "tpch" => {
                    w.insert("scale", value(0.01));
                }
                _ => {}
            }
            // Small tables: what is checked is that every variant serves, not its speed.
            for (key, most) in [
                ("records", 2000),
                ("keys", 10000),
                ("tables", 1),
                ("table_size", 10000),
                ("iterations", 2),
            ] {
                if w.get(key)
                    .and_then(Item::as_integer)
                    .is_some_and(|n| n > most)
                {
                    w.insert(key, value(most));
                }
            }
        }
    }
    if doc["plan"]
        .get("layouts")
        .and_then(Item::as_integer)
        .is_some_and(|n| n > 2)
    {
        doc["plan"]["layouts"] = value(2);
        said.push("two code layouts".into());
    }
    // Training runs (PGO, BOLT) short: what is checked is that the trained build serves.
    if let Some(variants) = doc
        .get_mut("variant")
        .and_then(Item::as_array_of_tables_mut)
    {
        for v in variants.iter_mut() {
            for key in ["pgo", "bolt"] {
                if let Some(t) = v.get_mut(key).and_then(Item::as_table_like_mut) {
                    t.insert("duration", value("2s"));
                }
            }
        }
    }
    if let Some((_, binary)) = SWAPPED.iter().find(|(k, _)| *k == kind) {
        if let Some(variants) = doc
            .get_mut("variant")
            .and_then(Item::as_array_of_tables_mut)
        {
            for v in variants.iter_mut() {
                if v.contains_key("compiler") || v.contains_key("cflags") {
                    for k in BUILD_KEYS {
                        v.remove(k);
                    }
                    v.insert("binary", value(*binary));
                    let name = v.get("name").and_then(Item::as_str).unwrap_or("?");
                    said.push(format!("{name}: built from source, run as {binary}"));
                }
            }
        }
        if let Some(t) = doc.get_mut("target").and_then(Item::as_table_mut) {
            t.remove("source");
        }
        said.extend(drop_twins(&mut doc));
    }
    if AT_O0.contains(&kind.as_str()) {
        if let Some(variants) = doc
            .get_mut("variant")
            .and_then(Item::as_array_of_tables_mut)
        {
            for v in variants.iter_mut() {
                let written = v.get("cflags").and_then(Item::as_str).map(str::to_string);
                if let Some(flags) = written.filter(|f| f != "-O0") {
                    v.insert("cflags", value("-O0"));
                    let name = v.get("name").and_then(Item::as_str).unwrap_or("?");
                    said.push(format!(
                        "{name}: built at -O0 (cflags {flags:?} as written)"
                    ));
                }
            }
        }
    }
    if let Some(tune) = doc.get_mut("tune").and_then(Item::as_table_mut) {
        tune.insert("compiler", value(Array::from_iter(["gcc-12"])));
        tune.insert("opt", value(Array::from_iter(["-O2"])));
        tune.insert("lto", value(Array::from_iter(["none"])));
        tune.insert("pgo", value(Array::from_iter([false])));
        tune.remove("bolt");
        tune.remove("flags");
        tune.remove("march");
        said.push("[tune]: one candidate, gcc-12 -O2".into());
        doc["plan"]["budget"] = value("1m");
    }
    (doc, said)
}

/// Drops the variants the swap made twins of an earlier one (the same keys but the name:
/// builds that all became Debian's binary), pointing a baseline that named one at its
/// kept twin; what was dropped, in words. Twins measure nothing the first does not.
fn drop_twins(doc: &mut toml_edit::DocumentMut) -> Vec<String> {
    use toml_edit::Item;
    let Some(variants) = doc
        .get_mut("variant")
        .and_then(Item::as_array_of_tables_mut)
    else {
        return Vec::new();
    };
    let shape = |t: &toml_edit::Table| {
        let mut keys: Vec<String> = t
            .iter()
            .filter(|(k, _)| *k != "name")
            .map(|(k, v)| {
                // The value alone: a comment beside it does not make a variant another.
                let bare = v.as_value().map_or_else(
                    || v.to_string(),
                    |x| {
                        let mut x = x.clone();
                        x.decor_mut().clear();
                        x.to_string()
                    },
                );
                format!("{k}={bare}")
            })
            .collect();
        keys.sort();
        keys.join(";")
    };
    let name = |t: &toml_edit::Table| {
        t.get("name")
            .and_then(Item::as_str)
            .unwrap_or("?")
            .to_string()
    };
    let mut kept: Vec<(String, String)> = Vec::new();
    let mut renamed: Vec<(String, String)> = Vec::new();
    let mut i = 0;
    while i < variants.len() {
        let t = variants.get(i).unwrap();
        let (n, s) = (name(t), shape(t));
        match kept.iter().find(|(_, ks)| *ks == s) {
            Some((twin, _)) => {
                renamed.push((n, twin.clone()));
                variants.remove(i);
            }
            None => {
                kept.push((n, s));
                i += 1;
            }
        }
    }
    if let Some(base) = doc["plan"].get("baseline").and_then(Item::as_str) {
        if let Some((_, twin)) = renamed.iter().find(|(n, _)| n == base) {
            let twin = twin.clone();
            doc["plan"]["baseline"] = toml_edit::value(twin);
        }
    }
    renamed
        .into_iter()
        .map(|(n, twin)| format!("{n}: the same as {twin} once swapped, dropped"))
        .collect()
}

/// Runs `bakeoff <command> FILE` as the suite's user with the default cache under its
/// private home (`out`: the results folder, beside which the run gets its own sandbox
/// folder and history, since two examples run at once); its exit status and output.
fn bakeoff(command: &str, file: &Path, out: Option<&Path>) -> (Option<i32>, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_bakeoff"));
    cmd.arg(command).arg(file);
    // A file whose variants change the machine (thp, defrag, sysctl, smt) is run as its
    // comment says: with the flag, as root.
    if changes_machine(file) {
        cmd.arg("--allow-system-changes");
    }
    if let Some(out) = out {
        let own = out.with_extension("side");
        cmd.arg("--out")
            .arg(out)
            .arg("--sandbox-dir")
            .arg(own.join("sandboxes"))
            .arg("--quiet")
            .env("BAKEOFF_STORE", own.join("history.sqlite"));
    }
    let out = common::with_private_home(&mut cmd)
        .output()
        .expect("run bakeoff");
    let text = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code(), text)
}

/// Whether a variant of the file sets a machine-wide setting.
fn changes_machine(file: &Path) -> bool {
    let text = std::fs::read_to_string(file).unwrap_or_default();
    let doc: toml_edit::DocumentMut = text.parse().unwrap_or_default();
    doc.get("variant")
        .and_then(|v| v.as_array_of_tables())
        .is_some_and(|vs| {
            vs.iter().any(|v| {
                ["thp", "defrag", "sysctl", "smt"]
                    .iter()
                    .any(|k| v.contains_key(k))
            })
        })
}

/// What is wrong with a finished example's results: a variant that failed, a cell
/// without a valid run.
fn problems(r: &serde_json::Value) -> Vec<String> {
    let mut out = Vec::new();
    for v in r["variants"].as_array().into_iter().flatten() {
        if v["status"] != "ok" {
            out.push(format!(
                "variant {} {}: {}",
                v["name"], v["status"], v["error"]
            ));
        }
    }
    for c in r["cells"].as_array().into_iter().flatten() {
        let valid = c["runs"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|x| x["valid"] == true)
            .count();
        if valid == 0 {
            out.push(format!(
                "no valid run in {} {} x{}",
                c["variant"], c["workload"], c["connections"]
            ));
        }
    }
    if r["cells"].as_array().is_none_or(|c| c.is_empty()) && r["tune"].is_null() {
        out.push("no cell at all".into());
    }
    out
}

#[test]
fn every_example_runs_as_root_with_the_default_cache() {
    let mut files: Vec<PathBuf> = std::fs::read_dir(examples_dir())
        .expect("examples/")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    // The longest first (a capacity search, released versions fetched and verified), so
    // that two workers end together rather than one waiting on a long last example.
    files.sort_by_key(|p| {
        let stem = p
            .file_stem()
            .unwrap_or_default()
            .to_string_lossy()
            .to_string();
        (!SLOW_FIRST.contains(&stem.as_str()), stem)
    });
    assert!(files.len() >= 20, "examples/ holds {} files", files.len());
    let scratch = Scratch::new();
    // The examples read files in folders beside them (shop/queries.sql,
    // mariadb-vs-mysql/verify.sql): the shortened copies live in a folder with the same
    // neighbours.
    let beside = scratch.path().join("examples");
    std::fs::create_dir_all(&beside).unwrap();
    for entry in std::fs::read_dir(examples_dir()).unwrap() {
        let p = entry.unwrap().path();
        if p.is_dir() {
            std::os::unix::fs::symlink(&p, beside.join(p.file_name().unwrap())).unwrap();
        }
    }
    let sshd = [
        Sshd::start(scratch.path(), "127.0.0.2"),
        Sshd::start(scratch.path(), "127.0.0.3"),
    ];
    // Two examples at a time: most of a short run is waiting (sandbox starts, data
    // loads, fixed windows), and no verdict is asserted here.
    let next = std::sync::atomic::AtomicUsize::new(0);
    let failures = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..WORKERS {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let Some(file) = files.get(i) else { break };
                let found = one_example(&scratch, &beside, &sshd, file);
                failures.lock().unwrap().extend(found);
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    for s in &sshd {
        s.stop();
    }
    for server in [
        "memcached",
        "mariadbd",
        "mysqld",
        "postgres",
        "redis-server",
    ] {
        common::no_server_left(server, &scratch);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Checks, shortens and runs one example; what is wrong with it (nothing: empty).
fn one_example(scratch: &Scratch, beside: &Path, sshd: &[Sshd], file: &Path) -> Vec<String> {
    let mut failures = Vec::new();
    let name = file.file_stem().unwrap().to_string_lossy().to_string();
    let started = Instant::now();
    let text = std::fs::read_to_string(file).unwrap();
    let (mut doc, said) = shortened(&text);
    let remote = doc.contains_key("host");
    if remote {
        common::sshd::reach_hosts(&mut doc, sshd, scratch.path());
    } else {
        // The file as written is good input (a file with [[host]] is checked with
        // its hosts reached, below: check reaches them).
        let (code, out) = bakeoff("check", file, None);
        if code != Some(0) {
            failures.push(format!("{name}: check as written exited {code:?}: {out}"));
            return failures;
        }
    }
    let short = beside.join(format!("{name}.toml"));
    std::fs::write(&short, doc.to_string()).unwrap();
    if remote {
        let (code, out) = bakeoff("check", &short, None);
        if code != Some(0) {
            failures.push(format!("{name}: check exited {code:?}: {out}"));
            return failures;
        }
    }
    let command = if doc.contains_key("tune") {
        "tune"
    } else {
        "run"
    };
    let out_dir = scratch.path().join(format!("out-{name}"));
    let (code, out) = bakeoff(command, &short, Some(&out_dir));
    let secs = started.elapsed().as_secs_f64();
    eprintln!("{name}: {command} exited {code:?} in {secs:.0} s; swapped: {said:?}");
    if code != Some(0) {
        failures.push(format!("{name}: {command} exited {code:?}: {out}"));
        return failures;
    }
    let results = std::fs::read_to_string(out_dir.join("results.json"))
        .map(|t| serde_json::from_str::<serde_json::Value>(&t).expect("valid json"));
    match results {
        Ok(r) => failures.extend(problems(&r).into_iter().map(|p| format!("{name}: {p}"))),
        Err(e) => failures.push(format!("{name}: no results.json: {e}")),
    }
    failures
}
