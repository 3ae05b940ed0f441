//! `[tune]` bad input: one line with file:line:col, exit status 2, from `bakeoff check`
//! and `bakeoff tune` alike. Nothing is built or started.

mod common;

use assert_cmd::Command;

fn bakeoff() -> Command {
    Command::cargo_bin("bakeoff").expect("binary")
}

const HEAD: &str = "name = \"t\"\n[target]\nkind = \"memcached\"\nsource = { debian = \"memcached\" }\n\n[[variant]]\nname = \"debian\"\nbinary = \"/usr/bin/memcached\"\n\n[[workload]]\nkind = \"kv\"\nname = \"mix\"\n\n[[workload]]\nkind = \"kv\"\nname = \"train\"\n\n";

/// The one line `check` and `tune` print for a `[tune]` table, and its exit status.
fn refused(tune: &str) -> Vec<String> {
    let s = common::Scratch::new();
    let path = s.path().join("exp.toml");
    std::fs::write(&path, format!("{HEAD}[tune]\n{tune}\n")).unwrap();
    ["check", "tune"]
        .iter()
        .map(|cmd| {
            let out = bakeoff().arg(cmd).arg(&path).output().unwrap();
            let err = String::from_utf8_lossy(&out.stderr).trim().to_string();
            assert_eq!(out.status.code(), Some(2), "{cmd} {tune}: {err}");
            assert_eq!(err.lines().count(), 1, "{cmd} {tune}: one line: {err}");
            err
        })
        .collect()
}

#[test]
fn bad_tune_input_is_one_located_line_and_exit_2() {
    for (tune, line_col, what) in [
        ("opt = [\"-O2\", \"-O9\"]", "exp.toml:19:15", "not an optimization level"),
        ("lto = [\"none\", \"fat\"]", "exp.toml:19:16", "not a choice"),
        ("compiler = [\"icx-2024\"]", "exp.toml:19:13", "not one bakeoff knows"),
        ("opt = []", "exp.toml:19:7", "empty list"),
        ("flags = [\"-fno-plt\", \"rm -rf\"]", "exp.toml:19:22", "not a compiler flag"),
        ("train = \"nope\"", "exp.toml:19:9", "not a workload"),
        ("baseline = \"nope\"", "exp.toml:19:12", "not a variant"),
        (
            "opt = [\"-O1\", \"-O2\", \"-O3\", \"-Os\"]\nmarch = [\"\", \"-march=native\"]\nlto = [\"none\", \"full\"]\npgo = [false, true]\nflags = [\"\", \"-fno-plt\", \"-fno-semantic-interposition\", \"-fomit-frame-pointer\", \"-funroll-loops\"]\ncompiler = [\"gcc-12\", \"clang-16\"]",
            "exp.toml:18:1",
            "more than 256",
        ),
    ] {
        for err in refused(tune) {
            assert!(err.contains(line_col) && err.contains(what), "{tune}: {err}");
        }
    }
}

#[test]
fn a_good_space_checks() {
    let s = common::Scratch::new();
    let path = s.path().join("exp.toml");
    std::fs::write(
        &path,
        format!("{HEAD}[tune]\ncompiler = [\"gcc-12\"]\nopt = [\"-O2\", \"-O3\"]\npgo = [false, true]\ntrain = \"train\"\nbaseline = \"debian\"\n"),
    )
    .unwrap();
    bakeoff().arg("check").arg(&path).assert().success();
}

/// The stages `bakeoff tune` derives from examples/memcached-tune.toml load as plain
/// experiments: the race on one cell (PGO's workload only trained on), the overfitting
/// check on every measured workload.
#[test]
fn the_example_s_stages_are_experiments() {
    use bakeoff_plan::tune::{stage_text, Measured, Stage};
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let l =
        bakeoff_plan::load(&root.join("memcached-tune.toml"), &bakeoff_workloads::KINDS).unwrap();
    let tune = l.experiment.tune.clone().unwrap();
    let space = tune.space(&l.experiment);
    let (cands, out) = space.candidates(|_| None);
    assert_eq!(cands.len() + out.len(), 24);
    assert_eq!(out.len(), 4, "thin LTO with gcc: {out:?}");
    let picked: Vec<(String, bakeoff_tune::Recipe)> = cands
        .iter()
        .filter(|c| c.name == "gcc-12.O2" || c.name == "clang-16.O3.lto-thin.pgo")
        .map(|c| (c.name.clone(), c.recipe.clone()))
        .collect();
    assert_eq!(picked.len(), 2);
    let s = common::Scratch::new();
    for (measured, workloads) in [
        (Measured::Cell(0, "connections", 16), vec!["get90", "train"]),
        (Measured::All, vec!["get90", "set50", "train"]),
    ] {
        let text = stage_text(
            &l.text,
            &tune,
            &Stage {
                candidates: &picked,
                baseline: "debian",
                measured,
                budget_s: Some(60.0),
                mode: "time",
            },
        )
        .unwrap();
        let path = s.write("stage.toml", &text);
        let e = bakeoff_plan::load(&path, &bakeoff_workloads::KINDS)
            .unwrap_or_else(|err| panic!("{err}\n{text}"))
            .experiment;
        let names: Vec<String> = e.workloads.iter().map(|w| w.display_name()).collect();
        assert_eq!(names, workloads, "{text}");
        assert!(
            e.workloads
                .iter()
                .find(|w| w.display_name() == "train")
                .unwrap()
                .train_only
        );
        assert_eq!(e.variants.len(), 3);
        let pgo = &e.variants[2];
        assert_eq!(pgo.cflags.as_deref(), Some("-O3"));
        assert_eq!(pgo.pgo.as_ref().unwrap().workload, "train");
        assert_eq!(e.baseline(), "debian");
        assert!(e.tune.is_none());
    }
}
